"""Bugs only whole-dataset pairs expose: the declared bound, structural bases, the full swing.

Issue 20 §4, catalogue A.5. An audit sees only the pairs (D, D′) it is given; these three
mistakes, written as a hurried user would, are invisible on every pair made from the
user's data by moving one row, and each has a correct twin:

* :class:`MaxScaledLaplaceSum` — a README-style claim (``|y| <= 1``, one target moves by
  at most ``d = 2``) with Laplace noise scaled by the *observed* largest ``|y|``. On the
  user's data the largest target is about 1 and the noise is right; with every target 0
  the noise vanishes. The pair that shows it, every target 0 against one target moved by
  ``d``, leaves the domain and was dropped; moved to the bound (``y[0] = 1``) it is a
  pair of the domain, and the release is deterministic on one side (true ε = ∞). Twin:
  the noise scaled by the declared bound.
* :class:`GroupMeans` — whole rows, the means of the targets in two public x-groups
  (x below or above the middle of the public range), with the sensitivity ``2b/(n/2)``
  of balanced groups. On the user's data (ten rows per group) that bound is met exactly;
  when the *other* rows all sit in one group, the moved row is alone in the other and its
  mean moves by 2b (an empty group releases 0). Twin: the group totals divided by the
  nominal size n/2, whose sensitivity 2b/(n/2) holds whatever the groups hold.
* :class:`ClippedMeanRelease` — whole rows, the mean clipped to ``[−c, c]`` with the
  sensitivity ``b/n`` of half a swing (one target from 0 to ±b). On the user's data the
  mean saturates the clip and one row moves nothing; on the all-zero base the half swing
  meets the bound exactly; only where the other rows cancel does one row flipping from
  +b to −b move the release by 2b/n. Twin: the full-swing sensitivity 2b/n.

Both whole-row releases are built for the public size n of the user's data and refuse
another size (so the tiny-N pairs, which would expose the last two otherwise, are not
theirs to see).

A fourth mistake needs a pair no move of the user's rows makes, a row substituted at a
place of the release's own:

* :class:`KernelSumAtPoint` — whole rows, sample only, the kernel-weighted sum
  ``Σ k(z, x_i) y_i`` at a public point ``z`` that lies between the data's inputs, its
  sensitivity computed over the inputs of the data it was built for, ``2b max_i k(z, x_i)``.
  A substituted row may sit *at* ``z`` (weight 1), where one record moves the sum by 2b;
  the corners, the far inputs and the data's own inputs are all at least a lengthscale
  from ``z``. The substitution-position search of the grey-box auditor
  (:mod:`~dpgp_audit.audit.positions`) finds the place. Twin: the sensitivity ``2b``, the
  kernel's supremum over every input.

A fifth hides its worst pairs behind a refusal of small datasets:

* :class:`MinSizeLaplaceMean` — whole rows, the mean of ``|y| <= b`` plus Laplace noise,
  refusing datasets of fewer than ``n_min`` rows. ``scale_for="cohort"`` (BUG, planted):
  the scale ``2b/(ε N₀)`` of the cohort size N₀ it was written for (the user's data),
  right at N₀ and too small for every accepted size below it; the tiny datasets the
  pairs would expose it on (one and two rows) are refused. ``scale_for="minimum"`` (twin):
  the scale ``2b/(ε n_min)`` of the smallest size it accepts, private at every size. The
  pairs on the smallest accepted size (:func:`~dpgp_audit.audit.neighbours.smallest_accepted_size`)
  show the bug.

A sixth reads its noise scale off the groups' own sizes (a tenth hunt):

* :class:`ArmGapLaplace` — whole rows, sample only, the difference of the mean targets of
  the two public x-groups (``x >= edge`` against ``x < edge``) plus Laplace noise.
  ``scale_for="sizes"`` (BUG, planted): the scale ``2b(1/n₁ + 1/n₀)/ε`` from the groups'
  sizes, each guarded by ``max(n_g, 1)``, which are private under whole rows: neighbours
  that move a row between the groups release Laplace laws of unequal scale (ε = ∞). On
  the user's data (ten rows a group) one record moves the scale by about 1 %; where a
  group holds one row and a second joins it, it nearly halves.
  ``scale_for="nominal"`` (twin): the groups' totals over the nominal size ``n/2``, noised
  for their sensitivity ``4b/n`` (a row leaving one group for the other moves both totals
  by at most b each). The
  grey-box auditor's group-size pairs
  (:func:`~dpgp_audit.audit.neighbours.group_size_pairs`) show the bug.

A seventh leaks only where the other rows sit far from the release's own points (an
eleventh hunt):

* :class:`ReferenceMMD` — whole rows, sample only, the unbiased squared MMD between the
  rows' inputs and a public reference sample (EQ kernel) plus Laplace noise; the target
  is unused. ``within="unordered"`` (BUG, planted): the scale ``3/(nε)``, from a row moving
  the within-sample term by 1/n "because it sits in n − 1 pairs" — the sum runs over
  *ordered* pairs, so it moves by 2/n, and the cross term by 2/n more. The two extremes
  meet only when every other row sits far from the reference and the one row lands on
  it; around data spread over the reference the leak is hidden. ``within="ordered"``
  (twin): the scale ``4/(nε)``, private for every pair. The corner-cluster moves of the
  position search (:mod:`~dpgp_audit.audit.positions`) show the bug.

Never use these mechanisms on data.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import check_epsilon, check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.norms import L2
from dpgp_audit.privacy.calibrate import calibrate_gaussian
from dpgp_audit.privacy.claims import ApproxDP, PureDP, outputs_only, whole_rows
from dpgp_audit.privacy.domain import PublicDomain
from dpgp_audit.privacy.float_release import (
    FloatRelease,
    iid_gaussian_release,
    laplace_noise_exact_uniform,
    laplace_release,
    release_grid,
    round_to_grid,
)

__all__ = ["ArmGapLaplace", "ClippedMeanRelease", "GroupMeans", "KernelSumAtPoint",
           "MaxScaledLaplaceSum", "MinSizeLaplaceMean", "build_arm_gap", "build_clipped_mean",
           "build_group_means", "build_kernel_sum", "build_max_scaled", "build_min_size_mean",
           "clipped_mean_data", "kernel_sum_true_epsilon", "true_epsilon", "ReferenceMMD",
           "build_reference_mmd"]


# ----------------------------------------------------------------------------- the bound
@dataclass(frozen=True, eq=False)
class MaxScaledLaplaceSum:
    """``Σ y + Lap(scale)``, README claim ``|y| <= 1``, outputs only with ``d = 2``, sample only.

    ``scale_from="max"`` (BUG, planted): ``scale = d · max|y| / ε`` — the observed largest
    target stands in for the bound. ``scale_from="bound"`` (twin): ``scale = d · y_bound / ε``
    with ``y_bound = 1`` (so d/ε: the sum moves by at most d).
    """

    epsilon: float
    d: float = 2.0
    y_bound: float = 1.0
    scale_from: str = "max"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        outputs_only(self.d)  # validates d
        if self.scale_from not in ("max", "bound"):
            raise ValueError(f"scale_from must be 'max' or 'bound', got {self.scale_from!r}")

    @property
    def domain(self) -> PublicDomain:
        """The README's domain, |y| <= 1 (refused outside)."""
        return PublicDomain(self.y_bound)

    @property
    def claim(self) -> PureDP:
        """ε-DP, outputs only with d = 2, on |y| <= 1."""
        return PureDP(epsilon=self.epsilon, relation=outputs_only(self.d), domain=self.domain,
                      float_tv=laplace_release([self.d * self.y_bound / self.epsilon]).tv)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, 1), rounded to the grid of the scale (issue 20 §4)."""
        y = self.domain.targets(check_dataset(data).y)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        top = float(np.max(np.abs(y))) if self.scale_from == "max" else self.y_bound
        scale = self.d * top / self.epsilon
        if scale == 0:  # the planted bug on all-zero targets: no noise at all
            return np.full((n, 1), math.fsum(y))
        fr = laplace_release([scale])
        return fr.round_linear(np.ones((1, y.size)), y,
                               laplace_noise_exact_uniform(scale, (n, 1), rng))


def build_max_scaled(scale_from: str):  # noqa: ANN201 - a build function for the zoo
    """``build(data, epsilon)`` for :class:`MaxScaledLaplaceSum`."""

    def build(data: Dataset, *, epsilon: float) -> MaxScaledLaplaceSum:
        return MaxScaledLaplaceSum(epsilon=epsilon, scale_from=scale_from)

    return build


# ----------------------------------------------------------------------------- whole rows
@dataclass(frozen=True, eq=False)
class _WholeRowGaussian(ABC):
    """A query of n public-size datasets plus N(0, σ² I), σ calibrated to a stated bound."""

    n_rows: int
    epsilon: float
    delta: float
    b: float = 1.0
    sigma: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_positive_int("n_rows", self.n_rows)
        object.__setattr__(self, "sigma", calibrate_gaussian(
            self.epsilon, self.delta, self.sensitivity_bound()).sigma)

    @abstractmethod
    def sensitivity_bound(self) -> float:
        """The stated bound σ is calibrated to."""

    @abstractmethod
    def _query(self, y: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The release before noise, from checked targets and inputs."""

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP under whole-row substitution, ``|y| <= b``."""
        k = len(self._query(np.zeros(self.n_rows), np.zeros((self.n_rows, 1))))
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=whole_rows(self.b),
                        domain=PublicDomain(self.b),
                        float_tv=iid_gaussian_release(np.full(k, self.sigma)).tv)

    @property
    def norm(self) -> L2:
        """The Gaussian proof bounds the L2 change."""
        return L2()

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free release (refuses another size or ``|y| > b``)."""
        data = check_dataset(data)
        if data.n != self.n_rows:
            raise ValueError(f"data has {data.n} rows; this release is built for the public "
                             f"size n = {self.n_rows}")
        y = np.asarray(data.y, dtype=float)
        if np.any(np.abs(y) > self.b):
            raise ValueError(f"y: targets outside |y| <= {self.b:g}")
        return self._query(y, np.asarray(data.X, dtype=float))

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box mean: the query."""
        return self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box covariance σ² I."""
        k = self.query(data).size
        return self.sigma**2 * np.eye(k)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, k)."""
        m = self.query(data)
        n = check_positive_int("n", n)
        noise = self.sigma * check_rng(rng).standard_normal((n, m.size))
        return round_to_grid(m, noise, release_grid(self.sigma))  # issue 20 §4


@dataclass(frozen=True, eq=False)
class GroupMeans(_WholeRowGaussian):
    """Means of y over the public x-groups ``x < edge`` and ``x >= edge``.

    ``nominal=False`` (BUG, planted): each group's own mean (0 for an empty group) with the
    balanced-groups bound ``2b/(n/2)``. ``nominal=True`` (twin): each group's total divided
    by the nominal size n/2, for which that bound holds on every pair.
    """

    edge: float = 5.0
    nominal: bool = False

    def sensitivity_bound(self) -> float:
        """2b / (n/2): one target flipped within a group of n/2 rows."""
        return 2.0 * self.b / (self.n_rows / 2.0)

    def _query(self, y: np.ndarray, X: np.ndarray) -> np.ndarray:
        upper = X[:, 0] >= self.edge
        out = []
        for g in (~upper, upper):
            if self.nominal:
                out.append(math.fsum(y[g]) / (self.n_rows / 2.0))
            else:
                out.append(float(np.mean(y[g])) if np.any(g) else 0.0)
        return np.array(out)


@dataclass(frozen=True, eq=False)
class ClippedMeanRelease(_WholeRowGaussian):
    """``clip(mean(y), −c, c)``: sensitivity ``b/n`` (BUG, half the swing) or ``2b/n`` (twin)."""

    c: float = 0.5
    full_swing: bool = False

    def sensitivity_bound(self) -> float:
        """b/n (the bug: one target from 0 to ±b) or 2b/n (+b to −b)."""
        return (2.0 if self.full_swing else 1.0) * self.b / self.n_rows

    def _query(self, y: np.ndarray, X: np.ndarray) -> np.ndarray:
        return np.array([float(np.clip(math.fsum(y) / y.size, -self.c, self.c))])


def true_epsilon(mech: GroupMeans | ClippedMeanRelease) -> float:
    """Exact ε(δ) of the planted releases: μ-GDP with μ = (largest change) / σ.

    The largest L2 change of :class:`GroupMeans` without ``nominal`` is 2b: a group holding
    the moved row alone, its target flipped from +b to −b (each group mean lies in
    [−b, b], and a row leaving or joining a group of m ≥ 1 others moves that group's mean
    by at most 2b/(m + 1), so no move does more). That of :class:`ClippedMeanRelease` is
    2b/n: clipping never enlarges a change, and the full swing over cancelling rows stays
    inside the clip. The twins' largest changes equal their bounds.
    """
    from dpgp_audit.privacy.gdp import gdp_epsilon

    if isinstance(mech, GroupMeans):
        top = 2.0 * mech.b / (mech.n_rows / 2.0) if mech.nominal else 2.0 * mech.b
    else:
        top = 2.0 * mech.b / mech.n_rows
    return gdp_epsilon(mech.delta, top / mech.sigma)


def build_group_means(nominal: bool):  # noqa: ANN201 - a build function for the zoo
    """``build(data, epsilon, delta)`` for :class:`GroupMeans` on the data's public size."""

    def build(data: Dataset, *, epsilon: float, delta: float) -> GroupMeans:
        return GroupMeans(n_rows=data.n, epsilon=epsilon, delta=delta, nominal=nominal)

    return build


