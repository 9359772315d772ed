"""The mechanism contract that ties the kit together (catalogue A.1–A.6).

Anything that touches private data and releases something implements
:class:`Mechanism`: a privacy claim and a vectorised ``sample``. Two optional
interfaces unlock stronger audits:

* :class:`GaussianRelease` — the output given a dataset is N(mean, cov); the
  white-box auditor (A.2) then computes the exact privacy profile of a pair.
* :class:`SensitivityQuery` — the noise-free query, the norm its proof bounds
  and the bound itself; the sensitivity checker (A.4) searches for a violation.

The auditors depend only on these protocols and on ``privacy/``, never on the
GP models or the papers' methods, so a user's own mechanism is audited exactly
like the kit's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from dpgp_audit.dataset import Dataset
from dpgp_audit.norms import Norm

if TYPE_CHECKING:  # annotations only: the contract does not depend on privacy/ at run time
    from dpgp_audit.privacy.claims import Claim

__all__ = ["ContractError", "DiscreteRelease", "Executor", "Future", "GaussianRelease",
           "Mechanism", "SensitivityQuery", "checked_sample", "same_release_shape"]


@runtime_checkable
class Mechanism(Protocol):
    """A randomised release with a privacy claim.

    ``sample(data, n, rng)`` returns ``n`` independent releases stacked along the
    first axis, shape ``(n, *output_shape)``. It must be vectorised and cache the
    expensive data-independent parts (factorisations), so that a million-sample
    audit costs one factorisation.
    """

    @property
    def claim(self) -> Claim:
        """The privacy claim: level, neighbour relation, proven or not."""
        ...

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` independent releases for ``data``, shape ``(n, *output_shape)``."""
        ...


class ContractError(ValueError):
    """A mechanism's ``sample`` broke the contract: not ``n`` rows, values that are not
    finite numbers, or a write into the dataset's read-only arrays.

    A ``ValueError``, so the command line reports it in one line (exit status 2). The
    auditors that read a ``ValueError`` from ``sample`` as "this dataset is refused" let
    this one through: a broken contract is never a refusal.
    """


def checked_sample(mechanism: object, data: Dataset, n: int,
                   rng: np.random.Generator) -> np.ndarray:
    """``np.asarray(mechanism.sample(data, n, rng))``, checked against :class:`Mechanism`.

    Every auditor draws through here, so a release with the wrong number of rows, with
    values that are not numbers, or with NaN or infinite values, and a ``sample`` that
    writes into the dataset (numpy's read-only ``ValueError``, which is not a refusal of
    the dataset), stop the audit with one clear message (a :class:`ContractError` naming
    the call, and for non-finite values the range of the targets they came from) instead
    of an error deep inside an auditor, or, for the write, every dataset read as refused.
    The array is returned as ``sample`` made it (no copy, no conversion).
    """
    call = f"{type(mechanism).__name__}.sample(data, {n}, rng)"
    try:
        out = np.asarray(mechanism.sample(data, n, rng))  # type: ignore[attr-defined]
    except ValueError as err:
        if isinstance(err, ContractError) or "read-only" not in str(err):
            raise  # a refusal of this dataset (or already a contract error)
        raise ContractError(
            f"{call} tried to write into a read-only array ({err}). A Dataset's arrays are "
            "read-only, so that no call can change the data the next call sees: copy "
            "before changing them, e.g. y = np.array(data.y)") from err
    if out.ndim == 0 or out.shape[0] != n:
        got = "a scalar" if out.ndim == 0 else f"shape {out.shape}"
        rows = f"{n} row" + ("s" if n != 1 else "")
        raise ContractError(f"{call} returned {got}; the contract asks for {rows}, one "
                            f"release each: shape ({n}, ...)")
    values = out
    if out.dtype.kind not in "biuf":
        try:  # objects that are numbers pass, converted once for the finiteness check
            values = out.astype(float) if out.dtype.kind == "O" else None
        except (TypeError, ValueError):
            values = None
        if values is None:
            raise ContractError(f"{call} returned values of dtype {out.dtype}; the auditors "
                                "compare numbers (booleans, integers or floats)")
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        bad = int(values.size - np.count_nonzero(np.isfinite(values)))
        y = np.asarray(data.y, dtype=float)
        raise ContractError(
            f"{call} returned {bad} non-finite value(s) (NaN or inf) of {values.size}, on "
            f"targets in [{y.min():.6g}, {y.max():.6g}]; the auditors compare finite numbers. "
            "A release that overflows or divides by zero on some legal data is itself a leak "
            "(inf on one dataset, a number on its neighbour): compute it in a wider type, or "
            "bound it")
    return out


