"""Issue 15 §4, chunks that pay: the grouping rule of :class:`BatchingExecutor`.

A fake pool runs tasks in this process and an injectable clock stands in for time:
each fake draw advances the clock by a set cost, and the pool books every task on
the simulated worker that frees up first, so every expected value below follows by
hand from the rule in ``dpgp_audit/audit/blackbox/executors.py`` — no assertion depends on
real time.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpgp_audit.audit.blackbox.executors import BatchingExecutor, balanced_groups, worker_count
from dpgp_audit.audit.blackbox.sequential import audit_sequential
from dpgp_audit.catalogue import get


class FakeClock:
    """Seconds that move only when a fake draw says so."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class FakeFuture:
    """Done when its simulated worker would have finished; ``result()`` moves the clock there."""

    def __init__(self, value, done_at: float, clock: FakeClock) -> None:
        self.value, self.done_at, self.clock = value, done_at, clock

    def result(self):
        self.clock.t = max(self.clock.t, self.done_at)
        return self.value


class FakePool:
    """``concurrent.futures``-like pool of ``workers`` simulated workers on the fake clock.

    A task runs at once in this process (its draws move the clock), then the clock is
    wound back to the submission time and the task is booked on the worker that frees
    up first (ties: lowest number), as a pool queue does; its future is done when that
    worker would have finished. ``exposed=False``: the pool does not say its size.
    """

    def __init__(self, clock: FakeClock, workers: int, *, exposed: bool = True) -> None:
        if exposed:
            self._max_workers = workers
        self.clock = clock
        self.free_at = [0.0] * workers
        self.batches: list[list[tuple]] = []

    def submit(self, fn, *args):
        self.batches.append(list(args[1]))  # _run_batch(fn, batch, clock)
        t0 = self.clock.t
        value = fn(*args)
        cost, self.clock.t = self.clock.t - t0, t0
        w = min(range(len(self.free_at)), key=lambda h: (self.free_at[h], h))
        self.free_at[w] = max(t0, self.free_at[w]) + cost
        return FakeFuture(value, self.free_at[w], self.clock)


