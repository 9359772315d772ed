"""The Dobe !Kung census (Nancy Howell; "Howell1" as shipped with McElreath's *rethinking*).

544 rows: height (cm), weight (kg), age (years), male (0/1). S18 and S21 use
the 287 females (all ages, 0–88 years); R uses all 544 rows.

Where the file comes from, in order:

1. ``$DPGP_AUDIT_DATA_DIR/howell1.csv`` if that environment variable is set and
   the file exists (a local mirror: CI and offline machines); its SHA-256 is
   checked.
2. Otherwise a download with :mod:`pooch` from the public URL
   :data:`KUNG_URL`, verified against the pinned :data:`KUNG_SHA256` and cached
   in ``pooch.os_cache("dpgp_audit")``; later calls use the cache.

Offline with neither a mirror nor a cached copy raises
:class:`DataUnavailableError` explaining how to provide the file. The file is
never bundled with the package.
"""

from __future__ import annotations

import csv
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpgp_audit.dataset import Dataset

__all__ = [
    "DATA_DIR_ENV",
    "KUNG_FILENAME",
    "KUNG_SHA256",
    "KUNG_URL",
    "DataHashError",
    "DataUnavailableError",
    "KungData",
    "kung_dataset",
    "kung_local_path",
    "kung_path",
    "load_kung",
    "read_kung_csv",
]

KUNG_URL = "https://raw.githubusercontent.com/rmcelreath/rethinking/master/data/Howell1.csv"
KUNG_SHA256 = "768d2fb53d44490b35260903f58955548b26f587e7afaf4e00b2603715279bbd"
KUNG_FILENAME = "howell1.csv"
DATA_DIR_ENV = "DPGP_AUDIT_DATA_DIR"
_COLUMNS = ("height", "weight", "age", "male")
_ADULT_AGE = 18.0


class DataUnavailableError(OSError):
    """A public data file could not be found locally nor downloaded."""


