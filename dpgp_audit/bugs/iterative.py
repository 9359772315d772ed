"""An iterative release with its budget split as if composition were free (A.5, A.9).

Noisy gradient descent releases every iterate: each step reads the last released value,
so no output after the first is affine in all the noise drawn, and the grey-box survey
bounds only the first step. The path analysis (:mod:`~dpgp_audit.audit.paths`) follows
every step and sizes the whole release.

:class:`PenalisedDescent` minimises ``½(θ − ȳ)² + c · log cosh θ`` — a squared loss around
the mean target with a public log-cosh penalty — by ``T`` steps of noisy gradient
descent from θ = 0, each step's iterate released through the kit's float-safe Laplace
release (:mod:`~dpgp_audit.privacy.float_release`)::

    θ_{t+1} = Λ · round((p(θ_t) − η (p(θ_t) + c tanh p(θ_t) − ȳ) − η b L_t) / Λ)

with ``p`` the public clip to [−R, R] of the released iterate and L_t standard Laplace
(the sign is immaterial). The data enter through ȳ alone, so under outputs-only
substitution (|y| ≤ B, one target moved anywhere in the domain) every step's location
moves by at most ηΔ with Δ = 2B/n, while its noise has scale ηb: each step is exactly
(Δ/b)-DP, whatever the path. ``T`` such steps compose to ``T Δ / b`` exactly — a supremum
attained on the pair moving one target from −B to B, by every path whose noise at every
step lies on the far side of the shift (a set of positive probability, so the rounded
release attains it too, the cells there having ratio exactly e^{Δ/b}).

``budget`` sets b:

* ``"root"`` (BUG): ε/√T per step, the advanced-composition rule used under a pure
  claim, where it does not apply: true ε = √T · ε.
* ``"linear"`` (twin): ε/T per step, basic composition: true ε = ε, exactly the claim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_epsilon, check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.privacy.claims import PureDP, outputs_only
from dpgp_audit.privacy.domain import PublicDomain
from dpgp_audit.privacy.float_release import (
    FloatRelease,
    laplace_noise_exact_uniform,
    laplace_release,
)

__all__ = ["PenalisedDescent", "build_penalised_descent"]

_BUDGETS = ("root", "linear")


@dataclass(frozen=True, eq=False)
class PenalisedDescent:
    """``T`` noisy gradient steps on ``½(θ − ȳ)² + c log cosh θ``, every iterate released.

    Parameters
    ----------
    epsilon
        The claimed pure ε of the whole release.
    n_rows
        The public number of rows (the mean's sensitivity is 2B/n).
    budget
        ``"root"`` (BUG, ε/√T per step) or ``"linear"`` (twin, ε/T per step).
    steps, bound, eta, penalty, radius
        T, the target bound B, the step size η, the penalty weight c and the clip R of
        the released iterate before it is read.
    """

    epsilon: float
    n_rows: int
    budget: str = "root"
    steps: int = 4
    bound: float = 1.0
    eta: float = 0.5
    penalty: float = 2.0
    radius: float = 4.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive_int("n_rows", self.n_rows)
        check_positive_int("steps", self.steps)
        if self.budget not in _BUDGETS:
            raise ValueError(f"budget must be one of {_BUDGETS}, got {self.budget!r}")
        # the largest location a step can compute: |p| (1 − η) + η (c + B) with |p| <= R
        top = self.radius * abs(1.0 - self.eta) + self.eta * (self.penalty + self.bound)
        self.float_release().check_domain(top, [1.0], what="the iterate's range")

    @property
    def step_epsilon(self) -> float:
        """Each step's ε: ε/√T (BUG) or ε/T (twin)."""
        split = math.sqrt(self.steps) if self.budget == "root" else float(self.steps)
        return self.epsilon / split

    @property
    def scale(self) -> float:
        """The gradient noise's Laplace scale b = Δ / ε_step, Δ = 2B/n."""
        return 2.0 * self.bound / self.n_rows / self.step_epsilon

    def true_epsilon(self) -> float:
        """``T Δ / b``: √T · ε (BUG) or ε (twin)."""
        return self.steps * (2.0 * self.bound / self.n_rows) / self.scale

    def float_release(self) -> FloatRelease:
        """The grid and float τ of one step's noise, scale ηb (issue 20 §4)."""
        return laplace_release([self.eta * self.scale])

    @property
    def claim(self) -> PureDP:
        """Pure ε-DP, outputs only (|y| <= B), with the T steps' float τ."""
        return PureDP(epsilon=self.epsilon, relation=outputs_only(2.0 * self.bound),
                      domain=PublicDomain(self.bound),
                      float_tv=self.steps * self.float_release().tv)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases of the ``T`` iterates, shape ``(n, T)``, each on the step's grid."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        if data.n != self.n_rows:
            raise ValueError(f"built for {self.n_rows} rows, got {data.n}")
        y = self.claim.domain.targets(data.y)  # ValueError outside |y| <= B
        mean = float(np.mean(y))
        fr = self.float_release()
        theta = np.zeros((n, 1))
        out = np.empty((n, self.steps))
        for t in range(self.steps):  # θ ← θ − η(∇ + b L): the released iterate is read
            p = np.clip(theta, -self.radius, self.radius)
            location = p - self.eta * (p + self.penalty * np.tanh(p) - mean)
            noise = laplace_noise_exact_uniform(self.eta * self.scale, (n, 1), rng)
            theta = fr.round(location, noise)
            out[:, t] = theta[:, 0]
        return out


def build_penalised_descent(budget: str):  # noqa: ANN201 - a build function for the zoo
    """``build(data, epsilon)`` for :class:`PenalisedDescent` on the data's public size."""

    def build(data: Dataset, *, epsilon: float) -> PenalisedDescent:
        return PenalisedDescent(epsilon=epsilon, n_rows=data.n, budget=budget)

    return build
