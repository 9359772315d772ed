"""DPConvCNP in PyTorch (catalogue R.4; R §4.2, Alg. 3, App. F) — needs the ``neural`` extra.

Architecture (sized for a CPU):

1. **DPSetConv encoder** — the same mathematics as the numpy
   :class:`~dpgp_audit.methods.raisa.dpsetconv.DPSetConv` (R Alg. 3): clip targets to
   ``[−C, C]``, density and signal channels on a public 1-D grid with an RBF of
   lengthscale λ, plus independent GP noise ``σ_d g_d`` and ``σ_s g_s`` whose
   scales come from μ and the split t (R eq. 12). The noise square root is the
   numpy grid sampler's Cholesky factor (stored as a float64 buffer), so both
   implementations turn the same standard normals into the same noise. λ is
   fixed (the paper learns it; a fixed λ keeps the noise factor a constant).
   Optionally ``t(μ, N) = sigmoid(NN_t)`` and ``C(μ, N) = exp(NN_C)`` are learned
   by two small MLPs (R §4.3); N is public under substitution neighbours.
2. **Decoder CNN** — a 1-D UNet with skip connections (R App. F: an input
   convolution over [density, signal, σ_d, σ_s] — optionally also the ConvCNP's
   normalised channel signal / max(density, 1), post-processing and so free of
   privacy cost; it did not speed up short CPU training), strided convolutions down,
   transposed convolutions up, each concatenated with the matching skip).
3. **SetConv read-out** — a normalised RBF smoother from the grid to the target
   inputs of two channels: the predictive mean and the log standard deviation.

Everything after the encoder is post-processing of a μ-GDP release, so the
predictions are μ-GDP with respect to the context set (R Cor. 4.3).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

from dpgp_audit.gp.grid import Grid, KroneckerGridSampler
from dpgp_audit.methods.raisa.dpsetconv import rbf_factors

__all__ = [
    "CHECKPOINT_DIR",
    "DPConvCNP",
    "DPConvCNPConfig",
    "DPSetConvEncoder",
    "UNet1d",
    "load_pretrained",
    "predict_numpy",
]

CHECKPOINT_DIR = Path(__file__).with_name("checkpoints")


@dataclass(frozen=True)
class DPConvCNPConfig:
    """Hyperparameters of the DPConvCNP (defaults: R App. F scaled down for a CPU)."""

    lower: float = -2.0
    upper: float = 2.0
    points_per_unit: float = 32.0
    lengthscale: float = 0.2
    clip_bound: float = 2.0
    t: float = 0.5
    channels: tuple[int, ...] = (16, 32, 32, 64)
    kernel_size: int = 5
    jitter: float = 1e-9
    learn_privacy_params: bool = False
    input_scale: float = 0.1
    ratio_channel: bool = False

    def grid(self) -> Grid:
        """The public 1-D discretisation grid."""
        return Grid.from_window([self.lower], [self.upper], self.points_per_unit)


class DPSetConvEncoder(nn.Module):
    """R Alg. 3 in torch: clipped SetConv channels on the grid plus GP noise.

    Inputs are padded batches: ``xc, yc, mask`` of shape (B, N) and ``mu`` (B,).
    The output has shape (B, 4, G): density, signal, σ_d and σ_s (the last two
    as constant channels, R App. F).
    """

    def __init__(self, config: DPConvCNPConfig) -> None:
        super().__init__()
        self.config = config
        grid = config.grid()
        sampler = KroneckerGridSampler(grid, rbf_factors(1, config.lengthscale),
                                       jitter=config.jitter)
        self.register_buffer("grid", torch.as_tensor(grid.points()[:, 0], dtype=torch.float64))
        self.register_buffer("noise_root", torch.as_tensor(np.array(sampler.roots[0]),
                                                           dtype=torch.float64))
        if config.learn_privacy_params:
            self.t_net = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32),
                                       nn.ReLU(), nn.Linear(32, 1))
            self.c_net = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32),
                                       nn.ReLU(), nn.Linear(32, 1))

    def privacy_params(self, mu: torch.Tensor, n: torch.Tensor) -> tuple[torch.Tensor,
                                                                         torch.Tensor]:
        """``(t, C)`` per task: fixed values or the learned ``t(μ, N)``, ``C(μ, N)``."""
        if not self.config.learn_privacy_params:
            t = torch.full_like(mu, self.config.t)
            return t, torch.full_like(mu, self.config.clip_bound)
        feats = torch.stack([torch.log(mu), torch.log1p(n)], dim=-1).float()
        t = torch.sigmoid(self.t_net(feats)[..., 0]).double().clamp(0.02, 0.98)
        C = torch.exp(self.c_net(feats)[..., 0] + math.log(self.config.clip_bound)).double()
        return t, C

    def channels(self, xc: torch.Tensor, yc: torch.Tensor, mask: torch.Tensor,
                 clip_bound: torch.Tensor) -> torch.Tensor:
        """Noise-free density and signal (R eq. 10), float64, shape (B, 2, G)."""
        xc, yc, mask = xc.double(), yc.double(), mask.double()
        ytil = torch.maximum(torch.minimum(yc, clip_bound[:, None]), -clip_bound[:, None])
        w = torch.exp(-0.5 * ((self.grid[None, :, None] - xc[:, None, :])
                              / self.config.lengthscale) ** 2) * mask[:, None, :]
        return torch.stack([w.sum(-1), (w * ytil[:, None, :]).sum(-1)], dim=1)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor, mask: torch.Tensor, mu: torch.Tensor,
                *, z: torch.Tensor | None = None, generator: torch.Generator | None = None
                ) -> torch.Tensor:
        """The DP representation (B, 4, G), float64; ``z`` (B, 2, G) fixes the normals."""
        if mu.dtype != torch.float64:
            raise ValueError("mu must be a float64 tensor: rounding mu to float32 can shrink "
                             "the DP noise")
        n = mask.double().sum(-1)
        t, C = self.privacy_params(mu, n)
        sigma_d = torch.sqrt(2.0 / ((1.0 - t) * mu**2))          # R eq. (12), C_k = 1
        sigma_s = torch.sqrt(4.0 * C**2 / (t * mu**2))
        r = self.channels(xc, yc, mask, C)
        if z is None:
            z = torch.randn(r.shape, dtype=torch.float64, generator=generator,
                            device=r.device)
        noise = z.double() @ self.noise_root.T                   # g = L z per channel
        r = r + torch.stack([sigma_d, sigma_s], dim=1)[:, :, None] * noise
        sig = torch.stack([sigma_d, sigma_s], dim=1)[:, :, None].expand_as(r)
        return torch.cat([r, sig], dim=1)


class UNet1d(nn.Module):
    """A bare-bones 1-D UNet with skip connections (R App. F), padded to a multiple of 2^L."""

    def __init__(self, in_channels: int, channels: tuple[int, ...], kernel_size: int,
                 out_channels: int) -> None:
        super().__init__()
        k, p = kernel_size, kernel_size // 2
        self.inp = nn.Conv1d(in_channels, channels[0], k, padding=p)
        self.downs = nn.ModuleList(nn.Conv1d(channels[i], channels[i + 1], k, stride=2, padding=p)
                                   for i in range(len(channels) - 1))
        ups = []
        for j in reversed(range(len(channels) - 1)):
            c_in = channels[j + 1] if j == len(channels) - 2 else 2 * channels[j + 1]
            ups.append(nn.ConvTranspose1d(c_in, channels[j], k, stride=2, padding=p,
                                          output_padding=1))
        self.ups = nn.ModuleList(ups)
        self.out = nn.Conv1d(2 * channels[0], out_channels, 1)
        self.levels = len(channels) - 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # noqa: D102
        G = x.shape[-1]
        mult = 2**self.levels
        pad = (-G) % mult
        h = F.relu(self.inp(F.pad(x, (0, pad))))
        skips = []
        for down in self.downs:
            skips.append(h)
            h = F.relu(down(h))
        for up, skip in zip(self.ups, reversed(skips), strict=True):
            h = torch.cat([F.relu(up(h)), skip], dim=1)
        return self.out(h)[..., :G]


class DPConvCNP(nn.Module):
    """R.4: DPSetConv encoder → UNet decoder → SetConv read-out of mean and log-std."""

    def __init__(self, config: DPConvCNPConfig | None = None) -> None:
        super().__init__()
        self.config = DPConvCNPConfig() if config is None else config
        self.encoder = DPSetConvEncoder(self.config)
        n_in = 5 if self.config.ratio_channel else 4
        self.decoder = UNet1d(n_in, tuple(self.config.channels), self.config.kernel_size, 2)
        spacing = 1.0 / self.config.points_per_unit
        self.log_readout_lengthscale = nn.Parameter(torch.tensor(math.log(2.0 * spacing)))

    def forward(self, xc: torch.Tensor, yc: torch.Tensor, mask: torch.Tensor, xt: torch.Tensor,
                mu: torch.Tensor, *, z: torch.Tensor | None = None,
                generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Predictive mean and standard deviation at ``xt`` (B, T)."""
        rep = self.encoder(xc, yc, mask, mu, z=z, generator=generator).float()
        feats = rep * self.config.input_scale
        if self.config.ratio_channel:  # post-processing: signal / density, as in the ConvCNP
            ratio = rep[:, 1:2] / torch.clamp(rep[:, 0:1], min=1.0)
            feats = torch.cat([feats, ratio], dim=1)
        h = self.decoder(feats)                                    # (B, 2, G)
        grid = self.encoder.grid.float()
        ls = torch.exp(self.log_readout_lengthscale)
        w = torch.exp(-0.5 * ((xt.float()[:, :, None] - grid[None, None, :]) / ls) ** 2)
        w = w / (w.sum(-1, keepdim=True) + 1e-12)                  # normalised SetConv
        out = torch.einsum("btg,bcg->bct", w, h)
        mean = out[:, 0]
        std = 1e-3 + torch.exp(out[:, 1].clamp(-7.0, 4.0))
        return mean, std

    def save(self, path: str | Path, **metadata: object) -> None:
        """Save weights, configuration and metadata (e.g. the training command)."""
        torch.save({"config": asdict(self.config), "state_dict": self.state_dict(),
                    "metadata": metadata}, path)

    @classmethod
    def load(cls, path: str | Path) -> tuple[DPConvCNP, dict]:
        """Load a checkpoint written by :meth:`save`; returns the model and its metadata."""
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
        cfg = dict(ckpt["config"])
        cfg["channels"] = tuple(cfg["channels"])
        cfg.setdefault("ratio_channel", False)  # checkpoints written before the option
        model = cls(DPConvCNPConfig(**cfg))
        model.load_state_dict(ckpt["state_dict"])
        model.eval()
        return model, dict(ckpt.get("metadata", {}))


