"""Variants of the fixed-mode order-statistic bound judged for issue 20 §5 (catalogue A.3).

The kit's rule (``orderstat.epsilon_from_order_statistics`` on the identity score:
ranks from the claim, 0 and r* with 10 % / 90 % of α, four single tail × order tests,
Bonferroni) against variants fixed a priori, each valid on its own, on the same draws:

* ``upper pair only`` / ``upper 3/4``: all α, or 3/4 of it, to the two upper-tail tests
  (both orders; a location shift either way shows in one of them);
* ``claim rank only``: CLAIM_RANK_WEIGHT 1 (no rank-0 test);
* ``paired tails`` / ``paired 1/2``: the two paired-tails tests
  (``stats.epsilon_lower_bound_paired_tails``: for a shift up, the upper tail of D′ over
  D and the lower tail of D over D′ pooled into one count; and the mirror for a shift
  down) with all α, or half of it beside the four single tests at the other half;
* ``direction known``: the two oriented single tests (what the LR score gets: not
  available to a score of unknown direction, shown as a reference);
* the hindsight oracle (``twosample.hindsight_epsilon``, not a confidence bound).

Pairs: the (1, 1e-5) Gaussian shifted by 1 (σ = 3.7306) and a **lower-tail-only leak**
(the same Gaussian against draws whose negative half is stretched by 1.25: the upper tails
are identical). Reported: median [10 %, 90 %] over seeds and the median per-seed ratio
to the hindsight oracle. ``PYTHONPATH=. python benchmarks/bench_orderstat_variants.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from dpgp_audit.audit.blackbox.orderstat import (  # noqa: E402
    claim_ranks,
    epsilon_from_order_statistics,
)
from dpgp_audit.audit.blackbox.twosample import hindsight_epsilon  # noqa: E402
from dpgp_audit.audit.stats import (  # noqa: E402
    epsilon_lower_bound_paired_tails,
    epsilon_lower_bound_rank_count,
)
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma  # noqa: E402

ALPHA, DELTA = 0.05, 1e-5
SIGMA = analytic_gaussian_sigma(1.0, 1e-5, 1.0)
PAIRED_GRID = 128  # coarser than the default: an upper Riemann sum, so never a larger bound


def _singles(s0: np.ndarray, s1: np.ndarray, r: int) -> dict[tuple[str, str], int]:
    """Counts of the four single tests at rank r (as in ``epsilon_from_order_statistics``)."""
    n = s0.size
    out = {}
    for order, ref, other in (("D'>D", s0, s1), ("D>D'", s1, s0)):
        out[(order, "upper")] = int(n - np.searchsorted(other, ref[n - 1 - r], side="right"))
        out[(order, "lower")] = int(np.searchsorted(other, ref[r], side="left"))
    return out


def _paired(s0: np.ndarray, s1: np.ndarray, r: int) -> list[int]:
    """Counts of the two paired-tails tests at rank r (shift up, shift down); sorted input."""
    n = s0.size
    out = []
    for p, q in ((s0, s1), (s1, s0)):
        t_u, t_l = p[n - 1 - r], q[r]
        out.append(int(n - np.searchsorted(q, max(t_u, t_l), side="right")
                       + np.searchsorted(p, min(t_u, t_l), side="left")))
    return out


def _variants(s0: np.ndarray, s1: np.ndarray) -> dict[str, float]:
    s0, s1 = np.sort(s0), np.sort(s1)
    n = s0.size
    ranks, weights = claim_ranks(1.0, DELTA, n, ALPHA)
    single = {int(r): _singles(s0, s1, int(r)) for r in ranks}
    paired = {int(r): _paired(s0, s1, int(r)) for r in ranks}

    def single_bound(share_upper: float, share_lower: float, w: np.ndarray) -> float:
        best = 0.0
        for r, wr in zip(ranks, w, strict=True):
            for (_, tail), hits in single[int(r)].items():
                share = share_upper if tail == "upper" else share_lower
                if share > 0 and wr > 0:
                    best = max(best, float(epsilon_lower_bound_rank_count(
                        int(r), n, hits, n, DELTA, ALPHA * wr * share / 2)))
        return best

    def paired_bound(share: float) -> float:
        return max(epsilon_lower_bound_paired_tails(int(r), n, n, c, DELTA,
                                                    ALPHA * wr * share / 2, grid=PAIRED_GRID,
                                                    tol=1e-4)
                   for r, wr in zip(ranks, weights, strict=True) for c in paired[int(r)])

    return {
        "kit (4 single tests)": epsilon_from_order_statistics(
            s0, s1, delta=DELTA, alpha=ALPHA, claim_epsilon=1.0)["epsilon_lb"],
        "upper pair only": single_bound(1.0, 0.0, weights),
        "upper 3/4, lower 1/4": single_bound(0.75, 0.25, weights),
        "claim rank only": single_bound(0.5, 0.5, np.where(ranks > 0, 1.0, 0.0)),
        "paired tails": paired_bound(1.0),
        "paired 1/2 + singles 1/2": max(paired_bound(0.5), single_bound(0.25, 0.25, weights)),
        "direction known (reference)": epsilon_from_order_statistics(
            s0, s1, delta=DELTA, alpha=ALPHA, claim_epsilon=1.0, oriented=True)["epsilon_lb"],
        "oracle threshold (hindsight)": hindsight_epsilon(s0, s1, DELTA, ALPHA),
    }


def _draw(pair: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x0 = rng.normal(0.0, SIGMA, n)
    if pair == "gaussian":
        return x0, rng.normal(1.0, SIGMA, n)
    x1 = rng.normal(0.0, SIGMA, n)
    return x0, np.where(x1 > 0, x1, 1.25 * x1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", type=int, nargs="*", default=[10**3, 10**4])
    ap.add_argument("--seeds", type=int, nargs="*", default=[200, 60],
                    help="seeds per n (one value: the same for every n)")
    ap.add_argument("--pairs", nargs="*", default=["gaussian", "lower-tail leak"])
    ap.add_argument("--base-seed", type=int, default=2027)
    args = ap.parse_args()
    seeds = args.seeds * len(args.ns) if len(args.seeds) == 1 else args.seeds
    for pair in args.pairs:
        for n, k in zip(args.ns, seeds, strict=True):
            t = time.perf_counter()
            rows: dict[str, list[float]] = {}
            for ss in np.random.SeedSequence([args.base_seed, n, len(pair)]).spawn(k):
                for m, v in _variants(*_draw(pair, n, np.random.default_rng(ss))).items():
                    rows.setdefault(m, []).append(v)
            ref = np.asarray(rows["oracle threshold (hindsight)"])
            print(f"\n## {pair}, n = {n}/side, {k} seeds: median [10 %, 90 %], "
                  f"median ratio to the hindsight oracle")
            for m, v in rows.items():
                v = np.asarray(v)
                ratio = np.median(v[ref > 0] / ref[ref > 0]) if np.any(ref > 0) else np.nan
                print(f"  {m:<30} {np.median(v):6.3f} [{np.quantile(v, 0.1):6.3f}, "
                      f"{np.quantile(v, 0.9):6.3f}]  {ratio:6.3f}")
            print(f"  ({time.perf_counter() - t:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
