"""Heteroscedastic DP-SVGP and multi-class classification (catalogue H.5; H §5, App. D).

With per-row noise variances σ_i² the statistics become (H eq. 37)

    A_h = Σ_i σ_i⁻² y_i k_i,    B_h = Σ_i σ_i⁻² k_i k_iᵀ,

and the DP posterior is H eq. (9) with σ² = 1 (H eqs. 38–41).

Sensitivity. Write w = σ⁻². A row contributes w y k = (√w y)(√w k) to A_h and
w k kᵀ = t_b(√w k) to B_h, so it is a row of the homoscedastic query with
ỹ = √w y and k̃ = √w k. If every σ_i² ≥ σ²_min then |ỹ| ≤ R_y/σ_min and
‖k̃‖ ≤ R_k/σ_min, and since Δ(R_y, R_k) is homogeneous of degree 2,

    Δ_h = Δ(R_y, R_k) / σ²_min.

H App. D instead assumes σ_i² ≤ R_σ and scales the sensitivity by R_σ; an upper
bound on σ_i² does not bound σ_i⁻² (a row with tiny σ_i has unbounded
influence), so this module requires and checks a *lower* bound σ²_min.

Classification (Milios et al. 2018; H eq. 21): for one-hot labels y_ic,
α_ic = y_ic + α_ε, σ̃²_ic = ln(1/α_ic + 1), ỹ_ic = ln α_ic − σ̃²_ic/2; one GP per
class with heteroscedastic noise σ̃²_ic. The transformed targets and noise
depend on the private label, so they are part of the private row: the C class
statistics are released together with one Gaussian mechanism whose sensitivity
is sqrt(C) Δ_h (one row changes every class block by at most Δ_h). H eq. (21)
prints σ̃² = log(1/α_1 + 1) — the index should be i (per entry).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset, clip_targets
from dpgp_audit.gp.kernels import EQ, Kernel
from dpgp_audit.gp.svgp import QU, predict_from_qu, sufficient_statistics
from dpgp_audit.methods.honkela.bounds import (
    dpsvgp_sensitivity,
    rk_bound,
    upper_dim,
    upper_unvec,
    upper_vec,
)
from dpgp_audit.methods.honkela.dpsvgp import (
    DPSVGPStats,
    _rounded_release,
    radial_profile,
    stationary_kernel_bound,
)
from dpgp_audit.methods.honkela.posterior import DPQU, Correction, noise_aware_qu
from dpgp_audit.norms import L2
from dpgp_audit.privacy.calibrate import GaussianCalibration, calibrate_gaussian
from dpgp_audit.privacy.claims import ApproxDP, whole_rows
from dpgp_audit.privacy.domain import PublicDomain
from dpgp_audit.privacy.float_release import FloatRelease, iid_gaussian_release

__all__ = [
    "AffineNoiseVariance",
    "DPDirichletClassifier",
    "DPHeteroscedasticStats",
    "class_domain",
    "dirichlet_targets",
    "heteroscedastic_sensitivity",
]


def heteroscedastic_sensitivity(y_bound: float, rk: float, min_noise_var: float,
                                ratio: float = 1.0) -> float:
    """Δ_h = Δ(R_y, R_k, c) / σ²_min for rows weighted by σ_i⁻² ≤ 1/σ²_min (see module doc)."""
    if not (min_noise_var > 0 and math.isfinite(min_noise_var)):
        raise ValueError(f"min_noise_var must be finite and > 0, got {min_noise_var!r}")
    return dpsvgp_sensitivity(y_bound, rk, ratio) / min_noise_var


@dataclass(frozen=True, eq=False)
class DPHeteroscedasticStats(DPSVGPStats):
    """H.5 / H App. D: release A_h = Σ σ_i⁻² y_i k_i and B_h = Σ σ_i⁻² k_i k_iᵀ.

    ``noise_var_fn(X, y) -> (n,)`` gives each row's noise variance; it is a
    public rule applied to the private row (so it may depend on y). Every value
    must be ≥ ``min_noise_var`` (checked on the data; a violation raises), and the
    sensitivity is Δ(R_y, R_k, c) / σ²_min. Use :meth:`posterior` with
    ``noise_var=1`` (H eq. 38); :meth:`fit` does so.
    """

    noise_var_fn: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    min_noise_var: float = 1.0

    def __post_init__(self) -> None:
        if not callable(self.noise_var_fn):
            raise ValueError("noise_var_fn must be a callable (X, y) -> per-row noise variances")
        super().__post_init__()
        sens = self.sensitivity / _positive_min(self.min_noise_var)
        object.__setattr__(self, "sensitivity", sens)
        object.__setattr__(self, "calibration",
                           calibrate_gaussian(self.epsilon, self.delta, sens, self.method))

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP under whole-row substitution; noise variances ≥ σ²_min by rule."""
        base = super().claim
        return ApproxDP(epsilon=base.epsilon, delta=base.delta, relation=base.relation,
                        proven=base.proven,
                        note=base.note + f"; per-row noise >= {self.min_noise_var:g} (App. D)",
                        float_tv=base.float_tv)

    def _statistics_bound(self, n: int) -> float:
        """Weights 1/σ_i² ≤ 1/σ²_min scale the homoscedastic bound."""
        return super()._statistics_bound(n) / self.min_noise_var

    def statistics(self, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
        """Noise-free (A_h, B_h) of H eq. (37); checks R_k and σ_i² ≥ σ²_min."""
        if data.dim != self.Z.shape[1]:
            raise ValueError(f"data has input dimension {data.dim}, Z has {self.Z.shape[1]}")
        y, _ = clip_targets(data.y, self.y_bound, clip=self.clip)
        s2 = np.asarray(self.noise_var_fn(data.X, y), dtype=float).reshape(-1)  # type: ignore[operator]
        if s2.shape != (data.n,) or not np.all(np.isfinite(s2)):
            raise ValueError("noise_var_fn must return one finite variance per row")
        if np.any(s2 < self.min_noise_var):
            raise ValueError(f"a row has noise variance {float(s2.min()):.4g} < min_noise_var = "
                             f"{self.min_noise_var:.4g}: the sensitivity bound would not hold")
        A, B, worst = sufficient_statistics(self.kernel, self.Z, data.X, y, weights=1.0 / s2,
                                            return_max_norm=True)
        if worst > self.R_k * (1 + 1e-9):
            raise ValueError(f"a row has ||k(Z, x)|| = {worst:.6g} > R_k = {self.R_k:.6g}")
        return A, B

    def fit(self, data: Dataset, noise_var: float = 1.0, rng: np.random.Generator | None = None,
            **kw: object) -> DPQU:
        """H eq. (38): release, then the noise-aware q(u) with σ² = 1 (weights inside A_h, B_h)."""
        if noise_var != 1.0:
            raise ValueError("the heteroscedastic posterior uses noise_var = 1 (H eq. 38)")
        return super().fit(data, 1.0, check_rng(rng), **kw)  # type: ignore[arg-type]


def _positive_min(v: float) -> float:
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"min_noise_var must be finite and > 0, got {v!r}")
    return float(v)


