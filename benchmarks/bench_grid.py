"""R.3 benchmark: GP noise on a grid, Kronecker sampler (R Alg. 4) versus naive full Cholesky.

Run with BLAS pinned to one thread (by ``_common``)::

    python benchmarks/bench_grid.py

Reports (i) one 256 × 256 Kronecker sample including the per-axis factorisation
(target < 0.1 s) and (ii) the speed-up over the naive sampler at 32 × 32, both
factorise-and-sample and sample-only.
"""

from __future__ import annotations

import numpy as np
from _common import best_of  # pins BLAS to one thread

from dpgp_audit.gp.grid import Grid, KroneckerGridSampler, NaiveGridSampler
from dpgp_audit.gp.kernels import EQ


def main() -> dict:
    rng = np.random.default_rng(0)
    kernel = EQ(0.2)  # R App. F: lambda = 0.2, 32 points per unit
    # (i) 256 x 256 grid (8 units at 32 points per unit)
    g256 = Grid((-4.0, -4.0), (1 / 32, 1 / 32), (256, 256))
    t256 = best_of(lambda: KroneckerGridSampler(g256, kernel, jitter=1e-9).sample(1, rng))
    s256 = KroneckerGridSampler(g256, kernel, jitter=1e-9)
    t256_sample = best_of(lambda: s256.sample(1, rng))
    # (ii) 32 x 32 grid: both samplers
    g32 = Grid((-0.5, -0.5), (1 / 32, 1 / 32), (32, 32))
    t_kron = best_of(lambda: KroneckerGridSampler(g32, kernel, jitter=1e-9).sample(1, rng))
    t_naive = best_of(lambda: NaiveGridSampler(g32, kernel, jitter=1e-9).sample(1, rng), 3)
    k32 = KroneckerGridSampler(g32, kernel, jitter=1e-9)
    n32 = NaiveGridSampler(g32, kernel, jitter=1e-9)
    t_kron_s = best_of(lambda: k32.sample(1, rng))
    t_naive_s = best_of(lambda: n32.sample(1, rng))
    out = {
        "256x256 factorise+sample [s]": t256,
        "256x256 sample only [s]": t256_sample,
        "32x32 kronecker factorise+sample [s]": t_kron,
        "32x32 naive factorise+sample [s]": t_naive,
        "32x32 speed-up factorise+sample": t_naive / t_kron,
        "32x32 speed-up sample only": t_naive_s / t_kron_s,
    }
    for k, v in out.items():
        print(f"{k:<40} {v:.4g}")
    print("256x256 under 0.1 s:", "yes" if t256 < 0.1 else "NO")
    return out


if __name__ == "__main__":
    main()
