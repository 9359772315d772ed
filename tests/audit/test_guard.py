"""Issue 20 §1: a verdict is a function of the inputs, never of the load (catalogue A.6, A.8).

* :class:`~dpgp_audit.audit.guard.TimeGuard` fires only past its limit, and when it stops
  an audit the report is ``INCONCLUSIVE`` and says so — driven here by fake clocks, so
  nothing depends on this machine's speed;
* the same seed gives the same report, once on a quiet machine and once beside a CPU hog
  (a busy-loop subprocess), for the library's default path and for
  ``python -m dpgp_audit audit --mechanism …`` (JSON compared without its timing keys).
  The fast versions use a small draw cap; the slow ones the default caps.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpgp_audit.audit.guard import TimeGuard, check_guard_s
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.catalogue import get
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.methods.toolbox.primitives import GaussianSumMechanism

ROOT = Path(__file__).resolve().parents[2]


def clock_free(doc: object) -> object:
    """A report (or CLI JSON document) without what may depend on the machine: timings."""
    if isinstance(doc, dict):
        return {k: clock_free(v) for k, v in doc.items()
                if k != "timings" and not k.startswith("seconds")}
    if isinstance(doc, list):
        return [clock_free(v) for v in doc]
    return doc


@contextlib.contextmanager
def cpu_hog():
    """A busy-loop subprocess beside the test (killed on exit, by its own pid)."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield hog
    finally:
        hog.kill()
        hog.wait()


# ----------------------------------------------------------------------------- the guard
def test_guard_fires_only_past_its_limit_and_records_where():
    now = [0.0]
    guard = TimeGuard(10.0, clock=lambda: now[0])
    assert not guard.expired() and not guard()
    now[0] = 10.0
    assert not guard.expired()  # strictly past the limit
    now[0] = 10.5
    assert guard.expired() and guard()
    note = guard.record("blackbox", "round 3", draws=512, rerun="max_n=512")
    assert guard.fired == [note]
    assert note["limit_s"] == 10.0 and note["draws"] == 512
    assert "stopped by the time guard (10 s) during round 3 at 512 draws" in note["message"]
    assert "INCONCLUSIVE" in note["message"] and "max_n=512" in note["message"]
    never = TimeGuard(None, clock=lambda: 1e12)
    assert not never.expired()


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), True, "10"])
def test_guard_seconds_are_validated(bad):
    with pytest.raises(ValueError, match="time_guard_s"):
        check_guard_s("time_guard_s", bad)
    assert check_guard_s("time_guard_s", None) is None
    assert check_guard_s("time_guard_s", float("inf")) is None


class SlowClockGaussian(GaussianSumMechanism):
    """P.1, whose every sample() call advances a shared fake clock by a second per 1000 draws."""

    now = [0.0]

    def sample(self, data, n, rng):
        SlowClockGaussian.now[0] += n / 1000.0
        return super().sample(data, n, rng)


def test_the_guard_stops_the_blackbox_part_explicitly_inconclusive():
    mech = SlowClockGaussian(d=1.0, epsilon=1.0, delta=1e-5)
    SlowClockGaussian.now[0] = 0.0
    rep = audit_mechanism(mech, default_dataset(), np.random.default_rng(3),
                          auditors=("whitebox", "blackbox"), n=200_000, time_guard_s=30.0,
                          clock=lambda: SlowClockGaussian.now[0])
    bb = rep.result("blackbox")
    assert bb.verdict is Verdict.INCONCLUSIVE and bb.details["stopped"] == "time_guard"
    assert bb.details["time_guard"]["draws"] == bb.details["n_per_side"] < 200_000
    # the exact white-box result is NO_EVIDENCE, but the report is not: the guard fired
    assert rep.result("whitebox").verdict is Verdict.NO_EVIDENCE
    assert rep.guard_fired and rep.verdict is Verdict.INCONCLUSIVE
    assert rep.guard["fired"][0]["part"] == "blackbox"
    assert "TIME GUARD" in rep.table() and "stopped by the time guard" in rep.table()
    assert rep.as_dict()["guard"]["time_guard_s"] == 30.0


class TenSecondsACall(GaussianSumMechanism):
    """P.1, whose every sample() call advances a fake clock by ten seconds, and counts."""

    now = [0.0]
    calls = [0]

    def sample(self, data, n, rng):
        TenSecondsACall.now[0] += 10.0
        TenSecondsACall.calls[0] += 1
        return super().sample(data, n, rng)


