"""The full-scale papermill parameters (``make notebooks``) name real parameters."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
import yaml

from tests.notebooks.harness import discover, parameter_names

FULL = Path(__file__).resolve().parents[2] / "notebooks" / "full_scale"


@pytest.mark.parametrize("notebook", discover(), ids=lambda p: p.stem)
def test_full_scale_parameters_exist_and_match(notebook):
    path = FULL / f"{notebook.stem}.yaml"
    assert path.is_file(), f"add {path.name} to notebooks/full_scale/ (paper-scale values)"
    params = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    names = parameter_names(nbformat.read(notebook, as_version=4))
    unknown = sorted(set(params) - names)
    assert not unknown, f"{path.name} sets unknown parameters {unknown}"
    for key, value in params.items():
        assert not isinstance(value, str), f"{path.name}: {key} is a string (write 1.0e-5)"
