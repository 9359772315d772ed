"""Mistakes a hurried user or a paper implementation makes, for the mutation benchmark (A.5).

The planted bugs of :mod:`dpgp_audit.bugs.calibration` were written *for* the
auditors. These mutants were not: each is a small mechanism with one mistake of
the kind that reaches real code (wrong scale, composition at full ε, noise
before clipping, amplification without subsampling, shared noise, a misstated
utility range, leaked metadata, std passed as variance, the sensitivity of the
mean used for the sum, …; for a DP GP posterior mean, the sensitivity taken from
another fit's weights and the lengthscale fitted on the private targets; releases whose
branch, bins or candidates the data shape: noise skipped on a zero or a large sum,
``np.histogram``'s default range, the data values as an exponential mechanism's
candidates, targets standardised by their own spread, the L∞ sensitivity for a Gaussian
vector, a noise slice that misses a coordinate; sparse and subset GP releases whose
lengthscale, inducing inputs or subset do not match their calibration; the classical
Gaussian σ without the 2 under the root, a median noised for the mean's sensitivity,
per-feature histograms noised as if a row touched one of them), plus
**negative controls** that look wrong but are private (more noise than needed,
post-processing that creates atoms, noise on the inputs, Laplace where Gaussian
was intended in one dimension, a GP's posterior variance released beside its mean, a
histogram on a fixed range, a median over a public grid, an integer count plus rounded
Laplace noise).

Every mutant comes in two **forms**:

``"sample"``
    Only ``claim`` and ``sample`` — what a black-box user hands the kit.
``"model"``
    The same sampler plus the description its author wrote: ``mean``/``cov``
    (:class:`~dpgp_audit.contract.GaussianRelease`) or ``query``/``norm``/
    ``sensitivity_bound`` (:class:`~dpgp_audit.contract.SensitivityQuery`), or
    ``log_probabilities``. The description is what the author *believed*, so it
    can be wrong in its own way (it describes the intended mechanism, not the
    buggy sampler) — :mod:`dpgp_audit.audit.model_check` exists for that.

:func:`mutants` lists them; :func:`dpgp_audit.experiments.mutation.run_mutation` (run by
``benchmarks/bench_mutation.py``) audits every form on the default path and reports the
mutation score per form.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.bugs.calibration import eq_kernel, smoother_weights
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.norms import L1, L2, Linf, Norm
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
from dpgp_audit.privacy.claims import ApproxDP, Claim, PureDP, outputs_only, whole_rows
from dpgp_audit.privacy.domain import PublicDomain, declared_domain
from dpgp_audit.privacy.float_release import (
    laplace_noise_exact_uniform,
    release_grid,
    round_to_grid,
)

__all__ = ["CELL_BINS", "CONTRAST", "FEATURE_BINS", "FORMS", "HIST_BINS", "PTR_LABELS",
           "PTR_THRESHOLD", "SKETCH", "SLOPES", "SUPPRESS_BELOW", "TRIM", "MutantSpec",
           "SampleOnly", "box_rows", "build_form", "cell_counts",
           "classical_sigma_without_the_2", "clipped_gradient", "contrast_sum", "cross_moment",
           "data_range_counts",
           "feature_histograms", "feature_inputs", "fitted_lengthscale", "gp_fit_weights",
           "gp_log_marginal_likelihood", "gp_posterior_sd_sigmas", "half_sums",
           "kernel_vector_bound", "median_rank_utility", "mode_margin", "mutants",
           "positive_count", "ptr_label_data", "public_range_counts", "public_x_sd",
           "scale_grid", "scaled_up_sd", "sketch_of_sum", "slope_data", "slope_utility",
           "standardised_clipped_sum", "top_target_rows", "trimmed_mean", "vector_weights"]

FORMS: tuple[str, ...] = ("sample", "model")
_EPS, _DELTA = 1.0, 1e-5


# --------------------------------------------------------------------------- forms
@dataclass(frozen=True, eq=False)
class SampleOnly:
    """A mechanism that exposes only ``claim`` and ``sample`` (the black-box form)."""

    claim_: Claim
    draw: Callable[[Dataset, int, np.random.Generator], np.ndarray]
    name: str = ""

    @property
    def claim(self) -> Claim:
        """The (possibly false) privacy claim."""
        return self.claim_

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape ``(n, k)``; targets outside ``claim.domain`` are refused."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        _check_domain(self.claim_, data)
        out = np.asarray(self.draw(data, n, rng), dtype=float)
        return out.reshape(n, -1)


@dataclass(frozen=True, eq=False)
class _WithGaussianModel(SampleOnly):
    mean_fn: Callable[[Dataset], np.ndarray] = field(default=None)  # type: ignore[assignment]
    cov_fn: Callable[[Dataset], np.ndarray] = field(default=None)  # type: ignore[assignment]

    def mean(self, data: Dataset) -> np.ndarray:
        """The mean its author stated."""
        return np.ravel(np.asarray(self.mean_fn(data), dtype=float))

    def cov(self, data: Dataset) -> np.ndarray:
        """The covariance its author stated."""
        return np.atleast_2d(np.asarray(self.cov_fn(data), dtype=float))


@dataclass(frozen=True, eq=False)
class _WithQuery(SampleOnly):
    query_fn: Callable[[Dataset], np.ndarray] = field(default=None)  # type: ignore[assignment]
    norm_: Norm = field(default_factory=L2)
    bound: float = 1.0

    @property
    def norm(self) -> Norm:
        """The norm of its author's sensitivity proof."""
        return self.norm_

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free query its author stated."""
        return np.ravel(np.asarray(self.query_fn(data), dtype=float))

    def sensitivity_bound(self) -> float:
        """The sensitivity its author stated."""
        return float(self.bound)


@dataclass(frozen=True, eq=False)
class _WithDiscreteModel(_WithQuery):
    logp_fn: Callable[[Dataset], np.ndarray] = field(default=None)  # type: ignore[assignment]

    def log_probabilities(self, data: Dataset) -> np.ndarray:
        """The selection log-probabilities its author stated."""
        return np.asarray(self.logp_fn(data), dtype=float)


@dataclass(frozen=True)
class MutantSpec:
    """One mutant: how to build both forms and what the truth is.

    Attributes
    ----------
    name
        Short ID, e.g. ``"composition-full-eps"``.
    mistake
        One line: what the author got wrong (or, for controls, why it looks wrong).
    private
        True for negative controls (the mechanism *is* private; flagging it is a false alarm).
    claim
        The mechanism's claim.
    draw
        The sampler ``(data, n, rng) -> (n, k)``.
    model
        ``{"mean": f, "cov": f}``, ``{"query": f, "norm": Norm, "bound": b}`` or both with
        ``"logp"``: the description its author wrote (the ``"model"`` form).
    data
        Dataset the benchmark audits on.
    """

    name: str
    mistake: str
    private: bool
    claim: Claim
    draw: Callable[[Dataset, int, np.random.Generator], np.ndarray]
    model: dict
    data: Dataset

    @property
    def id(self) -> str:
        """The zoo's ID: ``mutant/<name>`` (planted bugs are ``planted/<name>``)."""
        return f"mutant/{self.name}"


def build_form(spec: MutantSpec, form: str) -> SampleOnly:
    """The mechanism of ``spec`` in ``form`` (``"sample"`` or ``"model"``)."""
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    if form == "sample":
        return SampleOnly(spec.claim, spec.draw, spec.name)
    m = spec.model
    if "logp" in m:
        return _WithDiscreteModel(spec.claim, spec.draw, spec.name, query_fn=m["query"],
                                  norm_=m["norm"], bound=m["bound"], logp_fn=m["logp"])
    if "mean" in m:
        return _WithGaussianModel(spec.claim, spec.draw, spec.name, mean_fn=m["mean"],
                                  cov_fn=m["cov"])
    return _WithQuery(spec.claim, spec.draw, spec.name, query_fn=m["query"], norm_=m["norm"],
                      bound=m["bound"])


# --------------------------------------------------------------------------- helpers
def _sigma(sens: float, epsilon: float = _EPS, delta: float = _DELTA) -> float:
    return analytic_gaussian_sigma(epsilon, delta, sens)


def _checked(claim: Claim, data: Dataset) -> Dataset:
    """``data``, once its targets are checked against the claim's domain (:func:`_check_domain`)."""
    _check_domain(claim, data)
    return data


def _check_domain(claim: Claim, data: Dataset) -> None:
    """Refuse targets outside the claim's declared domain (``ValueError`` naming ``y``)."""
    data = check_dataset(data)
    domain = getattr(claim, "domain", None)
    if domain is not None:
        domain.targets(data.y)


#: Outputs-only mutants declare the shipped toolbox's default domain |y| <= 1e6
#: (:func:`~dpgp_audit.privacy.domain.declared_domain`), so the A.7 precision auditor
#: probes legal targets only and each mutant is caught (or not) for its own mistake.
_OUT_DOMAIN: PublicDomain = declared_domain(None)


def _claim_out(d: float = 1.0) -> ApproxDP:
    return ApproxDP(epsilon=_EPS, delta=_DELTA, relation=outputs_only(d), domain=_OUT_DOMAIN)


def _claim_rows(b: float = 1.0) -> ApproxDP:
    """Whole rows with |y| <= b: the relation's bound is the domain, declared as such."""
    return ApproxDP(epsilon=_EPS, delta=_DELTA, relation=whole_rows(b), domain=PublicDomain(b))


def _sum(data: Dataset) -> np.ndarray:
    return np.array([float(np.sum(data.y))])


def _median(data: Dataset) -> np.ndarray:
    return np.array([float(np.median(data.y))])


