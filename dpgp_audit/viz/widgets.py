"""ipywidgets controls for the notebooks (ipywidgets is imported only when a widget is built).

Widgets only *drive* pure plotting functions; each notebook also calls that
function once in a plain cell, which is what papermill and nbval check (a
widget's output lives in widget state, not in the cell's outputs). Each redraw
shows the figure with :func:`dpgp_audit.viz.show` (a PNG whatever the backend)
and prints its caption (:func:`dpgp_audit.viz.describe`: titles and the numbers
written on the plot), so what changed is also readable as text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping

__all__ = ["epsilon_delta_widget", "sample_size_widget", "slider_widget"]


def _log_slider(description: str, value: float, lo: float, hi: float, fmt: str):
    import ipywidgets as widgets

    if not 0 < lo < hi:
        raise ValueError(f"{description} range must satisfy 0 < low < high, got {(lo, hi)}")
    return widgets.FloatLogSlider(
        value=min(max(value, lo), hi), base=10, min=math.log10(lo), max=math.log10(hi),
        step=0.05, description=description, readout_format=fmt, continuous_update=False)


def _redrawing(plot: Callable[..., object], sliders: Mapping[str, object],
               convert: Callable[[dict], dict] = dict):
    """Sliders above an output area where ``plot(**values)`` is shown after each release."""
    import ipywidgets as widgets
    from IPython.display import display
    from matplotlib.figure import Figure

    from dpgp_audit.viz.display import describe, show

    def redraw(**values: float) -> None:
        result = plot(**convert(values))
        if isinstance(result, Figure):
            caption = describe(result)
            show(result)  # a PNG whatever the backend (MPLBACKEND=Agg shows no figure)
            print(caption)
        elif result is not None:
            display(result)

    out = widgets.interactive_output(redraw, dict(sliders))
    return widgets.VBox([widgets.HBox(list(sliders.values())), out])


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
    sliders = {"epsilon": _log_slider("ε", epsilon, *epsilon_range, ".3g"),
               "delta": _log_slider("δ", delta, *delta_range, ".1e")}
    return _redrawing(lambda epsilon, delta: plot(epsilon, delta), sliders)


def sample_size_widget(plot: Callable[[int], object], *, n: int = 10_000,
                       n_range: tuple[int, int] = (100, 100_000)):
    """A log-scale slider for a sample size n redrawing ``plot(n)`` on release.

    Used by the auditing lab (notebook 05) to rerun an audit at the n a learner picks.

    Parameters
    ----------
    plot
        A function of an integer sample size returning a matplotlib Figure.
    n
        Initial value (clipped into ``n_range``).
    n_range
        Slider limits, ``1 <= low < high``.

    Returns
    -------
    ipywidgets.VBox
        The slider above an output area.
    """
    lo, hi = n_range
    if not 1 <= lo < hi:
        raise ValueError(f"n_range must satisfy 1 <= low < high, got {n_range!r}")
    sliders = {"n": _log_slider("n / side", float(n), float(lo), float(hi), ",.0f")}
    return _redrawing(plot, sliders, lambda v: {"n": int(round(v["n"]))})


def slider_widget(plot: Callable[..., object], sliders: Mapping[str, tuple[float, float, float]],
                  *, log: Collection[str] = (), integer: Collection[str] = (),
                  labels: Mapping[str, str] | None = None):
    """Sliders (one per keyword of ``plot``) redrawing ``plot(**values)`` on release.

    Parameters
    ----------
    plot
        A pure function of the slider values returning something displayable (the
        explorers of :mod:`dpgp_audit.viz.explorers`, with the fixed arguments bound by
        ``functools.partial``).
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
            controls[name] = _log_slider(desc, float(value), float(lo), float(hi), ".3g")
        elif name in integer:
            controls[name] = widgets.IntSlider(value=int(value), min=int(lo), max=int(hi),
                                               description=desc, continuous_update=False)
        else:
            controls[name] = widgets.FloatSlider(value=value, min=lo, max=hi,
                                                 step=(hi - lo) / 100, description=desc,
                                                 readout_format=".3g", continuous_update=False)
    as_int = set(integer)
    return _redrawing(plot, controls,
                      lambda v: {k: int(round(x)) if k in as_int else x for k, x in v.items()})
