"""Evidence pairs against the pilot's ranking, on mixture releases (A.8, issue 20 §3).

A release that mixes over a random subset breaks its claim on pairs a pilot cannot rank:
constant targets, extreme counts. This benchmark audits three such releases, written as a
hurried user would, and two correct twins, the way ``make audit MECH=FILE.py:NAME`` does
(``python -m dpgp_audit audit --mechanism bench_evidence.py:NAME --data … --seed S``, in
process), once by default and once with the thorough setting ``--evidence``, on seeds
1–6 (``--seeds``), and prints the verdict, the draws per side of the witness, the evidence
pairs' draws and the time of each run, then the catches and the median time per setting.

The releases (40 rows, targets on a 1/8 grid in [−1, 1], ``|y| <= 1`` declared; true ε on
the exposing pairs in brackets):

* ``SystematicSum`` — every 4th row from a random start, Laplace noise calibrated by the
  Poisson-amplification formula for q = 1/4 (1.54: a four-component Laplace mixture);
* ``SubsampledMean`` — the mean of 16 rows drawn without replacement, noised for the mean
  of all 40 (1.70 at a constant base: with probability 0.4 the moved row is drawn, and
  then the mean moves by 2/16 against a scale of 2/40); its twin ``SubsampledMeanOK``
  noises for the subsample's own mean;
* ``ForcedResponseCount`` — the count of positive targets, each row answered truthfully
  with probability p and by a fair coin otherwise, with p = e^ε/(1+e^ε) (binary randomised
  response's keep probability) where the coin scheme needs (e^ε−1)/(e^ε+1): per row
  ln((1+p)/(1−p)) = 1.86, claimed (1, 10⁻³), visible only at extreme counts; its twin
  ``ForcedResponseCountOK`` uses the right p.

Usage: ``python benchmarks/bench_evidence.py [--seeds 6] [--only NAME ...]``. Exit 1 when
a twin is flagged.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import pathlib
import statistics
import sys
import tempfile
import time

import numpy as np

from dpgp_audit import ApproxDP, PublicDomain, PureDP, outputs_only
from dpgp_audit.privacy.float_release import (
    laplace_noise_exact_uniform,
    release_grid,
    round_to_grid,
)

CLAIM = PureDP(epsilon=1.0, relation=outputs_only(2.0), domain=PublicDomain(y_bound=1.0))


class SystematicSum:
    """Every 4th row from a random start, noised as if Poisson-sampled with q = 1/4."""

    claim = CLAIM

    def sample(self, data, n, rng):  # noqa: D102 - the contract's sample
        y = self.claim.domain.targets(data.y)
        sums = np.array([math.fsum(y[r::4]) for r in range(4)])
        scale = 2.0 / math.log(1.0 + (math.e - 1.0) / 0.25)  # amplification, misapplied
        start = rng.integers(0, 4, size=n)
        noise = laplace_noise_exact_uniform(scale, (n, 1), rng)
        return round_to_grid(sums[start][:, None], noise, release_grid(math.sqrt(2.0) * scale))


class SubsampledMean:
    """The mean of 16 rows drawn without replacement, noised for the mean of all rows."""

    claim = CLAIM
    correct = False

    def sample(self, data, n, rng):  # noqa: D102 - the contract's sample
        y = self.claim.domain.targets(data.y)
        m = 16
        rows = np.argsort(rng.random((n, y.size)), axis=1)[:, :m]
        means = y[rows].mean(axis=1)
        scale = (2.0 / m if self.correct else 2.0 / y.size) / self.claim.epsilon
        noise = laplace_noise_exact_uniform(scale, (n, 1), rng)
        return round_to_grid(means[:, None], noise, release_grid(math.sqrt(2.0) * scale))


class SubsampledMeanOK(SubsampledMean):
    """The twin: noised for the subsample's own mean (sensitivity 2/16)."""

    correct = True


