"""Planted calibration bugs: noise on the wrong scale, norm or neighbour relation (A.5).

An auditor is only trustworthy if it catches bugs we know are there and stays
quiet on mechanisms we know are correct. This module holds the mechanisms of the
classic slips of calibration (AUDITING.md §5.5) — planted bugs ``planted/<name>``
and their correct controls ``A.5/<name>`` — and :mod:`dpgp_audit.bugs.zoo` lists each
with its twin, true ε and the auditor expected to catch it.

The GP-like releases here are small self-contained linear smoothers, posterior-mean
weights ``C = K_*f (K_ff + s² I)⁻¹`` of an EQ kernel computed with numpy (S18 eq. 3;
H §3), released with Gaussian noise: a reader sees the whole mechanism in one place.

=================================== ========================= ============ ==============
ID                                   bug                       true ε       cheapest auditor
=================================== ========================= ============ ==============
planted/sensitivity-x2               Δ halved                  2.155        sensitivity
planted/sensitivity-x1.25            Δ / 1.25                  1.278        sensitivity
planted/neighbour-mismatch           add/remove Δ, replace-one 2.155        sensitivity
planted/std-as-variance              cov = σ·I, not σ²·I       2.07         white-box
planted/classical-large-eps          classical σ at ε = 20     25.4         white-box only
planted/hall-large-eps               Hall c(δ) at ε = 20       24.8         white-box only
planted/laplace-l2                   Laplace b = Δ₂/ε, d = 16  4 (pure)     black-box
planted/exp-no-half                  exp. mech. without /2     ≈ 2 (pure)   black-box
planted/exp-no-half-monotone         same, monotone utility    ≤ 1: control black-box (no flag)
planted/gp-sup-norm                  Δ = max|C_ij|·d           (computed)   sensitivity
planted/fixed-seed                   noise drawn once          ∞            black-box
planted/singular-noise               rank-truncated noise cov  ∞            white-box / sensitivity
planted/data-dependent-hyperparams   amplitude fitted on y     ∞            white-box
planted/lengthscale-from-data        ℓ chosen on y (sample     ≥ 5.9e6      grey-box
                                     only, float-safe)         (bound)      (boundary search)
=================================== ========================= ============ ==============
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset, clip_targets
from dpgp_audit.norms import L1, L2, Linf, Mahalanobis, Norm
from dpgp_audit.privacy.calibrate import (
    analytic_gaussian_sigma,
    classical_c,
    hall_c,
)
from dpgp_audit.privacy.claims import (
    ApproxDP,
    Claim,
    PureDP,
    outputs_only,
    whole_rows,
)
from dpgp_audit.privacy.domain import PublicDomain, check_linear_release, declared_domain
from dpgp_audit.privacy.float_release import (
    FloatRelease,
    gaussian_release,
    gaussian_tv_bound,
    iid_gaussian_release,
    laplace_noise_exact_uniform,
    laplace_release,
)
from dpgp_audit.privacy.gdp import gdp_epsilon
from dpgp_audit.privacy.multivariate import factor_pinv

__all__ = [
    "DataDependentAmplitudeGP",
    "ExponentialSelection",
    "FixedNoiseMechanism",
    "LENGTHSCALE_GRID",
    "LaplaceLinearMechanism",
    "LengthscaleSelectedGP",
    "LinearGaussianMechanism",
    "build_exponential",
    "build_lengthscale_from_data",
    "lengthscale_from_data_epsilon",
    "eq_kernel",
    "exp_realised_epsilon",
    "gaussian_true_epsilon",
    "linear_gaussian_true_epsilon",
    "smoother_weights",
]

# --------------------------------------------------------------------------------------
# Small numpy building blocks (no gp/ import: the audit layer stays independent)
# --------------------------------------------------------------------------------------


def eq_kernel(A: np.ndarray, B: np.ndarray, lengthscale: float = 1.0,
              variance: float = 1.0) -> np.ndarray:
    """Exponentiated-quadratic kernel ``variance · exp(−‖a − b‖² / (2 ℓ²))``."""
    A = np.atleast_2d(np.asarray(A, dtype=float))
    B = np.atleast_2d(np.asarray(B, dtype=float))
    sq = np.sum(A**2, 1)[:, None] + np.sum(B**2, 1)[None, :] - 2.0 * A @ B.T
    return variance * np.exp(-0.5 * np.maximum(sq, 0.0) / lengthscale**2)


def smoother_weights(X: np.ndarray, Xs: np.ndarray, *, lengthscale: float = 1.0,
                     noise_variance: float = 0.1) -> np.ndarray:
    """GP posterior-mean weights ``C = K_*f (K_ff + s² I)⁻¹``: ``m(X*) = C y`` (S18 eq. 3)."""
    K = eq_kernel(X, X, lengthscale) + noise_variance * np.eye(len(X))
    Ks = eq_kernel(Xs, X, lengthscale)
    return linalg.cho_solve(linalg.cho_factor(K, lower=True), Ks.T).T


def _test_points(k: int) -> np.ndarray:
    return np.linspace(0.0, 10.0, k)[:, None]


def _psd_factor(cov: np.ndarray) -> np.ndarray:
    """F with F Fᵀ = cov, via eigh (works for singular PSD matrices)."""
    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    w, U = linalg.eigh(cov)
    if w[0] < -1e-8 * max(abs(w[-1]), 1e-300):
        raise ValueError(f"noise covariance is not PSD (smallest eigenvalue {w[0]:.3g})")
    return U * np.sqrt(np.clip(w, 0.0, None))


def gaussian_true_epsilon(mu: float, delta: float) -> float:
    """True ε(δ) of a Gaussian release with Mahalanobis shift μ (exact; R eq. 5 inverted)."""
    if not math.isfinite(mu):
        return math.inf
    return gdp_epsilon(delta, mu)


# --------------------------------------------------------------------------------------
# Mechanism classes (contract implementations)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LinearGaussianMechanism:
    """Release ``W y + N(0, Σ)`` (``W = None``: the sum of the targets).

    Implements Mechanism, GaussianRelease and SensitivityQuery. Used for the
    correct controls and for the planted bugs whose error lies in the stated
    bound or in the noise scale.

    Parameters
    ----------
    name
        Short description.
    weights
        ``(k, n)`` matrix, or ``None`` for the sum over all targets (any n).
    noise_cov
        ``(k, k)`` PSD noise covariance (may be singular).
    claim_
        The privacy claim.
    norm_
        The norm the (possibly wrong) sensitivity proof uses.
    bound
        The claimed sensitivity in that norm.
    y_bound
        Declared target bound; targets outside raise ``ValueError``.
    float_safe
        ``True`` (the controls): the release is rounded to its public grid (issue 20 §4).
        ``False`` (the planted calibration bugs): the textbook float release ``W y + F z``
        the bug was written with — exactly affine in its noise, as the grey-box auditor's
        exact path (A.9) needs; its low bits leak as well (A.7 flags that too).
    """

    name: str
    weights: np.ndarray | None
    noise_cov: np.ndarray
    claim_: Claim
    norm_: Norm
    bound: float
    y_bound: float | None = None
    float_safe: bool = True
    _factor: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        cov = np.atleast_2d(np.asarray(self.noise_cov, dtype=float))
        object.__setattr__(self, "noise_cov", cov)
        object.__setattr__(self, "_factor", _psd_factor(cov))

    @property
    def claim(self) -> Claim:
        """The mechanism's privacy claim, with its declared public domain and float τ."""
        claim = self.claim_ if self.claim_.domain is not None else dataclasses.replace(
            self.claim_, domain=self.domain)
        return dataclasses.replace(claim, float_tv=self.float_release().tv
                                   if self.float_safe else 0.0)

    def float_release(self) -> FloatRelease:
        """The public grid of the release and its float total variation τ (issue 20 §4).

        A map inside the noise's range is released in the noise's own coordinates (iid
        unit noise, :class:`~dpgp_audit.methods.linear_gaussian.LinearGaussianRelease`);
        one that leaves it (the planted singular-noise bug) is rounded coordinate by
        coordinate, which keeps its leak.
        """
        if self._inner:
            return iid_gaussian_release(np.ones(self._factor.shape[1]))
        return gaussian_release(self._factor, 1.0)

    @property
    def _inner(self) -> bool:
        """True when every column of the map lies in the range of the noise factor."""
        if self.weights is None:
            return True
        F = self._factor
        resid = self.weights - F @ (factor_pinv(F) @ self.weights)
        return bool(np.linalg.norm(resid) <= 1e-9 * max(np.linalg.norm(self.weights), 1e-300))

    @property
    def domain(self) -> PublicDomain:
        """|y| <= y_bound (default: the whole-row bound d, else the kit's default domain)."""
        bound = self.y_bound if self.y_bound is not None else self.claim_.domain_bound
        return declared_domain(bound)

    @property
    def norm(self) -> Norm:
        """The norm of the sensitivity proof."""
        return self.norm_

    def sensitivity_bound(self) -> float:
        """The claimed sensitivity."""
        return float(self.bound)

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free release ``W y`` (or ``Σ y``)."""
        data = check_dataset(data)
        C, y = self.linear_query(data)
        return np.array([float(np.sum(y))]) if self.weights is None else C @ y

    def linear_query(self, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
        """``(W, y)`` (W = 1ᵀ for the sum), checked by the float-safety rule."""
        data = check_dataset(data)
        y = self.domain.targets(data.y)
        if self.weights is None:
            C = np.ones((1, y.size))
        elif data.n != self.weights.shape[1]:
            raise ValueError(f"this mechanism is built for n={self.weights.shape[1]} rows "
                             f"(public inputs), got n={data.n}")
        else:
            C = self.weights
        if self.float_safe:
            check_linear_release(self.domain,
                                 factor_pinv(self._factor) @ C if self._inner else C,
                                 self.float_release())
        else:  # the textbook release: the issue-10 rule on the outputs' own grid
            check_linear_release(self.domain, C,
                                 np.sqrt(np.clip(np.diag(self.noise_cov), 0.0, None)))
        return C, y

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box mean."""
        return self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box covariance (data-independent)."""
        return self.noise_cov

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape ``(n, k)``."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        z = rng.standard_normal((n, self._factor.shape[1]))
        C, y = self.linear_query(data)  # evaluated exactly, rounded to the grid (issue 20 §4)
        F = self._factor
        if not self.float_safe:
            return self.query(data)[None, :] + z @ F.T
        if self._inner:
            return self.float_release().round_linear(factor_pinv(F) @ C, y, z) @ F.T
        return self.float_release().round_linear(C, y, z @ F.T)


@dataclass(frozen=True, eq=False)
class FixedNoiseMechanism:
    """BUG: the noise is drawn once from a hard-coded seed and reused for every release.

    The analytic model (mean, cov, sensitivity) is that of the correct ``inner``
    mechanism, so only an auditor that samples the implementation sees the bug.
    """

    inner: LinearGaussianMechanism
    seed: int = 0

    @property
    def claim(self) -> Claim:
        """The (false) claim of the inner mechanism."""
        return self.inner.claim

    @property
    def norm(self) -> Norm:
        """The inner mechanism's norm."""
        return self.inner.norm

    def sensitivity_bound(self) -> float:
        """The inner mechanism's (correct) bound."""
        return self.inner.sensitivity_bound()

    def query(self, data: Dataset) -> np.ndarray:
        """The inner query."""
        data = check_dataset(data)
        return self.inner.query(data)

    def mean(self, data: Dataset) -> np.ndarray:
        """What the mean *would* be (the analytic model is right; the sampler is not)."""
        return self.inner.mean(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """The intended covariance."""
        return self.inner.cov(data)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` identical releases: ``rng`` is ignored (the planted bug)."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        check_rng(rng)
        fixed = np.random.default_rng(self.seed)  # the bug: a fixed seed, not the caller's rng
        z = fixed.standard_normal((1, self.inner._factor.shape[1]))
        out = self.inner.query(data)[None, :] + z @ self.inner._factor.T
        return np.repeat(out, n, axis=0)


@dataclass(frozen=True, eq=False)
class LaplaceLinearMechanism:
    """Release ``W y + Laplace(0, b)^k`` with pure-ε claim; ``b = bound / ε``."""

    name: str
    weights: np.ndarray
    epsilon: float
    norm_: Norm
    bound: float
    relation_d: float = 1.0
    float_safe: bool = True  # False: the textbook release of a planted bug (as above)

    @property
    def scale(self) -> float:
        """Laplace scale b = (claimed sensitivity) / ε."""
        return self.bound / self.epsilon

    @property
    def claim(self) -> PureDP:
        """Pure ε-DP, outputs only, on the kit's default domain."""
        return PureDP(epsilon=self.epsilon, relation=outputs_only(self.relation_d),
                      domain=declared_domain(None),
                      float_tv=self.float_release().tv if self.float_safe else 0.0)

    def float_release(self) -> FloatRelease:
        """The public grid of the release and its float total variation τ (issue 20 §4)."""
        return laplace_release(np.full(self.weights.shape[0], self.scale))

    @property
    def norm(self) -> Norm:
        """The norm of the sensitivity proof."""
        return self.norm_

    def sensitivity_bound(self) -> float:
        """The claimed sensitivity."""
        return float(self.bound)

    def query(self, data: Dataset) -> np.ndarray:
        """``W y``."""
        data = check_dataset(data)
        if data.n != self.weights.shape[1]:
            raise ValueError(f"built for n={self.weights.shape[1]} rows, got n={data.n}")
        return self.weights @ self._targets(data)

    def _targets(self, data: Dataset) -> np.ndarray:
        domain = self.claim.domain
        y = domain.targets(data.y)  # type: ignore[union-attr]
        check_linear_release(domain, self.weights, self.float_release())  # type: ignore
        return y

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape ``(n, k)``, rounded to the public grid (issue 20 §4)."""
        data = check_dataset(data)
        if data.n != self.weights.shape[1]:
            raise ValueError(f"built for n={self.weights.shape[1]} rows, got n={data.n}")
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        y = self._targets(data)
        if not self.float_safe:
            return (self.weights @ y)[None, :] + rng.laplace(
                0.0, self.scale, size=(n, self.weights.shape[0]))
        noise = laplace_noise_exact_uniform(self.scale, (n, self.weights.shape[0]), rng)
        return self.float_release().round_linear(self.weights, y, noise)


def _vote_scores(y: np.ndarray, k: int) -> np.ndarray:
    """Non-monotone utility contributions: y ≥ 0 votes for candidate ⌊|y|k⌋, y < 0 against it.

    A vote for c adds +1/2 to c and −1/2 to every other candidate; a vote against
    does the opposite. Replacing one record changes every utility by at most 1.
    """
    c = np.minimum((np.abs(y) * k).astype(int), k - 1)
    s = np.where(np.arange(k)[None, :] == c[:, None], 0.5, -0.5)
    return np.where((y >= 0)[:, None], s, -s)


def _threshold_counts(y: np.ndarray, k: int) -> np.ndarray:
    """Monotone utility contributions: record i adds 1 to candidate r when y_i ≥ t_r."""
    t = np.linspace(-1.0, 1.0, k)
    return (y[:, None] >= t[None, :]).astype(float)


@dataclass(frozen=True, eq=False)
class ExponentialSelection:
    """Exponential mechanism over ``k`` candidates, ``P(r) ∝ exp(ε u_r / (factor · Δu))``.

    ``factor=2`` is the correct mechanism (McSherry & Talwar); ``factor=1`` is the
    planted bug, which is still ε-DP for a *monotone* utility but not for the
    non-monotone vote utility. Whole-row neighbours with ``|y| <= 1``; outputs are
    candidate indices, shape ``(n, 1)``. Sampling by Gumbel-max.
    """

    epsilon: float
    k: int = 10
    utility: str = "vote"
    factor: float = 2.0

    @property
    def claim(self) -> PureDP:
        """Pure ε-DP, whole rows with |y| <= 1."""
        return PureDP(epsilon=self.epsilon, relation=whole_rows(1.0))

    @property
    def norm(self) -> Norm:
        """Utility sensitivity is measured in the sup norm."""
        return Linf()

    def sensitivity_bound(self) -> float:
        """Δu = 1 for both utilities."""
        return 1.0

    def query(self, data: Dataset) -> np.ndarray:
        """The utility vector ``u(D)``, shape ``(k,)``."""
        data = check_dataset(data)
        y, _ = clip_targets(data.y, 1.0, clip=False)
        if self.utility == "vote":
            return _vote_scores(y, self.k).sum(axis=0)
        if self.utility == "monotone":
            return _threshold_counts(y, self.k).sum(axis=0)
        raise ValueError(f"utility must be 'vote' or 'monotone', got {self.utility!r}")

    def log_probabilities(self, data: Dataset) -> np.ndarray:
        """Exact log P(r | D), computed stably (log-sum-exp)."""
        a = self.epsilon * self.query(data) / (self.factor * self.sensitivity_bound())
        return a - (a.max() + np.log(np.sum(np.exp(a - a.max()))))

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` selected indices as floats, shape ``(n, 1)`` (Gumbel-max trick)."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        logp = self.log_probabilities(data)
        g = rng.gumbel(size=(n, self.k))
        return np.argmax(logp[None, :] + g, axis=1).astype(float)[:, None]


def exp_realised_epsilon(mech: ExponentialSelection, d0: Dataset, d1: Dataset) -> float:
    """Exact privacy loss of one pair: ``max_r |log P(r|D) − log P(r|D′)|``."""
    return float(np.max(np.abs(mech.log_probabilities(d0) - mech.log_probabilities(d1))))


@dataclass(frozen=True, eq=False)
class DataDependentAmplitudeGP:
    """BUG: the GP signal amplitude is fitted on the private targets.

    Release ``C y + N(0, σ² a(D) M)`` with ``a(D) = mean(y²)`` (the maximum-likelihood
    amplitude of a white prior), while σ was calibrated for ``a = 1``. The noise
    covariance differs between neighbours, and ``a(D) = 0`` (all targets zero)
    releases the noise-free mean: the true ε is infinite.
    """

    C: np.ndarray
    M: np.ndarray
    sigma: float
    epsilon: float
    delta: float
    d: float = 1.0
    _L: np.ndarray = field(init=False, repr=False)
    _norm: Mahalanobis = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_L", _psd_factor(self.M))
        object.__setattr__(self, "_norm", Mahalanobis(self.M))

    @property
    def claim(self) -> ApproxDP:
        """The (false) (ε, δ) claim, outputs only."""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d))

    @property
    def norm(self) -> Norm:
        """Mahalanobis norm w.r.t. the prior covariance M."""
        return self._norm

    def sensitivity_bound(self) -> float:
        """``d · max_i sqrt(c_iᵀ M⁻¹ c_i)``: correct for the mean (the bug is in the covariance)."""
        return _mahalanobis_sensitivity(self.C, self._norm, self.d)

    def amplitude(self, data: Dataset) -> float:
        """``a(D) = mean(y²)``: the data-dependent hyperparameter."""
        return float(np.mean(np.asarray(data.y) ** 2))

    def query(self, data: Dataset) -> np.ndarray:
        """Posterior mean ``C y``."""
        data = check_dataset(data)
        if data.n != self.C.shape[1]:
            raise ValueError(f"built for n={self.C.shape[1]} rows, got n={data.n}")
        return self.C @ data.y

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box mean."""
        return self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box covariance σ² a(D) M: depends on the data."""
        return self.sigma**2 * self.amplitude(data) * np.asarray(self.M)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape ``(n, k)``."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        scale = self.sigma * math.sqrt(self.amplitude(data))
        return self.query(data)[None, :] + scale * rng.standard_normal(
            (n, self._L.shape[1])) @ self._L.T


