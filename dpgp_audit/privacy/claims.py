"""Privacy claims as data (catalogue P.1–P.6).

A *claim* is what a mechanism promises: a privacy level, the neighbour relation
it protects, and whether the promise rests on a proof that covers the chosen
parameters. Claims are small frozen dataclasses in the style of dp-accounting's
``DpEvent`` records: they validate on construction and are cheap to pass around,
print and serialise.

The two neighbour relations of the five papers are

* **outputs only** (S18, S21): the inputs ``X`` are public; neighbouring datasets
  differ in one target, ``|y_i - y_i'| <= d``;
* **whole rows** (H, R): one pair ``(x_i, y_i)`` is substituted by any other pair
  from the declared domain (targets clipped to ``|y| <= d``).

A third relation serves mechanisms over a *vector of query answers* (the sparse
vector technique, report-noisy-max, histograms of counting queries): the dataset's
targets hold the answers ``q(D)`` and

* **all answers** (Lyu, Su & Li, VLDB 2017 §2; Ding et al., CCS 2018): *every*
  answer may move by up to ``d`` at once, ``max_i |q_i(D) - q_i(D')| <= d``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from enum import StrEnum

from dpgp_audit._validation import check_delta, check_epsilon, check_finite_float
from dpgp_audit.privacy.domain import PublicDomain

__all__ = [
    "ApproxDP",
    "Claim",
    "GaussianDP",
    "Neighbour",
    "NeighbourRelation",
    "PureDP",
    "ZCDP",
    "all_answers",
    "outputs_only",
    "whole_rows",
]


class Neighbour(StrEnum):
    """Which change between two datasets the guarantee covers."""

    OUTPUTS = "outputs-only"
    """Inputs X are public; one target y_i moves by at most ``d``."""
    ROWS = "whole-rows"
    """One row (x_i, y_i) is substituted; targets are clipped to ``|y| <= d``."""
    ANSWERS = "all-answers"
    """The targets are query answers; every answer may move by at most ``d`` at once."""


@dataclass(frozen=True)
class NeighbourRelation:
    """A neighbour relation with its bound.

    Parameters
    ----------
    kind
        :class:`Neighbour.OUTPUTS`, :class:`Neighbour.ROWS` or :class:`Neighbour.ANSWERS`.
    d
        Outputs only: the largest change of one target, ``|y_i - y_i'| <= d``.
        Whole rows: the bound on every target, ``|y_i| <= d`` (so one
        substitution moves a target by at most ``2 d``).
        All answers: the largest change of each answer, all at once.
    """

    kind: Neighbour
    d: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", Neighbour(self.kind))
        d = check_finite_float("d", self.d)
        if d <= 0:
            raise ValueError(f"d (the neighbour bound on y) must be > 0, got {d!r}")
        object.__setattr__(self, "d", d)

    @property
    def max_target_change(self) -> float:
        """Largest possible change of one target between neighbours."""
        return 2.0 * self.d if self.kind is Neighbour.ROWS else self.d

    def describe(self) -> str:
        """One line of prose for reports."""
        if self.kind is Neighbour.OUTPUTS:
            return f"outputs only: X public, one |y_i - y_i'| <= {self.d:g}"
        if self.kind is Neighbour.ANSWERS:
            return f"all answers: every query answer moves by at most {self.d:g} at once"
        return f"whole rows: one (x_i, y_i) substituted, |y| <= {self.d:g}"


def outputs_only(d: float) -> NeighbourRelation:
    """Outputs-only neighbours (S18, S21): X public, one target moves by at most ``d``."""
    return NeighbourRelation(Neighbour.OUTPUTS, d)


def whole_rows(y_bound: float) -> NeighbourRelation:
    """Whole-row neighbours (H, R): one (x, y) substituted, ``|y| <= y_bound``."""
    return NeighbourRelation(Neighbour.ROWS, y_bound)


def all_answers(d: float) -> NeighbourRelation:
    """Vector-answer neighbours (SVT, noisy max): every answer moves by at most ``d`` at once."""
    return NeighbourRelation(Neighbour.ANSWERS, d)


@dataclass(frozen=True, kw_only=True)
class _ClaimBase:
    """Fields shared by every claim.

    ``domain`` is the declared public domain the proof and the float safety need
    (:class:`~dpgp_audit.privacy.domain.PublicDomain`, issue 10 §1). ``None`` means the
    release needs no bound on |y| (e.g. a selection over counts) or, for whole rows, that
    the relation's own bound ``|y| <= d`` is the domain (:attr:`domain_bound`).

    ``float_tv`` (issue 20 §4) is τ for a release rounded to a float-safe grid
    (:mod:`dpgp_audit.privacy.float_release`): on every dataset the released floats differ
    from the same rounding of the exact (real-arithmetic) mechanism, which satisfies the
    claim, with probability at most τ, so the floats satisfy it with δ increased by
    ``(1 + e^ε) τ`` (:meth:`float_delta`). 0 for a release without continuous noise or with
    an exact sampler.
    """

    relation: NeighbourRelation
    proven: bool = True
    note: str = ""
    domain: PublicDomain | None = None
    float_tv: float = 0.0

    def __post_init__(self) -> None:
        if self.domain is not None and not isinstance(self.domain, PublicDomain):
            raise TypeError(f"domain must be a PublicDomain, got {type(self.domain).__name__}")
        tv = check_finite_float("float_tv", self.float_tv)
        if not 0.0 <= tv < 1.0:
            raise ValueError(f"float_tv must lie in [0, 1), got {tv!r}")
        object.__setattr__(self, "float_tv", tv)

    def float_delta(self, epsilon: float) -> float:
        """The δ the float release adds at ε: ``(1 + e^ε) · float_tv`` (0 without rounding)."""
        if self.float_tv == 0.0:
            return 0.0
        return (1.0 + math.exp(float(epsilon))) * self.float_tv

    def _float_suffix(self, epsilon: float | None) -> str:
        if self.float_tv == 0.0:
            return ""
        if epsilon is None:
            return (f"; floats: within total variation {self.float_tv:.2g} of the exact "
                    "mechanism (delta + (1 + e^eps) x that at every eps)")
        return (f"; floats: delta + {self.float_delta(epsilon):.2g} (total variation "
                f"{self.float_tv:.2g} to the exact mechanism)")

    @property
    def domain_bound(self) -> float | None:
        """The bound on |y| the claim rests on: the declared domain, else the whole-row d."""
        if self.domain is not None:
            return self.domain.y_bound
        return self.relation.d if self.relation.kind is Neighbour.ROWS else None

    def _domain_suffix(self) -> str:
        return "" if self.domain is None else f"; domain {self.domain.describe()}"

    def as_dict(self) -> dict:
        """A JSON-ready dictionary of the claim."""
        out = asdict(self)
        out["type"] = type(self).__name__
        out["relation"] = {"kind": self.relation.kind.value, "d": self.relation.d}
        out["domain"] = None if self.domain is None else self.domain.as_dict()
        out["domain_bound"] = self.domain_bound
        eps = getattr(self, "epsilon", None)
        out["float_delta"] = None if eps is None else self.float_delta(eps)
        return out


@dataclass(frozen=True, kw_only=True)
class ApproxDP(_ClaimBase):
    """(ε, δ)-differential privacy.

    ``proven=False`` marks a claim produced by a calibration used outside the
    range its proof covers (for example the classical Gaussian formula at
    ε > 1); reports print it as *unproven*.
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta, allow_zero=True))

    def describe(self) -> str:
        """One line of prose for reports."""
        tag = "" if self.proven else " [UNPROVEN: calibration used outside its proof]"
        return (f"({self.epsilon:g}, {self.delta:g})-DP, {self.relation.describe()}"
                f"{self._domain_suffix()}{self._float_suffix(self.epsilon)}{tag}")

    @property
    def delta_total(self) -> float:
        """δ of the released floats: ``delta + float_delta(epsilon)``, at most 1."""
        return min(1.0, self.delta + self.float_delta(self.epsilon))


