"""Scores for the sample-based auditors, and fitting them on the fitting split (catalogue A.3).

Scores (large values = evidence for D′)
---------------------------------------
``"lr-gaussian"``
    ``wᵀx`` with ``w = Σ⁺(m′ − m)`` from the mechanism's own
    :class:`~dpgp_audit.contract.GaussianRelease` (the exact likelihood ratio
    when means and covariance are right — Neyman–Pearson optimal). A mean
    difference outside the range of Σ uses the offending direction instead
    (a perfect distinguisher). With Σ(D) ≠ Σ(D′) (same range) the exact
    quadratic log-likelihood ratio is used.
``"lda"``
    Fisher's discriminant with a Ledoit–Wolf shrunk pooled covariance, fitted on
    the fitting split (hand-written: a dozen lines of numpy, no sklearn needed).
``"categorical"``
    Plug-in log-ratio ``log((c′(o) + ½)/(c(o) + ½))`` per distinct output ``o``
    on the fitting split: thresholding it approximates the optimal event for
    discrete outputs (exponential mechanism, randomized response).
``"identity"``
    The scalar output itself (both tails are tried).
``"auto"``
    ``lr-gaussian`` if the mechanism is a GaussianRelease (and the two laws
    share a range); else ``categorical`` for integer/boolean or few-valued
    outputs; ``identity`` for scalars; ``lda`` otherwise.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit.audit.sampling import ChunkedSampler, child_rngs
from dpgp_audit.contract import GaussianRelease, Mechanism
from dpgp_audit.dataset import Dataset

__all__ = [
    "CategoricalScore",
    "FittedScore",
    "IdentityScore",
    "LinearScore",
    "QuadraticScore",
    "SCORES",
    "fit_categorical",
    "fit_lda",
    "fit_score",
    "fixed_score",
    "ledoit_wolf",
    "looks_discrete",
]


SCORES = ("auto", "lr-gaussian", "lda", "categorical", "identity")


@dataclass(frozen=True, eq=False)
class LinearScore:
    """s(x) = wᵀ vec(x) (``name`` records how w was obtained)."""

    w: np.ndarray
    name: str

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Score each row of ``X``."""
        return np.asarray(X, dtype=float).reshape(X.shape[0], -1) @ self.w


