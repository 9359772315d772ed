"""The course's figures follow one visual language (issue 14 §4; ``dpgp_audit.viz.style``).

Expected colours come from the palette table itself (a method keeps its colour in
every figure), the verdict rule (NO_EVIDENCE must not read as 'safe'), and
matplotlib's own objects (bar containers, image colour limits, line z-order).
"""

from __future__ import annotations

import colorsys
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest
from matplotlib.colors import to_hex, to_rgb

matplotlib.use("Agg")

from dpgp_audit.viz import style  # noqa: E402

# methods drawn together in one figure of the course must be told apart
FIGURE_GROUPS = [
    ("analytic", "gdp", "classical", "hall"),                       # 00
    ("non-dp", "standard DP-GP", "cloaking", "integral binning", "simple binning"),  # 01
    ("DP-GP (eq. 14)", "naive", "DP-GP (symmetric S22)"),           # 03 Fig. 2
    ("oracle (non-private)", "DP-SVGP", "DPConvCNP"),               # 04
]


@pytest.mark.parametrize("group", FIGURE_GROUPS, ids=lambda g: g[0])
def test_methods_in_one_figure_have_distinct_colours(group):
    colours = [style.method_colour(m) for m in group]
    assert len(set(colours)) == len(colours), dict(zip(group, colours, strict=True))


def test_aliases_keep_one_colour_per_method():
    baseline = style.method_colour("DP-SGD SVGP")
    assert style.method_colour("DP-SVGP") == baseline
    assert style.method_colour("DP-SVGP (200 DP-SGD steps)") == baseline
    assert style.method_colour("dpconvcnp forward") == style.method_colour("DPConvCNP")
    assert style.method_colour("Oracle (non-private)") == style.method_colour("oracle")


def test_unknown_labels_get_reserve_colours_not_a_methods():
    with pytest.raises(ValueError, match="names no method"):
        style.method_colour("my new method")
    got = style.colours_for(["cloaking", "mine", "yours"])
    assert got["cloaking"] == style.method_colour("cloaking")
    assert got["mine"] != got["yours"]
    assert not {got["mine"], got["yours"]} & set(style.METHOD_COLOURS.values())


def test_no_evidence_is_not_drawn_in_a_safe_colour():
    r, g, b = to_rgb(style.verdict_colour("NO_EVIDENCE"))
    _, _, saturation = colorsys.rgb_to_hls(r, g, b)
    assert saturation < 0.1, "NO_EVIDENCE must be a neutral grey, not a green"
    assert style.verdict_colour("VIOLATION") != style.verdict_colour("NO_EVIDENCE")
    with pytest.raises(ValueError, match="verdict must be one of"):
        style.verdict_colour("SAFE")


def test_heatmap_limits_span_the_data():
    lo, hi = style.heatmap_limits(np.array([[0.23, 0.27], [0.25, np.nan]]), pad=0.0)
    assert (lo, hi) == (0.23, 0.27)
    lo, hi = style.heatmap_limits(np.array([0.5, 0.5]))
    assert lo < 0.5 < hi
    with pytest.raises(ValueError, match="no finite entry"):
        style.heatmap_limits(np.array([np.nan]))
    with pytest.raises(ValueError, match="pad"):
        style.heatmap_limits(np.array([0.1, 0.2]), pad=-1)


def _bars_on_log_axes(fig):
    from matplotlib.container import BarContainer

    bad = []
    for ax in fig.axes:
        if "log" in (ax.get_xscale(), ax.get_yscale()):
            bad += [c for c in ax.containers if isinstance(c, BarContainer)]
    return bad


def test_planted_catch_and_deployment_times_draw_no_bars_on_log_axes():
    from dpgp_audit.viz.audit_report import plot_planted_catch
    from dpgp_audit.viz.dpconvcnp_plots import plot_deployment_times

    rows = [{"id": "planted/a", "n": 0, "auditor": "sensitivity", "verdict": "VIOLATION"},
            {"id": "planted/b", "n": 20000, "auditor": "blackbox", "verdict": "NO_EVIDENCE"}]
    fig = plot_planted_catch(rows)
    assert fig.axes[0].get_xscale() == "log" and not _bars_on_log_axes(fig)
    fig = plot_deployment_times({"DPConvCNP forward": 0.01, "DP-SVGP (200 DP-SGD steps)": 3.0})
    assert not _bars_on_log_axes(fig)
    dots = [ln for ln in fig.axes[0].lines if ln.get_marker() == "o"]
    assert [to_hex(ln.get_color()) for ln in dots] == [
        to_hex(style.method_colour("DPConvCNP")), to_hex(style.method_colour("DP-SGD SVGP"))]


