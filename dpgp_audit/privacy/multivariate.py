"""The multivariate Gaussian mechanism with a chosen covariance M (catalogue P.4).

Hall et al. (2013, Prop. 3), as used in S18 eqs. (6)–(7): release
f(D) + σ Z with Z ~ N(0, M). Between neighbours the privacy loss is that of a
scalar Gaussian mechanism with sensitivity ‖M^{-1/2}(f(D) − f(D′))‖₂, so the
mechanism is calibrated exactly like the Gaussian mechanism once that
*Mahalanobis sensitivity* is known:

    Δ_M = sup_{D∼D′} ‖M^{-1/2}(f(D) − f(D′))‖₂,   σ = calibrate_gaussian(ε, δ, Δ_M).sigma.

A singular M is allowed only when every possible change lies in its range: a change
with a component outside the range is not masked by any noise (infinite privacy
loss), and :func:`mahalanobis_sensitivity` raises ``ValueError`` naming that
direction. Sampling uses a factor from an eigendecomposition, which handles the
singular case (the noise then lives in the range of M).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np
from scipy import linalg

from dpgp_audit._validation import as_finite_array, check_positive_float
from dpgp_audit.norms import Mahalanobis

__all__ = ["covariance_factor", "factor_pinv", "linear_query_changes", "mahalanobis_sensitivity"]


def covariance_factor(M: np.ndarray, *, rtol: float = 0.0, name: str = "M") -> np.ndarray:
    """A factor F (d × r) with F Fᵀ = M for a symmetric PSD matrix M.

    Built from ``eigh``: F = U_r diag(sqrt(λ_r)) over the eigenvalues above
    ``rtol · λ_max``. The default ``rtol=0`` keeps every positive eigenvalue, however
    small: a sampler must never drop a direction in which M has variance, because
    the query's component there would then be released without noise. Rounding
    noise (tiny negative eigenvalues) is dropped; a clearly negative eigenvalue
    raises ``ValueError`` (``name`` labels the matrix in messages). Pass a positive
    ``rtol`` only to *inspect* the numerical rank.
    """
    M = as_finite_array(name, M, ndim=2)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be square, got shape {M.shape}")
    scale = max(1.0, float(np.abs(M).max(initial=0.0)))
    if not np.allclose(M, M.T, rtol=1e-10, atol=1e-12 * scale):
        raise ValueError(f"{name} must be symmetric")
    w, U = linalg.eigh((M + M.T) / 2.0)
    size = float(np.max(np.abs(w), initial=0.0))
    if w[0] < -1e-8 * size:
        raise ValueError(f"{name} is not positive semi-definite (smallest eigenvalue "
                         f"{w[0]:.3g})")
    if w[-1] <= 0.0:
        raise ValueError(f"{name} is zero: it adds no noise")
    keep = w > rtol * w[-1]
    return U[:, keep] * np.sqrt(w[keep])


def linear_query_changes(C: np.ndarray, d: float) -> np.ndarray:
    """Columns d·c_i: the changes of q = C y when one target moves by d (S18 eq. 8).

    Under outputs-only neighbours |y_i − y_i′| ≤ d, q(D′) − q(D) = (y_i′ − y_i) c_i,
    and the Mahalanobis norm is largest at |y_i′ − y_i| = d.
    """
    C = as_finite_array("C", C, ndim=2)
    d = check_positive_float("d", d)
    return d * C


def mahalanobis_sensitivity(M: np.ndarray | Mahalanobis, changes: np.ndarray, *,
                            rtol: float = 1e-10) -> float:
    """Δ_M = max_j ‖M^{-1/2} v_j‖₂ over the possible changes v_j (S18 eq. 6; Hall Prop. 3).

    Parameters
    ----------
    M
        Noise covariance (before scaling by σ²), or a prepared
        :class:`~dpgp_audit.norms.Mahalanobis` norm.
    changes
        Shape (d, m): column j is one possible difference f(D) − f(D′). The set must
        be closed under the neighbour relation up to sign and scaling by |t| ≤ 1
        (e.g. :func:`linear_query_changes` for a linear query).
    rtol
        Eigenvalues of M below ``rtol · λ_max`` count as zero.

    Raises
    ------
    ValueError
        If a change has a component outside the range of M (a singular M that does
        not cover every direction the query can move in); the message names the
        column and the size of the uncovered component.
    """
    norm = M if isinstance(M, Mahalanobis) else Mahalanobis(np.asarray(M, dtype=float), rtol=rtol)
    V = as_finite_array("changes", changes, ndim=(1, 2))
    if V.ndim == 1:
        V = V[:, None]
    if V.shape[0] != norm.M.shape[0]:
        raise ValueError(f"changes have {V.shape[0]} rows but M is {norm.M.shape[0]} x "
                         f"{norm.M.shape[0]}")
    w, U = norm._eig
    coords = U.T @ V
    resid = V - U @ coords
    resid_norm = np.linalg.norm(resid, axis=0)
    size = np.maximum(1.0, np.linalg.norm(V, axis=0))
    bad = np.flatnonzero(resid_norm > 1e-9 * size)
    if bad.size:
        j = int(bad[np.argmax(resid_norm[bad] / size[bad])])
        raise ValueError(
            f"M is singular (rank {norm.rank} of {norm.M.shape[0]}) and change direction "
            f"{j} (column {j} of changes) has a component of norm {resid_norm[j]:.3g} outside "
            "its range: that change would be released without noise (infinite privacy "
            "loss); add noise in that direction or use a full-rank M"
        )
    return float(np.sqrt(np.max(np.sum(coords**2 / w[:, None], axis=0))))


_PINV_CACHE: OrderedDict[tuple, np.ndarray] = OrderedDict()
_PINV_CACHE_SIZE = 32


def factor_pinv(F: np.ndarray) -> np.ndarray:
    """F⁺ (r × k) of a noise factor F (k × r), by SVD, cached by content (read-only).

    Every singular value above 2⁻⁶⁰ of the largest is inverted: a direction in which the
    factor has noise, however little, is a coordinate of the inner release
    (:class:`~dpgp_audit.methods.linear_gaussian.LinearGaussianRelease`, issue 20 §4).
    """
    F = np.ascontiguousarray(np.atleast_2d(np.asarray(F, dtype=float)))
    key = (F.shape, hashlib.sha1(F.tobytes()).hexdigest())
    hit = _PINV_CACHE.get(key)
    if hit is not None:
        _PINV_CACHE.move_to_end(key)
        return hit
    U, sv, Vt = np.linalg.svd(F, full_matrices=False)
    keep = sv > sv.max(initial=0.0) * 2.0**-60
    P = (Vt[keep].T / sv[keep]) @ U[:, keep].T
    P.setflags(write=False)
    _PINV_CACHE[key] = P
    if len(_PINV_CACHE) > _PINV_CACHE_SIZE:
        _PINV_CACHE.popitem(last=False)
    return P
