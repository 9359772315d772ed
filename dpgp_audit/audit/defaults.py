"""The default path's settings (catalogue A.6, A.8): one place for every edge.

:func:`~dpgp_audit.audit.runner.audit_mechanism`, ``python -m dpgp_audit audit``
(cli.py), the catalogue's draw-cap rule (catalogue.py) and
:func:`dpgp_audit.testing.assert_private` share these constants, so that the library,
the command line and a user's privacy test run one default path. The edges import them
(through :mod:`dpgp_audit.audit.runner`, which re-exports them), never repeat them. The
auditors of the default path are listed beside the parts themselves
(:data:`dpgp_audit.audit.parts.DEFAULT_AUDITORS`).

Budgets are draws, never seconds (issue 20 §1): a verdict is a function of
``(mechanism, data, seed, settings)``. Seconds appear here only as (a) the time
*guard*, a limit that stops an audit and says so (:mod:`~dpgp_audit.audit.guard`), and
(b) the nominal seconds a mechanism's *declared* cost per draw turns into its draw caps
(:func:`default_n`, :func:`planned_cap`; the cost classes live with the contract member
that declares them, :data:`dpgp_audit.contract.COST_CLASSES`) — constants in code, never
a timing.
"""

from __future__ import annotations

import math

from dpgp_audit.contract import COST_CLASSES  # declared by the mechanisms; planned here

__all__ = ["ALL_AUDIT_S", "ANSWERS_PAIRS", "COST_CLASSES", "DEFAULT_BUDGET_S", "DEFAULT_MODE",
           "DEFAULT_PAIRS", "DEFAULT_TIME_GUARD_S", "FIXED_DEFAULT_N", "MIN_CAP", "MODES",
           "PILOT_MOST", "PLANNED_AUDIT_S", "SEQUENTIAL_DEFAULT_N", "SEQUENTIAL_HEADROOM",
           "default_n", "nominal_cost", "pilot_draws", "planned_cap"]

#: Black-box modes: ``"fixed"`` draws exactly ``n`` per side (A.3); ``"sequential"`` draws at
#: most ``n`` per side and pair and stops at the first certified violation (A.8).
MODES: tuple[str, ...] = ("sequential", "fixed")
#: The default path's mode, for the library, the CLI and ``assert_private`` alike.
DEFAULT_MODE = "sequential"
#: Fixed mode: samples per side (quick mode: catches 2x errors; AUDITING.md §4).
FIXED_DEFAULT_N = 20_000
#: In sequential mode the default draw cap is this many times the fixed-n default.
SEQUENTIAL_HEADROOM = 10
#: Sequential mode: the most draws per side and pair (200 000), the audit's budget.
SEQUENTIAL_DEFAULT_N = SEQUENTIAL_HEADROOM * FIXED_DEFAULT_N
#: The time guard of one audit, in seconds, for the library, ``assert_private`` and the
#: CLI (``--time-guard-s``): far above what a default audit of a vectorised mechanism
#: takes (seconds), so that it fires only for mechanisms whose draw allowance would run
#: for many minutes. When it fires the audit says so and is INCONCLUSIVE.
DEFAULT_TIME_GUARD_S = 600.0
#: Former name of :data:`DEFAULT_TIME_GUARD_S` (``budget_s`` is the time guard now).
DEFAULT_BUDGET_S = DEFAULT_TIME_GUARD_S
#: Top-ranked pairs the black-box auditor confirms by default.
DEFAULT_PAIRS = 2
#: ... but under the all-answers relation every generated pattern pair, at most this many:
#: a pilot cannot rank the StatDP/DP-Sniper patterns (an SVT's outputs move as much on a
#: pattern that exposes its bug as on one that does not), and there are few of them.
ANSWERS_PAIRS = 20
#: Most pilot releases per side and pair (ranking pairs, A.7's screen).
PILOT_MOST = 200
#: Fewest draws per side and pair a planned cap gives (one fitting and two betting rounds).
MIN_CAP = 64

