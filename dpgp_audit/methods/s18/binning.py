"""S18.3 — binning baselines (S18 §4): DP bin means, simple and integral-kernel predictions.

Inputs X are public (outputs-only relation), so the bin counts n_b are public. Bins are
half-open boxes [e_k, e_{k+1}) per dimension (the last one closed on the right), so every
point falls in exactly one bin. Changing one target by at most d moves one bin mean by at
most d/n_b; adding Laplace noise of scale d/(n_b ε) to every non-empty bin mean is ε-DP
(each bin is its own Laplace mechanism; a neighbour touches one bin). The Gaussian variant
uses σ_b = calibrate(ε, δ, d/n_b).

Empty bins carry no data; they are released as a public ``fill_value`` (the paper fills
them with the population mean, which is itself private and would need its own budget).

Predictions are post-processing of the release: *simple binning* predicts each test point
by its bin's DP mean; *integral binning* fits a GP whose observations are averages of the
latent function over the bins (:class:`~dpgp_audit.gp.integral_kernel.IntegralEQ`), with
a per-bin noise variance: within-bin sampling noise σ_n²/n_b plus the DP noise variance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import as_finite_array, check_epsilon, check_positive_int, check_rng
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.integral_kernel import IntegralEQ, points_as_boxes
from dpgp_audit.gp.linalg import cho_solve_lower, psd_cholesky
from dpgp_audit.norms import Mahalanobis
from dpgp_audit.privacy.calibrate import GaussianCalibration, calibrate_gaussian
from dpgp_audit.privacy.claims import ApproxDP, PureDP, outputs_only
from dpgp_audit.privacy.domain import PublicDomain, check_linear_release, declared_domain
from dpgp_audit.privacy.float_release import (
    FloatRelease,
    iid_gaussian_release,
    laplace_noise_exact_uniform,
    laplace_release,
)

__all__ = [
    "GaussianBinning",
    "LaplaceBinning",
    "WeightedL1",
    "bin_boxes",
    "bin_index",
    "integral_binning_predict",
    "make_edges",
    "simple_binning_predict",
]


def make_edges(lower: Sequence[float], upper: Sequence[float],
               n_bins: int | Sequence[int]) -> list[np.ndarray]:
    """Equal-width bin edges per dimension over the public domain [lower, upper]."""
    lo = np.atleast_1d(np.asarray(lower, dtype=float))
    hi = np.atleast_1d(np.asarray(upper, dtype=float))
    nb = np.broadcast_to(np.asarray(n_bins), lo.shape)
    if np.any(hi <= lo):
        raise ValueError("upper must exceed lower in every dimension")
    return [np.linspace(a, b, check_positive_int("n_bins", int(k)) + 1)
            for a, b, k in zip(lo, hi, nb, strict=True)]


def bin_index(X: np.ndarray, edges: Sequence[np.ndarray]) -> np.ndarray:
    """Flat bin index of each row of X; half-open bins, last bin closed; outside -> error."""
    X = as_finite_array("X", X, ndim=(1, 2))
    X = X[:, None] if X.ndim == 1 else X
    if X.shape[1] != len(edges):
        raise ValueError(f"X has {X.shape[1]} columns but edges are given for {len(edges)}")
    flat = np.zeros(X.shape[0], dtype=np.int64)
    for d, e in enumerate(edges):
        x = X[:, d]
        if np.any((x < e[0]) | (x > e[-1])):
            raise ValueError(f"inputs outside the binned domain [{e[0]:g}, {e[-1]:g}] in "
                             f"dimension {d}: extend the (public) bin edges")
        idx = np.searchsorted(e, x, side="right") - 1
        idx = np.minimum(idx, e.size - 2)  # x == upper edge -> last bin
        flat = flat * (e.size - 1) + idx
    return flat


def bin_boxes(edges: Sequence[np.ndarray]) -> np.ndarray:
    """Rows [lower…, upper…] of every bin, in flat-index order (for the integral kernel)."""
    grids = np.meshgrid(*[np.arange(e.size - 1) for e in edges], indexing="ij")
    idx = [g.ravel() for g in grids]
    lo = np.column_stack([e[i] for e, i in zip(edges, idx, strict=True)])
    hi = np.column_stack([e[i + 1] for e, i in zip(edges, idx, strict=True)])
    return np.hstack([lo, hi])


@dataclass(frozen=True)
class WeightedL1:
    """Σ_b w_b |v_b|: the norm in which per-bin Laplace noise of scale 1/(w_b ε) is ε-DP."""

    weights: np.ndarray
    name: str = "weighted-L1"

    def __call__(self, diff: np.ndarray) -> float:
        """Weighted L1 norm of ``diff``."""
        return float(np.sum(np.asarray(self.weights) * np.abs(np.ravel(diff))))


@dataclass(frozen=True, eq=False)
class _Binning:
    X: np.ndarray
    edges: tuple
    d: float
    epsilon: float
    y_bound: float | None = None
    clip: bool = False
    fill_value: float = 0.0
    counts: np.ndarray = field(init=False, repr=False)
    occupied: np.ndarray = field(init=False, repr=False)
    _idx: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        X = as_finite_array("X", self.X, ndim=(1, 2))
        X = X[:, None] if X.ndim == 1 else X
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "edges", tuple(np.asarray(e, dtype=float) for e in self.edges))
        check_epsilon(self.epsilon)
        if not (np.isfinite(self.d) and self.d > 0):
            raise ValueError(f"d must be finite and > 0, got {self.d!r}")
        idx = bin_index(X, self.edges)
        n_total = int(np.prod([e.size - 1 for e in self.edges]))
        counts = np.bincount(idx, minlength=n_total).astype(float)
        occupied = np.flatnonzero(counts > 0)
        for name, val in (("counts", counts), ("occupied", occupied), ("_idx", idx)):
            val.setflags(write=False)
            object.__setattr__(self, name, val)

    @property
    def bin_sensitivity(self) -> np.ndarray:
        """Per-bin sensitivity d / n_b of the occupied bins (S18 §4)."""
        return self.d / self.counts[self.occupied]

    def _targets(self, data: Dataset) -> np.ndarray:
        if not isinstance(data, Dataset):
            raise TypeError(f"data must be a Dataset, got {type(data).__name__}")
        if data.X.shape != self.X.shape or not np.array_equal(data.X, self.X):
            raise ValueError("data.X differs from the public inputs X the bins were built for")
        return self.domain.targets(data.y)

    @property
    def domain(self) -> PublicDomain:
        """The declared public domain |y| <= y_bound."""
        return declared_domain(self.y_bound, self.clip)

    @property
    def noise_sd(self) -> np.ndarray:
        """Noise sd of each occupied bin's release, sqrt of the subclass's noise_variance."""
        return np.sqrt(self.noise_variance)  # type: ignore[attr-defined]

    def query(self, data: Dataset) -> np.ndarray:
        """Bin means of the occupied bins (a bin mean is at most y_bound: gain 1)."""
        y = self._checked_targets(data)
        sums = np.bincount(self._idx, weights=y, minlength=self.counts.size)
        return sums[self.occupied] / self.counts[self.occupied]

    def _checked_targets(self, data: Dataset) -> np.ndarray:
        y = self._targets(data)
        check_linear_release(self.domain, np.ones((self.occupied.size, 1)),
                             self.float_release())  # type: ignore[attr-defined]
        return y

    @property
    def mean_map(self) -> np.ndarray:
        """The public linear map of the occupied-bin means: row b holds 1/n_b on its inputs."""
        M = np.zeros((self.occupied.size, self.X.shape[0]))
        pos = np.full(self.counts.size, -1)
        pos[self.occupied] = np.arange(self.occupied.size)
        M[pos[self._idx], np.arange(self.X.shape[0])] = 1.0 / self.counts[self._idx]
        return M

    def _release(self, data: Dataset, noise: np.ndarray) -> np.ndarray:
        """Λ · round((bin means + noise) / Λ), the means evaluated exactly (issue 20 §4)."""
        y = self._checked_targets(data)
        return self.float_release().round_linear(self.mean_map, y, noise)  # type: ignore

    def sensitivity_bound(self) -> float:
        """1 in the per-bin scaled norm (each bin mean moves by at most d/n_b)."""
        return 1.0

    def full_release(self, released: np.ndarray) -> np.ndarray:
        """Map a release on the occupied bins to every bin (empty bins get ``fill_value``)."""
        released = np.asarray(released, dtype=float)
        out = np.full(released.shape[:-1] + (self.counts.size,), float(self.fill_value))
        out[..., self.occupied] = released
        return out


@dataclass(frozen=True, eq=False)
class LaplaceBinning(_Binning):
    """S18.3: ε-DP bin means, Laplace noise of scale d / (n_b ε) per occupied bin."""

    @property
    def claim(self) -> PureDP:
        """ε-DP, outputs-only neighbours."""
        note = f"targets clipped to |y| <= {self.y_bound:g}" if self.clip else ""
        return PureDP(epsilon=self.epsilon, relation=outputs_only(self.d), note=note,
                      domain=self.domain, float_tv=self.float_release().tv)

    def float_release(self) -> FloatRelease:
        """The public grid of the release and its float total variation τ (issue 20 §4)."""
        return laplace_release(self.scales)

    @property
    def scales(self) -> np.ndarray:
        """Laplace scales b_b = d / (n_b ε)."""
        return self.bin_sensitivity / self.epsilon

    @property
    def noise_variance(self) -> np.ndarray:
        """Per-bin DP noise variance 2 b_b²."""
        return 2.0 * self.scales**2

    @property
    def norm(self) -> WeightedL1:
        """Σ_b (n_b/d) |Δmean_b|."""
        return WeightedL1(1.0 / self.bin_sensitivity)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases of the occupied-bin means, shape (n, m)."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        noise = laplace_noise_exact_uniform(self.scales, (n, self.occupied.size), rng)
        return self._release(data, noise)


@dataclass(frozen=True, eq=False)
class GaussianBinning(_Binning):
    """S18.3 Gaussian variant: σ_b = calibrate(ε, δ, d/n_b) per occupied bin."""

    delta: float = 1e-5
    method: str = "analytic"
    calibration: GaussianCalibration = field(init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "calibration",
                           calibrate_gaussian(self.epsilon, self.delta, 1.0, self.method))  # type: ignore[arg-type]

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP, outputs-only neighbours."""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        proven=self.calibration.proven, domain=self.domain,
                        float_tv=self.float_release().tv)

    def float_release(self) -> FloatRelease:
        """The public grid of the release and its float total variation τ (issue 20 §4)."""
        return iid_gaussian_release(self.sigmas)

    @property
    def sigmas(self) -> np.ndarray:
        """σ_b = multiplier · d / n_b."""
        return self.calibration.sigma * self.bin_sensitivity

    @property
    def noise_variance(self) -> np.ndarray:
        """σ_b²."""
        return self.sigmas**2

    @property
    def norm(self) -> Mahalanobis:
        """Mahalanobis norm w.r.t. diag((d/n_b)²): each single-bin change has norm ≤ 1."""
        return Mahalanobis(np.diag(self.bin_sensitivity**2))

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box mean."""
        return self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box covariance diag(σ_b²)."""
        return np.diag(self.noise_variance)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, m)."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        noise = rng.standard_normal((n, self.occupied.size)) * self.sigmas
        return self._release(data, noise)