def build_clipped_mean(full_swing: bool):  # noqa: ANN201 - a build function for the zoo
    """``build(data, epsilon, delta)`` for :class:`ClippedMeanRelease` on the data's size."""

    def build(data: Dataset, *, epsilon: float, delta: float) -> ClippedMeanRelease:
        return ClippedMeanRelease(n_rows=data.n, epsilon=epsilon, delta=delta,
                                  full_swing=full_swing)

    return build


def clipped_mean_data(n: int = 20) -> Dataset:
    """Mostly positive targets ``0.6 + 0.4 sin(x)`` (mean ≈ 0.66, above the clip ½)."""
    x = np.linspace(0.0, 10.0, n)
    return Dataset(x[:, None], 0.6 + 0.4 * np.sin(x), name="positive-sine")


# ------------------------------------------------------------------ substitution positions
#: The public point of :class:`KernelSumAtPoint` and its EQ lengthscale: on the default
#: data (20 inputs spaced 10/19 on [0, 10]) the point lies 0.263 from its nearest input,
#: where the kernel weighs 0.49, away from the box's centre and corners.
KERNEL_POINT, KERNEL_LENGTHSCALE = 3.42, 0.22


@dataclass(frozen=True, eq=False)
class KernelSumAtPoint:
    """``Σ_i k(z, x_i) y_i + N(0, σ²)``, EQ kernel, whole rows with ``|y| <= b``, sample only.

    ``sensitivity`` is what σ is calibrated to: the bug's ``2b max_i k(z, x_i)`` over the
    inputs of the data it was built for (:func:`build_kernel_sum`), or the twin's ``2b``.
    """

    epsilon: float
    delta: float
    sensitivity: float
    z: float = KERNEL_POINT
    lengthscale: float = KERNEL_LENGTHSCALE
    b: float = 1.0
    sigma: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", calibrate_gaussian(
            self.epsilon, self.delta, self.sensitivity).sigma)

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP under whole-row substitution, ``|y| <= b``."""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=whole_rows(self.b),
                        domain=PublicDomain(self.b),
                        float_tv=iid_gaussian_release(np.full(1, self.sigma)).tv)

    def weights(self, X: np.ndarray) -> np.ndarray:
        """``k(z, x_i)`` for the first input column."""
        x = np.asarray(X, dtype=float)[:, 0]
        return np.exp(-0.5 * ((x - self.z) / self.lengthscale) ** 2)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, 1) (refuses ``|y| > b``)."""
        data = check_dataset(data)
        y = np.asarray(data.y, dtype=float)
        if np.any(np.abs(y) > self.b):
            raise ValueError(f"y: targets outside |y| <= {self.b:g}")
        m = np.array([math.fsum(self.weights(data.X) * y)])
        noise = self.sigma * check_rng(rng).standard_normal((check_positive_int("n", n), 1))
        return round_to_grid(m, noise, release_grid(self.sigma))