@dataclass(frozen=True, kw_only=True)
class PureDP(ApproxDP):
    """ε-differential privacy (δ = 0)."""

    delta: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.delta != 0.0:
            raise ValueError("PureDP has delta = 0")


@dataclass(frozen=True, kw_only=True)
class GaussianDP(_ClaimBase):
    """μ-Gaussian differential privacy (Dong, Roth & Su; R §2, eq. 5)."""

    mu: float

    def __post_init__(self) -> None:
        super().__post_init__()
        mu = check_finite_float("mu", self.mu)
        if mu <= 0:
            raise ValueError(f"mu must be > 0, got {mu!r}")
        object.__setattr__(self, "mu", mu)

    def delta_at(self, epsilon: float) -> float:
        """δ(ε) of this claim (R eq. 5)."""
        from dpgp_audit.privacy.gdp import gdp_delta

        return gdp_delta(epsilon, self.mu)

    def epsilon_at(self, delta: float) -> float:
        """ε(δ) of this claim."""
        from dpgp_audit.privacy.gdp import gdp_epsilon

        return gdp_epsilon(delta, self.mu)

    def to_approx(self, delta: float) -> ApproxDP:
        """The (ε, δ)-DP claim implied at ``delta`` (exact for GDP)."""
        return ApproxDP(relation=self.relation, proven=self.proven, note=self.note,
                        domain=self.domain, epsilon=self.epsilon_at(delta), delta=delta,
                        float_tv=self.float_tv)

    def describe(self) -> str:
        """One line of prose for reports."""
        return (f"{self.mu:g}-GDP, {self.relation.describe()}{self._domain_suffix()}"
                f"{self._float_suffix(None)}")


@dataclass(frozen=True, kw_only=True)
class ZCDP(_ClaimBase):
    """ρ-zero-concentrated differential privacy (Bun & Steinke; H eq. 19)."""

    rho: float

    def __post_init__(self) -> None:
        super().__post_init__()
        rho = check_finite_float("rho", self.rho)
        if rho <= 0:
            raise ValueError(f"rho must be > 0, got {rho!r}")
        object.__setattr__(self, "rho", rho)

    def to_approx(self, delta: float) -> ApproxDP:
        """The (ε, δ)-DP claim implied by H eq. (19): ε = ρ + 2 sqrt(ρ ln(1/δ))."""
        from dpgp_audit.privacy.conversions import zcdp_to_epsilon

        return ApproxDP(relation=self.relation, proven=self.proven, note=self.note,
                        domain=self.domain, epsilon=zcdp_to_epsilon(self.rho, delta),
                        delta=delta, float_tv=self.float_tv)

    def describe(self) -> str:
        """One line of prose for reports."""
        return (f"{self.rho:g}-zCDP, {self.relation.describe()}{self._domain_suffix()}"
                f"{self._float_suffix(None)}")


Claim = ApproxDP | GaussianDP | ZCDP
"""Any privacy claim a mechanism may carry."""
