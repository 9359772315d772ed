"""S21 Alg. 1: the cross-validated SSE utility and its sensitivity (catalogue S21.5).

For each hyperparameter configuration θ the utility is minus the κ-fold
cross-validated sum of squared errors of the *private* predictions:

    SSE(θ) = Σ_k Σ_{i ∈ test_k} E_z[ h(f_ki + s_ki z − y_i) ],   h(e) = min(e², (4d)²),

where ``f_k = C_k y_train_k`` is the fold's (linear) posterior mean, ``s_ki²``
the variance of the DP noise the release would add at test point i (public:
it depends on inputs only; S21 §5 includes it "so that the cost of the DP
noise" enters the choice), and the clip at ±4d (Alg. 1 line 8) bounds the
effect of one target. The expectation is computed exactly
(:func:`expected_clipped_square`) instead of by sampling.

Sensitivity: one target y_j moves by at most d. It is a *test* point in exactly
one fold and a *training* point in all the others. For one test error,
``g(δ) = sup_e |h(e + δ) − h(e)| = |δ|(8d − |δ|)`` for |δ| ≤ 4d and ``16 d²``
beyond (h is 8d-Lipschitz and bounded by 16d²); averaging over the noise can
only shrink it. Hence the bound used by default (``rule="valid"``)

    Δ(θ) = max_j [ g(d) + Σ_{k : j ∈ train_k} Σ_{i ∈ test_k} g(d |c_ijk|) ],

with the same perturbed j in every fold (S21 §5 suggests this refinement).

Two readings of the paper are kept for comparison and **neither is valid**:

``rule="text"`` (S21 eq. 13 as printed; reproduces Δu = 116 and 53 of §5.1)
    9d² + the κ − 1 *largest* of ``d² max_j ‖c_jk‖²``. It drops the cross term
    ``2 d c_jkᵀ(f_k − y_k)`` of a squared distance: moving a prediction by δ
    changes a squared error by up to ``2|e||δ| + δ²``, not δ².
``rule="algorithm"`` (Alg. 1 lines 12–13 as printed)
    the same with α sorted *ascending*, i.e. the κ − 1 *smallest* fold terms —
    smaller still; text and algorithm disagree and the text's choice is the
    larger (it is the one the §5.1 numbers use).

tests/methods/s21/test_mechanisms.py shows the sensitivity checker finding neighbours
that exceed both paper rules and never the valid one.

Relation to S18.4 (:mod:`dpgp_audit.methods.s18.hyperparameter_selection`): the S18-supp selection
clips the noise-free errors and adds the expected DP noise as a constant offset;
its valid bound sums the κ − 1 largest per-fold maxima of
Σ_i min(8d²|c_ijk|, 64d²) plus 8d². S21 Alg. 1 here clips the *noisy* error (exact
expectation), works for any linear model (the §5.1 polynomials) and uses the
same perturbed row in every fold with the exact per-point supremum g, which is
never larger (tests compare both). The paper formula "text" is S18's
:func:`~dpgp_audit.methods.s18.hyperparameter_selection.s18_sse_sensitivity`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import special

from dpgp_audit.gp.kernels import Kernel, as_inputs
from dpgp_audit.gp.regression import ExactGP

__all__ = [
    "CVFold",
    "CVModel",
    "SensitivityRule",
    "clipped_square_sensitivity",
    "config_sensitivity",
    "cv_sse",
    "expected_clipped_square",
    "gp_cloaking_matrix",
    "kfold_test_sets",
    "polynomial_cloaking_matrix",
    "prepare_folds",
]

SensitivityRule = Literal["valid", "text", "algorithm"]
_RULES = ("valid", "text", "algorithm")

CloakingMap = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(X_train, X_test) -> C (n_test × n_train): the fold's linear prediction map."""

NoiseVariance = Callable[[np.ndarray], np.ndarray]
"""C -> per-test-point variance of the DP noise the release of C y would add."""


