"""Finding code the kit does not contain: ``FILE.py:NAME`` and ``package.module:NAME`` (A.10).

:func:`load_attribute` imports a user's file or module and returns the named object
with where it came from (the file and its SHA-256, which the report names). Every
failure is a :class:`LoadError` (a ``ValueError``, so the command line answers it with
one line and exit status 2) that names the file and, for an error raised by the user's
code while it is imported, the exception; the original exception is kept for
``--debug``.

Standard library only: the virtualenv bridge's child process
(:mod:`dpgp_audit.adapters.bridge`) loads this file by path, where the kit is not
installed.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from typing import Any

__all__ = ["LoadError", "Loaded", "describe_exception", "failure_in_file", "load_attribute",
           "parse_spec", "sha256_of"]


class LoadError(ValueError):
    """The named code cannot be found or imported; ``original`` is the underlying error."""

    def __init__(self, message: str, original: BaseException | None = None) -> None:
        super().__init__(message)
        self.original = original


@dataclass(frozen=True)
class Loaded:
    """An object found by :func:`load_attribute` and its origin.

    Attributes
    ----------
    obj
        The attribute ``NAME``.
    spec
        The specification as given (``"mymech.py:NoisyMean"``).
    path
        Absolute path of the source file (the module's ``__file__``).
    sha256
        SHA-256 of that file's bytes (hex), or ``""`` when the module has no file.
    """

    obj: Any
    spec: str
    path: str
    sha256: str

    def as_dict(self) -> dict:
        """JSON-ready origin (for the report's ``inputs["source"]``)."""
        return {"spec": self.spec, "path": self.path, "sha256": self.sha256}


def sha256_of(path: str) -> str:
    """SHA-256 (hex) of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def parse_spec(spec: str) -> tuple[str, str]:
    """``"FILE.py:NAME"`` or ``"package.module:NAME"`` → ``(where, NAME)``.

    The last ``:`` separates the name (so a path may contain one). ``NAME`` may be
    dotted (``Outer.Inner``).
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise LoadError(f"expected FILE.py:NAME or package.module:NAME, got {spec!r}")
    where, name = spec.rsplit(":", 1)
    if not where or not name or not all(p.isidentifier() for p in name.split(".")):
        raise LoadError(f"expected FILE.py:NAME or package.module:NAME with NAME a Python "
                        f"name, got {spec!r}")
    return where, name


def _import_file(path: str) -> Any:
    full = os.path.abspath(path)
    if not os.path.isfile(full):
        raise LoadError(f"{path}: no such file")
    stem = os.path.splitext(os.path.basename(full))[0]
    mod_name = f"_dpgp_user_{stem}_{hashlib.sha256(full.encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(mod_name, full)
    if spec is None or spec.loader is None:
        raise LoadError(f"{path}: not an importable Python file")
    module = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(full)
    added = folder not in sys.path
    if added:  # the user's file may import its neighbours
        sys.path.insert(0, folder)
    sys.modules[mod_name] = module  # dataclasses and pickling look the module up
    try:
        spec.loader.exec_module(module)
    except BaseException as err:  # noqa: BLE001 — any failure of user code is named, once
        sys.modules.pop(mod_name, None)
        if isinstance(err, KeyboardInterrupt):
            raise
        # the user's own line, even when a library it called raised (a claim's check)
        said = failure_in_file(err, full) or describe_exception(err)
        raise LoadError(f"cannot import {path}: {said}", err) from None
    finally:
        if added:
            sys.path.remove(folder)
    return module


def _import_module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name is not None and (name == err.name or name.startswith(err.name + ".")):
            raise LoadError(f"no module named {name!r} (a file path must end in .py)",
                            err) from None
        raise LoadError(f"cannot import {name}: {describe_exception(err)}", err) from None
    except BaseException as err:  # noqa: BLE001
        if isinstance(err, KeyboardInterrupt):
            raise
        raise LoadError(f"cannot import {name}: {describe_exception(err)}", err) from None


def _described(err: BaseException, frame: tuple[int, str] | None) -> str:
    """``"Type: message (line N of file.py)"``, the location from ``frame`` (line, file)."""
    text = " ".join(str(err).split())
    where = "" if frame is None else f" (line {frame[0]} of {os.path.basename(frame[1])})"
    return f"{type(err).__name__}: {text}{where}" if text else f"{type(err).__name__}{where}"


def describe_exception(err: BaseException) -> str:
    """``"Type: message (line N of file.py)"`` for an exception raised by user code."""
    frame, tb = None, err.__traceback__
    while tb is not None:
        frame, tb = (tb.tb_lineno, tb.tb_frame.f_code.co_filename), tb.tb_next
    return _described(err, frame)


def failure_in_file(err: BaseException, path: str) -> str | None:
    """``"Type: message (line N of file.py)"`` if ``err`` passed through the file ``path``.

    The line is that of the innermost frame in ``path`` (the user's own code, even when
    the exception itself came from a library it called); ``None`` when no frame of the
    traceback is in that file, i.e. the user's code did not raise it.
    """
    target = os.path.realpath(path)
    frame, tb = None, err.__traceback__
    while tb is not None:
        if os.path.realpath(tb.tb_frame.f_code.co_filename) == target:
            frame = (tb.tb_lineno, path)
        tb = tb.tb_next
    return None if frame is None else _described(err, frame)


def load_attribute(spec: str) -> Loaded:
    """Import ``FILE.py:NAME`` or ``package.module:NAME`` and return ``NAME`` with its origin.

    Raises
    ------
    LoadError
        No such file or module, an exception while importing it (named, with the line),
        or no attribute ``NAME``.
    """
    where, name = parse_spec(spec)
    module = _import_file(where) if where.endswith(".py") else _import_module(where)
    obj: Any = module
    for part in name.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise LoadError(f"{where} has no attribute {name!r}") from None
    path = getattr(module, "__file__", None) or ""
    return Loaded(obj, spec, os.path.abspath(path) if path else "",
                  sha256_of(path) if path and os.path.isfile(path) else "")
