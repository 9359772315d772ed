"""Command line: ``python -m dpgp_audit`` / ``dpgp-audit`` (catalogue P.1, P.3, A.6, A.10).

Sub-commands register themselves through :data:`COMMANDS`: each entry adds its
arguments to a sub-parser and returns the function that runs it.

Exit codes (:data:`EXIT_CODES`, also in docs/cli.md):

* ``0`` — the command ran; for ``audit``, no violation was found (not a proof);
* ``1`` — ``audit`` found a violation, and nothing else ever returns 1;
* ``2`` — a usage or input error (bad flag, unknown mechanism, invalid value, an
  output folder that does not exist, a resource estimate above its limit), or a user's
  mechanism whose own code failed or broke the contract, before or during the audit,
  with a one-line message on stderr and no report;
* ``3`` — an internal failure (a bug in the kit): a one-line message; ``--debug``
  prints the traceback;
* ``4`` — ``audit`` reached no verdict on any mechanism: every report is
  ``INCONCLUSIVE`` (no auditor could compare anything, or the time guard stopped it).
  Nothing was shown either way, so it is neither "no violation found" (0) nor a
  violation (1).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dpgp_audit.catalogue import Entry
    from dpgp_audit.dataset import Dataset

__all__ = ["COMMANDS", "EXIT_CODES", "EXIT_INCONCLUSIVE", "EXIT_INTERNAL", "EXIT_OK",
           "EXIT_USAGE", "EXIT_VIOLATION", "main"]

Runner = Callable[[argparse.Namespace], int]

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INCONCLUSIVE = 4
#: Every exit status of the program and what it means.
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "no violation found (not a proof of privacy) / command succeeded",
    EXIT_VIOLATION: "audit found a violation",
    EXIT_USAGE: "usage or input error, or the mechanism's own code failed (no report)",
    EXIT_INTERNAL: "internal failure (a bug; rerun with --debug for the traceback)",
    EXIT_INCONCLUSIVE: "audit reached no verdict: every report INCONCLUSIVE (nothing "
                       "compared, or the time guard stopped it)",
}

#: Resource limits of `audit` (raise them with --max-memory-gb / --max-minutes).
DEFAULT_MAX_MEMORY_GB = 4.0
DEFAULT_MAX_MINUTES = 30.0


class UsageError(ValueError):
    """A usage or input error detected by the command line itself (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"dpgp-audit: error: {message}\n")
        raise SystemExit(2)


def _add_calibrate(sub: argparse.ArgumentParser) -> Runner:
    from dpgp_audit.privacy.calibrate import CALIBRATION_METHODS

    sub.add_argument("--epsilon", type=float, required=True, help="target epsilon > 0")
    sub.add_argument("--delta", type=float, required=True, help="target delta in (0, 1)")
    sub.add_argument("--sensitivity", type=float, default=1.0, help="L2 sensitivity (default 1)")
    sub.add_argument("--method", choices=CALIBRATION_METHODS, default="analytic")
    sub.add_argument("--allow-unproven", action="store_true",
                     help="permit classical/hall above epsilon = 1 (warns; marked unproven)")
    sub.add_argument("--json", action="store_true", help="print one JSON object")

    def run(args: argparse.Namespace) -> int:
        import warnings

        from dpgp_audit.privacy.calibrate import calibrate_gaussian

        with warnings.catch_warnings():
            warnings.simplefilter("ignore" if args.json else "default")
            cal = calibrate_gaussian(args.epsilon, args.delta, args.sensitivity, args.method,
                                     allow_unproven=args.allow_unproven)
        if args.json:
            print(json.dumps(cal.as_dict()))
        else:
            tag = "" if cal.proven else "  [UNPROVEN: outside the calibration's proof]"
            print(f"sigma = {cal.sigma:.6g}  ({cal.method}; epsilon={cal.epsilon:g}, "
                  f"delta={cal.delta:g}, sensitivity={cal.sensitivity:g}){tag}")
        return 0

    return run


def _add_gdp(sub: argparse.ArgumentParser) -> Runner:
    sub.add_argument("--mu", type=float, required=True, help="GDP parameter mu > 0")
    group = sub.add_mutually_exclusive_group(required=True)
    group.add_argument("--epsilon", type=float, help="print delta(epsilon; mu)")
    group.add_argument("--delta", type=float, help="print epsilon(delta; mu)")
    sub.add_argument("--json", action="store_true", help="print one JSON object")

    def run(args: argparse.Namespace) -> int:
        from dpgp_audit.privacy.gdp import gdp_delta, gdp_epsilon

        if not (args.mu > 0 and args.mu < float("inf")):
            raise ValueError(f"mu must be finite and > 0, got {args.mu!r}")
        if args.epsilon is not None:
            if not args.epsilon >= 0:
                raise ValueError(f"epsilon must be >= 0, got {args.epsilon!r}")
            result = {"mu": args.mu, "epsilon": args.epsilon,
                      "delta": gdp_delta(args.epsilon, args.mu)}
            text = f"delta = {result['delta']:.6g}  (mu={args.mu:g}, epsilon={args.epsilon:g})"
        else:
            result = {"mu": args.mu, "delta": args.delta,
                      "epsilon": gdp_epsilon(args.delta, args.mu)}
            text = f"epsilon = {result['epsilon']:.6g}  (mu={args.mu:g}, delta={args.delta:g})"
        print(json.dumps(result) if args.json else text)
        return 0

    return run


def _add_laplace(sub: argparse.ArgumentParser) -> Runner:
    sub.add_argument("--epsilon", type=float, required=True, help="target epsilon > 0")
    sub.add_argument("--sensitivity", type=float, default=1.0, help="L1 sensitivity (default 1)")
    sub.add_argument("--json", action="store_true", help="print one JSON object")

    def run(args: argparse.Namespace) -> int:
        from dpgp_audit.privacy.mechanisms import laplace_scale

        result = {"epsilon": args.epsilon, "sensitivity": args.sensitivity,
                  "scale": laplace_scale(args.epsilon, args.sensitivity)}
        print(json.dumps(result) if args.json else
              f"scale b = {result['scale']:.6g}  (Laplace; epsilon={args.epsilon:g}, "
              f"L1 sensitivity={args.sensitivity:g})")
        return 0

    return run


