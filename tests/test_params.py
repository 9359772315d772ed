"""dpgp_audit.params.check_notebook_params: every notebook's validation cell."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpgp_audit.params import check_notebook_params


def test_valid_parameters_are_normalised():
    out = check_notebook_params(epsilon=1, delta=1e-5, seed=0, n_samples=10, n_grid=3,
                                show_progress=False, title="x", levels=[0.1, 0.2])
    assert out == {"epsilon": 1.0, "delta": 1e-5, "seed": 0, "n_samples": 10, "n_grid": 3,
                   "show_progress": False, "title": "x", "levels": [0.1, 0.2]}
    assert isinstance(out["epsilon"], float)


@pytest.mark.parametrize(("name", "value", "match"), [
    ("epsilon", 0.0, "> 0"),
    ("epsilon", -1, "> 0"),
    ("epsilon", math.inf, "finite"),
    ("epsilon", math.nan, "finite"),
    ("epsilon", "1.0", "real number"),
    ("epsilon", True, "real number"),
    ("target_epsilon", 0, "> 0"),
    ("delta", 0.0, r"\(0, 1\)"),
    ("delta", 1.0, r"\(0, 1\)"),
    ("delta", "1e-5", "real number"),  # YAML 1.1 reads 1e-5 as a string
    ("alpha", 1.5, r"\(0, 1\)"),
    ("seed", -1, "non-negative integer"),
    ("seed", 1.0, "non-negative integer"),
    ("seed", True, "non-negative integer"),
    ("n_samples", 0, "positive integer"),
    ("n_samples", 100.0, "positive integer"),
    ("n", -3, "positive integer"),
    ("batch_size", 0, "positive integer"),
    ("num_trials", "5", "positive integer"),
    ("show_progress", "false", "True or False"),
    ("show_progress", 0, "True or False"),
    ("data", object(), "plain literal"),
])
def test_bad_parameter_raises_valueerror_naming_it(name, value, match):
    with pytest.raises(ValueError, match=match) as info:
        check_notebook_params(**{name: value})
    assert repr(name) in str(info.value)


@given(st.floats(min_value=1e-300, max_value=1e300), st.floats(min_value=1e-300, max_value=0.999),
       st.integers(min_value=1, max_value=10**9))
def test_any_valid_triple_passes_unchanged(epsilon, delta, n):
    out = check_notebook_params(epsilon=epsilon, delta=delta, n_samples=n)
    assert out == {"epsilon": epsilon, "delta": delta, "n_samples": n}


# ------------------------------------------------------------------ schemas per notebook
def _defaults(notebook) -> dict:
    """Literal values of the notebook's ``parameters`` cell."""
    import ast

    import nbformat

    from tests.notebooks.harness import parameters_cell

    cell = parameters_cell(nbformat.read(notebook, as_version=4))
    assert cell is not None, f"{notebook.name} has no parameters cell"
    out = {}
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            out[target.id] = ast.literal_eval(node.value)
    return out


def _notebooks():
    from tests.notebooks.harness import discover

    found = discover()
    assert found, "no notebooks found"
    return found


def test_every_notebook_has_a_schema_naming_exactly_its_parameters():
    from dpgp_audit.params import SCHEMAS

    for notebook in _notebooks():
        assert notebook.stem in SCHEMAS, f"declare a schema for {notebook.stem} in params.py"
        assert set(SCHEMAS[notebook.stem]) == set(_defaults(notebook)), notebook.stem


def test_defaults_ci_and_full_scale_values_pass_their_schema():
    from pathlib import Path

    import yaml

    from tests.notebooks.harness import load_params

    full = Path(__file__).resolve().parents[1] / "notebooks" / "full_scale"
    for notebook in _notebooks():
        defaults = _defaults(notebook)
        check_notebook_params(notebook.stem, **defaults)
        check_notebook_params(notebook.stem, **{**defaults, **load_params(notebook)})
        paper = yaml.safe_load((full / f"{notebook.stem}.yaml").read_text(encoding="utf-8"))
        check_notebook_params(notebook.stem, **{**defaults, **(paper or {})})


def _honkela(**changes):
    from dpgp_audit.params import SCHEMAS

    base = {"seed": 2021, "epsilons": [0.5, 1.0], "delta": 1e-4, "n_points": 64,
            "n_inducing": 9, "n_repeats_calibration": 2, "n_repeats_hyper": 2,
            "hyper_epsilons": [3.0], "hyper_gamma": 0.05, "n_points_hyper": 64,
            "n_pd_trials": 100, "show_progress": False, "repro_json": ""}
    assert set(base) == set(SCHEMAS["03_honkela_dp_svgp"])
    return {**base, **changes}


@pytest.mark.parametrize(("name", "value"), [
    ("epsilons", [-1, 0]),          # the by-name rules let both through (issue 13)
    ("epsilons", [1.0, 0.0]),
    ("epsilons", []),
    ("epsilons", 1.0),              # a list is declared
    ("hyper_epsilons", [math.inf]),
    ("hyper_gamma", 5),             # a stopping probability (H Alg. 2) lies in (0, 1)
    ("hyper_gamma", 0.0),
    ("hyper_gamma", 1.0),
    ("n_points", 0),
    ("show_progress", "no"),
    ("repro_json", 0),              # a path: a string ("" = no sidecar)
    ("repro_json", None),
])
@pytest.mark.parametrize("explicit", [True, False])
def test_schema_refuses_out_of_range_values_naming_the_parameter(name, value, explicit):
    params = _honkela(**{name: value})
    with pytest.raises(ValueError, match=f"'{name}'"):
        if explicit:
            check_notebook_params("03_honkela_dp_svgp", **params)
        else:  # the parameter set alone selects the schema
            check_notebook_params(**params)


def test_schema_normalises_and_refuses_unknown_or_missing_names():
    out = check_notebook_params("03_honkela_dp_svgp", **_honkela(epsilons=(1, 2), delta=1e-4))
    assert out["epsilons"] == [1.0, 2.0] and isinstance(out["epsilons"][0], float)
    with pytest.raises(ValueError, match="'typo_gamma'"):
        check_notebook_params("03_honkela_dp_svgp", **_honkela(typo_gamma=0.1))
    params = _honkela()
    del params["hyper_gamma"]
    with pytest.raises(ValueError, match="'hyper_gamma'"):
        check_notebook_params("03_honkela_dp_svgp", **params)
    with pytest.raises(ValueError, match="no parameter schema"):
        check_notebook_params("99_missing", epsilon=1.0)


def test_schema_integer_lists_and_bounds():
    base = {"epsilon": 1.0, "delta": 1e-5, "alpha": 0.05, "seed": 0, "n_samples": 100,
            "n_power_reps": 2, "n_rounding": 100, "show_progress": False}
    assert check_notebook_params("05_auditing_lab", power_grid=[20, 40], **base)[
        "power_grid"] == [20, 40]
    for bad in ([19], [20.0], [True], "500"):
        with pytest.raises(ValueError, match="'power_grid'"):
            check_notebook_params("05_auditing_lab", power_grid=bad, **base)
