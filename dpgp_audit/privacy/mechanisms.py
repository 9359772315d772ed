"""Pure noise and sampling functions of the primitive mechanisms (catalogue P.1, P.2, P.4).

Every function that draws randomness takes an explicit ``rng``
(``numpy.random.Generator``); nothing here keeps state or seeds anything.

* Gaussian mechanism (P.1): :func:`gaussian_noise`.
* Laplace mechanism (P.2): :func:`laplace_scale` (b = Δ₁/ε) and :func:`laplace_noise`.
* Exponential mechanism (P.2, S21 eq. 12): :func:`exponential_probabilities` gives the
  exact selection probabilities P(j) ∝ exp(ε u_j / (2 Δu)) computed with a
  log-sum-exp shift, and :func:`exponential_mechanism` draws ``n`` selections at
  once by inverse-CDF sampling on those stable probabilities.
* Multivariate Gaussian mechanism (P.4): :func:`multivariate_gaussian_noise` draws
  N(0, M) from a factor ``F`` with ``F Fᵀ = M`` (see
  :func:`dpgp_audit.privacy.multivariate.covariance_factor`, which handles a
  singular M).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from dpgp_audit._validation import (
    as_finite_array,
    check_epsilon,
    check_positive_float,
    check_positive_int,
    check_rng,
)
from dpgp_audit.privacy.float_release import MEMO_MAX_VALUES, memo_by_value

__all__ = [
    "exponential_log_probabilities",
    "exponential_mechanism",
    "exponential_probabilities",
    "gaussian_noise",
    "laplace_noise",
    "laplace_scale",
    "multivariate_gaussian_noise",
]


def _shape(shape: int | tuple[int, ...]) -> tuple[int, ...]:
    shape = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, int | np.integer) or s < 0:
            raise ValueError(f"shape must hold non-negative integers, got {shape!r}")
    return tuple(int(s) for s in shape)


def gaussian_noise(sigma: float, shape: int | tuple[int, ...],
                   rng: np.random.Generator) -> np.ndarray:
    """Independent N(0, σ²) noise of the given shape (Gaussian mechanism, P.1).

    Parameters
    ----------
    sigma
        Standard deviation σ > 0, e.g. ``calibrate_gaussian(...).sigma``.
    shape
        Output shape.
    rng
        Source of randomness.
    """
    sigma = check_positive_float("sigma", sigma)
    rng = check_rng(rng)
    return sigma * rng.standard_normal(_shape(shape))


def laplace_scale(epsilon: float, l1_sensitivity: float) -> float:
    """Scale b = Δ₁/ε of the Laplace mechanism, which is then ε-DP (Dwork & Roth, Thm 3.6).

    The privacy loss of Lap(b) noise on a query whose L1 change is s is exactly s/b,
    so the mechanism is ε-DP for every query with L1 sensitivity at most Δ₁.
    """
    epsilon = check_epsilon(epsilon)
    l1_sensitivity = check_positive_float("l1_sensitivity", l1_sensitivity)
    return l1_sensitivity / epsilon


def laplace_noise(scale: float, shape: int | tuple[int, ...],
                  rng: np.random.Generator) -> np.ndarray:
    """Independent Laplace(0, b) noise, density exp(−|z|/b) / (2b) (P.2)."""
    scale = check_positive_float("scale", scale)
    rng = check_rng(rng)
    return rng.laplace(0.0, scale, _shape(shape))


def _exponential_inputs(utilities: np.ndarray, epsilon: float, sensitivity: float
                        ) -> tuple[np.ndarray, float, float]:
    """The exponential mechanism's inputs, checked: utilities (k ≥ 1,), ε, Δu."""
    u = as_finite_array("utilities", utilities, ndim=1)
    if u.size == 0:
        raise ValueError("utilities must hold at least one candidate")
    return u, check_epsilon(epsilon), check_positive_float("sensitivity", sensitivity)