def kfold_test_sets(n: int, k: int, *, interleaved: bool = False) -> list[np.ndarray]:
    """Deterministic κ-fold test index sets (a function of n only: public).

    Contiguous blocks by default (S21 §5.1's first split of [0, 1, 2, 4] is
    {0, 1} | {2, 4}); ``interleaved=True`` assigns row i to fold i mod κ (the
    "interleaved pairs" split {0, 2} | {1, 4}).
    """
    n, k = int(n), int(k)
    if k < 2 or k > n:
        raise ValueError(f"the number of folds must satisfy 2 <= k <= n = {n}, got {k}")
    if interleaved:
        return [np.arange(i, n, k) for i in range(k)]
    return [np.asarray(a) for a in np.array_split(np.arange(n), k)]


def polynomial_cloaking_matrix(order: int) -> CloakingMap:
    """Least-squares polynomial regression of ``order`` in 1-D: C = X_*(XᵀX)⁻¹Xᵀ (S21 §5.1)."""
    order = int(order)
    if order < 0:
        raise ValueError(f"order must be >= 0, got {order}")

    def cloak(X_train: np.ndarray, X_test: np.ndarray) -> np.ndarray:
        xt = as_inputs("X_train", X_train)[:, 0]
        xs = as_inputs("X_test", X_test)[:, 0]
        A = np.vander(xt, order + 1, increasing=True)
        As = np.vander(xs, order + 1, increasing=True)
        return As @ np.linalg.pinv(A)

    return cloak


def gp_cloaking_matrix(kernel: Kernel, noise_variance: float) -> CloakingMap:
    """GP regression: C = K_*f (K_ff + σ² I)⁻¹ (S21 eq. 1), from :class:`ExactGP`."""
    gp = ExactGP(kernel, noise_variance)

    def cloak(X_train: np.ndarray, X_test: np.ndarray) -> np.ndarray:
        Xt = as_inputs("X_train", X_train)
        return gp.fit(Xt, np.zeros(Xt.shape[0])).mean_weights(X_test)

    return cloak


@dataclass(frozen=True, eq=False)
class CVFold:
    """One fold: test / train indices, the prediction map C and the DP-noise variances."""

    test: np.ndarray
    train: np.ndarray
    C: np.ndarray
    noise_var: np.ndarray


@dataclass(frozen=True, eq=False)
class CVModel:
    """One configuration θ prepared on the public inputs: its folds (Alg. 1 lines 4–7)."""

    folds: tuple[CVFold, ...]
    n: int
    label: str = ""
    extra: dict = field(default_factory=dict, repr=False)


def prepare_folds(X: object, cloak: CloakingMap, test_sets: Sequence[np.ndarray],
                  noise_variance: NoiseVariance | None = None, *, label: str = "") -> CVModel:
    """Build every fold's C_k and the DP-noise variance at its test points (public only).

    ``noise_variance(C)`` returns the variance of the private release's noise at
    each row of C (for cloaking: σ² diag(M)); ``None`` means no DP noise.
    """
    Xa = as_inputs("X", X)
    n = Xa.shape[0]
    seen = np.concatenate([np.asarray(t, dtype=int) for t in test_sets])
    if np.sort(seen).tolist() != list(range(n)):
        raise ValueError("test_sets must partition range(n) (each row in exactly one fold)")
    folds = []
    for test in test_sets:
        test = np.asarray(test, dtype=int)
        train = np.setdiff1d(np.arange(n), test)
        C = np.asarray(cloak(Xa[train], Xa[test]), dtype=float)
        if C.shape != (test.size, train.size):
            raise ValueError(f"cloaking map returned shape {C.shape}, expected "
                             f"{(test.size, train.size)}")
        nv = np.zeros(test.size) if noise_variance is None else np.asarray(
            noise_variance(C), dtype=float).reshape(test.size)
        if np.any(nv < 0) or not np.all(np.isfinite(nv)):
            raise ValueError("noise_variance must return finite non-negative variances")
        folds.append(CVFold(test, train, C, nv))
    return CVModel(tuple(folds), n, label)


