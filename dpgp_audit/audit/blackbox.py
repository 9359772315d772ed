"""Black-box auditors: certified ε and μ lower bounds from samples (catalogue A.3).

Both auditors only call ``mechanism.sample(data, n, rng)``, so they test the
*implementation* (its noise path, seeds, dtype) rather than its maths.

:func:`audit_blackbox`
    A model-free lower bound on ε at the claimed δ, valid with confidence
    1 − α (AUDITING.md §5.2). Samples are split: a *fitting* share chooses the
    score and, for each of the four tests (upper/lower tail × the two orders
    (D, D′) and (D′, D)), the threshold that maximises the bound predicted for
    the certification size; the ``tests`` best of them (default 2) are counted
    once on fresh *certification* samples, and their Clopper–Pearson bounds are
    Bonferroni-corrected over the tests certified. Because nothing on the
    certification samples is chosen by looking at them, the stated confidence
    holds exactly (no selection bias, pitfall §3.1) — choosing which tests to
    certify on the fitting split costs no α.

    Threshold choice improves on AUDITING.md §5.2 in two ways (both on the
    fitting split only, so validity is untouched): the plug-in rates are shaded
    to a one-sided 20 % Clopper–Pearson bound, and the GDP fit averages the
    predicted curve over neighbouring thresholds. Maximising raw plug-in
    predictions over ~240 thresholds picks lucky tail thresholds (a winner's
    curse: predicted ε 1.5, certified 0.3 in our trials at 3.8 M samples).
:func:`audit_gdp_fit`
    A lower bound on μ from the error rates of one test (Nasr et al. 2023;
    Dong, Roth & Su 2022): model-free as a statement about μ-GDP, and turned
    into an (ε, δ) statement only under the assumption that the mechanism's
    trade-off curve is Gaussian (labelled ``Guarantee.LOWER_BOUND_GDP``).

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

Scale: chunks and executors
---------------------------
Sampling is done in chunks of ``chunk_size`` rows. Each chunk gets its own
child generator spawned from ``rng`` (``Generator.spawn``, i.e. a
``SeedSequence`` spawn), so results depend only on ``rng``, ``n`` and
``chunk_size`` — never on where the chunks run. Pass any object with the
``concurrent.futures.Executor`` interface (``submit(fn, *args)`` returning a
future with ``result()``) as ``executor`` to spread the chunks; certification
chunks are sampled *and counted* on the worker, so only a few integers travel
back. In-process by default.

Running an audit on a Dask cluster (``pip install "dask[distributed]"``;
dask's ``Client`` has the ``submit``/``result`` interface, so nothing else is
needed)::

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")     # or Client() for a local cluster
    result = audit_blackbox(mech, d0, d1, n=5_000_000,
                            rng=np.random.default_rng(seed), executor=client,
                            chunk_size=200_000)

The mechanism and datasets are pickled to the workers (they are frozen
dataclasses), every worker needs ``dpgp_audit`` importable, and the result is
bit-identical to the in-process run with the same seed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.audit.result import AuditResult, Guarantee, Verdict
from dpgp_audit.audit.stats import (
    cp_lower,
    cp_upper,
    epsilon_ceiling,
    epsilon_lower_bound,
    mu_ceiling,
    mu_lower_bound,
)
from dpgp_audit.contract import GaussianRelease
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy import gdp
from dpgp_audit.privacy.claims import ZCDP, ApproxDP, GaussianDP

__all__ = [
    "CategoricalScore",
    "IdentityScore",
    "LinearScore",
    "QuadraticScore",
    "audit_blackbox",
    "audit_gdp_fit",
    "fit_categorical",
    "fit_lda",
    "ledoit_wolf",
]

_DEFAULT_DELTA = 1e-5
_FIT_CHUNK = 50_000  # rows per chunk while fitting (the output size is not known yet)
_FIT_LEVEL = 0.2  # one-sided level of the pessimistic rates used to choose thresholds
_SMOOTH = 9  # width of the running mean applied to predicted bounds before the argmax
_FIT_FRACTION_FIXED = 0.25  # default fitting share when the score is known (lr-gaussian)
_SCORES = ("auto", "lr-gaussian", "lda", "categorical", "identity")
NO_PROOF_NOTE = ("No violation found is not a proof of privacy: only the tests listed were run, "
                 "and the epsilon ceiling at this n bounds what they could show.")


# --------------------------------------------------------------------------- scores
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


# --------------------------------------------------------------------------- sampling
def _child_rngs(rng: np.random.Generator, k: int) -> list[np.random.Generator]:
    """Spawn ``k`` independent child generators (SeedSequence spawn)."""
    try:
        return rng.spawn(k)
    except (TypeError, ValueError, AttributeError):  # bit generator without a seed sequence
        seed = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
        return [np.random.default_rng(s) for s in seed.spawn(k)]


def _sizes(n: int, chunk: int) -> list[int]:
    return [chunk] * (n // chunk) + ([n % chunk] if n % chunk else [])


def _sample_raw(mechanism: object, data: Dataset, size: int, rng: np.random.Generator,
                index: int) -> np.ndarray:
    del index  # makes task keys unique on schedulers that hash arguments (dask)
    out = np.asarray(mechanism.sample(data, size, rng))  # type: ignore[attr-defined]
    if out.shape[0] != size:
        raise ValueError(f"mechanism.sample returned {out.shape[0]} rows, expected {size}")
    return out


def _sample_scores(mechanism: object, data: Dataset, size: int, rng: np.random.Generator,
                   index: int, score: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    s = np.asarray(score(_sample_raw(mechanism, data, size, rng, index)), dtype=float)
    if not np.all(np.isfinite(s)):
        raise ValueError("mechanism.sample returned non-finite outputs (NaN or inf): "
                         "the audit refuses to count them")
    return s


def _sample_counts(mechanism: object, data: Dataset, size: int, rng: np.random.Generator,
                   index: int, score: Callable[[np.ndarray], np.ndarray],
                   thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts #{s > t} and #{s < t} for every threshold, on a fresh chunk."""
    s = np.sort(_sample_scores(mechanism, data, size, rng, index, score))
    above = s.size - np.searchsorted(s, thresholds, side="right")
    below = np.searchsorted(s, thresholds, side="left")
    return above.astype(np.int64), below.astype(np.int64)


