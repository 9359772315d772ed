"""CoinPress private mean estimation in one dimension under zCDP (catalogue H.3).

Biswas, Dong, Kamath & Ullman (2020) estimate a mean from loose prior bounds by
iterating: clip the data to the current interval, release the clipped mean with
Gaussian noise, and shrink the interval around the noisy mean. Honkela (H §4.1,
App. B) uses it for the mean validation log-likelihood: 12 iterations, ¾ of the
budget ρ in the last one, the rest split evenly, and ρ from (ε, δ) by H eq. (19).

Privacy (replacement neighbours, n public). Step t clips to an interval
[lo_t, hi_t] that depends only on public parameters and earlier noisy outputs;
the clipped mean has sensitivity (hi_t − lo_t)/n and Gaussian noise of standard
deviation (hi_t − lo_t)/(n sqrt(2 ρ_t)) makes it ρ_t-zCDP. Adaptive composition
gives Σ_t ρ_t = ρ. How the interval shrinks affects only accuracy, never privacy.

The shrinking rule follows the univariate case of CoinPress with a Gaussian
tail bound γ(β) = sqrt(1 + 2 sqrt(ln(1/β)) + 2 ln(1/β)) and an assumed spread
``scale`` of the data (1 for the unit-variance model of the original paper).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import as_finite_array, check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.privacy.claims import ZCDP, whole_rows
from dpgp_audit.privacy.conversions import zcdp_from_epsilon_delta
from dpgp_audit.privacy.float_release import gaussian_tv_bound, release_grid, round_to_grid

__all__ = [
    "CoinPressMean",
    "CoinPressResult",
    "coinpress_mean",
    "coinpress_rho_schedule",
    "gaussian_tail_bound",
]


def gaussian_tail_bound(dim: int, beta: float) -> float:
    """sqrt(d + 2 sqrt(d ln(1/β)) + 2 ln(1/β)): a (1 − β) radius of a standard d-dim Gaussian."""
    if not (0 < beta < 1):
        raise ValueError(f"beta must lie in (0, 1), got {beta!r}")
    lb = math.log(1.0 / beta)
    return math.sqrt(dim + 2.0 * math.sqrt(dim * lb) + 2.0 * lb)


def coinpress_rho_schedule(rho: float, n_iter: int = 12, last_fraction: float = 0.75
                           ) -> np.ndarray:
    """Per-step budgets: ``last_fraction`` of ρ in the last step, the rest split evenly (H §4.1)."""
    if not (rho > 0 and math.isfinite(rho)):
        raise ValueError(f"rho must be finite and > 0, got {rho!r}")
    n_iter = check_positive_int("n_iter", n_iter)
    if not (0 < last_fraction <= 1):
        raise ValueError(f"last_fraction must lie in (0, 1], got {last_fraction!r}")
    if n_iter == 1:
        return np.array([rho])
    out = np.full(n_iter, rho * (1.0 - last_fraction) / (n_iter - 1))
    out[-1] = rho * last_fraction
    return out


@dataclass(frozen=True)
class CoinPressResult:
    """The private mean and its trace (all of it is part of the private output)."""

    estimate: float
    rho: float
    rhos: np.ndarray
    intervals: np.ndarray
    """(n_iter, 2) clipping intervals used at each step."""
    noise_sds: np.ndarray


def coinpress_mean(x: np.ndarray, centre: float, radius: float, rho: float,
                   rng: np.random.Generator, *, n_iter: int = 12, last_fraction: float = 0.75,
                   scale: float = 1.0, beta: float = 0.01) -> CoinPressResult:
    """ρ-zCDP estimate of mean(x) from the prior interval [centre − radius, centre + radius].

    Parameters
    ----------
    x
        The n private values (one per individual).
    centre, radius
        Public prior interval (H App. B: C and R of eqs. 32–33).
    rho
        Total zCDP budget (H eq. 19 converts from (ε, δ)).
    rng
        Random generator.
    n_iter, last_fraction
        Iterations (12) and the share of ρ given to the last (¾), H §4.1.
    scale, beta
        Assumed spread of the data and tail probability of the shrinking rule.
    """
    x = as_finite_array("x", x, ndim=1)
    n = x.shape[0]
    if n == 0:
        raise ValueError("x must contain at least one value")
    rng = check_rng(rng)
    if not (radius > 0 and math.isfinite(radius) and math.isfinite(centre)):
        raise ValueError(f"need a finite centre and radius > 0, got {centre!r}, {radius!r}")
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"scale must be finite and > 0, got {scale!r}")
    rhos = coinpress_rho_schedule(rho, n_iter, last_fraction)
    gamma = gaussian_tail_bound(1, beta)
    lo0, hi0 = centre - radius, centre + radius
    c, r = float(centre), float(radius)
    # mean(clip(x, lo, hi)) from the sorted values and their prefix sums: O(log n) a step
    xs = np.sort(x)
    csum = np.concatenate([[0.0], np.cumsum(xs)])
    intervals = np.empty((len(rhos), 2))
    sds = np.empty(len(rhos))
    for t, rho_t in enumerate(rhos):
        half = r if t == 0 else r + gamma * scale
        lo, hi = max(lo0, c - half), min(hi0, c + half)
        if hi <= lo:                      # the noisy centre left the prior interval
            lo, hi = (lo0, lo0) if c < lo0 else (hi0, hi0)
        width = hi - lo
        intervals[t] = lo, hi
        sd = width / (n * math.sqrt(2.0 * rho_t))   # sensitivity (hi − lo)/n, ρ_t-zCDP
        sds[t] = sd
        i_lo = int(np.searchsorted(xs, lo, side="left"))
        i_hi = int(np.searchsorted(xs, hi, side="right"))
        clipped_sum = lo * i_lo + (csum[i_hi] - csum[i_lo]) + hi * (n - i_hi)
        noise = sd * float(rng.standard_normal())
        # rounded to the public grid of the step's sd (issue 20 §4); no noise: the edge
        c = float(round_to_grid(clipped_sum / n, noise, release_grid(sd))) if sd > 0 else lo
        r = gamma * math.sqrt(scale * scale / n + sd * sd)
    return CoinPressResult(c, float(np.sum(rhos)), rhos, intervals, sds)


@dataclass(frozen=True, eq=False)
class CoinPressMean:
    """H.3 as a :class:`~dpgp_audit.contract.Mechanism`: the CoinPress mean of the targets.

    The release is :func:`coinpress_mean` of ``data.y`` clipped to the public
    prior interval [centre − radius, centre + radius] (H App. B: values outside
    it are clipped; every CoinPress step clips inside it anyway, so the explicit
    clip changes nothing). The dataset size n is public (substitution).

    Parameters
    ----------
    centre, radius
        Public prior interval.
    rho
        Total zCDP budget; :meth:`from_epsilon_delta` derives it by H eq. (19).
    n_iter, last_fraction, scale, beta
        As in :func:`coinpress_mean`.
    """

    centre: float
    radius: float
    rho: float
    n_iter: int = 12
    last_fraction: float = 0.75
    scale: float = 1.0
    beta: float = 0.01
    source: str = ""

    def __post_init__(self) -> None:
        if not (self.radius > 0 and math.isfinite(self.radius) and math.isfinite(self.centre)):
            raise ValueError(f"need a finite centre and radius > 0, got {self.centre!r}, "
                             f"{self.radius!r}")
        coinpress_rho_schedule(self.rho, self.n_iter, self.last_fraction)  # validates
        gaussian_tail_bound(1, self.beta)
        if not (self.scale > 0 and math.isfinite(self.scale)):
            raise ValueError(f"scale must be finite and > 0, got {self.scale!r}")

    @classmethod
    def from_epsilon_delta(cls, centre: float, radius: float, epsilon: float, delta: float,
                           **kw: object) -> CoinPressMean:
        """ρ = (sqrt(ε + ln 1/δ) − sqrt(ln 1/δ))² (H eq. 19), so the release is (ε, δ)-DP."""
        return cls(centre=centre, radius=radius, rho=zcdp_from_epsilon_delta(epsilon, delta),
                   source=f"rho from ({epsilon:g}, {delta:g}) by H eq. 19",
                   **kw)  # type: ignore[arg-type]

    @property
    def claim(self) -> ZCDP:
        """ρ-zCDP under substitution of one row (adaptive composition of the 12 steps)."""
        lo, hi = self.centre - self.radius, self.centre + self.radius
        note = f"targets clipped to [{lo:g}, {hi:g}]; n public; {self.n_iter} steps"
        if self.source:
            note += f"; {self.source}"
        return ZCDP(rho=self.rho, relation=whole_rows(max(abs(lo), abs(hi))), note=note,
                    float_tv=self.float_tv())

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` independent CoinPress means, shape (n, 1), vectorised over the runs.

        Run j uses the j-th block of ``n_iter`` standard normals in the order
        :func:`coinpress_mean` draws them, so run j equals a sequential call of
        :func:`coinpress_mean` on the same stream (tested).
        """
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        lo0, hi0 = self.centre - self.radius, self.centre + self.radius
        x = np.clip(as_finite_array("y", data.y, ndim=1), lo0, hi0)
        m = x.shape[0]
        rhos = coinpress_rho_schedule(self.rho, self.n_iter, self.last_fraction)
        gamma = gaussian_tail_bound(1, self.beta)
        xs = np.sort(x)
        csum = np.concatenate([[0.0], np.cumsum(xs)])
        z = rng.standard_normal((n, len(rhos)))
        c = np.full(n, float(self.centre))
        r = np.full(n, float(self.radius))
        for t, rho_t in enumerate(rhos):
            half = r if t == 0 else r + gamma * self.scale
            lo, hi = np.maximum(lo0, c - half), np.minimum(hi0, c + half)
            stuck = hi <= lo                   # the noisy centre left the prior interval
            edge = np.where(c < lo0, lo0, hi0)
            lo, hi = np.where(stuck, edge, lo), np.where(stuck, edge, hi)
            sd = (hi - lo) / (m * math.sqrt(2.0 * rho_t))
            i_lo = np.searchsorted(xs, lo, side="left")
            i_hi = np.searchsorted(xs, hi, side="right")
            clipped_sum = lo * i_lo + (csum[i_hi] - csum[i_lo]) + hi * (m - i_hi)
            # each step's noisy mean is rounded to the public grid of its sd (issue 20 §4);
            # a stuck step (interval of width 0, no noise) releases the public edge itself
            live = sd > 0
            step = np.where(live, sd, 1.0)
            c = np.where(live, round_to_grid(clipped_sum / m, step * z[:, t],
                                             release_grid(step)), edge)
            r = gamma * np.sqrt(self.scale * self.scale / m + sd * sd)
        return c[:, None]

    def float_tv(self) -> float:
        """τ of the rounded steps: one normal per step, any sd (issue 20 §4)."""
        return self.n_iter * gaussian_tv_bound(1, 1)


def _build_coinpress(data: Dataset, *, epsilon: float, delta: float, centre: float = 0.0,
                     radius: float = 1.0) -> CoinPressMean:
    """Registry factory: the CoinPress mean of the targets in the prior [c − r, c + r]."""
    return CoinPressMean.from_epsilon_delta(centre, radius, epsilon, delta)
