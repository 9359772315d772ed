"""Notebooks are edited as jupytext text: every ``notebooks/NN_name.ipynb`` has a
percent-format twin ``NN_name.py`` with the same cells, and syncing an unchanged
pair rewrites nothing (no cell-id churn). Issue 11 §5."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

jupytext = pytest.importorskip("jupytext", reason="jupytext is in the notebooks/test extras")

from dpgp_audit.devtools.check_notebooks import check_pair, main  # noqa: E402
from dpgp_audit.devtools.nbbuild import code, md, write_notebook  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted([*NB_DIR.glob("*.ipynb"), *NB_DIR.glob("answers/*.ipynb")])
TWINS = sorted([*NB_DIR.glob("*.py"), *NB_DIR.glob("answers/*.py")])


def _cells(nb) -> list[tuple[str, str, list[str]]]:
    return [(c.cell_type, c.source, list(c.metadata.get("tags", []))) for c in nb.cells]


def test_every_notebook_has_a_twin_and_every_twin_a_notebook():
    assert NOTEBOOKS, "no notebooks found"
    assert [p.stem for p in NOTEBOOKS] == [p.stem for p in TWINS]
    assert (NB_DIR / "jupytext.toml").is_file()


@pytest.mark.parametrize("ipynb", NOTEBOOKS, ids=lambda p: p.stem)
def test_pair_in_sync(ipynb):
    """Same cells (type, source, tags) in the .ipynb and in jupytext's reading of the .py."""
    stored = nbformat.read(ipynb, as_version=4)
    text = jupytext.read(ipynb.with_suffix(".py"))
    assert _cells(stored) == _cells(text), (
        f"{ipynb.name} and {ipynb.with_suffix('.py').name} differ: run `make sync`")
    assert text.metadata["kernelspec"]["name"] == "python3"


def test_sync_of_an_unchanged_pair_changes_nothing(tmp_path):
    """`jupytext --sync` run twice on the committed pairs rewrites no byte."""
    from jupytext.cli import jupytext as jupytext_cli

    shutil.copy2(NB_DIR / "jupytext.toml", tmp_path / "jupytext.toml")
    for path in [*NOTEBOOKS, *TWINS]:
        shutil.copy2(path, tmp_path / path.name)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for _ in range(2):
        jupytext_cli(["--sync", "--quiet", *map(str, sorted(tmp_path.glob("*.ipynb")))])
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def _pair(tmp_path, cells_py, cells_nb):
    nb = write_notebook(tmp_path / "00_x.ipynb", cells_nb)
    jupytext.write(nbformat.read(write_notebook(tmp_path / "t" / "00_x.ipynb", cells_py),
                                 as_version=4), tmp_path / "00_x.py", fmt="py:percent")
    return nb


def test_check_pair_accepts_a_synced_pair(tmp_path, capsys):
    cells = [md("# T"), code("epsilon = 1.0", "parameters"), code("print(epsilon)")]
    nb = _pair(tmp_path, cells, cells)
    assert check_pair(nb) == []
    assert main(["--paired", str(nb)]) == 0
    assert "1 notebook(s) clean" in capsys.readouterr().out


@pytest.mark.parametrize(("changed", "problem"), [
    ([md("# T"), code("epsilon = 2.0", "parameters"), code("print(epsilon)")],
     "cell 1 differs from 00_x.py in its source"),
    ([md("# T"), code("epsilon = 1.0"), code("print(epsilon)")],
     "cell 1 differs from 00_x.py in its tags"),
    ([md("# T"), md("epsilon = 1.0"), code("print(epsilon)")],
     "cell 1 differs from 00_x.py in its type"),
    ([md("# T"), code("epsilon = 1.0", "parameters")], "3 cells but 00_x.py has 2"),
])
def test_check_pair_reports_the_first_difference(tmp_path, changed, problem):
    cells = [md("# T"), code("epsilon = 1.0", "parameters"), code("print(epsilon)")]
    nb = _pair(tmp_path, changed, cells)
    problems = check_pair(nb)
    assert len(problems) == 1 and problems[0].startswith(problem), problems
    assert main(["--paired", str(nb)]) == 1


def test_check_pair_reports_a_missing_twin(tmp_path):
    nb = write_notebook(tmp_path / "00_x.ipynb", [code("e = 1", "parameters")])
    assert check_pair(nb)[0].startswith("no jupytext twin 00_x.py")
    assert main([str(nb)]) == 0  # without --paired only the notebook itself is checked
    assert main(["--paired", str(nb)]) == 1
