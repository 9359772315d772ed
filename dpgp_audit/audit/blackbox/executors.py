"""Spreading sampling chunks over an executor only where it pays (issue 15 §4; catalogue A.3).

The samplers cut every phase into chunks with their own child generators
(:mod:`~dpgp_audit.audit.blackbox.sampling`), so *which* process draws a chunk never changes
a result. :class:`BatchingExecutor` decides *where* chunks run, from a measured
cost per draw:

* the cost per draw is measured once: the first chunk of the first phase runs in
  this process and is timed; after that every phase teaches the next one — a phase
  run in process is timed as a whole, and every submitted task returns its own
  elapsed time beside its results, so later phases send *everything* out and no
  worker idles while this process times a chunk (the sequential auditor calls the
  sampler once per round: it pays the timing once, not once a round);
* when a draw costs less than ``min_draw_s`` (shipping its score back would cost
  about as much as drawing it), or the phase holds less than ``2 * task_s`` seconds
  of work, or the latest phase sent out took longer in wall time per draw than a draw
  takes here (a loaded machine, slow workers, a fresh worker's imports: the parallel
  run did not pay), the phase runs in this process; the phase after it may go out
  again — so a parallel run loses at most the timing of one chunk and, on a machine
  where parallel runs do not pay, every other phase's difference;
* otherwise the chunks are grouped into ``m`` tasks per worker (``m = 1`` unless a
  task would exceed ``max_task_s`` seconds of work; never a task below ``task_s``),
  by *rows*, not chunk counts: the longest-processing-time rule gives every task the
  same number of draws up to one chunk (:func:`balanced_groups`), one pickled
  mechanism per task. The worker count comes from ``workers=``, a
  ``concurrent.futures`` pool's ``_max_workers`` or a Dask ``Client``'s
  ``nthreads()``; when none is known, tasks of about ``task_s`` seconds are sent.

Chunk boundaries are a function of ``n`` alone (the sampler's rule); only the
grouping of chunks into tasks depends on timings, so results stay bit-identical.
Any executor handed to the auditors is wrapped in one automatically;
``BatchingExecutor(ex, min_draw_s=0, task_s=0)`` submits every chunk after the
first timed one as its own task, always, for tests of the pickling path.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence

__all__ = ["BatchingExecutor", "as_batching", "balanced_groups", "executor_from_address",
           "worker_count"]

#: Draws cheaper than this stay in process (about the cost of shipping an 8-byte score).
MIN_DRAW_S = 2e-5
#: Least seconds of work per submitted task (scheduler overhead is a few milliseconds per task).
TASK_S = 0.25
#: Most seconds of work per task before a worker gets a second one (balance on a loaded machine).
MAX_TASK_S = 2.0


def _run_batch(fn: Callable, batch: Sequence[tuple],
               clock: Callable[[], float] = time.perf_counter) -> tuple[list, float]:
    """Run several chunks in one task; return their results and the task's own seconds.

    Module level, so that it pickles; ``clock`` travels with the task (the default,
    ``time.perf_counter``, pickles by name).
    """
    t = clock()
    out = [fn(*args) for args in batch]
    return out, clock() - t


def worker_count(executor: object) -> int | None:
    """Tasks the executor runs at once: a pool's ``_max_workers``, a Dask client's threads.

    Returns ``None`` when the executor does not say (then tasks are sized by time).
    """
    n = getattr(executor, "_max_workers", None)
    if isinstance(n, int) and not isinstance(n, bool) and n > 0:
        return n
    nthreads = getattr(executor, "nthreads", None)  # dask.distributed.Client
    if callable(nthreads):
        try:
            total = sum(int(v) for v in dict(nthreads()).values())
        except (TypeError, ValueError, AttributeError, OSError):
            return None
        return total if total > 0 else None
    return None


def balanced_groups(rows: Sequence[int], k: int) -> list[list[int]]:
    """Split chunk indices into ``k`` groups with near-equal total rows.

    Longest processing time first (LPT; Graham, SIAM J. Appl. Math. 17, 1969): chunks
    in decreasing size (ties by index) each go to the group with the fewest rows so far
    (ties by group number). A group only receives a chunk while it is the lightest, so
    any two groups differ by at most the largest chunk. Deterministic; indices sorted
    inside each group; empty groups dropped (``k`` larger than the number of chunks).
    Only the grouping depends on this rule, never a chunk's rows or generator.

    Parameters
    ----------
    rows
        Draws in each chunk.
    k
        Number of groups wanted (>= 1).

    Returns
    -------
    list of list of int
        ``min(k, len(rows))`` groups of chunk indices, a partition of ``range(len(rows))``.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    load = [0] * k
    groups: list[list[int]] = [[] for _ in range(k)]
    for i in sorted(range(len(rows)), key=lambda j: (-int(rows[j]), j)):
        g = min(range(k), key=lambda h: (load[h], h))
        groups[g].append(i)
        load[g] += int(rows[i])
    return [sorted(g) for g in groups if g]


