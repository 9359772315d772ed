"""S18.4 — DP hyperparameter selection: exponential mechanism on −SSE of K-fold CV.

S18-supp "Hyperparameter selection": for each candidate configuration r (kernel,
noise variance) compute the sum of squared errors of K-fold cross-validation, with each
prediction error clipped to ±4d, and select r with probability ∝ exp(ε u_r / (2 Δu)),
u_r = −SSE_r, Δu = max_r Δ_r (S18-supp, the Δu display).

Sensitivity of one configuration's SSE under outputs-only neighbours (|y_j − y_j′| ≤ d).
Point j is a test point in exactly one fold and a training point in the other K − 1,
where it moves the fold's predictions by t·c_jk (|t| ≤ d, c_jk = column j of that fold's
C = K_*f K⁻¹):

* the paper (:func:`s18_sse_sensitivity`): 9d² + Σ_{K−1 largest} d² max_j ‖c_jk‖²;
* corrected (:func:`clipped_sse_sensitivity`): the change of a clipped squared error is
  |ẽ′² − ẽ²| = |ẽ′ − ẽ|·|ẽ′ + ẽ| ≤ min(|δ_i|, 2c)·2c with c = 4d, so a training-fold
  term is max_j Σ_i min(2c·d|c_ijk|, 4c²) and the test term 2c·d = 8d².

The paper's training term d²‖c_jk‖² is the change of ‖δ‖² alone; the change of
‖e + δ‖² also contains the cross term 2eᵀδ, which dominates whenever the errors are not
small (up to 8d²‖c_jk‖₁). The sensitivity checker finds neighbours that exceed the
paper's bound; ``planted/s18-sse-sensitivity`` registers that version.

Both the utility and the sensitivity are pluggable (S21 Alg. 1 extends them: expected DP
noise in the SSE, maximum over configurations, dropping configurations).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import as_finite_array, check_epsilon, check_positive_int, check_rng
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.kernels import Kernel
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.norms import Linf
from dpgp_audit.privacy.claims import PureDP, outputs_only
from dpgp_audit.privacy.mechanisms import exponential_mechanism, exponential_probabilities

__all__ = [
    "GPConfig",
    "HyperparameterSelection",
    "clipped_sse_sensitivity",
    "fold_cloaking_matrices",
    "fold_sse",
    "kfold_folds",
    "s18_sse_sensitivity",
]

SensitivityFn = Callable[[Sequence[np.ndarray], float, float], float]


@dataclass(frozen=True)
class GPConfig:
    """One candidate: a kernel and a Gaussian noise variance."""

    kernel: Kernel
    noise_variance: float
    label: str = ""


def kfold_folds(n: int, n_folds: int, rng: np.random.Generator | None = None,
                ) -> list[np.ndarray]:
    """Test-index arrays of a K-fold partition: interleaved (i mod K) or random with ``rng``.

    The partition uses only n (public), never the data.
    """
    n = check_positive_int("n", n)
    n_folds = check_positive_int("n_folds", n_folds)
    if not 2 <= n_folds <= n:
        raise ValueError(f"n_folds must lie in [2, n={n}], got {n_folds}")
    order = np.arange(n) if rng is None else check_rng(rng).permutation(n)
    return [np.sort(order[k::n_folds]) for k in range(n_folds)]


def fold_cloaking_matrices(X: np.ndarray, config: GPConfig,
                           folds: Sequence[np.ndarray]) -> list[np.ndarray]:
    """C_k = K_{test,train} (K_train + σ² I)⁻¹ per fold (public: X only)."""
    X = as_finite_array("X", X, ndim=2)
    out = []
    n = X.shape[0]
    for test in folds:
        train = np.setdiff1d(np.arange(n), test)
        fitted = ExactGP(config.kernel, config.noise_variance).fit(X[train], np.zeros(train.size))
        out.append(fitted.mean_weights(X[test]))
    return out


def fold_sse(y: np.ndarray, folds: Sequence[np.ndarray], C_folds: Sequence[np.ndarray],
             clip: float) -> np.ndarray:
    """Per-fold SSE of the GP predictions with errors clipped to ±clip (S18-supp)."""
    y = np.asarray(y, dtype=float)
    n = y.size
    out = np.empty(len(folds))
    for k, (test, C) in enumerate(zip(folds, C_folds, strict=True)):
        train = np.setdiff1d(np.arange(n), test)
        err = np.clip(C @ y[train] - y[test], -clip, clip)
        out[k] = float(err @ err)
    return out


def s18_sse_sensitivity(C_folds: Sequence[np.ndarray], d: float, clip: float) -> float:
    """S18-supp bound, verbatim: 9d² + Σ over the K−1 largest folds of d² max_j ‖c_jk‖².

    ``clip`` is unused (the paper fixes it at 4d). NOT a valid bound: see the module notes.
    """
    per_fold = sorted((d**2 * float(np.max(np.sum(C**2, axis=0))) for C in C_folds),
                      reverse=True)
    return 9.0 * d**2 + float(sum(per_fold[: len(C_folds) - 1]))


def clipped_sse_sensitivity(C_folds: Sequence[np.ndarray], d: float, clip: float) -> float:
    """Valid bound for the SSE with errors clipped to ±clip (module notes):
    2·clip·min(d, 2·clip) + Σ over the K−1 largest folds of max_j Σ_i min(2·clip·d|c_ijk|, 4·clip²).
    """
    per_fold = sorted(
        (float(np.max(np.sum(np.minimum(2 * clip * d * np.abs(C), 4 * clip**2), axis=0)))
         for C in C_folds), reverse=True)
    return 2.0 * clip * min(d, 2.0 * clip) + float(sum(per_fold[: len(C_folds) - 1]))


@dataclass(frozen=True, eq=False)
class HyperparameterSelection:
    """S18.4: ε-DP choice of a GP configuration by the exponential mechanism on −SSE.

    Parameters
    ----------
    X
        Public inputs.
    configs
        Candidate configurations.
    d
        Outputs-only neighbour bound.
    epsilon
        Privacy of the selection.
    n_folds
        K of K-fold cross-validation.
    folds
        Optional explicit partition (test-index arrays); default interleaved.
    clip_factor
        Errors are clipped to ±clip_factor·d (S18-supp: 4).
    sensitivity
        ``sensitivity(C_folds, d, clip) -> float`` per configuration; default the valid
        :func:`clipped_sse_sensitivity`; :func:`s18_sse_sensitivity` is the paper's.
    offsets
        Optional data-independent constant added to each configuration's SSE (S21: the
        expected DP-noise contribution); it does not change the sensitivity.
    """

    X: np.ndarray
    configs: tuple
    d: float
    epsilon: float
    n_folds: int = 5
    folds: tuple | None = None
    clip_factor: float = 4.0
    sensitivity: SensitivityFn = clipped_sse_sensitivity
    offsets: np.ndarray | None = None
    C_folds: tuple = field(init=False, repr=False)
    sensitivities: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        X = as_finite_array("X", self.X, ndim=(1, 2))
        X = X[:, None] if X.ndim == 1 else X
        object.__setattr__(self, "X", X)
        check_epsilon(self.epsilon)
        if not (np.isfinite(self.d) and self.d > 0):
            raise ValueError(f"d must be finite and > 0, got {self.d!r}")
        if not self.configs:
            raise ValueError("configs must hold at least one configuration")
        folds = tuple(kfold_folds(X.shape[0], self.n_folds) if self.folds is None
                      else (np.asarray(f, dtype=np.int64) for f in self.folds))
        object.__setattr__(self, "folds", folds)
        C_folds = tuple(tuple(fold_cloaking_matrices(X, c, folds)) for c in self.configs)
        object.__setattr__(self, "C_folds", C_folds)
        sens = np.array([self.sensitivity(Cs, float(self.d), self.clip) for Cs in C_folds])
        object.__setattr__(self, "sensitivities", sens)
        if self.offsets is not None and np.shape(self.offsets) != (len(self.configs),):
            raise ValueError("offsets must have one entry per configuration")

    @property
    def clip(self) -> float:
        """The error clipping threshold ±clip_factor·d."""
        return float(self.clip_factor) * float(self.d)

    @property
    def delta_u(self) -> float:
        """Δu = max over configurations of the SSE sensitivity."""
        return float(np.max(self.sensitivities))

    @property
    def claim(self) -> PureDP:
        """ε-DP (exponential mechanism), outputs-only neighbours."""
        return PureDP(epsilon=self.epsilon, relation=outputs_only(self.d),
                      note=f"exponential mechanism, sensitivity={self.sensitivity.__name__}")

    @property
    def norm(self) -> Linf:
        """Every utility must move by at most Δu."""
        return Linf()

    def sensitivity_bound(self) -> float:
        """Δu."""
        return self.delta_u

    def _y(self, data: Dataset) -> np.ndarray:
        if not isinstance(data, Dataset):
            raise TypeError(f"data must be a Dataset, got {type(data).__name__}")
        if data.X.shape != self.X.shape or not np.array_equal(data.X, self.X):
            raise ValueError("data.X differs from the public inputs X")
        return data.y

    def sse(self, data: Dataset) -> np.ndarray:
        """Cross-validated SSE per configuration."""
        y = self._y(data)
        out = np.array([fold_sse(y, self.folds, Cs, self.clip).sum() for Cs in self.C_folds])
        return out if self.offsets is None else out + np.asarray(self.offsets, dtype=float)

    def query(self, data: Dataset) -> np.ndarray:
        """Utilities u_r = −SSE_r."""
        return -self.sse(data)

    def probabilities(self, data: Dataset) -> np.ndarray:
        """Selection probabilities exp(ε u / (2Δu)) / Z."""
        return exponential_probabilities(self.query(data), self.epsilon, self.delta_u)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` selected configuration indices, shape (n,)."""
        return exponential_mechanism(self.query(data), self.epsilon, self.delta_u, n, rng)


# --------------------------------------------------------------------------- registry
def default_selection_data() -> Dataset:
    """Deterministic noisy 1-D data (alternating residuals stress the SSE sensitivity)."""
    x = np.linspace(0.0, 10.0, 24)
    y = np.sin(x) + 0.8 * np.where(np.arange(24) % 2 == 0, 1.0, -1.0)
    return Dataset(x[:, None], np.clip(y, -2.0, 2.0), name="selection-default")


def default_configs() -> tuple[GPConfig, ...]:
    """Four EQ lengthscales at noise variance 0.1."""
    from dpgp_audit.gp.kernels import EQ

    return tuple(GPConfig(EQ(lengthscale=ls), 0.1, f"l={ls:g}") for ls in (0.3, 1.0, 3.0, 10.0))


def _build_selection(data: Dataset, *, epsilon: float, d: float = 1.0, n_folds: int = 4,
                     **_: object) -> HyperparameterSelection:
    return HyperparameterSelection(data.X, default_configs(), d, epsilon, n_folds=n_folds)