def _add_split(sub: argparse.ArgumentParser) -> Runner:
    sub.add_argument("--epsilon", type=float, required=True, help="total epsilon > 0")
    sub.add_argument("--delta", type=float, default=0.0, help="total delta in [0, 1)")
    sub.add_argument("--weights", type=float, nargs="+", required=True,
                     help="relative share of epsilon for each part (> 0)")
    sub.add_argument("--delta-weights", type=float, nargs="+", default=None,
                     help="relative share of delta (>= 0; default: --weights)")
    sub.add_argument("--json", action="store_true", help="print one JSON object")

    def run(args: argparse.Namespace) -> int:
        from dpgp_audit.privacy.composition import split_budget

        parts = split_budget(args.epsilon, args.delta, args.weights,
                             delta_weights=args.delta_weights)
        if args.json:
            print(json.dumps({"epsilon": args.epsilon, "delta": args.delta,
                              "parts": [{"epsilon": p.epsilon, "delta": p.delta}
                                        for p in parts]}))
        else:
            for i, p in enumerate(parts):
                print(f"part {i}: epsilon = {p.epsilon:.6g}, delta = {p.delta:.6g}")
        return 0

    return run



def _add_list(sub: argparse.ArgumentParser) -> Runner:
    sub.add_argument("--planted", action="store_true",
                     help="include the planted-bug mechanisms (IDs planted/...)")
    sub.add_argument("--json", action="store_true", help="print one JSON array")

    def run(args: argparse.Namespace) -> int:
        from dpgp_audit.catalogue import entries

        rows = []
        for e in entries(include_planted=args.planted):
            domain: dict | None = None
            try:
                mech, _ = e.make()
                claim = mech.claim.describe()
                relation = mech.claim.relation.describe()
                domain = _domain_row(mech.claim)
            except Exception as err:  # noqa: BLE001 — listing must not die on one entry
                claim, relation = f"(cannot build: {type(err).__name__}: {err})", ""
            row = {"id": e.id, "paper": e.paper, "title": e.title, "claim": claim,
                   "relation": relation, "domain": domain}
            if e.planted:
                row.update(true_epsilon=e.true_epsilon, twin=e.twin)
            rows.append(row)
        if args.json:
            from dpgp_audit.audit.result import jsonable

            print(json.dumps(jsonable(rows)))
            return 0
        for r in rows:
            extra = ""
            if "twin" in r:
                extra = f"  [true eps={r['true_epsilon']:.4g}; twin {r['twin']}]"
            print(f"{r['id']:<38} {r['paper']:<5} {r['title']}{extra}")
            print(f"{'':<38} claim: {r['claim']}")
            if r["domain"] is not None:
                print(f"{'':<38} domain: {r['domain']['describe']}")
        print(f"{len(rows)} mechanisms")
        return 0

    return run


def _domain_row(claim: object) -> dict:
    """The public domain a claim rests on, for ``list`` (issue 10 §1)."""
    domain = getattr(claim, "domain", None)
    if domain is not None:
        return domain.as_dict()
    bound = getattr(claim, "domain_bound", None)
    if bound is not None:  # whole rows: the relation's |y| <= d is the domain
        return {"y_bound": bound, "clip": None, "x_bound": None,
                "describe": f"|y| <= {bound:g} (the whole-row relation's bound)"}
    return {"y_bound": None, "clip": None, "x_bound": None,
            "describe": "no bound on |y| needed (see the claim's note)"}


# The default path's constants live in audit/defaults.py, re-exported by audit/runner.py
# (one place for the library, the CLI, the catalogue's draw-cap rule and dpgp_audit.testing).


