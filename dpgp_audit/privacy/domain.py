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
  the float spacing at the largest possible release, ``np.spacing(bound × gain)``, must
  be at most :data:`FP_SAFETY_FRACTION` (10⁻⁶) of the smallest noise standard deviation.
  Otherwise the release is refused and the message gives the largest safe bound
  (:func:`largest_safe_bound`).

The rule makes rounding invisible next to the noise (the A.7 precision auditor checks
exactly this ratio); it is not a proof that the float release is private. The proof-
carrying option is the secure noise of :mod:`dpgp_audit.privacy.secure_noise`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import as_finite_array, check_positive_float

__all__ = ["DEFAULT_Y_BOUND", "FP_SAFETY_FRACTION", "PublicDomain", "check_float_safety",
           "check_linear_release", "declared_domain", "largest_safe_bound", "largest_safe_release",
           "row_gains"]

#: Documented bound on (float spacing at the largest release) / (smallest noise sd).
FP_SAFETY_FRACTION = 1e-6
#: The public domain |y| <= 1e6 of a mechanism built without an explicit ``y_bound``
#: (targets are expected in natural or normalised units; declare a bound to change it).
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
    """

    y_bound: float
    clip: bool = False
    x_bound: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "y_bound", check_positive_float("y_bound", self.y_bound))
        if self.x_bound is not None:
            object.__setattr__(self, "x_bound", check_positive_float("x_bound", self.x_bound))
        object.__setattr__(self, "clip", bool(self.clip))

    def targets(self, y: object) -> np.ndarray:
        """``y`` checked against (or, with ``clip``, clipped into) ``|y| <= y_bound``."""
        from dpgp_audit.dataset import clip_targets

        return clip_targets(np.asarray(y), self.y_bound, clip=self.clip)[0]

    def inputs(self, X: object) -> np.ndarray:
        """``X`` checked against ``|x| <= x_bound`` (no check when ``x_bound`` is ``None``)."""
        X = as_finite_array("X", X)
        if self.x_bound is not None and X.size and float(np.max(np.abs(X))) > self.x_bound:
            raise ValueError(f"X: inputs outside the declared public domain |x| <= "
                             f"{self.x_bound:g} (max |x| = {float(np.max(np.abs(X))):g})")
        return X

    def describe(self) -> str:
        """One line for listings and reports."""
        text = f"|y| <= {self.y_bound:g}" + (" (clipped)" if self.clip else "")
        if self.x_bound is not None:
            text += f", |x| <= {self.x_bound:g}"
        return text

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {"y_bound": self.y_bound, "clip": self.clip, "x_bound": self.x_bound,
                "describe": self.describe()}


def declared_domain(y_bound: float | None, clip: bool = False) -> PublicDomain:
    """The public domain of a mechanism built with ``y_bound`` (``None``: :data:`DEFAULT_Y_BOUND`).

    ``clip=True`` needs an explicit bound (a silent clip at the default would change the
    data without the user having declared anything).
    """
    if clip and y_bound is None:
        raise ValueError("clip=True needs a declared y_bound")
    return PublicDomain(DEFAULT_Y_BOUND if y_bound is None else y_bound, clip=clip)


def largest_safe_release(min_sd: float, fraction: float = FP_SAFETY_FRACTION) -> float:
    """The largest |v| with ``np.spacing(v) <= fraction · min_sd``.

    ``np.spacing(v) = 2^(e − 52)`` for ``2^e <= |v| < 2^(e+1)``, so the answer is just
    below ``2^(e_max + 1)`` with ``e_max = floor(log2(fraction · min_sd)) + 52``.
    """
    min_sd = check_positive_float("min_sd", min_sd)
    target = fraction * min_sd
    e_max = math.floor(math.log2(target)) + 52
    if e_max + 1 > 1023:
        return float(np.finfo(float).max)
    v = float(np.nextafter(2.0 ** (e_max + 1), 0.0))
    while np.spacing(v) > target:  # guard against an off-by-one in log2 rounding
        v = float(np.nextafter(v / 2.0, 0.0))
    return v


def largest_safe_bound(gain: float, min_sd: float, fraction: float = FP_SAFETY_FRACTION
                       ) -> float:
    """The largest ``y_bound`` for which ``y_bound × gain`` passes the safety rule."""
    gain = check_positive_float("gain", gain)
    return largest_safe_release(min_sd, fraction) / gain


def check_float_safety(bound: float, gain: float, min_sd: float, *, what: str = "y_bound",
                       fraction: float = FP_SAFETY_FRACTION) -> float:
    """Refuse when rounding at the largest possible release is visible next to the noise.

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
        The ratio ``np.spacing(bound × gain) / min_sd`` (at most ``fraction``).

    Raises
    ------
    ValueError
        When the ratio exceeds ``fraction``; the message gives the largest safe bound.
    """
    bound = check_positive_float(what, bound)
    gain = float(gain)
    if not (math.isfinite(gain) and gain >= 0):
        raise ValueError(f"gain must be finite and >= 0, got {gain!r}")
    min_sd = float(min_sd)
    if not (math.isfinite(min_sd) and min_sd > 0):
        raise ValueError(f"the smallest noise sd must be finite and > 0, got {min_sd!r}: "
                         "a release without noise in some coordinate cannot be float-safe")
    top = bound * gain
    if not math.isfinite(top):
        raise ValueError(f"{what} = {bound:g} times the query's gain {gain:g} overflows")
    ratio = float(np.spacing(top)) / min_sd if top > 0 else 0.0
    if ratio > fraction:
        safe = largest_safe_bound(gain, min_sd, fraction) if gain > 0 else math.inf
        raise ValueError(
            f"{what} = {bound:g} is not float-safe: the largest possible release "
            f"({what} x gain {gain:.4g} = {top:.4g}) has float spacing {np.spacing(top):.3g}, "
            f"{ratio:.3g} of the smallest noise sd {min_sd:.4g} (the rule allows {fraction:g});"
            f" the largest safe {what} is {safe:.6g}")
    return ratio


def row_gains(C: np.ndarray) -> np.ndarray:
    """Largest |release_k| per unit bound on |y| for a linear query ``C y``: Σ_i |C_ki|."""
    C = np.atleast_2d(as_finite_array("C", C))
    return np.sum(np.abs(C), axis=1)


def check_linear_release(domain: PublicDomain, C: np.ndarray, sd: np.ndarray, *,
                         offset: np.ndarray | None = None,
                         fraction: float = FP_SAFETY_FRACTION) -> float:
    """The float-safety rule for a linear Gaussian or Laplace release ``C y + offset + noise``.

    Coordinate k can reach ``y_bound · Σ_i |C_ki| + |offset_k|``; its float spacing there
    must be at most ``fraction`` of that coordinate's noise sd ``sd[k]``. A coordinate
    that depends on y but has no noise is refused outright.

    Returns
    -------
    float
        The largest ratio spacing / sd over the coordinates.

    Raises
    ------
    ValueError
        Naming ``y_bound`` and giving the largest bound that passes.
    """
    gains = row_gains(C)
    sd = np.broadcast_to(np.asarray(sd, dtype=float).ravel(), gains.shape)
    off = (np.zeros_like(gains) if offset is None
           else np.broadcast_to(np.abs(np.asarray(offset, dtype=float)).ravel(), gains.shape))
    live = gains > 0
    if np.any(live & ~(sd > 0)):
        raise ValueError("y_bound: a released coordinate depends on y but carries no noise; "
                         "no bound on |y| makes it float-safe")
    top = domain.y_bound * gains + off
    if not np.all(np.isfinite(top)):
        raise ValueError(f"y_bound = {domain.y_bound:g} times the query's gain overflows")
    ratios = np.where(live, np.spacing(top) / np.where(sd > 0, sd, 1.0), 0.0)
    worst = float(np.max(ratios)) if ratios.size else 0.0
    if worst > fraction:
        k = int(np.argmax(ratios))
        safe = min((largest_safe_release(float(sd[j]), fraction) - float(off[j]))
                   / float(gains[j]) for j in np.flatnonzero(live))
        raise ValueError(
            f"y_bound = {domain.y_bound:g} is not float-safe: output {k} can reach "
            f"{top[k]:.4g}, where the float spacing {np.spacing(top[k]):.3g} is {worst:.3g} of "
            f"its noise sd {sd[k]:.4g} (the rule allows {fraction:g}); the largest safe "
            f"y_bound is {max(safe, 0.0):.6g}")
    return worst
