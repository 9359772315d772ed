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


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], Runner]]] = {
    "calibrate": ("noise standard deviation of the Gaussian mechanism", _add_calibrate),
    "gdp": ("Gaussian-DP profile: delta(epsilon; mu) or epsilon(delta; mu)", _add_gdp),
    "laplace": ("scale of the Laplace mechanism, b = sensitivity / epsilon", _add_laplace),
    "split": ("split an (epsilon, delta) budget into parts (basic composition)", _add_split),
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
