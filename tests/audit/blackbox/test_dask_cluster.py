"""§4: a black-box audit through a real Dask LocalCluster (2 worker processes) is bit-identical."""

from __future__ import annotations

import os

import numpy as np
import pytest

from dpgp_audit.audit.blackbox.executors import BatchingExecutor, worker_count
from dpgp_audit.audit.blackbox.fixed import audit_blackbox
from dpgp_audit.audit.blackbox.sequential import audit_sequential
from dpgp_audit.catalogue import get

distributed = pytest.importorskip("dask.distributed", reason="the dask extra is not installed")


@pytest.fixture(scope="module")
def client():
    # Worker processes import dpgp_audit like this process does (PYTHONPATH is inherited).
    # The nanny writes its pre-spawn variables (MALLOC_TRIM_THRESHOLD_, ...) into this
    # process's environment: put it back, so later subprocesses of the suite do not inherit them.
    saved = dict(os.environ)
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as c:
            yield c
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_worker_count_of_a_real_cluster(client):
    assert worker_count(client) == 2


def test_blackbox_audit_through_a_real_cluster_is_bit_identical(client):
    mech, data = get("planted/sensitivity-x2").make()
    d0, d1 = data, data.with_target(0, float(data.y[0]) + 1.0)
    kw = dict(n=40_000)
    serial = audit_blackbox(mech, d0, d1, rng=np.random.default_rng(8), **kw)
    # min_draw_s = task_s = 0: every chunk after the timed first one goes to the workers,
    # one chunk per task, in every phase
    forced = BatchingExecutor(client, min_draw_s=0, task_s=0)
    remote = audit_blackbox(mech, d0, d1, rng=np.random.default_rng(8), executor=forced, **kw)
    assert forced.submitted > 4
    assert remote.estimate == serial.estimate
    assert remote.details["tests"] == serial.details["tests"]
    assert remote.details["tradeoff"] == serial.details["tradeoff"]


def test_sequential_audit_through_a_real_cluster_is_bit_identical(client):
    mech, data = get("P.2/laplace-sum").make()
    d0, d1 = data, data.with_target(0, float(data.y[0]) + 1.0)
    serial = audit_sequential(mech, [(d0, d1)], max_n=30_000, rng=np.random.default_rng(9))
    forced = BatchingExecutor(client, min_draw_s=0, task_s=0)
    remote = audit_sequential(mech, [(d0, d1)], max_n=30_000, rng=np.random.default_rng(9),
                              executor=forced)
    assert forced.submitted > 0
    assert remote.estimate == serial.estimate
    assert [r["log_wealth_at_claim"] for r in remote.details["rounds"]] == \
        [r["log_wealth_at_claim"] for r in serial.details["rounds"]]


def test_cheap_draws_stay_in_process_by_default(client):
    mech, data = get("P.1/gaussian-sum").make()
    d0, d1 = data, data.with_target(0, float(data.y[0]) + 1.0)
    auto = BatchingExecutor(client)
    r = audit_blackbox(mech, d0, d1, n=20_000, rng=np.random.default_rng(1), executor=auto)
    s = audit_blackbox(mech, d0, d1, n=20_000, rng=np.random.default_rng(1))
    assert r.estimate == s.estimate
    assert auto.submitted == 0  # a Gaussian draw costs far less than shipping its score