def _run(executor: object | None, fn: Callable, jobs: Sequence[tuple]) -> list:
    if executor is None:
        return [fn(*args) for args in jobs]
    if not hasattr(executor, "submit"):
        raise TypeError("executor must have a concurrent.futures-style submit(fn, *args)")
    futures = [executor.submit(fn, *args) for args in jobs]  # type: ignore[attr-defined]
    return [f.result() for f in futures]


@dataclass
class _Sampler:
    """Chunked sampling of one phase for both datasets, reproducible from one generator."""

    mechanism: object
    d0: Dataset
    d1: Dataset
    chunk: int
    executor: object | None
    seconds: float = 0.0
    chunks: int = 0

    def jobs(self, rng: np.random.Generator, n: int) -> list[tuple]:
        sizes = _sizes(n, self.chunk)
        rngs = _child_rngs(rng, 2 * len(sizes))
        out = []
        for side, data in enumerate((self.d0, self.d1)):
            for i, size in enumerate(sizes):
                out.append((side, (self.mechanism, data, size, rngs[side * len(sizes) + i],
                                   side * len(sizes) + i)))
        return out

    def raw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        t = time.perf_counter()
        jobs = self.jobs(rng, n)
        res = _run(self.executor, _sample_raw, [a for _, a in jobs])
        self.seconds += time.perf_counter() - t
        self.chunks += len(jobs)
        return tuple(np.concatenate([r for (s, _), r in zip(jobs, res, strict=True) if s == side])
                     for side in (0, 1))  # type: ignore[return-value]

    def scores(self, rng: np.random.Generator, n: int,
               score: Callable) -> tuple[np.ndarray, np.ndarray]:
        t = time.perf_counter()
        jobs = self.jobs(rng, n)
        res = _run(self.executor, _sample_scores, [(*a, score) for _, a in jobs])
        self.seconds += time.perf_counter() - t
        self.chunks += len(jobs)
        return tuple(np.concatenate([r for (s, _), r in zip(jobs, res, strict=True) if s == side])
                     for side in (0, 1))  # type: ignore[return-value]

    def counts(self, rng: np.random.Generator, n: int, score: Callable,
               thresholds: np.ndarray) -> dict[str, np.ndarray]:
        t = time.perf_counter()
        jobs = self.jobs(rng, n)
        res = _run(self.executor, _sample_counts, [(*a, score, thresholds) for _, a in jobs])
        self.seconds += time.perf_counter() - t
        self.chunks += len(jobs)
        out = {}
        for side in (0, 1):
            out[f"above{side}"] = sum(r[0] for (s, _), r in zip(jobs, res, strict=True)
                                      if s == side)
            out[f"below{side}"] = sum(r[1] for (s, _), r in zip(jobs, res, strict=True)
                                      if s == side)
        return out


