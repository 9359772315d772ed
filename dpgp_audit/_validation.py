"""Input checks shared by every layer: bad input raises, it never releases."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["as_finite_array", "check_delta", "check_epsilon", "check_finite_float",
           "check_positive_float", "check_positive_int", "check_rng", "one_line"]


def check_rng(rng: object) -> np.random.Generator:
    """Return ``rng`` if it is a ``numpy.random.Generator``; raise ``TypeError`` otherwise.

    The kit never falls back to a global or fixed-seed generator: every random
    function takes its generator explicitly.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            "rng must be a numpy.random.Generator (e.g. np.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )
    return rng


def as_finite_array(name: str, value: object, *, ndim: int | tuple[int, ...] | None = None,
                    dtype: type = float) -> np.ndarray:
    """Convert to an array of ``dtype`` and refuse NaN/inf or a wrong number of dimensions.

    Complex input is refused for a real ``dtype`` (NumPy would silently drop the imaginary
    part), and so is anything that does not convert (strings, ragged nests, objects): each
    raises ``ValueError`` naming ``name``.
    """
    raw = value if isinstance(value, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(value)
        except (TypeError, ValueError) as err:  # ragged nests
            raise ValueError(f"{name} must be a numeric array: {err}") from None
    # raw is an ndarray: np.iscomplexobj(raw) is its dtype's kind "c" (checked without the
    # wrappers: every release validates its inputs on each call, issue 20 §2)
    if raw.dtype.kind == "c" and not np.issubdtype(np.dtype(dtype), np.complexfloating):
        raise ValueError(f"{name} must be real, got complex dtype {raw.dtype} "
                         "(the imaginary part would be dropped silently)")
    if raw.dtype.kind in "SUVMm":
        raise ValueError(f"{name} must be a numeric array, got dtype {raw.dtype}")
    try:
        arr = np.asarray(raw, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as err:
        raise ValueError(f"{name} must be a numeric array of {np.dtype(dtype).name}: "
                         f"{err}") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have ndim in {allowed}, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} contains {bad} non-finite value(s) (NaN or inf)")
    return arr


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int ≥ 1, raising ``ValueError`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_finite_float(name: str, value: object) -> float:
    """Return ``value`` as a float, raising ``ValueError`` if it is NaN or infinite."""
    v = float(value)  # type: ignore[arg-type]
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v!r}")
    return v


def check_positive_float(name: str, value: object) -> float:
    """Return ``value`` as a float, raising ``ValueError`` unless it is finite and > 0."""
    v = float(value)  # type: ignore[arg-type]
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be finite and > 0, got {v!r}")
    return v


def check_epsilon(epsilon: float, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float, raising ``ValueError`` unless ``0 < epsilon < inf``."""
    epsilon = check_finite_float(name, epsilon)
    if epsilon <= 0:
        raise ValueError(f"{name} must be > 0, got {epsilon!r}")
    return epsilon


def check_delta(delta: float, name: str = "delta", *, allow_zero: bool = False) -> float:
    """Return ``delta`` as a float, raising ``ValueError`` unless it lies in (0, 1).

    With ``allow_zero=True`` the interval is [0, 1) (pure DP).
    """
    delta = check_finite_float(name, delta)
    low_ok = delta >= 0 if allow_zero else delta > 0
    if not (low_ok and delta < 1):
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"{name} must lie in {interval}, got {delta!r}")
    return delta


def one_line(text: object, limit: int = 200) -> str:
    """``text`` on one line (runs of whitespace become one space), cut at ``limit`` characters.

    For a refusal's message kept in a report (``str(err)`` of a ``ValueError``).
    """
    return " ".join(str(text).split())[:limit]