def load_pretrained(name: str = "matern") -> tuple[DPConvCNP, dict]:
    """A shipped checkpoint: ``"matern"`` (sim-to-real), ``"eq"`` or ``"sawtooth"``.

    See ``dpgp_audit/neural/checkpoints/README.md`` for how each was trained.
    """
    path = CHECKPOINT_DIR / f"dpconvcnp_{name}.pt"
    if not path.exists():
        known = sorted(p.stem.removeprefix("dpconvcnp_") for p in CHECKPOINT_DIR.glob("*.pt"))
        raise FileNotFoundError(f"no pretrained DPConvCNP {name!r}; shipped: {known}")
    return DPConvCNP.load(path)


def predict_numpy(model: DPConvCNP, xc: np.ndarray, yc: np.ndarray, xt: np.ndarray, mu: float,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One private prediction for a single context set (numpy in, numpy out).

    The GP noise is drawn from ``rng`` (numpy) so results are reproducible with
    the kit's generator convention.
    """
    xc = np.asarray(xc, dtype=float).ravel()
    yc = np.asarray(yc, dtype=float).ravel()
    xt = np.asarray(xt, dtype=float).ravel()
    G = model.encoder.grid.shape[0]
    z = torch.as_tensor(rng.standard_normal((1, 2, G)))
    with torch.no_grad():
        mean, std = model(torch.as_tensor(xc)[None], torch.as_tensor(yc)[None],
                          torch.ones(1, xc.size, dtype=torch.float64),
                          torch.as_tensor(xt)[None],
                          torch.tensor([float(mu)], dtype=torch.float64), z=z)
    return mean[0].double().numpy(), std[0].double().numpy()
