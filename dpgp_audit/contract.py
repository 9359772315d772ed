"""The mechanism contract that ties the kit together (catalogue A.1–A.6).

Anything that touches private data and releases something implements
:class:`Mechanism`: a privacy claim and a vectorised ``sample``. Two optional
interfaces unlock stronger audits:

* :class:`GaussianRelease` — the output given a dataset is N(mean, cov); the
  white-box auditor (A.2) then computes the exact privacy profile of a pair.
* :class:`SensitivityQuery` — the noise-free query, the norm its proof bounds
  and the bound itself; the sensitivity checker (A.4) searches for a violation.

The auditors depend only on these protocols and on ``privacy/``, never on the
GP models or the papers' methods, so a user's own mechanism is audited exactly
like the kit's.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from dpgp_audit.dataset import Dataset
from dpgp_audit.norms import Norm

if TYPE_CHECKING:  # annotations only: the contract does not depend on privacy/ at run time
    from dpgp_audit.privacy.claims import Claim

__all__ = ["COST_CLASSES", "ContractError", "DiscreteRelease", "Executor", "Future",
           "GaussianRelease", "Mechanism", "SensitivityQuery", "checked_sample", "claim_problem",
           "gaussian_release_problem",
           "independent_releases", "inside_span_p", "interface_problem",
           "same_release_shape", "stateless_releases", "unchanged_by_audit",
           "within_group_repeats_p"]


@runtime_checkable
class Mechanism(Protocol):
    """A randomised release with a privacy claim.

    ``sample(data, n, rng)`` returns ``n`` independent releases stacked along the
    first axis, shape ``(n, *output_shape)``. It must be vectorised and cache the
    expensive data-independent parts (factorisations), so that a million-sample
    audit costs one factorisation.
    """

    @property
    def claim(self) -> Claim:
        """The privacy claim: level, neighbour relation, proven or not."""
        ...

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` independent releases for ``data``, shape ``(n, *output_shape)``."""
        ...


#: The cost classes a mechanism may declare, as nominal seconds per draw: the upper end of
#: what each class measured (``benchmarks/bench_make_audit.py --costs`` re-measures every
#: catalogue entry against its class). ``"vectorised"``: numpy draws many releases at once
#: (0.01–12 µs per draw measured); ``"loop"``: a Python loop per draw (0.09–0.2 ms);
#: ``"solve"``: an optimisation, a training run or an exact sampler per draw (1–3.7 ms).
#: A slow mechanism states its cost where it is written, as the optional class attribute
#: ``declared_cost_per_draw_s`` (e.g. ``COST_CLASSES["solve"]``, or any constant of its
#: author's): the library, the command line and the catalogue all plan its draw caps from
#: that one declaration (:func:`dpgp_audit.audit.defaults.default_n`). A mechanism that
#: declares nothing is planned as vectorised.
COST_CLASSES: dict[str, float] = {"vectorised": 2e-5, "loop": 5e-4, "solve": 5e-3}


class ContractError(ValueError):
    """A mechanism's ``sample`` broke the contract: not ``n`` rows, values that are not
    finite numbers, a write into the dataset's read-only arrays, a shape that changes,
    rows that are not independent releases, or a release that depends on earlier calls.

    A ``ValueError``, so the command line reports it in one line (exit status 2). The
    auditors that read a ``ValueError`` from ``sample`` as "this dataset is refused" let
    this one through: a broken contract is never a refusal.
    """