#: The lengthscales planted/lengthscale-from-data searches over (the twin's ℓ = 3 among them).
LENGTHSCALE_GRID: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 5.0)


@dataclass(frozen=True, eq=False)
class LengthscaleSelectedGP:
    """BUG: the GP lengthscale is chosen on the private targets; only ``sample`` is exposed.

    The release of ``A.5/gp-smoother-prior`` — posterior mean ``C_ℓ y`` at 20 public test
    points plus ``N(0, σ_ℓ² M_ℓ)``, σ_ℓ the analytic σ of the Mahalanobis sensitivity for
    ``ℓ`` (H §3), rounded to the public grid of the noise sd (float-safe) — with ``ℓ`` the
    maximiser of the GP log marginal likelihood ``−½ yᵀK_ℓ⁻¹y − ½ log|K_ℓ|`` over
    :data:`LENGTHSCALE_GRID`, the way a hurried user tunes before releasing. The
    calibration is right for every fixed ``ℓ``; the choice is not private. On most
    neighbours of a dataset the choice does not move and the release is exactly the
    twin's; where one record moves it, the two releases are Gaussians of different means
    and covariances. The choice flips at large targets too, where the two means differ in
    proportion to the targets while the noise does not, so the loss grows with the
    targets' scale inside the declared domain (the toolbox default ``|y| <= 1e6``):
    :func:`lengthscale_from_data_epsilon` gives a lower bound on the true ε.
    """

    epsilon: float
    delta: float
    d: float = 1.0
    select: bool = True

    @property
    def claim(self) -> ApproxDP:
        """The (false) (ε, δ) claim, outputs only, with the float TV of the rounding."""
        k = _GP["k"]
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        domain=declared_domain(None), float_tv=gaussian_tv_bound(k, k))

    def law(self, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
        """Mean and covariance of the (unrounded) release on ``data``, at its chosen ℓ."""
        C, M = _gp_parts(data, lengthscale=self.lengthscale(data))
        sigma = analytic_gaussian_sigma(self.epsilon, self.delta,
                                        _mahalanobis_sensitivity(C, Mahalanobis(M), self.d))
        return C @ np.asarray(data.y, dtype=float), sigma**2 * M

    def lengthscale(self, data: Dataset) -> float:
        """ℓ: fixed (``select=False``) or the marginal-likelihood choice on the targets."""
        if not self.select:
            return float(_GP["lengthscale"])
        X, y = np.asarray(data.X, dtype=float), np.asarray(data.y, dtype=float)
        best, chosen = -math.inf, float(_GP["lengthscale"])
        for ell in LENGTHSCALE_GRID:
            K = eq_kernel(X, X, ell) + _GP["noise_variance"] * np.eye(len(X))
            cho = linalg.cho_factor(K)
            fit = -0.5 * float(y @ linalg.cho_solve(cho, y)) \
                - float(np.sum(np.log(np.diag(cho[0]))))
            if fit > best:
                best, chosen = fit, float(ell)
        return chosen

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` float-safe releases, shape ``(n, 20)``."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        C, M = _gp_parts(data, lengthscale=self.lengthscale(data))
        sigma = analytic_gaussian_sigma(self.epsilon, self.delta,
                                        _mahalanobis_sensitivity(C, Mahalanobis(M), self.d))
        L = _psd_factor(M)
        release = gaussian_release(L, sigma)
        return release.round_linear(C, data.y, sigma * rng.standard_normal((n, L.shape[1]))
                                    @ L.T)


def _mahalanobis_sensitivity(C: np.ndarray, norm: Norm, d: float) -> float:
    return float(d * max(norm(C[:, i]) for i in range(C.shape[1])))


# --------------------------------------------------------------------------------------
# Builders: correct controls and planted bugs
# --------------------------------------------------------------------------------------

_GP = {"lengthscale": 3.0, "noise_variance": 0.5, "k": 20, "jitter": 1e-3}


def _gp_parts(data: Dataset, k: int = _GP["k"], lengthscale: float = _GP["lengthscale"]
              ) -> tuple[np.ndarray, np.ndarray]:
    """(C, M): smoother weights at k test points and the prior covariance K** + jitter·I."""
    Xs = _test_points(k)
    C = smoother_weights(data.X, Xs, lengthscale=lengthscale,
                         noise_variance=_GP["noise_variance"])
    M = eq_kernel(Xs, Xs, lengthscale) + _GP["jitter"] * np.eye(k)
    return C, M


def _sum_mech(name: str, *, epsilon: float, delta: float, d: float, stated: float,
              sigma: float, relation=None, variance: float | None = None,
              float_safe: bool = False) -> LinearGaussianMechanism:
    """A sum release; ``float_safe=False`` (the planted bugs' textbook release) by default."""
    relation = outputs_only(d) if relation is None else relation
    var = sigma**2 if variance is None else variance
    return LinearGaussianMechanism(
        name=name, weights=None, noise_cov=np.array([[var]]),
        claim_=ApproxDP(epsilon=epsilon, delta=delta, relation=relation),
        norm_=L2(), bound=stated, float_safe=float_safe)


def build_sensitivity_underestimated(data: Dataset, *, epsilon: float = 1.0,
                                     delta: float = 1e-5, d: float = 1.0,
                                     factor: float = 2.0) -> LinearGaussianMechanism:
    """BUG: sum of targets with the sensitivity divided by ``factor`` (noise too small)."""
    stated = d / factor
    return _sum_mech(f"sum, sensitivity / {factor:g}", epsilon=epsilon, delta=delta, d=d,
                     stated=stated, sigma=analytic_gaussian_sigma(epsilon, delta, stated))


def build_neighbour_mismatch(data: Dataset, *, epsilon: float = 1.0, delta: float = 1e-5,
                             y_bound: float = 1.0) -> LinearGaussianMechanism:
    """BUG: sensitivity b of add/remove used under replace-one (true Δ = 2b)."""
    return _sum_mech("sum, add/remove sensitivity under replace-one", epsilon=epsilon,
                     delta=delta, d=y_bound, stated=y_bound, relation=whole_rows(y_bound),
                     sigma=analytic_gaussian_sigma(epsilon, delta, y_bound))


def build_sum_rows(data: Dataset, *, epsilon: float = 1.0, delta: float = 1e-5,
                   y_bound: float = 1.0) -> LinearGaussianMechanism:
    """Correct: sum of targets under whole-row replacement, Δ₂ = 2b."""
    return _sum_mech("sum, whole rows", epsilon=epsilon, delta=delta, d=y_bound,
                     stated=2 * y_bound, relation=whole_rows(y_bound),
                     sigma=analytic_gaussian_sigma(epsilon, delta, 2 * y_bound),
                     float_safe=True)


def build_std_as_variance(data: Dataset, *, epsilon: float = 1.0, delta: float = 1e-5,
                          d: float = 1.0) -> LinearGaussianMechanism:
    """BUG: the noise *variance* is set to σ (the standard deviation)."""
    sigma = analytic_gaussian_sigma(epsilon, delta, d)
    return _sum_mech("sum, variance = sigma", epsilon=epsilon, delta=delta, d=d, stated=d,
                     sigma=sigma, variance=sigma)


def build_classical_large_eps(data: Dataset, *, epsilon: float = 20.0, delta: float = 1e-5,
                              d: float = 1.0) -> LinearGaussianMechanism:
    """BUG: the classical σ = Δ sqrt(2 ln(1.25/δ))/ε used far outside its ε ≤ 1 proof."""
    sigma = d * classical_c(delta) / epsilon
    return _sum_mech("sum, classical calibration at large epsilon", epsilon=epsilon,
                     delta=delta, d=d, stated=d, sigma=sigma)


def build_fixed_seed(data: Dataset, *, epsilon: float = 1.0, delta: float = 1e-5,
                     d: float = 1.0) -> FixedNoiseMechanism:
    """BUG: correct calibration, but the noise comes from a fixed seed (deterministic release)."""
    sigma = analytic_gaussian_sigma(epsilon, delta, d)
    return FixedNoiseMechanism(_sum_mech("sum, fixed seed", epsilon=epsilon, delta=delta, d=d,
                                         stated=d, sigma=sigma))


def build_gp_iso(data: Dataset, *, epsilon: float = 1.0, delta: float = 1e-5,
                 d: float = 1.0) -> LinearGaussianMechanism:
    """Correct: GP posterior mean + N(0, σ² I), Δ₂ = d · max_i ‖c_i‖₂."""
    C, _ = _gp_parts(data)
    sens = d * float(np.max(np.linalg.norm(C, axis=0)))
    sigma = analytic_gaussian_sigma(epsilon, delta, sens)
    return LinearGaussianMechanism(
        "GP mean, iid noise", C, sigma**2 * np.eye(C.shape[0]),
        ApproxDP(epsilon=epsilon, delta=delta, relation=outputs_only(d)), L2(), sens)


def build_gp_sup_norm(data: Dataset, *, epsilon: float = 1.0, delta: float = 1e-5,
                      d: float = 1.0) -> LinearGaussianMechanism:
    """BUG: GP posterior mean with the sup-norm shortcut ``Δ = d · max|C_ij|`` for an L2 proof."""
    C, _ = _gp_parts(data)
    stated = d * float(np.max(np.abs(C)))
    sigma = analytic_gaussian_sigma(epsilon, delta, stated)
    return LinearGaussianMechanism(
        "GP mean, sup-norm sensitivity", C, sigma**2 * np.eye(C.shape[0]),
        ApproxDP(epsilon=epsilon, delta=delta, relation=outputs_only(d)), L2(), stated,
        float_safe=False)


def build_gp_prior(data: Dataset, *, epsilon: float = 1.0, delta: float = 1e-5,
                   d: float = 1.0) -> LinearGaussianMechanism:
    """Correct: GP posterior mean + N(0, σ² M), M = K** + jitter, Mahalanobis sensitivity (H §3)."""
    C, M = _gp_parts(data)
    norm = Mahalanobis(M)
    sens = _mahalanobis_sensitivity(C, norm, d)
    sigma = analytic_gaussian_sigma(epsilon, delta, sens)
    return LinearGaussianMechanism(
        "GP mean, prior-shaped noise", C, sigma**2 * M,
        ApproxDP(epsilon=epsilon, delta=delta, relation=outputs_only(d)), norm, sens)


def build_hall_large_eps(data: Dataset, *, epsilon: float = 20.0, delta: float = 1e-5,
                         d: float = 1.0) -> LinearGaussianMechanism:
    """BUG: Hall et al.'s σ = c(δ) Δ/ε, c(δ) = sqrt(2 ln(2/δ)), at ε = 20 (proof needs ε ≤ 1)."""
    C, M = _gp_parts(data)
    norm = Mahalanobis(M)
    sens = _mahalanobis_sensitivity(C, norm, d)
    sigma = hall_c(delta) * sens / epsilon
    return LinearGaussianMechanism(
        "GP mean, Hall calibration at large epsilon", C, sigma**2 * M,
        ApproxDP(epsilon=epsilon, delta=delta, relation=outputs_only(d)), norm, sens,
        float_safe=False)


def build_singular_noise(data: Dataset, *, epsilon: float = 1.0, delta: float = 1e-5,
                         d: float = 1.0, k: int = 25, keep: float = 1e-2
                         ) -> LinearGaussianMechanism:
    """BUG: jitter-free prior covariance truncated to its leading eigenvectors.

    The noise lives in a subspace that misses part of the mean change C e_i, and
    the sensitivity is computed with the pseudo-inverse (the dp4gp ``pinv``
    pattern), so the stated bound is finite while the true privacy loss is infinite.
    """
    Xs = _test_points(k)
    C = smoother_weights(data.X, Xs, lengthscale=_GP["lengthscale"],
                         noise_variance=_GP["noise_variance"])
    w, U = linalg.eigh(eq_kernel(Xs, Xs, _GP["lengthscale"]))
    w = np.where(w > keep * w[-1], w, 0.0)
    M = (U * w) @ U.T
    M = 0.5 * (M + M.T)
    pinv = np.linalg.pinv(M, rcond=keep, hermitian=True)
    stated = d * float(np.sqrt(np.max(np.einsum("ji,jk,ki->i", C, pinv, C))))
    sigma = analytic_gaussian_sigma(epsilon, delta, stated)
    return LinearGaussianMechanism(
        "GP mean, rank-truncated noise", C, sigma**2 * M,
        ApproxDP(epsilon=epsilon, delta=delta, relation=outputs_only(d)), Mahalanobis(M),
        stated, float_safe=False)


def build_data_dependent(data: Dataset, *, epsilon: float = 1.0, delta: float = 1e-5,
                         d: float = 1.0) -> DataDependentAmplitudeGP:
    """BUG: GP release whose noise amplitude is fitted on the private targets."""
    C, M = _gp_parts(data)
    sens = _mahalanobis_sensitivity(C, Mahalanobis(M), d)
    return DataDependentAmplitudeGP(C, M, analytic_gaussian_sigma(epsilon, delta, sens),
                                    epsilon, delta, d)


def lengthscale_from_data_epsilon(data: Dataset, *, epsilon: float = 1.0, delta: float = 1e-5,
                                  d: float = 1.0, scale: float = 1_000.0) -> float:
    """A lower bound on the true ε at δ of ``planted/lengthscale-from-data`` (independent of
    the auditors).

    Targets on the path from ``scale`` · (alternating ±1) to ``scale`` · (all 1): the bug's
    own choice :meth:`LengthscaleSelectedGP.lengthscale` differs at the two ends, and 60
    bisections bring two bases of different choice together. Every move of one row by
    ``±d`` from either base that changes the choice is a neighbour pair; along
    ``w = (Σ₀ + Σ₁)⁻¹(μ₁ − μ₀)`` its two releases are scalar Gaussians (a post-processing),
    and the event ``{w·x > w·μ₁}`` gives ``ε >= log(P₁ − δ) − log P₀`` (scipy's log
    survival function). The float rounding is ignored: it moves the bound by far less than
    its size. The largest bound over the moves is returned; it grows about as ``scale²``.
    """
    from scipy import stats

    mech = LengthscaleSelectedGP(epsilon, delta, d)
    n = data.n
    alt = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)

    def base(t: float) -> Dataset:
        return Dataset(data.X, scale * ((1 - t) * alt + t), data.name)

    lo, hi = 0.0, 1.0
    if mech.lengthscale(base(lo)) == mech.lengthscale(base(hi)):
        raise ValueError("the choice does not change along the path; pick another scale")
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if mech.lengthscale(base(mid)) == mech.lengthscale(base(lo)) \
            else (lo, mid)
    best = 0.0
    for t in (lo, hi):
        b0 = base(t)
        for i in range(n):
            for step in (d, -d):
                b1 = b0.with_target(i, float(b0.y[i]) + step)
                if mech.lengthscale(b1) == mech.lengthscale(b0):
                    continue
                (m0, s0), (m1, s1) = mech.law(b0), mech.law(b1)
                for (ma, sa), (mb, sb) in (((m0, s0), (m1, s1)), ((m1, s1), (m0, s0))):
                    w = np.linalg.solve(sa + sb, mb - ma)
                    cut = float(w @ mb)
                    p_b = stats.norm.sf(cut, float(w @ mb), math.sqrt(float(w @ sb @ w)))
                    log_p_a = stats.norm.logsf(cut, float(w @ ma), math.sqrt(float(w @ sa @ w)))
                    if p_b > delta:
                        best = max(best, math.log(p_b - delta) - float(log_p_a))
    return best


def build_lengthscale_from_data(data: Dataset, *, epsilon: float = 1.0, delta: float = 1e-5,
                                d: float = 1.0) -> LengthscaleSelectedGP:
    """BUG: GP release whose lengthscale is chosen on the private targets (sample only)."""
    return LengthscaleSelectedGP(epsilon, delta, d, select=True)


_LAPLACE_DIM = 16


def _laplace_weights(data: Dataset) -> np.ndarray:
    # Every record adds y_i/4 to each of 16 coordinates: ‖c_i‖₂ = 1, ‖c_i‖₁ = 4.
    return np.full((_LAPLACE_DIM, data.n), 1.0 / math.sqrt(_LAPLACE_DIM))


def build_laplace_l1(data: Dataset, *, epsilon: float = 1.0, delta: float = 0.0,
                     d: float = 1.0) -> LaplaceLinearMechanism:
    """Correct: 16-dim linear release with Laplace noise calibrated to the L1 sensitivity."""
    W = _laplace_weights(data)
    return LaplaceLinearMechanism("16-dim Laplace, L1", W, epsilon, L1(),
                                  d * float(np.max(np.abs(W).sum(axis=0))), d)


def build_laplace_l2(data: Dataset, *, epsilon: float = 1.0, delta: float = 0.0,
                     d: float = 1.0) -> LaplaceLinearMechanism:
    """BUG: Laplace noise calibrated with the L2 sensitivity (4× too small for d = 16)."""
    W = _laplace_weights(data)
    return LaplaceLinearMechanism("16-dim Laplace, L2 (bug)", W, epsilon, L2(),
                                  d * float(np.max(np.linalg.norm(W, axis=0))), d,
                                  float_safe=False)


def exp_default_data(k: int = 10, per_candidate: int = 2) -> Dataset:
    """Balanced votes (``per_candidate`` for every candidate) plus row 0 voting against k−1.

    Row 0 has the largest |y| and the smallest x, so the adversarial pair
    "row 0: y=+1 → y=−1" switches a vote against the last candidate into a vote
    for it: the worst case for the missing factor 2 with balanced utilities.
    """
    balanced = np.repeat((np.arange(k) + 0.5) / k, per_candidate)
    y = np.concatenate([[-0.99], balanced])
    x = np.linspace(0.0, 10.0, y.size)
    return Dataset(x[:, None], y, name="exp-votes")


def build_exponential(utility: str, factor: float) -> Callable[..., ExponentialSelection]:
    """A build function for :class:`ExponentialSelection` with ``utility`` and ``factor``."""
    def build(data: Dataset, *, epsilon: float = 1.0, delta: float = 0.0,
              k: int = 10) -> ExponentialSelection:
        return ExponentialSelection(epsilon=epsilon, k=k, utility=utility, factor=factor)
    return build


def exp_no_half_worst_epsilon(epsilon: float, k: int, n: int) -> float:
    """Sup over size-n datasets of the realised ε of the vote utility without the /2.

    The loss of candidate b is ``ε + log((A + B)/(e^ε A + e^{−ε} B))`` with
    ``A = exp(ε u_b)``, ``B = Σ_{r≠b} exp(ε u_r)``; it grows as A/B falls, i.e. when
    the other n − 1 records all vote against b. Evaluated directly on that dataset pair.
    """
    mech = ExponentialSelection(epsilon=epsilon, k=k, utility="vote", factor=1.0)
    y = np.full(n, -0.99)  # everyone votes against the last candidate
    d0 = Dataset(np.zeros((n, 1)), y)
    return exp_realised_epsilon(mech, d0, d0.with_target(0, 0.99))


def linear_gaussian_true_epsilon(mech: LinearGaussianMechanism, delta: float) -> float:
    """Exact ε(δ) of a planted linear-Gaussian bug: worst Mahalanobis shift over columns.

    μ = max_i ‖Σ^{-1/2} d w_i‖ over the columns w_i of the smoother weights (the sum
    query when there are none), then ε(δ) of μ-GDP (Dong et al. 2022, Cor. 2.13).
    """
    rel = mech.claim.relation
    step = rel.max_target_change
    norm = Mahalanobis(mech.noise_cov)
    if mech.weights is None:
        mu = norm(np.array([step]))
    else:
        mu = max(norm(step * mech.weights[:, i]) for i in range(mech.weights.shape[1]))
    return gaussian_true_epsilon(mu, delta)
