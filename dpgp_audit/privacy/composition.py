"""Composition and budget splitting (catalogue P.6).

Used when a method spends part of its budget on one release (for example
hyperparameter selection by the exponential mechanism, S18.4) and the rest on
another (the cloaked prediction).

* :func:`basic_composition` — sequential basic composition of (ε, δ)-DP claims:
  ε's and δ's add (Dwork & Roth, Thm 3.16).
* :func:`gdp_composition` — μ-GDP claims compose to sqrt(Σ μ_i²) (Dong, Roth &
  Su, Cor. 3.3; reuses :func:`~dpgp_audit.privacy.gdp.gdp_compose`).
* :func:`zcdp_composition` — ρ's add (Bun & Steinke, Lemma 2.3).
* :func:`split_budget` / :func:`split_gdp` — divide a total budget into parts whose
  composition stays within it, returned as frozen :class:`Budget` records.

Every composition requires all claims to protect the same neighbour relation:
adding up guarantees about different relations proves nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_delta, check_epsilon, check_positive_float
from dpgp_audit.privacy.claims import ZCDP, ApproxDP, GaussianDP, NeighbourRelation, PureDP
from dpgp_audit.privacy.gdp import gdp_compose

__all__ = [
    "Budget",
    "basic_composition",
    "gdp_composition",
    "split_budget",
    "split_gdp",
    "zcdp_composition",
]


def _common(claims: Sequence, kind: type, what: str) -> tuple[NeighbourRelation, bool, str]:
    if len(claims) == 0:
        raise ValueError(f"{what} needs at least one claim")
    for i, c in enumerate(claims):
        if not isinstance(c, kind):
            hint = ""
            if isinstance(c, GaussianDP):
                hint = " (use gdp_composition, or convert with claim.to_approx(delta))"
            elif isinstance(c, ZCDP):
                hint = " (use zcdp_composition, or convert with claim.to_approx(delta))"
            raise ValueError(f"claims[{i}] is a {type(c).__name__}, {what} needs "
                             f"{kind.__name__} claims{hint}")
    relation = claims[0].relation
    for i, c in enumerate(claims[1:], start=1):
        if c.relation != relation:
            raise ValueError(
                f"claims[{i}] protects a different neighbour relation ({c.relation.describe()}) "
                f"than claims[0] ({relation.describe()}); composition needs one relation")
    proven = all(c.proven for c in claims)
    note = "; ".join(c.note for c in claims if c.note)
    return relation, proven, note


def _float_tv(claims: Sequence) -> float:
    """Float releases within τ_i of their exact mechanisms compose within Σ τ_i (a coupling
    of each part, adaptive choices included: the parts differ with probability ≤ Σ τ_i).
    """
    return math.fsum(c.float_tv for c in claims)


def basic_composition(claims: Iterable[ApproxDP]) -> ApproxDP:
    """Sequential basic composition: running (ε_i, δ_i)-DP mechanisms gives (Σε_i, Σδ_i)-DP.

    Parameters
    ----------
    claims
        :class:`~dpgp_audit.privacy.claims.ApproxDP` (or ``PureDP``) claims with one
        common neighbour relation.

    Returns
    -------
    ApproxDP
        ``PureDP`` when every δ_i is 0. ``proven`` only if every part is proven.

    Raises
    ------
    ValueError
        Empty input, a non-(ε, δ) claim, different neighbour relations, or Σδ_i ≥ 1.
    """
    claims = list(claims)
    relation, proven, note = _common(claims, ApproxDP, "basic_composition")
    epsilon = math.fsum(c.epsilon for c in claims)
    delta = math.fsum(c.delta for c in claims)
    if delta >= 1.0:
        raise ValueError(f"composed delta {delta:g} >= 1: the composition guarantees nothing")
    tv = _float_tv(claims)
    if delta == 0.0:
        return PureDP(epsilon=epsilon, relation=relation, proven=proven, note=note, float_tv=tv)
    return ApproxDP(epsilon=epsilon, delta=delta, relation=relation, proven=proven, note=note,
                    float_tv=tv)


def gdp_composition(claims: Iterable[GaussianDP]) -> GaussianDP:
    """Composition of μ_i-GDP claims: sqrt(Σ μ_i²)-GDP (Dong, Roth & Su, Cor. 3.3)."""
    claims = list(claims)
    relation, proven, note = _common(claims, GaussianDP, "gdp_composition")
    return GaussianDP(mu=gdp_compose(c.mu for c in claims), relation=relation, proven=proven,
                      note=note, float_tv=_float_tv(claims))


def zcdp_composition(claims: Iterable[ZCDP]) -> ZCDP:
    """Composition of ρ_i-zCDP claims: (Σ ρ_i)-zCDP (Bun & Steinke 2016, Lemma 2.3)."""
    claims = list(claims)
    relation, proven, note = _common(claims, ZCDP, "zcdp_composition")
    return ZCDP(rho=math.fsum(c.rho for c in claims), relation=relation, proven=proven,
                note=note, float_tv=_float_tv(claims))


@dataclass(frozen=True)
class Budget:
    """One part of a split privacy budget: (ε, δ), δ = 0 for a pure-DP part."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta, allow_zero=True))

    def __iter__(self) -> Iterator[float]:
        """Unpack as ``epsilon, delta = budget``."""
        return iter((self.epsilon, self.delta))

    def claim(self, relation: NeighbourRelation, *, proven: bool = True,
              note: str = "") -> ApproxDP:
        """The claim a mechanism spending exactly this part would carry."""
        if self.delta == 0.0:
            return PureDP(epsilon=self.epsilon, relation=relation, proven=proven, note=note)
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=relation,
                        proven=proven, note=note)


