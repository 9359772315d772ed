"""DP-SVGP (paper H) benchmark: inference at scale, H §6.2 calibration, H §6.3 hyperparameters.

Run with BLAS pinned to one thread (set here before numpy loads)::

    python benchmarks/bench_honkela.py [--quick]

1. H Alg. 1 inference, N = 10⁶ rows, |Z| = 50 (target < 3 s): chunked statistics +
   release + noise-aware q(u) + prediction at 1000 points; side by side with the
   unchunked product (|Z| × N matrix) and with S_{2,2} of H eq. (14) computed by
   the literal loop over the unit matrices E_ij versus the collapsed O(|Z|³) form.
2. H §6.2 calibration experiment, 40 repeats × 48 scenarios (target < 10 s; the
   paper reports < 30 s on a laptop).
3. H §6.3 hyperparameter learning, 100 repeats × 4 values of ε_tot, γ = 0.01
   (target < 2 min; the paper reports about 10 min).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from dpgp_audit.dataset import Dataset  # noqa: E402
from dpgp_audit.experiments.honkela import (  # noqa: E402
    calibration_experiment,
    hyperparameter_recovery,
)
from dpgp_audit.gp.kernels import EQ  # noqa: E402
from dpgp_audit.methods.honkela.dpsvgp import DPSVGPStats  # noqa: E402
from dpgp_audit.methods.honkela.posterior import pd_failure_rate, s22_paper  # noqa: E402


def _s22_loop(Kzz, Sig, a, sb, s2):
    """Baseline: H eq. (14) literally, |Z|² products with unit matrices."""
    d = Kzz.shape[0]
    out = np.zeros((d, d))
    aa = np.outer(a, a)
    for i in range(d):
        for j in range(i, d):
            E1 = np.zeros((d, d))
            E1[i, j] = 1.0
            E2 = E1.T
            w = 1.0 if i == j else 0.5
            out += w * sb**2 / s2**4 * Kzz @ Sig @ E1 @ Sig @ aa @ Sig @ E2 @ Sig @ Kzz
            if i != j:
                out += w * sb**2 / s2**4 * Kzz @ Sig @ E2 @ Sig @ aa @ Sig @ E1 @ Sig @ Kzz
    return out


def bench_inference(n: int = 1_000_000, m: int = 50) -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(-4, 4, n)
    data = Dataset(x[:, None], np.clip(np.sinc(x) + 0.1 * rng.standard_normal(n), -1.5, 1.5))
    mech = DPSVGPStats(Z=np.linspace(-4, 4, m)[:, None], kernel=EQ(lengthscale=0.5),
                       y_bound=1.5, epsilon=1.0, delta=1e-5)
    V = np.linspace(-4, 4, 1000)
    t0, c0 = time.perf_counter(), time.process_time()
    q = mech.fit(data, 0.01, rng, on_not_pd="inflate")
    mean, var = mech.predict(q, V)
    t_ours, c_ours = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    K = mech.kernel(mech.Z, data.X)        # |Z| x N in one piece
    _ = K @ data.y, K @ K.T
    t_full, c_full = time.perf_counter() - t0, time.process_time() - c0
    del K
    print(f"1. inference N={n:.0e}, |Z|={m}: ours (chunked, end to end) wall {t_ours:6.2f} s,"
          f" CPU {c_ours:6.2f} s   [target < 3 s]   unchunked statistics only: wall "
          f"{t_full:6.2f} s, CPU {c_full:6.2f} s")
    Kzz = np.asarray(mech.Kzz)
    Sig = np.linalg.inv(Kzz + np.eye(m))
    a = rng.standard_normal(m)
    t0 = time.perf_counter()
    fast = s22_paper(Kzz @ Sig, Sig @ a, 0.3, 0.01)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = _s22_loop(Kzz, Sig, a, 0.3, 0.01)
    t_slow = time.perf_counter() - t0
    err = float(np.abs(fast - slow).max() / np.abs(slow).max())
    print(f"   S_2,2 (eq. 14), |Z|={m}: collapsed {t_fast * 1e3:7.2f} ms   loop over E_ij "
          f"{t_slow * 1e3:9.1f} ms   x{t_slow / t_fast:7.0f}   rel. diff {err:.1e}")


def bench_pd_failure(trials: int = 200_000) -> None:
    rng = np.random.default_rng(2)
    rates = {d: pd_failure_rate(d, trials, rng) for d in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15)}
    print("   worst-case P(K_ZZ + (B+E_b)/σ² + λI not PD), ρ = 0.01 (H eq. 10): "
          + ", ".join(f"|Z|={d}: {r:.4f}" for d, r in rates.items()))


def bench_calibration(repeats: int = 40) -> None:
    rng = np.random.default_rng(3)
    t0, c0 = time.perf_counter(), time.process_time()
    res = calibration_experiment(rng, n_repeats=repeats)
    dt, ct = time.perf_counter() - t0, time.process_time() - c0
    scen = len(res.sigmas) * len(res.epsilons) * len(res.alphas)
    mean, _ = res.mean_and_se()
    print(f"2. calibration: {repeats} repeats x {scen} scenarios: wall {dt:6.2f} s, "
          f"CPU {ct:6.2f} s   [target < 10 s]   (lambda inflations: {res.inflations})")
    for si, s in enumerate(res.sigmas):
        row = "  ".join(f"eps={e:g}: DP {mean[0, si, ei, 2]:.2f} / naive {mean[1, si, ei, 2]:.2f}"
                        for ei, e in enumerate(res.epsilons))
        print(f"   coverage at alpha=0.9, sigma={s:g}: {row}")


def bench_hyper(repeats: int = 100) -> None:
    rng = np.random.default_rng(4)
    eps = (1.0, 3.0, 10.0, 30.0)
    t0, c0 = time.perf_counter(), time.process_time()
    counts = hyperparameter_recovery(eps, repeats, rng, gamma=0.01)
    dt, ct = time.perf_counter() - t0, time.process_time() - c0
    print(f"3. hyperparameter learning: {repeats} repeats x {len(eps)} eps, gamma=0.01: "
          f"wall {dt:6.1f} s, CPU {ct:6.1f} s   [target < 120 s]")
    for e, c in zip(eps, counts, strict=True):
        print(f"   eps_tot={e:g}: P(true sigma=0.1, l=1) = {c[1, 1] / max(c.sum(), 1):.2f}, "
              f"P(sigma=0.1) = {c[1].sum() / max(c.sum(), 1):.2f}, accepted runs {c.sum()}")


def main() -> None:
    quick = "--quick" in sys.argv
    bench_inference(100_000 if quick else 1_000_000)
    bench_pd_failure(20_000 if quick else 200_000)
    bench_calibration(4 if quick else 40)
    bench_hyper(5 if quick else 100)


if __name__ == "__main__":
    main()