def _guard_seconds(text: str) -> float | None:
    """``--time-guard-s``: seconds > 0, or ``none`` (no guard)."""
    import math

    if text.strip().lower() in ("none", "off"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds > 0 or 'none', got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected seconds > 0 or 'none', got {text!r}")
    return value


def _add_audit(sub: argparse.ArgumentParser) -> Runner:
    from dpgp_audit.audit.runner import (
        DEFAULT_MODE,
        DEFAULT_TIME_GUARD_S,
        FIXED_DEFAULT_N,
        MODES,
        SEQUENTIAL_HEADROOM,
    )

    target = sub.add_mutually_exclusive_group(required=True)
    target.add_argument("--mechanism", metavar="ID|FILE.py:NAME|module:NAME",
                        help="catalogue ID (see `list --planted`), or your own mechanism: "
                             "NAME in FILE.py or in an importable module (a class or factory "
                             "is called with the arguments it names among data, epsilon, "
                             "delta; an instance is used as it is)")
    target.add_argument("--all", action="store_true",
                        help="every registered non-planted mechanism on its default data")
    sub.add_argument("--epsilon", type=float, help="override the mechanism's epsilon")
    sub.add_argument("--delta", type=float, help="override the mechanism's delta")
    sub.add_argument("--dataset", metavar="NAME", default="default",
                     help="'default' (the entry's embedded data) or 'sine:N' (N-point sine data)")
    sub.add_argument("--data", metavar="FILE",
                     help="your data: a CSV with a header row (--y, --x) or an .npz with "
                          "arrays X and y (replaces --dataset)")
    sub.add_argument("--y", metavar="COL", help="CSV: the target column")
    sub.add_argument("--x", metavar="COLS",
                     help="CSV: comma-separated input columns (default: every other column)")
    sub.add_argument("--samples", type=int, metavar="N",
                     help=f"black-box samples per side: exactly N in fixed mode (default "
                          f"{FIXED_DEFAULT_N}), at most N per pair in sequential mode (default "
                          f"{SEQUENTIAL_HEADROOM}x that); the defaults are the catalogue's "
                          "draw caps (smaller for slow entries and under --all)")
    sub.add_argument("--pairs", type=int, metavar="K",
                     help="black-box: confirm the K top-ranked generated pairs (default 2; "
                          "under the all-answers relation every pattern, at most 20). A "
                          "thorough setting: a large K (e.g. 100) bets on every generated pair "
                          "at once, for releases whose leak the pilot cannot rank "
                          "(subsampling and other mixtures); each confirmed pair may draw "
                          "up to --samples per side")
    sub.add_argument("--evidence", action="store_true",
                     help="black-box, sequential mode: every generated pair beyond the "
                          "confirmed ones bets too, with a quarter of the wealth; each draws "
                          "4096 per side (a 32nd of --samples if less), then at most two at "
                          "a time draw on while their wealth grows. A thorough setting for "
                          "releases whose exposing pair a few pilot draws cannot rank "
                          "(subsampled, randomised-response and other mixtures, selections, "
                          "counts, non-linear functions of the noise); about 2-4x the "
                          "default's time for a vectorised release, more for a slow one")
    sub.add_argument("--seed", type=int, help="seed (default: fresh entropy, printed)")
    sub.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    sub.add_argument("--auditor", choices=("greybox", "whitebox", "blackbox", "sensitivity",
                                            "precision", "model-check", "all"), default="all",
                     help="one auditor, or all of the default path")
    sub.add_argument("--json", metavar="PATH", help="write the JSON report here")
    sub.add_argument("--plot", metavar="PATH",
                     help="write the trade-off PNG here (with --all: one file per mechanism)")
    sub.add_argument("--no-progress", action="store_true", help="no progress bar")
    sub.add_argument("--allow-unproven", action="store_true",
                     help="permit a calibration outside its proven range (claim marked "
                          "unproven) where the mechanism offers one")
    sub.add_argument("--max-memory-gb", type=float, default=DEFAULT_MAX_MEMORY_GB,
                     metavar="GB", help="refuse to start when the estimated memory exceeds "
                     f"this (default {DEFAULT_MAX_MEMORY_GB:g})")
    sub.add_argument("--max-minutes", type=float, default=DEFAULT_MAX_MINUTES, metavar="MIN",
                     help="refuse to start when the sampling time estimated from the declared "
                     f"cost per draw exceeds this (default {DEFAULT_MAX_MINUTES:g})")
    sub.add_argument("--mode", choices=MODES, default=DEFAULT_MODE,
                     help="black-box mode: 'sequential' (default; anytime-valid, stops at the "
                          "first certified violation, at most --samples per side) or 'fixed' "
                          "(exactly --samples per side)")
    sub.add_argument("--scheduler", metavar="ADDRESS", default=None,
                     help="Dask scheduler to sample on (default: $DPGP_AUDIT_SCHEDULER, else "
                          "in process); needs the dask extra")
    sub.add_argument("--jobs", type=int, metavar="J", default=None,
                     help="with --all: audit J mechanisms at once, each in its own process "
                          "(default: the CPUs this process may use, its container's quota "
                          "included, at most 4). Each keeps its own seed's stream, so the "
                          "reports are those of --jobs 1")
    sub.add_argument("--time-guard-s", type=_guard_seconds, metavar="S",
                     default=DEFAULT_TIME_GUARD_S,
                     help=f"time guard per mechanism, seconds or 'none' (default "
                          f"{DEFAULT_TIME_GUARD_S:g}): a guard, not a budget; when it fires the "
                          "audit stops INCONCLUSIVE and says so")
    sub.add_argument("--budget-s", type=float, metavar="S", default=None,
                     help="former name of --time-guard-s (seconds > 0)")

    def run(args: argparse.Namespace) -> int:
        return _run_audit(args)

    return run


def _dataset_size(name: str) -> int | None:
    """``N`` of ``--dataset sine:N`` (``None`` for ``default``); ``UsageError`` otherwise."""
    if name == "default":
        return None
    if name.startswith("sine:"):
        try:
            size = int(name.split(":", 1)[1])
        except ValueError:
            raise UsageError(f"--dataset sine:N needs an integer N, got {name!r}") from None
        if size < 2:
            raise UsageError(f"--dataset sine:N needs N >= 2, got {size}")
        return size
    raise UsageError(f"unknown --dataset {name!r}; use 'default' or 'sine:N'")


def _audit_dataset(entry: Entry, name: str, user_data: Dataset | None = None) -> Dataset:
    from dpgp_audit.datasets.default import default_dataset

    if user_data is not None:
        return user_data
    size = _dataset_size(name)
    if size is None:
        return entry.default_data()
    return default_dataset(size)


def _user_data(args: argparse.Namespace) -> tuple[Dataset | None, dict | None]:
    """``--data FILE`` read (or ``None``) and its origin for the report (path, SHA-256)."""
    import os

    if args.data is None:
        if args.y is not None or args.x is not None:
            raise UsageError("--y and --x name columns of a --data CSV file; give --data")
        return None, None
    if args.dataset != "default":
        raise UsageError("give either --data FILE or --dataset NAME, not both")
    from dpgp_audit.adapters.loading import sha256_of
    from dpgp_audit.datasets.files import load_data_file

    data = load_data_file(args.data, y=args.y, x=args.x)
    return data, {"path": os.path.abspath(args.data), "sha256": sha256_of(args.data),
                  "n": data.n, "dim": data.dim, "y": args.y, "x": args.x}


def _user_entry(args: argparse.Namespace, data: Dataset, overrides: dict
                ) -> tuple[Entry, dict]:
    """A catalogue-like entry around ``--mechanism FILE.py:NAME`` (catalogue A.10).

    The mechanism is built once here, by the rule of :mod:`dpgp_audit.adapters.usercode`;
    the data must lie in its claim's declared domain (else exit 2), and a claim without
    one gets a warning on stderr.
    """
    from dpgp_audit.adapters.usercode import (
        domain_problem,
        load_mechanism,
        missing_domain_warning,
    )
    from dpgp_audit.catalogue import Entry

    built = load_mechanism(args.mechanism, data, overrides)
    mech = built.mechanism
    problem = domain_problem(mech.claim, data)
    if problem:
        whose = "" if args.data else (
            f" (these are the kit's default data, {data.n} targets sin(x) in [-1, 1], "
            "audited because no --data was given: give yours with --data FILE.csv --y COLUMN)")
        raise UsageError(f"the data lie outside the claim's declared domain: {problem}{whose}")
    warning = missing_domain_warning(args.mechanism, mech.claim)
    if warning:
        sys.stderr.write(f"dpgp-audit audit: warning: {warning}\n")
    entry = Entry(args.mechanism, "user", f"{type(mech).__name__} from {built.origin.path}",
                  lambda _data, **_kw: mech, lambda: data)
    return entry, built.origin.as_dict()


#: Memory model of `audit` (docs/cli.md, "Resource guards"): dense GP algebra holds about four
#: N x N float64 matrices (kernel, factor, inverse, weights), the data 8 (D + 1) N bytes, and
#: the black-box fit phase keeps raw samples of both sides, 16 n k bytes for k outputs.
_DENSE_MATRICES = 4

#: Generated pairs counted for ``--evidence`` in the resource guards.
_EVIDENCE_PAIRS = 78
#: Pairs piloted, both sides, in the resource guards: about 44 generated pairs and 34
#: precision candidates.
_PILOT_PAIRS = 78


def _evidence_rows(samples: int) -> int:
    """Draws per side of one evidence pair before its wealth decides: fitting round, warm-up."""
    from dpgp_audit.audit.blackbox.sequential import default_first_round, evidence_warmup

    return default_first_round(samples) + evidence_warmup(samples)


def estimate_memory_bytes(n_rows: int | None, samples: int, outputs: int = 1,
                          evidence: bool = False) -> float:
    """Upper estimate of the memory one audit needs (bytes), before anything is built.

    ``n_rows`` is the dataset size (``None``: the small embedded default, counted as 0);
    ``samples`` the black-box samples per side; ``outputs`` the release dimension;
    ``evidence`` (``--evidence``): every evidence pair keeps its raw draws of both sides
    until its wealth decides.
    """
    rows = 0.0 if n_rows is None else float(n_rows)
    more = 16.0 * _EVIDENCE_PAIRS * _evidence_rows(samples) * outputs if evidence else 0.0
    return 8.0 * _DENSE_MATRICES * rows * rows + 16.0 * rows + 16.0 * float(samples) * outputs \
        + more


def _check_paths(args: argparse.Namespace) -> None:
    """Refuse ``--json``/``--plot`` paths whose folder does not exist (before auditing)."""
    import os

    for flag, path in (("--json", args.json), ("--plot", args.plot)):
        if path is None:
            continue
        if path == "" or os.path.isdir(path):
            raise UsageError(f"{flag} needs a file path, got {path!r}")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UsageError(f"{flag} {path!r}: the folder {folder!r} does not exist")
        if not os.access(folder, os.W_OK):
            raise UsageError(f"{flag} {path!r}: the folder {folder!r} is not writable")


def _gb(nbytes: float) -> str:
    return f"{nbytes / 1e9:.3g} GB"


def _check_memory(args: argparse.Namespace, n_rows: int | None, samples: int,
                  outputs: int = 1, at_once: int = 1) -> None:
    """Refuse an audit whose estimated memory, times the audits run at once, is too much."""
    need = at_once * estimate_memory_bytes(n_rows, samples, outputs,
                                           getattr(args, "evidence", False))
    if need > args.max_memory_gb * 1e9:
        together = f", {at_once} audits at once (--jobs)" if at_once > 1 else ""
        raise UsageError(
            f"this audit needs an estimated {_gb(need)} of memory (dataset rows: "
            f"{n_rows or 'default'}, samples per side: {samples}, outputs: {outputs}"
            f"{together}), above the limit of {args.max_memory_gb:g} GB; reduce --samples, "
            "--dataset or --jobs, or raise the limit with --max-memory-gb")


#: At most this many mechanisms at once by default: each worker holds its own imports and
#: audit (the whole ``audit --all`` peaked at 170 MB resident here), and a Binder session
#: has 2 GB.
DEFAULT_MAX_JOBS = 4


def _jobs(args: argparse.Namespace, n_entries: int) -> int:
    """Audits run at once: 1 but under ``--all``; there ``--jobs``, else the usable CPUs.

    A Dask scheduler (``--scheduler`` or ``$DPGP_AUDIT_SCHEDULER``) spreads each audit's
    sampling instead, and a platform other than Linux audits one at a time: the built
    mechanisms reach the workers by forking, not by pickling, and forking is unsafe on
    macOS (its system libraries) and missing on Windows.
    """
    import os

    if not args.all:
        return 1
    if args.scheduler or os.environ.get("DPGP_AUDIT_SCHEDULER"):
        if args.jobs is not None and args.jobs > 1:
            raise UsageError("--jobs and a Dask scheduler both spread the work: give one")
        return 1
    if not sys.platform.startswith("linux"):
        if args.jobs is not None and args.jobs > 1:
            sys.stderr.write("note: --jobs forks worker processes, which only Linux does "
                             "safely; auditing one mechanism at a time\n")
        return 1
    if args.jobs is not None:
        return max(1, min(args.jobs, n_entries))
    return max(1, min(usable_cpus(), DEFAULT_MAX_JOBS, n_entries))


def usable_cpus() -> int:
    """CPUs this process may use: its affinity mask, cut to its cgroup's CPU quota.

    A container (Binder, CI runners) often shows every CPU of its host in the affinity
    mask while its quota (cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``) allows one or
    two; forking for the host's count would only share those among more processes.
    """
    import os

    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity masks
        cpus = os.cpu_count() or 1
    quota = _cgroup_cpu_quota()
    return max(1, min(cpus, math.ceil(quota))) if quota is not None else max(1, cpus)


def _cgroup_cpu_quota(root: str = "/sys/fs/cgroup") -> float | None:
    """The cgroup's CPU quota in CPUs (``None``: no quota, or no cgroup files to read)."""
    import os

    for quota_file, period_file in ((os.path.join(root, "cpu.max"), None),
                                    (os.path.join(root, "cpu", "cpu.cfs_quota_us"),
                                     os.path.join(root, "cpu", "cpu.cfs_period_us"))):
        try:
            with open(quota_file, encoding="ascii") as fh:
                fields = fh.read().split()
            if period_file is not None:
                with open(period_file, encoding="ascii") as fh:
                    fields = fields[:1] + fh.read().split()[:1]
            quota, period = fields[0], float(fields[1])
        except (OSError, IndexError, ValueError):
            continue
        if quota in ("max", "-1") or period <= 0:
            return None
        try:
            q = float(quota)
        except ValueError:
            return None
        return q / period if q > 0 else None
    return None


#: What the forked workers of :func:`_in_order` read: the audit function and its arguments.
_FORKED_WORK: list = []


def _run_forked(i: int) -> object:
    fn, items = _FORKED_WORK
    return fn(*items[i])


def _in_order(fn: Callable[..., object], items: Sequence[tuple],
              jobs: int) -> Iterator[object]:
    """``fn(*item)`` for every item, yielded in the items' order, ``jobs`` at a time.

    With ``jobs > 1`` the calls run in forked worker processes, which inherit ``fn`` and
    the items (mechanisms need not pickle; only the results travel back). Each call draws
    from its own generator, so the results are those of the sequential loop; only their
    timings differ.
    """
    if jobs <= 1:
        for item in items:
            yield fn(*item)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    _FORKED_WORK[:] = [fn, items]
    try:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_run_forked, i) for i in range(len(items))]
            try:
                for future in futures:
                    yield future.result()
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    finally:
        _FORKED_WORK.clear()


