"""The mutation benchmark's driver: every mutant form through the default path (A.5).

:mod:`dpgp_audit.bugs.mutants` holds the mutants and their negative controls;
:func:`run_mutation` audits each form with ``audit_mechanism``'s defaults and
:func:`mutation_score` counts bugs caught and controls flagged per form
(``benchmarks/bench_mutation.py`` prints both).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_rng
from dpgp_audit.audit.runner import DEFAULT_MODE, DEFAULT_TIME_GUARD_S
from dpgp_audit.bugs.mutants import FORMS, MutantSpec, build_form

__all__ = ["MutationRow", "mutation_score", "run_mutation"]


@dataclass(frozen=True)
class MutationRow:
    """The default-path verdict on one form of one mutant."""

    name: str
    form: str
    private: bool
    verdict: str
    caught_by: tuple[str, ...]
    seconds: float

    @property
    def correct(self) -> bool:
        """Caught (a bug) or not flagged (a control)."""
        return (self.verdict != "VIOLATION") if self.private else self.verdict == "VIOLATION"


def run_mutation(specs: list[MutantSpec], rng: np.random.Generator, *, n: int | None = None,
                 forms: tuple[str, ...] = FORMS, alpha: float = 0.05,
                 mode: str = DEFAULT_MODE, time_guard_s: float | None = DEFAULT_TIME_GUARD_S
                 ) -> list[MutationRow]:
    """Audit every form of every spec on the default path (``audit_mechanism`` defaults).

    ``n``, ``mode`` and ``time_guard_s`` are passed to
    :func:`~dpgp_audit.audit.runner.audit_mechanism`; their defaults are its own (the
    sequential default path, ``n=None``: its cap), and ``mode="fixed"`` with ``n``
    reproduces a fixed-n table.
    """
    import time

    from dpgp_audit.audit.runner import audit_mechanism

    kw = {"mode": mode, "time_guard_s": time_guard_s}

    rng = check_rng(rng)
    rows = []
    jobs = [(s, f) for s in specs for f in forms]
    for (spec, form), child in zip(jobs, rng.spawn(len(jobs)), strict=True):
        t = time.perf_counter()
        rep = audit_mechanism(build_form(spec, form), spec.data, child, n=n, alpha=alpha,
                              name=f"{spec.name}[{form}]", **kw)
        caught = tuple(r.auditor for r in rep.results if r.violation)
        rows.append(MutationRow(spec.name, form, spec.private, rep.verdict.value, caught,
                                time.perf_counter() - t))
    return rows


def mutation_score(rows: list[MutationRow]) -> dict[str, dict]:
    """Per form: bugs caught / bugs, and controls flagged / controls."""
    out = {}
    for form in sorted({r.form for r in rows}):
        bugs = [r for r in rows if r.form == form and not r.private]
        ctrl = [r for r in rows if r.form == form and r.private]
        out[form] = {"caught": sum(r.correct for r in bugs), "bugs": len(bugs),
                     "false_alarms": sum(not r.correct for r in ctrl), "controls": len(ctrl)}
    return out
