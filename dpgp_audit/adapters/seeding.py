"""Seeding a third-party sampler from the audit's generator (catalogue A.10).

A verdict of the kit is a function of (mechanism, data, seed, settings). Library code
rarely takes a ``numpy.random.Generator``: it draws from numpy's legacy global state,
from a ``random_state`` argument (an int or a ``RandomState``), from Python's
``random`` module, or from a sampler of its own (a C extension, ``secrets``, the
operating system's entropy). A :class:`Seeding` says which, and turns 128 bits taken
from the audit's generator (:func:`derive_seed`) into the state that library reads:

==================  ===========================================================  ============
style               what the release call gets                                   reproducible
==================  ===========================================================  ============
``"generator"``     keyword ``rng=`` a ``numpy.random.Generator`` seeded with    yes
                    the 128 bits
``"random_state"``  keyword ``random_state=`` a legacy ``RandomState`` seeded    yes
                    with them (libraries with a scikit-learn-style argument)
``"numpy_global"``  nothing: ``np.random``'s global state is seeded for the      yes
                    call and **restored** afterwards
``"python_random"`` nothing: ``random``'s global state is seeded for the call    yes
                    and restored afterwards
``"unseedable"``    nothing: the library draws from its own entropy              **no**
==================  ===========================================================  ============

One seeding covers one ``sample(data, n, rng)`` call, however many library calls it
makes: the n draws come from one seeded stream, so they are independent and the batch is
reproducible; the next ``sample`` call takes fresh bits from the audit's generator.
With ``"unseedable"`` the draws are still independent (fresh entropy) and every
statistical guarantee of the auditors holds, but ``--seed`` no longer repeats a run:
the adapter marks the mechanism not reproducible and the report says so.

**Deliberate exception to the randomness rule.** Seeding numpy's legacy global state
and building a ``RandomState`` is the only way to make such code reproducible, so this
module — and only this module — calls ``np.random.seed``/``get_state``/``set_state``
and ``np.random.RandomState`` (``tests/test_hygiene.py`` allows exactly those names
here). Global state is touched under a lock (:data:`GLOBAL_LOCK`) and always restored.
One more exception uses the same lock: :func:`~dpgp_audit.adapters.mechanism.seed_globals`
swaps ``np.random``'s and ``random``'s common functions for the handed generator's methods
for the length of one ``sample`` call of a user's mechanism (and seeds the states through
this module), so that code written with ``np.random.normal`` is reproducible and coupled.

The module imports nothing from the kit (numpy and the standard library only), so
the virtualenv bridge's child process (:mod:`dpgp_audit.adapters.bridge`) loads it by
file path in an environment where the kit is not installed, e.g. with numpy 1.x.
"""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["GLOBAL_LOCK", "SEED_WORDS", "STYLES", "Seeding", "derive_seed"]

#: 32-bit words of seed material per ``sample`` call (128 bits: collisions between the
#: calls of one audit are out of reach, unlike with a single 32-bit integer seed).
SEED_WORDS = 4
#: The seeding styles, in the table's order.
STYLES: tuple[str, ...] = ("generator", "random_state", "numpy_global", "python_random",
                           "unseedable")
_DEFAULT_KEYWORD = {"generator": "rng", "random_state": "random_state"}
#: Global generators are process-wide: one seeded call at a time.
GLOBAL_LOCK = threading.RLock()


def derive_seed(rng: np.random.Generator) -> np.ndarray:
    """128 bits from the audit's generator, as :data:`SEED_WORDS` uint32 words."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng.integers(0, 2**32, size=SEED_WORDS, dtype=np.uint32)


def _as_int(words: np.ndarray) -> int:
    return int(sum(int(w) << (32 * k) for k, w in enumerate(np.asarray(words).ravel())))


@dataclass(frozen=True)
class Seeding:
    """How a library's sampler is seeded (module docstring).

    Parameters
    ----------
    style
        One of :data:`STYLES`.
    keyword
        For ``"generator"`` and ``"random_state"``: the name of the release's argument
        (default ``"rng"`` and ``"random_state"``). Must be ``None`` for the other styles.
    """

    style: str
    keyword: str | None = None

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise ValueError(f"seeding style must be one of {STYLES}, got {self.style!r}")
        if self.keyword is None:
            object.__setattr__(self, "keyword", _DEFAULT_KEYWORD.get(self.style))
        elif self.style not in _DEFAULT_KEYWORD:
            raise ValueError(f"keyword applies only to the 'generator' and 'random_state' "
                             f"styles, not to {self.style!r}")
        elif not (isinstance(self.keyword, str) and self.keyword.isidentifier()):
            raise ValueError(f"keyword must be an argument name, got {self.keyword!r}")

    @property
    def reproducible(self) -> bool:
        """True unless the library draws from entropy the adapter cannot seed."""
        return self.style != "unseedable"

    def describe(self) -> str:
        """One line for reports."""
        return {
            "generator": f"a numpy Generator passed as {self.keyword}=, seeded from the audit",
            "random_state": f"a RandomState passed as {self.keyword}=, seeded from the audit",
            "numpy_global": "numpy's global state, seeded from the audit and restored",
            "python_random": "Python's random module, seeded from the audit and restored",
            "unseedable": "the library's own entropy (not seedable): draws are independent, "
                          "but the seed does not repeat them",
        }[self.style]

    @contextlib.contextmanager
    def seeded(self, words: np.ndarray) -> Iterator[dict]:
        """Seed for one batch of library calls; yields the keyword arguments to pass.

        ``words`` are :func:`derive_seed`'s 128 bits (ignored by ``"unseedable"``).
        Global state touched here is restored on exit, also when the library raises.
        """
        words = np.asarray(words, dtype=np.uint32).ravel()
        if self.style == "generator":
            yield {self.keyword: np.random.default_rng(words)}
        elif self.style == "random_state":
            yield {self.keyword: np.random.RandomState(words)}  # noqa: NPY002 — the documented exception
        elif self.style == "numpy_global":
            with GLOBAL_LOCK:
                saved = np.random.get_state()  # noqa: NPY002 — the documented exception
                np.random.seed(words)  # noqa: NPY002 — the documented exception
                try:
                    yield {}
                finally:
                    np.random.set_state(saved)  # noqa: NPY002 — the documented exception
        elif self.style == "python_random":
            with GLOBAL_LOCK:
                saved_py = random.getstate()
                random.seed(_as_int(words))
                try:
                    yield {}
                finally:
                    random.setstate(saved_py)
        else:  # unseedable: the library's own entropy
            yield {}
