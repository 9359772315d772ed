"""The toolbox mechanisms on simple queries, registered for auditing (catalogue P.1–P.5).

Each mechanism is a small frozen dataclass implementing the contract of
:mod:`dpgp_audit.contract` (claim, vectorised ``sample``; ``norm``, ``query``,
``sensitivity_bound``; ``mean``/``cov`` for the Gaussian ones):

=========================== ============================================ =====================
ID                          release                                      claim
=========================== ============================================ =====================
P.1/gaussian-sum            Σ y + N(0, σ²)                               (ε, δ), L2 = d
P.2/laplace-sum             Σ y + Lap(d/ε)                               ε (pure), L1 = d
P.2/laplace-sum-rows        Σ y + Lap(2B/ε), whole rows, |y| ≤ B         ε (pure), L1 = 2B
P.2/exponential             threshold index ∝ exp(ε u / 2)               ε (pure), Δu = 1
P.4/multivariate-gaussian   C y + σ N(0, M), M = C Cᵀ (singular)         (ε, δ), Mahalanobis
P.5/functional              f_D(grid) + c g(grid), g ~ GP(0, k)          (ε, δ) via μ-GDP, RKHS
=========================== ============================================ =====================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import as_finite_array, check_epsilon, check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.linalg import cho_solve_lower, psd_cholesky
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.methods.linear_gaussian import LinearGaussianRelease
from dpgp_audit.norms import L1, L2, RKHS, Linf, Mahalanobis
from dpgp_audit.privacy.calibrate import GaussianCalibration, calibrate_gaussian
from dpgp_audit.privacy.claims import ApproxDP, PureDP, outputs_only, whole_rows
from dpgp_audit.privacy.domain import PublicDomain, check_linear_release, declared_domain
from dpgp_audit.privacy.float_release import (
    FloatRelease,
    iid_gaussian_release,
    laplace_noise_exact_uniform,
    laplace_release,
)
from dpgp_audit.privacy.functional import (
    GPPathSampler,
    functional_mechanism_calibration,
    functional_mechanism_mu,
)
from dpgp_audit.privacy.mechanisms import (
    exponential_log_probabilities,
    exponential_mechanism,
    laplace_scale,
)
from dpgp_audit.privacy.multivariate import (
    covariance_factor,
    factor_pinv,
    linear_query_changes,
    mahalanobis_sensitivity,
)

__all__ = [
    "ExponentialThresholdMechanism",
    "FunctionalMechanism",
    "GaussianSumMechanism",
    "LaplaceSumMechanism",
    "MultivariateGaussianMechanism",
]


@dataclass(frozen=True)
class GaussianSumMechanism(LinearGaussianRelease):
    """P.1: release Σ_i y_i + N(0, σ²) under outputs-only neighbours (|y_i − y_i'| ≤ d).

    The L2 sensitivity of the sum is ``d``; σ comes from :func:`calibrate_gaussian`.
    Targets must satisfy the declared public domain ``|y| <= y_bound`` (default
    :data:`~dpgp_audit.privacy.domain.DEFAULT_Y_BOUND`; ``clip=True`` clips explicitly;
    the claim records it). For n targets the release can reach ``n · y_bound``: the
    float-safety rule (:func:`~dpgp_audit.privacy.domain.check_float_safety`, gain n)
    refuses a dataset for which rounding there would be visible next to σ.
    """

    d: float
    epsilon: float
    delta: float
    method: str = "analytic"
    y_bound: float | None = None
    clip: bool = False
    allow_unproven: bool = False
    calibration: GaussianCalibration = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "calibration", calibrate_gaussian(
            self.epsilon, self.delta, self.d, self.method, allow_unproven=self.allow_unproven))

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP under outputs-only neighbours with bound d, on the declared domain."""
        note = f"targets clipped to |y| <= {self.y_bound:g}" if self.clip else ""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        proven=self.calibration.proven, note=note, domain=self.domain,
                        float_tv=self.float_tv())

    @property
    def domain(self) -> PublicDomain:
        """The declared public domain ``|y| <= y_bound``."""
        return _domain(self.y_bound, self.clip)

    @property
    def norm(self) -> L2:
        """The proof bounds the L2 norm of the query change."""
        return L2()

    def sensitivity_bound(self) -> float:
        """Δ₂ = d."""
        return self.d

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free release: the sum of the (optionally clipped) targets, shape (1,).

        Refuses targets outside the domain and datasets too large to be float-safe.
        """
        C, y = self.linear_query(data)
        return np.array([math.fsum(y)])

    def linear_query(self, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
        """``(1ᵀ, y)``: the release evaluates Σ y exactly (float-safety rule: gain n)."""
        data = check_dataset(data)
        y = _targets(data, self.domain)
        C = np.ones((1, y.size))
        self.check_float_safety(C)  # a sum of n targets: gain n
        return C, y

    @property
    def noise_scale(self) -> float:
        """σ: the release is N(Σ y_i, σ²) (mean/cov/sample from :class:`LinearGaussianRelease`)."""
        return self.calibration.sigma

    @property
    def noise_factor(self) -> np.ndarray:
        """The 1 × 1 identity."""
        return np.ones((1, 1))


def _build_gaussian_sum(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                        method: str = "analytic", y_bound: float | None = None,
                        clip: bool = False) -> GaussianSumMechanism:
    return GaussianSumMechanism(d=d, epsilon=epsilon, delta=delta, method=method,
                                y_bound=y_bound, clip=clip)


# ----------------------------------------------------------------------------- helpers


_domain = declared_domain


def _targets(data: Dataset, domain: PublicDomain) -> np.ndarray:
    """The targets, checked against (or, with ``clip``, clipped into) the domain."""
    if not isinstance(data, Dataset):
        raise TypeError(f"data must be a Dataset, got {type(data).__name__}")
    return domain.targets(data.y)


def _clip_note(y_bound: float | None, clip: bool) -> str:
    return f"targets clipped to |y| <= {y_bound:g}" if clip and y_bound is not None else ""


def _check_bound(y_bound: float | None, clip: bool) -> None:
    if y_bound is not None and not (np.isfinite(y_bound) and y_bound > 0):
        raise ValueError(f"y_bound must be finite and > 0, got {y_bound!r}")
    if clip and y_bound is None:
        raise ValueError("clip=True needs a declared y_bound")


def _readonly(name: str, value: object, ndim: int | tuple[int, ...]) -> np.ndarray:
    arr = np.array(as_finite_array(name, value, ndim=ndim))
    arr.setflags(write=False)
    return arr


# ----------------------------------------------------------------------------- P.2 Laplace


@dataclass(frozen=True)
class LaplaceSumMechanism:
    """P.2: release Σ_i y_i + Lap(Δ₁/ε): pure ε-DP.

    ``relation="outputs"`` (default): outputs-only neighbours, |y_i − y_i'| ≤ d,
    so Δ₁ = d. ``relation="rows"``: one whole row substituted with every target
    bounded by ``|y| <= y_bound`` (required), so Δ₁ = 2·y_bound and ``d`` is unused.
    Targets must satisfy a declared bound (``clip=True`` clips them explicitly;
    the claim records it).
    """

    d: float
    epsilon: float
    y_bound: float | None = None
    clip: bool = False
    relation: str = "outputs"
    scale: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        outputs_only(self.d)  # validates d
        _check_bound(self.y_bound, self.clip)
        if self.relation not in ("outputs", "rows"):
            raise ValueError(f"relation must be 'outputs' or 'rows', got {self.relation!r}")
        if self.relation == "rows" and self.y_bound is None:
            raise ValueError("relation='rows' needs a declared y_bound (|y| <= y_bound)")
        object.__setattr__(self, "scale", laplace_scale(self.epsilon, self.sensitivity_bound()))

    @property
    def claim(self) -> PureDP:
        """ε-DP under the chosen neighbour relation."""
        rel = (whole_rows(self.y_bound) if self.relation == "rows"  # type: ignore[arg-type]
               else outputs_only(self.d))
        return PureDP(epsilon=self.epsilon, relation=rel, note=_clip_note(self.y_bound, self.clip),
                      domain=self.domain, float_tv=self.float_release().tv)

    def float_release(self) -> FloatRelease:
        """The public grid of the release and its float total variation τ (issue 20 §4)."""
        return laplace_release(self.scale)

    @property
    def domain(self) -> PublicDomain:
        """The declared public domain ``|y| <= y_bound``."""
        return _domain(self.y_bound, self.clip)

    @property
    def norm(self) -> L1:
        """The Laplace proof bounds the L1 norm of the query change."""
        return L1()

    def sensitivity_bound(self) -> float:
        """Δ₁ = d (outputs only) or 2·y_bound (whole rows)."""
        if self.relation == "rows":
            return 2.0 * float(self.y_bound)  # type: ignore[arg-type]
        return float(self.d)

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free sum of the targets, shape (1,) (float-safety rule: gain n)."""
        return np.array([math.fsum(self._targets(data))])

    def _targets(self, data: Dataset) -> np.ndarray:
        data = check_dataset(data)
        y = _targets(data, self.domain)
        fr = self.float_release()
        fr.check_domain(self.domain.y_bound, np.array([float(y.size)]))
        return y

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases Λ · round((Σ y + b L) / Λ), shape (n, 1) (issue 20 §4).

        L is :func:`~dpgp_audit.privacy.float_release.laplace_noise_exact_uniform`; the sum
        is evaluated and rounded exactly.
        """
        y = self._targets(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        noise = laplace_noise_exact_uniform(self.scale, (n, 1), rng)
        return self.float_release().round_linear(np.ones((1, y.size)), y, noise)


def _build_laplace_sum(data: Dataset, *, epsilon: float, d: float = 1.0,
                       y_bound: float | None = None, clip: bool = False,
                       relation: str = "outputs",
                       delta: float | None = None) -> LaplaceSumMechanism:
    return LaplaceSumMechanism(d=d, epsilon=epsilon, y_bound=y_bound, clip=clip,
                               relation=relation)


# ----------------------------------------------------------------------------- P.2 exponential


@dataclass(frozen=True, eq=False)
class ExponentialThresholdMechanism:
    """P.2: pick a threshold near the q-quantile of the targets with the exponential mechanism.

    Candidates t_1..t_k are public. The utility of t_j is
    u_j(D) = −|#{i : y_i > t_j} − q n|: changing one target (or one whole row)
    changes each count by at most 1, so Δu = 1 under both neighbour relations and
    selecting j with probability ∝ exp(ε u_j / 2) (S21 eq. 12) is ε-DP.

    :meth:`probabilities` gives the exact output distribution, so an auditor can
    compute the exact ε between two datasets (:meth:`privacy_loss`).
    """

    thresholds: np.ndarray
    epsilon: float
    d: float = 1.0
    quantile: float = 0.5
    y_bound: float | None = None
    clip: bool = False

    def __post_init__(self) -> None:
        t = _readonly("thresholds", self.thresholds, 1)
        if t.size < 2:
            raise ValueError("thresholds must hold at least two candidates")
        object.__setattr__(self, "thresholds", t)
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if not (0.0 <= float(self.quantile) <= 1.0):
            raise ValueError(f"quantile must lie in [0, 1], got {self.quantile!r}")
        _check_bound(self.y_bound, self.clip)
        outputs_only(self.d)  # validates d

    @property
    def claim(self) -> PureDP:
        """ε-DP; the utility sensitivity 1 holds for any target change, stated for bound d."""
        return PureDP(epsilon=self.epsilon, relation=outputs_only(self.d),
                      note=_clip_note(self.y_bound, self.clip))

    @property
    def norm(self) -> Linf:
        """The exponential mechanism's proof bounds the largest utility change."""
        return Linf()

    def utility_sensitivity(self) -> float:
        """Δu = 1 (counts move by at most one)."""
        return 1.0

    def sensitivity_bound(self) -> float:
        """max_j |u_j(D) − u_j(D′)| ≤ 1."""
        return self.utility_sensitivity()

    def utilities(self, data: Dataset) -> np.ndarray:
        """u_j(D) = −|#{i : y_i > t_j} − q n|, shape (k,)."""
        if not isinstance(data, Dataset):
            raise TypeError(f"data must be a Dataset, got {type(data).__name__}")
        y = data.y if self.y_bound is None else _targets(data, _domain(self.y_bound, self.clip))
        counts = np.sum(y[None, :] > self.thresholds[:, None], axis=1)
        return -np.abs(counts - self.quantile * y.size)

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free query the proof bounds: the utility vector."""
        data = check_dataset(data)
        return self.utilities(data)

    def log_probabilities(self, data: Dataset) -> np.ndarray:
        """Exact log P(output = j | data), shape (k,)."""
        return exponential_log_probabilities(self.utilities(data), self.epsilon,
                                             self.utility_sensitivity())

    def probabilities(self, data: Dataset) -> np.ndarray:
        """Exact P(output = j | data), shape (k,)."""
        return np.exp(self.log_probabilities(data))

    def privacy_loss(self, data0: Dataset, data1: Dataset) -> float:
        """Exact pure ε between two datasets: max_j |log P₀(j) − log P₁(j)|."""
        return float(np.max(np.abs(self.log_probabilities(data0)
                                   - self.log_probabilities(data1))))

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` selected candidate indices, shape (n,), dtype int64."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        return exponential_mechanism(self.utilities(data), self.epsilon,
                                     self.utility_sensitivity(), n, rng)


def _build_exponential(data: Dataset, *, epsilon: float, d: float = 1.0,
                       thresholds: np.ndarray | None = None, quantile: float = 0.5,
                       y_bound: float | None = None, clip: bool = False,
                       delta: float | None = None) -> ExponentialThresholdMechanism:
    t = np.linspace(-1.0, 1.0, 11) if thresholds is None else thresholds
    return ExponentialThresholdMechanism(thresholds=t, epsilon=epsilon, d=d, quantile=quantile,
                                         y_bound=y_bound, clip=clip)


# ----------------------------------------------------------------------------- P.4 multivariate


@dataclass(frozen=True, eq=False)
class MultivariateGaussianMechanism(LinearGaussianRelease):
    """P.4: release q = C y + σ Z, Z ~ N(0, M), under outputs-only neighbours (Hall Prop. 3).

    The change of q between neighbours is t·c_i with |t| ≤ d, so the Mahalanobis
    sensitivity is Δ_M = d max_i sqrt(c_iᵀ M⁺ c_i) (S18 eqs. 6 and 9) and
    σ = calibrate_gaussian(ε, δ, Δ_M, method).sigma. A singular M is accepted only
    if every column of C lies in its range; otherwise construction raises
    ``ValueError`` naming the column. The factor of M is computed once.

    Parameters
    ----------
    C
        (k, n) public matrix (e.g. GP posterior-mean weights, S18 eq. 8).
    M
        (k, k) symmetric PSD noise shape; ``None`` means the identity.
    """

    C: np.ndarray
    epsilon: float
    delta: float
    d: float = 1.0
    M: np.ndarray | None = None
    method: str = "analytic"
    y_bound: float | None = None
    clip: bool = False
    allow_unproven: bool = False
    mahalanobis: Mahalanobis = field(init=False, repr=False)
    delta_m: float = field(init=False, repr=False)
    calibration: GaussianCalibration = field(init=False, repr=False)
    factor: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        outputs_only(self.d)  # validates d
        C = _readonly("C", self.C, 2)
        object.__setattr__(self, "C", C)
        M = np.eye(C.shape[0]) if self.M is None else self.M
        M = _readonly("M", M, 2)
        object.__setattr__(self, "M", M)
        _check_bound(self.y_bound, self.clip)
        norm = Mahalanobis(M)
        delta_m = mahalanobis_sensitivity(norm, linear_query_changes(C, self.d))
        if delta_m == 0.0:
            raise ValueError("C is zero: the query does not depend on the data")
        cal = calibrate_gaussian(self.epsilon, self.delta, delta_m, self.method,
                                 allow_unproven=self.allow_unproven)
        factor = covariance_factor(M)
        factor.setflags(write=False)
        for name, value in (("mahalanobis", norm), ("delta_m", delta_m), ("calibration", cal),
                            ("factor", factor)):
            object.__setattr__(self, name, value)
        self.check_float_safety(C)

    @property
    def sigma(self) -> float:
        """The noise multiplier σ (noise covariance σ² M)."""
        return self.calibration.sigma

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP under outputs-only neighbours with bound d."""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        proven=self.calibration.proven, note=_clip_note(self.y_bound, self.clip),
                        domain=self.domain, float_tv=self.float_tv())

    @property
    def domain(self) -> PublicDomain:
        """The declared public domain ``|y| <= y_bound``."""
        return _domain(self.y_bound, self.clip)

    @property
    def norm(self) -> Mahalanobis:
        """The proof bounds the Mahalanobis norm w.r.t. M."""
        return self.mahalanobis

    def sensitivity_bound(self) -> float:
        """Δ_M = d max_i sqrt(c_iᵀ M⁺ c_i)."""
        return self.delta_m

    def query(self, data: Dataset) -> np.ndarray:
        """C y, shape (k,)."""
        C, y = self.linear_query(data)
        return C @ y

    def linear_query(self, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
        """``(C, y)``: the release evaluates C y exactly (issue 20 §4)."""
        data = check_dataset(data)
        y = _targets(data, self.domain)
        if y.size != self.C.shape[1]:
            raise ValueError(f"data has {y.size} targets but C has {self.C.shape[1]} columns")
        return self.C, y

    @property
    def noise_scale(self) -> float:
        """σ: the release is N(C y, σ² M) (mean/cov/sample from :class:`LinearGaussianRelease`)."""
        return self.sigma

    @property
    def noise_factor(self) -> np.ndarray:
        """F with F Fᵀ = M (computed once)."""
        return self.factor

    def noise_shape(self) -> np.ndarray:
        """M."""
        return self.M


def _default_grid(data: Dataset, k: int) -> np.ndarray:
    """Grid of k public points spanning the inputs' range (first input dimension; rest at mean)."""
    lo, hi = float(np.min(data.X[:, 0])), float(np.max(data.X[:, 0]))
    pad = 0.1 * (hi - lo) if hi > lo else 1.0
    G = np.tile(np.mean(data.X, axis=0), (k, 1))
    G[:, 0] = np.linspace(lo - pad, hi + pad, k)
    return G


def _build_multivariate(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                        lengthscale: float = 0.5, noise_variance: float = 0.1, k: int = 30,
                        covariance: str = "cloak", method: str = "analytic",
                        allow_unproven: bool = False) -> MultivariateGaussianMechanism:
    """GP posterior-mean weights C at k grid points; M = C Cᵀ ("cloak", singular if k > n) or I.

    Only the public inputs of ``data`` are used (the GP is conditioned on zeros to
    obtain C, which does not depend on the targets).
    """
    gp = ExactGP(EQ(lengthscale=lengthscale), noise_variance).fit(data.X, np.zeros(data.n))
    C = gp.mean_weights(_default_grid(data, k))
    if covariance == "cloak":
        M = C @ C.T
    elif covariance == "identity":
        M = None
    else:
        raise ValueError(f"covariance must be 'cloak' or 'identity', got {covariance!r}")
    return MultivariateGaussianMechanism(C=C, epsilon=epsilon, delta=delta, d=d, M=M,
                                         method=method, allow_unproven=allow_unproven)


# ----------------------------------------------------------------------------- P.5 functional


@dataclass(frozen=True, eq=False)
class FunctionalMechanism:
    """P.5: a kernel smoother f_D = Σ_i β_i k(·, x_i), β = W y, released at grid points + c·g.

    ``noise_variance=None`` gives the kernel-weighted sum (W = I); a value s² gives
    the GP posterior mean (W = (K + s² I)⁻¹, S18 §2). Under outputs-only
    neighbours the function changes by t Σ_i W_ij k(·, x_i), |t| ≤ d, so the exact
    RKHS sensitivity is Δ_H = d max_j sqrt((W K W)_jj) (S18 eqs. 3–4). The
    multiplier is c = :func:`functional_mechanism_scale` (ε, δ, Δ_H, method) and the
    release at the public grid is N(K_gX β, c² K_gg) (R Def. 3.3; Thm 4.1 for
    ``method="gdp"``).

    The query the proof bounds is the coefficient vector β, measured in the RKHS norm
    sqrt(βᵀ K β) of the public inputs; the white-box mean/cov are those of the grid
    release (whose Mahalanobis change is at most Δ_H / c by R Lemma A.2).
    """

    X: np.ndarray
    grid: np.ndarray
    kernel: Callable[[np.ndarray, np.ndarray], np.ndarray]
    epsilon: float
    delta: float
    d: float = 1.0
    method: str = "gdp"
    noise_variance: float | None = None
    y_bound: float | None = None
    clip: bool = False
    allow_unproven: bool = False
    gram: np.ndarray = field(init=False, repr=False)
    weights: np.ndarray = field(init=False, repr=False)
    cross: np.ndarray = field(init=False, repr=False)
    rkhs_sensitivity: float = field(init=False, repr=False)
    calibration: GaussianCalibration = field(init=False, repr=False)
    sampler: GPPathSampler = field(init=False, repr=False)
    inner_map: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        outputs_only(self.d)  # validates d
        X = _readonly("X", self.X, (1, 2))
        X = X.reshape(X.shape[0], -1)
        G = _readonly("grid", self.grid, (1, 2))
        G = G.reshape(G.shape[0], -1)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "grid", G)
        _check_bound(self.y_bound, self.clip)
        K = as_finite_array("kernel(X, X)", self.kernel(X, X), ndim=2)
        n = X.shape[0]
        if self.noise_variance is None:
            W = np.eye(n)
        else:
            s2 = float(self.noise_variance)
            if not (np.isfinite(s2) and s2 > 0):
                raise ValueError(f"noise_variance must be finite and > 0, got {s2!r}")
            W = cho_solve_lower(psd_cholesky(K + s2 * np.eye(n), name="K + noise_variance I"),
                                np.eye(n))
            W = (W + W.T) / 2.0
        WKW = W @ K @ W
        rkhs = float(self.d) * float(np.sqrt(np.max(np.clip(np.diag(WKW), 0.0, None))))
        cal = functional_mechanism_calibration(self.epsilon, self.delta, rkhs, self.method,
                                               allow_unproven=self.allow_unproven)
        cross = as_finite_array("kernel(grid, X)", self.kernel(G, X), ndim=2)
        for name, value in (("gram", K), ("weights", W), ("cross", cross)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "rkhs_sensitivity", rkhs)
        object.__setattr__(self, "calibration", cal)
        object.__setattr__(self, "sampler", GPPathSampler(self.kernel, G))
        # the grid release K_gX W y in the path's own coordinates: B = F⁺ K_gX W, F F = K_gg
        inner = factor_pinv(self.sampler.factor) @ (cross @ W)
        inner.setflags(write=False)
        object.__setattr__(self, "inner_map", inner)
        check_linear_release(self.domain, inner, self.float_release())

    def float_release(self) -> FloatRelease:
        """The public inner grid and the float total variation τ (issue 20 §4).

        The inner release ``B y + c z`` has iid noise of sd c, one per column of the path
        factor F; the grid release is F times it.
        """
        return iid_gaussian_release(np.full(self.sampler.factor.shape[1], self.scale))

    @property
    def scale(self) -> float:
        """The multiplier c of the GP noise path."""
        return self.calibration.sigma

    @property
    def mu(self) -> float:
        """Δ_H / c: the mechanism is μ-GDP with this μ (R Thm 4.1)."""
        return functional_mechanism_mu(self.scale, self.rkhs_sensitivity)

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP under outputs-only neighbours with bound d."""
        note = f"functional mechanism ({self.method}); mu = {self.mu:.6g}"
        clip = _clip_note(self.y_bound, self.clip)
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        proven=self.calibration.proven, note=f"{note}; {clip}" if clip else note,
                        domain=self.domain, float_tv=self.float_release().tv)

    @property
    def domain(self) -> PublicDomain:
        """The declared public domain ``|y| <= y_bound``."""
        return _domain(self.y_bound, self.clip)

    @property
    def norm(self) -> RKHS:
        """RKHS norm of Σ β_i k(·, x_i) over the public inputs."""
        return RKHS(self.gram)

    def sensitivity_bound(self) -> float:
        """Δ_H = d max_j sqrt((W K W)_jj)."""
        return self.rkhs_sensitivity

    def _check_inputs(self, data: Dataset) -> None:
        if data.X.shape != self.X.shape or not np.array_equal(data.X, self.X):
            raise ValueError("data.X differs from the public inputs the mechanism was built for "
                             "(outputs-only relation: X is fixed and public)")

    def query(self, data: Dataset) -> np.ndarray:
        """The coefficient vector β = W y, shape (n,)."""
        data = check_dataset(data)
        self._check_inputs(data)
        return self.weights @ _targets(data, self.domain)

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box: f_D at the grid, K_gX β."""
        return self.cross @ self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box: c² K_gg."""
        return self.sampler.covariance(self.scale)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases at the grid, shape (n, m), through a public grid (issue 20 §4).

        With the path factor F (F Fᵀ = K_gg) and B = F⁺ K_gX W, the inner release
        ``Λ · round((B y + c z) / Λ)`` is evaluated and rounded exactly and mapped by F:
        the grid release K_gX W y + c F z, its rounding inside the path's range.
        """
        data = check_dataset(data)
        self._check_inputs(data)
        y = _targets(data, self.domain)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        F = self.sampler.factor
        noise = self.scale * rng.standard_normal((n, F.shape[1]))
        return self.float_release().round_linear(self.inner_map, y, noise) @ F.T


def _build_functional(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                      lengthscale: float = 1.0, noise_variance: float | None = 0.1,
                      k: int = 12, method: str = "gdp",
                      allow_unproven: bool = False) -> FunctionalMechanism:
    return FunctionalMechanism(X=data.X, grid=_default_grid(data, k),
                               kernel=EQ(lengthscale=lengthscale), epsilon=epsilon, delta=delta,
                               d=d, method=method, noise_variance=noise_variance,
                               allow_unproven=allow_unproven)
