"""docs/reproductions.md: the generated paper-reproduction tables (A.10) say where each row
comes from and are internally consistent.

The block between the REPRODUCTION markers is written by ``python -m
dpgp_audit.experiments.reproduction --write-docs``; these tests catch a hand edit or a block
from an older generator (rows without the scale they ran at, statuses that do not add up).
"""

from __future__ import annotations

import re
from pathlib import Path

from dpgp_audit.experiments.reproduction import MARKER_END, MARKER_START, PAPER_ORDER, STATUSES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reproductions.md"


def _block() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert text.count(MARKER_START) == 1 and text.count(MARKER_END) == 1
    return text[text.index(MARKER_START) + len(MARKER_START):text.index(MARKER_END)]


def _sections() -> list[str]:
    return re.split(r"^#### ", _block(), flags=re.M)[1:]


def _rows(section: str) -> list[list[str]]:
    lines = [ln for ln in section.splitlines() if ln.startswith("| ")]
    return [[c.strip() for c in ln.strip("|").split(" | ")] for ln in lines[1:]]  # no header


def test_every_paper_has_a_section_and_every_table_names_its_scale():
    sections = _sections()
    assert len(sections) == len(PAPER_ORDER)
    for section in sections:
        if "| quantity |" not in section:
            continue
        run = re.search(r"^Run at (.+)\.$", section, flags=re.M)
        assert run, f"no 'Run at' line above the table of {section.splitlines()[0]}"
        assert re.search(r": (full scale|default parameters)", run[1]), run[1]


def test_statuses_add_up_and_every_explained_row_states_its_cause():
    counts = dict.fromkeys(STATUSES, 0)
    for section in _sections():
        for cells in _rows(section):
            quantity, status, cause = cells[0], cells[4], cells[5] if len(cells) > 5 else ""
            assert status in STATUSES, f"{quantity}: status {status!r}"
            if status == "explained":
                assert cause, f"{quantity}: explained without a cause"
            counts[status] += 1
    totals = ", ".join(f"{counts[s]} {s}" for s in STATUSES)
    assert f"Totals: {totals}." in _block()
