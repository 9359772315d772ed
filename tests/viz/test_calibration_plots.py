"""dpgp_audit.viz: pure plotting functions return figures and draw what they are given."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from dpgp_audit.viz import calibration_plots as cp


def test_plot_calibrations_draws_one_line_per_method_with_gaps():
    eps = np.array([0.5, 1.0, 2.0])
    fig = cp.plot_calibrations(eps, {"analytic": np.array([2.0, 1.0, 0.5]),
                                     "classical": np.array([3.0, 1.5, np.nan])}, delta=1e-5)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert set(lines) == {"analytic", "classical"}
    np.testing.assert_array_equal(lines["classical"].get_ydata(), [3.0, 1.5, np.nan])
    assert ax.get_xscale() == ax.get_yscale() == "log"


def test_plots_draw_on_given_axes():
    fig = Figure()
    ax = fig.add_subplot()
    assert cp.plot_privacy_profiles([0, 1], {"a": np.array([0.5, 0.1])}, ax=ax,
                                    targets={"t": (1.0, 0.1)}) is fig
    assert len(ax.get_lines()) == 2


def test_histograms_share_bins_and_selection_bars():
    rng = np.random.default_rng(0)
    fig = cp.plot_output_histograms({"D": rng.normal(size=50), "D'": rng.normal(1, 1, 50)},
                                    bins=10)
    assert len(fig.axes[0].patches) == 2
    fig = cp.plot_selection_frequencies({"D": np.array([0.2, 0.8]), "D'": np.array([0.3, 0.7])},
                                        {"D": np.array([0.25, 0.75])}, candidates=["a", "b"])
    assert len(fig.axes[0].patches) == 4 and len(fig.axes[0].get_lines()) == 1


def test_true_epsilon_plot_has_diagonal():
    eps = np.geomspace(0.1, 10, 5)
    fig = cp.plot_true_epsilon(eps, {"classical": eps * 0.8}, delta=1e-5)
    diag = next(ln for ln in fig.axes[0].get_lines() if ln.get_label() == "true = claimed")
    np.testing.assert_array_equal(diag.get_xdata(), diag.get_ydata())


@pytest.mark.parametrize("epsilon", [0.5, 3.0])
def test_calibration_explorer_marks_refusals(epsilon):
    fig = cp.calibration_explorer(epsilon, 1e-5)
    left, right = fig.axes
    texts = [t.get_text() for t in left.texts]
    refused = sum("refused" in t for t in texts)
    assert refused == (2 if epsilon > 1 else 0)
    assert len(right.get_lines()) == 4 - refused + 1  # profiles + target point


def test_widget_builds_and_calls_plot_once():
    pytest.importorskip("ipywidgets")
    from dpgp_audit.viz.widgets import epsilon_delta_widget

    calls = []
    box = epsilon_delta_widget(lambda e, d: calls.append((e, d)), epsilon=2.0, delta=1e-6)
    eps_slider, delta_slider = box.children[0].children
    assert eps_slider.value == pytest.approx(2.0) and delta_slider.value == pytest.approx(1e-6)
    assert calls == [(pytest.approx(2.0), pytest.approx(1e-6))]  # drawn once on creation
    eps_slider.value = 4.0
    assert calls[-1] == (pytest.approx(4.0), pytest.approx(1e-6))  # redrawn on change
    with pytest.raises(ValueError, match="range"):
        epsilon_delta_widget(lambda e, d: None, epsilon_range=(1.0, 0.5))
