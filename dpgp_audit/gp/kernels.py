"""Covariance functions (kernels) in vectorised numpy.

Every kernel is a small frozen dataclass holding its (validated, positive)
hyperparameters. ``k(X)`` returns the Gram matrix K(X, X), ``k(X, Y)`` the
cross-covariance K(X, Y) and ``k.diag(X)`` the diagonal of K(X, X) without
building the full matrix. Kernels combine with ``+`` (:class:`Sum`) and ``*``
(:class:`Product`).

Inputs of shape (n,) are promoted to (n, 1); NaN/inf or mismatched input
dimensions raise ``ValueError``.

:func:`kernel_registry` lists one example instance of every kernel, so that the
invariant tests (symmetry, positive semi-definiteness, ``diag``) run over all
of them; modules adding kernels (Gibbs, integral kernels, ...) call
:func:`register_kernel_example` once at import.
"""

from __future__ import annotations

import dataclasses
import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.distance import cdist

__all__ = [
    "EQ",
    "Constant",
    "Kernel",
    "KernelExample",
    "Linear",
    "Matern32",
    "Matern52",
    "Periodic",
    "Product",
    "Stationary",
    "Sum",
    "White",
    "as_inputs",
    "kernel_examples",
    "kernel_registry",
    "register_kernel_example",
    "scaled_sqdist",
]


# --------------------------------------------------------------------------- helpers
def as_inputs(name: str, X: object) -> np.ndarray:
    """Validate kernel inputs: a finite float array of shape (n, D); (n,) becomes (n, 1)."""
    arr = np.asarray(X, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must have shape (n,) or (n, D), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} contains {bad} non-finite value(s) (NaN or inf)")
    return arr


def _positive(name: str, value: object) -> float:
    v = float(value)  # type: ignore[arg-type]
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite positive number, got {value!r}")
    return v