def _weights(name: str, weights: Sequence[float], *, allow_zero: bool) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"{name} must be a non-empty sequence of numbers")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} must be finite, got {w.tolist()}")
    if np.any(w < 0) or (not allow_zero and np.any(w == 0)):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"every entry of {name} must be {bound}, got {w.tolist()}")
    if w.sum() <= 0:
        raise ValueError(f"{name} must have a positive sum, got {w.tolist()}")
    return w / w.sum()


def _shares(total: float, w: np.ndarray) -> list[float]:
    """total·w_i, nudged down by ulps until their exact sum does not exceed ``total``."""
    parts = [float(total * wi) for wi in w]
    while math.fsum(parts) > total:
        j = int(np.argmax(parts))
        parts[j] = float(np.nextafter(parts[j], 0.0))
    return parts


def split_budget(epsilon: float, delta: float, weights: Sequence[float], *,
                 delta_weights: Sequence[float] | None = None) -> tuple[Budget, ...]:
    """Split (ε, δ) into parts (ε_i, δ_i) with Σε_i ≤ ε and Σδ_i ≤ δ (P.6).

    Parameters
    ----------
    epsilon, delta
        The total budget; ``delta`` may be 0 (every part pure).
    weights
        Relative share of ε for each part (all > 0; normalised).
    delta_weights
        Relative share of δ (≥ 0; a zero gives a pure-DP part, e.g. for the
        exponential mechanism). Defaults to ``weights``.

    Returns
    -------
    tuple of Budget
        One per part. Basic composition of the parts stays within (ε, δ): the
        shares are rounded down where floating point would exceed the total.

    Examples
    --------
    S18.4 spends ε/2 on hyperparameter selection and ε/2 (all of δ) on cloaking:
    ``split_budget(1.0, 1e-2, [1, 1], delta_weights=[0, 1])``.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=True)
    w_eps = _weights("weights", weights, allow_zero=False)
    if delta_weights is None:
        w_del = w_eps
    elif delta == 0.0:
        w_del = np.zeros(len(delta_weights))
    else:
        w_del = _weights("delta_weights", delta_weights, allow_zero=True)
    if w_del.size != w_eps.size:
        raise ValueError(f"delta_weights has {w_del.size} entries but weights has {w_eps.size}")
    eps_parts = _shares(epsilon, w_eps)
    del_parts = _shares(delta, w_del)
    return tuple(Budget(e, d) for e, d in zip(eps_parts, del_parts, strict=True))


def split_gdp(mu: float, weights: Sequence[float]) -> tuple[float, ...]:
    """Split a μ-GDP budget: μ_i = μ sqrt(w_i / Σw), so sqrt(Σ μ_i²) = μ (up to rounding down)."""
    mu = check_positive_float("mu", mu)
    w = _weights("weights", weights, allow_zero=False)
    sq = _shares(mu * mu, w)
    mus = [math.sqrt(s) for s in sq]
    while gdp_compose(mus) > mu:  # check with the very function that composes
        j = int(np.argmax(mus))
        mus[j] = float(np.nextafter(mus[j], 0.0))
    return tuple(mus)
