"""S21 mechanisms built on the S18 cloaking mechanism (catalogue S21.1–S21.4).

Every mechanism here is "a public linear map C, then cloaking": the map comes
from a different model, the privacy step is always
:class:`dpgp_audit.methods.s18.cloaking.CloakingMechanism` (one cloaking solver in
the kit). Inputs are public (outputs-only relation); each mechanism is built
from ``X`` alone and refuses a dataset with other inputs.

========================================  =========================================  ======
ID                                        linear map C                               d
========================================  =========================================  ======
S21.1/nonstationary-cloaking              K_*f (K + σ²I)⁻¹ with the Gibbs kernel      d
S21.2/sparse-cloaking                     FITC, S21 eq. (9), Z = k-means(X)           d
S21.3/laplace-classification              ½ (K⁻¹ + W)⁻¹, one Newton step (eq. 11)     2
S21.4/sor-classification                  ½ (I + V W Vᵀ)⁻¹ V (SoR, inducing space)    2
========================================  =========================================  ======

Classification labels are ±1, so one changed label moves y_i by 2 (S21 Fig. 7:
"Sensitivity = 2"); the first Newton step starts at f̂ = 0 where π = ½ and the
offset vanishes, so the release is exactly C y + noise.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from dpgp_audit._validation import check_rng
from dpgp_audit.contract import COST_CLASSES
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.gp.gibbs import DensityLengthscale, Gibbs
from dpgp_audit.gp.inducing import kmeans_inducing
from dpgp_audit.gp.kernels import EQ, Kernel, as_inputs
from dpgp_audit.gp.laplace import LaplaceClassifier, SoRClassifier, check_labels
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.gp.sparse import SparseGP
from dpgp_audit.methods.s18.cloaking import CloakedRelease, CloakingMechanism
from dpgp_audit.norms import Mahalanobis
from dpgp_audit.privacy.claims import ApproxDP
from dpgp_audit.privacy.composition import basic_composition, split_budget
from dpgp_audit.privacy.domain import PublicDomain
from dpgp_audit.privacy.float_release import FloatRelease, gaussian_tv_bound

__all__ = [
    "LABEL_DOMAIN",
    "LABEL_SENSITIVITY",
    "InducingPlacement",
    "LaplaceCloakingClassifier",
    "LinearCloakingRelease",
    "SoRCloakingClassifier",
    "TwoStepLaplaceClassifier",
    "nonstationary_cloaking",
    "sparse_cloaking",
]

LABEL_SENSITIVITY = 2.0
"""|y_i − y_i′| for labels in {−1, +1}."""

LABEL_DOMAIN = PublicDomain(1.0, labels=(-1.0, 1.0))
"""The classifiers' public target domain: labels in {−1, +1} (any other target refused)."""

InducingPlacement = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]
"""``(X, m, rng) -> Z``: inducing inputs from the public inputs only (never y)."""


@dataclass(frozen=True, eq=False)
class LinearCloakingRelease(CloakedRelease):
    """A cloaked linear release ``offset + C y + σ z`` on fixed public inputs ``X``.

    Implements Mechanism, GaussianRelease and SensitivityQuery by delegating to
    :class:`CloakingMechanism` (:class:`~dpgp_audit.methods.s18.cloaking.CloakedRelease`:
    the public-input check); adds the label check for classifiers. ``post_var``
    holds the public model variance at the outputs (for plots), when the model has one.
    """

    X: np.ndarray
    mechanism: CloakingMechanism
    offset: np.ndarray | None = None
    labels: bool = False
    post_var: np.ndarray | None = field(default=None, repr=False)
    info: dict = field(default_factory=dict, repr=False)

    def _check(self, data: Dataset) -> Dataset:
        data = self._check_public_inputs(data)
        if self.labels:
            check_labels(data.y, "data.y")
        return data

    @property
    def claim(self) -> ApproxDP:
        """The cloaking claim; for a classifier the domain is the labels {−1, +1}."""
        claim = self.mechanism.claim
        if not self.labels:
            return claim
        import dataclasses

        return dataclasses.replace(claim, domain=LABEL_DOMAIN)

    def noise_std(self) -> np.ndarray:
        """Standard deviation of the DP noise at each output (public)."""
        return self.mechanism.sigma * np.sqrt(np.clip(np.diag(self.mechanism.M), 0.0, None))


