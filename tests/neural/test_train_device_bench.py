"""benchmarks/bench_train_device.py (R.4 on CUDA against the CPU): its arithmetic and checks.

The benchmark runs on a GPU only where one is lent; here its CPU paths are exercised so a
change to the training code cannot break it unseen, and its encoder check is shown to pass
exactly when the two devices are the same and to fail when the release differs.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_train_device.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_train_device", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_train_device"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_step_time_projects_the_paper_scale_run(bench):
    from dpgp_audit.neural.train import PAPER_SCALE

    row = bench.step_seconds("cpu", 1, steps=2, warmup=1, seed=0)
    # two steps give a noisy difference of wall times (its sign included): only the
    # arithmetic of the projection is checked here, the timing is the benchmark's business
    assert row["steps_timed"] == 2 and row["device_name"] == "cpu"
    assert row["paper_scale_hours"] == pytest.approx(
        row["seconds_per_step"] * PAPER_SCALE["max_steps"] / 3600)


def test_encoder_check_is_exact_on_the_same_device(bench):
    out = bench.encoder_check(0, device="cpu")
    for part in ("fixed_t_C", "learned_t_C"):
        assert out[part] == {"max_diff_in_noise_sd": 0.0, "t_rel_diff": 0.0, "C_rel_diff": 0.0}
    assert out["ok"] and out["cuda_normals_mean_z"] < 5 and out["cuda_normals_var_z"] < 5


def test_encoder_check_fails_when_the_release_differs(bench, monkeypatch):
    # a device whose encoder adds a hundredth of the noise sd to the release must fail
    from dpgp_audit.neural.dpconvcnp import DPSetConvEncoder

    calls = {"n": 0}
    forward = DPSetConvEncoder.forward

    def shifted(self, *args, **kw):
        r = forward(self, *args, **kw)
        calls["n"] += 1
        if calls["n"] % 2 == 0:  # the second call of each pair is the "device" side
            r = r.clone()
            r[:, :2] += 0.01 * r[:, 2:]
        return r

    monkeypatch.setattr(DPSetConvEncoder, "forward", shifted)
    out = bench.encoder_check(0, device="cpu")
    assert out["fixed_t_C"]["max_diff_in_noise_sd"] == pytest.approx(0.01)
    assert not out["ok"]