def checked_sample(mechanism: object, data: Dataset, n: int,
                   rng: np.random.Generator) -> np.ndarray:
    """``np.asarray(mechanism.sample(data, n, rng))``, checked against :class:`Mechanism`.

    Every auditor draws through here, so a release with the wrong number of rows, with
    values that are not numbers, or with NaN or infinite values, and a ``sample`` that
    writes into the dataset (numpy's read-only ``ValueError``, which is not a refusal of
    the dataset), stop the audit with one clear message (a :class:`ContractError` naming
    the call, and for non-finite values the range of the targets they came from) instead
    of an error deep inside an auditor, or, for the write, every dataset read as refused.
    The array is returned as ``sample`` made it (no copy, no conversion).
    """
    call = f"{type(mechanism).__name__}.sample(data, {n}, rng)"
    try:
        out = np.asarray(mechanism.sample(data, n, rng))  # type: ignore[attr-defined]
    except ValueError as err:
        if isinstance(err, ContractError) or "read-only" not in str(err):
            raise  # a refusal of this dataset (or already a contract error)
        raise ContractError(
            f"{call} tried to write into a read-only array ({err}). A Dataset's arrays are "
            "read-only, so that no call can change the data the next call sees: copy "
            "before changing them, e.g. y = np.array(data.y)") from err
    if out.ndim == 0 or out.shape[0] != n:
        if out.ndim:
            got = f"shape {out.shape}"
        elif out.dtype.kind == "O" and not isinstance(out.item(), int | float):
            got = f"a {type(out.item()).__name__} object, not an array of rows"  # a generator
        else:
            got = "a scalar"
        rows = f"{n} row" + ("s" if n != 1 else "")
        raise ContractError(f"{call} returned {got}; the contract asks for {rows}, one "
                            f"release each: shape ({n}, ...)")
    values = out
    if out.dtype.kind not in "biuf":
        try:  # objects that are numbers pass, converted once for the finiteness check
            values = out.astype(float) if out.dtype.kind == "O" else None
        except (TypeError, ValueError):
            values = None
        if values is None:
            raise ContractError(f"{call} returned values of dtype {out.dtype}; the auditors "
                                "compare numbers (booleans, integers or floats)")
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        bad = int(values.size - np.count_nonzero(np.isfinite(values)))
        y = np.asarray(data.y, dtype=float)
        raise ContractError(
            f"{call} returned {bad} non-finite value(s) (NaN or inf) of {values.size}, on "
            f"targets in [{y.min():.6g}, {y.max():.6g}]; the auditors compare finite numbers. "
            "A release that overflows or divides by zero on some legal data is itself a leak "
            "(inf on one dataset, a number on its neighbour): compute it in a wider type, or "
            "bound it")
    return out


def same_release_shape(mechanism: object, outs: Sequence[np.ndarray], neighbours: bool = True,
                       method: str = "sample") -> None:
    """Refuse arrays whose shape is not the same in every one of ``outs``.

    ``outs`` come from the mechanism's ``method``: releases from :func:`checked_sample`
    (shape past the row axis), or a model's ``mean`` or a ``query`` (whole shape), on the
    datasets of a neighbouring pair (``neighbours=True``) or on one dataset
    (``False``: chunks of one side). A release whose shape depends on the data, e.g. one
    noisy count for each category that occurs, tells the neighbours apart by its shape
    alone, which no noise covers (ε = ∞), and the difference a sensitivity bound measures
    does not exist; a shape that changes between calls breaks the contract's
    ``(n, *output_shape)``. Either stops the audit with one :class:`ContractError` that
    says so, instead of a numpy broadcasting error deep inside an auditor.
    """
    skip = 1 if method == "sample" else 0
    shapes = [tuple(np.shape(o)[skip:]) for o in outs]
    if len(set(shapes)) <= 1:
        return
    a, b = shapes[0], next(s for s in shapes if s != shapes[0])
    name = f"{type(mechanism).__name__}.{method}"
    what = "releases" if method == "sample" else "values"
    if neighbours:
        raise ContractError(
            f"{name} returned {what} of shape {a} on a dataset D and {b} on a neighbour D'; "
            "the shape depends on the data, so the shape alone tells the neighbours apart, a "
            "leak no noise covers (epsilon = inf). Release one shape whatever the data, e.g. "
            "a noisy value for every category of a public list, never only for those the "
            "data contains")
    raise ContractError(
        f"{name} returned {what} of shape {a} and {b} on the same dataset; the contract "
        "asks for one shape, (n, *output_shape), fixed before the data is seen")


