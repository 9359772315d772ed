"""ipywidgets controls for the notebooks (ipywidgets is imported only when a widget is built).

Widgets only *drive* pure plotting functions; each notebook also calls that
function once in a plain cell, which is what papermill and nbval check (a
widget's output lives in widget state, not in the cell's outputs). Each redraw
shows the figure with :func:`dpgp_audit.viz.show` (a PNG whatever the backend)
and prints its caption (:func:`dpgp_audit.viz.describe`: titles and the numbers
written on the plot), so what changed is also readable as text.

**Unattended runs build no widget.** Under papermill, nbval, nbclient/nbconvert or a
book build nobody can move a slider, and a live widget only opens comm channels
the executor has to service (headless runs of the slider cells stalled that way).
There, :func:`batch_run` is true and each builder prints one line naming its
sliders and their starting values instead (the plain cell above shows the same
figure at those values). In JupyterLab, Notebook, VS Code or on Binder the sliders
are live. ``DPGP_AUDIT_WIDGETS=static`` or ``=live`` overrides the detection; the
notebook harness, ``make notebooks``, ``make binder-check`` and ``make book`` set
``static``.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable, Collection, Mapping

__all__ = ["batch_run", "epsilon_delta_widget", "sample_size_widget", "slider_widget"]

#: Environment variable that forces widgets ``static`` (a note) or ``live``.
WIDGETS_ENV = "DPGP_AUDIT_WIDGETS"
#: Words in the command line of a kernel's parent process that mark an unattended run.
BATCH_RUNNERS = ("papermill", "nbval", "pytest", "nbclient", "nbconvert", "jupyter-execute",
                 "jupyter-book", "jupyter_book", "sphinx-build", "myst")


def _parent_command() -> str:
    """The command line of this process's parent ("" when it cannot be read)."""
    ppid = os.getppid()
    try:
        with open(f"/proc/{ppid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        pass
    try:  # macOS and other systems without /proc
        return subprocess.run(["ps", "-o", "command=", "-p", str(ppid)], capture_output=True,
                              text=True, timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _in_kernel() -> bool:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def batch_run() -> bool:
    """True when this code runs in a kernel that executes a notebook unattended.

    Decided, in order, by ``DPGP_AUDIT_WIDGETS`` (``static`` → True, ``live`` →
    False); outside a Jupyter kernel → False (a script or a test builds widgets
    nobody displays); a kernel started by a Jupyter server for a session
    (``JPY_SESSION_NAME`` set: JupyterLab, Notebook, Binder) → False; otherwise True
    when the kernel's parent process is one of :data:`BATCH_RUNNERS` (papermill,
    nbval/pytest, nbclient, nbconvert, jupyter-execute, a book build).
    """
    mode = os.environ.get(WIDGETS_ENV, "").strip().lower()
    if mode in ("static", "live"):
        return mode == "static"
    if mode:
        raise ValueError(f"{WIDGETS_ENV} must be 'static' or 'live', got {mode!r}")
    if not _in_kernel():
        return False
    if os.environ.get("JPY_SESSION_NAME"):
        return False
    command = _parent_command().lower()
    return any(word in command for word in BATCH_RUNNERS)


def _static_note(specs: Mapping[str, tuple]) -> None:
    """What an unattended run shows instead of sliders: their names and starting values."""
    parts = [f"{desc} = {value:{fmt}}" for desc, value, _lo, _hi, fmt, _kind in specs.values()]
    print("Sliders (" + ", ".join(parts) + ") appear when this notebook runs live in "
          "JupyterLab or on Binder; the figure above shows these starting values.")


def _log_spec(description: str, value: float, lo: float, hi: float, fmt: str) -> tuple:
    if not 0 < lo < hi:
        raise ValueError(f"{description} range must satisfy 0 < low < high, got {(lo, hi)}")
    return description, min(max(value, lo), hi), lo, hi, fmt, "log"


def _control(spec: tuple):
    """The ipywidgets slider of one ``(description, value, low, high, format, kind)``."""
    import ipywidgets as widgets

    desc, value, lo, hi, fmt, kind = spec
    if kind == "log":
        return widgets.FloatLogSlider(
            value=value, base=10, min=math.log10(lo), max=math.log10(hi), step=0.05,
            description=desc, readout_format=fmt, continuous_update=False)
    if kind == "int":
        return widgets.IntSlider(value=int(value), min=int(lo), max=int(hi), description=desc,
                                 continuous_update=False)
    return widgets.FloatSlider(value=value, min=lo, max=hi, step=(hi - lo) / 100,
                               description=desc, readout_format=fmt, continuous_update=False)


def _redrawing(plot: Callable[..., object], specs: Mapping[str, tuple],
               convert: Callable[[dict], dict] = dict):
    """Sliders above an output area where ``plot(**values)`` is shown after each release.

    In an unattended run (:func:`batch_run`) no widget is built: a note names the
    sliders and their starting values, and ``None`` is returned.
    """
    if batch_run():
        _static_note(specs)
        return None
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

    sliders = {name: _control(spec) for name, spec in specs.items()}
    out = widgets.interactive_output(redraw, sliders)
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
    ipywidgets.VBox or None
        Sliders above an output area; ``None`` (after a one-line note) in an
        unattended run (:func:`batch_run`).
    """
    specs = {"epsilon": _log_spec("ε", epsilon, *epsilon_range, ".3g"),
             "delta": _log_spec("δ", delta, *delta_range, ".1e")}
    return _redrawing(lambda epsilon, delta: plot(epsilon, delta), specs)


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
    ipywidgets.VBox or None
        The slider above an output area; ``None`` in an unattended run.
    """
    lo, hi = n_range
    if not 1 <= lo < hi:
        raise ValueError(f"n_range must satisfy 1 <= low < high, got {n_range!r}")
    specs = {"n": _log_spec("n / side", float(n), float(lo), float(hi), ",.0f")}
    return _redrawing(plot, specs, lambda v: {"n": int(round(v["n"]))})


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
    ipywidgets.VBox or None
        The sliders above an output area; the callback's output lives in widget
        state, so cells showing it are tagged ``nbval-ignore-output``. ``None`` (after
        a one-line note) in an unattended run (:func:`batch_run`).
    """
    labels = dict(labels or {})
    unknown = (set(log) | set(integer) | set(labels)) - set(sliders)
    if unknown:
        raise ValueError(f"log/integer/labels name no slider: {sorted(unknown)}")
    specs = {}
    for name, (lo, hi, value) in sliders.items():
        if not lo < hi:
            raise ValueError(f"slider {name!r} needs low < high, got {(lo, hi)}")
        value = min(max(value, lo), hi)
        desc = labels.get(name, name)
        if name in log:
            if not lo > 0:
                raise ValueError(f"log slider {name!r} needs low > 0, got {lo!r}")
            specs[name] = _log_spec(desc, float(value), float(lo), float(hi), ".3g")
        elif name in integer:
            specs[name] = (desc, int(value), lo, hi, "d", "int")
        else:
            specs[name] = (desc, value, lo, hi, ".3g", "float")
    as_int = set(integer)
    return _redrawing(plot, specs,
                      lambda v: {k: int(round(x)) if k in as_int else x for k, x in v.items()})