def dirichlet_targets(labels: np.ndarray, n_classes: int, alpha_eps: float = 0.01
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Milios et al. transformed targets ỹ and noise variances σ̃² (H eq. 21), shape (n, C)."""
    C = check_positive_int("n_classes", n_classes)
    lab = np.asarray(labels)
    if lab.ndim != 1 or not np.all(np.isfinite(lab)) or np.any(lab != np.round(lab)) or \
            np.any(lab < 0) or np.any(lab >= C):
        raise ValueError(f"labels must be integers in 0..{C - 1}")
    if not (0 < alpha_eps < 1):
        raise ValueError(f"alpha_eps must lie in (0, 1), got {alpha_eps!r}")
    onehot = np.eye(C)[lab.astype(int)]
    alpha = onehot + alpha_eps
    s2 = np.log(1.0 / alpha + 1.0)
    return np.log(alpha) - s2 / 2.0, s2


@functools.lru_cache(maxsize=16)
def class_domain(n_classes: int) -> PublicDomain:
    """The labels 0, …, C−1 as a public domain (bound max(C − 1, 1)); other targets are refused."""
    C = check_positive_int("n_classes", n_classes)
    return PublicDomain(float(max(C - 1, 1)), labels=tuple(float(c) for c in range(C)))


@dataclass(frozen=True, eq=False)
class DPDirichletClassifier:
    """H.5: DP multi-class GP classification via the Dirichlet/log transform.

    ``data.y`` holds integer labels 0..C−1. The release stacks, for every class
    c, [A_c; b̂_c] with A_c = Σ_i w_ic ỹ_ic k_i and B_c = Σ_i w_ic k_i k_iᵀ
    (w = 1/σ̃²), and adds N(0, σ_a²) to the A blocks and N(0, σ_b²) to the b̂
    blocks, σ_a calibrated to sqrt(C) Δ_h.
    """

    Z: np.ndarray
    kernel: Kernel
    n_classes: int
    epsilon: float
    delta: float
    alpha_eps: float = 0.01
    ratio: float = 1.0
    rk_method: str = "min-distance"
    R_k: float = field(init=False)
    y_bound: float = field(init=False)
    min_noise_var: float = field(init=False)
    sensitivity: float = field(init=False)
    calibration: GaussianCalibration = field(init=False, repr=False)

    def __post_init__(self) -> None:
        Z = np.asarray(self.Z, dtype=float)
        Z = Z[:, None] if Z.ndim == 1 else Z
        object.__setattr__(self, "Z", Z)
        C = check_positive_int("n_classes", self.n_classes)
        ytil, s2 = dirichlet_targets(np.arange(C), C, self.alpha_eps)
        object.__setattr__(self, "y_bound", float(np.abs(ytil).max()))
        object.__setattr__(self, "min_noise_var", float(s2.min()))
        rk = rk_bound(self.rk_method, Z, stationary_kernel_bound(self.kernel),
                      None if self.rk_method == "trivial" else radial_profile(self.kernel))
        object.__setattr__(self, "R_k", rk)
        sens = math.sqrt(C) * heteroscedastic_sensitivity(self.y_bound, rk, self.min_noise_var,
                                                          self.ratio)
        object.__setattr__(self, "sensitivity", sens)
        object.__setattr__(self, "calibration",
                           calibrate_gaussian(self.epsilon, self.delta, sens))

    @property
    def sigma_a(self) -> float:
        """Noise standard deviation on every A_c."""
        return self.calibration.sigma

    @property
    def sigma_b(self) -> float:
        """Noise standard deviation on every b̂_c."""
        return self.calibration.sigma / self.ratio

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP under substitution of one (x, label) row; the labels are the domain."""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta,
                        relation=whole_rows(max(self.n_classes - 1, 1)),
                        domain=class_domain(self.n_classes),
                        note=f"labels in 0..{self.n_classes - 1}; Dirichlet transform "
                             f"alpha_eps={self.alpha_eps:g}; Z public; sqrt(C) composition",
                        float_tv=self.float_release().tv)

    def float_release(self) -> FloatRelease:
        """The public grid of the release and its float total variation τ (issue 20 §4)."""
        return iid_gaussian_release(self._scales())

    @property
    def norm(self) -> L2:
        """L2 norm of the rescaled stacked query."""
        return L2()

    def sensitivity_bound(self) -> float:
        """sqrt(C) Δ_h."""
        return self.sensitivity

    def _stats(self, data: Dataset) -> list[tuple[np.ndarray, np.ndarray]]:
        labels = class_domain(self.n_classes).targets(data.y)  # ValueError naming y
        ytil, s2 = dirichlet_targets(labels, self.n_classes, self.alpha_eps)
        return [sufficient_statistics(self.kernel, self.Z, data.X, ytil[:, c],
                                      weights=1.0 / s2[:, c]) for c in range(self.n_classes)]

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box: stacked [A_c; b̂_c] over classes."""
        return np.concatenate([np.concatenate([A, upper_vec(B)]) for A, B in self._stats(data)])

    def query(self, data: Dataset) -> np.ndarray:
        """Rescaled query [A_c; c b̂_c] whose L2 sensitivity is bounded."""
        data = check_dataset(data)
        return np.concatenate([np.concatenate([A, self.ratio * upper_vec(B)])
                               for A, B in self._stats(data)])

    def _scales(self) -> np.ndarray:
        d = self.Z.shape[0]
        block = np.concatenate([np.full(d, self.sigma_a), np.full(upper_dim(d), self.sigma_b)])
        return np.tile(block, self.n_classes)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box: diagonal noise covariance."""
        return np.diag(self._scales() ** 2)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, C (d + d(d+1)/2))."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        mean = self.mean(data)
        bound = data.n * self.R_k * max(self.y_bound, self.R_k) / self.min_noise_var
        return _rounded_release(self.float_release(), mean, bound, n, rng)

    def fit(self, data: Dataset, rng: np.random.Generator, *,
            correction: Correction = "paper") -> list[DPQU]:
        """One release and the per-class noise-aware q(u) (σ² = 1, H eq. 38)."""
        rel = self.sample(data, 1, rng)[0]
        d = self.Z.shape[0]
        size = d + upper_dim(d)
        Kzz = self.kernel(self.Z)
        out = []
        for c in range(self.n_classes):
            blk = rel[c * size:(c + 1) * size]
            out.append(noise_aware_qu(Kzz, blk[:d], upper_unvec(blk[d:], d), 1.0, self.sigma_a,
                                      self.sigma_b, correction=correction, on_not_pd="inflate"))
        return out

    def predict_proba(self, qus: list[DPQU], V: np.ndarray) -> np.ndarray:
        """Class probabilities ∝ E[exp f_c] = exp(μ_c + v_c/2), normalised (Milios et al.)."""
        V = np.asarray(V, dtype=float)
        V = V[:, None] if V.ndim == 1 else V
        Kzz, Kvz, kvv = self.kernel(self.Z), self.kernel(V, self.Z), self.kernel.diag(V)
        logits = []
        for q in qus:
            mu, var = predict_from_qu(Kzz, Kvz, kvv, QU(q.m, q.S))
            logits.append(mu + var / 2.0)
        L = np.stack(logits, axis=1)
        L -= L.max(axis=1, keepdims=True)
        P = np.exp(L)
        return P / P.sum(axis=1, keepdims=True)