def build_kernel_sum(over_data: bool):  # noqa: ANN201 - a build function for the zoo
    """``build(data, epsilon, delta)`` for :class:`KernelSumAtPoint`.

    ``over_data=True`` (BUG, planted): the sensitivity ``2b max_i k(z, x_i)`` over the
    inputs of ``data``; ``False`` (twin): ``2b``.
    """

    def build(data: Dataset, *, epsilon: float, delta: float) -> KernelSumAtPoint:
        probe = KernelSumAtPoint(epsilon, delta, 2.0)
        sens = 2.0 * probe.b * (float(np.max(probe.weights(check_dataset(data).X)))
                                if over_data else 1.0)
        return KernelSumAtPoint(epsilon, delta, sens)

    return build


def kernel_sum_true_epsilon(mech: KernelSumAtPoint) -> float:
    """Exact ε(δ) of :class:`KernelSumAtPoint`: μ-GDP with μ = 2b/σ.

    One substituted row changes one term ``k(z, x) y`` into ``k(z, x′) y′``; each lies in
    ``[−b, b]`` (``0 < k <= 1``, equal to 1 at ``x = z``), so the largest change is 2b,
    met by a row at ``z`` flipped from ``+b`` to ``−b``.
    """
    from dpgp_audit.privacy.gdp import gdp_epsilon

    return gdp_epsilon(mech.delta, 2.0 * mech.b / mech.sigma)


