"""R.4: DPConvCNP (PyTorch, optional) — encoder agrees with numpy DPSetConv, shapes, checkpoints."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dpgp_audit.dataset import Dataset
from dpgp_audit.methods.raisa.dpsetconv import DPSetConv, noise_scales
from dpgp_audit.neural.tasks import gaussian_nll, oracle_nll, oracle_predict, sample_tasks


def test_r4_core_does_not_import_torch():
    code = ("import sys, dpgp_audit, dpgp_audit.catalogue as r, dpgp_audit.neural, "
            "dpgp_audit.neural.tasks; r.entries(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_r4_tasks_and_oracle(rng):
    batch = sample_tasks("mix", 6, rng, n_context=(5, 40), n_target=20)
    assert batch.xc.shape[0] == 6 and batch.xt.shape == (6, 20)
    assert np.all(batch.mask.sum(1) >= 5) and np.all(np.abs(batch.xc) <= 1)
    nll = oracle_nll(batch)
    assert np.all(np.isfinite(nll))
    gp = [b for b in range(6) if batch.kernels[b] is not None]
    if gp:
        mean, std = oracle_predict(batch, gp[0])
        assert np.mean(gaussian_nll(batch.yt[gp[0]], mean, std)) == pytest.approx(nll[gp[0]])
    with pytest.raises(ValueError, match="generator"):
        sample_tasks("periodic", 2, rng)


torch = pytest.importorskip("torch")

from dpgp_audit.neural.dpconvcnp import (  # noqa: E402
    CHECKPOINT_DIR,
    DPConvCNP,
    DPConvCNPConfig,
    UNet1d,
    load_pretrained,
    predict_numpy,
)


def test_r4_torch_encoder_equals_numpy_dpsetconv(rng):
    """Same data, same standard normals: the torch encoder reproduces R Alg. 3 in numpy."""
    cfg = DPConvCNPConfig(lower=-1.0, upper=1.0, points_per_unit=16.0, lengthscale=0.3,
                          clip_bound=1.5, t=0.3)
    model = DPConvCNP(cfg)
    mu = 0.9
    ref = DPSetConv(cfg.grid(), cfg.lengthscale, cfg.clip_bound, mu, t=cfg.t, jitter=cfg.jitter)
    X = rng.uniform(-1, 1, 12)
    y = 2.0 * rng.standard_normal(12)  # some targets get clipped
    G = cfg.grid().size
    z = rng.standard_normal((2, G))
    expected = ref.channels(Dataset(X[:, None], y))
    sd, ss = noise_scales(mu, cfg.t, cfg.clip_bound)
    expected = expected + np.array([sd, ss])[:, None] * ref.sampler.apply(z)
    # pad with 3 fake points that the mask must ignore
    xc = torch.as_tensor(np.concatenate([X, [0.1, 0.2, 0.3]]))[None]
    yc = torch.as_tensor(np.concatenate([y, [50.0, -50.0, 9.0]]))[None]
    mask = torch.as_tensor(np.concatenate([np.ones(12), np.zeros(3)]))[None]
    out = model.encoder(xc, yc, mask, torch.tensor([mu], dtype=torch.float64),
                        z=torch.as_tensor(z)[None])
    np.testing.assert_allclose(out[0, :2].numpy(), expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out[0, 2].numpy(), sd)
    np.testing.assert_allclose(out[0, 3].numpy(), ss)
    with pytest.raises(ValueError, match="float64"):
        model.encoder(xc, yc, mask, torch.tensor([mu]))


def test_r4_learned_privacy_params_keep_the_budget():
    """Whatever t(μ, N) and C(μ, N) the networks output, σ's satisfy R eq. 12: μ² is spent."""
    model = DPConvCNP(DPConvCNPConfig(learn_privacy_params=True, points_per_unit=8.0))
    mu = torch.tensor([0.3, 1.0, 4.0], dtype=torch.float64)
    xc = torch.zeros(3, 5, dtype=torch.float64)
    mask = torch.ones(3, 5, dtype=torch.float64)
    out = model.encoder(xc, xc, mask, mu)
    t, C = model.encoder.privacy_params(mu, mask.sum(-1))
    sd, ss = out[:, 2, 0], out[:, 3, 0]
    assert torch.all((t > 0) & (t < 1)) and torch.all(C > 0)
    np.testing.assert_allclose((2 / sd**2 + 4 * C**2 / ss**2).detach().numpy(),
                               (mu**2).numpy(), rtol=1e-10)


@pytest.mark.parametrize("G", [129, 64, 37])
def test_r4_unet_keeps_length(G):
    net = UNet1d(4, (8, 16, 16), 5, 2)
    assert net(torch.zeros(2, 4, G)).shape == (2, 2, G)


def test_r4_forward_shapes_gradients_and_roundtrip(tmp_path, rng):
    cfg = DPConvCNPConfig(points_per_unit=8.0, channels=(8, 16))
    model = DPConvCNP(cfg)
    batch = sample_tasks("eq", 3, rng, n_context=(2, 10), n_target=7)
    T = torch.as_tensor
    mean, std = model(T(batch.xc), T(batch.yc), T(batch.mask), T(batch.xt), T(batch.mu))
    assert mean.shape == (3, 7) and torch.all(std > 0)
    (mean.sum() + std.sum()).backward()
    assert model.decoder.inp.weight.grad is not None
    path = tmp_path / "m.pt"
    model.save(path, note="x")
    loaded, meta = DPConvCNP.load(path)
    assert meta == {"note": "x"}
    z = T(rng.standard_normal((3, 2, cfg.grid().size)))
    with torch.no_grad():
        a = model(T(batch.xc), T(batch.yc), T(batch.mask), T(batch.xt), T(batch.mu), z=z)
        b = loaded(T(batch.xc), T(batch.yc), T(batch.mask), T(batch.xt), T(batch.mu), z=z)
    torch.testing.assert_close(a, b)


def test_r4_training_runs_a_few_steps():
    from dpgp_audit.neural.train import train

    logs: list[str] = []
    model, stats = train("sawtooth", minutes=1.0, seed=0, batch_size=4, max_steps=4,
                         eval_every=2, config=DPConvCNPConfig(points_per_unit=8.0,
                                                              channels=(8, 16)),
                         log=logs.append)
    assert stats["steps"] == 4 and stats["val_nll"] is not None
    # one line for the validation set (drawn before the first step), one per evaluation
    assert len(logs) == 3 and logs[0].startswith("validation set: 48 exact tasks")
    assert logs[1].startswith("step      2") and logs[2].startswith("step      4")


SHIPPED = sorted(CHECKPOINT_DIR.glob("dpconvcnp_*.pt"))


@pytest.mark.skipif(not SHIPPED, reason="no checkpoint shipped yet")
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_r4_shipped_checkpoints_load_small_and_documented(path, rng):
    assert path.stat().st_size < 5_000_000
    name = path.stem.removeprefix("dpconvcnp_")
    model, meta = load_pretrained(name)
    assert "python -m dpgp_audit.neural.train" in meta["command"]
    assert meta["seconds"] <= 600
    xc = rng.uniform(-1, 1, 30)
    mean, std = predict_numpy(model, xc, np.sin(3 * xc), np.linspace(-1, 1, 9), 1.0,
                              np.random.default_rng(0))
    mean2, _ = predict_numpy(model, xc, np.sin(3 * xc), np.linspace(-1, 1, 9), 1.0,
                             np.random.default_rng(0))
    np.testing.assert_array_equal(mean, mean2)
    assert mean.shape == (9,) and np.all(std > 0)
