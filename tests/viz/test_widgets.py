"""Widgets are live in an interactive front end and never built in an unattended run.

Issue 22 §4: papermill stalled at slider cells in headless runs. In a kernel run by
papermill, nbval, nbclient or a book build (:func:`batch_run`), the widget builders
print one line naming the sliders instead of opening widget comms.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from dpgp_audit.viz import widgets as w


def _fig():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.figure()


@pytest.fixture
def no_override(monkeypatch):
    monkeypatch.delenv(w.WIDGETS_ENV, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)


def test_static_mode_builds_no_widget_and_names_the_starting_values(monkeypatch, capsys):
    monkeypatch.setenv(w.WIDGETS_ENV, "static")
    calls = []
    assert w.epsilon_delta_widget(lambda e, d: calls.append((e, d)), epsilon=2.0,
                                  delta=1e-6) is None
    assert w.slider_widget(lambda n, eps: calls.append(n), {"n": (1, 50, 7),
                           "eps": (0.1, 10.0, 1.0)}, integer=("n",), log=("eps",)) is None
    assert w.sample_size_widget(lambda n: calls.append(n), n=500, n_range=(100, 10_000)) is None
    out = capsys.readouterr().out
    assert calls == []  # nothing recomputed: the plain cell above shows these values
    assert "ε = 2" in out and "δ = 1.0e-06" in out and "n = 7" in out and "n / side = 500" in out
    assert out.count("appear when this notebook runs live") == 3


def test_live_mode_builds_the_sliders(monkeypatch):
    pytest.importorskip("ipywidgets")
    monkeypatch.setenv(w.WIDGETS_ENV, "live")
    box = w.epsilon_delta_widget(lambda e, d: _fig(), epsilon=2.0, delta=1e-6)
    assert type(box).__name__ == "VBox"


def test_an_unknown_override_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(w.WIDGETS_ENV, "sometimes")
    with pytest.raises(ValueError, match="DPGP_AUDIT_WIDGETS"):
        w.batch_run()


def test_outside_a_kernel_widgets_are_built(no_override):
    assert w.batch_run() is False  # a script or a test: nothing is displayed anyway


@pytest.mark.parametrize(("parent", "session", "batch"), [
    ("/usr/bin/python3 /x/.venv/bin/papermill in.ipynb out.ipynb -k python3", "", True),
    ("/x/.venv/bin/python -m pytest -q --nbval-lax build/ci/00.ipynb", "", True),
    ("/x/.venv/bin/python /x/.venv/bin/jupyter-nbconvert --execute a.ipynb", "", True),
    ("/x/.venv/bin/python /x/.venv/bin/jupyter-lab", "", False),
    ("/x/.venv/bin/python -m papermill a b", "notebooks/00.ipynb", False),  # a server session
])
def test_a_kernel_is_batch_when_its_parent_is_an_executor(monkeypatch, no_override, parent,
                                                          session, batch):
    monkeypatch.setattr(w, "_in_kernel", lambda: True)
    monkeypatch.setattr(w, "_parent_command", lambda: parent)
    if session:
        monkeypatch.setenv("JPY_SESSION_NAME", session)
    assert w.batch_run() is batch


def test_parent_command_reads_this_process_parent():
    # run a child whose parent is this test process: the child sees pytest in it
    code = "from dpgp_audit.viz.widgets import _parent_command; print(_parent_command())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "pytest" in out or "python" in out


@pytest.mark.notebooks
def test_papermill_runs_a_slider_cell_without_building_a_widget(tmp_path, no_override):
    """End to end: the papermill CLI (its own process, no override) executes a widget cell."""
    import json

    from dpgp_audit.devtools.nbbuild import code, write_notebook

    try:
        from tests.notebooks import harness as nh
    except ImportError:  # pragma: no cover
        import harness as nh

    nb = write_notebook(tmp_path / "w.ipynb", [
        code("x = 1", "parameters"),
        code("from dpgp_audit.viz.widgets import epsilon_delta_widget\n"
             "epsilon_delta_widget(lambda e, d: None, epsilon=3.0)")])
    env = nh.kernel_env()
    env.pop(w.WIDGETS_ENV, None)
    env.pop("JPY_SESSION_NAME", None)
    out = tmp_path / "out.ipynb"
    subprocess.run([sys.executable, "-m", "papermill", str(nb), str(out), "-k", nh.KERNEL,
                    "--execution-timeout", "120", "--log-level", "WARNING"],
                   env=env, check=True, timeout=300, cwd=tmp_path)
    cell = json.loads(out.read_text(encoding="utf-8"))["cells"][-1]
    text = "".join("".join(o.get("text", "")) for o in cell["outputs"])
    assert "ε = 3" in text and "appear when this notebook runs live" in text
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                   for o in cell["outputs"])
