"""DP sparse variational GP inference with inputs *and* outputs private (catalogue H.1, H.2).

Honkela's DP-GP (paper H, Alg. 1) releases the statistics A = K_ZX y and
B = K_ZX K_XZ through one Gaussian mechanism

    [Ã; b̃] = [A; b̂] + N(0, diag(σ_a² I_d, σ_b² I_{d(d+1)/2})),   b̂ = upper_vec(B),

with σ_b = σ_a / c (c = σ_a/σ_b, ``ratio``) and σ_a calibrated by the analytic
Gaussian mechanism to the sensitivity Δ of the rescaled query [A; c b̂] under
whole-row substitution (H eq. 27). Everything after the release — the
noise-aware q(u) (H eq. 9) and the predictions (H eq. 17) — is post-processing.

Privacy-relevant choices (all recorded in the claim's note):

* the inducing inputs Z must be public (fixed before seeing the data);
* targets must satisfy |y| ≤ R_y (``y_bound``; ``clip=True`` clips explicitly);
* R_k bounds ‖k(Z, x)‖₂ for every input x, from H eq. (4), (7) or (8)
  (:func:`~dpgp_audit.methods.honkela.bounds.rk_bound`), using the kernel's
  variance as the bound σ_f² on |k| and its radial profile;
* the sensitivity is the exact worst case by default; ``sensitivity_formula=
  "paper"`` uses H eq. (6) as printed (larger or equal, so also private).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from dpgp_audit._validation import as_finite_array, check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset, clip_targets
from dpgp_audit.gp.kernels import EQ, Kernel, Stationary
from dpgp_audit.gp.svgp import QU, predict_from_qu, sufficient_statistics
from dpgp_audit.methods.honkela.bounds import (
    dpsvgp_sensitivity,
    paper_sensitivity_is_tight,
    rk_bound,
    upper_dim,
    upper_unvec,
    upper_vec,
)
from dpgp_audit.methods.honkela.posterior import DPQU, Correction, noise_aware_qu
from dpgp_audit.norms import L2
from dpgp_audit.privacy.calibrate import GaussianCalibration, calibrate_gaussian
from dpgp_audit.privacy.claims import ApproxDP, whole_rows
from dpgp_audit.privacy.float_release import FloatRelease, iid_gaussian_release

__all__ = ["DPSVGPStats", "NoisyStats", "radial_profile", "stationary_kernel_bound"]


def stationary_kernel_bound(kernel: Kernel) -> float:
    """σ_f² = sup |k| for a stationary kernel: its variance (H §3.1)."""
    if not isinstance(kernel, Stationary):
        raise ValueError("the kernel bound sup|k| is known only for stationary kernels "
                         f"(got {type(kernel).__name__}); pass kernel_bound explicitly")
    return float(kernel.variance)


def radial_profile(kernel: Kernel):
    """k_r(r): an upper bound on k(x, z)/σ_f² given ‖x − z‖ = r, non-increasing in r.

    For an isotropic stationary kernel this is its profile; with ARD
    lengthscales the largest lengthscale gives a valid upper bound.
    """
    if not isinstance(kernel, Stationary):
        raise ValueError(f"radial profile needs a stationary kernel, got {type(kernel).__name__}")
    ell = float(np.max(np.atleast_1d(kernel.lengthscale)))
    iso = type(kernel)(lengthscale=ell, variance=kernel.variance)

    def k_r(r: np.ndarray) -> np.ndarray:
        r = np.asarray(r, dtype=float)
        pts = np.zeros((r.size, 1))
        pts[:, 0] = np.ravel(r)
        return (iso(np.zeros((1, 1)), pts)[0] / iso.variance).reshape(r.shape)

    return k_r


@dataclass(frozen=True)
class NoisyStats:
    """One release of H.1: Ã, the symmetric B̃ and the noise levels that produced them."""

    A: np.ndarray
    B: np.ndarray
    sigma_a: float
    sigma_b: float


@dataclass(frozen=True, eq=False)
class DPSVGPStats:
    """H.1: the Gaussian mechanism on [A; b̂] = [K_ZX y; upper_vec(K_ZX K_XZ)] (H Alg. 1).

    Parameters
    ----------
    Z
        Public inducing inputs, shape (m, D).
    kernel
        Covariance function (stationary unless ``kernel_bound`` and ``rk`` are given).
    y_bound
        R_y: targets satisfy |y| ≤ R_y (whole-row neighbours, H §2.1).
    epsilon, delta
        The (ε, δ) target of the analytic Gaussian mechanism.
    ratio
        c = σ_a/σ_b (H Alg. 1; the paper uses 1).
    rk_method
        ``"trivial"`` (eq. 4), ``"grid1d-paper"`` (eq. 7 as printed), ``"spacing-1d"``
        (tighter 1-D bound) or ``"min-distance"`` (eq. 8).
    rk
        Override R_k (must bound ‖k(Z, x)‖ for every x; checked on the data).
    sensitivity_formula
        ``"exact"`` (default) or ``"paper"`` (H eq. 6 as printed).
    clip
        Clip targets to [−R_y, R_y] instead of refusing out-of-bound targets.
    """

    Z: np.ndarray
    kernel: Kernel
    y_bound: float
    epsilon: float
    delta: float
    ratio: float = 1.0
    rk_method: str = "min-distance"
    rk: float | None = None
    kernel_bound: float | None = None
    sensitivity_formula: Literal["exact", "paper"] = "exact"
    clip: bool = False
    method: str = "analytic"
    R_k: float = field(init=False)
    sensitivity: float = field(init=False)
    calibration: GaussianCalibration = field(init=False, repr=False)
    Kzz: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        Z = as_finite_array("Z", self.Z, ndim=(1, 2))
        Z = (Z[:, None] if Z.ndim == 1 else Z).copy()
        Z.setflags(write=False)
        object.__setattr__(self, "Z", Z)
        if self.rk is not None:
            R_k = float(self.rk)
            if not (R_k > 0 and math.isfinite(R_k)):
                raise ValueError(f"rk must be finite and > 0, got {self.rk!r}")
        else:
            sf2 = (stationary_kernel_bound(self.kernel) if self.kernel_bound is None
                   else float(self.kernel_bound))
            k_r = None if self.rk_method == "trivial" else radial_profile(self.kernel)
            R_k = rk_bound(self.rk_method, Z, sf2, k_r)
        object.__setattr__(self, "R_k", R_k)
        sens = dpsvgp_sensitivity(self.y_bound, R_k, self.ratio, self.sensitivity_formula)
        object.__setattr__(self, "sensitivity", sens)
        object.__setattr__(self, "calibration", calibrate_gaussian(
            self.epsilon, self.delta, sens, self.method))  # type: ignore[arg-type]
        Kzz = np.asarray(self.kernel(Z), dtype=float)
        Kzz.setflags(write=False)
        object.__setattr__(self, "Kzz", Kzz)

    # ------------------------------------------------------------------ sizes, noise
    @property
    def n_inducing(self) -> int:
        """|Z|."""
        return int(self.Z.shape[0])

    @property
    def sigma_a(self) -> float:
        """Noise standard deviation on A (calibrated to Δ)."""
        return self.calibration.sigma

    @property
    def sigma_b(self) -> float:
        """Noise standard deviation on b̂: σ_a / ratio."""
        return self.calibration.sigma / self.ratio

    @property
    def output_dim(self) -> int:
        """Length of one release, |Z| + |Z|(|Z|+1)/2."""
        return self.n_inducing + upper_dim(self.n_inducing)

    # ------------------------------------------------------------------ contract
    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP under whole-row substitution with |y| ≤ R_y (H Thm 2)."""
        source = self.rk_method if self.rk is None else "given"
        parts = [f"Z public (|Z|={self.n_inducing}), R_k={self.R_k:.4g} ({source})",
                 f"sigma_a/sigma_b={self.ratio:g}", f"sensitivity {self.sensitivity_formula}"]
        if self.clip:
            parts.append(f"targets clipped to |y| <= {self.y_bound:g}")
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=whole_rows(self.y_bound),
                        proven=self.calibration.proven, note="; ".join(parts),
                        float_tv=self.float_release().tv)

    def float_release(self) -> FloatRelease:
        """The public grid of the release and its float total variation τ (issue 20 §4)."""
        return iid_gaussian_release(self._noise_scales())

    def _statistics_bound(self, n: int) -> float:
        """A bound on every released statistic: n R_k max(R_y, R_k) (|k(z, x)| ≤ R_k)."""
        return n * self.R_k * max(self.y_bound, self.R_k)

    @property
    def norm(self) -> L2:
        """The proof bounds the L2 norm of the rescaled query [A; c b̂]."""
        return L2()

    def sensitivity_bound(self) -> float:
        """Δ of :func:`dpsvgp_sensitivity` (exact or H eq. 6)."""
        return self.sensitivity

    def paper_formula_tight(self) -> bool:
        """Whether H eq. (6) is the exact worst case at these parameters."""
        return paper_sensitivity_is_tight(self.y_bound, self.R_k, self.ratio)

    def _targets(self, data: Dataset) -> np.ndarray:
        y, _ = clip_targets(data.y, self.y_bound, clip=self.clip)
        return y

    def statistics(self, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
        """Noise-free (A, B) of H eq. (3); checks ‖k_i‖ ≤ R_k on every row."""
        if data.dim != self.Z.shape[1]:
            raise ValueError(f"data has input dimension {data.dim}, Z has {self.Z.shape[1]}")
        y = self._targets(data)
        A, B, worst = sufficient_statistics(self.kernel, self.Z, data.X, y,
                                            return_max_norm=True)
        # The largest row norm ‖k_i‖ on the data must respect R_k: a violation
        # means a wrong kernel bound (a sensitivity bug), so refuse loudly.
        if worst > self.R_k * (1 + 1e-9):
            raise ValueError(f"a row has ||k(Z, x)|| = {worst:.6g} > R_k = {self.R_k:.6g}: "
                             "the R_k bound does not hold for this kernel/Z")
        return A, B

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box: [A; b̂], the mean of the release."""
        A, B = self.statistics(data)
        return np.concatenate([A, upper_vec(B)])

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box: diag(σ_a² I_d, σ_b² I_{d(d+1)/2})."""
        d = self.n_inducing
        return np.diag(np.concatenate([np.full(d, self.sigma_a**2),
                                       np.full(upper_dim(d), self.sigma_b**2)]))

    def query(self, data: Dataset) -> np.ndarray:
        """The rescaled query [A; c b̂] whose L2 sensitivity the proof bounds (H eq. 27)."""
        data = check_dataset(data)
        A, B = self.statistics(data)
        return np.concatenate([A, self.ratio * upper_vec(B)])

    def _noise_scales(self) -> np.ndarray:
        d = self.n_inducing
        return np.concatenate([np.full(d, self.sigma_a), np.full(upper_dim(d), self.sigma_b)])

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases [Ã; b̃], shape (n, d + d(d+1)/2)."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        mean = self.mean(data)
        return _rounded_release(self.float_release(), mean, self._statistics_bound(data.n),
                                n, rng)

    # ------------------------------------------------------------------ the method
    def unpack(self, release: np.ndarray) -> NoisyStats:
        """Split one released vector into Ã and the symmetric B̃."""
        release = np.asarray(release, dtype=float).reshape(-1)
        d = self.n_inducing
        return NoisyStats(release[:d].copy(), upper_unvec(release[d:], d), self.sigma_a,
                          self.sigma_b)

    def release(self, data: Dataset, rng: np.random.Generator) -> NoisyStats:
        """One private release of the statistics (H Alg. 1, the only access to data)."""
        return self.unpack(self.sample(data, 1, rng)[0])

    def posterior(self, stats: NoisyStats, noise_var: float, *, correction: Correction = "paper",
                  rho: float = 0.01, on_not_pd: Literal["raise", "inflate"] = "raise") -> DPQU:
        """The noise-aware q(u) of H eq. (9) (post-processing of ``stats``)."""
        return noise_aware_qu(np.asarray(self.Kzz), stats.A, stats.B, noise_var, stats.sigma_a,
                              stats.sigma_b, rho=rho, correction=correction, on_not_pd=on_not_pd)

    def predict(self, qu: QU | DPQU, V: np.ndarray, *,
                full_cov: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Predictive mean and variance of f at V (H eq. 17)."""
        V = as_finite_array("V", V, ndim=(1, 2))
        V = V[:, None] if V.ndim == 1 else V
        kvv = self.kernel(V) if full_cov else self.kernel.diag(V)
        return predict_from_qu(np.asarray(self.Kzz), self.kernel(V, self.Z), kvv,
                               QU(qu.m, qu.S), full_cov=full_cov)

    def fit(self, data: Dataset, noise_var: float, rng: np.random.Generator, *,
            correction: Correction = "paper",
            on_not_pd: Literal["raise", "inflate"] = "raise") -> DPQU:
        """H Alg. 1 end to end: release, then the noise-aware posterior."""
        return self.posterior(self.release(data, rng), noise_var, correction=correction,
                              on_not_pd=on_not_pd)


def _rounded_release(fr: FloatRelease, mean: np.ndarray, bound: float, n: int,
                     rng: np.random.Generator) -> np.ndarray:
    """``n`` releases Λ · round((mean + σ z) / Λ) (issue 20 §4) of statistics bounded by
    ``bound`` (the float-safety rule is checked first).
    """
    fr.check_domain(bound, np.ones(fr.k), what="statistics bound")
    return fr.round(mean, fr.sd * rng.standard_normal((n, fr.k)))


def _build_dpsvgp(data: Dataset, *, epsilon: float, delta: float, y_bound: float = 1.0,
                  n_inducing: int = 5, domain: tuple[float, float] = (0.0, 10.0),
                  lengthscale: float = 2.0, ratio: float = 1.0,
                  rk_method: str = "min-distance",
                  sensitivity_formula: str = "exact") -> DPSVGPStats:
    """Registry factory: Z on a grid over the declared public ``domain`` (1-D data)."""
    Z = np.linspace(domain[0], domain[1], n_inducing)[:, None]
    return DPSVGPStats(Z=Z, kernel=EQ(lengthscale=lengthscale), y_bound=y_bound,
                       epsilon=epsilon, delta=delta, ratio=ratio, rk_method=rk_method,
                       sensitivity_formula=sensitivity_formula)  # type: ignore[arg-type]