def _probe(mech: object, data: object, n: int, rng: object) -> object:
    """``n`` checked draws outside the audit (its own generator); the user's errors said where."""
    from dpgp_audit.adapters.loading import LoadError, describe_exception
    from dpgp_audit.contract import ContractError, checked_sample

    call = f"{type(mech).__name__}.sample(data, {n}, rng)"
    try:
        return checked_sample(mech, data, n, rng)  # type: ignore[arg-type]
    except ContractError:
        raise  # already names the call
    except ValueError as err:  # a refusal of the very data to audit: nothing to compare
        raise LoadError(f"{call} refused the data to audit: {describe_exception(err)}",
                        err) from None
    except Exception as err:  # noqa: BLE001 — the mechanism's own code failed: say where
        raise LoadError(f"{call} failed: {describe_exception(err)}", err) from None


def _raise_if_user_code(err: Exception, mech: object, origin: dict | None) -> None:
    """A ``LoadError`` (exit 2) when ``err`` came through the user's own file, not the kit.

    During the audit a user's ``sample`` meets datasets the probe did not (the generated
    neighbours: domain ends, full swings); an exception other than ``ValueError`` (which
    means "this dataset is refused") raised there is the user's code failing, so the
    message says where instead of reporting an internal error of the kit (exit 3). A
    ``ValueError`` of the user's that escapes the auditors came where a refusal cannot be
    taken (a dataset already released for, as when a privacy accountant inside ``sample``
    runs out of budget after some calls), and its bare message would not say whose it is.
    The kit's own errors (``ContractError``, ``LoadError``) already say so.
    """
    from dpgp_audit.adapters.loading import LoadError, failure_in_file
    from dpgp_audit.contract import ContractError

    if isinstance(err, ContractError | LoadError) or origin is None or not origin.get("path"):
        return
    where = failure_in_file(err, origin["path"])
    if where is None:
        return
    name = type(mech).__name__
    if isinstance(err, ValueError):
        raise LoadError(f"{name} raised during the audit: {where}; the auditors read a "
                        "ValueError as a refusal only where they try a dataset, and a "
                        "mechanism must answer alike on every call (an accountant that runs "
                        "out of budget stops the audit)", err) from None
    raise LoadError(f"{name}.sample failed during the audit: {where}; a mechanism must "
                    "release, or refuse with a ValueError, every dataset in its declared "
                    "domain, the generated neighbours included", err) from None


