"""`make audit` as a user runs it: verdicts over seeds, quiet and beside a CPU hog (issue 20 §3).

Three measurements, each on this machine with BLAS left at the defaults a user has:

``--verdicts`` (the default)
    For every seed of ``--seeds`` (drawn from ``--base-seed``) and each condition — quiet,
    and beside one CPU-bound process (``python -c "while 1: pass"``) — every catalogued
    mechanism is audited the way ``make audit MECH=ID SEED=S`` audits it:
    ``python -m dpgp_audit audit --mechanism ID --seed S`` (in this process through
    ``dpgp_audit.cli.main``, the same code path without the interpreter start; with
    ``--subprocess`` as a separate process). Targets: every planted bug flagged on every
    seed (``planted/exp-no-half-monotone`` is a private control and must stay clean), every
    correct mechanism clean on every seed, and the same verdicts in both conditions (a
    verdict is a function of the seed, not of the load). ``--only`` restricts the IDs,
    ``--planted-only`` to the planted bugs; ``--evidence`` audits with that thorough setting
    (``make audit EVIDENCE=1``).
``--all-timing``
    Wall time of ``python -m dpgp_audit audit --all --seed S`` (a fresh process each, what
    ``make audit`` runs), quiet or beside the hog (``--no-hog``). Target: under 60 s. Also
    measured, for the runner's one-BLAS-thread default: one fixed-n audit of S21.3 two-step
    with BLAS at its default thread count and with ``blas_threads=1``.
``--costs``
    Seconds per draw of every entry (one warm call of 64–65 536 draws) against its
    mechanism's declared cost (``declared_cost_per_draw_s``, one of
    :data:`~dpgp_audit.contract.COST_CLASSES`; ``"vectorised"`` where it declares none):
    an entry slower than its declaration would make its draw caps (``Entry.draw_cap``,
    ``audit_mechanism``'s default) take longer than planned. Flags such entries; nothing
    else depends on these timings.

Usage: ``python benchmarks/bench_make_audit.py [--verdicts] [--seeds 20] [--base-seed 2026]
[--only ID ...] [--planted-only] [--conditions quiet hog] [--subprocess]``,
``python benchmarks/bench_make_audit.py --all-timing [--runs 3] [--no-hog] [--jobs J]`` or
``python benchmarks/bench_make_audit.py --costs``. Exit 1 on a missed target.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TARGET_S = 60.0
_BLAS_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
#: Planted entries that are private by construction (controls), expected clean.
PRIVATE_PLANTED = ("planted/exp-no-half-monotone",)


_CAUSE = """
import sys, time, numpy as np
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.catalogue import get
mech, data = get("S21.3/laplace-classification-two-step").make()
threads = None if sys.argv[1] == "default" else int(sys.argv[1])
t = time.perf_counter()
audit_mechanism(mech, data, np.random.default_rng(1), n=200, mode="fixed", blas_threads=threads)
print(time.perf_counter() - t)
"""


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _BLAS_VARS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


@contextlib.contextmanager
def _hog(on: bool):
    proc = subprocess.Popen([sys.executable, "-c", "while 1: pass"]) if on else None
    try:
        yield
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()


def _audit_one(mech_id: str, seed: int, tmp: pathlib.Path, in_process: bool,
               extra: tuple[str, ...] = ()) -> tuple[str, dict]:
    """One ``make audit MECH=ID SEED=S`` (``extra``: more flags, e.g. ``--evidence``): the
    overall verdict and the black-box details."""
    js = tmp / f"{abs(hash((mech_id, seed))) % 10**9}.json"
    argv = ["audit", "--mechanism", mech_id, "--seed", str(seed), "--no-progress",
            "--json", str(js), *extra]
    if in_process:
        from dpgp_audit.cli import main

        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(argv)
    else:
        code = subprocess.run([sys.executable, "-m", "dpgp_audit", *argv], env=_env(),
                              capture_output=True, text=True, check=False).returncode
    if code not in (0, 1, 4):  # 4: no verdict (INCONCLUSIVE), read from the report
        return f"ERROR (exit {code})", {}
    rep = json.loads(js.read_text())["reports"][0]
    bb = next((r for r in rep["results"] if r["auditor"] == "blackbox"), None)
    info = {"caught_by": [r["auditor"] for r in rep["results"] if r["verdict"] == "VIOLATION"],
            "draws": bb["details"].get("n_per_side") if bb else None,
            "cap": rep["inputs"]["n_per_side"], "guard": bool(rep["guard"]["fired"]),
            "seconds": rep["timings"].get("total", 0.0)}
    return rep["verdict"], info


def verdicts(args: argparse.Namespace) -> int:
    from dpgp_audit.catalogue import entries

    todo = [e for e in entries(include_planted=True) if e.planted or not args.planted_only]
    if args.only:
        todo = [e for e in todo if e.id in args.only]
    seeds = [int(s) for s in np.random.default_rng(args.base_seed).integers(0, 2**31,
                                                                             size=args.seeds)]
    print(f"{len(todo)} mechanisms x {len(seeds)} seeds x conditions {args.conditions}; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    got: dict[tuple[str, str], list[str]] = {}
    secs: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for cond in args.conditions:
            with _hog(cond == "hog"):
                for seed in seeds:
                    t0 = time.perf_counter()
                    for e in todo:
                        v, info = _audit_one(e.id, seed, pathlib.Path(tmp), not args.subprocess,
                                             ("--evidence",) if args.evidence else ())
                        got.setdefault((e.id, cond), []).append(v)
                        secs.setdefault(e.id, []).append(float(info.get("seconds", 0.0)))
                        expect_flag = e.planted and e.id not in PRIVATE_PLANTED
                        if (v == "VIOLATION") != expect_flag or info.get("guard"):
                            print(f"  MISS {cond} seed {seed}: {e.id} -> {v} {info}", flush=True)
                    print(f"{cond:<5} seed {seed:>10}: {time.perf_counter() - t0:6.1f} s, "
                          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    ok = True
    print("\n| mechanism | expected | " + " | ".join(f"flagged ({c})" for c in args.conditions)
          + " | same verdicts | median s |")
    print("|---|---|" + "---|" * len(args.conditions) + "---|---|")
    for e in todo:
        expect_flag = e.planted and e.id not in PRIVATE_PLANTED
        cells = []
        for cond in args.conditions:
            vs = got[(e.id, cond)]
            k = sum(v == "VIOLATION" for v in vs)
            cells.append(f"{k}/{len(vs)}")
            ok &= (k == len(vs)) if expect_flag else (k == 0)
        same = len({tuple(got[(e.id, c)]) for c in args.conditions}) == 1
        ok &= same
        print(f"| {e.id} | {'flag' if expect_flag else 'clean'} | " + " | ".join(cells)
              + f" | {'yes' if same else 'NO'} | {np.median(secs[e.id]):.1f} |")
    print(f"\n{'all targets met' if ok else 'TARGET MISSED'}; load average "
          f"{os.getloadavg()[0]:.1f}")
    return 0 if ok else 1


def all_timing(args: argparse.Namespace) -> int:
    seeds = np.random.default_rng(args.base_seed).integers(0, 2**31, size=args.runs)
    walls = []
    with _hog(not args.no_hog), tempfile.TemporaryDirectory() as tmp:
        for threads in ("default", "1"):
            out = subprocess.run([sys.executable, "-c", _CAUSE, threads], env=_env(),
                                 check=True, capture_output=True, text=True).stdout
            print(f"S21.3 two-step, fixed n=200, BLAS threads {threads:>7}: "
                  f"{float(out.strip().splitlines()[-1]):6.2f} s", flush=True)
        for i, seed in enumerate(seeds):
            js = pathlib.Path(tmp) / f"{i}.json"
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "dpgp_audit", "audit", "--all",
                                   "--seed", str(seed), "--no-progress", "--json", str(js)]
                                  + ([] if args.jobs is None else ["--jobs", str(args.jobs)]),
                                  env=_env(), capture_output=True, text=True)
            wall = time.perf_counter() - t
            walls.append(wall)
            if proc.returncode not in (0, 1, 4):
                print(proc.stderr)
                return 1
            reps = json.loads(js.read_text())["reports"]
            slow = sorted(reps, key=lambda r: -r["timings"]["total"])[:3]
            print(f"run {i + 1:2d} seed {seed:>10}: {wall:6.1f} s, "
                  f"{sum(r['verdict'] == 'VIOLATION' for r in reps)} violation(s), "
                  f"{sum(bool(r['guard']['fired']) for r in reps)} guard(s) fired; slowest: "
                  + ", ".join(f"{r['mechanism']} {r['timings']['total']:.1f} s" for r in slow)
                  + f"; load average {os.getloadavg()[0]:.1f}", flush=True)
    jobs = "" if args.jobs is None else f" --jobs {args.jobs}"
    print(f"\naudit --all{jobs} over {len(walls)} seeds"
          f"{'' if args.no_hog else ' with a CPU hog'}: "
          f"median {np.median(walls):.1f} s, max {max(walls):.1f} s (target < {TARGET_S:g} s)")
    return 0 if max(walls) < TARGET_S else 1


def costs(args: argparse.Namespace) -> int:
    from dpgp_audit.audit.defaults import COST_CLASSES, nominal_cost
    from dpgp_audit.audit.runner import declared_cost
    from dpgp_audit.catalogue import entries

    names = {v: k for k, v in COST_CLASSES.items()}
    bad = 0
    print(f"{'mechanism':<42} {'class':<11} {'nominal':>9} {'measured':>9}  "
          f"(seconds per draw; load average {os.getloadavg()[0]:.1f})")
    for e in entries(include_planted=True):
        mech, data = e.make()
        rng = np.random.default_rng(0)
        mech.sample(data, 1, rng)
        m, per = 64, 0.0
        while True:
            t = time.perf_counter()
            mech.sample(data, m, rng)
            per = (time.perf_counter() - t) / m
            if per * m > 0.2 or m >= 65_536:
                break
            m *= 4
        nominal = nominal_cost(declared_cost(mech))
        flag = per > nominal
        bad += flag
        print(f"{e.id:<42} {names.get(nominal, 'own'):<11} {nominal:>9.1e} {per:>9.1e}"
              f"{'  SLOWER THAN DECLARED' if flag else ''}", flush=True)
    return 1 if bad else 0


def main() -> int:
    # a terminated run still kills its CPU hog (the finally clauses run on SystemExit)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--verdicts", action="store_true", help="(default) verdicts over seeds")
    mode.add_argument("--all-timing", action="store_true", help="wall time of audit --all")
    mode.add_argument("--costs", action="store_true", help="seconds per draw vs declared cost")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3, help="--all-timing: runs")
    ap.add_argument("--base-seed", type=int, default=2026)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--planted-only", action="store_true")
    ap.add_argument("--conditions", nargs="+", default=["quiet", "hog"],
                    choices=["quiet", "hog"])
    ap.add_argument("--subprocess", action="store_true",
                    help="run each audit as `python -m dpgp_audit audit` (slower)")
    ap.add_argument("--no-hog", action="store_true", help="--all-timing: no CPU hog")
    ap.add_argument("--jobs", type=int, default=None,
                    help="--all-timing: audit --all --jobs J (default: the CLI's, one per CPU)")
    ap.add_argument("--evidence", action="store_true",
                    help="--verdicts: audit with the thorough setting --evidence")
    args = ap.parse_args()
    if args.all_timing:
        return all_timing(args)
    if args.costs:
        return costs(args)
    return verdicts(args)


if __name__ == "__main__":
    sys.exit(main())
