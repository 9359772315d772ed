"""The integral (bin-average) EQ kernel used for the S18.3 binning baseline (S18 §4).

An observation is the *average* of a latent f ~ GP(0, EQ) over an axis-aligned box
B = [a_1, b_1] × … × [a_D, b_D]; a point is the degenerate box a = b. Inputs are rows
``[a_1 … a_D, b_1 … b_D]`` (shape (n, 2D)). The covariance of two averages is

    k(B, B') = v · Π_d (1/(|B_d||B'_d|)) ∫_{B_d} ∫_{B'_d} exp(−(x − x')² / (2 l_d²)) dx' dx,

computed in closed form with Φ₂(z) = l√(π/2)·z·erf(z/(√2 l)) + l² exp(−z²/(2 l²)), whose
second derivative is the EQ profile:
∫_{a}^{b}∫_{a'}^{b'} g(x − x') = Φ₂(b − a') − Φ₂(b − b') − Φ₂(a − a') + Φ₂(a − b').
Zero-width sides use the point limits (erf for point–interval, the EQ for point–point).
Averaging a PSD kernel over boxes keeps it PSD (registered in the kernel registry).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from dpgp_audit.gp.kernels import Kernel, _positive, _positive_vector, register_kernel_example

__all__ = ["IntegralEQ", "boxes", "points_as_boxes"]

_SQRT_HALF_PI = np.sqrt(np.pi / 2.0)


def boxes(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Rows ``[lower, upper]`` for the integral kernel; checks lower <= upper."""
    lo = np.atleast_2d(np.asarray(lower, dtype=float))
    hi = np.atleast_2d(np.asarray(upper, dtype=float))
    if lo.shape != hi.shape:
        raise ValueError(f"lower {lo.shape} and upper {hi.shape} must have the same shape")
    if np.any(hi < lo):
        raise ValueError("every box needs lower <= upper")
    return np.hstack([lo, hi])


def points_as_boxes(X: np.ndarray) -> np.ndarray:
    """Degenerate boxes for point inputs (predictions of the latent f)."""
    X = np.asarray(X, dtype=float)
    X = X[:, None] if X.ndim == 1 else X
    return np.hstack([X, X])


def _phi2(z: np.ndarray, ls: float) -> np.ndarray:
    z = np.abs(z)  # Φ₂ is even; evaluating on |z| makes k(B, B') == k(B', B) bit for bit
    return ls * _SQRT_HALF_PI * z * special.erf(z / (np.sqrt(2.0) * ls)) + ls**2 * np.exp(
        -0.5 * (z / ls) ** 2)


def _avg_1d(a: np.ndarray, b: np.ndarray, a2: np.ndarray, b2: np.ndarray, ls: float) -> np.ndarray:
    """Average of exp(−(x − x')²/(2l²)) over x ∈ [a, b], x' ∈ [a2, b2] (broadcast)."""
    w1 = b - a
    w2 = b2 - a2
    tiny = 1e-9 * ls
    both = (w1 > tiny) & (w2 > tiny)
    out = np.empty(np.broadcast(a, a2).shape)
    # interval–interval
    with np.errstate(divide="ignore", invalid="ignore"):
        ii = ((_phi2(b - a2, ls) + _phi2(a - b2, ls))
              - (_phi2(b - b2, ls) + _phi2(a - a2, ls))) / (w1 * w2)
        # point (midpoint of the thin side) – interval
        c1 = 0.5 * (a + b)
        c2 = 0.5 * (a2 + b2)
        s = np.sqrt(2.0) * ls
        pi1 = ls * _SQRT_HALF_PI * (special.erf((b2 - c1) / s) - special.erf((a2 - c1) / s)) / w2
        pi2 = ls * _SQRT_HALF_PI * (special.erf((b - c2) / s) - special.erf((a - c2) / s)) / w1
    pp = np.exp(-0.5 * ((c1 - c2) / ls) ** 2)
    out = np.where(both, ii, np.where((w1 <= tiny) & (w2 > tiny), pi1,
                                      np.where((w2 <= tiny) & (w1 > tiny), pi2, pp)))
    return out


@dataclass(frozen=True, eq=False)
class IntegralEQ(Kernel):
    """Box-average EQ kernel (S18 §4 "integral" binning); inputs are rows [lower, upper]."""

    lengthscale: float | np.ndarray = 1.0
    variance: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "lengthscale", _positive_vector("lengthscale", self.lengthscale))
        object.__setattr__(self, "variance", _positive("variance", self.variance))

    def _split(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if X.shape[1] % 2:
            raise ValueError(f"IntegralEQ inputs are [lower, upper] rows with an even number of "
                             f"columns, got {X.shape[1]}")
        D = X.shape[1] // 2
        lo, hi = X[:, :D], X[:, D:]
        if np.any(hi < lo):
            raise ValueError("IntegralEQ inputs need lower <= upper in every dimension")
        return lo, hi

    def _ls(self, D: int) -> np.ndarray:
        ls = np.asarray(self.lengthscale, dtype=float)
        if ls.ndim == 0:
            return np.full(D, float(ls))
        if ls.shape[0] != D:
            raise ValueError(f"lengthscale has {ls.shape[0]} entries but boxes have D = {D}")
        return ls

    def _K(self, X: np.ndarray, Y: np.ndarray | None) -> np.ndarray:
        lo1, hi1 = self._split(X)
        lo2, hi2 = (lo1, hi1) if Y is None else self._split(Y)
        ls = self._ls(lo1.shape[1])
        K = np.full((lo1.shape[0], lo2.shape[0]), float(self.variance))
        for d in range(lo1.shape[1]):
            K *= _avg_1d(lo1[:, d, None], hi1[:, d, None], lo2[None, :, d], hi2[None, :, d],
                         float(ls[d]))
        if Y is None:
            K = 0.5 * (K + K.T)
        return K

    def _diag(self, X: np.ndarray) -> np.ndarray:
        lo, hi = self._split(X)
        ls = self._ls(lo.shape[1])
        out = np.full(lo.shape[0], float(self.variance))
        for d in range(lo.shape[1]):
            out *= _avg_1d(lo[:, d], hi[:, d], lo[:, d], hi[:, d], float(ls[d]))
        return out


def _sample_boxes(dim: int):  # noqa: ANN202
    def sample(rng: np.random.Generator, n: int) -> np.ndarray:
        lo = rng.uniform(-3.0, 3.0, size=(n, dim))
        width = rng.uniform(0.0, 2.0, size=(n, dim)) * (rng.random((n, dim)) < 0.8)
        return np.hstack([lo, lo + width])

    return sample


register_kernel_example(IntegralEQ(lengthscale=0.8, variance=1.2), input_dim=2,
                        sample_inputs=_sample_boxes(1), name="IntegralEQ")
register_kernel_example(IntegralEQ(lengthscale=[0.5, 1.5], variance=1.0), input_dim=4,
                        sample_inputs=_sample_boxes(2), name="IntegralEQ-ARD")