#: Calls of one row each in the independence probe (:func:`independent_releases`).
INDEPENDENCE_ROWS = 32
#: Rows of the probe's one call: enough that a row's spread that changes with ``n`` (as
#: when ``n``, the number of draws, is read as the number of records, or σ grows as √n) is
#: refused at p below 1e-20, at 288 draws in all (a second call only when one is needed).
INDEPENDENCE_CALL_ROWS = 256
#: The probe refuses a ``sample`` only below this p-value (four tests, Bonferroni). A group
#: that repeats one value while the other never does gives below 1e-40.
INDEPENDENCE_P = 1e-12


def within_group_repeats_p(same_own: int, own: int, same_other: int, other: int) -> float:
    """Exact p-value that one group repeats a reference value so often, if rows are exchangeable.

    A reference row is taken from a group; ``same_own`` of that group's ``own`` other rows
    equal it, and ``same_other`` of the ``other`` rows of the second group. If every row
    is an independent draw of one law, the rows are exchangeable given the reference, so
    the group labels of the ``K`` rows that differ from it fall at random: the number in
    the reference's group is hypergeometric (``own + other`` rows, ``K`` that differ,
    ``own`` drawn). Returns P(at most ``own - same_own`` of them in the reference's group),
    small when that group repeats its reference more than exchangeable rows can.
    """
    differ_own, differ = own - same_own, (own - same_own) + (other - same_other)
    total = math.comb(own + other, differ)
    hits = sum(math.comb(own, j) * math.comb(other, differ - j)
               for j in range(max(0, differ - other), differ_own + 1))
    return hits / total


def inside_span_p(inside: int, span_group: int, other: int) -> float:
    """Exact p-value that so few of one group fall inside the other's range, if exchangeable.

    ``span_group`` values and ``other`` values, all distinct, are ranked together; the
    range of the first group (its smallest to its largest) holds ``inside`` of the others.
    If every value is an independent draw of one law, the first group's ranks are a random
    subset of the pooled ranks, and its span covers ``s`` ranks in ``(N − s + 1) ·
    C(s − 2, g − 2)`` of the ``C(N, g)`` subsets (``N = g + other``, ``g = span_group``):
    the start of the span, then the group's other members inside it. Returns P(at most
    ``inside`` others inside), small when one group is far narrower than the other.
    """
    g, n_all = span_group, span_group + other
    if g < 2:
        return 1.0
    hits = sum((n_all - s + 1) * math.comb(s - 2, g - 2) for s in range(g, g + inside + 1))
    return hits / math.comb(n_all, g)


