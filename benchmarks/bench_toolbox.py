"""DP toolbox benchmark: the sampling primitives and accounting versus external baselines.

Run with BLAS pinned to one thread (by ``_common``)::

    python benchmarks/bench_toolbox.py

Side by side (headline = the external column; internal or hand-written alternatives are
labelled as such):

1. Exponential mechanism (catalogue P.3), k = 1000 candidates, n = 10⁶ draws:
   inverse-CDF sampling (ours) vs NumPy ``Generator.choice`` with the same stable
   probabilities (external). Second column: Gumbel-max (n × k Gumbel variates), written
   here, measured on 10⁴ draws and scaled.
2. Functional-mechanism noise (catalogue P.5) at m = 400 points, 20 calls of 1000 paths:
   a cached :class:`GPPathSampler` (one eigendecomposition) vs NumPy
   ``Generator.multivariate_normal`` per call (external; it factorises the Gram matrix by
   SVD every call). Internal column: the kit's ``gram_factor`` refactorised per call.
3. Multivariate Gaussian mechanism (catalogue P.4), k = 200, 10⁵ releases: one batched
   draw from the cached factor vs NumPy ``Generator.multivariate_normal`` (external).
4. Accounting against the external reference, dp-accounting: ε at δ = 1e-5 of T = 1000
   compositions of the Gaussian mechanism with noise multiplier 10. The kit composes
   exactly in GDP (μ = sqrt(T)/10, then ε(δ; μ)); dp-accounting's PLD accountant is the
   tight external baseline (its ε is an upper bound up to discretisation), its RDP
   accountant the common looser one. Time and ε for each.
"""

from __future__ import annotations

import numpy as np
from _common import best_of, headline, versus  # pins BLAS to one thread

from dpgp_audit.gp.kernels import EQ
from dpgp_audit.privacy.functional import GPPathSampler, gram_factor
from dpgp_audit.privacy.mechanisms import (
    exponential_log_probabilities,
    exponential_mechanism,
    exponential_probabilities,
    multivariate_gaussian_noise,
)
from dpgp_audit.privacy.multivariate import covariance_factor

BENCH = "bench_toolbox.py"


def _row(label: str, ours: float, base: float, base_label: str) -> None:
    print(f"  {label:<44} ours {_ms(ours):>10}   {base_label:<28} {_ms(base):>10}"
          f"   ({versus(ours, base)})")


def _ms(t: float) -> str:
    return f"{t * 1e6:.0f} us" if t < 1e-3 else f"{t * 1e3:.1f} ms"


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
    p = exponential_probabilities(u, 1.0, 1.0)
    base2 = best_of(lambda: rng.choice(p.size, size=n, p=p), 3)
    _row("inverse CDF", ours, base2, "external: NumPy choice")
    _row("inverse CDF", ours, base, "Gumbel-max, written here")
    headline(BENCH, "exponential mechanism, k = 1000, 1e6 draws", _ms(ours),
             f"NumPy Generator.choice: {_ms(base2)} ({versus(ours, base2)})",
             f"Gumbel-max (scaled from 1e4): {_ms(base)}")

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

    def numpy_mvn():
        K = k(pts, pts)
        zero = np.zeros(pts.shape[0])
        for _ in range(20):
            2.0 * rng.multivariate_normal(zero, K, size=1000)

    t_c, t_u, t_np = best_of(cached, 3), best_of(uncached, 3), best_of(numpy_mvn, 3)
    _row("cached factor", t_c, t_np, "external: NumPy mvn per call")
    _row("cached factor", t_c, t_u, "internal: refactor per call")
    headline(BENCH, "GP path noise, m = 400, 20 x 1000 paths", _ms(t_c),
             f"NumPy multivariate_normal per call: {_ms(t_np)} ({versus(t_c, t_np)})",
             f"gram_factor per call: {_ms(t_u)}")

    print("3. multivariate Gaussian noise (k = 200, 1e5 draws)")
    A = rng.normal(size=(200, 200))
    M = A @ A.T / 200 + np.eye(200)
    F = covariance_factor(M)
    ours = best_of(lambda: multivariate_gaussian_noise(F, 100_000, rng), 3)
    base = best_of(lambda: rng.multivariate_normal(np.zeros(200), M, size=100_000), 3)
    _row("cached factor, batched", ours, base, "external: NumPy mvn")
    headline(BENCH, "multivariate Gaussian noise, k = 200, 1e5 draws", _ms(ours),
             f"NumPy multivariate_normal: {_ms(base)} ({versus(ours, base)})")

    print("4. accounting: eps(delta=1e-5), T = 1000 Gaussian steps, noise multiplier 10")
    try:
        import dp_accounting as dpa
    except ImportError:
        print("  dp-accounting not installed (pip install -r benchmarks/requirements.txt)")
        return
    from dpgp_audit.privacy.gdp import gdp_compose, gdp_epsilon

    z, steps, delta = 10.0, 1000, 1e-5

    def kit() -> float:
        return gdp_epsilon(delta, gdp_compose([1.0 / z] * steps))

    def accountant(kind):
        def run() -> float:
            acc = kind()
            acc.compose(dpa.GaussianDpEvent(z), steps)
            return acc.get_epsilon(delta)
        return run

    pld, rdp = accountant(dpa.pld.PLDAccountant), accountant(dpa.rdp.RdpAccountant)
    e_kit, e_pld, e_rdp = kit(), pld(), rdp()
    t_kit = best_of(kit, 3)
    t_pld, t_rdp = best_of(pld, 3), best_of(rdp, 3)
    _row(f"GDP exact (eps {e_kit:.6f})", t_kit, t_pld, f"dp-acc. PLD ({e_pld:.6f})")
    _row(f"GDP exact (eps {e_kit:.6f})", t_kit, t_rdp, f"dp-acc. RDP ({e_rdp:.4f})")
    headline(BENCH, "accounting, 1000 Gaussian steps, z = 10", f"{_ms(t_kit)}, eps {e_kit:.4f}",
             f"dp-accounting PLD: {_ms(t_pld)}, eps {e_pld:.4f} ({versus(t_kit, t_pld)}); "
             f"RDP {_ms(t_rdp)}, eps {e_rdp:.4f}")


if __name__ == "__main__":
    main()
