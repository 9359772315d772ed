"""Check that numbers quoted in a notebook's prose agree with what the notebook computed.

A teaching notebook must not say "the ratio is 0.5" above a cell that prints 0.25.
The course follows one convention, and this module checks it on an *executed*
notebook (``tests/notebooks/harness.py`` captures the notebook nbval executed and
runs :func:`check_quoted_numbers` on it, so every notebook test checks its prose):

1. **Numbers that depend on the parameters** (a coverage, an RMSE, a true ε) are
   never typed into markdown. A code cell renders them from variables with
   ``IPython.display.Markdown(f"...")``, so prose and result cannot disagree at any
   parameter setting (the tiny CI ones or the full-scale ones).
2. **Numbers fixed by the code** (a planted bug's 0.5 against 0.25, a closed form)
   may be typed into static markdown, followed by the marker ``<!--out-->`` (an HTML
   comment, invisible when rendered), e.g. ``flags 0.5<!--out--> against
   0.25<!--out-->``. Each marked number must equal, at the precision it is written
   with, a number printed by a code cell *above* the markdown cell.
3. A paper's number (28.53 cm, 6.8 cm) is quoted as the paper's, with its source,
   and is not marked: it is not a claim about this notebook's output.

Rounding rule: a quoted ``0.25`` matches any printed value ``v`` with
``round(v, 2) == 0.25`` (half a unit of the last written digit); a quoted ``20 %``
matches a printed 20 or 0.20. ``inf`` matches a printed ``inf``.

Usage::

    python -m dpgp_audit.devtools.quoted_numbers build/ci/00_dp_basics.executed.ipynb
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path

__all__ = ["MARK", "check_quoted_numbers", "marked_numbers", "output_numbers", "matches", "main"]

MARK = "<!--out-->"

_NUMBER = r"[-−+]?(?:\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|inf|∞)"
_MARKED = re.compile(rf"({_NUMBER})(\s?%)?\s?{re.escape(MARK)}")
_PRINTED = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w])"
                      r"|(?<!\w)[-+]?inf(?!\w)")


def _as_text(source: str | Sequence[str]) -> str:
    return source if isinstance(source, str) else "".join(source)


def marked_numbers(markdown: str) -> list[tuple[str, bool]]:
    """The numbers marked ``<!--out-->`` in ``markdown``, as written, with a percent flag.

    Parameters
    ----------
    markdown
        The source of one markdown cell.

    Returns
    -------
    list of (str, bool)
        Each marked number as written (``"0.25"``, ``"1,000"``, ``"inf"``) and whether a
        ``%`` sign follows it.
    """
    return [(m.group(1), bool(m.group(2))) for m in _MARKED.finditer(markdown)]


def _output_text(output: dict) -> str:
    parts = []
    if "text" in output:
        parts.append(_as_text(output["text"]))
    data = output.get("data") or {}
    for key in ("text/plain", "text/markdown", "text/html"):
        if key in data:
            parts.append(_as_text(data[key]))
    return "\n".join(parts)


def output_numbers(outputs: Iterable[dict]) -> list[float]:
    """Every number printed in ``outputs`` (stream text, plain text, rendered markdown)."""
    values = []
    for out in outputs:
        for token in _PRINTED.findall(_output_text(out)):
            try:
                values.append(float(token))
            except ValueError:
                continue
    return values


def _parse(quoted: str) -> tuple[float, int]:
    """The value of a quoted number and its number of decimals."""
    text = quoted.replace("−", "-").replace(",", "").replace("∞", "inf")
    if text.lstrip("+-") == "inf":
        return float(text), 0
    try:
        dec = Decimal(text)
    except InvalidOperation as err:
        raise ValueError(f"cannot read the quoted number {quoted!r}") from err
    exponent = dec.as_tuple().exponent
    return float(dec), max(0, -int(exponent)) if isinstance(exponent, int) else 0


def matches(quoted: str, printed: float, *, percent: bool = False) -> bool:
    """True when ``printed`` rounds to ``quoted`` at the precision ``quoted`` is written with.

    >>> matches("0.25", 0.2503), matches("0.25", 0.26), matches("20", 0.2, percent=True)
    (True, False, True)
    """
    value, decimals = _parse(quoted)
    if math.isinf(value) or math.isinf(printed):
        return value == printed
    half_unit = 0.5 * 10.0 ** (-decimals) * (1 + 1e-9)
    candidates = [printed]
    if percent:
        candidates.append(100.0 * printed)
    return any(abs(c - value) <= half_unit for c in candidates)


def check_quoted_numbers(nb: dict) -> list[str]:
    """Problems of one executed notebook: marked numbers that no output above supports.

    Parameters
    ----------
    nb
        An executed notebook (nbformat dict): code cells carry their outputs.

    Returns
    -------
    list of str
        One message per marked number that no earlier code-cell output prints (at the
        written precision); empty when the prose agrees with the outputs.
    """
    problems = []
    printed: list[float] = []
    for index, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "code":
            printed.extend(output_numbers(cell.get("outputs", [])))
            continue
        if cell.get("cell_type") != "markdown":
            continue
        for quoted, percent in marked_numbers(_as_text(cell.get("source", ""))):
            if not any(matches(quoted, v, percent=percent) for v in printed):
                shown = quoted + (" %" if percent else "")
                problems.append(
                    f"cell {index}: the markdown quotes {shown} as computed, but no output "
                    "above prints it (render it from a variable with Markdown(f'...') or fix "
                    "the prose)")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """Check executed notebooks given on the command line; exit 1 on any problem."""
    import nbformat

    paths = list(sys.argv[1:] if argv is None else argv)
    status = 0
    for path in paths:
        for problem in check_quoted_numbers(nbformat.read(Path(path), as_version=4)):
            print(f"{path}: {problem}")
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