def independent_releases(mechanism: object, data: Dataset, rng: np.random.Generator,
                         rows: int = INDEPENDENCE_ROWS,
                         call_rows: int = INDEPENDENCE_CALL_ROWS,
                         stop: Callable[[], bool] | None = None) -> None:
    """Refuse a ``sample`` whose rows are not independent releases of one law.

    The contract's ``n`` rows are ``n`` independent releases, so a row's law may not depend
    on how many rows are drawn with it. The auditors count every row as one release, and
    three hurried forms break that:

    * one noise draw broadcast over the rows (``rng.normal()`` added to an ``(n, d)``
      array): a call's rows are one release repeated, and counting them as ``n`` turns a
      correct mechanism into a certified "violation";
    * noise centred on its own mean over the rows: one release (``n = 1``), what gets
      published, carries no noise at all (ε = ∞), while ``n`` rows look noisy;
    * a noise scale computed from ``n``: ``n``, the number of draws, read as the number
      of records (a sensitivity ``2 / n``: the auditors' rows are less noisy than a
      release), or the rows treated as releases to compose (σ·√n: the rows are noisier,
      and an under-noised release hides).

    The probe draws one call of ``call_rows`` rows and ``rows`` calls of one row, on
    ``data`` with generators spawned from ``rng``. Under the contract these rows are
    i.i.d., so neither group can repeat its first row much more often than the other
    group does (:func:`within_group_repeats_p`, each group as the reference), and, on
    the output coordinate with the most distinct values, neither group's range can hold
    far fewer of the other's values than exchangeable ranks allow
    (:func:`inside_span_p`, each group's range, ties broken at random). Each of the four
    exact tests refuses below :data:`INDEPENDENCE_P` / 4. A deterministic release (every
    row equal) and discrete releases with atoms pass: both groups repeat alike.
    Single releases that repeat are refused only when a second call of ``call_rows`` rows on
    another generator differs from the first, i.e. when ``sample`` does draw from the
    generator it is handed; one whose draws ignore it (a generator of its own seeded from
    the data) releases the same rows on every call, a deterministic release the auditors
    certify as such. A mechanism that refuses ``data`` (a plain ``ValueError``) is left
    to the auditors, and so is the rest of the probe once ``stop()`` (the runner's time
    guard) is true between calls: a mechanism slow enough for that meets the guard again
    in the first part, which says it fired.

    Raises
    ------
    ContractError
        Naming which form the rows take and what to do instead.
    """
    r_call, r_again, r_ties, *r_single = rng.spawn(rows + 3)
    many = _drawn(mechanism, data, call_rows, r_call)
    single = []
    for r in r_single:
        if many is None or (stop is not None and stop()):  # refused, or the guard fired:
            return  # the auditors and the parts say so
        single.append(_drawn(mechanism, data, 1, r))
        if single[-1] is None:
            return
    same_release_shape(mechanism, [many, *single], neighbours=False)
    ones = np.concatenate(single, axis=0)

    def repeats(group: np.ndarray, ref: np.ndarray) -> int:
        flat = group.reshape(group.shape[0], -1)
        return int(np.count_nonzero(np.all(flat == ref.reshape(1, -1), axis=1)))

    call = f"{type(mechanism).__name__}.sample"
    same_call = repeats(many[1:], many[0])
    if 4 * within_group_repeats_p(same_call, call_rows - 1, repeats(ones, many[0]),
                                  rows) < INDEPENDENCE_P:
        raise ContractError(
            f"{call}(data, {call_rows}, rng) repeated one release over its rows "
            f"({same_call + 1} of {call_rows} equal), while {rows} calls of one row each differ: "
            "its rows are not independent releases (a noise drawn once and broadcast over "
            "the rows?). The auditors count every row as one release, so they would "
            "over-count the evidence: draw the noise with one value per row, e.g. "
            "rng.normal(size=(n, d))")
    same_single = repeats(ones[1:], ones[0])
    if 4 * within_group_repeats_p(same_single, rows - 1, repeats(many, ones[0]),
                                  call_rows) < INDEPENDENCE_P:
        again = _drawn(mechanism, data, call_rows, r_again)
        if again is None or np.array_equal(again, many):  # draws that ignore the generator:
            return  # a deterministic release, the auditors' to certify
        raise ContractError(
            f"{call}(data, 1, rng) returned the same release on {same_single + 1} of {rows} "
            f"calls with different generators, while a call of {call_rows} rows varies: a "
            "single release, which is what gets published, carries no noise (noise centred "
            "or rescaled over the rows?), so it leaks the data with epsilon = inf, and the "
            "rows the auditors would see are not independent releases of it. Draw every "
            "row's noise independently of the others")
    _same_spread(call, many, ones, r_ties)


#: Rows of each call of the state probe (:func:`stateless_releases`): the releases are
#: compared bit for bit, so one row is as telling as many, and a slow mechanism (a
#: training run per draw) pays a few draws for the probe.
STATE_ROWS = 1


@dataclasses.dataclass(frozen=True)
class StateProbe:
    """What :func:`stateless_releases` saw: the release it keeps for the end of the audit.

    Attributes
    ----------
    release
        ``sample(data, STATE_ROWS, g)`` of an untouched copy of the mechanism, with ``g``
        a generator in the state of ``seed`` (``None`` when the probe could not run).
    seed
        The generator whose state every probed call starts from (a copy each time).
    skipped
        Why the probe did not run: the mechanism cannot be copied, refuses the data, or
        two untouched copies on one seed differ (a sampler the audit cannot seed).
    """

    release: np.ndarray | None
    seed: np.random.Generator | None
    skipped: str | None = None


