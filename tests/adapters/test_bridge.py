"""A.10: a library in its own virtualenv, through a child process (VenvBridge)."""

from __future__ import annotations

import site
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dpgp_audit import Dataset, PublicDomain, PureDP, outputs_only
from dpgp_audit.adapters import bridged
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.contract import GaussianRelease

DATA = Dataset(np.linspace(0, 1, 8), np.linspace(-1, 1, 8))
CLAIM = PureDP(epsilon=1.0, relation=outputs_only(2.0), domain=PublicDomain(y_bound=1.0))

LIBRARY = textwrap.dedent('''
    """A stand-in library of another environment: numpy's legacy global state, prints."""
    import numpy as np

    def laplace_sum(data, n):
        print("library chatter on stdout")  # must not corrupt the protocol
        return float(np.sum(data.y)) + np.random.laplace(0.0, 2.0, size=n)

    def refuses(data):
        raise ValueError("y outside [-1, 1]")

    def crashes(data):
        raise ZeroDivisionError("library bug")

    def hangs(data):
        import time
        if data.y[0] > 0:  # a call that never returns (a lock, a prompt on stdin, ...)
            time.sleep(60)
        return float(np.sum(data.y)) + np.random.laplace(0.0, 2.0)

    class Gauss:
        def __init__(self, sigma):
            self.sigma = sigma
        def __call__(self, data, n):
            return np.sum(data.y) + self.sigma * np.random.standard_normal((n, 1))
        def mean(self, data):
            return np.array([np.sum(data.y)])
        def cov(self, data):
            return np.array([[self.sigma ** 2]])
''')


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A tiny virtualenv made from this interpreter (no network): numpy via a .pth file."""
    root = tmp_path_factory.mktemp("bridge")
    env = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    ask = "import site; print(site.getsitepackages()[0])"
    child_site = subprocess.run([str(python), "-c", ask], check=True, capture_output=True,
                                text=True).stdout.strip()
    with open(f"{child_site}/parent.pth", "w") as fh:  # this environment's numpy, read-only
        fh.write("\n".join(site.getsitepackages()) + "\n")
    lib = root / "stand_in_lib.py"
    lib.write_text(LIBRARY)
    return str(python), str(lib)


def test_A10_bridge_is_reproducible_and_one_process(venv):
    python, lib = venv
    mech = bridged(python, f"{lib}:laplace_sum", CLAIM, seeding="numpy_global", vectorised=True)
    try:
        pid = mech.bridge.pid
        a = mech.sample(DATA, 500, np.random.default_rng(4))
        b = mech.sample(DATA, 500, np.random.default_rng(4))
        c = mech.sample(DATA, 500, np.random.default_rng(5))
        assert mech.bridge.pid == pid  # one child for every call
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c) and a.shape == (500, 1)
        # the same seed words give the same draws as the in-process adapter would
        from dpgp_audit.adapters import adapt

        def local(data, n):
            return float(np.sum(data.y)) + np.random.laplace(0.0, 2.0, size=n)  # noqa: NPY002

        here = adapt(local, CLAIM, seeding="numpy_global", vectorised=True)
        np.testing.assert_allclose(here.sample(DATA, 500, np.random.default_rng(4)), a)
        assert mech.cost_per_draw_s is not None and mech.reproducible
        assert mech.bridge.info["sha256"] and mech.bridge.info["pid"] == pid
    finally:
        mech.close()


def test_A10_bridge_errors_are_named(venv):
    python, lib = venv
    with pytest.raises(ValueError, match="no such file"):
        bridged(python, "/nonexistent/lib.py:f", CLAIM, seeding="numpy_global")
    with pytest.raises(ValueError, match="not an executable interpreter"):
        bridged("/nonexistent/python", f"{lib}:refuses", CLAIM, seeding="numpy_global")
    mech = bridged(python, f"{lib}:refuses", CLAIM, seeding="numpy_global")
    try:
        with pytest.raises(ValueError, match="outside"):  # a refused dataset stays a ValueError
            mech.sample(DATA, 3, np.random.default_rng(0))
    finally:
        mech.close()
    bad = bridged(python, f"{lib}:crashes", CLAIM, seeding="numpy_global")
    try:
        with pytest.raises(RuntimeError, match="ZeroDivisionError: library bug"):
            bad.sample(DATA, 3, np.random.default_rng(0))
    finally:
        bad.close()


def test_A10_bridge_time_guard_kills_a_hung_call_and_says_so(venv):
    import time

    from dpgp_audit.adapters.bridge import BridgeTimeout

    python, lib = venv
    with pytest.raises(ValueError, match="call_timeout_s"):
        bridged(python, f"{lib}:hangs", CLAIM, seeding="numpy_global", call_timeout_s=0)
    mech = bridged(python, f"{lib}:hangs", CLAIM, seeding="numpy_global", call_timeout_s=2.0)
    try:
        first = mech.bridge.pid
        hung = Dataset(DATA.X, -DATA.y)  # y[0] = +1: the library sleeps 60 s
        t0 = time.monotonic()
        with pytest.raises(BridgeTimeout, match="time guard: .*did not answer within 2 s"):
            mech.sample(hung, 1, np.random.default_rng(0))
        assert time.monotonic() - t0 < 30  # the guard fired, not the library's return
        # the killed child is replaced on the next call, which answers
        out = mech.sample(DATA, 2, np.random.default_rng(0))
        assert out.shape == (2, 1) and mech.bridge.pid != first
    finally:
        mech.close()


def test_A10_bridge_offers_the_targets_gaussian_model_and_audits(venv):
    python, lib = venv
    # sigma = 1 for a sum whose sensitivity is 2: mu = 2, far above the claim's level
    mech = bridged(python, f"{lib}:Gauss", PureDP(epsilon=1.0, relation=outputs_only(2.0),
                                                   domain=PublicDomain(y_bound=1.0)),
                   seeding="numpy_global", vectorised=True, kwargs={"sigma": 1.0})
    try:
        assert isinstance(mech, GaussianRelease)
        np.testing.assert_allclose(mech.cov(DATA), [[1.0]])
        report = audit_mechanism(mech, DATA, np.random.default_rng(0), n=4_000)
        assert report.violation and report.result("whitebox").violation
    finally:
        mech.close()
