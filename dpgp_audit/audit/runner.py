"""One call that audits a mechanism with every auditor it supports (catalogue A.1–A.9).

:func:`audit_mechanism` is validation, neighbour pairs, a loop over auditor **parts**
(:mod:`dpgp_audit.audit.parts`: one protocol, one registry) and the report:

1. **Pairs** (A.1): generated neighbour pairs; with a ``query`` also those where the
   query jumps (:func:`~dpgp_audit.audit.neighbours.query_edge_pairs`), for every part.
2. **A.7's screen**: the precision auditor's pilot, on samples of its own, decides
   whether that part will test anything (and so spend α).
3. **α split**: the family-wise level α is split evenly over the parts that spend it
   (model check, white-box — whose Monte Carlo route for unequal covariances is
   statistical —, black-box, GDP fit, and precision when its screen chose pairs), so the
   report's overall verdict has family-wise error at most α.
4. **The loop**, in the parts' order (:data:`AUDITORS`):

   * ``"greybox"`` (A.9) first, on every mechanism — M(D) and M(D′) on one seed through a
     recording generator (:mod:`~dpgp_audit.audit.greybox`): the exact μ or ε of pairs
     whose release is verified additive in its noise, leads otherwise (no α); its
     ranking of the pairs stands in for the black-box pilot;
   * ``"sensitivity"`` (A.4) if the mechanism implements ``SensitivityQuery`` — a
     deterministic search; its witness pair is put first for every later part;
   * ``"model-check"`` if it implements ``GaussianRelease`` — tests ``sample`` against
     its own ``mean``/``cov`` (:mod:`~dpgp_audit.audit.model_check`); a mismatch is a
     finding of its own and voids the white-box result;
   * ``"whitebox"`` (A.2) if it implements ``GaussianRelease`` — the exact privacy
     profile, worst case over every pair it is given (and only those: the report says so);
   * ``"blackbox"`` (A.3) always — an **exploratory** phase ranks the pairs cheaply
     (white-box μ, sensitivity ratio, and A.9's coupled scores or a pilot sample), then
     a **confirmatory** audit certifies the top pairs on fresh samples: by default one
     anytime-valid sequential betting audit over them (A.8, :data:`DEFAULT_MODE`), or
     with ``mode="fixed"`` a fixed-n split audit per pair, Bonferroni-corrected over the
     pairs confirmed;
   * ``"gdp-fit"`` (A.3, on request) — the μ lower bound on the top pair;
   * ``"precision"`` (A.7) — certifies the pairs its screen found rounding on.

   A part that needs an interface the mechanism lacks is skipped with the reason
   recorded; the report's witness is the first violation's.

Every part is budgeted in draws or other deterministic units (its
:class:`~dpgp_audit.audit.parts.Allowance`, derived from the one draw cap ``n``), never in
seconds: ``(mechanism, data, seed, settings)`` gives the same report on any machine,
quiet or busy (issue 20 §1). The one wall-clock limit is the **time guard**
(``time_guard_s``, :mod:`~dpgp_audit.audit.guard`): when it fires, the part it stops is
``INCONCLUSIVE``, the report's verdict is ``INCONCLUSIVE`` unless a violation was
certified, and the report says where the guard fired (``report.guard``).

The defaults — mode, draw cap, time guard (:mod:`~dpgp_audit.audit.defaults`) and the
parts (:mod:`~dpgp_audit.audit.parts`) — are re-exported here and shared with
``python -m dpgp_audit audit`` (cli.py) and ``dpgp_audit.testing.assert_private``, so
that the library, the CLI and a user's privacy test run one default path.

The :class:`~dpgp_audit.audit.result.AuditReport` is frozen; ``as_dict()`` is the
JSON report, ``table()`` the text verdict table, ``_repr_html_`` its notebook view and
``plot()`` the trade-off figure.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.audit.blackbox.executors import as_batching
from dpgp_audit.audit.defaults import (
    ANSWERS_PAIRS,
    DEFAULT_BUDGET_S,
    DEFAULT_MODE,
    DEFAULT_PAIRS,
    DEFAULT_TIME_GUARD_S,
    FIXED_DEFAULT_N,
    MODES,
    SEQUENTIAL_DEFAULT_N,
    SEQUENTIAL_HEADROOM,
    default_n,
)
from dpgp_audit.audit.guard import TimeGuard, check_guard_s
from dpgp_audit.audit.neighbours import (
    NeighbourPair,
    adversarial_rows,
    domain_labels,
    domain_x_bound,
    domain_y_bound,
    is_neighbour,
    label_pairs,
    neighbour_pairs,
    on_labels,
    query_edge_pairs,
    smallest_accepted_size,
    tiny_pairs,
    within_inputs,
)
from dpgp_audit.audit.parts import (
    AUDITORS,
    DEFAULT_AUDITORS,
    MODEL_CHECK_ALPHA_FRACTION,
    PARTS,
    AuditContext,
    AuditorPart,
    AuditSettings,
    AuditState,
)
from dpgp_audit.audit.result import AuditReport
from dpgp_audit.contract import (
    ContractError,
    Executor,
    GaussianRelease,
    Mechanism,
    SensitivityQuery,
    claim_problem,
    gaussian_release_problem,
    independent_releases,
    interface_problem,
    stateless_releases,
    unchanged_by_audit,
)
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.privacy.claims import Claim, Neighbour
from dpgp_audit.privacy.domain import domain_problem

# The default path's constants live in defaults.py and the parts' registry in parts.py;
# both are re-exported here, where the edges (cli.py, testing.py) import them.
__all__ = ["AUDITORS", "DEFAULT_AUDITORS", "DEFAULT_BUDGET_S", "DEFAULT_MODE",
           "DEFAULT_TIME_GUARD_S", "FIXED_DEFAULT_N", "MODEL_CHECK_ALPHA_FRACTION", "MODES",
           "PARTS", "SEQUENTIAL_DEFAULT_N", "SEQUENTIAL_HEADROOM", "audit_mechanism",
           "declared_cost", "default_n"]

#: Stream names the runner hands to more than one part; no part may take these names.
_SHARED_STREAMS = ("explore",)
_UNSET = object()
#: Parts that never call ``sample`` (the query and the stated model only): an audit of
#: these alone skips the independence probe of the rows (``contract.independent_releases``).
_MODEL_ONLY = frozenset({"sensitivity", "whitebox"})
#: The parts' streams the runner spawns by name (a caller's own part gets one after them).
_BUILT_IN_STREAMS = frozenset({"sensitivity", "model-check", "whitebox", "explore",
                               "blackbox", "gdp-fit", "precision", "greybox"})
#: What a report says when no pair the grey-box survey coupled changed the release: the
#: audit then compared one law with itself, whatever the mechanism does with real data.
UNREAD_NOTE = ("on every one of the {k} pairs surveyed, sample returned identical releases "
               "on D and D' under one seed: the release did not depend on the data it was "
               "handed, so no pair tested anything. If it should, check that sample reads its "
               "data argument (not a fit cached on the first call, or a global dataset)")
#: What a report says of a mechanism the grey-box survey found unseeded: ``sample`` gave two
#: different releases on two generators of one seed, so ``--seed`` cannot repeat its noise.
UNSEEDED_NOTE = ("randomness it is not handed: two calls of sample() on generators of one "
                 "seed gave different releases (np.random.*, the random module or a "
                 "library's own generator?)")


def declared_cost(mechanism: object, cost_per_draw_s: float | None = None) -> float | None:
    """The *declared* seconds per draw: the argument, else the mechanism's
    ``declared_cost_per_draw_s`` attribute (a constant its author writes), else ``None``.

    Only a declaration counts, never a measurement: a cost timed on this machine (such as
    an adapted library's measured ``cost_per_draw_s``, dpgp_audit.adapters) would make the
    draw cap, and so the verdict, depend on the machine's load (issue 20 §1). A
    ``ValueError`` names the parameter when the declaration is not a positive finite
    number.
    """
    cost = getattr(mechanism, "declared_cost_per_draw_s", None) if cost_per_draw_s is None \
        else cost_per_draw_s
    if cost is None:
        return None
    if isinstance(cost, bool) or not isinstance(cost, int | float) or \
            not (cost > 0 and math.isfinite(cost)):
        raise ValueError(f"cost_per_draw_s must be a positive finite number of seconds, "
                         f"got {cost!r}")
    return float(cost)


def _as_pair(p: object, i: int) -> object:
    """A caller's ``(D, D')`` tuple of two Datasets as a :class:`NeighbourPair` ("given
    pair i"); anything else as it is (:func:`_check_given_pairs` judges it).
    """
    if isinstance(p, tuple) and len(p) == 2 and all(isinstance(d, Dataset) for d in p):
        return NeighbourPair(p[0], p[1], f"given pair {i}")
    return p


def _check_given_pairs(pairs: Sequence[NeighbourPair], claim: Claim) -> None:
    """Refuse a caller's pair that the claim does not cover (``ValueError`` naming it)."""
    relation = claim.relation
    if not pairs:
        raise ValueError("pairs is empty: give at least one NeighbourPair, or leave pairs "
                         "out (None) for the generated ones; an audit of no pair finds "
                         "nothing")
    for p in pairs:
        if not isinstance(p, NeighbourPair):
            raise TypeError(f"pairs must hold NeighbourPair objects or (D, D') tuples of two "
                            f"Datasets, got {type(p).__name__}")
        label = p.label or "a given pair"
        if not is_neighbour(p.d0, p.d1, relation, atol=1e-9 * float(relation.d)):
            raise ValueError(f"pair {label!r} is not a neighbour pair under the claim's "
                             f"relation ({relation.describe()}): a violation on it would "
                             "not refute the claim")
        for side, d in (("D", p.d0), ("D'", p.d1)):
            _refuse_outside_domain(claim, d, f"pair {label!r}: its {side} lies")


def _refuse_outside_domain(claim: Claim, data: Dataset, what: str) -> None:
    """``ValueError`` ("{what} outside the claim's declared domain: …") for uncovered data."""
    problem = domain_problem(claim, data)
    if problem:
        raise ValueError(f"{what} outside the claim's declared domain: {problem}")


def _claim_dict(claim: Claim) -> dict:
    out = claim.as_dict() if hasattr(claim, "as_dict") else {"repr": repr(claim)}
    if hasattr(claim, "describe"):
        out["describe"] = claim.describe()
    return out


def _check_parts(parts: Sequence[AuditorPart]) -> tuple[AuditorPart, ...]:
    """The parts, checked: each implements :class:`AuditorPart`, names are unique."""
    parts = tuple(parts)
    seen: set[str] = set()
    for p in parts:
        if not isinstance(p, AuditorPart):
            raise TypeError(f"parts must implement AuditorPart (name, statistical, needs, "
                            f"allowance, run, spends_alpha, witness), got {p!r}")
        if not isinstance(p.name, str) or not p.name or p.name in _SHARED_STREAMS:
            raise ValueError(f"a part's name must be a non-empty string other than "
                             f"{_SHARED_STREAMS}, got {p.name!r}")
        if p.name in seen:
            raise ValueError(f"parts must have distinct names; {p.name!r} appears twice")
        seen.add(p.name)
    return parts


def _other_datasets(data: Dataset, pairs: Sequence[NeighbourPair]) -> list[Dataset]:
    """The distinct datasets of ``pairs`` other than ``data``.

    The state probe calls ``sample`` on each of them first (``contract.stateless_releases``).
    """
    seen: list[Dataset] = []
    for d in (d for p in pairs for d in (p.d0, p.d1)):
        if not any(np.array_equal(d.X, e.X) and np.array_equal(d.y, e.y)
                   for e in [data, *seen]):
            seen.append(d)
    return seen


def audit_mechanism(mechanism: Mechanism, data: Dataset, rng: np.random.Generator, *,
                    auditors: Sequence[str] = DEFAULT_AUDITORS,
                    n: int | None = None, alpha: float = 0.05, claim: Claim | None = None,
                    progress: bool = False,
                    pairs: Sequence[NeighbourPair | tuple[Dataset, Dataset]] | None = None,
                    n_pairs: int | None = None, budget: int = 300, score: str = "auto",
                    executor: Executor | None = None, fit_fraction: float | None = None,
                    y_bound: float | None = None, name: str | None = None,
                    seed: int | None = None, n_mc: int = 20_000, mode: str = DEFAULT_MODE,
                    time_guard_s: float | None = DEFAULT_TIME_GUARD_S,
                    blas_threads: int | None = 1,
                    parts: Sequence[AuditorPart] | None = None,
                    cost_per_draw_s: float | None = None,
                    clock: Callable[[], float] = time.perf_counter,
                    precision_support: bool = True,
                    evidence: bool = False,
                    budget_s: object = _UNSET) -> AuditReport:
    """Audit ``mechanism`` on ``data`` with every requested auditor it supports.

    With nothing but ``(mechanism, data, rng)`` this is the **default path**, the same
    as ``python -m dpgp_audit audit`` and :func:`dpgp_audit.testing.assert_private`:
    every default auditor, the black-box one in anytime-valid sequential mode (A.8)
    with at most :data:`SEQUENTIAL_DEFAULT_N` draws per side and pair, under a time guard
    of :data:`DEFAULT_TIME_GUARD_S` seconds. ``mode="fixed"`` is the fixed-n split
    auditor (A.3). The report is a function of the inputs and ``rng``'s seed: the same
    on any machine, quiet or busy, unless the guard fired (and then it says so).

    Parameters
    ----------
    mechanism
        Implements :class:`~dpgp_audit.contract.Mechanism` (``claim``, ``sample``);
        optionally ``GaussianRelease`` and ``SensitivityQuery``.
    data
        The dataset D (a :class:`~dpgp_audit.dataset.Dataset`).
    rng
        Generator; every phase gets its own spawned child, so the exploratory and
        confirmatory samples are independent.
    auditors
        Names of the parts to run: any of ``"greybox"``, ``"sensitivity"``,
        ``"model-check"``,
        ``"whitebox"``, ``"blackbox"``, ``"gdp-fit"``, ``"precision"`` (:data:`AUDITORS`),
        or of the ``parts`` given (default :data:`DEFAULT_AUDITORS`). They run in the
        order of the parts, whatever the order here.
    n
        Samples per side for each black-box (and GDP-fit) audit: exactly ``n`` in fixed
        mode, **at most** ``n`` per side and pair in sequential mode (a cap: the audit's
        budget, in draws). ``None`` (default): :func:`default_n` — 200 000 sequential,
        20 000 fixed — or, for a mechanism that declares its cost per draw
        (``declared_cost_per_draw_s``), the cap that
        :data:`~dpgp_audit.audit.defaults.PLANNED_AUDIT_S` seconds of certification buy at
        that cost (:func:`~dpgp_audit.audit.defaults.planned_cap`) and a tenth of it in
        fixed mode: the rule of ``make audit MECH=ID`` too. Every other part's allowance
        follows from ``n`` (:mod:`~dpgp_audit.audit.parts`).
    alpha
        Family-wise significance level, split evenly over the statistical auditors.
    claim
        Override the mechanism's claim (e.g. to test a smaller ε).
    progress
        Show a tqdm progress bar over the phases.
    pairs
        Candidate neighbour pairs, :class:`~dpgp_audit.audit.neighbours.NeighbourPair` objects
        or ``(D, D')`` tuples of two Datasets; default
        :func:`~dpgp_audit.audit.neighbours.neighbour_pairs`.
        Pairs given here must be neighbours under the claim's relation
        (:func:`~dpgp_audit.audit.neighbours.is_neighbour`, to 1e-9·d) with both datasets
        in its declared domain: any other pair is refused (``ValueError`` naming it), since
        a violation on it would not refute the claim.
    n_pairs
        How many top-ranked pairs the black-box auditor confirms (Bonferroni over them in
        fixed mode; their wealth averaged in sequential mode). ``None`` (default): 2, or
        in sequential mode under the all-answers relation every generated pattern pair
        (at most :data:`~dpgp_audit.audit.defaults.ANSWERS_PAIRS`): there a pilot cannot
        tell the patterns that expose an SVT or noisy-max bug from those that do not (their
        outputs differ as much either way), there are few of them, and averaged wealth
        costs no α split.
    budget
        Query budget of the sensitivity search.
    evidence
        Sequential mode only (a thorough setting, ``--evidence``): every generated pair
        beyond the ``n_pairs`` confirmed ones bets too, with a quarter of the wealth
        average; each draws a warm-up, then at most two at a time draw on while their
        wealth grows (:func:`~dpgp_audit.audit.blackbox.sequential.audit_sequential`'s
        ``evidence``). For releases whose exposing pair the pilot cannot rank
        (subsampling, randomised response, other mixtures); a few times the default's cost.
    score, executor, fit_fraction
        Passed to :func:`~dpgp_audit.audit.blackbox.audit_blackbox` (``fit_fraction=None``:
        the auditor's default, smaller when the exact likelihood-ratio score is known).
    y_bound
        Declared target bound for outputs-only pair generation (see ``neighbour_pairs``);
        default: the claim's (else the mechanism's) ``domain.y_bound``.
    name
        Name for the report (default: the class name).
    seed
        The seed ``rng`` was made from, if known: recorded in ``inputs`` for reproducibility.
    n_mc
        Monte Carlo draws per pair and order for white-box pairs with unequal covariances.
    mode
        ``"sequential"`` (default, :data:`DEFAULT_MODE`): the black-box auditor draws in
        rounds of doubling size, at most ``n`` per side and pair, and stops at the first
        certified violation (A.8, anytime-valid;
        :func:`~dpgp_audit.audit.blackbox.sequential.audit_sequential`). ``"fixed"``: it draws
        exactly ``n`` per side, split into fitting and certification samples, with
        Bonferroni over the confirmed pairs (A.3).
    time_guard_s
        The time guard, in seconds for the whole audit (default
        :data:`DEFAULT_TIME_GUARD_S`; ``None``: none). A guard, not a budget: no part
        scales its work by it; when it fires, the part it stops reports ``INCONCLUSIVE``
        with ``details["time_guard"]`` (where, after how many draws, how to rerun), parts
        not yet started are skipped with that note, and the report's verdict is
        ``INCONCLUSIVE`` unless a violation was certified (``report.guard``).
    blas_threads
        BLAS and OpenMP threads while auditing (threadpoolctl, every API it knows;
        ``None`` leaves them alone). One by default: audited mechanisms mostly factor
        tiny matrices, where a second BLAS thread only spins, and on a loaded 2-core
        machine it made one draw of S21.3 two-step cost 5-10x more
        (``benchmarks/bench_make_audit.py``); the same holds for the OpenMP threads of
        the classifier score's small gradient-boosted trees.
    parts
        The auditor parts to choose ``auditors`` from, in the order they run
        (:class:`~dpgp_audit.audit.parts.AuditorPart`; ``None``: the built-in
        :data:`PARTS`). To add an auditor of your own, pass ``(*PARTS, MyPart())`` and
        add its name to ``auditors``. A part not built in gets its own random stream,
        spawned after the built-in ones (their results are unchanged).
    cost_per_draw_s
        The mechanism's declared seconds per draw (default: its
        ``declared_cost_per_draw_s`` attribute, if any; :func:`declared_cost`). It plans
        the default cap (``n`` above) and lets the sequential auditor spread chunks of
        expensive draws; it is a declaration, never measured, so the report stays a
        function of the inputs.
    clock
        The time guard's seconds counter (injectable for tests).
    budget_s
        Former name of ``time_guard_s`` (it was a seconds budget; it is the guard now).
    precision_support
        Let the precision auditor (A.7) also test float supports at ordinary inputs
        (:func:`~dpgp_audit.audit.precision.screen_precision` ``support=True``). On by
        default (issue 20 §4): every continuous release of the kit is rounded to a public
        grid (:mod:`dpgp_audit.privacy.float_release`) and passes it; a textbook float
        sampler fails it. ``False`` skips it.

    Returns
    -------
    AuditReport
    """
    if blas_threads is not None:
        from threadpoolctl import threadpool_limits

        blas_threads = check_positive_int("blas_threads", blas_threads)
        with threadpool_limits(limits=blas_threads):  # BLAS and OpenMP
            return audit_mechanism(
                mechanism, data, rng, auditors=auditors, n=n, alpha=alpha, claim=claim,
                progress=progress, pairs=pairs, n_pairs=n_pairs, budget=budget, score=score,
                executor=executor, fit_fraction=fit_fraction, y_bound=y_bound, name=name,
                seed=seed, n_mc=n_mc, mode=mode, time_guard_s=time_guard_s,
                blas_threads=None, parts=parts, cost_per_draw_s=cost_per_draw_s,
                clock=clock, precision_support=precision_support, evidence=evidence,
                budget_s=budget_s)
    if budget_s is not _UNSET:  # the former name of the guard
        time_guard_s = check_guard_s("budget_s", budget_s)
    guard = TimeGuard(check_guard_s("time_guard_s", time_guard_s), clock=clock)
    t_all = time.perf_counter()
    rng = check_rng(rng)
    executor = as_batching(executor)  # one cost-per-draw estimate for every pair and phase
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    cost = declared_cost(mechanism, cost_per_draw_s)
    if n is None:
        n = default_n(mode, cost)
    else:
        n = check_positive_int("n", n)
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    available = _check_parts(PARTS if parts is None else parts)
    names = tuple(p.name for p in available)
    auditors = (auditors,) if isinstance(auditors, str) else tuple(auditors)
    unknown = [a for a in auditors if a not in names]
    if unknown:
        raise ValueError(f"unknown auditor(s) {unknown}; choose from {names}")
    if isinstance(mechanism, type):  # the class itself, a notebook's missing "()"
        raise TypeError(f"mechanism is the class {mechanism.__name__}, not an instance of it: "
                        f"audit {mechanism.__name__}(...), e.g. audit_mechanism("
                        f"{mechanism.__name__}(), data, rng)")
    if not hasattr(mechanism, "sample"):
        raise TypeError("mechanism must implement sample(data, n, rng) (the Mechanism protocol)")
    problem = interface_problem(mechanism)  # e.g. a field named mean beside one named cov
    if problem:
        raise ContractError(problem)
    claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
    problem = claim_problem(claim)
    if problem:
        raise TypeError(problem)
    relation = claim.relation
    data = check_dataset(data)
    _refuse_outside_domain(claim, data, "the data lie")  # the claim covers none of it
    if isinstance(mechanism, GaussianRelease):
        problem = gaussian_release_problem(mechanism, data)
        if problem:
            raise ContractError(problem)
    if y_bound is None:  # pairs stay in the declared domain, moved to its bound (issue 20 §4)
        y_bound = domain_y_bound(claim, mechanism)
    labels = domain_labels(claim, mechanism)  # declared class labels: pairs stay on them
    x_bound = domain_x_bound(claim, mechanism)  # substituted inputs stay inside it
    # the streams' spawning order is fixed: a seed gives the same report bit for bit
    rng_pairs, rng_sens, rng_wb, rng_explore, rng_bb, rng_gdp, rng_mc = rng.spawn(7)
    timings: dict = {}
    skipped: dict = {}
    name = name or type(mechanism).__name__

    t = time.perf_counter()
    if pairs is not None:  # the caller's own pairs: a verdict on a non-neighbour is no verdict
        pairs = [_as_pair(p, i) for i, p in enumerate(pairs)]
        _check_given_pairs(pairs, claim)
    if pairs is None:
        # the declared box's corners where a model ranks them (a sample-only release's
        # pilot would rank their large but legal moves above a smaller exposing one; the
        # grey-box position search moves a row between the corners for those instead)
        ranked_by_model = isinstance(mechanism, (GaussianRelease, SensitivityQuery))
        pairs = neighbour_pairs(data, relation, rng_pairs, y_bound=y_bound,
                                x_bound=x_bound if ranked_by_model else None)
        if isinstance(mechanism, SensitivityQuery) and relation.kind is not Neighbour.ANSWERS:
            # where the query jumps (bin/fold edges, ties): handed to every auditor
            rows = adversarial_rows(data, 2, rng_pairs)
            pairs = list(pairs) + query_edge_pairs(mechanism, data, relation, rows,
                                                   y_bound=y_bound)
        if relation.kind is Neighbour.ROWS:  # two rows refused: the smallest size released
            # (its draws from a child of the pairs' stream, after every other use of it)
            m = smallest_accepted_size(mechanism, data, rng_pairs.spawn(1)[0])
            if m is not None:
                pairs = list(pairs) + tiny_pairs(data, relation, m)
        if x_bound is not None:  # far and random inputs clipped into the declared bound
            pairs = within_inputs(pairs, x_bound)
        if labels is not None:  # on the declared labels only, with every row's label moves
            # (their far inputs clipped into the declared bound too, like every other pair)
            pairs = on_labels(list(pairs) + within_inputs(label_pairs(data, relation, labels),
                                                          x_bound), relation, labels)
            if not pairs:  # e.g. one label under outputs only: no two datasets differ
                raise ValueError(f"no neighbouring pair lies in the claim's declared domain "
                                 f"({claim.domain.describe()}) under its relation "  # type: ignore[attr-defined]
                                 f"({relation.describe()}): there is nothing to audit")
    pairs = list(pairs)
    timings["neighbours"] = time.perf_counter() - t

    if n_pairs is None:  # sequential mode averages the pairs' wealth: no α split over them
        n_pairs = min(len(pairs), ANSWERS_PAIRS) if relation.kind is Neighbour.ANSWERS \
            and mode == "sequential" else DEFAULT_PAIRS
    n_pairs = check_positive_int("n_pairs", n_pairs)
    if evidence and mode != "sequential":
        raise ValueError("evidence=True needs mode='sequential' (it bets every pair's wealth; "
                         "the fixed mode splits alpha over the confirmed pairs instead)")
    settings = AuditSettings(n=n, alpha=alpha, mode=mode, n_pairs=n_pairs, budget=budget,
                             n_mc=n_mc, score=score, fit_fraction=fit_fraction,
                             y_bound=y_bound, time_guard_s=guard.limit_s, cost_per_draw_s=cost,
                             precision_support=bool(precision_support), labels=labels,
                             x_bound=x_bound, evidence=bool(evidence))
    steps = [p for p in available if p.name in auditors]
    (rng_prec,) = rng.spawn(1)  # spawned after the others: their streams are unchanged
    (rng_grey,) = rng.spawn(1)  # A.9's seeds (issue 21 §3), likewise spawned after
    others = [p.name for p in steps if p.name not in _BUILT_IN_STREAMS]
    # spawned before the screen runs, in the order they always had: their streams are unchanged
    rngs_others = dict(zip(others, rng.spawn(len(others)), strict=True)) if others else {}
    # the rows every sampling part counts are probed once, before the first such part runs
    rng_rows = rng.spawn(1)[0] if any(p.name not in _MODEL_ONLY for p in steps) else None
    probe = None
    if rng_rows is not None:  # state kept between calls, before any other call of sample
        # its generators come from the rows probe's stream, so the caller's generator spawns
        # no more children than before: audits that share one generator keep their streams
        probe = stateless_releases(mechanism, data, _other_datasets(data, pairs[:2]),
                                   rng_rows, stop=guard)
    screen = None
    if "precision" in auditors:  # A.7's pilot decides (on its own samples) whether it tests
        from dpgp_audit.audit.precision import (
            CERTIFY_PAIRS,
            screen_precision,
            support_skip_reason,
        )

        t = time.perf_counter()
        rng_prec, rng_screen = rng_prec.spawn(2)
        prec_part = next(p for p in steps if p.name == "precision")
        if hasattr(prec_part, "screen_pilots"):  # the built-in part
            pilot, support_pilot = prec_part.screen_pilots(settings)
        else:  # a caller's own part named "precision": its pilot for every pair
            pilot, support_pilot = prec_part.allowance(settings).pilot_draws, 0
        screen = screen_precision(mechanism, data, rng_screen, claim=claim, pairs=pairs[:4],
                                  pilot=pilot, n_pairs=CERTIFY_PAIRS,
                                  support=bool(precision_support and support_pilot),
                                  guard=guard, support_pilot=support_pilot or None)
        if precision_support and not support_pilot:  # too few draws: the report says so
            screen.details["support_skipped"] = support_skip_reason(
                prec_part.allowance(settings).draws)
        timings["precision-screen"] = time.perf_counter() - t
    rngs = {"sensitivity": rng_sens, "model-check": rng_mc, "whitebox": rng_wb,
            "explore": rng_explore, "blackbox": rng_bb, "gdp-fit": rng_gdp,
            "precision": rng_prec, "greybox": rng_grey, **rngs_others}
    state = AuditState(pairs=pairs)
    ctx = AuditContext(mechanism=mechanism, data=data, claim=claim, settings=settings,
                       rngs=rngs, executor=executor, alpha_share=alpha,
                       started=float(guard.started), state=state, screen=screen,  # type: ignore
                       guard=guard)
    by_name = {p.name: p for p in steps}
    n_stat = sum(1 for a in auditors if by_name[a].spends_alpha(ctx))
    ctx = dataclasses.replace(ctx, alpha_share=alpha / max(1, n_stat))

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(steps), desc=f"audit {name}", leave=False)
    try:  # the bar is closed before an error travels on, so its message stands alone
        for part in steps:  # the loop: every requested part, in the parts' order
            t = time.perf_counter()
            if bar is not None:
                bar.set_postfix_str(part.name)
            res = part.needs(mechanism, relation)
            if res is None and rng_rows is not None and part.name not in _MODEL_ONLY \
                    and not guard.expired():
                independent_releases(mechanism, data, rng_rows, stop=guard)
                rng_rows = None  # once per audit
            if res is None and guard.expired():  # a part that has not started is not run
                res = guard.record(part.name, "the audit, before this part started")["message"]
            elif res is None:
                res = part.run(ctx)
            if isinstance(res, str):
                skipped[part.name] = res
            else:
                if res.auditor != part.name:  # the report names each result after its part
                    res = dataclasses.replace(res, auditor=part.name)
                if "allowance" not in res.details:  # what it was allowed, beside what it used
                    res.details["allowance"] = part.allowance(settings).as_dict()
                state.results[part.name] = res
                if res.violation and state.witness is None:
                    witness = part.witness(res, ctx)
                    if witness is not None:
                        state.witness, state.witness_source = witness, part.name
            timings[part.name] = time.perf_counter() - t
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    if probe is not None:  # the auditors' calls left the release as it was
        unchanged_by_audit(mechanism, data, probe)
    timings["total"] = time.perf_counter() - t_all
    inputs = {"n_per_side": n, "alpha": alpha, "alpha_per_statistical_auditor": ctx.alpha_share,
              "auditors": list(auditors), "pairs_generated": len(pairs),
              "n_pairs_confirmed": n_pairs, "sensitivity_budget": budget, "n_mc": n_mc,
              "dataset": {"n": int(data.n), "dim": int(data.dim),  # type: ignore[attr-defined]
                          "name": getattr(data, "name", "")},
              "relation": relation.describe(), "seed": seed,
              "witness_source": state.witness_source, "mode": mode,
              "time_guard_s": guard.limit_s, "cost_per_draw_s": cost,
              "allowances": {p.name: p.allowance(settings).as_dict() for p in steps}}
    if settings.evidence:  # the thorough setting, recorded where it was used (A.8)
        inputs["evidence"] = True
    if probe is not None and probe.skipped:  # said only when the state probe did not run
        inputs["state_probe_skipped"] = probe.skipped
    if getattr(mechanism, "reproducible", True) is False:  # an unseedable sampler (A.10)
        inputs.update(reproducible=False,
                      reproducibility=str(getattr(mechanism, "reproducibility", "")))
    elif "greybox" in state.results and \
            state.results["greybox"].details.get("reproducible") is False:
        inputs.update(reproducible=False, reproducibility=UNSEEDED_NOTE)
    if "greybox" in state.results and \
            state.results["greybox"].details.get("data_read") is False:
        inputs.update(data_read=False, data_note=UNREAD_NOTE.format(
            k=state.results["greybox"].details.get("pairs", 0)))
    return AuditReport(mechanism=name, claim=_claim_dict(claim), inputs=inputs,
                       results=tuple(state.results.values()), skipped=skipped,
                       witness=state.witness, timings=timings,
                       guard={"time_guard_s": guard.limit_s, "fired": list(guard.fired)})