class BatchingExecutor:
    """Wrap a ``submit``-style executor; run chunks where they pay (see the module notes).

    Parameters
    ----------
    executor
        Anything with ``submit(fn, *args)`` returning a future with ``result()``.
    min_draw_s
        Draw cost below which chunks stay in process.
    task_s
        Least work per submitted task, in seconds; ``0`` sends every chunk (after the
        timed first one) as its own task, whatever the timings say.
    max_task_s
        Work per task above which each worker gets more than one task.
    workers
        Tasks the executor runs at once; default: asked of the executor (:func:`worker_count`).
    clock
        Seconds counter used for every timing, in process and inside tasks (injectable
        for tests; it must pickle when the executor pickles tasks).

    Attributes
    ----------
    per_draw
        Seconds per draw in this process (``None`` before the first phase): the timed
        first chunk, then the timing of every phase run here.
    task_per_draw
        Seconds per draw inside the submitted tasks of the latest remote phase (their
        own timings, on the workers); sizes the next remote phase's tasks.
    wall_per_draw
        Wall seconds per draw of the latest remote phase, shipping included: a phase
        goes out again only while this beats ``per_draw`` (a parallel run that did not
        pay — a loaded machine, slow workers — sends the next phase back in process;
        then it is forgotten, and the phase after that may go out again).
    submitted, timed_locally
        Tasks sent to the wrapped executor; chunks run in process only to time them
        (at most one over the executor's life).
    phases
        One ``(where, tasks, rows)`` per phase: ``"local"`` or ``"remote"``.
    """

    def __init__(self, executor: object, *, min_draw_s: float = MIN_DRAW_S,
                 task_s: float = TASK_S, max_task_s: float = MAX_TASK_S,
                 workers: int | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        if not hasattr(executor, "submit"):
            raise TypeError("executor must have a concurrent.futures-style submit(fn, *args)")
        if min_draw_s < 0 or task_s < 0:
            raise ValueError(f"min_draw_s and task_s must be >= 0, got {min_draw_s}, {task_s}")
        if not max_task_s > 0:
            raise ValueError(f"max_task_s must be > 0, got {max_task_s}")
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                    or workers < 1):
            raise ValueError(f"workers must be a positive int or None, got {workers!r}")
        self.executor = executor
        self.min_draw_s = float(min_draw_s)
        self.task_s = float(task_s)
        self.max_task_s = float(max_task_s)
        self.workers = workers
        self.clock = clock
        self.per_draw: float | None = None
        self.task_per_draw: float | None = None
        self.wall_per_draw: float | None = None
        self.submitted = 0
        self.timed_locally = 0
        self.phases: list[tuple[str, int, int]] = []

    @property
    def name(self) -> str:
        """The wrapped executor's class name."""
        return type(self.executor).__name__

    def _tasks(self, work: float, chunks: int) -> int:
        """How many tasks a phase of ``work`` seconds in ``chunks`` chunks is sent as."""
        if self.task_s == 0:
            return chunks
        most = max(2, int(work / self.task_s))  # no task below task_s of work
        w = self.workers if self.workers is not None else worker_count(self.executor)
        if w is None:
            return min(chunks, most)
        per_worker = max(1, math.ceil(work / (w * self.max_task_s)))
        return max(1, min(chunks, w * per_worker, most))

    def _remote_pays(self, per_draw: float, rows: int) -> bool:
        """Send a phase of ``rows`` draws out? (cost per draw here: ``per_draw``).

        Forgets ``wall_per_draw`` when it keeps a phase home for it, so that the phase
        after may try the workers again.
        """
        if per_draw < self.min_draw_s:
            return False  # shipping a result back costs about as much as drawing it
        if self.task_s == 0:
            return True  # every chunk as its own task, whatever it costs (pickling tests)
        if per_draw * rows < 2 * self.task_s:
            return False  # too little work for two tasks
        # the latest remote phase must have beaten this process's cost per draw; if it
        # did not, this phase stays here and the next one may try again (a first task
        # on a fresh worker also pays its imports: one slow phase is not a verdict)
        if self.wall_per_draw is not None and self.wall_per_draw >= per_draw:
            self.wall_per_draw = None
            return False
        return True

    def run_chunks(self, fn: Callable, jobs: Sequence[tuple], rows: Sequence[int]) -> list:
        """``[fn(*args) for args in jobs]`` in order; ``rows[i]`` draws are in job ``i``."""
        if len(rows) != len(jobs):
            raise ValueError(f"rows has {len(rows)} entries for {len(jobs)} jobs")
        if not jobs:
            return []
        rows = [int(r) for r in rows]
        results: list = [None] * len(jobs)
        start, first_s = 0, 0.0
        if self.per_draw is None:  # the only chunk ever run just to time it
            t = self.clock()
            results[0] = fn(*jobs[0])
            first_s = self.clock() - t
            self.per_draw = first_s / max(1, rows[0])
            self.timed_locally += 1
            start = 1
        rest = list(range(start, len(jobs)))
        n_rest = sum(rows[i] for i in rest)
        if not rest or not self._remote_pays(self.per_draw, n_rest):
            t = self.clock()
            for i in rest:
                results[i] = fn(*jobs[i])
            if rest:  # a whole phase in process: its timing is free
                self.per_draw = (first_s + self.clock() - t) / max(1, sum(rows))
            self.phases.append(("local", 0, sum(rows)))
            return results
        work = (self.task_per_draw or self.per_draw) * n_rest  # seconds on the workers
        groups = [[rest[j] for j in g] for g in
                  balanced_groups([rows[i] for i in rest], self._tasks(work, len(rest)))]
        t = self.clock()
        futures = [self.executor.submit(_run_batch, fn,  # type: ignore[attr-defined]
                                        [jobs[i] for i in g], self.clock) for g in groups]
        self.submitted += len(futures)
        seconds = 0.0
        for g, fut in zip(groups, futures, strict=True):
            out, dt = fut.result()
            seconds += float(dt)
            for i, r in zip(g, out, strict=True):
                results[i] = r
        self.wall_per_draw = (self.clock() - t) / max(1, n_rest)
        self.task_per_draw = seconds / max(1, n_rest)  # the tasks' own timings
        self.phases.append(("remote", len(futures), sum(rows)))
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
