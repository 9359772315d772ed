"""The cloaking optimisation of S18 §3: the smallest Gaussian noise covariance that hides
every single-output change of a linear release (catalogue S18.2; reused by S21).

Pure linear algebra on a matrix ``C`` (k × n) whose column ``c_i`` is the change of the
k released values when training output ``i`` moves by one unit. The problem
(S18-supp, "Deriving and optimising the cloaking variables") is

    minimise  log|M|   subject to   c_iᵀ M⁻¹ c_i ≤ 1   (i = 1 … n),

whose optimum has the form ``M = Σ_i λ_i c_i c_iᵀ`` with ``λ ≥ 0``. It is the minimum-volume
*centred* ellipsoid containing ±c_i; its Lagrange dual is

    minimise  f(λ) = Σ_i λ_i − log det(C diag(λ) Cᵀ)   over λ ≥ 0,

the D-optimal experimental design problem in disguise (Σλ_i = k at the optimum). Any
λ ≥ 0 certifies the interval

    LB(λ) = log det M(λ) + r log(r / Σλ)  ≤  log|M*|  ≤  UB(λ) = log det M(λ) + r log max_i g_i,

where ``g_i = c_iᵀ M(λ)⁻¹ c_i`` and r = rank C; ``UB`` is attained by the feasible matrix
``max_i g_i · M(λ)``. :func:`solve_cloaking` returns that feasible matrix with its
certified gap ``UB − LB``.

Two solvers:

* :func:`solve_cloaking` — fast and robust, on the whitened problem (C → Vᵀ of its thin
  SVD, which leaves every leverage unchanged): a multiplicative (Titterington 1976) warm
  start, a screen of columns in the spirit of Harman & Pronzato (2007), primal log-barrier
  Newton steps on the dual, then the duality-gap certificate above evaluated on *every*
  column; columns the screen wrongly dropped rejoin the working set until the certificate
  holds. The returned M is always feasible (max leverage exactly 1).
  Above ``max_working`` columns (large n, e.g. S21.2's sparse maps) the same solver runs by
  column generation on subsets and the certificate is still evaluated on every column;
  with C given as its factors (:class:`~dpgp_audit.gp.linalg.FactoredMatrix`) time and
  memory are linear in n.
* :func:`solve_cloaking_paper` — S18-supp Algorithm 1 (FINDLAMBDAS) verbatim: uniform
  random start in (0.1, 0.9), fixed learning rate 0.05, unprojected gradient steps,
  stop when the step is below 1e-5. Kept for comparison and for the planted pitfalls.

Rank-deficient C (more test points than training points, or collinear columns) is
handled exactly: all c_i lie in ``range(C)`` (dimension r < k), the noise is confined to
that subspace, ``M`` is singular, and the Mahalanobis norm uses the pseudo-inverse with a
range check (:func:`mahalanobis_leverages`); log|M| is then the log pseudo-determinant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

from dpgp_audit._validation import as_finite_array, check_rng
from dpgp_audit.gp.linalg import FactoredMatrix

__all__ = [
    "CloakingSolution",
    "calc_delta_paper",
    "cloaking_bounds",
    "cloaking_objective",
    "mahalanobis_delta",
    "mahalanobis_leverages",
    "range_basis",
    "solve_cloaking",
    "solve_cloaking_paper",
]


@dataclass(frozen=True, eq=False)
class CloakingSolution:
    """A noise covariance for the cloaking mechanism and what it certifies.

    Attributes
    ----------
    lam
        Weights λ (n,), ``M = Σ λ_i c_i c_iᵀ`` (already including any final rescaling).
    M
        The noise covariance (k × k), PSD, range = span{c_i} (dimension ``rank``).
    basis
        Orthonormal basis (k × r) of span{c_i}.
    leverages
        ``c_iᵀ M⁺ c_i`` for every column (squared Mahalanobis norms).
    delta
        The Mahalanobis sensitivity for unit data sensitivity, ``sqrt(max_i c_iᵀ M⁺ c_i)``
        (S18 eq. 6 with d = 1); 1 up to rounding for :func:`solve_cloaking`.
    logdet
        log pseudo-determinant of ``M``.
    gap
        Certified bound on ``logdet − log|M*|`` (``inf`` when not certified).
    lower_bound
        Certified lower bound on the optimal log pseudo-determinant.
    iterations, converged, method
        Solver bookkeeping.
    """

    lam: np.ndarray
    M: np.ndarray
    basis: np.ndarray
    leverages: np.ndarray
    delta: float
    logdet: float
    gap: float
    lower_bound: float
    iterations: int
    converged: bool
    method: str
    history: dict = field(default_factory=dict, repr=False)

    @property
    def rank(self) -> int:
        """Dimension of the subspace the noise lives in."""
        return int(self.basis.shape[1])

    @property
    def max_leverage(self) -> float:
        """``max_i c_iᵀ M⁺ c_i`` (the paper's CalcDelta, S18-supp Alg. 1 lines 38–40)."""
        return float(np.max(self.leverages)) if self.leverages.size else 0.0


# --------------------------------------------------------------------------- helpers


def _check_C(C: object) -> np.ndarray | FactoredMatrix:
    if isinstance(C, FactoredMatrix):
        if 0 in C.shape or C.F.shape[1] == 0:
            raise ValueError(f"C must be non-empty, got shape {C.shape}")
        if not (np.any(C.F) and np.any(C.G)):
            raise ValueError("C is identically zero: the release does not depend on the data")
        return C
    C = as_finite_array("C", C, ndim=2)
    if C.shape[0] == 0 or C.shape[1] == 0:
        raise ValueError(f"C must be non-empty, got shape {C.shape}")
    if not np.any(C):
        raise ValueError("C is identically zero: the release does not depend on the data")
    return C


def range_basis(C: np.ndarray | FactoredMatrix, *, rtol: float = 1e-10,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD of ``C`` truncated to its numerical range: ``C ≈ Q diag(s) Vt``.

    Singular values below ``rtol · s_max`` count as zero. ``Q`` (k × r) is an orthonormal
    basis of span{c_i}; ``Vt`` (r × n) has orthonormal rows. The leverages
    ``c_iᵀ (C Λ Cᵀ)⁺ c_i`` are invariant under ``C → T C`` for invertible ``T``, so the
    cloaking problem is solved on the perfectly conditioned ``Vt`` and mapped back with
    ``M = Q diag(s) M_V diag(s) Qᵀ``.

    For a :class:`~dpgp_audit.gp.linalg.FactoredMatrix` ``C = F G`` (m ≪ n) the same
    decomposition comes from a thin QR ``Gᵀ = Q_G R_G`` and the SVD of the k × m matrix
    ``F R_Gᵀ = U diag(s) Wᵀ``: ``C = U diag(s) (Q_G W)ᵀ``, in O(n m²) time and O(n m)
    memory (no k × n array).
    """
    C = _check_C(C)
    if isinstance(C, FactoredMatrix):
        Qg, Rg = linalg.qr(C.G.T, mode="economic", check_finite=False)
        U, s, Wt = linalg.svd(C.F @ Rg.T, full_matrices=False, lapack_driver="gesdd",
                              check_finite=False)
        r = int(np.sum(s > rtol * s[0]))
        return U[:, :r], s[:r], Wt[:r] @ Qg.T
    U, s, Vt = linalg.svd(C, full_matrices=False, lapack_driver="gesdd")
    r = int(np.sum(s > rtol * s[0]))
    return U[:, :r], s[:r], Vt[:r]


def mahalanobis_leverages(C: np.ndarray, M: np.ndarray, *, rtol: float = 1e-10,
                          range_tol: float = 1e-8) -> np.ndarray:
    """``c_iᵀ M⁺ c_i`` for each column, ``inf`` where ``c_i`` leaves the range of ``M``.

    The range check is what keeps a singular ``M`` safe: a mean change with a component
    outside ``range(M)`` cannot be hidden by N(0, M) (infinite privacy loss), and a bare
    pseudo-inverse would silently ignore that component.

    Parameters
    ----------
    C
        k × n matrix of columns.
    M
        k × k symmetric PSD matrix.
    rtol
        Eigenvalues below ``rtol · λ_max`` count as zero.
    range_tol
        Relative residual ``‖(I − P) c_i‖ / ‖c_i‖`` above which ``c_i`` is out of range.
    """
    C = as_finite_array("C", C, ndim=2)
    M = as_finite_array("M", M, ndim=2)
    if M.shape != (C.shape[0], C.shape[0]):
        raise ValueError(f"M must be {C.shape[0]} x {C.shape[0]}, got {M.shape}")
    w, U = linalg.eigh(0.5 * (M + M.T))
    if w[-1] <= 0:
        raise ValueError("M has no positive eigenvalue")
    if w[0] < -1e-8 * w[-1]:
        raise ValueError(f"M is not positive semi-definite (smallest eigenvalue {w[0]:.3g})")
    keep = w > rtol * w[-1]
    w, U = w[keep], U[:, keep]
    P = U.T @ C
    lev = np.sum(P**2 / w[:, None], axis=0)
    norms = np.linalg.norm(C, axis=0)
    resid = np.linalg.norm(C - U @ P, axis=0)
    out = resid > range_tol * np.maximum(norms, np.finfo(float).tiny)
    lev[out & (norms > 0)] = np.inf
    return lev


def mahalanobis_delta(C: np.ndarray, M: np.ndarray, **kwargs: float) -> float:
    """The Mahalanobis sensitivity ``sqrt(max_i c_iᵀ M⁺ c_i)`` (S18 eq. 6, unit d).

    ``inf`` when some column leaves the range of ``M``.
    """
    return float(np.sqrt(np.max(mahalanobis_leverages(C, M, **kwargs))))


def calc_delta_paper(lam: np.ndarray, C: np.ndarray) -> float:
    """S18-supp Alg. 1 CALCDELTA (lines 38–40), verbatim: ``max_j c_jᵀ M⁺ c_j``.

    Note the units: this is the *squared* Mahalanobis norm, yet line 8 multiplies the
    noise by it as if it were Δ. The two agree only when the optimiser has converged
    (value 1). When λ overshoots (max < 1) the square under-states Δ = sqrt(max) and the
    release is under-noised; see :func:`mahalanobis_delta` and the planted mechanism
    ``planted/s18-delta-no-sqrt``. ``M⁺`` is numpy's ``pinv`` as in the paper (no range
    check).
    """
    C = np.asarray(C, dtype=float)
    M = (C * np.asarray(lam, dtype=float)) @ C.T
    Mp = np.linalg.pinv(M, hermitian=True)
    return float(np.max(np.sum(C * (Mp @ C), axis=0)))


def cloaking_objective(lam: np.ndarray, C: np.ndarray) -> float:
    """The paper's Lagrangian-dual objective ``Σλ − log det(C Λ Cᵀ)`` (its gradient is
    S18-supp eq. 6 with the sign of Alg. 1 line 28: ``1 − c_jᵀ M⁻¹ c_j``).

    Evaluated on span{c_i} (pseudo-determinant); ``inf`` if ``C Λ Cᵀ`` is singular there.
    """
    Q, sv, Vt = range_basis(C)
    A = sv[:, None] * Vt
    M = (A * lam) @ A.T
    try:
        L = linalg.cholesky(M, lower=True)
    except linalg.LinAlgError:
        return float("inf")
    return float(np.sum(lam) - 2.0 * np.sum(np.log(np.diag(L))))


def cloaking_bounds(lam: np.ndarray, C: np.ndarray) -> tuple[float, float]:
    """Certified ``(LB, UB)`` on the optimal log|M*| from any ``λ ≥ 0`` (module docstring)."""
    lam = np.asarray(lam, dtype=float)
    if np.any(lam < 0):
        raise ValueError("lam must be non-negative for the certificate")
    _, sv, Vt = range_basis(C)
    st = _state(Vt, lam)
    if st is None:
        return -np.inf, np.inf
    lb, ub = _bounds(st, Vt.shape[0], float(np.sum(lam)))
    shift = 2.0 * float(np.sum(np.log(sv)))
    return lb + shift, ub + shift


# --------------------------------------------------------------------------- fast solver


@dataclass
class _State:
    L: np.ndarray  # Cholesky factor of M(λ) = A Λ Aᵀ (reduced space)
    B: np.ndarray  # L⁻¹ A
    g: np.ndarray  # leverages a_iᵀ M⁻¹ a_i
    logdet: float


def _state(A: np.ndarray, lam: np.ndarray) -> _State | None:
    M = (A * lam) @ A.T
    try:
        L = linalg.cholesky(M, lower=True, check_finite=False)
    except linalg.LinAlgError:
        return None
    d = np.diag(L)
    if np.any(d <= 0) or not np.all(np.isfinite(d)):
        return None
    B = linalg.solve_triangular(L, A, lower=True, check_finite=False)
    g = np.einsum("ij,ij->j", B, B)
    return _State(L, B, g, float(2.0 * np.sum(np.log(d))))


def _bounds(st: _State, r: int, lam_sum: float) -> tuple[float, float]:
    lb = st.logdet + r * math.log(r / lam_sum)
    ub = st.logdet + r * math.log(float(np.max(st.g)))
    return lb, ub


def _eliminable(g_u: np.ndarray, r: int, *, screening: bool = False) -> np.ndarray:
    """Harman & Pronzato (2007) test: columns that cannot support any D-optimal design.

    ``g_u`` are the leverages for a design u on the simplex (Σ u_i g_i = r). With
    ε = max g − r (absolute, as in their theorem) a column with
    ``g_i < r (1 + ε/2 − sqrt(ε (4 + ε − 4/r)) / 2)`` has zero weight at the optimum.
    Only used to shrink the working set: the final
    certificate is always evaluated on every column.

    ``screening=True`` uses the relative excess ε = max g / r − 1 instead: a much more
    aggressive *heuristic* screen (not a theorem). The solver uses it and then evaluates
    the certificate on every column, returning any column that violates it to the
    working set, so the result stays certified.
    """
    eps = max(float(np.max(g_u)) - r, 0.0)
    if screening:
        eps = max(float(np.max(g_u)) / r - 1.0, 0.0)
    thr = r * (1.0 + eps / 2.0 - math.sqrt(max(eps * (4.0 + eps - 4.0 / r), 0.0)) / 2.0)
    return g_u < thr * (1.0 - 1e-9)


def _barrier(A: np.ndarray, work: np.ndarray, lam: np.ndarray, st: _State, r: int,
             tol: float, max_iter: int, hist: dict, screen: bool = True,
             ) -> tuple[np.ndarray, np.ndarray, _State, int]:
    """Log-barrier Newton iterations on the working set ``work`` (all its λ > 0).

    After each step the heuristic screen drops columns from the working set (the caller
    re-checks every column against the certificate). Returns (work, λ_work, state, iters).
    """
    Aw = A[:, work]
    m = lam.size
    tau = 1e-3 * r / m
    it = 0
    lb, ub = _bounds(st, r, float(lam.sum()))
    while ub - lb > tol and it < max_iter:
        it += 1
        m = lam.size
        grad = 1.0 - st.g - tau / lam
        G = st.B.T @ st.B
        H = G * G
        H[np.diag_indices(m)] += tau / lam**2
        try:
            cf = linalg.cho_factor(H, lower=True, check_finite=False)
        except linalg.LinAlgError:
            H[np.diag_indices(m)] *= 1.0 + 1e-10
            cf = linalg.cho_factor(H, lower=True, check_finite=False)
        p = -linalg.cho_solve(cf, grad, check_finite=False)
        dec = float(-grad @ p)
        neg = p < 0
        t = min(1.0, 0.99 * float(np.min(-lam[neg] / p[neg]))) if np.any(neg) else 1.0
        F0 = float(lam.sum()) - st.logdet - tau * float(np.sum(np.log(lam)))
        moved = False
        for _ in range(50):
            cand = lam + t * p
            st_c = _state(Aw, cand)
            if st_c is not None:
                F1 = float(cand.sum()) - st_c.logdet - tau * float(np.sum(np.log(cand)))
                if F1 <= F0 - 0.25 * t * dec:
                    moved = True
                    break
                # near the optimum the decrease is below F's round-off, and Armijo's test
                # reads noise: take the step if it narrows the certified gap
                if 0.25 * t * dec < 64 * np.finfo(float).eps * max(abs(F0), 1.0):
                    lb_c, ub_c = _bounds(st_c, r, float(cand.sum()))
                    if ub_c - lb_c < ub - lb:
                        moved = True
                        break
            t *= 0.5
        if moved:
            lam, st = cand, st_c
            lb, ub = _bounds(st, r, float(lam.sum()))
            hist["gap"].append(ub - lb)
            drop = _eliminable(st.g * lam.sum(), r, screening=screen)
            if np.any(drop) and np.count_nonzero(~drop) >= r:
                st_t = _state(Aw[:, ~drop], lam[~drop])
                if st_t is not None:
                    work, lam, st, Aw = work[~drop], lam[~drop], st_t, Aw[:, ~drop]
                    lb, ub = _bounds(st, r, float(lam.sum()))
        if not moved or dec < 1e-3 * tau * m:  # centred (or stuck): shrink the barrier
            if tau * m < 1e-3 * tol:
                break
            tau *= 0.05
    return work, lam, st, it


def _solve_design(A: np.ndarray, *, tol: float, max_iter: int, n_multiplicative: int,
                  hist: dict, lam0: np.ndarray | None = None,
                  ) -> tuple[np.ndarray, _State, float, float, int]:
    """The certified D-optimal design on the columns of ``A`` (r × n, full row rank).

    Multiplicative warm start with screening, log-barrier Newton on the working set, then
    the certificate on every column of ``A`` (columns that violate it rejoin the working
    set). ``lam0`` (optional, ≥ 0) replaces the uniform starting design: its positive
    entries are kept, the others start at 1 % of their mean. Returns (λ, state on all
    columns, LB, UB, iterations), before any rescaling.
    """
    r, n = A.shape
    nz = np.linalg.norm(A, axis=0) > 0
    active = np.flatnonzero(nz)  # initial working set (shrunk by screening below)
    lam = np.zeros(n)
    if lam0 is None:
        lam[active] = r / active.size  # uniform design, Σλ = r
    else:
        start = np.asarray(lam0, dtype=float)[active]
        pos = start > 0
        fill = 1e-2 * float(np.mean(start[pos])) if np.any(pos) else 1.0
        start = np.where(pos, start, fill)
        lam[active] = start * (r / start.sum())
    st = _state(A, lam)
    if st is None:  # cannot happen for full-row-rank A with positive weights on all columns
        raise ValueError("C Λ Cᵀ is singular for uniform weights; check C")

    # 1) multiplicative warm start on the working set: u_i ← u_i g_i / r keeps Σλ = r and
    #    increases log det; the screen shrinks the working set.
    work = active.copy()
    Aw = A[:, work]
    lw = lam[work]
    stw = _state(Aw, lw)
    if stw is None:
        raise ValueError("C Λ Cᵀ is singular for uniform weights; check C")
    n_mult = 0
    # a multiplicative step costs ~r²|W| flops, a Newton step ~|W|³/3: spend on the warm
    # start about what one Newton step on the full working set would cost
    budget = max(10, min(n_multiplicative, int(work.size**2 / (3 * r * r))))
    for _ in range(budget):
        n_mult += 1
        lw = lw * stw.g / r
        stw = _state(Aw, lw)
        if stw is None:
            raise ValueError("multiplicative update lost positive definiteness; check C")
        lb, ub = _bounds(stw, r, float(lw.sum()))
        hist["gap"].append(ub - lb)
        if ub - lb <= tol or (ub - lb < 1e-3 and work.size <= 3 * r + 10):
            break
        drop = _eliminable(stw.g * lw.sum(), r, screening=True)
        if np.any(drop) and np.count_nonzero(~drop) >= r:
            trial = lw[~drop] * (r / lw[~drop].sum())
            st_t = _state(Aw[:, ~drop], trial)
            if st_t is not None:
                work, lw, stw = work[~drop], trial, st_t
                Aw = A[:, work]

    # heuristic screen by weight (multiplicative weights of non-support columns decay
    # geometrically); any mistake is repaired by the certificate rounds below.
    keep = lw >= 1e-2 * float(np.max(lw))
    if np.count_nonzero(keep) >= r and not np.all(keep):
        st_t = _state(Aw[:, keep], lw[keep])
        if st_t is not None:
            work, lw, stw, Aw = work[keep], lw[keep], st_t, Aw[:, keep]

    # 2) primal log-barrier Newton on F(λ) = Σλ − log det(AΛAᵀ) − τ Σ log λ over the
    #    working set (Hessian (BᵀB)∘(BᵀB) + τ diag(λ⁻²) is positive definite); then the
    #    certificate on every column; columns that violate it rejoin the working set.
    it = 0
    for _round in range(4):
        work, lw, stw, it_r = _barrier(A, work, lw, stw, r, tol, max_iter - it, hist,
                                       screen=_round == 0)
        it += it_r
        lam = np.zeros(n)
        lam[work] = lw
        st = _state(A, lam)
        if st is None:
            raise ValueError("lost positive definiteness; check C")
        lb, ub = _bounds(st, r, float(lam.sum()))
        if ub - lb <= tol or it >= max_iter:
            break
        back = np.setdiff1d(np.flatnonzero(st.g > np.max(stw.g) * (1 - 1e-12)), work)
        if back.size == 0:
            break
        work = np.union1d(work, back)
        lam[back] = 1e-3 * float(np.mean(lw))
        Aw, lw = A[:, work], lam[work]
        stw = _state(Aw, lw)
    return lam, st, lb, ub, n_mult + it


def solve_cloaking(C: np.ndarray | FactoredMatrix, *, tol: float = 1e-9, max_iter: int = 200,
                   n_multiplicative: int = 200, rtol: float = 1e-10,
                   max_working: int = 2000, subset_size: int = 600,
                   max_rounds: int = 30) -> CloakingSolution:
    """Fast, certified solver for the S18 cloaking covariance (catalogue S18.2).

    Parameters
    ----------
    C
        k × n cloaking matrix (column i: change of the release per unit change of y_i), or
        its factors as a :class:`~dpgp_audit.gp.linalg.FactoredMatrix` (sparse GPs, S21.2:
        O(n m²) time and O(n m) memory, no k × n array).
    tol
        Target certified gap on log|M| (absolute, in nats).
    max_iter
        Maximum projected-Newton iterations (per subproblem).
    n_multiplicative
        Maximum multiplicative (Titterington 1976) warm-start iterations (also capped at
        about the cost of one Newton step on all columns, and at least 10).
    rtol
        Relative singular-value threshold defining span{c_i}.
    max_working, subset_size, max_rounds
        Scale control. With at most ``max_working`` non-zero columns the design is solved
        directly (the Newton Hessian is working-set square). With more, by column
        generation: solve on ``subset_size`` columns (r spanning ones from QR with column
        pivoting plus an even stride through the rest), evaluate the certificate on every
        column (one O(n r²) pass), keep the support found and the spanning columns, add the
        worst violators, and solve again from the previous weights, for at most
        ``max_rounds`` rounds. Time and memory grow linearly in n; the certificate is
        always that of the full problem.

    Returns
    -------
    CloakingSolution
        ``M`` is scaled so that ``max_i c_iᵀ M⁺ c_i = 1`` exactly (feasible), and
        ``logdet − log|M*| ≤ gap``. ``converged`` is True when ``gap ≤ tol``.
    """
    C = _check_C(C)
    if tol <= 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    Q, sv, A = range_basis(C, rtol=rtol)  # A = Vt: orthonormal rows (well conditioned)
    r, n = A.shape
    shift = 2.0 * float(np.sum(np.log(sv)))  # log det diag(s)²
    hist: dict[str, list[float]] = {"gap": []}
    kw = {"tol": tol, "max_iter": max_iter, "n_multiplicative": n_multiplicative}
    active = np.flatnonzero(np.linalg.norm(A, axis=0) > 0)
    max_working = max(int(max_working), 4 * r + 10)
    subset_size = min(max(int(subset_size), 4 * r + 10), max_working)
    if active.size <= max_working:
        lam, st, lb, ub, iters = _solve_design(A, hist=hist, **kw)
    else:  # column generation: subproblems of about subset_size columns plus the support
        st0 = _state(A[:, active], np.full(active.size, r / active.size))
        if st0 is None:
            raise ValueError("C Λ Cᵀ is singular for uniform weights; check C")
        # first subset: an even stride through the columns (for a GP they are the training
        # points, so a stride covers the inputs), r columns spanning range(A) (QR with
        # column pivoting, on the stride first and on all columns if it does not span;
        # they stay in every subset, so every subproblem is full rank), and the columns of
        # largest leverage under the uniform design (the extremes the optimum uses)
        stride = active[np.linspace(0, active.size - 1, subset_size - r).astype(int)]
        stride = np.unique(stride)
        anchors = np.zeros(0, dtype=int)
        for pool in (stride, active):
            _, Rp, piv = linalg.qr(A[:, pool], mode="economic", pivoting=True,
                                   check_finite=False)
            if abs(Rp[r - 1, r - 1]) > 1e-8 * abs(Rp[0, 0]):
                anchors = pool[np.sort(piv[:r])]
                break
        if anchors.size == 0:
            raise ValueError("C Λ Cᵀ is singular for uniform weights; check C")
        hardest = active[np.argsort(st0.g, kind="stable")[-(2 * r):]]
        subset = np.union1d(np.union1d(anchors, stride), hardest)
        iters = 0
        hist["rounds"] = []
        lam = np.zeros(n)
        for _ in range(max(int(max_rounds), 1)):
            lam_s, st_s, _, _, it_s = _solve_design(A[:, subset], hist=hist,
                                                    lam0=lam[subset] if lam.any() else None,
                                                    **kw)
            iters += it_s
            lam = np.zeros(n)
            lam[subset] = lam_s
            st = _state(A, lam)
            if st is None:
                raise ValueError("lost positive definiteness; check C")
            lb, ub = _bounds(st, r, float(lam.sum()))
            hist["rounds"].append(ub - lb)
            if ub - lb <= tol:
                break
            back = np.setdiff1d(np.flatnonzero(st.g > np.max(st_s.g) * (1 - 1e-12)), subset)
            if back.size == 0:  # the gap left is the subproblem's own: solve it further
                continue
            q = subset_size - r
            if back.size > q:  # half the worst violators, half an even stride through all
                top = back[np.argsort(st.g[back], kind="stable")[-(q // 2):]]
                spread = back[np.linspace(0, back.size - 1, q - q // 2).astype(int)]
                back = np.union1d(top, spread)
            subset = np.union1d(np.union1d(subset[lam_s > 0], anchors), back)

    # feasible output: scale M so that the largest leverage is exactly one.
    gmax = float(np.max(st.g))
    lam_out = lam * gmax
    F = Q * sv  # C = F Vt
    Mr = (A * lam_out) @ A.T
    M = F @ Mr @ F.T
    M = 0.5 * (M + M.T)
    lev = st.g / gmax
    logdet = st.logdet + r * math.log(gmax) + shift
    gap = ub - lb
    lb = lb + shift
    return CloakingSolution(lam=lam_out, M=M, basis=Q, leverages=lev,
                            delta=float(np.sqrt(np.max(lev))), logdet=logdet, gap=gap,
                            lower_bound=lb, iterations=iters,
                            converged=gap <= tol, method="newton", history=hist)


# --------------------------------------------------------------------------- paper's solver


def solve_cloaking_paper(C: np.ndarray, rng: np.random.Generator, *,
                         learning_rate: float = 0.05, tol: float = 1e-5,
                         max_iter: int = 100_000, lam0: np.ndarray | None = None,
                         ) -> CloakingSolution:
    """S18-supp Algorithm 1, FINDLAMBDAS (lines 17–26) with CALCGRADIENT (27–33), verbatim.

    * line 17: ``λ ← Uniform(0.1, 0.9)`` (or ``lam0`` if given);
    * line 18: learning rate α = 0.05;
    * lines 20–23: gradient ``1 − c_jᵀ M⁺ c_j`` (``M⁺`` = pseudo-inverse, line 28),
      step ``Δλ = −α ∂L/∂λ``, ``λ ← λ + Δλ`` — no projection onto λ ≥ 0;
    * line 23: repeat while the step exceeds 1e-5; the pseudo-code compares a vector with a
      scalar, we read it as ``max_j |Δλ_j| > 1e-5``.

    Returns the λ reached. ``delta`` is the correct Mahalanobis sensitivity of the M reached,
    ``sqrt(max c_jᵀ M⁺ c_j)``; the paper's CALCDELTA value (no square root) is
    ``max_leverage`` / :func:`calc_delta_paper`. ``gap`` is the certificate (if λ ≥ 0),
    ``converged`` is the paper's stopping rule being met within ``max_iter``.

    The method is not guaranteed to converge: where the optimum has λ_j = 0 (an inactive
    constraint, common when many test/training points are close together) the gradient
    stays positive and unprojected steps drive λ_j negative — the non-convergence the
    paper's footnote ‡ mentions.
    """
    C = _check_C(C)
    if isinstance(C, FactoredMatrix):
        C = C.dense()  # Alg. 1 works on C itself (small problems)
    rng = check_rng(rng)
    k, n = C.shape
    lam = rng.uniform(0.1, 0.9, size=n) if lam0 is None else np.array(lam0, dtype=float)
    if lam.shape != (n,):
        raise ValueError(f"lam0 must have shape ({n},), got {lam.shape}")
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007
        M = (C * lam) @ C.T  # CALCM, lines 34-35
        Mp = np.linalg.pinv(M, hermitian=True)  # line 28 uses M⁺
        grad = 1.0 - np.einsum("ij,ij->j", C, Mp @ C)  # line 28 (Tr(M⁺ c cᵀ) = cᵀM⁺c)
        step = -learning_rate * grad  # line 21
        lam = lam + step  # line 22
        if not np.max(np.abs(step)) > tol:  # line 23
            converged = True
            break
    M = (C * lam) @ C.T
    M = 0.5 * (M + M.T)
    Q, _, _ = range_basis(C)
    try:
        lev = mahalanobis_leverages(C, M)
    except ValueError:  # an indefinite M (negative λ) — the release would be undefined
        lev = np.full(n, np.nan)
    w = linalg.eigvalsh(Q.T @ M @ Q)
    logdet = float(np.sum(np.log(w))) if np.all(w > 0) else float("nan")
    if np.all(lam >= 0) and np.all(np.isfinite(lev)):
        lb, ub = cloaking_bounds(lam, C)
        gap = ub - lb
    else:
        lb, gap = -np.inf, np.inf
    return CloakingSolution(lam=lam, M=M, basis=Q, leverages=lev,
                            delta=float(np.sqrt(np.max(lev))), logdet=logdet, gap=gap,
                            lower_bound=lb, iterations=it, converged=converged,
                            method="paper-gradient")
