"""Planted bugs for the default path's former blind spots, each with its correct twin (A.5).

Classes of mistakes that ``audit_mechanism(mech, data, rng)`` used to miss. Each
class has a planted bug here and a correct twin (an ``A.5/…`` control); their row in
:mod:`dpgp_audit.bugs.zoo` names the class, the twin, the true ε and the auditor that
catches the bug on the default path with the samples per side it needs.

==================================== ============================================ =========
ID                                    bug (class)                                  true ε
==================================== ============================================ =========
planted/noise-skipped                 noise skipped w.p. 1e-3 = 100 δ (atom)       ∞
planted/shared-noise-model            one noise draw for every output, iid stated  ∞
                                      in ``cov`` (sampler ≠ its own model)
planted/data-dependent-scale          noise sd from the private targets' spread,   ∞
                                      only ``sample`` exposed
planted/svt-no-query-noise            SVT without noise on the queries             ∞
                                      (Lyu, Su & Li 2017, Alg. 5)
planted/svt-no-cutoff                 SVT answering every query, query noise       ∞ (k → ∞)
                                      Lap(2Δ/ε) (Lyu, Su & Li 2017, Alg. 6)
planted/noisy-max-half-scale          report-noisy-max with Lap(Δ/ε) under the     (computed)
                                      every-answer-moves relation
planted/noisy-max-with-value          report-noisy-max releasing the noisy max     ≈ kε/2
                                      value too (loss only in a rare tail event)
planted/histogram-edge-double-count   a value on an interior bin edge is counted   1.465
                                      in both bins (query jumps at the edges)
planted/refuses-constant              ``ValueError`` for constant targets, a       ∞
                                      dataset of the declared domain (refusal)
==================================== ============================================ =========

The vector-answer mechanisms (SVT, noisy max) take the answer vector ``q(D)``
as the dataset's targets (``X`` holds the public query index) and are stated
under :func:`~dpgp_audit.privacy.claims.all_answers`: every answer may move by
up to Δ at once (Lyu, Su & Li 2017 §2; Ding et al. 2018).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.norms import L2, Norm
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
from dpgp_audit.privacy.claims import (
    ApproxDP,
    PureDP,
    all_answers,
    outputs_only,
    whole_rows,
)
from dpgp_audit.privacy.domain import PublicDomain, declared_domain
from dpgp_audit.privacy.float_release import (
    gaussian_tv_bound,
    iid_gaussian_release,
    release_grid,
    round_to_grid,
)
from dpgp_audit.privacy.gdp import gdp_epsilon

__all__ = [
    "BinSums",
    "DataDependentScaleSum",
    "HistogramRelease",
    "NoiseSkippedSum",
    "NoisyMax",
    "RefusesConstantSum",
    "SparseVector",
    "SVT_NO_CUTOFF_EPSILON",
    "answers_data",
    "histogram_edge_true_epsilon",
    "noisy_max_log_probabilities",
    "noisy_max_with_value_epsilon",
    "pattern_epsilon",
    "realised_epsilon",
    "svt_log_probabilities",
    "svt_value_log_density",
]

_EPS, _DELTA = 1.0, 1e-5
#: Declared public domain of the sums and answer vectors below: the toolbox default
#: |y| <= 1e6 (targets outside are refused), so the A.7 precision auditor probes legal
#: targets only and each bug is caught for its own mistake, not for rounding.
_DOMAIN: PublicDomain = declared_domain(None)
#: The histogram's bins cover [-1, 1]: its query refuses |y| > 1, the whole-row bound.
_HIST_DOMAIN: PublicDomain = PublicDomain(1.0)


def _targets(data: Dataset, domain: PublicDomain = _DOMAIN) -> np.ndarray:
    """The targets, refused (``ValueError`` naming ``y``) outside the declared domain.

    ``data`` that is not a :class:`~dpgp_audit.dataset.Dataset` is refused first
    (``TypeError``/``ValueError`` naming ``data``).
    """
    return domain.targets(check_dataset(data).y)


# --------------------------------------------------------------------------- atoms
@dataclass(frozen=True, eq=False)
class NoiseSkippedSum:
    """Sum of the targets + N(0, σ²), except that with probability ``p_skip`` the noise is skipped.

    ``p_skip = 0`` is the correct analytic Gaussian mechanism (Balle & Wang 2018).
    With ``p_skip > 0`` (the bug: a cache path that returns the stored unperturbed
    answer) the release has a point mass at the private sum, so for neighbours
    the event "output = sum(D)" has probability ``p_skip`` under D and 0 under D′:
    the true ε is infinite as soon as ``p_skip > δ``. Sample-only on purpose.
    """

    epsilon: float
    delta: float
    d: float = 1.0
    p_skip: float = 0.0

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP, outputs only; the noisy release is rounded to its grid (issue 20 §4)."""
        sigma = analytic_gaussian_sigma(self.epsilon, self.delta, self.d)
        tv = iid_gaussian_release([sigma]).tv if self.p_skip == 0 else 0.0
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        domain=_DOMAIN, float_tv=tv)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape ``(n, 1)``."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        s = float(np.sum(_targets(data)))
        sigma = analytic_gaussian_sigma(self.epsilon, self.delta, self.d)
        if self.p_skip > 0:
            # The planted bug keeps the textbook float release it was written with: rounded
            # to the grid (issue 20 §4), its cached raw answer would fall *on* the grid
            # whenever the answer is a multiple of Λ (integer sums at the domain ends, the
            # pairs the default auditors pick), where it is only an excess of mass (loss
            # ≈ 1.8 at δ = 1e-5, beyond 10⁶ draws) instead of the atom it stands for.
            x = s + sigma * rng.standard_normal(n)
            x = np.where(rng.random(n) < self.p_skip, s, x)
        else:
            x = round_to_grid(s, sigma * rng.standard_normal(n), release_grid(sigma))
        return x[:, None]