class DataHashError(ValueError):
    """A data file's SHA-256 differs from the pinned value (corrupt or different file)."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def _download(url: str, known_hash: str, fname: str, path: Path) -> str:
    """Fetch ``url`` into the cache ``path`` with pooch (verifies ``known_hash``)."""
    import pooch

    return pooch.retrieve(url, known_hash=f"sha256:{known_hash}", fname=fname, path=path,
                          progressbar=False)


def _cache_dir() -> Path:
    import pooch

    return Path(pooch.os_cache("dpgp_audit"))


def _verified(candidate: Path) -> Path:
    """``candidate`` if its SHA-256 is the pinned one, else :class:`DataHashError`."""
    digest = _sha256(candidate)
    if digest != KUNG_SHA256:
        raise DataHashError(
            f"{candidate} has SHA-256 {digest}, expected {KUNG_SHA256}: the file is "
            f"corrupt or not the published Howell1 table; replace it with a fresh copy "
            f"of {KUNG_URL}")
    return candidate


def _mirror_path() -> Path | None:
    """``$DPGP_AUDIT_DATA_DIR/howell1.csv`` (hash-checked) when set and present, else None."""
    mirror = os.environ.get(DATA_DIR_ENV, "")
    if mirror:
        candidate = Path(mirror).expanduser() / KUNG_FILENAME
        if candidate.is_file():
            return _verified(candidate)
    return None


def kung_local_path() -> Path | None:
    """The local copy :func:`kung_path` would use without a download, or ``None``.

    Same order as :func:`kung_path`: the mirror ``$DPGP_AUDIT_DATA_DIR/howell1.csv``
    (SHA-256 checked), then the pooch cache entry, which counts only when its SHA-256 is the
    pinned one (pooch would fetch it again otherwise). Never touches the network; the test
    suite uses it to decide whether the !Kung data should be available.

    Raises
    ------
    DataHashError
        The mirror file's SHA-256 differs from :data:`KUNG_SHA256`.
    """
    found = _mirror_path()
    if found is not None:
        return found
    cached = _cache_dir() / KUNG_FILENAME
    if cached.is_file() and _sha256(cached) == KUNG_SHA256:
        return cached
    return None


def kung_path() -> Path:
    """Path of a verified local copy of ``howell1.csv`` (mirror, cache or fresh download).

    Raises
    ------
    DataHashError
        The mirror file's (or the download's) SHA-256 differs from :data:`KUNG_SHA256`.
    DataUnavailableError
        No mirror and the download failed (e.g. offline).
    """
    found = _mirror_path()
    if found is not None:
        return found
    mirror = os.environ.get(DATA_DIR_ENV, "")
    mirror_note = (f" ({DATA_DIR_ENV}={mirror!r} is set but holds no {KUNG_FILENAME})"
                   if mirror else "")
    cache = _cache_dir()
    try:
        return Path(_download(KUNG_URL, KUNG_SHA256, KUNG_FILENAME, cache))
    except ValueError as err:  # pooch: the download's hash differs from the pinned one
        raise DataHashError(
            f"the file downloaded from {KUNG_URL} failed the SHA-256 check against "
            f"{KUNG_SHA256} (the upstream file may have changed): {err}") from err
    except OSError as err:  # requests' network errors are OSError subclasses
        raise DataUnavailableError(
            f"could not download the !Kung data from {KUNG_URL}{mirror_note}: {err}. "
            f"To use it offline, download {KUNG_FILENAME} (SHA-256 {KUNG_SHA256}) on a "
            f"machine with internet access, put it in a directory and set the environment "
            f"variable {DATA_DIR_ENV} to that directory (or copy it into the cache {cache})."
        ) from err


@dataclass(frozen=True, eq=False)
class KungData:
    """The !Kung census columns as read-only float arrays of equal length.

    ``male`` is 1.0 for men and 0.0 for women.
    """

    height: np.ndarray
    weight: np.ndarray
    age: np.ndarray
    male: np.ndarray

    def __post_init__(self) -> None:
        n = None
        for name in _COLUMNS:
            arr = np.array(getattr(self, name), dtype=float)
            if arr.ndim != 1 or not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} must be a finite 1-D array")
            if n is not None and arr.shape[0] != n:
                raise ValueError("all !Kung columns must have the same length")
            n = arr.shape[0]
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def n(self) -> int:
        """Number of people (rows)."""
        return int(self.height.shape[0])

    def subset(self, mask: np.ndarray) -> KungData:
        """Rows where ``mask`` is True."""
        m = np.asarray(mask, dtype=bool)
        return KungData(self.height[m], self.weight[m], self.age[m], self.male[m])

    def to_dataset(self, inputs: str | Sequence[str] = "age", target: str = "height",
                   name: str = "") -> Dataset:
        """A :class:`~dpgp_audit.dataset.Dataset` with the given input column(s) and target.

        ``to_dataset()`` is the 1-D age → height regression of S18 Fig. 1 / S21 §6.1;
        ``to_dataset(("age", "weight"))`` the 2-D version of S21 §6.2.
        """
        cols = (inputs,) if isinstance(inputs, str) else tuple(inputs)
        for c in (*cols, target):
            if c not in _COLUMNS:
                raise ValueError(f"unknown !Kung column {c!r}; choose from {_COLUMNS}")
        if not cols:
            raise ValueError("inputs must name at least one column")
        X = np.column_stack([getattr(self, c) for c in cols])
        return Dataset(X, getattr(self, target), name or f"kung {'+'.join(cols)}->{target}")


def read_kung_csv(path: str | os.PathLike[str]) -> KungData:
    """Parse the ``;``-separated Howell1 file (header ``height;weight;age;male``)."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter=";"))
    if not rows:
        raise ValueError(f"{path} is empty")
    header = tuple(h.strip().strip('"') for h in rows[0])
    if header != _COLUMNS:
        raise ValueError(f"{path}: expected header {_COLUMNS}, got {header}")
    body = [r for r in rows[1:] if r]
    try:
        table = np.array(body, dtype=float)
    except ValueError as err:
        raise ValueError(f"{path}: non-numeric or ragged rows ({err})") from err
    if table.ndim != 2 or table.shape[1] != 4:
        raise ValueError(f"{path}: expected 4 columns, got shape {table.shape}")
    return KungData(*(table[:, j] for j in range(4)))


def load_kung(*, females_only: bool = False, adults_only: bool = False) -> KungData:
    """Load the !Kung census (544 rows; 287 females; 352 adults aged ≥ 18; 187 adult females).

    Parameters
    ----------
    females_only
        Keep only women (``male == 0``), as in S18 and S21.
    adults_only
        Keep only people aged 18 or over.
    """
    data = read_kung_csv(kung_path())
    mask = np.ones(data.n, dtype=bool)
    if females_only:
        mask &= data.male == 0
    if adults_only:
        mask &= data.age >= _ADULT_AGE
    return data.subset(mask)


def kung_dataset(*, females_only: bool = True, inputs: str | Sequence[str] = "age",
                 target: str = "height") -> Dataset:
    """Shortcut: the !Kung regression Dataset (default: the 287 females, age → height)."""
    label = "kung-females" if females_only else "kung-all"
    return load_kung(females_only=females_only).to_dataset(inputs, target, name=label)