def stateless_releases(mechanism: object, data: Dataset, others: Sequence[Dataset],
                       rng: np.random.Generator, rows: int = STATE_ROWS,
                       stop: Callable[[], bool] | None = None) -> StateProbe:
    """Refuse a ``sample`` whose release depends on the calls made before it.

    The contract's ``sample(data, n, rng)`` is a function of its arguments: the auditors
    call it thousands of times, on datasets in an order of their own, and read every call
    as a draw of the one mechanism that gets published. A ``sample`` that keeps state
    breaks that, and the hurried forms are leaks of their own: a noise scale calibrated on
    the first dataset it sees and cached (later releases then carry the first dataset's
    sensitivity, and the audit, whose first call is not on the user's data, tests another
    mechanism than the one published), a cursor over a precomputed noise table, a budget
    that changes the noise after some calls.

    Three deep copies of ``mechanism`` are taken, one at a time, before any other call of
    the audit. Two release ``rows`` rows on ``data`` from generators in one state: if they
    differ, the release is not reproducible from its generator and nothing can be compared
    (the grey-box auditor reports that). The third is first called on each of ``others`` (the
    audit's own neighbours), then on ``data`` from the same state: a release that is a
    function of its arguments repeats the first copy's bit for bit. The copies keep the
    user's object untouched; :func:`unchanged_by_audit` compares the object itself after
    the audit. Once ``stop()`` (the runner's time guard) is true between calls, the probe
    stops without a finding, as :func:`independent_releases` does.

    Returns
    -------
    StateProbe
        The untouched copy's release and the generator state, for :func:`unchanged_by_audit`.

    Raises
    ------
    ContractError
        When the copy called on other datasets first releases other values on ``data``.
    """
    seed, *kids = rng.spawn(1 + len(others))

    def fresh() -> object:  # one copy at a time: a large mechanism is held twice at most
        return copy.deepcopy(mechanism)

    try:
        first = fresh()
    except Exception as err:  # noqa: BLE001 - any object may refuse a copy; then no probe
        return StateProbe(None, None, f"the mechanism cannot be copied ({type(err).__name__})")
    def stopped() -> bool:
        return stop is not None and stop()

    release = _drawn(first, data, rows, copy.deepcopy(seed))  # sample's own errors travel on
    del first
    again = None if stopped() else _drawn(fresh(), data, rows, copy.deepcopy(seed))
    if stopped():
        return StateProbe(None, None, "stopped by the time guard")
    if release is None or again is None:
        return StateProbe(None, None, "sample() refuses the data")
    if not np.array_equal(release, again):
        return StateProbe(None, None, "two copies on one generator state release different "
                                      "values (a sampler the audit cannot seed)")
    used = fresh()
    for other, kid in zip(others, kids, strict=True):
        if stopped():
            return StateProbe(None, None, "stopped by the time guard")
        _drawn(used, other, rows, kid)  # a refusal there is the auditors' to report
    if stopped():
        return StateProbe(None, None, "stopped by the time guard")
    after = _drawn(used, data, rows, copy.deepcopy(seed))
    if after is None or not np.array_equal(after, release):
        shown = ("refused your data, which a copy called on it first released" if after is None
                 else "released other values on your data than a copy called on it first")
        raise ContractError(
            f"{type(mechanism).__name__}.sample keeps state between calls: from one "
            f"generator state, a copy of it called first on {len(others)} other dataset(s) "
            f"of the audit {shown}. A release must be a function of (data, n, rng) alone. "
            "State kept from earlier calls (a noise scale or a fit computed on the first "
            "dataset seen, a cursor over a noise table, a budget that changes the noise) "
            "ties a release to data it was not handed, and leaks that data; the auditors, "
            "calling in an order of their own, would test a mechanism that is never "
            "published. Compute what a release needs from the data handed to each call (a "
            "cache keyed by the data's values is fine)")
    return StateProbe(release, seed)


def unchanged_by_audit(mechanism: object, data: Dataset, probe: StateProbe) -> None:
    """Refuse a ``sample`` that the audit's own calls changed (:func:`stateless_releases`).

    After every auditor has drawn, the user's object releases ``probe``'s rows again from
    the same generator state. State that changes only after many calls (a budget counted
    down, a cache that fills) passes the first probe; here the release differs, and the
    auditors' draws came from more than one mechanism, so no verdict stands on them.

    Raises
    ------
    ContractError
        When the release differs from the untouched copy's.
    """
    if probe.release is None or probe.seed is None:
        return
    after = _drawn(mechanism, data, probe.release.shape[0], copy.deepcopy(probe.seed))
    if after is None or not np.array_equal(after, probe.release):
        raise ContractError(
            f"{type(mechanism).__name__}.sample changed during the audit: after the "
            "auditors' calls it released other values on your data, from the same "
            "generator state, than an untouched copy of it did before them (a budget or a "
            "counter that changes the noise, a cache or a cursor that moves?). The "
            "auditors' draws then come from more than one mechanism, so no verdict is "
            "reported. A release must be a function of (data, n, rng) alone")


