"""make grade: a submission is executed, then graded with the public and hidden checks."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpgp_audit.exercises.grading import format_report, kernel_report, main, names_from_notebook
from tests.exercises.solutions import ROOT, solution

HIDDEN_DIR = str(ROOT / "tests" / "exercises" / "hidden")


def test_names_are_read_from_the_notebooks_check_calls():
    nb = {"cells": [{"cell_type": "code", "source": "%matplotlib inline\ncheck('00.1', f)"},
                    {"cell_type": "code", "source": ["x = check(\"00.2\", ", "g)"]},
                    {"cell_type": "markdown", "source": "check('00.3', h)"},
                    {"cell_type": "code", "source": "def (:"}]}
    assert names_from_notebook(nb) == {"00.1": "f", "00.2": "g"}


def test_report_scores_right_wrong_and_missing_answers():
    namespace = {"classical_sigma": solution("00.1")["classical_sigma"],
                 "laplace_release": lambda v, s, e, n, rng: v + rng.normal(0, s / e, n)}
    report = kernel_report(namespace, "00", HIDDEN_DIR, {})
    rows = {r["id"]: r for r in report["exercises"]}
    assert rows["00.1"]["score"] == 1.0 and rows["00.1"]["hidden"]["passed"]
    assert rows["00.2"]["score"] == 0.0 and not rows["00.2"]["public"]["passed"]
    assert rows["00.2"]["public"]["first_failure"]
    assert rows["00.3"]["defined"] is False and rows["00.3"]["score"] == 0.0
    assert report["score"] == 1.0 and report["max_score"] == 3.0
    text = format_report({**report, "submission": "s.ipynb", "cell_errors": 0})
    assert "00.3" in text and "missing" in text and "total 1 / 3" in text


def test_public_pass_hidden_fail_scores_half():
    def ge(s0, s1, thresholds):  # ">= t": passes the public check, fails the hidden tie case
        out = 0.0
        for t in thresholds:
            p0, p1 = np.mean(np.asarray(s0) >= t), np.mean(np.asarray(s1) >= t)
            for a, b in ((p1, p0), (p0, p1)):
                if a > 0:
                    out = max(out, np.inf if b == 0 else a / b)
        return out

    report = kernel_report({"worst_ratio": ge}, "00", HIDDEN_DIR, {})
    row = next(r for r in report["exercises"] if r["id"] == "00.3")
    assert row["public"]["passed"] and not row["hidden"]["passed"] and row["score"] == 0.5


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    assert main([str(tmp_path / "missing.ipynb"), "--notebook", "00"]) == 2
    assert "is not a file" in capsys.readouterr().err


@pytest.mark.notebooks
def test_grading_executes_a_submission_end_to_end(tmp_path, monkeypatch):
    from dpgp_audit.devtools.nbbuild import code, md, write_notebook
    from tests.notebooks.harness import kernel_env

    for key, value in kernel_env().items():
        monkeypatch.setenv(key, value)
    right = solution("00b.1")
    sub = write_notebook(tmp_path / "student.ipynb", [
        md("# my 00b"), code("n_points = 40", "parameters"),
        code("import numpy as np\nfrom dpgp_audit.exercises import check"),
        code("raise RuntimeError('a broken cell costs only what depends on it')"),
        code("def posterior_mean(K_prime, k_star, y, noise_var):\n"
             "    K = K_prime + noise_var * np.eye(len(y))\n"
             "    return k_star.T @ np.linalg.solve(K, y)\n"
             "check('00b.1', posterior_mean)"),
        code("def rkhs_change(K_prime, noise_var, d):\n    ...  # your code here\n"
             "check('00b.2', rkhs_change)")])
    assert "posterior_mean" in right
    out = tmp_path / "grade.json"
    assert main([str(sub), "--notebook", "00b", "--hidden", HIDDEN_DIR, "--timeout", "120",
                 "--json", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    rows = {r["id"]: r for r in report["exercises"]}
    assert report["graded"] and report["cell_errors"] == 1
    assert rows["00b.1"]["score"] == 1.0 and rows["00b.2"]["score"] == 0.0
    assert report["score"] == 1.0 and report["max_score"] == 2.0
