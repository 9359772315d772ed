"""ipywidgets controls for the notebooks (ipywidgets is imported only when a widget is built).

Widgets only *drive* pure plotting functions; each notebook also calls that
function once in a plain cell, which is what papermill and nbval check (a
widget's output lives in widget state, not in the cell's outputs).
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["epsilon_delta_widget"]


def epsilon_delta_widget(plot: Callable[[float, float], object], *, epsilon: float = 1.0,
                         delta: float = 1e-5, epsilon_range: tuple[float, float] = (0.05, 50.0),
                         delta_range: tuple[float, float] = (1e-12, 0.1)):
    """Two log-scale sliders (ε, δ) redrawing ``plot(epsilon, delta)`` on release.

    Parameters
    ----------
    plot
        A pure function returning something displayable (a matplotlib Figure).
    epsilon, delta
        Initial slider values (clipped into the ranges).
    epsilon_range, delta_range
        Slider limits, both > 0.

    Returns
    -------
    ipywidgets.VBox
        Sliders above an output area.
    """
    import ipywidgets as widgets
    from IPython.display import display
    from matplotlib.figure import Figure

    from dpgp_audit.viz.display import show

    def log_slider(description: str, value: float, lo: float, hi: float, fmt: str):
        if not 0 < lo < hi:
            raise ValueError(f"{description} range must satisfy 0 < low < high, got {(lo, hi)}")
        return widgets.FloatLogSlider(
            value=min(max(value, lo), hi), base=10, min=math.log10(lo), max=math.log10(hi),
            step=0.05, description=description, readout_format=fmt, continuous_update=False)

    eps_slider = log_slider("ε", epsilon, *epsilon_range, ".3g")
    delta_slider = log_slider("δ", delta, *delta_range, ".1e")

    def redraw(epsilon: float, delta: float) -> None:
        result = plot(epsilon, delta)
        if isinstance(result, Figure):
            show(result)  # a PNG whatever the backend (MPLBACKEND=Agg shows no figure)
        elif result is not None:
            display(result)

    out = widgets.interactive_output(redraw, {"epsilon": eps_slider, "delta": delta_slider})
    return widgets.VBox([widgets.HBox([eps_slider, delta_slider]), out])
