"""Privacy assertions for a user's own test suite (issue 15 §6; catalogue A.6, A.8).

:func:`assert_private`
    Runs the default audit path — every applicable auditor, the black-box one in
    anytime-valid sequential mode (A.8) — and raises :class:`PrivacyViolation`
    (an ``AssertionError``) carrying the verdict, the certified bound, the
    witness pair and one line that reproduces the failure.
:func:`assert_private_for_all_datasets`
    A hypothesis search over neighbouring datasets
    (:func:`~dpgp_audit.audit.strategies.neighbouring_datasets`): every drawn pair
    is audited (sensitivity of the pair, exact white-box profile, sequential
    black-box), and a failing pair is shrunk to a small counterexample.

Typical use::

    import numpy as np
    from dpgp_audit.testing import assert_private

    def test_my_mechanism_is_private():
        assert_private(MyMechanism(), my_data, np.random.default_rng(2026))

A passing assertion is **not** a proof of privacy: it says the audits run within their
draw allowances found no evidence against the claim. The audit is budgeted in draws
(``max_n``), so a seed gives the same outcome on any machine. A time guard
(``time_guard_s``) that fires makes the audit INCONCLUSIVE: the assertion then warns
(:class:`TimeGuardWarning`) and returns the report, whose verdict says so.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from dpgp_audit.audit.neighbours import NeighbourPair
from dpgp_audit.audit.runner import (
    DEFAULT_AUDITORS,
    DEFAULT_MODE,
    DEFAULT_TIME_GUARD_S,
    SEQUENTIAL_DEFAULT_N,
    AuditReport,
    audit_mechanism,
)
from dpgp_audit.contract import SensitivityQuery
from dpgp_audit.dataset import Dataset

_UNSET = object()

__all__ = ["PrivacyViolation", "TimeGuardWarning", "assert_private",
           "assert_private_for_all_datasets"]


class TimeGuardWarning(UserWarning):
    """The time guard cut an audit short: it is INCONCLUSIVE, not a pass on the evidence."""


class PrivacyViolation(AssertionError):
    """A failed privacy assertion; the attributes hold what the audit found.

    Attributes
    ----------
    report
        The full :class:`~dpgp_audit.audit.runner.AuditReport` (``None`` for a
        sensitivity counterexample found on a single pair).
    verdict
        ``"VIOLATION"``.
    bound
        Auditor name → its certified estimate (ε lower bound, sensitivity found, …).
    witness
        The neighbour pair on which the claim fails.
    command
        One line that reproduces the failure.
    """

    def __init__(self, message: str, *, report: AuditReport | None, bound: dict,
                 witness: NeighbourPair | None, command: str) -> None:
        super().__init__(message)
        self.report = report
        self.verdict = "VIOLATION"
        self.bound = bound
        self.witness = witness
        self.command = command


def _seed_from(rng: np.random.Generator | int) -> int:
    if isinstance(rng, bool):
        raise TypeError("rng must be a numpy Generator or an int seed printed by a failure")
    if isinstance(rng, int | np.integer):
        if rng < 0:
            raise ValueError(f"rng (a seed) must be >= 0, got {rng}")
        return int(rng)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (or a printed int seed), got "
                        f"{type(rng).__name__}")
    return int(rng.integers(0, 2**63 - 1))


def _short(data: Dataset, limit: int = 6) -> str:
    y = np.asarray(data.y)
    body = ", ".join(f"{v:.4g}" for v in y[:limit]) + (", …" if y.size > limit else "")
    return f"n={data.n}, y=[{body}]"


def _command(seed: int, max_n: int, alpha: float, mechanism_id: str | None) -> str:
    if mechanism_id is not None:  # the CLI spawns the same child generator for one mechanism
        return (f"python -m dpgp_audit audit --mechanism {mechanism_id} --seed {seed} "
                f"--samples {max_n} --alpha {alpha:g} --time-guard-s none")
    return (f"dpgp_audit.testing.assert_private(mechanism, data, {seed}, max_n={max_n}, "
            f"alpha={alpha:g}, time_guard_s=None)")


def _raise(report: AuditReport, seed: int, max_n: int, alpha: float,
           mechanism_id: str | None) -> None:
    bounds = {r.auditor: r.estimate for r in report.results if r.violation}
    lines = [f"{report.mechanism} violates its claim {report.claim.get('describe', '')}"]
    for r in report.results:
        if not r.violation:
            continue
        extra = ""
        if r.auditor == "blackbox":
            extra = (f" after {r.details.get('n_per_side')} draws/side "
                     f"({r.details.get('mode', 'fixed')} mode)")
        shown = r.estimate_text  # "> 1" where the bound is the claim itself (strict)
        above = "> claimed" if shown.startswith(">") else f"{shown} > claimed"
        lines.append(f"  {r.auditor}: {r.quantity} {above} {r.claimed:.4g} "
                     f"[{r.guarantee.value}]{extra}")
    w = report.witness
    if w is not None:
        lines.append(f"  witness pair: {w.label}")
        lines.append(f"    D : {_short(w.d0)}")
        lines.append(f"    D': {_short(w.d1)}")
    command = _command(seed, max_n, alpha, mechanism_id)
    lines.append(f"  reproduce: {command}")
    raise PrivacyViolation("\n".join(lines), report=report, bound=bounds, witness=w,
                           command=command)


def assert_private(mechanism: object, data: Dataset, rng: np.random.Generator | int, *,
                   time_guard_s: float | None = DEFAULT_TIME_GUARD_S,
                   max_n: int = SEQUENTIAL_DEFAULT_N, alpha: float = 0.05,
                   claim: object | None = None, pairs: list[NeighbourPair] | None = None,
                   y_bound: float | None = None, mechanism_id: str | None = None,
                   executor: object | None = None,
                   budget_s: object = _UNSET) -> AuditReport:
    """Fail (``AssertionError``) when the default audit path finds a privacy violation.

    Runs :func:`~dpgp_audit.audit.runner.audit_mechanism` on the default path: every
    auditor of :data:`~dpgp_audit.audit.runner.DEFAULT_AUDITORS` the mechanism supports
    (sensitivity search A.4, model check, exact white-box A.2, black-box in sequential
    mode A.8, precision A.7), at family-wise level ``alpha``. A mechanism that declares
    no public domain (``claim.domain``) fails the precision auditor when legal but huge
    targets let float rounding swallow its noise.

    Parameters
    ----------
    mechanism
        A :class:`~dpgp_audit.contract.Mechanism` (optionally a GaussianRelease and
        a SensitivityQuery).
    data
        The dataset D around which neighbours are generated.
    rng
        A generator (one seed is drawn from it and printed on failure), or that
        printed int seed to replay a failure.
    time_guard_s
        The time guard in seconds (``None``: none); default
        :data:`~dpgp_audit.audit.runner.DEFAULT_TIME_GUARD_S`, as ``audit_mechanism``.
        When it fires the audit is INCONCLUSIVE: a :class:`TimeGuardWarning` is issued
        and the report returned.
    max_n
        Most draws per side and pair of the sequential black-box audit (the audit's
        budget); default :data:`~dpgp_audit.audit.runner.SEQUENTIAL_DEFAULT_N`, as
        ``audit_mechanism``.
    alpha
        Family-wise significance level of the statistical auditors.
    claim, pairs, y_bound, executor
        Passed to ``audit_mechanism``.
    mechanism_id
        Registry ID, if the mechanism is registered: the reproduce line is then a
        CLI command (on the entry's default data).
    budget_s
        Former name of ``time_guard_s``.

    Returns
    -------
    AuditReport
        The report, when no violation was found (not a proof of privacy).

    Raises
    ------
    PrivacyViolation
        An ``AssertionError`` whose message names the auditors that fired, their
        certified bounds, the witness pair and a reproduce line.
    """
    if budget_s is not _UNSET:  # the former name of the guard
        from dpgp_audit.audit.guard import check_guard_s

        time_guard_s = check_guard_s("budget_s", budget_s)
    return _assert(mechanism, data, rng, DEFAULT_AUDITORS,
                   time_guard_s=time_guard_s, max_n=max_n, alpha=alpha, claim=claim,
                   pairs=pairs, y_bound=y_bound, mechanism_id=mechanism_id, executor=executor)


def _assert(mechanism: object, data: Dataset, rng: np.random.Generator | int,
            auditors: tuple[str, ...], *, time_guard_s: float | None, max_n: int, alpha: float,
            claim: object | None = None, pairs: list[NeighbourPair] | None = None,
            y_bound: float | None = None, mechanism_id: str | None = None,
            executor: object | None = None) -> AuditReport:
    seed = _seed_from(rng)
    child = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    report = audit_mechanism(mechanism, data, child, auditors=auditors, n=max_n, alpha=alpha,
                             claim=claim, pairs=pairs, y_bound=y_bound, seed=seed,
                             mode=DEFAULT_MODE, time_guard_s=time_guard_s, executor=executor)
    if report.violation:
        _raise(report, seed, max_n, alpha, mechanism_id)
    if not report.guard_fired and not report.compared:
        reasons = "; ".join(f"{k}: {v}" for k, v in report.skipped.items())
        raise ValueError(f"{report.mechanism}: no auditor compared anything, so there is "
                         f"nothing to assert ({reasons})")
    if report.guard_fired:
        import warnings

        notes = "; ".join(n.get("message", "") for n in report.guard["fired"])
        warnings.warn(f"{report.mechanism}: the audit is INCONCLUSIVE, not a pass: {notes}",
                      TimeGuardWarning, stacklevel=3)
    return report


def _pair_seed(seed: int, pair: NeighbourPair) -> np.random.Generator:
    """Deterministic generator per example, so hypothesis can replay and shrink it."""
    h = hashlib.sha256()
    for arr in (pair.d0.X, pair.d0.y, pair.d1.X, pair.d1.y):
        h.update(np.ascontiguousarray(arr, dtype=float).tobytes())
    return np.random.default_rng([seed, int.from_bytes(h.digest()[:8], "little")])


def assert_private_for_all_datasets(mechanism: object, *, seed: int,
                                    relation: object | None = None,
                                    base: Dataset | None = None, n: tuple[int, int] = (1, 8),
                                    dim: int = 1, x_range: tuple[float, float] = (-5.0, 5.0),
                                    y_bound: float | None = None, max_examples: int = 10,
                                    time_guard_s: float | None = None,
                                    max_n: int = 20_000, alpha: float = 0.05,
                                    budget_s: object = _UNSET) -> None:
    """Search neighbouring datasets with hypothesis; fail with a shrunk counterexample.

    Every drawn pair (D, D′) is audited on its own: the query change against
    ``sensitivity_bound()`` (if the mechanism is a SensitivityQuery; definitive),
    the exact white-box profile (if a GaussianRelease) and a sequential black-box
    audit at level ``alpha / max_examples`` (Bonferroni over the examples hypothesis
    generates, so a false alarm anywhere in the search has probability ≤ α).
    Shrinking re-audits smaller pairs and reports the smallest that still fails;
    each of those fails its own test at the same per-example level. The search is
    steered (``hypothesis.target``) towards pairs whose betting wealth grew most.

    Parameters
    ----------
    mechanism
        The mechanism under test (its ``claim.relation`` is used unless ``relation``).
    base
        Fix the inputs (for mechanisms built on public X under the outputs-only
        relation): only targets are generated.
    n, dim, x_range, y_bound
        Passed to :func:`~dpgp_audit.audit.strategies.neighbouring_datasets` (with
        ``structural=True``: half the examples are the kit's whole-dataset bases and full
        swings). ``y_bound=None`` takes the claim's declared domain bound, so the search
        generates data the claim covers; declared class labels keep every target on them
        (and half the examples move rows between two labels one by one).
    max_examples
        Pairs hypothesis generates (deterministically, from ``seed``).
    seed
        Seed of the per-example generators (combined with a hash of the pair), so
        that hypothesis can replay and shrink an example.
    max_n
        Per-example draw cap of the sequential black-box audit (its budget).
    time_guard_s
        Per-example time guard (``None``, the default: none); ``budget_s`` is its
        former name.
    alpha
        Family-wise level over the generated examples.

    Raises
    ------
    PrivacyViolation
        For the shrunk counterexample (hypothesis prints the falsifying pair).
    ValueError
        When the mechanism refused every generated pair: nothing was checked.
    """
    from hypothesis import HealthCheck, given, settings, target

    from dpgp_audit.audit.neighbours import domain_labels, domain_y_bound
    from dpgp_audit.audit.strategies import neighbouring_datasets

    if max_examples < 1:
        raise ValueError(f"max_examples must be >= 1, got {max_examples}")
    guard_s = time_guard_s if budget_s is _UNSET else budget_s
    relation = mechanism.claim.relation if relation is None else relation  # type: ignore
    if y_bound is None:  # the declared domain: generated data the claim covers
        y_bound = domain_y_bound(mechanism.claim, mechanism)  # type: ignore[attr-defined]
    labels = domain_labels(mechanism.claim, mechanism)  # type: ignore[attr-defined]
    strategy = neighbouring_datasets(relation, n=n, dim=dim, x_range=x_range,  # type: ignore
                                     y_bound=y_bound, base=base, structural=True,
                                     labels=labels)
    level = alpha / max_examples
    audited = 0  # examples the mechanism accepted: a search that audits none checks nothing

    @settings(max_examples=max_examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(strategy)
    def _check(pair: Any) -> None:
        rng = _pair_seed(seed, pair)
        try:
            mechanism.sample(pair.d0, 1, rng)  # type: ignore[attr-defined]
            mechanism.sample(pair.d1, 1, rng)  # type: ignore[attr-defined]
        except ValueError:  # a dataset the mechanism refuses is not a counterexample
            return
        nonlocal audited
        audited += 1
        if isinstance(mechanism, SensitivityQuery):
            change = float(mechanism.norm(np.asarray(mechanism.query(pair.d1))  # type: ignore
                                          - np.asarray(mechanism.query(pair.d0))))
            bound = float(mechanism.sensitivity_bound())
            if change > bound * (1 + 1e-9) and not math.isclose(change, bound, rel_tol=1e-9):
                raise PrivacyViolation(
                    f"query change {change:.6g} exceeds sensitivity_bound() {bound:.6g} on "
                    f"{pair.label}\n    D : {_short(pair.d0)}\n    D': {_short(pair.d1)}",
                    report=None, bound={"sensitivity": change}, witness=pair,
                    command="(a definitive counterexample: rerun the query on D and D')")
        # the pair's own audits only: a global sensitivity search would fail every example
        report = _assert(mechanism, pair.d0, rng, ("whitebox", "blackbox"),
                         time_guard_s=guard_s, max_n=max_n, alpha=level, pairs=[pair])
        bb = report.result("blackbox")
        if bb is not None:  # steer the search (hypothesis' target phase) to leakier pairs
            target(float(bb.details.get("log_wealth_at_claim", 0.0)), label="log wealth")

    _check()
    if audited == 0:
        raise ValueError(
            f"{type(mechanism).__name__} refused every pair the search generated "
            f"({max_examples} examples): nothing was checked. Generate data it accepts: "
            "y_bound= (when the claim declares no domain), base= (its inputs) or n=")
