"""Mutation benchmark (issue 15 §1): how many hurried-user mistakes the default path catches.

Every mutant of :mod:`dpgp_audit.bugs.mutants` is audited in both forms — only
``sample`` (black-box user), and ``sample`` plus the description its author wrote
(``mean``/``cov`` or ``query``/``sensitivity_bound``) — by the default path
``audit_mechanism(mech, data, rng, n=N)`` with nothing hand-chosen: no pairs, no
score, no auditor list. Negative controls (private mechanisms that look wrong)
must not be flagged. Prints one row per form and the mutation score per form, as
a Markdown table (docs/benchmarks.md's table is this output).

Usage: ``python benchmarks/bench_mutation.py [N] [SEED] [MODE]``. By default (``N`` =
``default``, seed 2026, ``MODE`` = ``sequential``) every form runs the library's default
path, ``audit_mechanism(mech, data, rng)``: sequential, at most 200 000 draws per side
and pair (draws, never seconds). ``MODE`` = ``fixed`` draws exactly ``N`` per side (``N`` =
``default``: 20 000). Exit 1 when a control is flagged or a bug form is missed without
an entry in :data:`EXPLAINED`.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from _common import report  # pins BLAS to one thread

from dpgp_audit.audit.runner import DEFAULT_MODE, default_n
from dpgp_audit.bugs.mutants import mutants
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.experiments.mutation import mutation_score, run_mutation

#: Forms whose miss has a measured reason (checked by the tests, not assumed here).
EXPLAINED = {
    ("misstated-utility-range", "sample"): (
        "on the generated pairs the exact realised loss is at most 1.32 (row y=+b -> y=-b; "
        "computed from log_probabilities), so a sample-only certificate above the claimed 1 "
        "needs ~10^6 samples per side; the model form is refuted definitively by the "
        "sensitivity checker"),
}


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "default" else None
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 2026
    mode = sys.argv[3] if len(sys.argv) > 3 else DEFAULT_MODE
    specs = mutants(default_dataset())
    t = time.perf_counter()
    rows = run_mutation(specs, np.random.default_rng(seed), n=n, mode=mode)
    n = default_n(mode) if n is None else n
    elapsed = time.perf_counter() - t
    by = {(r.name, r.form): r for r in rows}
    print("| mutant | kind | sample-only | with its model | what it gets wrong |")
    print("|---|---|---|---|---|")
    for s in specs:
        cells = []
        for form in ("sample", "model"):
            r = by[(s.name, form)]
            mark = ("caught: " + ", ".join(r.caught_by) if r.verdict == "VIOLATION"
                    else r.verdict.lower().replace("_", " "))
            tag = " (explained below)" if (s.name, form) in EXPLAINED else " **(wrong)**"
            cells.append(mark + ("" if r.correct else tag))
        kind = "control" if s.private else "bug"
        print(f"| {s.name} | {kind} | {cells[0]} | {cells[1]} | {s.mistake} |")
    score = mutation_score(rows)
    print()
    for form, sc in score.items():
        print(f"form {form:<7}: {sc['caught']}/{sc['bugs']} bugs caught, "
              f"{sc['false_alarms']}/{sc['controls']} controls flagged")
    what = "exactly" if mode == "fixed" else "at most"
    print(f"{mode} mode, {what} {n} samples per side, seed {seed}, {elapsed:.0f} s")
    for (name, form), why in EXPLAINED.items():
        if not by[(name, form)].correct:
            print(f"explained: {name} [{form}]: {why}")
    ok = all(r.correct or (r.name, r.form) in EXPLAINED and not r.private for r in rows)
    report("mutation benchmark (all forms)", elapsed, 600.0, None)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
