"""viz.audit_report: the planted-bugs chart (A.5) says what it shows (issue: legend and title)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from matplotlib.colors import to_hex  # noqa: E402

from dpgp_audit.viz import style  # noqa: E402
from dpgp_audit.viz.audit_report import plot_planted_catch  # noqa: E402

ROWS = [
    {"id": "planted/a", "n": 0, "auditor": "sensitivity", "verdict": "VIOLATION"},
    {"id": "planted/b", "n": 20000, "auditor": "precision", "verdict": "VIOLATION"},
    {"id": "planted/c", "n": 4000, "auditor": "model-check", "verdict": "VIOLATION"},
    {"id": "planted/d", "n": 5000, "auditor": "blackbox", "verdict": "NO_EVIDENCE"},
    {"id": "planted/e", "n": 5000, "auditor": "blackbox", "verdict": "NO_EVIDENCE",
     "control": True},
]


def _legend_labels(fig):
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_every_dot_colour_has_a_legend_entry():
    fig = plot_planted_catch(ROWS)
    ax = fig.axes[0]
    legend = {to_hex(h.get_color()): t.get_text()
              for h, t in zip(ax.get_legend().legend_handles, ax.get_legend().get_texts(),
                              strict=True)}
    dots = {to_hex(ln.get_color()) for ln in ax.lines}
    assert dots <= set(legend), f"dot colours without a legend entry: {dots - set(legend)}"
    for auditor in ("sensitivity", "precision", "model-check", "blackbox"):
        assert f"auditor: {auditor}" in legend.values()
        assert to_hex(style.auditor_colour(auditor)) in dots


def test_no_auditor_is_drawn_in_the_neutral_grey():
    fig = plot_planted_catch(ROWS)
    assert to_hex(style.NEUTRAL) not in {to_hex(ln.get_color()) for ln in fig.axes[0].lines}


def test_fill_and_marker_encodings_are_explained():
    labels = _legend_labels(plot_planted_catch(ROWS))
    assert any(t.startswith("filled") for t in labels)
    assert any(t.startswith("hollow") for t in labels)
    assert any("negative control" in t for t in labels)
    assert not any("negative control" in t for t in _legend_labels(plot_planted_catch(ROWS[:4])))


def test_title_counts_what_was_flagged_and_claims_nothing_else():
    title = plot_planted_catch(ROWS).axes[0].get_title()
    assert "caught each" not in title
    assert "3 of 4 flagged" in title  # the control is not a bug


def test_control_rows_are_diamonds_and_say_what_is_expected():
    fig = plot_planted_catch(ROWS)
    markers = [ln.get_marker() for ln in fig.axes[0].lines]
    assert markers.count("D") == 1
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any("expected: still private" in t for t in texts)
