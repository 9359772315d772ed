"""The answers notebooks' solution cells, executed, for the exercise tests.

A solution lives once, in ``notebooks/answers/NN_*_answers.py`` (jupytext percent), in a
code cell tagged ``solution-NN.k``. :func:`solution` executes that cell alone in a fresh
namespace and returns the namespace, so the tests check exactly the code the answers
notebook shows. Solution cells therefore import what they use.

:func:`run_check` runs a check function (public or hidden: a generator of
``(passed, message)``) the way :func:`dpgp_audit.exercises.check` does — stopping at the
first failure — and returns the results.
"""

from __future__ import annotations

import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "notebooks" / "answers"


@functools.cache
def _cells(stem: str) -> dict[str, str]:
    import jupytext

    path = ANSWERS / f"{stem}_answers.py"
    nb = jupytext.read(path)
    out = {}
    for cell in nb.cells:
        for tag in cell.get("metadata", {}).get("tags", []):
            if tag.startswith("solution-"):
                if tag in out:
                    raise ValueError(f"{path.name}: two cells tagged {tag!r}")
                out[tag] = cell.source
    return out


def solution(stem: str, exercise_id: str) -> dict:
    """Execute the cell tagged ``solution-<exercise_id>`` of ``<stem>_answers.py``."""
    cells = _cells(stem)
    tag = f"solution-{exercise_id}"
    if tag not in cells:
        raise KeyError(f"{stem}_answers.py has no cell tagged {tag!r}; tagged: {sorted(cells)}")
    namespace: dict = {"__name__": f"answers_{exercise_id.replace('.', '_')}"}
    exec(compile(cells[tag], f"<{stem}_answers {tag}>", "exec"), namespace)  # noqa: S102
    return namespace


def run_check(fn, answer) -> list[tuple[bool, str]]:
    """Run a check generator on ``answer``, stopping at the first failure (like ``check``)."""
    results = []
    for ok, msg in fn(answer):
        results.append((bool(ok), str(msg)))
        if not ok:
            break
    return results


def passes(fn, answer) -> bool:
    """True when every property of ``fn`` holds for ``answer`` (an exception is a failure)."""
    try:
        res = run_check(fn, answer)
    except Exception:  # noqa: BLE001 - a crashing answer fails, as in the notebook
        return False
    return bool(res) and all(ok for ok, _ in res)


def assert_solution_passes(stem: str, exercise_id: str, hidden: dict) -> None:
    """The answers' solution of ``exercise_id`` passes its public and its hidden check."""
    from dpgp_audit.exercises import check

    name, hidden_check = hidden[exercise_id]
    answer = solution(stem, exercise_id)[name]
    feedback = check(exercise_id, answer)
    assert feedback.passed, str(feedback)
    assert passes(hidden_check, answer), run_check(hidden_check, answer)
