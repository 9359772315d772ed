"""The field's own benchmark: StatDP's and DP-Sniper's algorithms at ε₀ = 0.1 (A.5, issue 20 §5).

Ding, Wang, Wang, Zhang & Kifer (CCS 2018, "Detecting Violations of Differential
Privacy", StatDP) and Bichsel, Steffen, Bogunovic & Vechev (S&P 2021, DP-Sniper) test
their detectors on the same classic set: report-noisy-max with Laplace or exponential
noise, releasing the index (correct) or the value (incorrect); the noisy histogram with
the right scale 1/ε and with the wrong scale ε; and the sparse vector variants that Lyu,
Su & Li (VLDB 2017) collected, Alg. 1 and 2 correct, Alg. 3–6 not. Re-implemented here
from the papers' definitions, with the parameters DP-Sniper's evaluation uses:

* ε₀ = 0.1 for every algorithm; Δ = 1;
* noisy max and histogram over 5 answers, SVT over 10 answers with c = 1 and threshold
  T = 0.5 (Alg. 1) or T = 1 (the others);
* the answer vector [1, …, 1] as the base dataset (StatDP's input patterns all start
  from it);
* the claims as the literature states them: noisy max and SVT under
  :func:`~dpgp_audit.privacy.claims.all_answers` (every answer may move by up to Δ at
  once), the histogram under one-answer neighbours (one count moves by ≤ Δ,
  :func:`~dpgp_audit.privacy.claims.outputs_only`).

==================== ============================== ========================= ==============
planted/statdp-…     papers' names                  what is wrong             true ε
==================== ============================== ========================= ==============
noisy-max-value      NoisyMax3, Ding Alg. 7, v1b    Laplace noise, value only kε₀/2 = 0.25
noisy-max-exp-value  NoisyMax4, Ding Alg. 8, v2b    exponential, value only   ∞
histogram-eps        NoisyHist2, Ding Alg. 10       scale ε₀, not 1/ε₀        1/ε₀ = 10
svt3                 SVT3, Lyu Alg. 3, iSVT4        releases q_i + ν_i        kε₀/2 = 0.5
svt4                 SVT4, Lyu Alg. 4, iSVT3        ν ~ Lap(Δ/ε₂), ε₁ = ε/4   (1+6c)ε₀/4
svt5                 SVT5, Lyu Alg. 5, iSVT1        no query noise            ∞
svt6                 SVT6, Lyu Alg. 6, iSVT2        no 2c, no cut-off         0.42 (pairs)
==================== ============================== ========================= ==============

(1+6c)ε₀/4 = 0.175; "(pairs)": exact quadrature on the generated pairs, a lower bound on
a true ε that grows without bound with the number of queries.

The correct ones — NoisyMax1/2 (index, Laplace or exponential noise), NoisyHist1
(scale 1/ε₀) and SVT1/2 — are built by :func:`correct_variants`; the bug zoo's twins are
``A.5/noisy-max`` and ``A.5/svt`` (the same algorithms at ε = 1) and the two controls
``A.5/statdp-noisy-max-exp`` and ``A.5/statdp-histogram``. ``benchmarks/bench_statdp.py``
audits all twelve on the default path.

The mechanisms are the kit's own classes, parameterised
(:class:`~dpgp_audit.bugs.blindspots.NoisyMax`,
:class:`~dpgp_audit.bugs.blindspots.SparseVector`) plus :class:`NoisyHistogram`.
All are sample-only, as StatDP and DP-Sniper see them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.bugs.blindspots import (
    _DOMAIN,
    NoisyMax,
    SparseVector,
    _targets,
    answers_data,
    noisy_max_with_value_epsilon,
)
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import PureDP, outputs_only
from dpgp_audit.privacy.domain import check_linear_release
from dpgp_audit.privacy.float_release import (
    FloatRelease,
    laplace_noise_exact_uniform,
    laplace_release,
)

__all__ = [
    "EPSILON_0",
    "NoisyHistogram",
    "SVT4_EPSILON",
    "SVT6_EPSILON",
    "StatDPVariant",
    "correct_variants",
    "incorrect_variants",
    "noisy_max_data",
    "svt_data",
]

#: ε₀ of every algorithm in DP-Sniper's evaluation (and the smallest claim in StatDP's).
EPSILON_0 = 0.1
#: Answers of the noisy-max and histogram inputs, and of the SVT inputs.
K_NOISY_MAX = 5
K_SVT = 10
#: SVT thresholds: 0.5 for Alg. 1, 1 for the others (DP-Sniper's configuration); c = 1.
T_SVT1 = 0.5
T_SVT = 1.0
C_SVT = 1

#: True ε of Lyu Alg. 4 at c = 1: ((1 + 6c)/4) ε₀ (Lyu, Su & Li 2017, Thm 5), attained to
#: within 3e-4 on the generated pairs by exact quadrature (checked in the tests).
SVT4_EPSILON = (1 + 6 * C_SVT) / 4 * EPSILON_0
#: Realised ε of Lyu Alg. 6 (k = 10, ε₀ = 0.1) on the generated pattern pairs, by exact
#: quadrature (``blindspots.pattern_epsilon``; checked in the tests): a lower bound on its
#: true ε, which grows without bound with the number of queries.
SVT6_EPSILON = 0.42


def noisy_max_data() -> Dataset:
    """The answer vector [1] * 5 (StatDP's base input for noisy max and the histogram)."""
    return answers_data(K_NOISY_MAX, 1.0)


def svt_data() -> Dataset:
    """The answer vector [1] * 10 (StatDP's base input for the SVT variants)."""
    return answers_data(K_SVT, 1.0)


@dataclass(frozen=True, eq=False)
class NoisyHistogram:
    """Laplace noise on each count of a histogram: ``y + Lap(scale)`` (Ding et al. 2018, Alg. 9/10).

    The counts are the answer vector ``y``; neighbours move one count by at most Δ
    (one-answer relation, as StatDP states it). ``scale = Δ/ε`` is correct
    (NoisyHist1); ``scale = ε`` (the bug, NoisyHist2: the noise parameter read as
    the scale) gives true ε = Δ/ε₀ — 10 at ε₀ = 0.1.

    The correct one releases float-safely (``float_safe=True``: exact Laplace noise, the
    exact sum rounded to the public grid of :func:`~dpgp_audit.privacy.float_release.
    laplace_release`, issue 20 §4); the planted one keeps the textbook float release
    ``y + rng.laplace(...)``, like the other planted calibration bugs. ``k`` is the
    number of counts it is built for (the claim's float slack covers k coordinates).
    """

    epsilon: float
    scale: float
    delta_q: float = 1.0
    float_safe: bool = True
    k: int = K_NOISY_MAX

    @property
    def claim(self) -> PureDP:
        """Pure ε-DP when one count moves by at most Δ (with its float slack, issue 20 §4)."""
        return PureDP(epsilon=self.epsilon, relation=outputs_only(self.delta_q), domain=_DOMAIN,
                      float_tv=self.float_release().tv if self.float_safe else 0.0)

    def float_release(self) -> FloatRelease:
        """The public grid of the ``k`` noisy counts and their float total variation τ."""
        return laplace_release(np.full(self.k, self.scale))

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` noisy histograms, shape ``(n, k)``."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        q = np.asarray(_targets(data), dtype=float)
        if not self.float_safe:
            return q[None, :] + rng.laplace(0.0, self.scale, size=(n, q.size))
        if q.size != self.k:
            raise ValueError(f"data: built for {self.k} counts, got {q.size}")
        release = self.float_release()
        eye = np.eye(q.size)
        check_linear_release(_DOMAIN, eye, release)
        noise = laplace_noise_exact_uniform(self.scale, (n, q.size), rng)
        return release.round_linear(eye, q, noise)


# --------------------------------------------------------------------------- builders
def build_noisy_max(noise: str, release: str) -> Callable[..., NoisyMax]:
    """Builder of report-noisy-max with ``noise`` ∈ {laplace, exponential}, scale 2Δ/ε.

    ``release`` is ``"index"`` (correct, Ding Alg. 5/6) or ``"value"`` (Alg. 7/8).
    """
    if release not in ("index", "value"):
        raise ValueError(f"release must be 'index' or 'value', got {release!r}")

    def build(data: Dataset, *, epsilon: float = EPSILON_0) -> NoisyMax:
        return NoisyMax(epsilon, scale_factor=2.0, noise=noise, value_only=release == "value")
    return build


def build_histogram(wrong_scale: bool) -> Callable[..., NoisyHistogram]:
    """Builder of the noisy histogram: scale 1/ε (correct) or ε (the bug)."""
    def build(data: Dataset, *, epsilon: float = EPSILON_0) -> NoisyHistogram:
        return NoisyHistogram(epsilon, epsilon if wrong_scale else 1.0 / epsilon,
                              float_safe=not wrong_scale, k=data.n)
    return build


def build_svt(variant: str) -> Callable[..., SparseVector]:
    """Builder of Lyu et al.'s ``variant`` at c = 1 and DP-Sniper's threshold."""
    threshold = T_SVT1 if variant == "alg1" else T_SVT

    def build(data: Dataset, *, epsilon: float = EPSILON_0) -> SparseVector:
        return SparseVector(epsilon, variant=variant, threshold=threshold, c=C_SVT)
    return build


# --------------------------------------------------------------------------- the set
@dataclass(frozen=True)
class StatDPVariant:
    """One algorithm of the benchmark set at its published parameters.

    ``name`` is the kit's short name (``planted/statdp-<name>`` for the incorrect ones);
    ``paper`` the names the papers use; ``true_epsilon`` the true ε (``None`` for the
    correct ones: at most ε₀).
    """

    name: str
    paper: str
    build: Callable[..., object]
    data: Callable[[], Dataset]
    correct: bool
    true_epsilon: float | None = None


def incorrect_variants() -> tuple[StatDPVariant, ...]:
    """The seven incorrect algorithms (module table)."""
    inf = float("inf")
    return (
        StatDPVariant("noisy-max-value", "NoisyMax3 (Ding Alg. 7; StatDP v1b)",
                      build_noisy_max("laplace", "value"), noisy_max_data, False,
                      noisy_max_with_value_epsilon(EPSILON_0, K_NOISY_MAX)),
        StatDPVariant("noisy-max-exp-value", "NoisyMax4 (Ding Alg. 8; StatDP v2b)",
                      build_noisy_max("exponential", "value"), noisy_max_data, False, inf),
        StatDPVariant("histogram-eps", "NoisyHist2 (Ding Alg. 10; StatDP histogram_eps)",
                      build_histogram(True), noisy_max_data, False, 1.0 / EPSILON_0),
        StatDPVariant("svt3", "SVT3 (Lyu Alg. 3; StatDP iSVT4)", build_svt("alg3"), svt_data,
                      False, K_SVT * EPSILON_0 / 2),
        StatDPVariant("svt4", "SVT4 (Lyu Alg. 4; StatDP iSVT3)", build_svt("alg4"), svt_data,
                      False, SVT4_EPSILON),
        StatDPVariant("svt5", "SVT5 (Lyu Alg. 5; StatDP iSVT1)", build_svt("alg5"), svt_data,
                      False, inf),
        StatDPVariant("svt6", "SVT6 (Lyu Alg. 6; StatDP iSVT2)", build_svt("alg6"), svt_data,
                      False, SVT6_EPSILON),
    )


def correct_variants() -> tuple[StatDPVariant, ...]:
    """The five correct algorithms at the same parameters (ε₀-DP as claimed)."""
    return (
        StatDPVariant("noisy-max", "NoisyMax1 (Ding Alg. 5; StatDP v1a)",
                      build_noisy_max("laplace", "index"), noisy_max_data, True),
        StatDPVariant("noisy-max-exp", "NoisyMax2 (Ding Alg. 6; StatDP v2a)",
                      build_noisy_max("exponential", "index"), noisy_max_data, True),
        StatDPVariant("histogram", "NoisyHist1 (Ding Alg. 9; StatDP histogram)",
                      build_histogram(False), noisy_max_data, True),
        StatDPVariant("svt1", "SVT1 (Lyu Alg. 1; StatDP SVT)", build_svt("alg1"), svt_data,
                      True),
        StatDPVariant("svt2", "SVT2 (Lyu Alg. 2; Dwork & Roth)", build_svt("alg2"), svt_data,
                      True),
    )