#: Nominal seconds of black-box certification a single audit (``make audit MECH=ID``) plans
#: at its declared cost; with a declared cost and no ``n``, the library plans the same.
PLANNED_AUDIT_S = 60.0
#: ... and each entry of ``make audit`` (``--all``), so that the whole run stays under a
#: minute on 2 cores (``benchmarks/bench_make_audit.py``).
ALL_AUDIT_S = 1.0


def nominal_cost(cost_per_draw_s: float | None) -> float:
    """The seconds per draw a plan assumes: the declared cost, else (a mechanism that
    declares none) the ``"vectorised"`` class's nominal cost.

    >>> nominal_cost(None), nominal_cost(COST_CLASSES["solve"])
    (2e-05, 0.005)
    """
    return COST_CLASSES["vectorised"] if cost_per_draw_s is None else float(cost_per_draw_s)


def default_n(mode: str, cost_per_draw_s: float | None = None) -> int:
    """Samples per side that ``n=None`` means in ``mode``, for a mechanism of this declared
    cost: the one rule of the library, the command line and the catalogue.

    Without a declared cost, :data:`SEQUENTIAL_DEFAULT_N` in sequential mode (at most that
    many per side and pair) and :data:`FIXED_DEFAULT_N` in fixed mode (exactly that many).
    With one (a mechanism's ``declared_cost_per_draw_s``), the sequential cap is what
    :data:`PLANNED_AUDIT_S` seconds of certification buy at that cost
    (:func:`planned_cap`), and the fixed ``n`` a :data:`SEQUENTIAL_HEADROOM`-th of it, as
    the two defaults relate (at least 2). A function of declared numbers only.

    Examples
    --------
    >>> default_n("sequential"), default_n("fixed")
    (200000, 20000)
    >>> default_n("sequential", COST_CLASSES["solve"]), default_n("fixed", COST_CLASSES["solve"])
    (3000, 300)
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if cost_per_draw_s is None:
        return SEQUENTIAL_DEFAULT_N if mode == "sequential" else FIXED_DEFAULT_N
    cap = planned_cap(cost_per_draw_s, PLANNED_AUDIT_S)
    return cap if mode == "sequential" else max(2, cap // SEQUENTIAL_HEADROOM)


def planned_cap(cost_per_draw_s: float, seconds: float, *,
                cap: int = SEQUENTIAL_DEFAULT_N, pairs: int = 2) -> int:
    """Draws per side and pair that ``seconds`` of certification buy at a declared cost.

    The black-box part's certification draws ``2 * pairs * n`` releases at most (both
    sides of ``pairs`` pairs); the planned ``n`` is what makes that ``seconds`` at
    ``cost_per_draw_s`` seconds per release, rounded down to two significant digits,
    clipped to ``[MIN_CAP, cap]``. A function of declared numbers only: never a timing.

    Examples
    --------
    >>> planned_cap(2e-5, 60.0), planned_cap(5e-3, 60.0), planned_cap(2e-5, 0.5)
    (200000, 3000, 6200)
    """
    if not (cost_per_draw_s > 0 and math.isfinite(cost_per_draw_s)):
        raise ValueError(f"cost_per_draw_s must be a positive number of seconds, "
                         f"got {cost_per_draw_s!r}")
    raw = seconds / (2 * pairs * cost_per_draw_s)
    if raw >= cap:
        return int(cap)
    digits = max(0, int(math.floor(math.log10(max(raw, 1.0)))) - 1)
    rounded = int(raw // 10**digits) * 10**digits
    return int(min(cap, max(MIN_CAP, rounded)))


def pilot_draws(n: int, sequential: bool) -> int:
    """Pilot releases per side and pair for ranking pairs (and A.7's screen), from ``n``.

    A tenth of a fixed ``n`` in [20, :data:`PILOT_MOST`]; a sequential ``n`` is a cap (by
    default :data:`SEQUENTIAL_HEADROOM` times the fixed default), so there a thousandth,
    in [8, :data:`PILOT_MOST`] — 200 at the default cap, 8 for a slow mechanism's small
    cap, so that piloting every pair never costs more than a few rounds of betting.
    """
    if sequential:
        return min(PILOT_MOST, max(8, n // (100 * SEQUENTIAL_HEADROOM)))
    return min(PILOT_MOST, max(20, n // 10))