def _output_size(mech: object, data: object, rng: object) -> int:
    """Values in one release (one draw; for the memory estimate, never timed)."""
    import numpy as np

    out = np.asarray(_probe(mech, data, 1, rng))
    return int(np.prod(out.shape[1:])) if out.ndim > 1 else 1


#: The command line's timing of a user's mechanism: doubling calls until one takes this long
#: or draws this many (advice on stderr only, never a plan: issue 20 §1).
TIMING_MIN_S = 0.05
TIMING_MAX_DRAWS = 4096


def _time_draws(mech: object, data: object, rng: object,
                clock: Callable[[], float] | None = None) -> tuple[float, int]:
    """Seconds per release of ``sample`` on this machine, and the draws of the call timed.

    Calls of 1, 2, 4, … draws, until one lasts :data:`TIMING_MIN_S` or draws
    :data:`TIMING_MAX_DRAWS`; that call's seconds per draw (its fixed cost included, so
    an upper estimate). About twice the last call in all: a tenth of a second for a
    mechanism that loops over its draws, one draw's time for one that needs seconds.
    """
    import time

    clock = time.perf_counter if clock is None else clock
    n = 1
    while True:
        t = clock()
        _probe(mech, data, n, rng)
        spent = clock() - t
        if spent >= TIMING_MIN_S or n >= TIMING_MAX_DRAWS:
            return spent / n, n
        n *= 2


def _declared_seconds_per_draw(mech: object, entry: object) -> float | None:
    """The declared cost of one draw: the mechanism's ``declared_cost_per_draw_s``; for a
    catalogue mechanism that declares none, the vectorised class's nominal cost (what the
    catalogue plans it as); else ``None`` (a user's code: no estimate, only the guard).
    """
    from dpgp_audit.audit.defaults import nominal_cost
    from dpgp_audit.audit.runner import declared_cost

    cost = declared_cost(mech)
    if getattr(entry, "paper", "user") == "user":
        return cost
    return nominal_cost(cost)