def _drawn(mechanism: object, data: Dataset, n: int,
           rng: np.random.Generator) -> np.ndarray | None:
    """:func:`checked_sample`, or ``None`` when ``sample`` refuses ``data`` (a plain
    ``ValueError``: the auditors report refusals); a :class:`ContractError` travels on.
    """
    try:
        return checked_sample(mechanism, data, n, rng)
    except ContractError:
        raise
    except ValueError:
        return None


def _same_spread(call: str, many: np.ndarray, ones: np.ndarray,
                 rng: np.random.Generator) -> None:
    """The span tests of :func:`independent_releases`, on the coordinate that varies most.

    Ties (a release rounded to a grid, a discrete one) are broken at random: exchangeable
    values with an independent uniform key attached are exchangeable pairs with no ties,
    so the rank law of :func:`inside_span_p` holds exactly.
    """
    pooled = np.concatenate([many.reshape(many.shape[0], -1), ones.reshape(ones.shape[0], -1)])
    if pooled.shape[1] == 0:
        return
    k = int(np.argmax([np.unique(col).size for col in pooled.T]))
    a, b = many.shape[0], ones.shape[0]
    order = np.lexsort((rng.random(a + b), pooled[:, k]))
    rank = np.empty(a + b, dtype=np.int64)
    rank[order] = np.arange(a + b)
    ra, rb = rank[:a], rank[a:]
    ones_in = int(np.count_nonzero((rb > ra.min()) & (rb < ra.max())))
    many_in = int(np.count_nonzero((ra > rb.min()) & (ra < rb.max())))
    where = f" (output coordinate {k})" if pooled.shape[1] > 1 else ""
    if 4 * inside_span_p(ones_in, a, b) < INDEPENDENCE_P:
        raise ContractError(
            f"{call}(data, {a}, rng) returned rows that spread far less than {b} single "
            f"releases{where}: only {ones_in} of the {b} fall inside the range of the {a} "
            "rows. The noise of a row shrinks with n, the number of draws asked for (is n "
            "used as the number of records? that is data.n), so the rows the auditors would "
            "see are less noisy than a release. Make each row's law independent of n")
    if 4 * inside_span_p(many_in, b, a) < INDEPENDENCE_P:
        raise ContractError(
            f"{call}(data, {a}, rng) returned rows that spread far more than {b} single "
            f"releases{where}: only {many_in} of the {a} rows fall inside the range of the {b} "
            "single releases. The noise of a row grows with n, the number of draws asked "
            "for (scaled by n or its square root, as if the rows were releases to compose?), "
            "so a single release, which is what gets published, is less noisy than the rows "
            "the auditors would see, and a leak would hide. Make each row's law independent "
            "of n")


@runtime_checkable
class GaussianRelease(Protocol):
    """Optional white-box interface: the release given ``data`` is N(mean(data), cov(data))."""

    def mean(self, data: Dataset) -> np.ndarray:
        """Mean of the release given ``data``, flattened to shape ``(d,)``."""
        ...

    def cov(self, data: Dataset) -> np.ndarray:
        """Noise covariance of the release given ``data``, shape ``(d, d)``, PSD."""
        ...


@runtime_checkable
class DiscreteRelease(Protocol):
    """Optional white-box interface for finite outputs (selection mechanisms).

    ``log_probabilities(data)[k]`` is log P(release = k | data). The pure-DP
    privacy loss of a pair is then ``max_k |log p_k(D) − log p_k(D′)|`` exactly.
    """

    def log_probabilities(self, data: Dataset) -> np.ndarray:
        """Log-probability of each possible output given ``data``, shape ``(k,)``."""
        ...


