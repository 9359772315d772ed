"""S21.2 sparse cloaking at scale: time and peak memory per n, and what the floor costs.

Setting (issue 13 §3): FITC with M = 100 inducing inputs (k-means on the public X), k = 200
test points, EQ kernel, 1-D inputs on [0, 10], one BLAS thread. Each n runs in its own
subprocess so that its peak resident memory (``ru_maxrss``) is its own; ``tracemalloc``
gives the peak of numpy's allocations inside the release construction.

The columns:

* ``place`` — k-means placement of Z (scikit-learn, public X only);
* ``release`` — FITC factors, the certified cloaking solve on them and the mechanism
  (range check, calibration): what S21.2 itself costs;
* ``gap`` — the certified duality gap of log|M| (nats), ``rounds`` — column-generation
  rounds (0: direct solve);
* internal, labelled baseline: the same mechanism on the dense k × n map (the pre-scale
  code path), only where it fits in memory (n ≤ 10⁴).

No external baseline exists: no installable package implements sparse (FITC) cloaking;
dp4gp 1.01's cloaking optimiser works on the dense k × n map and is compared with the
kit's solver in ``bench_cloaking.py``. Convergence is certified by the duality gap
instead of by a reference solve.

Targets are declared in |y| <= 10 (``Y_BOUND``; the default 10⁶ is refused at n = 10⁶ by
the float-safety check). Targets: n = 10⁵ in < 10 s and n = 10⁶ in < 2 min for the release,
memory linear in n.
``python benchmarks/bench_sparse_scale.py 1000000`` adds larger n (needs ~6 GB).

The floor table: S18.2 adds ``floor · λ_max`` to the solver's M on span{c_i} (default
floor = 1e-9). For each problem it shows Δ of the released M against the solver's Δ = 1,
and the largest change of the released standard deviations σ·sqrt(diag M) against the
solver's M calibrated without the floor; ``floor=0`` says whether the mechanism would even
accept no floor ("refused": M has no Cholesky factor on span{c_i}).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402
from _common import headline  # noqa: E402

try:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
except ImportError:  # pragma: no cover
    pass

# Declared target domain |y| <= Y_BOUND (standardised targets). The default bound (1e6)
# fails the float-safety check at n = 1e6: the noise sd (~7e-5) is too small next to the
# largest possible output (the error names the largest safe bound, ~2.8e5).
Y_BOUND = 10.0
M_INDUCING = 100
K_TEST = 200
TARGETS = {100_000: 10.0, 1_000_000: 120.0}


def one(n: int, dense: bool) -> dict:
    """Build the S21.2 release for n points; returns timings, memory and the certificate."""
    from dpgp_audit.gp.inducing import kmeans_inducing
    from dpgp_audit.gp.kernels import EQ
    from dpgp_audit.gp.sparse import SparseGP
    from dpgp_audit.methods.s18.cloaking import CloakingMechanism
    from dpgp_audit.methods.s21.mechanisms import sparse_cloaking

    rng = np.random.default_rng(20261125)
    X = rng.uniform(0.0, 10.0, (n, 1))
    Xs = np.linspace(0.0, 10.0, K_TEST)[:, None]
    t0 = time.perf_counter()
    Z = kmeans_inducing(X, M_INDUCING, rng, n_init=1)
    t_place = time.perf_counter() - t0
    tracemalloc.start()
    t0 = time.perf_counter()
    rel = sparse_cloaking(X, Xs, EQ(1.0), 0.1, n_inducing=M_INDUCING, rng=rng, d=1.0,
                          epsilon=1.0, delta=1e-5, method="analytic",
                          placement=lambda X_, m_, g_: Z, y_bound=Y_BOUND)
    t_release = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    sol = rel.mechanism.solution
    out = {"n": n, "place_s": t_place, "release_s": t_release, "peak_numpy_mb": peak / 2**20,
           "gap": sol.gap, "rank": sol.rank, "rounds": len(sol.history.get("rounds", [])),
           "delta": rel.mechanism.delta_m}
    if dense:
        C = SparseGP(EQ(1.0), 0.1, Z).fit(X, np.zeros(n)).mean_weights(Xs)
        t0 = time.perf_counter()
        CloakingMechanism(C, 1.0, 1.0, 1e-5, method="analytic")
        out["dense_s"] = time.perf_counter() - t0
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def floor_table() -> None:
    """What the default floor (1e-9 λ_max) costs: Δ and released std against no floor."""
    from dpgp_audit.gp.kernels import EQ
    from dpgp_audit.gp.regression import ExactGP
    from dpgp_audit.methods.s18.cloaking import CloakingMechanism
    from dpgp_audit.privacy.calibrate import calibrate_gaussian

    rng = np.random.default_rng(7)
    print("floor cost: Delta of the released M (solver's: 1) and the largest change of the")
    print("released std sigma*sqrt(diag M) against the solver's M without the floor")
    print(f"{'problem':<36} {'lam_min/lam_max':>15} {'Delta':>9} {'std change':>11} "
          f"{'floor=0':>8}")
    for ell, n, k in ((0.5, 30, 10), (1.5, 40, 20), (3.0, 60, 30), (6.0, 80, 40)):
        X = np.sort(rng.uniform(0, 10, n))
        Xs = np.linspace(0, 10, k)
        C = ExactGP(EQ(ell), 0.1).fit(X[:, None], np.zeros(n)).mean_weights(Xs[:, None])
        mech = CloakingMechanism(C, 1.0, 1.0, 1e-5, method="analytic")
        sol = mech.solution
        Q = sol.basis
        w = np.linalg.eigvalsh(Q.T @ sol.M @ Q)
        sigma0 = calibrate_gaussian(1.0, 1e-5, sol.delta, "analytic").sigma
        std_0 = sigma0 * np.sqrt(np.clip(np.diag(sol.M), 0, None))
        std_f = mech.sigma * np.sqrt(np.diag(mech.M))
        change = float(np.max(np.abs(std_f / std_0 - 1)))
        try:
            CloakingMechanism(C, 1.0, 1.0, 1e-5, method="analytic", floor=0.0, solution=sol)
            bare = "ok"
        except ValueError:
            bare = "refused"
        print(f"EQ(l={ell}), n={n}, k={k}, rank {Q.shape[1]}".ljust(36)
              + f" {w.min() / w.max():15.1e} {mech.delta_m:9.4f} {change:+11.2%} {bare:>8}")


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--one":
        print(json.dumps(one(int(argv[1]), argv[2] == "1")))
        return 0
    sizes = [1_000, 10_000, 30_000, 100_000] + [int(a) for a in argv]
    print(f"S21.2 sparse cloaking, M = {M_INDUCING}, k = {K_TEST}, 1 BLAS thread")
    print(f"{'n':>9} {'place s':>8} {'release s':>10} {'target':>8} {'peak np MB':>11} "
          f"{'maxrss MB':>10} {'gap':>9} {'rank':>5} {'rounds':>6} | internal: dense C s")
    ok = True
    rows: list[str] = []
    dense_rows: list[str] = []
    for n in sizes:
        res = subprocess.run([sys.executable, __file__, "--one", str(n),
                              "1" if n <= 10_000 else "0"],
                             capture_output=True, text=True, env=dict(os.environ))
        if res.returncode:
            print(f"{n:>9} failed: {res.stderr.strip().splitlines()[-1]}")
            ok = False
            continue
        r = json.loads(res.stdout.strip().splitlines()[-1])
        target = TARGETS.get(n)
        status = "" if target is None else ("OK" if r["release_s"] < target else "MISSED")
        ok &= status != "MISSED" and r["gap"] <= 1e-9
        dense = f"{r['dense_s']:.2f}" if "dense_s" in r else "-"
        print(f"{n:>9} {r['place_s']:8.2f} {r['release_s']:10.2f} "
              f"{'' if target is None else f'<{target:g}':>8} {r['peak_numpy_mb']:11.0f} "
              f"{r['maxrss_mb']:10.0f} {r['gap']:9.1e} {r['rank']:5d} {r['rounds']:6d} "
              f"| {dense} {status}", flush=True)
        rows.append(f"n = {n:.0e}: {r['release_s']:.2f} s, {r['maxrss_mb']:.0f} MB RSS, "
                    f"gap {r['gap']:.0e}")
        if "dense_s" in r:
            dense_rows.append(f"n = {n:.0e}: {r['dense_s']:.2f} s")
    headline("bench_sparse_scale.py", f"S21.2 sparse cloaking, M = {M_INDUCING}, k = {K_TEST}",
             "; ".join(rows), "none packaged (certified duality gap)",
             "dense k x n path: " + ("; ".join(dense_rows) or "-"))
    print()
    floor_table()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
