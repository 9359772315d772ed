"""Every figure of dpgp_audit.viz is readable on its own (issue 11 §3).

For each plotting function, called on small synthetic inputs of the shapes the
notebooks pass, every axes drawn must name its x and y axis (an axis shared with a
labelled panel counts as labelled; a colour bar must name its quantity), and every
plotted *style* — a line (colour, line style, marker), a single-colour scatter, a
hatch — must have an entry in a legend of the figure. Where a quantity has a unit
(cm, seconds) the label must carry it.
"""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

matplotlib.use("Agg")

from dpgp_audit.viz import audit_report as ar  # noqa: E402
from dpgp_audit.viz import calibration_plots as cp  # noqa: E402
from dpgp_audit.viz import dpconvcnp_plots as dp  # noqa: E402
from dpgp_audit.viz import honkela as hk  # noqa: E402
from dpgp_audit.viz import (
    s18,  # noqa: E402
    s21,  # noqa: E402
)

X1 = np.linspace(0.0, 10.0, 12)
EPS = np.geomspace(0.1, 10.0, 8)


def _line_key(line) -> tuple:
    ls = line.get_linestyle()
    ls = "None" if ls in ("None", "none", " ", "") else ls
    marker = str(line.get_marker())
    marker = "None" if marker in ("None", "none", " ", "") else marker
    return ("line", to_hex(line.get_color()), ls, marker)


def _scatter_key(coll) -> tuple | None:
    faces = coll.get_facecolors()
    if coll.get_array() is not None or len(faces) != 1:
        return None  # colour-mapped or per-point colours: an encoding, not a style
    return ("scatter", to_hex(faces[0]))


def _styles(ax) -> set[tuple]:
    caps = {id(c) for cont in ax.containers if hasattr(cont, "lines") and cont.lines
            for c in (cont.lines[1] or ())}
    keys = {_line_key(ln) for ln in ax.get_lines()
            if ln.get_visible() and id(ln) not in caps
            and _line_key(ln)[2:] != ("None", "None")}
    keys |= {k for c in ax.collections if isinstance(c, PathCollection)
             for k in [_scatter_key(c)] if k is not None}
    keys |= {("hatch", p.get_hatch()) for p in ax.patches if p.get_hatch()}
    return keys


def _artist_keys(artist) -> set[tuple]:
    if hasattr(artist, "lines") and artist.lines:  # an ErrorbarContainer: its data line
        artist = artist.lines[0]
    if isinstance(artist, Line2D):
        return {_line_key(artist)}
    if isinstance(artist, PathCollection):
        key = _scatter_key(artist)
        return set() if key is None else {key}
    return set()


def _legend_keys(fig: Figure) -> set[tuple]:
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    legends += list(fig.legends)
    texts = {t.get_text() for leg in legends for t in leg.get_texts()}
    keys: set[tuple] = set()
    for ax in fig.axes:  # artists whose label is shown in a legend of the figure
        for artist, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label in texts:
                keys |= _artist_keys(artist)
    for leg in legends:  # explicit proxy handles (e.g. a hatched Patch)
        for h in leg.legend_handles:
            if isinstance(h, Line2D):
                keys.add(_line_key(h))
                keys.add(("scatter", to_hex(h.get_color())))  # a marker handle for a scatter
            elif isinstance(h, PathCollection) and len(h.get_facecolors()):
                keys.add(("scatter", to_hex(h.get_facecolors()[0])))
            if isinstance(h, Patch) and h.get_hatch():
                keys.add(("hatch", h.get_hatch()))
    return keys


def _labelled(ax, which: str) -> bool:
    get = ax.get_xlabel if which == "x" else ax.get_ylabel
    if get().strip():
        return True
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    return any((o.get_xlabel() if which == "x" else o.get_ylabel()).strip()
               for o in shared.get_siblings(ax) if o is not ax)


