"""A generator that logs every draw, for the grey-box coupled auditor (catalogue A.9).

Every mechanism of the kit draws its randomness from the ``np.random.Generator`` it is
handed (the ``Mechanism`` contract). :class:`RecordingGenerator` *is* such a generator
(a subclass, so ``isinstance`` checks pass and every draw comes from numpy's own
samplers, bit for bit): it wraps a real bit generator and writes each call — method,
parameters, shape and the values drawn — to a :class:`DrawLog`. Two recording
generators built from the same seed (:func:`recording_pair`) let the auditor run
M(D) and M(D′) on the *same* randomness and compare the two logs, the idea of
Re:cord-play (Cebere et al., PETS 2026), re-implemented here in the kit's own terms.

What the log can and cannot see
-------------------------------
* Calls to any public ``Generator`` method are recorded once (a sampler that calls
  another internally, e.g. ``choice`` → ``random``, is recorded as the outer call only).
* ``spawn`` is recorded; the children record into the same log, tagged with their
  stream path (``()`` for the handed generator, ``(0,)`` for its first child, …).
* Access to ``bit_generator`` is noted: code that draws from the raw bit generator
  (e.g. hands it to another library) bypasses the methods. :func:`verify_log` replays
  the log on a bare generator from the same seed and compares the values and the final
  bit-generator states, so **any** unrecorded draw from the handed stream is detected.
* Randomness that does not come from the handed generator at all (a fixed seed, the
  legacy global state, the OS) leaves no trace here; the coupled auditor sees it only
  through the outputs (:mod:`~dpgp_audit.audit.greybox`).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "LOCATION_PARAMS",
    "SCALE_PARAMS",
    "STRUCTURAL_PARAMS",
    "Draw",
    "DrawLog",
    "LogCheck",
    "RecordingGenerator",
    "recording_generator",
    "recording_pair",
    "verify_log",
]

#: Parameters that are the *value being noised* (the query): a data-dependent location
#: is what a mechanism is for, and its change between D and D′ is the query change.
LOCATION_PARAMS: dict[str, tuple[str, ...]] = {
    "normal": ("loc",), "laplace": ("loc",), "gumbel": ("loc",), "logistic": ("loc",),
    "multivariate_normal": ("mean",), "lognormal": ("mean",), "vonmises": ("mu",),
}
#: Parameters that set *how much* noise is drawn: one that depends on the private data
#: is a finding of the grey-box auditor (A.9 (b)). ``uniform`` contributes its width.
SCALE_PARAMS: dict[str, tuple[str, ...]] = {
    "normal": ("scale",), "laplace": ("scale",), "gumbel": ("scale",),
    "logistic": ("scale",), "multivariate_normal": ("cov",), "exponential": ("scale",),
    "lognormal": ("sigma",), "rayleigh": ("scale",), "gamma": ("shape", "scale"),
    "standard_gamma": ("shape",), "standard_t": ("df",), "chisquare": ("df",),
    "noncentral_chisquare": ("df", "nonc"), "f": ("dfnum", "dfden"),
    "noncentral_f": ("dfnum", "dfden", "nonc"), "weibull": ("a",), "pareto": ("a",),
    "power": ("a",), "wald": ("mean", "scale"), "vonmises": ("kappa",), "beta": ("a", "b"),
}
#: Parameters that fix the shape and type of a draw (control flow, not values).
STRUCTURAL_PARAMS = frozenset({"size", "dtype", "endpoint", "replace", "axis", "shuffle",
                               "method", "check_valid", "tol", "length"})
_NOT_KEPT = frozenset({"self", "out"})
_METHODS: tuple[str, ...] = tuple(
    name for name in dir(np.random.Generator)
    if not name.startswith("_") and name not in ("bit_generator", "spawn")
    and callable(getattr(np.random.Generator, name)))
_RAW_BIT_GENERATOR = np.random.Generator.bit_generator


def _keep(value: object) -> object:
    """A copy of a parameter or result that later mutation cannot change."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        try:
            return np.array(value)
        except (TypeError, ValueError):  # ragged
            return copy.deepcopy(value)
    return value  # numbers, tuples of sizes, dtypes, strings and None are immutable


