"""S18.1 — the standard DP-GP: the functional mechanism on the exact GP posterior mean.

S18 §2 (eqs. 1–5): the posterior mean f̄(·) = Σ_i α_i k(·, x_i), α = K⁻¹y with
K = K' + σ_n² I, moves by Σ_i β_i k(·, x_i), β = (y_j' − y_j) K⁻¹ e_j, when one target
changes (outputs-only neighbours, |y_j − y_j'| ≤ d). The release adds a scaled GP sample
path, f̃ = f̄ + c·G, G ~ GP(0, k), with c = Δ·c(δ)/ε (S18 eq. 1) where Δ bounds the RKHS
distance of the two means.

Sensitivities offered (``sensitivity=``):

* ``"paper-inf"`` — d‖K⁻¹‖∞ (S18 §2, kernel values in [−1, 1]);
* ``"paper-b"`` — d·b(K⁻¹) (S18 §2, kernel values in [0, 1]);
* ``"rkhs"`` — the exact RKHS distance of the same change,
  max_j d·sqrt(e_jᵀ K⁻¹ K' K⁻¹ e_j) (K' = kernel Gram matrix without the noise).

The paper's two bounds are bounds on the *pointwise* size of the change (|Σβ_i k| with
|k| ≤ 1), not on the RKHS norm the proof needs. Because |k(x, x')| ≤ 1 also gives
βᵀK'β ≤ ‖β‖₁², ``paper-inf`` does cover the RKHS norm. For ``paper-b`` we have no proof,
but the exact RKHS value never exceeded it in 20 000 random EQ configurations with kernel
variance ≤ 1 nor in the hypothesis tests (it is tight for n = 1, variance 1); on the !Kung
settings it is ~10× loose. The kernel-range premise (variance ≤ 1, i.e. normalised
outputs) is enforced: without it both paper bounds fail by a factor sqrt(variance).
The mechanism is released at a finite set of public test points ``Xs`` so
that the white-box auditor can compute its exact privacy profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from dpgp_audit._validation import (
    as_finite_array,
    check_positive_float,
)
from dpgp_audit.dataset import Dataset, check_public_inputs
from dpgp_audit.gp.kernels import Kernel
from dpgp_audit.gp.linalg import cho_solve_lower, psd_cholesky
from dpgp_audit.methods.linear_gaussian import LinearGaussianRelease
from dpgp_audit.norms import Linf, Mahalanobis
from dpgp_audit.privacy.calibrate import GaussianCalibration, calibrate_gaussian
from dpgp_audit.privacy.claims import ApproxDP, outputs_only
from dpgp_audit.privacy.domain import PublicDomain, declared_domain
from dpgp_audit.privacy.multivariate import covariance_factor

__all__ = [
    "StandardDPGP",
    "b_bound",
    "inverse_inf_norm",
    "paper_sensitivity",
    "rkhs_sensitivity",
    "supnorm_sensitivity",
]

Sensitivity = Literal["paper-inf", "paper-b", "rkhs", "supnorm"]
SENSITIVITIES: tuple[str, ...] = ("paper-inf", "paper-b", "rkhs")


def inverse_inf_norm(Kinv: np.ndarray) -> float:
    """‖K⁻¹‖∞ = max_i Σ_j |[K⁻¹]_ij| (S18 fn. 1)."""
    Kinv = as_finite_array("Kinv", Kinv, ndim=2)
    return float(np.max(np.sum(np.abs(Kinv), axis=1)))


def b_bound(Kinv: np.ndarray) -> float:
    """b(K⁻¹) of S18 §2: the larger ∞-norm of K⁻¹ with negatives dropped, and of −K⁻¹ with
    negatives dropped (a column's positive mass or negative mass, whichever is larger).

    For a kernel with values in [0, 1], |Σ_i β_i k(x, x_i)| ≤ d·b(K⁻¹) at every x.
    """
    Kinv = as_finite_array("Kinv", Kinv, ndim=2)
    pos = np.sum(np.where(Kinv > 0, Kinv, 0.0), axis=0)
    neg = np.sum(np.where(Kinv < 0, -Kinv, 0.0), axis=0)
    return float(max(pos.max(), neg.max()))


def _kernel_range_check(kind: str, *blocks: np.ndarray) -> None:
    tol = 1e-12
    big = max(float(np.max(np.abs(b))) for b in blocks)
    if big > 1.0 + tol:
        raise ValueError(
            f"the paper's {kind} sensitivity assumes kernel values in "
            f"{'[0, 1]' if kind == 'paper-b' else '[-1, 1]'} (S18 §2) but |k| reaches "
            f"{big:.4g}: normalise the outputs (kernel variance <= 1) or use sensitivity='rkhs'")
    if kind == "paper-b" and min(float(np.min(b)) for b in blocks) < -tol:
        raise ValueError("sensitivity='paper-b' assumes a non-negative kernel (S18 §2); "
                         "use 'paper-inf' or 'rkhs'")


def paper_sensitivity(Kinv: np.ndarray, d: float, kind: str = "paper-b") -> float:
    """S18 §2 bound: ``d·‖K⁻¹‖∞`` (``kind="paper-inf"``) or ``d·b(K⁻¹)`` (``"paper-b"``)."""
    if kind == "paper-inf":
        return float(d) * inverse_inf_norm(Kinv)
    if kind == "paper-b":
        return float(d) * b_bound(Kinv)
    raise ValueError(f"kind must be 'paper-inf' or 'paper-b', got {kind!r}")


def rkhs_sensitivity(Kinv: np.ndarray, K_latent: np.ndarray, d: float) -> float:
    """Exact sup over outputs-only neighbours of ‖f̄_D − f̄_D′‖_H.

    With β = d K⁻¹ e_j the change Σ β_i k(·, x_i) has squared RKHS norm βᵀ K' β; the
    supremum over |y_j − y_j′| ≤ d is at the end point, so Δ = d·max_j sqrt(e_jᵀK⁻¹K'K⁻¹e_j).
    """
    Kinv = as_finite_array("Kinv", Kinv, ndim=2)
    q = np.einsum("ij,jk,ki->i", Kinv, np.asarray(K_latent, dtype=float), Kinv)
    return float(d) * float(np.sqrt(max(float(np.max(q)), 0.0)))


def supnorm_sensitivity(C: np.ndarray, d: float) -> float:
    """max_j d‖c_j‖∞: the largest *pointwise* change at the test points.

    Not an RKHS (or Mahalanobis) sensitivity: used only by ``planted/s18-supnorm``.
    """
    return float(d) * float(np.max(np.abs(C)))


@dataclass(frozen=True, eq=False)
class StandardDPGP(LinearGaussianRelease):
    """S18.1: posterior mean at public test points ``Xs`` plus c·G, G ~ GP(0, k).

    Parameters
    ----------
    kernel, noise_variance
        The GP (K = k(X, X) + σ_n² I); hyperparameters fixed a priori (public).
    X
        Public training inputs (outputs-only relation: only y is private).
    Xs
        Public test inputs at which the DP mean is released.
    d
        Outputs-only neighbour bound |y_j − y_j′| ≤ d.
    epsilon, delta
        Target privacy.
    sensitivity
        ``"paper-b"`` (S18 default for the EQ kernel), ``"paper-inf"`` or ``"rkhs"``.
    method
        Calibration: ``"hall"`` (S18 eq. 2; ε ≤ 1), ``"classical"`` (ε ≤ 1), ``"gdp"``
        or ``"analytic"`` (every ε).
    allow_unproven
        Permit ``hall``/``classical`` at ε > 1 (S18 Fig. 1A uses ε = 50): the claim is
        then marked unproven.
    y_bound, clip
        Declared bound on the (normalised) targets; ``clip=True`` clips explicitly.
    jitter
        Independent extra noise variance ``jitter·max k(x*, x*)`` added at the test points
        so that the released covariance is numerically full rank (more noise only helps
        privacy; 0 disables).
    """

    kernel: Kernel
    noise_variance: float
    X: np.ndarray
    Xs: np.ndarray
    d: float
    epsilon: float
    delta: float
    sensitivity: Sensitivity = "paper-b"
    method: str = "hall"
    allow_unproven: bool = False
    y_bound: float | None = None
    clip: bool = False
    jitter: float = 1e-9
    C: np.ndarray = field(init=False, repr=False)
    Kss: np.ndarray = field(init=False, repr=False)
    delta_h: float = field(init=False)
    bounds: dict = field(init=False, repr=False)
    calibration: GaussianCalibration = field(init=False, repr=False)
    _factor: np.ndarray = field(init=False, repr=False)
    _post_var: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        X = as_finite_array("X", self.X, ndim=(1, 2))
        X = X[:, None] if X.ndim == 1 else X
        Xs = as_finite_array("Xs", self.Xs, ndim=(1, 2))
        Xs = Xs[:, None] if Xs.ndim == 1 else Xs
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "Xs", Xs)
        nv = float(self.noise_variance)
        if not (np.isfinite(nv) and nv >= 0):
            raise ValueError(f"noise_variance must be finite and >= 0, got {nv!r}")
        d = check_positive_float("d", self.d)
        Kp = self.kernel(X)
        K = Kp + nv * np.eye(X.shape[0])
        L = psd_cholesky(K, name="K + noise_variance*I")
        Kinv = cho_solve_lower(L, np.eye(X.shape[0]))
        Kinv = 0.5 * (Kinv + Kinv.T)
        Ksf = self.kernel(Xs, X)
        C = Ksf @ Kinv
        Kss = self.kernel(Xs)
        bounds = {"rkhs": rkhs_sensitivity(Kinv, Kp, d),
                  "paper-inf": paper_sensitivity(Kinv, d, "paper-inf"),
                  "paper-b": paper_sensitivity(Kinv, d, "paper-b"),
                  "supnorm": supnorm_sensitivity(C, d)}
        if self.sensitivity in ("paper-inf", "paper-b"):
            _kernel_range_check(self.sensitivity, Kp, Ksf, Kss)
        elif self.sensitivity not in ("rkhs", "supnorm"):
            raise ValueError(f"sensitivity must be one of {SENSITIVITIES}, got "
                             f"{self.sensitivity!r}")
        delta_h = bounds[self.sensitivity]
        cal = calibrate_gaussian(self.epsilon, self.delta, delta_h, self.method,  # type: ignore[arg-type]
                                 allow_unproven=self.allow_unproven)
        jit = float(self.jitter) * float(max(np.max(np.diag(Kss)), 0.0))
        Kss_rel = Kss + jit * np.eye(Kss.shape[0])
        post_var = np.maximum(np.diag(Kss) - np.einsum("ij,ij->i", C, Ksf), 0.0)
        for name, val in (("C", C), ("Kss", Kss_rel), ("_post_var", post_var)):
            val.setflags(write=False)
            object.__setattr__(self, name, val)
        object.__setattr__(self, "delta_h", delta_h)
        object.__setattr__(self, "bounds", bounds)
        object.__setattr__(self, "calibration", cal)
        object.__setattr__(self, "_factor", covariance_factor(Kss_rel, rtol=1e-14))
        self.check_float_safety(C)

    # -- contract -------------------------------------------------------------------
    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP for outputs-only neighbours with bound d."""
        notes = [f"sensitivity={self.sensitivity}", f"calibration={self.method}"]
        if self.clip:
            notes.append(f"targets clipped to |y| <= {self.y_bound:g}")
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        proven=self.calibration.proven, note="; ".join(notes),
                        domain=self.domain, float_tv=self.float_tv())

    @property
    def domain(self) -> PublicDomain:
        """The declared public domain |y| <= y_bound."""
        return declared_domain(self.y_bound, self.clip)

    @property
    def scale(self) -> float:
        """The multiplier c of the GP sample path (S18 eq. 1: Δ c(δ)/ε for ``hall``)."""
        return self.calibration.sigma

    @property
    def norm(self) -> Mahalanobis | Linf:
        """Mahalanobis norm w.r.t. the prior covariance at ``Xs`` (bounded by the RKHS norm)."""
        if self.sensitivity == "supnorm":
            return Linf()
        return Mahalanobis(self.Kss)

    def sensitivity_bound(self) -> float:
        """Δ in the units of :attr:`norm` (the RKHS bound also bounds the Mahalanobis norm)."""
        return self.delta_h

    def _targets(self, data: Dataset) -> np.ndarray:
        y = check_public_inputs(data, self.X).y
        return self.domain.targets(y)

    def query(self, data: Dataset) -> np.ndarray:
        """Noise-free posterior mean at ``Xs`` (k,)."""
        return self.C @ self._targets(data)

    def linear_query(self, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
        """``(C, y)``: the release evaluates the posterior mean C y exactly (issue 20 §4)."""
        return self.C, self._targets(data)

    # mean = query, cov = c² k(Xs, Xs) (plus the jitter) and sample: LinearGaussianRelease
    @property
    def noise_scale(self) -> float:
        """c, the multiplier of the GP sample path."""
        return self.scale

    @property
    def noise_factor(self) -> np.ndarray:
        """F with F Fᵀ = k(Xs, Xs) + jitter."""
        return self._factor

    def noise_shape(self) -> np.ndarray:
        """k(Xs, Xs) plus the jitter."""
        return self.Kss

    def predict(self, data: Dataset, rng: np.random.Generator,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One DP release: (DP mean, GP posterior variance, DP noise covariance) at ``Xs``."""
        return self.sample(data, 1, rng)[0], np.array(self._post_var), self.cov(data)


# --------------------------------------------------------------------------- registry
def default_test_inputs() -> np.ndarray:
    """Public test inputs for the default 1-D data (a grid extending past the data)."""
    return np.linspace(-1.0, 11.0, 12)


def _build_standard(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                    lengthscale: float = 1.5, noise_variance: float = 0.1,
                    sensitivity: str = "paper-b", method: str = "hall",
                    Xs: np.ndarray | None = None, allow_unproven: bool = False,
                    y_bound: float | None = None, clip: bool = False) -> StandardDPGP:
    from dpgp_audit.gp.kernels import EQ

    Xs = default_test_inputs() if Xs is None else Xs
    return StandardDPGP(EQ(lengthscale=lengthscale, variance=1.0), noise_variance, data.X, Xs,
                        d, epsilon, delta, sensitivity=sensitivity,  # type: ignore[arg-type]
                        method=method, allow_unproven=allow_unproven, y_bound=y_bound,
                        clip=clip)