def problems(fig: Figure) -> list[str]:
    """What a reader of ``fig`` could not decode: unnamed axes, styles without legend."""
    out = []
    legend = _legend_keys(fig)
    for i, ax in enumerate(fig.axes):
        if hasattr(ax, "_colorbar"):
            if not (ax.get_ylabel().strip() or ax.get_xlabel().strip()):
                out.append(f"axes {i} (colour bar) has no label")
            continue
        for which in "xy":
            if not _labelled(ax, which):
                out.append(f"axes {i} ({ax.get_title()!r}) has no {which} label")
        for key in sorted(_styles(ax) - legend, key=str):
            out.append(f"axes {i} ({ax.get_title()!r}) draws {key} with no legend entry")
    return out


def _fig(result) -> Figure:
    if isinstance(result, Figure):
        return result
    first = np.ravel(result)[0] if isinstance(result, np.ndarray) else result
    return first.figure


def _report():
    from dpgp_audit.audit.runner import audit_mechanism
    from dpgp_audit.catalogue import get

    mech, data = get("P.1/gaussian-sum").make()
    return audit_mechanism(mech, data, np.random.default_rng(3), n=400, name="P.1")


def _datasetlike(rng, n):
    X = rng.uniform(0, 10, (n, 2))
    return SimpleNamespace(X=X, y=np.where(X[:, 0] > 5, 1.0, -1.0))


def _calibration_result():
    k, ns, ne, na = 2, 2, 3, 2
    mean = np.full((k, ns, ne, na), 0.5)
    return SimpleNamespace(mean_and_se=lambda: (mean, 0.01 + 0 * mean), sigmas=(0.5, 1.0),
                           alphas=(0.5, 0.9), epsilons=(0.5, 1.0, 4.0),
                           methods=("paper", "none"))


