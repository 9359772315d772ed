"""Shared pieces of the auditor benchmarks: BLAS pinning, a GP-like release, a printer.

BLAS is pinned to one thread: through the environment for ``run_all.py``'s
subprocesses, and with threadpoolctl (installed with scikit-learn) when a
benchmark is run directly after numpy was already imported.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import math  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import numpy as np  # noqa: E402

try:  # numpy may have been imported (and BLAS started) before the variables were set
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
except ImportError:  # pragma: no cover - the environment variables still apply
    pass

from dpgp_audit.dataset import Dataset  # noqa: E402
from dpgp_audit.privacy.claims import ApproxDP, outputs_only  # noqa: E402
from dpgp_audit.privacy.gdp import gdp_mu  # noqa: E402


def eq_kernel(a: np.ndarray, b: np.ndarray, ell: float) -> np.ndarray:
    """Exponentiated-quadratic kernel on 1-D inputs."""
    return np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / ell**2)


@dataclass(frozen=True, eq=False)
class GPLikeRelease:
    """Posterior mean C y at ``m`` test points plus N(0, σ² M), M = K** + jitter I.

    σ is calibrated so that the worst label change by ``d`` is exactly
    μ0-GDP with μ0 = gdp_mu(epsilon, delta) (the analytic Gaussian mechanism
    in the Mahalanobis norm, S18 eq. 6–7). Everything expensive is cached.
    """

    n_train: int = 20
    m: int = 200
    ell: float = 0.3
    noise_var: float = 0.01
    jitter: float = 1e-6
    epsilon: float = 1.0
    delta: float = 1e-5
    d: float = 1.0
    X: np.ndarray = field(init=False, repr=False)
    C: np.ndarray = field(init=False, repr=False)
    M: np.ndarray = field(init=False, repr=False)
    L: np.ndarray = field(init=False, repr=False)
    sigma: float = field(init=False)

    def __post_init__(self) -> None:
        X = np.linspace(0, 1, self.n_train)
        Xs = np.linspace(-0.1, 1.1, self.m)
        A = np.linalg.inv(eq_kernel(X, X, self.ell) + self.noise_var * np.eye(self.n_train))
        C = eq_kernel(Xs, X, self.ell) @ A
        M = eq_kernel(Xs, Xs, self.ell) + self.jitter * np.eye(self.m)
        Minv_C = np.linalg.solve(M, C)
        sens = self.d * math.sqrt(float(np.max(np.sum(C * Minv_C, axis=0))))
        sigma = sens / gdp_mu(self.epsilon, self.delta)
        for k, v in {"X": X, "C": C, "M": sigma**2 * M,
                     "L": sigma * np.linalg.cholesky(M), "sigma": sigma}.items():
            object.__setattr__(self, k, v)

    @property
    def claim(self) -> ApproxDP:
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d))

    def data(self) -> Dataset:
        return Dataset(self.X[:, None], np.sin(6 * self.X))

    def mean(self, data: Dataset) -> np.ndarray:
        return self.C @ data.y

    def cov(self, data: Dataset) -> np.ndarray:
        return self.M

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        z = rng.standard_normal((n, self.m))
        return self.mean(data) + z @ self.L.T


def best_of(fn, repeats: int = 5) -> float:
    """Smallest wall time of ``repeats`` calls (seconds)."""
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def report(name: str, measured: float, target: float, baseline: float | None,
           baseline_note: str = "", unit: str = "s") -> bool:
    """Print one line: measured vs target vs baseline. Returns True when within target."""
    ok = measured <= target
    scale = 1e3 if unit == "ms" else 1.0
    base = "" if baseline is None else (f" | naive baseline {baseline * scale:9.3f} {unit} "
                                        f"({baseline / measured:6.1f}x slower) {baseline_note}")
    print(f"{name:<48} measured {measured * scale:9.3f} {unit} | target < "
          f"{target * scale:8.3f} {unit} [{'OK' if ok else 'MISSED'}]{base}")
    return ok


HEADLINE_TAG = "@@headline"


def headline(bench: str, case: str, kit: str, external: str, internal: str = "-") -> None:
    """Print one machine-readable headline row; ``run_all.py`` collects them into one table.

    ``external`` is the strongest external baseline (package or converged reference, with
    its name); ``internal`` a naive baseline written inside the kit, or ``"-"``.
    """
    for text in (bench, case, kit, external, internal):
        if "\t" in text or "\n" in text:
            raise ValueError(f"headline fields must be one line without tabs, got {text!r}")
    print("\t".join((HEADLINE_TAG, bench, case, kit, external, internal)), flush=True)


def versus(kit: float, baseline: float) -> str:
    """``"kit 3.2x faster"`` / ``"kit 1.4x slower"`` for two wall times of the same work."""
    if kit <= 0 or baseline <= 0:
        raise ValueError(f"times must be > 0, got kit={kit!r}, baseline={baseline!r}")
    return f"kit {baseline / kit:.1f}x faster" if baseline >= kit else \
        f"kit {kit / baseline:.1f}x slower"
