"""Prose that quotes a computed number must agree with the notebook's outputs.

Expected values are written by hand from the rounding rule of
``dpgp_audit.devtools.quoted_numbers`` (half a unit of the last written digit).
"""

from __future__ import annotations

import pytest

from dpgp_audit.devtools.quoted_numbers import (
    check_quoted_numbers,
    marked_numbers,
    matches,
    output_numbers,
)


def _nb(*cells):
    out = []
    for kind, body in cells:
        if kind == "md":
            out.append({"cell_type": "markdown", "source": body, "metadata": {}})
        else:
            out.append({"cell_type": "code", "source": "", "metadata": {},
                        "outputs": [{"output_type": "stream", "name": "stdout", "text": body}]})
    return {"cells": out}


def test_marked_numbers_reads_only_marked_quotes():
    text = ("flags 0.5<!--out--> against 0.25 <!--out-->, 20 %<!--out--> off; "
            "paper 28.53 cm, inf<!--out-->")
    assert marked_numbers(text) == [("0.5", False), ("0.25", False), ("20", True), ("inf", False)]


@pytest.mark.parametrize(("quoted", "printed", "percent", "ok"), [
    ("0.25", 0.2503, False, True),
    ("0.25", 0.2549, False, True),
    ("0.25", 0.2551, False, False),   # rounds to 0.26
    ("153", 152.6, False, True),
    ("153", 152.4, False, False),
    ("20", 0.2, True, True),          # 20 % quoted, a fraction printed
    ("25", 0.2, True, False),         # the old "25 %" of notebook 05
    ("inf", float("inf"), False, True),
    ("inf", 1e300, False, False),
])
def test_matches_at_written_precision(quoted, printed, percent, ok):
    assert matches(quoted, printed, percent=percent) is ok


def test_output_numbers_reads_streams_and_rich_outputs():
    outs = [{"output_type": "stream", "text": "mu = 0.2500, x2 = inf; id s18-x1\n"},
            {"output_type": "execute_result", "data": {"text/plain": "array([1.5e-03])",
                                                       "text/markdown": "coverage **0.57**"}}]
    values = output_numbers(outs)
    assert 0.25 in values and float("inf") in values and 1.5e-3 in values and 0.57 in values
    assert 2.0 not in values and 18.0 not in values and 1.0 not in values  # inside names


def test_check_flags_a_quote_the_outputs_contradict():
    nb = _nb(("code", "paper delta 0.5000, correct 0.2500\n"),
             ("md", "the check flags 0.5<!--out--> against 0.4<!--out-->"))
    problems = check_quoted_numbers(nb)
    assert len(problems) == 1 and "0.4" in problems[0] and "cell 1" in problems[0]


def test_check_only_looks_above_the_markdown():
    nb = _nb(("md", "we will get 0.25<!--out-->"), ("code", "0.2500\n"))
    assert len(check_quoted_numbers(nb)) == 1


def test_check_passes_consistent_prose_and_ignores_unmarked_numbers():
    nb = _nb(("code", "ratio 0.2499\n"), ("md", "ratio 0.25<!--out-->; the paper says 28.53"))
    assert check_quoted_numbers(nb) == []


@pytest.mark.notebooks
def test_harness_fails_a_notebook_whose_prose_contradicts_its_output(tmp_path, monkeypatch):
    """End to end: the notebook test itself runs the check on the executed notebook."""
    from dpgp_audit.devtools.nbbuild import code, md, write_notebook

    try:
        from tests.notebooks import harness as nh
    except ImportError:  # pragma: no cover - pytest without the repo root on sys.path
        import harness as nh

    monkeypatch.setattr(nh, "PARAMS", tmp_path / "params")
    monkeypatch.setattr(nh, "REFS", tmp_path / "refs")
    (tmp_path / "params").mkdir()
    nb = write_notebook(tmp_path / "nb" / "99_q.ipynb", [
        md("# q"), code("x = 0.25", "parameters"), code("print(f'x = {x:.4f}')"),
        md("x is 0.25<!--out-->, and twice x is 0.6<!--out-->")])
    nh.params_path(nb).write_text("x: 0.25\n", encoding="utf-8")
    passed, _, log = nh.run_notebook(nb, tmp_path / "out")
    assert not passed and "quotes 0.6 as computed" in log and "0.25 as" not in log, log


def test_every_marker_in_the_notebooks_follows_a_number():
    """An orphan ``<!--out-->`` (no number before it) would silently check nothing."""
    from pathlib import Path

    import nbformat

    from dpgp_audit.devtools.quoted_numbers import MARK

    root = Path(__file__).resolve().parents[2] / "notebooks"
    marked_total = 0
    for path in sorted([*root.glob("*.ipynb"), *root.glob("answers/*.ipynb")]):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            n_marks = cell.source.count(MARK)
            assert len(marked_numbers(cell.source)) == n_marks, (path.name, cell.source[:200])
            marked_total += n_marks
    assert marked_total > 0, "no notebook marks a quoted number: the check would test nothing"