def _positive_vector(name: str, value: object) -> float | np.ndarray:
    """A positive scalar (returned as float) or a positive 1-D array (read-only copy)."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        return _positive(name, arr)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a positive scalar or a 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must contain finite positive numbers, got {arr!r}")
    arr = arr.copy()
    arr.setflags(write=False)
    return arr


_CDIST_MAX_DIM = 16


def scaled_sqdist(X: np.ndarray, Y: np.ndarray | None, lengthscale: float | np.ndarray
                  ) -> np.ndarray:
    """Squared distances ``||(x - y) / lengthscale||²`` between rows, computed stably.

    For D ≤ 16 the differences are formed directly (``scipy.spatial.distance.cdist``:
    no cancellation, exactly symmetric with an exactly zero diagonal for K(X, X),
    and faster than BLAS at low D). For larger D the expansion
    |x|² + |y|² − 2 x·y is used on inputs centred at a common mean (less
    cancellation), with round-off negatives clipped to 0 and, when ``Y`` is
    ``None``, an exactly zero diagonal and exact symmetry enforced.
    """
    ls = np.asarray(lengthscale, dtype=float)
    if ls.ndim == 1 and ls.shape[0] != X.shape[1]:
        raise ValueError(
            f"ARD lengthscale has {ls.shape[0]} entries but the inputs have D = {X.shape[1]}")
    Xs = X / ls
    if X.shape[1] <= _CDIST_MAX_DIM:
        return cdist(Xs, Xs if Y is None else Y / ls, "sqeuclidean")
    if Y is None:
        Xs = Xs - Xs.mean(axis=0)
        sq = np.einsum("ij,ij->i", Xs, Xs)
        r2 = sq[:, None] + sq[None, :] - 2.0 * (Xs @ Xs.T)
        r2 = 0.5 * (r2 + r2.T)
        np.fill_diagonal(r2, 0.0)
    else:
        Ys = Y / ls
        centre = 0.5 * (Xs.mean(axis=0) + Ys.mean(axis=0))
        Xs = Xs - centre
        Ys = Ys - centre
        r2 = (np.einsum("ij,ij->i", Xs, Xs)[:, None] + np.einsum("ij,ij->i", Ys, Ys)[None, :]
              - 2.0 * (Xs @ Ys.T))
    return np.maximum(r2, 0.0)


# --------------------------------------------------------------------------- base class
class Kernel(ABC):
    """Abstract covariance function k(x, x').

    Subclasses implement :meth:`_K` (on validated 2-D inputs; ``Y is None``
    means K(X, X)) and :meth:`_diag`, validate their parameters in
    ``__post_init__`` and are declared ``@dataclass(frozen=True, eq=False)``:
    ``eq=False`` keeps the parameter-based ``==`` / ``hash`` defined here (which
    handles array parameters; the dataclass-generated ones do not). New
    kernels join the invariant tests through :func:`register_kernel_example`.
    """

    def __call__(self, X: object, Y: object | None = None) -> np.ndarray:
        """Gram matrix K(X, X) of shape (n, n), or K(X, Y) of shape (n, m)."""
        Xa = as_inputs("X", X)
        if Y is None or Y is X:
            return self._K(Xa, None)
        Ya = as_inputs("Y", Y)
        if Ya.shape[1] != Xa.shape[1]:
            raise ValueError(f"the kernel's two input arrays differ in width: D = {Xa.shape[1]} "
                             f"columns against D = {Ya.shape[1]}")
        return self._K(Xa, Ya)

    def diag(self, X: object) -> np.ndarray:
        """The diagonal of K(X, X), shape (n,), without forming the matrix."""
        return self._diag(as_inputs("X", X))

    @abstractmethod
    def _K(self, X: np.ndarray, Y: np.ndarray | None) -> np.ndarray: ...

    @abstractmethod
    def _diag(self, X: np.ndarray) -> np.ndarray: ...

    def __add__(self, other: object) -> Kernel:
        if not isinstance(other, Kernel):
            return NotImplemented
        return Sum(self, other)

    def __radd__(self, other: object) -> Kernel:
        # lets ``sum([k1, k2, ...])`` work (its start value is 0)
        if isinstance(other, int | float) and other == 0:
            return self
        return NotImplemented

    def __mul__(self, other: object) -> Kernel:
        if not isinstance(other, Kernel):
            return NotImplemented
        return Product(self, other)

    # Kernels compare and hash by type and hyperparameters (array-valued ones
    # included), so frozen models holding a kernel (ExactGP, mechanisms) can be
    # compared and used as cache keys. Non-dataclass subclasses fall back to identity.
    def _key(self) -> tuple[object, ...] | None:
        if not dataclasses.is_dataclass(self):
            return None
        vals: list[object] = [type(self)]
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v = ("array", v.shape, tuple(v.ravel().tolist()))
            vals.append(v)
        return tuple(vals)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Kernel):
            return NotImplemented
        a, b = self._key(), other._key()
        if a is None or b is None:
            return self is other
        return a == b

    def __hash__(self) -> int:
        key = self._key()
        return id(self) if key is None else hash(key)


# --------------------------------------------------------------------------- stationary
@dataclass(frozen=True, eq=False)
class Stationary(Kernel):
    """A stationary kernel ``variance · f(r)``, r the lengthscale-scaled distance.

    ``lengthscale`` is a positive scalar or, for ARD (automatic relevance
    determination), a positive array with one entry per input dimension.
    """

    lengthscale: float | np.ndarray = 1.0
    variance: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "lengthscale", _positive_vector("lengthscale", self.lengthscale))
        object.__setattr__(self, "variance", _positive("variance", self.variance))

    @abstractmethod
    def _profile(self, r2: np.ndarray) -> np.ndarray:
        """The profile f(r²) of the squared scaled distance, with f(0) = 1."""

    def _K(self, X: np.ndarray, Y: np.ndarray | None) -> np.ndarray:
        return self.variance * self._profile(scaled_sqdist(X, Y, self.lengthscale))

    def _diag(self, X: np.ndarray) -> np.ndarray:
        ls = np.asarray(self.lengthscale)
        if ls.ndim == 1 and ls.shape[0] != X.shape[1]:
            raise ValueError(
                f"ARD lengthscale has {ls.shape[0]} entries but the inputs have D = {X.shape[1]}")
        return np.full(X.shape[0], self.variance)

    def __repr__(self) -> str:
        ls = self.lengthscale
        ls_txt = f"{ls:g}" if isinstance(ls, float) else np.array2string(ls, precision=4)
        return f"{type(self).__name__}(lengthscale={ls_txt}, variance={self.variance:g})"


@dataclass(frozen=True, eq=False, repr=False)
class EQ(Stationary):
    """Exponentiated quadratic (RBF): ``variance · exp(−r² / 2)`` (R&W eq. 4.9)."""

    def _profile(self, r2: np.ndarray) -> np.ndarray:
        return np.exp(-0.5 * r2)


@dataclass(frozen=True, eq=False, repr=False)
class Matern32(Stationary):
    """Matérn ν = 3/2: ``variance · (1 + √3 r) exp(−√3 r)`` (R&W eq. 4.17)."""

    def _profile(self, r2: np.ndarray) -> np.ndarray:
        s = np.sqrt(3.0 * r2)
        return (1.0 + s) * np.exp(-s)


@dataclass(frozen=True, eq=False, repr=False)
class Matern52(Stationary):
    """Matérn ν = 5/2: ``variance · (1 + √5 r + 5r²/3) exp(−√5 r)`` (R&W eq. 4.17)."""

    def _profile(self, r2: np.ndarray) -> np.ndarray:
        s = np.sqrt(5.0 * r2)
        return (1.0 + s + (5.0 / 3.0) * r2) * np.exp(-s)


@dataclass(frozen=True, eq=False)
class Periodic(Kernel):
    """Periodic (MacKay) kernel, one factor per input dimension (R&W eq. 4.31).

    ``variance · exp(−2 Σ_d sin²(π (x_d − x'_d) / period) / lengthscale_d²)``.
    In 1-D this is scikit-learn's ``ExpSineSquared``; in D > 1 it is the
    product of 1-D periodic kernels (PSD), not the Euclidean-distance variant.
    """

    lengthscale: float | np.ndarray = 1.0
    period: float = 1.0
    variance: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "lengthscale", _positive_vector("lengthscale", self.lengthscale))
        object.__setattr__(self, "period", _positive("period", self.period))
        object.__setattr__(self, "variance", _positive("variance", self.variance))

    def _check_dim(self, X: np.ndarray) -> None:
        ls = np.asarray(self.lengthscale)
        if ls.ndim == 1 and ls.shape[0] != X.shape[1]:
            raise ValueError(
                f"ARD lengthscale has {ls.shape[0]} entries but the inputs have D = {X.shape[1]}")

    def _K(self, X: np.ndarray, Y: np.ndarray | None) -> np.ndarray:
        self._check_dim(X)
        Z = X if Y is None else Y
        ls = np.broadcast_to(np.asarray(self.lengthscale, dtype=float), (X.shape[1],))
        # one (n, m) slab per dimension keeps memory at O(n m) per step
        acc = np.zeros((X.shape[0], Z.shape[0]))
        for d in range(X.shape[1]):
            s = np.sin(np.pi * np.subtract.outer(X[:, d], Z[:, d]) / self.period)
            acc += (s / ls[d]) ** 2
        K = self.variance * np.exp(-2.0 * acc)
        if Y is None:
            K = 0.5 * (K + K.T)
            np.fill_diagonal(K, self.variance)
        return K

    def _diag(self, X: np.ndarray) -> np.ndarray:
        self._check_dim(X)
        return np.full(X.shape[0], self.variance)


@dataclass(frozen=True, eq=False)
class Linear(Kernel):
    """Linear (dot-product) kernel ``variance · x · x'`` (Bayesian linear regression)."""

    variance: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "variance", _positive("variance", self.variance))

    def _K(self, X: np.ndarray, Y: np.ndarray | None) -> np.ndarray:
        if Y is None:
            K = self.variance * (X @ X.T)
            return 0.5 * (K + K.T)
        return self.variance * (X @ Y.T)

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return self.variance * np.einsum("ij,ij->i", X, X)


@dataclass(frozen=True, eq=False)
class Constant(Kernel):
    """Constant (bias) kernel: ``variance`` for every pair of inputs."""

    variance: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "variance", _positive("variance", self.variance))

    def _K(self, X: np.ndarray, Y: np.ndarray | None) -> np.ndarray:
        m = X.shape[0] if Y is None else Y.shape[0]
        return np.full((X.shape[0], m), self.variance)

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return np.full(X.shape[0], self.variance)


# --------------------------------------------------------------------------- white noise
@dataclass(frozen=True, eq=False)
class White(Kernel):
    """White noise: ``variance · I`` on K(X, X); zero cross-covariance.

    K(X) (or K(X, X) with the very same array object) is ``variance · I``;
    K(X, Y) for a separate array Y is all zeros (noise at different
    evaluations is independent, even at equal coordinates), as in
    scikit-learn's ``WhiteKernel``. ``diag(X)`` is ``variance`` everywhere, so a
    GP with a White term predicts noisy observations.
    """

    variance: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "variance", _positive("variance", self.variance))

    def _K(self, X: np.ndarray, Y: np.ndarray | None) -> np.ndarray:
        if Y is None:
            return self.variance * np.eye(X.shape[0])
        return np.zeros((X.shape[0], Y.shape[0]))

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return np.full(X.shape[0], self.variance)


# --------------------------------------------------------------------------- combinations
def _check_parts(k1: object, k2: object) -> None:
    for name, k in (("k1", k1), ("k2", k2)):
        if not isinstance(k, Kernel):
            raise TypeError(f"{name} must be a Kernel, got {type(k).__name__}")


@dataclass(frozen=True, eq=False)
class Sum(Kernel):
    """``k1 + k2`` (a sum of PSD kernels is PSD)."""

    k1: Kernel
    k2: Kernel

    def __post_init__(self) -> None:
        _check_parts(self.k1, self.k2)

    def _K(self, X: np.ndarray, Y: np.ndarray | None) -> np.ndarray:
        return self.k1._K(X, Y) + self.k2._K(X, Y)

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return self.k1._diag(X) + self.k2._diag(X)


@dataclass(frozen=True, eq=False)
class Product(Kernel):
    """``k1 · k2`` elementwise (Schur product theorem: PSD)."""

    k1: Kernel
    k2: Kernel

    def __post_init__(self) -> None:
        _check_parts(self.k1, self.k2)

    def _K(self, X: np.ndarray, Y: np.ndarray | None) -> np.ndarray:
        return self.k1._K(X, Y) * self.k2._K(X, Y)

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return self.k1._diag(X) * self.k2._diag(X)


# --------------------------------------------------------------------------- registry
def _default_inputs(input_dim: int) -> Callable[[np.random.Generator, int], np.ndarray]:
    def sample(rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.uniform(-3.0, 3.0, size=(n, input_dim))

    return sample


@dataclass(frozen=True, eq=False)
class KernelExample:
    """A registered example kernel and how to draw valid inputs for it.

    ``sample_inputs(rng, n)`` returns an (n, input_dim) array of valid inputs
    (kernels with constrained inputs, e.g. integral kernels on intervals, pass
    their own sampler).
    """

    kernel: Kernel
    input_dim: int = 1
    sample_inputs: Callable[[np.random.Generator, int], np.ndarray] | None = field(
        default=None, repr=False)
    name: str = ""

    def draw_inputs(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` valid inputs for this kernel."""
        sampler = self.sample_inputs or _default_inputs(self.input_dim)
        return as_inputs("inputs", sampler(rng, n))


_EXAMPLES: list[KernelExample] = []

# Modules (outside this file) that call register_kernel_example at import, e.g.
# the Gibbs and integral kernels. kernel_registry() imports them first, so a new
# kernel joins the invariant tests by adding one line here. Keep sorted.
_KERNEL_MODULES: tuple[str, ...] = (
    "dpgp_audit.gp.gibbs",
)


def _load_kernel_modules() -> None:
    for module in _KERNEL_MODULES:
        importlib.import_module(module)


def register_kernel_example(kernel: Kernel, *, input_dim: int = 1,
                            sample_inputs: Callable[[np.random.Generator, int], np.ndarray]
                            | None = None, name: str = "") -> Kernel:
    """Add an example instance to :func:`kernel_registry` (call once at module import).

    Returns ``kernel`` so that a module can write
    ``register_kernel_example(Gibbs(...), name="Gibbs")``.
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a Kernel, got {type(kernel).__name__}")
    if isinstance(input_dim, bool) or not isinstance(input_dim, int) or input_dim < 1:
        raise ValueError(f"input_dim must be a positive integer, got {input_dim!r}")
    _EXAMPLES.append(KernelExample(kernel, input_dim, sample_inputs, name or repr(kernel)))
    return kernel


def kernel_examples() -> list[KernelExample]:
    """Every registered example with its input dimension / input sampler."""
    _load_kernel_modules()
    return list(_EXAMPLES)


def kernel_registry() -> list[Kernel]:
    """One example instance of every registered kernel (for invariant tests)."""
    return [ex.kernel for ex in kernel_examples()]


register_kernel_example(EQ(lengthscale=0.7, variance=1.3), name="EQ")
register_kernel_example(EQ(lengthscale=[0.5, 2.0, 1.0], variance=0.8), input_dim=3,
                        name="EQ-ARD")
register_kernel_example(Matern32(lengthscale=1.1, variance=2.0), name="Matern32")
register_kernel_example(Matern32(lengthscale=[0.4, 1.5], variance=1.0), input_dim=2,
                        name="Matern32-ARD")
register_kernel_example(Matern52(lengthscale=0.9, variance=0.5), name="Matern52")
register_kernel_example(Matern52(lengthscale=[1.0, 0.3], variance=1.5), input_dim=2,
                        name="Matern52-ARD")
register_kernel_example(Periodic(lengthscale=0.8, period=1.5, variance=1.2), name="Periodic")
register_kernel_example(Periodic(lengthscale=[0.5, 1.0], period=2.0), input_dim=2,
                        name="Periodic-ARD")
register_kernel_example(Linear(variance=0.6), input_dim=2, name="Linear")
register_kernel_example(Constant(variance=0.4) + Linear(0.2) + Periodic(1.0, 3.0),
                        name="Bias+Linear+Periodic")
register_kernel_example(White(variance=0.3), name="White")
register_kernel_example(EQ(lengthscale=1.0) + White(variance=0.1), name="EQ+White")
register_kernel_example(EQ(lengthscale=2.0, variance=0.5) * Matern32(lengthscale=0.5),
                        name="EQ*Matern32")
register_kernel_example(Matern52(lengthscale=[1.0, 2.0]) * White(0.2)
                        + EQ([0.3, 0.7], variance=2.0), input_dim=2, name="Matern52*White+EQ")
