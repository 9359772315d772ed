"""Overhead of the sequential black-box auditor over the bare sampling it needs (issue 20 §2).

For every toolbox mechanism (``P.*``) and every zoo control (``A.5/*``) the default path's
black-box auditor runs at its full draw cap with nothing else
(``audit_mechanism(mech, data, rng, auditors=("blackbox",), n=cap, time_guard_s=None)``;
the cap is the catalogue's single-audit cap, 200 000 per side and pair for every
vectorised mechanism). Its time is compared, in the same process, with the *bare*
``sample`` calls it needs: one call per side and pair confirmed, of the draws per side it
spent (``n_per_side``), on the witness pair's datasets. Two ratios are printed:

* ``black-box`` — the black-box part's own time (pair ranking by pilot, score fitting,
  betting, sampling in rounds) over the bare sampling: the overhead target of issue 20
  (median <= 2, worst <= 3);
* ``whole call`` — the whole ``audit_mechanism`` call (neighbour generation included);
* ``calls`` — the *call floor*: the very ``sample`` calls the black-box part made (recorded
  on a separate run of the same seed, which draws the same sizes on the same datasets),
  replayed with no auditor work between them, over the bare sampling. It is what an
  auditor with no bookkeeping at all would still cost on this call schedule (a
  mechanism's own per-call work, such as validating the dataset, is paid on every call of
  the pilots and of the pieces of each round); ``black-box`` minus it is the auditor's own
  work.
* ``pilot`` — the pilot ranking alone (``parts._ranking``, timed inside the same audit
  runs) over the bare sampling: the share of the black-box part that ranks the generated
  pairs before any certification draw (issue 20 §2, the worst case).

Every ratio is the median over ``--repeat`` runs (audit, then bare sampling, interleaved),
BLAS on one thread. The machine's load average is printed beside the numbers: on a shared
machine the two timings of a run see about the same load, so their ratio is steadier than
either time.

Usage: ``python benchmarks/bench_overhead.py [--repeat 3] [--only ID ...] [--seed 1]``.
Exit 1 when the median black-box ratio exceeds 2 or the worst exceeds 3.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import time

import _common  # noqa: F401  (BLAS pinned to one thread)
import numpy as np

from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.catalogue import entries

TARGET_MEDIAN = 2.0
TARGET_WORST = 3.0


def _cap(entry: object, mech: object) -> int:
    """The catalogue's single-audit cap (the library default where the rule gives none)."""
    rule = getattr(entry, "draw_cap", None)
    if callable(rule):
        if "cost" not in inspect.signature(rule).parameters:  # an older checkout
            return int(rule("sequential"))
        from dpgp_audit.audit.runner import declared_cost

        return int(rule("sequential", cost=declared_cost(mech)))
    own = getattr(entry, "audit_samples", None)  # before issue 20: fixed n x headroom
    return 200_000 if own is None else 10 * int(own)


def _audit(mech: object, data: object, cap: int, seed: int) -> object:
    kw = {"auditors": ("blackbox",), "n": cap}
    params = inspect.signature(audit_mechanism).parameters
    kw["time_guard_s" if "time_guard_s" in params else "budget_s"] = None
    return audit_mechanism(mech, data, np.random.default_rng(seed), **kw)


def _pilot_timed(mech: object, data: object, cap: int, seed: int) -> tuple[object, float]:
    """:func:`_audit`, and the seconds its pilot ranking took (``nan`` on a checkout without it)."""
    from dpgp_audit.audit import parts

    own = getattr(parts, "_ranking", None)
    if own is None:
        return _audit(mech, data, cap, seed), float("nan")
    spent: list[float] = []

    def timed(*a: object, **k: object) -> object:
        t = time.perf_counter()
        try:
            return own(*a, **k)
        finally:
            spent.append(time.perf_counter() - t)

    parts._ranking = timed
    try:
        rep = _audit(mech, data, cap, seed)
    finally:
        parts._ranking = own
    return rep, float(sum(spent))


def _bare(mech: object, report: object, rng: np.random.Generator) -> float:
    bb = report.result("blackbox")
    n = int(bb.details["n_per_side"])
    pairs = int(bb.details.get("pairs", bb.details.get("pairs_confirmed", 1)))
    from dpgp_audit.audit.neighbours import NeighbourPair

    w = NeighbourPair.from_dict({**bb.details["witness"], "label": "witness"})
    t = time.perf_counter()
    for _ in range(pairs):
        mech.sample(w.d0, n, rng)
        mech.sample(w.d1, n, rng)
    return time.perf_counter() - t