def estimate_draws(samples: int, mode: str, pairs: int | None = None,
                   evidence: bool = False) -> int:
    """Releases one audit may draw at a cap of ``samples`` (docs/cli.md, "Resource guards").

    The black-box certification (2 sides of ``pairs`` pairs, by default 2), A.7's
    certification (a tenth of the cap on each of its pairs in sequential mode, the cap in
    fixed mode, 5 pairs) and the pilots (about 44 generated pairs and 34 precision
    candidates, both sides). With ``evidence`` (``--evidence``), the evidence pairs' most:
    the fitting round and warm-up of each of about 78 pairs, then at most ``EVIDENCE_KEEP``
    of them drawing in any round, so at most that many caps in all.
    """
    from dpgp_audit.audit.blackbox.sequential import EVIDENCE_KEEP
    from dpgp_audit.audit.defaults import DEFAULT_PAIRS, SEQUENTIAL_HEADROOM, pilot_draws
    from dpgp_audit.audit.precision import CERTIFY_PAIRS

    sequential = mode == "sequential"
    precision = CERTIFY_PAIRS * 2 * (samples // SEQUENTIAL_HEADROOM if sequential else samples)
    confirmed = DEFAULT_PAIRS if pairs is None else pairs
    more = 2 * (_EVIDENCE_PAIRS * _evidence_rows(samples) + EVIDENCE_KEEP * samples) \
        if evidence and sequential else 0
    return (2 * confirmed * samples + precision
            + 2 * _PILOT_PAIRS * pilot_draws(samples, sequential) + more)



#: An adapted library's measured sampling time is noted only above this many minutes.
NOTE_MINUTES = 1.0


def _note_measured_cost(entry_id: str, mech: object, entry: object, samples: int,
                        mode: str, timed: tuple[float, int] | None = None,
                        pairs: int | None = None, evidence: bool = False) -> None:
    """Advice from a *measured* cost of a draw (A.10), on stderr.

    An adapter times the library's calls (``cost_per_draw_s``); for a user's mechanism
    without one the command line times a few draws (``timed``, :func:`_time_draws`). The
    planner never plans a cap or refuses a run from a timing, because it depends on the
    machine's load (issue 20 §1). It does use it to say how long the audit may sample, and
    how to turn the measurement into a declaration (which then plans the cap and is
    checked against ``--max-minutes``). Nothing is printed for a declared cost or a short
    estimate.
    """
    if _declared_seconds_per_draw(mech, entry) is not None:
        return
    measured = getattr(mech, "cost_per_draw_s", None)
    how = "measured by its adapter"
    if measured is None and timed is not None:
        measured, how = timed[0], f"timed on {timed[1]} draws"
    if isinstance(measured, bool) or not isinstance(measured, int | float) or \
            not (measured > 0 and math.isfinite(measured)):
        return
    minutes = estimate_draws(samples, mode, pairs, evidence) * measured / 60.0
    if minutes <= NOTE_MINUTES:
        return
    sys.stderr.write(
        f"note: {entry_id} took {measured:.2g} s per release here ({how}); "
        f"at most {samples} per side and pair, this audit may sample for up to about "
        f"{minutes:.3g} min (a violation stops it earlier; the time guard is a limit). The "
        f"verdict never uses this timing. To plan the cap from a cost, declare it on the "
        f"mechanism (declared_cost_per_draw_s = {measured:.2g}) or pass --samples.\n")


def _check_time(args: argparse.Namespace, entry_id: str, per_draw: float | None,
                samples: int) -> None:
    """Refuse an audit whose *declared* cost says it needs more than --max-minutes.

    Deterministic: the estimate is the draws the audit may take times the declared seconds
    per draw (never a timing on this machine), so a busy machine never changes whether a run
    starts. Without a declared cost nothing is refused; the time guard still applies.
    """
    if per_draw is None:
        return
    minutes = estimate_draws(samples, args.mode, args.pairs, args.evidence) * per_draw / 60.0
    if minutes > args.max_minutes:
        raise UsageError(
            f"auditing {entry_id} with {samples} samples per side needs an estimated "
            f"{minutes:.3g} min of sampling ({per_draw:.2g} s per release, declared), above "
            f"the limit of {args.max_minutes:g} min; reduce --samples or raise the limit with "
            "--max-minutes")


def _plot_path(base: str, mech_id: str, many: bool) -> str:
    if not many:
        return base
    import os
    import re

    root, ext = os.path.splitext(base)
    return f"{root}_{re.sub(r'[^A-Za-z0-9.-]+', '_', mech_id)}{ext or '.png'}"


def _is_catalogue_id(name: str) -> bool:
    from dpgp_audit.catalogue import get

    try:
        get(name)
    except KeyError:
        return False
    return True


def _domain_of_built(mech: object, data: Dataset) -> str | None:
    from dpgp_audit.adapters.usercode import domain_problem

    return domain_problem(mech.claim, data)  # type: ignore[attr-defined]


def _run_audit(args: argparse.Namespace) -> int:
    import dataclasses
    import math
    import warnings

    import numpy as np

    from dpgp_audit.audit.result import NO_PROOF, jsonable
    from dpgp_audit.audit.runner import audit_mechanism
    from dpgp_audit.catalogue import entries, get
    from dpgp_audit.privacy.calibrate import UnprovenCalibrationWarning

    if args.samples is not None and args.samples < 2:
        raise UsageError(f"--samples must be >= 2, got {args.samples}")
    if args.pairs is not None and args.pairs < 1:
        raise UsageError(f"--pairs must be >= 1, got {args.pairs}")
    if args.evidence and args.mode != "sequential":
        raise UsageError("--evidence needs the sequential mode (it bets every pair's wealth; "
                         "--mode fixed splits alpha over the confirmed pairs instead)")
    if not (0 < args.alpha < 1):
        raise UsageError(f"--alpha must lie in (0, 1), got {args.alpha}")
    if args.jobs is not None and not args.all:
        raise UsageError("--jobs needs --all (one mechanism is audited in one process; "
                         "--scheduler spreads its sampling)")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be >= 1, got {args.jobs}")
    if args.seed is not None and not (0 <= args.seed < 2**128):
        raise UsageError(f"--seed must lie in [0, 2**128), got {args.seed}")
    for flag, value in (("--max-memory-gb", args.max_memory_gb),
                        ("--max-minutes", args.max_minutes)):
        if not (math.isfinite(value) and value > 0):
            raise UsageError(f"{flag} must be finite and > 0, got {value!r}")
    for flag, value in (("--epsilon", args.epsilon), ("--delta", args.delta)):
        if value is not None and not math.isfinite(value):
            raise UsageError(f"{flag} must be finite, got {value!r}")
    if args.budget_s is not None:  # the former name of the time guard
        if not (math.isfinite(args.budget_s) and args.budget_s > 0):
            raise UsageError(f"--budget-s must be finite and > 0 seconds, got {args.budget_s}")
        args.time_guard_s = args.budget_s
    _check_paths(args)
    user_data, data_origin = _user_data(args)
    overrides: dict[str, object] = {"epsilon": args.epsilon, "delta": args.delta}
    if args.allow_unproven:
        overrides["allow_unproven"] = True
    origins: dict[str, dict] = {}
    if args.all:
        todo = entries()
    elif ":" in args.mechanism and not _is_catalogue_id(args.mechanism):
        from dpgp_audit.datasets.default import default_dataset

        base = user_data if user_data is not None else default_dataset(
            _dataset_size(args.dataset) or 20)
        entry, origins[args.mechanism] = _user_entry(args, base, overrides)
        todo = [entry]
        user_data = base
    else:
        try:
            todo = [get(args.mechanism)]
        except KeyError as err:
            raise UsageError(_one_line(err) + "; or give your own as FILE.py:NAME or "
                             "package.module:NAME") from None
    # the memory model's N x N matrices are the kit's GP algebra: a user's mechanism counts
    # its data only (through the samples' term)
    n_rows = (None if origins else user_data.n) if user_data is not None \
        else _dataset_size(args.dataset)
    jobs = _jobs(args, len(todo))
    for entry in todo:  # refuse before the dataset is allocated
        _check_memory(args, n_rows, _samples_for(args, entry), at_once=jobs)
    seed = int(np.random.SeedSequence().entropy) if args.seed is None else int(args.seed)
    from dpgp_audit.audit.runner import DEFAULT_AUDITORS

    auditors = DEFAULT_AUDITORS if args.auditor == "all" else (args.auditor,)
    seeds = np.random.SeedSequence(seed)
    children = seeds.spawn(len(todo))  # the audits' streams (as without the draw below)
    shape_rng = np.random.default_rng(seeds.spawn(1)[0])
    built = []
    seeded_globals: dict[str, str] = {}  # user mechanisms whose global draws the audit seeds
    skipped: list[dict[str, str]] = []  # --all --data: the entries that refuse the user's data
    for entry, child in zip(todo, children, strict=True):  # build everything first: usage
        data = _audit_dataset(entry, args.dataset, user_data)  # errors exit 2 before auditing
        try:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UnprovenCalibrationWarning)
                    mech, data = entry.make(data, **overrides)
            except TypeError as err:  # e.g. --delta for a pure-DP builder without that option
                raise UsageError(f"cannot build {entry.id} with these options: {err}") from None
            except ValueError as err:
                raise UsageError(f"cannot build {entry.id}: {_cli_words(str(err))}") from None
            if user_data is not None and entry.id not in origins:  # a catalogue entry, --data
                problem = _domain_of_built(mech, data)
                if problem:
                    raise UsageError(f"{entry.id}: the data lie outside the claim's declared "
                                     f"domain: {problem}")
            if args.all and user_data is not None:  # a refusal of the file's rows, as above
                _probe(mech, data, 1, np.random.default_rng(child))  # (a copy of its stream)
        except ValueError as err:  # UsageError, or the probe's LoadError / ContractError
            if not (args.all and user_data is not None):
                raise
            # every catalogue entry on the user's file: one that cannot take these data
            # (a 1-D factory, class labels, too few rows) is named and left out, not fatal
            skipped.append({"mechanism": entry.id, "why": str(err)})
            sys.stderr.write(f"note: skipped {entry.id}: {err}\n")
            continue
        if entry.id in origins:  # a user's file that draws from np.random.* or random
            from dpgp_audit.adapters.mechanism import reproducible_form

            mech, seeded = reproducible_form(mech, data, child)  # (copies of its stream)
            if seeded:
                seeded_globals[entry.id] = seeded
                sys.stderr.write(f"note: {entry.id}: sample() ignores its rng and draws from "
                                 "the global generators; the audit seeds them from --seed for "
                                 "each call (and restores them), so the run repeats and the "
                                 "grey-box auditor can couple D and D'\n")
        samples = _samples_for(args, entry, mech)
        if args.auditor in ("all", "blackbox", "precision"):
            _check_memory(args, n_rows, samples, _output_size(mech, data, shape_rng),
                          at_once=jobs)
            declared = _declared_seconds_per_draw(mech, entry)
            _check_time(args, entry.id, declared, samples)
            timed = None
            if declared is None and getattr(mech, "cost_per_draw_s", None) is None:
                timed = _time_draws(mech, data, shape_rng)  # a user's code: advice only
            _note_measured_cost(entry.id, mech, entry, samples, args.mode, timed, args.pairs,
                                args.evidence)
        built.append((entry, mech, data, child))
    if not built:  # --all --data and no entry takes the data
        raise UsageError(f"no catalogue mechanism can be built on {args.data}: "
                         + "; ".join(s["why"] for s in skipped[:3]))
    print(f"seed: {seed}   (rerun with --seed {seed} to reproduce"
          + (f"; in Python the audit's generator is np.random.default_rng("
             f"np.random.SeedSequence({seed}).spawn(1)[0]), not default_rng({seed})"
             if len(built) == 1 else "") + ")")
    from dpgp_audit.audit.blackbox.executors import executor_from_address

    executor = executor_from_address(args.scheduler)
    bar = None
    if args.all and not args.no_progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(built), desc="make audit", unit="mechanism", file=sys.stderr)

    def audit_one(entry: object, mech: object, data: object, child: object) -> object:
        # every entry its draw cap (--samples, the catalogue's rule, or for one user
        # mechanism the library's default path, which plans the cap from a declared cost):
        # never the clock
        try:
            report = audit_mechanism(
                mech, data, np.random.default_rng(child), auditors=auditors,
                n=_samples_for(args, entry, mech), alpha=args.alpha, name=entry.id, seed=seed,
                progress=not args.all and not args.no_progress, mode=args.mode,
                time_guard_s=args.time_guard_s, executor=executor, n_pairs=args.pairs,
                evidence=args.evidence)
        except ValueError as err:
            _raise_if_user_code(err, mech, origins.get(entry.id))
            raise  # main() words the kit's own input checks already
        except (ImportError, MemoryError):
            raise  # main() words these already
        except Exception as err:  # a user's own code that raised mid-audit is not a kit bug
            _raise_if_user_code(err, mech, origins.get(entry.id))
            raise
        provenance = {}
        if entry.id in origins:
            provenance["source"] = origins[entry.id]
        if data_origin is not None:
            provenance["data_file"] = data_origin
        if entry.id in seeded_globals:
            provenance["seeded_globals"] = seeded_globals[entry.id]
        if provenance:  # the report names the code and data it audited (A.10)
            report = dataclasses.replace(report, inputs={**report.inputs, **provenance})
        return report

    reports = []
    for report in _in_order(audit_one, built, min(jobs, len(built))):
        reports.append(report)
        table = report.table()
        if args.all:  # the "no violation is not a proof" note is printed once, at the end
            table = table.removesuffix(f"\n  Note: {NO_PROOF}")
        if bar is not None:
            bar.write(table, file=sys.stdout)  # clears the bar (stderr) first: no interleaving
            bar.update(1)
        else:
            print(table)
        if args.plot:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            fig = report.plot(_plot_path(args.plot, entry.id, len(built) > 1))
            plt.close(fig)
    if bar is not None:
        bar.close()
    n_viol = sum(r.violation for r in reports)
    if args.all:
        print(f"\n{len(reports)} mechanisms audited: {n_viol} violation(s) found.")
        print(f"  {'verdict':<13} {'mechanism':<40} {'draws/side':>10} {'of at most':>10} "
              f"{'seconds':>8}")
        for r in reports:
            bb = r.result("blackbox")
            drawn = bb.details.get("n_per_side", "") if bb is not None else ""
            guard = "  (time guard fired)" if r.guard_fired else ""
            print(f"  {r.verdict.value:<13} {r.mechanism:<40} {drawn!s:>10} "
                  f"{r.inputs.get('n_per_side', '')!s:>10} "
                  f"{r.timings.get('total', 0.0):>8.2f}{guard}")
        if skipped:
            print(f"  {len(skipped)} mechanism(s) skipped: they cannot be built on this data "
                  f"({', '.join(s['mechanism'] for s in skipped)}; the reasons are on stderr "
                  "and in the JSON report)")
        if n_viol < len(reports):
            print(f"Note: {NO_PROOF}")
    if args.json:
        doc = {"schema": "dpgp_audit/audit-report/1", "seed": seed,
               "verdict": _overall_verdict(reports),
               "exit_code": _audit_exit(reports),
               "arguments": {k: v for k, v in vars(args).items() if k != "command"},
               "reports": [r.as_dict() for r in reports]}
        if skipped:
            doc["skipped"] = skipped
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(jsonable(doc), fh, indent=1)
    return _audit_exit(reports)


