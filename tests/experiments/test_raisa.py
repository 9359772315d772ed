"""Notebook 04's comparison (R.4, R.5): the stored file, its round trip, and the no-PyTorch path.

The kit ships ``dpgp_audit/experiments/stored/raisa_comparison.json`` so that §4–§6 of
notebook 04 show the DPConvCNP comparison where PyTorch is missing. These tests check that
the file holds the whole comparison at the notebook's default parameters, that it is what
``run_comparison`` computes (with PyTorch; slow), and that the notebook without PyTorch
shows it with a visible note.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dpgp_audit.experiments.raisa import (
    COMPARISON_DEFAULTS,
    STORED_COMPARISON,
    Comparison,
    MethodCurve,
    load_comparison,
    run_comparison,
    save_comparison,
    stored_comparison_rng,
)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "04_raisa_dpconvcnp.py"


def _notebook_defaults() -> dict:
    import jupytext

    nb = jupytext.read(NOTEBOOK)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    ns: dict = {}
    exec(cell.source, ns)  # noqa: S102 - the notebook's own literal parameters
    return ns


def test_stored_comparison_is_complete_and_at_the_notebooks_defaults():
    c = load_comparison()
    assert c.stored and "--write-stored" in c.note
    defaults = _notebook_defaults()
    assert c.params == {k: defaults[k] for k in COMPARISON_DEFAULTS} == COMPARISON_DEFAULTS
    for curves in (c.eq_curves, c.saw_curves):
        assert {"DPConvCNP", "DP-SVGP"} <= set(curves)
        for curve in curves.values():
            assert list(curve.ns) == COMPARISON_DEFAULTS["context_sizes"]
            assert np.all(np.isfinite(curve.mean))
    assert set(c.example["preds"]) == {"oracle (non-private)", "DP-SVGP", "DPConvCNP"}
    for target in ("height", "weight"):
        k = c.kung[target]
        assert set(k["nll"]) == {"DPConvCNP", "DP-SVGP"}
        assert all(v.size == COMPARISON_DEFAULTS["n_kung_splits"] for v in k["nll"].values())
        assert len(k["context_idx"]) == COMPARISON_DEFAULTS["n_kung_context"]
        assert not set(k["context_idx"]) & set(k["target_idx"])
        assert k["xc"] is None  # no census values without the table
    assert {"DPConvCNP forward"} <= set(c.times)
    assert set(c.checkpoints) == {"eq", "matern", "sawtooth"}
    assert STORED_COMPARISON.stat().st_size < 100_000  # a small file


def test_stored_file_holds_no_census_values():
    doc = json.loads(STORED_COMPARISON.read_text(encoding="utf-8"))
    for k in doc["kung"].values():
        assert set(k) == {"nll", "context_idx", "target_idx", "xs", "preds", "data_note"}


def test_census_points_come_back_from_the_indices():
    from dpgp_audit.datasets.kung import KungData, load_kung
    from dpgp_audit.experiments.raisa import kung_xy

    try:
        table = load_kung()
    except Exception as err:  # noqa: BLE001 - the data file may be absent off CI
        pytest.skip(f"!Kung data not available: {err}")
    assert isinstance(table, KungData)
    c = load_comparison(kung_data=table)
    x, y = kung_xy("height", table)
    k = c.kung["height"]
    assert np.array_equal(k["xc"], x[k["context_idx"]]) and np.array_equal(k["yt"],
                                                                         y[k["target_idx"]])


def test_save_and_load_round_trip(tmp_path):
    curve = MethodCurve(np.array([10, 30]), np.array([1.0, 0.5]), np.array([0.1, 0.1]))
    preds = {"DP-SVGP": (np.zeros(3), np.ones(3))}
    c = Comparison(dict(COMPARISON_DEFAULTS), {"oracle": curve, "DP-SVGP": curve},
                   {"noise lower bound": curve}, {"xc": np.zeros(2), "yc": np.ones(2),
                                                  "xs": np.arange(3.0), "preds": preds},
                   {"height": {"nll": {"DP-SVGP": np.array([1.0, 2.0])},
                               "context_idx": np.array([0, 1]), "target_idx": np.array([2]),
                               "xs": np.arange(3.0), "preds": preds, "data_note": ""}},
                   {"DP-SVGP (1 DP-SGD steps)": 0.01}, {})
    path = save_comparison(c, tmp_path / "c.json", command="test")
    back = load_comparison(path)
    assert back.stored and "`test`" in back.note and not back.has_dpconvcnp
    assert np.allclose(back.eq_curves["oracle"].mean, curve.mean)
    assert np.array_equal(back.kung["height"]["context_idx"], [0, 1])
    with pytest.raises(FileNotFoundError, match="no stored comparison"):
        load_comparison(tmp_path / "missing.json")


def test_without_models_only_the_numpy_methods_run(rng):
    p = {**COMPARISON_DEFAULTS, "n_tasks": 2, "context_sizes": [10, 30], "n_kung_splits": 2,
         "dpsvgp_steps": 5}
    c = run_comparison(p, rng)
    assert not c.has_dpconvcnp and not c.stored
    assert set(c.eq_curves) == {"oracle", "DP-SVGP"}
    assert set(c.kung["weight"]["nll"]) == {"DP-SVGP"}


@pytest.mark.slow
def test_stored_comparison_is_what_run_comparison_computes():
    """With PyTorch, the defaults and the notebook's stream reproduce the stored numbers."""
    pytest.importorskip("torch")
    from dpgp_audit.experiments.raisa import _models

    p = dict(COMPARISON_DEFAULTS)
    now = run_comparison(p, stored_comparison_rng(p["seed"]), models=_models())
    stored = load_comparison()
    for name in ("eq_curves", "saw_curves"):
        for method, curve in getattr(stored, name).items():
            assert np.allclose(getattr(now, name)[method].mean, curve.mean, rtol=1e-4), method
    for target, k in stored.kung.items():
        for method, v in k["nll"].items():
            assert np.allclose(now.kung[target]["nll"][method], v, rtol=1e-4), (target, method)


NO_TORCH = textwrap.dedent("""\
    import sys
    from importlib.machinery import PathFinder


    class _NoTorch(PathFinder):
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                return None
            return PathFinder.find_spec(name, path, target)


    sys.meta_path[:] = [_NoTorch if f is PathFinder else f for f in sys.meta_path]
    """)


@pytest.mark.notebooks
def test_notebook_04_without_pytorch_shows_the_stored_comparison(tmp_path, monkeypatch):
    """A machine without PyTorch: §4–§6 draw the stored comparison, with a visible note."""
    from tests.notebooks import harness as nh

    hide = tmp_path / "hide_torch"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(NO_TORCH, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(hide))
    nb = ROOT / "notebooks" / "04_raisa_dpconvcnp.ipynb"
    out = tmp_path / "run"
    monkeypatch.setattr(nh, "REFS", tmp_path / "no_refs")  # lax mode: one run, no reference
    passed, _, log = nh.run_notebook(nb, out)
    assert passed, log[-4000:]
    executed = json.loads((out / f"{nb.stem}.executed.ipynb").read_text(encoding="utf-8"))
    text = json.dumps(executed)
    assert "PyTorch available: False" in text
    assert "Stored results" in text and "DPConvCNP" in text
    images = nh.count_images(nh.executed_outputs(nb, out))
    assert images >= nh.declared_figures()[nb.stem]
