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

import contextlib
import functools
import hashlib
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from dpgp_audit.adapters.seeding import GLOBAL_LOCK, Seeding, derive_seed

__all__ = ["GLOBALS_NOTE", "AdaptedMechanism", "adapt", "reproducible_form", "seed_globals"]


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


# --------------------------------------------------------------------------- global draws
#: What a mechanism wrapped by :func:`seed_globals` draws from, in one line for reports.
GLOBALS_NOTE = ("numpy's global generator (np.random.*) and Python's random module: for each "
                "sample() call their common functions draw from the audit's generator, the "
                "rest from global states seeded from it, restored after the call")

#: Legacy ``np.random`` functions answered by the ``Generator`` method of the same name,
#: which takes the same arguments and draws from the same law.
_SAME_NAME = ("beta", "binomial", "chisquare", "choice", "exponential", "gamma", "geometric",
              "gumbel", "laplace", "logistic", "lognormal", "multivariate_normal", "normal",
              "permutation", "poisson", "random", "shuffle", "standard_exponential",
              "standard_normal", "uniform")


def _legacy_table(rng: np.random.Generator) -> tuple[dict, dict]:
    """Replacements for ``np.random``'s and ``random``'s common functions, drawing from ``rng``."""
    nump = {name: getattr(rng, name) for name in _SAME_NAME}
    nump.update(random_sample=rng.random, randint=rng.integers,
                rand=lambda *d: rng.random(d) if d else rng.random(),
                randn=lambda *d: rng.standard_normal(d) if d else rng.standard_normal())

    def normal(mu: float = 0.0, sigma: float = 1.0) -> float:
        return float(rng.normal(mu, sigma))

    py = {"random": lambda: float(rng.random()), "gauss": normal, "normalvariate": normal,
          "uniform": lambda a, b: float(rng.uniform(a, b)),
          "expovariate": lambda lambd=1.0: float(rng.exponential(1.0 / lambd))}
    return ({k: f for k, f in nump.items() if hasattr(np.random, k)},
            {k: f for k, f in py.items() if hasattr(random, k)})


def _state_words(rng: np.random.Generator) -> np.ndarray:
    """128 bits that are a function of ``rng``'s state, read without drawing from it.

    Reading (not drawing) keeps a recording generator's log complete, and two generators
    of one seed give the same bits: the coupled runs of D and D′ seed the same global state.
    """
    h = hashlib.sha256()

    def feed(x: Any) -> None:
        if isinstance(x, dict):
            for k in sorted(x):
                h.update(str(k).encode())
                feed(x[k])
        elif isinstance(x, np.ndarray):
            h.update(x.tobytes())
        else:
            h.update(repr(x).encode())

    feed(rng.bit_generator.state)
    return np.frombuffer(h.digest()[:16], dtype=np.uint32).copy()


@contextlib.contextmanager
def _draws_from(rng: np.random.Generator, words: np.ndarray) -> Iterator[None]:
    """``np.random``'s and ``random``'s common functions drawing from ``rng``; the rest seeded.

    Module attributes are swapped under the seeding lock and always put back. Code that
    bound a function before the call (``from numpy.random import normal``) or uses another
    one still draws from the global states, seeded with ``words`` (:func:`_state_words`).
    """
    nump, py = _legacy_table(rng)
    with GLOBAL_LOCK, Seeding("numpy_global").seeded(words), \
            Seeding("python_random").seeded(words):
        saved = ({k: getattr(np.random, k) for k in nump}, {k: getattr(random, k) for k in py})
        try:
            for k, f in nump.items():
                setattr(np.random, k, f)
            for k, f in py.items():
                setattr(random, k, f)
            yield
        finally:
            for k, f in saved[0].items():
                setattr(np.random, k, f)
            for k, f in saved[1].items():
                setattr(random, k, f)