@dataclass(frozen=True, eq=False)
class Draw:
    """One recorded call of a generator method.

    Attributes
    ----------
    stream
        ``()`` for the handed generator, ``(i,)`` for its i-th spawned child, and so on.
    method
        The ``Generator`` method name (``"spawn"`` for a spawn, with no values).
    params
        The call's arguments by name, defaults filled in (``out`` dropped), copied.
    value
        The values returned (for ``shuffle``, the shuffled array), as an array.
    """

    stream: tuple[int, ...]
    method: str
    params: dict[str, Any]
    value: np.ndarray = field(repr=False)

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the values drawn."""
        return tuple(self.value.shape)

    def signature(self) -> tuple:
        """What must agree between two coupled runs for their draws to be the same call.

        Stream, method, shape and type of the values, the structural parameters and the
        shapes of every other parameter — everything except parameter *values*.
        """
        structural = tuple(sorted((k, repr(v)) for k, v in self.params.items()
                                  if k in STRUCTURAL_PARAMS))
        shapes = tuple(sorted((k, np.shape(v)) for k, v in self.params.items()
                              if k not in STRUCTURAL_PARAMS and _numeric(v)))
        return (self.stream, self.method, self.shape, self.value.dtype.str, structural, shapes)

    def location(self) -> dict[str, np.ndarray]:
        """The location parameters (the value being noised), as arrays."""
        return {k: np.asarray(self.params[k], dtype=float)
                for k in LOCATION_PARAMS.get(self.method, ()) if k in self.params}

    def scales(self) -> dict[str, np.ndarray]:
        """The noise-scale parameters (``uniform``: its width ``high − low``), as arrays."""
        if self.method == "uniform":
            return {"width": np.asarray(self.params["high"], dtype=float)
                    - np.asarray(self.params["low"], dtype=float)}
        return {k: np.asarray(self.params[k], dtype=float)
                for k in SCALE_PARAMS.get(self.method, ()) if k in self.params}

    def selection(self) -> dict[str, object]:
        """Every other non-structural parameter (probabilities, bounds, arrays permuted)."""
        skip = set(LOCATION_PARAMS.get(self.method, ())) | set(SCALE_PARAMS.get(self.method, ()))
        if self.method == "uniform":
            skip |= {"low", "high"}
        return {k: v for k, v in self.params.items()
                if k not in skip and k not in STRUCTURAL_PARAMS}


def _numeric(v: object) -> bool:
    return isinstance(v, np.ndarray | int | float | np.integer | np.floating) and not isinstance(
        v, bool)


@dataclass(eq=False)
class DrawLog:
    """Everything one recording generator (and its spawned children) saw.

    Attributes
    ----------
    draws
        The recorded calls, in call order.
    notes
        Things the recorder could not follow (``bit_generator`` accessed, …).
    seed
        ``(entropy, spawn_key, pool_size)`` of the seed the generator was built from.
    bit_generator
        The bit-generator class (for replays).
    generators
        Stream path → the recording generator of that stream (for the state check).
    """

    draws: list[Draw] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seed: tuple | None = None
    bit_generator: type | None = None
    generators: dict[tuple[int, ...], RecordingGenerator] = field(default_factory=dict,
                                                                   repr=False)

    def noise(self) -> list[Draw]:
        """The draws proper (spawns left out)."""
        return [d for d in self.draws if d.method != "spawn"]


def _recorder(name: str) -> Callable[..., Any]:
    base = getattr(np.random.Generator, name)
    sig = inspect.signature(base)

    def method(self: RecordingGenerator, *args: Any, **kwargs: Any) -> Any:
        if self._depth:  # a sampler calling another one: the outer call is the record
            return base(self, *args, **kwargs)
        try:
            bound = sig.bind(self, *args, **kwargs)
            bound.apply_defaults()
            params = {k: _keep(v) for k, v in bound.arguments.items() if k not in _NOT_KEPT}
        except TypeError:  # numpy will raise its own error for a bad call
            params = None
        self._depth += 1
        try:
            out = base(self, *args, **kwargs)
        finally:
            self._depth -= 1
        if params is not None:
            value = bound.arguments["x"] if name == "shuffle" else out
            value = (np.frombuffer(value, dtype=np.uint8).copy() if isinstance(value, bytes)
                     else np.array(value, copy=True))
            self._log.draws.append(Draw(self._stream, name, params, value))
        return out

    method.__name__ = name
    method.__qualname__ = f"RecordingGenerator.{name}"
    method.__doc__ = f"``Generator.{name}``, recorded in the log."
    return method


class RecordingGenerator(np.random.Generator):
    """A ``numpy.random.Generator`` that logs every draw (catalogue A.9).

    Draws are bit-identical to those of a plain ``Generator`` on the same bit
    generator: each method calls numpy's own, then records the call.

    Parameters
    ----------
    bit_generator
        The bit generator to draw from.
    log
        The log to write to (a new one by default); spawned children share it.
    stream
        Stream path of this generator in the log (``()`` for the handed one).
    """

    def __init__(self, bit_generator: np.random.BitGenerator, log: DrawLog | None = None,
                 stream: tuple[int, ...] = ()) -> None:
        super().__init__(bit_generator)
        self._log = DrawLog() if log is None else log
        self._stream = tuple(stream)
        self._depth = 0
        self._children = 0
        self._log.generators[self._stream] = self
        if self._log.bit_generator is None:
            self._log.bit_generator = type(bit_generator)

    @property
    def log(self) -> DrawLog:
        """The draw log (shared with spawned children)."""
        return self._log

    @property
    def bit_generator(self) -> np.random.BitGenerator:  # type: ignore[override]
        """The underlying bit generator; an access is noted (draws from it bypass the log)."""
        if not self._depth:
            self._log.notes.append(f"bit_generator of stream {self._stream} accessed")
        return _RAW_BIT_GENERATOR.__get__(self)

    def spawn(self, n_children: int) -> list[RecordingGenerator]:  # type: ignore[override]
        """Children that record into the same log (stream paths ``stream + (k,)``)."""
        bits = _RAW_BIT_GENERATOR.__get__(self).spawn(n_children)
        first = self._children
        self._children += len(bits)
        self._log.draws.append(Draw(self._stream, "spawn", {"n_children": int(n_children)},
                                    np.empty(0)))
        return [RecordingGenerator(b, self._log, self._stream + (first + k,))
                for k, b in enumerate(bits)]

    def __reduce__(self) -> tuple:
        # a pickled copy (e.g. sent to a worker) would draw outside the log: refuse quietly
        # by pickling as a plain Generator at the current state, and say so in the log
        self._log.notes.append(f"stream {self._stream} pickled (draws of the copy unrecorded)")
        return np.random.Generator(_RAW_BIT_GENERATOR.__get__(self)).__reduce__()


for _name in _METHODS:
    setattr(RecordingGenerator, _name, _recorder(_name))
del _name


def _seed_sequence(seed: int | np.random.SeedSequence) -> np.random.SeedSequence:
    """A fresh copy (spawning mutates a SeedSequence, so coupled runs must not share one)."""
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(entropy=seed.entropy, spawn_key=seed.spawn_key,
                                      pool_size=seed.pool_size)
    return np.random.SeedSequence(seed)


def recording_generator(seed: int | np.random.SeedSequence,
                        bit_generator: type = np.random.PCG64) -> RecordingGenerator:
    """A recording generator on ``bit_generator(seed)`` with a fresh log (seed stored)."""
    ss = _seed_sequence(seed)
    gen = RecordingGenerator(bit_generator(ss))
    gen.log.seed = (ss.entropy, ss.spawn_key, ss.pool_size)
    return gen


def recording_pair(seed: int | np.random.SeedSequence,
                   bit_generator: type = np.random.PCG64
                   ) -> tuple[RecordingGenerator, RecordingGenerator]:
    """Two recording generators on the same seed: one for M(D), one for M(D′)."""
    return recording_generator(seed, bit_generator), recording_generator(seed, bit_generator)


@dataclass(frozen=True)
class LogCheck:
    """Result of :func:`verify_log`.

    ``complete`` is True when a bare generator replaying the log from the same seed
    reproduces every recorded value and ends in the same state on every stream: then no
    draw from the handed stream escaped the log.
    """

    complete: bool
    reason: str = ""


def verify_log(log: DrawLog) -> LogCheck:
    """Replay ``log`` on bare generators from its seed; compare values and final states."""
    if log.seed is None or log.bit_generator is None:
        return LogCheck(False, "the log has no seed to replay from")
    entropy, spawn_key, pool_size = log.seed
    root = np.random.SeedSequence(entropy=entropy, spawn_key=spawn_key, pool_size=pool_size)
    bare: dict[tuple[int, ...], np.random.Generator] = {
        (): np.random.Generator(log.bit_generator(root))}
    for i, d in enumerate(log.draws):
        gen = bare.get(d.stream)
        if gen is None:
            return LogCheck(False, f"draw {i} on stream {d.stream} that was never spawned")
        if d.method == "spawn":
            start = sum(1 for s in bare if len(s) == len(d.stream) + 1 and s[:-1] == d.stream)
            for k, child in enumerate(gen.spawn(d.params["n_children"])):
                bare[d.stream + (start + k,)] = child
            continue
        params = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in d.params.items()}
        out = getattr(gen, d.method)(**params)
        value = params["x"] if d.method == "shuffle" else out
        value = (np.frombuffer(value, dtype=np.uint8) if isinstance(value, bytes)
                 else np.asarray(value))
        if value.shape != d.value.shape or not np.array_equal(
                value, d.value, equal_nan=value.dtype.kind in "fc"):
            return LogCheck(False, f"draw {i} ({d.method}) did not replay to the recorded "
                                   "values: the stream was advanced outside the log before it")
    for stream, rec in log.generators.items():
        twin = bare.get(stream)
        if twin is None:
            return LogCheck(False, f"stream {stream} has no replay")
        if (_RAW_BIT_GENERATOR.__get__(rec).state != twin.bit_generator.state):
            return LogCheck(False, f"stream {stream} was advanced outside the recorded "
                                   "methods (e.g. through its bit_generator)")
    return LogCheck(True)
