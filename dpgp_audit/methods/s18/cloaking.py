"""S18.2 — the cloaking mechanism (S18 §3, eqs. 6–9; S18-supp Alg. 1).

A linear release ``f_* = C y`` (for GP regression C = K_*f K⁻¹, S18 eq. 8) is made private
by Gaussian noise shaped by the cloaking covariance M = Σ_i λ_i c_i c_iᵀ
(:mod:`dpgp_audit.gp.cloaking`):

    f̃_* = f_* + σ z,   z ~ N(0, M),   σ = calibrate(ε, δ, d·Δ),   Δ = sqrt(max_i c_iᵀM⁺c_i).

With ``method="hall"`` σ = c(δ)·Δ·d/ε, c(δ) = sqrt(2 ln(2/δ)) (S18 eqs. 2, 7; Alg. 1 line 8);
``"analytic"``/``"gdp"`` give the smallest σ for any ε. Δ is computed from the M actually
used, with the square root (Alg. 1's CALCDELTA omits it; see ``delta_rule``).

:class:`CloakingMechanism` works for any linear map C (reused by S21: sparse, Gibbs and
classification cloaking); :class:`CloakingGP` builds C from an exact GP.

Numerical range handling (``rank_rtol``, ``floor``): the noise lives in span{c_i}
(dimension r = numerical rank of C). The released mean is projected onto that span
(``Q Qᵀ C y``; the discarded part is below ``rank_rtol · s_max(C) · ‖y‖``) so that every
possible change is exactly inside the range of the noise, and a small floor
``floor · λ_max(M)`` of extra noise is added within the span so that the covariance is
numerically full rank there. Both only ever *add* privacy. Δ is recomputed for the
covariance actually released, and a range check refuses the release if any change leaves
it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import linalg

from dpgp_audit._validation import (
    as_finite_array,
    check_positive_float,
    check_rng,
)
from dpgp_audit.dataset import Dataset, check_public_inputs
from dpgp_audit.gp.cloaking import (
    CloakingSolution,
    calc_delta_paper,
    range_basis,
    solve_cloaking,
    solve_cloaking_paper,
)
from dpgp_audit.gp.kernels import Kernel
from dpgp_audit.gp.linalg import FactoredMatrix
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.methods.linear_gaussian import LinearGaussianRelease
from dpgp_audit.norms import Mahalanobis
from dpgp_audit.privacy.calibrate import GaussianCalibration, calibrate_gaussian
from dpgp_audit.privacy.claims import ApproxDP, outputs_only
from dpgp_audit.privacy.domain import PublicDomain, declared_domain
from dpgp_audit.privacy.float_release import FloatRelease

__all__ = ["CloakedRelease", "CloakingGP", "CloakingMechanism", "cloaking_gp"]

#: The released map Q Qᵀ C is stored and evaluated exactly (issue 20 §4) up to this many
#: entries (32 MB); a larger sparse release rounds its float query instead.
_EXACT_MAP_ENTRIES = 4_000_000

DeltaRule = Literal["mahalanobis", "paper-calcdelta"]


@dataclass(frozen=True, eq=False)
class CloakingMechanism(LinearGaussianRelease):
    """The cloaking mechanism on a fixed linear map ``C`` (k × n): release C y + σ z, z ~ N(0, M).

    Parameters
    ----------
    C
        Public linear map (column i: change of the release per unit change of y_i), dense or
        as a :class:`~dpgp_audit.gp.linalg.FactoredMatrix` ``F G`` (sparse GPs: O(n m²)
        time, O(n m) memory; the release is the same).
    d
        Outputs-only neighbour bound |y_i − y_i′| ≤ d.
    epsilon, delta
        Target privacy.
    method
        ``"hall"`` (S18, ε ≤ 1), ``"classical"`` (ε ≤ 1), ``"analytic"`` or ``"gdp"``.
    allow_unproven
        Permit the ε ≤ 1 calibrations above ε = 1 (claim marked unproven).
    solver
        ``"fast"`` (:func:`~dpgp_audit.gp.cloaking.solve_cloaking`) or ``"paper"``
        (S18-supp Alg. 1; needs ``solver_rng``).
    solution
        A precomputed :class:`CloakingSolution` (skips the solver).
    delta_rule
        ``"mahalanobis"`` (correct: sqrt of the largest leverage of the released covariance)
        or ``"paper-calcdelta"`` (Alg. 1 line 40 verbatim, no square root; for the planted
        pitfall only).
    y_bound, clip
        Declared public domain |y| <= y_bound (default
        :data:`~dpgp_audit.privacy.domain.DEFAULT_Y_BOUND`); ``clip=True`` clips explicitly.
        Construction refuses a bound at which rounding of the largest possible release
        would be visible next to the noise (:func:`~dpgp_audit.privacy.domain.
        check_linear_release`), and gives the largest safe bound.
    rank_rtol, floor
        Numerical range handling (module docstring). The floor adds ``floor · λ_max`` to
        every eigenvalue of the solver's M on span{c_i}: more noise, never less. Every
        reported quantity is that of the covariance actually released (floor included):
        :attr:`M`, :attr:`delta_m` (so σ), :attr:`logdet`; the solver's own values stay on
        :attr:`solution`. On ill-conditioned C the floor can move Δ and the released
        standard deviations by a few per cent (``benchmarks/bench_sparse_scale.py``
        measures it); set ``floor=0`` only for a well-conditioned C (the Cholesky factor
        then still has to exist, or the release is refused).

    Attributes
    ----------
    M
        The released noise shape (σ² M is the covariance), floor included.
    delta_m
        Δ = sqrt(max_i c_iᵀ M⁺ c_i) for the released M (≤ the solver's Δ).
    logdet
        log pseudo-determinant of the released M (on span{c_i}).
    floor_added
        The multiple of the identity on span{c_i} added by the floor.
    """

    C: np.ndarray | FactoredMatrix
    d: float
    epsilon: float
    delta: float
    method: str = "hall"
    allow_unproven: bool = False
    solver: str = "fast"
    solver_rng: np.random.Generator | None = field(default=None, repr=False)
    solution: CloakingSolution | None = field(default=None, repr=False)
    delta_rule: DeltaRule = "mahalanobis"
    y_bound: float | None = None
    clip: bool = False
    rank_rtol: float = 1e-10
    floor: float = 1e-9
    M: np.ndarray = field(init=False, repr=False)
    delta_m: float = field(init=False)
    logdet: float = field(init=False)
    floor_added: float = field(init=False)
    calibration: GaussianCalibration = field(init=False, repr=False)
    _Q: np.ndarray = field(init=False, repr=False)
    _factor: np.ndarray = field(init=False, repr=False)
    _map: np.ndarray | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        if isinstance(self.C, FactoredMatrix):
            C = self.C  # immutable, validated factors (S21.2 at scale: no k × n array)
        else:
            C = as_finite_array("C", self.C, ndim=2)
            C = C.copy()
            C.setflags(write=False)
            object.__setattr__(self, "C", C)
        d = check_positive_float("d", self.d)
        sol = self.solution
        Q = None
        if sol is None:
            if self.solver == "fast":
                sol = solve_cloaking(C, rtol=self.rank_rtol)
                Q = sol.basis  # range_basis(C, rtol=rank_rtol), computed by the solver
            elif self.solver == "paper":
                if self.solver_rng is None:
                    raise ValueError("solver='paper' needs solver_rng (Alg. 1 line 17 draws "
                                     "a random initialisation)")
                sol = solve_cloaking_paper(C, check_rng(self.solver_rng))
            else:
                raise ValueError(f"solver must be 'fast' or 'paper', got {self.solver!r}")
            object.__setattr__(self, "solution", sol)
        if Q is None:
            Q = range_basis(C, rtol=self.rank_rtol)[0]
        # noise covariance in the reduced coordinates of span{c_i}
        R = Q.T @ sol.M @ Q
        R = 0.5 * (R + R.T)
        w = linalg.eigvalsh(R)
        if w[0] < -1e-8 * max(w[-1], 0.0) or w[-1] <= 0:
            raise ValueError(
                f"the cloaking covariance is not positive semi-definite on span{{c_i}} "
                f"(eigenvalues {w[0]:.3g} .. {w[-1]:.3g}): the optimiser (solver="
                f"{self.solver!r}) left negative weights; refusing to release")
        if not (np.isfinite(self.floor) and self.floor >= 0):
            raise ValueError(f"floor must be finite and >= 0, got {self.floor!r}")
        floor_added = float(self.floor) * float(w[-1])
        R = R + floor_added * np.eye(R.shape[0])
        try:
            Lr = linalg.cholesky(R, lower=True)
        except linalg.LinAlgError as err:
            raise ValueError("the cloaking covariance is singular on span{c_i}; increase "
                             "floor (range check failed, refusing to release)") from err
        A = Q.T @ C
        B = linalg.solve_triangular(Lr, A, lower=True)
        lev = np.einsum("ij,ij->j", B, B)
        # range check: with the projection Q Qᵀ every change lies in span(Q) = range(M);
        # refuse if a column is numerically outside span(Q) by more than rank_rtol allows.
        if isinstance(C, FactoredMatrix):  # ‖(I − QQᵀ) F g_i‖ through an m × m Gram matrix
            Fp = C.F - Q @ (Q.T @ C.F)
            resid = np.sqrt(np.maximum(np.einsum("ij,ij->j", C.G, (Fp.T @ Fp) @ C.G), 0.0))
            wg, Ug = np.linalg.eigh(C.G @ C.G.T)  # ‖F G‖₂ = ‖F (G Gᵀ)^{1/2}‖₂
            smax = float(np.linalg.norm(C.F @ (Ug * np.sqrt(np.maximum(wg, 0.0))), 2))
        else:
            resid = np.linalg.norm(C - Q @ A, axis=0)
            smax = float(np.linalg.norm(C, 2))
        if np.any(resid > 10 * self.rank_rtol * smax + 1e-300):
            raise ValueError("range check failed: a column of C leaves span{c_i}")
        if self.delta_rule == "mahalanobis":
            delta_m = float(np.sqrt(np.max(lev)))
        elif self.delta_rule == "paper-calcdelta":
            delta_m = calc_delta_paper(sol.lam, C)
        else:
            raise ValueError(f"delta_rule must be 'mahalanobis' or 'paper-calcdelta', got "
                             f"{self.delta_rule!r}")
        cal = calibrate_gaussian(self.epsilon, self.delta, d * delta_m, self.method,  # type: ignore[arg-type]
                                 allow_unproven=self.allow_unproven)
        M = Q @ R @ Q.T
        M = 0.5 * (M + M.T)
        factor = Q @ Lr
        for name, val in (("M", M), ("_Q", Q), ("_factor", factor)):
            val.setflags(write=False)
            object.__setattr__(self, name, val)
        object.__setattr__(self, "delta_m", delta_m)
        object.__setattr__(self, "logdet", float(2.0 * np.sum(np.log(np.diag(Lr)))))
        object.__setattr__(self, "floor_added", floor_added)
        object.__setattr__(self, "calibration", cal)
        released = Q @ A  # the released map Q Qᵀ C
        self.check_float_safety(released)
        if released.size <= _EXACT_MAP_ENTRIES:  # evaluated exactly (issue 20 §4)
            released.setflags(write=False)
            object.__setattr__(self, "_map", released)

    @property
    def domain(self) -> PublicDomain:
        """The declared public domain |y| <= y_bound."""
        return declared_domain(self.y_bound, self.clip)

    # -- contract -------------------------------------------------------------------
    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP under outputs-only neighbours with bound d."""
        notes = [f"cloaking, calibration={self.method}", f"solver={self.solver}",
                 f"noise floor {self.floor:g} x lambda_max(M) on span(C) (adds noise; "
                 f"Delta is that of the released M)"]
        if self.clip:
            notes.append(f"targets clipped to |y| <= {self.y_bound:g}")
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        proven=self.calibration.proven, note="; ".join(notes),
                        domain=self.domain, float_tv=self.float_tv())

    @property
    def sigma(self) -> float:
        """Noise multiplier σ (S18 eq. 7: c(δ)·Δ·d/ε for ``hall``)."""
        return self.calibration.sigma

    @property
    def norm(self) -> Mahalanobis:
        """Mahalanobis norm w.r.t. the released noise shape M (S18 eq. 6)."""
        return Mahalanobis(np.array(self.M))

    def sensitivity_bound(self) -> float:
        """d·Δ, the Mahalanobis sensitivity of C y under outputs-only neighbours."""
        return float(self.d) * self.delta_m

    def _targets(self, data: Dataset | np.ndarray) -> np.ndarray:
        y = data.y if isinstance(data, Dataset) else as_finite_array("y", data, ndim=1)
        if y.shape[0] != self.C.shape[1]:
            raise ValueError(f"expected {self.C.shape[1]} targets, got {y.shape[0]}")
        return self.domain.targets(y)

    def query(self, data: Dataset) -> np.ndarray:
        """Noise-free release ``Q Qᵀ C y`` (C y projected on span{c_i})."""
        return self._Q @ (self._Q.T @ (self.C @ self._targets(data)))

    def linear_query(self, data: Dataset) -> tuple[np.ndarray, np.ndarray] | None:
        """``(Q Qᵀ C, y)`` for an exact evaluation, when the map has at most
        :data:`_EXACT_MAP_ENTRIES` entries (else ``None``: the float query is rounded).
        """
        if self._map is None:
            return None
        return self._map, self._targets(data)

    # mean = query, cov = σ² M and sample: LinearGaussianRelease
    @property
    def noise_scale(self) -> float:
        """σ."""
        return self.sigma

    @property
    def noise_factor(self) -> np.ndarray:
        """F = Q L_R with F Fᵀ = M."""
        return self._factor

    def noise_shape(self) -> np.ndarray:
        """M (as released, floor included)."""
        return self.M