def _gauss(mean: Callable[[Dataset], np.ndarray], sd: Callable[[Dataset], float]
           ) -> Callable[[Dataset, int, np.random.Generator], np.ndarray]:
    def draw(data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        m = np.ravel(mean(data))
        return m[None, :] + sd(data) * rng.standard_normal((n, m.size))
    return draw


def _safe(mean: Callable[[Dataset], np.ndarray], sd: Callable[[Dataset], float]
          ) -> Callable[[Dataset, int, np.random.Generator], np.ndarray]:
    """A float-safe Gaussian release, as a careful user writes it with the kit (issue 20 §4):
    the noisy value rounded exactly to the public grid of its sd
    (:func:`~dpgp_audit.privacy.float_release.round_to_grid`).
    """
    def draw(data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        m = np.ravel(mean(data))
        s = sd(data)
        return round_to_grid(m, s * rng.standard_normal((n, m.size)), release_grid(s))
    return draw


def _safe_laplace(query: Callable[[Dataset], np.ndarray], scale: Callable[[Dataset], float]
                  ) -> Callable[[Dataset, int, np.random.Generator], np.ndarray]:
    """A float-safe Laplace release (the kit's sampler, rounded to the grid of its sd)."""
    def draw(data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        q, b = np.ravel(query(data)), scale(data)
        return round_to_grid(q, laplace_noise_exact_uniform(b, (n, q.size), rng),
                             release_grid(math.sqrt(2.0) * b))
    return draw


def _const_cov(var: float, k: int = 1) -> Callable[[Dataset], np.ndarray]:
    return lambda data: var * np.eye(k)


def _bins(data: Dataset, k: int) -> np.ndarray:
    """One-hot bin membership of each row's x (public) in k equal bins of the x range."""
    x = np.asarray(data.X)[:, 0]
    lo, hi = float(x.min()), float(x.max())
    idx = np.minimum(((x - lo) / max(hi - lo, 1e-12) * k).astype(int), k - 1)
    return (idx[None, :] == np.arange(k)[:, None]).astype(float)


# --------------------------------------------------------------------------- the mutants
def mutants(data: Dataset) -> list[MutantSpec]:  # noqa: PLR0915 - one flat list reads best
    """Every mutant and negative control on ``data`` (ε = 1, δ = 1e-5 unless pure DP).

    The benchmark uses the kit's default dataset (20 points, targets in [−1, 1]);
    the relations are outputs-only with d = 1 or whole rows with |y| ≤ 1.
    """
    s1 = _sigma(1.0)
    out: list[MutantSpec] = []

    def add(name: str, mistake: str, claim: Claim, draw, model: dict, *, private: bool = False,
            d: Dataset = data) -> None:
        out.append(MutantSpec(name, mistake, private, claim, draw, model, d))

    # 1. wrong scale: sd/2 (the 'scale' argument of a helper taken for the sd of the sum)
    add("wrong-scale", "noise sd halved (a helper's scale argument read as sd)", _claim_out(),
        _gauss(_sum, lambda d: s1 / 2), {"mean": _sum, "cov": _const_cov((s1 / 2) ** 2)})
    # 2. std passed where the variance was expected
    add("std-as-variance", "noise variance set to sigma (std passed as variance)", _claim_out(),
        _gauss(_sum, lambda d: math.sqrt(s1)), {"mean": _sum, "cov": _const_cov(s1**2)})
    # 3. four releases, each at the full budget
    W4 = np.ones((4, 1))
    add("composition-full-eps", "4 releases of the sum, each calibrated at the full (eps, delta)",
        _claim_out(), _gauss(lambda d: W4 @ _sum(d), lambda d: s1),
        {"mean": lambda d: W4 @ _sum(d), "cov": _const_cov(s1**2, 4)})
    # 4. noise before clipping: the noisy total is clipped, not each target
    c = 0.25
    sc = _sigma(2 * c)

    def clipped_sum(d: Dataset) -> np.ndarray:
        return np.array([float(np.sum(np.clip(d.y, -c, c)))])

    def noise_then_clip(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        raw = float(np.sum(d.y)) + sc * rng.standard_normal((n, 1))
        return np.clip(raw, -c * d.n, c * d.n)
    add("noise-before-clipping", "targets clipped to 0.25 for the bound, but the clip is "
        "applied to the noisy total", _claim_rows(), noise_then_clip,
        {"query": clipped_sum, "norm": L2(), "bound": 2 * c})
    # 5. amplification by subsampling claimed, no subsampling done
    q = 0.1
    eps0 = math.log1p((math.e - 1.0) / q)
    sa = analytic_gaussian_sigma(eps0, _DELTA / q, 1.0)
    add("amplification-without-subsampling", "sigma calibrated for Poisson subsampling at "
        "rate 0.1, but every record is used", _claim_out(), _gauss(_sum, lambda d: sa),
        {"mean": _sum, "cov": _const_cov(sa**2)})
    # 6. one noise draw shared by every output (bin sums of 5 public x-bins)
    k = 5

    def bin_sums(d: Dataset) -> np.ndarray:
        return _bins(d, k) @ d.y

    def shared(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        return bin_sums(d)[None, :] + s1 * rng.standard_normal((n, 1))
    add("shared-noise", "one noise draw added to every bin sum (iid noise stated)", _claim_out(),
        shared, {"mean": bin_sums, "cov": _const_cov(s1**2, k)})
    # 7. exponential mechanism with a misstated utility range (range 2 stated as 1)
    kc = 5

    def util(d: Dataset) -> np.ndarray:
        x = np.asarray(d.X)[:, 0]
        r = np.arange(1, kc + 1)[:, None]
        return np.cos(r * x[None, :]) @ np.clip(d.y, -1, 1)

    def exp_logp(d: Dataset) -> np.ndarray:
        a = _EPS * util(d) / 2.0  # factor 2 present, but Δu = 2 was stated as 1
        a = a - a.max()
        return a - math.log(float(np.sum(np.exp(a))))

    def exp_draw(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        g = rng.gumbel(size=(n, kc))
        return np.argmax(exp_logp(d)[None, :] + g, axis=1).astype(float)[:, None]
    add("misstated-utility-range", "exponential mechanism: per-record score in [-1, 1] "
        "(range 2) stated as sensitivity 1",
        PureDP(epsilon=_EPS, relation=whole_rows(1.0), domain=PublicDomain(1.0)),
        exp_draw, {"query": util, "norm": Linf(), "bound": 1.0, "logp": exp_logp})
    # 8. metadata leaked next to the noisy statistic: the number of clipped targets
    c8 = 0.5

    def clipped(d: Dataset) -> np.ndarray:
        return np.array([float(np.sum(np.clip(d.y, -c8, c8)))])

    def leak(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        s = clipped(d)[0] + _sigma(2 * c8) * rng.standard_normal(n)
        meta = float(np.sum(np.abs(d.y) > c8))
        return np.column_stack([s, np.full(n, meta)])
    add("leaking-metadata", "the number of clipped targets is released beside the noisy sum",
        _claim_rows(), leak, {"query": clipped, "norm": L2(), "bound": 2 * c8})
    # 9. the mean's sensitivity used for the sum
    sm = _sigma(2.0 / data.n)
    add("mean-sensitivity-for-sum", "sum released with the sensitivity of the mean (2b/N)",
        _claim_rows(), _gauss(_sum, lambda d: sm), {"query": _sum, "norm": L2(),
                                                    "bound": 2.0 / data.n})
    # 10. Laplace calibrated with the L2 sensitivity in 16 dimensions
    W16 = np.full((16, 1), 0.25)

    def lap16(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        return (W16 @ _sum(d))[None, :] + rng.laplace(0.0, 1.0 / _EPS, size=(n, 16))
    add("laplace-l2", "Laplace scale from the L2 sensitivity (1) of a 16-dim release whose "
        "L1 sensitivity is 4",
        PureDP(epsilon=_EPS, relation=outputs_only(1.0), domain=_OUT_DOMAIN), lap16,
        {"query": lambda d: W16 @ _sum(d), "norm": L1(), "bound": 1.0})
    # 11. noise scale fitted on the data (sd of the targets)
    def dd_sd(d: Dataset) -> float:
        return s1 * max(float(np.std(d.y)), 1e-3) / 0.7
    add("data-dependent-scale", "noise sd proportional to the sd of the private targets",
        _claim_out(), _gauss(_sum, dd_sd), {"mean": _sum, "cov": lambda d: np.eye(1) *
                                            dd_sd(d) ** 2})
    # 12. clip bound taken from the data (max |y|), sensitivity 2·c(D)
    def clip_bound(d: Dataset) -> float:
        return max(float(np.max(np.abs(d.y))), 1e-3)

    def dd_clip_sum(d: Dataset) -> np.ndarray:
        return np.array([float(np.sum(np.clip(d.y, -clip_bound(d), clip_bound(d))))])
    add("data-dependent-clip", "clip bound = max |y| of the private data; noise for 2 c(D)",
        _claim_rows(), _gauss(dd_clip_sum, lambda d: _sigma(2 * clip_bound(d))),
        {"mean": dd_clip_sum, "cov": lambda d: np.eye(1) * _sigma(2 * clip_bound(d)) ** 2})
    # 13. a code path that skips the noise with probability 1e-3 (= 100 delta)
    p_skip = 100 * _DELTA

    def skip(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        x = _sum(d)[0] + s1 * rng.standard_normal(n)
        return np.where(rng.random(n) < p_skip, _sum(d)[0], x)[:, None]
    add("noise-skipped-rarely", "the unperturbed value is returned with probability 1e-3 "
        "(a cache path)", _claim_out(), skip, {"mean": _sum, "cov": _const_cov(s1**2)})
    # 14. noise truncated at ±3 sd ("no outliers")
    def trunc(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        return _sum(d)[0] + s1 * np.clip(rng.standard_normal((n, 1)), -3.0, 3.0)
    add("truncated-noise", "Gaussian noise clipped to +-3 sd (bounded noise)", _claim_out(),
        trunc, {"mean": _sum, "cov": _const_cov(s1**2)})
    # 15. the generator seeded from the data ("reproducible releases")
    def seeded(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        own = np.random.default_rng(zlib.crc32(d.y.tobytes()))  # the mistake
        return _sum(d)[0] + s1 * own.standard_normal((n, 1))
    add("seed-from-data", "noise generator seeded from a hash of the data (reproducible, "
        "hence deterministic given D)", _claim_out(), seeded,
        {"mean": _sum, "cov": _const_cov(s1**2)})
    # 16. add/remove sensitivity used for replace-one
    add("neighbour-mismatch", "sensitivity b (add/remove) used under replace-one (2b)",
        _claim_rows(), _gauss(_sum, lambda d: _sigma(1.0)),
        {"query": _sum, "norm": L2(), "bound": 1.0})
    # 17. noise calibrated to a data-dependent local sensitivity of the median
    def local_sens(d: Dataset) -> float:
        ys = np.sort(d.y)
        m = d.n // 2
        return max(float(ys[min(m + 1, d.n - 1)] - ys[max(m - 1, 0)]), 1e-3)
    add("local-sensitivity", "median released with noise for its local sensitivity at D",
        _claim_out(), _gauss(_median, lambda d: _sigma(local_sens(d))),
        {"query": _median, "norm": L2(), "bound": local_sens(data)})
    # ---------------------------------------------------------------- negative controls
    # The negative controls are private in floats too: their noisy values go through the
    # kit's float-safe rounding (issue 20 §4), or (control-rounded-output) a grid of 0.5,
    # far coarser than the float spacing. A textbook float sampler would leak in its low
    # bits and be flagged rightly by A.7's float-support test.
    add("control-over-noised", "looks wrong: the mean released with the sum's sensitivity "
        "(too much noise, still private)", _claim_rows(),
        _safe(lambda d: _sum(d) / d.n, lambda d: _sigma(2.0)),
        {"mean": lambda d: _sum(d) / d.n, "cov": _const_cov(_sigma(2.0) ** 2)}, private=True)
    add("control-clipped-output", "looks wrong: atoms at the ends (the noisy sum clipped to "
        "[-3, 3]) - post-processing, private", _claim_out(),
        lambda d, n, rng: np.clip(_safe(_sum, lambda _: s1)(d, n, rng), -3.0, 3.0),
        {"query": _sum, "norm": L2(), "bound": 1.0}, private=True)
    add("control-rounded-output", "looks wrong: the noisy sum rounded to 0.5 (many repeated "
        "values) - post-processing, private", _claim_out(),
        lambda d, n, rng: np.round(2 * (_sum(d)[0] + s1 * rng.standard_normal((n, 1)))) / 2,
        {"query": _sum, "norm": L2(), "bound": 1.0}, private=True)

    def input_noise(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        noisy = round_to_grid(d.y, s1 * rng.standard_normal((n, d.n)), release_grid(s1))
        return noisy @ _bins(d, k).T
    add("control-input-noise", "looks wrong: noise added to each target, then bin sums "
        "(correlated output noise) - post-processing of a private release", _claim_out(),
        input_noise, {"mean": bin_sums, "cov": lambda d: s1**2 * _bins(d, k) @ _bins(d, k).T},
        private=True)
    add("control-laplace-1d", "looks wrong: Laplace noise with the Gaussian sd as scale in 1-D "
        "(more private than claimed)", _claim_out(),
        _safe_laplace(_sum, lambda d: s1),
        {"query": _sum, "norm": L2(), "bound": 1.0}, private=True)
    add("control-correlated-noise", "looks wrong: correlated noise across 4 copies of the sum "
        "- stated exactly, and calibrated for the composition", _claim_out(),
        _corr_draw(s1), {"mean": lambda d: np.ones(4) * _sum(d)[0],
                         "cov": lambda d: _corr_cov(s1)}, private=True)
    out.extend(_gp_mutants(data))
    out.extend(_subsample_mutants(data))
    out.extend(_scale_mutants(data))
    out.extend(_data_shaped_mutants(data))
    out.extend(_gp_structure_mutants(data))
    out.extend(_calibration_slip_mutants(data))
    out.extend(_hunt_mutants(data))
    out.extend(_label_mutants())
    out.extend(_postprocessing_mutants(data))
    out.extend(_float_and_step_mutants(data))
    out.extend(_input_corner_mutants())
    out.extend(_order_statistic_mutants())
    out.extend(_iterative_mutants())
    return out


# --------------------------------------------------------------------------- noise scales
def scaled_up_sd(data: Dataset) -> float:
    """The bug's noise sd: the calibrated σ times ``1 + sd(y)`` — never less than σ."""
    return _sigma(1.0) * (1.0 + float(np.std(data.y)))


def public_x_sd(data: Dataset) -> float:
    """The control's noise sd: σ times ``1 + range(x)/10``, a function of the public inputs."""
    x = np.asarray(data.X, dtype=float)
    return _sigma(1.0) * (1.0 + float(np.ptp(x)) / 10.0)


def _scale_mutants(data: Dataset) -> list[MutantSpec]:
    """A float-safe sum whose noise sd moves with the data: a bug and its control.

    The bug scales the calibrated noise *up* by the spread of the private targets ("more
    noise is never less private"): both neighbours get at least σ, yet their sds differ,
    and two Gaussians of unequal sd have an unbounded privacy loss — at the analytic
    (1, 10⁻⁵) calibration a 2 % change of sd already gives δ(1) ≈ 1.6·10⁻⁴. The control
    scales it by the spread of the *public* inputs, which outputs-only neighbours share:
    more noise than needed, the same on both sides, private as claimed. Appended last, so
    earlier rows keep their seeds.
    """
    return [
        MutantSpec("noise-scaled-up-by-spread", "noise sd = sigma * (1 + sd(y)): scaled up "
                   "by the spread of the private targets (never below the calibration)",
                   False, _claim_out(), _safe(_sum, scaled_up_sd),
                   {"mean": _sum, "cov": lambda d: np.eye(1) * scaled_up_sd(d) ** 2}, data),
        MutantSpec("control-scale-from-public-x", "looks wrong: noise sd = sigma * (1 + "
                   "range(x)/10) follows the data - its public inputs only, the same on both "
                   "neighbours", True, _claim_out(), _safe(_sum, public_x_sd),
                   {"query": _sum, "norm": L2(), "bound": 1.0}, data),
    ]


# --------------------------------------------------------------------------- data-shaped
#: The bins, test points and candidates of the data-shaped mutants (below).
HIST_BINS = 10
_VEC_POINTS, _VEC_ELL = 8, 3.0
_GRID_CANDIDATES = np.linspace(-1.0, 1.0, 21)


def half_sums(data: Dataset) -> np.ndarray:
    """The sums of the first and of the second half of the targets (two coordinates)."""
    y = np.asarray(data.y, dtype=float)
    return np.array([float(np.sum(y[: y.size // 2])), float(np.sum(y[y.size // 2:]))])


def data_range_counts(data: Dataset) -> np.ndarray:
    """``np.histogram(y, bins=10)`` as written: its range defaults to ``(min y, max y)``."""
    return np.histogram(np.asarray(data.y, dtype=float), bins=HIST_BINS)[0].astype(float)


def public_range_counts(data: Dataset) -> np.ndarray:
    """The same counts on the fixed range ``[-1, 1]`` (values outside it are not counted)."""
    return np.histogram(np.asarray(data.y, dtype=float), bins=HIST_BINS,
                        range=(-1.0, 1.0))[0].astype(float)


def standardised_clipped_sum(data: Dataset) -> np.ndarray:
    """Σ clip((y − mean y)/sd y, −1, 1): the targets standardised by their own mean and sd."""
    y = np.asarray(data.y, dtype=float)
    sd = float(np.std(y)) or 1.0
    return np.array([float(np.sum(np.clip((y - y.mean()) / sd, -1.0, 1.0)))])


def vector_weights(data: Dataset) -> np.ndarray:
    """Kernel weights W (8, n) at 8 public points of the x-range, lengthscale 3: ``W @ y``."""
    x = np.asarray(data.X, dtype=float)[:, 0]
    z = np.linspace(float(x.min()), float(x.max()), _VEC_POINTS)
    return np.exp(-0.5 * (z[:, None] - x[None, :]) ** 2 / _VEC_ELL**2)


def median_rank_utility(data: Dataset, candidates: np.ndarray) -> np.ndarray:
    """u(c) = −|#{y_i ≤ c} − n/2|: one target moved changes every u(c) by at most 1."""
    y = np.asarray(data.y, dtype=float)
    below = (y[None, :] <= np.asarray(candidates, dtype=float)[:, None]).sum(axis=1)
    return -np.abs(below - y.size / 2.0)


def _exp_choice(util: np.ndarray, values: np.ndarray, n: int,
                rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of the exponential mechanism P(c) ∝ exp(ε u(c) / 2) (Gumbel-max)."""
    g = rng.gumbel(size=(n, util.size))
    return np.asarray(values, dtype=float)[np.argmax(_EPS * util / 2.0 + g, axis=1)][:, None]


def _data_shaped_mutants(data: Dataset) -> list[MutantSpec]:
    """Releases whose branch, bins, candidates, scale or norm the data shape.

    Written against the contract by a hurried user, none for the auditors: the noise is
    skipped where the sum is exactly 0 ("nothing to hide"), or where it is large ("the
    signal dwarfs the noise"); ``np.histogram`` left with its default range, so the bin
    edges follow the smallest and largest target; an exponential-mechanism median whose
    candidates are the data values; targets standardised by their own mean and sd before
    clipping (every other row moves when one does); a vector release calibrated with the
    per-coordinate (L∞) sensitivity where the Gaussian needs L2; and a slice that leaves
    the last coordinate without noise. The controls look as suspicious and are private:
    the same histogram on a fixed range, the median on a public grid of candidates, and
    the vector release calibrated with its columns' L2 norms. Float-safe (the kit's
    exact Laplace, or rounding to the noise's public grid), so each is caught or not for
    its own mistake. Appended last, so earlier rows keep their seeds.
    """
    s1 = _sigma(1.0)
    lap = 2.0 / _EPS  # one target moved: two counts change by one, L1 sensitivity 2
    pure = PureDP(epsilon=_EPS, relation=outputs_only(1.0), domain=_OUT_DOMAIN)
    noisy_sum = _safe(_sum, lambda d: s1)  # the calibrated release both branches skip

    def skip_if_zero(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        if float(np.sum(d.y)) == 0.0:  # the mistake: a zero sum "has nothing to hide"
            return np.zeros((n, 1))
        return noisy_sum(d, n, rng)

    def exact_if_large(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        if abs(float(np.sum(d.y))) > 0.9 * d.n:  # the mistake: "the signal dwarfs the noise"
            return np.tile(_sum(d), (n, 1))
        return noisy_sum(d, n, rng)

    def counts_draw(counts: Callable[[Dataset], np.ndarray]):
        return _safe_laplace(counts, lambda d: lap)

    def linf_sd(d: Dataset) -> float:
        return _sigma(float(np.max(vector_weights(d))))  # the mistake: |w_ki| · d, per coordinate

    def l2_sd(d: Dataset) -> float:
        return _sigma(float(np.max(np.linalg.norm(vector_weights(d), axis=0))))

    def off_by_one(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        noise = np.zeros((n, 2))
        noise[:, :-1] = s1 * rng.standard_normal((n, 1))  # the mistake: [:, :-1] for [:, :]
        return round_to_grid(half_sums(d), noise, release_grid(s1))

    def vec_mean(d: Dataset) -> np.ndarray:
        return vector_weights(d) @ np.asarray(d.y, dtype=float)

    return [
        MutantSpec("noise-skipped-on-zero-sum", "the sum is released exactly when it is 0 "
                   "(\"nothing to hide\"), with calibrated noise otherwise", False, _claim_out(),
                   skip_if_zero, {"mean": _sum, "cov": _const_cov(s1**2)}, data),
        MutantSpec("exact-when-large", "the sum is released exactly when abs(sum) > 0.9 n (\"the "
                   "signal dwarfs the noise\"), with calibrated noise otherwise", False,
                   _claim_out(), exact_if_large, {"mean": _sum, "cov": _const_cov(s1**2)}, data),
        MutantSpec("histogram-data-range", "10-bin histogram of the targets + Laplace(2/eps): "
                   "np.histogram's default range (min y, max y) makes the bins follow the data",
                   False, pure, counts_draw(data_range_counts),
                   {"query": data_range_counts, "norm": L1(), "bound": 2.0}, data),
        MutantSpec("exp-mech-over-data-values", "DP median by the exponential mechanism "
                   "(rank utility, sensitivity 1) whose candidates are the data values", False,
                   pure, lambda d, n, rng: _exp_choice(median_rank_utility(d, np.asarray(d.y)),
                                                       np.asarray(d.y), n, rng),
                   {"query": lambda d: median_rank_utility(d, np.asarray(d.y)), "norm": Linf(),
                    "bound": 1.0}, data),
        MutantSpec("targets-standardised", "targets standardised by their own mean and sd, "
                   "clipped to [-1, 1] and summed, noise for sensitivity 2", False,
                   _claim_out(), _safe(standardised_clipped_sum, lambda d: _sigma(2.0)),
                   {"query": standardised_clipped_sum, "norm": L2(), "bound": 2.0}, data),
        MutantSpec("linf-for-l2", "8 kernel-weighted sums of the targets; the Gaussian noise is "
                   "calibrated with the per-coordinate (L-inf) sensitivity instead of L2",
                   False, _claim_out(), _safe(vec_mean, linf_sd),
                   {"mean": vec_mean,
                    "cov": lambda d: linf_sd(d) ** 2 * np.eye(_VEC_POINTS)}, data),
        MutantSpec("noise-off-by-one", "two half-sums; the noise slice [:, :-1] leaves the last "
                   "coordinate without noise", False, _claim_out(), off_by_one,
                   {"mean": half_sums, "cov": _const_cov(s1**2, 2)}, data),
        MutantSpec("control-histogram-public-range", "looks wrong: counts of the private "
                   "targets in 10 bins + Laplace(2/eps) - on the fixed range [-1, 1]", True, pure,
                   counts_draw(public_range_counts),
                   {"query": public_range_counts, "norm": L1(), "bound": 2.0}, data),
        MutantSpec("control-exp-mech-public-grid", "looks wrong: the median's exponential "
                   "mechanism picks a value near the private targets - from a public grid of 21 "
                   "candidates", True, pure,
                   lambda d, n, rng: _exp_choice(median_rank_utility(d, _GRID_CANDIDATES),
                                                 _GRID_CANDIDATES, n, rng),
                   {"query": lambda d: median_rank_utility(d, _GRID_CANDIDATES), "norm": Linf(),
                    "bound": 1.0}, data),
        MutantSpec("control-l2-from-column-norms", "looks wrong: 8 correlated kernel sums with "
                   "one noise scale - calibrated with the largest column's L2 norm", True,
                   _claim_out(), _safe(vec_mean, l2_sd),
                   {"mean": vec_mean, "cov": lambda d: l2_sd(d) ** 2 * np.eye(_VEC_POINTS)}, data),
    ]


# --------------------------------------------------------------------------- GP structure
#: The inducing inputs of the whole-row statistic: 9 public points on the default x-range.
_SVGP_Z = np.linspace(0.0, 10.0, 9)[:, None]
_SVGP_ELL_BOUND, _SVGP_ELL_RELEASE = 1.0, 3.0
_TOP_K, _TOP_M = 4, 10


def kernel_vector_bound(ell: float) -> float:
    """sup_x ‖k(Z, x)‖ over x, on a fine grid two widths beyond Z (R_k of H eq. 4, numerically)."""
    xs = np.linspace(-10.0, 20.0, 6001)[:, None]
    return float(np.max(np.linalg.norm(eq_kernel(_SVGP_Z, xs, ell), axis=0)))


def top_target_rows(data: Dataset, k: int) -> np.ndarray:
    """The ``k`` rows with the largest |y| (ties by index), in index order: a private choice."""
    return np.sort(np.argsort(-np.abs(np.asarray(data.y, dtype=float)), kind="stable")[:k])


def _gp_structure_mutants(data: Dataset) -> list[MutantSpec]:
    """Sparse and subset GP releases whose structure a hurried user ties to the wrong thing.

    The whole-row statistic A = Σ y_i k(Z, x_i) (H's sufficient statistic) with R_k taken at
    the kernel's default lengthscale 1 while the release uses 3, so every row's kernel
    vector is longer than the bound; inducing inputs placed at the rows with the largest
    |y| ("where the signal is"), with the noise calibrated correctly for the chosen Z; and
    a subset-of-data posterior mean on the rows with the largest |y|, calibrated for its
    weights. Those two calibrate each release exactly for its own structure, and the
    structure is chosen by the private targets. Last, a posterior mean whose prior mean is
    the targets' own mean (scikit-learn's ``normalize_y=True``): W y + ȳ(1 − W1), noised
    for W's columns alone, at test points a little beyond the data. Float-safe; each
    appended last, so earlier rows keep their seeds.
    """
    def svgp_mean(d: Dataset) -> np.ndarray:
        return eq_kernel(_SVGP_Z, np.asarray(d.X), _SVGP_ELL_RELEASE) @ np.asarray(d.y)

    svgp_sd = _sigma(2.0 * kernel_vector_bound(_SVGP_ELL_BOUND))  # whole rows, |y| <= 1

    def inducing(d: Dataset) -> np.ndarray:
        x = np.asarray(d.X)
        return eq_kernel(x[top_target_rows(d, _TOP_K)], x, 1.0)

    def subset_weights(d: Dataset) -> np.ndarray:
        keep = top_target_rows(d, _TOP_M)
        C = np.zeros((_GP_XS.shape[0], d.n))
        C[:, keep] = smoother_weights(np.asarray(d.X)[keep], _GP_XS, lengthscale=_GP_ELL,
                                      noise_variance=_GP_NOISE)
        return C

    def centred_weights(d: Dataset) -> np.ndarray:
        return smoother_weights(np.asarray(d.X), _GP_XS_WIDE, lengthscale=_GP_ELL,
                                noise_variance=_GP_NOISE)

    def centred_mean(d: Dataset) -> np.ndarray:
        y = np.asarray(d.y, dtype=float)  # the prior mean set to the targets' own mean
        return centred_weights(d) @ (y - y.mean()) + y.mean()

    return [
        MutantSpec("svgp-lengthscale-mismatch", "whole-row statistic sum_i y_i k(Z, x_i) at 9 "
                   "inducing inputs: R_k computed at the kernel's default lengthscale 1, the "
                   "release made at lengthscale 3", False, _claim_rows(),
                   _safe(svgp_mean, lambda d: svgp_sd),
                   {"mean": svgp_mean, "cov": _const_cov(svgp_sd**2, _SVGP_Z.shape[0])}, data),
        MutantSpec("inducing-at-top-targets", "4 inducing inputs placed at the rows with the "
                   "largest absolute targets, the noise calibrated for the chosen ones", False,
                   _claim_out(),
                   _safe(lambda d: inducing(d) @ d.y, lambda d: _gp_sigma(inducing(d))),
                   {"query": lambda d: inducing(d) @ d.y, "norm": L2(),
                    "bound": float(np.max(np.linalg.norm(inducing(data), axis=0)))}, data),
        MutantSpec("subset-of-top-targets", "GP posterior mean at 5 points from the 10 rows "
                   "with the largest absolute targets, the noise calibrated for their weights",
                   False,
                   _claim_out(),
                   _safe(lambda d: subset_weights(d) @ d.y,
                         lambda d: _gp_sigma(subset_weights(d))),
                   {"mean": lambda d: subset_weights(d) @ d.y,
                    "cov": lambda d: _gp_sigma(subset_weights(d)) ** 2
                    * np.eye(_GP_XS.shape[0])}, data),
        MutantSpec("gp-prior-mean-from-targets", "GP posterior mean at 5 points a little beyond "
                   "the data with the prior mean set to the targets' mean (scikit-learn's "
                   "normalize_y=True), the noise calibrated for the smoother's weights alone",
                   False, _claim_out(),
                   _safe(centred_mean, lambda d: _gp_sigma(centred_weights(d))),
                   {"mean": centred_mean,
                    "cov": lambda d: _gp_sigma(centred_weights(d)) ** 2
                    * np.eye(_GP_XS_WIDE.shape[0])}, data),
    ]


# --------------------------------------------------------------------------- calibration slips
#: Bins per input coordinate of the per-feature histograms (edges on the public [-1, 1]).
FEATURE_BINS = 5
_FEATURES = 3


def classical_sigma_without_the_2(sens: float, epsilon: float = _EPS,
                                  delta: float = _DELTA) -> float:
    """The classical σ = Δ·sqrt(2 ln(1.25/δ))/ε with the 2 under the root forgotten.

    The mistake a hurried user makes copying Dwork & Roth (2014, Thm. A.1) from memory.
    """
    return sens * math.sqrt(math.log(1.25 / delta)) / epsilon


def feature_inputs(data: Dataset) -> Dataset:
    """The default targets beside three public input features in [-1, 1] (cosines of x)."""
    x = np.asarray(data.X, dtype=float)[:, 0]
    X = np.column_stack([np.cos((j + 1) * x) for j in range(_FEATURES)])
    return Dataset(X, np.asarray(data.y, dtype=float))


def feature_histograms(data: Dataset) -> np.ndarray:
    """Counts of every input feature in :data:`FEATURE_BINS` bins of [-1, 1], concatenated."""
    X = np.clip(np.asarray(data.X, dtype=float), -1.0, 1.0)
    edges = np.linspace(-1.0, 1.0, FEATURE_BINS + 1)
    return np.concatenate([np.histogram(X[:, j], bins=edges)[0]
                           for j in range(X.shape[1])]).astype(float)


def positive_count(data: Dataset) -> np.ndarray:
    """The number of positive targets (one target moved by at most 1 changes it by at most 1)."""
    return np.array([float(np.sum(np.asarray(data.y) > 0))])


def _calibration_slip_mutants(data: Dataset) -> list[MutantSpec]:
    """Calibrations slipped in small ways, and an integer release that looks lossy.

    Written against the contract by a hurried user (28 Nov 2026 session), none for the
    auditors: the classical Gaussian σ with the 2 under the root forgotten (true ε 1.098
    against the claimed 1: the smallest excess in the benchmark); a median calibrated
    with the mean's sensitivity 2/n (on a base split between the two bounds one row
    moves it by 1, ten times that); and three per-feature histograms of the inputs with
    Laplace(2/ε) each, as if a whole row touched one histogram (it touches all three: L1
    sensitivity 6, true ε 3). The control is a count of positive targets plus Laplace
    noise rounded to an integer: post-processing of the Laplace mechanism on an integer
    query, exactly at its claim, with repeated outputs everywhere. Appended last, so the
    earlier rows keep their seeds.
    """
    s_bug = classical_sigma_without_the_2(1.0)
    s_med = _sigma(2.0 / data.n)
    lap = 2.0 / _EPS  # the author's L1 sensitivity 2 (one row, one histogram)
    rows3 = feature_inputs(data)
    feat_claim = PureDP(epsilon=_EPS, relation=whole_rows(1.0),
                        domain=PublicDomain(1.0, x_bound=1.0))

    def feature_draw(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        _check_domain(feat_claim, d)
        return _safe_laplace(feature_histograms, lambda e: lap)(d, n, rng)

    def rounded_count(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        return positive_count(d)[0] + np.round(laplace_noise_exact_uniform(1.0 / _EPS, (n, 1),
                                                                           rng))
    return [
        MutantSpec("gaussian-classical-without-the-2", "the sum with the classical Gaussian "
                   "sigma, the 2 under the square root forgotten: sqrt(ln(1.25/delta)) / eps",
                   False, _claim_out(), _safe(_sum, lambda d: s_bug),
                   {"mean": _sum, "cov": _const_cov(s_bug**2)}, data),
        MutantSpec("median-with-mean-sensitivity", "the median of targets in [-1, 1] released "
                   "with Gaussian noise for the mean's sensitivity 2/n", False, _claim_rows(),
                   _safe(_median, lambda d: s_med),
                   {"query": _median, "norm": L2(), "bound": 2.0 / data.n}, data),
        MutantSpec("feature-histograms-whole-rows", "three 5-bin histograms of the input "
                   "features, Laplace(2/eps) on each count, as if a whole row moved one "
                   "histogram (it moves all three)", False, feat_claim, feature_draw,
                   {"query": feature_histograms, "norm": L1(), "bound": 2.0}, rows3),
        MutantSpec("control-rounded-laplace-count", "looks wrong: an integer count plus Laplace "
                   "noise rounded to an integer (atoms everywhere) - post-processing of the "
                   "Laplace mechanism", True, _claim_out(), rounded_count,
                   {"query": positive_count, "norm": L1(), "bound": 1.0}, data),
    ]


# --------------------------------------------------------------------------- subsampling
#: The subsampling mutants' rate: m = SUBSAMPLE_RATE · n rows per release.
SUBSAMPLE_RATE = 0.1
#: The seed the fixed-subsample mutant draws its rows with, once: its planted mistake (like
#: ``planted/fixed-seed``'s), never a seed of the kit's own randomness.
_PLANTED_SUBSAMPLE_SEED = 0


def _subsample_sigma(data: Dataset) -> tuple[int, float]:
    """Rows m and the σ calibrated for (ε₀, δ/γ) with γ = m/n, ε₀ = log(1 + (e^ε − 1)/γ):
    the amplification of sampling m of n without replacement under replace-one (Balle,
    Barthe & Gaboardi 2018, Table 1), for a sum whose one target moves by at most 1.
    """
    m = max(1, int(round(SUBSAMPLE_RATE * data.n)))
    gamma = m / data.n
    eps0 = math.log1p(math.expm1(_EPS) / gamma)
    return m, _sigma(1.0, eps0, _DELTA / gamma)


def fixed_subsample_rows(data: Dataset) -> np.ndarray:
    """The rows the fixed-subsample mutant reads: drawn once, with a fixed seed (its bug)."""
    m, _ = _subsample_sigma(data)
    own = np.random.default_rng(_PLANTED_SUBSAMPLE_SEED)  # the mistake
    return np.sort(own.choice(data.n, m, replace=False))


def _subsample_mutants(data: Dataset) -> list[MutantSpec]:
    """A sum over a 10 % subsample, claimed at the amplified ε: a bug and its control.

    The bug draws the subsample once with a fixed seed (a hurried user's "subsample for
    speed"), so the rows it reads get no amplification: their loss is that of σ alone,
    ε₀ ≈ 2.9 at δ/γ. Every other row leaves the release unchanged, so only a pair that
    moves one of those rows sees it. The control draws a fresh subsample of m rows for
    every release and is private as claimed. Appended last, so earlier rows keep their
    seeds.
    """
    m, sd = _subsample_sigma(data)

    def fixed(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        total = float(np.sum(d.y[fixed_subsample_rows(d)]))
        return round_to_grid(np.array([total]), sd * rng.standard_normal((n, 1)),
                             release_grid(sd))

    def fresh(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        rows = np.argsort(rng.random((n, d.n)), axis=1)[:, :m]  # m of n, per release
        return round_to_grid(np.asarray(d.y)[rows].sum(axis=1, keepdims=True),
                             sd * rng.standard_normal((n, 1)), release_grid(sd))

    def fixed_sum(d: Dataset) -> np.ndarray:
        return np.array([float(np.sum(d.y[fixed_subsample_rows(d)]))])
    return [
        MutantSpec("fixed-subsample-amplified", "sigma calibrated for the amplification of a "
                   "10 % subsample, but the subsample is drawn once with a fixed seed",
                   False, _claim_out(), fixed, {"mean": fixed_sum, "cov": _const_cov(sd ** 2)},
                   data),
        MutantSpec("control-fresh-subsample", "looks wrong: the sum of a random 10 % of the "
                   "rows, noised for the amplified epsilon - a fresh subsample per release, "
                   "private as claimed", True, _claim_out(), fresh,
                   {"query": _sum, "norm": L2(), "bound": 1.0}, data),
    ]


# --------------------------------------------------------------------------- GP releases
#: The GP mutants' test inputs, lengthscale and noise variance: a DP posterior mean
#: (Smith et al. 2016's release, S18 eq. 3) at 5 public points of the default x-range.
_GP_XS = np.linspace(0.0, 10.0, 5)[:, None]
#: Test inputs 2 beyond the default x-range on each side (a user's extrapolation).
_GP_XS_WIDE = np.linspace(-2.0, 12.0, 5)[:, None]
_GP_ELL, _GP_NOISE = 2.0, 0.1
#: The lengthscales a hurried user's marginal-likelihood fit chooses from.
_GP_ELL_GRID = np.geomspace(0.5, 5.0, 8)


def _gp_weights(d: Dataset, ell: float = _GP_ELL, noise: float = _GP_NOISE) -> np.ndarray:
    """Posterior-mean weights C (5, n) at :data:`_GP_XS`: the release's mean is ``C @ y``."""
    return smoother_weights(np.asarray(d.X), _GP_XS, lengthscale=ell, noise_variance=noise)


def _gp_sigma(C: np.ndarray, bound: float = 1.0) -> float:
    """Analytic-Gaussian σ for the L2 sensitivity of ``C @ y`` when one target moves by
    ``bound``: the largest column norm of C times ``bound``.
    """
    return _sigma(bound * float(np.max(np.linalg.norm(C, axis=0))))


def _gp_posterior_variance(d: Dataset) -> np.ndarray:
    """Posterior variance of f at :data:`_GP_XS`: ``k(x*, x*) − c*ᵀ k(X, x*)`` (public X only)."""
    Ks = eq_kernel(_GP_XS, np.asarray(d.X), _GP_ELL)
    return 1.0 - np.sum(_gp_weights(d) * Ks, axis=1)


def fitted_lengthscale(d: Dataset) -> float:
    """The lengthscale of :data:`_GP_ELL_GRID` with the largest log marginal likelihood of
    the *private* targets (R&W eq. 2.30, the constant dropped): the mutant's mistake.
    """
    X = np.asarray(d.X)
    best, arg = -math.inf, float(_GP_ELL_GRID[0])
    for ell in _GP_ELL_GRID:
        L = linalg.cholesky(eq_kernel(X, X, float(ell)) + _GP_NOISE * np.eye(d.n), lower=True)
        a = linalg.solve_triangular(L, d.y, lower=True)
        lml = -0.5 * float(a @ a) - float(np.sum(np.log(np.diag(L))))
        if lml > best:
            best, arg = lml, float(ell)
    return arg


def _gp_mutants(data: Dataset) -> list[MutantSpec]:
    """DP GP posterior means as a hurried user writes them: two bugs and a control.

    Appended after the other mutants, so the benchmark's earlier rows keep their seeds.
    Float-safe releases (:func:`_safe`), so each is caught (or not) for its own mistake.
    """
    other = functools.partial(_gp_weights, noise=1.0)  # another fit's noise variance

    def fitted_weights(d: Dataset) -> np.ndarray:
        return _gp_weights(d, ell=fitted_lengthscale(d))

    def mean_and_variance(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        noisy = _safe(lambda e: _gp_weights(e) @ e.y, lambda e: _gp_sigma(_gp_weights(e)))
        return np.hstack([noisy(d, n, rng), np.tile(_gp_posterior_variance(d), (n, 1))])
    return [
        MutantSpec("gp-noise-from-another-fit", "GP posterior mean at 5 points; the sensitivity "
                   "is taken from the weights of another fit (noise variance 1, not 0.1)",
                   False, _claim_out(),
                   _safe(lambda d: _gp_weights(d) @ d.y, lambda d: _gp_sigma(other(d))),
                   {"mean": lambda d: _gp_weights(d) @ d.y,
                    "cov": lambda d: _gp_sigma(other(d)) ** 2 * np.eye(_GP_XS.shape[0])},
                   data),
        MutantSpec("gp-lengthscale-fitted-on-private-data", "GP posterior mean at 5 points; "
                   "the lengthscale is chosen by the marginal likelihood of the private targets, "
                   "then the noise is calibrated for it", False, _claim_out(),
                   _safe(lambda d: fitted_weights(d) @ d.y,
                         lambda d: _gp_sigma(fitted_weights(d))),
                   {"mean": lambda d: fitted_weights(d) @ d.y,
                    "cov": lambda d: _gp_sigma(fitted_weights(d)) ** 2
                    * np.eye(_GP_XS.shape[0])}, data),
        MutantSpec("control-gp-posterior-variance", "looks wrong: the posterior variance at the "
                   "5 points is released beside the noisy mean (it depends on the public inputs "
                   "and fixed hyperparameters only)", True, _claim_out(), mean_and_variance,
                   {"query": lambda d: np.concatenate([_gp_weights(d) @ d.y,
                                                       _gp_posterior_variance(d)]),
                    "norm": L2(), "bound": float(np.max(np.linalg.norm(_gp_weights(data),
                                                                       axis=0)))}, data),
    ]


def _corr_cov(s1: float) -> np.ndarray:
    """Σ = σ² (I + ¾·11ᵀ): 1 is an eigenvector with eigenvalue 4σ², so 1ᵀΣ⁻¹1 = 1/σ² and
    four copies of a sensitivity-1 sum have μ = 1/σ, exactly the calibrated value.
    """
    one = np.ones((4, 1))
    return s1**2 * (0.75 * one @ one.T + np.eye(4))


def _corr_draw(s1: float) -> Callable[[Dataset, int, np.random.Generator], np.ndarray]:
    L = np.linalg.cholesky(_corr_cov(s1))

    grid = release_grid(np.sqrt(np.diag(_corr_cov(s1))))  # Σ has condition number 4

    def draw(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        return round_to_grid(float(np.sum(d.y)), rng.standard_normal((n, 4)) @ L.T, grid)
    return draw


# --------------------------------------------------------------------------- second hunt
#: Public bins of the target range for the suppressed histogram (edges on [-1, 1]).
CELL_BINS = 5
#: Cells whose count is below this are "suppressed" (released as 0).
SUPPRESS_BELOW = 5
#: Share of the rows dropped at each end by the trimmed mean.
TRIM = 0.25
#: 30 test points over the data (2.9 per lengthscale): a target's weight spreads over
#: several of them, so a column's L2 norm is well above its largest entry.
_GP_XS_DENSE = np.linspace(0.0, 10.0, 30)[:, None]
#: 10 test points reaching 5 beyond the data each side: the posterior sd varies fivefold.
_GP_XS_BEYOND = np.linspace(-5.0, 15.0, 10)[:, None]


def _weights_at(d: Dataset, xs: np.ndarray) -> np.ndarray:
    """Posterior-mean weights at the test points ``xs`` (the GP mutants' kernel and noise)."""
    return smoother_weights(np.asarray(d.X), xs, lengthscale=_GP_ELL, noise_variance=_GP_NOISE)


def gp_fit_weights(data: Dataset) -> np.ndarray:
    """Posterior-mean weights (n, n) at the training inputs themselves: the fitted values."""
    return _weights_at(data, np.asarray(data.X))


def gp_posterior_sd_sigmas(data: Dataset) -> np.ndarray:
    """The bug's per-point noise sds, in proportion to the posterior sd at each test point.

    The calibrated σ spread out with its mean square kept (the same total noise variance),
    at :data:`_GP_XS_BEYOND`; the posterior variance ``1 − Σ_i C_ji k(x_i, x*_j)`` depends
    on the public inputs only.
    """
    C = _weights_at(data, _GP_XS_BEYOND)
    var = 1.0 - np.sum(C * eq_kernel(_GP_XS_BEYOND, np.asarray(data.X), _GP_ELL), axis=1)
    sd = np.sqrt(np.clip(var, 1e-12, None))
    return _gp_sigma(C) * sd / math.sqrt(float(np.mean(sd**2)))


def gp_log_marginal_likelihood(data: Dataset) -> float:
    """The log marginal likelihood log p(y | X) of the fixed GP (R&W eq. 2.30, constant kept)."""
    X, y = np.asarray(data.X), np.asarray(data.y, dtype=float)
    L = linalg.cholesky(eq_kernel(X, X, _GP_ELL) + _GP_NOISE * np.eye(data.n), lower=True)
    a = linalg.solve_triangular(L, y, lower=True)
    return float(-0.5 * a @ a - np.sum(np.log(np.diag(L))) - 0.5 * data.n * math.log(2 * math.pi))


def cell_counts(data: Dataset) -> np.ndarray:
    """Counts of the targets in :data:`CELL_BINS` equal bins of the public range [-1, 1]."""
    edges = np.linspace(-1.0, 1.0, CELL_BINS + 1)
    return np.histogram(np.asarray(data.y, dtype=float), bins=edges)[0].astype(float)


def trimmed_mean(data: Dataset) -> np.ndarray:
    """The mean of the targets left after dropping :data:`TRIM` of the rows at each end."""
    y = np.sort(np.asarray(data.y, dtype=float))
    t = int(TRIM * y.size)
    return np.array([float(np.mean(y[t:y.size - t]))])


#: The candidate slopes of the exponential-mechanism regression (public).
SLOPES = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])


def slope_data() -> Dataset:
    """30 public inputs on [-1, 1], targets 0.9 sin 3x right of 0 and 0 left of it."""
    x = np.linspace(-1.0, 1.0, 30)
    return Dataset(x, np.where(x > 0, 0.9 * np.sin(3.0 * x), 0.0))


def slope_utility(data: Dataset) -> np.ndarray:
    """u(θ) = −Σ_i |y_i − θ x_i| for every slope of :data:`SLOPES` (the absolute error)."""
    x = np.asarray(data.X, dtype=float)[:, 0]
    y = np.asarray(data.y, dtype=float)
    return -np.abs(y[None, :] - SLOPES[:, None] * x[None, :]).sum(axis=1)


def _variance(data: Dataset) -> np.ndarray:
    return np.array([float(np.var(np.asarray(data.y, dtype=float)))])


def _hunt_mutants(data: Dataset) -> list[MutantSpec]:  # noqa: PLR0915 - one flat list reads best
    """A second hunt (28 Nov 2026): GP releases and everyday statistics, and two controls.

    Written against the contract by helper sessions told only the contract, none for the
    auditors, and every one caught by the default path when it was written. GP posterior
    means: at 30 points, the largest single weight taken for a column's L2 norm (true ε
    1.42); at 5 points beside the fitted values at the training inputs, each part
    calibrated at the full (ε, δ); at 10 points reaching beyond the data, the calibrated
    noise spread in proportion to the posterior sd (the same total variance, less of it
    where the weights are large: true ε 1.44); the exact log marginal likelihood released
    beside the noisy mean. Statistics: numpy's
    ``laplace(loc, scale)`` called with the scale in the place of ``loc`` (scale 1 against
    the intended 2); a histogram whose cells with a true count below 5 are released as 0;
    ``np.var`` with the sensitivity b²/n; a 25 %-trimmed mean noised for the plain mean; an
    exponential mechanism choosing a slope by its absolute error with the sensitivity taken
    as 1 where a target moves by 2 (true ε 2; on its own data the pilot once ranked first
    a pair whose rare outputs looked like a moving noise scale, see
    :func:`~dpgp_audit.audit.neighbours._pilot_score`).
    Controls: the same suppression applied to the *noisy* counts (post-processing); the
    median of targets each noised on its own (local DP, then post-processing). Appended
    last, so the earlier rows keep their seeds.
    """
    C = _gp_weights(data)
    s_gp = _gp_sigma(C)
    dense = functools.partial(_weights_at, xs=_GP_XS_DENSE)
    beyond = functools.partial(_weights_at, xs=_GP_XS_BEYOND)
    s_sup = _sigma(float(np.max(np.abs(dense(data)))))  # the largest weight as the L2 norm
    s_fit = _gp_sigma(gp_fit_weights(data))
    k = _GP_XS.shape[0]

    def two_means(d: Dataset) -> np.ndarray:
        return np.concatenate([_gp_weights(d) @ d.y, gp_fit_weights(d) @ d.y])

    def two_sds(d: Dataset) -> np.ndarray:
        return np.r_[np.full(k, s_gp), np.full(d.n, s_fit)]  # each part at the full budget

    def two_parts(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        sd = two_sds(d)
        return round_to_grid(two_means(d), sd * rng.standard_normal((n, sd.size)),
                             release_grid(sd))

    def shaped(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        s = gp_posterior_sd_sigmas(d)
        return round_to_grid(beyond(d) @ d.y, s * rng.standard_normal((n, s.size)),
                             release_grid(s))

    def with_lml(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        noisy = _safe(lambda e: _gp_weights(e) @ e.y, lambda e: s_gp)(d, n, rng)
        return np.hstack([noisy, np.full((n, 1), gp_log_marginal_likelihood(d))])

    loc_claim = PureDP(epsilon=0.5, relation=outputs_only(1.0), domain=_OUT_DOMAIN)
    intended = 1.0 / loc_claim.epsilon  # the sum's sensitivity 1 over eps: scale 2

    def loc_for_scale(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        _check_domain(loc_claim, d)
        noise = rng.laplace(intended, size=(n, 1))  # meant rng.laplace(0.0, intended, ...)
        return round_to_grid(_sum(d), noise, release_grid(math.sqrt(2.0) * intended))

    cell_claim = PureDP(epsilon=_EPS, relation=whole_rows(1.0), domain=PublicDomain(1.0))
    cell_scale = 2.0 / _EPS  # a replaced row moves two counts by one: L1 sensitivity 2

    def suppressed(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        _check_domain(cell_claim, d)
        c = cell_counts(d)
        out = _safe_laplace(cell_counts, lambda e: cell_scale)(d, n, rng)
        out[:, c < SUPPRESS_BELOW] = 0.0  # BUG: the true count decides what is published
        return out

    def suppressed_noisy(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        _check_domain(cell_claim, d)
        out = _safe_laplace(cell_counts, lambda e: cell_scale)(d, n, rng)
        out[out < SUPPRESS_BELOW] = 0.0  # the noisy count decides: post-processing
        return out

    rows_pure = PureDP(epsilon=_EPS, relation=whole_rows(1.0), domain=PublicDomain(1.0))

    def local_median(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        _check_domain(rows_pure, d)
        y = np.asarray(d.y, dtype=float)
        b = 2.0 / _EPS  # one replaced row moves its own value by at most 2
        noisy = round_to_grid(y, laplace_noise_exact_uniform(b, (n, y.size), rng),
                              release_grid(math.sqrt(2.0) * b))
        return np.median(noisy, axis=1, keepdims=True)

    def rows_checked(draw: Callable) -> Callable[[Dataset, int, np.random.Generator], np.ndarray]:
        def checked(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
            _check_domain(rows_pure, d)
            return draw(d, n, rng)
        return checked

    slope_claim = PureDP(epsilon=_EPS, relation=outputs_only(2.0), domain=PublicDomain(1.0))
    var_scale = 1.0 / (data.n * _EPS)  # the author's sensitivity b²/n with b = 1
    trim_scale = 2.0 / (data.n * _EPS)  # the plain mean's 2b/n
    return [
        MutantSpec("gp-sup-norm-as-l2", "GP posterior mean at 30 points; the sensitivity "
                   "taken as the largest single weight |C_ji|, not the largest column's L2 "
                   "norm", False, _claim_out(), _safe(lambda d: dense(d) @ d.y, lambda d: s_sup),
                   {"mean": lambda d: dense(d) @ d.y,
                    "cov": _const_cov(s_sup**2, _GP_XS_DENSE.shape[0])}, data),
        MutantSpec("gp-mean-and-fit-at-full-eps", "GP posterior mean at 5 points and the fitted "
                   "values at the 20 training inputs, each part calibrated at the full "
                   "(eps, delta)", False, _claim_out(), two_parts,
                   {"mean": two_means, "cov": lambda d: np.diag(two_sds(d) ** 2)},
                   data),
        MutantSpec("gp-noise-shaped-by-posterior-sd", "GP posterior mean at 10 points "
                   "reaching beyond the data; the calibrated noise spread in proportion to the "
                   "posterior sd (same total variance, less noise where the weights are "
                   "large)", False, _claim_out(), shaped,
                   {"mean": lambda d: beyond(d) @ d.y,
                    "cov": lambda d: np.diag(gp_posterior_sd_sigmas(d) ** 2)}, data),
        MutantSpec("gp-mean-with-log-marginal-likelihood", "GP posterior mean at 5 points, "
                   "correctly noised, and the exact log marginal likelihood of the targets "
                   "beside it as a diagnostic", False, _claim_out(), with_lml,
                   {"query": lambda d: np.r_[_gp_weights(d) @ d.y, gp_log_marginal_likelihood(d)],
                    "norm": L2(), "bound": float(np.max(np.linalg.norm(C, axis=0)))}, data),
        MutantSpec("laplace-loc-for-scale", "the sum with numpy's rng.laplace(2.0, size=...): "
                   "the intended scale 1/eps = 2 passed as loc, the scale left at 1",
                   False, loc_claim, loc_for_scale, {"query": _sum, "norm": L1(), "bound": 1.0},
                   data),
        MutantSpec("small-cell-suppression", "a 5-bin histogram of the targets, Laplace(2/eps) "
                   "per cell, cells whose true count is below 5 released as 0", False,
                   cell_claim, suppressed, {"query": cell_counts, "norm": L1(), "bound": 2.0},
                   data),
        MutantSpec("variance-with-half-range", "np.var of targets in [-1, 1] with Laplace noise "
                   "for the sensitivity b^2/n (it is (2b)^2 (n-1)/n^2)", False, rows_pure,
                   rows_checked(_safe_laplace(_variance, lambda d: var_scale)),
                   {"query": _variance, "norm": L1(), "bound": 1.0 / data.n}, data),
        MutantSpec("trimmed-mean-with-mean-sensitivity", "the mean of the middle half (25 % "
                   "trimmed at each end) with Laplace noise for the plain mean's 2b/n", False,
                   rows_pure, rows_checked(_safe_laplace(trimmed_mean, lambda d: trim_scale)),
                   {"query": trimmed_mean, "norm": L1(), "bound": 2.0 / data.n}, data),
        MutantSpec("exp-mech-abs-error-sensitivity", "a slope chosen from 5 public candidates "
                   "by the exponential mechanism on the absolute error, its sensitivity taken as "
                   "1 ('|y| <= 1'); one target moves by 2 and so does every utility", False,
                   slope_claim, lambda d, n, rng: _exp_choice(slope_utility(_checked(slope_claim,
                                                                                   d)),
                                                              SLOPES, n, rng),
                   {"query": slope_utility, "norm": Linf(), "bound": 1.0}, slope_data()),
        MutantSpec("control-suppress-noisy-cells", "looks wrong: cells below 5 released as 0 - "
                   "decided on the noisy counts (post-processing)", True, cell_claim,
                   suppressed_noisy, {"query": cell_counts, "norm": L1(), "bound": 2.0}, data),
        MutantSpec("control-median-of-local-noise", "looks wrong: the median of the targets "
                   "after each got its own Laplace(2/eps) (local DP, then post-processing)",
                   True, rows_pure, local_median, {"query": _median, "norm": L1(), "bound": 2.0},
                   data),
    ]


# --------------------------------------------------------------------------- class labels
def label_data(n: int = 30, ones: int = 17) -> Dataset:
    """Binary labels on public inputs: ``ones`` of ``n`` rows at 1, spread by a fixed stride."""
    y = np.zeros(n)
    y[(7 * np.arange(ones)) % n] = 1.0  # 7 and 30 coprime: distinct rows, interleaved
    return Dataset(np.linspace(0.0, 1.0, n)[:, None], y, name="binary-labels")


def _two_sided_geometric(epsilon: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """The geometric mechanism's noise: ``G1 − G2``, P(k) ∝ exp(−ε|k|) (numpy's p = 1 − e^−ε)."""
    p = -math.expm1(-epsilon)
    return (rng.geometric(p, size=(n, 1)) - rng.geometric(p, size=(n, 1))).astype(float)


def _label_mutants() -> list[MutantSpec]:
    """A third hunt (28 Nov 2026): integer releases of class labels, and a control.

    The count of positive labels with two-sided geometric noise (ε-DP for a count), its
    release suppressed to 0 when the *true* count is below 5 "because small cells are
    disclosive": between 4 and 5 positives the release is 0 for sure on one side and not
    on the other (true ε = ∞). The user's data hold 17 positives, and with declared labels
    the whole-dataset bases collapse (a target between the labels is off the domain): the
    pair 4 → 5 comes from the structure-boundary search along the labels
    (:class:`~dpgp_audit.audit.neighbours.LabelCountPath`). Control: the suppression
    decided on the noisy count (post-processing). Appended last, so the earlier rows keep
    their seeds.
    """
    claim = PureDP(epsilon=_EPS, relation=outputs_only(1.0),
                   domain=PublicDomain(1.0, labels=(0.0, 1.0)))

    def count(d: Dataset) -> np.ndarray:
        return np.array([float(np.sum(_checked(claim, d).y))])

    def suppressed(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        c = count(d)[0]
        noisy = c + _two_sided_geometric(_EPS, n, rng)
        return np.zeros((n, 1)) if c < SUPPRESS_BELOW else noisy  # BUG: the true count decides

    def suppressed_noisy(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        noisy = count(d)[0] + _two_sided_geometric(_EPS, n, rng)
        return np.where(noisy < SUPPRESS_BELOW, 0.0, noisy)  # the noisy count decides

    model = {"query": count, "norm": L1(), "bound": 1.0}
    data = label_data()
    return [
        MutantSpec("label-count-suppression", "the count of positive labels with two-sided "
                   "geometric noise, released as 0 when the true count is below 5", False,
                   claim, suppressed, model, data),
        MutantSpec("control-label-count-noisy-suppression", "looks wrong: the noisy count of "
                   "positive labels released as 0 below 5 - decided on the noisy count "
                   "(post-processing)", True, claim, suppressed_noisy, model, data),
    ]


# ------------------------------------------------------------------- private post-processing
def _postprocessing_mutants(data: Dataset) -> list[MutantSpec]:
    """A fourth hunt (28 Nov 2026): an exact statistic beside a noisy one, and randomised
    response answered twice.

    Written by helper sessions told only the contract, and caught by the default path when
    written. The mean of the targets released with the exact number of targets above 0.5
    "for convenience" (ε = ∞). Randomised response on 0/1 labels answered twice per row
    with independent flips, each answer ε-RR, the count of ones released at ε under whole
    rows (true ε 2ε: both answers of the replaced row at their likelier value; visible
    where the data are small, as on the tiny-dataset pairs). The hunt's clip of noisy bin
    means to the true targets' range is a planted bug of the zoo
    (``planted/clip-to-data-range``, :mod:`dpgp_audit.bugs.postprocessing`). Appended
    last, so the earlier rows keep their seeds.
    """
    mean_claim = ApproxDP(epsilon=_EPS, delta=_DELTA, relation=outputs_only(2.0),
                          domain=PublicDomain(1.0))
    s_mean = _sigma(2.0 / data.n)

    def mean_of(d: Dataset) -> np.ndarray:
        return np.array([float(np.mean(_checked(mean_claim, d).y))])

    def with_count(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        above = float(np.sum(np.asarray(d.y) > 0.5))  # BUG: an exact statistic of the targets
        return np.hstack([_safe(mean_of, lambda e: s_mean)(d, n, rng), np.full((n, 1), above)])

    rr_claim = PureDP(epsilon=_EPS, relation=whole_rows(1.0),
                      domain=PublicDomain(1.0, labels=(0.0, 1.0)))
    flip = 1.0 / (1.0 + math.exp(_EPS))  # ε-RR for one answer

    def rr_twice(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        y = np.asarray(_checked(rr_claim, d).y, dtype=float)
        flips = rng.random((n, 2, y.size)) < flip  # BUG: two answers of each row, one budget
        answers = np.where(flips, 1.0 - y, y)
        return answers.sum(axis=(1, 2)).reshape(n, 1)

    def rr_count(d: Dataset) -> np.ndarray:
        return np.array([float(np.sum(_checked(rr_claim, d).y))])

    return [
        MutantSpec("mean-with-exact-count", "the mean of the targets with Gaussian noise, and "
                   "beside it the exact number of targets above 0.5", False, mean_claim,
                   with_count, {"query": mean_of, "norm": L2(), "bound": 2.0 / data.n}, data),
        MutantSpec("randomised-response-twice", "randomised response on 0/1 labels, each row "
                   "answering twice with independent eps-RR flips, the count of ones released "
                   "at eps", False, rr_claim, rr_twice,
                   {"query": rr_count, "norm": L1(), "bound": 1.0}, label_data()),
    ]


# ------------------------------------------------------- signs of zero, grids, un-noised tests
#: Outputs-only PTR mode over five labels: the threshold T = 2 + (2/ε)·ln(1/(2δ)) that a
#: noised margin ``g + Lap(2/ε)`` must clear (Dwork & Lei's propose-test-release).
PTR_LABELS: tuple[float, ...] = (0.0, 1.0, 2.0, 3.0, 4.0)
PTR_THRESHOLD = 2.0 + (2.0 / _EPS) * math.log(1.0 / (2.0 * _DELTA))


def ptr_label_data() -> Dataset:
    """Sixty rows of five labels, counts 38, 8, 6, 5 and 3: a mode margin of 30 (> T)."""
    y = np.repeat(np.array(PTR_LABELS), (38, 8, 6, 5, 3))
    order = (7 * np.arange(y.size)) % y.size  # 7 and 60 coprime: labels interleaved
    return Dataset(np.linspace(0.0, 1.0, y.size)[:, None], y[order], name="five-labels")


def mode_margin(y: np.ndarray) -> tuple[float, float]:
    """The most frequent of :data:`PTR_LABELS` (the first on a tie) and its margin over the next."""
    counts = np.array([np.sum(np.asarray(y) == v) for v in PTR_LABELS], dtype=float)
    order = np.argsort(-counts, kind="stable")
    return PTR_LABELS[order[0]], float(counts[order[0]] - counts[order[1]])


def scale_grid(y: np.ndarray) -> float:
    """The grid a hurried snap takes from the data: ``2^(⌈log2 max(max|y|, 1/16)⌉ − 16)``."""
    scale = max(float(np.max(np.abs(y))), 1.0 / 16.0)
    return 2.0 ** (math.ceil(math.log2(scale)) - 16)


def _float_and_step_mutants(data: Dataset) -> list[MutantSpec]:
    """A fifth hunt (28 Nov 2026): the sign of a zero, a grid read off the data, and a
    propose-test-release whose test is not noised.

    Written by helper sessions told only the contract; the first three were missed on
    every seed until the float-support categories gave ``-0.0`` its own code and read a
    rounded release at its own grid (:func:`~dpgp_audit.audit.blackbox.scores.binade_grid`),
    and the structure-boundary search counted a step of an output without noise as a
    boundary (:func:`~dpgp_audit.audit.boundary.moves_without_noise`).

    * ``0.0 * m`` is ``-0.0`` exactly when ``m < 0`` (IEEE 754), so a float-safe mean
      floored at zero with the zero written as ``0.0 * mean`` releases ``-0.0`` on a data
      set of negative mean and never on one of mean ≥ 0 (ε = ∞), as does a second output of
      public weight 0 applied to the mean and to its noise (``-0.0 + -0.0`` stays negative).
    * A Gaussian mean snapped to a power-of-two grid chosen from the targets' scale: a
      target crossing a power of two changes the grid, and the finer grid's odd multiples
      (half of its outputs) are impossible on the coarser one (ε = ∞).
    * The mode of five labels released when its margin clears the PTR threshold, compared
      un-noised: the release is a deterministic step of the margin (ε = ∞ where one row
      moves it across T); the user's data (margin 30) are three rows from the step.

    Controls: the zero written as a literal ``0.0``; the snap to a public grid; the margin
    noised as PTR requires. Appended last, so the earlier rows keep their seeds.
    """
    claim = ApproxDP(epsilon=_EPS, delta=_DELTA, relation=outputs_only(2.0),
                     domain=PublicDomain(1.0))
    sd = _sigma(2.0 / data.n)

    def mean_of(d: Dataset) -> np.ndarray:
        return np.array([float(np.mean(_checked(claim, d).y))])

    safe = _safe(mean_of, lambda e: sd)

    def floored(zero: Callable[[float], float]):
        def draw(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
            r = safe(d, n, rng)
            return np.where(r > 0, r, zero(mean_of(d)[0]))
        return draw

    def zero_weight(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        z = rng.standard_normal((n, 1))
        first = round_to_grid(mean_of(d), sd * z, release_grid(sd))
        w = 0.0  # BUG: the public weight of a dropped output, applied to the mean and noise
        return np.hstack([first, w * mean_of(d)[0] + w * sd * rng.standard_normal((n, 1))])

    def snapped(grid: Callable[[Dataset], float]):
        def draw(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
            lam = grid(d)
            return lam * np.round((mean_of(d)[0] + sd * rng.standard_normal((n, 1))) / lam)
        return draw

    ptr_claim = ApproxDP(epsilon=_EPS, delta=_DELTA, relation=outputs_only(4.0),
                         domain=PublicDomain(4.0, labels=PTR_LABELS))

    def margin(d: Dataset) -> np.ndarray:
        return np.array([mode_margin(_checked(ptr_claim, d).y)[1]])

    def ptr(noised: bool):
        def draw(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
            mode, g = mode_margin(_checked(ptr_claim, d).y)
            test = g + rng.laplace(0.0, 2.0 / _EPS, size=(n, 1)) if noised else np.full((n, 1), g)
            return np.where(test > PTR_THRESHOLD, mode, -1.0)  # -1 stands for "no answer"
        return draw

    model = {"query": mean_of, "norm": L2(), "bound": 2.0 / data.n}
    labels = ptr_label_data()
    ptr_model = {"query": margin, "norm": L1(), "bound": 2.0}
    return [
        MutantSpec("signed-zero-floor", "a float-safe Gaussian mean floored at 0, the zero "
                   "written as 0.0 * mean (-0.0 when the mean is negative)", False, claim,
                   floored(lambda m: 0.0 * m), model, data),
        MutantSpec("signed-zero-weight", "a float-safe Gaussian mean beside a second output "
                   "of public weight 0 applied to the mean and to its noise", False, claim,
                   zero_weight, model, data),
        MutantSpec("grid-from-the-data-scale", "a Gaussian mean snapped to a power-of-two "
                   "grid 2^-16 of the targets' largest magnitude", False, claim,
                   snapped(lambda d: scale_grid(_checked(claim, d).y)), model, data),
        MutantSpec("ptr-mode-margin-not-noised", "the mode of five labels released when its "
                   "margin over the runner-up clears the PTR threshold, compared without "
                   "its Laplace noise", False, ptr_claim, ptr(False), ptr_model, labels),
        MutantSpec("control-floor-literal-zero", "looks wrong: the float-safe mean floored "
                   "at 0 (an atom) - the zero a literal 0.0, post-processing", True, claim,
                   floored(lambda m: 0.0), model, data),
        MutantSpec("control-public-grid-snap", "looks wrong: the Gaussian mean snapped to "
                   "the public grid 2^-16 (post-processing)", True, claim,
                   snapped(lambda d: 2.0 ** -16), model, data),
        MutantSpec("control-ptr-mode-noised-margin", "looks wrong: the mode released only "
                   "when the margin plus Lap(2/eps) clears T = 2 + (2/eps) ln(1/(2 delta))",
                   True, ptr_claim, ptr(True), ptr_model, labels),
    ]


# --------------------------------------------------------------------------- input corners
#: The public 3 × 8 sketch of :func:`sketch_of_sum`: Gaussian entries of variance 1/3, as a
#: sketch is drawn, written out as the public constant it is. On the corners of ``[-1, 1]^8``
#: it stretches ``2√8`` by 1.73 at most, at a corner off the box's diagonal.
SKETCH = np.array([[0.1759, -0.6004, 0.4333, 0.5430, -1.1264, -0.7518, 0.0738, -0.1826],
                   [-0.0097, -0.4925, 0.5077, 0.4491, 0.0381, 0.6508, 0.2699, -0.4961],
                   [0.2129, -0.5536, 0.5072, -0.0288, -0.1067, -0.3931, 0.7058, -0.0892]])
#: The public contrast of :func:`contrast_sum`: feature 1 minus feature 2, unit length.
CONTRAST = np.array([1.0, -1.0]) / math.sqrt(2.0)


def box_rows(dim: int, *, correlated: bool = False) -> Dataset:
    """40 rows with inputs in ``[-1, 1]^dim`` and targets in ``[-1, 1]`` (a fixed seed).

    ``correlated``: two features of one sign on every row (``x₁x₂ >= 0``), as positively
    correlated features are.
    """
    rng = np.random.default_rng(7 + dim)
    X = rng.uniform(-1.0, 1.0, (40, dim))
    if correlated:
        X[:, 1] = np.abs(X[:, 1]) * np.sign(X[:, 0])
    return Dataset(X, rng.uniform(-1.0, 1.0, 40))


def contrast_sum(data: Dataset) -> np.ndarray:
    """Σ_i ⟨x_i, v⟩ for the public contrast :data:`CONTRAST`."""
    return np.array([float(np.sum(np.asarray(data.X) @ CONTRAST))])


def cross_moment(data: Dataset) -> np.ndarray:
    """Σ_i x_i1 x_i2, the numerator of an uncentred correlation."""
    X = np.asarray(data.X)
    return np.array([float(X[:, 0] @ X[:, 1])])


def sketch_of_sum(data: Dataset) -> np.ndarray:
    """:data:`SKETCH` applied to Σ_i x_i."""
    return SKETCH @ np.asarray(data.X).sum(axis=0)


def _input_corner_mutants() -> list[MutantSpec]:
    """A sixth hunt (28 Nov 2026): releases of the inputs alone under whole rows.

    Written by a helper session told only the contract; missed on every seed (the first
    two) or on one (the third) until the substitution-position search moved a row between
    corners of the input box (:func:`~dpgp_audit.audit.positions.search_positions`): the
    generated pairs place a substituted row on the box's diagonal, where these releases
    move least, and flipping its target moves them not at all.

    * A contrast ``Σ⟨x, (1, -1)/√2⟩`` calibrated for Δ = 2, reading ``|x| <= 1`` as an L2
      bound; in the box a row moves it by 2√2, from (1, -1) to (-1, 1).
    * A public 3 × 8 sketch of the inputs' sum calibrated for 2√8 "since a sketch keeps
      norms"; at the worst pair of opposite corners it stretches that by 1.73.
    * A cross moment ``Σ x₁x₂`` calibrated for its add/remove sensitivity 1 under
      replace-one (true 2, from (1, 1) to (1, -1)), on features of one sign on every row.

    Control: the contrast calibrated for 2√2.
    """
    claim = ApproxDP(epsilon=_EPS, delta=_DELTA, relation=whole_rows(1.0),
                     domain=PublicDomain(1.0, x_bound=1.0))

    def rows(query: Callable[[Dataset], np.ndarray], sens: float):
        def checked(d: Dataset) -> np.ndarray:
            return query(_checked(claim, d))
        return _safe(checked, lambda d: _sigma(sens)), \
            {"query": checked, "norm": L2(), "bound": sens}

    cases = [("contrast-l2-bound-in-a-box", "a contrast of two features noised for Δ = 2, "
              "|x| <= 1 read as an L2 bound (in the box 2√2)", False, contrast_sum, 2.0,
              box_rows(2)),
             ("sketch-keeps-norms", "a public 3x8 sketch of the inputs' sum noised for "
              "2√8, as if a sketch kept norms (a corner stretches by 1.73)", False,
              sketch_of_sum, 2.0 * math.sqrt(8.0), box_rows(8)),
             ("cross-moment-add-remove", "Σ x1·x2 noised for its add/remove sensitivity 1 "
              "under replace-one (2)", False, cross_moment, 1.0, box_rows(2, correlated=True)),
             ("control-contrast-box-sensitivity", "looks wrong: the contrast noised for "
              "2√2, its sensitivity in the box", True, contrast_sum, 2.0 * math.sqrt(2.0),
              box_rows(2))]
    out = []
    for name, mistake, private, query, sens, data in cases:
        draw, model = rows(query, sens)
        out.append(MutantSpec(name, mistake, private, claim, draw, model, data))
    return out


#: The order statistic each end of :func:`winsorised_mean` is clipped at (5 % of 40 rows).
WINSOR_K = 2


def winsorised_mean(data: Dataset) -> np.ndarray:
    """The mean of the targets clipped at their own :data:`WINSOR_K`-th smallest and largest.

    A mean winsorised at the data's 5th and 95th percentiles. One target moved from one end
    to the other moves it by ``(k + 1)`` times the plain mean's ``2s/n`` when exactly
    ``k + 1`` targets sit at that end: the clip point jumps with the row.
    """
    y = np.sort(np.asarray(data.y, dtype=float))
    lo, hi = y[WINSOR_K], y[-WINSOR_K - 1]
    return np.array([float(np.mean(np.clip(np.asarray(data.y, dtype=float), lo, hi)))])


def _order_statistic_mutants() -> list[MutantSpec]:
    """A seventh hunt (29 Nov 2026): statistics clipped at the data's own order statistics.

    Written twice by two helper sessions told only the contract: a mean winsorised at the
    data's own 5 % order statistics, and one clipped at ``np.percentile(y, [5, 95])``.
    Each was noised for the plain mean's sensitivity and missed on every seed until the
    tail-count bases (:func:`~dpgp_audit.audit.neighbours.tail_count_pairs`) put ``k + 1``
    rows at one end: no base with none, half or all of them there moves the clip point.

    * The winsorised mean of 40 targets in [-1, 1] noised for 2/n (true change 6/n).

    Control: the same statistic noised for 2, the width of [-1, 1], which bounds the
    change of any mean of values in it.
    """
    claim = ApproxDP(epsilon=_EPS, delta=_DELTA, relation=outputs_only(2.0),
                     domain=PublicDomain(1.0))
    x = np.linspace(0.0, 1.0, 40)
    data = Dataset(x, np.round(0.8 * np.sin(2.0 * np.pi * x), 3))

    def checked(d: Dataset) -> np.ndarray:
        return winsorised_mean(_checked(claim, d))

    out = []
    for name, mistake, private, sens in (
            ("winsorised-at-own-percentiles", "a mean clipped at the data's own 5 % order "
             "statistics, noised for the plain mean's 2/n (a crossing row moves it 6/n)",
             False, 2.0 / data.n),
            ("control-winsorised-whole-width", "looks wrong: the clip points come from the "
             "data, but the noise is for 2, the width of [-1, 1]", True, 2.0)):
        out.append(MutantSpec(name, mistake, private, claim,
                              _safe(checked, lambda d, s=sens: _sigma(s)),
                              {"query": checked, "norm": L2(), "bound": sens}, data))
    return out


#: Steps, clip and step size of the gradient-descent mutants.
DESCENT_STEPS, DESCENT_CLIP, DESCENT_RATE = 4, 0.5, 0.5


def clipped_gradient(data: Dataset, theta: np.ndarray) -> np.ndarray:
    """``mean_i clip(θ − y_i, −c, c)`` per release: the squared loss's gradient, clipped
    per example (a change of one target moves it by at most 2c/n).
    """
    y = np.asarray(data.y, dtype=float)
    return np.clip(theta - y[None, :], -DESCENT_CLIP, DESCENT_CLIP).mean(axis=1, keepdims=True)


def _iterative_mutants() -> list[MutantSpec]:
    """A thirteenth hunt (29 Nov 2026): gradient descent releasing every iterate.

    ``DESCENT_STEPS`` steps of ``θ ← θ − η (ĝ(θ) + σ z)`` from θ = 0 on the default data,
    with ĝ the per-example clipped gradient (sensitivity Δ = 2c/n under outputs-only
    substitution, |y| <= 1), each iterate released on the public grid of ησ and read back
    for the next step. Each step is a Gaussian mechanism of μ_t ≤ Δ/σ whatever the path, so
    the release is √T·Δ/σ-GDP (adaptive composition of Gaussian mechanisms).

    * Each step noised for the whole (ε, δ): μ = √T · μ(ε, δ) = 2 μ(ε, δ), ε(δ) ≈ 2.6
      against 1 (the bug); its model declares one step's gradient, so the sensitivity
      checker finds its bound right.

    Control: σ for the composition, μ(ε, δ)/√T per step: exactly the claim.
    """
    from dpgp_audit.datasets.default import default_dataset
    from dpgp_audit.privacy.gdp import gdp_mu

    claim = ApproxDP(epsilon=_EPS, delta=_DELTA, relation=outputs_only(2.0),
                     domain=PublicDomain(1.0))
    data = default_dataset()
    sens = 2.0 * DESCENT_CLIP / data.n
    mu = gdp_mu(_EPS, _DELTA)

    def descent(sigma: float) -> Callable[[Dataset, int, np.random.Generator], np.ndarray]:
        grid = release_grid(DESCENT_RATE * sigma)

        def draw(d: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
            d = _checked(claim, d)
            theta = np.zeros((n, 1))
            out = np.empty((n, DESCENT_STEPS))
            for t in range(DESCENT_STEPS):
                step = theta - DESCENT_RATE * clipped_gradient(d, theta)
                theta = round_to_grid(step, -DESCENT_RATE * sigma * rng.standard_normal(
                    (n, 1)), grid)
                out[:, t] = theta[:, 0]
            return out
        return draw

    def first_gradient(d: Dataset) -> np.ndarray:
        return clipped_gradient(_checked(claim, d), np.zeros((1, 1)))[0]

    model = {"query": first_gradient, "norm": L2(), "bound": sens}
    return [
        MutantSpec("descent-steps-full-budget", "noisy gradient descent releasing its "
                   f"{DESCENT_STEPS} iterates, each step noised for the whole (eps, delta)",
                   False, claim, descent(sens / mu), model, data),
        MutantSpec("control-descent-composed", "looks wrong: every iterate released, each "
                   "step noised for mu(eps, delta)/sqrt(T) - Gaussian steps compose to the "
                   "claim exactly", True, claim, descent(sens * math.sqrt(DESCENT_STEPS) / mu),
                   model, data),
    ]
