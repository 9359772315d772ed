"""Every number in a notebook's prose is computed, checked or cited (``quoted_numbers``).

Expected values are written by hand from the rules of
``dpgp_audit.devtools.quoted_numbers`` (the course's "Numbers in prose" convention):
each rule is tested in both directions, its legal case accepted and its illegal case
rejected.
"""

from __future__ import annotations

import pytest

from dpgp_audit.devtools.quoted_numbers import (
    check_prose,
    check_quoted_numbers,
    marked_numbers,
    matches,
    output_numbers,
    prose_numbers,
    prose_problems,
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


def test_check_passes_consistent_prose_and_cited_numbers():
    nb = _nb(("code", "ratio 0.2499\n"),
             ("md", "ratio 0.25<!--out-->; the paper says 28.53<!--paper-->"))
    assert check_quoted_numbers(nb) == []


def test_check_fails_an_unmarked_number_of_the_prose():
    nb = _nb(("code", "ratio 0.2499\n"), ("md", "ratio 0.25<!--out-->; the paper says 28.53"))
    problems = check_quoted_numbers(nb)
    assert len(problems) == 1 and "'28.53'" in problems[0] and "cell 1" in problems[0]


# ---- one rule at a time: the legal case passes, the illegal one is reported ----------


def _unsupported(markdown):
    """The numbers of ``markdown`` that :func:`prose_problems` reports."""
    return [p.split("'")[1] for p in prose_problems(markdown) if p.startswith("'")]


@pytest.mark.parametrize(("markdown", "flagged"), [
    # rule 2, <!--out-->: the marker must follow the number (its value is checked above)
    ("the noise lands on 7.15<!--out--> cm", []),
    ("the noise lands on 7.15 cm<!--out-->", ["7.15"]),   # marker after the unit: orphan
    ("the ratio is 21 %<!--out-->", []),
    # rule 3, <!--paper-->: the sentence names the source
    ("S18 Table 1 reports 12.2<!--paper--> cm.", []),
    ("Smith et al. report 12.2<!--paper--> cm.", []),
    ("the paper reports 12.2<!--paper--> cm.", []),
    ("The kit gets 12.2<!--paper--> cm.", ["12.2"]),
    ("S18 is the source. The kit gets 12.2<!--paper--> cm.", ["12.2"]),  # other sentence
    ("| method | RMSE |\n|---|---|\n| S18 cloaking | 12.2<!--paper--> |", []),
    ("| method | RMSE |\n|---|---|\n| kit cloaking | 12.2<!--paper--> |", ["12.2"]),
    # rule 4, <!--run: LABEL-->: LABEL in the visible text of the same paragraph
    ("At full scale the kit gets 8.5<!--run: full scale--> cm.", []),
    ("At Full  Scale the kit gets 8.5<!--run: full scale--> cm.", []),  # case, spacing
    ("The kit gets 8.5<!--run: full scale--> cm.", ["8.5"]),
    ("At full scale:\n\nthe kit gets 8.5<!--run: full scale--> cm.", ["8.5"]),  # other par.
    ("The kit gets 8.5<!--run: full scale--> cm (<!-- full scale -->).", ["8.5"]),  # hidden
    # rule 5, exempt by form: math and code spans
    ("with $\\varepsilon = 1$ and `n_repeats=50`", []),
    ("with $$\\sigma = 2\\Delta$$ and ```\nx = 3\n```", []),
    ("with ε = 1 and n_repeats=50", ["1", "50"]),
    ("math over a line break $x = 1 +\n 2$ is math", []),
    ("a lone $ sign 5\n\nand 7 $ in another paragraph", ["5", "7"]),
    # years in citations
    ("Smith et al. 2018 and 2021; Honkela (2024); Balle & Wang 2018; Jin et al. (IEEE S&P 2022)",
     []),
    ("in 2018 the noise doubled", ["2018"]),
    # section, equation, table, figure, algorithm, notebook, exercise numbers
    ("§4–§6, eqs. 38–39, Fig. 1A, Table 1, Alg. 1 line 8, H eq. (10), exercises 2 and 3", []),
    ("notebooks 01–05, notebook 00b, Sections 5–7, Appendix A, Theorem 3.1", []),
    ("## 3 · Four calibrations", []),
    ("the 3 calibrations", ["3"]),
    # list enumerators and difficulty tags
    ("1. ★ first\n2. ★★ second\n   10. ★★★ third", []),
    ("first 1. second", ["1"]),
    # links, catalogue IDs, names with digits
    ("see [notebook one](01_smith2018_cloaking.ipynb), S18.2, P.1–P.3, x_3, L2, 8×8", ["8", "8"]),
])
def test_each_rule_accepts_its_legal_case_and_rejects_the_illegal_one(markdown, flagged):
    assert _unsupported(markdown) == flagged, prose_problems(markdown)


def test_a_marker_that_follows_no_number_is_reported():
    assert any("follows no number" in p for p in prose_problems("the ratio <!--out--> is small"))
    assert any("follows no number" in p for p in prose_problems("$x = 1$<!--paper--> S18"))
    assert not prose_problems("the ratio 0.5<!--out--> is small")


def test_prose_numbers_reads_markers_and_labels():
    found = prose_numbers("a 1.5<!--out-->, b 2<!--paper-->, c 3<!--run: full scale-->, d 4")
    assert [(n.text, n.marker, n.label) for n in found] == [
        ("1.5", "out", ""), ("2", "paper", ""), ("3", "run", "full scale"), ("4", "", "")]


def test_check_prose_needs_no_outputs_and_names_the_cell():
    nb = _nb(("md", "# title"), ("md", "about 7 cm"))
    problems = check_prose(nb)
    assert len(problems) == 1 and problems[0].startswith("cell 1:") and "'7'" in problems[0]


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