def same_release_shape(mechanism: object, outs: Sequence[np.ndarray], neighbours: bool = True,
                       method: str = "sample") -> None:
    """Refuse arrays whose shape is not the same in every one of ``outs``.

    ``outs`` come from the mechanism's ``method``: releases from :func:`checked_sample`
    (shape past the row axis), or a model's ``mean`` or a ``query`` (whole shape), on the
    datasets of a neighbouring pair (``neighbours=True``) or on one dataset
    (``False``: chunks of one side). A release whose shape depends on the data, e.g. one
    noisy count for each category that occurs, tells the neighbours apart by its shape
    alone, which no noise covers (ε = ∞), and the difference a sensitivity bound measures
    does not exist; a shape that changes between calls breaks the contract's
    ``(n, *output_shape)``. Either stops the audit with one :class:`ContractError` that
    says so, instead of a numpy broadcasting error deep inside an auditor.
    """
    skip = 1 if method == "sample" else 0
    shapes = [tuple(np.shape(o)[skip:]) for o in outs]
    if len(set(shapes)) <= 1:
        return
    a, b = shapes[0], next(s for s in shapes if s != shapes[0])
    name = f"{type(mechanism).__name__}.{method}"
    what = "releases" if method == "sample" else "values"
    if neighbours:
        raise ContractError(
            f"{name} returned {what} of shape {a} on a dataset D and {b} on a neighbour D'; "
            "the shape depends on the data, so the shape alone tells the neighbours apart, a "
            "leak no noise covers (epsilon = inf). Release one shape whatever the data, e.g. "
            "a noisy value for every category of a public list, never only for those the "
            "data contains")
    raise ContractError(
        f"{name} returned {what} of shape {a} and {b} on the same dataset; the contract "
        "asks for one shape, (n, *output_shape), fixed before the data is seen")


@runtime_checkable
class GaussianRelease(Protocol):
    """Optional white-box interface: the release given ``data`` is N(mean(data), cov(data))."""

    def mean(self, data: Dataset) -> np.ndarray:
        """Mean of the release given ``data``, flattened to shape ``(d,)``."""
        ...

    def cov(self, data: Dataset) -> np.ndarray:
        """Noise covariance of the release given ``data``, shape ``(d, d)``, PSD."""
        ...


@runtime_checkable
class DiscreteRelease(Protocol):
    """Optional white-box interface for finite outputs (selection mechanisms).

    ``log_probabilities(data)[k]`` is log P(release = k | data). The pure-DP
    privacy loss of a pair is then ``max_k |log p_k(D) − log p_k(D′)|`` exactly.
    """

    def log_probabilities(self, data: Dataset) -> np.ndarray:
        """Log-probability of each possible output given ``data``, shape ``(k,)``."""
        ...


@runtime_checkable
class SensitivityQuery(Protocol):
    """Optional sensitivity interface: what the privacy proof bounds.

    ``norm(query(D) − query(D′)) <= sensitivity_bound()`` for every pair of
    neighbours under the mechanism's relation.
    """

    @property
    def norm(self) -> Norm:
        """The norm in which the proof bounds the query change."""
        ...

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free release for ``data``."""
        ...

    def sensitivity_bound(self) -> float:
        """The sensitivity the privacy proof uses (an upper bound over all neighbours)."""
        ...


class Future(Protocol):
    """The part of ``concurrent.futures.Future`` the auditors use."""

    def result(self) -> Any:
        """Block until the task is done and return its value (or raise its error)."""
        ...


@runtime_checkable
class Executor(Protocol):
    """Anything that runs ``fn(*args)`` somewhere and hands back a :class:`Future`.

    ``concurrent.futures`` executors and a Dask ``distributed.Client`` qualify; the
    sample-based auditors spread their sampling chunks over one (catalogue A.3).
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        """Schedule ``fn(*args)``."""
        ...
