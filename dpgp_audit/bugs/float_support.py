"""Textbook float samplers: private over the reals, not in floating point (catalogue A.5, A.7).

Issue 20 §4. A hurried user who writes the Laplace or Gaussian sampler from the textbook
gets the right law over the real numbers and an infinite privacy loss in floats (Mironov
2012, §3). Near zero the release ``fl(q + Y)`` is exact where Y cancels most of q
(Sterbenz's lemma), so it lies on the float grid of q: for the sum ``q = 1`` every output
in (−½, ½) is a multiple of 2⁻⁵³, while for ``q = 0`` the output is Y itself, whose
significand reaches far below 2⁻⁵³. An event such as "|x| < ½ and x off the 2⁻⁵³ grid"
has probability about 0.2 (Laplace, b = 1) or 0.05 (Gaussian, σ = 3.73) under one dataset
and exactly 0 under its neighbour: no (ε, δ) with δ below that probability holds, so the
true ε is ∞.

Three samplers, each on the sum of the targets with the claim, domain, sensitivity and
scale of its correct twin:

* ``"laplace-log"``: ``q + b · s · (−log(1 − U))`` with a random sign s (exponential by
  inversion); twin ``P.2/laplace-sum-secure`` (Mironov's snapping mechanism);
* ``"laplace-inverse-cdf"``: ``q − b · sign(u) · log(1 − 2|u|)``, ``u = U − ½``; same twin;
* ``"gaussian-box-muller"``: ``q + σ · sqrt(−2 log(1 − U₁)) · cos(2π U₂)``; twin
  ``P.1/gaussian-sum-secure`` (the exact discrete Gaussian on a power-of-two grid);
* ``"laplace-float32"``: numpy's own Laplace draw, with the sum and the release computed in
  float32 (a hurried memory saving): the same leak on float32's 24-bit grid, which the
  float64 view of the outputs hides unless the test reads them at their own precision
  (:func:`~dpgp_audit.audit.blackbox.scores.release_format_bits`); twin
  ``P.2/laplace-sum-secure``.

U is ``rng.random()``, a multiple of 2⁻⁵³ in [0, 1). The query, its sensitivity bound and
(for the Gaussian) ``mean``/``cov`` are right, so the sensitivity and white-box auditors
find nothing: only the precision auditor's float-support test (A.7, on by default) sees
the leak. The kit's own ``P.1/gaussian-sum`` and ``P.2/laplace-sum`` draw float noise too,
but round every release exactly to a public power-of-two grid
(:mod:`dpgp_audit.privacy.float_release`), which removes it (docs/auditors.md). Never use
these mechanisms on data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import check_epsilon, check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.norms import L1, L2
from dpgp_audit.privacy.calibrate import calibrate_gaussian
from dpgp_audit.privacy.claims import ApproxDP, PureDP, outputs_only
from dpgp_audit.privacy.domain import PublicDomain, declared_domain
from dpgp_audit.privacy.mechanisms import laplace_scale

__all__ = ["SAMPLERS", "TextbookNoiseSum", "build_textbook"]

#: The textbook samplers and the twin each one should have been.
SAMPLERS: dict[str, str] = {
    "laplace-log": "P.2/laplace-sum-secure",
    "laplace-inverse-cdf": "P.2/laplace-sum-secure",
    "gaussian-box-muller": "P.1/gaussian-sum-secure",
    "laplace-float32": "P.2/laplace-sum-secure",
}


@dataclass(frozen=True, eq=False)
class TextbookNoiseSum:
    """BUG (planted): ``Σ y + noise`` with the noise from a textbook float sampler.

    Parameters
    ----------
    d, epsilon
        Outputs-only neighbour bound and the claimed ε.
    sampler
        One of :data:`SAMPLERS`.
    delta
        The claimed δ for the Gaussian sampler (ignored for Laplace, which claims pure ε).
    y_bound
        The declared public domain (default that of the kit's mechanisms).
    """

    d: float
    epsilon: float
    sampler: str
    delta: float = 1e-5
    y_bound: float | None = None
    scale: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {sorted(SAMPLERS)}, got {self.sampler!r}")
        check_epsilon(self.epsilon)
        outputs_only(self.d)  # validates d
        scale = (calibrate_gaussian(self.epsilon, self.delta, self.d).sigma if self.gaussian
                 else laplace_scale(self.epsilon, self.d))
        object.__setattr__(self, "scale", float(scale))

    @property
    def gaussian(self) -> bool:
        """True for the Gaussian sampler."""
        return self.sampler.startswith("gaussian")

    @property
    def domain(self) -> PublicDomain:
        """The declared public domain |y| <= y_bound."""
        return declared_domain(self.y_bound)

    @property
    def claim(self) -> ApproxDP:
        """The twin's claim: (ε, δ)-DP (Gaussian) or ε-DP (Laplace), outputs only."""
        if self.gaussian:
            return ApproxDP(epsilon=self.epsilon, delta=self.delta,
                            relation=outputs_only(self.d), domain=self.domain)
        return PureDP(epsilon=self.epsilon, relation=outputs_only(self.d), domain=self.domain)

    @property
    def norm(self) -> L1 | L2:
        """L2 for the Gaussian proof, L1 for the Laplace one (both: |Σy − Σy′| ≤ d)."""
        return L2() if self.gaussian else L1()

    def sensitivity_bound(self) -> float:
        """D: right (the bug is in the sampler)."""
        return float(self.d)

    def query(self, data: Dataset) -> np.ndarray:
        """The correctly rounded sum of the targets, shape (1,)."""
        return np.array([math.fsum(self.domain.targets(check_dataset(data).y))])

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases ``q + noise``, shape (n, 1), the noise as the textbook writes it.

        ``"laplace-float32"`` computes and returns them in float32.
        """
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        q = self.query(data)[0]
        b = self.scale
        if self.sampler == "laplace-log":
            sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
            noise = b * sign * -np.log(1.0 - rng.random(n))
        elif self.sampler == "laplace-inverse-cdf":
            u = rng.random(n) - 0.5
            noise = -b * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))
        elif self.sampler == "laplace-float32":
            noise32 = rng.laplace(0.0, b, n).astype(np.float32)
            return (np.float32(q) + noise32)[:, None]  # float32 arithmetic, float32 release
        else:
            u1, u2 = 1.0 - rng.random(n), rng.random(n)
            noise = b * np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
        return (q + noise)[:, None]


def build_textbook(sampler: str):  # noqa: ANN201 - a build function for the zoo
    """``build(data, **defaults)`` for one textbook sampler (the zoo's builder)."""

    def build(data: Dataset, *, epsilon: float, d: float = 1.0, delta: float = 1e-5,
              y_bound: float | None = None) -> TextbookNoiseSum:
        return TextbookNoiseSum(d=d, epsilon=epsilon, sampler=sampler, delta=delta,
                                y_bound=y_bound)

    build.__name__ = f"build_textbook_{sampler.replace('-', '_')}"
    return build
