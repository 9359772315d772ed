r"""Check that every number in a notebook's prose is computed, checked or cited.

A teaching notebook must not say "the ratio is 0.5" above a cell that prints 0.25,
nor "a noise of about 7 cm" when nothing on the page computes 7. The course follows
one convention (``docs/course.md``, "Numbers in prose"), and this module checks it on
an *executed* notebook (``tests/notebooks/harness.py`` captures the notebook nbval
executed and runs :func:`check_quoted_numbers` on it, so every notebook test checks its
prose). Every number written in a markdown cell must be one of:

1. **rendered from variables** by a code cell (``display(Markdown(f"..."))``): then it
   is an output, not markdown, and prose and result cannot disagree at any parameters;
2. **followed by** ``<!--out-->`` (an HTML comment, invisible when rendered): it must
   equal, at the precision it is written with, a number printed by a code cell *above*
   the markdown cell (``flags 0.5<!--out--> against 0.25<!--out-->``);
3. **followed by** ``<!--paper-->``: a value printed in a paper, and the same sentence
   names the source (a paper's short name S18, S21, H or R, an author, "et al." or
   "paper"), e.g. ``S18 Table 1 reports 12.2<!--paper--> cm``;
4. **followed by** ``<!--run: LABEL-->``: a value from another run or scale, and
   ``LABEL`` (e.g. ``full scale``) appears in the visible text of the same paragraph,
   so the reader is told where the number comes from;
5. **exempt by its form**: inside ``$…$``/``$$…$$`` math or a ``code span`` (write
   parameter settings there: $\varepsilon = 1$, ``n_repeats=50``), in a link target,
   a year in a citation (``Smith et al. 2018``, ``Balle & Wang (2018)``), a section,
   equation, table, figure, algorithm, notebook or exercise number (``§4–§6``,
   ``eqs. 38–39``, ``Fig. 1A``, ``notebooks 01–05``, a heading's own number, a
   zero-padded notebook number such as ``00b``), a list enumerator (``1.``), the ★
   difficulty tags.

Anything else is reported. A marker that follows no number is reported too (it would
check nothing).

Rounding rule of ``<!--out-->``: a quoted ``0.25`` matches any printed value ``v`` with
``round(v, 2) == 0.25`` (half a unit of the last written digit); a quoted ``20 %``
matches a printed 20 or 0.20. ``inf`` matches a printed ``inf``.

Usage::

    python -m dpgp_audit.devtools.quoted_numbers build/ci/00_dp_basics.executed.ipynb
    python -m dpgp_audit.devtools.quoted_numbers --prose notebooks/*.ipynb   # no outputs
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

__all__ = [
    "MARK",
    "PAPER_MARK",
    "ProseNumber",
    "check_prose",
    "check_quoted_numbers",
    "main",
    "marked_numbers",
    "matches",
    "output_numbers",
    "prose_numbers",
    "prose_problems",
]

MARK = "<!--out-->"
PAPER_MARK = "<!--paper-->"
_RUN_MARK = re.compile(r"<!--\s*run:\s*(.*?)\s*-->", re.DOTALL)
_ANY_MARK = re.compile(r"<!--out-->|<!--paper-->|<!--\s*run:\s*.*?-->", re.DOTALL)

_NUMBER = r"[-−+]?(?:\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|inf|∞)"
_MARKED = re.compile(rf"({_NUMBER})(\s?%)?\s?{re.escape(MARK)}")
_PRINTED = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w])"
                      r"|(?<!\w)[-+]?inf(?!\w)")
# a number written in prose: ASCII digits not glued to a word (S18, x_3, P.1, 10⁵'s 5)
_PROSE_NUMBER = re.compile(
    r"(?<![\w.\\/#])[-−+]?[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:[eE][-+−]?[0-9]+)?")
# what may stand between a number and its marker
_BEFORE_MARK = re.compile(r"(\s?%)?\s?(?=<!--)")

# -- exemptions by form --------------------------------------------------------------
_KEYWORDS = (r"§§?|sections?|secs?\.|eqs?\.|equations?|tables?|tabs?\.|figs?\.|figures?|"
             r"alg\.|algs\.|algorithms?|notebooks?|exercises?|ex\.|theorems?|thms?\.?|"
             r"lemmas?|defs?\.|definitions?|appendi(?:x|ces)|app\.|propositions?|props?\.|"
             r"corollar(?:y|ies)|cor\.|lines?|parts?|chapters?|steps?")
_ITEM = r"\(?§?[A-Z]?[0-9]+(?:\.[0-9]+)*[a-z]?\)?[A-Z]?(?![\w.]?[0-9])"
_SEP = r"\s*(?:[–—-]|,|and|or|&|to)\s*(?:§|eqs?\.\s*)?"
_REFERENCE = re.compile(rf"(?<![\w])(?:{_KEYWORDS})\s*{_ITEM}(?:{_SEP}{_ITEM})*",
                        re.IGNORECASE)
_YEAR = re.compile(r"(?<![\w.])(?:19|20)[0-9]{2}[a-z]?(?![\w.]?[0-9])")
_BEFORE_YEAR = re.compile(
    r"(?:et\s+al\.?|[A-ZÀ-Þ][\w'’&-]*|(?:19|20)[0-9]{2}[a-z]?\s*(?:,|and|&|–|-))"
    r"[\s,(]*$")
_NOTEBOOK_NUMBER = re.compile(r"(?<![\w.])0[0-9][a-z]?(?![\w.]?[0-9])")
_HEADING_NUMBER = re.compile(r"^(\s{0,3}#{1,6}\s+)([0-9]+[A-Za-z]?(?:\.[0-9]+)*)",
                             re.MULTILINE)
_ENUMERATOR = re.compile(r"^(\s*)([0-9]+)(?=[.)]\s)", re.MULTILINE)

# -- regions that are not prose ------------------------------------------------------
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_FENCE = re.compile(r"^(\s*)(```|~~~).*?^\s*\2", re.DOTALL | re.MULTILINE)
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$|\\\[.*?\\\]|\\\(.*?\\\)", re.DOTALL)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:[^$\n]|\n(?![ \t]*\n))+?(?<!\\)\$")
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)|\]\[[^\]]*\]|"
                          r"^\s*\[[^\]]+\]:\s*\S+.*$|<https?://[^>]+>|https?://\S+",
                          re.MULTILINE)
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")

# -- naming a source ----------------------------------------------------------------
_SOURCE = re.compile(
    r"\b(?:S18(?:-supp)?|S21|H|R)\b|et\s+al\b|\bpapers?(?:'s|’s)?\b|"
    r"\b(?:Smith|Álvarez|Alvarez|Zwiessele|Lawrence|Honkela|Räisä|Raisa|Markou|Ashman|"
    r"Bruinsma|Tobaben|Turner|Hall|Rinaldo|Wasserman|Balle|Wang|Dwork|Roth|Dong|Su|"
    r"Mironov|Bun|Steinke|Titsias|Rasmussen|Williams|Biswas|Kamath)\b")
_TABLE_LINE = re.compile(r"^\s*\|")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[*_\"“])|\n(?=\s*(?:[*+-]|[0-9]+[.)])\s)")


def _as_text(source: str | Sequence[str]) -> str:
    return source if isinstance(source, str) else "".join(source)


def _blank(text: str, pattern: re.Pattern, group: int = 0) -> str:
    """``text`` with the matches of ``pattern`` (or their ``group``) replaced by spaces.

    Newlines are kept, so positions and line structure stay those of the original.
    """
    out = list(text)
    for m in pattern.finditer(text):
        start, end = m.span(group)
        if start < 0:
            continue
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "
    return "".join(out)


def _prose_mask(markdown: str) -> str:
    """``markdown`` with every region that is not checked prose blanked (positions kept)."""
    text = _blank(markdown, _COMMENT)
    for pattern in (_FENCE, _DISPLAY_MATH, _INLINE_MATH, _CODE_SPAN, _LINK_TARGET, _HTML_TAG):
        text = _blank(text, pattern)
    text = _blank(text, _HEADING_NUMBER, 2)
    text = _blank(text, _ENUMERATOR, 2)
    text = _blank(text, _REFERENCE)
    out = list(text)
    for m in _YEAR.finditer(text):  # "Smith et al. 2018 and 2021": each sees the original
        if _BEFORE_YEAR.search(text[max(0, m.start() - 60):m.start()]):
            out[m.start():m.end()] = " " * (m.end() - m.start())
    return _blank("".join(out), _NOTEBOOK_NUMBER)


@dataclass(frozen=True)
class ProseNumber:
    """One number written in a markdown cell's prose.

    Attributes
    ----------
    text
        The number as written (``"7.15"``, ``"12,436"``).
    start
        Its offset in the cell's source.
    marker
        ``"out"``, ``"paper"``, ``"run"`` or ``""`` (unmarked).
    label
        For ``"run"``: the label of the marker.
    """

    text: str
    start: int
    marker: str
    label: str = ""


def _marker_after(markdown: str, end: int) -> tuple[str, str, int]:
    """(kind, label, marker start) of a marker right after offset ``end``, else ("", "", -1)."""
    gap = _BEFORE_MARK.match(markdown, end)
    if gap is None:
        return "", "", -1
    at = gap.end()
    if markdown.startswith(MARK, at):
        return "out", "", at
    if markdown.startswith(PAPER_MARK, at):
        return "paper", "", at
    run = _RUN_MARK.match(markdown, at)
    if run is not None:
        return "run", run.group(1), at
    return "", "", -1


def prose_numbers(markdown: str) -> list[ProseNumber]:
    """Every number of one markdown cell's prose that is not exempt by its form.

    Parameters
    ----------
    markdown
        The source of one markdown cell.

    Returns
    -------
    list of ProseNumber
        In order of appearance, each with the marker that follows it (if any).
    """
    masked = _prose_mask(markdown)
    found = []
    for m in _PROSE_NUMBER.finditer(masked):
        kind, label, _ = _marker_after(markdown, m.end())
        found.append(ProseNumber(m.group(0), m.start(), kind, label))
    return found


def _block(markdown: str, pos: int) -> tuple[int, int]:
    """Start and end of the paragraph (blank-line separated block) holding offset ``pos``."""
    starts = [0] + [m.end() for m in re.finditer(r"\n[ \t]*\n", markdown)]
    start = max(s for s in starts if s <= pos)
    nxt = re.compile(r"\n[ \t]*\n").search(markdown, pos)
    return start, nxt.start() if nxt else len(markdown)


def _visible(text: str) -> str:
    return " ".join(_COMMENT.sub(" ", text).split()).lower()


def _sentence(markdown: str, pos: int) -> str:
    """The sentence holding offset ``pos`` (a table row with its header row)."""
    start, end = _block(markdown, pos)
    block = markdown[start:end]
    rel = pos - start
    lines = block.splitlines(keepends=True)
    if lines and _TABLE_LINE.match(lines[0]):
        offset = 0
        for line in lines:
            if offset <= rel < offset + len(line) or line is lines[-1]:
                return lines[0] + line
            offset += len(line)
    bounds = [0] + [m.end() for m in _SENTENCE_END.finditer(_COMMENT.sub(
        lambda c: " " * len(c.group(0)), block))] + [len(block)]
    lo = max(b for b in bounds if b <= rel)
    hi = min((b for b in bounds if b > rel), default=len(block))
    return block[lo:hi]


def _context(markdown: str, start: int, width: int = 50) -> str:
    left = markdown[max(0, start - width):start]
    right = markdown[start:start + width]
    return " ".join((left + right).split())


def prose_problems(markdown: str) -> list[str]:
    """What one markdown cell's prose breaks of the convention, outputs aside.

    Unmarked numbers that are not exempt by form, ``<!--paper-->`` numbers whose
    sentence names no source, ``<!--run: LABEL-->`` numbers whose paragraph does not
    show ``LABEL``, and markers that follow no number. (Whether ``<!--out-->`` numbers
    match the outputs is checked by :func:`check_quoted_numbers`.)

    Parameters
    ----------
    markdown
        The source of one markdown cell.

    Returns
    -------
    list of str
        One message per problem, quoting the number in its context.
    """
    problems = []
    numbers = prose_numbers(markdown)
    for num in numbers:
        where = f"{num.text!r} in «{_context(markdown, num.start)}»"
        if num.marker == "":
            problems.append(
                f"{where}: a number no output supports; render it from a variable "
                "(Markdown(f'...')), mark it <!--out--> (printed above), <!--paper--> (with "
                "its source in the sentence) or <!--run: LABEL--> (LABEL in the paragraph), "
                "or write a setting in $math$ or a `code span`")
        elif num.marker == "paper" and not _SOURCE.search(
                _COMMENT.sub(" ", _sentence(markdown, num.start))):
            problems.append(f"{where}: marked <!--paper--> but its sentence names no source "
                            "(S18, S21, H, R, an author, 'et al.' or 'the paper')")
        elif num.marker == "run":
            label = " ".join(num.label.split()).lower()
            start, end = _block(markdown, num.start)
            if not label or label not in _visible(markdown[start:end]):
                problems.append(f"{where}: marked <!--run: {num.label}--> but its paragraph "
                                f"does not say {num.label!r} in its visible text")
    # a marker must follow a number (an orphan checks nothing)
    masked = _prose_mask(markdown)
    for m in _ANY_MARK.finditer(markdown):
        before = _BEFORE_MARK_NUMBER.search(markdown[:m.start()])
        ok = before is not None and (
            masked[before.start(1):before.end(1)].strip() == before.group(1).strip()
            or before.group(1) in ("inf", "∞"))
        if not ok:
            problems.append(f"marker {m.group(0)!r} in «{_context(markdown, m.start())}» "
                            "follows no number of the prose")
    return problems


_BEFORE_MARK_NUMBER = re.compile(rf"({_NUMBER})(\s?%)?\s?$")


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


def check_prose(nb: dict) -> list[str]:
    """:func:`prose_problems` of every markdown cell of ``nb`` (outputs are not needed).

    Parameters
    ----------
    nb
        A notebook (nbformat dict), executed or not.

    Returns
    -------
    list of str
        ``"cell N: ..."`` per problem.
    """
    problems = []
    for index, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "markdown":
            problems += [f"cell {index}: {p}"
                         for p in prose_problems(_as_text(cell.get("source", "")))]
    return problems


def check_quoted_numbers(nb: dict) -> list[str]:
    """Problems of one executed notebook's prose: every rule of the module docstring.

    Parameters
    ----------
    nb
        An executed notebook (nbformat dict): code cells carry their outputs.

    Returns
    -------
    list of str
        One message per ``<!--out-->`` number that no earlier code-cell output prints
        (at the written precision), and per problem of :func:`check_prose`; empty when
        every number of the prose is computed, checked or cited.
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
    return problems + check_prose(nb)


def main(argv: Sequence[str] | None = None) -> int:
    """Check notebooks given on the command line; exit 1 on any problem.

    ``--prose`` checks only what needs no outputs (source notebooks, not executed).
    """
    import nbformat

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or {"-h", "--help"} & set(args):
        print("usage: python -m dpgp_audit.devtools.quoted_numbers [--prose] NOTEBOOK.ipynb ...")
        return 0 if args else 2
    prose_only = "--prose" in args
    paths = [a for a in args if a != "--prose"]
    status = 0
    for path in paths:
        nb = nbformat.read(Path(path), as_version=4)
        for problem in (check_prose(nb) if prose_only else check_quoted_numbers(nb)):
            print(f"{path}: {problem}")
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
