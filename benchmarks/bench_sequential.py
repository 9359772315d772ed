"""Samples to flag each planted bug: sequential (A.8) against fixed n (A.3), side by side.

For every planted bug of the catalogue, the black-box auditor of the default path
(``audit_mechanism(..., auditors=("blackbox",))``: the same pair generation and
ranking, the two top pairs confirmed) is run over ``--seeds`` seeds:

* **sequential**: draws per side and pair when it stopped with a violation (cap
  ``--max-n``; the wealth is checked after every eighth of a round, so this is within
  about 12 % of the first draw at which the evidence sufficed); the median over seeds
  (a seed that never flags counts as ∞);
* **fixed n (oracle)**: the smallest n on a grid of ratio 2^(1/4) (a doubling scan from
  16 up to ``--max-n``, then the last doubling refined in quarter steps) at which at
  least half of the seeds flag — the n a user would have had to guess in advance,
  knowing the bug;
* **fixed n (default)**: what ``make audit --mode fixed`` spends (the entry's
  ``audit_samples`` or 20 000), flagged or not.

A bug is *easy* when the oracle fixed n is at most a fifth of the fixed default (a
fixed-n audit then spends at least 5× what the bug needs): target ≥ 5× fewer draws
than that default. Every other bug is *hard*: target at most 1.2× the draws of the
*oracle* fixed n (stronger than a comparison with the default, which may not flag at
all). The table is printed; nothing is asserted.

Usage: ``python benchmarks/bench_sequential.py [--seeds 9] [--max-n 512000]
[--sequential-only]`` (the last skips the fixed-n scans, which the sequential mode's
changes do not touch, and prints the sequential column with how many seeds flagged).
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
                            n=max_n, mode="sequential", time_guard_s=None)  # draws are the budget
        bb = r.result("blackbox")
        out.append(float(bb.details["n_per_side"]) if r.violation else math.inf)
    return out


def _fixed_needed(mech: object, data: object, seeds: list, max_n: int) -> float:
    def flags(n: int) -> bool:
        hits = sum(audit_mechanism(mech, data, np.random.default_rng(s), auditors=("blackbox",),
                                   n=n, mode="fixed").violation for s in seeds)
        return 2 * hits >= len(seeds)

    n = 16
    while n <= max_n and not flags(n):
        n *= 2
    if n > max_n:
        return math.inf
    if n == 16:
        return 16.0
    for quarter in (1, 2, 3):  # refine the last doubling in steps of 2**(1/4) (about 19 %)
        m = int(round(n / 2 * 2 ** (quarter / 4)))
        if flags(m):
            return float(m)
    return float(n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=9)
    ap.add_argument("--max-n", type=int, default=512_000)
    ap.add_argument("--base-seed", type=int, default=15)
    ap.add_argument("--only", nargs="*", help="planted IDs (default: all)")
    ap.add_argument("--sequential-only", action="store_true",
                    help="skip the fixed-n scans; print draws to flag and seeds flagged")
    args = ap.parse_args()
    planted = [e for e in entries(include_planted=True) if e.planted]
    index = {e.id: k for k, e in enumerate(planted)}  # seeds follow the full list (--only too)
    bugs = [e for e in planted if not args.only or e.id in args.only]
    if args.sequential_only:
        print(f"{'planted bug':<36} {'true eps':>8} {'seq median':>10} {'flagged':>8}   "
              f"({args.seeds} seeds, cap {args.max_n})")
    else:
        print(f"{'planted bug':<36} {'true eps':>8} {'oracle n':>8} {'seq':>8} "
              f"{'seq/oracle':>10} {'default n':>9} {'def/seq':>8} {'class':>5}  target   "
              f"({args.seeds} seeds, cap {args.max_n})")
    for e in bugs:
        t = time.perf_counter()
        mech, data = e.make()
        true = e.true_epsilon if e.true_epsilon is not None else math.nan
        seeds = np.random.SeedSequence([args.base_seed, index[e.id]]).spawn(args.seeds)
        draws = _seq_draws(mech, data, seeds, args.max_n)
        seq = float(np.median(draws))
        if args.sequential_only:
            flagged = sum(math.isfinite(d) for d in draws)
            print(f"{e.id:<36} {true:>8.3g} {seq:>10.0f} {flagged:>5}/{len(draws)}   "
                  f"[{time.perf_counter() - t:.0f} s]", flush=True)
            continue
        fixed = _fixed_needed(mech, data, seeds, args.max_n)
        default = e.audit_samples or FIXED_DEFAULT_N
        easy = 5 * fixed <= default  # the fixed default spends >= 5x what the bug needs
        if math.isinf(fixed) and math.isinf(seq):
            cls, verdict = "-", "neither flags within the cap"
        elif math.isinf(seq):
            cls, verdict = "hard", "MISS (sequential does not flag)"
        elif math.isinf(fixed):
            cls, verdict = "hard", "ok (only sequential flags within the cap)"
        elif easy:
            cls = "easy"
            verdict = "ok" if default >= 5 * seq else "MISS (< 5x fewer than default)"
        else:
            cls = "hard"
            verdict = "ok" if seq <= 1.2 * fixed else "MISS (> 1.2x oracle)"
        ratio = "-" if math.isinf(seq) or math.isinf(fixed) else f"{seq / fixed:.2f}"
        dratio = "-" if math.isinf(seq) else f"{default / seq:.1f}"
        print(f"{e.id:<36} {true:>8.3g} {fixed:>8.0f} {seq:>8.0f} {ratio:>10} {default:>9} "
              f"{dratio:>8} {cls:>5}  {verdict}   [{time.perf_counter() - t:.0f} s]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
