r"""The paper-reproduction table: what each notebook measured beside what each paper printed.

Each paper notebook (01–04) ends with a "Reproduction" section that compares its numbers
with the paper's and, when papermill gives it a path in the ``repro_json`` parameter, writes
them to a JSON sidecar with :func:`write_sidecar`. ``make notebooks`` then runs::

    python -m dpgp_audit.experiments.reproduction --records build/full \
        --out build/full/REPRODUCTION.md

which reads every ``*.repro.json`` under ``--records`` and writes one table per paper
(paper value, kit value with its 95% interval, setting, status). Each table says the scale
its notebook ran at (:func:`describe_run`): when the executed notebook ``<notebook>.ipynb``
lies beside its sidecar, the parameters papermill injected (its ``metadata.papermill``)
are compared with ``notebooks/full_scale/<notebook>.yaml`` (``--full-scale``), so the page
says "full scale", "default parameters" or which defaults were changed. With ``--write-docs``
the same tables replace the block between ``<!-- REPRODUCTION:START -->`` and
``<!-- REPRODUCTION:END -->`` in ``docs/reproductions.md``, so the guide's table is
regenerated, never typed.

Status of a row (:func:`row_status`):

* ``reproduced`` — the paper's value lies inside the kit's 95% interval
  (kit ± half-width, both bounds included);
* ``explained`` — it does not, and the row carries a stated cause that the notebook
  demonstrates (an experiment, not a guess);
* ``open`` — neither.

A row without an interval (a deterministic number, e.g. a noise multiplier) is
``reproduced`` only when it equals the paper's value to the paper's printed precision
(``rel_tol`` of :func:`row_status`). A paper statement that is a bound ("at least 25 %")
is a row with ``bound="at_least"`` (or ``"at_most"``): reproduced when the kit's interval
reaches the bound's side.

The qualitative claims the notebooks assert ("improves with ε", "one private step beats
two") are tested with :func:`paired_sign_test` and :func:`proportion_increase_test`, one-sided
tests from :mod:`scipy.stats` whose p-value the notebook compares with a stated level.

Pure functions except :func:`write_sidecar`, :func:`read_sidecars` and :func:`main`, which
do the file input and output.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

__all__ = [
    "MARKER_END",
    "MARKER_START",
    "PAPER_ORDER",
    "ReproRow",
    "Sidecar",
    "build_markdown",
    "describe_run",
    "main",
    "paired_sign_test",
    "proportion_increase_test",
    "read_sidecars",
    "replace_between_markers",
    "row_status",
    "write_sidecar",
]

MARKER_START = "<!-- REPRODUCTION:START -->"
MARKER_END = "<!-- REPRODUCTION:END -->"
PAPER_ORDER = ("S18", "S21", "H", "R")
"""Catalogue short names of the papers, in the order of the notebooks."""
PAPER_TITLES = {
    "S18": "S18 — Smith et al. 2018 (notebook 01)",
    "S21": "S21 — Smith et al. 2021 (notebook 02)",
    "H": "H — Honkela (notebook 03)",
    "R": "R — Räisä et al. 2024 (notebook 04)",
}
STATUSES = ("reproduced", "explained", "open")
RUN_BOOKKEEPING = ("repro_json", "show_progress")
"""Parameters that change where a run writes or what it prints, not its numbers."""
BOUNDS = ("equal", "at_least", "at_most")


def row_status(paper_value: float, kit_value: float, half_width: float | None,
               explanation: str = "", *, rel_tol: float = 0.005, bound: str = "equal") -> str:
    """``reproduced`` / ``explained`` / ``open`` for one comparison (see the module docstring).

    Parameters
    ----------
    paper_value, kit_value
        The paper's printed number and the kit's estimate.
    half_width
        Half-width of the kit's 95% interval, or ``None`` for a deterministic number.
    explanation
        The demonstrated cause of a difference (empty: none).
    rel_tol
        Relative tolerance for a deterministic number (default ½ %, a printed precision).
    bound
        ``"equal"`` (the paper prints a value), ``"at_least"`` / ``"at_most"`` (the paper
        states a bound: reproduced when some value of the kit's interval satisfies it).
    """
    p, k = float(paper_value), float(kit_value)
    if not (math.isfinite(p) and math.isfinite(k)):
        raise ValueError(f"paper_value and kit_value must be finite, got {paper_value!r}, "
                         f"{kit_value!r}")
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")
    h = 0.0 if half_width is None else float(half_width)
    if not (math.isfinite(h) and h >= 0):
        raise ValueError(f"half_width must be finite and >= 0, got {half_width!r}")
    if bound == "at_least":
        inside = k + h >= p
    elif bound == "at_most":
        inside = k - h <= p
    elif half_width is None:
        inside = abs(p - k) <= rel_tol * max(abs(p), 1e-12)
    else:
        inside = k - h <= p <= k + h
    if inside:
        return "reproduced"
    return "explained" if explanation.strip() else "open"


@dataclass(frozen=True)
class ReproRow:
    """One paper number against the kit's.

    ``paper`` is a catalogue short name (:data:`PAPER_ORDER`); ``quantity`` what is compared
    (with its unit); ``setting`` the kit's setting that produced ``kit_value`` (repeats,
    folds, parameters); ``explanation`` the demonstrated cause of a gap, or "".
    """

    paper: str
    quantity: str
    paper_value: float
    kit_value: float
    half_width: float | None
    setting: str
    explanation: str = ""
    bound: str = "equal"

    def __post_init__(self) -> None:
        if self.paper not in PAPER_ORDER:
            raise ValueError(f"paper must be one of {PAPER_ORDER}, got {self.paper!r}")
        if not self.quantity.strip():
            raise ValueError("quantity must be a non-empty description")
        object.__setattr__(self, "paper_value", float(self.paper_value))
        object.__setattr__(self, "kit_value", float(self.kit_value))
        if self.half_width is not None:
            object.__setattr__(self, "half_width", float(self.half_width))
        self.status  # noqa: B018 - validates the numbers and the bound

    @property
    def status(self) -> str:
        """See :func:`row_status`."""
        return row_status(self.paper_value, self.kit_value, self.half_width, self.explanation,
                          bound=self.bound)


@dataclass(frozen=True)
class Sidecar:
    """The rows one notebook recorded, with the scale it ran at (e.g. "CI defaults")."""

    notebook: str
    scale: str
    rows: tuple[ReproRow, ...]


def _fmt(v: float) -> str:
    """Format a table number: integers ≥ 1000 in full (409,600), else 3 significant digits.

    From 10 up one decimal is shown (12.2 cm).
    """
    a = abs(v)
    if a >= 1000 and float(v).is_integer():
        return f"{int(v):,}"
    if a == 0 or 0.01 <= a < 1e4:
        return f"{v:.3g}" if a < 10 else f"{v:.1f}"
    return f"{v:.3g}"


def _paper_cell(row: ReproRow) -> str:
    return {"equal": "", "at_least": "≥ ", "at_most": "≤ "}[row.bound] + _fmt(row.paper_value)


def _kit_cell(row: ReproRow) -> str:
    if row.half_width is None:
        return _fmt(row.kit_value)
    return f"{_fmt(row.kit_value)} ± {_fmt(row.half_width)}"


def _escape(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def build_markdown(sidecars: Sequence[Sidecar], *, title: str = "Paper reproductions",
                   level: int = 2) -> str:
    """Markdown with one table per paper (columns: quantity, paper, kit ± 95% half-width,
    setting, status, cause), each under the scale its notebook ran at, and a status count;
    papers with no rows are listed as missing.

    ``level`` is the heading level of ``title`` (the papers' headings are one deeper).
    """
    if not sidecars:
        raise ValueError("sidecars is empty: no notebook recorded any reproduction row")
    if not 1 <= int(level) <= 5:
        raise ValueError(f"level must be an integer in [1, 5], got {level!r}")
    h = "#" * int(level)
    lines = [f"{h} {title}", "",
             "Kit values are means with the half-width of a 95% interval over the stated "
             "repeats. Status: **reproduced** = the paper's value lies in that interval; "
             "**explained** = it does not, for the cause stated (demonstrated in the "
             "notebook); **open** = neither.", ""]
    counts = dict.fromkeys(STATUSES, 0)
    for paper in PAPER_ORDER:
        rows = [r for s in sidecars for r in s.rows if r.paper == paper]
        lines.append(f"{h}# {PAPER_TITLES[paper]}")
        lines.append("")
        runs = sorted({f"{s.notebook}: {s.scale}" for s in sidecars
                       if any(r.paper == paper for r in s.rows)})
        if runs:
            lines += ["Run at " + "; ".join(runs) + ".", ""]
        if not rows:
            lines += ["*(no rows recorded: the notebook was not run with `repro_json`)*", ""]
            continue
        lines.append("| quantity | paper | kit (95% CI) | setting | status | cause |")
        lines.append("|---|---|---|---|---|---|")
        for r in rows:
            counts[r.status] += 1
            lines.append(f"| {_escape(r.quantity)} | {_paper_cell(r)} | {_kit_cell(r)} | "
                         f"{_escape(r.setting)} | {r.status} | {_escape(r.explanation)} |")
        lines.append("")
    lines.append("Totals: " + ", ".join(f"{counts[s]} {s}" for s in STATUSES) + ".")
    return "\n".join(lines) + "\n"


def describe_run(parameters: Mapping[str, object] | None,
                 full_scale: Mapping[str, object] | None = None) -> str:
    """The scale a notebook ran at, from the parameters papermill injected into it.

    Parameters
    ----------
    parameters
        ``metadata.papermill.parameters`` of the executed notebook (``None`` or empty: the
        notebook's own defaults).
    full_scale
        The notebook's ``notebooks/full_scale/<notebook>.yaml`` (``None``: not known).

    Returns ``"full scale"`` when the injected parameters are exactly the full-scale file's,
    ``"default parameters"`` when none were injected, else ``"default parameters except
    k=v, …"``. :data:`RUN_BOOKKEEPING` parameters (output path, progress messages) are
    ignored: they do not change a number.
    """
    def numbers(d: Mapping[str, object] | None) -> dict[str, object]:
        return {k: v for k, v in (d or {}).items() if k not in RUN_BOOKKEEPING}

    given = numbers(parameters)
    if not given:
        return "default parameters"
    if full_scale is not None and given == numbers(full_scale):
        return "full scale"
    return "default parameters except " + ", ".join(f"{k}={v!r}" for k, v in sorted(given.items()))


def _papermill_parameters(executed: Path) -> dict | None:
    """``metadata.papermill.parameters`` of an executed notebook (``None``: not a papermill run)."""
    try:
        meta = json.loads(executed.read_text(encoding="utf-8"))["metadata"]["papermill"]
    except (OSError, KeyError, TypeError, json.JSONDecodeError):
        return None
    params = meta.get("parameters")
    return dict(params) if isinstance(params, dict) else None


def _label_scales(cars: Sequence[Sidecar], records: Path, full_scale_dir: Path) -> list[Sidecar]:
    """Prefix each sidecar's scale with :func:`describe_run` of the executed notebook beside it."""
    out = []
    for car in cars:
        params = _papermill_parameters(records / f"{car.notebook}.ipynb")
        if params is None:
            out.append(car)
            continue
        yaml_path = full_scale_dir / f"{car.notebook}.yaml"
        full = None
        if yaml_path.is_file():
            import yaml

            try:
                full = yaml.safe_load(yaml_path.read_text(encoding="utf-8")) or {}
            except yaml.YAMLError as err:
                raise ValueError(f"{yaml_path}: not a papermill parameter file ({err})") from err
        out.append(replace(car, scale=f"{describe_run(params, full)} ({car.scale})"))
    return out


def paired_sign_test(better: Sequence[float], worse: Sequence[float]) -> float:
    """One-sided exact sign test that ``better[i] < worse[i]`` more often than chance.

    Pairs must share their randomness (same split, same data draw). Ties are dropped.
    Returns the p-value P(Binomial(n, ½) ≥ #wins) (:func:`scipy.stats.binomtest`); with
    n pairs all won it is 2⁻ⁿ, so 7 pairs are the fewest that can reach p < 0.01.
    """
    from scipy.stats import binomtest

    a, b = np.asarray(better, dtype=float), np.asarray(worse, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError("better and worse must be 1-D arrays of the same non-zero length")
    diff = a - b
    diff = diff[diff != 0]
    if diff.size == 0:
        return 1.0
    return float(binomtest(int(np.sum(diff < 0)), int(diff.size), 0.5,
                           alternative="greater").pvalue)


def proportion_increase_test(k_low: int, n_low: int, k_high: int, n_high: int) -> float:
    """One-sided Fisher exact test that a success rate is higher in the second group.

    E.g. how often H Alg. 2 picks the true hyperparameters at a small ε (k_low of n_low
    runs) against a large ε (k_high of n_high). Returns the p-value
    (:func:`scipy.stats.fisher_exact`, ``alternative="less"`` on the low-group odds).
    """
    from scipy.stats import fisher_exact

    for name, k, n in (("low", k_low, n_low), ("high", k_high, n_high)):
        if not (0 <= int(k) <= int(n) and int(n) > 0):
            raise ValueError(f"need 0 <= k_{name} <= n_{name} and n_{name} > 0, got "
                             f"{k!r} of {n!r}")
    table = [[int(k_low), int(n_low) - int(k_low)], [int(k_high), int(n_high) - int(k_high)]]
    return float(fisher_exact(table, alternative="less").pvalue)


def replace_between_markers(text: str, block: str, *, start: str = MARKER_START,
                            end: str = MARKER_END) -> str:
    """``text`` with everything between the ``start`` and ``end`` marker lines replaced by
    ``block`` (markers kept). Raises ``ValueError`` when a marker is missing, repeated or out
    of order, so a guide is never silently left stale.
    """
    if text.count(start) != 1 or text.count(end) != 1:
        raise ValueError(f"text must contain {start!r} and {end!r} exactly once each")
    i, j = text.index(start), text.index(end)
    if j < i:
        raise ValueError(f"{end!r} comes before {start!r}")
    return text[: i + len(start)] + "\n" + block.rstrip("\n") + "\n" + text[j:]


def _row_from_dict(d: dict) -> ReproRow:
    keys = {"paper", "quantity", "paper_value", "kit_value", "half_width", "setting",
            "explanation", "bound"}
    unknown = set(d) - keys - {"status"}
    if unknown:
        raise ValueError(f"unknown keys in a reproduction row: {sorted(unknown)}")
    return ReproRow(**{k: d[k] for k in keys if k in d})


def write_sidecar(path: str | Path, notebook: str, scale: str, rows: Iterable[ReproRow]) -> Path:
    """Write the rows of one notebook run as JSON (the ``repro_json`` sidecar)."""
    rows = tuple(rows)
    if not all(isinstance(r, ReproRow) for r in rows):
        raise ValueError("rows must be ReproRow instances")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"notebook": notebook, "scale": scale,
               "rows": [{**asdict(r), "status": r.status} for r in rows]}
    out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def read_sidecars(paths: Iterable[str | Path]) -> list[Sidecar]:
    """Parse sidecar files written by :func:`write_sidecar` (in the order given)."""
    out = []
    for path in paths:
        try:
            d = json.loads(Path(path).read_text(encoding="utf-8"))
            out.append(Sidecar(str(d["notebook"]), str(d["scale"]),
                               tuple(_row_from_dict(r) for r in d["rows"])))
        except (KeyError, TypeError, json.JSONDecodeError) as err:
            raise ValueError(f"{path}: not a reproduction sidecar ({err})") from err
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dpgp_audit.experiments.reproduction``: build REPRODUCTION.md (and the guide's
    block) from the sidecars under ``--records``.
    """
    ap = argparse.ArgumentParser(prog="python -m dpgp_audit.experiments.reproduction",
                                 description="Build the paper-reproduction tables from the "
                                             "notebooks' *.repro.json sidecars.")
    ap.add_argument("--records", default="build/full",
                    help="directory holding the *.repro.json sidecars (default build/full)")
    ap.add_argument("--out", default=None,
                    help="markdown file to write (default RECORDS/REPRODUCTION.md)")
    ap.add_argument("--write-docs", nargs="?", const="docs/reproductions.md", default=None,
                    metavar="FILE",
                    help="also replace the block between the REPRODUCTION markers in FILE "
                         "(default docs/reproductions.md)")
    ap.add_argument("--full-scale", default="notebooks/full_scale", metavar="DIR",
                    help="folder of the full-scale papermill parameter files the runs are "
                         "compared with (default notebooks/full_scale)")
    args = ap.parse_args(argv)
    records = Path(args.records)
    paths = sorted(records.glob("*.repro.json")) if records.is_dir() else []
    if not paths:
        print(f"error: no *.repro.json sidecars under {records} (run the notebooks with "
              f"-p repro_json PATH, e.g. make notebooks)", file=sys.stderr)
        return 2
    try:
        cars = _label_scales(read_sidecars(paths), records, Path(args.full_scale))
        out = Path(args.out) if args.out else records / "REPRODUCTION.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(build_markdown(cars, title="Reproduction of the papers' numbers",
                                      level=1), encoding="utf-8")
        print(f"wrote {out} from {len(paths)} sidecar(s)")
        if args.write_docs:
            doc = Path(args.write_docs)
            md = build_markdown(cars, title="Latest reproduction tables", level=3)
            doc.write_text(replace_between_markers(doc.read_text(encoding="utf-8"), md),
                           encoding="utf-8")
            print(f"updated the reproduction block of {doc}")
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
