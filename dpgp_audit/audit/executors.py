"""Spreading sampling chunks over an executor only where it pays (issue 15 §4; catalogue A.3).

The samplers cut every phase into chunks with their own child generators
(:mod:`~dpgp_audit.audit.sampling`), so *which* process draws a chunk never changes
a result. :class:`BatchingExecutor` decides *where* chunks run, from a measured
cost per draw:

* the first chunk of a phase runs in this process and times the draw cost;
* when a draw costs less than ``min_draw_s`` (shipping its score back would cost
  about as much as drawing it), or the phase holds less than two tasks' worth of
  work, everything runs in this process — a parallel run is then never slower
  than a serial one by more than the timing of one chunk;
* otherwise the remaining chunks are grouped into tasks of about ``task_s``
  seconds of work each (one pickled mechanism per task, not per chunk) and
  submitted to the wrapped executor (a ``concurrent.futures`` pool or a Dask
  ``Client``).

Any executor handed to the auditors is wrapped in one automatically;
``BatchingExecutor(ex, min_draw_s=0, task_s=0)`` submits every chunk, for tests
of the pickling path.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["BatchingExecutor", "as_batching", "executor_from_address"]

#: Draws cheaper than this stay in process (about the cost of shipping an 8-byte score).
MIN_DRAW_S = 2e-5
#: Seconds of work per submitted task (scheduler overhead is a few milliseconds per task).
TASK_S = 0.25


def _run_batch(fn: Callable, batch: Sequence[tuple]) -> list:
    """Run several chunks in one task (module level, so that it pickles)."""
    return [fn(*args) for args in batch]


class BatchingExecutor:
    """Wrap a ``submit``-style executor; run chunks where they pay (see the module notes).

    Parameters
    ----------
    executor
        Anything with ``submit(fn, *args)`` returning a future with ``result()``.
    min_draw_s
        Draw cost below which chunks stay in process.
    task_s
        Work per submitted task, in seconds.
    """

    def __init__(self, executor: object, *, min_draw_s: float = MIN_DRAW_S,
                 task_s: float = TASK_S) -> None:
        if not hasattr(executor, "submit"):
            raise TypeError("executor must have a concurrent.futures-style submit(fn, *args)")
        if min_draw_s < 0 or task_s < 0:
            raise ValueError(f"min_draw_s and task_s must be >= 0, got {min_draw_s}, {task_s}")
        self.executor = executor
        self.min_draw_s = float(min_draw_s)
        self.task_s = float(task_s)
        self.per_draw: float | None = None  # seconds per draw, measured in process
        self.submitted = 0  # tasks sent to the wrapped executor (for reports and tests)

    @property
    def name(self) -> str:
        """The wrapped executor's class name."""
        return type(self.executor).__name__

    def run_chunks(self, fn: Callable, jobs: Sequence[tuple], rows: Sequence[int]) -> list:
        """``[fn(*args) for args in jobs]`` in order; ``rows[i]`` draws are in job ``i``."""
        if not jobs:
            return []
        results: list = [None] * len(jobs)
        start = 0
        if self.per_draw is None or self.min_draw_s > 0:
            t = time.perf_counter()
            results[0] = fn(*jobs[0])
            measured = (time.perf_counter() - t) / max(1, rows[0])
            self.per_draw = measured if self.per_draw is None else \
                0.5 * (self.per_draw + measured)
            start = 1
        rest = list(range(start, len(jobs)))
        work = self.per_draw * float(sum(rows[i] for i in rest))
        if not rest or (self.per_draw < self.min_draw_s) or \
                (self.task_s > 0 and work < 2 * self.task_s):
            for i in rest:
                results[i] = fn(*jobs[i])
            return results
        k = len(rest) if self.task_s == 0 else min(len(rest), max(2, int(work / self.task_s)))
        groups = [g.tolist() for g in np.array_split(np.asarray(rest), k) if g.size]
        futures = [self.executor.submit(_run_batch, fn,  # type: ignore[attr-defined]
                                        [jobs[i] for i in g]) for g in groups]
        self.submitted += len(futures)
        for g, fut in zip(groups, futures, strict=True):
            for i, r in zip(g, fut.result(), strict=True):
                results[i] = r
        return results


def as_batching(executor: object | None) -> BatchingExecutor | None:
    """``None`` stays ``None``; a :class:`BatchingExecutor` stays itself; else wrap it."""
    if executor is None or isinstance(executor, BatchingExecutor):
        return executor
    return BatchingExecutor(executor)


def executor_from_address(address: str | None = None) -> object | None:
    """A Dask ``Client`` for ``address`` (default: the ``DPGP_AUDIT_SCHEDULER`` variable).

    Returns ``None`` when neither is set. Needs the ``dask`` extra
    (``pip install "dpgp_audit[dask]"``); the error says so when it is missing.
    """
    address = address or os.environ.get("DPGP_AUDIT_SCHEDULER") or None
    if address is None:
        return None
    try:
        from dask.distributed import Client
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ValueError("a scheduler address needs the dask extra: "
                         "pip install 'dpgp_audit[dask]'") from err
    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError) as err:
        raise ValueError(f"cannot reach the Dask scheduler at {address!r}: {err}") from None
