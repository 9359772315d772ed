"""R.4 training command: device detection, the paper-scale preset, settings in the checkpoint."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from dpgp_audit.neural.dpconvcnp import DPConvCNP  # noqa: E402
from dpgp_audit.neural.train import PAPER_SCALE, main, resolve_device  # noqa: E402


def test_paper_scale_preset_matches_r_appendix_e():
    # R App. E.1: 6,553,600 tasks in batches of 16 = 409,600 steps; 200 validations of
    # 2,048 tasks; N ~ U[1, 512]; 512 targets. App. E.3: Adam, lr 3e-4. App. F: learned t, C.
    assert PAPER_SCALE["max_steps"] * PAPER_SCALE["batch_size"] == 6_553_600
    assert PAPER_SCALE["max_steps"] // PAPER_SCALE["eval_every"] == 200
    assert PAPER_SCALE["val_tasks"] == 2_048
    assert PAPER_SCALE["n_context"] == (1, 512) and PAPER_SCALE["n_target"] == 512
    assert PAPER_SCALE["learning_rate"] == 3e-4 and PAPER_SCALE["learn_privacy_params"]


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    with pytest.raises(ValueError, match="device"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


def test_paper_scale_smoke_run_stores_seed_and_settings(tmp_path):
    out = tmp_path / "m.pt"
    argv = ["--paper-scale", "--generator", "eq", "--seed", "3", "--max-steps", "2",
            "--eval-every", "1", "--val-tasks", "2", "--device", "cpu", "--out", str(out)]
    assert main(argv) == 0
    model, meta = DPConvCNP.load(out)
    assert meta["seed"] == 3 and meta["paper_scale"] is True and meta["device"] == "cpu"
    assert meta["steps"] == 2 and meta["max_steps"] == 2      # the override wins
    assert meta["learning_rate"] == 3e-4 and meta["n_context"] == [1, 512]
    assert meta["n_target"] == 512 and meta["config"]["learn_privacy_params"] is True
    assert model.config.learn_privacy_params
    assert meta["command"].endswith(" ".join(argv))


def test_cuda_request_without_cuda_is_a_usage_error(tmp_path, capsys):
    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    with pytest.raises(SystemExit) as exc:
        main(["--device", "cuda", "--out", str(tmp_path / "x.pt")])
    assert exc.value.code == 2
    assert "CUDA is not available" in capsys.readouterr().err
