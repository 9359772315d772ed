"""The field's own benchmark (issue 20 §5): StatDP's and DP-Sniper's algorithms on the default path.

The twelve algorithms of :mod:`dpgp_audit.bugs.statdp` (seven incorrect, five correct)
at their published parameters (ε₀ = 0.1; noisy max and histogram over 5 answers, the
Lyu–Su–Li SVT variants over 10 with c = 1), with the claims as the papers state them.
Three parts, each printed as a Markdown table:

``default``
    ``python -m dpgp_audit audit --mechanism ID --seed S`` for each seed S (``cli.main``
    in process: sequential, the catalogue's draw cap — 200 000 per side and pair unless
    the zoo row says more — and the default time guard, reported if it fires); the three
    correct algorithms without a catalogue entry go through ``audit_mechanism`` with its
    defaults, seeded as the CLI seeds. Per algorithm: seeds flagged / tried, the
    black-box draws per side when flagged (median), the cap, the auditors that flagged
    it and the slowest run.
``thorough``
    The library's default path with every generated pair confirmed and a larger cap
    (``audit_mechanism(mech, data, rng, n_pairs=<all>, n=N, time_guard_s=None)``,
    ``--thorough-n``, default 2 000 000). Under the all-answers relation the default path
    already confirms every pattern pair, so this differs from ``default`` by the cap.
``fixed``
    The samples per side a fixed-n audit needs on the pair that exposes the bug
    (``audit_mechanism(..., mode="fixed", n=n, pairs=[that pair], auditors=("blackbox",))``):
    the smallest n of a doubling scan flagging every one of 3 seeds.

Usage: ``python benchmarks/bench_statdp.py [default|thorough|fixed|all] [--seeds 5]``.
Exit 1 when a correct algorithm is flagged.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import pathlib
import sys
import tempfile
import time

import numpy as np
from _common import report  # pins BLAS to one thread

from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.runner import DEFAULT_AUDITORS, audit_mechanism, default_n
from dpgp_audit.bugs import statdp
from dpgp_audit.bugs.zoo import STATDP_ROWS

#: The registered IDs of the algorithms the catalogue holds at ε₀ = 0.1 (the incorrect ones
#: as ``planted/statdp-<name>``, two correct ones as zoo controls); the other correct ones
#: (Laplace noisy max, SVT Alg. 1 and 2 at ε₀ = 0.1) are audited through the library.
CONTROL_IDS = {"noisy-max-exp": "A.5/statdp-noisy-max-exp", "histogram": "A.5/statdp-histogram"}


def _entry_id(v: statdp.StatDPVariant) -> str | None:
    return CONTROL_IDS.get(v.name) if v.correct else f"planted/statdp-{v.name}"


def _audit_cli(mech_id: str, seed: int, tmp: pathlib.Path) -> dict:
    """``python -m dpgp_audit audit --mechanism ID --seed S`` in process (``cli.main``)."""
    from dpgp_audit.cli import main

    js = tmp / f"{mech_id.replace('/', '_')}-{seed}.json"
    argv = ["audit", "--mechanism", mech_id, "--seed", str(seed), "--no-progress",
            "--json", str(js)]
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    seconds = time.perf_counter() - t
    if code not in (0, 1, 4):  # 4: no verdict (INCONCLUSIVE), read from the report
        raise RuntimeError(f"{mech_id} seed {seed}: exit {code}")
    rep = json.loads(js.read_text())["reports"][0]
    bb = next((r for r in rep["results"] if r["auditor"] == "blackbox"), None)
    return {"flagged": rep["verdict"] == "VIOLATION",
            "by": [r["auditor"] for r in rep["results"] if r["verdict"] == "VIOLATION"],
            "draws": bb["details"].get("n_per_side") if bb else None,
            "cap": rep["inputs"]["n_per_side"], "guard": bool(rep["guard"]["fired"]),
            "seconds": seconds}


def _audit_library(v: statdp.StatDPVariant, seed: int) -> dict:
    """An unregistered correct algorithm: the library's default path, as the CLI calls it."""
    data = v.data()
    mech = v.build(data)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])  # as the CLI
    t = time.perf_counter()
    rep = audit_mechanism(mech, data, rng, auditors=DEFAULT_AUDITORS, name=v.name, seed=seed)
    bb = rep.result("blackbox")
    return {"flagged": rep.violation, "by": [r.auditor for r in rep.results if r.violation],
            "draws": None if bb is None else bb.details.get("n_per_side"),
            "cap": default_n("sequential"), "guard": bool(rep.guard.get("fired")),
            "seconds": time.perf_counter() - t}


def _row(v: statdp.StatDPVariant, rep: object, seconds: float) -> dict:
    bb = rep.result("blackbox")  # type: ignore[attr-defined]
    return {"flagged": rep.violation, "by": [r.auditor for r in rep.results if r.violation],  # type: ignore[attr-defined]
            "draws": None if bb is None else bb.details.get("n_per_side"),
            "estimate": None if bb is None else bb.estimate, "seconds": seconds}