def expected_clipped_square(e: np.ndarray, s: np.ndarray, a: float) -> np.ndarray:
    """E[min((e + sZ)², a²)] for Z ~ N(0, 1), exactly (a = inf gives e² + s²).

    With X ~ N(e, s²), α = (−a − e)/s, β = (a − e)/s:
    E[X²; |X| < a] = (e² + s²)(Φ(β) − Φ(α)) + 2es(φ(α) − φ(β)) + s²(αφ(α) − βφ(β)),
    plus a² P(|X| ≥ a).
    """
    e = np.asarray(e, dtype=float)
    s = np.broadcast_to(np.asarray(s, dtype=float), e.shape)
    if np.isinf(a):
        return e**2 + s**2
    out = np.minimum(e**2, a**2)  # s = 0
    pos = s > 0
    if np.any(pos):
        ep, sp = e[pos], s[pos]
        al, be = (-a - ep) / sp, (a - ep) / sp
        Pa, Pb = special.ndtr(al), special.ndtr(be)
        pa, pb = np.exp(-0.5 * al**2) / np.sqrt(2 * np.pi), np.exp(-0.5 * be**2) / np.sqrt(
            2 * np.pi)
        inside = ((ep**2 + sp**2) * (Pb - Pa) + 2 * ep * sp * (pa - pb)
                  + sp**2 * (al * pa - be * pb))
        out = out.copy()
        out[pos] = inside + a**2 * (Pa + special.ndtr(-be))
    return out


def cv_sse(model: CVModel, y: object, d: float, *, clip: bool = True,
           include_noise: bool = True) -> float:
    """The (expected) cross-validated SSE of Alg. 1 line 8 (``clip=False``: line 9)."""
    ya = np.asarray(y, dtype=float)
    if ya.shape != (model.n,):
        raise ValueError(f"y must have shape ({model.n},), got {ya.shape}")
    a = 4.0 * float(d) if clip else np.inf
    total = 0.0
    for f in model.folds:
        err = f.C @ ya[f.train] - ya[f.test]
        s = np.sqrt(f.noise_var) if include_noise else np.zeros_like(err)
        total += float(np.sum(expected_clipped_square(err, s, a)))
    return total


def clipped_square_sensitivity(delta: np.ndarray, d: float) -> np.ndarray:
    """g(δ) = sup_e |h(e + δ) − h(e)| for h(e) = min(e², (4d)²): |δ|(8d − |δ|), capped at 16d²."""
    a = 4.0 * float(d)
    x = np.abs(np.asarray(delta, dtype=float))
    return np.where(x <= a, x * (2 * a - x), a**2)


def config_sensitivity(model: CVModel, d: float, rule: SensitivityRule = "valid") -> float:
    """Δ(θ) of the (negative) cross-validated SSE for one configuration (module docstring)."""
    if rule not in _RULES:
        raise ValueError(f"rule must be one of {_RULES}, got {rule!r}")
    d = float(d)
    if rule == "text":  # the same formula as S18-supp's: one place for it
        from dpgp_audit.methods.s18.hyperparameter_selection import s18_sse_sensitivity

        return s18_sse_sensitivity([f.C for f in model.folds], d, 4.0 * d)
    if rule == "algorithm":  # Alg. 1 lines 12–13: α sorted ascending, first κ − 1 summed
        alpha = np.sort([float(np.max(np.sum(f.C**2, axis=0))) if f.C.size else 0.0
                         for f in model.folds])
        return 9.0 * d**2 + d**2 * float(np.sum(alpha[:-1]))
    per_row = np.full(model.n, float(clipped_square_sensitivity(d, d)))
    for f in model.folds:
        per_row[f.train] += np.sum(clipped_square_sensitivity(d * f.C, d), axis=0)
    return float(np.max(per_row))
