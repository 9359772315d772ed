"""Third-party release code in the mechanism contract (catalogue A.10).

:func:`adapt` wraps a callable the user did not write — one library call per release,
or one vectorised call per batch — into a :class:`~dpgp_audit.contract.Mechanism`
whose ``sample(data, n, rng)`` is reproducible from the audit's generator wherever the
library can be seeded (:class:`~dpgp_audit.adapters.seeding.Seeding`).

**The adapter never states the claim.** The user writes the library's documented
guarantee — level, neighbour relation, public domain — as a claim
(:mod:`dpgp_audit.privacy.claims`); the audit then tests the code against what its
documentation promises. Where the user also knows the noise-free query, passing
``query``/``norm``/``sensitivity_bound`` lets the sensitivity checker (A.4) and the
model ranking of pairs work as for a kit mechanism.

Attributes the planner and the report read
------------------------------------------
``reproducible`` / ``reproducibility``
    ``False`` (with a one-line reason) when the library draws from entropy the adapter
    cannot seed; :func:`~dpgp_audit.audit.runner.audit_mechanism` records it in the
    report's ``inputs`` and its table prints it.
``cost_per_draw_s``
    Seconds per release measured so far (``None`` before the first draw): every
    ``sample`` call adds its time and draws, and :meth:`AdaptedMechanism.pilot` takes a
    short measurement on its own generator. It is for planning only (how many pairs a
    slow library can afford); no verdict depends on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dpgp_audit.adapters.seeding import Seeding, derive_seed

__all__ = ["AdaptedMechanism", "adapt"]


def _stack(outputs: Any, n: int) -> np.ndarray:
    """Releases as an array of shape ``(n, *output_shape)`` (a scalar release: ``(n, 1)``)."""
    arr = np.asarray(outputs)
    if arr.dtype == object:
        arr = np.asarray(outputs, dtype=float)
    if arr.ndim == 0 or arr.shape[0] != n:
        raise RuntimeError(f"the release returned shape {arr.shape} for {n} draws; "
                           f"expected ({n}, ...)")
    return arr.reshape(n, 1) if arr.ndim == 1 else arr


class AdaptedMechanism:
    """A library's release callable, seeded from the audit's generator (module docstring).

    Build it with :func:`adapt`. The instance satisfies the mechanism contract
    (``claim``, ``sample``) and, when ``query`` is given, ``SensitivityQuery``.
    """

    def __init__(self, release: Callable[..., Any], claim: Any, *, seeding: Seeding,
                 vectorised: bool, name: str | None = None) -> None:
        if not callable(release):
            raise TypeError(f"release must be callable, got {type(release).__name__}")
        if not (hasattr(claim, "relation") and hasattr(claim, "describe")):
            raise TypeError("claim must be a privacy claim (dpgp_audit.privacy.claims), "
                            f"got {type(claim).__name__}: the adapter never states one")
        self.release = release
        self._claim = claim
        self.seeding = seeding
        self.vectorised = bool(vectorised)
        self.name = name or getattr(release, "__qualname__", type(release).__name__)
        self._seconds = 0.0
        self._draws = 0

    @property
    def claim(self) -> Any:
        """The guarantee the user stated for the library (never the adapter's)."""
        return self._claim

    @property
    def reproducible(self) -> bool:
        """Whether the audit's seed repeats the library's draws."""
        return self.seeding.reproducible

    @property
    def reproducibility(self) -> str:
        """Where the draws come from, in one line."""
        return self.seeding.describe()

    @property
    def cost_per_draw_s(self) -> float | None:
        """Seconds per release measured so far (``None`` before any draw)."""
        return self._seconds / self._draws if self._draws else None

    def sample(self, data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases on ``data``, shape ``(n, *output_shape)``.

        One seeding (128 bits from ``rng``) covers the whole batch: one vectorised call
        ``release(data, n, **seed_kw)``, or ``n`` calls ``release(data, **seed_kw)``.
        """
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        n = int(n)
        words = derive_seed(rng)
        t = time.perf_counter()
        out = self._draw(data, n, words)
        self._seconds += time.perf_counter() - t
        self._draws += n
        return _stack(out, n)

    def _draw(self, data: Any, n: int, words: np.ndarray) -> Any:
        """The library's ``n`` releases under one seeding (in this process)."""
        with self.seeding.seeded(words) as kw:
            if self.vectorised:
                return self.release(data, n, **kw)
            return [self.release(data, **kw) for _ in range(n)]

    def pilot(self, data: Any, rng: np.random.Generator, draws: int = 16) -> float:
        """Time ``draws`` releases on ``data`` (a separate generator: no audit stream moves).

        Returns (and stores, with every draw before it) :attr:`cost_per_draw_s`.
        """
        self.sample(data, draws, rng)
        cost = self.cost_per_draw_s
        assert cost is not None
        return cost

    def __repr__(self) -> str:
        return (f"AdaptedMechanism({self.name!r}, seeding={self.seeding.style!r}, "
                f"vectorised={self.vectorised})")


class _AdaptedQuery(AdaptedMechanism):
    """An adapted mechanism that also exposes the user's noise-free query (A.4)."""

    def __init__(self, release: Callable[..., Any], claim: Any, *, query: Callable[..., Any],
                 norm: Any, sensitivity_bound: float, **kwargs: Any) -> None:
        super().__init__(release, claim, **kwargs)
        self._query = query
        self._norm = norm
        self._bound = float(sensitivity_bound)

    @property
    def norm(self) -> Any:
        """The norm in which the user's proof bounds the query change."""
        return self._norm

    def query(self, data: Any) -> np.ndarray:
        """The user's noise-free query."""
        return np.atleast_1d(np.asarray(self._query(data), dtype=float))

    def sensitivity_bound(self) -> float:
        """The sensitivity the library's documented guarantee rests on."""
        return self._bound


def adapt(release: Callable[..., Any], claim: Any, *, seeding: str | Seeding,
          vectorised: bool = False, keyword: str | None = None, name: str | None = None,
          query: Callable[..., Any] | None = None, norm: Any = None,
          sensitivity_bound: float | None = None) -> AdaptedMechanism:
    """Wrap a third-party release into the mechanism contract (catalogue A.10).

    Parameters
    ----------
    release
        ``release(data, **seed_kw)`` returns one release for a
        :class:`~dpgp_audit.dataset.Dataset`; with ``vectorised=True``,
        ``release(data, n, **seed_kw)`` returns ``n`` of them stacked on the first axis.
        ``seed_kw`` is empty except for the ``"generator"`` and ``"random_state"``
        styles, which pass the seeded object under ``keyword``.
    claim
        The library's documented guarantee, written by the user (ε, δ, relation, domain).
    seeding
        A :class:`~dpgp_audit.adapters.seeding.Seeding` or its style name:
        ``"generator"``, ``"random_state"``, ``"numpy_global"``,
        ``"python_random"`` or ``"unseedable"`` (required: how the library draws is
        something only its user can say).
    vectorised
        Whether one call returns a whole batch.
    keyword
        The seeded argument's name for the ``"generator"``/``"random_state"`` styles.
    name
        Name for reports (default: the callable's qualified name).
    query, norm, sensitivity_bound
        Optional, all three together: the noise-free query the library computes, the norm
        its proof uses (:mod:`dpgp_audit.norms`) and the bound its documentation states.

    Returns
    -------
    AdaptedMechanism
    """
    if not isinstance(seeding, Seeding):
        seeding = Seeding(seeding, keyword)
    elif keyword is not None:
        raise ValueError("pass keyword inside the Seeding, not beside it")
    given = [query is not None, norm is not None, sensitivity_bound is not None]
    if any(given) and not all(given):
        raise ValueError("query, norm and sensitivity_bound go together (the sensitivity "
                         "checker needs all three)")
    if all(given):
        return _AdaptedQuery(release, claim, seeding=seeding, vectorised=vectorised, name=name,
                             query=query, norm=norm,
                             sensitivity_bound=sensitivity_bound)  # type: ignore[arg-type]
    return AdaptedMechanism(release, claim, seeding=seeding, vectorised=vectorised, name=name)