def _calls(mech: object, data: object, cap: int, seed: int) -> list[tuple] | None:
    """The ``(dataset, n, refused)`` of every ``sample`` call of the black-box audit.

    Recorded by shadowing ``sample`` on the instance (``None`` where the class does not
    allow it); ``refused`` marks a call that raised ``ValueError`` (a dataset refused).
    """
    calls: list[tuple] = []
    own = type(mech).sample  # type: ignore[attr-defined]

    def record(d: object, n: int, rng: np.random.Generator) -> object:
        try:
            out = own(mech, d, n, rng)
        except ValueError:
            calls.append((d, n, True))
            raise
        calls.append((d, n, False))
        return out

    try:
        object.__setattr__(mech, "sample", record)
    except (AttributeError, TypeError):
        return None
    try:
        _audit(mech, data, cap, seed)
    finally:
        object.__delattr__(mech, "sample")
    return calls


def _replay(mech: object, calls: list[tuple], rng: np.random.Generator) -> float:
    """Seconds of the recorded calls, one after another, with nothing between them."""
    t = time.perf_counter()
    for d, n, refused in calls:
        try:
            mech.sample(d, n, rng)  # type: ignore[attr-defined]
        except ValueError:
            if not refused:
                raise
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", nargs="*", help="catalogue IDs (default: toolbox and A.5)")
    args = ap.parse_args()
    todo = [e for e in entries() if e.paper == "P" or e.id.startswith("A.5/")]
    if args.only:
        todo = [e for e in todo if e.id in args.only]
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(f"{'mechanism':<34} {'cap':>7} {'drawn':>7} {'verdict':<12} {'bare s':>8} "
          f"{'black-box s':>11} {'ratio':>6} {'whole s':>8} {'ratio':>6} {'calls':>6} "
          f"{'pilot':>6} {'load':>5}")
    ratios, wholes, floors, pilots = [], [], [], []
    for e in todo:
        mech, data = e.make()
        cap = _cap(e, mech)
        rb, rw, tb, tw, tbare, rf, rp = [], [], [], [], [], [], []
        rng = np.random.default_rng(12345)
        calls = _calls(mech, data, cap, args.seed)
        for _ in range(args.repeat):
            rep, pilot_s = _pilot_timed(mech, data, cap, args.seed)
            bare = _bare(mech, rep, rng)
            rp.append(pilot_s / bare)
            if calls is not None:
                rf.append(_replay(mech, calls, rng) / bare)
            tb.append(rep.timings["blackbox"])
            tw.append(rep.timings["total"])
            tbare.append(bare)
            rb.append(rep.timings["blackbox"] / bare)
            rw.append(rep.timings["total"] / bare)
        bb = rep.result("blackbox")
        ratios.append(float(np.median(rb)))
        wholes.append(float(np.median(rw)))
        floors.append(float(np.median(rf)) if rf else float("nan"))
        pilots.append(float(np.median(rp)))
        print(f"{e.id:<34} {cap:>7} {bb.details['n_per_side']:>7} {bb.verdict.value:<12} "
              f"{np.median(tbare):>8.3f} {np.median(tb):>11.3f} {ratios[-1]:>6.1f} "
              f"{np.median(tw):>8.3f} {wholes[-1]:>6.1f} {floors[-1]:>6.1f} "
              f"{pilots[-1]:>6.1f} {os.getloadavg()[0]:>5.1f}",
              flush=True)
    med, worst = float(np.median(ratios)), float(np.max(ratios))
    print(f"\nblack-box / bare sampling over {len(ratios)} mechanisms: median {med:.2f}, "
          f"worst {worst:.2f} (targets <= {TARGET_MEDIAN:g}, <= {TARGET_WORST:g})")
    print(f"whole call / bare sampling: median {np.median(wholes):.2f}, "
          f"worst {np.max(wholes):.2f}")
    print(f"call floor / bare sampling: median {np.nanmedian(floors):.2f}, "
          f"worst {np.nanmax(floors):.2f}")
    print(f"pilot ranking / bare sampling: median {np.nanmedian(pilots):.2f}, "
          f"worst {np.nanmax(pilots):.2f}")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0 if med <= TARGET_MEDIAN and worst <= TARGET_WORST else 1


if __name__ == "__main__":
    sys.exit(main())
