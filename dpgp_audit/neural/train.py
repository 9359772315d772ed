r"""Meta-train a DPConvCNP with the DP mechanism in the loop (catalogue R.4; R Alg. 1, §4.3).

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
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from dpgp_audit.neural.dpconvcnp import DPConvCNP, DPConvCNPConfig  # noqa: E402
from dpgp_audit.neural.tasks import GENERATORS, TaskBatch, oracle_nll, sample_tasks  # noqa: E402

__all__ = ["batch_nll", "main", "train"]


def _tensors(batch: TaskBatch) -> tuple[torch.Tensor, ...]:
    T = torch.as_tensor
    return T(batch.xc), T(batch.yc), T(batch.mask), T(batch.xt), T(batch.mu)


def batch_nll(model: DPConvCNP, batch: TaskBatch, generator: torch.Generator | None = None
              ) -> torch.Tensor:
    """Mean target negative log-likelihood per task (B,) with fresh DP noise."""
    xc, yc, mask, xt, mu = _tensors(batch)
    mean, std = model(xc, yc, mask, xt, mu, generator=generator)
    yt = torch.as_tensor(batch.yt, dtype=torch.float32)
    return -torch.distributions.Normal(mean, std).log_prob(yt).mean(-1)


def train(generator: str, *, minutes: float, seed: int, batch_size: int = 16,
          learning_rate: float = 1e-3, max_steps: int = 100_000, eval_every: int = 200,
          config: DPConvCNPConfig | None = None, log=print) -> tuple[DPConvCNP, dict]:
    """Train until ``minutes`` of wall time (or ``max_steps``); return the best model and stats."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = DPConvCNP(config)
    opt = torch.optim.Adam(model.parameters(), lr=learning_rate)
    val = sample_tasks(generator, 48, np.random.default_rng(10_000 + seed), exact=True)
    val_gen = torch.Generator().manual_seed(seed + 1)
    oracle = float(np.mean(oracle_nll(val)))
    math_inf = float("inf")
    best: tuple[float, dict | None] = (math_inf, None)
    t0 = time.perf_counter()
    step = 0
    while step < max_steps and time.perf_counter() - t0 < 60.0 * minutes:
        batch = sample_tasks(generator, batch_size, rng, exact=False)
        loss = batch_nll(model, batch).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        step += 1
        if step % eval_every == 0:
            with torch.no_grad():
                v = float(batch_nll(model, val, val_gen.manual_seed(seed + 1)).mean())
            if v < best[0]:
                best = (v, {k: t.clone() for k, t in model.state_dict().items()})
            log(f"step {step:6d}  train {float(loss.detach()):.3f}  val {v:.3f}  "
                f"oracle {oracle:.3f}  {time.perf_counter() - t0:.0f}s")
    if best[1] is not None:
        model.load_state_dict(best[1])
    model.eval()
    stats = {"generator": generator, "steps": step, "seconds": time.perf_counter() - t0,
             "val_nll": best[0] if best[0] < math_inf else None, "val_oracle_nll": oracle,
             "seed": seed, "batch_size": batch_size, "learning_rate": learning_rate,
             "torch": str(torch.__version__)}
    return model, stats


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring for the exact command)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--generator", choices=GENERATORS, default="matern")
    p.add_argument("--minutes", type=float, default=8.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--max-steps", type=int, default=100_000)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    try:  # lowest priority, whatever the caller did
        os.nice(19 - os.nice(0))
    except OSError:  # pragma: no cover - platform dependent
        pass
    model, stats = train(args.generator, minutes=args.minutes, seed=args.seed,
                         batch_size=args.batch_size, learning_rate=args.lr,
                         max_steps=args.max_steps)
    stats["command"] = "python -m dpgp_audit.neural.train " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    model.save(args.out, **stats)
    print({k: v for k, v in stats.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
