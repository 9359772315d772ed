"""dpgp_audit.exercises: feedback is immediate, never raises for a wrong answer, and has power."""

from __future__ import annotations

import math

import pytest

from dpgp_audit.exercises import Feedback, check, exercises
from dpgp_audit.privacy.calibrate import classical_sigma


def test_a_right_answer_passes_and_renders():
    fb = check("00.1", lambda e, d, s: classical_sigma(e, d, s))
    assert isinstance(fb, Feedback) and fb.passed and bool(fb)
    assert "all checks passed" in str(fb) and "all checks passed" in fb._repr_html_()


@pytest.mark.parametrize("wrong", [
    lambda e, d, s: s * math.sqrt(2 * math.log(1 / d)) / e,        # 1 instead of 1.25
    lambda e, d, s: s * 2 * math.log(1.25 / d) / e,                # no square root
    lambda e, d, s: math.sqrt(s) * math.sqrt(2 * math.log(1.25 / d)) / e,  # sqrt of Δ
    lambda e, d, s: s * math.sqrt(2 * math.log(1.25 / d)) / math.sqrt(e),
])
def test_wrong_answers_are_rejected_with_a_hint(wrong):
    fb = check("00.1", wrong)
    assert not fb.passed
    assert fb.results[-1][0] is False and fb.results[-1][1]


def test_a_crashing_answer_is_feedback_not_an_exception():
    def broken(e, d, s):
        raise ZeroDivisionError("oops")

    fb = check("00.1", broken)
    assert not fb.passed and "ZeroDivisionError" in fb.error and "raised" in str(fb)


def test_unknown_exercise_is_a_key_error():
    with pytest.raises(KeyError, match="unknown exercise"):
        check("99.9", None)


def test_exercises_are_listed_per_notebook():
    assert "00.1" in exercises("00")


def test_plain_text_view_is_the_readable_feedback():
    from IPython.lib.pretty import pretty

    fb = check("00.1", lambda e, d, s: classical_sigma(e, d, s))
    assert pretty(fb) == str(fb) and pretty(fb).startswith("Exercise 00.1")