def simple_binning_predict(Xs: np.ndarray, edges: Sequence[np.ndarray],
                           full_release: np.ndarray) -> np.ndarray:
    """Predict each test point by its bin's released value (post-processing)."""
    idx = bin_index(Xs, edges)
    return np.asarray(full_release)[..., idx]


def integral_binning_predict(Xs: np.ndarray, mech: _Binning, released: np.ndarray,
                             kernel: IntegralEQ, within_bin_variance: float,
                             prior_mean: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """GP with the integral kernel fitted to the released bin means (post-processing).

    Observation b is the average of f over bin b plus noise of variance
    ``within_bin_variance / n_b + mech.noise_variance[b]``.

    Returns
    -------
    mean, var
        Predictive mean and variance of the latent f at ``Xs``.
    """
    B = bin_boxes(mech.edges)[mech.occupied]
    noise = within_bin_variance / mech.counts[mech.occupied] + mech.noise_variance  # type: ignore[attr-defined]
    K = kernel(B) + np.diag(noise)
    L = psd_cholesky(K, name="integral-kernel Gram + noise")
    P = points_as_boxes(Xs)
    Ksb = kernel(P, B)
    alpha = cho_solve_lower(L, np.asarray(released, dtype=float) - prior_mean)
    mean = prior_mean + Ksb @ alpha
    V = cho_solve_lower(L, Ksb.T)
    var = np.maximum(kernel.diag(P) - np.einsum("ij,ji->i", Ksb, V), 0.0)
    return mean, var


# --------------------------------------------------------------------------- registry
def _input_range(data: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The registry factories' bin range: the span of the (public) inputs, never empty."""
    lo, hi = data.X.min(axis=0), data.X.max(axis=0)
    if np.any(hi <= lo):
        j = int(np.flatnonzero(hi <= lo)[0])
        raise ValueError(f"the registry factory spans its bins over the inputs' range, and "
                         f"every x in column {j} equals {lo[j]:.6g}: give inputs that vary, or "
                         "build the binning in Python with public edges")
    return lo, hi


def _build_laplace(data: Dataset, *, epsilon: float, d: float = 1.0, n_bins: int = 5,
                   **_: object) -> LaplaceBinning:
    lo, hi = _input_range(data)
    return LaplaceBinning(data.X, tuple(make_edges(lo, hi, n_bins)), d, epsilon)


def _build_gaussian(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                    n_bins: int = 5) -> GaussianBinning:
    lo, hi = _input_range(data)
    return GaussianBinning(data.X, tuple(make_edges(lo, hi, n_bins)), d, epsilon, delta=delta)
