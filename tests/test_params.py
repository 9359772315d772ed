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
