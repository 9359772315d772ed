"""Every notebook runs in CI: papermill-injected tiny parameters, executed once by nbval.

See ``tests/notebooks/harness.py`` for the procedure. New notebooks in
``notebooks/`` are picked up automatically; each needs
``tests/notebooks/params/<stem>.yaml``.
"""

from __future__ import annotations

import pytest

try:
    from tests.notebooks import harness as nh
except ImportError:  # pytest run without the repository root on sys.path
    import harness as nh

NOTEBOOKS = nh.discover()

pytestmark = pytest.mark.notebooks


def test_notebooks_are_found():
    assert NOTEBOOKS, f"no notebooks found in {nh.NOTEBOOKS}: the harness would test nothing"


def test_every_params_file_and_reference_has_a_notebook():
    stems = {p.stem for p in NOTEBOOKS}
    orphans = sorted(p.name for p in nh.PARAMS.glob("*.yaml") if p.stem not in stems)
    orphans += sorted(p.name for p in nh.REFS.glob("*.ipynb") if p.stem not in stems)
    orphans += sorted(f"{s} in {nh.FIGURES.name}" for s in nh.declared_figures()
                      if s not in stems)
    assert not orphans, f"parameter files / references without a notebook (typo?): {orphans}"


def test_every_notebook_declares_its_figures():
    missing = sorted(p.stem for p in NOTEBOOKS if p.stem not in nh.declared_figures())
    assert not missing, (f"declare in {nh.FIGURES.name} how many figures each of {missing} "
                         "shows with its CI parameters")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(notebook, tmp_path):
    passed, mode, log = nh.run_notebook(notebook)
    assert passed, f"{notebook.name} failed under nbval ({mode}):\n{log[-6000:]}"
    # Figures must reach the executed notebook as image/png whatever MPLBACKEND is (the
    # harness runs kernels under Agg, where plt.show() displays nothing).
    want = nh.declared_figures().get(notebook.stem, 0)
    got = nh.count_images(nh.executed_outputs(notebook))
    assert got >= want, (
        f"{notebook.name} displayed {got} image/png output(s), {nh.FIGURES.name} declares "
        f"at least {want}: display each figure with dpgp_audit.viz.show(fig)")


def test_image_count_reads_recorded_outputs():
    cells = [{"cell": 1, "outputs": [{"output_type": "display_data",
                                      "mime": ["image/png", "text/plain"]},
                                     {"output_type": "stream", "mime": []}]},
             {"cell": 2, "outputs": [{"output_type": "execute_result", "mime": ["text/plain"]}]},
             {"cell": 3, "outputs": [{"output_type": "display_data", "mime": ["image/png"]}]}]
    assert nh.count_images(cells) == 2
    assert nh.count_images(cells, "image/svg+xml") == 0


# ---- the harness's own checks (fast, no kernel) ----------------------------------------


def test_missing_params_file_fails_with_instructions(tmp_path, monkeypatch):
    monkeypatch.setattr(nh, "PARAMS", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"add .*99_new\.yaml"):
        nh.load_params(tmp_path / "99_new.ipynb")


