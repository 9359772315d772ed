"""DPSetConv: the differentially private SetConv encoder of the DPConvCNP (catalogue R.2).

R Alg. 3. From a context set ``D = ((x_n, y_n))`` the SetConv builds two
functions (R eq. 10)

    r_d(x) = Σ_n k(x, x_n)          (density)
    r_s(x) = Σ_n ỹ_n k(x, x_n)      (signal),  ỹ_n = clip(y_n, −C, C),

with ``k(x, x') = C_k exp(−||x − x'||² / (2λ²))`` (the RBF ψ of lengthscale λ
scaled by its bound ``C_k``; the paper takes ``C_k = 1``). Both functions lie in
the RKHS of ``k``; replacing one row moves them by at most (R App. A.4)

    Δ_d² = 2 C_k,     Δ_s² = 4 C² C_k          (R eq. 11, eqs. 22–30).

Each channel is released by the functional mechanism (R Thm 4.1): independent GP
paths ``g_d, g_s ~ GP(0, k)`` scaled by ``σ_d, σ_s``, evaluated on a public grid.
The two releases compose to μ-GDP with ``μ² = Δ_s²/σ_s² + Δ_d²/σ_d²`` (R Thm 4.2);
a split ``t ∈ (0, 1)`` of μ² fixes the scales (R eq. 12, written for general C_k):

    σ_s² = Δ_s² / (t μ²),      σ_d² = Δ_d² / ((1 − t) μ²).

On the grid the release is exactly a Gaussian mechanism: mean ``(r_d, r_s)`` at
the grid points and covariance ``blockdiag(σ_d² K, σ_s² K)`` with ``K`` the grid
Gram matrix (plus sampling jitter, which only adds noise). The class therefore
implements :class:`~dpgp_audit.contract.GaussianRelease` for the white-box
auditor and :class:`~dpgp_audit.contract.SensitivityQuery` (Mahalanobis norm of
that covariance, bound μ) for the sensitivity checker; :meth:`DPSetConv.channel_query`
exposes each channel with its own RKHS sensitivity (Mahalanobis norm of ``K``,
which never exceeds the RKHS norm, and attains it for points on the grid).

Finding (our analysis, tested): the composition bound is valid but not tight under
whole-row substitution. The density change is largest for two far-apart inputs,
the signal change for one input whose target flips sign; no single substitution
does both. The exact supremum of the joint privacy loss is
``μ · sqrt(max(1 − t/2, t))`` (see :meth:`DPSetConv.worst_case_mu`), e.g. 0.866 μ
at ``t = 1/2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, reduce
from typing import Literal

import numpy as np
from scipy import linalg

from dpgp_audit._validation import (
    check_delta,
    check_epsilon,
    check_positive_float,
    check_positive_int,
    check_rng,
)
from dpgp_audit.dataset import Dataset, check_dataset, clip_targets
from dpgp_audit.gp.grid import Grid, KroneckerGridSampler
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.norms import Mahalanobis
from dpgp_audit.privacy.claims import GaussianDP, whole_rows
from dpgp_audit.privacy.float_release import FloatRelease, iid_gaussian_release
from dpgp_audit.privacy.gdp import gdp_mu
from dpgp_audit.privacy.multivariate import factor_pinv

__all__ = [
    "ChannelQuery",
    "DPSetConv",
    "noise_scales",
    "rbf_factors",
    "setconv_channels",
]


def rbf_factors(dim: int, lengthscale: float, kernel_variance: float = 1.0) -> tuple[EQ, ...]:
    """The D-dimensional RBF k as a product of D one-dimensional EQ kernels (R eq. 44).

    ``C_k`` sits on the first factor, so the product has ``k(x, x) = C_k``.
    """
    return (EQ(lengthscale, kernel_variance),) + (EQ(lengthscale, 1.0),) * (dim - 1)


def noise_scales(mu: float, t: float, clip_bound: float,
                 kernel_variance: float = 1.0) -> tuple[float, float]:
    """``(σ_d, σ_s)`` from μ and the split t (R eq. 12; R Thm 4.2).

    ``σ_d² = 2 C_k / ((1 − t) μ²)`` and ``σ_s² = 4 C² C_k / (t μ²)``; with
    ``C_k = 1`` these are exactly R eq. (12).
    """
    mu = check_positive_float("mu", mu)
    t = float(t)
    if not (0.0 < t < 1.0):
        raise ValueError(f"t (the share of mu² spent on the signal channel) must lie in (0, 1), "
                         f"got {t!r}")
    C = float(clip_bound)
    ck = float(kernel_variance)
    if not (math.isfinite(C) and C > 0):
        raise ValueError(f"clip_bound must be finite and > 0, got {clip_bound!r}")
    if not (math.isfinite(ck) and ck > 0):
        raise ValueError(f"kernel_variance must be finite and > 0, got {kernel_variance!r}")
    sigma_d = math.sqrt(2.0 * ck / ((1.0 - t) * mu * mu))
    sigma_s = math.sqrt(4.0 * C * C * ck / (t * mu * mu))
    return sigma_d, sigma_s


def setconv_channels(X: np.ndarray, y: np.ndarray, points: np.ndarray, lengthscale: float,
                     kernel_variance: float = 1.0) -> np.ndarray:
    """The noise-free SetConv (R eq. 10) at ``points``: array of shape (2, len(points)).

    Row 0 is the density ``Σ_n k(·, x_n)``, row 1 the signal ``Σ_n y_n k(·, x_n)``;
    ``y`` must already be clipped.
    """
    X = np.asarray(X, dtype=float)
    points = np.asarray(points, dtype=float)
    if X.ndim != 2 or points.ndim != 2 or X.shape[1] != points.shape[1]:
        raise ValueError(f"X {X.shape} and points {points.shape} must be 2-D with equal columns")
    Kx = EQ(lengthscale, kernel_variance)(points, X)
    return np.stack([Kx.sum(axis=1), Kx @ np.asarray(y, dtype=float)])


@dataclass(frozen=True, eq=False)
class DPSetConv:
    """R Alg. 3: clip, SetConv on a public grid, add independent GP noise per channel.

    Parameters
    ----------
    grid
        The public discretisation grid (R Alg. 3 input ``x``); never derived from data.
    lengthscale
        λ of the RBF ψ, shared by the SetConv basis and the noise kernel.
    clip_bound
        C: targets are clipped to ``[−C, C]``.
    mu
        The total GDP budget μ (see :meth:`from_budget` for (ε, δ)).
    t
        Share of μ² spent on the signal channel (R eq. 12), in (0, 1).
    kernel_variance
        ``C_k``, the bound of the kernel (``k(x, x) = C_k``); 1 in the paper.
    clip
        ``True`` (the paper's algorithm): clip targets and record it in the claim.
        ``False``: refuse targets outside ``[−C, C]`` with ``ValueError``.
    jitter
        Relative jitter of the grid noise factorisation (only adds noise).

    Notes
    -----
    :meth:`sample` returns flat releases of length ``2 · grid.size`` (density
    block first, each block in C order); :meth:`as_channels` reshapes them.
    """

    grid: Grid
    lengthscale: float
    clip_bound: float
    mu: float
    t: float = 0.5
    kernel_variance: float = 1.0
    clip: bool = True
    jitter: float = 1e-10
    sigma_density: float = field(init=False)
    sigma_signal: float = field(init=False)
    sampler: KroneckerGridSampler = field(init=False, repr=False)

    def __post_init__(self) -> None:
        lam = float(self.lengthscale)
        if not (math.isfinite(lam) and lam > 0):
            raise ValueError(f"lengthscale must be finite and > 0, got {self.lengthscale!r}")
        sigma_d, sigma_s = noise_scales(self.mu, self.t, self.clip_bound, self.kernel_variance)
        object.__setattr__(self, "lengthscale", lam)
        object.__setattr__(self, "mu", float(self.mu))
        object.__setattr__(self, "t", float(self.t))
        object.__setattr__(self, "clip_bound", float(self.clip_bound))
        object.__setattr__(self, "kernel_variance", float(self.kernel_variance))
        object.__setattr__(self, "sigma_density", sigma_d)
        object.__setattr__(self, "sigma_signal", sigma_s)
        object.__setattr__(self, "sampler", KroneckerGridSampler(
            self.grid, rbf_factors(self.grid.dim, lam, self.kernel_variance), jitter=self.jitter))

    @classmethod
    def from_budget(cls, grid: Grid, *, epsilon: float, delta: float, lengthscale: float,
                    clip_bound: float, **kwargs: object) -> DPSetConv:
        """Build from (ε, δ): μ is the largest GDP parameter implying (ε, δ)-DP (R eq. 5)."""
        mu = gdp_mu(check_epsilon(epsilon), check_delta(delta))
        return cls(grid, lengthscale, clip_bound, mu, **kwargs)  # type: ignore[arg-type]

    # ----------------------------------------------------------------- claim & bounds
    @property
    def claim(self) -> GaussianDP:
        """μ-GDP under whole-row substitution (R Thm 4.2, Cor. 4.3)."""
        how = ("clipped to [-C, C] inside the mechanism (R Alg. 3 line 1)" if self.clip
               else "required to lie in [-C, C] (no clipping)")
        note = (f"targets {how}, C = {self.clip_bound:g}; density and signal channels released "
                f"by the GP functional mechanism (lengthscale {self.lengthscale:g}) and composed "
                f"in GDP with split t = {self.t:g}")
        return GaussianDP(mu=self.mu, relation=whole_rows(self.clip_bound), note=note,
                          float_tv=self.float_release.tv)

    @cached_property
    def float_release(self) -> FloatRelease:
        """The public inner grid and the float total variation τ (issue 20 §4).

        The release is rounded in the noise's own coordinates: per channel c the inner
        release ``R⁺ r_c + σ_c z`` (R = ⊗_d R_d the Kronecker root, z iid standard normals)
        carries iid noise of sd σ_c, and the grid release is R times it.
        """
        g = self.grid.size
        return iid_gaussian_release(np.concatenate([np.full(g, self.sigma_density),
                                                    np.full(g, self.sigma_signal)]))

    @cached_property
    def _root_pinvs(self) -> tuple[np.ndarray, ...]:
        return tuple(factor_pinv(R) for R in self.sampler.roots)

    def _to_inner(self, field: np.ndarray) -> np.ndarray:
        """R⁺ applied to grid fields of shape (..., *grid.shape), axis by axis."""
        lead = field.ndim - self.grid.dim
        for d, P in enumerate(self._root_pinvs):
            moved = np.moveaxis(field, lead + d, -1)
            field = np.moveaxis(moved @ P.T, -1, lead + d)
        return field

    @property
    def sensitivity_sq_density(self) -> float:
        """Δ_d² = 2 C_k (R eq. 26)."""
        return 2.0 * self.kernel_variance

    @property
    def sensitivity_sq_signal(self) -> float:
        """Δ_s² = 4 C² C_k (R eq. 30)."""
        return 4.0 * self.clip_bound**2 * self.kernel_variance

    def worst_case_mu(self) -> float:
        """The exact supremum of the joint privacy loss over whole-row neighbours.

        For a substitution ``(x₁, y₁) → (x₂, y₂)`` with ``κ = k(x₁, x₂)/C_k ∈ (0, 1]``
        the squared Mahalanobis distance is
        ``(1 − t) μ² (1 − κ) + t μ² (y₁² + y₂² − 2 y₁ y₂ κ) / (4 C²)``, maximised
        at ``y₁ = −y₂ = C``: ``μ² [(1 − t)(1 − κ) + t (1 + κ)/2]``, linear in κ,
        so the supremum is ``μ² max(1 − t/2, t)`` (κ → 0 or κ = 1). It is below the
        claimed μ for every t in (0, 1): R Thm 4.2 is valid but not tight.
        """
        return self.mu * math.sqrt(max(1.0 - self.t / 2.0, self.t))

    # ----------------------------------------------------------------- the query
    def clipped_targets(self, data: Dataset) -> np.ndarray:
        """ỹ = clip(y, −C, C) (R Alg. 3 line 1), or ``ValueError`` if clipping is off."""
        self._check_dim(data)
        y, _ = clip_targets(data.y, self.clip_bound, clip=self.clip)
        return y

    def channels(self, data: Dataset) -> np.ndarray:
        """Noise-free density and signal on the grid, shape ``(2, *grid.shape)``."""
        y = self.clipped_targets(data)
        out = setconv_channels(data.X, y, self.grid.points(), self.lengthscale,
                               self.kernel_variance)
        return out.reshape((2, *self.grid.shape))

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free release, flat: density block then signal block, length 2·grid.size."""
        data = check_dataset(data)
        return self.channels(data).ravel()

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box: the mean of the Gaussian release (= :meth:`query`)."""
        return self.query(data)

    def grid_covariance(self) -> np.ndarray:
        """``K``: the covariance of one unit-scale GP noise path on the grid (with jitter)."""
        return self.sampler.covariance()

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box: ``blockdiag(σ_d² K, σ_s² K)``, independent of the data."""
        return self._cov

    @cached_property
    def _cov(self) -> np.ndarray:
        K = self.grid_covariance()
        out = linalg.block_diag(self.sigma_density**2 * K, self.sigma_signal**2 * K)
        out.setflags(write=False)
        return out

    @cached_property
    def norm(self) -> Mahalanobis:
        """The proof's norm for the joint release: Mahalanobis of the noise covariance."""
        return Mahalanobis(self._cov)

    def sensitivity_bound(self) -> float:
        """The joint bound: μ (the whitened sensitivity of R Lemma A.3 composed, R Thm 4.2)."""
        return self.mu

    def channel_query(self, channel: Literal["density", "signal"]) -> ChannelQuery:
        """One channel with its own RKHS sensitivity (Δ_d or Δ_s), for the sensitivity checker."""
        if channel not in ("density", "signal"):
            raise ValueError(f"channel must be 'density' or 'signal', got {channel!r}")
        return ChannelQuery(self, channel)

    # ----------------------------------------------------------------- sampling
    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape ``(n, 2 · grid.size)``; one grid factorisation for all."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        r = self.channels(data)
        z = rng.standard_normal((2 * n, *self.grid.shape)).reshape((n, 2, *self.grid.shape))
        scale = np.array([self.sigma_density, self.sigma_signal]).reshape(
            (1, 2) + (1,) * self.grid.dim)
        fr = self.float_release
        # |channels| <= n C_k (density) and n C C_k (signal), so |R⁺ r| <= that times the
        # row sums of |R⁺| (a Kronecker product of the per-axis ones): the float-safety rule
        rows = reduce(np.kron, [np.sum(np.abs(P), axis=1) for P in self._root_pinvs])
        top = data.n * self.kernel_variance * np.concatenate([rows, self.clip_bound * rows])
        fr.check_domain(1.0, top, what="statistics bound")
        inner = fr.round(self._to_inner(r).ravel(), (scale * z).reshape(n, -1))
        out = self.sampler.apply(inner.reshape((2 * n, *self.grid.shape)))
        return out.reshape(n, -1)

    def as_channels(self, released: np.ndarray) -> np.ndarray:
        """Reshape flat releases ``(..., 2·grid.size)`` to ``(..., 2, *grid.shape)``."""
        released = np.asarray(released)
        return released.reshape((*released.shape[:-1], 2, *self.grid.shape))

    def _check_dim(self, data: Dataset) -> None:
        if data.dim != self.grid.dim:
            raise ValueError(f"data has {data.dim} input dimension(s) but the grid has "
                             f"{self.grid.dim}")


@dataclass(frozen=True, eq=False)
class ChannelQuery:
    """One DPSetConv channel as a :class:`~dpgp_audit.contract.SensitivityQuery`.

    ``query`` is the channel on the grid, ``norm`` the Mahalanobis norm of the
    unit-scale noise covariance ``K`` (at most the RKHS norm, R Lemma A.2) and
    ``sensitivity_bound`` is ``sqrt(2 C_k)`` (density) or ``2 C sqrt(C_k)`` (signal).
    """

    mechanism: DPSetConv
    channel: Literal["density", "signal"]

    @property
    def claim(self) -> GaussianDP:
        """The parent mechanism's claim (for its neighbour relation)."""
        return self.mechanism.claim

    @cached_property
    def norm(self) -> Mahalanobis:
        """Mahalanobis norm of the grid Gram matrix K."""
        return Mahalanobis(self.mechanism.grid_covariance())

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free channel on the grid, flat."""
        data = check_dataset(data)
        return self.mechanism.channels(data)[0 if self.channel == "density" else 1].ravel()

    def sensitivity_bound(self) -> float:
        """Δ_d = sqrt(2 C_k) or Δ_s = 2 C sqrt(C_k) (R eqs. 26, 30)."""
        m = self.mechanism
        sq = m.sensitivity_sq_density if self.channel == "density" else m.sensitivity_sq_signal
        return math.sqrt(sq)


def _build_dpsetconv(data: Dataset, *, epsilon: float, delta: float, clip_bound: float = 1.0,
                     t: float = 0.5, lengthscale: float = 1.0,
                     window: tuple[float, float] = (0.0, 10.0),
                     points_per_unit: float = 2.0) -> DPSetConv:
    # Only the input dimension is read from the data: the grid is a public window.
    grid = Grid.from_window([window[0]] * data.dim, [window[1]] * data.dim, points_per_unit)
    return DPSetConv.from_budget(grid, epsilon=epsilon, delta=delta, lengthscale=lengthscale,
                                 clip_bound=clip_bound, t=t)
