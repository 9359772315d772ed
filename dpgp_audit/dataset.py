"""The dataset that flows through a release: inputs X, targets y.

A :class:`Dataset` is immutable (its arrays are read-only copies), validated on
construction (finite values, matching lengths) and offers the two edits that
define neighbouring datasets: replacing a target (outputs-only relation) or a
whole row (whole-rows relation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import as_finite_array

__all__ = ["ClipReport", "Dataset", "check_dataset", "check_public_inputs", "clip_targets"]


@dataclass(frozen=True, eq=False)
class Dataset:
    """Inputs ``X`` of shape (n, D) and targets ``y`` of shape (n,).

    One-dimensional ``X`` is promoted to shape (n, 1). Each of the following raises
    ``ValueError`` naming the parameter (``X``, ``y`` or ``name``) and never yields a
    dataset a mechanism could release from: NaN or inf, complex values (NumPy would drop
    the imaginary part), non-numeric values, no rows (``n = 0``), an ``X`` with zero
    columns, more than two dimensions in ``X`` or more than one in ``y``, and lengths
    that differ. Bounds on the values (a declared public domain) belong to the
    mechanism's claim, not to the dataset.
    """

    X: np.ndarray
    y: np.ndarray
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValueError(f"name must be a str, got {type(self.name).__name__}")
        X = as_finite_array("X", self.X, ndim=(1, 2))
        if X.ndim == 1:
            X = X[:, None]
        y = as_finite_array("y", self.y, ndim=1)
        if X.shape[1] == 0:
            raise ValueError(f"X must have at least one column (input dimension >= 1), "
                             f"got shape {X.shape}")
        if y.shape[0] == 0 or X.shape[0] == 0:
            raise ValueError(f"the dataset is empty: X has {X.shape[0]} rows and y has "
                             f"{y.shape[0]} entries (a release needs at least one row)")
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows: "
                             "lengths of X and y must match")
        X = X.copy()
        y = y.copy()
        X.setflags(write=False)
        y.setflags(write=False)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.y.shape[0])

    @property
    def dim(self) -> int:
        """Input dimension D."""
        return int(self.X.shape[1])

    def with_target(self, i: int, y_new: float) -> Dataset:
        """The outputs-only neighbour: target ``i`` replaced by ``y_new``."""
        y = np.array(self.y)
        y[i] = y_new
        return Dataset(self.X, y, self.name)

    def with_row(self, i: int, x_new: np.ndarray, y_new: float) -> Dataset:
        """The whole-rows neighbour: row ``i`` replaced by ``(x_new, y_new)``."""
        X = np.array(self.X)
        X[i] = np.asarray(x_new, dtype=float).reshape(self.dim)
        y = np.array(self.y)
        y[i] = y_new
        return Dataset(X, y, self.name)

    def same_inputs(self, other: Dataset) -> bool:
        """True when both datasets have identical inputs (outputs-only neighbours)."""
        return self.X.shape == other.X.shape and bool(np.array_equal(self.X, other.X))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Dataset):
            return NotImplemented
        return self.same_inputs(other) and bool(np.array_equal(self.y, other.y))

    def __hash__(self) -> int:
        return hash((self.X.tobytes(), self.y.tobytes()))

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"Dataset{label}(n={self.n}, dim={self.dim})"


@dataclass(frozen=True)
class ClipReport:
    """What an explicit clip did: the bound and how many targets it moved."""

    bound: float
    n_clipped: int


def clip_targets(y: np.ndarray, bound: float, *, clip: bool) -> tuple[np.ndarray, ClipReport]:
    """Enforce ``|y| <= bound``.

    Parameters
    ----------
    y
        Targets.
    bound
        The declared bound (part of the mechanism's claim).
    clip
        ``False``: raise ``ValueError`` if any target is outside the bound.
        ``True``: clip into ``[-bound, bound]`` and report how many moved.
    """
    y = as_finite_array("y", y)
    outside = np.abs(y) > bound
    n_out = int(np.count_nonzero(outside))
    if n_out and not clip:
        raise ValueError(
            f"y: {n_out} target(s) lie outside the declared bound |y| <= {bound:g} "
            f"(max |y| = {float(np.max(np.abs(y))):g}); pass clip=True to clip them "
            "explicitly (recorded in the claim) or widen the bound"
        )
    return np.clip(y, -bound, bound), ClipReport(float(bound), n_out)


def check_dataset(data: object, name: str = "data") -> Dataset:
    """Return ``data`` if it is a :class:`Dataset`; ``TypeError`` naming ``name`` otherwise.

    Every release starts here, so that a tuple, an array or ``None`` is refused with a
    message instead of an ``AttributeError`` deep inside the mechanism.
    """
    if not isinstance(data, Dataset):
        raise TypeError(f"{name} must be a Dataset (dpgp_audit.Dataset(X, y)), got "
                        f"{type(data).__name__}")
    return data


def check_public_inputs(data: object, X: np.ndarray) -> Dataset:
    """Return ``data`` if it is a :class:`Dataset` on exactly the public inputs ``X``.

    Under the outputs-only relation the inputs are fixed and public, so a mechanism built
    for ``X`` refuses any other object (``TypeError``) or other inputs (``ValueError``).
    """
    if not isinstance(data, Dataset):
        raise TypeError(f"data must be a Dataset, got {type(data).__name__}")
    if data.X.shape != X.shape or not np.array_equal(data.X, X):
        raise ValueError("data.X differs from the public inputs X this mechanism was built "
                         "for (outputs-only relation: X is fixed and public)")
    return data
