"""Chunked, reproducible sampling of M(D) and M(D′) for the sample-based auditors (catalogue A.3).

Scale: chunks and executors
---------------------------
Sampling is done in chunks of ``chunk_size`` rows. Each chunk gets its own
child generator spawned from ``rng`` (``Generator.spawn``, i.e. a
``SeedSequence`` spawn), so results depend only on ``rng``, ``n`` and
``chunk_size`` — never on where the chunks run. Pass any object with the
``concurrent.futures.Executor`` interface (``submit(fn, *args)`` returning a
future with ``result()``) as ``executor`` to spread the chunks; certification
chunks are sampled *and counted* on the worker, so only a few integers travel
back. In-process by default.

Running an audit on a Dask cluster (``pip install "dask[distributed]"``;
dask's ``Client`` has the ``submit``/``result`` interface, so nothing else is
needed)::

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")     # or Client() for a local cluster
    result = audit_blackbox(mech, d0, d1, n=5_000_000,
                            rng=np.random.default_rng(seed), executor=client,
                            chunk_size=200_000)

The mechanism and datasets are pickled to the workers (they are frozen
dataclasses), every worker needs ``dpgp_audit`` importable, and the result is
bit-identical to the in-process run with the same seed.

Chunks that pay: unless ``chunk_size`` is given, a phase of n draws per side is cut
into about 32 chunks per side (at least 256 rows, at most the memory cap), so an
expensive mechanism has enough chunks to spread; the chunk rule depends only on n
and the output size, never on timings. Every executor is wrapped in a
:class:`~dpgp_audit.audit.blackbox.executors.BatchingExecutor`, which keeps cheap draws in
process and groups the chunks of expensive ones into a few tasks per worker, balanced
by rows; it times one chunk in process once and learns the cost per draw from the
tasks' own timings afterwards (so the sequential auditor's rounds pay no timing each).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.audit.blackbox.executors import BatchingExecutor, as_batching
from dpgp_audit.contract import Executor, Mechanism, checked_sample, same_release_shape
from dpgp_audit.dataset import Dataset

__all__ = ["ChunkedSampler", "auto_chunk", "child_rngs", "finite_scores", "prepare_split",
           "run_jobs", "split_sizes"]


_FIT_CHUNK = 50_000  # rows per chunk while fitting (the output size is not known yet)


_FIT_FRACTION_FIXED = 0.25  # default fitting share when the score is known (lr-gaussian)
_CHUNKS_PER_SIDE = 32  # default chunks per phase and side (enough to spread expensive draws)
_MIN_CHUNK = 256  # ... but never fewer rows per chunk (per-call overhead of cheap draws)


def child_rngs(rng: np.random.Generator, k: int) -> list[np.random.Generator]:
    """Spawn ``k`` independent child generators (SeedSequence spawn)."""
    try:
        return rng.spawn(k)
    except (TypeError, ValueError, AttributeError):  # bit generator without a seed sequence
        seed = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
        return [np.random.default_rng(s) for s in seed.spawn(k)]


def split_sizes(n: int, chunk: int) -> list[int]:
    """``n`` cut into pieces of ``chunk`` (the last one shorter if ``chunk`` does not divide n)."""
    return [chunk] * (n // chunk) + ([n % chunk] if n % chunk else [])


def _sample_raw(mechanism: Mechanism, data: Dataset, size: int, rng: np.random.Generator,
                index: int) -> np.ndarray:
    del index  # makes task keys unique on schedulers that hash arguments (dask)
    return checked_sample(mechanism, data, size, rng)


def finite_scores(s: object) -> np.ndarray:
    """Scores as floats, refused if one is NaN or infinite.

    The outputs scored are finite (:func:`~dpgp_audit.contract.checked_sample` refuses
    others), so a non-finite score comes from the score itself, e.g. an overflow.
    """
    s = np.asarray(s, dtype=float)
    if not np.isfinite(s).all():
        raise ValueError("a score of the mechanism's outputs is NaN or infinite (the outputs "
                         "are finite; the score overflows on them): the audit refuses to "
                         "count it")
    return s


def _sample_scores(mechanism: Mechanism, data: Dataset, size: int, rng: np.random.Generator,
                   index: int, score: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    return finite_scores(score(_sample_raw(mechanism, data, size, rng, index)))


def _sample_counts(mechanism: Mechanism, data: Dataset, size: int, rng: np.random.Generator,
                   index: int, score: Callable[[np.ndarray], np.ndarray],
                   thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts #{s > t} and #{s < t} for every threshold, on a fresh chunk."""
    s = np.sort(_sample_scores(mechanism, data, size, rng, index, score))
    above = s.size - np.searchsorted(s, thresholds, side="right")
    below = np.searchsorted(s, thresholds, side="left")
    return above.astype(np.int64), below.astype(np.int64)


def run_jobs(executor: Executor | None, fn: Callable, jobs: Sequence[tuple]) -> list:
    """Run ``fn(*args)`` for every job, in process or on a ``concurrent.futures``-style executor."""
    if executor is None:
        return [fn(*args) for args in jobs]
    if isinstance(executor, BatchingExecutor):
        return executor.run_chunks(fn, jobs, [int(args[2]) for args in jobs])
    if not hasattr(executor, "submit"):
        raise TypeError("executor must have a concurrent.futures-style submit(fn, *args)")
    futures = [executor.submit(fn, *args) for args in jobs]  # type: ignore[attr-defined]
    return [f.result() for f in futures]


