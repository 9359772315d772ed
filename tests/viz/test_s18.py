"""The S18 figures of notebook 01 say what they encode (catalogue S18.2, S18.4).

Each changed plot function: a title, labelled axes, and a legend that carries a scale
for every size or transparency encoding (a reader cannot decode a circle's area or
opacity without one).
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.collections import PathCollection

matplotlib.use("Agg")

from dpgp_audit.viz import (
    explorers,  # noqa: E402
    s18,  # noqa: E402
)


def _legend_texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() is not None
            for t in ax.get_legend().get_texts()]


def test_spatial_noise_has_scales_for_area_and_opacity():
    rng = np.random.default_rng(0)
    pred = np.linspace(100.0, 500.0, 9)
    fig = s18.plot_spatial_noise(rng.uniform(0, 100, (30, 2)), rng.uniform(0, 100, (9, 2)),
                                 pred, np.linspace(0.0, 200.0, 9), 400.0,
                                 xlabel="east (km)", ylabel="north (km)",
                                 value_label="price", unit="k£")
    ax = fig.axes[0]
    assert ax.get_title() and ax.get_xlabel() == "east (km)" and ax.get_ylabel() == "north (km)"
    texts = _legend_texts(fig)
    assert any(t.startswith("price") and "k£" in t for t in texts), texts   # area scale
    assert sum(t.startswith("noise sd") for t in texts) == 3, texts        # opacity scale
    handles = ax.get_legend().legend_handles
    sizes = [h.get_sizes()[0] for h, t in zip(handles, texts, strict=True)
             if isinstance(h, PathCollection) and t.startswith("price")]
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)       # larger value, larger
    alphas = [h.get_facecolors()[0][3] for h, t in zip(handles, texts, strict=True)
              if t.startswith("noise sd")]
    assert alphas[0] > alphas[1] > alphas[2]                                # more noise, clearer


def test_selection_heatmap_names_lengthscale_unit_and_has_title():
    fig = s18.plot_selection_heatmap(np.full((2, 2), 0.5), ["a", "b"], ["3", "9"],
                                     xlabel="lengthscale (years)")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "lengthscale (years)" and ax.get_ylabel() and ax.get_title()
    assert fig.axes[1].get_ylabel().startswith("P(select)")  # the colour bar


def test_cloaking_explorer_names_input_and_output_with_units():
    rng = np.random.default_rng(1)
    x = np.sort(rng.uniform(0, 80, 25))
    fig = explorers.cloaking_explorer(x, 10 * np.sin(x / 10), np.linspace(0, 80, 8),
                                      lengthscale=20.0, d=20.0, epsilon=1.0, delta=0.01,
                                      kernel_variance=50.0, noise_variance=100.0, rng=rng,
                                      xlabel="age (years)", ylabel="height (cm)", unit="cm")
    left, right = fig.axes[0], fig.axes[1]
    assert left.get_xlabel() == "test age (years)" and right.get_ylabel() == "height (cm)"
    assert "(cm²)" in fig.axes[2].get_ylabel()  # the covariance colour bar
    assert right.get_legend() is not None
