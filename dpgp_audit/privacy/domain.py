"""Declared public domains and the floating-point safety rule (issue 10 §1; catalogue A.7).

A privacy proof bounds how much one neighbour can move a query; it says nothing about
floating point. When the other targets are huge (legal under an outputs-only relation
with no bound on |y|), the release ``q(D) + noise`` is rounded to a float grid whose
spacing can exceed the noise: the output then takes a few distinct values and
neighbours become distinguishable (Mironov 2012, §3 for Laplace; Jin et al., S&P 2022,
for Gaussian noise). Two things close the gap:

* a **public domain** every shipped mechanism declares in its claim: a bound on |y| (and
  on the inputs where the query needs one). Data outside it is refused with a
  ``ValueError`` naming ``y`` and the bound, or clipped where the documented contract is
  to clip (the clip is then recorded in the claim);
* a **floating-point safety rule**, checked when a mechanism is applied to a dataset:
  at the largest possible release ``top = bound × gain + |offset| + 64 sd`` the float
  spacing ``np.spacing(top)`` must be at most 2^−:data:`GUARD_BITS` of the coordinate's
  release grid Λ (:func:`~dpgp_audit.privacy.float_release.release_grid`, about sd/1500;
  so spacing ≤ 2⁻²⁰ sd < 10⁻⁶ sd, the issue-10 rule tightened to the grid). Otherwise the
  release is refused and the message gives the largest safe bound
  (:func:`largest_safe_bound`).

With the rule, every continuous release of the kit is rounded exactly to its grid Λ
(:mod:`dpgp_audit.privacy.float_release`, issue 20 §4): the grid points are floats, the
exact rounding's error bound stays far inside a cell, and the float release is within a
stated total variation of the real-arithmetic mechanism (docs/auditors.md). The exact
samplers of :mod:`dpgp_audit.privacy.secure_noise` remain the alternative with no
float slack at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import as_finite_array, check_positive_float
from dpgp_audit.privacy.float_release import (
    GUARD_BITS,
    TAIL_SDS,
    FloatRelease,
    largest_safe_top,
    release_grid,
)

__all__ = ["DEFAULT_Y_BOUND", "GUARD_BITS", "PublicDomain", "check_float_safety",
           "check_linear_release", "declared_domain", "domain_problem", "largest_safe_bound",
           "largest_safe_release", "row_gains"]

#: The documented public domain |y| <= 1e6 of a mechanism built without an explicit
#: ``y_bound`` (targets are expected in natural or normalised units; declare a bound to
#: change it).
DEFAULT_Y_BOUND = 1e6


@dataclass(frozen=True)
class PublicDomain:
    """The public domain a mechanism's proof and float safety need.

    Parameters
    ----------
    y_bound
        Every target satisfies ``|y| <= y_bound``.
    clip
        ``False`` (default): a target outside the bound is refused (``ValueError``).
        ``True``: targets are clipped into the bound; the clip is part of the claim.
    x_bound
        Optional bound on every input coordinate, ``|x| <= x_bound`` (``None``: the
        inputs are public and the query does not need a bound on them).
    labels
        Optional finite set of target values (class labels, e.g. ``(-1.0, 1.0)``), all
        inside the bound: any other target is refused. The auditors then treat only
        datasets of these values as legal (a refusal of a legal dataset is a finding).
    """

    y_bound: float
    clip: bool = False
    x_bound: float | None = None
    labels: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "y_bound", check_positive_float("y_bound", self.y_bound))
        if self.x_bound is not None:
            object.__setattr__(self, "x_bound", check_positive_float("x_bound", self.x_bound))
        object.__setattr__(self, "clip", bool(self.clip))
        if self.labels is not None:
            labels = tuple(sorted({float(v) for v in self.labels}))
            if not labels or not all(math.isfinite(v) and abs(v) <= self.y_bound
                                     for v in labels):
                raise ValueError(f"labels must be finite values inside |y| <= "
                                 f"{self.y_bound:g}, got {self.labels!r}")
            if self.clip:
                raise ValueError("clip=True cannot be combined with labels (a label is not "
                                 "clipped into another)")
            object.__setattr__(self, "labels", labels)

    def targets(self, y: object) -> np.ndarray:
        """``y`` checked against (or, with ``clip``, clipped into) ``|y| <= y_bound``.

        With ``labels`` declared, every target must also be one of them.
        """
        from dpgp_audit.dataset import clip_targets

        out = clip_targets(np.asarray(y), self.y_bound, clip=self.clip)[0]
        if self.labels is not None:
            bad = ~np.isin(out, self.labels)
            if np.any(bad):
                raise ValueError(f"y: {int(bad.sum())} target(s) are not among the declared "
                                 f"labels {self._label_text()} (e.g. {float(out[bad][0]):g})")
        return out

    def _label_text(self) -> str:
        return "{" + ", ".join(f"{v:g}" for v in self.labels or ()) + "}"

    def inputs(self, X: object) -> np.ndarray:
        """``X`` checked against ``|x| <= x_bound`` (no check when ``x_bound`` is ``None``)."""
        X = as_finite_array("X", X)
        if self.x_bound is not None and X.size and float(np.max(np.abs(X))) > self.x_bound:
            raise ValueError(f"X: inputs outside the declared public domain |x| <= "
                             f"{self.x_bound:g} (max |x| = {float(np.max(np.abs(X))):g})")
        return X

    def describe(self) -> str:
        """One line for listings and reports."""
        text = (f"y in {self._label_text()}" if self.labels is not None else
                f"|y| <= {self.y_bound:g}" + (" (clipped)" if self.clip else ""))
        if self.x_bound is not None:
            text += f", |x| <= {self.x_bound:g}"
        return text

    def as_dict(self) -> dict:
        """JSON-ready form."""
        out = {"y_bound": self.y_bound, "clip": self.clip, "x_bound": self.x_bound,
               "describe": self.describe()}
        if self.labels is not None:
            out["labels"] = list(self.labels)
        return out


def declared_domain(y_bound: float | None, clip: bool = False) -> PublicDomain:
    """The public domain of a mechanism built with ``y_bound`` (``None``: :data:`DEFAULT_Y_BOUND`).

    ``clip=True`` needs an explicit bound (a silent clip at the default would change the
    data without the user having declared anything).
    """
    if clip and y_bound is None:
        raise ValueError("clip=True needs a declared y_bound")
    return PublicDomain(DEFAULT_Y_BOUND if y_bound is None else y_bound, clip=clip)


def largest_safe_release(min_sd: float) -> float:
    """The largest |v| whose float spacing is at most 2^-GUARD_BITS of the grid for ``min_sd``.

    The grid is :func:`~dpgp_audit.privacy.float_release.release_grid` of the sd (a power of
    two), so the answer is the float just below a power of two
    (:func:`~dpgp_audit.privacy.float_release.largest_safe_top`).
    """
    min_sd = check_positive_float("min_sd", min_sd)
    return largest_safe_top(float(release_grid(min_sd)))


def largest_safe_bound(gain: float, min_sd: float) -> float:
    """The largest ``y_bound`` for which ``y_bound × gain`` (plus 64 sd) passes the rule."""
    gain = check_positive_float("gain", gain)
    min_sd = check_positive_float("min_sd", min_sd)
    return max(0.0, (largest_safe_release(min_sd) - TAIL_SDS * min_sd) / gain)


def _as_release(release: object) -> FloatRelease:
    """A :class:`FloatRelease`, or the grid of a plain array of noise sds."""
    if isinstance(release, FloatRelease):
        return release
    sd = np.atleast_1d(np.asarray(release, dtype=float)).ravel()
    if not np.all(np.isfinite(sd)):
        raise ValueError("the noise sd must be finite")
    if np.any(sd <= 0):
        raise ValueError("y_bound: a released coordinate carries no noise (sd 0); no bound "
                         "on |y| makes it float-safe")
    return FloatRelease(release_grid(sd), sd, 0.0, "given sd")


def check_float_safety(bound: float, gain: float, min_sd: float, *, what: str = "y_bound"
                       ) -> float:
    """Refuse when rounding at the largest possible release would reach the release grid.

    Parameters
    ----------
    bound
        The domain bound (e.g. ``y_bound``).
    gain
        How much the release can grow per unit of the bound (for a linear query ``C y`` the
        largest row sum ``max_k Σ_i |C_ki|``; for a sum of n targets ``n``).
    min_sd
        The smallest noise standard deviation of any released coordinate.
    what
        The parameter to name in the message.

    Returns
    -------
    float
        ``np.spacing(top) / Λ`` at ``top = bound × gain + 64 min_sd`` (at most 2^-GUARD_BITS).

    Raises
    ------
    ValueError
        When the ratio exceeds 2^-GUARD_BITS; the message gives the largest safe bound.
    """
    bound = check_positive_float(what, bound)
    gain = float(gain)
    if not (math.isfinite(gain) and gain >= 0):
        raise ValueError(f"gain must be finite and >= 0, got {gain!r}")
    min_sd = float(min_sd)
    if not (math.isfinite(min_sd) and min_sd > 0):
        raise ValueError(f"the smallest noise sd must be finite and > 0, got {min_sd!r}: "
                         "a release without noise in some coordinate cannot be float-safe")
    return _as_release(np.array([min_sd])).check_domain(bound, np.array([gain]), what=what)


def row_gains(C: np.ndarray) -> np.ndarray:
    """Largest |release_k| per unit bound on |y| for a linear query ``C y``: Σ_i |C_ki|."""
    C = np.atleast_2d(as_finite_array("C", C))
    return np.sum(np.abs(C), axis=1)


def check_linear_release(domain: PublicDomain, C: np.ndarray, release: object, *,
                         offset: np.ndarray | None = None) -> float:
    """The float-safety rule for a linear release ``C y + offset + noise``.

    Coordinate k can reach ``y_bound · Σ_i |C_ki| + |offset_k| + 64 sd_k``; there the float
    spacing must be at most 2^-GUARD_BITS of its release grid Λ_k. ``release`` is the
    release's :class:`~dpgp_audit.privacy.float_release.FloatRelease` (grid and sd) or an
    array of noise sds. A coordinate that depends on y but has no noise is refused outright.

    Returns
    -------
    float
        The largest ratio spacing / grid over the coordinates.

    Raises
    ------
    ValueError
        Naming ``y_bound`` and giving the largest bound that passes.
    """
    gains = row_gains(C)
    if isinstance(release, FloatRelease):
        fr = release
    else:
        sd = np.broadcast_to(np.asarray(release, dtype=float).ravel(), gains.shape)
        if np.any((gains > 0) & ~(sd > 0)):
            raise ValueError("y_bound: a released coordinate depends on y but carries no "
                             "noise; no bound on |y| makes it float-safe")
        fr = _as_release(np.where(sd > 0, sd, 1.0))
    if fr.k != gains.size:
        raise ValueError(f"C has {gains.size} rows but the release {fr.k} coordinates")
    return fr.check_domain(domain.y_bound, gains, offset=offset)


def domain_problem(claim: object, data: object) -> str | None:
    """Why ``data`` lies outside the claim's declared domain (``None`` when it does not).

    With a declared :class:`~dpgp_audit.privacy.domain.PublicDomain` the targets (unless
    it clips) and inputs are checked; under whole-row neighbours without one, the
    relation's ``|y| <= d`` is the domain.
    """
    domain = getattr(claim, "domain", None)
    try:
        if domain is not None:
            domain.targets(data.y)  # type: ignore[attr-defined]
            domain.inputs(data.X)  # type: ignore[attr-defined]
            return None
    except ValueError as err:
        return " ".join(str(err).split())
    bound = getattr(claim, "domain_bound", None)
    if bound is not None:
        top = float(np.abs(data.y).max())  # type: ignore[attr-defined]
        if top > bound:
            return (f"y: max |y| = {top:g} exceeds the whole-row relation's bound "
                    f"|y| <= {bound:g}")
    return None