# --------------------------------------------------------------------------- model mismatch
def _bin_matrix(X: np.ndarray, k: int) -> np.ndarray:
    """(k, n) one-hot membership of each public x in k equal-width bins of [0, 10]."""
    x = np.asarray(X, dtype=float)[:, 0]
    idx = np.clip((x / 10.0 * k).astype(int), 0, k - 1)
    return (idx[None, :] == np.arange(k)[:, None]).astype(float)


@dataclass(frozen=True, eq=False)
class BinSums:
    """Sums of the targets in ``k`` public x-bins + noise; ``mean``/``cov`` state iid N(0, σ² I).

    Each target lies in one bin, so the L2 sensitivity is d and σ is the analytic
    Gaussian σ for it. ``shared=False`` is correct. ``shared=True`` is the bug:
    the sampler draws *one* N(0, σ²) value and adds it to every bin, while
    ``cov`` still states iid noise — differences between bins are noise-free, so
    the true ε is infinite, and every auditor that trusts ``cov`` is blind.
    """

    epsilon: float
    delta: float
    d: float = 1.0
    k: int = 5
    shared: bool = False
    #: the planted bug keeps the textbook float release it was written with (exactly
    #: affine in its noise, as the grey-box auditor's exact path needs); the twin rounds
    float_safe: bool = True

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP, outputs only; rounded to the grid of σ (issue 20 §4)."""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        domain=_DOMAIN, float_tv=iid_gaussian_release(
                            np.full(self.k, self.sigma)).tv if self.float_safe else 0.0)

    @property
    def sigma(self) -> float:
        """Analytic Gaussian σ for L2 sensitivity d."""
        return analytic_gaussian_sigma(self.epsilon, self.delta, self.d)

    @property
    def norm(self) -> Norm:
        """L2."""
        return L2()

    def sensitivity_bound(self) -> float:
        """d: one target moves one bin sum by at most d."""
        return self.d

    def query(self, data: Dataset) -> np.ndarray:
        """The k bin sums."""
        y = _targets(data)  # checks data first
        return _bin_matrix(data.X, self.k) @ y

    def mean(self, data: Dataset) -> np.ndarray:
        """The stated mean (the bin sums)."""
        return self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """The stated covariance σ² I (false for ``shared=True``)."""
        return self.sigma**2 * np.eye(self.k)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape ``(n, k)``."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        z = rng.standard_normal((n, 1 if self.shared else self.k))
        noise = np.broadcast_to(self.sigma * z, (n, self.k))
        if not self.float_safe:
            return self.query(data)[None, :] + noise
        return round_to_grid(self.query(data), noise, release_grid(self.sigma))


# --------------------------------------------------------------------------- data-dependent noise
@dataclass(frozen=True, eq=False)
class DataDependentScaleSum:
    """Sum of the targets + N(0, s(D)²); only ``sample`` is exposed.

    ``adaptive=False`` (correct): s = σ, the analytic σ for sensitivity d.
    ``adaptive=True`` (the bug): s(D) = σ · max(sd(y), floor) / 0.7 — the noise is
    "scaled to the data" (0.7 ≈ the sd of the default targets). Neighbours that
    move the spread of y change the noise variance; at the end of the domain
    (all targets equal) the noise shrinks to the floor and the loss is unbounded
    as the floor → 0.
    """

    epsilon: float
    delta: float
    d: float = 1.0
    adaptive: bool = False
    floor: float = 1e-3

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP, outputs only; rounded to the grid of the noise sd (issue 20 §4)."""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        domain=_DOMAIN, float_tv=gaussian_tv_bound(1, 1))

    def scale(self, data: Dataset) -> float:
        """The noise standard deviation used for ``data``."""
        sigma = analytic_gaussian_sigma(self.epsilon, self.delta, self.d)
        if not self.adaptive:
            return sigma
        return sigma * max(float(np.std(data.y)), self.floor) / 0.7

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape ``(n, 1)``."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        scale = self.scale(data)  # (adaptive: the grid follows the data-dependent scale)
        return round_to_grid(float(np.sum(_targets(data))), scale * rng.standard_normal((n, 1)),
                             release_grid(scale))