class _NewtonStepRelease(ABC):
    """Contract methods of the S21.3/S21.4 classifiers, delegated to their cloaked ``release``.

    Abstract (never released as is): a subclass holds ``release`` (a labelled
    :class:`LinearCloakingRelease` of the first Newton step at f̂ = 0) and ``model``, and
    implements :meth:`predict_proba` (post-processing of one release).
    """

    release: LinearCloakingRelease
    model: LaplaceClassifier | SoRClassifier

    @abstractmethod
    def predict_proba(self, released: np.ndarray, Xs: object, *, averaged: bool = True
                      ) -> np.ndarray:
        """P(y* = +1) at ``Xs`` from one release (post-processing)."""

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP, outputs only with d = 2 (one label flipped)."""
        return self.release.claim

    @property
    def norm(self) -> Mahalanobis:
        """Mahalanobis norm of the noise shape."""
        return self.release.norm

    def sensitivity_bound(self) -> float:
        """2 Δ."""
        return self.release.sensitivity_bound()

    @property
    def noise_factor(self) -> np.ndarray:
        """The public noise factor of the cloaked step (for the grey-box's public basis)."""
        return self.release.noise_factor

    def float_release(self) -> FloatRelease:
        """The public grid the cloaked step is rounded to, and its float total variation."""
        return self.release.float_release()

    def query(self, data: Dataset) -> np.ndarray:
        """Non-private first Newton step C y (SoR: the inducing-space step C_u y)."""
        data = check_dataset(data)
        return self.release.query(data)

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box mean."""
        return self.release.mean(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box covariance."""
        return self.release.cov(data)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` private releases: f̃, shape (n, n_train) (SoR: ũ, shape (n, M))."""
        data = check_dataset(data)
        return self.release.sample(data, n, rng)


def _cloak(C: np.ndarray, d: float, epsilon: float, delta: float, method: str,
           allow_unproven: bool, y_bound: float | None = None,
           clip: bool = False) -> CloakingMechanism:
    return CloakingMechanism(C, d, epsilon, delta, method=method, allow_unproven=allow_unproven,
                             y_bound=y_bound, clip=clip)


# --------------------------------------------------------------------------- S21.1
def nonstationary_cloaking(X: object, Xs: object, *, d: float, epsilon: float, delta: float,
                           bandwidth: float | np.ndarray, m: float | np.ndarray, n_per: float,
                           neighbourhood: float | np.ndarray | None = None,
                           variance: float = 1.0, noise_variance: float = 0.1,
                           method: str = "hall", allow_unproven: bool = False,
                           probes: int = 9) -> LinearCloakingRelease:
    """S21.1: cloaking with the Gibbs kernel whose lengthscale follows the density of X.

    The lengthscale r(x) = [1/m + ρ(x)/n]⁻¹ (S21 §3.1), ρ a KDE of the **public**
    inputs X (or its minimum over a ``neighbourhood``, S21 §6.1); then
    C = K_*f (K + σ² I)⁻¹ with that kernel, cloaked as in S18.
    """
    Xa = as_inputs("X", X)
    ls = DensityLengthscale(Xa, bandwidth, m, n_per, neighbourhood=neighbourhood, probes=probes)
    kernel = Gibbs(ls, variance=variance)
    fitted = ExactGP(kernel, noise_variance).fit(Xa, np.zeros(Xa.shape[0]))
    C = fitted.mean_weights(Xs)
    _, var = fitted.predict(Xs)
    return LinearCloakingRelease(Xa, _cloak(C, d, epsilon, delta, method, allow_unproven),
                                 post_var=var, info={"kernel": kernel, "lengthscale": ls})


# --------------------------------------------------------------------------- S21.2
def sparse_cloaking(X: object, Xs: object, kernel: Kernel, noise_variance: float, *,
                    n_inducing: int, rng: np.random.Generator, d: float, epsilon: float,
                    delta: float, placement: InducingPlacement = kmeans_inducing,
                    approximation: str = "fitc", method: str = "hall",
                    allow_unproven: bool = False, y_bound: float | None = None,
                    clip: bool = False) -> LinearCloakingRelease:
    """S21.2: cloaking the FITC posterior mean, C = k_*M Q_MM⁻¹ K_MN (Λ + σ² I)⁻¹ (eq. 9).

    C is kept as its two factors (k × M and M × n, :meth:`FittedSparseGP.mean_weights_factored`)
    and the cloaking solver works on them, so time is O(n M²) and memory O(n M): no k × n or
    n × n array (``benchmarks/bench_sparse_scale.py``).

    The inducing inputs are ``placement(X, n_inducing, rng)`` — k-means on the
    public inputs by default. No argument carries targets, so they cannot be
    placed using y.

    ``y_bound`` and ``clip`` declare the public target domain |y| <= y_bound, as for
    :class:`~dpgp_audit.methods.s18.cloaking.CloakingMechanism`. At large n the release
    noise is small next to the largest possible output, so the default bound can fail
    the float-safety check; the error names the largest safe bound to declare instead.
    """
    Xa = as_inputs("X", X)
    rng = check_rng(rng)
    Z = as_inputs("Z", placement(np.array(Xa), int(n_inducing), rng))
    fitted = SparseGP(kernel, noise_variance, Z, approximation).fit(Xa, np.zeros(Xa.shape[0]))  # type: ignore[arg-type]
    C = fitted.mean_weights_factored(Xs)  # k × M times M × n: linear in n, no k × n array
    _, var = fitted.predict(Xs)
    return LinearCloakingRelease(Xa, _cloak(C, d, epsilon, delta, method, allow_unproven,
                                            y_bound, clip),
                                 post_var=var, info={"Z": Z})


# --------------------------------------------------------------------------- S21.3
@dataclass(frozen=True, eq=False)
class LaplaceCloakingClassifier(_NewtonStepRelease):
    """S21.3: one private Newton step of Laplace GP classification (S21 §4).

    Releases f̃ = C y + σ z at the training inputs with C = ½ (K⁻¹ + W)⁻¹ at f̂ = 0
    (W = I/4), cloaked with d = 2 (labels ±1). Predictions are post-processing:
    latent mean k_*ᵀ K⁻¹ f̃, variance k_** − k_*ᵀ(K + W⁻¹)⁻¹k_*, class probabilities.
    """

    kernel: Kernel
    X: np.ndarray
    epsilon: float
    delta: float
    method: str = "hall"
    allow_unproven: bool = False
    jitter: float = 1e-8
    model: LaplaceClassifier = field(init=False, repr=False)
    release: LinearCloakingRelease = field(init=False, repr=False)

    def __post_init__(self) -> None:
        model = LaplaceClassifier(self.kernel, self.X, jitter=self.jitter)
        object.__setattr__(self, "X", model.X)
        object.__setattr__(self, "model", model)
        step = model.newton_map(None)  # offset = 0 at f̂ = 0
        mech = _cloak(step.C, LABEL_SENSITIVITY, self.epsilon, self.delta, self.method,
                      self.allow_unproven)
        object.__setattr__(self, "release", LinearCloakingRelease(model.X, mech, labels=True))

    def predict_proba(self, f_tilde: np.ndarray, Xs: object, *, averaged: bool = True
                      ) -> np.ndarray:
        """P(y* = +1) at ``Xs`` from one release (post-processing)."""
        return self.model.predict_proba(f_tilde, Xs, averaged=averaged)


@dataclass(frozen=True, eq=False)
class TwoStepLaplaceClassifier:
    """S21 §6.5's comparison: two private Newton steps with the budget split.

    Step 1 releases f̃₁ with (ε w₁, δ w₁); step 2 is the Newton step from f̃₁
    (its C, W and offset depend only on the already-private f̃₁), released with the
    rest. The whole is (ε, δ)-DP by basic composition. Not a Gaussian release.
    """

    #: Step 2 solves its own cloaking problem per draw (A.6's draw caps).
    declared_cost_per_draw_s: ClassVar[float] = COST_CLASSES["solve"]

    kernel: Kernel
    X: np.ndarray
    epsilon: float
    delta: float
    weights: tuple[float, float] = (0.5, 0.5)
    method: str = "hall"
    jitter: float = 1e-8
    model: LaplaceClassifier = field(init=False, repr=False)
    budgets: tuple = field(init=False, repr=False)

    def __post_init__(self) -> None:
        model = LaplaceClassifier(self.kernel, self.X, jitter=self.jitter)
        object.__setattr__(self, "X", model.X)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "budgets", tuple(split_budget(self.epsilon, self.delta,
                                                               list(self.weights))))

    @property
    def claim(self) -> ApproxDP:
        """Basic composition of the two steps' claims; domain: labels in {−1, +1}."""
        import dataclasses

        from dpgp_audit.privacy.claims import outputs_only

        claim = basic_composition([ApproxDP(epsilon=b.epsilon, delta=b.delta,
                                            relation=outputs_only(LABEL_SENSITIVITY))
                                   for b in self.budgets])
        # both steps are rounded releases (issue 20 §4); step 2's noise shape depends on the
        # released f̃₁, so its float total variation is bounded over every such shape
        n = self.X.shape[0]
        first = self._first().float_tv()
        return dataclasses.replace(claim, domain=LABEL_DOMAIN,
                                   float_tv=first + gaussian_tv_bound(n, n))

    def _first(self) -> CloakingMechanism:
        b1 = self.budgets[0]
        return _cloak(self.model.newton_map(None).C, LABEL_SENSITIVITY, b1.epsilon, b1.delta,
                      self.method, False)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` private f̃₂ vectors, shape (n, n_train) (sequential; one C per draw)."""
        data = check_dataset(data)
        rng = check_rng(rng)
        if not np.array_equal(data.X, self.X):
            raise ValueError("data.X differs from the public inputs X")
        y = check_labels(data.y, "data.y")
        b2 = self.budgets[1]
        first = LinearCloakingRelease(self.X, self._first(), labels=True)
        f1 = first.sample(data, n, rng)
        out = np.empty_like(f1)
        for i in range(n):
            step = self.model.newton_map(f1[i])
            mech = _cloak(step.C, LABEL_SENSITIVITY, b2.epsilon, b2.delta, self.method, False)
            # the public offset (a function of the released f̃₁) inside the exact, rounded sum
            out[i] = mech.sample(Dataset(self.X, y), 1, rng, offset=step.offset)[0]
        return out


# --------------------------------------------------------------------------- S21.4
@dataclass(frozen=True, eq=False)
class SoRCloakingClassifier(_NewtonStepRelease):
    """S21.4: one private Newton step of SoR Laplace classification (S21 §4.1).

    The release is the inducing-space vector ũ = C_u y + σ z with
    C_u = ½ (I + V W Vᵀ)⁻¹ V (M × n, W = I/4 at f̂ = 0), cloaked with d = 2;
    f̃ = Vᵀ ũ and test predictions are post-processing. Inducing inputs come from
    ``placement(X, n_inducing, rng)`` (k-means on the public inputs).
    """

    kernel: Kernel
    X: np.ndarray
    n_inducing: int
    rng: np.random.Generator = field(repr=False)
    epsilon: float = 1.0
    delta: float = 0.01
    method: str = "hall"
    allow_unproven: bool = False
    placement: InducingPlacement = field(default=kmeans_inducing, repr=False)
    jitter: float = 1e-8
    model: SoRClassifier = field(init=False, repr=False)
    release: LinearCloakingRelease = field(init=False, repr=False)

    def __post_init__(self) -> None:
        Xa = as_inputs("X", self.X)
        Z = self.placement(np.array(Xa), int(self.n_inducing), check_rng(self.rng))
        model = SoRClassifier(self.kernel, Xa, Z, jitter=self.jitter)
        object.__setattr__(self, "X", model.X)
        object.__setattr__(self, "model", model)
        step = model.newton_map(None)
        mech = _cloak(step.C, LABEL_SENSITIVITY, self.epsilon, self.delta, self.method,
                      self.allow_unproven)
        object.__setattr__(self, "release", LinearCloakingRelease(model.X, mech, labels=True))

    def predict_proba(self, u_tilde: np.ndarray, Xs: object, *, averaged: bool = True
                      ) -> np.ndarray:
        """P(y* = +1) at ``Xs`` from one release (post-processing)."""
        return self.model.predict_proba(u_tilde, Xs, averaged=averaged)


# --------------------------------------------------------------------------- defaults
def default_classification_data(n: int = 40) -> Dataset:
    """Deterministic 2-D stripes (S21 §6.5 style), labels ±1, no randomness or network.

    Inputs follow a Kronecker (golden-ratio) sequence on [0, 10]², denser at the bottom.
    """
    from dpgp_audit.datasets.synthetic import stripe_labels

    i = np.arange(1, n + 1)
    u = np.mod(i * 0.6180339887498949, 1.0)
    v = np.mod(i * 0.7548776662466927, 1.0)
    X = np.column_stack([10.0 * u, 10.0 * v**1.5])
    return Dataset(X, 2.0 * stripe_labels(X) - 1.0, name="default-stripes")


def default_regression_data() -> Dataset:
    """Deterministic 1-D data with a dense bulk and three outliers (S21 Fig. 2 style)."""
    x = np.concatenate([np.linspace(0.0, 4.0, 17), [6.5, 8.0, 9.5]])
    return Dataset(x[:, None], np.sin(x), name="default-outliers")


def _test_grid(data: Dataset, k: int = 12) -> np.ndarray:
    lo, hi = float(data.X.min()), float(data.X.max())
    return np.linspace(lo, hi, k)[:, None]


def _build_nonstationary(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                         neighbourhood: float | None = 1.0) -> LinearCloakingRelease:
    return nonstationary_cloaking(data.X, _test_grid(data), d=d, epsilon=epsilon, delta=delta,
                                  bandwidth=0.7, m=4.0, n_per=2.0, neighbourhood=neighbourhood,
                                  noise_variance=0.1)


def _build_sparse(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                  n_inducing: int = 4, inducing_seed: int) -> LinearCloakingRelease:
    # the registry fixes inducing_seed so that the default mechanism is reproducible
    return sparse_cloaking(data.X, _test_grid(data), EQ(1.5), 0.1, n_inducing=n_inducing,
                           rng=np.random.default_rng(inducing_seed), d=d, epsilon=epsilon,
                           delta=delta)


def _build_laplace(data: Dataset, *, epsilon: float, delta: float, lengthscale: float = 3.5
                   ) -> LaplaceCloakingClassifier:
    return LaplaceCloakingClassifier(EQ(lengthscale), data.X, epsilon, delta)


def _build_two_step(data: Dataset, *, epsilon: float, delta: float,
                    lengthscale: float = 3.5) -> TwoStepLaplaceClassifier:
    return TwoStepLaplaceClassifier(EQ(lengthscale), data.X, epsilon, delta)


def _small_classification_data() -> Dataset:
    """12 points of the default stripes: the two-step sampler refactors per draw."""
    return default_classification_data(12)


def _build_sor(data: Dataset, *, epsilon: float, delta: float, lengthscale: float = 3.5,
               n_inducing: int = 6, inducing_seed: int) -> SoRCloakingClassifier:
    return SoRCloakingClassifier(EQ(lengthscale), data.X, n_inducing,
                                 np.random.default_rng(inducing_seed), epsilon, delta)
