"""The paper-reproduction table builder (dpgp_audit.experiments.reproduction)."""

from __future__ import annotations

import json

import pytest

from dpgp_audit.experiments.reproduction import (
    MARKER_END,
    MARKER_START,
    ReproRow,
    Sidecar,
    build_markdown,
    describe_run,
    main,
    read_sidecars,
    replace_between_markers,
    row_status,
    write_sidecar,
)


def _row(**kw):
    base = dict(paper="S18", quantity="RMSE no DP (cm)", paper_value=6.8, kit_value=6.9,
                half_width=0.3, setting="20 splits")
    return ReproRow(**{**base, **kw})


@pytest.mark.parametrize(("paper", "kit", "half", "expl", "expected"), [
    (6.8, 6.9, 0.3, "", "reproduced"),      # inside
    (6.8, 7.1, 0.3, "", "reproduced"),      # on the upper edge: bounds included
    (6.8, 8.4, 0.2, "", "open"),            # outside, no cause
    (6.8, 8.4, 0.2, "noise sd", "explained"),
    (6.8, 8.4, 0.2, "   ", "open"),         # a blank cause is no cause
    (28.53, 28.53, None, "", "reproduced"),  # deterministic, equal
    (28.53, 26.9, None, "", "open"),
    (28.53, 26.9, None, "rounded", "explained"),
])
def test_row_status(paper, kit, half, expl, expected):
    assert row_status(paper, kit, half, expl) == expected


def test_row_status_rejects_bad_numbers():
    with pytest.raises(ValueError, match="half_width"):
        row_status(1.0, 1.0, -0.1)
    with pytest.raises(ValueError, match="finite"):
        row_status(float("nan"), 1.0, 0.1)


def test_row_validation():
    with pytest.raises(ValueError, match="paper"):
        _row(paper="XYZ")
    with pytest.raises(ValueError, match="quantity"):
        _row(quantity=" ")
    assert _row().status == "reproduced"


def test_markdown_one_table_per_paper_with_counts():
    cars = [Sidecar("01_smith2018_cloaking", "CI defaults",
                    (_row(), _row(quantity="RMSE DP (cm)", paper_value=12.2, kit_value=20.0,
                                  half_width=1.0, explanation="noise sd"))),
            Sidecar("03_honkela_dp_svgp", "full scale",
                    (_row(paper="H", quantity="P(true) at eps 30", paper_value=0.9,
                          kit_value=0.5, half_width=0.1),))]
    md = build_markdown(cars)
    assert md.count("| quantity | paper | kit (95% CI) |") == 2  # S18 and H only
    assert "### S21" in md and "no rows recorded" in md           # S21 and R are missing
    assert build_markdown(cars, title="T", level=3).startswith("### T\n")
    assert "#### S18" in build_markdown(cars, level=3)
    with pytest.raises(ValueError, match="level"):
        build_markdown(cars, level=0)
    assert "| RMSE no DP (cm) | 6.8 | 6.9 ± 0.3 | 20 splits | reproduced |" in md
    assert "Totals: 1 reproduced, 1 explained, 1 open." in md
    assert "01_smith2018_cloaking: CI defaults" in md
    with pytest.raises(ValueError, match="empty"):
        build_markdown([])


def test_markdown_escapes_pipes():
    md = build_markdown([Sidecar("nb", "s", (_row(setting="a | b"),))])
    assert "a \\| b" in md


def test_replace_between_markers():
    text = f"intro\n{MARKER_START}\nold\n{MARKER_END}\noutro\n"
    new = replace_between_markers(text, "NEW TABLE\n")
    assert new == f"intro\n{MARKER_START}\nNEW TABLE\n{MARKER_END}\noutro\n"
    assert replace_between_markers(new, "NEW TABLE") == new  # idempotent
    for bad in ("no markers", f"{MARKER_END}\n{MARKER_START}",
                f"{MARKER_START}{MARKER_START}{MARKER_END}"):
        with pytest.raises(ValueError):
            replace_between_markers(bad, "x")


def test_sidecar_round_trip_and_cli(tmp_path):
    rows = (_row(), _row(paper="R", quantity="steps", paper_value=409600, kit_value=14000,
                         half_width=None, explanation="CPU budget"))
    write_sidecar(tmp_path / "01.repro.json", "01_smith2018_cloaking", "CI defaults", rows)
    payload = json.loads((tmp_path / "01.repro.json").read_text())
    assert [r["status"] for r in payload["rows"]] == ["reproduced", "explained"]
    (back,) = read_sidecars([tmp_path / "01.repro.json"])
    assert back.rows == rows
    doc = tmp_path / "reproductions.md"
    doc.write_text(f"# kit\n{MARKER_START}\n{MARKER_END}\n")
    out = tmp_path / "REPRODUCTION.md"
    assert main(["--records", str(tmp_path), "--out", str(out),
                 "--write-docs", str(doc)]) == 0
    assert "| 409,600 | 14,000 |" in out.read_text()
    assert "| steps |" in doc.read_text()