def _audit_exit(reports: Sequence[object]) -> int:
    """1 on any violation; 4 when every report is INCONCLUSIVE (no verdict); else 0."""
    from dpgp_audit.audit.result import Verdict

    if any(r.violation for r in reports):  # type: ignore[attr-defined]
        return EXIT_VIOLATION
    if reports and all(r.verdict is Verdict.INCONCLUSIVE for r in reports):  # type: ignore
        return EXIT_INCONCLUSIVE
    return EXIT_OK


def _samples_for(args: argparse.Namespace, entry: object, mech: object = None) -> int:
    """Draws per side: exactly this many in fixed mode, at most this many per pair in
    sequential mode — ``--samples``, else for a catalogue entry its draw-cap rule
    (:meth:`~dpgp_audit.catalogue.Entry.draw_cap`), else (a user's mechanism, A.10) the
    library's default path (:func:`~dpgp_audit.audit.defaults.default_n`); both plan from
    the mechanism's ``declared_cost_per_draw_s`` where it declares one.
    """
    from dpgp_audit.audit.runner import declared_cost, default_n

    if args.samples:
        return int(args.samples)
    cost = declared_cost(mech) if mech is not None else None
    rule = getattr(entry, "draw_cap", None)
    if rule is not None and getattr(entry, "paper", "") != "user":
        return int(rule(args.mode, every=bool(args.all), cost=cost))
    return default_n(args.mode, cost)