@dataclass
class ChunkedSampler:
    """Chunked sampling of one phase for both datasets, reproducible from one generator."""

    mechanism: Mechanism
    d0: Dataset
    d1: Dataset
    chunk: int
    executor: Executor | None
    seconds: float = 0.0
    chunks: int = 0
    fixed_chunk: bool = False  # True: ``chunk`` was given by the user and is used as is
    min_chunk: int = _MIN_CHUNK  # fewest rows per chunk (the sequential auditor's rule differs)
    chunks_per_call: int = _CHUNKS_PER_SIDE  # about this many chunks per side and call

    def __post_init__(self) -> None:
        if self.executor is not None and not hasattr(self.executor, "submit") and \
                not isinstance(self.executor, BatchingExecutor):
            raise TypeError("executor must have a concurrent.futures-style submit(fn, *args)")
        self.executor = as_batching(self.executor)

    def chunk_rows(self, n: int) -> int:
        """Rows per chunk for a phase of ``n`` draws per side (a function of n only).

        About ``chunks_per_call`` chunks of at least ``min_chunk`` rows, at most ``chunk``
        (the memory cap); the attributes are fixed before sampling, never from timings.
        """
        if self.fixed_chunk:
            return self.chunk
        return int(min(self.chunk, max(self.min_chunk, math.ceil(n / self.chunks_per_call))))

    def jobs(self, rng: np.random.Generator, n: int) -> list[tuple]:
        """One ``(side, args)`` per chunk and side, each chunk with its own child generator."""
        sizes = split_sizes(n, self.chunk_rows(n))
        rngs = child_rngs(rng, 2 * len(sizes))
        out = []
        for side, data in enumerate((self.d0, self.d1)):
            for i, size in enumerate(sizes):
                out.append((side, (self.mechanism, data, size, rngs[side * len(sizes) + i],
                                   side * len(sizes) + i)))
        return out

    def raw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Raw outputs of ``n`` samples per side."""
        t = time.perf_counter()
        jobs = self.jobs(rng, n)
        res = run_jobs(self.executor, _sample_raw, [a for _, a in jobs])
        self.seconds += time.perf_counter() - t
        self.chunks += len(jobs)
        sides = [[r for (s, _), r in zip(jobs, res, strict=True) if s == side] for side in (0, 1)]
        for chunks in sides:
            same_release_shape(self.mechanism, chunks, neighbours=False)
        same_release_shape(self.mechanism, (sides[0][0], sides[1][0]))
        return tuple(np.concatenate(chunks) for chunks in sides)  # type: ignore[return-value]

    def scores(self, rng: np.random.Generator, n: int,
               score: Callable) -> tuple[np.ndarray, np.ndarray]:
        """Scores of ``n`` samples per side (only scores travel back from workers)."""
        t = time.perf_counter()
        jobs = self.jobs(rng, n)
        res = run_jobs(self.executor, _sample_scores, [(*a, score) for _, a in jobs])
        self.seconds += time.perf_counter() - t
        self.chunks += len(jobs)
        return tuple(np.concatenate([r for (s, _), r in zip(jobs, res, strict=True) if s == side])
                     for side in (0, 1))  # type: ignore[return-value]

    def counts(self, rng: np.random.Generator, n: int, score: Callable,
               thresholds: np.ndarray) -> dict[str, np.ndarray]:
        """Tail counts at ``thresholds`` of ``n`` fresh samples per side (counted on the worker)."""
        t = time.perf_counter()
        jobs = self.jobs(rng, n)
        res = run_jobs(self.executor, _sample_counts, [(*a, score, thresholds) for _, a in jobs])
        self.seconds += time.perf_counter() - t
        self.chunks += len(jobs)
        out = {}
        for side in (0, 1):
            out[f"above{side}"] = sum(r[0] for (s, _), r in zip(jobs, res, strict=True)
                                      if s == side)
            out[f"below{side}"] = sum(r[1] for (s, _), r in zip(jobs, res, strict=True)
                                      if s == side)
        return out


def prepare_split(mechanism: Mechanism, d0: Dataset, d1: Dataset, n: int,
                  rng: np.random.Generator, alpha: float, chunk_size: int | None,
                  fit_fraction: float | None, executor: Executor | None,
                  fixed: Callable | None) -> tuple[int, int, int, ChunkedSampler]:
    """Validate the arguments; split ``n`` into fitting and certification samples."""
    n = check_positive_int("n", n)
    if fit_fraction is None:  # a fixed score only needs its threshold fitted
        fit_fraction = _FIT_FRACTION_FIXED if fixed is not None else 0.5
    rng = check_rng(rng)
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if not (0 < fit_fraction < 1):
        raise ValueError(f"fit_fraction must lie in (0, 1), got {fit_fraction!r}")
    if not hasattr(mechanism, "sample"):
        raise TypeError("mechanism must implement sample(data, n, rng)")
    n_fit = max(1, int(round(n * fit_fraction)))
    n_cert = n - n_fit
    if n_cert < 1:
        raise ValueError(f"n={n} is too small to split into fitting and certification samples")
    chunk = check_positive_int("chunk_size", _FIT_CHUNK if chunk_size is None else chunk_size)
    return n_fit, n_cert, chunk, ChunkedSampler(mechanism, d0, d1, chunk, executor,
                                                fixed_chunk=chunk_size is not None)


def auto_chunk(sampler: ChunkedSampler, chunk_size: int | None, dim: int) -> int:
    """Certification chunk: about 2**21 output values (16 MB) unless the user fixed it."""
    if chunk_size is None:
        sampler.chunk = int(min(200_000, max(10_000, 2**21 // max(dim, 1))))
    return sampler.chunk
