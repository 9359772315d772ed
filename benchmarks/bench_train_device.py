"""R.4 training on CUDA against the CPU: step time at paper scale, and the DP encoder's agreement.

The DPConvCNP's paper-scale run (R App. E-F: 409,600 Adam steps of 16 tasks, N ~ U{1..512},
512 targets, learned t and C) is documented as "needs a GPU"; this benchmark measures what
one step costs on each device, side by side in one process, and projects the full run:

* **step time** — :func:`dpgp_audit.neural.train.train` with the paper-scale settings
  (:data:`~dpgp_audit.neural.train.PAPER_SCALE`), run twice per device (``--warmup`` steps,
  then ``--warmup + --steps``): the difference of the two wall times over ``--steps`` is the
  time of one step without the fixed costs (validation tasks, start-up, the last
  evaluation). The CPU rows are the baseline: one thread (the kit's rule for headline
  numbers) and every core.
* **the DP release on CUDA** — the encoder (the only part that touches the context set,
  R Cor. 4.3) on CUDA against the CPU, on the same context sets and the same standard
  normals: the largest difference, in units of the noise's own sd — with fixed t and C
  (float64 throughout) it must be at rounding level; with learned t and C their float32
  networks differ in the last bits (:func:`encoder_check`); and the CUDA
  generator's standard normals (10⁶ of them) against N(0, 1): mean and variance within
  five standard errors.

Usage: ``python benchmarks/bench_train_device.py [--steps 200] [--warmup 20]
[--devices cpu1 cpu cuda] [--json out.json]``. Exit 1 when CUDA is present and the
encoder check fails; CUDA absent, its rows are skipped and said so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover - the neural extra is optional
    print("bench_train_device: skipped (PyTorch, the neural extra, is not installed)")
    sys.exit(0)

from dpgp_audit.neural.dpconvcnp import DPConvCNP, DPConvCNPConfig
from dpgp_audit.neural.tasks import sample_tasks
from dpgp_audit.neural.train import PAPER_SCALE, train

#: Tolerance of the encoder check, in noise sds: float64 rounding is about 1e-16 of the
#: values; anything near the noise scale would change what is released.
ENCODER_TOL_SD = 1e-9


def _settings() -> dict:
    s = dict(PAPER_SCALE)
    s.pop("minutes")
    s.pop("max_steps")
    s.pop("eval_every")
    s["val_tasks"] = 16  # the validation set is a fixed cost; the difference removes it
    return s


def step_seconds(device: str, threads: int, steps: int, warmup: int, seed: int) -> dict:
    """Seconds per paper-scale training step on ``device`` (difference of two runs)."""
    torch.set_num_threads(threads)
    s = _settings()
    cfg = DPConvCNPConfig(learn_privacy_params=bool(s.pop("learn_privacy_params")))
    quiet = lambda *_: None  # noqa: E731
    times = []
    for n in (warmup, warmup + steps):
        _, stats = train("matern", minutes=math.inf, seed=seed, max_steps=n, eval_every=n,
                         config=cfg, device=device, log=quiet, **s)
        times.append(stats["seconds"])
    per_step = (times[1] - times[0]) / steps
    return {"device": device, "threads": threads, "steps_timed": steps,
            "seconds_per_step": per_step,
            "paper_scale_hours": per_step * PAPER_SCALE["max_steps"] / 3600.0,
            "device_name": stats["device_name"], "torch": stats["torch"]}


def _encoder_diff(learned: bool, seed: int, device: str = "cuda") -> dict:
    """Largest ``device``-CPU difference of the DP representation, in noise sds, same normals."""
    cfg = DPConvCNPConfig(learn_privacy_params=learned)
    torch.manual_seed(seed)
    model = DPConvCNP(cfg)
    batch = sample_tasks("matern", 8, np.random.default_rng(seed), exact=False,
                         n_context=(1, 512), n_target=16)
    cpu = [torch.as_tensor(a) for a in (batch.xc, batch.yc, batch.mask, batch.mu)]
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn((cpu[0].shape[0], 2, model.encoder.grid.numel()), dtype=torch.float64,
                    generator=gen)
    n = cpu[2].double().sum(-1)
    with torch.no_grad():
        r_cpu = model.encoder(*cpu, z=z)
        t_cpu, c_cpu = model.encoder.privacy_params(cpu[3], n)
        enc = model.to(device).encoder
        r_gpu = enc(*(t.to(device) for t in cpu), z=z.to(device)).cpu()
        t_gpu, c_gpu = (v.cpu() for v in enc.privacy_params(cpu[3].to(device), n.to(device)))
    sd = r_cpu[:, 2:]  # the noise sds of the density and signal channels
    rel = lambda a, b: float(((a - b).abs() / b.abs()).max())  # noqa: E731
    return {"max_diff_in_noise_sd": float(((r_gpu[:, :2] - r_cpu[:, :2]).abs() / sd).max()),
            "t_rel_diff": rel(t_gpu, t_cpu), "C_rel_diff": rel(c_gpu, c_cpu)}


def encoder_check(seed: int, device: str = "cuda") -> dict:
    """The DP encoder on ``device`` against the CPU (same inputs, same normals), and its normals.

    With fixed t and C the encoder is float64 throughout and must agree to rounding
    (:data:`ENCODER_TOL_SD`). With learned t(μ, N) and C(μ, N) (R §4.3) the two small
    networks run in float32, so t and C (and with them σ_d, σ_s and the clip) differ between
    devices in the last float32 bits: reported, not a privacy difference — t and C are
    functions of the public (μ, N) only, and R eq. 12 gives μ-GDP for every t and C.
    """
    fixed, learned = _encoder_diff(False, seed, device), _encoder_diff(True, seed, device)
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(1_000_000, dtype=torch.float64, generator=g, device=device).cpu().numpy()
    se_mean, se_var = 1 / math.sqrt(x.size), math.sqrt(2 / x.size)
    z_mean, z_var = abs(float(x.mean())) / se_mean, abs(float(x.var()) - 1) / se_var
    ok = fixed["max_diff_in_noise_sd"] <= ENCODER_TOL_SD and z_mean < 5 and z_var < 5
    return {"fixed_t_C": fixed, "learned_t_C": learned, "tolerance_sd": ENCODER_TOL_SD,
            "cuda_normals_mean_z": z_mean, "cuda_normals_var_z": z_var, "ok": ok}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--devices", nargs="*", default=["cpu1", "cpu", "cuda"],
                    help="cpu1 (one thread), cpu (every core), cuda")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    cores = os.cpu_count() or 1
    print(f"torch {torch.__version__}; CUDA: "
          f"{torch.cuda.get_device_name(0) if cuda else 'not available'}; {cores} CPU cores")
    rows = []
    for dev in args.devices:
        if dev == "cuda" and not cuda:
            print("cuda: skipped (CUDA not available)")
            continue
        name, threads = ("cpu", 1) if dev == "cpu1" else (dev, cores if dev == "cpu" else 1)
        row = step_seconds(name, threads, args.steps, args.warmup, args.seed)
        rows.append(row)
        print(f"{dev:<5} threads {threads:>2}: {1e3 * row['seconds_per_step']:8.1f} ms/step, "
              f"paper scale ({PAPER_SCALE['max_steps']:,} steps) "
              f"{row['paper_scale_hours']:7.1f} h  [{row['device_name']}]", flush=True)
    check = encoder_check(args.seed) if cuda else {"skipped": "CUDA not available"}
    print("encoder on CUDA vs CPU:", check)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows, "encoder": check, "argv": sys.argv[1:]}, fh, indent=1)
    return 0 if check.get("ok", True) else 1


if __name__ == "__main__":
    sys.exit(main())
