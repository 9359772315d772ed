"""Validation of notebook parameters (the cell after every notebook's ``parameters`` cell).

papermill injects parameters as Python literals and validates nothing (a typo'd
YAML value such as ``epsilon: -1`` or ``n_samples: 1e4``, which YAML reads as a
string, would run silently). Every notebook therefore calls
:func:`check_notebook_params` on its parameters in the cell right after the
``parameters`` cell::

    p = check_notebook_params("03_honkela_dp_svgp", seed=seed, epsilons=epsilons, ...)

**By schema.** Each notebook declares the type and range of every parameter in
:data:`SCHEMAS` (a :class:`Param` per name): e.g. ``epsilons`` is a non-empty list of
reals > 0 and ``hyper_gamma`` a real in (0, 1) (H Alg. 2: a stopping probability).
With the notebook's name, a missing, unknown or out-of-range parameter raises a
``ValueError`` naming it. Called without a name, the schema whose names are exactly
the ones passed is used, so a notebook's own parameter set selects its schema.

**By name (fallback).** Parameters of a notebook without a schema (e.g. your own)
are checked by name:

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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["SCHEMAS", "Param", "check_notebook_params"]


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


# --------------------------------------------------------------------------- schemas
@dataclass(frozen=True)
class Param:
    """The declared type and range of one notebook parameter.

    Attributes
    ----------
    kind
        ``"real"``, ``"int"``, ``"bool"``, ``"str"`` (e.g. an output path; may be empty),
        or a list of reals / ints
        (``"real_list"``, ``"int_list"``; non-empty).
    low, high
        Bounds on the value (on every element of a list); ``None``: unbounded.
    open_low, open_high
        Whether the bound itself is excluded (``low=0, open_low=True``: > 0).
    """

    kind: Literal["real", "int", "bool", "str", "real_list", "int_list"]
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False

    def rule(self) -> str:
        """The rule in words, for error messages."""
        what = {"real": "a real", "int": "an integer", "bool": "True or False",
                "str": "a string",
                "real_list": "a non-empty list of reals", "int_list":
                "a non-empty list of integers"}[self.kind]
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.open_low else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'<' if self.open_high else '<='} {self.high:g}")
        each = " each" if self.kind.endswith("_list") else ""
        return what + (f",{each} " + " and ".join(parts) if parts else "")

    def _in_range(self, v: float) -> bool:
        if self.low is not None and (v <= self.low if self.open_low else v < self.low):
            return False
        return not (self.high is not None
                    and (v >= self.high if self.open_high else v > self.high))

    def _scalar(self, name: str, value: object, kind: str) -> float | int:
        if kind == "real":
            v: float | int = _real(name, value)
        elif isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise _fail(name, self.rule(), value)
        else:
            v = int(value)
        if not self._in_range(v):
            raise _fail(name, self.rule(), value)
        return v

    def check(self, name: str, value: object) -> object:
        """``value`` normalised (floats, ints, lists), or ``ValueError`` naming ``name``."""
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise _fail(name, self.rule(), value)
            return value
        if self.kind == "str":
            if not isinstance(value, str):
                raise _fail(name, self.rule(), value)
            return value
        if self.kind in ("real", "int"):
            return self._scalar(name, value, self.kind)
        if not isinstance(value, list | tuple) or len(value) == 0:
            raise _fail(name, self.rule(), value)
        kind = self.kind.removesuffix("_list")
        out = []
        for v in value:
            try:
                out.append(self._scalar(name, v, kind))
            except ValueError:
                raise _fail(name, self.rule(), value) from None
        return out


_POS = Param("real", low=0.0, open_low=True)
_PROB = Param("real", low=0.0, high=1.0, open_low=True, open_high=True)
_SEED = Param("int", low=0)
_SIZE = Param("int", low=1)
_COUNT0 = Param("int", low=0)  # 0 switches a subsample off
_FLAG = Param("bool")
_PATH = Param("str")  # "" = do not write (the reproduction sidecar of make notebooks)
_POS_LIST = Param("real_list", low=0.0, open_low=True)
_SIZE_LIST = Param("int_list", low=1)

#: notebook (file stem) → parameter name → :class:`Param`. Ranges are those the
#: notebooks' maths needs (e.g. H Alg. 2's γ is a stopping probability in (0, 1);
#: cross-validation needs at least 2 folds).
SCHEMAS: dict[str, dict[str, Param]] = {
    "00_dp_basics": {
        "epsilon": _POS, "delta": _PROB, "seed": _SEED, "n_samples": _SIZE,
        "n_grid": Param("int", low=2), "show_progress": _FLAG,
    },
    "00b_gp_primer": {
        "seed": _SEED, "n_points": Param("int", low=2), "lengthscale": _POS, "noise_sd": _POS,
        "d": _POS, "n_inducing": Param("int", low=2), "n_class": Param("int", low=2),
    },
    "00b_gp_primer_answers": {
        "seed": _SEED, "n_points": Param("int", low=2), "lengthscale": _POS, "noise_sd": _POS,
        "d": _POS, "n_lengthscales": Param("int", low=2), "max_inducing": Param("int", low=2),
    },
    "00_dp_basics_answers": {"seed": _SEED, "n_samples": _SIZE},
    "01_smith2018_cloaking_answers": {
        "seed": _SEED, "n_repeats": Param("int", low=2), "n_test": Param("int", low=2),
    },
    "01_smith2018_cloaking": {
        "epsilon": _POS, "delta": _PROB, "d": _POS, "lengthscale": _POS, "noise": _POS,
        "kernel_sd": _POS, "n_repeats": _SIZE, "n_test": Param("int", low=2),
        "n_spatial": Param("int", low=2), "n_table": Param("int", low=2),
        "n_folds": Param("int", low=2), "seed": _SEED, "show_progress": _FLAG,
        "repro_json": _PATH,
    },
    "02_smith_sparse_classification": {
        "seed": _SEED, "epsilon": _POS, "delta": _PROB, "kung_subsample": _COUNT0,
        "n_folds": Param("int", low=2), "band_points": Param("int", low=2),
        "map_side": Param("int", low=2), "inducing_list": _SIZE_LIST,
        "stripes_n": Param("int", low=2), "n_dp_reps": _SIZE, "cancer_n": Param("int", low=2),
        "digits_train": Param("int", low=2), "digits_test": _SIZE,
        "digits_lengthscales": _POS_LIST, "digits_inducing": _SIZE_LIST,
        "selection_lengthscales": _POS_LIST, "selection_noise": _POS_LIST,
        "selection_kvar": _POS_LIST, "selection_folds": Param("int", low=2),
        "selection_subsample": _COUNT0, "selection_epsilons": _POS_LIST,
        "show_progress": _FLAG,
        "repro_json": _PATH,
    },
    "02_smith_sparse_classification_answers": {
        "seed": _SEED, "epsilon": _POS, "delta": _PROB, "stripes_n": Param("int", low=2),
        "n_dp_reps": Param("int", low=2),
    },
    "03_honkela_dp_svgp": {
        "seed": _SEED, "epsilons": _POS_LIST, "delta": _PROB, "n_points": _SIZE,
        "n_inducing": _SIZE, "n_repeats_calibration": _SIZE, "n_repeats_hyper": _SIZE,
        "hyper_epsilons": _POS_LIST, "hyper_gamma": _PROB, "n_points_hyper": _SIZE,
        "n_pd_trials": _SIZE, "show_progress": _FLAG,
        "repro_json": _PATH,
    },
    "03_honkela_dp_svgp_answers": {
        "seed": _SEED, "n_points": _SIZE, "n_mc": Param("int", low=2), "n_pd_trials": _SIZE,
    },
    "04_raisa_dpconvcnp": {
        "epsilon": _POS, "delta": _PROB, "seed": _SEED, "grid_side": Param("int", low=2),
        "n_tasks": _SIZE, "context_sizes": Param("int_list", low=2),
        "n_kung_splits": _SIZE, "n_kung_context": Param("int", low=2),
        "dpsvgp_steps": _SIZE, "show_progress": _FLAG,
        "repro_json": _PATH,
    },
    "04_raisa_dpconvcnp_answers": {
        "seed": _SEED, "epsilon": _POS, "delta": _PROB, "n_t": Param("int", low=2),
        "n_kung_splits": _SIZE, "dpsvgp_steps": _SIZE,
    },
    "05_auditing_lab_answers": {
        "seed": _SEED, "n_power_reps": _SIZE, "power_grid": Param("int_list", low=20),
    },
    "05_auditing_lab": {
        "epsilon": _POS, "delta": _PROB, "alpha": _PROB, "seed": _SEED, "n_samples": _SIZE,
        "n_power_reps": _SIZE, "power_grid": Param("int_list", low=20),
        "n_rounding": _SIZE, "show_progress": _FLAG,
    },
    "index": {"verbose": _FLAG},  # the course landing page
}


def _check_schema(notebook: str, schema: Mapping[str, Param],
                  params: Mapping[str, object]) -> dict[str, object]:
    unknown = sorted(set(params) - set(schema))
    if unknown:
        raise ValueError(f"notebook parameter {unknown[0]!r} is not declared for {notebook}; "
                         f"declared: {', '.join(schema)}")
    missing = [name for name in schema if name not in params]
    if missing:
        raise ValueError(f"notebook parameter {missing[0]!r} of {notebook} is missing")
    return {name: schema[name].check(name, params[name]) for name in params}


# --------------------------------------------------------------------------- by name
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


def check_notebook_params(notebook: str | None = None, /, **params: object) -> dict[str, object]:
    """Validate notebook parameters against the notebook's schema and return them normalised.

    Parameters
    ----------
    notebook
        The notebook's file stem (a key of :data:`SCHEMAS`), e.g. ``"03_honkela_dp_svgp"``.
        ``None``: the schema whose parameter names are exactly those passed, if one is
        declared; otherwise the by-name rules of the module docstring.
    **params
        The notebook's parameters, passed by name.

    Returns
    -------
    dict
        The same names; reals as ``float``, sizes and seeds as ``int``, lists as lists.

    Raises
    ------
    ValueError
        Naming the first offending parameter, the rule and the value (or an unknown
        notebook, an undeclared or a missing parameter).

    Examples
    --------
    >>> check_notebook_params(epsilon=1, delta=1e-5, n_samples=100, show_progress=False)
    {'epsilon': 1.0, 'delta': 1e-05, 'n_samples': 100, 'show_progress': False}
    """
    if notebook is not None:
        if notebook not in SCHEMAS:
            raise ValueError(f"notebook {notebook!r} has no parameter schema; known: "
                             f"{', '.join(SCHEMAS)}")
        return _check_schema(notebook, SCHEMAS[notebook], params)
    for name, schema in SCHEMAS.items():
        if set(schema) == set(params):
            return _check_schema(name, schema, params)
    return {name: _check_one(name, value) for name, value in params.items()}
