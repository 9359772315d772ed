"""Private hyperparameter learning for DP-SVGP (catalogue H.3, H.4; H §4, Alg. 2).

Each draw of the Liu–Talwar loop (:func:`~dpgp_audit.privacy.random_stopping.random_stopping`)
picks a candidate θ_i = (kernel, σ), runs DP-GP inference on the training set at
(ε, δ) (H Alg. 1), evaluates the per-point validation log-likelihoods of H eq.
(18), clips them to [C − R, C + R] (H App. B, eqs. 30–33) and releases their mean
with CoinPress at ρ_CP from (ε, δ) (H eq. 19). By H Lemma 3 one draw is (ε, δ)-DP
with respect to (train, validation); the loop is (ε_tot, δ_tot)-DP (H Thm 4).

Two readings of H Alg. 2 made explicit:

* the validity test "ṽ ≤ C_CP + R_CP" compares the **mean** estimate with the
  per-point upper bound (ṽ itself is |V| times the mean, and comparing it with a
  per-point bound would reject every good model when L_max > 0);
* the noise-free statistics of each candidate are computed once and reused
  with fresh noise in every draw: the output distribution is unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.contract import COST_CLASSES
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.gp.kernels import EQ, Kernel
from dpgp_audit.gp.svgp import gaussian_log_density
from dpgp_audit.methods.honkela.bounds import upper_dim, upper_unvec
from dpgp_audit.methods.honkela.dpsvgp import DPSVGPStats
from dpgp_audit.methods.honkela.posterior import RegularisationError, noise_aware_qu
from dpgp_audit.privacy.claims import ApproxDP, whole_rows
from dpgp_audit.privacy.coinpress import coinpress_mean
from dpgp_audit.privacy.conversions import zcdp_from_epsilon_delta
from dpgp_audit.privacy.random_stopping import (
    RandomStoppingBudget,
    SelectionResult,
    random_stopping,
    random_stopping_budget,
)

__all__ = ["Candidate", "DPHyperparameterSearch", "loglik_clip_bounds"]


@dataclass(frozen=True)
class Candidate:
    """One hyperparameter setting θ = (kernel, observation noise standard deviation)."""

    kernel: Kernel
    noise_std: float

    def __post_init__(self) -> None:
        if not (self.noise_std > 0 and math.isfinite(self.noise_std)):
            raise ValueError(f"noise_std must be finite and > 0, got {self.noise_std!r}")


def loglik_clip_bounds(y_bound: float, noise_std: float) -> tuple[float, float]:
    """CoinPress centre and radius (C, R) of H eqs. (32)–(33).

    L_max = −½ ln 2π − ln σ (eq. 30), L_min = L_max − 4 R_y²/(2σ²) (eq. 31),
    so R = R_y²/σ² and C = L_max − R_y²/σ².
    """
    l_max = -0.5 * math.log(2.0 * math.pi) - math.log(noise_std)
    R = y_bound * y_bound / (noise_std * noise_std)
    return l_max - R, R


@dataclass(frozen=True)
class _Prepared:
    mech: DPSVGPStats
    A: np.ndarray
    b: np.ndarray
    Kzz: np.ndarray
    W: np.ndarray          # K_VZ K_ZZ^{-1}
    q_diag: np.ndarray     # k_VV − diag(Q_VV)
    noise_var: float
    centre: float
    radius: float


@dataclass(frozen=True, eq=False)
class DPHyperparameterSearch:
    """H Alg. 2 over ``candidates`` on public inducing inputs ``Z``.

    The private dataset passed to :meth:`run` / :meth:`sample` holds the
    training rows first and then the validation rows; ``n_train`` (public)
    says where the split is.
    """

    #: Each draw fits and scores candidates until the random stop (A.6's draw caps).
    declared_cost_per_draw_s: ClassVar[float] = COST_CLASSES["solve"]

    Z: np.ndarray
    candidates: tuple[Candidate, ...]
    y_bound: float
    epsilon_tot: float
    delta_tot: float
    gamma: float
    n_train: int
    rk_method: str = "min-distance"
    ratio: float = 1.0
    correction: str = "paper"
    clip: bool = False
    budget: RandomStoppingBudget = field(init=False)
    rho_cp: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "candidates", tuple(self.candidates))
        if not self.candidates:
            raise ValueError("candidates must not be empty")
        check_positive_int("n_train", self.n_train)
        budget = random_stopping_budget(self.epsilon_tot, self.delta_tot, self.gamma)
        object.__setattr__(self, "budget", budget)
        object.__setattr__(self, "rho_cp", zcdp_from_epsilon_delta(budget.epsilon, budget.delta))

    @property
    def claim(self) -> ApproxDP:
        """(ε_tot, δ_tot)-DP for (train, validation) under whole-row substitution (H Thm 4)."""
        return ApproxDP(epsilon=self.budget.achieved_epsilon_tot, delta=self.delta_tot,
                        relation=whole_rows(self.y_bound),
                        note=f"Liu-Talwar random stopping, gamma={self.gamma:g}, "
                             f"T={self.budget.T}, {len(self.candidates)} candidates, Z public")

    def mechanisms(self) -> list[DPSVGPStats]:
        """The per-candidate H.1 mechanisms at the per-draw (ε, δ)."""
        return [DPSVGPStats(Z=self.Z, kernel=c.kernel, y_bound=self.y_bound,
                            epsilon=self.budget.epsilon, delta=self.budget.delta,
                            ratio=self.ratio, rk_method=self.rk_method, clip=self.clip)
                for c in self.candidates]

    def _split(self, data: Dataset) -> tuple[Dataset, Dataset]:
        if not (0 < self.n_train < data.n):
            raise ValueError(f"n_train = {self.n_train} must leave rows for validation "
                             f"(dataset has {data.n})")
        tr = Dataset(data.X[:self.n_train], data.y[:self.n_train])
        va = Dataset(data.X[self.n_train:], data.y[self.n_train:])
        return tr, va

    def _prepare(self, data: Dataset) -> tuple[list[_Prepared], Dataset]:
        train, valid = self._split(data)
        prepared = []
        for cand, mech in zip(self.candidates, self.mechanisms(), strict=True):
            mean = mech.mean(train)
            d = mech.n_inducing
            Kzz = np.asarray(mech.Kzz)
            L = np.linalg.cholesky(Kzz + 1e-8 * np.mean(np.diag(Kzz)) * np.eye(d))
            Kvz = cand.kernel(valid.X, mech.Z)
            LiKzv = np.linalg.solve(L, Kvz.T)
            W = np.linalg.solve(L.T, LiKzv).T
            q_diag = cand.kernel.diag(valid.X) - np.sum(LiKzv**2, axis=0)
            centre, radius = loglik_clip_bounds(self.y_bound, cand.noise_std)
            prepared.append(_Prepared(mech, mean[:d], mean[d:], Kzz, W, q_diag,
                                      cand.noise_std**2, centre, radius))
        return prepared, valid

    def _draw(self, p: _Prepared, valid_y: np.ndarray, rng: np.random.Generator
              ) -> tuple[float, tuple]:
        d = p.A.shape[0]
        A_n = p.A + p.mech.sigma_a * rng.standard_normal(d)
        b_n = p.b + p.mech.sigma_b * rng.standard_normal(upper_dim(d))
        try:
            qu = noise_aware_qu(p.Kzz, A_n, upper_unvec(b_n, d), p.noise_var, p.mech.sigma_a,
                                p.mech.sigma_b, correction=self.correction)  # type: ignore[arg-type]
        except RegularisationError:
            qu = noise_aware_qu(p.Kzz, A_n, upper_unvec(b_n, d), p.noise_var, p.mech.sigma_a,
                                p.mech.sigma_b, correction=self.correction,  # type: ignore[arg-type]
                                on_not_pd="inflate")
        mean = p.W @ qu.m
        var = np.maximum(p.q_diag + np.sum((p.W @ qu.S) * p.W, axis=1), 0.0) + p.noise_var
        ll = gaussian_log_density(valid_y, mean, var)            # H eq. (18), per point
        ll = np.clip(ll, p.centre - p.radius, p.centre + p.radius)
        est = coinpress_mean(ll, p.centre, p.radius, self.rho_cp, rng).estimate
        if est > p.centre + p.radius:                          # H Alg. 2: ignore such values
            return -math.inf, (qu, est)
        return len(valid_y) * est, (qu, est)

    def run(self, data: Dataset, rng: np.random.Generator) -> SelectionResult:
        """One run of H Alg. 2; ``payload`` is (q(u), mean estimate) of the winner."""
        rng = check_rng(rng)
        prepared, valid = self._prepare(data)
        return random_stopping(lambda i, g: self._draw(prepared[i], valid.y, g),
                               len(self.candidates), self.budget, rng)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` independent selections: the chosen index (−1 if none accepted), shape (n, 1)."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        prepared, valid = self._prepare(data)
        out = np.empty((n, 1))
        for j in range(n):
            res = random_stopping(lambda i, g: self._draw(prepared[i], valid.y, g),
                                  len(self.candidates), self.budget, rng)
            out[j, 0] = res.index
        return out


# ----------------------------------------------------------------------------- registry


def default_search_dataset(n: int = 20, n_valid: int = 5) -> Dataset:
    """Sine data on [0, 10] with every ``n // n_valid``-th point moved to the end (validation).

    Deterministic; the last ``n_valid`` rows are the validation set, spread over the domain.
    """
    x = np.linspace(0.0, 10.0, n)
    step = max(n // n_valid, 1)
    valid = np.arange(step - 1, n, step)[:n_valid]
    order = np.concatenate([np.setdiff1d(np.arange(n), valid), valid])
    return Dataset(x[order, None], np.sin(x[order]), name="default-sine-train-valid")


def _build_search(data: Dataset, *, epsilon: float, delta: float, gamma: float = 0.5,
                  n_valid: int = 5, y_bound: float = 1.0, n_inducing: int = 5,
                  domain: tuple[float, float] = (0.0, 10.0),
                  lengthscales: tuple[float, ...] = (1.0, 3.0),
                  noise_stds: tuple[float, ...] = (0.1, 0.5)) -> DPHyperparameterSearch:
    """Registry factory: a small grid of (lengthscale, noise) candidates, last rows validate."""
    if data.n <= n_valid:
        raise ValueError(f"the search trains on every row but the last n_valid = {n_valid}, "
                         f"which validate: it needs more than {n_valid} rows, the data has "
                         f"{data.n}")
    cands = tuple(Candidate(EQ(lengthscale=ell), s) for ell in lengthscales for s in noise_stds)
    return DPHyperparameterSearch(Z=np.linspace(domain[0], domain[1], n_inducing)[:, None],
                                  candidates=cands, y_bound=y_bound, epsilon_tot=epsilon,
                                  delta_tot=delta, gamma=gamma, n_train=data.n - n_valid)