def _eps(v: statdp.StatDPVariant) -> str:
    if v.correct:
        return f"≤ {statdp.EPSILON_0:g}"
    return "∞" if v.true_epsilon == float("inf") else f"{v.true_epsilon:.3g}"


def run_default(variants: list, seeds: list[int]) -> dict:
    """``make audit MECH=ID SEED=S`` per algorithm and seed (the CLI in process)."""
    out = {}
    print("| algorithm | papers | true ε (claim 0.1) | flagged (seeds) | draws/side when "
          "flagged (median) | cap/side and pair | by | slowest run |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for v in variants:
            mech_id = _entry_id(v)
            rows = [_audit_cli(mech_id, s, pathlib.Path(tmp)) if mech_id else
                    _audit_library(v, s) for s in seeds]
            out[v.name] = rows
            hit = [r for r in rows if r["flagged"]]
            draws = [r["draws"] for r in hit if r["draws"]]
            by = sorted({a for r in hit for a in r["by"]})
            med = f"{int(np.median(draws))}" if draws else "-"
            kind = "correct" if v.correct else "incorrect"
            guard = " (time guard fired)" if any(r["guard"] for r in rows) else ""
            print(f"| {v.name} ({kind}) | {v.paper} | {_eps(v)} | {len(hit)}/{len(rows)}{guard} | "
                  f"{med} | {rows[0]['cap']} | {', '.join(by) or '-'} | "
                  f"{max(r['seconds'] for r in rows):.0f} s |", flush=True)
    return out


def run_thorough(variants: list, seeds: list[int], n: int) -> dict:
    """Every generated pair confirmed (sequential, cap n per side and pair, no clock)."""
    out = {}
    print(f"\n| algorithm | true ε | flagged (seeds), all pairs confirmed, cap {n} | "
          "draws/side when flagged (median) | slowest run |")
    print("|---|---|---|---|---|")
    for v in variants:
        rows = []
        for s in seeds:
            data = v.data()
            mech = v.build(data)
            pairs = neighbour_pairs(data, mech.claim.relation, np.random.default_rng(0))
            t = time.perf_counter()
            rep = audit_mechanism(mech, data, np.random.default_rng(s), n=n, n_pairs=len(pairs),
                                  name=v.name, time_guard_s=None)
            rows.append(_row(v, rep, time.perf_counter() - t))
        out[v.name] = rows
        hit = [r for r in rows if r["flagged"]]
        draws = [r["draws"] for r in hit if r["draws"]]
        med = f"{int(np.median(draws))}" if draws else "-"
        print(f"| {v.name} | {_eps(v)} | {len(hit)}/{len(rows)} | {med} | "
              f"{max(r['seconds'] for r in rows):.0f} s |", flush=True)
    return out


def run_fixed(variants: list, seeds: int = 3, n_max: int = 4_096_000) -> dict:
    """Smallest n (doubling from 1000) at which fixed mode flags every seed on the exposing pair."""
    out = {}
    print("\n| algorithm | exposing pair | fixed-mode n per side (3/3 seeds) |")
    print("|---|---|---|")
    for v in variants:
        label = STATDP_ROWS[v.name][2]
        data = v.data()
        mech = v.build(data)
        pairs = [p for p in neighbour_pairs(data, mech.claim.relation, np.random.default_rng(0))
                 if p.label.split(" (")[0] == label]
        n, found = 1000, None
        while n <= n_max and found is None:
            ok = all(audit_mechanism(mech, data, np.random.default_rng(s), n=n, pairs=pairs,
                                     auditors=("blackbox",), mode="fixed").violation
                     for s in range(seeds))
            found = n if ok else None
            n *= 2
        out[v.name] = found
        print(f"| {v.name} | {label} | {found if found else f'> {n_max}'} |", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", nargs="?", default="default",
                    choices=("default", "thorough", "fixed", "all"))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=None, help="algorithm names")
    ap.add_argument("--thorough-n", type=int, default=2_000_000)
    args = ap.parse_args()
    t0 = time.perf_counter()
    seeds = list(range(1, args.seeds + 1))
    allv = [v for v in statdp.incorrect_variants() + statdp.correct_variants()
            if args.only is None or v.name in args.only]
    ok = True
    if args.part in ("default", "all"):
        res = run_default(allv, seeds)
        ok &= not any(r["flagged"] for v in allv if v.correct for r in res[v.name])
    if args.part in ("thorough", "all"):
        res = run_thorough(allv, seeds, args.thorough_n)
        ok &= not any(r["flagged"] for v in allv if v.correct for r in res[v.name])
    if args.part in ("fixed", "all"):
        run_fixed([v for v in allv if not v.correct])
    report("StatDP / DP-Sniper benchmark", time.perf_counter() - t0, 3600.0, None)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