class Phase:
    """A phase of fake chunks; each draw costs ``cost`` seconds of the fake clock."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.cost = 0.0
        self.ran: list[int] = []

    def draw(self, size: int, index: int) -> int:
        self.ran.append(index)
        self.clock.t += self.cost * size
        return index

    def run(self, ex: BatchingExecutor, rows: list[int], cost: float, offset: int = 0) -> list:
        self.cost = cost
        jobs = [(r, offset + i) for i, r in enumerate(rows)]
        out = ex.run_chunks(self.draw, jobs, rows)
        assert out == [offset + i for i in range(len(rows))]  # results in job order
        return out


def _task_indices(pool: FakePool, since: int = 0) -> list[list[int]]:
    return [[job[1] for job in batch] for batch in pool.batches[since:]]


def test_balanced_groups_worked_example():
    # 23 chunks of 256 rows and one of 184 (n = 6 000 per side, 12 chunks per side),
    # two groups: largest first, each to the lighter group -> 12 x 256 and 11 x 256 + 184.
    rows = [256] * 23 + [184]
    groups = balanced_groups(rows, 2)
    loads = sorted(sum(rows[i] for i in g) for g in groups)
    assert loads == [11 * 256 + 184, 12 * 256]
    assert sorted(i for g in groups for i in g) == list(range(24))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 10_000), min_size=1, max_size=80), st.integers(1, 20))
def test_balanced_groups_partition_within_one_chunk(rows, k):
    groups = balanced_groups(rows, k)
    assert sorted(i for g in groups for i in g) == list(range(len(rows)))
    assert len(groups) == min(k, len(rows))
    loads = [sum(rows[i] for i in g) for g in groups]
    # LPT: a group only grows while it is the lightest, so no two differ by more than a chunk
    assert max(loads) - min(loads) <= max(rows)


def test_expensive_draws_time_one_chunk_once_then_learn_from_tasks():
    clock = FakeClock()
    pool = FakePool(clock, workers=2)
    ex = BatchingExecutor(pool, clock=clock)
    ph = Phase(clock)

    # Phase 1 (first ever): chunk 0 runs here to time it (1 ms per draw); the other
    # 23 chunks hold 5.816 s of work -> ceil(5.816 / (2 workers x 2 s)) = 2 tasks per
    # worker -> 4 tasks, balanced by rows: 6, 6, 5 and 5 chunks of 256 rows, the
    # 184-row chunk on a lightest one -> 1536, 1536, 1464 and 1280 rows. On two
    # workers: 1.536 + 1.464 = 3.0 s of wall time for 5 816 draws.
    rows1 = [256] * 23 + [184]
    ph.run(ex, rows1, cost=1e-3)
    assert ex.timed_locally == 1
    tasks = _task_indices(pool)
    assert len(tasks) == 4 and ex.submitted == 4
    assert sorted(i for t in tasks for i in t) == list(range(1, 24))  # all but the timed one
    assert sorted(sum(rows1[i] for i in t) for t in tasks) == [1280, 1464, 1536, 1536]
    assert ex.per_draw == pytest.approx(1e-3, rel=1e-9)
    assert ex.task_per_draw == pytest.approx(1e-3, rel=1e-9)
    assert ex.wall_per_draw == pytest.approx(3.0 / 5816, rel=1e-9)

    # Phase 2: on the workers a draw now costs 3 ms (slow workers). The last remote
    # phase paid (0.52 ms < 1 ms of wall per draw), so nothing runs here; tasks are
    # sized from the tasks' last timing: 24 x 256 x 1 ms = 6.144 s -> 2 per worker.
    before = len(pool.batches)
    ph.run(ex, [256] * 24, cost=3e-3, offset=100)
    tasks = _task_indices(pool, before)
    assert len(tasks) == 4
    assert [len(t) for t in tasks] == [6, 6, 6, 6]
    assert sorted(i for t in tasks for i in t) == list(range(100, 124))
    assert ex.timed_locally == 1  # no local timing after the first phase
    assert ex.task_per_draw == pytest.approx(3e-3, rel=1e-9)  # learnt from the tasks
    # two rounds of 4.608 s tasks on 2 workers: 9.216 s for 6 144 draws = 1.5 ms each
    assert ex.wall_per_draw == pytest.approx(1.5e-3, rel=1e-9)

    # Phase 3: that did not pay (1.5 ms of wall per draw against 1 ms here): this
    # phase runs here, timed as a whole, with no separate timing chunk.
    before = len(pool.batches)
    ph.run(ex, [256] * 24, cost=1e-3, offset=200)
    assert len(pool.batches) == before
    assert ex.timed_locally == 1
    assert ex.per_draw == pytest.approx(1e-3, rel=1e-9)

    # Phase 4: the verdict is forgotten after one phase here; the workers are fast
    # again and the phase goes out (task size from the last task timing, 3 ms:
    # 18.4 s -> ceil(18.432 / 4) = 5 tasks per worker, 10 tasks).
    before = len(pool.batches)
    ph.run(ex, [256] * 24, cost=1e-3, offset=300)
    assert len(pool.batches) - before == 10
    assert ex.task_per_draw == pytest.approx(1e-3, rel=1e-9)

    # Phase 5: a small round (sequential auditor: 16 draws per side) stays here.
    before = len(pool.batches)
    ph.run(ex, [16, 16], cost=2e-3, offset=400)
    assert len(pool.batches) == before and ex.timed_locally == 1
    assert ex.per_draw == pytest.approx(2e-3, rel=1e-9)
    assert [p[0] for p in ex.phases] == ["remote", "remote", "local", "remote", "local"]


def test_cheap_draws_stay_in_process_every_phase():
    clock = FakeClock()
    pool = FakePool(clock, workers=2)
    ex = BatchingExecutor(pool, clock=clock)
    ph = Phase(clock)
    for k in range(5):  # e.g. sequential rounds of doubling size
        ph.run(ex, [256] * (2 ** k), cost=1e-7, offset=1000 * k)
        assert ex.per_draw == pytest.approx(1e-7, rel=1e-9)
    assert pool.batches == [] and ex.submitted == 0
    assert ex.timed_locally == 1


def test_phase_below_two_tasks_of_work_stays_here_even_if_each_draw_is_dear():
    clock = FakeClock()
    pool = FakePool(clock, workers=2)
    ex = BatchingExecutor(pool, clock=clock)
    ph = Phase(clock)
    ph.run(ex, [100] * 4, cost=1e-3)  # 0.3 s left after the timed chunk < 2 x 0.25 s
    assert ex.submitted == 0


def test_explicit_workers_and_one_task_per_worker_when_tasks_are_short():
    clock = FakeClock()
    pool = FakePool(clock, workers=3, exposed=False)  # says nothing about its size
    ex = BatchingExecutor(pool, clock=clock, workers=3)
    ph = Phase(clock)
    # 31 chunks x 256 x 0.5 ms = 3.968 s left -> ceil(3.968 / 6) = 1 task per worker
    ph.run(ex, [256] * 32, cost=5e-4)
    tasks = _task_indices(pool)
    assert sorted(len(t) for t in tasks) == [10, 10, 11]


def test_unknown_worker_count_sends_tasks_of_about_task_s():
    clock = FakeClock()
    pool = FakePool(clock, workers=2, exposed=False)
    ex = BatchingExecutor(pool, clock=clock)
    ph = Phase(clock)
    # 16 chunks x 100 x 1 ms = 1.6 s left, task_s = 0.25 s -> int(6.4) = 6 tasks
    ph.run(ex, [100] * 17, cost=1e-3)
    assert len(pool.batches) == 6


def test_task_s_zero_sends_each_chunk_after_the_timed_one():
    clock = FakeClock()
    pool = FakePool(clock, workers=1)
    ex = BatchingExecutor(pool, clock=clock, min_draw_s=0, task_s=0)
    ph = Phase(clock)
    ph.run(ex, [10] * 6, cost=1e-6)
    assert _task_indices(pool) == [[1], [2], [3], [4], [5]]
    ph.run(ex, [10] * 3, cost=1e-6, offset=10)  # even though one worker did not pay
    assert _task_indices(pool, 5) == [[10], [11], [12]]


def test_worker_count_reads_pools_and_dask_like_clients():
    with ThreadPoolExecutor(3) as pool:
        assert worker_count(pool) == 3

    class DaskLike:
        def submit(self, fn, *args):  # pragma: no cover - not called
            raise AssertionError

        def nthreads(self):
            return {"tcp://a": 1, "tcp://b": 2}

    assert worker_count(DaskLike()) == 3
    assert worker_count(FakePool(FakeClock(), 2, exposed=False)) is None


@pytest.mark.parametrize("kw, name", [({"workers": 0}, "workers"),
                                      ({"max_task_s": 0}, "max_task_s"),
                                      ({"task_s": -1}, "task_s")])
def test_bad_arguments_name_the_parameter(kw, name):
    with pytest.raises(ValueError, match=name):
        BatchingExecutor(FakePool(FakeClock(), 2), **kw)


def test_rows_must_match_jobs():
    ex = BatchingExecutor(FakePool(FakeClock(), 2), clock=FakeClock())
    with pytest.raises(ValueError, match="rows"):
        ex.run_chunks(lambda size, index: index, [(1, 0), (1, 1)], [1])
    with pytest.raises(ValueError, match="k"):
        balanced_groups([1, 2], 0)


def test_sequential_rounds_time_one_local_chunk_in_all():
    # The sequential auditor calls the sampler once per round; a shared executor times
    # one chunk here over the whole audit, not one per round, and stays bit-identical.
    class SyncPool:
        def submit(self, fn, *args):
            fut: Future = Future()
            fut.set_result(fn(*args))
            return fut

    mech, data = get("P.2/laplace-sum").make()
    d0, d1 = data, data.with_target(0, float(data.y[0]) + 1.0)
    ex = BatchingExecutor(SyncPool(), min_draw_s=0, task_s=0)
    remote = audit_sequential(mech, [(d0, d1)], max_n=30_000, rng=np.random.default_rng(9),
                              executor=ex)
    serial = audit_sequential(mech, [(d0, d1)], max_n=30_000, rng=np.random.default_rng(9))
    assert len(remote.details["rounds"]) >= 3
    assert len(ex.phases) >= 4 and ex.timed_locally == 1
    assert all(where == "remote" for where, _, _ in ex.phases)
    assert remote.estimate == serial.estimate
