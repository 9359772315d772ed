"""Samples to flag each planted bug: sequential (A.8) against fixed n (A.3), side by side.

For every planted bug of the catalogue, the black-box auditor of the default path
(``audit_mechanism(..., auditors=("blackbox",))``: the same pair generation and
ranking, the two top pairs confirmed) is run over ``--seeds`` seeds:

* **sequential**: draws per side and pair when it stopped with a violation (cap
  ``--max-n``); the median over seeds (a seed that never flags counts as ∞);
* **fixed n (oracle)**: the smallest n on a doubling grid (16, 32, …, ``--max-n``) at
  which at least half of the seeds flag — the n a user would have had to guess in
  advance, knowing the bug;
* **fixed n (default)**: what ``make audit --mode fixed`` spends (the entry's
  ``audit_samples`` or 20 000), flagged or not.

Easy bugs (true ε ≥ 1.9× the claimed ε, or unbounded) target ≥ 5× fewer draws;
hard ones target at most 1.2× more than the oracle fixed n. The table is printed;
nothing is asserted.

Usage: ``python benchmarks/bench_sequential.py [--seeds 9] [--max-n 512000]``.
"""

from __future__ import annotations

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import _common  # noqa: F401  (BLAS pinned to one thread)
import numpy as np  # noqa: E402

from dpgp_audit.audit.runner import FIXED_DEFAULT_N, audit_mechanism  # noqa: E402
from dpgp_audit.catalogue import entries  # noqa: E402


def _seq_draws(mech: object, data: object, seeds: list, max_n: int) -> list[float]:
    out = []
    for s in seeds:
        r = audit_mechanism(mech, data, np.random.default_rng(s), auditors=("blackbox",),
                            n=max_n, mode="sequential", budget_s=None)  # draws, not seconds
        bb = r.result("blackbox")
        out.append(float(bb.details["n_per_side"]) if r.violation else math.inf)
    return out


def _fixed_needed(mech: object, data: object, seeds: list, max_n: int) -> float:
    n = 16
    while n <= max_n:
        flagged = sum(audit_mechanism(mech, data, np.random.default_rng(s),
                                      auditors=("blackbox",), n=n, mode="fixed").violation
                      for s in seeds)
        if 2 * flagged >= len(seeds):
            return float(n)
        n *= 2
    return math.inf


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=9)
    ap.add_argument("--max-n", type=int, default=512_000)
    ap.add_argument("--base-seed", type=int, default=15)
    ap.add_argument("--only", nargs="*", help="planted IDs (default: all)")
    args = ap.parse_args()
    bugs = [e for e in entries(include_planted=True) if e.planted]
    if args.only:
        bugs = [e for e in bugs if e.id in args.only]
    print(f"{'planted bug':<36} {'true eps':>8} {'class':>5} {'fixed n':>8} {'seq':>8} "
          f"{'oracle/seq':>10} {'default n':>9} {'def/seq':>8}  target vs oracle   "
          f"({args.seeds} seeds, cap {args.max_n})")
    for k, e in enumerate(bugs):
        t = time.perf_counter()
        mech, data = e.make()
        claimed = mech.claim.epsilon if hasattr(mech.claim, "epsilon") else math.nan
        true = e.true_epsilon if e.true_epsilon is not None else math.nan
        easy = math.isinf(true) or true >= 1.9 * claimed
        seeds = np.random.SeedSequence([args.base_seed, k]).spawn(args.seeds)
        seq = float(np.median(_seq_draws(mech, data, seeds, args.max_n)))
        fixed = _fixed_needed(mech, data, seeds, args.max_n)
        default = e.audit_samples or FIXED_DEFAULT_N
        if math.isinf(fixed) and math.isinf(seq):
            ratio, verdict = "-", "neither flags within the cap"
        elif math.isinf(seq):
            ratio, verdict = "0", "MISS (sequential does not flag)"
        elif math.isinf(fixed):
            ratio, verdict = ">1", "ok (fixed does not flag)"
        else:
            r = fixed / seq
            ratio = f"{r:.2f}"
            verdict = ("ok" if r >= 5 else "MISS (< 5x)") if easy else \
                ("ok" if seq <= 1.2 * fixed else "MISS (> 1.2x)")
        dratio = "-" if math.isinf(seq) else f"{default / seq:.1f}"
        print(f"{e.id:<36} {true:>8.3g} {'easy' if easy else 'hard':>5} {fixed:>8.0f} "
              f"{seq:>8.0f} {ratio:>10} {default:>9} {dratio:>8}  {verdict}   "
              f"[{time.perf_counter() - t:.0f} s]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
