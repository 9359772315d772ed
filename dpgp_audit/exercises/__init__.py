"""In-notebook checks for the course's code-writing exercises.

A student writes a function or a value in an exercise cell and runs::

    from dpgp_audit.exercises import check
    check("01.2", my_sensitivity)          # immediate feedback, in the notebook

:func:`check` runs the exercise's **public checks** — small, fast, deterministic
(each check that draws uses its own fixed generator) — and returns a
:class:`Feedback` that renders as a short pass/fail list with a hint for the first
failure. It never raises for a wrong answer (a Run All goes on); it raises
``KeyError`` only for an unknown exercise ID.

Each notebook's checks live in a module of this package, ``nbNN.py`` for notebook
``NN`` (``nb00b`` for 00b), registered with :func:`exercise`. Instructors' **hidden
checks** (more and harder cases, same form) are kept out of the student material, in
``tests/exercises/hidden/nbNN.py``; :mod:`dpgp_audit.exercises.grading` (``make grade``)
executes a submitted notebook and runs the public and hidden checks on the names it
defined.

Why not otter-grader or nbgrader: both need their own notebook format or a server
extension and a grading workflow, and extra packages on Binder; these checks are
plain functions that run offline and unchanged under JupyterLab, Binder, papermill
and nbval, and the test suite calls them directly on the answers and on known-wrong
answers.
"""

from __future__ import annotations

import html
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["CheckFn", "Feedback", "check", "check_rng", "exercise", "exercises", "run_check",
           "title"]

#: A check yields ``(passed, message)`` pairs; the first failure's message is the hint.
CheckFn = Callable[[object], Iterator[tuple[bool, str]]]


@dataclass(frozen=True)
class _Exercise:
    id: str
    title: str
    fn: CheckFn


_REGISTRY: dict[str, _Exercise] = {}


def exercise(exercise_id: str, title: str) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn`` as the public check of exercise ``exercise_id`` (e.g. ``"01.2"``).

    ``fn(answer)`` yields ``(passed, message)`` pairs, one per property checked, in
    order; it stops being run at the first failure, whose message must tell the
    student what to look at (never the answer itself).
    """
    def register(fn: CheckFn) -> CheckFn:
        if exercise_id in _REGISTRY:
            raise ValueError(f"exercise {exercise_id!r} is registered twice")
        _REGISTRY[exercise_id] = _Exercise(exercise_id, title, fn)
        return fn

    return register


@dataclass(frozen=True)
class Feedback:
    """The outcome of :func:`check`: which properties held, and a hint for the first that did not.

    Attributes
    ----------
    exercise
        The exercise ID.
    title
        What the exercise asks for.
    results
        ``(passed, message)`` for every property checked, in order (checking stops
        at the first failure).
    error
        The exception a student's code raised, as text (``""`` if none).
    """

    exercise: str
    title: str
    results: tuple[tuple[bool, str], ...]
    error: str = ""

    @property
    def passed(self) -> bool:
        """True when every property held and the answer raised nothing."""
        return not self.error and bool(self.results) and all(ok for ok, _ in self.results)

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        head = f"Exercise {self.exercise} ({self.title}): " + (
            "all checks passed" if self.passed else "not yet")
        lines = [head] + [f"  {'✓' if ok else '✗'} {msg}" for ok, msg in self.results]
        if self.error:
            lines.append(f"  ✗ your code raised {self.error}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # noqa: ANN001 - IPython's API
        """Plain-text view in a notebook (papermill, nbval, a terminal): the readable lines."""
        printer.text(str(self))

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#b35900"
        items = "".join(
            f"<li>{'✓' if ok else '✗'} {html.escape(msg)}</li>" for ok, msg in self.results)
        if self.error:
            items += f"<li>✗ your code raised {html.escape(self.error)}</li>"
        verdict = "all checks passed" if self.passed else "not yet"
        return (f"<div style='border-left:4px solid {colour};padding-left:8px'>"
                f"<b>Exercise {html.escape(self.exercise)}</b> "
                f"({html.escape(self.title)}): <span style='color:{colour}'>{verdict}</span>"
                f"<ul style='margin:2px 0'>{items}</ul></div>")


#: Entropy of the checks' generators (see :func:`check_rng`).
_CHECK_ENTROPY = 20_260_001


def check_rng(stream: int):
    """The fixed random generator number ``stream`` of the exercise checks.

    Checks are deterministic on purpose, like tests: the same answer always gets the
    same feedback, so a student never sees a check flip when rerunning it. This is the
    one place where the exercise checks fix their seeds; everything else in the
    package takes its generator from the caller.
    """
    import numpy as np

    return np.random.default_rng([_CHECK_ENTROPY, int(stream)])


def _module_for(exercise_id: str) -> str:
    notebook = exercise_id.split(".", 1)[0]
    return f"dpgp_audit.exercises.nb{notebook}"


def exercises(notebook: str | None = None) -> list[str]:
    """The registered exercise IDs (of one notebook, e.g. ``"01"``), sorted."""
    if notebook is not None:
        importlib.import_module(_module_for(f"{notebook}.0"))
    return sorted(k for k in _REGISTRY if notebook is None or k.split(".")[0] == notebook)


def check(exercise_id: str, answer: object) -> Feedback:
    """Run the public checks of ``exercise_id`` on a student's ``answer``.

    Parameters
    ----------
    exercise_id
        ``"NN.k"``: notebook ``NN`` (``00``, ``00b``, ``01``, …), exercise ``k``.
    answer
        What the exercise asks for: usually the function the student wrote.

    Returns
    -------
    Feedback
        Renders in a notebook; ``bool(feedback)`` is True when every check passed.
    """
    ex = _lookup(exercise_id)
    return run_check(ex.id, ex.title, ex.fn, answer)


def _lookup(exercise_id: str) -> _Exercise:
    if exercise_id not in _REGISTRY:
        try:
            importlib.import_module(_module_for(exercise_id))
        except ModuleNotFoundError:
            pass
    if exercise_id not in _REGISTRY:
        raise KeyError(f"unknown exercise {exercise_id!r}; known: {', '.join(exercises())}")
    return _REGISTRY[exercise_id]


def title(exercise_id: str) -> str:
    """What exercise ``exercise_id`` asks for (its registered title)."""
    return _lookup(exercise_id).title


def run_check(exercise_id: str, title: str, fn: CheckFn, answer: object) -> Feedback:
    """Run one check function on ``answer``: the machinery behind :func:`check`.

    Also used by the grader (:mod:`dpgp_audit.exercises.grading`) for instructors'
    hidden checks, which have the same form as the public ones.

    Parameters
    ----------
    exercise_id, title
        Shown in the feedback.
    fn
        Yields ``(passed, message)`` pairs; stopped at the first failure.
    answer
        What the student defined.

    Returns
    -------
    Feedback
        An exception raised by the student's code is recorded, never propagated.
    """
    results: list[tuple[bool, str]] = []
    try:
        for ok, msg in fn(answer):
            results.append((bool(ok), str(msg)))
            if not ok:
                break
    except Exception as err:  # noqa: BLE001 - a student's bug is feedback, not a crash
        return Feedback(exercise_id, title, tuple(results), f"{type(err).__name__}: {err}")
    return Feedback(exercise_id, title, tuple(results))
