"""Command line: ``python -m dpgp_audit`` / ``dpgp-audit`` (catalogue P.1, P.3, A.6).

Sub-commands register themselves through :data:`COMMANDS`: each entry adds its
arguments to a sub-parser and returns the function that runs it. Bad arguments
exit with status 2 and a one-line message on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dpgp_audit.catalogue import Entry
    from dpgp_audit.dataset import Dataset

__all__ = ["COMMANDS", "main"]

Runner = Callable[[argparse.Namespace], int]


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
            try:
                mech, _ = e.make()
                claim = mech.claim.describe()
                relation = mech.claim.relation.describe()
            except Exception as err:  # noqa: BLE001 — listing must not die on one entry
                claim, relation = f"(cannot build: {type(err).__name__}: {err})", ""
            row = {"id": e.id, "paper": e.paper, "title": e.title, "claim": claim,
                   "relation": relation}
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
        print(f"{len(rows)} mechanisms")
        return 0

    return run


#: Default black-box samples per side for `audit` (quick mode: catches 2x errors; AUDITING.md §4).
AUDIT_DEFAULT_SAMPLES = 20_000


def _add_audit(sub: argparse.ArgumentParser) -> Runner:
    target = sub.add_mutually_exclusive_group(required=True)
    target.add_argument("--mechanism", metavar="ID", help="catalogue ID (see `list --planted`)")
    target.add_argument("--all", action="store_true",
                        help="every registered non-planted mechanism on its default data")
    sub.add_argument("--epsilon", type=float, help="override the mechanism's epsilon")
    sub.add_argument("--delta", type=float, help="override the mechanism's delta")
    sub.add_argument("--dataset", metavar="NAME", default="default",
                     help="'default' (the entry's embedded data) or 'sine:N' (N-point sine data)")
    sub.add_argument("--samples", type=int, metavar="N",
                     help=f"black-box samples per side (default {AUDIT_DEFAULT_SAMPLES})")
    sub.add_argument("--seed", type=int, help="seed (default: fresh entropy, printed)")
    sub.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    sub.add_argument("--auditor", choices=("whitebox", "blackbox", "sensitivity", "model-check",
                                           "all"),
                     default="all")
    sub.add_argument("--json", metavar="PATH", help="write the JSON report here")
    sub.add_argument("--plot", metavar="PATH",
                     help="write the trade-off PNG here (with --all: one file per mechanism)")
    sub.add_argument("--no-progress", action="store_true", help="no progress bar")

    def run(args: argparse.Namespace) -> int:
        return _run_audit(args)

    return run


def _audit_dataset(entry: Entry, name: str) -> Dataset:
    from dpgp_audit.datasets.default import default_dataset

    if name == "default":
        return entry.default_data()
    if name.startswith("sine:"):
        try:
            size = int(name.split(":", 1)[1])
        except ValueError:
            raise ValueError(f"--dataset sine:N needs an integer N, got {name!r}") from None
        if size < 2:
            raise ValueError(f"--dataset sine:N needs N >= 2, got {size}")
        return default_dataset(size)
    raise ValueError(f"unknown --dataset {name!r}; use 'default' or 'sine:N'")


def _plot_path(base: str, mech_id: str, many: bool) -> str:
    if not many:
        return base
    import os
    import re

    root, ext = os.path.splitext(base)
    return f"{root}_{re.sub(r'[^A-Za-z0-9.-]+', '_', mech_id)}{ext or '.png'}"


def _run_audit(args: argparse.Namespace) -> int:
    import numpy as np

    from dpgp_audit.audit.result import jsonable
    from dpgp_audit.audit.runner import DEFAULT_AUDITORS, audit_mechanism
    from dpgp_audit.catalogue import entries, get

    if args.samples is not None and args.samples < 2:
        raise ValueError(f"--samples must be >= 2, got {args.samples}")
    if not (0 < args.alpha < 1):
        raise ValueError(f"--alpha must lie in (0, 1), got {args.alpha}")
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    todo = entries() if args.all else [get(args.mechanism)]
    seed = int(np.random.SeedSequence().entropy) if args.seed is None else int(args.seed)
    print(f"seed: {seed}   (rerun with --seed {seed} to reproduce)")
    auditors = (DEFAULT_AUDITORS if args.auditor == "all" else (args.auditor,))
    overrides = {"epsilon": args.epsilon, "delta": args.delta}
    built = []
    for entry in todo:  # build everything first: usage errors exit 2 before any audit runs
        data = _audit_dataset(entry, args.dataset)
        try:
            mech, data = entry.make(data, **overrides)
        except TypeError as err:  # e.g. --delta for a pure-DP builder without that option
            raise ValueError(f"cannot build {entry.id} with these options: {err}") from None
        built.append((entry, mech, data))
    children = np.random.SeedSequence(seed).spawn(len(built))
    iterator = built
    if args.all and not args.no_progress:
        from tqdm.auto import tqdm

        iterator = tqdm(built, desc="make audit", unit="mechanism")
    reports = []
    for (entry, mech, data), child in zip(iterator, children, strict=True):
        n = args.samples or getattr(entry, "audit_samples", None) or AUDIT_DEFAULT_SAMPLES
        report = audit_mechanism(mech, data, np.random.default_rng(child), auditors=auditors,
                                 n=n, alpha=args.alpha, name=entry.id, seed=seed,
                                 progress=not args.all and not args.no_progress)
        reports.append(report)
        if args.all and hasattr(iterator, "write"):
            iterator.write(report.table())
        else:
            print(report.table())
        if args.plot:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            fig = report.plot(_plot_path(args.plot, entry.id, len(built) > 1))
            plt.close(fig)
    n_viol = sum(r.violation for r in reports)
    if args.all:
        print(f"\n{len(reports)} mechanisms audited: {n_viol} violation(s) found.")
        for r in reports:
            print(f"  {r.verdict.value:<13} {r.mechanism}")
    if args.json:
        doc = {"schema": "dpgp_audit/audit-report/1", "seed": seed,
               "verdict": "VIOLATION" if n_viol else "NO_VIOLATION_FOUND",
               "arguments": {k: v for k, v in vars(args).items() if k != "command"},
               "reports": [r.as_dict() for r in reports]}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(jsonable(doc), fh, indent=1)
    return 1 if n_viol else 0


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], Runner]]] = {
    "calibrate": ("noise standard deviation of the Gaussian mechanism", _add_calibrate),
    "gdp": ("Gaussian-DP profile: delta(epsilon; mu) or epsilon(delta; mu)", _add_gdp),
    "laplace": ("scale of the Laplace mechanism, b = sensitivity / epsilon", _add_laplace),
    "split": ("split an (epsilon, delta) budget into parts (basic composition)", _add_split),
    "list": ("list every registered mechanism (ID, paper, claim, neighbour relation)", _add_list),
    "audit": ("audit a registered mechanism (or --all): verdict table, JSON, plot; "
              "exit 0 no violation found, 1 violation, 2 usage error", _add_audit),
}


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Runner]]:
    """The top-level parser and the runner of each sub-command."""
    parser = _Parser(prog="dpgp-audit", description="Differentially private GPs: "
                     "calibrate, list and audit mechanisms.")
    subs = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    runners: dict[str, Runner] = {}
    for name, (help_text, add) in COMMANDS.items():
        runners[name] = add(subs.add_parser(name, help=help_text, description=help_text))
    return parser, runners


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit status."""
    parser, runners = build_parser()
    args = parser.parse_args(argv)
    try:
        return runners[args.command](args)
    except (ValueError, KeyError) as err:
        message = err.args[0] if err.args else str(err)
        sys.stderr.write(f"dpgp-audit {args.command}: error: {message}\n")
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
