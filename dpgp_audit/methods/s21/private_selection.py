"""S21.5: private hyperparameter selection by S21 Alg. 1 (exponential mechanism on CV SSE).

For every configuration θ, :mod:`dpgp_audit.methods.s21.cv_utility` gives the
κ-fold cross-validated SSE of the *cloaked* predictions (errors clipped to ±4d,
the expected DP noise of each fold's cloaking release included) and its
sensitivity Δ(θ). The mechanism releases one configuration index with

    P(θ) ∝ exp(−ε SSE(θ) / (2 Δu)),   Δu = max_θ Δ(θ)   (S21 eqs. 12, 14; Alg. 1 line 15),

optionally after dropping configurations whose Δ(θ) exceeds a public threshold
(S21 §5: Δ(θ) depends on the inputs only, so dropping spends no privacy).

The DP-noise variances come from :class:`~dpgp_audit.methods.s18.cloaking.CloakingMechanism`
on each fold's C (Alg. 1 line 7), i.e. exactly the noise the regression
release with (ε_reg, δ_reg) would add. Selection is pure ε-DP; the later
regression release spends its own budget (S21 §6.7 uses ε = 1 + 1).

It extends S18.4's :class:`~dpgp_audit.methods.s18.hyperparameter_selection.HyperparameterSelection`
(which clips noise-free errors and adds the DP noise as a constant) with the
S21 ingredients: the noise inside the clip, any linear model per configuration,
the per-row (same j in every fold) sensitivity, and threshold dropping; both
sample with the toolbox's exponential mechanism.

The ``unclipped_utility`` switch reproduces a reading of Alg. 1 line 9 (and the
paper's §5.1 numbers: 1597 > 4 · (4d)² = 256 cannot be a clipped SSE) in which the
utility uses the unclipped SSE; it is the planted bug ``planted/s21-unclipped-sse``
of :mod:`dpgp_audit.bugs.s21`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import check_positive_float, check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset, check_public_inputs
from dpgp_audit.gp.kernels import EQ, as_inputs
from dpgp_audit.methods.s18.cloaking import CloakingMechanism
from dpgp_audit.methods.s21.cv_utility import (
    CloakingMap,
    CVModel,
    SensitivityRule,
    config_sensitivity,
    cv_sse,
    gp_cloaking_matrix,
    kfold_test_sets,
    prepare_folds,
)
from dpgp_audit.norms import Linf
from dpgp_audit.privacy.claims import PureDP, outputs_only
from dpgp_audit.privacy.mechanisms import exponential_log_probabilities

__all__ = ["CVSelection", "cloaking_noise_variance", "gp_grid"]


def cloaking_noise_variance(d: float, epsilon: float, delta: float, method: str = "hall"):
    """``C -> σ² diag(M)``: the per-output variance of the S18 cloaking release of C y."""

    def variance(C: np.ndarray) -> np.ndarray:
        mech = CloakingMechanism(C, d, epsilon, delta, method=method)
        return mech.sigma**2 * np.clip(np.diag(np.asarray(mech.M)), 0.0, None)

    return variance


def gp_grid(lengthscales: Sequence[float], noise_variances: Sequence[float],
            kernel_variances: Sequence[float]) -> list[tuple[str, CloakingMap]]:
    """The S21 §6.7 grid (EQ kernel): every (lengthscale, noise variance, kernel variance)."""
    out = []
    for ls in lengthscales:
        for nv in noise_variances:
            for kv in kernel_variances:
                out.append((f"ls={ls:g}, noise={nv:g}, kvar={kv:g}",
                            gp_cloaking_matrix(EQ(ls, variance=kv), nv)))
    return out


@dataclass(frozen=True, eq=False)
class CVSelection:
    """S21 Alg. 1 as a mechanism: releases the index of the selected configuration.

    Parameters
    ----------
    X
        Public inputs.
    configs
        ``(label, cloaking map)`` per configuration θ (e.g. :func:`gp_grid`).
    d
        Outputs-only data sensitivity |y_i − y_i′| ≤ d.
    epsilon
        Budget of the selection (pure ε-DP).
    folds
        κ (contiguous folds) or explicit test index sets.
    reg_epsilon, reg_delta, method
        The regression release whose expected noise enters the SSE (Alg. 1 line 7);
        ``include_noise=False`` leaves it out.
    rule
        Sensitivity rule: ``"valid"`` (default), or the paper's ``"text"`` / ``"algorithm"``
        (both undercount; for comparison and auditing only).
    threshold
        Drop configurations with Δ(θ) above it (public); ``None`` keeps all.
    unclipped_utility
        PLANTED BUG switch: utility from the unclipped SSE (sensitivity still clipped).
    """

    X: np.ndarray
    configs: tuple
    d: float
    epsilon: float
    folds: int | Sequence[np.ndarray] = 5
    reg_epsilon: float = 1.0
    reg_delta: float = 0.01
    method: str = "hall"
    include_noise: bool = True
    rule: SensitivityRule = "valid"
    threshold: float | None = None
    unclipped_utility: bool = False
    models: tuple[CVModel, ...] = field(init=False, repr=False)
    sensitivities: np.ndarray = field(init=False, repr=False)
    kept: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        X = as_inputs("X", self.X).copy()
        X.setflags(write=False)
        object.__setattr__(self, "X", X)
        configs = tuple(self.configs)
        if not configs:
            raise ValueError("configs must hold at least one configuration")
        object.__setattr__(self, "configs", configs)
        d = check_positive_float("d", self.d)
        if not (math.isfinite(float(self.epsilon)) and self.epsilon > 0):
            raise ValueError(f"epsilon must be finite and > 0, got {self.epsilon!r}")
        tests = (kfold_test_sets(X.shape[0], self.folds) if isinstance(self.folds, int | np.integer)
                 else [np.asarray(t, dtype=int) for t in self.folds])
        noise = (cloaking_noise_variance(d, self.reg_epsilon, self.reg_delta, self.method)
                 if self.include_noise else None)
        models = tuple(prepare_folds(X, cloak, tests, noise, label=label)
                       for label, cloak in configs)
        sens = np.array([config_sensitivity(m, d, self.rule) for m in models])
        kept = (np.arange(len(models)) if self.threshold is None
                else np.flatnonzero(sens <= float(self.threshold)))
        if kept.size == 0:
            raise ValueError(f"threshold={self.threshold!r} drops every configuration "
                             f"(smallest sensitivity {sens.min():.4g})")
        for a in (sens, kept):
            a.setflags(write=False)
        object.__setattr__(self, "models", models)
        object.__setattr__(self, "sensitivities", sens)
        object.__setattr__(self, "kept", kept)

    # -- contract -----------------------------------------------------------------------
    @property
    def claim(self) -> PureDP:
        """Pure ε-DP under outputs-only neighbours with bound d."""
        note = f"S21 Alg. 1, sensitivity rule={self.rule}"
        if self.rule != "valid":
            note += " (paper rule: undercounts the SSE sensitivity)"
        return PureDP(epsilon=self.epsilon, relation=outputs_only(self.d),
                      proven=self.rule == "valid" and not self.unclipped_utility, note=note)

    @property
    def norm(self) -> Linf:
        """The exponential mechanism needs the utility's sup-norm sensitivity."""
        return Linf()

    def sensitivity_bound(self) -> float:
        """Δu = max over the kept configurations of Δ(θ) (S21 eq. 14)."""
        return float(np.max(self.sensitivities[self.kept]))

    def _check(self, data: Dataset) -> Dataset:
        return check_public_inputs(data, self.X)

    def sse(self, data: Dataset) -> np.ndarray:
        """(Expected) CV SSE of every configuration (all, not only the kept ones)."""
        y = self._check(data).y
        return np.array([cv_sse(m, y, self.d, clip=not self.unclipped_utility,
                                include_noise=self.include_noise) for m in self.models])

    def query(self, data: Dataset) -> np.ndarray:
        """Utilities −SSE(θ) of the kept configurations."""
        data = check_dataset(data)
        return -self.sse(data)[self.kept]

    def log_probabilities(self, data: Dataset) -> np.ndarray:
        """Log-probabilities over the kept configurations (S21 eq. 12, log-sum-exp stable)."""
        return exponential_log_probabilities(self.query(data), self.epsilon,
                                             self.sensitivity_bound())

    def probabilities(self, data: Dataset) -> np.ndarray:
        """P(θ) for every configuration (0 for dropped ones)."""
        p = np.zeros(len(self.models))
        p[self.kept] = np.exp(self.log_probabilities(data))
        return p

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` selected configuration indices (into ``configs``), shape (n, 1), as floats."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        logp = self.log_probabilities(data)
        g = rng.gumbel(size=(n, logp.size))
        return self.kept[np.argmax(logp[None, :] + g, axis=1)].astype(float)[:, None]


# --------------------------------------------------------------------------- registry
def default_selection_data() -> Dataset:
    """Deterministic 1-D data (20 points, two sparse outliers), no network."""
    x = np.concatenate([np.linspace(0.0, 5.0, 18), [7.0, 9.0]])
    return Dataset(x[:, None], np.sin(x), name="default-selection")


def default_configs() -> list[tuple[str, CloakingMap]]:
    """The two configurations of the catalogue entry: lengthscales 0.7 and 3."""
    return gp_grid([0.7, 3.0], [0.5], [1.0])


def _build_selection(data: Dataset, *, epsilon: float, d: float = 1.0, folds: int = 3,
                     rule: SensitivityRule = "valid") -> CVSelection:
    return CVSelection(data.X, tuple(default_configs()), d, epsilon, folds=folds, rule=rule)