@dataclass
class _Fitted:
    """The fitting phase: score plus sorted fitting-split scores of both sides."""

    score: Callable[[np.ndarray], np.ndarray]
    score_name: str
    s0: np.ndarray
    s1: np.ndarray
    n_fit: int
    seconds_fit: float
    dim: int = 1
    extra: dict = field(default_factory=dict)


def _looks_discrete(X: np.ndarray) -> bool:
    if X.dtype.kind in "biu":
        return True
    rows = X.reshape(X.shape[0], -1)
    n_unique = np.unique(_row_keys(rows)).size
    return n_unique <= min(1000, max(2, rows.shape[0] // 20))


def _fixed_score(mechanism: object, d0: Dataset, d1: Dataset,
                 score: str) -> LinearScore | QuadraticScore | IdentityScore | None:
    """The score when it needs no fitting (exact LR from the white-box interface)."""
    if score not in _SCORES:
        raise ValueError(f"score must be one of {_SCORES}, got {score!r}")
    fixed = None
    if score in ("auto", "lr-gaussian"):
        fixed = (_lr_gaussian(mechanism, d0, d1) if isinstance(mechanism, GaussianRelease)
                 else None)
        if fixed is None and score == "lr-gaussian":
            raise ValueError("score 'lr-gaussian' needs a GaussianRelease whose two laws "
                             "differ and share the range of their covariances")
    return fixed


def _learn_score(X0: np.ndarray, X1: np.ndarray,
                 score: str) -> tuple[Callable[[np.ndarray], np.ndarray], str]:
    """Fit a learned score on raw outputs; ``"auto"`` picks categorical / identity / lda."""
    name = score
    if score == "auto":
        if _looks_discrete(X0) and _looks_discrete(X1):
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
    return fn, name


def _fit_phase(sampler: _Sampler, rng: np.random.Generator, n_fit: int, score: str,
               max_fit_rows: int, fixed: Callable | None) -> _Fitted:
    t = time.perf_counter()
    mech, d0 = sampler.mechanism, sampler.d0
    rng_raw, rng_rest = _child_rngs(rng, 2)
    if fixed is not None:
        s0, s1 = sampler.scores(rng_rest, n_fit, fixed)
        return _Fitted(fixed, fixed.name, np.sort(s0), np.sort(s1), n_fit,
                       time.perf_counter() - t, dim=int(np.size(mech.mean(d0))))
    n_raw = min(n_fit, max_fit_rows)
    X0, X1 = sampler.raw(rng_raw, n_raw)
    for X in (X0, X1):
        if X.dtype.kind == "f" and not np.all(np.isfinite(X)):
            raise ValueError("mechanism.sample returned non-finite outputs (NaN or inf): "
                             "the audit refuses to count them")
    fn, name = _learn_score(X0, X1, score)
    s0, s1 = fn(X0), fn(X1)
    if n_fit > n_raw:  # remaining fitting rows are only scored (memory stays bounded)
        r0, r1 = sampler.scores(rng_rest, n_fit - n_raw, fn)
        s0, s1 = np.concatenate([s0, r0]), np.concatenate([s1, r1])
    return _Fitted(fn, name, np.sort(s0), np.sort(s1), n_fit, time.perf_counter() - t,
                   dim=int(np.prod(X0.shape[1:], dtype=int)))


# --------------------------------------------------------------------------- thresholds
def _threshold_grid(s0: np.ndarray, s1: np.ndarray, c_min: float, size: int = 120) -> np.ndarray:
    """Candidate thresholds: pooled-score quantiles at tail masses from c_min to ½, both tails."""
    pooled = np.concatenate([s0, s1])
    uniq = np.unique(pooled)
    if uniq.size <= 2 * size:
        # discrete scores: every gap between distinct values, plus the ends
        mids = (uniq[:-1] + uniq[1:]) / 2 if uniq.size > 1 else uniq
        return np.unique(np.concatenate([[uniq[0] - 1.0], mids, [uniq[-1] + 1.0]]))
    masses = np.geomspace(max(c_min, 1.0 / pooled.size), 0.5, size)
    q = np.concatenate([masses, 1.0 - masses])
    return np.unique(np.quantile(pooled, q, method="inverted_cdf"))


def _smooth(values: np.ndarray, width: int) -> np.ndarray:
    """Running mean over ``width`` neighbouring grid points (edges use what exists).

    The predicted bound on the fitting split is noisy from threshold to threshold;
    maximising the raw curve picks noise, maximising a locally averaged one picks
    a region that is good on average.
    """
    if width <= 1 or values.size < 3:
        return values
    kernel = np.ones(width)
    num = np.convolve(values, kernel, mode="same")
    den = np.convolve(np.ones_like(values), kernel, mode="same")
    return num / den


def _tail_counts(s: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    above = s.size - np.searchsorted(s, t, side="right")
    below = np.searchsorted(s, t, side="left")
    return above, below


@dataclass(frozen=True)
class _Test:
    tail: str  # "upper": S = {s > t};  "lower": S = {s < t}
    direction: str  # "D'>D": bound P_{D'}(S) <= e^eps P_D(S) + delta;  "D>D'": reversed
    threshold: float
    predicted: float
    separation: float = 0.0  # raw fitting-split rate difference, the tie-break


def _rates(counts: dict[str, np.ndarray], tail: str) -> tuple[np.ndarray, np.ndarray]:
    key = "above" if tail == "upper" else "below"
    return counts[f"{key}0"], counts[f"{key}1"]


def _choose_blackbox_tests(fit: _Fitted, n_cert: int, delta: float, alpha: float, tests: int,
                           c_min: float) -> tuple[list[_Test], np.ndarray]:
    grid = _threshold_grid(fit.s0, fit.s1, c_min)
    a0, b0 = _tail_counts(fit.s0, grid)
    a1, b1 = _tail_counts(fit.s1, grid)
    nf = fit.s0.size
    candidates = []
    for tail, (k0, k1) in (("upper", (a0, a1)), ("lower", (b0, b1))):
        for direction, (kn, kd) in (("D'>D", (k1, k0)), ("D>D'", (k0, k1))):
            # Pessimistic plug-in rates: a one-sided CP bound at level _FIT_LEVEL on the
            # fitting split. Taking the max over many thresholds of raw plug-in rates picks
            # lucky tail thresholds (winner's curse); shading each rate by its own
            # uncertainty favours thresholds whose advantage is real.
            num = np.asarray(cp_lower(kn, nf, _FIT_LEVEL))
            den = np.maximum(np.asarray(cp_upper(kd, nf, _FIT_LEVEL)), 0.5 / nf)
            pred = np.asarray(epsilon_lower_bound(num * n_cert, n_cert,
                                                  np.minimum(den * n_cert, n_cert), n_cert,
                                                  delta, alpha / tests))
            # Ties (e.g. every prediction 0 with a tiny fitting split) are broken by the
            # raw separation of the two rates: still chosen on the fitting split only.
            sep = (np.asarray(kn, dtype=float) - np.asarray(kd, dtype=float)) / nf
            ties = np.flatnonzero(pred >= pred.max() - 1e-12) if np.isfinite(pred.max()) \
                else np.flatnonzero(pred == pred.max())
            j = int(ties[np.argmax(sep[ties])])
            candidates.append(_Test(tail, direction, float(grid[j]), float(pred[j]),
                                    float(sep[j])))
    candidates.sort(key=lambda c: (-c.predicted, -c.separation))
    return candidates[:tests], grid


# --------------------------------------------------------------------------- claims
def _claim_epsilon_delta(claim: object, delta: float | None) -> tuple[float, float, str]:
    if isinstance(claim, ApproxDP):
        return claim.epsilon, claim.delta, ""
    d = _DEFAULT_DELTA if delta is None else float(delta)
    if isinstance(claim, GaussianDP):
        return gdp.gdp_epsilon(d, claim.mu), d, f"GDP claim converted to (eps, delta) at {d:g}"
    if isinstance(claim, ZCDP):
        a = claim.to_approx(d)
        return a.epsilon, d, f"zCDP claim converted to (eps, delta) at {d:g}"
    raise TypeError(f"unsupported claim type {type(claim).__name__}")


def _prepare(mechanism: object, d0: Dataset, d1: Dataset, n: int, rng: np.random.Generator,
             alpha: float, chunk_size: int | None, fit_fraction: float | None,
             executor: object | None, fixed: object | None) -> tuple[int, int, int, _Sampler]:
    n = check_positive_int("n", n)
    if fit_fraction is None:  # a fixed score only needs its threshold fitted
        fit_fraction = _FIT_FRACTION_FIXED if fixed is not None else 0.5
    rng = check_rng(rng)
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if not (0 < fit_fraction < 1):
        raise ValueError(f"fit_fraction must lie in (0, 1), got {fit_fraction!r}")
    if not hasattr(mechanism, "sample"):
        raise TypeError("mechanism must implement sample(data, n, rng)")
    n_fit = max(1, int(round(n * fit_fraction)))
    n_cert = n - n_fit
    if n_cert < 1:
        raise ValueError(f"n={n} is too small to split into fitting and certification samples")
    chunk = check_positive_int("chunk_size", _FIT_CHUNK if chunk_size is None else chunk_size)
    return n_fit, n_cert, chunk, _Sampler(mechanism, d0, d1, chunk, executor)


def _auto_chunk(sampler: _Sampler, chunk_size: int | None, dim: int) -> int:
    """Certification chunk: about 2**21 output values (16 MB) unless the user fixed it."""
    if chunk_size is None:
        sampler.chunk = int(min(200_000, max(10_000, 2**21 // max(dim, 1))))
    return sampler.chunk


def _tradeoff_points(counts: dict[str, np.ndarray], grid: np.ndarray, n: int, alpha: float,
                     max_points: int = 40) -> dict:
    """Empirical (FPR, FNR) of the upper-tail tests with two-sided CP boxes (for plots)."""
    k0, k1 = counts["above0"], counts["above1"]
    idx = np.unique(np.linspace(0, grid.size - 1, min(max_points, grid.size)).astype(int))
    fp, fn_ = k0[idx], n - k1[idx]
    a = alpha / 2
    return {"fpr": (fp / n).tolist(), "fnr": (fn_ / n).tolist(),
            "fpr_lo": np.atleast_1d(cp_lower(fp, n, a)).tolist(),
            "fpr_hi": np.atleast_1d(cp_upper(fp, n, a)).tolist(),
            "fnr_lo": np.atleast_1d(cp_lower(fn_, n, a)).tolist(),
            "fnr_hi": np.atleast_1d(cp_upper(fn_, n, a)).tolist(),
            "box_level": 1 - alpha, "n": n, "threshold": grid[idx].tolist(),
            "note": "display only: boxes are per point, not simultaneous"}


def _witness(d0: Dataset, d1: Dataset) -> dict:
    return {"d0": {"X": d0.X.tolist(), "y": d0.y.tolist()},
            "d1": {"X": d1.X.tolist(), "y": d1.y.tolist()}}


# --------------------------------------------------------------------------- auditors
def audit_blackbox(mechanism: object, d0: Dataset, d1: Dataset, *, n: int,
                   rng: np.random.Generator, alpha: float = 0.05, claim: object | None = None,
                   score: str = "auto", executor: object | None = None,
                   chunk_size: int | None = None, fit_fraction: float | None = None,
                   tests: int = 2, delta: float | None = None, c_min: float | None = None,
                   max_fit_rows: int = 200_000) -> AuditResult:
    """A.3: certified lower bound on ε at the claimed δ from samples of M(D) and M(D′).

    Parameters
    ----------
    mechanism
        Anything with ``sample(data, n, rng)`` (and ``claim`` unless given).
    d0, d1
        The neighbouring datasets D and D′.
    n
        Samples per side (fitting + certification).
    rng
        Generator; all chunk generators are spawned from it.
    alpha
        1 − confidence of the certified bound (spent over all certified tests).
    claim
        Defaults to ``mechanism.claim``; GDP / zCDP claims are compared at
        ``delta`` (default 1e-5) via their exact / standard (ε, δ) conversion.
    score
        ``"auto"``, ``"lr-gaussian"``, ``"lda"``, ``"categorical"``, ``"identity"``.
    executor
        Optional ``concurrent.futures``-style executor (or dask client).
    chunk_size
        Rows per sampling chunk (default: 50 000 while fitting, then about 2**21
        output values per chunk for certification, between 10 000 and 200 000
        rows). Results depend on it (it fixes which child generator draws what),
        never on the executor.
    fit_fraction
        Share of the ``n`` samples per side used to fit the score and thresholds
        (default 0.25 when the score is the exact ``lr-gaussian`` one, which only
        needs a threshold, else 0.5).
    tests
        How many of the four (tail × direction) tests, ranked by their predicted
        bound on the fitting split, are certified; α is split evenly over them
        (Bonferroni), α/2 of each test's share per proportion.
    delta
        δ for GDP / zCDP claims (ignored for (ε, δ) claims).
    c_min
        Smallest tail mass of the threshold grid (default ``5 / n_fit``).
    max_fit_rows
        Raw outputs kept per side for fitting an ``lda``/``categorical`` score.

    Returns
    -------
    AuditResult
        ``auditor="blackbox"``, guarantee ``LOWER_BOUND``; VIOLATION when the
        certified ε exceeds the claim, INCONCLUSIVE when even a perfect
        distinguisher could not exceed it at this n (the ε ceiling), NO_EVIDENCE
        otherwise. ``details`` records counts, thresholds, the ceiling, α per test,
        the trade-off points and timings.
    """
    t_start = time.perf_counter()
    claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
    eps_c, del_c, conversion = _claim_epsilon_delta(claim, delta)
    rng = check_rng(rng)
    fixed = _fixed_score(mechanism, d0, d1, score)
    n_fit, n_cert, chunk, sampler = _prepare(mechanism, d0, d1, n, rng, alpha, chunk_size,
                                             fit_fraction, executor, fixed)
    if tests not in (1, 2, 3, 4):
        raise ValueError(f"tests must be 1..4, got {tests!r}")
    rng_fit, rng_cert = _child_rngs(rng, 2)
    fit = _fit_phase(sampler, rng_fit, n_fit, score, max_fit_rows, fixed)
    chunk = _auto_chunk(sampler, chunk_size, fit.dim)
    c_min = min(0.5, 5.0 / n_fit) if c_min is None else float(c_min)
    chosen, grid = _choose_blackbox_tests(fit, n_cert, del_c, alpha, tests, c_min)
    thresholds = np.unique(np.concatenate([[c.threshold for c in chosen], grid]))
    t_cert = time.perf_counter()
    counts = sampler.counts(rng_cert, n_cert, fit.score, thresholds)
    seconds_cert = time.perf_counter() - t_cert
    a_test = alpha / len(chosen)
    rows = []
    best = 0.0
    for c in chosen:
        j = int(np.searchsorted(thresholds, c.threshold))
        k0, k1 = (int(x[j]) for x in _rates(counts, c.tail))
        num, den = (k1, k0) if c.direction == "D'>D" else (k0, k1)
        eps_lb = float(epsilon_lower_bound(num, n_cert, den, n_cert, del_c, a_test))
        with np.errstate(divide="ignore"):
            point = (math.log((num / n_cert - del_c) / (den / n_cert))
                     if num / n_cert > del_c and den > 0 else (math.inf if num > 0 else 0.0))
        rows.append({"tail": c.tail, "direction": c.direction, "threshold": c.threshold,
                     "k_numerator": num, "k_denominator": den, "n": n_cert,
                     "predicted_on_fit": c.predicted, "epsilon_lb": eps_lb,
                     "epsilon_point": point})
        best = max(best, eps_lb)
    ceiling = epsilon_ceiling(n_cert, a_test, del_c)
    if best > eps_c:
        verdict = Verdict.VIOLATION
    elif ceiling <= eps_c:
        verdict = Verdict.INCONCLUSIVE
    else:
        verdict = Verdict.NO_EVIDENCE
    details = {
        "score": fit.score_name, "n_per_side": n, "n_fit": n_fit, "n_cert": n_cert,
        "delta": del_c, "claimed_epsilon": eps_c, "claim": claim.as_dict(),  # type: ignore
        "claim_conversion": conversion, "tests": rows, "alpha_per_test": a_test,
        "alpha_spent": alpha, "epsilon_ceiling": ceiling, "c_min": c_min,
        "epsilon_point": max((r["epsilon_point"] for r in rows), default=0.0),
        "tradeoff": _tradeoff_points(counts, thresholds, n_cert, alpha),
        "witness": _witness(d0, d1), "chunks": sampler.chunks, "chunk_size": chunk,
        "executor": None if executor is None else type(executor).__name__,
        "seconds": {"fit": fit.seconds_fit, "certify": seconds_cert,
                    "sampling": sampler.seconds, "total": time.perf_counter() - t_start},
        "note": NO_PROOF_NOTE,
    }
    return AuditResult(auditor="blackbox", verdict=verdict, guarantee=Guarantee.LOWER_BOUND,
                       estimate=best, claimed=eps_c, quantity="epsilon", alpha=alpha,
                       details=details)


def _claim_mu(claim: object) -> tuple[float | None, str]:
    if isinstance(claim, GaussianDP):
        return claim.mu, "mu-GDP claim: the bound tests it without further assumptions"
    if isinstance(claim, ZCDP):
        return math.sqrt(2 * claim.rho), ("rho-zCDP claim compared as mu = sqrt(2 rho): valid "
                                          "if the mechanism's trade-off curve is Gaussian")
    if isinstance(claim, ApproxDP):
        if claim.delta == 0:
            return None, "pure DP claims have no Gaussian trade-off equivalent"
        return gdp.gdp_mu(claim.epsilon, claim.delta), (
            "(eps, delta) claim compared with the largest mu whose GDP implies it: a VIOLATION "
            "refutes the claim only if the mechanism's trade-off curve is Gaussian")
    raise TypeError(f"unsupported claim type {type(claim).__name__}")


def audit_gdp_fit(mechanism: object, d0: Dataset, d1: Dataset, *, n: int,
                  rng: np.random.Generator, alpha: float = 0.05, claim: object | None = None,
                  score: str = "auto", executor: object | None = None,
                  chunk_size: int | None = None, fit_fraction: float | None = None,
                  delta: float | None = None, max_fit_rows: int = 200_000,
                  threshold: str = "eer") -> AuditResult:
    """A.3 GDP fit: certified lower bound on μ from one test's (FPR, FNR).

    One threshold test is counted on fresh samples. Its threshold comes from
    the fitting split: ``threshold="eer"`` (default) takes the equal-error point
    FPR = FNR, which is where the Clopper–Pearson penalty of the GDP bound is
    smallest when the trade-off is symmetric (Gaussian, Laplace, randomized
    response: the planner's optimum is t = μ/2). It is a low-variance choice:
    the predicted bound is nearly flat in t, so maximising it on a few thousand
    fitting samples mostly picks noise (~1σ threshold spread and a 15-point
    power loss at the §4.2 sizes). ``"search"`` maximises the smoothed
    predicted bound instead (better for strongly asymmetric trade-offs). Then
    ``μ_lb = Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub)`` with one-sided Clopper–Pearson
    upper bounds at α/2 each (Nasr et al. 2023 §5; AUDITING.md §5.3.4). The
    bound is symmetric in the two orders (reversing the roles of D and D′
    and of the event gives the same μ bound), so one test covers both.

    Returns
    -------
    AuditResult
        ``auditor="gdp-fit"``, ``quantity="mu"``, guarantee ``LOWER_BOUND_GDP``.
        VIOLATION when ``μ_lb`` exceeds the claimed μ (for (ε, δ) claims: the
        largest μ implying it, which assumes a Gaussian trade-off — see
        ``details["assumption"]``); details include the implied ε at δ.
    """
    t_start = time.perf_counter()
    claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
    mu_c, assumption = _claim_mu(claim)
    d_report = (claim.delta if isinstance(claim, ApproxDP) and claim.delta > 0 else
                (_DEFAULT_DELTA if delta is None else float(delta)))
    rng = check_rng(rng)
    fixed = _fixed_score(mechanism, d0, d1, score)
    n_fit, n_cert, chunk, sampler = _prepare(mechanism, d0, d1, n, rng, alpha, chunk_size,
                                             fit_fraction, executor, fixed)
    rng_fit, rng_cert = _child_rngs(rng, 2)
    fit = _fit_phase(sampler, rng_fit, n_fit, score, max_fit_rows, fixed)
    chunk = _auto_chunk(sampler, chunk_size, fit.dim)
    if threshold not in ("eer", "search"):
        raise ValueError(f"threshold must be 'eer' or 'search', got {threshold!r}")
    grid = _threshold_grid(fit.s0, fit.s1, min(0.5, 5.0 / n_fit))
    if threshold == "eer":  # add a dense central grid for locating the equal-error point
        pooled = np.concatenate([fit.s0, fit.s1])
        grid = np.unique(np.concatenate(
            [grid, np.quantile(pooled, np.linspace(0.005, 0.995, 399), method="inverted_cdf")]))
    a0, b0 = _tail_counts(fit.s0, grid)
    a1, b1 = _tail_counts(fit.s1, grid)
    nf = fit.s0.size
    a = alpha / 2
    best = None
    for tail, fp_fit, tp_fit in (("upper", a0, a1), ("lower", b0, b1)):
        # pessimistic plug-in rates (see _choose_blackbox_tests: against the winner's curse)
        fpr = np.asarray(cp_upper(fp_fit, nf, _FIT_LEVEL))
        fnr = np.asarray(cp_upper(nf - tp_fit, nf, _FIT_LEVEL))
        pred = np.asarray(mu_lower_bound(cp_upper(fpr * n_cert, n_cert, a),
                                         cp_upper(fnr * n_cert, n_cert, a)))
        if threshold == "eer":
            gap = np.abs(fp_fit - (nf - tp_fit))
            ties = np.flatnonzero(gap == gap.min())
            j = int(ties[ties.size // 2])
        else:
            j = int(np.argmax(_smooth(pred, _SMOOTH)))
        if best is None or pred[j] > best[2]:
            best = (tail, float(grid[j]), float(pred[j]))
    assert best is not None
    tail, thr, pred = best
    thresholds = np.unique(np.concatenate([[thr], grid]))
    t_cert = time.perf_counter()
    counts = sampler.counts(rng_cert, n_cert, fit.score, thresholds)
    seconds_cert = time.perf_counter() - t_cert
    j = int(np.searchsorted(thresholds, thr))
    k0, k1 = (int(x[j]) for x in _rates(counts, tail))
    fp, fn_ = k0, n_cert - k1
    fpr_ub, fnr_ub = float(cp_upper(fp, n_cert, a)), float(cp_upper(fn_, n_cert, a))
    mu_lb = float(mu_lower_bound(fpr_ub, fnr_ub))
    mu_point = float(mu_lower_bound(fp / n_cert, fn_ / n_cert))
    ceiling = mu_ceiling(n_cert, alpha)
    if mu_c is None:
        verdict = Verdict.INCONCLUSIVE
        mu_c_out = math.nan
    else:
        mu_c_out = mu_c
        if mu_lb > mu_c:
            verdict = Verdict.VIOLATION
        elif ceiling <= mu_c:
            verdict = Verdict.INCONCLUSIVE
        else:
            verdict = Verdict.NO_EVIDENCE
    implied = gdp.gdp_epsilon(d_report, mu_lb) if mu_lb > 0 else 0.0
    details = {
        "score": fit.score_name, "n_per_side": n, "n_fit": n_fit, "n_cert": n_cert,
        "tail": tail, "threshold": thr, "threshold_rule": threshold,
        "false_positives": fp, "false_negatives": fn_,
        "fpr_ub": fpr_ub, "fnr_ub": fnr_ub, "mu_point": mu_point, "predicted_on_fit": pred,
        "mu_ceiling": ceiling, "alpha_per_rate": a, "alpha_spent": alpha,
        "claim": claim.as_dict(), "assumption": assumption,  # type: ignore[attr-defined]
        "implied_epsilon": implied, "implied_epsilon_delta": d_report,
        "implied_epsilon_note": "valid only if the mechanism's trade-off curve is Gaussian",
        "tradeoff": _tradeoff_points(counts, thresholds, n_cert, alpha),
        "witness": _witness(d0, d1), "chunks": sampler.chunks, "chunk_size": chunk,
        "seconds": {"fit": fit.seconds_fit, "certify": seconds_cert,
                    "sampling": sampler.seconds, "total": time.perf_counter() - t_start},
        "note": NO_PROOF_NOTE,
    }
    return AuditResult(auditor="gdp-fit", verdict=verdict, guarantee=Guarantee.LOWER_BOUND_GDP,
                       estimate=mu_lb, claimed=mu_c_out, quantity="mu", alpha=alpha,
                       details=details)
