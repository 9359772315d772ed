"""R.3 benchmark: GP noise on a grid, Kronecker sampler (R Alg. 4) versus dense samplers.

Run with BLAS pinned to one thread (by ``_common``)::

    python benchmarks/bench_grid.py

EQ kernel with lengthscale 0.2 at 32 points per unit (R App. F). A product of 1-D EQ
factors is the 2-D isotropic EQ kernel, so the external baselines build the full grid
covariance independently with scikit-learn's ``RBF`` and sample it with NumPy:

1. Headline, 64 × 64 grid (4096 points), factorise + one draw: the kit's Kronecker sampler
   vs NumPy ``Generator.multivariate_normal(method="cholesky")`` on the dense covariance
   (SciPy's ``multivariate_normal.rvs`` eigendecomposes it instead and took 16 s here,
   so the Cholesky path is the strongest dense baseline); before timing, the kit's
   implied covariance is checked against the scikit-learn matrix.
   Internal, labelled: the kit's ``NaiveGridSampler`` (full Cholesky) at 32 × 32,
   factorise + sample and sample only.
2. 256 × 256 grid (65 536 points), factorise + one draw (target < 0.1 s). No dense
   baseline exists at this size: its covariance alone would take 34 GB.
"""

from __future__ import annotations

import sys

import numpy as np
from _common import best_of, headline, versus  # pins BLAS to one thread
from sklearn.gaussian_process.kernels import RBF

from dpgp_audit.gp.grid import Grid, KroneckerGridSampler, NaiveGridSampler
from dpgp_audit.gp.kernels import EQ

BENCH = "bench_grid.py"
JITTER = 1e-9


def _ms(t: float) -> str:
    return f"{t * 1e3:.1f} ms"


def main() -> int:
    rng = np.random.default_rng(0)
    kernel = EQ(0.2)

    print("1. 64 x 64 grid (4096 points), factorise + one draw")
    g64 = Grid((-1.0, -1.0), (1 / 32, 1 / 32), (64, 64))
    K = RBF(0.2)(g64.points())  # external construction of the same covariance
    K_kit = KroneckerGridSampler(g64, kernel, jitter=JITTER).covariance()
    err = float(np.max(np.abs(K_kit - K)))
    print(f"   kit covariance vs scikit-learn RBF: max |diff| {err:.1e} (jitter {JITTER:g})")
    if err > 1e-6:
        print("   MISMATCH: the Kronecker covariance is not the grid's EQ covariance")
        return 1
    del K_kit
    t_kit = best_of(lambda: KroneckerGridSampler(g64, kernel, jitter=JITTER).sample(1, rng))
    Kj = K + JITTER * np.eye(K.shape[0])
    zero = np.zeros(K.shape[0])
    t_np = best_of(lambda: rng.multivariate_normal(zero, Kj, method="cholesky"), 2)
    print(f"   kit Kronecker {_ms(t_kit)} | NumPy multivariate_normal (Cholesky) {_ms(t_np)}")

    g32 = Grid((-0.5, -0.5), (1 / 32, 1 / 32), (32, 32))
    t_kron = best_of(lambda: KroneckerGridSampler(g32, kernel, jitter=JITTER).sample(1, rng))
    t_naive = best_of(lambda: NaiveGridSampler(g32, kernel, jitter=JITTER).sample(1, rng), 3)
    k32 = KroneckerGridSampler(g32, kernel, jitter=JITTER)
    n32 = NaiveGridSampler(g32, kernel, jitter=JITTER)
    t_kron_s = best_of(lambda: k32.sample(1, rng))
    t_naive_s = best_of(lambda: n32.sample(1, rng))
    print(f"   internal, 32 x 32: kit naive sampler factorise+sample {_ms(t_naive)} vs "
          f"Kronecker {_ms(t_kron)} ({versus(t_kron, t_naive)}); sample only "
          f"{versus(t_kron_s, t_naive_s)}")
    headline(BENCH, "grid noise 64 x 64, factorise + draw", _ms(t_kit),
             f"NumPy dense Cholesky: {_ms(t_np)} ({versus(t_kit, t_np)})",
             f"naive sampler 32 x 32: {_ms(t_naive)} vs {_ms(t_kron)}")

    print("2. 256 x 256 grid (65 536 points)")
    g256 = Grid((-4.0, -4.0), (1 / 32, 1 / 32), (256, 256))
    t256 = best_of(lambda: KroneckerGridSampler(g256, kernel, jitter=JITTER).sample(1, rng))
    s256 = KroneckerGridSampler(g256, kernel, jitter=JITTER)
    t256_sample = best_of(lambda: s256.sample(1, rng))
    ok = t256 < 0.1
    print(f"   factorise+sample {_ms(t256)} [target < 100 ms: {'OK' if ok else 'MISSED'}], "
          f"sample only {_ms(t256_sample)}")
    headline(BENCH, "grid noise 256 x 256, factorise + draw", _ms(t256),
             "none: dense covariance would need 34 GB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
