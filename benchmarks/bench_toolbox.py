"""DP toolbox benchmark: the sampling primitives versus straightforward baselines.

Run with BLAS pinned to one thread (set here before numpy loads)::

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

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402

from dpgp_audit.gp.kernels import EQ  # noqa: E402
from dpgp_audit.privacy.functional import GPPathSampler, gram_factor  # noqa: E402
from dpgp_audit.privacy.mechanisms import (  # noqa: E402
    exponential_log_probabilities,
    exponential_mechanism,
    exponential_probabilities,
    multivariate_gaussian_noise,
)
from dpgp_audit.privacy.multivariate import covariance_factor  # noqa: E402


def _best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _row(label: str, ours: float, base: float, base_label: str) -> None:
    print(f"  {label:<44} ours {ours * 1e3:9.1f} ms   {base_label:<22} {base * 1e3:9.1f} ms"
          f"   x{base / ours:6.1f}")


def main() -> None:
    rng = np.random.default_rng(20260101)

    print("1. exponential mechanism (k = 1000, n = 1e6)")
    u = 1e6 + 5.0 * rng.normal(size=1000)  # large offset, spread-out probabilities
    n = 1_000_000
    lp = exponential_log_probabilities(u, 1.0, 1.0)
    ours = _best(lambda: exponential_mechanism(u, 1.0, 1.0, n, rng))
    gumbel_n = 10_000  # n × k Gumbel variates: 100x fewer draws to bound memory and time

    def gumbel():
        return np.argmax(lp + rng.gumbel(size=(gumbel_n, lp.size)), axis=1)

    base = _best(gumbel) * (n / gumbel_n)
    _row("inverse CDF", ours, base, "Gumbel-max (scaled)")
    p = exponential_probabilities(u, 1.0, 1.0)
    base2 = _best(lambda: rng.choice(p.size, size=n, p=p))
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

    _row("cached factor", _best(cached), _best(uncached), "refactor per call")

    print("3. multivariate Gaussian noise (k = 200, 1e5 draws)")
    A = rng.normal(size=(200, 200))
    M = A @ A.T / 200 + np.eye(200)
    F = covariance_factor(M)
    ours = _best(lambda: multivariate_gaussian_noise(F, 100_000, rng))
    base = _best(lambda: rng.multivariate_normal(np.zeros(200), M, size=100_000))
    _row("cached factor, batched", ours, base, "rng.multivariate_normal")


if __name__ == "__main__":
    main()