@dataclass(frozen=True, eq=False)
class IdentityScore:
    """s(x) = x for scalar outputs."""

    name: str = "identity"

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Score each row of ``X``."""
        X = np.asarray(X, dtype=float).reshape(X.shape[0], -1)
        if X.shape[1] != 1:
            raise ValueError(f"score 'identity' needs scalar outputs, got {X.shape[1]} values")
        return X[:, 0]


def _row_keys(X: np.ndarray) -> np.ndarray:
    """One sortable key per output row (the row's bytes)."""
    X = np.ascontiguousarray(np.asarray(X).reshape(X.shape[0], -1))
    if X.shape[1] == 1:
        return X[:, 0]
    return X.view(np.dtype((np.void, X.dtype.itemsize * X.shape[1])))[:, 0]


@dataclass(frozen=True, eq=False)
class CategoricalScore:
    """Plug-in log-likelihood ratio of discrete outputs (0 for outcomes unseen when fitting)."""

    keys: np.ndarray
    values: np.ndarray
    name: str = "categorical"

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Score each row of ``X``."""
        k = _row_keys(X).astype(self.keys.dtype, copy=False)
        pos = np.searchsorted(self.keys, k)
        pos = np.minimum(pos, self.keys.size - 1)
        hit = self.keys[pos] == k
        return np.where(hit, self.values[pos], 0.0)


def fit_categorical(X0: np.ndarray, X1: np.ndarray) -> CategoricalScore:
    """Smoothed empirical ``log((c1(o) + ½)/(c0(o) + ½)) − log(n1/n0)`` per outcome."""
    k0, k1 = _row_keys(X0), _row_keys(X1)
    keys, inv = np.unique(np.concatenate([k0, k1]), return_inverse=True)
    c0 = np.bincount(inv[: k0.size], minlength=keys.size)
    c1 = np.bincount(inv[k0.size:], minlength=keys.size)
    vals = np.log((c1 + 0.5) / (c0 + 0.5)) - math.log(k1.size / k0.size)
    return CategoricalScore(keys=keys, values=vals)


def ledoit_wolf(X: np.ndarray) -> tuple[np.ndarray, float]:
    """Ledoit–Wolf shrunk covariance of centred rows ``X`` (Ledoit & Wolf 2004, Lemma 3.2).

    Returns ``(Σ̂, shrinkage)`` with ``Σ̂ = s·m I + (1 − s) S``, ``m = tr(S)/p``; the
    same estimator as ``sklearn.covariance.ledoit_wolf(X, assume_centered=True)``.
    """
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    S = X.T @ X / n
    m = np.trace(S) / p
    d2 = (np.sum(S * S) - 2 * m * np.trace(S) + m * m * p) / p
    if d2 <= 0:
        return S, 0.0
    sq = np.sum(X * X, axis=1)
    b2_bar = (np.sum(sq * sq) / n - np.sum(S * S)) / (n * p)
    s = min(max(b2_bar, 0.0), d2) / d2
    return s * m * np.eye(p) + (1 - s) * S, float(s)


def fit_lda(X0: np.ndarray, X1: np.ndarray) -> LinearScore:
    """Fisher LDA direction ``Σ̂⁻¹(x̄1 − x̄0)`` with a pooled Ledoit–Wolf covariance."""
    X0 = np.asarray(X0, dtype=float).reshape(X0.shape[0], -1)
    X1 = np.asarray(X1, dtype=float).reshape(X1.shape[0], -1)
    m0, m1 = X0.mean(axis=0), X1.mean(axis=0)
    cov, _ = ledoit_wolf(np.vstack([X0 - m0, X1 - m1]))
    diff = m1 - m0
    if np.all(diff == 0):
        return LinearScore(np.zeros_like(diff), "lda")
    try:
        w = np.linalg.solve(cov, diff)
    except np.linalg.LinAlgError:
        w = np.linalg.lstsq(cov, diff, rcond=None)[0]
    return LinearScore(w, "lda")


@dataclass(frozen=True, eq=False)
class QuadraticScore:
    """Exact Gaussian log-likelihood ratio for unequal covariances (common range).

    ``s(x) = ½‖W0 (x − m0)‖² − ½‖W1 (x − m1)‖²`` with ``W_i = L_i⁻¹ Uᵀ`` for the
    Cholesky factors L_i of Σ_i restricted to the common range U (the constant
    log-determinant term does not change which events are thresholded).
    """

    m0: np.ndarray
    m1: np.ndarray
    W0: np.ndarray
    W1: np.ndarray
    name: str = "lr-gaussian (quadratic, unequal covariances)"

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Score each row of ``X``."""
        X = np.asarray(X, dtype=float).reshape(X.shape[0], -1)
        a = (X - self.m0) @ self.W0.T
        b = (X - self.m1) @ self.W1.T
        return 0.5 * (np.sum(a * a, axis=1) - np.sum(b * b, axis=1))


def _lr_gaussian(mechanism: GaussianRelease, d0: Dataset,
                 d1: Dataset) -> LinearScore | QuadraticScore | None:
    """Exact LR score from the mechanism's white-box interface (None if it cannot be built)."""
    from dpgp_audit.audit.whitebox import factor_covariance, gaussian_profile

    c0 = np.asarray(mechanism.cov(d0), dtype=float)
    c1 = np.asarray(mechanism.cov(d1), dtype=float)
    m0 = np.ravel(np.asarray(mechanism.mean(d0), dtype=float))
    m1 = np.ravel(np.asarray(mechanism.mean(d1), dtype=float))
    f = factor_covariance(c0)
    prof = gaussian_profile(m0, m1, f)
    if prof.infinite:
        return LinearScore(np.asarray(prof.direction), "lr-gaussian (out-of-range direction)")
    if c0.shape != c1.shape or not np.array_equal(c0, c1):
        f1 = factor_covariance(c1)
        if not f.same_range(f1):
            return None  # mutually singular parts: left to the learned scores
        U = f.eigvecs
        L0 = np.linalg.cholesky(U.T @ f.cov @ U)
        L1 = np.linalg.cholesky(U.T @ f1.cov @ U)
        W0 = np.linalg.solve(L0, U.T)
        W1 = np.linalg.solve(L1, U.T)
        return QuadraticScore(m0, m1, W0, W1)
    w = f.eigvecs @ (f.whiten(m1 - m0) / np.sqrt(f.eigvals))
    if not np.any(w):
        return None
    return LinearScore(w, "lr-gaussian")


@dataclass
class FittedScore:
    """The fitting phase: score plus sorted fitting-split scores of both sides."""

    score: Callable[[np.ndarray], np.ndarray]
    score_name: str
    s0: np.ndarray
    s1: np.ndarray
    n_fit: int
    seconds_fit: float
    dim: int = 1
    extra: dict = field(default_factory=dict)


def looks_discrete(X: np.ndarray) -> bool:
    """True for integer/boolean outputs or outputs with few distinct rows."""
    if X.dtype.kind in "biu":
        return True
    rows = X.reshape(X.shape[0], -1)
    n_unique = np.unique(_row_keys(rows)).size
    return n_unique <= min(1000, max(2, rows.shape[0] // 20))


def fixed_score(mechanism: Mechanism, d0: Dataset, d1: Dataset,
                 score: str) -> LinearScore | QuadraticScore | IdentityScore | None:
    """The score when it needs no fitting (exact LR from the white-box interface)."""
    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}, got {score!r}")
    fixed = None
    if score in ("auto", "lr-gaussian"):
        fixed = (_lr_gaussian(mechanism, d0, d1) if isinstance(mechanism, GaussianRelease)
                 else None)
        if fixed is None and score == "lr-gaussian":
            raise ValueError("score 'lr-gaussian' needs a GaussianRelease whose two laws "
                             "differ and share the range of their covariances")
    return fixed


def fit_score(sampler: ChunkedSampler, rng: np.random.Generator, n_fit: int, score: str,
               max_fit_rows: int, fixed: Callable | None) -> FittedScore:
    """Fit the score on the fitting split; return it with both sides' sorted fitting scores."""
    t = time.perf_counter()
    mech, d0 = sampler.mechanism, sampler.d0
    rng_raw, rng_rest = child_rngs(rng, 2)
    if fixed is not None:
        s0, s1 = sampler.scores(rng_rest, n_fit, fixed)
        return FittedScore(fixed, fixed.name, np.sort(s0), np.sort(s1), n_fit,
                       time.perf_counter() - t, dim=int(np.size(mech.mean(d0))))
    n_raw = min(n_fit, max_fit_rows)
    X0, X1 = sampler.raw(rng_raw, n_raw)
    for X in (X0, X1):
        if X.dtype.kind == "f" and not np.all(np.isfinite(X)):
            raise ValueError("mechanism.sample returned non-finite outputs (NaN or inf): "
                             "the audit refuses to count them")
    name = score
    if score == "auto":
        if looks_discrete(X0) and looks_discrete(X1):
            name = "categorical"
        elif X0.reshape(X0.shape[0], -1).shape[1] == 1:
            name = "identity"
        else:
            name = "lda"
    fn: Callable[[np.ndarray], np.ndarray]
    if name == "categorical":
        fn = fit_categorical(X0, X1)
    elif name == "identity":
        fn = IdentityScore()
    else:
        fn = fit_lda(X0, X1)
    s0, s1 = fn(X0), fn(X1)
    if n_fit > n_raw:  # remaining fitting rows are only scored (memory stays bounded)
        r0, r1 = sampler.scores(rng_rest, n_fit - n_raw, fn)
        s0, s1 = np.concatenate([s0, r0]), np.concatenate([s1, r1])
    return FittedScore(fn, name, np.sort(s0), np.sort(s1), n_fit, time.perf_counter() - t,
                   dim=int(np.prod(X0.shape[1:], dtype=int)))