# ------------------------------------------------------------------- the smallest size
#: Fewest rows :class:`MinSizeLaplaceMean` releases.
MIN_ROWS = 5


@dataclass(frozen=True, eq=False)
class MinSizeLaplaceMean:
    """``mean(y) + Lap(scale)``, whole rows with ``|y| <= b``, refusing fewer than ``n_min`` rows.

    The mean moves by at most ``2b/n`` when one row is substituted, so the loss at size n
    is ``2b / (n · scale)``. ``scale_for="cohort"`` (BUG, planted): ``scale = 2b/(ε N₀)``
    for the cohort size ``N₀`` it was written for, ε·N₀/n_min at the smallest size it
    accepts. ``scale_for="minimum"`` (twin): ``scale = 2b/(ε n_min)``, at most ε at every
    accepted size. Sample only.
    """

    epsilon: float
    cohort: int
    scale_for: str = "cohort"
    n_min: int = MIN_ROWS
    b: float = 1.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive_int("cohort", self.cohort)
        check_positive_int("n_min", self.n_min)
        if self.scale_for not in ("cohort", "minimum"):
            raise ValueError(f"scale_for must be 'cohort' or 'minimum', got {self.scale_for!r}")

    @property
    def scale(self) -> float:
        """The Laplace scale: ``2b/(ε N₀)`` (the bug) or ``2b/(ε n_min)`` (the twin)."""
        size = self.cohort if self.scale_for == "cohort" else self.n_min
        return 2.0 * self.b / (self.epsilon * size)

    def float_release(self) -> FloatRelease:
        """The public grid of the scale and its float total variation τ (issue 20 §4)."""
        return laplace_release([self.scale])

    @property
    def claim(self) -> PureDP:
        """ε-DP under whole-row substitution, ``|y| <= b``."""
        return PureDP(epsilon=self.epsilon, relation=whole_rows(self.b),
                      domain=PublicDomain(self.b), float_tv=self.float_release().tv)

    def true_epsilon(self) -> float:
        """The largest loss over every accepted size: ``2b / (n_min · scale)``."""
        return 2.0 * self.b / (self.n_min * self.scale)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, 1), rounded to the grid of the scale (issue 20 §4)."""
        data = check_dataset(data)
        if data.n < self.n_min:
            raise ValueError(f"the mean needs at least {self.n_min} rows, got {data.n}")
        y = np.asarray(data.y, dtype=float)
        if np.any(np.abs(y) > self.b):
            raise ValueError(f"y: targets outside |y| <= {self.b:g}")
        n = check_positive_int("n", n)
        fr = self.float_release()
        return fr.round_linear(np.full((1, y.size), 1.0 / y.size), y,
                               laplace_noise_exact_uniform(self.scale, (n, 1), check_rng(rng)))


def build_min_size_mean(scale_for: str):  # noqa: ANN201 - a build function for the zoo
    """``build(data, epsilon)`` for :class:`MinSizeLaplaceMean`, its cohort the data's size."""

    def build(data: Dataset, *, epsilon: float) -> MinSizeLaplaceMean:
        return MinSizeLaplaceMean(epsilon=epsilon, cohort=data.n, scale_for=scale_for)

    return build


