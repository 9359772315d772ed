"""Notebooks 01 and 02: every code-writing exercise has a solution and a hidden check, the
answers' solution cells pass the public and the hidden checks, and the stub a student
starts from fails without raising. The mistakes each check must reject are in
``test_nb01.py`` and ``test_nb02.py``.
"""

from __future__ import annotations

import importlib

import pytest

from dpgp_audit.exercises import check, exercises
from tests.exercises.solutions import solution

NOTEBOOKS = {"01": ["01.1", "01.2", "01.3"], "02": ["02.1", "02.2", "02.3"]}
HIDDEN = {ex_id: entry for nb in NOTEBOOKS
          for ex_id, entry in importlib.import_module(f"tests.exercises.hidden.nb{nb}")
          .HIDDEN.items()}
IDS = [ex_id for ids in NOTEBOOKS.values() for ex_id in ids]


def _run_hidden(fn, answer) -> list[tuple[bool, str]]:
    """The hidden check's results, stopping at the first failure (as the grader does)."""
    out = []
    for ok, msg in fn(answer):
        out.append((bool(ok), msg))
        if not ok:
            break
    return out


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS))
def test_every_exercise_has_a_hidden_check_and_a_solution(notebook):
    assert exercises(notebook) == NOTEBOOKS[notebook]
    for ex_id in NOTEBOOKS[notebook]:
        name, _ = HIDDEN[ex_id]
        assert callable(solution(ex_id)[name])


@pytest.mark.parametrize("ex_id", IDS)
def test_the_answers_solution_passes_public_and_hidden_checks(ex_id):
    name, hidden_check = HIDDEN[ex_id]
    answer = solution(ex_id)[name]
    public = check(ex_id, answer)
    assert public.passed, str(public)
    secret = _run_hidden(hidden_check, answer)
    assert secret and all(ok for ok, _ in secret), secret


@pytest.mark.parametrize("ex_id", IDS)
def test_the_stub_a_student_starts_from_fails_without_raising(ex_id):
    fb = check(ex_id, lambda *args: None)
    assert not fb.passed, str(fb)