def _exponential_logits(utilities: np.ndarray, epsilon: float, sensitivity: float) -> np.ndarray:
    u, epsilon, sensitivity = _exponential_inputs(utilities, epsilon, sensitivity)
    # Shift by the maximum before scaling: only differences matter, and they are
    # exact to the rounding of u even when |u| is 1e12.
    return (u - np.max(u)) * (epsilon / (2.0 * sensitivity))


def exponential_log_probabilities(utilities: np.ndarray, epsilon: float,
                                  sensitivity: float) -> np.ndarray:
    """Log-probabilities of the exponential mechanism, P(j) ∝ exp(ε u_j / (2 Δu)) (S21 eq. 12).

    Computed as ``logits − logsumexp(logits)``: finite for every candidate even
    when its probability underflows.
    """
    logits = _exponential_logits(utilities, epsilon, sensitivity)
    return logits - special.logsumexp(logits)


def exponential_probabilities(utilities: np.ndarray, epsilon: float,
                              sensitivity: float) -> np.ndarray:
    """Selection probabilities of the exponential mechanism (McSherry & Talwar 2007; S21 eq. 12).

    Parameters
    ----------
    utilities
        Utility u_j of each of the k candidates, shape (k,). Higher is better.
    epsilon
        Privacy parameter ε > 0; selecting with these probabilities is ε-DP.
    sensitivity
        Δu ≥ max_j |u_j(D) − u_j(D′)| over neighbours.

    Returns
    -------
    numpy.ndarray
        Probabilities, shape (k,), summing to 1 (log-sum-exp stable for utilities of
        any magnitude).
    """
    return np.exp(exponential_log_probabilities(utilities, epsilon, sensitivity))


def exponential_mechanism(utilities: np.ndarray, epsilon: float, sensitivity: float, n: int,
                          rng: np.random.Generator) -> np.ndarray:
    """Draw ``n`` independent selections of the exponential mechanism (S21 eq. 12).

    Inverse-CDF sampling on the stable probabilities of
    :func:`exponential_probabilities`: one uniform per draw and a binary search,
    O(n log k) time and O(n + k) memory. A candidate whose probability underflows
    to zero is never selected.

    Returns
    -------
    numpy.ndarray
        Selected candidate indices, shape (n,), dtype int64.
    """
    n = check_positive_int("n", n)
    rng = check_rng(rng)
    u_checked, eps, sens = _exponential_inputs(utilities, epsilon, sensitivity)
    key = ("exponential-cdf", u_checked.tobytes(), eps, sens)

    def build() -> np.ndarray:
        p = exponential_probabilities(u_checked, epsilon, sensitivity)
        cdf = np.cumsum(p)
        # Close the CDF at the last candidate with positive mass so that rounding in
        # the cumulative sum can neither leave a gap below 1 nor select a zero-mass tail.
        last = int(np.flatnonzero(p > 0)[-1])
        cdf[last:] = 1.0
        cdf.setflags(write=False)
        return cdf

    # the CDF is a pure function of the checked values: built once per (u, ε, Δu) (issue
    # 20 §2: a sampled audit calls this hundreds of times with the same utilities)
    cdf = memo_by_value(key, build) if u_checked.size <= MEMO_MAX_VALUES else build()
    u = rng.random(n)
    return np.searchsorted(cdf, u, side="right").astype(np.int64, copy=False)


def multivariate_gaussian_noise(M_factor: np.ndarray, shape: int | tuple[int, ...],
                                rng: np.random.Generator) -> np.ndarray:
    """N(0, M) noise from a factor F with F Fᵀ = M (P.4; S18 eq. 7 with Z ~ N(0, M)).

    Parameters
    ----------
    M_factor
        F of shape (d, r), for example from
        :func:`dpgp_audit.privacy.multivariate.covariance_factor`; r < d for a
        singular M (the noise then lives in the range of M).
    shape
        Leading shape of the draws.
    rng
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        Shape ``(*shape, d)``.
    """
    F = as_finite_array("M_factor", M_factor, ndim=2)
    rng = check_rng(rng)
    z = rng.standard_normal((*_shape(shape), F.shape[1]))
    return z @ F.T
