"""Does ``sample`` agree with the mechanism's own ``mean``/``cov``? (catalogue A.2, A.3).

The white-box auditor (A.2), the exploratory pair ranking and the black-box
likelihood-ratio score all *trust* a :class:`~dpgp_audit.contract.GaussianRelease`'s
description of itself. A sampler that disagrees with it — noise shared across
outputs, a different covariance, a different scale, a missing jitter, a fixed
seed — hides from all three. :func:`check_model` tests the implementation
against the description before anything else relies on it, and reports a
mismatch as a finding of its own.

The test
--------
Draw ``n`` releases ``x`` of ``M(D)``, project the residuals ``x − mean(D)`` on
the range of ``cov(D)`` and whiten them, ``z = Λ^{−1/2} Uᵀ (x − m)``. Under the
stated model ``z ~ N(0, I_r)`` and the residual has no component outside the
range (a component there is a mismatch by itself: the model says that
direction carries no noise). Then ``J`` one-dimensional goodness-of-fit tests
are made, each a Kolmogorov distance ``D = sup_t |F̂_n(t) − F₀(t)|``:

* ``zᵀv`` against N(0, 1) along: every whitened axis (at most 16, the smallest
  and largest eigen-directions first), the whitened *all-ones* output direction
  (noise shared across outputs shows up there as variance ``d`` instead of 1),
  and 4 random unit directions drawn from ``rng``;
* ``‖z‖²`` against χ²_r (catches a wrong scale in every direction at once and
  dependence between coordinates that leaves each margin standard normal).

Each test rejects when ``D > c_a = sqrt(ln(2J/a) / (2n))``: by the
Dvoretzky–Kiefer–Wolfowitz inequality with Massart's constant,
``P(D > c) <= 2 exp(−2 n c²)`` for *every* continuous ``F₀`` and every ``n``
(no asymptotics), so the family of J tests has size at most ``a``.

Power (stated in every report): by the same inequality applied to the true law
``F``, the test rejects with probability at least ``1 − β`` whenever the
Kolmogorov distance between ``F`` and ``F₀`` along a tested direction is at
least ``c_a + sqrt(ln(2/β)/(2n))``. :func:`detectable_effects` turns this into the
smallest standard-deviation ratio and mean shift (in noise standard deviations)
detected with power ``1 − β = 0.8``.

**Tail counts.** A law that differs from N(0, 1) only beyond ``t`` standard deviations is
at Kolmogorov distance at most ``Φ(−t)`` from it, so the tests above cannot see tails —
and the tails decide a Gaussian mechanism's δ (a "normal" summed from 12 uniforms, or one
truncated at 3 sd, passes them). So the check also counts, on ``tail_n`` draws
(:data:`TAIL_N` by default, at most the audit's cap), the whitened residuals beyond
``t`` ∈ :data:`TAIL_THRESHOLDS` along every tested direction, ``K ~ Bin(tail_n, 2Φ(−t))``
under the model, and rejects when the exact binomial lower tail ``P(K' <= K)`` is at most
the test's share of α: too *few* draws far out (lighter tails, a smaller scale, a bound
on the noise). Too many is not tested there: more noise than stated is no privacy
concern, and the Kolmogorov tests see a scale that is too large. Half of each dataset's α
goes to the Kolmogorov tests and half to the tail counts (Bonferroni within each).

Moments (mean of ``z``, the extreme eigenvalues of its sample covariance) are
reported beside the tests as descriptive numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.audit.result import AuditResult, Guarantee, Verdict
from dpgp_audit.contract import checked_sample
from dpgp_audit.dataset import Dataset

__all__ = [
    "CHECK_N",
    "TAIL_N",
    "TAIL_THRESHOLDS",
    "ModelTest",
    "TailTest",
    "tail_power",
    "check_model",
    "detectable_effects",
    "dkw_critical",
    "kolmogorov_distance",
]

#: Samples per dataset of the Kolmogorov tests (runner, parts.py).
CHECK_N = 4_000
#: Samples per dataset of the tail counts (at most the audit's cap; the part's allowance).
TAIL_N = 100_000
#: Thresholds, in whitened standard deviations, of the tail counts.
TAIL_THRESHOLDS = (2.5, 3.0, 3.5)
_MAX_AXES = 16  # whitened axes tested (smallest and largest eigen-directions first)
_N_RANDOM = 4  # random unit directions
_POWER = 0.8  # power at which detectable effects are stated
_RANGE_RTOL = 1e-6  # residual outside range(Σ), relative to the in-range noise scale


def dkw_critical(n: int, a: float) -> float:
    """Smallest c with ``P(sup|F̂_n − F| > c) <= a`` by DKW–Massart: ``sqrt(ln(2/a)/(2n))``."""
    n = check_positive_int("n", n)
    if not (0 < a < 1):
        raise ValueError(f"a must lie in (0, 1), got {a!r}")
    return math.sqrt(math.log(2.0 / a) / (2.0 * n))


def kolmogorov_distance(sample: np.ndarray, cdf) -> float:
    """``sup_t |F̂_n(t) − F₀(t)|`` of a 1-D sample against a continuous CDF ``cdf``."""
    s = np.sort(np.asarray(sample, dtype=float).ravel())
    n = s.size
    if n == 0:
        raise ValueError("sample must not be empty")
    u = np.asarray(cdf(s), dtype=float)
    i = np.arange(1, n + 1)
    return float(max(np.max(i / n - u), np.max(u - (i - 1) / n)))


def detectable_effects(n: int, a: float, power: float = _POWER) -> dict:
    """Smallest effects the DKW test at level ``a`` detects with probability ≥ ``power``.

    Along a tested direction the test rejects with probability ≥ ``power`` when the
    Kolmogorov distance of the true law from N(0, 1) is at least
    ``D* = c_a + sqrt(ln(2/(1 − power))/(2n))``. For N(0, r²) that distance is
    ``max_t |Φ(t) − Φ(t/r)|``; for N(m, 1) it is ``2Φ(|m|/2) − 1``.

    Returns
    -------
    dict
        ``distance`` (D*), ``sd_ratio_above`` / ``sd_ratio_below`` (r > 1 and r < 1
        detected), ``mean_shift`` (|m| detected, in noise standard deviations).
    """
    c = dkw_critical(n, a) + math.sqrt(math.log(2.0 / (1.0 - power)) / (2.0 * n))
    out = {"distance": c, "power": power, "level": a, "n": n}
    if c >= 1:
        return {**out, "sd_ratio_above": math.inf, "sd_ratio_below": 0.0,
                "mean_shift": math.inf}

    def ks_scale(r: float) -> float:
        # the two CDFs cross at 0 only; the sup is at t = ±sqrt(2 ln r · r²/(r² − 1))
        if r == 1:
            return 0.0
        t = math.sqrt(2 * math.log(r) * r * r / (r * r - 1))
        return abs(stats.norm.cdf(t) - stats.norm.cdf(t / r))

    above = optimize.brentq(lambda r: ks_scale(r) - c, 1 + 1e-9, 1e6)
    below = optimize.brentq(lambda r: ks_scale(r) - c, 1e-6, 1 - 1e-9)
    shift = 2 * stats.norm.ppf((1 + c) / 2)
    return {**out, "sd_ratio_above": float(above), "sd_ratio_below": float(below),
            "mean_shift": float(shift)}


@dataclass(frozen=True)
class ModelTest:
    """One goodness-of-fit test of the whitened residuals.

    Attributes
    ----------
    dataset
        Which dataset was sampled (``"D"`` or a pair label).
    statistic
        What was tested, e.g. ``"axis 3"``, ``"all-ones direction"``, ``"|z|^2 ~ chi2"``.
    distance
        The Kolmogorov distance found.
    critical
        The DKW critical value at the test's share of α.
    """

    dataset: str
    statistic: str
    distance: float
    critical: float

    @property
    def rejected(self) -> bool:
        """True when the sample contradicts the stated model on this statistic."""
        return self.distance > self.critical


@dataclass(frozen=True)
class TailTest:
    """One tail count of the whitened residuals along a direction (too few is a mismatch).

    Attributes
    ----------
    dataset, statistic
        As for :class:`ModelTest` (the statistic names the direction and the threshold).
    count, expected
        Draws beyond the threshold, and ``n · 2Φ(−t)`` under the stated model.
    pvalue
        The exact binomial ``P(K' <= count)`` under the stated model.
    level
        The test's share of α.
    """

    dataset: str
    statistic: str
    count: int
    expected: float
    pvalue: float
    level: float

    @property
    def rejected(self) -> bool:
        """True when there are too few draws beyond the threshold for the stated model."""
        return self.pvalue <= self.level

    @property
    def ratio(self) -> float:
        """``log p / log level``: above 1 exactly when rejected (the table's scale)."""
        return math.log(max(self.pvalue, 1e-300)) / math.log(self.level)


def _gaussian_tail(t: float) -> float:
    """``P(|Z| > t)`` for ``Z ~ N(0, 1)``: the tail count's rate under the stated model."""
    return 2.0 * float(stats.norm.sf(t))


def tail_power(n: int, level: float, t: float = 3.0, power: float = _POWER) -> float:
    """Largest ratio ρ of the true tail mass beyond ``±t`` to the Gaussian's that the tail
    count on ``n`` draws at ``level`` detects with probability ≥ ``power`` (exact binomial).
    """
    p0 = _gaussian_tail(t)
    k = int(stats.binom.ppf(level, n, p0))  # the largest count rejected is k or k - 1
    while k >= 0 and stats.binom.cdf(k, n, p0) > level:
        k -= 1
    if k < 0:
        return 0.0
    return float(optimize.brentq(lambda r: stats.binom.cdf(k, n, r * p0) - power,
                                 1e-12, 1.0))


def _tail_tests(tag: str, z: np.ndarray, dirs: list[tuple[str, np.ndarray]],
                level: float) -> list[TailTest]:
    """Counts of ``|zᵀv| > t`` for every direction and threshold, each at ``level``."""
    n = z.shape[0]
    out = []
    for name, v in dirs:
        a = np.abs(z @ v)
        for t in TAIL_THRESHOLDS:
            p0 = _gaussian_tail(t)
            k = int(np.count_nonzero(a > t))
            out.append(TailTest(tag, f"{name}: beyond {t:g} sd", k, n * p0,
                                float(stats.binom.cdf(k, n, p0)), level))
    return out


#: Chance that the largest of ``n`` draws of the dropped directions' noise exceeds
#: :func:`dropped_noise_allowance` (Gaussian concentration, union over the draws).
_DROPPED_P = 1e-9


def dropped_noise_allowance(factor: object, n: int) -> float:
    """A bound, exceeded with chance below :data:`_DROPPED_P`, on the largest of ``n`` norms
    of Gaussian noise in the eigen-directions the factor drops.

    The dropped eigenvalues sum to ``s = tr(Σ) − Σ_kept λ`` (plus rounding, 16 ε λ_max per
    dimension) and each is at most ``λ* = min(c, s)`` with c the cut-off, so the noise
    g there has ``E‖g‖ <= sqrt(s)`` and, ``‖·‖`` being ``sqrt(λ*)``-Lipschitz in whitened
    coordinates, ``P(‖g‖ > sqrt(s) + sqrt(λ*) t) <= exp(−t²/2)`` (Gaussian concentration),
    with a union over the draws. A kernel Gram matrix on a fine grid keeps eigenvalues below
    10⁻¹⁰ of the largest that are positive; its samplers draw noise there, as its covariance
    says they should.
    """
    dropped = factor.dim - factor.rank  # type: ignore[attr-defined]
    if dropped <= 0:
        return 0.0
    top = float(factor.eigvals[-1])  # type: ignore[attr-defined]
    err = 16 * np.finfo(float).eps * top
    trace = float(np.trace(factor.cov))  # type: ignore[attr-defined]
    s = max(trace - float(np.sum(factor.eigvals)), 0.0) + factor.dim * err  # type: ignore
    lam = min(max(float(factor.cutoff), 0.0) + err, s)  # type: ignore[attr-defined]
    t = math.sqrt(2.0 * math.log(max(n, 1) / _DROPPED_P))
    return math.sqrt(s) + math.sqrt(lam) * t


def _directions(factor: object, rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """Unit directions in whitened coordinates, with names."""
    r = factor.rank  # type: ignore[attr-defined]
    out: list[tuple[str, np.ndarray]] = []
    if r <= _MAX_AXES:
        axes = list(range(r))
    else:  # eigenvalues ascending: the smallest and the largest first
        half = _MAX_AXES // 2
        axes = list(range(half)) + list(range(r - (_MAX_AXES - half), r))
    for j in axes:
        e = np.zeros(r)
        e[j] = 1.0
        out.append((f"whitened axis {j}", e))
    # the sum of the outputs, in whitened coordinates: v ∝ Λ^{1/2} Uᵀ 1 gives 1ᵀ(x − m)
    v = np.sqrt(factor.eigvals) * (factor.eigvecs.T @ np.ones(factor.dim))  # type: ignore
    if r > 1 and np.linalg.norm(v) > 0:
        out.append(("sum of outputs (shared noise)", v / np.linalg.norm(v)))
    if r > 1:
        for k in range(_N_RANDOM):
            g = rng.standard_normal(r)
            out.append((f"random direction {k}", g / np.linalg.norm(g)))
    return out


def _check_one(mechanism: object, data: Dataset, tag: str, n: int, a: float,
               rng: np.random.Generator, tail_n: int
               ) -> tuple[list[ModelTest], list[TailTest], dict]:
    from dpgp_audit.audit.whitebox import factor_covariance

    m = np.ravel(np.asarray(mechanism.mean(data), dtype=float))  # type: ignore[attr-defined]
    factor = factor_covariance(np.asarray(mechanism.cov(data), dtype=float))  # type: ignore
    rng_dir, rng_sample = rng.spawn(2)
    drawn = max(n, tail_n)
    x_all = np.asarray(checked_sample(mechanism, data, drawn, rng_sample), dtype=float)
    x_all = x_all.reshape(drawn, -1)
    if x_all.shape[1] != m.size:
        return [ModelTest(tag, f"output size {x_all.shape[1]} != mean size {m.size}", 1.0,
                          0.0)], [], {}
    dirs = _directions(factor, rng_dir)
    z_all = factor.whiten(x_all - m)  # once: the first n rows serve the Kolmogorov tests
    tails = _tail_tests(tag, z_all[:tail_n], dirs, a / 2 / (len(dirs) * len(TAIL_THRESHOLDS)))
    resid = x_all[:n] - m
    J = len(dirs) + 2  # + the χ² norm test + the range test
    crit = dkw_critical(n, a / 2 / J)
    tests: list[ModelTest] = []
    # Outside the range the model says the release is exactly the mean, up to the noise of
    # the eigen-directions the factor drops (each of variance at most its cut-off): a
    # sampler that keeps them, as the model does, is not contradicted by that noise.
    out = resid - (resid @ factor.eigvecs) @ factor.eigvecs.T
    out_norm = float(np.max(np.linalg.norm(out, axis=1)))
    scale = math.sqrt(float(factor.eigvals[0]))
    tol = _RANGE_RTOL * scale + 1e-9 * max(1.0, float(np.max(np.abs(m)))) \
        + dropped_noise_allowance(factor, n)
    tests.append(ModelTest(tag, "residual outside range(cov)", 1.0 if out_norm > tol else 0.0,
                           crit))
    z = z_all[:n]
    r = factor.rank
    tests.append(ModelTest(tag, f"|z|^2 ~ chi2({r})",
                           kolmogorov_distance(np.sum(z * z, axis=1),
                                               lambda s: stats.chi2.cdf(s, r)), crit))
    for name, v in dirs:
        tests.append(ModelTest(tag, name, kolmogorov_distance(z @ v, stats.norm.cdf), crit))
    zc = np.cov(z, rowvar=False).reshape(r, r) if n > 1 else np.eye(r)
    ev = np.linalg.eigvalsh(zc)
    moments = {"dataset": tag, "n": n, "rank": r,
               "max_abs_mean_z": float(np.max(np.abs(z.mean(axis=0)))),
               "cov_z_eig_min": float(ev[0]), "cov_z_eig_max": float(ev[-1]),
               "out_of_range_max": out_norm, "tests": J, "critical": crit,
               "tail_tests": len(tails), "tail_n": tail_n}
    return tests, tails, moments


def check_model(mechanism: object, datasets: Sequence[tuple[str, Dataset]] | Dataset,
                rng: np.random.Generator, *, n: int = CHECK_N, alpha: float = 0.05,
                power: float = _POWER, tail_n: int | None = None) -> AuditResult:
    """Test ``mechanism.sample`` against its own ``mean``/``cov`` on each dataset.

    Parameters
    ----------
    mechanism
        A :class:`~dpgp_audit.contract.GaussianRelease` with ``sample``.
    datasets
        One dataset, or ``(tag, dataset)`` pairs (e.g. the user's D and both sides of
        the white-box worst pair); α is split evenly over them (Bonferroni).
    rng
        Generator for the samples and the random directions.
    n
        Samples per dataset of the Kolmogorov tests.
    tail_n
        Samples per dataset of the tail counts (default ``n``); the first ``n`` of them
        serve the Kolmogorov tests.
    alpha
        Family-wise level of the whole check.
    power
        Power at which the detectable effects are stated.

    Returns
    -------
    AuditResult
        ``auditor="model-check"``, ``quantity="statistic/critical"``; ``estimate`` is
        the largest ratio over all tests, > 1 exactly when one rejects: Kolmogorov
        distance / critical value, or ``log p / log level`` of a tail count.
        VIOLATION means the sampler contradicts the mechanism's own description
        (valid with confidence 1 − α): the white-box result and every other use of
        ``mean``/``cov`` are void for this mechanism, whatever they said.
    """
    rng = check_rng(rng)
    n = check_positive_int("n", n)
    tail_n = n if tail_n is None else check_positive_int("tail_n", tail_n)
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if isinstance(datasets, Dataset):
        datasets = [("D", datasets)]
    datasets = list(datasets)
    if not datasets:
        raise ValueError("datasets must not be empty")
    a = alpha / len(datasets)
    all_tests: list[ModelTest] = []
    all_tails: list[TailTest] = []
    moments = []
    for (tag, d), child in zip(datasets, rng.spawn(len(datasets)), strict=True):
        tests, tails, mom = _check_one(mechanism, d, tag, n, a, child, tail_n)
        all_tests += tests
        all_tails += tails
        moments.append(mom)
    worst = max(all_tests, key=lambda t: t.distance / t.critical if t.critical > 0 else math.inf)
    ratio = worst.distance / worst.critical if worst.critical > 0 else math.inf
    worst_tail = max(all_tails, key=lambda t: t.ratio, default=None)
    rejected = [t for t in all_tests if t.rejected]
    tails_rejected = [t for t in all_tails if t.rejected]
    J = moments[0].get("tests", len(all_tests)) if moments else len(all_tests)
    T = moments[0].get("tail_tests", len(all_tails)) if moments else len(all_tails)
    details = {
        "n_per_dataset": n, "tail_n_per_dataset": tail_n, "datasets": [t for t, _ in datasets],
        "alpha_per_dataset": a, "tests_per_dataset": J, "tail_tests_per_dataset": T,
        "rule": ("DKW-Massart Kolmogorov tests of the whitened residuals (axes, sum of "
                 "outputs, random directions, |z|^2 ~ chi2) and a range check, with half of "
                 "alpha; exact binomial counts of too few residuals beyond "
                 f"{', '.join(f'{t:g}' for t in TAIL_THRESHOLDS)} sd along the same "
                 "directions, with the other half; Bonferroni over tests and datasets"),
        "rejected": [f"{t.dataset}: {t.statistic} (D={t.distance:.3g} > {t.critical:.3g})"
                     for t in rejected]
        + [f"{t.dataset}: {t.statistic} ({t.count} drawn, {t.expected:.4g} expected; "
           f"p={t.pvalue:.3g} <= {t.level:.3g})" for t in tails_rejected],
        "worst": {"dataset": worst.dataset, "statistic": worst.statistic,
                  "distance": worst.distance, "critical": worst.critical},
        "ks_rejected": len(rejected), "tail_rejected": len(tails_rejected),
        "moments": moments,
        "power": detectable_effects(n, a / 2 / max(J, 1), power),
        "meaning": ("VIOLATION: sample() contradicts the mechanism's own mean()/cov(); "
                    "white-box results and model-based scores are void for it"),
    }
    if worst_tail is not None:
        details["worst_tail"] = {"dataset": worst_tail.dataset,
                                 "statistic": worst_tail.statistic,
                                 "count": worst_tail.count, "expected": worst_tail.expected,
                                 "pvalue": worst_tail.pvalue}
        details["tail_power"] = {
            "threshold": 3.0, "power": power,
            "mass_ratio_below": tail_power(tail_n, a / 2 / max(T, 1), 3.0, power)}
        ratio = max(ratio, worst_tail.ratio)
    verdict = Verdict.VIOLATION if rejected or tails_rejected else Verdict.NO_EVIDENCE
    return AuditResult(auditor="model-check", verdict=verdict, guarantee=Guarantee.MODEL_TEST,
                       estimate=float(ratio), claimed=1.0, quantity="statistic/critical",
                       alpha=alpha, details=details)
