"""The answers notebooks' solutions, taken from their cells tagged ``solution-NN.k``.

The solution code exists once, in ``notebooks/answers/NN_name_answers.py`` (jupytext
percent format); the exercise tests execute those cells, so a test cannot pass on a
copy that drifted from what students are shown.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "notebooks" / "answers"


def solution(exercise_id: str) -> dict:
    """Execute the answers' cell tagged ``solution-<exercise_id>``; return its namespace."""
    import jupytext

    notebook = exercise_id.split(".", 1)[0]
    (path,) = sorted(ANSWERS.glob(f"{notebook}_*_answers.py"))
    nb = jupytext.read(path)
    tag = f"solution-{exercise_id}"
    cells = [c for c in nb.cells if tag in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise LookupError(f"{path.name} has {len(cells)} cells tagged {tag!r}, not one")
    namespace: dict = {}
    exec(compile(cells[0].source, f"{path.name}[{tag}]", "exec"), namespace)  # noqa: S102
    return namespace


def hidden(notebook: str) -> dict:
    """The ``HIDDEN`` table of ``tests/exercises/hidden/nb<notebook>.py``."""
    from dpgp_audit.exercises.grading import load_hidden

    return load_hidden(ROOT / "tests" / "exercises" / "hidden", notebook)


def passes(fn, answer, exercise_id: str = "hidden") -> bool:
    """True when every property of the check ``fn`` holds for ``answer`` (a crash fails)."""
    from dpgp_audit.exercises import run_check

    return run_check(exercise_id, exercise_id, fn, answer).passed


def assert_solution_passes(exercise_id: str, hidden_table: dict) -> None:
    """The answers' solution of ``exercise_id`` passes its public and its hidden check."""
    from dpgp_audit.exercises import check, run_check, title

    name, hidden_check = hidden_table[exercise_id]
    answer = solution(exercise_id)[name]
    public = check(exercise_id, answer)
    assert public.passed, str(public)
    secret = run_check(exercise_id, title(exercise_id), hidden_check, answer)
    assert secret.passed, str(secret)