def _cases():
    rng = np.random.default_rng(0)
    sig = {m: np.geomspace(5, 0.5, EPS.size) for m in ("analytic", "gdp", "classical", "hall")}
    yield "calibrations", lambda: cp.plot_calibrations(EPS, sig, delta=1e-5), {}
    yield "privacy_profiles", lambda: cp.plot_privacy_profiles(
        EPS, {"mu = 1": np.geomspace(0.5, 1e-6, EPS.size)}, targets={"t": (1.0, 1e-5)}), {}
    yield "true_epsilon", lambda: cp.plot_true_epsilon(EPS, {"classical": EPS * 1.2},
                                                       delta=1e-5), {}
    yield "output_histograms", lambda: cp.plot_output_histograms(
        {"D": rng.normal(size=50), "D'": rng.normal(1, 1, 50)}), {}
    yield "selection_frequencies", lambda: cp.plot_selection_frequencies(
        {"D": np.array([0.2, 0.8])}, {"D": np.array([0.25, 0.75])}, candidates=["a", "b"]), {}
    yield "calibration_explorer", lambda: cp.calibration_explorer(2.0, 1e-5), {}
    curves = SimpleNamespace(epsilon=EPS, classical=EPS, rdp=EPS, gdp=EPS, sensitivity_sq=2.0,
                             delta=1e-5)
    yield "functional_noise", lambda: dp.plot_functional_noise(curves), {}
    yield "grid_noise_1d", lambda: dp.plot_grid_noise([X1], rng.normal(size=(3, X1.size))), {}
    yield "grid_noise_2d", lambda: dp.plot_grid_noise([X1, X1], rng.normal(size=(12, 12))), {}
    yield "dpsetconv_release", lambda: dp.plot_dpsetconv_release(
        X1, rng.normal(size=(2, 12)), rng.normal(size=(2, 12)), X1[:5], X1[:5],
        clip_bound=1.0), {}
    mc = SimpleNamespace(ns=[5, 10, 20], mean=[1.0, 0.8, 0.7], sem=[0.1, 0.1, 0.1])
    yield "nll_curves", lambda: dp.plot_nll_curves({"GP": mc, "DPConvCNP": mc}), {}
    yield "predictive", lambda: dp.plot_predictive(
        X1[:4], X1[:4], X1, {"GP": (X1, 0 * X1 + 1)}, xt=X1[4:], yt=X1[4:]), {}
    yield "deployment_times", lambda: dp.plot_deployment_times({"GP": 0.1, "CNP": 0.01}), {
        "x": "second"}
    fit = SimpleNamespace(V=X1, mean=np.sin(X1), sd=0 * X1 + 0.1, Z=X1[::3],
                          u_mean=np.sin(X1[::3]), epsilon=1.0)
    data = SimpleNamespace(X=X1[:, None], y=np.sin(X1))
    yield "sinc_fits", lambda: hk.plot_sinc_fits(data, [fit, fit], np.sin), {}
    yield "h_calibration", lambda: hk.plot_calibration(_calibration_result()), {}
    yield "hyperparameter_recovery", lambda: hk.plot_hyperparameter_recovery(
        np.ones((2, 2, 3)), (1.0, 3.0), (0.1, 0.3), (0.5, 1.0, 2.0)), {}
    labels = rng.integers(0, 2, 12)
    yield "h_classification", lambda: hk.plot_classification(
        X1, labels, X1, np.column_stack([X1 / 10, 1 - X1 / 10]), "t"), {}
    leak = SimpleNamespace(Xs=X1, var0=X1, var1=X1 + 1, x_old=1.0, x_new=2.0)
    yield "input_leak", lambda: hk.plot_input_leak(leak), {}
    yield "dp_fit", lambda: s18.plot_dp_fit(
        X1, X1 * 10, X1, X1 * 10, 0 * X1 + 4, rng.normal(size=(3, 12)), 0 * X1 + 3,
        xlabel="age (years)", ylabel="height (cm)"), {"y": "(cm)", "x": "(years)"}
    yield "spatial_noise", lambda: s18.plot_spatial_noise(
        rng.uniform(0, 100, (20, 2)), rng.uniform(0, 100, (9, 2)), np.arange(1.0, 10.0),
        np.ones(9), 400.0), {}
    yield "selection_heatmap", lambda: s18.plot_selection_heatmap(
        np.full((2, 3), 1 / 3), ["a", "b"], ["1", "2", "3"]), {}
    yield "noise_band_1d", lambda: s21.plot_noise_band_1d(
        X1, X1 * 10, X1, X1 * 10, 0 * X1 + 3, samples=rng.normal(size=(3, 12)),
        post_sd=0 * X1 + 1, xlabel="age (years)", ylabel="height (cm)"), {"y": "(cm)",
                                                                          "x": "(years)"}
    yield "noise_map_2d", lambda: s21.plot_noise_map_2d(
        rng.uniform(0, 50, (20, 2)), rng.uniform(0, 50, (9, 2)), np.arange(9.0), np.ones(9),
        Z=rng.uniform(0, 50, (3, 2)), xlabel="age (years)", ylabel="weight (kg)"), {
        "x": "(years)", "y": "(kg)"}
    yield "rmse_vs_inducing", lambda: s21.plot_rmse_vs_inducing(
        {"m": [5, 10], "dp": [30.0, 25.0], "no_dp": [10.0, 9.0]}), {"y": "(cm)"}
    yield "stripes", lambda: s21.plot_stripes(_datasetlike(rng, 20), _datasetlike(rng, 9),
                                              rng.uniform(size=(3, 9))), {}
    yield "digits_accuracy", lambda: s21.plot_digits_accuracy(
        {"lengthscales": [1.0, 2.0], "m": [5, 10], "no_dp": np.ones((2, 2)),
         "dp": np.ones((2, 2)) / 2}, chance=0.5), {}
    yield "s21_selection", lambda: s21.plot_selection(
        {"rmse": np.array([10.0, 20.0, 30.0]), "probabilities": np.array([0.5, 0.3, 0.2]),
         "expected_rmse": 15.0, "uniform_rmse": 20.0}), {"y": "(cm)"}
    yield "release_violins", lambda: s21.plot_release_violins(
        X1, rng.uniform(size=(5, 12)), rng.uniform(size=12), xlabel="feature (scaled)",
        ylabel="P(malignant)"), {}
    yield "selection_by_budget", lambda: s21.plot_selection_by_budget(
        [[0.5, 0.5], [0.2, 0.8]], [1.0, 10.0], [5.0, 25.0]), {"y": "(years)"}
    yield "audit_report", lambda: ar.plot_report(_report()), {}
    rows = [{"id": "planted/a", "n": 0, "auditor": "sensitivity", "verdict": "VIOLATION"},
            {"id": "planted/b", "n": 2000, "auditor": "blackbox", "verdict": "VIOLATION"},
            {"id": "planted/c", "n": 2000, "auditor": "blackbox", "verdict": "NO_EVIDENCE"}]
    yield "planted_catch", lambda: ar.plot_planted_catch(rows), {}
    attack = [{"id": "planted/x-no-domain", "domain": None, "refused": False, "distinct": [1, 1],
               "verdict": "VIOLATION", "epsilon_lb": 5.0, "claimed": 1.0},
              {"id": "P.1/x", "domain": 1e6, "refused": False, "distinct": [200, 200],
               "verdict": "NO_EVIDENCE", "epsilon_lb": 0.0, "claimed": 1.0},
              {"id": "P.1/y", "domain": 1e6, "refused": True, "distinct": None,
               "verdict": "NO_EVIDENCE", "epsilon_lb": 0.0, "claimed": 1.0}]
    yield "rounding_attack", lambda: ar.plot_rounding_attack(attack, 200), {}
    curve = {"sizes": [100, 1000], "rate": [0.2, 0.9], "rate_lo": [0.1, 0.8],
             "rate_hi": [0.3, 0.95], "auditor": "blackbox", "reps": 10}
    yield "power", lambda: ar.plot_power([curve], {"planner, blackbox": ([100, 1000],
                                                                         [0.1, 0.95])}), {}


