"""`make audit` on a loaded machine: wall time of `audit --all` over random seeds (issue 15 §5).

Each run is a fresh ``python -m dpgp_audit audit --all --seed S`` process (what
``make audit`` runs), timed from outside, with one CPU-bound process beside it
(``python -c "while 1: pass"``) on this 2-core machine. The BLAS thread variables
are *removed* from the audit's environment, so it sees the defaults a user has.

Also measured, for the cause: one fixed-n audit of S21.3 two-step under the same
load with BLAS left at its default thread count and with ``blas_threads=1`` (the
runner's default now).

Usage: ``python benchmarks/bench_make_audit.py [--runs 20] [--base-seed 2026]``.
Target: every ``--all`` run under 60 s. Exit 1 on a miss.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
TARGET_S = 60.0
_BLAS_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--base-seed", type=int, default=2026,
                    help="the run seeds are drawn from this seed")
    ap.add_argument("--no-hog", action="store_true", help="no CPU-bound process beside it")
    args = ap.parse_args()
    seeds = np.random.default_rng(args.base_seed).integers(0, 2**31, size=args.runs)
    hog = None if args.no_hog else subprocess.Popen([sys.executable, "-c", "while 1: pass"])
    walls, draws = [], {}
    try:
        for mode in ("default", "1"):
            out = subprocess.run([sys.executable, "-c", _CAUSE, mode], env=_env(), check=True,
                                 capture_output=True, text=True).stdout
            print(f"S21.3 two-step, fixed n=200, BLAS threads {mode:>7}: "
                  f"{float(out.strip().splitlines()[-1]):6.2f} s")
        with tempfile.TemporaryDirectory() as tmp:
            for i, seed in enumerate(seeds):
                js = pathlib.Path(tmp) / f"{i}.json"
                t = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "dpgp_audit", "audit", "--all",
                                       "--seed", str(seed), "--no-progress", "--json", str(js)],
                                      env=_env(), capture_output=True, text=True)
                wall = time.perf_counter() - t
                walls.append(wall)
                if proc.returncode not in (0, 1):
                    print(proc.stderr)
                    return 1
                for rep in json.loads(js.read_text())["reports"]:
                    bb = [r for r in rep["results"] if r["auditor"] == "blackbox"]
                    n = bb[0]["details"].get("n_per_side", 0) if bb else 0
                    draws.setdefault(rep["mechanism"], []).append(int(n))
                viol = re.search(r"(\d+) violation", proc.stdout)
                print(f"run {i + 1:2d} seed {seed:>10}: {wall:6.1f} s, "
                      f"{viol.group(1) if viol else '?'} violation(s), load average "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    print(f"\naudit --all over {len(walls)} seeds{'' if args.no_hog else ' with a CPU hog'}: "
          f"median {np.median(walls):.1f} s, max {max(walls):.1f} s (target < {TARGET_S:g} s)")
    print(f"\n{'mechanism':<40} {'draws/side/pair bought: min':>28} {'median':>8} {'max':>8}")
    for mech, ns in sorted(draws.items()):
        print(f"{mech:<40} {min(ns):>28} {int(np.median(ns)):>8} {max(ns):>8}")
    return 0 if max(walls) < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
