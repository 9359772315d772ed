"""The time guard: a wall-clock limit that stops an audit and says so (issue 20 §1; A.6).

A verdict is a function of ``(mechanism, data, seed, settings)``: every auditor is budgeted
in deterministic units (draws, queries; :class:`~dpgp_audit.audit.parts.Allowance`), never
in seconds, so a busy machine changes how long an audit takes, never what it concludes.
The one place the clock may enter is this **guard**: a limit on the whole audit's wall
time, for mechanisms so slow that their draw allowance would take hours. A guard is not a
budget:

* it is checked only between units of work (a piece of a sequential round, a pilot pair, a
  precision probe), and a part that sees it fired stops there;
* a part stopped by the guard reports ``INCONCLUSIVE`` with ``details["time_guard"]``
  (:meth:`TimeGuard.record`): the limit, where it fired, the draws spent and how to rerun
  (a larger limit, ``None``, or a smaller draw cap that fits);
* the report's overall verdict is then ``INCONCLUSIVE`` unless a violation was certified
  (a certified violation stands: every certificate here is valid whenever the audit
  stops), and its table says that the guard fired.

So a run the guard did not stop is the same on any machine, and a run it stopped says so
instead of reporting a weaker "no evidence" than its settings would have reached.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["TimeGuard", "check_guard_s"]


def check_guard_s(name: str, value: object) -> float | None:
    """``value`` as a positive finite number of seconds, or ``None`` (no guard).

    Raises ``ValueError`` naming ``name`` otherwise (booleans and strings included).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not (value > 0 and math.isfinite(value) or value == math.inf):
        raise ValueError(f"{name} must be a positive number of seconds or None, got {value!r}")
    return None if value == math.inf else float(value)


@dataclass
class TimeGuard:
    """A wall-clock guard over one audit (see the module docstring).

    Parameters
    ----------
    limit_s
        Seconds after ``started`` at which the guard fires; ``None``: it never fires.
    clock
        Zero-argument seconds counter (``time.perf_counter``; injectable for tests).
    started
        The clock's value when the audit began (default: now).

    Attributes
    ----------
    fired
        One entry per part the guard stopped, in order (``record``'s output).
    """

    limit_s: float | None
    clock: Callable[[], float] = time.perf_counter
    started: float | None = None
    fired: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.limit_s = check_guard_s("time_guard_s", self.limit_s)
        if self.started is None:
            self.started = self.clock()

    def elapsed(self) -> float:
        """Seconds since the audit began."""
        return self.clock() - float(self.started)  # type: ignore[arg-type]

    def expired(self) -> bool:
        """True once ``limit_s`` seconds have passed (never without a limit)."""
        return self.limit_s is not None and self.elapsed() > self.limit_s

    def __call__(self) -> bool:
        """The same as :meth:`expired` (parts take the guard as a plain callable)."""
        return self.expired()

    def record(self, part: str, where: str, *, draws: int | None = None,
               rerun: str = "") -> dict:
        """Record that the guard stopped ``part`` and return the JSON-ready note.

        Parameters
        ----------
        part
            The part it stopped (``"blackbox"``, ``"precision"``, …).
        where
            What the part was doing (``"pair ranking"``, ``"round 7"``, …).
        draws
            Draws per side (and pair) spent when it stopped, if the part counts draws.
        rerun
            How to rerun without the guard in the way (a larger limit, or a draw cap).
        """
        spent = "" if draws is None else f" at {draws} draws per side"
        limit = "" if self.limit_s is None else f" ({self.limit_s:g} s)"
        note = {"part": part, "where": where, "limit_s": self.limit_s, "draws": draws,
                "message": (f"stopped by the time guard{limit} during {where}"
                            f"{spent}: INCONCLUSIVE, not evidence of privacy; rerun with a "
                            f"larger time guard (time_guard_s / --time-guard-s) or none"
                            + (f", or {rerun}" if rerun else ""))}
        self.fired.append(note)
        return note
