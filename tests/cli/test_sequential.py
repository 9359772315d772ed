"""A.6 + A.8: the CLI's default sequential mode, its time guard and its fixed-n switch."""

from __future__ import annotations

import json

import pytest

from dpgp_audit.cli import main


def test_default_mode_is_sequential_and_stops_early(tmp_path, capsys):
    js = tmp_path / "s.json"
    code = main(["audit", "--mechanism", "planted/std-as-variance", "--seed", "4",
                 "--json", str(js), "--no-progress", "--time-guard-s", "60"])
    out = capsys.readouterr().out
    assert code == 1 and "sequential (anytime-valid)" in out
    rep = json.loads(js.read_text())["reports"][0]
    bb = next(r for r in rep["results"] if r["auditor"] == "blackbox")
    assert bb["details"]["mode"] == "sequential"
    assert rep["inputs"]["mode"] == "sequential"
    # the draws it made are recorded, and a rerun capped at them repeats the bound
    drawn = bb["details"]["reproduce"]["max_n"]
    js2 = tmp_path / "r.json"
    main(["audit", "--mechanism", "planted/std-as-variance", "--seed", "4", "--json", str(js2),
          "--no-progress", "--samples", str(drawn), "--time-guard-s", "none"])
    capsys.readouterr()
    rep2 = json.loads(js2.read_text())["reports"][0]
    assert [r["verdict"] for r in rep2["results"]] == [r["verdict"] for r in rep["results"]]


def test_fixed_mode_draws_exactly_n(tmp_path, capsys):
    js = tmp_path / "f.json"
    code = main(["audit", "--mechanism", "P.1/gaussian-sum", "--mode", "fixed", "--samples",
                 "3000", "--seed", "2", "--json", str(js), "--no-progress"])
    capsys.readouterr()
    assert code == 0
    bb = next(r for r in json.loads(js.read_text())["reports"][0]["results"]
              if r["auditor"] == "blackbox")
    assert bb["details"]["n_per_side"] == 3000 and "mode" not in bb["details"]


def test_the_former_budget_flag_is_the_time_guard(tmp_path, capsys):
    js = tmp_path / "b.json"
    assert main(["audit", "--mechanism", "P.2/laplace-sum", "--seed", "5", "--samples", "2000",
                 "--json", str(js), "--no-progress", "--budget-s", "300"]) == 0
    capsys.readouterr()
    rep = json.loads(js.read_text())["reports"][0]
    assert rep["inputs"]["time_guard_s"] == 300.0 and rep["guard"]["fired"] == []


@pytest.mark.parametrize("argv", [
    ["audit", "--mechanism", "P.1/gaussian-sum", "--budget-s", "0"],
    ["audit", "--mechanism", "P.1/gaussian-sum", "--budget-s", "-3"],
    ["audit", "--mechanism", "P.1/gaussian-sum", "--time-guard-s", "0"],
    ["audit", "--mechanism", "P.1/gaussian-sum", "--time-guard-s", "soon"],
    ["audit", "--mechanism", "P.1/gaussian-sum", "--mode", "bogus"],
])
def test_usage_errors_exit_2(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    assert "error" in capsys.readouterr().err
