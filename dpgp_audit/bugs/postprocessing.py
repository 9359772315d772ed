"""Post-processing that reads the data (catalogue A.5): a planted bug and its twin.

A function of a DP release keeps the release's guarantee only if it reads nothing but the
release and public information (Dwork & Roth 2014, Prop. 2.1). A hurried user clips noisy
bin means to the range of the *true* targets ("a mean never leaves [min y, max y]"): the
clip puts point masses at ``min y`` and ``max y``, and the largest target moves with the
data, so one release value is reachable from one dataset and never from its neighbour
(ε = ∞). The twin clips to the declared bound instead, which is public. Found by a helper
session writing bugs against the contract (the fourth hunt, 28 Nov 2026).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.norms import L2
from dpgp_audit.privacy.calibrate import calibrate_gaussian
from dpgp_audit.privacy.claims import ApproxDP, outputs_only
from dpgp_audit.privacy.domain import PublicDomain
from dpgp_audit.privacy.float_release import iid_gaussian_release, release_grid, round_to_grid

__all__ = ["ClippedBinMeans", "build_clipped_bin_means"]


def _cells(x: np.ndarray, lo: float, hi: float, k: int) -> np.ndarray:
    """The bin of each input among ``k`` equal cells of ``[lo, hi]`` (``hi`` in the last)."""
    return np.minimum(np.floor((x - lo) / (hi - lo) * k), k - 1).astype(int)


@dataclass(frozen=True)
class ClippedBinMeans:
    """Means of the targets in public bins of x, Gaussian noise, then clipped (outputs only).

    The bins are ``bins`` equal cells of the public inputs' range, fixed with the inputs at
    build time (X is public under outputs-only neighbours). One target moving by ``2b``
    moves one bin mean by ``2b / m`` (``m`` its bin's size), so the L2 sensitivity is
    ``2b`` over the smallest bin, and σ is the analytic Gaussian calibration of it.

    ``clip="data"`` (the bug) clips to ``[min y, max y]`` of the true targets;
    ``clip="bound"`` (the twin) to the declared ``[-b, b]``.
    """

    edges: tuple[float, float]
    counts: tuple[int, ...]
    epsilon: float
    delta: float
    clip: str = "data"
    b: float = 1.0
    sigma: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.clip not in ("data", "bound"):
            raise ValueError(f"clip must be 'data' or 'bound', got {self.clip!r}")
        object.__setattr__(self, "sigma", calibrate_gaussian(
            self.epsilon, self.delta, self.sensitivity_bound()).sigma)

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP, one target moving anywhere in ``[-b, b]`` (outputs only)."""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(2 * self.b),
                        domain=PublicDomain(self.b),
                        float_tv=iid_gaussian_release(np.full(len(self.counts), self.sigma)).tv)

    @property
    def norm(self) -> L2:
        """The Gaussian proof bounds the L2 change."""
        return L2()

    def sensitivity_bound(self) -> float:
        """``2b`` over the smallest bin: the query's L2 sensitivity (true of the query)."""
        return 2.0 * self.b / min(self.counts)

    def cells(self, data: Dataset) -> np.ndarray:
        """Each row's bin (refuses inputs whose bin sizes are not the public ones)."""
        data = check_dataset(data)
        lo, hi = self.edges
        x = np.asarray(data.X, dtype=float)[:, 0]
        k = len(self.counts)
        cell = _cells(x, lo, hi, k)
        if np.any(x < lo) or np.any(x > hi) or \
                tuple(np.bincount(cell, minlength=k)) != self.counts:
            raise ValueError(f"X: the public inputs must fill the bins of [{lo:g}, {hi:g}] "
                             f"with {self.counts} rows (this release was built for them)")
        return cell

    def query(self, data: Dataset) -> np.ndarray:
        """The bin means before noise (refuses ``|y| > b``)."""
        cell = self.cells(data)
        y = self.claim.domain.targets(data.y)
        return np.array([math.fsum(y[cell == j]) / c for j, c in enumerate(self.counts)])

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases: the noisy means rounded to their public grid, then clipped."""
        m = self.query(data)
        n = check_positive_int("n", n)
        noise = self.sigma * check_rng(rng).standard_normal((n, m.size))
        out = round_to_grid(m, noise, release_grid(self.sigma))
        if self.clip == "bound":
            return np.clip(out, -self.b, self.b)  # public: post-processing
        y = np.asarray(data.y, dtype=float)
        return np.clip(out, y.min(), y.max())  # BUG: the true targets' range


def build_clipped_bin_means(clip: str, bins: int = 5):  # noqa: ANN201 - a zoo build function
    """``build(data, epsilon, delta)`` for :class:`ClippedBinMeans` on the data's inputs."""

    def build(data: Dataset, *, epsilon: float, delta: float) -> ClippedBinMeans:
        x = np.asarray(check_dataset(data).X, dtype=float)[:, 0]
        lo, hi = float(x.min()), float(x.max())
        cell = _cells(x, lo, hi, bins)
        counts = tuple(int(c) for c in np.bincount(cell, minlength=bins))
        if min(counts) == 0:
            raise ValueError(f"X: every one of the {bins} bins of the inputs' range needs a row")
        return ClippedBinMeans((lo, hi), counts, epsilon, delta, clip=clip)

    return build