CASES = list(_cases())


def test_every_public_plot_function_is_covered():
    import inspect

    covered = {"plot_" + name for name, _, _ in CASES} | {name for name, _, _ in CASES}
    aliases = {"plot_h_calibration": "plot_calibration", "plot_h_classification":
               "plot_classification", "plot_s21_selection": "plot_selection",
               "plot_audit_report": "plot_report", "plot_grid_noise_1d": "plot_grid_noise",
               "plot_grid_noise_2d": "plot_grid_noise", "plot_sinc_fits": "plot_sinc_fits"}
    covered |= set(aliases.values())
    for module in (ar, cp, dp, hk, s18, s21):
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ == module.__name__ and name in getattr(module, "__all__", ()) \
                    and (name.startswith("plot_") or name.endswith("_explorer")):
                assert name in covered, f"{module.__name__}.{name} has no case here"


@pytest.mark.parametrize(("name", "draw", "units"), CASES, ids=[c[0] for c in CASES])
def test_figure_is_labelled_with_a_legend_for_every_style(name, draw, units):
    import matplotlib.pyplot as plt

    fig = _fig(draw())
    try:
        assert problems(fig) == []
        for which, unit in units.items():
            labels = [ax.get_xlabel() if which == "x" else ax.get_ylabel()
                      for ax in fig.axes if not hasattr(ax, "_colorbar")]
            assert any(unit in lab for lab in labels), (which, unit, labels)
    finally:
        plt.close(fig)


def test_the_checker_catches_what_it_should():
    """The helper flags a missing label, an unlabelled style and a hatch without entry."""
    fig = Figure()
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], "k-", label="a")
    ax.plot([0, 1], [1, 0], "r--")
    bar = ax.bar([0], [1], hatch="//")[0]
    ax.set_xlabel("x (m)")
    ax.legend()
    found = problems(fig)
    assert "axes 0 ('') has no y label" in found
    assert any("#ff0000" in p and "--" in p for p in found)
    assert any("hatch" in p for p in found)
    ax.set_ylabel("y")
    ax.legend(handles=[*ax.get_legend().legend_handles,
                       Line2D([], [], color="r", ls="--", label="b"),
                       Patch(facecolor=bar.get_facecolor(), hatch="//", label="c")])
    assert problems(fig) == []