# ----------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class AffineNoiseVariance:
    """A public per-row noise rule σ_i² = base + slope·|y_i| (≥ base = σ²_min).

    A picklable callable for :class:`DPHeteroscedasticStats` (the rule may read
    the private target; the sensitivity only needs its lower bound ``base``).
    """

    base: float
    slope: float = 0.0

    def __post_init__(self) -> None:
        if not (self.base > 0 and math.isfinite(self.base)):
            raise ValueError(f"base must be finite and > 0, got {self.base!r}")
        if not (self.slope >= 0 and math.isfinite(self.slope)):
            raise ValueError(f"slope must be finite and >= 0, got {self.slope!r}")

    def __call__(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """σ_i² for every row."""
        return self.base + self.slope * np.abs(np.asarray(y, dtype=float))


def _grid(n_inducing: int, domain: tuple[float, float]) -> np.ndarray:
    """The registry factories' public Z: a 1-D grid (``catalogue.Entry.inputs = 1``)."""
    return np.linspace(domain[0], domain[1], n_inducing)[:, None]


def _build_hetero(data: Dataset, *, epsilon: float, delta: float, y_bound: float = 1.0,
                  n_inducing: int = 5, domain: tuple[float, float] = (0.0, 10.0),
                  lengthscale: float = 2.0, base_noise: float = 0.1,
                  noise_slope: float = 0.2) -> DPHeteroscedasticStats:
    """Registry factory: Z on a public grid, σ_i² = base_noise + noise_slope·|y_i|."""
    return DPHeteroscedasticStats(Z=_grid(n_inducing, domain),
                                  kernel=EQ(lengthscale=lengthscale), y_bound=y_bound,
                                  epsilon=epsilon, delta=delta,
                                  noise_var_fn=AffineNoiseVariance(base_noise, noise_slope),
                                  min_noise_var=base_noise)


def _build_dirichlet(data: Dataset, *, epsilon: float, delta: float, n_classes: int = 3,
                     n_inducing: int = 5, domain: tuple[float, float] = (0.0, 10.0),
                     lengthscale: float = 2.0, alpha_eps: float = 0.01) -> DPDirichletClassifier:
    """Registry factory: Z on a public grid; ``data.y`` holds labels 0..C−1."""
    return DPDirichletClassifier(Z=_grid(n_inducing, domain),
                                 kernel=EQ(lengthscale=lengthscale), n_classes=n_classes,
                                 epsilon=epsilon, delta=delta, alpha_eps=alpha_eps)


def default_label_dataset(n: int = 20) -> Dataset:
    """Deterministic 3-class labels on a grid in [0, 10]: 0 left, 1 middle, 2 right."""
    x = np.linspace(0.0, 10.0, n)
    return Dataset(x[:, None], np.digitize(x, [10.0 / 3.0, 20.0 / 3.0]).astype(float),
                   name="default-3-class")
