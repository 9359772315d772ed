"""Notebook 00b's code-writing exercises: the answers pass, plausible mistakes do not.

Reference values: the posterior mean by a direct linear solve (R&W Alg. 2.1) and the
kit's vetted ``rkhs_sensitivity`` (S18 eq. 1), checked elsewhere against closed forms.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit.exercises import check, exercises, run_check, title
from tests.exercises.solutions import ROOT, hidden, solution

HIDDEN = hidden("00b")


def test_every_exercise_of_00b_has_a_hidden_check_and_a_solution():
    assert exercises("00b") == sorted(HIDDEN) == ["00b.1", "00b.2"]


@pytest.mark.parametrize("ex_id", ["00b.1", "00b.2"])
def test_the_answers_solution_passes_public_and_hidden_checks(ex_id):
    name, hidden_check = HIDDEN[ex_id]
    answer = solution(ex_id)[name]
    assert check(ex_id, answer).passed, str(check(ex_id, answer))
    secret = run_check(ex_id, title(ex_id), hidden_check, answer)
    assert secret.passed, str(secret)


def test_the_stub_a_student_starts_from_fails_without_raising():
    for ex_id in ("00b.1", "00b.2"):
        fb = check(ex_id, lambda *args: None)
        assert not fb.passed and not fb.error, str(fb)


@pytest.mark.parametrize("wrong", [
    lambda Kp, ks, y, nv: ks.T @ np.linalg.solve(Kp + 1e-10 * np.eye(len(y)), y),  # no noise
    lambda Kp, ks, y, nv: ks.T @ np.linalg.solve(Kp + nv**0.5 * np.eye(len(y)), y),  # sd
    lambda Kp, ks, y, nv: ks.T @ np.linalg.solve(Kp + nv**2 * np.eye(len(y)), y),   # var²
    lambda Kp, ks, y, nv: ks.T @ y,                                                 # no K⁻¹
], ids=["no-noise", "sd-not-variance", "variance-squared", "no-inverse"])
def test_posterior_mean_mistakes_fail_the_public_check(wrong):
    assert not check("00b.1", wrong).passed


def _K_in_the_middle(Kp, nv, d):
    Kinv = np.linalg.inv(Kp + nv * np.eye(len(Kp)))
    return d * np.sqrt(np.max(np.diag(Kinv)))


def _Kprime_outside(Kp, nv, d):
    Kinv = np.linalg.pinv(Kp)
    return d * np.sqrt(np.max(np.diag(Kinv @ Kp @ Kinv)))


def _no_sqrt(Kp, nv, d):
    Kinv = np.linalg.inv(Kp + nv * np.eye(len(Kp)))
    return d * np.max(np.diag(Kinv @ Kp @ Kinv))


def _mean_over_targets(Kp, nv, d):
    Kinv = np.linalg.inv(Kp + nv * np.eye(len(Kp)))
    return d * np.sqrt(np.mean(np.diag(Kinv @ Kp @ Kinv)))


@pytest.mark.parametrize("wrong", [_K_in_the_middle, _Kprime_outside, _no_sqrt,
                                   _mean_over_targets])
def test_sensitivity_mistakes_fail_the_public_check(wrong):
    assert not check("00b.2", wrong).passed


def test_the_answers_repeat_the_primers_data():
    """00b's answers say they use the primer's data: the setup draws the same X and y."""
    import jupytext

    def data(path):
        nb = jupytext.read(path)
        ns: dict = {}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            src = "\n".join(line for line in cell.source.splitlines()
                            if not line.lstrip().startswith("%"))
            if "parameters" in cell.metadata.get("tags", []) or "rng.uniform" in src:
                exec(src, ns)  # noqa: S102
            if "y" in ns and "X" in ns:
                return ns["X"], ns["y"]
        raise AssertionError(f"{path.name}: no cell draws X and y")

    X0, y0 = data(ROOT / "notebooks" / "00b_gp_primer.py")
    X1, y1 = data(ROOT / "notebooks" / "answers" / "00b_gp_primer_answers.py")
    assert np.array_equal(X0, X1) and np.array_equal(y0, y1)
