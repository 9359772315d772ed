"""The default path's settings (catalogue A.6, A.8): one place for every edge.

:func:`~dpgp_audit.audit.runner.audit_mechanism`, ``python -m dpgp_audit audit``
(cli.py) and :func:`dpgp_audit.testing.assert_private` share these constants, so that
the library, the command line and a user's privacy test run one default path. The edges
import them (through :mod:`dpgp_audit.audit.runner`, which re-exports them), never
repeat them. The auditors of the default path are listed beside the parts themselves
(:data:`dpgp_audit.audit.parts.DEFAULT_AUDITORS`).
"""

from __future__ import annotations

__all__ = ["CLI_BUDGET_S", "DEFAULT_BUDGET_S", "DEFAULT_MODE", "FIXED_DEFAULT_N", "MODES",
           "SEQUENTIAL_DEFAULT_N", "SEQUENTIAL_HEADROOM", "default_n"]

#: Black-box modes: ``"fixed"`` draws exactly ``n`` per side (A.3); ``"sequential"`` draws at
#: most ``n`` per side and pair and stops at the first certified violation (A.8).
MODES: tuple[str, ...] = ("sequential", "fixed")
#: The default path's mode, for the library, the CLI and ``assert_private`` alike.
DEFAULT_MODE = "sequential"
#: Fixed mode: samples per side (quick mode: catches 2x errors; AUDITING.md §4).
FIXED_DEFAULT_N = 20_000
#: In sequential mode the default draw cap is this many times the fixed-n default: the
#: seconds budget, not the cap, is what normally ends an audit that finds nothing.
SEQUENTIAL_HEADROOM = 10
#: Sequential mode: the most draws per side and pair (200 000).
SEQUENTIAL_DEFAULT_N = SEQUENTIAL_HEADROOM * FIXED_DEFAULT_N
#: Seconds for one whole audit in sequential mode, for a library call and ``assert_private``.
DEFAULT_BUDGET_S = 10.0
#: Seconds per mechanism of ``python -m dpgp_audit audit`` (sequential mode), small so that
#: ``audit --all`` stays under a minute; ``benchmarks/bench_make_audit.py`` times it.
CLI_BUDGET_S = 1.0


def default_n(mode: str) -> int:
    """Samples per side that ``n=None`` means in ``mode``.

    :data:`FIXED_DEFAULT_N` in fixed mode (exactly that many per side) and
    :data:`SEQUENTIAL_DEFAULT_N` in sequential mode (at most that many per side and pair).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return SEQUENTIAL_DEFAULT_N if mode == "sequential" else FIXED_DEFAULT_N
