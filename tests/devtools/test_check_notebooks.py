"""dpgp_audit.devtools.check_notebooks (make lint): notebooks are committed clean."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from dpgp_audit.devtools.check_notebooks import check_notebook, main
from dpgp_audit.devtools.nbbuild import code, md, write_notebook

ROOT = Path(__file__).resolve().parents[2]


def _clean(tmp_path, params="epsilon = 1.0\nn: int = 3  # size"):
    return write_notebook(tmp_path / "00_x.ipynb",
                          [md("# T"), code(params, "parameters"), code("print(epsilon)")])


def _edit(path, fn):
    nb = nbformat.read(path, as_version=4)
    fn(nb)
    nbformat.write(nb, path)
    return path


def test_generated_notebook_is_clean(tmp_path, capsys):
    path = _clean(tmp_path)
    assert check_notebook(path) == []
    assert main([str(path)]) == 0
    assert "1 notebook(s) clean" in capsys.readouterr().out


def test_outputs_and_execution_counts_are_reported(tmp_path, capsys):
    def dirty(nb):
        nb.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1.0\n")]
        nb.cells[2].execution_count = 4

    path = _edit(_clean(tmp_path), dirty)
    problems = check_notebook(path)
    assert problems == ["cell 2 has outputs (commit notebooks without outputs)",
                        "cell 2 has an execution count (clear it before committing)"]
    assert main([str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{path}: {p}" for p in problems]  # one line per problem


def test_missing_parameters_cell_is_reported(tmp_path):
    path = _edit(_clean(tmp_path), lambda nb: nb.cells[1].metadata.pop("tags"))
    assert check_notebook(path) == ["no code cell tagged 'parameters'"]


@pytest.mark.parametrize("source", ["epsilon = 1.0\ntwice = 2 * epsilon", "import numpy as np",
                                    "epsilon = float('1')", "a.b = 1", "x ="])
def test_non_literal_parameters_cell_is_reported(tmp_path, source):
    problems = check_notebook(_clean(tmp_path, params=source))
    assert len(problems) == 1 and problems[0].startswith("cell 1: parameters cell")


def test_wrong_kernel_is_reported(tmp_path):
    def other(nb):
        nb.metadata["kernelspec"]["name"] = "myenv"

    assert check_notebook(_edit(_clean(tmp_path), other)) == [
        "kernelspec name is 'myenv', expected 'python3'"]
    path = _edit(_clean(tmp_path), lambda nb: nb.metadata.pop("kernelspec"))
    assert check_notebook(path) == ["kernelspec name is None, expected 'python3'"]


def test_unreadable_or_missing_files_are_reported(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    assert check_notebook(bad)[0].startswith("cannot read notebook JSON")
    (tmp_path / "list.ipynb").write_text(json.dumps([1]), encoding="utf-8")
    assert check_notebook(tmp_path / "list.ipynb") == [
        "not an nbformat 4 notebook (no 'cells' list)"]
    # an unmatched shell glob arrives as a literal path
    assert check_notebook(tmp_path / "*.ipynb") == ["file not found (no notebooks matched?)"]


def test_committed_notebooks_are_clean():
    notebooks = sorted([*(ROOT / "notebooks").glob("*.ipynb"),
                        *(ROOT / "notebooks" / "answers").glob("*.ipynb")])
    assert notebooks
    assert {str(p.name): check_notebook(p) for p in notebooks} == {
        str(p.name): [] for p in notebooks}
