"""ipywidgets controls for the notebooks (ipywidgets is imported only when a widget is built).

Widgets only *drive* pure plotting functions; each notebook also calls that
function once in a plain cell, which is what papermill and nbval check (a
widget's output lives in widget state, not in the cell's outputs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping

__all__ = ["epsilon_delta_widget", "slider_widget"]


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
        if result is not None:
            display(result)

    out = widgets.interactive_output(redraw, {"epsilon": eps_slider, "delta": delta_slider})
    return widgets.VBox([widgets.HBox([eps_slider, delta_slider]), out])


def slider_widget(plot: Callable[..., object], sliders: Mapping[str, tuple[float, float, float]],
                  *, log: Collection[str] = (), integer: Collection[str] = (),
                  labels: Mapping[str, str] | None = None):
    """Sliders (one per keyword of ``plot``) redrawing ``plot(**values)`` on release.

    Parameters
    ----------
    plot
        A pure function of the slider values returning something displayable
        (the explorers of :mod:`dpgp_audit.viz.explorers`, with the fixed arguments
        bound by ``functools.partial``).
    sliders
        Keyword → ``(low, high, initial)``; the initial value is clipped into range.
    log
        Keywords whose slider is logarithmic (``low`` > 0).
    integer
        Keywords whose values are integers (with ``log``: rounded log-slider values).
    labels
        Keyword → slider description (default: the keyword).

    Returns
    -------
    ipywidgets.VBox
        The sliders above an output area; the callback's output lives in widget
        state, so cells showing it are tagged ``nbval-ignore-output``.
    """
    import ipywidgets as widgets
    from IPython.display import display

    labels = dict(labels or {})
    unknown = (set(log) | set(integer) | set(labels)) - set(sliders)
    if unknown:
        raise ValueError(f"log/integer/labels name no slider: {sorted(unknown)}")
    controls = {}
    for name, (lo, hi, value) in sliders.items():
        if not lo < hi:
            raise ValueError(f"slider {name!r} needs low < high, got {(lo, hi)}")
        value = min(max(value, lo), hi)
        desc = labels.get(name, name)
        if name in log:
            if not lo > 0:
                raise ValueError(f"log slider {name!r} needs low > 0, got {lo!r}")
            controls[name] = widgets.FloatLogSlider(
                value=value, base=10, min=math.log10(lo), max=math.log10(hi), step=0.05,
                description=desc, readout_format=".3g", continuous_update=False)
        elif name in integer:
            controls[name] = widgets.IntSlider(value=int(value), min=int(lo), max=int(hi),
                                               description=desc, continuous_update=False)
        else:
            controls[name] = widgets.FloatSlider(value=value, min=lo, max=hi,
                                                 step=(hi - lo) / 100, description=desc,
                                                 readout_format=".3g", continuous_update=False)
    as_int = set(integer)

    def redraw(**values: float) -> None:
        values = {k: int(round(v)) if k in as_int else v for k, v in values.items()}
        result = plot(**values)
        if result is not None:
            display(result)

    out = widgets.interactive_output(redraw, controls)
    return widgets.VBox([widgets.HBox(list(controls.values())), out])