def test_the_independence_probe_stops_at_the_guard_and_the_report_says_it_fired():
    mech = TenSecondsACall(d=1.0, epsilon=1.0, delta=1e-5)
    TenSecondsACall.now[0], TenSecondsACall.calls[0] = 0.0, 0
    rep = audit_mechanism(mech, default_dataset(), np.random.default_rng(3),
                          auditors=("blackbox",), n=20_000, time_guard_s=30.0,
                          clock=lambda: TenSecondsACall.now[0])
    # the probe's 34 calls would be 340 fake seconds: it stops once the guard has fired
    assert TenSecondsACall.calls[0] <= 5
    assert rep.guard_fired and rep.verdict is Verdict.INCONCLUSIVE


def test_a_violation_stands_when_the_guard_fires_afterwards():
    # the sensitivity witness and the exact auditor certify first; the guard then stops the
    # sample-based parts, which cannot weaken a certified violation
    from dpgp_audit.bugs.calibration import build_std_as_variance

    mech = build_std_as_variance(default_dataset(), epsilon=1.0, delta=1e-5)
    ticks = itertools.count(step=100)
    # every read of the clock is 100 s: the state probe reads it up to six times before the
    # parts start (between its calls), and the guard fires in the black-box part after them
    rep = audit_mechanism(mech, default_dataset(), np.random.default_rng(1),
                          auditors=("whitebox", "blackbox"), n=50_000, time_guard_s=850.0,
                          clock=lambda: float(next(ticks)))
    assert rep.result("whitebox").violation
    assert rep.guard_fired and rep.verdict is Verdict.VIOLATION


# ----------------------------------------------------------------------------- load
def _library(mech_id: str, seed: int, **kw) -> dict:
    mech, data = get(mech_id).make()
    rep = audit_mechanism(mech, data, np.random.default_rng(seed), seed=seed, **kw)
    return clock_free(rep.as_dict())  # type: ignore[return-value]


def _cli(mech_id: str, seed: int, tmp: Path, *extra: str) -> dict:
    js = tmp / f"{os.getpid()}-{mech_id.replace('/', '_')}-{len(list(tmp.iterdir()))}.json"
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)
    proc = subprocess.run([sys.executable, "-m", "dpgp_audit", "audit", "--mechanism", mech_id,
                           "--seed", str(seed), "--no-progress", "--json", str(js), *extra],
                          env=env, capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1, 4), proc.stderr
    doc = json.loads(js.read_text())
    assert doc["exit_code"] == proc.returncode
    doc["arguments"].pop("json")  # the output path, not a result
    return clock_free(doc)  # type: ignore[return-value]


@pytest.mark.parametrize(("mech_id", "n"), [("P.2/laplace-sum", 4_000),
                                             ("planted/laplace-log", 20_000)])
def test_same_seed_same_report_quiet_and_beside_a_cpu_hog(mech_id, n, tmp_path):
    """Fast version: a cap of 4 000 draws per side and pair, library and CLI (a clean run:
    every round to the cap is drawn, and every auditor of the default path runs); and a
    textbook float release at 20 000, where A.7's float-support test (its draws reach
    SUPPORT_MIN_N) pilots, certifies and flags it (issue 20 §4)."""
    kw = {"n": n}
    quiet_lib = _library(mech_id, 11, **kw)
    quiet_cli = _cli(mech_id, 11, tmp_path, "--samples", str(n))
    with cpu_hog():
        busy_lib = _library(mech_id, 11, **kw)
        busy_cli = _cli(mech_id, 11, tmp_path, "--samples", str(n))
    assert busy_lib == quiet_lib
    assert busy_cli == quiet_cli
    assert quiet_lib["guard"]["fired"] == []
    if mech_id.startswith("planted/"):  # the support test ran and is what flagged it
        prec = next(r for r in quiet_lib["results"] if r["auditor"] == "precision")
        assert prec["verdict"] == "VIOLATION" and prec["details"]["support_certified"]


@pytest.mark.slow
@pytest.mark.parametrize("mech_id", ["P.1/gaussian-sum", "A.5/svt", "planted/svt-no-cutoff",
                                     "planted/laplace-l2", "A.5/gp-smoother-iso",
                                     "planted/gaussian-box-muller"])
def test_same_seed_same_report_quiet_and_beside_a_cpu_hog_at_the_default_caps(mech_id,
                                                                             tmp_path):
    """Slow version: the default path itself (library defaults, CLI defaults)."""
    quiet_lib = _library(mech_id, 7)
    quiet_cli = _cli(mech_id, 7, tmp_path)
    with cpu_hog():
        busy_lib = _library(mech_id, 7)
        busy_cli = _cli(mech_id, 7, tmp_path)
    assert busy_lib == quiet_lib
    assert busy_cli == quiet_cli