def test_selection_heatmap_uses_the_datas_range():
    from dpgp_audit.viz.s18 import plot_selection_heatmap

    probs = np.array([[0.23, 0.24, 0.26, 0.27], [0.25, 0.25, 0.25, 0.25]])
    fig = plot_selection_heatmap(probs, ["a", "b"], ["1", "2", "3", "4"])
    vmin, vmax = fig.axes[0].images[0].get_clim()
    assert 0.2 < vmin < 0.23 and 0.27 < vmax < 0.3


def test_true_equals_claimed_line_stays_visible():
    from dpgp_audit.viz.calibration_plots import plot_true_epsilon

    eps = np.geomspace(0.1, 10, 5)
    fig = plot_true_epsilon(eps, {"analytic": eps.copy(), "hall": eps * 1.5}, delta=1e-5)
    lines = fig.axes[0].lines
    diag = next(ln for ln in lines if ln.get_label() == "true = claimed")
    others = [ln for ln in lines if ln is not diag]
    assert diag.get_zorder() > max(ln.get_zorder() for ln in others)
    assert diag.get_linestyle() != "-"  # dashed: the analytic curve underneath shows through
    analytic = next(ln for ln in lines if ln.get_label() == "analytic")
    assert to_hex(analytic.get_color()) == to_hex(style.method_colour("analytic"))


def test_nll_and_predictive_plots_colour_by_method():
    from dpgp_audit.viz.dpconvcnp_plots import plot_nll_curves, plot_predictive

    curve = SimpleNamespace(ns=np.array([10, 100]), mean=np.array([1.0, 0.5]),
                            sem=np.array([0.1, 0.1]))
    names = ["oracle", "DP-SVGP", "DPConvCNP"]
    fig = plot_nll_curves(dict.fromkeys(names, curve))
    got = [to_hex(c.lines[0].get_color()) for c in fig.axes[0].containers]
    assert got == [to_hex(style.method_colour(n)) for n in names]
    xs = np.linspace(0, 1, 5)
    preds = {"DPConvCNP": (xs, xs + 1), "oracle (non-private)": (xs, xs + 1)}
    fig = plot_predictive(xs, xs, xs, preds)
    got = [to_hex(ln.get_color()) for ln in fig.axes[0].lines]
    assert got == [to_hex(style.method_colour(n)) for n in preds]


def test_auditor_colours_are_shared_by_the_audit_plots():
    from dpgp_audit.viz import audit_report

    assert audit_report._AUDITOR_COLOURS is style.AUDITOR_COLOURS
    assert style.auditor_colour("blackbox") == style.AUDITOR_COLOURS["blackbox"]
    with pytest.raises(ValueError, match="auditor must be one of"):
        style.auditor_colour("oracle")


def _colours_of(fig) -> dict[str, str]:
    return {ln.get_label(): to_hex(ln.get_color()) for ax in fig.axes for ln in ax.get_lines()}


def test_s21_plots_colour_by_method():
    """Notebook 02's figures: the non-private GP in the non-DP colour, releases in cloaking's."""
    import matplotlib.pyplot as plt

    from dpgp_audit.viz import s21

    non_dp, cloak = to_hex(style.method_colour("non-dp")), to_hex(style.method_colour("cloaking"))
    x = np.linspace(0.0, 10.0, 8)
    rng = np.random.default_rng(0)
    try:
        ax = s21.plot_noise_band_1d(x, x, x, x, 0 * x + 1, samples=rng.normal(size=(2, 8)),
                                    post_sd=0 * x + 1)
        got = _colours_of(ax.figure)
        assert got["non-DP mean"] == non_dp
        assert got["DP releases (cloaking)"] == cloak == got["± DP noise sd"]
        ax = s21.plot_rmse_vs_inducing({"m": [5, 10], "dp": [3.0, 2.0], "no_dp": [1.0, 1.0]})
        got = _colours_of(ax.figure)
        assert (got["(ε, δ)-DP (cloaking)"], got["no DP"]) == (cloak, non_dp)
        ax = s21.plot_digits_accuracy({"lengthscales": [1.0, 2.0], "m": [5, 10],
                                       "no_dp": np.ones((2, 2)), "dp": np.ones((2, 2)) / 2})
        got = _colours_of(ax.figure)
        assert {got["ℓ = 1, no DP"], got["ℓ = 2, no DP"]} == {non_dp}
        assert {got["ℓ = 1, DP"], got["ℓ = 2, DP"]} == {cloak}
        ax = s21.plot_noise_map_2d(rng.uniform(size=(5, 2)), rng.uniform(size=(4, 2)),
                                   np.arange(4.0), np.ones(4))
        disks = ax.collections[0].get_facecolors()
        assert {to_hex(c[:3]) for c in disks} == {cloak}
        axes = s21.plot_selection({"rmse": np.array([1.0, 2.0]),
                                   "probabilities": np.array([0.6, 0.4]),
                                   "expected_rmse": 1.4, "uniform_rmse": 1.5})
        bars = [p for a in axes for p in a.patches]
        assert {to_hex(p.get_facecolor()[:3]) for p in bars} == {cloak}
        assert not _bars_on_log_axes(axes[0].figure)
    finally:
        plt.close("all")