# --------------------------------------------------------------------------- refusals
@dataclass(frozen=True, eq=False)
class RefusesConstantSum:
    """BUG: the analytic Gaussian sum, sample only, that refuses constant targets.

    The hurried user standardises the targets first and raises ``ValueError`` when their
    sd is 0 — for datasets of the declared domain — while every neighbour with one target
    moved is released. The error is an output: it tells such a dataset from its neighbour
    with certainty, so the true ε is infinite (exact: the refusal depends on the data
    alone). The release itself is the twin's (``A.5/gaussian-sum-sample-only``).
    """

    epsilon: float
    delta: float
    d: float = 1.0

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP, outputs only, on the toolbox domain (the refused datasets lie in it)."""
        sigma = analytic_gaussian_sigma(self.epsilon, self.delta, self.d)
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        domain=_DOMAIN, float_tv=iid_gaussian_release([sigma]).tv)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape ``(n, 1)``; ``ValueError`` for constant targets (the bug)."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        y = _targets(data)
        if float(np.std(y)) == 0.0:
            raise ValueError("the targets are constant: cannot standardise them")
        sigma = analytic_gaussian_sigma(self.epsilon, self.delta, self.d)
        return round_to_grid(float(np.sum(y)), sigma * rng.standard_normal((n, 1)),
                             release_grid(sigma))


# --------------------------------------------------------------------------- vector answers
def answers_data(k: int = 10, value: float = 0.0) -> Dataset:
    """A query-answer vector as a dataset: ``X`` = query index (public), ``y`` = answers."""
    k = check_positive_int("k", k)
    return Dataset(np.arange(k, dtype=float)[:, None], np.full(k, float(value)),
                   name=f"answers-{k}")


#: The variants of :class:`SparseVector` (Lyu, Su & Li 2017, Fig. 1): (share of ε for the
#: threshold, threshold-noise scale in units of Δ/ε₁ (× c), query-noise scale in units of
#: Δ/ε₂ (× c), cut-off after c ⊤, the ⊤ answer releases the noisy query, threshold redrawn
#: after each ⊤).
_SVT_VARIANTS = {
    "alg1": (0.5, False, 2.0, True, False, False),
    "alg2": (0.5, True, 2.0, True, False, True),
    "alg3": (0.5, False, 1.0, True, True, False),
    "alg4": (0.25, False, None, True, False, False),
    "alg5": (0.5, False, 0.0, False, False, False),
    "alg6": (0.5, False, None, False, False, False),
}


@dataclass(frozen=True, eq=False)
class SparseVector:
    """The sparse vector technique over the answer vector ``y`` (Lyu, Su & Li 2017).

    Output per query: 1 (above the noisy threshold, ⊤), 0 (below, ⊥) or −1 (not
    answered after the c-th ⊤). With ε₁ the threshold's share of ε and ε₂ = ε − ε₁,
    the variants are those of Lyu, Su & Li (VLDB 2017, Fig. 1, Alg. 1–6):

    ``"alg1"``
        Correct (their Alg. 1): ρ ~ Lap(Δ/ε₁), ε₁ = ε/2, on the threshold, ν_i ~
        Lap(2cΔ/ε₂) on each query, stop after c ⊤ — ε-DP.
    ``"alg2"``
        Correct (Dwork & Roth 2014): ρ ~ Lap(cΔ/ε₁), ν_i ~ Lap(2cΔ/ε₂), a fresh ρ
        after every ⊤, stop after c ⊤ — ε-DP (identical in law to Alg. 1 when c = 1).
    ``"alg3"``
        Roth's lecture notes: ν_i ~ Lap(cΔ/ε₂) and the ⊤ answer *releases* q_i + ν_i;
        stop after c ⊤ — not ε-DP (∞-DP as the number of queries grows). Its output
        has 2k columns: the k flags, then the released values (0 where none).
    ``"alg4"``
        Lee & Clifton: ε₁ = ε/4, ν_i ~ Lap(Δ/ε₂) without the factor 2c, stop after
        c ⊤ — only ((1 + 6c)/4)ε-DP.
    ``"alg5"``
        No noise on the queries (Stoddard et al.), no cut-off — not ε'-DP for any ε'.
    ``"alg6"``
        Query noise Lap(Δ/ε₂) without the factor 2c and no cut-off (Chen et al.)
        — its loss grows with the number of queries (∞-DP as k → ∞).

    The claim is the one each paper states: pure ε-DP when every answer may move by
    Δ at once (:func:`~dpgp_audit.privacy.claims.all_answers`).
    """

    epsilon: float
    variant: str = "alg1"
    threshold: float = 0.0
    c: int = 1
    delta_q: float = 1.0

    def __post_init__(self) -> None:
        if self.variant not in _SVT_VARIANTS:
            raise ValueError(f"variant must be one of {sorted(_SVT_VARIANTS)}, "
                             f"got {self.variant!r}")
        check_positive_int("c", self.c)

    @property
    def claim(self) -> PureDP:
        """Pure ε-DP when every answer may move by Δ at once."""
        return PureDP(epsilon=self.epsilon, relation=all_answers(self.delta_q), domain=_DOMAIN)

    @property
    def scales(self) -> tuple[float, float]:
        """Laplace scales (threshold ρ, queries ν) of this variant (ν: 0 when unperturbed)."""
        share, rho_c, nu_unit, _, _, _ = _SVT_VARIANTS[self.variant]
        e1 = self.epsilon * share
        e2 = self.epsilon - e1
        rho = (self.c if rho_c else 1) * self.delta_q / e1
        nu = (self.delta_q / e2 if nu_unit is None else nu_unit * self.c * self.delta_q / e2)
        return rho, nu

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` output vectors in {1, 0, −1}, shape ``(n, k)`` (``(n, 2k)`` for Alg. 3)."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        q = np.asarray(_targets(data), dtype=float)
        k = q.size
        _, _, _, cutoff, release, redraw = _SVT_VARIANTS[self.variant]
        b_rho, b_nu = self.scales
        rho = rng.laplace(0.0, b_rho, size=n)
        nu = rng.laplace(0.0, b_nu, size=(n, k)) if b_nu > 0 else np.zeros((n, k))
        noisy = q[None, :] + nu
        out = np.zeros((n, k))
        values = np.zeros((n, k))
        count = np.zeros(n, dtype=int)
        for i in range(k):
            live = count < self.c if cutoff else np.ones(n, dtype=bool)
            above = live & (noisy[:, i] >= self.threshold + rho)
            out[:, i] = np.where(live, above.astype(float), -1.0)
            values[:, i] = np.where(above, noisy[:, i], 0.0)
            count += above
            if redraw and np.any(above):
                rho = np.where(above, rng.laplace(0.0, b_rho, size=n), rho)
        return np.hstack([out, values]) if release else out


@dataclass(frozen=True, eq=False)
class NoisyMax:
    """Report noisy max over the answer vector ``y`` (Laplace or exponential noise).

    ``scale_factor=2``, ``with_value=False`` and ``value_only=False`` is correct with
    either noise: the argmax of ``q + Lap(2Δ/ε)`` (or ``q + Exp(2Δ/ε)``) is ε-DP when
    every answer may move by Δ (Dwork & Roth Claim 3.9 for monotone answers needs
    only Δ/ε; general vectors need 2Δ/ε; Ding et al. 2018, Alg. 5 and 6).
    Bugs: ``scale_factor=1`` (Lap(Δ/ε), the counting-query scale, under the
    non-monotone relation); ``with_value=True`` (the noisy max *value* is released
    beside the index: its loss lives in the rare event that every noisy answer falls
    far below every true answer — Ding et al. 2018, "NoisyMax3"); ``value_only=True``
    (only the noisy max value is released: Ding et al. 2018, Alg. 7 with Laplace and
    Alg. 8 with exponential noise, where the value's support starts at the largest
    answer, so the loss is unbounded).
    """

    epsilon: float
    scale_factor: float = 2.0
    with_value: bool = False
    delta_q: float = 1.0
    noise: str = "laplace"
    value_only: bool = False

    def __post_init__(self) -> None:
        if self.noise not in ("laplace", "exponential"):
            raise ValueError(f"noise must be 'laplace' or 'exponential', got {self.noise!r}")
        if self.with_value and self.value_only:
            raise ValueError("with_value and value_only exclude each other")

    @property
    def claim(self) -> PureDP:
        """Pure ε-DP when every answer may move by Δ at once."""
        return PureDP(epsilon=self.epsilon, relation=all_answers(self.delta_q), domain=_DOMAIN)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases: the index or the value, shape ``(n, 1)``, or both, ``(n, 2)``."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        q = np.asarray(_targets(data), dtype=float)
        b = self.scale_factor * self.delta_q / self.epsilon
        noise = (rng.laplace(0.0, b, size=(n, q.size)) if self.noise == "laplace"
                 else rng.exponential(b, size=(n, q.size)))
        z = q[None, :] + noise
        idx = np.argmax(z, axis=1)
        value = z[np.arange(n), idx]
        if self.value_only:
            return value[:, None]
        if not self.with_value:
            return idx.astype(float)[:, None]
        return np.column_stack([idx.astype(float), value])


# --------------------------------------------------------------------------- bin edges
_EDGES = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])


@dataclass(frozen=True, eq=False)
class HistogramRelease:
    """Histogram of the targets in 4 bins of [−1, 1] + N(0, σ² I), whole rows with |y| ≤ 1.

    Correct (``closed=False``): half-open bins [e_j, e_{j+1}) (the last one
    closed), one row moves two counts by 1: Δ₂ = √2. The bug (``closed=True``):
    ``lo <= y <= hi`` counts a value lying *exactly* on an interior edge in both
    adjacent bins, so a substitution between two edge values moves four counts:
    Δ₂ = 2, while σ is still calibrated for √2 (true ε 1.465 at (1, 1e-5)). The
    query only jumps at the edges: random or extreme neighbours never see it.
    """

    epsilon: float
    delta: float
    closed: bool = False

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP, whole rows with |y| <= 1."""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=whole_rows(1.0),
                        domain=_HIST_DOMAIN,
                        float_tv=iid_gaussian_release(np.full(4, self.sigma)).tv)

    @property
    def sigma(self) -> float:
        """Analytic σ for Δ₂ = √2."""
        return analytic_gaussian_sigma(self.epsilon, self.delta, math.sqrt(2.0))

    @property
    def norm(self) -> Norm:
        """L2."""
        return L2()

    def sensitivity_bound(self) -> float:
        """√2 (true for half-open bins only)."""
        return math.sqrt(2.0)

    def query(self, data: Dataset) -> np.ndarray:
        """The 4 counts."""
        y = np.asarray(_targets(data, _HIST_DOMAIN), dtype=float)  # refuses |y| > 1
        lo, hi = _EDGES[:-1][:, None], _EDGES[1:][:, None]
        if self.closed:
            inside = (y[None, :] >= lo) & (y[None, :] <= hi)
        else:
            inside = (y[None, :] >= lo) & ((y[None, :] < hi) | (hi == _EDGES[-1]))
        return inside.sum(axis=1).astype(float)

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box mean: the counts."""
        return self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """σ² I."""
        return self.sigma**2 * np.eye(4)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape ``(n, 4)``."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        return round_to_grid(self.query(data), self.sigma * rng.standard_normal((n, 4)),
                             release_grid(self.sigma))


def histogram_edge_true_epsilon(epsilon: float = _EPS, delta: float = _DELTA) -> float:
    """True ε of the double-counting histogram: μ = 2/σ with σ calibrated for √2."""
    sigma = analytic_gaussian_sigma(epsilon, delta, math.sqrt(2.0))
    return gdp_epsilon(delta, 2.0 / sigma)


# --------------------------------------------------------------------------- builders
def build_noise_skipped(data: Dataset, *, epsilon: float = _EPS, delta: float = _DELTA,
                        d: float = 1.0, p_skip: float = 100 * _DELTA) -> NoiseSkippedSum:
    """BUG: the noise is skipped with probability ``p_skip`` (default 100 δ)."""
    return NoiseSkippedSum(epsilon, delta, d, p_skip)


def build_noise_never_skipped(data: Dataset, *, epsilon: float = _EPS, delta: float = _DELTA,
                              d: float = 1.0) -> NoiseSkippedSum:
    """Correct twin: the same sampler, noise always added (sample-only analytic Gaussian)."""
    return NoiseSkippedSum(epsilon, delta, d, 0.0)


def build_bin_sums(data: Dataset, *, epsilon: float = _EPS, delta: float = _DELTA,
                   d: float = 1.0) -> BinSums:
    """Correct: iid noise on 5 public-bin sums, as stated."""
    return BinSums(epsilon, delta, d, shared=False)


def build_shared_noise(data: Dataset, *, epsilon: float = _EPS, delta: float = _DELTA,
                       d: float = 1.0) -> BinSums:
    """BUG: one noise draw shared by all 5 bin sums, iid noise stated in ``cov``."""
    return BinSums(epsilon, delta, d, shared=True, float_safe=False)


def build_fixed_scale(data: Dataset, *, epsilon: float = _EPS, delta: float = _DELTA,
                      d: float = 1.0) -> DataDependentScaleSum:
    """Correct twin: the same sample-only sum with a data-independent σ."""
    return DataDependentScaleSum(epsilon, delta, d, adaptive=False)


def build_data_dependent_scale(data: Dataset, *, epsilon: float = _EPS, delta: float = _DELTA,
                               d: float = 1.0) -> DataDependentScaleSum:
    """BUG: the noise sd is proportional to the sd of the private targets."""
    return DataDependentScaleSum(epsilon, delta, d, adaptive=True)


def build_refuses_constant(data: Dataset, *, epsilon: float = _EPS, delta: float = _DELTA,
                           d: float = 1.0) -> RefusesConstantSum:
    """BUG: a Gaussian sum that refuses constant targets (a legal dataset)."""
    return RefusesConstantSum(epsilon, delta, d)


def build_svt(variant: str):
    """Builder of a SparseVector variant (``"alg1"`` is the correct twin)."""
    def build(data: Dataset, *, epsilon: float = _EPS) -> SparseVector:
        return SparseVector(epsilon, variant=variant)
    return build


def build_noisy_max(scale_factor: float, with_value: bool):
    """Builder of a NoisyMax variant (2, False is the correct twin)."""
    def build(data: Dataset, *, epsilon: float = _EPS) -> NoisyMax:
        return NoisyMax(epsilon, scale_factor=scale_factor, with_value=with_value)
    return build


def build_histogram(closed: bool):
    """Builder of the histogram (``closed=True``: the edge double-count bug)."""
    def build(data: Dataset, *, epsilon: float = _EPS, delta: float = _DELTA
              ) -> HistogramRelease:
        return HistogramRelease(epsilon, delta, closed=closed)
    return build


#: Realised ε of SVT Alg. 6 (k = 10, ε = 1) on the generated pattern pairs, by exact
#: quadrature (:func:`pattern_epsilon`; checked in the tests). A lower bound on its true ε,
#: which is at most kε/2 = 5 (each of the k decisions leaks at most ε/2 given ρ).
SVT_NO_CUTOFF_EPSILON = 4.486


def noisy_max_with_value_epsilon(epsilon: float, k: int) -> float:
    """True ε of report-noisy-max with Lap(2Δ/ε) releasing index *and* value: kε/2.

    Given (index i, value v) the density is ``f(v − q_i) Π_{j≠i} F(v − q_j)``; when
    every answer moves by Δ each of the k factors changes by at most e^{Δ/b} with
    b = 2Δ/ε, and all of them do so at once in the left tail (v below every answer,
    the Laplace CDF there is ½e^{x/b}): the supremum kε/2 is approached only in that
    rare event.
    """
    return k * epsilon / 2.0


# --------------------------------------------------------------------------- exact losses
def _laplace_cdf(x: np.ndarray, b: float) -> np.ndarray:
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / b),
                    1 - 0.5 * np.exp(-np.maximum(x, 0) / b))


def _laplace_pdf(x: np.ndarray, b: float) -> np.ndarray:
    return np.exp(-np.abs(x) / b) / (2 * b)


def noisy_max_log_probabilities(mech: NoisyMax, data: Dataset, grid: int = 20_001) -> np.ndarray:
    """Log P(argmax = i | D) of report-noisy-max, by quadrature over the max value.

    ``P(i) = ∫ f(v − q_i) Π_{j≠i} F(v − q_j) dv`` with the Laplace density f and
    CDF F (trapezoid rule on a grid covering ±40 noise scales).
    """
    if mech.noise != "laplace" or mech.value_only:
        raise ValueError("noisy_max_log_probabilities covers the Laplace index release")
    q = np.asarray(data.y, dtype=float)
    b = mech.scale_factor * mech.delta_q / mech.epsilon
    v = np.linspace(q.min() - 40 * b, q.max() + 40 * b, grid)
    F = _laplace_cdf(v[None, :] - q[:, None], b)
    logF = np.log(np.maximum(F, 1e-300))
    total = logF.sum(axis=0)
    out = np.empty(q.size)
    for i in range(q.size):
        integrand = _laplace_pdf(v - q[i], b) * np.exp(total - logF[i])
        out[i] = math.log(float(np.trapezoid(integrand, v)))
    return out


def _svt_up_probability(mech: SparseVector, q: np.ndarray, thr: np.ndarray) -> np.ndarray:
    """P(q_i + ν_i ≥ thr) for each query (rows) and noisy threshold (columns)."""
    _, b_nu = mech.scales
    if b_nu == 0:
        return (q[:, None] >= thr[None, :]).astype(float)
    return 1 - _laplace_cdf(thr[None, :] - q[:, None], b_nu)


def svt_log_probabilities(mech: SparseVector, data: Dataset, grid: int = 8_001) -> np.ndarray:
    """Log P(output | D) of the SVT variants with finite outputs, by quadrature over ρ.

    Given the threshold noise ρ the k decisions are independent; each output's
    probability is integrated over ρ ~ Lap(b_ρ) by the trapezoid rule on ±40 scales.
    Without a cut-off (Alg. 5, 6) the outputs are every pattern in {0, 1}^k (index
    ``Σ_i 2^i·bit_i``); with the cut-off at c = 1 (Alg. 1, 2, 4) they are "first ⊤ at
    query i" for i = 0 … k−1 and "no ⊤" last (Alg. 2 equals Alg. 1 in law at c = 1).
    Alg. 3 releases values: :func:`svt_value_log_density`.
    """
    _, _, _, cutoff, release, _ = _SVT_VARIANTS[mech.variant]
    if release or (cutoff and mech.c != 1):
        raise ValueError("svt_log_probabilities covers Alg. 5 and 6, and Alg. 1, 2, 4 at c = 1")
    q, k, rho, w = _svt_threshold_grid(mech, data, grid)
    p_up = _svt_up_probability(mech, q, mech.threshold + rho)
    lp_up = np.log(np.maximum(p_up, 1e-300))
    lp_dn = np.log(np.maximum(1 - p_up, 1e-300))
    if cutoff:  # c = 1: ⊥ on the first i queries, then ⊤ (i < k), or ⊥ everywhere (i = k)
        below = np.concatenate([np.zeros((1, rho.size)), np.cumsum(lp_dn, axis=0)])
        ll = np.vstack([below[:k] + lp_up, below[k:]])
        return np.array([math.log(max(float(np.trapezoid(w * np.exp(row), rho)), 1e-300))
                         for row in ll])
    patterns = ((np.arange(2**k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)
    logs = np.empty(2**k)
    for r, pat in enumerate(patterns):
        ll = np.where(pat[:, None], lp_up, lp_dn).sum(axis=0)
        logs[r] = math.log(max(float(np.trapezoid(w * np.exp(ll), rho)), 1e-300))
    return logs


def _svt_threshold_grid(mech: SparseVector, data: Dataset,
                        grid: int) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """Answers q, their number k, the threshold-noise grid ρ (±40 scales) and its density."""
    q = np.asarray(data.y, dtype=float)
    b_rho, _ = mech.scales
    rho = np.linspace(-40 * b_rho, 40 * b_rho, grid)
    return q, q.size, rho, _laplace_pdf(rho, b_rho)


def svt_value_log_density(mech: SparseVector, data: Dataset, values: np.ndarray,
                          grid: int = 8_001) -> tuple[np.ndarray, float]:
    """Alg. 3 at c = 1: log density of "first ⊤ at query i, released value v", and log P(no ⊤).

    ``g(i, v) = f_ν(v − q_i) ∫_{ρ ≤ v − T} f_ρ(ρ) Π_{j<i} F_ν(T + ρ − q_j) dρ`` (the
    earlier queries fell below the noisy threshold, query i passed it with value v);
    returned for every i (rows) and every v in ``values`` (columns), with the log
    probability that no query passes. Trapezoid rule over ρ on ±40 scales.
    """
    _, _, _, _, release, _ = _SVT_VARIANTS[mech.variant]
    if not release or mech.c != 1:
        raise ValueError("svt_value_log_density covers Alg. 3 at c = 1")
    q, k, rho, w = _svt_threshold_grid(mech, data, grid)
    _, b_nu = mech.scales
    thr = mech.threshold + rho
    lp_dn = np.log(np.maximum(_laplace_cdf(thr[None, :] - q[:, None], b_nu), 1e-300))
    below = np.concatenate([np.zeros((1, rho.size)), np.cumsum(lp_dn, axis=0)])
    v = np.asarray(values, dtype=float)
    out = np.empty((k, v.size))
    for i in range(k):
        dens = w * np.exp(below[i])
        # cumulative integral over rho up to v - T (trapezoid), then interpolated at each v
        cum = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(rho))])
        inner = np.interp(v - mech.threshold, rho, cum)
        with np.errstate(divide="ignore"):
            out[i] = np.log(_laplace_pdf(v - q[i], b_nu)) + np.log(np.maximum(inner, 1e-300))
    none = math.log(max(float(np.trapezoid(w * np.exp(below[k]), rho)), 1e-300))
    return out, none


def realised_epsilon(log_p0: np.ndarray, log_p1: np.ndarray, floor: float = -600.0) -> float:
    """``max_o |log P(o|D) − log P(o|D′)|`` over outputs; ∞ when some output is possible
    under one dataset only (log-probability at the numerical floor).
    """
    zero0, zero1 = log_p0 <= floor, log_p1 <= floor
    if np.any(zero0 != zero1):
        return math.inf
    both = ~zero0
    return float(np.max(np.abs(log_p0[both] - log_p1[both])))


def pattern_epsilon(mech: object, pairs: list) -> float:
    """Largest realised ε over ``pairs`` (exact up to quadrature) for NoisyMax / SVT bugs."""
    if isinstance(mech, NoisyMax) and not (mech.with_value or mech.value_only):
        fn = noisy_max_log_probabilities
    elif isinstance(mech, SparseVector):
        fn = svt_log_probabilities
    else:
        raise ValueError("pattern_epsilon covers NoisyMax (index only) and SparseVector")
    return max(realised_epsilon(fn(mech, p.d0), fn(mech, p.d1)) for p in pairs)