def test_describe_run_names_the_scale():
    full = {"n_repeats": 50, "n_table": 5000, "show_progress": True}
    assert describe_run(None, full) == "default parameters"
    assert describe_run({"repro_json": "x.json"}, full) == "default parameters"
    # the output path and progress messages do not change a number
    assert describe_run({"n_repeats": 50, "n_table": 5000, "repro_json": "x"}, full) == \
        "full scale"
    assert describe_run({"n_repeats": 50}, full) == "default parameters except n_repeats=50"
    assert describe_run({"n_table": 5000, "n_repeats": 50}, None) == \
        "default parameters except n_repeats=50, n_table=5000"


def test_cli_labels_each_run_with_its_scale(tmp_path):
    """The executed notebook beside a sidecar says which papermill parameters made it."""
    write_sidecar(tmp_path / "01_smith2018_cloaking.repro.json", "01_smith2018_cloaking",
                  "n_repeats=50", (_row(),))
    write_sidecar(tmp_path / "03_honkela_dp_svgp.repro.json", "03_honkela_dp_svgp",
                  "n_repeats_hyper=10", (_row(paper="H"),))
    full = tmp_path / "full_scale"
    full.mkdir()
    (full / "01_smith2018_cloaking.yaml").write_text("n_repeats: 50\nn_table: 5000\n")
    (full / "03_honkela_dp_svgp.yaml").write_text("n_repeats_hyper: 100\n")
    for stem, params in (("01_smith2018_cloaking", {"n_repeats": 50, "n_table": 5000,
                                                    "repro_json": "/x.json"}),
                         ("03_honkela_dp_svgp", {"repro_json": "/y.json"})):
        (tmp_path / f"{stem}.ipynb").write_text(json.dumps(
            {"cells": [], "metadata": {"papermill": {"parameters": params}}}))
    out = tmp_path / "R.md"
    assert main(["--records", str(tmp_path), "--out", str(out),
                 "--full-scale", str(full)]) == 0
    md = out.read_text()
    assert "Run at 01_smith2018_cloaking: full scale (n_repeats=50)." in md
    assert "Run at 03_honkela_dp_svgp: default parameters (n_repeats_hyper=10)." in md


def test_cli_errors(tmp_path, capsys):
    assert main(["--records", str(tmp_path)]) == 2
    assert "no *.repro.json" in capsys.readouterr().err
    (tmp_path / "x.repro.json").write_text("{}")
    assert main(["--records", str(tmp_path)]) == 2
    assert "not a reproduction sidecar" in capsys.readouterr().err


@pytest.mark.parametrize(("bound", "kit", "half", "expected"), [
    ("at_least", 34.0, None, "reproduced"), ("at_least", 20.0, None, "open"),
    ("at_least", 24.0, 1.5, "reproduced"),   # the interval reaches the bound
    ("at_most", 20.0, None, "reproduced"), ("at_most", 30.0, 1.0, "open"),
])
def test_bound_rows(bound, kit, half, expected):
    assert row_status(25.0, kit, half, bound=bound) == expected
    row = _row(paper_value=25.0, kit_value=kit, half_width=half, bound=bound)
    assert row.status == expected
    sign = "≥" if bound == "at_least" else "≤"
    assert f"| {sign} 25.0 |" in build_markdown([Sidecar("nb", "s", (row,))])
    with pytest.raises(ValueError, match="bound"):
        row_status(1.0, 1.0, None, bound="roughly")


def test_paired_sign_test_against_binomial_closed_form():
    from dpgp_audit.experiments.reproduction import paired_sign_test

    # 7 of 7 pairs won: p = 2^-7; 6 of 7: p = (1 + 7) / 2^7; ties are dropped
    assert paired_sign_test([1] * 7, [2] * 7) == pytest.approx(2.0**-7)
    assert paired_sign_test([1] * 6 + [3], [2] * 7) == pytest.approx(8 / 128)
    assert paired_sign_test([1, 1, 5], [2, 2, 5]) == pytest.approx(0.25)
    assert paired_sign_test([5.0], [5.0]) == 1.0
    with pytest.raises(ValueError):
        paired_sign_test([1, 2], [1])


def test_proportion_increase_test_against_hypergeometric_closed_form():
    from math import comb

    from dpgp_audit.experiments.reproduction import proportion_increase_test

    # 0 of 3 vs 3 of 3: P(first group has <= 0 successes | margins) = C(3,0)C(3,3)/C(6,3)
    assert proportion_increase_test(0, 3, 3, 3) == pytest.approx(1 / comb(6, 3))
    assert proportion_increase_test(3, 3, 0, 3) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="k_low"):
        proportion_increase_test(4, 3, 0, 3)
