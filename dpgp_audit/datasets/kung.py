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

The notebooks load the data through :func:`load_kung_or_standin`: without the
file they continue on a clearly labelled synthetic stand-in (e.g. on Binder with
no network), except under CI (``CI=true``), where the data must be present and
the stand-in is refused.
"""

from __future__ import annotations

import csv
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpgp_audit._validation import check_rng
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
    "kung_standin",
    "load_kung",
    "load_kung_or_standin",
    "read_kung_csv",
    "running_in_ci",
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
    return _filtered(read_kung_csv(kung_path()), females_only, adults_only)


def _filtered(data: KungData, females_only: bool, adults_only: bool) -> KungData:
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


# ----------------------------------------------------------------------------- notebooks


def running_in_ci() -> bool:
    """True under CI: the environment variable ``CI`` is ``true``, ``1`` or ``yes``.

    GitHub Actions and most CI services set ``CI=true``; the kit's CI also sets
    :data:`DATA_DIR_ENV` to a mirror, so there the !Kung data must load.
    """
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


_STANDIN_N, _STANDIN_FEMALES = 544, 287


def kung_standin(rng: np.random.Generator) -> KungData:
    """A SYNTHETIC table shaped like the !Kung census (544 rows, 287 women), not the data.

    Ages are uniform on [0, 88] years; height follows a saturating growth curve
    150 − 85 exp(−age / 7) cm (+ 8 cm for men) with 6 cm noise; weight is
    0.3 height − 5 kg with 2 kg noise. Only for running the notebooks without the
    file: no number computed on it says anything about the papers' results.
    """
    rng = check_rng(rng)
    age = rng.uniform(0.0, 88.0, _STANDIN_N)
    male = np.zeros(_STANDIN_N)
    male[rng.permutation(_STANDIN_N)[:_STANDIN_N - _STANDIN_FEMALES]] = 1.0
    height = 150.0 - 85.0 * np.exp(-age / 7.0) + 8.0 * male + rng.normal(0.0, 6.0, _STANDIN_N)
    weight = 0.3 * height - 5.0 + rng.normal(0.0, 2.0, _STANDIN_N)
    return KungData(height, weight, age, male)


def load_kung_or_standin(rng: np.random.Generator, *, females_only: bool = False,
                         adults_only: bool = False) -> tuple[KungData, str]:
    """The !Kung census as :func:`load_kung` gives it, or a labelled stand-in without the file.

    The notebooks' one way to get the data. When the file is available, this is
    :func:`load_kung` and ``rng`` is not used. When it is not
    (:class:`DataUnavailableError`: offline, no mirror, no cache):

    * under CI (:func:`running_in_ci`) the error is raised again, naming CI, so a
      broken mirror fails the run instead of silently producing synthetic numbers;
    * elsewhere (e.g. Binder without network) a :func:`kung_standin` table drawn
      with ``rng`` is returned, filtered like the real one, with a note to print.

    A file with the wrong SHA-256 (:class:`DataHashError`) is never replaced by the
    stand-in.

    Returns
    -------
    data, note
        ``note`` is ``""`` for the real data, else a one-paragraph warning that says
        every number computed on ``data`` refers to synthetic data.

    Raises
    ------
    DataUnavailableError
        The data is missing and ``CI=true``.
    """
    try:
        return load_kung(females_only=females_only, adults_only=adults_only), ""
    except DataUnavailableError as err:
        if running_in_ci():
            raise DataUnavailableError(
                f"CI=true: the !Kung data must be present here (set {DATA_DIR_ENV} to a "
                f"directory holding {KUNG_FILENAME}); refusing the synthetic stand-in. "
                f"Cause: {err}") from err
        note = (f"NOTE: the !Kung data could not be loaded ({err}). Continuing on a SYNTHETIC "
                f"stand-in with the same columns: every number computed from it refers to "
                f"made-up data, not to the census or the papers.")
    return _filtered(kung_standin(rng), females_only, adults_only), note
