"""dpgp_audit.viz.show / describe and the notebook widgets (issue 11 §3)."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from dpgp_audit.viz import describe, show  # noqa: E402
from dpgp_audit.viz import display as vd  # noqa: E402


def _fig() -> Figure:
    fig = Figure()
    ax = fig.add_subplot()
    ax.bar([0], [3.7])
    ax.text(0, 3.7, "3.73\n(sigma)")
    ax.set_title("σ at ε = 1")
    fig.suptitle("explorer")
    return fig


def test_figure_png_is_a_png_and_bad_input_is_named():
    assert vd.figure_png(_fig()).startswith(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ValueError, match="fig must be a matplotlib Figure"):
        vd.figure_png("not a figure")
    with pytest.raises(ValueError, match="fig must be a matplotlib Figure"):
        describe(None)


def test_describe_lists_titles_and_numbers_on_one_line():
    assert describe(_fig()) == "explorer | σ at ε = 1 [3.73 (sigma)]"
    assert describe(Figure()) == ""


def test_show_displays_png_bytes_under_any_backend_and_closes_pyplot_figures(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(vd, "_in_ipython", lambda: True)
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    fig = plt.figure()
    plt.plot([0, 1], [0, 1])
    assert plt.fignum_exists(fig.number)
    assert show(fig) is None
    assert len(shown) == 1
    assert shown[0].format == "png" and shown[0].data.startswith(b"\x89PNG")
    assert not plt.fignum_exists(fig.number)  # the inline backend will not show it again
    show(_fig())  # a figure pyplot does not manage is shown too
    assert len(shown) == 2


def test_show_outside_ipython_is_quiet(monkeypatch):
    monkeypatch.setattr(vd, "_in_ipython", lambda: False)
    assert show(_fig()) is None


def test_widgets_build_and_check_their_ranges():
    pytest.importorskip("ipywidgets")
    from dpgp_audit.viz.widgets import epsilon_delta_widget, sample_size_widget

    box = epsilon_delta_widget(lambda e, d: _fig(), epsilon=2.0, delta=1e-6)
    eps, dlt = box.children[0].children
    assert eps.description == "ε" and eps.value == pytest.approx(2.0)
    assert dlt.value == pytest.approx(1e-6)
    box = sample_size_widget(lambda n: _fig(), n=500, n_range=(100, 10_000))
    (slider,) = box.children[0].children
    assert slider.value == pytest.approx(500)
    with pytest.raises(ValueError, match="n_range"):
        sample_size_widget(lambda n: _fig(), n_range=(0, 10))
    with pytest.raises(ValueError, match="range"):
        epsilon_delta_widget(lambda e, d: _fig(), epsilon_range=(1.0, 0.5))