class _GlobalsSeeded:
    """A mechanism whose ``sample`` draws from the global generators, given the audit's.

    Built by :func:`seed_globals` as a subclass named after the wrapped mechanism's class,
    so that messages naming ``type(mechanism).__name__`` name the user's class. Every
    attribute but ``sample``, ``reproducible`` and ``reproducibility`` is the wrapped
    mechanism's (its claim, ``mean``/``cov``, ``query``, declared costs, …).
    """

    reproducible = True
    reproducibility = GLOBALS_NOTE

    def __init__(self, mechanism: Any) -> None:
        object.__setattr__(self, "_inner", mechanism)

    @property
    def wrapped(self) -> Any:
        """The user's mechanism."""
        return self._inner

    def sample(self, data: Any, n: int, rng: np.random.Generator) -> Any:
        """The wrapped ``sample(data, n, rng)``, its global draws taken from ``rng``.

        During the call ``np.random.normal``, ``np.random.laplace``, ``random.gauss`` and
        the other common functions (:data:`_SAME_NAME`) are ``rng``'s own methods, so a
        recording generator logs them (the grey-box auditor's coupling and noise design
        work as for code that draws from ``rng``), and two generators of one seed draw the
        same noise on D and D′. Every other draw from the global states comes from states
        seeded from ``rng``'s. All of it is restored after the call. If the call drew
        nothing from ``rng``, one value is drawn from it afterwards, so that a generator
        handed to two calls never seeds the same global state twice.
        """
        before = _state_words(rng)
        with _draws_from(rng, before):
            out = self._inner.sample(data, n, rng)
        if np.array_equal(_state_words(rng), before):
            rng.random()
        return out

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_inner":
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __reduce__(self) -> tuple:  # the class is made at run time: rebuilt by its factory
        return (seed_globals, (self._inner,))

    def __repr__(self) -> str:
        return f"seed_globals({self._inner!r})"


@functools.lru_cache(maxsize=64)
def _seeded_class(cls: type) -> type:
    return type(cls.__name__, (_GlobalsSeeded,),
                {"__qualname__": cls.__qualname__, "__module__": __name__,
                 "__doc__": f"{cls.__qualname__}, its global draws seeded by the audit"})


def seed_globals(mechanism: Any) -> Any:
    """Wrap a mechanism that draws from ``np.random.*`` or ``random`` (catalogue A.10).

    A hurried ``sample(data, n, rng)`` often ignores ``rng`` and calls
    ``np.random.normal``: its draws are still independent, but the seed cannot repeat them,
    and the grey-box auditor, which couples D and D′ by handing both generators of one
    seed and reads the noise off them, can say nothing. During each call the wrapper
    answers the common global functions from the generator handed to ``sample`` and seeds
    the global states from it (:meth:`_GlobalsSeeded.sample`; all restored afterwards),
    which makes such code reproducible, coupled and recorded without touching it. The law
    of each draw is unchanged (the same distribution, from another stream), so every
    verdict stays a verdict on the user's code. ``python -m dpgp_audit audit --mechanism
    FILE.py:NAME`` applies it by itself when :func:`reproducible_form` finds it needed.
    """
    if isinstance(mechanism, _GlobalsSeeded):
        return mechanism
    if isinstance(mechanism, type):
        raise TypeError(f"seed_globals takes a mechanism instance, not the class "
                        f"{mechanism.__name__}")
    return _seeded_class(type(mechanism))(mechanism)


def _repeats(mechanism: Any, data: Any, seed: np.random.SeedSequence) -> bool:
    """Whether two calls on generators built from one seed give the same two releases."""
    a = np.asarray(mechanism.sample(data, 2, np.random.default_rng(seed)))
    b = np.asarray(mechanism.sample(data, 2, np.random.default_rng(seed)))
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def reproducible_form(mechanism: Any, data: Any,
                      seed: np.random.SeedSequence) -> tuple[Any, str | None]:
    """The mechanism as an audit should draw from it, and a note when it was wrapped.

    Two calls of ``sample(data, 2, ·)`` on generators built from ``seed`` (fresh ones: no
    audit stream moves) tell a release that repeats with its seed (returned as it is) from
    one that draws elsewhere. For the latter the same two calls are made through
    :func:`seed_globals`: if they now repeat, the release draws from the global
    generators, and the wrapped mechanism is returned with :data:`GLOBALS_NOTE`. Otherwise
    (its own unseeded generator, the operating system's entropy) it is returned as it is,
    and the grey-box auditor reports it ``NOT REPRODUCIBLE``. A mechanism that states its
    own seeding (``reproducible``: an :func:`adapt`-ed library) is returned unprobed, and
    so is one whose probe raises: the audit then calls it again and reports the error in
    its own words.
    """
    if hasattr(mechanism, "reproducible"):
        return mechanism, None
    try:
        if _repeats(mechanism, data, seed):
            return mechanism, None
        wrapped = seed_globals(mechanism)
        if _repeats(wrapped, data, seed):
            return wrapped, GLOBALS_NOTE
    except Exception:  # noqa: BLE001 - any failure is the audit's to report, in its words
        return mechanism, None
    return mechanism, None
