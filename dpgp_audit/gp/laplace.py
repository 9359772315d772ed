"""Binary GP classification by the Laplace approximation, as S21 §4 needs it (S21.3, S21.4).

Labels are y ∈ {−1, +1}, the link is the logistic σ(f), targets t = (y + 1)/2.
One Newton step towards the posterior mode (R&W eq. 3.18; S21 eq. 10) is

    f_new = (K⁻¹ + W)⁻¹ (W f̂ + t − π(f̂)) = offset(f̂) + C y,
    C = ½ (K⁻¹ + W)⁻¹  (S21 eq. 11),   offset = 2 C (W f̂ + ½ − π(f̂)),

with π = σ(f̂) and W = diag(π(1 − π)) (the *positive* Hessian of the negative
log likelihood). Only ``C y`` depends on the labels, so a step is a linear
release: S21 cloaks it (methods/s21/mechanisms.py). A label flip moves y_i by 2, so the
data sensitivity is d = 2.

Numerically, ``(K⁻¹ + W)⁻¹ = K − K W^½ B⁻¹ W^½ K`` with ``B = I + W^½ K W^½``
(R&W eq. 3.27 and §3.4.3), which never inverts K. (S21 §4 prints
``B = K + W^½ K W^½``; the identity needs the identity matrix, not K.)

Predictions follow S21 §4: latent mean ``k_*ᵀ K⁻¹ f̂`` (not R&W's
``k_*ᵀ ∇log p(y|f̂)``, which would read the labels again), latent variance
``k_** − k_*ᵀ (K + W⁻¹)⁻¹ k_*`` = ``k_** − k_*ᵀ W^½ B⁻¹ W^½ k_*``; class
probabilities either σ(mean) or the probit-averaged σ(mean / sqrt(1 + π v / 8))
(MacKay 1992; R&W §3.4.2).

Subset of Regressors (S21 §4.1): K ≈ Vᵀ V with V = L_ZZ⁻¹ K_Zf (M × n). Then
``(K⁻¹ + W)⁻¹ = Vᵀ (I + V W Vᵀ)⁻¹ V`` (push-through identity), every latent
vector is ``f = Vᵀ u`` for an M-vector u, and the labels enter only through

    u_new = offset_u + C_u y,   C_u = ½ (I_M + V W Vᵀ)⁻¹ V   (M × n),

so the private release is M-dimensional (cheap; f̂ = Vᵀ ũ is post-processing).
Test latents are ``W_*ᵀ u`` with W_* = L_ZZ⁻¹ K_Z*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpgp_audit.gp.kernels import Kernel, as_inputs
from dpgp_audit.gp.linalg import cho_solve_lower, psd_cholesky, solve_lower

__all__ = [
    "LaplaceClassifier",
    "NewtonMap",
    "SoRClassifier",
    "check_labels",
    "class_probabilities",
    "logistic",
]


def logistic(f: np.ndarray) -> np.ndarray:
    """σ(f) = 1 / (1 + e^{−f}), computed without overflow."""
    f = np.asarray(f, dtype=float)
    out = np.empty_like(f)
    pos = f >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-f[pos]))
    e = np.exp(f[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def check_labels(y: object, name: str = "y") -> np.ndarray:
    """Labels as floats, raising ``ValueError`` unless every entry is −1 or +1."""
    ya = np.asarray(y, dtype=float)
    if ya.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {ya.shape}")
    bad = ~np.isin(ya, (-1.0, 1.0))
    if np.any(bad):
        raise ValueError(f"{name} must hold class labels in {{-1, +1}}; {int(bad.sum())} "
                         f"entr(y/ies) are not (e.g. {ya[bad][0]!r}); map 0/1 labels with 2y - 1")
    return ya


def class_probabilities(mean: np.ndarray, var: np.ndarray | None = None) -> np.ndarray:
    """P(y = +1): σ(mean), or the probit-averaged σ(mean / sqrt(1 + π var / 8)) given ``var``."""
    mean = np.asarray(mean, dtype=float)
    if var is None:
        return logistic(mean)
    return logistic(mean / np.sqrt(1.0 + np.pi * np.asarray(var, dtype=float) / 8.0))


@dataclass(frozen=True, eq=False)
class NewtonMap:
    """One Newton step as an affine map of the labels: ``new = offset + C @ y``."""

    C: np.ndarray
    offset: np.ndarray

    def apply(self, y: object) -> np.ndarray:
        """The (non-private) step for labels ``y``."""
        return self.offset + self.C @ check_labels(y)


def _weights(f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pi = logistic(f)
    return pi, pi * (1.0 - pi)


@dataclass(frozen=True, eq=False)
class LaplaceClassifier:
    """Laplace-approximation GP classifier on fixed public inputs X (S21 §4).

    Parameters
    ----------
    kernel
        Prior covariance.
    X
        Public training inputs (n, D).
    jitter
        Added to K's diagonal (relative to its mean diagonal) before the solves
        ``K⁻¹ f̂`` used for prediction (S21 §4 warns that K⁻¹ has huge entries).
    """

    kernel: Kernel
    X: np.ndarray
    jitter: float = 1e-8
    K: np.ndarray = field(init=False, repr=False)
    L_K: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        X = as_inputs("X", self.X).copy()
        X.setflags(write=False)
        object.__setattr__(self, "X", X)
        K = self.kernel(X)
        K.setflags(write=False)
        object.__setattr__(self, "K", K)
        scale = float(np.mean(np.diag(K)))
        object.__setattr__(self, "L_K", psd_cholesky(K, jitter=self.jitter * scale, name="K"))

    @property
    def n(self) -> int:
        """Number of training points."""
        return int(self.X.shape[0])

    def _B(self, f: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pi, w = _weights(f)
        s = np.sqrt(w)
        B = np.eye(self.n) + s[:, None] * self.K * s[None, :]
        return pi, s, psd_cholesky(B, name="B = I + W^1/2 K W^1/2")

    def newton_map(self, f_hat: object | None = None) -> NewtonMap:
        """The Newton step from ``f_hat`` (default 0) as ``offset + C y`` (S21 eqs. 10–11)."""
        f = np.zeros(self.n) if f_hat is None else np.asarray(f_hat, dtype=float)
        if f.shape != (self.n,):
            raise ValueError(f"f_hat must have shape ({self.n},), got {f.shape}")
        pi, s, L_B = self._B(f)
        V = solve_lower(L_B, s[:, None] * self.K)  # L_B⁻¹ W^½ K
        A = self.K - V.T @ V  # (K⁻¹ + W)⁻¹, R&W eq. 3.27
        A = 0.5 * (A + A.T)
        C = 0.5 * A
        offset = A @ (pi * (1.0 - pi) * f + 0.5 - pi)
        return NewtonMap(C, offset)

    def newton_step(self, f_hat: object | None, y: object) -> np.ndarray:
        """One non-private Newton step (R&W eq. 3.18)."""
        return self.newton_map(f_hat).apply(y)

    def mode(self, y: object, n_iter: int = 20) -> np.ndarray:
        """Non-private posterior mode after ``n_iter`` Newton steps from 0 (S21 §6.5's baseline)."""
        y = check_labels(y)
        f = np.zeros(self.n)
        for _ in range(int(n_iter)):
            f = self.newton_step(f, y)
        return f

    def predict_latent(self, f_hat: object, Xs: object) -> tuple[np.ndarray, np.ndarray]:
        """Latent mean ``k_*ᵀ K⁻¹ f̂`` and variance ``k_** − k_*ᵀ W^½ B⁻¹ W^½ k_*`` (S21 §4)."""
        f = np.asarray(f_hat, dtype=float)
        if f.shape != (self.n,):
            raise ValueError(f"f_hat must have shape ({self.n},), got {f.shape}")
        Xs_a = as_inputs("Xs", Xs)
        Ks = self.kernel(Xs_a, self.X)  # (m, n)
        mean = Ks @ cho_solve_lower(self.L_K, f)
        _, s, L_B = self._B(f)
        v = solve_lower(L_B, s[:, None] * Ks.T)
        var = self.kernel.diag(Xs_a) - np.einsum("ij,ij->j", v, v)
        return mean, np.maximum(var, 0.0)

    def predict_proba(self, f_hat: object, Xs: object, *, averaged: bool = True) -> np.ndarray:
        """P(y* = +1) at ``Xs`` (probit-averaged over the latent variance by default)."""
        mean, var = self.predict_latent(f_hat, Xs)
        return class_probabilities(mean, var if averaged else None)


@dataclass(frozen=True, eq=False)
class SoRClassifier:
    """Laplace classification with the Subset-of-Regressors prior K ≈ K_fZ K_ZZ⁻¹ K_Zf (S21 §4.1).

    Latent vectors are carried in the M-dimensional inducing space: ``f = Vᵀ u``.
    ``Z`` must be a function of the public inputs only (e.g.
    :func:`dpgp_audit.gp.inducing.kmeans_inducing`).
    """

    kernel: Kernel
    X: np.ndarray
    Z: np.ndarray
    jitter: float = 1e-8
    L_zz: np.ndarray = field(init=False, repr=False)
    V: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        X = as_inputs("X", self.X).copy()
        Z = as_inputs("Z", self.Z).copy()
        if X.shape[1] != Z.shape[1]:
            raise ValueError(f"X has D = {X.shape[1]} but Z has D = {Z.shape[1]}")
        for a in (X, Z):
            a.setflags(write=False)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "Z", Z)
        Kzz = self.kernel(Z)
        scale = float(np.mean(np.diag(Kzz)))
        L = psd_cholesky(Kzz, jitter=self.jitter * scale, name="K_ZZ")
        object.__setattr__(self, "L_zz", L)
        object.__setattr__(self, "V", solve_lower(L, self.kernel(Z, X)))

    @property
    def n(self) -> int:
        """Number of training points."""
        return int(self.X.shape[0])

    @property
    def m(self) -> int:
        """Number of inducing inputs."""
        return int(self.Z.shape[0])

    def latent(self, u: object) -> np.ndarray:
        """Training latents ``f = Vᵀ u``."""
        return self.V.T @ np.asarray(u, dtype=float)

    def newton_map(self, u_hat: object | None = None) -> NewtonMap:
        """Newton step in inducing space: ``u_new = offset_u + C_u y`` (module docstring)."""
        u = np.zeros(self.m) if u_hat is None else np.asarray(u_hat, dtype=float)
        if u.shape != (self.m,):
            raise ValueError(f"u_hat must have shape ({self.m},), got {u.shape}")
        f = self.latent(u)
        pi, w = _weights(f)
        A = np.eye(self.m) + (self.V * w[None, :]) @ self.V.T
        L_A = psd_cholesky(0.5 * (A + A.T), name="I + V W V^T")
        G = cho_solve_lower(L_A, self.V)  # (I + V W Vᵀ)⁻¹ V, (M, n)
        return NewtonMap(0.5 * G, G @ (w * f + 0.5 - pi))

    def newton_step(self, u_hat: object | None, y: object) -> np.ndarray:
        """One non-private Newton step in inducing space."""
        return self.newton_map(u_hat).apply(y)

    def mode(self, y: object, n_iter: int = 20) -> np.ndarray:
        """Non-private mode (inducing-space u) after ``n_iter`` steps from 0."""
        y = check_labels(y)
        u = np.zeros(self.m)
        for _ in range(int(n_iter)):
            u = self.newton_step(u, y)
        return u

    def predict_latent(self, u_hat: object, Xs: object) -> tuple[np.ndarray, np.ndarray]:
        """SoR latent mean ``W_*ᵀ u`` and variance ``W_*ᵀ (I + V W Vᵀ)⁻¹ W_*`` at ``Xs``."""
        u = np.asarray(u_hat, dtype=float)
        Xs_a = as_inputs("Xs", Xs)
        Ws = solve_lower(self.L_zz, self.kernel(self.Z, Xs_a))
        _, w = _weights(self.latent(u))
        A = np.eye(self.m) + (self.V * w[None, :]) @ self.V.T
        L_A = psd_cholesky(0.5 * (A + A.T), name="I + V W V^T")
        v = solve_lower(L_A, Ws)
        return Ws.T @ u, np.einsum("ij,ij->j", v, v)

    def predict_proba(self, u_hat: object, Xs: object, *, averaged: bool = True) -> np.ndarray:
        """P(y* = +1) at ``Xs``."""
        mean, var = self.predict_latent(u_hat, Xs)
        return class_probabilities(mean, var if averaged else None)
