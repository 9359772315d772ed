"""Show a figure in a notebook whatever the matplotlib backend (issue 11 §3).

Under ``MPLBACKEND=Agg`` (set by headless runners) ``plt.show()`` draws nothing
and a returned :class:`~matplotlib.figure.Figure` may be shown as text only,
because IPython's PNG formatter for figures is installed only by the inline
backend. :func:`show` renders the figure to PNG itself and hands the bytes to
IPython's ``display``, so the same cell shows the same image under JupyterLab,
papermill and nbval alike. It then closes a pyplot-managed figure, so that the
inline backend does not display it a second time at the end of the cell.
"""

from __future__ import annotations

import io
import sys

from matplotlib.figure import Figure

__all__ = ["describe", "figure_png", "show"]


def figure_png(fig: Figure) -> bytes:
    """The PNG bytes of ``fig`` (tight bounding box, the figure's own dpi)."""
    if not isinstance(fig, Figure):
        raise ValueError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def describe(fig: Figure) -> str:
    """A one-line text caption of ``fig``: its titles and the numbers written on it.

    The suptitle, each axes' title and the text annotations of each axes (e.g. the
    σ printed on the bars of :func:`~dpgp_audit.viz.calibration_plots.calibration_explorer`),
    joined with `` | ``. Widgets print it under each redrawn figure, so a change is
    readable as text (and by a screen reader or a browser test), not only as pixels.
    """
    if not isinstance(fig, Figure):
        raise ValueError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    parts = []
    if fig.get_suptitle():
        parts.append(fig.get_suptitle())
    for ax in fig.axes:
        texts = [" ".join(t.get_text().split()) for t in ax.texts if t.get_text().strip()]
        title = ax.get_title()
        if title or texts:
            parts.append(title + (f" [{', '.join(texts)}]" if texts else ""))
    return " | ".join(parts)


def _in_ipython() -> bool:
    ipython = sys.modules.get("IPython")
    return ipython is not None and ipython.get_ipython() is not None


def show(fig: Figure) -> None:
    """Display ``fig`` as an ``image/png`` output of the current notebook cell, then close it.

    Parameters
    ----------
    fig
        The figure to show, e.g. the return value of any ``dpgp_audit.viz`` plot.

    Notes
    -----
    Returns ``None`` on purpose: a cell ending in ``show(fig)`` has no second,
    textual ``<Figure ...>`` result. Outside IPython (a plain script) a figure
    made with pyplot is shown with ``plt.show()``; others are left to the caller
    (e.g. ``fig.savefig``).
    """
    png = figure_png(fig)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if _in_ipython():
        from IPython.display import Image, display

        display(Image(data=png, format="png"))
        if pyplot is not None:
            pyplot.close(fig)  # a no-op for figures pyplot does not manage
    elif pyplot is not None and fig.canvas.manager is not None:
        pyplot.show()