class CloakedRelease(ABC):
    """Mechanism, GaussianRelease and SensitivityQuery by delegation to a cloaking mechanism.

    Abstract shared base of :class:`CloakingGP` and
    :class:`dpgp_audit.methods.s21.mechanisms.LinearCloakingRelease` (never released as
    is): a subclass holds the fixed public inputs ``X`` and a :class:`CloakingMechanism`
    ``mechanism``, may set a public ``offset`` added to every release, and implements
    :meth:`_check` (at least :meth:`_check_public_inputs`). The outputs-only relation fixes
    X, so a dataset with other inputs is refused.
    """

    X: np.ndarray
    mechanism: CloakingMechanism
    offset: np.ndarray | None = None

    def _check_public_inputs(self, data: Dataset) -> Dataset:
        return check_public_inputs(data, self.X)

    @abstractmethod
    def _check(self, data: Dataset) -> Dataset:
        """Validate ``data`` before any query or release (public inputs, label domain...)."""

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP, outputs only with bound d (d = 2 for ±1 labels)."""
        return self.mechanism.claim

    @property
    def norm(self) -> Mahalanobis:
        """Mahalanobis norm of the noise shape M (S18 eq. 6)."""
        return self.mechanism.norm

    @property
    def C(self) -> np.ndarray:
        """The public linear map (for an exact GP the cloaking matrix K_*f K⁻¹, S18 eq. 8)."""
        return self.mechanism.C

    def sensitivity_bound(self) -> float:
        """The bound d · Δ."""
        return self.mechanism.sensitivity_bound()

    @property
    def noise_factor(self) -> np.ndarray:
        """The public factor F of the noise shape M = F Fᵀ (methods/linear_gaussian.py)."""
        return self.mechanism.noise_factor

    def float_release(self) -> FloatRelease:
        """The public inner grid the release is rounded to, and its float total variation."""
        return self.mechanism.float_release()

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free release (for :class:`CloakingGP` the posterior mean at ``Xs``)."""
        q = self.mechanism.query(self._check(data))
        return q if self.offset is None else q + self.offset

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box mean."""
        return self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box covariance σ² M (data-independent)."""
        return self.mechanism.cov(self._check(data))

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` DP releases, shape (n, k): the public offset is inside the exact, rounded sum."""
        return self.mechanism.sample(self._check(data), n, rng, offset=self.offset)


@dataclass(frozen=True, eq=False)
class CloakingGP(CloakedRelease):
    """S18.2 on an exact GP: C = K_*f (K + σ_n² I)⁻¹ at public test inputs ``Xs``.

    Implements the mechanism contract by delegation to :attr:`mechanism`
    (:class:`CloakedRelease`), and :meth:`predict` returns the DP mean, the GP posterior
    variance (public: it does not depend on y) and the DP noise covariance.
    """

    kernel: Kernel
    noise_variance: float
    X: np.ndarray
    Xs: np.ndarray
    d: float
    epsilon: float
    delta: float
    method: str = "hall"
    allow_unproven: bool = False
    solver: str = "fast"
    solver_rng: np.random.Generator | None = field(default=None, repr=False)
    y_bound: float | None = None
    clip: bool = False
    mechanism: CloakingMechanism = field(init=False, repr=False)
    post_var: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        X = as_finite_array("X", self.X, ndim=(1, 2))
        X = X[:, None] if X.ndim == 1 else X
        Xs = as_finite_array("Xs", self.Xs, ndim=(1, 2))
        Xs = Xs[:, None] if Xs.ndim == 1 else Xs
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "Xs", Xs)
        fitted = ExactGP(self.kernel, self.noise_variance).fit(X, np.zeros(X.shape[0]))
        C = fitted.mean_weights(Xs)
        _, var = fitted.predict(Xs)
        var.setflags(write=False)
        object.__setattr__(self, "post_var", var)
        object.__setattr__(self, "mechanism", CloakingMechanism(
            C, self.d, self.epsilon, self.delta, method=self.method,
            allow_unproven=self.allow_unproven, solver=self.solver, solver_rng=self.solver_rng,
            y_bound=self.y_bound, clip=self.clip))

    def _check(self, data: Dataset) -> Dataset:
        return self._check_public_inputs(data)

    def predict(self, data: Dataset, rng: np.random.Generator,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One release: (DP mean (k,), GP posterior variance (k,), DP noise covariance (k, k))."""
        return self.sample(data, 1, rng)[0], np.array(self.post_var), self.cov(data)


def cloaking_gp(data: Dataset, Xs: np.ndarray, kernel: Kernel, noise_variance: float, *,
                d: float, epsilon: float, delta: float, **kwargs: object) -> CloakingGP:
    """Convenience constructor: cloaking on the public inputs of ``data`` (y is not read)."""
    return CloakingGP(kernel, noise_variance, data.X, Xs, d, epsilon, delta, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- registry
def _build_cloaking(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                    lengthscale: float = 1.5, noise_variance: float = 0.1,
                    method: str = "hall", Xs: np.ndarray | None = None,
                    allow_unproven: bool = False, y_bound: float | None = None,
                    clip: bool = False) -> CloakingGP:
    from dpgp_audit.gp.kernels import EQ
    from dpgp_audit.methods.s18.standard import default_test_inputs

    Xs = default_test_inputs() if Xs is None else Xs
    return CloakingGP(EQ(lengthscale=lengthscale, variance=1.0), noise_variance, data.X, Xs, d,
                      epsilon, delta, method=method, allow_unproven=allow_unproven,
                      y_bound=y_bound, clip=clip)
