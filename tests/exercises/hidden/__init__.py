"""Instructors' hidden checks (``make grade``): one module ``nbNN.py`` per notebook.

Each module defines ``HIDDEN: dict[str, tuple[str, CheckFn]]``: exercise ID → (the name
the student defines in the notebook, a check of the same form as the public ones —
a generator of ``(passed, message)`` pairs — with more and harder cases). They are
kept out of the student material (not in the package, not on Binder's path); the
grader (:mod:`dpgp_audit.exercises.grading`) loads them by file path.
"""
