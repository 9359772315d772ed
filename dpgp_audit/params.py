"""Validation of notebook parameters (the cell after every notebook's ``parameters`` cell).

papermill injects parameters as Python literals and validates nothing (a typo'd
YAML value such as ``epsilon: -1`` or ``n_samples: 1e4``, which YAML reads as a
string, would run silently). Every notebook therefore calls
:func:`check_notebook_params` on its parameters in the cell right after the
``parameters`` cell::

    p = check_notebook_params(epsilon=epsilon, delta=delta, seed=seed,
                              n_samples=n_samples, show_progress=show_progress)

Rules are chosen by the parameter's name:

==========================================  =====================================
name                                        must be
==========================================  =====================================
``epsilon``, ``eps``, ``*_epsilon``         a finite real > 0
``delta``, ``*_delta``                      a real in (0, 1)
``alpha``, ``*_alpha``                      a real in (0, 1) (a failure probability)
``seed``                                    a non-negative int
``n``, ``n_*``, ``*_size``, ``num_*``       a positive int
``show_*``, ``use_*``, ``allow_*``          a bool
anything else                               a plain literal (number, str, bool,
                                            None, or list/tuple/dict of those)
==========================================  =====================================
"""

from __future__ import annotations

import math
import numbers

__all__ = ["check_notebook_params"]


def _fail(name: str, rule: str, value: object) -> ValueError:
    return ValueError(
        f"notebook parameter {name!r} must be {rule}, got {value!r} "
        f"({type(value).__name__}); change it in the parameters cell or in the "
        "papermill -p/-f options"
    )


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _fail(name, "a real number", value)
    value = float(value)
    if not math.isfinite(value):
        raise _fail(name, "finite", value)
    return value


def _int(name: str, value: object, minimum: int, rule: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise _fail(name, rule, value)
    return int(value)


def _is_literal(value: object) -> bool:
    if value is None or isinstance(value, str | bool | numbers.Number):
        return True
    if isinstance(value, list | tuple):
        return all(_is_literal(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_literal(v) for k, v in value.items())
    return False


def _is_size(name: str) -> bool:
    return name == "n" or name.startswith(("n_", "num_")) or name.endswith("_size")


def _check_one(name: str, value: object) -> object:
    if name in ("epsilon", "eps") or name.endswith("_epsilon"):
        value = _real(name, value)
        if value <= 0:
            raise _fail(name, "> 0", value)
        return value
    if name == "delta" or name.endswith("_delta"):
        value = _real(name, value)
        if not 0 < value < 1:
            raise _fail(name, "in the open interval (0, 1)", value)
        return value
    if name == "alpha" or name.endswith("_alpha"):
        value = _real(name, value)
        if not 0 < value < 1:
            raise _fail(name, "in the open interval (0, 1)", value)
        return value
    if name == "seed":
        return _int(name, value, 0, "a non-negative integer")
    if _is_size(name):
        return _int(name, value, 1, "a positive integer")
    if name.startswith(("show_", "use_", "allow_")):
        if not isinstance(value, bool):
            raise _fail(name, "True or False", value)
        return value
    if not _is_literal(value):
        raise _fail(name, "a plain literal (number, string, bool, None, list, dict)", value)
    return value


def check_notebook_params(**params: object) -> dict[str, object]:
    """Validate notebook parameters by name and return them normalised.

    Parameters
    ----------
    **params
        The notebook's parameters, passed by name (see the module docstring for
        the rule each name selects).

    Returns
    -------
    dict
        The same names; reals as ``float``, sizes and seeds as ``int``.

    Raises
    ------
    ValueError
        Naming the first offending parameter, the rule and the value.

    Examples
    --------
    >>> check_notebook_params(epsilon=1, delta=1e-5, n_samples=100, show_progress=False)
    {'epsilon': 1.0, 'delta': 1e-05, 'n_samples': 100, 'show_progress': False}
    """
    return {name: _check_one(name, value) for name, value in params.items()}
