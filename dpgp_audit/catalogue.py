"""The catalogue: every auditable mechanism of the kit, keyed by catalogue ID.

This module is an *edge* (like :mod:`dpgp_audit.cli`): it imports the mechanism
modules and holds the one table that maps a catalogue ID (``../shared/CATALOGUE.md``)
to its build function, default data, default arguments and, for planted bugs (A.5),
the true ε and the correct twin. Nothing below the edge imports it; the CLI, the
experiments, the notebooks and the test suite enumerate mechanisms here.

The table is built on the first call to :func:`entries` or :func:`get`, so that
``import dpgp_audit.catalogue`` stays cheap. Planted-bug mechanisms (catalogue A.5)
have IDs starting ``planted/`` and are excluded unless asked for.

The draw-cap rule of ``make audit`` (issue 20 §1, §3)
-----------------------------------------------------
``make audit`` budgets every entry in draws, never seconds, so that its verdicts are
the same on any machine. A slow mechanism declares its cost where it is written, as the
class attribute ``declared_cost_per_draw_s`` (one of
:data:`~dpgp_audit.contract.COST_CLASSES`: ``"loop"`` or ``"solve"`` for a loop or an
optimisation per draw); one that declares nothing is planned as ``"vectorised"``.
:meth:`Entry.draw_cap` turns that declaration into draws per side and pair:

* one mechanism (``make audit MECH=ID``): the library's own default,
  :func:`~dpgp_audit.audit.defaults.default_n` — 200 000 for every vectorised entry,
  what :data:`~dpgp_audit.audit.defaults.PLANNED_AUDIT_S` seconds of certification buy
  at a declared cost — unless the entry sets ``audit_samples`` (its fixed-mode n, for a
  bug whose evidence lies in a far tail), which gives ten times that (the sequential
  headroom);
* every mechanism (``make audit``, ``--all``): the smaller of that and what
  :data:`~dpgp_audit.audit.defaults.ALL_AUDIT_S` seconds buy, so that the whole run
  stays under a minute on 2 cores.

Every other part's allowance (pilot, precision screen, model check) follows from the
cap (:mod:`~dpgp_audit.audit.parts`). The nominal costs are the upper ends of what the
classes measured; ``benchmarks/bench_make_audit.py --costs`` re-measures every entry
and flags one slower than its declaration.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from dpgp_audit.contract import Mechanism
from dpgp_audit.dataset import Dataset

__all__ = ["Entry", "entries", "get"]


@dataclass(frozen=True)
class Entry:
    """One catalogued mechanism.

    Attributes
    ----------
    id
        Catalogue ID, e.g. ``"P.1/gaussian-sum"`` or ``"planted/std-as-variance"``.
    paper
        Short name of the source (``"P"`` for the toolbox, ``"S18"``, ``"H"``, …).
    title
        One line for listings.
    build
        ``build(data, epsilon=…, delta=…) -> Mechanism``: the mechanism for the
        public parts of ``data`` (e.g. its inputs under the outputs-only relation).
    default_data
        A small dataset needing no network, for ``make audit`` and quick tests.
    defaults
        Default keyword arguments for ``build`` (e.g. ``{"epsilon": 1.0, "delta": 1e-5}``).
    true_epsilon
        For planted bugs: the mechanism's true ε at the default δ (``inf`` for
        unbounded loss), for tests and the auditing lab.
    twin
        For planted bugs: the ID of the correct mechanism it breaks.
    audit_samples
        Fixed-mode black-box samples per side for ``make audit --mode fixed`` (``None``:
        the library default for the mechanism's declared cost); in sequential mode ten
        times that is the entry's cap (the draw-cap rule, module docstring). Set for bugs
        whose evidence needs more draws than the default cap (a loss in a far Gaussian
        tail). A slow mechanism declares its cost instead (``declared_cost_per_draw_s``).
    inputs
        The number of input columns ``build`` can take (``None``: any). ``1`` for factories
        that place their public test or inducing inputs on a 1-D grid: :meth:`make` refuses
        other data with one message saying so (A.10: a user's ``--data``), never an error
        from the kernel algebra.
    """

    id: str
    paper: str
    title: str
    build: Callable[..., Mechanism]
    default_data: Callable[[], Dataset]
    defaults: dict = field(default_factory=dict)
    true_epsilon: float | None = None
    twin: str | None = None
    audit_samples: int | None = None
    inputs: int | None = None

    @property
    def planted(self) -> bool:
        """True for deliberately broken mechanisms (A.5)."""
        return self.id.startswith("planted/")

    def draw_cap(self, mode: str = "sequential", *, every: bool = False,
                 cost: float | None = None) -> int:
        """Draws per side (and pair, in sequential mode) for ``make audit``: the rule above.

        Parameters
        ----------
        mode
            ``"sequential"`` (a cap per side and pair) or ``"fixed"`` (exactly this many).
        every
            ``True`` for ``make audit`` over every entry (``--all``), ``False`` for one.
        cost
            The built mechanism's declared seconds per draw
            (:func:`~dpgp_audit.audit.runner.declared_cost`); ``None``: vectorised.
        """
        from dpgp_audit.audit.defaults import (
            ALL_AUDIT_S,
            SEQUENTIAL_HEADROOM,
            default_n,
            nominal_cost,
            planned_cap,
        )

        if self.audit_samples is not None:
            default_n(mode)  # validates the mode
            one, fixed = self.audit_samples * SEQUENTIAL_HEADROOM, self.audit_samples
        else:
            one, fixed = default_n("sequential", cost), default_n(mode, cost)
        if not every:
            return int(one if mode == "sequential" else fixed)
        cap = min(one, planned_cap(nominal_cost(cost), ALL_AUDIT_S, cap=one))
        return int(cap if mode == "sequential" else min(fixed, cap))

    def make(self, data: Dataset | None = None, **overrides: object) -> tuple[Mechanism, Dataset]:
        """Build the mechanism on ``data`` (default: ``default_data()``) with overrides."""
        data = self.default_data() if data is None else data
        self.check_inputs(data)
        kwargs = {**self.defaults, **{k: v for k, v in overrides.items() if v is not None}}
        return self.build(data, **kwargs), data

    def check_inputs(self, data: Dataset) -> None:
        """Refuse data whose number of input columns the factory cannot take (``inputs``)."""
        if self.inputs is not None and data.dim != self.inputs:
            raise ValueError(
                f"{self.id}'s catalogue factory places its public test or inducing inputs on "
                f"a {self.inputs}-D grid, so it takes data with {self.inputs} input "
                f"column{'s' if self.inputs != 1 else ''}; the data has {data.dim}. Choose "
                "the column with --x COL, or build the mechanism in Python with public "
                f"inputs of {data.dim} columns")


# --------------------------------------------------------------------------- the table
def _toolbox() -> list[Entry]:
    from dpgp_audit.datasets.default import default_dataset
    from dpgp_audit.methods.toolbox import primitives as p
    from dpgp_audit.methods.toolbox import secure

    return [
        Entry("P.1/gaussian-sum", "P", "Analytic Gaussian mechanism on the sum of targets",
              p._build_gaussian_sum, default_dataset, {"epsilon": 1.0, "delta": 1e-5, "d": 1.0}),
        Entry("P.2/laplace-sum", "P", "Laplace mechanism on the sum of targets (pure epsilon, L1)",
              p._build_laplace_sum, default_dataset, {"epsilon": 1.0, "d": 1.0}),
        Entry("P.2/laplace-sum-rows", "P",
              "Laplace mechanism on the sum of targets, whole-row neighbours (|y| <= 1)",
              p._build_laplace_sum, default_dataset,
              {"epsilon": 1.0, "y_bound": 1.0, "relation": "rows"}),
        # secure noise (issue 10): exact samplers, slower (each declares its cost)
        Entry("P.1/gaussian-sum-secure", "P",
              "Discrete Gaussian (CKS 2020) on a grid, exact sampler, on the sum of targets",
              secure._build_discrete_gaussian_sum, default_dataset,
              {"epsilon": 1.0, "delta": 1e-5, "d": 1.0}),
        Entry("P.2/laplace-sum-secure", "P",
              "Snapping mechanism (Mironov 2012) on the sum of targets (pure epsilon)",
              secure._build_snapping_sum, default_dataset, {"epsilon": 1.0, "d": 1.0}),
        Entry("P.4/multivariate-gaussian-secure", "P",
              "Independent exact discrete Gaussians on a grid, GP mean weights C y (rho-zCDP)",
              secure._build_discrete_gaussian_linear, default_dataset,
              {"epsilon": 1.0, "delta": 1e-5, "d": 1.0}),
        Entry("P.2/exponential", "P",
              "Exponential mechanism choosing a threshold near the median of the targets",
              p._build_exponential, default_dataset, {"epsilon": 1.0, "d": 1.0}),
        Entry("P.4/multivariate-gaussian", "P",
              "Multivariate Gaussian mechanism on GP mean weights C y, noise N(0, sigma^2 C C^T)",
              p._build_multivariate, default_dataset, {"epsilon": 1.0, "delta": 1e-5, "d": 1.0}),
        Entry("P.5/functional", "P",
              "Functional mechanism: GP posterior mean at grid points + GP path noise (GDP)",
              p._build_functional, default_dataset, {"epsilon": 1.0, "delta": 1e-5, "d": 1.0}),
    ]


def _s18() -> list[Entry]:
    from dpgp_audit.datasets.default import default_dataset
    from dpgp_audit.methods.s18 import binning, cloaking, hyperparameter_selection, standard

    s18 = {"epsilon": 1.0, "delta": 0.01, "d": 1.0}
    out = [
        Entry("S18.1/standard", "S18",
              "Standard DP-GP: functional mechanism on the posterior mean, d*b(K^-1) (S18 §2)",
              standard._build_standard, default_dataset, dict(s18), inputs=1),
        Entry("S18.1/standard-rkhs", "S18",
              "Standard DP-GP with the exact RKHS sensitivity, GDP calibration",
              standard._build_standard, default_dataset,
              {**s18, "sensitivity": "rkhs", "method": "gdp"}, inputs=1),
        Entry("S18.2/cloaking", "S18",
              "Cloaking: posterior mean + N(0, M), M = sum lambda_i c_i c_i^T (S18 §3)",
              cloaking._build_cloaking, default_dataset, dict(s18), inputs=1),
        Entry("S18.2/cloaking-analytic", "S18",
              "Cloaking with the analytic Gaussian calibration (any epsilon)",
              cloaking._build_cloaking, default_dataset, {**s18, "method": "analytic"},
              inputs=1),
        Entry("S18.3/binning-laplace", "S18", "DP bin means, Laplace noise d/(n_b eps) (S18 §4)",
              binning._build_laplace, default_dataset, {"epsilon": 1.0, "d": 1.0}),
        Entry("S18.3/binning-gaussian", "S18", "DP bin means, Gaussian noise calibrated to d/n_b",
              binning._build_gaussian, default_dataset,
              {"epsilon": 1.0, "delta": 1e-5, "d": 1.0}),
        Entry("S18.4/selection", "S18",
              "Exponential-mechanism hyperparameter selection on -SSE of K-fold CV "
              "(valid clipped-SSE sensitivity)",
              hyperparameter_selection._build_selection,
              hyperparameter_selection.default_selection_data, {"epsilon": 1.0, "d": 1.0}),
    ]
    return out


def _s21() -> list[Entry]:
    from dpgp_audit.methods.s21 import mechanisms as m
    from dpgp_audit.methods.s21 import private_selection as sel

    common = {"epsilon": 1.0, "delta": 0.01}
    return [
        Entry("S21.1/nonstationary-cloaking", "S21",
              "Cloaking with a Gibbs kernel, lengthscale from the KDE of public X (S21 §3.1)",
              m._build_nonstationary, m.default_regression_data, {**common, "d": 1.0},
              inputs=1),
        Entry("S21.2/sparse-cloaking", "S21",
              "Cloaking the FITC mean, inducing inputs by k-means on X (S21 eq. 9)",
              m._build_sparse, m.default_regression_data,
              {**common, "d": 1.0, "inducing_seed": 0}, inputs=1),
        Entry("S21.3/laplace-classification", "S21",
              "DP GP classification: one cloaked Laplace Newton step, d = 2 (S21 §4)",
              m._build_laplace, m.default_classification_data, dict(common)),
        # step 2 re-solves the cloaking problem per draw (it declares its cost)
        Entry("S21.3/laplace-classification-two-step", "S21",
              "DP GP classification: two cloaked Newton steps, budget split (S21 §6.5)",
              m._build_two_step, m._small_classification_data, dict(common)),
        Entry("S21.4/sor-classification", "S21",
              "DP sparse GP classification, Subset of Regressors, k-means inducing (S21 §4.1)",
              m._build_sor, m.default_classification_data, {**common, "inducing_seed": 0}),
        Entry("S21.5/selection", "S21",
              "Hyperparameter selection: exponential mechanism on clipped CV SSE (S21 Alg. 1)",
              sel._build_selection, sel.default_selection_data, {"epsilon": 1.0, "d": 1.0}),
    ]


def _honkela() -> list[Entry]:
    from dpgp_audit.datasets.default import default_dataset
    from dpgp_audit.methods.honkela import dpsvgp, heteroscedastic, hyperparameters
    from dpgp_audit.privacy import coinpress

    return [
        Entry("H.1/dp-svgp-stats", "H",
              "DP-SVGP statistics [K_ZX y; upper(K_ZX K_XZ)], analytic Gaussian, whole rows",
              dpsvgp._build_dpsvgp, default_dataset,
              {"epsilon": 1.0, "delta": 1e-5, "y_bound": 1.0, "n_inducing": 5,
               "lengthscale": 2.0}, inputs=1),
        Entry("H.3/coinpress", "H",
              "CoinPress mean of clipped targets (12 steps), rho-zCDP from (eps, delta)",
              coinpress._build_coinpress, default_dataset,
              {"epsilon": 1.0, "delta": 1e-5, "centre": 0.0, "radius": 1.0}),
        Entry("H.4/hyperparameter-search", "H",
              "DP hyperparameter search (Alg. 2): Liu-Talwar random stopping over 4 candidates, "
              "released index",
              hyperparameters._build_search, hyperparameters.default_search_dataset,
              {"epsilon": 1.0, "delta": 1e-5, "gamma": 0.5, "n_valid": 5}, inputs=1),
        Entry("H.5/heteroscedastic-stats", "H",
              "Heteroscedastic DP-SVGP statistics (App. D, sensitivity / min noise), whole rows",
              heteroscedastic._build_hetero, default_dataset,
              {"epsilon": 1.0, "delta": 1e-5, "y_bound": 1.0, "n_inducing": 5,
               "lengthscale": 2.0, "base_noise": 0.1, "noise_slope": 0.2}, inputs=1),
        Entry("H.5/dirichlet-classifier", "H",
              "DP Dirichlet GP classification: C class statistics, sqrt(C) sensitivity, "
              "whole rows",
              heteroscedastic._build_dirichlet, heteroscedastic.default_label_dataset,
              {"epsilon": 1.0, "delta": 1e-5, "n_classes": 3, "n_inducing": 5,
               "lengthscale": 2.0}, inputs=1),
    ]


def _raisa() -> list[Entry]:
    from dpgp_audit.datasets.default import default_dataset
    from dpgp_audit.methods.raisa import dpsetconv, dpsgd_svgp

    # R.4 (the DPConvCNP, optional torch extra) has no catalogue entry.
    return [
        Entry("R.2/dpsetconv", "R",
              "DPSetConv: clipped SetConv + GP functional-mechanism noise on a grid (mu-GDP)",
              dpsetconv._build_dpsetconv, default_dataset,
              {"epsilon": 1.0, "delta": 1e-3, "clip_bound": 1.0, "t": 0.5, "lengthscale": 1.0}),
        Entry("R.5/dpsgd-svgp", "R",
              "DP-SGD SVGP (tiny: 5 steps, batches of 10), released variational parameters; "
              "claim from dp-accounting's RDP accountant",
              dpsgd_svgp._build_dpsgd_svgp, default_dataset,
              {"epsilon": 1.0, "delta": 1e-5, "y_bound": 1.0, "n_inducing": 4, "steps": 5,
               "batch_size": 10},
              inputs=1),
    ]


def _zoo() -> list[Entry]:
    """The bug zoo (A.5): every planted bug and the correct twins kept for it."""
    from dpgp_audit.bugs import zoo

    out = [Entry(c.id, "A.5", c.title, c.build, c.default_data, dict(c.defaults),
                 audit_samples=c.audit_samples, inputs=c.inputs) for c in zoo.controls()]
    return out + [Entry(b.id, b.paper, b.title, b.build, b.default_data, dict(b.defaults),
                        true_epsilon=b.true_epsilon, twin=b.twin, audit_samples=b.audit_samples)
                  for b in zoo.planted()]


def _inherit_inputs(table: dict[str, Entry]) -> None:
    """A planted bug takes the input columns its twin takes: it breaks the twin's factory."""
    for bug in [e for e in table.values() if e.planted and e.twin in table]:
        table[bug.id] = dataclasses.replace(bug, inputs=table[bug.twin].inputs)


@functools.cache
def _table() -> dict[str, Entry]:
    """ID → entry for the whole catalogue (built once, on first use)."""
    table: dict[str, Entry] = {}
    for part in (_toolbox, _s18, _s21, _honkela, _raisa, _zoo):
        for entry in part():
            if entry.id in table:
                raise ValueError(f"mechanism ID {entry.id!r} is catalogued twice")
            table[entry.id] = entry
    _inherit_inputs(table)
    return table


def entries(*, include_planted: bool = False, paper: str | None = None) -> list[Entry]:
    """Every catalogued entry, sorted by ID (planted bugs only if ``include_planted``)."""
    out = [e for e in _table().values() if include_planted or not e.planted]
    if paper is not None:
        out = [e for e in out if e.paper == paper]
    return sorted(out, key=lambda e: e.id)


def get(mechanism_id: str) -> Entry:
    """The entry catalogued under ``mechanism_id``; ``KeyError`` lists the known IDs."""
    table = _table()
    try:
        return table[mechanism_id]
    except KeyError:
        known = ", ".join(sorted(table))
        raise KeyError(f"unknown mechanism {mechanism_id!r}; known: {known}") from None
