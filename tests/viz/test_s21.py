"""The S21 figures of notebook 02 say what they encode (catalogue S21.1–S21.5).

Each changed plot function: a title, labelled axes with units where there are any, a
legend, and a scale for every size or transparency encoding.
"""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib
import numpy as np

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from dpgp_audit.viz import s21  # noqa: E402


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def teardown_function():
    plt.close("all")


def test_noise_map_has_scales_for_area_and_opacity():
    rng = np.random.default_rng(0)
    ax = s21.plot_noise_map_2d(rng.uniform(0, 50, (20, 2)), rng.uniform(0, 50, (9, 2)),
                               np.linspace(120.0, 160.0, 9), np.linspace(0, 50, 9),
                               Z=rng.uniform(0, 50, (3, 2)), xlabel="age (years)",
                               ylabel="weight (kg)", value_label="height", unit="cm")
    texts = _texts(ax)
    assert ax.get_title() and "(years)" in ax.get_xlabel() and "(kg)" in ax.get_ylabel()
    assert "inducing inputs" in texts and "training inputs" in texts
    assert "height 120 cm" in texts and "height 160 cm" in texts, texts
    assert [t for t in texts if t.startswith("noise sd")] == [
        "noise sd 0 cm", "noise sd 20 cm", "noise sd ≥ 40 cm"]


def test_stripes_has_a_size_scale_and_title():
    rng = np.random.default_rng(1)
    pts = SimpleNamespace(X=rng.uniform(0, 10, (12, 2)), y=np.where(rng.uniform(size=12) > .5,
                                                                      1.0, -1.0))
    ax = s21.plot_stripes(pts, pts, rng.uniform(size=(3, 12)))
    texts = _texts(ax)
    assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
    assert sum(t.startswith("|P − ½|") for t in texts) == 3, texts


def test_rmse_and_digits_plots_have_titles_and_integer_ticks():
    ax = s21.plot_rmse_vs_inducing({"m": [2, 5], "dp": [3.0, 2.0], "no_dp": [1.0, 1.0]})
    assert ax.get_title() and ax.get_legend() is not None
    ax = s21.plot_digits_accuracy({"lengthscales": [10.0], "m": [4, 8], "no_dp": [[.7, .8]],
                                   "dp": [[.5, .6]]}, chance=0.55)
    assert ax.get_title() and "accuracy" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "8"]
    assert "chance" in _texts(ax)


def test_selection_plot_titles_say_what_the_width_is():
    axes = s21.plot_selection({"rmse": np.array([10.0, 20.0]),
                               "probabilities": np.array([0.7, 0.3]), "expected_rmse": 13.0,
                               "uniform_rmse": 15.0})
    assert all("P(select)" in ax.get_title() for ax in axes)
    assert axes[0].figure._suptitle is not None


def test_release_violins_labels_and_legend():
    rng = np.random.default_rng(2)
    x = np.linspace(0, 10, 6)
    ax = s21.plot_release_violins(x, rng.uniform(size=(8, 6)), rng.uniform(size=6),
                                  xlabel="worst concave points (scaled, 0–10)",
                                  ylabel="P(malignant)")
    texts = _texts(ax)
    assert ax.get_title() and ax.get_xlabel().startswith("worst") and ax.get_ylabel()
    assert any(t.startswith("DP releases (8)") for t in texts) and any("no DP" in t
                                                                       for t in texts)


def test_selection_by_budget_labels_colour_bar_and_cells():
    ax = s21.plot_selection_by_budget([[0.5, 0.5], [0.1, 0.9]], [0.1, 10.0], [5.0, 125.0])
    assert ax.get_xlabel() == "selection budget ε" and ax.get_ylabel() == "lengthscale (years)"
    assert ax.get_title()
    assert ax.figure.axes[-1].get_ylabel().startswith("P(selected)")
    assert len(ax.texts) == 4  # every cell carries its value


def test_format_table1_markdown_puts_the_papers_value_beside_ours():
    rows = [{"dims": "1d", "method": "standard", "dp": True, "rmse": 14.06, "sd": 4.1,
             "paper": (13.3, 3.2)},
            {"dims": "1d", "method": "sparse", "dp": True, "rmse": 10.3, "sd": 1.6,
             "paper": None}]
    text = s21.format_table1_markdown(rows)
    lines = text.splitlines()
    assert lines[0] == "| | standard | sparse |" and lines[1] == "|---|---|---|"
    assert lines[2] == "| 1D, DP | 14.1 ± 4.1 (13.3 ± 3.2) | 10.3 ± 1.6 |"
