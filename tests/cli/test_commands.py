"""The command line (P.1, P.3): the documented outputs and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dpgp_audit.cli import main


def test_calibrate_json_reference(capsys):
    assert main(["calibrate", "--epsilon", "1", "--delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert round(out["sigma"], 4) == 3.7306
    assert out["method"] == "analytic" and out["sensitivity"] == 1.0


def test_calibrate_sensitivity_and_method(capsys):
    assert main(["calibrate", "--epsilon", "0.5", "--delta", "1e-3", "--sensitivity", "2",
                 "--method", "hall", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "hall" and out["sigma"] > 0


def test_gdp_both_directions(capsys):
    assert main(["gdp", "--mu", "1", "--epsilon", "1", "--json"]) == 0
    delta = json.loads(capsys.readouterr().out)["delta"]
    assert main(["gdp", "--mu", "1", "--delta", str(delta), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["epsilon"] == pytest.approx(1.0, rel=1e-8)


@pytest.mark.parametrize("argv", [
    ["calibrate", "--epsilon", "0", "--delta", "1e-5"],
    ["calibrate", "--epsilon", "1", "--delta", "2"],
    ["calibrate", "--epsilon", "2", "--delta", "1e-5", "--method", "classical"],
    ["calibrate", "--epsilon", "x", "--delta", "1e-5"],
    ["calibrate", "--delta", "1e-5"],
    ["gdp", "--mu", "-1", "--epsilon", "1"],
    ["gdp", "--mu", "1"],
    ["laplace", "--epsilon", "-1"],
    ["laplace", "--epsilon", "1", "--sensitivity", "0"],
    ["split", "--epsilon", "1", "--weights", "1", "0"],
    ["split", "--epsilon", "1", "--delta", "1e-5", "--weights", "1", "1", "--delta-weights", "1"],
    ["split", "--epsilon", "1"],
    ["no-such-command"],
])
def test_bad_arguments_exit_2_with_one_line(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err and len(err.splitlines()) == 1


def test_module_entry_point_runs():
    proc = subprocess.run([sys.executable, "-m", "dpgp_audit", "calibrate", "--epsilon", "1",
                           "--delta", "1e-5"], capture_output=True, text=True, check=True)
    assert "3.73063" in proc.stdout


def test_laplace_scale_json(capsys):
    assert main(["laplace", "--epsilon", "0.5", "--sensitivity", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scale"] == 4.0  # closed form b = sensitivity / epsilon


def test_split_budget_json_and_text(capsys):
    assert main(["split", "--epsilon", "1", "--delta", "1e-2", "--weights", "1", "1",
                 "--delta-weights", "0", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parts"] == [{"epsilon": 0.5, "delta": 0.0}, {"epsilon": 0.5, "delta": 0.01}]
    assert main(["split", "--epsilon", "3", "--weights", "1", "2"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == ["part 0: epsilon = 1, delta = 0", "part 1: epsilon = 2, delta = 0"]