@dataclass(frozen=True, eq=False)
class ArmGapLaplace:
    """``mean(y | x >= edge) − mean(y | x < edge) + Lap(scale)``, whole rows, ``|y| <= b``.

    ``scale_for="sizes"`` (BUG, planted): each group's own mean (0 for an empty group) and
    the scale ``2b(1/n₁ + 1/n₀)/ε`` from the group sizes, each at least 1 — a hurried
    reading of "the difference of two means moves by at most 2b/n₁ + 2b/n₀". The sizes are
    private, so the noise law moves with the data: ε = ∞. ``scale_for="nominal"`` (twin):
    ``(T₁ − T₀)/(n/2)`` for the groups' totals ``T``, scale ``4b/(n ε)`` from the public
    size n, private for every pair. Both refuse a dataset of another size than the one they
    were built for (the tiny datasets would show the bug otherwise) and are sample only.
    """

    epsilon: float
    n_rows: int
    scale_for: str = "sizes"
    edge: float = 5.0
    b: float = 1.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive_int("n_rows", self.n_rows)
        if self.scale_for not in ("sizes", "nominal"):
            raise ValueError(f"scale_for must be 'sizes' or 'nominal', got {self.scale_for!r}")

    def weights(self, X: np.ndarray) -> tuple[np.ndarray, float]:
        """The query's weights on the targets and the Laplace scale, for inputs ``X``."""
        upper = np.asarray(X, dtype=float).reshape(len(X), -1)[:, 0] >= self.edge
        if self.scale_for == "nominal":
            return np.where(upper, 1.0, -1.0) / (self.n_rows / 2.0), self.balanced_scale
        n1, n0 = max(int(upper.sum()), 1), max(int((~upper).sum()), 1)
        return (np.where(upper, 1.0 / n1, -1.0 / n0),
                2.0 * self.b * (1.0 / n1 + 1.0 / n0) / self.epsilon)

    @property
    def balanced_scale(self) -> float:
        """The scale on two groups of n/2: the bug's ``2b(2/n + 2/n)/ε`` there, the twin's
        ``4b/(nε)`` on every dataset.
        """
        per_size = 8.0 if self.scale_for == "sizes" else 4.0
        return per_size * self.b / (self.n_rows * self.epsilon)

    def float_release(self) -> FloatRelease:
        """The grid and float τ of :attr:`balanced_scale` (issue 20 §4)."""
        return laplace_release([self.balanced_scale])

    @property
    def claim(self) -> PureDP:
        """ε-DP under whole-row substitution, ``|y| <= b``, with :meth:`float_release`'s τ."""
        return PureDP(epsilon=self.epsilon, relation=whole_rows(self.b),
                      domain=PublicDomain(self.b), float_tv=self.float_release().tv)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, 1), rounded to the grid of the scale (issue 20 §4)."""
        data = check_dataset(data)
        if data.n != self.n_rows:
            raise ValueError(f"built for {self.n_rows} rows, got {data.n}")
        y = np.asarray(data.y, dtype=float)
        if np.any(np.abs(y) > self.b):
            raise ValueError(f"y: targets outside |y| <= {self.b:g}")
        n = check_positive_int("n", n)
        w, scale = self.weights(data.X)
        return laplace_release([scale]).round_linear(
            w[None, :], y, laplace_noise_exact_uniform(scale, (n, 1), check_rng(rng)))


def build_arm_gap(scale_for: str):  # noqa: ANN201 - a build function for the zoo
    """``build(data, epsilon)`` for :class:`ArmGapLaplace` on the data's public size."""

    def build(data: Dataset, *, epsilon: float) -> ArmGapLaplace:
        return ArmGapLaplace(epsilon=epsilon, n_rows=data.n, scale_for=scale_for)

    return build


