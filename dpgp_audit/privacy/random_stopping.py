"""Private selection from private candidates by random stopping (catalogue H.4).

Liu & Talwar (2019, Thm 3.4) run an (ε, δ)-DP candidate mechanism repeatedly,
keep the best score, and stop after each draw with probability γ or after at
most T draws. The output is (3ε + 3 sqrt(2δ), sqrt(2δ) T + δ₂)-DP with
T = ln(1/δ₂)/γ (H eq. 20). Honkela (H Alg. 2, App. C) picks δ₂ = sqrt(2δ)/γ,
which turns the δ budget into t(1 − ln t) = δ_tot with t = sqrt(2δ)/γ; its root

    t₀ = exp(1 + W₋₁(−δ_tot / e))

(Lambert W, lower branch: substitute t = e^{1+w}, so −e·w·e^w = δ_tot) gives
δ = γ² t₀²/2, δ₂ = t₀ and ε = ε_tot/3 − sqrt(2δ).

T must be an integer. :func:`random_stopping_budget` rounds it up (so that
e^{−γT} ≤ δ₂ still holds) and then recomputes sqrt(2δ) = (δ_tot − e^{−γT})/T,
so the achieved δ_tot never exceeds the target; the small change is reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from dpgp_audit._validation import check_delta, check_epsilon, check_positive_int, check_rng

__all__ = [
    "RandomStoppingBudget",
    "SelectionResult",
    "liu_talwar_t0",
    "random_stopping",
    "random_stopping_budget",
]


def liu_talwar_t0(delta_tot: float) -> float:
    """The root t₀ ∈ (0, 1) of t (1 − ln t) = δ_tot (H Alg. 2, line 1), via Lambert W₋₁."""
    delta_tot = check_delta(delta_tot, "delta_tot")
    w = special.lambertw(-delta_tot / math.e, k=-1)
    return float(math.exp(1.0 + float(np.real(w))))


@dataclass(frozen=True)
class RandomStoppingBudget:
    """The privacy accounting of H Alg. 2 (Liu–Talwar random stopping), as data.

    Attributes
    ----------
    epsilon_tot, delta_tot
        The target of the whole selection.
    gamma
        Stopping probability per draw.
    t0
        Root of t (1 − ln t) = δ_tot.
    epsilon, delta
        Per-candidate budget: each draw (inference + validation) is (ε, δ)-DP.
    delta2
        δ₂ = exp(−γ T), the probability bound of reaching T draws.
    T
        Maximum number of draws (integer).
    achieved_epsilon_tot, achieved_delta_tot
        3ε + 3 sqrt(2δ) and sqrt(2δ) T + δ₂ with the integer T (≤ the targets).
    """

    epsilon_tot: float
    delta_tot: float
    gamma: float
    t0: float
    epsilon: float
    delta: float
    delta2: float
    T: int
    achieved_epsilon_tot: float
    achieved_delta_tot: float

    def describe(self) -> str:
        """A printable account of the budget."""
        return "\n".join([
            f"Liu-Talwar random stopping (H Alg. 2): target ({self.epsilon_tot:g}, "
            f"{self.delta_tot:g})-DP, gamma = {self.gamma:g}",
            f"  t0 = {self.t0:.6g}  (t(1 - ln t) = delta_tot)",
            f"  per candidate: epsilon = {self.epsilon:.6g}, delta = {self.delta:.4g}",
            f"  at most T = {self.T} draws, delta2 = exp(-gamma T) = {self.delta2:.4g}",
            f"  achieved: epsilon_tot = 3 eps + 3 sqrt(2 delta) = {self.achieved_epsilon_tot:.6g},"
            f" delta_tot = sqrt(2 delta) T + delta2 = {self.achieved_delta_tot:.6g}",
        ])

    def __str__(self) -> str:
        return self.describe()


def random_stopping_budget(epsilon_tot: float, delta_tot: float, gamma: float
                           ) -> RandomStoppingBudget:
    """Split (ε_tot, δ_tot) into the per-candidate (ε, δ) and T of H Alg. 2 (App. C)."""
    epsilon_tot = check_epsilon(epsilon_tot, "epsilon_tot")
    delta_tot = check_delta(delta_tot, "delta_tot")
    if not (0 < gamma < 1):
        raise ValueError(f"gamma must lie in (0, 1), got {gamma!r}")
    t0 = liu_talwar_t0(delta_tot)
    T = max(1, math.ceil(math.log(1.0 / t0) / gamma - 1e-9))
    delta2 = math.exp(-gamma * T)
    root2delta = min(gamma * t0, (delta_tot - delta2) / T)
    if root2delta <= 0:
        raise ValueError("delta_tot is too small for this gamma (no delta left per candidate)")
    delta = root2delta * root2delta / 2.0
    epsilon = epsilon_tot / 3.0 - root2delta
    if epsilon <= 0:
        raise ValueError(f"epsilon_tot = {epsilon_tot:g} leaves no per-candidate epsilon "
                         f"(needs > 3 sqrt(2 delta) = {3 * root2delta:.3g})")
    return RandomStoppingBudget(
        epsilon_tot=epsilon_tot, delta_tot=delta_tot, gamma=float(gamma), t0=t0,
        epsilon=epsilon, delta=delta, delta2=delta2, T=T,
        achieved_epsilon_tot=3.0 * epsilon + 3.0 * root2delta,
        achieved_delta_tot=root2delta * T + delta2)


@dataclass(frozen=True)
class SelectionResult:
    """Outcome of random stopping: the best accepted candidate (index −1 if none)."""

    index: int
    score: float
    payload: Any
    n_draws: int


def random_stopping(run_candidate: Callable[[int, np.random.Generator], tuple[float, Any]],
                    n_candidates: int, budget: RandomStoppingBudget,
                    rng: np.random.Generator) -> SelectionResult:
    """Liu–Talwar random stopping (H Alg. 2, loop).

    Each draw picks i uniformly, calls ``run_candidate(i, rng) -> (score, payload)``
    (an (ε, δ)-DP mechanism; a score of NaN or −inf marks a rejected draw, e.g.
    a CoinPress value outside its interval), keeps the best, and stops with
    probability γ or after ``budget.T`` draws.
    """
    n_candidates = check_positive_int("n_candidates", n_candidates)
    rng = check_rng(rng)
    best_i, best_score, best_payload = -1, -math.inf, None
    draws = 0
    for draws in range(1, budget.T + 1):  # noqa: B007
        i = int(rng.integers(n_candidates))
        score, payload = run_candidate(i, rng)
        if math.isfinite(score) and score > best_score:
            best_i, best_score, best_payload = i, float(score), payload
        if rng.random() < budget.gamma:
            break
    return SelectionResult(best_i, best_score, best_payload, draws)
