"""The zoo's one table: every planted bug beside its twin, true ε and catching auditor (A.5).

Each row of :func:`planted` is a :class:`Bug`: a deliberately broken mechanism with

* its ID ``planted/<name>`` (the catalogue registers it under that ID);
* its **twin**, the catalogue ID of the correct mechanism it breaks;
* its **true ε** at the claimed δ (``inf`` for unbounded loss), exact where a closed form
  or quadrature exists (the module of the bug says how);
* the **auditor expected to catch it** — the cheapest one that can see it — with the
  samples per side it needs in fixed mode (``audit_mechanism(..., mode="fixed")``:
  exactly that many; 0 for the deterministic auditors) and any extra
  ``audit_mechanism`` arguments. The test suite asserts every row with a fixed seed;
  the auditing lab tabulates it.

:func:`controls` lists the correct twins that exist only for the zoo (IDs
``A.5/<name>``): ordinary catalogue mechanisms, audited by ``make audit`` like any other.
The mechanisms themselves live in the modules of this package, grouped by what they get
wrong: :mod:`~dpgp_audit.bugs.calibration` (noise scale, norm and calibration slips),
:mod:`~dpgp_audit.bugs.blindspots` (atoms, data-dependent noise, vector answers,
structural edges), :mod:`~dpgp_audit.bugs.rounding` (float rounding, caught by A.7),
:mod:`~dpgp_audit.bugs.float_support` (textbook float samplers, A.7's float-support test),
:mod:`~dpgp_audit.bugs.pair_blindspots` (bugs only whole-dataset pairs expose: the declared
bound, structural bases, the full swing), :mod:`~dpgp_audit.bugs.iterative` (a release of
noisy steps, each read from the last),
:mod:`~dpgp_audit.bugs.s18` and :mod:`~dpgp_audit.bugs.s21` (the papers' own pitfalls),
:mod:`~dpgp_audit.bugs.statdp` (the field's own benchmark: StatDP's and DP-Sniper's
algorithms at ε₀ = 0.1).
The mutation benchmark's mutants (:mod:`~dpgp_audit.bugs.mutants`, IDs ``mutant/<name>``)
are benchmark material: written as a hurried user would, not registered.

The table is built on first use (some true ε are computed by building the mechanism).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from dpgp_audit.contract import Mechanism
from dpgp_audit.dataset import Dataset

__all__ = ["Bug", "Control", "controls", "get", "planted"]


@dataclass(frozen=True)
class Bug:
    """One planted bug (A.5) and what is known about it.

    Attributes
    ----------
    id
        ``planted/<name>``.
    paper
        The catalogue section it belongs to (``"A.5"``, or ``"S18"``/``"S21"`` for a
        paper's own pitfall).
    title
        One line: what is wrong.
    build, default_data, defaults
        As for a catalogue entry: ``build(data, **defaults) -> Mechanism``.
    twin
        Catalogue ID of the correct mechanism it breaks.
    true_epsilon
        True ε at the claimed δ (``inf``: unbounded loss).
    caught_by
        The cheapest auditor that catches it (``"sensitivity"``, ``"whitebox"``,
        ``"model-check"``, ``"greybox"``, ``"blackbox"`` or ``"precision"``).
    n
        Samples per side that auditor needs in fixed mode (0: deterministic).
    audit_kwargs
        Extra ``audit_mechanism`` arguments for that check.
    bug_class
        For the default path's former blind spots: the class of mistake (else ``""``).
    audit_samples
        Per-entry ``make audit`` fixed-mode n (``None``: the default); the catalogue's
        draw-cap rule gives ten times that as the sequential cap.
    """

    id: str
    paper: str
    title: str
    build: Callable[..., Mechanism]
    default_data: Callable[[], Dataset]
    defaults: dict
    twin: str
    true_epsilon: float
    caught_by: str
    n: int
    audit_kwargs: dict = field(default_factory=dict)
    bug_class: str = ""
    audit_samples: int | None = None


@dataclass(frozen=True)
class Control:
    """A correct twin that exists for the zoo (``A.5/<name>``), registered like any mechanism."""

    id: str
    title: str
    build: Callable[..., Mechanism]
    default_data: Callable[[], Dataset]
    defaults: dict
    audit_samples: int | None = None
    inputs: int | None = None  # 1: a 1-D grid of public inputs (catalogue.Entry.inputs)


_GAUSS = {"epsilon": 1.0, "delta": 1e-5}
_PURE = {"epsilon": 1.0}
_S18 = {"epsilon": 1.0, "delta": 0.01, "d": 1.0}
#: The edge double-count's loss (true ε 1.465 against a claim of 1 at δ = 1e-5) lives in
#: a far Gaussian tail: the sequential auditor certifies it after ~1e6 draws per side,
#: above the default cap; the twin gets the same cap (ten times this, the catalogue rule).
HISTOGRAM_AUDIT_SAMPLES = 400_000
#: Samples per side the float-support test needs on the textbook samplers in fixed mode
#: (the pilot sees the support difference at 200 per side; 5 000 certified ε ≥ 3 on seeds
#: 0–9 in development, against a claim of 1).
FLOAT_SUPPORT_N = 5_000


@functools.cache
def controls() -> tuple[Control, ...]:
    """The zoo's correct twins (``A.5/<name>``), sorted by ID."""
    from dpgp_audit.bugs import blindspots as pb
    from dpgp_audit.bugs import calibration as pl
    from dpgp_audit.bugs import iterative as it
    from dpgp_audit.bugs import pair_blindspots as pp
    from dpgp_audit.bugs import postprocessing as pq
    from dpgp_audit.bugs import statdp as sd
    from dpgp_audit.datasets.default import default_dataset

    statdp = {"epsilon": sd.EPSILON_0}
    rows = [
        Control("A.5/clip-to-public-bound",
                "Control: noisy bin means clipped to the declared bound [-1, 1] (public: "
                "post-processing; outputs only)",
                pq.build_clipped_bin_means("bound"), default_dataset, dict(_GAUSS)),
        Control("A.5/gaussian-sum-rows", "Control: Gaussian sum under whole-row replacement",
                pl.build_sum_rows, default_dataset, dict(_GAUSS)),
        Control("A.5/gp-smoother-iso", "Control: GP posterior mean + iid Gaussian noise",
                pl.build_gp_iso, default_dataset, dict(_GAUSS), inputs=1),
        Control("A.5/gp-smoother-prior",
                "Control: GP posterior mean + prior-shaped noise (Mahalanobis sensitivity)",
                pl.build_gp_prior, default_dataset, dict(_GAUSS), inputs=1),
        Control("A.5/laplace-vector", "Control: 16-dim Laplace, L1 calibration",
                pl.build_laplace_l1, default_dataset, dict(_PURE)),
        Control("A.5/exp-mech", "Control: exponential mechanism with the factor 2",
                pl.build_exponential("vote", 2.0), pl.exp_default_data, dict(_PURE)),
        Control("A.5/gaussian-sum-sample-only",
                "Control: analytic Gaussian sum exposing only sample() (twin of the atom and "
                "data-dependent-scale bugs)", pb.build_noise_never_skipped, default_dataset,
                dict(_GAUSS), audit_samples=100_000),
        Control("A.5/bin-sums", "Control: 5 public-bin sums + iid Gaussian noise, as stated",
                pb.build_bin_sums, default_dataset, dict(_GAUSS)),
        Control("A.5/svt", "Control: sparse vector technique (Lyu, Su & Li 2017, Alg. 1)",
                pb.build_svt("alg1"), pb.answers_data, dict(_PURE)),
        Control("A.5/noisy-max", "Control: report noisy max with Lap(2 Delta/eps)",
                pb.build_noisy_max(2.0, False), pb.answers_data, dict(_PURE)),
        Control("A.5/histogram", "Control: 4-bin histogram of |y| <= 1, half-open bins",
                pb.build_histogram(False), default_dataset, dict(_GAUSS),
                audit_samples=HISTOGRAM_AUDIT_SAMPLES),
        Control("A.5/laplace-sum-declared-bound",
                "Control: Laplace sum, README claim |y| <= 1 and d = 2, noise from the bound",
                pp.build_max_scaled("bound"), default_dataset, dict(_PURE)),
        Control("A.5/group-means-nominal",
                "Control: two x-group totals over the nominal size n/2 (whole rows)",
                pp.build_group_means(True), default_dataset, dict(_GAUSS)),
        Control("A.5/clipped-mean", "Control: clipped mean with the full-swing sensitivity 2b/n",
                pp.build_clipped_mean(True), pp.clipped_mean_data, dict(_GAUSS)),
        Control("A.5/kernel-sum-at-point",
                "Control: kernel-weighted sum at a public point, sensitivity 2b (the kernel's "
                "supremum; whole rows, sample only)",
                pp.build_kernel_sum(False), default_dataset, dict(_GAUSS)),
        Control("A.5/arm-gap-nominal",
                "Control: difference of two x-groups' totals over the nominal size n/2, Laplace "
                "noise for 4b/n (whole rows, sample only)",
                pp.build_arm_gap("nominal"), default_dataset, dict(_PURE)),
        Control("A.5/reference-mmd",
                "Control: squared MMD of the inputs against a public reference sample, Laplace "
                "noise for 4/n (whole rows, sample only)",
                pp.build_reference_mmd("ordered"), default_dataset, dict(_PURE)),
        Control("A.5/noisy-descent",
                "Control: noisy gradient descent on a penalised squared loss, every iterate "
                "released, Laplace noise for eps/T per step (outputs only)",
                it.build_penalised_descent("linear"), default_dataset, dict(_PURE)),
        Control("A.5/mean-min-size",
                f"Control: Laplace mean refusing fewer than {pp.MIN_ROWS} rows, noise for the "
                "smallest size it accepts (whole rows, sample only)",
                pp.build_min_size_mean("minimum"), default_dataset, dict(_PURE)),
        # The StatDP/DP-Sniper set's correct twins that no control above already is (the
        # Laplace noisy max and SVT Alg. 1 are A.5/noisy-max and A.5/svt at eps = 1).
        Control("A.5/statdp-noisy-max-exp",
                "Control: report noisy max with Exp(2 Delta/eps) noise, index only "
                "(Ding et al. 2018 Alg. 6; eps0 = 0.1, 5 answers)",
                sd.build_noisy_max("exponential", "index"), sd.noisy_max_data, dict(statdp)),
        Control("A.5/statdp-histogram",
                "Control: noisy histogram, Lap(1/eps) per count, one count moves "
                "(Ding et al. 2018 Alg. 9; eps0 = 0.1, 5 counts)",
                sd.build_histogram(False), sd.noisy_max_data, dict(statdp)),
    ]
    return tuple(sorted(rows, key=lambda c: c.id))


@functools.cache
def planted() -> tuple[Bug, ...]:
    """Every planted bug, in the order of the auditing lab's table (controls last)."""
    return tuple(_calibration() + _papers() + _rounding() + _float_support() + _blindspots()
                 + _pair_blindspots() + _iterative() + _postprocessing() + _statdp()
                 + _negative_controls())


def get(bug_id: str) -> Bug:
    """The planted bug ``bug_id``; ``KeyError`` lists the known IDs."""
    table = {b.id: b for b in planted()}
    try:
        return table[bug_id]
    except KeyError:
        raise KeyError(f"unknown planted bug {bug_id!r}; known: {', '.join(table)}") from None


# ---------------------------------------------------------------------- the rows, by module
def _linear_gaussian(build: Callable[..., Mechanism], defaults: dict) -> float:
    from dpgp_audit.bugs import calibration as pl
    from dpgp_audit.datasets.default import default_dataset

    return pl.linear_gaussian_true_epsilon(build(default_dataset(), **defaults),
                                           defaults["delta"])


def _calibration() -> list[Bug]:
    from dpgp_audit.bugs import calibration as pl
    from dpgp_audit.datasets.default import default_dataset

    x2 = functools.partial(pl.build_sensitivity_underestimated, factor=2.0)
    x125 = functools.partial(pl.build_sensitivity_underestimated, factor=1.25)
    large = {"epsilon": 20.0, "delta": 1e-5}
    rows = [
        # (name, title, build, defaults, twin, true ε (None: exact Gaussian), auditor, n, kw)
        ("sensitivity-x2", "Gaussian sum, sensitivity halved", x2, _GAUSS,
         "P.1/gaussian-sum", None, "sensitivity", 0, {}),
        ("sensitivity-x1.25", "Gaussian sum, sensitivity / 1.25", x125, _GAUSS,
         "P.1/gaussian-sum", None, "sensitivity", 0, {}),
        ("neighbour-mismatch", "Gaussian sum, add/remove sensitivity under replace-one",
         pl.build_neighbour_mismatch, _GAUSS, "A.5/gaussian-sum-rows", None, "sensitivity", 0,
         {}),
        ("gp-sup-norm", "GP release, sup-norm sensitivity for an L2 proof",
         pl.build_gp_sup_norm, _GAUSS, "A.5/gp-smoother-iso", None, "sensitivity", 0, {}),
        ("singular-noise", "GP release, rank-truncated noise covariance",
         pl.build_singular_noise, _GAUSS, "A.5/gp-smoother-prior", math.inf, "sensitivity", 0,
         {}),
        ("std-as-variance", "Gaussian sum, noise variance set to sigma",
         pl.build_std_as_variance, _GAUSS, "P.1/gaussian-sum", None, "whitebox", 0, {}),
        ("classical-large-eps", "Classical Gaussian calibration at epsilon = 20",
         pl.build_classical_large_eps, large, "P.1/gaussian-sum", None, "whitebox", 0, {}),
        ("hall-large-eps", "GP release, Hall calibration at epsilon = 20",
         pl.build_hall_large_eps, large, "A.5/gp-smoother-prior", None, "whitebox", 0, {}),
        ("data-dependent-hyperparams", "GP release, noise amplitude fitted on private y",
         pl.build_data_dependent, _GAUSS, "A.5/gp-smoother-prior", math.inf, "whitebox", 0,
         {"n_mc": 2_000}),
        # 20 per side (AUDITING.md §5.5 target): 5 fit the threshold (ties between equally
        # pessimistic thresholds are broken by raw separation), 15 certify it; one pair, so
        # no Bonferroni split over pairs.
        ("fixed-seed", "Gaussian sum, noise from a fixed seed", pl.build_fixed_seed, _GAUSS,
         "P.1/gaussian-sum", math.inf, "blackbox", 20, {"n_pairs": 1, "fit_fraction": 0.25}),
        ("laplace-l2", "16-dim Laplace calibrated with the L2 sensitivity",
         pl.build_laplace_l2, _PURE, "A.5/laplace-vector", 4.0, "blackbox", 10_000, {}),
        ("exp-no-half", "Exponential mechanism without the factor 2 (vote utility)",
         pl.build_exponential("vote", 1.0), _PURE, "A.5/exp-mech",
         pl.exp_no_half_worst_epsilon(1.0, 10, pl.exp_default_data().n), "blackbox", 5_000, {}),
    ]
    out = []
    for name, title, build, defaults, twin, true_eps, auditor, n, kw in rows:
        data_fn = pl.exp_default_data if name.startswith("exp-") else default_dataset
        if true_eps is None:
            true_eps = _linear_gaussian(build, defaults)
        out.append(Bug(f"planted/{name}", "A.5", title, build, data_fn, dict(defaults), twin,
                       float(true_eps), auditor, n, kw))
    return out


def _papers() -> list[Bug]:
    from dpgp_audit.bugs import s18, s21
    from dpgp_audit.datasets.default import default_dataset

    data = default_dataset()
    out = []
    for name, twin, title, build in (
        ("s18-delta-no-sqrt", "S18.2/cloaking",
         "Cloaking with Alg. 1 CalcDelta (no sqrt) on an unconverged optimiser",
         s18.build_delta_no_sqrt),
        ("s18-pinv-drops-direction", "S18.2/cloaking",
         "Cloaking whose truncated pseudo-inverse drops a noise direction", s18.build_pinv_drops),
        ("s18-supnorm", "S18.1/standard",
         "Standard DP-GP calibrated to the sup-norm instead of the RKHS norm", s18.build_supnorm),
    ):
        true_eps = s18.exact_gaussian_epsilon(build(data, **_S18), data, 1.0, 0.01)
        out.append(Bug(f"planted/{name}", "S18", title, build, default_dataset, dict(_S18),
                       twin, float(true_eps), "whitebox", 0))
    out.append(Bug("planted/s21-unclipped-sse", "S21",
                   "BUG: sensitivity from clipped errors, utility from the unclipped SSE",
                   s21.build_unclipped, s21.planted_selection_data, {"epsilon": 1.0, "d": 1.0},
                   "S21.5/selection", math.inf, "blackbox", 20_000, {"score": "categorical"}))
    return out


def _rounding() -> list[Bug]:
    """A.7's planted twins: the releases as shipped before declared domains."""
    from dpgp_audit.bugs import rounding as u
    from dpgp_audit.datasets.default import default_dataset
    from dpgp_audit.methods.s21 import mechanisms as s21

    # rounding makes two releases deterministic and different: the loss is unbounded
    rows = [
        ("gaussian-sum-no-domain", "Gaussian sum", u.build_gaussian_sum_no_domain,
         default_dataset, {"epsilon": 1.0, "delta": 1e-5, "d": 1.0}, "P.1/gaussian-sum"),
        ("laplace-sum-no-domain", "Laplace sum", u.build_laplace_sum_no_domain, default_dataset,
         {"epsilon": 1.0, "d": 1.0}, "P.2/laplace-sum"),
        ("cloaking-no-domain", "S18 cloaking", u.build_cloaking_no_domain, default_dataset,
         dict(_S18), "S18.2/cloaking"),
        ("sparse-cloaking-no-domain", "S21 sparse cloaking", u.build_sparse_cloaking_no_domain,
         s21.default_regression_data,
         {"epsilon": 1.0, "delta": 0.01, "d": 1.0, "inducing_seed": 0}, "S21.2/sparse-cloaking"),
    ]
    return [Bug(f"planted/{name}", "A.5",
                f"BUG: {what} with no bound on |y| (rounding swallows the noise)", build,
                data_fn, defaults, twin, math.inf, "precision", 20_000)
            for name, what, build, data_fn, defaults, twin in rows]


def _float_support() -> list[Bug]:
    """Textbook float samplers (issue 20 §4): an infinite loss in the low bits at ordinary inputs.

    Caught by the precision auditor's float-support test, on the default path since the
    kit's own continuous releases are rounded to a public grid (issue 20 §4).
    """
    from dpgp_audit.bugs import float_support as fs
    from dpgp_audit.datasets.default import default_dataset

    titles = {"laplace-log": "Laplace sum, noise b*sign*(-log(1-U)) in floats",
              "laplace-inverse-cdf": "Laplace sum, inverse-CDF noise in floats",
              "gaussian-box-muller": "Gaussian sum, Box-Muller noise in floats",
              "laplace-float32": "Laplace sum computed and released in float32"}
    return [Bug(f"planted/{name}", "A.5", f"BUG: {titles[name]} (low bits leak the sum)",
                fs.build_textbook(name), default_dataset,
                dict(_GAUSS) if name.startswith("gaussian") else dict(_PURE), twin,
                math.inf, "precision", FLOAT_SUPPORT_N)
            for name, twin in fs.SAMPLERS.items()]


def _blindspots() -> list[Bug]:
    """The default path's former blind spots (issue 15 §1)."""
    from dpgp_audit.bugs import blindspots as pb
    from dpgp_audit.bugs import calibration as pl
    from dpgp_audit.datasets.default import default_dataset

    k = pb.answers_data().n
    hist = {"audit_samples": HISTOGRAM_AUDIT_SAMPLES}
    return [
        Bug("planted/noise-skipped", "A.5",
            "Gaussian sum whose noise is skipped with probability 100 delta (an atom)",
            pb.build_noise_skipped, default_dataset, dict(_GAUSS),
            "A.5/gaussian-sum-sample-only", math.inf, "blackbox", 100_000,
            bug_class="atom in a continuous output", audit_samples=100_000),
        Bug("planted/shared-noise-model", "A.5",
            "Bin sums with one shared noise draw while cov() states iid noise",
            pb.build_shared_noise, default_dataset, dict(_GAUSS), "A.5/bin-sums", math.inf,
            "model-check", 4_000, bug_class="sampler contradicts its own mean/cov"),
        Bug("planted/data-dependent-scale", "A.5",
            "Gaussian sum with noise sd proportional to sd(y), sample() only",
            pb.build_data_dependent_scale, default_dataset, dict(_GAUSS),
            "A.5/gaussian-sum-sample-only", math.inf, "blackbox", 2_000,
            bug_class="data-dependent noise, sample only"),
        Bug("planted/svt-no-query-noise", "A.5",
            "SVT without noise on the queries (Lyu, Su & Li 2017, Alg. 5)",
            pb.build_svt("alg5"), pb.answers_data, dict(_PURE), "A.5/svt", math.inf,
            "blackbox", 2_000, bug_class="vector answers (SVT Alg. 5)"),
        Bug("planted/svt-no-cutoff", "A.5",
            "SVT answering every query with Lap(2 Delta/eps) query noise (Alg. 6)",
            pb.build_svt("alg6"), pb.answers_data, dict(_PURE), "A.5/svt",
            pb.SVT_NO_CUTOFF_EPSILON, "blackbox", 20_000,
            bug_class="vector answers (SVT Alg. 6)"),
        Bug("planted/noisy-max-half-scale", "A.5",
            "Report noisy max with Lap(Delta/eps) when every answer may move",
            pb.build_noisy_max(1.0, False), pb.answers_data, dict(_PURE), "A.5/noisy-max", 2.0,
            "blackbox", 20_000, bug_class="vector answers (noisy max, Lap(1/eps))"),
        Bug("planted/noisy-max-with-value", "A.5",
            "Report noisy max releasing the noisy max value too (loss in a rare tail)",
            pb.build_noisy_max(2.0, True), pb.answers_data, dict(_PURE), "A.5/noisy-max",
            pb.noisy_max_with_value_epsilon(1.0, k), "blackbox", 20_000,
            bug_class="vector answers, loss in a rare event"),
        Bug("planted/lengthscale-from-data", "A.5",
            "GP release, lengthscale chosen by marginal likelihood on the private targets "
            "(sample only, float-safe; its true eps is a lower bound)",
            pl.build_lengthscale_from_data, default_dataset, dict(_GAUSS),
            # a lower bound (targets up to 1 000; it grows as their scale squared)
            "A.5/gp-smoother-prior", pl.lengthscale_from_data_epsilon(default_dataset()),
            "greybox", 0,
            bug_class="a calibration read off the targets that flips off the user's data "
                      "(structure-boundary search)"),
        # no bug_class: a refused side cannot be sampled, so only A.9 sees it (not the
        # black-box auditor the blind-spot rows are held to)
        Bug("planted/refuses-constant", "A.5",
            "Gaussian sum refusing constant targets (ValueError on a legal dataset)",
            pb.build_refuses_constant, default_dataset, dict(_GAUSS),
            "A.5/gaussian-sum-sample-only", math.inf, "greybox", 0),
        Bug("planted/histogram-edge-double-count", "A.5",
            "Histogram counting a value on an interior bin edge in both bins",
            pb.build_histogram(True), default_dataset, dict(_GAUSS), "A.5/histogram",
            pb.histogram_edge_true_epsilon(), "whitebox", 0,
            bug_class="structural edge (bin boundary)", **hist),
    ]


def _pair_blindspots() -> list[Bug]:
    """Bugs only whole-dataset pairs expose (issue 20 §4): the bound, bases, the full swing,
    and a row substituted at the release's own point.
    """
    from dpgp_audit.bugs import pair_blindspots as pp
    from dpgp_audit.datasets.default import default_dataset

    group = pp.build_group_means(False)(default_dataset(), **_GAUSS)
    kernel = pp.build_kernel_sum(True)(default_dataset(), **_GAUSS)
    clipped = pp.build_clipped_mean(False)(pp.clipped_mean_data(), **_GAUSS)
    min_size = pp.build_min_size_mean("cohort")(default_dataset(), **_PURE)
    return [
        Bug("planted/laplace-max-scaled", "A.5",
            "Laplace sum, README claim |y| <= 1 and d = 2, noise scaled by the observed max |y|",
            pp.build_max_scaled("max"), default_dataset, dict(_PURE),
            "A.5/laplace-sum-declared-bound", math.inf, "blackbox", 2_000,
            bug_class="pairs moved to the declared bound (domain-aware outputs-only pairs)"),
        Bug("planted/group-means-balanced", "A.5",
            "Means of two x-groups, sensitivity of balanced groups 2b/(n/2) (whole rows)",
            pp.build_group_means(False), default_dataset, dict(_GAUSS),
            "A.5/group-means-nominal", pp.true_epsilon(group), "sensitivity", 0,
            bug_class="other rows at a group boundary (structural bases)"),
        Bug("planted/clipped-mean-half-swing", "A.5",
            "Mean clipped to [-1/2, 1/2] with the half-swing sensitivity b/n (whole rows)",
            pp.build_clipped_mean(False), pp.clipped_mean_data, dict(_GAUSS),
            "A.5/clipped-mean", pp.true_epsilon(clipped), "sensitivity", 0,
            bug_class="other rows cancelling, one row's full swing (full-swing bases)"),
        Bug("planted/kernel-sum-data-sensitivity", "A.5",
            "Kernel-weighted sum at a public point between the inputs, sensitivity taken over "
            "the data's own inputs (whole rows, sample only)",
            pp.build_kernel_sum(True), default_dataset, dict(_GAUSS),
            "A.5/kernel-sum-at-point", pp.kernel_sum_true_epsilon(kernel), "greybox", 0,
            bug_class="a row substituted at the release's own point (position search)"),
        Bug("planted/mean-min-size-cohort-scale", "A.5",
            f"Laplace mean refusing fewer than {pp.MIN_ROWS} rows, noise for the cohort size "
            "it was written for (whole rows, sample only)",
            pp.build_min_size_mean("cohort"), default_dataset, dict(_PURE),
            "A.5/mean-min-size", min_size.true_epsilon(), "blackbox", 2_000,
            bug_class="a refusal of small datasets (pairs at the smallest accepted size)"),
        Bug("planted/arm-gap-size-scale", "A.5",
            "difference of two x-groups' mean targets, Laplace scale read off the groups' "
            "private sizes (whole rows, sample only)",
            pp.build_arm_gap("sizes"), default_dataset, dict(_PURE),
            "A.5/arm-gap-nominal", math.inf, "greybox", 0,
            bug_class="a noise scale read off group sizes (the smallest input groups)"),
        Bug("planted/mmd-unordered-pairs", "A.5",
            "squared MMD of the inputs against a public reference sample, its within-sample "
            "term charged for unordered pairs (whole rows, sample only)",
            pp.build_reference_mmd("unordered"), default_dataset, dict(_PURE),
            "A.5/reference-mmd",
            pp.build_reference_mmd("unordered")(default_dataset(), **_PURE).true_epsilon(),
            "greybox", 0,
            bug_class="other rows far from the release's reference (corner-cluster moves)"),
    ]


def _iterative() -> list[Bug]:
    """An iterative release, each step read from the last (the thirteenth hunt)."""
    from dpgp_audit.bugs import iterative as it
    from dpgp_audit.datasets.default import default_dataset

    return [
        Bug("planted/descent-root-t-budget", "A.5",
            "noisy gradient descent releasing every iterate, eps/sqrt(T) per step under a "
            "pure claim (outputs only)",
            it.build_penalised_descent("root"), default_dataset, dict(_PURE),
            "A.5/noisy-descent",
            it.build_penalised_descent("root")(default_dataset(), **_PURE).true_epsilon(),
            "greybox", 0,
            bug_class="an iterative release, each step read from the last (path analysis)"),
    ]


def _postprocessing() -> list[Bug]:
    """Post-processing that reads the data (the fourth hunt): a clip to the true range."""
    from dpgp_audit.bugs import postprocessing as pq
    from dpgp_audit.datasets.default import default_dataset

    return [
        Bug("planted/clip-to-data-range", "A.5",
            "Noisy bin means clipped to the true targets' [min y, max y] (outputs only)",
            pq.build_clipped_bin_means("data"), default_dataset, dict(_GAUSS),
            "A.5/clip-to-public-bound", math.inf, "blackbox", 2_000,
            bug_class="post-processing that reads the data (a point mass at a data value)"),
    ]


#: The StatDP/DP-Sniper rows: (twin, fixed-mode n per side on the exposing pair, that
#: pair's label, ``make audit`` samples). n is measured by ``benchmarks/bench_statdp.py
#: fixed`` (the smallest n of a doubling scan from 1 000 flagging seeds 0, 1 and 2); the
#: default path confirms every generated pattern pair under the all-answers relation
#: (docs/benchmarks.md). SVT Alg. 4 gets a sequential cap of 2 000 000 (10 × 200 000);
#: SVT Alg. 3 is beyond any default cap: its thorough setting is this fixed n on its pair.
STATDP_ROWS: dict[str, tuple[str, int, str, int | None]] = {
    "noisy-max-value": ("A.5/noisy-max", 128_000, "all down", None),
    "noisy-max-exp-value": ("A.5/statdp-noisy-max-exp", 64_000, "all down", None),
    "histogram-eps": ("A.5/statdp-histogram", 1_000, "y[0] + d", None),
    "svt3": ("A.5/svt", 4_096_000, "all up", None),
    "svt4": ("A.5/svt", 1_024_000, "last up, rest down", 200_000),
    "svt5": ("A.5/svt", 1_000, "one up, rest down", None),
    "svt6": ("A.5/svt", 64_000, "half up, half down", None),
}


def _statdp() -> list[Bug]:
    """The field's own benchmark (issue 20 §5): StatDP's and DP-Sniper's incorrect algorithms."""
    from dpgp_audit.bugs import statdp as sd

    out = []
    for v in sd.incorrect_variants():
        twin, n, _, samples = STATDP_ROWS[v.name]
        assert v.true_epsilon is not None
        out.append(Bug(f"planted/statdp-{v.name}", "A.5",
                       f"StatDP/DP-Sniper benchmark: {v.paper}, eps0 = {sd.EPSILON_0:g}",
                       v.build, v.data, {"epsilon": sd.EPSILON_0}, twin,
                       float(v.true_epsilon), "blackbox", n, audit_samples=samples))
    return out


def _negative_controls() -> list[Bug]:
    """Kept last: the same auditor at the same n must NOT flag these."""
    from dpgp_audit.bugs import calibration as pl

    return [Bug("planted/exp-no-half-monotone", "A.5",
                "Negative control: no factor 2, but a monotone utility (still epsilon-DP)",
                pl.build_exponential("monotone", 1.0), pl.exp_default_data, dict(_PURE),
                "A.5/exp-mech", 1.0, "blackbox", 5_000)]