def _overall_verdict(reports: Sequence[object]) -> str:
    """One vocabulary with the tables: VIOLATION, else NO_EVIDENCE, else INCONCLUSIVE."""
    from dpgp_audit.audit.result import Verdict

    verdicts = {r.verdict for r in reports}  # type: ignore[attr-defined]
    for v in (Verdict.VIOLATION, Verdict.NO_EVIDENCE):
        if v in verdicts:
            return v.value
    return Verdict.INCONCLUSIVE.value


def _cli_words(message: str) -> str:
    """Name the command-line flags where a library message names Python keywords."""
    return (message.replace("pass allow_unproven=True", "pass --allow-unproven")
            .replace("allow_unproven=True", "--allow-unproven"))


def _add_new_mechanism(sub: argparse.ArgumentParser) -> Runner:
    sub.add_argument("path", nargs="?", metavar="PATH",
                     help="write the template here (a new .py file); default: print it")

    def run(args: argparse.Namespace) -> int:
        from dpgp_audit.adapters.template import TEMPLATE_NAME, write_template

        text = write_template(args.path)
        if args.path is None:
            sys.stdout.write(text)
        else:
            print(f"wrote {args.path}; audit it with:\n  python -m dpgp_audit audit "
                  f"--mechanism {args.path}:{TEMPLATE_NAME}")
        return 0

    return run


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], Runner]]] = {
    "calibrate": ("noise standard deviation of the Gaussian mechanism", _add_calibrate),
    "gdp": ("Gaussian-DP profile: delta(epsilon; mu) or epsilon(delta; mu)", _add_gdp),
    "laplace": ("scale of the Laplace mechanism, b = sensitivity / epsilon", _add_laplace),
    "split": ("split an (epsilon, delta) budget into parts (basic composition)", _add_split),
    "list": ("list every registered mechanism (ID, paper, claim, neighbour relation)", _add_list),
    "audit": ("audit a registered mechanism (or --all) or your own (FILE.py:NAME) on the "
              "default data or yours (--data): verdict table, JSON, plot; "
              "exit 0 no violation found, 1 violation, 2 usage or input error, "
              "3 internal failure", _add_audit),
    "new-mechanism": ("print (or write to PATH) a commented template of the mechanism "
                      "contract that audits cleanly as written", _add_new_mechanism),
}


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Runner]]:
    """The top-level parser and the runner of each sub-command."""
    parser = _Parser(prog="dpgp-audit", description="Differentially private GPs: "
                     "calibrate, list and audit mechanisms.",
                     epilog="exit status: " + "; ".join(f"{k} {v}" for k, v in
                                                          EXIT_CODES.items()))
    parser.add_argument("--debug", action="store_true",
                        help="print the traceback of an internal failure (exit 3)")
    subs = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    runners: dict[str, Runner] = {}
    for name, (help_text, add) in COMMANDS.items():
        runners[name] = add(subs.add_parser(name, help=help_text, description=help_text))
    return parser, runners


def _one_line(err: BaseException) -> str:
    message = err.args[0] if err.args and isinstance(err.args[0], str) else str(err)
    return " ".join(_cli_words(message).split()) or type(err).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit status (:data:`EXIT_CODES`).

    Never raises (except ``KeyboardInterrupt``): usage and input errors return 2 with a
    one-line message, anything unexpected returns 3 with a one-line message and, with
    ``--debug``, the traceback.
    """
    words = [str(a) for a in (sys.argv[1:] if argv is None else argv)]
    debug = "--debug" in words  # accepted anywhere on the line
    words = [a for a in words if a != "--debug"]
    try:
        parser, runners = build_parser()
        try:
            args = parser.parse_args(words)
        except SystemExit as stop:  # --help: 0; parse errors: 2 (message already printed)
            code = stop.code
            return code if isinstance(code, int) else EXIT_USAGE
        command = args.command
    except Exception as err:  # noqa: BLE001 — the CLI must never end in a traceback
        return _internal(err, "", debug)
    try:
        return runners[command](args)
    except ValueError as err:  # UsageError and every input check of the library
        original = getattr(err, "original", None)  # the user's own exception (A.10)
        if debug and isinstance(original, BaseException):
            import traceback

            traceback.print_exception(original, file=sys.stderr)
        sys.stderr.write(f"dpgp-audit {command}: error: {_one_line(err)}"
                         + ("  [rerun with --debug for the traceback]"
                            if original is not None and not debug else "") + "\n")
        return EXIT_USAGE
    except ImportError as err:  # a broken environment: name the package, never a traceback
        sys.stderr.write(f"dpgp-audit {command}: error: missing dependency: {_one_line(err)}\n")
        return EXIT_INTERNAL
    except MemoryError:
        sys.stderr.write(f"dpgp-audit {command}: error: out of memory; lower --samples or "
                         "--dataset, or --max-memory-gb to be refused earlier\n")
        return EXIT_USAGE
    except Exception as err:  # noqa: BLE001
        return _internal(err, command, debug)


def _internal(err: BaseException, command: str, debug: bool) -> int:
    import traceback

    where = f" {command}" if command else ""
    if debug:
        traceback.print_exception(err, file=sys.stderr)
    sys.stderr.write(f"dpgp-audit{where}: internal error ({type(err).__name__}): "
                     f"{_one_line(err)}"
                     + ("" if debug else "  [rerun with --debug for the traceback]") + "\n")
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