@runtime_checkable
class SensitivityQuery(Protocol):
    """Optional sensitivity interface: what the privacy proof bounds.

    ``norm(query(D) − query(D′)) <= sensitivity_bound()`` for every pair of
    neighbours under the mechanism's relation.
    """

    @property
    def norm(self) -> Norm:
        """The norm in which the proof bounds the query change."""
        ...

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free release for ``data``."""
        ...

    def sensitivity_bound(self) -> float:
        """The sensitivity the privacy proof uses (an upper bound over all neighbours)."""
        ...


class Future(Protocol):
    """The part of ``concurrent.futures.Future`` the auditors use."""

    def result(self) -> Any:
        """Block until the task is done and return its value (or raise its error)."""
        ...


@runtime_checkable
class Executor(Protocol):
    """Anything that runs ``fn(*args)`` somewhere and hands back a :class:`Future`.

    ``concurrent.futures`` executors and a Dask ``distributed.Client`` qualify; the
    sample-based auditors spread their sampling chunks over one (catalogue A.3).
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        """Schedule ``fn(*args)``."""
        ...


#: The optional interfaces and the members each needs callable (``norm`` is a
#: :class:`~dpgp_audit.norms.Norm`, called on a query change).
_CALLABLE_MEMBERS: tuple[tuple[type, tuple[str, ...]], ...] = (
    (GaussianRelease, ("mean", "cov")),
    (DiscreteRelease, ("log_probabilities",)),
    (SensitivityQuery, ("query", "norm", "sensitivity_bound")),
)
#: What each member must be, for the message.
_MEMBER_FORM = {
    "mean": "a method mean(data)", "cov": "a method cov(data)",
    "log_probabilities": "a method log_probabilities(data)",
    "query": "a method query(data)",
    "norm": "a Norm from dpgp_audit.norms (e.g. L2()), called on a query change",
    "sensitivity_bound": "a method sensitivity_bound() returning the bound, not a property",
}


def claim_problem(claim: object) -> str | None:
    """``None`` for a privacy claim (anything with a neighbour ``relation``), else why not."""
    if hasattr(claim, "relation"):
        return None
    return ("claim must be a privacy claim with a neighbour relation (dpgp_audit.privacy."
            f"claims: ApproxDP, PureDP, GaussianDP, ZCDP), got {type(claim).__name__}")


def interface_problem(mechanism: object) -> str | None:
    """What is wrong with the optional interfaces ``mechanism`` declares, or ``None``.

    A runtime-checkable protocol asks only that the names exist, so a class with a field
    called ``mean`` beside one called ``cov`` "is" a :class:`GaussianRelease`, and the
    white-box auditor would call a float. Every member of an interface the mechanism has
    all the names of must be callable; the message names the member and what it holds.
    """
    name = type(mechanism).__name__
    for protocol, members in _CALLABLE_MEMBERS:
        if not isinstance(mechanism, protocol):
            continue
        for member in members:
            value = getattr(mechanism, member)
            if not callable(value):
                return (f"{name}.{member} is a {type(value).__name__}, not callable: with "
                        f"{', '.join(members)} the mechanism declares the optional interface "
                        f"{protocol.__name__}, whose members the auditors call; make "
                        f"{member} {_MEMBER_FORM[member]}, or rename the attribute")
    return None


def gaussian_release_problem(mechanism: GaussianRelease, data: Dataset) -> str | None:
    """``None`` when ``cov(data)`` is a (k, k) matrix for the k values of ``mean(data)``.

    The white-box auditor pairs them up; a mismatch would otherwise surface as an index or
    reshape error deep inside it.
    """
    mean = np.asarray(mechanism.mean(data), dtype=float).ravel()
    shape = np.shape(mechanism.cov(data))
    k = mean.size
    if shape != (k, k) and not (k == 1 and shape == ()):  # a scalar variance for one value
        return (f"{type(mechanism).__name__}.mean(data) has {k} value(s) but cov(data) has "
                f"shape {shape}; a GaussianRelease states the release's law N(mean, cov) "
                f"with cov of shape ({k}, {k})")
    return None
