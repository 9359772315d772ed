"""One visual language for the whole course: a colour per method, per auditor and per verdict.

Every plotting function of :mod:`dpgp_audit.viz` takes its colours from here, so
a method keeps its colour from notebook 00 to notebook 05 (the R.5 DP-SGD SVGP
baseline is the same orange in every figure of notebook 04), and a reader can
match curves across figures without reading legends.

Rules of the course's figures (issue 14, §4), enforced by ``tests/viz/test_style.py``:

* **one colour per method**: :func:`method_colour` maps a label (case-insensitive,
  matched on known aliases, so ``"DP-SVGP (200 DP-SGD steps)"`` finds the baseline)
  to its colour; :func:`colours_for` also gives unknown labels distinct reserve
  colours, never one of a known method's;
* **verdicts**: ``VIOLATION`` is red; ``NO_EVIDENCE`` is a neutral grey — *not* green,
  because finding nothing is not a proof of privacy; ``INCONCLUSIVE`` is amber;
* **no bars on log axes** (a bar's length on a log axis depends on an arbitrary
  baseline): quantities spanning decades are drawn as dots;
* **heat maps use the data's range** (:func:`heatmap_limits`), so values between
  0.23 and 0.27 are not all drawn in one shade of a 0–1 scale;
* **every encoding has a key**: a map whose marker size or transparency carries a
  number gets a scale (:func:`size_legend`, :func:`alpha_legend`), like a colour bar.

The palette is Okabe & Ito's colour-blind-safe set plus neutral greys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

__all__ = [
    "alpha_legend",
    "size_legend",
    "AUDITOR_COLOURS",
    "METHOD_COLOURS",
    "NEUTRAL",
    "RESERVE",
    "VERDICT_COLOURS",
    "auditor_colour",
    "colours_for",
    "heatmap_limits",
    "method_colour",
    "verdict_colour",
]

# Okabe & Ito (2008) colour-blind-safe palette
_BLUE, _ORANGE, _GREEN, _VERMILION = "#0072B2", "#E69F00", "#009E73", "#D55E00"
_PURPLE, _SKY, _YELLOW, _BLACK = "#CC79A7", "#56B4E9", "#F0E442", "#000000"
NEUTRAL = "#7f7f7f"
"""Grey for data points, context sets and 'nothing found'."""

METHOD_COLOURS: Mapping[str, str] = {
    # non-private references
    "non-dp": _BLACK,
    "oracle": _BLACK,
    # S18 / S21 (outputs private)
    "standard dp-gp": _VERMILION,
    "cloaking": _BLUE,
    "integral binning": _GREEN,
    "simple binning": _PURPLE,
    # H (inputs and outputs private)
    "dp-gp (honkela)": _SKY,
    "dp-gp (symmetric)": "#332288",
    "naive": _PURPLE,
    # R
    "dp-sgd svgp": _ORANGE,
    "dpconvcnp": _GREEN,
    # Gaussian calibrations (notebook 00)
    "analytic": _BLUE,
    "gdp": _SKY,
    "classical": _GREEN,
    "hall": _VERMILION,
}
"""Canonical method name → colour (names are lower-case; see :data:`_ALIASES`)."""

_ALIASES: Mapping[str, str] = {
    "no dp": "non-dp",
    "non-private": "non-dp",
    "posterior mean": "non-dp",
    "oracle (non-private)": "oracle",
    "standard": "standard dp-gp",
    "integral": "integral binning",
    "binning": "simple binning",
    "dp-gp (eq. 14)": "dp-gp (honkela)",
    "dp-gp (symmetric s22)": "dp-gp (symmetric)",
    "dp-svgp": "dp-sgd svgp",
    "dpconvcnp forward": "dpconvcnp",
}

AUDITOR_COLOURS: Mapping[str, str] = {
    "sensitivity": _GREEN,
    "whitebox": _BLUE,
    "blackbox": _ORANGE,
    "gdp-fit": _PURPLE,
    "model-check": _SKY,
    "precision": _VERMILION,
}
"""Auditor (A.2–A.4, A.7 and the model check) → colour, shared by the audit plots of 01–05."""

VERDICT_COLOURS: Mapping[str, str] = {
    "VIOLATION": "#C0392B",
    "NO_EVIDENCE": NEUTRAL,  # deliberately not green: no evidence is not a proof
    "INCONCLUSIVE": _ORANGE,
}
"""Verdict → colour. ``NO_EVIDENCE`` is grey, never a colour that reads as 'safe'."""

RESERVE: tuple[str, ...] = ("#8C564B", "#17BECF", "#BCBD22", "#393B79", "#AD494A", _YELLOW)
"""Colours for labels that name no known method (none is a known method's colour)."""


def _canonical(label: str) -> str | None:
    """The canonical method a label names, or ``None`` (longest known name contained wins)."""
    text = " ".join(str(label).lower().split())
    names = {**{k: k for k in METHOD_COLOURS}, **_ALIASES}
    if text in names:
        return names[text]
    hits = [k for k in names if k in text]
    return names[max(hits, key=len)] if hits else None


def method_colour(label: str) -> str:
    """The colour of the method a label names.

    Parameters
    ----------
    label
        A legend label, e.g. ``"cloaking"``, ``"DP-SVGP (200 DP-SGD steps)"``,
        ``"oracle (non-private)"``; matched case-insensitively on the longest known
        method name or alias it contains.

    Returns
    -------
    str
        A hex colour.

    Raises
    ------
    ValueError
        If ``label`` names no known method (use :func:`colours_for` to give unknown
        labels reserve colours).
    """
    name = _canonical(label)
    if name is None:
        raise ValueError(f"label {label!r} names no method of the course's palette "
                         f"(known: {sorted(METHOD_COLOURS)})")
    return METHOD_COLOURS[name]


def colours_for(labels: Iterable[str]) -> dict[str, str]:
    """A colour for every label: the method's own, else the next unused reserve colour."""
    out: dict[str, str] = {}
    reserve = iter(RESERVE)
    for label in labels:
        name = _canonical(label)
        if name is not None:
            out[label] = METHOD_COLOURS[name]
        else:
            out[label] = next(reserve, NEUTRAL)
    return out


def auditor_colour(auditor: str) -> str:
    """The colour of an auditor (sensitivity, whitebox, blackbox or gdp-fit)."""
    try:
        return AUDITOR_COLOURS[auditor]
    except KeyError:
        raise ValueError(f"auditor must be one of {sorted(AUDITOR_COLOURS)}, "
                         f"got {auditor!r}") from None


def verdict_colour(verdict: object) -> str:
    """The colour of a verdict (a :class:`~dpgp_audit.audit.result.Verdict` or its name)."""
    key = str(getattr(verdict, "value", verdict))
    try:
        return VERDICT_COLOURS[key]
    except KeyError:
        raise ValueError(f"verdict must be one of {sorted(VERDICT_COLOURS)}, "
                         f"got {verdict!r}") from None


def heatmap_limits(values: np.ndarray, *, pad: float = 0.05) -> tuple[float, float]:
    """Colour limits spanning the finite values, padded by ``pad`` of their range.

    A heat map of probabilities between 0.23 and 0.27 drawn on a fixed 0–1 scale
    shows one flat colour; on these limits the differences are visible (the
    colour bar states the range, so nothing is hidden).

    Parameters
    ----------
    values
        The numbers the heat map draws (NaN and ±inf are ignored).
    pad
        Fraction of the range added on both sides (≥ 0).

    Returns
    -------
    (float, float)
        ``(vmin, vmax)`` with ``vmin < vmax``.
    """
    if not pad >= 0:
        raise ValueError(f"pad must be >= 0, got {pad!r}")
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        raise ValueError("values has no finite entry to scale a heat map on")
    lo, hi = float(finite.min()), float(finite.max())
    span = hi - lo
    if span == 0:
        span = max(abs(hi), 1.0) * 1e-3
    return lo - pad * span, hi + pad * span


def size_legend(ax, values: Iterable[float], to_size, *, title: str,
                colour: str = NEUTRAL, loc: str = "upper right", fmt: str = "{:g}"):
    """A key for marker sizes: one sample marker per value, labelled with the value.

    Parameters
    ----------
    ax
        The matplotlib axes whose scatter encodes a quantity as marker size.
    values
        Representative values of that quantity (e.g. its minimum, median, maximum).
    to_size
        The same function of a value the plot used for ``s=`` (points²).
    title
        What the size means, with its unit (e.g. ``"posterior sd (cm)"``).
    colour, loc, fmt
        Marker colour, legend position, label format.

    Returns
    -------
    matplotlib.legend.Legend
        Added as an extra artist, so a later ``ax.legend()`` (e.g. for colours) keeps it.
    """
    handles = [ax.scatter([], [], s=float(to_size(v)), color=colour, label=fmt.format(v))
               for v in values]
    if not handles:
        raise ValueError("values must hold at least one value")
    legend = ax.legend(handles=handles, title=title, loc=loc, frameon=False, scatterpoints=1)
    ax.add_artist(legend)
    return legend


def alpha_legend(ax, values: Iterable[float], to_alpha, *, title: str,
                 colour: str = NEUTRAL, loc: str = "lower right", fmt: str = "{:g}"):
    """A key for transparency: one square patch per value at the alpha the plot used.

    Parameters
    ----------
    ax
        The axes whose artists encode a quantity as transparency.
    values
        Representative values of that quantity.
    to_alpha
        The same function of a value the plot used for ``alpha=`` (in [0, 1]).
    title
        What the transparency means, with its unit.
    colour, loc, fmt
        Patch colour, legend position, label format.

    Returns
    -------
    matplotlib.legend.Legend
        Added as an extra artist, like :func:`size_legend`.
    """
    from matplotlib.patches import Patch

    handles = []
    for v in values:
        alpha = float(to_alpha(v))
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"to_alpha({v!r}) = {alpha!r} is not in [0, 1]")
        handles.append(Patch(facecolor=colour, alpha=alpha, label=fmt.format(v)))
    if not handles:
        raise ValueError("values must hold at least one value")
    legend = ax.legend(handles=handles, title=title, loc=loc, frameon=False)
    ax.add_artist(legend)
    return legend
