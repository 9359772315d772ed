r"""Meta-train a DPConvCNP with the DP mechanism in the loop (catalogue R.4; R Alg. 1, §4.3).

CPU scale (the shipped checkpoints)
-----------------------------------
Exact command that produced the shipped checkpoints (one CPU thread, lowest
priority, under ten minutes each)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 nice -n 19 \
        python -m dpgp_audit.neural.train --generator matern --minutes 9.5 --seed 0 \
        --out dpgp_audit/neural/checkpoints/dpconvcnp_matern.pt

and the same with ``--generator eq`` and ``--generator sawtooth``
(``dpconvcnp_eq.pt``, ``dpconvcnp_sawtooth.pt``); ``mix`` trains the same way
but is not shipped. The wall-clock limit is the stop
criterion, so on a busy machine the number of steps (recorded in the checkpoint's
metadata with the command) is what varies. Every
training task draws a fresh context size N ~ U{1..300}, a budget ε ~ U[0.9, 4]
at δ = 1e-3 and fresh GP noise in the encoder, so the decoder learns to undo the
clipping and the DP noise (R Fig. 2). The best model on a fixed validation set
(exact GP draws) is kept, as in R App. E.1.

Paper scale (R App. E–F; needs a GPU to finish in hours)
--------------------------------------------------------
::

    python -m dpgp_audit.neural.train --paper-scale --generator matern --seed 0 \
        --device auto --out build/dpconvcnp_matern_paper.pt

``--paper-scale`` sets the settings of R App. E.1, E.3 and F (:data:`PAPER_SCALE`):
409,600 Adam steps of 16 tasks (6,553,600 tasks) at learning rate 3·10⁻⁴, context
sizes N ~ U{1..512}, 512 targets per task, a fixed validation set of 2,048 tasks
evaluated 200 times (every 2,048 steps; R's "every 32,768 updates" contradicts its own
count of 200 evaluations), learned privacy mappings t(μ, N) and C(μ, N), and no
wall-clock limit. R reports about 5 hours on one RTX 2080 Ti. Any explicit option
(``--max-steps``, ``--minutes``, ``--batch-size``, ...) overrides the preset, e.g.
``--paper-scale --max-steps 2000`` for a smoke test.

``--device auto`` (the default) trains on CUDA when ``torch.cuda.is_available()`` and on
the CPU otherwise; ``--device cuda`` on a machine without CUDA is a usage error. CUDA is
never required: the package depends only on a CPU build of PyTorch, and every checkpoint
loads on the CPU. The checkpoint's metadata stores the seed, every training setting, the
device, the step count, the validation and oracle NLLs and the command line.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
import time
from dataclasses import asdict

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from dpgp_audit.neural.dpconvcnp import DPConvCNP, DPConvCNPConfig  # noqa: E402
from dpgp_audit.neural.tasks import GENERATORS, TaskBatch, oracle_nll, sample_tasks  # noqa: E402

__all__ = ["CPU_SCALE", "PAPER_SCALE", "batch_nll", "main", "resolve_device", "train"]

CPU_SCALE: dict[str, object] = {
    "minutes": 8.0, "max_steps": 100_000, "batch_size": 16, "learning_rate": 1e-3,
    "eval_every": 200, "val_tasks": 48, "n_context": (1, 300), "n_target": 64,
    "learn_privacy_params": False,
}
"""Defaults of the command (the shipped CPU checkpoints; see the module docstring)."""

PAPER_SCALE: dict[str, object] = {
    "minutes": math.inf, "max_steps": 409_600, "batch_size": 16, "learning_rate": 3e-4,
    "eval_every": 2_048, "val_tasks": 2_048, "n_context": (1, 512), "n_target": 512,
    "learn_privacy_params": True,
}
"""R App. E.1 (409,600 steps × 16 tasks, N ~ U{1..512}, 512 targets, 2,048 validation
tasks evaluated 200 times), App. E.3 (Adam, lr 3·10⁻⁴) and App. F (learned t and C)."""


def resolve_device(device: str = "auto") -> torch.device:
    """``"auto"``: CUDA when available, else the CPU; ``"cpu"``; ``"cuda"`` (or ``"cuda:N"``)
    only when CUDA is available (``ValueError`` naming ``device`` otherwise).
    """
    name = str(device).strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r} but CUDA is not available here; use "
                             "device='auto' (falls back to the CPU) or 'cpu'")
        return torch.device(name)
    raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:N]', got {device!r}")


def _tensors(batch: TaskBatch, device: torch.device) -> tuple[torch.Tensor, ...]:
    def T(a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(a).to(device)
    return T(batch.xc), T(batch.yc), T(batch.mask), T(batch.xt), T(batch.mu)


def batch_nll(model: DPConvCNP, batch: TaskBatch, generator: torch.Generator | None = None
              ) -> torch.Tensor:
    """Mean target negative log-likelihood per task (B,) with fresh DP noise.

    Runs on the device of the model's parameters (``generator`` must live there too).
    """
    device = next(model.parameters()).device
    xc, yc, mask, xt, mu = _tensors(batch, device)
    mean, std = model(xc, yc, mask, xt, mu, generator=generator)
    yt = torch.as_tensor(batch.yt, dtype=torch.float32).to(device)
    return -torch.distributions.Normal(mean, std).log_prob(yt).mean(-1)


def train(generator: str, *, minutes: float, seed: int, batch_size: int = 16,
          learning_rate: float = 1e-3, max_steps: int = 100_000, eval_every: int = 200,
          config: DPConvCNPConfig | None = None, val_tasks: int = 48,
          n_context: tuple[int, int] = (1, 300), n_target: int = 64,
          device: str | torch.device = "cpu", log=print) -> tuple[DPConvCNP, dict]:
    """Train until ``minutes`` of wall time or ``max_steps``; return the best model and stats.

    The model is returned on the CPU. ``stats`` records the seed, every setting, the device,
    the steps reached and the best validation NLL beside the oracle's on the same tasks.
    """
    if max_steps < 1 or batch_size < 1 or eval_every < 1 or val_tasks < 1 or n_target < 1:
        raise ValueError("max_steps, batch_size, eval_every, val_tasks and n_target must be "
                         ">= 1")
    if not minutes > 0:
        raise ValueError(f"minutes must be > 0, got {minutes!r}")
    dev = device if isinstance(device, torch.device) else resolve_device(device)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = DPConvCNP(config).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=learning_rate)
    t_val = time.perf_counter()
    val = sample_tasks(generator, val_tasks, np.random.default_rng(10_000 + seed), exact=True,
                       n_context=tuple(n_context), n_target=n_target)
    val_gen = torch.Generator(device=dev)
    oracle = float(np.mean(oracle_nll(val)))
    # exact GP draws and oracle solves on the CPU: about 3 minutes at paper scale, before
    # the first step (measured beside an H200, docs/reproductions.md), so say what it was
    log(f"validation set: {val_tasks} exact tasks and their oracle NLL {oracle:.3f} "
        f"({time.perf_counter() - t_val:.0f}s, before the first step)")
    best: tuple[float, dict | None] = (math.inf, None)
    t0 = time.perf_counter()
    step = 0
    while step < max_steps and time.perf_counter() - t0 < 60.0 * minutes:
        batch = sample_tasks(generator, batch_size, rng, exact=False,
                             n_context=tuple(n_context), n_target=n_target)
        loss = batch_nll(model, batch).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        step += 1
        if step % eval_every == 0 or step == max_steps:
            with torch.no_grad():
                v = float(batch_nll(model, val, val_gen.manual_seed(seed + 1)).mean())
            if v < best[0]:
                best = (v, {k: t.detach().to("cpu").clone()
                            for k, t in model.state_dict().items()})
            log(f"step {step:6d}  train {float(loss.detach()):.3f}  val {v:.3f}  "
                f"oracle {oracle:.3f}  {time.perf_counter() - t0:.0f}s")
    model = model.to("cpu")
    if best[1] is not None:
        model.load_state_dict(best[1])
    model.eval()
    stats = {"generator": generator, "steps": step, "seconds": time.perf_counter() - t0,
             "val_nll": best[0] if best[0] < math.inf else None, "val_oracle_nll": oracle,
             "seed": seed, "batch_size": batch_size, "learning_rate": learning_rate,
             "max_steps": max_steps, "minutes": None if math.isinf(minutes) else minutes,
             "eval_every": eval_every, "val_tasks": val_tasks,
             "n_context": list(n_context), "n_target": n_target,
             "config": {k: (list(v) if isinstance(v, tuple) else v)
                        for k, v in asdict(model.config).items()},
             "device": str(dev),
             "device_name": (torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"),
             "torch": str(torch.__version__)}
    return model, stats


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m dpgp_audit.neural.train",
                                description=__doc__.split("\n")[0])
    p.add_argument("--generator", choices=GENERATORS, default="matern")
    p.add_argument("--paper-scale", action="store_true",
                   help="R App. E-F settings (409,600 steps, lr 3e-4, N ~ U{1..512}, 512 "
                        "targets, 2,048 validation tasks, learned t and C); explicit options "
                        "override them")
    p.add_argument("--device", default="auto", help="auto (CUDA if available, else CPU), cpu "
                                                     "or cuda[:N]")
    p.add_argument("--minutes", type=float, default=None, help="wall-clock limit")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--eval-every", type=int, default=None)
    p.add_argument("--val-tasks", type=int, default=None)
    p.add_argument("--max-context", type=int, default=None, help="N ~ U{1..max-context}")
    p.add_argument("--n-target", type=int, default=None)
    p.add_argument("--threads", type=int, default=1, help="CPU threads for torch")
    p.add_argument("--out", required=True)
    return p


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring for the exact commands)."""
    p = _parser()
    args = p.parse_args(argv)
    preset = dict(PAPER_SCALE if args.paper_scale else CPU_SCALE)
    overrides = {"minutes": args.minutes, "batch_size": args.batch_size,
                 "learning_rate": args.lr, "max_steps": args.max_steps,
                 "eval_every": args.eval_every, "val_tasks": args.val_tasks,
                 "n_target": args.n_target,
                 "n_context": None if args.max_context is None else (1, args.max_context)}
    settings = {**preset, **{k: v for k, v in overrides.items() if v is not None}}
    try:
        device = resolve_device(args.device)
    except ValueError as err:
        p.error(str(err))
    torch.set_num_threads(max(1, args.threads))
    try:  # lowest priority, whatever the caller did
        os.nice(19 - os.nice(0))
    except OSError:  # pragma: no cover - platform dependent
        pass
    config = DPConvCNPConfig(learn_privacy_params=bool(settings.pop("learn_privacy_params")))
    try:
        model, stats = train(args.generator, seed=args.seed, config=config, device=device,
                             **settings)  # type: ignore[arg-type]
    except ValueError as err:
        p.error(str(err))
    stats["paper_scale"] = bool(args.paper_scale)
    stats["command"] = "python -m dpgp_audit.neural.train " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    model.save(args.out, **stats)
    print({k: v for k, v in stats.items() if k != "config"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