def test_honkela_and_dpsetconv_plots_use_the_method_colours():
    import matplotlib.pyplot as plt

    from dpgp_audit.viz.dpconvcnp_plots import plot_dpsetconv_release
    from dpgp_audit.viz.honkela import plot_sinc_fits

    x = np.linspace(0.0, 1.0, 6)
    fit = SimpleNamespace(V=x, mean=x, sd=0 * x + 0.1, Z=x[::2], u_mean=x[::2], epsilon=1.0)
    try:
        fig = plot_sinc_fits(SimpleNamespace(X=x[:, None], y=x), [fit])
        assert _colours_of(fig)["DP-GP mean"] == to_hex(style.method_colour("DP-GP (eq. 14)"))
        fig = plot_dpsetconv_release(x, np.ones((2, 6)), np.zeros((2, 6)), x, x, clip_bound=1.0)
        assert _colours_of(fig)["released (DP)"] == to_hex(style.method_colour("DPConvCNP"))
    finally:
        plt.close("all")


def test_rounding_attack_plot_colours_by_verdict_on_a_log_axis_without_bars():
    import matplotlib.pyplot as plt

    from dpgp_audit.viz.audit_report import plot_rounding_attack

    rows = [{"id": "planted/a-no-domain", "domain": None, "refused": False, "distinct": [1, 2],
             "verdict": "VIOLATION", "epsilon_lb": 5.0, "claimed": 1.0},
            {"id": "P.1/a", "domain": 1e6, "refused": False, "distinct": [300, 300],
             "verdict": "NO_EVIDENCE", "epsilon_lb": 0.0, "claimed": 1.0}]
    try:
        fig = plot_rounding_attack(rows, pilot=300)
        ax = fig.axes[0]
        assert ax.get_xscale() == "log" and not _bars_on_log_axes(fig)
        dots = [ln for ln in ax.lines if ln.get_marker() == "o"]
        assert [to_hex(d.get_color()) for d in dots] == [
            to_hex(style.verdict_colour("VIOLATION")), to_hex(style.verdict_colour("NO_EVIDENCE"))]
        assert [d.get_xdata()[0] for d in dots] == [1, 300]  # the smaller side's count
        with pytest.raises(ValueError, match="pilot"):
            plot_rounding_attack(rows, pilot=0)
    finally:
        plt.close("all")


def test_size_and_alpha_legends_key_the_encodings_and_survive_a_second_legend():
    from matplotlib.figure import Figure

    from dpgp_audit.viz.style import alpha_legend, size_legend

    fig = Figure()
    ax = fig.add_subplot()
    ax.scatter([0, 1], [0, 1], s=[10, 90], alpha=0.5, label="points")
    sizes = size_legend(ax, [1.0, 3.0], lambda v: 10 * v**2, title="sd (cm)")
    alphas = alpha_legend(ax, [0.0, 1.0], lambda v: 0.2 + 0.8 * v, title="weight")
    ax.legend(loc="upper left")  # the colour legend: the two keys stay
    assert [t.get_text() for t in sizes.get_texts()] == ["1", "3"]
    assert sizes.get_title().get_text() == "sd (cm)"
    assert [h.get_sizes()[0] for h in sizes.legend_handles] == [10.0, 90.0]
    assert [round(h.get_alpha(), 2) for h in alphas.legend_handles] == [0.2, 1.0]
    assert sizes in ax.artists and alphas in ax.artists
    with pytest.raises(ValueError, match="not in"):
        alpha_legend(ax, [2.0], lambda v: v, title="x")
    with pytest.raises(ValueError, match="at least one"):
        size_legend(ax, [], lambda v: v, title="x")
