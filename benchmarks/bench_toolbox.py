"""DP toolbox benchmark: the sampling primitives versus straightforward baselines.

Run with BLAS pinned to one thread (by ``_common``)::

    python benchmarks/bench_toolbox.py

Side by side:

1. Exponential mechanism, k = 1000 candidates, n = 10⁶ draws: inverse-CDF
   sampling (ours) vs Gumbel-max (n × k Gumbel variates) vs ``rng.choice`` with
   probabilities; all three on the same stable probabilities.
2. Functional-mechanism noise at m = 400 points, 20 calls of 1000 paths: a cached
   :class:`GPPathSampler` (one eigendecomposition) vs refactorising every call.
3. Multivariate Gaussian mechanism, k = 200, 10⁵ releases: one batched draw from the
   cached factor vs ``rng.multivariate_normal`` (which factorises M per call).
"""

from __future__ import annotations

import numpy as np
from _common import best_of  # pins BLAS to one thread

from dpgp_audit.gp.kernels import EQ
from dpgp_audit.privacy.functional import GPPathSampler, gram_factor
from dpgp_audit.privacy.mechanisms import (
    exponential_log_probabilities,
    exponential_mechanism,
    exponential_probabilities,
    multivariate_gaussian_noise,
)
from dpgp_audit.privacy.multivariate import covariance_factor


def _row(label: str, ours: float, base: float, base_label: str) -> None:
    print(f"  {label:<44} ours {ours * 1e3:9.1f} ms   {base_label:<22} {base * 1e3:9.1f} ms"
          f"   x{base / ours:6.1f}")


def main() -> None:
    rng = np.random.default_rng(20260101)

    print("1. exponential mechanism (k = 1000, n = 1e6)")
    u = 1e6 + 5.0 * rng.normal(size=1000)  # large offset, spread-out probabilities
    n = 1_000_000
    lp = exponential_log_probabilities(u, 1.0, 1.0)
    ours = best_of(lambda: exponential_mechanism(u, 1.0, 1.0, n, rng), 3)
    gumbel_n = 10_000  # n × k Gumbel variates: 100x fewer draws to bound memory and time

    def gumbel():
        return np.argmax(lp + rng.gumbel(size=(gumbel_n, lp.size)), axis=1)

    base = best_of(gumbel, 3) * (n / gumbel_n)
    _row("inverse CDF", ours, base, "Gumbel-max (scaled)")
    p = exponential_probabilities(u, 1.0, 1.0)
    base2 = best_of(lambda: rng.choice(p.size, size=n, p=p), 3)
    _row("inverse CDF", ours, base2, "rng.choice")

    print("2. GP path noise (m = 400, 20 calls x 1000 paths)")
    k = EQ(lengthscale=0.7)
    pts = np.linspace(0, 10, 400)[:, None]

    def cached():
        s = GPPathSampler(k, pts)
        for _ in range(20):
            s.sample(1000, rng, 2.0)

    def uncached():
        for _ in range(20):
            F = gram_factor(k(pts, pts))
            2.0 * (rng.standard_normal((1000, F.shape[1])) @ F.T)

    _row("cached factor", best_of(cached, 3), best_of(uncached, 3), "refactor per call")

    print("3. multivariate Gaussian noise (k = 200, 1e5 draws)")
    A = rng.normal(size=(200, 200))
    M = A @ A.T / 200 + np.eye(200)
    F = covariance_factor(M)
    ours = best_of(lambda: multivariate_gaussian_noise(F, 100_000, rng), 3)
    base = best_of(lambda: rng.multivariate_normal(np.zeros(200), M, size=100_000), 3)
    _row("cached factor, batched", ours, base, "rng.multivariate_normal")


if __name__ == "__main__":
    main()