class ForcedResponseCount:
    """Positive targets counted after a forced-response coin per row (p from the wrong scheme)."""

    claim = ApproxDP(epsilon=1.0, delta=1e-3, relation=outputs_only(2.0),
                     domain=PublicDomain(y_bound=1.0))
    correct = False

    def sample(self, data, n, rng):  # noqa: D102 - the contract's sample
        y = self.claim.domain.targets(data.y)
        bits = (y > 0).astype(np.int64)
        e = math.exp(self.claim.epsilon)
        p = (e - 1.0) / (e + 1.0) if self.correct else e / (1.0 + e)
        truth = rng.random((n, bits.size)) < p
        coin = rng.random((n, bits.size)) < 0.5
        return np.where(truth, bits[None, :], coin).sum(axis=1, keepdims=True).astype(float)


class ForcedResponseCountOK(ForcedResponseCount):
    """The twin: p = (e^ε − 1)/(e^ε + 1), exactly ε per row."""

    correct = True


BUGS = ("SystematicSum", "SubsampledMean", "ForcedResponseCount")
TWINS = ("SubsampledMeanOK", "ForcedResponseCountOK")


def _data(path: pathlib.Path) -> None:
    y = np.random.default_rng(20261).integers(-8, 9, size=40) / 8.0
    x = np.round(np.linspace(0.0, 1.0, 40), 6)
    np.savetxt(path, np.c_[x, y], delimiter=",", header="x,y", comments="", fmt="%.6g")


def _run(name: str, seed: int, evidence: bool, tmp: pathlib.Path) -> dict:
    from dpgp_audit.cli import main

    js = tmp / f"{name}_{seed}_{evidence}.json"
    argv = ["audit", "--mechanism", f"{pathlib.Path(__file__).resolve()}:{name}",
            "--data", str(tmp / "data.csv"), "--y", "y", "--seed", str(seed),
            "--no-progress", "--json", str(js)] + (["--evidence"] if evidence else [])
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(argv)
    seconds = time.perf_counter() - t
    rep = json.loads(js.read_text())["reports"][0]
    bb = next(r for r in rep["results"] if r["auditor"] == "blackbox")
    return {"verdict": rep["verdict"], "draws": bb["details"]["n_per_side"],
            "evidence_draws": bb["details"].get("evidence", {}).get("draws_per_side", 0),
            "seconds": seconds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--only", nargs="*", help="class names (default: all five)")
    args = ap.parse_args()
    names = args.only or [*BUGS, *TWINS]
    print(f"{'release':22s} {'seed':>4s} {'setting':9s} {'verdict':12s} {'draws':>7s} "
          f"{'evidence':>9s} {'s':>5s}")
    caught: dict[tuple[str, bool], int] = {}
    times: dict[bool, list[float]] = {False: [], True: []}
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        _data(pathlib.Path(tmp) / "data.csv")
        for name in names:
            for seed in range(1, args.seeds + 1):
                for evidence in (False, True):
                    r = _run(name, seed, evidence, pathlib.Path(tmp))
                    flagged = r["verdict"] == "VIOLATION"
                    caught[(name, evidence)] = caught.get((name, evidence), 0) + flagged
                    if name in TWINS:
                        times[evidence].append(r["seconds"])
                        bad += flagged
                    print(f"{name:22s} {seed:4d} {'evidence' if evidence else 'default':9s} "
                          f"{r['verdict']:12s} {r['draws']:7d} {r['evidence_draws']:9d} "
                          f"{r['seconds']:5.1f}", flush=True)
    print()
    for name in names:
        print(f"{name:22s} flagged on {caught[(name, False)]}/{args.seeds} seeds by default, "
              f"{caught[(name, True)]}/{args.seeds} with --evidence")
    if times[False]:
        print(f"correct twins: median {statistics.median(times[False]):.1f} s by default, "
              f"{statistics.median(times[True]):.1f} s with --evidence")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