def _notebook(tmp_path, source, tags=("parameters",)):
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = list(tags)
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), cell,
                nbformat.v4.new_code_cell("print(epsilon)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path / "99_t.ipynb"
    nbformat.write(nb, path)
    return path


def test_parameter_names_reads_plain_and_annotated_assignments(tmp_path):
    import nbformat

    path = _notebook(tmp_path,
                     "epsilon: float = 1.0  # budget\nn_samples = 10\nshow_progress = True")
    assert nh.parameter_names(nbformat.read(path, as_version=4)) == {
        "epsilon", "n_samples", "show_progress"}


def test_unknown_yaml_parameter_is_rejected(tmp_path):
    path = _notebook(tmp_path, "epsilon = 1.0\nshow_progress = True")
    with pytest.raises(ValueError, match=r"sets \['epsilonn'\]"):
        nh.check_params_match(path, {"epsilonn": 0.5, "show_progress": False})


def test_progress_must_be_off_in_ci(tmp_path):
    path = _notebook(tmp_path, "epsilon = 1.0\nshow_progress = True")
    with pytest.raises(ValueError, match="show_progress: false"):
        nh.check_params_match(path, {"epsilon": 0.5})
    nh.check_params_match(path, {"epsilon": 0.5, "show_progress": False})


def test_prepare_injects_without_executing(tmp_path):
    import nbformat

    path = _notebook(tmp_path, "epsilon = 1.0")
    out = nh.prepare(path, {"epsilon": 0.25}, tmp_path / "out")
    nb = nbformat.read(out, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "epsilon = 0.25" in injected[0].source
    # injected right after the parameters cell, nothing executed
    assert nb.cells.index(injected[0]) == 2
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_nbval_command_is_single_execution():
    from pathlib import Path

    lax = nh.nbval_command(Path("build/ci/x.ipynb"), strict=False)
    strict = nh.nbval_command(Path("build/ci/x.ipynb"), strict=True)
    assert "--nbval-lax" in lax and "--nbval" not in lax
    assert "--nbval" in strict and "--nbval-lax" not in strict
    assert any(a.startswith("--nbval-sanitize-with=") for a in strict)
    assert "--nbval-current-env" in lax and "--nbval-current-env" in strict


def test_sanitize_file_stabilises_volatile_text():
    """The sanitize file parses with nbval's own reader and masks what varies."""
    import re

    from nbval.plugin import get_sanitize_patterns

    patterns = get_sanitize_patterns(nh.SANITIZE.read_text(encoding="utf-8"))
    assert patterns

    def clean(s):
        for regex, replace in patterns:
            s = re.sub(regex, replace, s)
        return s

    assert clean("<Line2D at 0x7f5f12ab>") == clean("<Line2D at 0x55aa01>")
    assert clean("sigma = 3.730631") == clean("sigma = 3.730638")
    assert clean("sigma = 3.7306") != clean("sigma = 3.7310")
    assert clean("5/5 [00:01<00:00, 3.41it/s]") == clean("5/5 [00:02<00:00, 2.10it/s]")
    assert clean("Wall time: 1.2 s") == clean("Wall time: 40 ms")
    assert clean("3 samples") == "3 samples"


def test_harness_runs_kernel_on_this_checkout_and_fails_on_errors(tmp_path, monkeypatch):
    """End to end on a throw-away notebook: parameters injected, kernel imports this
    checkout in build dir, a passing cell passes and a raising cell fails the run."""
    from dpgp_audit.devtools.nbbuild import code, md, write_notebook

    monkeypatch.setattr(nh, "PARAMS", tmp_path / "params")
    monkeypatch.setattr(nh, "REFS", tmp_path / "refs")
    (tmp_path / "params").mkdir()
    out = tmp_path / "out"
    check = (
        "import pathlib, dpgp_audit\n"
        "here = pathlib.Path(dpgp_audit.__file__).resolve().parent.parent\n"
        f"assert here == pathlib.Path({str(nh.ROOT)!r}), here\n"
        f"assert pathlib.Path.cwd() == pathlib.Path({str(out)!r})\n"
        "assert n == 2, n"
    )
    nb = write_notebook(tmp_path / "nb" / "99_t.ipynb", [
        md("# t"), code("n = 1", "parameters"), code(check),
        code("raise RuntimeError('boom ' * n)")])
    nh.params_path(nb).write_text("n: 2\n", encoding="utf-8")

    passed, mode, log = nh.run_notebook(nb, out)
    assert not passed and mode == "lax"
    # cells: parameters, injected parameters, check -> pass; the raising cell -> fail
    assert "1 failed, 3 passed" in log and "boom boom" in log, log


def test_reference_staleness_compares_code_only(tmp_path):
    from dpgp_audit.devtools.nbbuild import code, md, write_notebook

    a = write_notebook(tmp_path / "a" / "00_x.ipynb", [md("# one"), code("x = 1")])
    b = write_notebook(tmp_path / "b" / "00_x.ipynb", [md("# prose edited"), code("x = 1")])
    c = write_notebook(tmp_path / "c" / "00_x.ipynb", [md("# one"), code("x = 2")])
    assert nh.ref_is_current(a, b)
    assert not nh.ref_is_current(a, c)