# ----------------------------------------------------------------------------- a reference sample
@dataclass(frozen=True, eq=False)
class ReferenceMMD:
    """``MMD²_u(x, Z) + Lap(scale)``: inputs against a public reference ``Z``, whole rows.

    With ``W = Σ_{i≠j} k(x_i, x_j) / (n(n−1))`` (ordered pairs), ``C = 2 mean_{i,m}
    k(x_i, z_m)`` and the public ``R`` of ``Z`` alone, the statistic is ``W − C + R``.
    Moving row j from x to x′ moves it by ``(2/n)[mean_{i≠j}(k(x′, x_i) − k(x, x_i))
    − (k̄(x′) − k̄(x))]`` with ``k̄ = mean_m k(·, z_m)``: the first bracket lies in [−1, 1]
    and the second in [−max k̄, max k̄], and both reach their ends together (the other rows
    all at a point u = x far from ``Z``, x′ at the peak of k̄), so the sensitivity is
    ``(2/n)(1 + max k̄)`` (a supremum, approached as u moves away). ``within`` sets the
    scale: ``"unordered"`` (BUG) ``3/(nε)``, ``"ordered"`` (twin) ``4/(nε)``, at least the
    sensitivity. Refuses another size than ``n_rows`` and fewer than two rows.
    """

    epsilon: float
    n_rows: int
    within: str = "unordered"
    reference: tuple[float, ...] = tuple(np.linspace(4.0, 6.0, 11))
    lengthscale: float = 1.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive_int("n_rows", self.n_rows)
        if self.n_rows < 2:
            raise ValueError(f"n_rows: the unbiased MMD needs two rows or more, got {self.n_rows}")
        if self.within not in ("unordered", "ordered"):
            raise ValueError(f"within must be 'unordered' or 'ordered', got {self.within!r}")
        # the statistic lies in [-2, 2]: the float-safety rule at its largest value
        self.float_release().check_domain(2.0, [1.0], what="the statistic's range")

    @property
    def scale(self) -> float:
        """The Laplace scale: ``3/(nε)`` (BUG) or ``4/(nε)`` (twin)."""
        return (3.0 if self.within == "unordered" else 4.0) / (self.n_rows * self.epsilon)

    def kernel(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The EQ kernel matrix of two 1-D point sets (unit variance)."""
        col = [np.asarray(v, dtype=float).reshape(-1, 1) for v in (a, b)]
        return EQ(lengthscale=self.lengthscale)(*col)

    def statistic(self, x: np.ndarray) -> float:
        """``MMD²_u`` of the inputs ``x`` (n ≥ 2) against the reference."""
        z = np.asarray(self.reference)
        kxx, kzz = self.kernel(x, x), self.kernel(z, z)
        n, m = x.size, z.size
        return float((kxx.sum() - np.trace(kxx)) / (n * (n - 1)) - 2.0 * self.kernel(x, z).mean()
                     + (kzz.sum() - np.trace(kzz)) / (m * (m - 1)))

    def peak(self) -> float:
        """``max_x k̄(x)``: a fine grid over the reference's span, then a bounded search
        between the best grid point's neighbours.
        """
        from scipy.optimize import minimize_scalar

        z = np.asarray(self.reference)
        grid = np.linspace(z.min() - 3 * self.lengthscale, z.max() + 3 * self.lengthscale, 4001)
        kbar = self.kernel(grid, z).mean(axis=1)
        i = int(np.argmax(kbar))
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
        best = minimize_scalar(lambda t: -float(self.kernel([t], z).mean()), bounds=(lo, hi),
                               method="bounded", options={"xatol": 1e-12})
        return max(float(-best.fun), float(kbar[i]))

    def true_epsilon(self) -> float:
        """``(2/n)(1 + max k̄) / scale``: ``(2/3)(1 + max k̄)`` (BUG), ``(1 + max k̄)/2`` (twin)."""
        return 2.0 * (1.0 + self.peak()) / (self.n_rows * self.scale)

    def float_release(self) -> FloatRelease:
        """The grid and float τ of :attr:`scale` (issue 20 §4)."""
        return laplace_release([self.scale])

    @property
    def claim(self) -> PureDP:
        """ε-DP under whole-row substitution (``|y| <= 1``, unused), with the float τ."""
        return PureDP(epsilon=self.epsilon, relation=whole_rows(1.0),
                      domain=PublicDomain(1.0), float_tv=self.float_release().tv)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, 1), rounded to the grid of the scale (issue 20 §4)."""
        data = check_dataset(data)
        if data.n != self.n_rows or data.X.shape[1] != 1:
            raise ValueError(f"built for {self.n_rows} rows of one input, got {data.n} of "
                             f"{data.X.shape[1]}")
        if np.any(np.abs(np.asarray(data.y)) > 1.0):
            raise ValueError("y: targets outside |y| <= 1")
        n = check_positive_int("n", n)
        noise = laplace_noise_exact_uniform(self.scale, (n, 1), check_rng(rng))
        return self.float_release().round(np.array([self.statistic(data.X[:, 0])]), noise)


def build_reference_mmd(within: str):  # noqa: ANN201 - a build function for the zoo
    """``build(data, epsilon)`` for :class:`ReferenceMMD` on the data's public size."""

    def build(data: Dataset, *, epsilon: float) -> ReferenceMMD:
        return ReferenceMMD(epsilon=epsilon, n_rows=data.n, within=within)

    return build
