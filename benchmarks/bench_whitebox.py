"""A.2 speed: white-box audit of a 200-point GP-like release over 20 neighbour pairs (< 10 ms).

Run with BLAS pinned to one thread (by ``_common``)::

    python benchmarks/bench_whitebox.py

No package audits a Gaussian release exactly from its mean and covariance, so the
external baseline is the same computation done directly with SciPy, as a careful user
would write it: one ``scipy.linalg.pinvh`` of the (shared) covariance, the Mahalanobis
norm μ of every mean difference, and ε(δ) of the worst pair by ``scipy.optimize.brentq``
on the analytic Gaussian mechanism's exact δ(ε) (Balle & Wang 2018, Thm 8; catalogue
A.2). Its ε is printed beside the kit's, which must match the calibrated claim.
Internal, labelled: a pseudo-inverse per pair with the kit's ``gdp_epsilon``.
"""

from __future__ import annotations

import sys

import numpy as np
from _common import GPLikeRelease, best_of, headline, report, versus  # pins BLAS to 1 thread
from scipy.linalg import pinvh
from scipy.optimize import brentq
from scipy.stats import norm

from dpgp_audit.audit.whitebox import audit_whitebox
from dpgp_audit.privacy.gdp import gdp_epsilon


def naive(mech: GPLikeRelease, pairs) -> float:
    """Internal: per pair, pseudo-inverse of the covariance, Mahalanobis norm, ε(δ)."""
    worst = 0.0
    for d0, d1 in pairs:
        P = np.linalg.pinv(mech.cov(d0))
        diff = mech.mean(d1) - mech.mean(d0)
        mu = float(np.sqrt(diff @ P @ diff))
        worst = max(worst, gdp_epsilon(mech.delta, mu))
    return worst


def scipy_direct(mech: GPLikeRelease, pairs) -> float:
    """External: one pinvh, batched Mahalanobis norms, ε(δ) by root finding (Balle & Wang)."""
    P = pinvh(mech.cov(pairs[0][0]))
    D = np.stack([mech.mean(d1) - mech.mean(d0) for d0, d1 in pairs])
    mu = float(np.sqrt(np.max(np.einsum("ij,jk,ik->i", D, P, D))))

    def gap(eps: float) -> float:
        return norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2) \
            - mech.delta

    return float(brentq(gap, 0.0, 50.0 + 10 * mu * mu, xtol=1e-12))


def main() -> int:
    mech = GPLikeRelease(m=200)
    data = mech.data()
    pairs = [(data, data.with_target(i, data.y[i] + mech.d)) for i in range(data.n)]
    res = audit_whitebox(mech, pairs)
    assert abs(res.estimate - mech.epsilon) < 1e-6, res.summary()
    eps_ext = scipy_direct(mech, pairs)
    t = best_of(lambda: audit_whitebox(mech, pairs), repeats=20)
    te = best_of(lambda: scipy_direct(mech, pairs), repeats=20)
    tb = best_of(lambda: naive(mech, pairs), repeats=3)
    print(f"   worst-pair epsilon {res.estimate:.6f} (claim {mech.epsilon}), "
          f"mu {res.details['mu']:.4f}, rank {res.details['rank']}/200, {len(pairs)} pairs, "
          f"{res.details['factorisations']} eigendecomposition")
    print(f"   external SciPy direct: {te * 1e3:.3f} ms, epsilon {eps_ext:.6f} "
          f"(|diff| to the kit {abs(eps_ext - res.estimate):.1e})")
    ok = report("whitebox 200-pt GP release, 20 pairs", t, 0.010, tb,
                "(internal: pinv per pair)", unit="ms")
    headline("bench_whitebox.py", "white-box audit, 200-dim release, 20 pairs",
             f"{t * 1e3:.2f} ms, eps {res.estimate:.6f}",
             f"SciPy pinvh + brentq: {te * 1e3:.2f} ms ({versus(t, te)}), eps {eps_ext:.6f}",
             f"pinv per pair: {tb * 1e3:.1f} ms")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
