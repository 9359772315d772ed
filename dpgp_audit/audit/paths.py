"""Privacy loss along coupled paths: releases made of noisy steps (catalogue A.9).

An iterative release — noisy gradient descent, noisy k-means, a noisy running estimate —
releases a step, then computes the next from what it released. No output after the first
is affine in *all* the noise drawn (the next step's location is a non-linear function of
the last step's noise), so the grey-box survey (:mod:`~dpgp_audit.audit.greybox`) bounds
only the first step. Each step, though, is affine in its own fresh noise once the released
prefix is fixed, and that is enough to compute the pair's privacy loss along a path:

    L(y) = log p_D(y) − log p_D′(y)
         = Σ_noise [log f(v) − log f(v′)] + Σ_steps [log |det J′| − log |det J|]

where v are the noise values that produced y on D, v′ values that produce the *same* y on
D′, f each value's recorded law and J, J′ each step's map from its noise to its outputs
(the change of variables of a block-triangular map: one square block per step). The
auditor finds v′ by running ``sample`` on D′ with an :class:`InjectingGenerator`, which
hands the mechanism chosen values in place of its draws: step by step, it measures the
step's map on D′ by perturbing that step's noise, and solves for the noise that puts D′'s
outputs on D's. A final injected run on D′ must reproduce D's release; otherwise nothing
is concluded.

A release rounded to a public grid after its noise (the kit's float-safe releases,
:mod:`~dpgp_audit.privacy.float_release`) is a discrete law: a step's output is the cell
``y ± Λ/2`` its pre-rounding value fell in, and its probability is that of the noise
landing in the cell's preimage, a box around v of half-width J⁻¹Λ (bounded by its
bounding box). The loss is then bounded from below by the smallest log density over D's
box minus the largest over D′'s (the step's map verified the same on both sides, so the
determinants cancel), and the next step must read the released value, not the rounded-off
remainder (checked by moving the noise inside its cell). The kit's exact Laplace sampler
draws integer words; its values are handed over as the words that encode them
(:func:`~dpgp_audit.privacy.float_release.encode_laplace_exact_uniform`).

What it concludes
-----------------
Each loss is exact (or a lower bound, for a rounded release) for a path y_i sampled from
M(D), *given the recorded structure* (every step verified affine in its own noise on D′
and on D, and D′ reproducing D's release from the solved noise). Under a pure ε claim a
path with L > ε is a definitive counterexample: for a rounded release y is an output of
positive probability whose ratio exceeds e^ε, and for a continuous one the densities are
continuous at a sampled path with probability one. The claim's float allowance (τ) does
not enter: it bounds the distance of the floats to the exact mechanism, which must be
ε-DP itself. The finding must be reproduced on a second seed, as every definitive finding
of the survey. Under a claim with δ > 0 a path's loss proves nothing alone: the losses
give a point estimate of KL(D‖D′), and a pair above what a Gaussian release meeting
the claim allows is a lead: the black-box part tests it by Monte Carlo over fresh paths
with a share of its α (:func:`certify_lead`).

Scope: ``normal``, ``standard_normal`` and ``laplace`` draws of the handed generator and
the kit's exact Laplace sampler (one exponent word per value), one draw per step for all
releases (leading axis ``n``) or a loop over releases, at least two steps, each releasing
as many outputs as it draws noise values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import one_line
from dpgp_audit.audit.recording import (
    _METHODS,
    Draw,
    RecordingGenerator,
    recording_generator,
    verify_log,
)
from dpgp_audit.contract import ContractError, Mechanism, checked_sample
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.float_release import encode_laplace_exact_uniform

__all__ = [
    "INJECTABLE",
    "PATH_ROWS",
    "InjectingGenerator",
    "PathLosses",
    "certify_lead",
    "certify_rows",
    "path_losses",
    "with_paths",
]

#: Samplers whose values can be handed to the mechanism in place of real draws (and the
#: kit's exact Laplace sampler, through its integer words).
INJECTABLE: tuple[str, ...] = ("normal", "standard_normal", "laplace")
#: Paths (releases per side and run) of one path analysis.
PATH_ROWS = 64
#: Most noise values one step may draw per release (each costs two perturbation runs).
MAX_STEP_VALUES = 16
#: Most steps (noise draws per release) followed.
MAX_STEPS = 64
#: Most calls of ``sample`` one path analysis may make (a step of m noise values costs
#: about 2m + 5 calls, so about ten steps of five values each).
MAX_RUNS = 160
#: Continuous outputs must be reproduced to this precision, relative to the noise's effect
#: on the column (beyond a few float spacings).
MATCH_RTOL = 1e-8
#: A step's measured map must predict a combined perturbation to this precision, relative
#: to the change the perturbation made (plus two grid steps for a rounded release and a
#: few float spacings).
LINEAR_RTOL = 1e-8
#: An output column is rounded (a cell, not a value) when its grid is above this fraction
#: of the noise it receives; float64 round-off sits near 2⁻⁵², the kit's grid near 2⁻¹⁰.
ROUNDED_REL = 2.0**-30
#: Perturbation of a rounded step's noise, in noise sds, when measuring its map (the grid
#: then errs by about Λ / (this · a) relatively).
ROUNDED_PROBE = 64.0
#: The largest move of a standard Laplace value of the kit's sampler when measuring a map
#: (the words encode |t| up to about 21.4; a drawn value is smaller than that).
KIT_PROBE_CAP = 12.0
#: Noise moved inside its cell, as a share of the cell, to check that the next step reads
#: the released value and not the remainder the rounding dropped.
CELL_NUDGE = 0.3


class InjectingGenerator(RecordingGenerator):
    """A recording generator that hands the mechanism given values for chosen draws.

    ``values`` maps the index of a draw (counting the generator's top-level calls, in
    call order, as the log records them) to the array to return instead of the real
    draw. The real draw is still made, so the bit stream advances as it would; the log
    records the values handed over.
    """

    def __init__(self, bit_generator: np.random.BitGenerator,
                 values: dict[int, np.ndarray]) -> None:
        super().__init__(bit_generator)
        self._values = values
        self._count = 0

    def _swap(self, out: object) -> object:
        j = self._count
        self._count += 1
        if j not in self._values:
            return out
        real = np.asarray(out)
        new = np.asarray(self._values[j]).astype(real.dtype).reshape(real.shape)
        last = self._log.draws[-1]
        self._log.draws[-1] = Draw(last.stream, last.method, last.params, new.copy())
        return new if isinstance(out, np.ndarray) else new.item()


def _injecting(name: str):  # noqa: ANN202 - a method factory
    base = getattr(RecordingGenerator, name)

    def method(self: InjectingGenerator, *args: object, **kwargs: object) -> object:
        depth = self._depth
        out = base(self, *args, **kwargs)
        return out if depth else self._swap(out)

    method.__name__ = name
    method.__qualname__ = f"InjectingGenerator.{name}"
    method.__doc__ = f"``Generator.{name}``, recorded, its values replaced when given."
    return method


for _name in _METHODS:
    setattr(InjectingGenerator, _name, _injecting(_name))
del _name


@dataclass(frozen=True, eq=False)
class PathLosses:
    """The privacy loss of one pair along ``n`` paths sampled from M(D).

    Attributes
    ----------
    losses
        ``(n,)``: L(y_i) = log p_D(y_i) − log p_D′(y_i), exact given the structure, or a
        lower bound on it for a rounded release.
    steps
        Steps found (groups of noise draws with outputs of their own).
    runs
        Calls of ``sample`` made (each of ``n`` releases).
    rounded
        Whether some output is rounded to a grid (the losses are then lower bounds).
    """

    losses: np.ndarray = field(repr=False)
    steps: int
    runs: int
    rounded: bool

    @property
    def n(self) -> int:
        """Paths."""
        return int(self.losses.size)

    def worst(self) -> float:
        """The largest loss seen (a lower bound on a pure ε, given the structure)."""
        return float(np.max(self.losses))

    def kl(self) -> float:
        """The mean loss: a point estimate of KL(M(D) ‖ M(D′)) (a lower one when rounded)."""
        return float(np.mean(self.losses))


class _Bail(Exception):
    """The release does not have the structure the path analysis needs."""


# --------------------------------------------------------------------------- noise units
@dataclass(frozen=True)
class _Unit:
    """One noise draw as the analysis sees it: a plain draw, or a run of the kit's sampler."""

    draw: Draw  # the values (a kit run decoded to standard Laplace values)
    raw: tuple[int, int]  # its span among the generator's draws
    kit: bool


def _units(raw: Sequence[Draw]) -> list[_Unit] | str:
    from dpgp_audit.audit.greybox import kit_laplace_runs

    out = []
    for start, stop, d in kit_laplace_runs(raw):
        kit = stop - start > 1 or raw[start].method == "integers"
        if d.method not in INJECTABLE:
            return f"draws that cannot be injected ({d.method})"
        if kit and stop - start != 3:
            return "draws that cannot be injected (an exact Laplace run of several rounds)"
        if d.stream != ():
            return "draws from spawned generators"
        out.append(_Unit(d, (start, stop), kit))
    return out


@dataclass(frozen=True)
class _Layout:
    """Where release i's values of step s sit among the units of one call."""

    kind: str  # "vector": unit s holds every release (leading axis n); "loop": per release
    steps: int
    n: int

    def unit(self, i: int, s: int) -> int:
        """The unit holding release ``i``'s values of step ``s``."""
        return s if self.kind == "vector" else i * self.steps + s

    def values(self, units: Sequence[_Unit]) -> list[np.ndarray]:
        """Per step, ``(n, m_s)`` values."""
        if self.kind == "vector":
            return [np.asarray(units[s].draw.value, dtype=float).reshape(self.n, -1)
                    for s in range(self.steps)]
        return [np.stack([np.ravel(units[self.unit(i, s)].draw.value).astype(float)
                          for i in range(self.n)]) for s in range(self.steps)]

    def params(self, units: Sequence[_Unit], s: int) -> tuple[np.ndarray, np.ndarray, str]:
        """Per release, step ``s``'s (location, scale) arrays ``(n, m_s)`` and its law."""
        draws = [units[self.unit(i, s)].draw
                 for i in range(1 if self.kind == "vector" else self.n)]
        rows = self.n if self.kind == "vector" else 1

        def spread(d: Draw, name: str, default: float) -> np.ndarray:
            v = default if d.method == "standard_normal" else d.params.get(name, default)
            return np.broadcast_to(np.asarray(v, dtype=float), d.value.shape).reshape(rows, -1)

        loc = np.vstack([spread(d, "loc", 0.0) for d in draws])
        scale = np.vstack([spread(d, "scale", 1.0) for d in draws])
        return loc, scale, "laplace" if draws[0].method == "laplace" else "normal"


def _layout(units: Sequence[_Unit], n: int) -> _Layout | str:
    if len(units) < 2:
        return "fewer than two noise draws"
    if all(u.draw.value.ndim >= 1 and u.draw.value.shape[0] == n for u in units):
        if len(units) > MAX_STEPS:
            return f"more than {MAX_STEPS} steps"
        return _Layout("vector", len(units), n)
    if len(units) % n == 0 and len(units) // n >= 2:
        s = len(units) // n
        sig = [(u.draw.method, u.draw.value.shape, u.kit) for u in units[:s]]
        if any([(u.draw.method, u.draw.value.shape, u.kit) for u in units[i * s:(i + 1) * s]]
               != sig for i in range(n)):
            return "the releases' draws differ"
        if s > MAX_STEPS:
            return f"more than {MAX_STEPS} steps"
        return _Layout("loop", s, n)
    return "the draws do not split into steps per release"


# --------------------------------------------------------------------------- injected runs
class _Runner:
    """``sample`` on one seed with chosen noise values, counting the calls."""

    def __init__(self, mechanism: Mechanism, seed: np.random.SeedSequence, n: int,
                 layout: _Layout, units: list[_Unit], raw: Sequence[Draw], max_runs: int):
        self.mechanism, self.seed, self.n, self.layout = mechanism, seed, n, layout
        self.units, self.raw = units, list(raw)
        self.shapes = [d.value.shape for d in raw]
        self.signature = [d.signature() for d in raw]
        self.runs, self.max_runs = 1, max_runs  # the recorded run on D counts

    def _inject(self, W: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
        lay, out = self.layout, {}
        for s in range(lay.steps):
            for i in range(1 if lay.kind == "vector" else lay.n):
                k = lay.unit(i, s)
                unit = self.units[k]
                vals = W[s] if lay.kind == "vector" else W[s][i]
                start = unit.raw[0]
                if not unit.kit:
                    out[start] = np.asarray(vals).reshape(self.shapes[start])
                    continue
                vals = np.asarray(vals).reshape(unit.draw.value.shape)
                if np.array_equal(vals, unit.draw.value):  # as drawn: the words drawn
                    words = tuple(self.raw[j].value for j in range(start, start + 3))
                else:
                    words = encode_laplace_exact_uniform(vals)  # type: ignore[assignment]
                if isinstance(words, str):
                    raise _Bail(words)
                for j, w in zip(range(start, start + 3), words, strict=True):
                    out[j] = w.reshape(self.shapes[j])
        return out

    def __call__(self, data: Dataset, W: Sequence[np.ndarray]
                 ) -> tuple[np.ndarray, list[np.ndarray], list[_Unit]]:
        """The release, the values actually handed (per step) and the run's units."""
        if self.runs >= self.max_runs:
            raise _Bail(f"the analysis needs more than {self.max_runs} calls of sample()")
        ss = np.random.SeedSequence(self.seed.entropy, spawn_key=self.seed.spawn_key)
        gen = InjectingGenerator(np.random.PCG64(ss), self._inject(W))
        self.runs += 1
        try:
            out = np.asarray(checked_sample(self.mechanism, data, self.n, gen), dtype=float)
        except ContractError:
            raise
        except Exception as err:  # noqa: BLE001 - noise handed in may break a release
            raise _Bail(f"sample() failed on injected noise ({type(err).__name__}: "
                        f"{one_line(err, 120)})") from err
        raw = gen.log.noise()
        if [d.signature() for d in raw] != self.signature or gen.log.notes:
            raise _Bail("the injected run drew differently (the data or the noise decides "
                        "which draws are made)")
        units = _units(raw)
        if isinstance(units, str) or [u.raw for u in units] != [u.raw for u in self.units]:
            raise _Bail("the injected run's noise did not decode as the recorded one")
        return out.reshape(self.n, -1), self.layout.values(units), units


# --------------------------------------------------------------------------- the analysis
def _shifted(W: Sequence[np.ndarray], steps: Sequence[int], delta: np.ndarray
             ) -> list[np.ndarray]:
    """``W`` with ``delta`` (n, Σ m_s over ``steps``) added to those steps' values."""
    out = [w.copy() for w in W]
    at = 0
    for s in steps:
        m = W[s].shape[1]
        out[s] = out[s] + delta[:, at:at + m]
        at += m
    return out


def _float_slack(*arrays: np.ndarray) -> np.ndarray:
    """Eight float spacings at the largest of the values: the round-off of a few operations."""
    return 8.0 * np.spacing(np.max([np.abs(a) for a in arrays], axis=0))


def _float_cell(values: np.ndarray) -> np.ndarray:
    """Per value, the float spacing at it, in float32 where a column is all float32 values.

    A release computed in floats is rounded to that spacing at least, whatever grid its
    other values show (a smaller value has a finer spacing): the cell never gets narrower.
    """
    as32 = values.astype(np.float32)
    f32 = np.all(as32.astype(float) == values, axis=0)
    return np.where(f32[None, :], np.spacing(np.abs(as32)).astype(float), np.spacing(
        np.abs(values)))


def _jacobians(run: _Runner, data: Dataset, W: list[np.ndarray], base: np.ndarray,
               steps: Sequence[int], cols: np.ndarray, sd: np.ndarray, grid: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Per release, the map of ``steps``' noise to outputs ``cols`` (n, K, m), verified,
    and the finest grid its outputs showed over these runs (n, K): with the prefix fixed,
    a release rounded to a grid keeps one grid for the step, and m + 2 values on it show
    that grid, or a multiple of it with probability 2^−(m+2).
    """
    from dpgp_audit.audit.greybox import value_grid

    n, m = base.shape[0], sd.size
    seen = value_grid(base[:, cols])
    here = np.concatenate([W[s] for s in steps], axis=1)
    h = _toward_zero(here, sd)  # (n, m): each value moved toward 0 and past it
    blocks = []
    for r in range(m):
        delta = np.zeros((n, m))
        delta[:, r] = h[:, r]
        out, _, _ = run(data, _shifted(W, steps, delta))
        blocks.append((out[:, cols] - base[:, cols]) / h[:, [r]])
        seen = np.minimum(seen, value_grid(out[:, cols]))
    J = np.stack(blocks, axis=2)
    # check: a combined perturbation is predicted by the map (the step is affine in it)
    u = h * np.where((np.arange(n)[:, None] + np.arange(m)[None, :]) % 2, 0.7, 0.4)
    out, _, _ = run(data, _shifted(W, steps, u))
    pred = base[:, cols] + np.einsum("nkm,nm->nk", J, u)
    # against the change the noise made, not the outputs' size: a grid hidden by a public
    # offset (a release shown as 273.15 + c, or in cents) is a cell no solve can see into
    moved = np.abs(out[:, cols] - base[:, cols]).max(axis=0)
    if np.any(np.abs(out[:, cols] - pred) > LINEAR_RTOL * moved + 2.0 * grid[:, cols]
              + _float_slack(out[:, cols], base[:, cols])):
        raise _Bail("a step is not affine in its own noise once the released prefix is fixed")
    return J, np.minimum(seen, value_grid(out[:, cols]))


def _toward_zero(values: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Moves of ``size`` (per column) toward zero: the moved values stay within the larger
    of |value| and ``size``, inside what the kit's Laplace words can encode.
    """
    return -np.where(values >= 0, 1.0, -1.0) * np.broadcast_to(size, values.shape)


def _logdet(J: np.ndarray) -> np.ndarray:
    sign, logdet = np.linalg.slogdet(J)
    if np.any(sign == 0) or not np.all(np.isfinite(logdet)):
        raise _Bail("a step's noise does not reach its outputs one-to-one")
    return logdet


def _box_logpdf(v: np.ndarray, r: np.ndarray, loc: np.ndarray, scale: np.ndarray, law: str
                ) -> tuple[np.ndarray, np.ndarray]:
    """Per release, the smallest and largest log density over the boxes ``v ± r``."""
    z = np.abs(v - loc)
    far, near = (z + r) / scale, np.maximum(z - r, 0.0) / scale
    if law == "laplace":
        lo, hi = -far, -near
    else:
        lo, hi = -0.5 * far**2, -0.5 * near**2
    return np.sum(lo - np.log(scale), axis=1), np.sum(hi - np.log(scale), axis=1)


def _cell_radius(J: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Per release, the half-widths of the bounding box of J⁻¹ [−w, w] for the cell widths
    ``grid`` (n, K): it holds the cell's preimage around any of its points (twice, for the
    map's measurement error).
    """
    if not np.any(grid):
        return np.zeros(J.shape[:2])
    inv = np.abs(np.linalg.inv(J))
    with np.errstate(invalid="ignore", over="ignore"):  # · inf: a value with no grid seen
        return 2.0 * np.nan_to_num(np.einsum("nmk,nk->nm", inv, grid), nan=np.inf)


def _reads_release(run: _Runner, data: Dataset, W: list[np.ndarray], out: np.ndarray,
                   steps: Sequence[int], cols: np.ndarray, J: np.ndarray, cell: np.ndarray,
                   later: np.ndarray) -> None:
    """Raise unless the later outputs stay put when the steps' noise moves inside its cells.

    The noise is moved so that each pre-rounding output of the step moves by
    ±:data:`CELL_NUDGE` of half its grid; on the releases whose step outputs stay in their
    cells, every later output must be unchanged, bit for bit: the next step then reads the
    released values, as the path analysis assumes, not what the rounding dropped.
    """
    n = out.shape[0]
    nudge = CELL_NUDGE * 0.5 * np.where(np.isfinite(cell), cell, 0.0) * np.where(
        (np.arange(n)[:, None] + np.arange(cols.size)[None, :]) % 2, 1.0, -1.0)
    moved, _, _ = run(data, _shifted(W, steps, np.linalg.solve(J, nudge[:, :, None])[:, :, 0]))
    kept = np.all(moved[:, cols] == out[:, cols], axis=1)
    if not np.any(kept):
        raise _Bail("no release stayed in its cells when its noise moved inside them")
    if later.size and np.any(moved[np.ix_(kept, later)] != out[np.ix_(kept, later)]):
        raise _Bail("a later step reads what the rounding dropped (the noise inside a cell), "
                    "not the released value")


def path_losses(mechanism: Mechanism, d0: Dataset, d1: Dataset,
                seed: np.random.SeedSequence, *, n: int = PATH_ROWS,
                max_runs: int = MAX_RUNS, spent: list[int] | None = None
                ) -> PathLosses | str:
    """The privacy loss of (D, D′) along ``n`` paths of M(D) (module docstring).

    Returns a reason string, never a guess, when the release lacks the structure: draws
    that cannot be injected, fewer than two steps with outputs of their own, a step not
    affine in its noise or releasing other than one output per noise value, D′ not
    reproducing D's release from the solved noise, a control flow that changes under
    injection, a next step that reads what the rounding dropped, or more than
    ``max_runs`` calls needed. ``ValueError`` from ``sample`` travels on. ``spent``, when
    given, gets the calls of ``sample`` made appended, whatever the outcome.
    """
    got = _path_losses(mechanism, d0, d1, seed, n, max_runs, counter := [1])
    if spent is not None:
        spent.append(counter[0])
    return got


def _path_losses(mechanism: Mechanism, d0: Dataset, d1: Dataset, seed: np.random.SeedSequence,
                 n: int, max_runs: int, counter: list[int]) -> PathLosses | str:
    g0 = recording_generator(seed)
    out0 = np.asarray(checked_sample(mechanism, d0, n, g0), dtype=float).reshape(n, -1)
    if not verify_log(g0.log).complete or g0.log.notes:
        return "draws escaped the log"
    raw0 = g0.log.noise()
    units0 = _units(raw0)
    if isinstance(units0, str):
        return units0
    layout = _layout(units0, n)
    if isinstance(layout, str):
        return layout
    W = layout.values(units0)
    if max(w.shape[1] for w in W) > MAX_STEP_VALUES:
        return f"a step draws more than {MAX_STEP_VALUES} values per release"
    run = _Runner(mechanism, seed, n, layout, units0, raw0, max_runs)
    try:
        return _solve(run, d0, d1, out0, units0, layout, n)
    finally:
        counter[0] = run.runs


def _solve(run: _Runner, d0: Dataset, d1: Dataset, out0: np.ndarray, units0: list[_Unit],
           layout: _Layout, n: int) -> PathLosses | str:
    """:func:`path_losses` once the D run is recorded and its steps laid out."""
    from dpgp_audit.audit.greybox import output_grid, value_grid

    W = layout.values(units0)
    try:
        same, W, _ = run(d0, W)  # the values as the injection hands them (kit: re-encoded)
        if not np.array_equal(same, out0, equal_nan=True):
            return "the release is not reproduced from its own noise values"
        sd = [np.maximum(np.std(w, axis=0), 1e-12 * (1.0 + np.abs(w).max(axis=0)))
              for w in W]
        # the step of each output: the last step whose noise moves it
        last = np.full(out0.shape[1], -1)
        noise_size = np.zeros(out0.shape[1])
        for s in range(layout.steps):
            out, _, _ = run(d0, _shifted(W, [s], _toward_zero(W[s], sd[s])))
            last[np.any(out != out0, axis=0)] = s
            noise_size = np.maximum(noise_size, np.abs(out - out0).max(axis=0))
        groups: list[tuple[list[int], np.ndarray]] = []
        pending: list[int] = []
        for s in range(layout.steps):
            pending.append(s)
            cols = np.flatnonzero(last == s)
            if cols.size:
                groups.append((pending, cols))
                pending = []
        if pending:
            return "the last noise draws reach no output of their own"
        if len(groups) < 2:
            return "one step: the release is not iterative"
        if any(sum(W[s].shape[1] for s in steps) != cols.size for steps, cols in groups):
            return "a step releases other than one output per noise value it draws"
        # rounded columns: their grid is a cell of the release, not round-off
        col = output_grid(out0)
        rounded_col = np.isfinite(col) & (col > ROUNDED_REL * noise_size)
        rounded = bool(np.any(rounded_col))
        # each rounded value is a multiple of its grid: its lowest set bit bounds the grid
        # from above (the tolerance of the map's check; the cells are measured below)
        grid = np.where(rounded_col[None, :], value_grid(out0), 0.0)
        probe = ROUNDED_PROBE if rounded else 1.0
        # D′: solve step by step for the noise that gives D's outputs
        V = [w.copy() for w in W]
        loss = np.zeros(n)
        radii: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for steps, cols in groups:
            sds = np.concatenate([np.minimum(probe * sd[s], KIT_PROBE_CAP if units0[
                layout.unit(0, s)].kit else math.inf) for s in steps])
            base1, V, _ = run(d1, V)
            J1, seen1 = _jacobians(run, d1, V, base1, steps, cols, sds, grid)
            J0, seen0 = _jacobians(run, d0, W, out0, steps, cols, sds, grid)
            for _ in range(4):  # Newton on the step (a rounded one lands in the cell)
                miss = out0[:, cols] - base1[:, cols]
                if not np.any(np.abs(miss) > MATCH_RTOL * 1e-3 * noise_size[cols]):
                    break
                step = np.linalg.solve(J1, miss[:, :, None])[:, :, 0]
                base1, V, _ = run(d1, _shifted(V, steps, step))
            # each cell's width: the step's grid, as its outputs showed it on both sides
            # (the maps agree, so the grids do); 0 for the continuous outputs
            cell = np.where(grid[:, cols] > 0, np.maximum(np.minimum(seen0, seen1),
                                                          _float_cell(out0[:, cols])), 0.0)
            if rounded:
                if not np.array_equal(base1[:, cols], out0[:, cols]):
                    raise _Bail("D' does not land in D's output cells from the solved noise")
                if not np.allclose(J1, J0, rtol=1e-3, atol=1e-3 * np.abs(J0).max()):
                    raise _Bail("a step's noise map differs between D and D'")
                _reads_release(run, d0, W, out0, steps, cols, J0, cell,
                               np.flatnonzero(last > max(steps)))
            else:
                loss += _logdet(J1) - _logdet(J0)
            r0, r1 = _cell_radius(J0, cell), _cell_radius(J1, cell)
            at = 0
            for s in steps:
                m = W[s].shape[1]
                radii[s] = (r0[:, at:at + m], r1[:, at:at + m])
                at += m
        final, V, units1 = run(d1, V)
        # D′ has D's steps: each output's last step is the same at the solved noise
        for s in range(layout.steps):
            out, _, _ = run(d1, _shifted(V, [s], _toward_zero(V[s], sd[s])))
            moved = np.any(out != final, axis=0)
            if np.any(moved & (last < s)) or np.any(~moved & (last == s)):
                raise _Bail("D' releases its steps in another structure than D")
    except _Bail as why:
        return str(why)
    for s in range(layout.steps):  # each noise value's log density: D's box against D′'s
        loc0, sc0, law = layout.params(units0, s)
        loc1, sc1, _ = layout.params(units1, s)
        low0, _ = _box_logpdf(W[s], radii[s][0], loc0, sc0, law)
        _, high1 = _box_logpdf(V[s], radii[s][1], loc1, sc1, law)
        loss += low0 - high1
    miss = np.abs(final - out0) - _float_slack(final, out0)
    resid = float(np.max(miss / np.maximum(noise_size, 1e-300), initial=0.0))
    if (rounded and not np.array_equal(final, out0)) or not resid <= MATCH_RTOL:
        return (f"D' does not reproduce D's release from the solved noise (mismatch "
                f"{resid:.3g} of the noise's effect)")
    return PathLosses(loss, len(groups), run.runs, rounded)


# --------------------------------------------------------------------------- certification
#: Most fresh paths the black-box part draws to certify the survey's lead under a claim
#: with δ > 0 (each injected run is one call of ``sample`` for all of them); fewer when its
#: draws do not cover that many runs (:func:`certify_rows`).
CERTIFY_ROWS = 2048
#: Fewest paths worth a test (below, the part's draws are left to its sampled audit).
CERTIFY_MIN_ROWS = 128


def certify_rows(draws: int, calls: int) -> int:
    """Paths a certification can afford: the black-box part's ``draws`` per side and pair,
    for its two pairs, over the ``calls`` of ``sample`` one path analysis of the lead
    made; at most :data:`CERTIFY_ROWS`, 0 below :data:`CERTIFY_MIN_ROWS`.
    """
    rows = min(CERTIFY_ROWS, (2 * draws) // max(calls, 1))
    return rows if rows >= CERTIFY_MIN_ROWS else 0


def certify_lead(mechanism: Mechanism, pair: object, order: int, seed: np.random.SeedSequence,
                 alpha: float, claim: object, *, n: int = CERTIFY_ROWS) -> dict:
    """A Monte Carlo test of the claim on the privacy loss along fresh paths (level α).

    :func:`path_losses` on ``n`` fresh paths of the pair in ``order`` (as
    the survey's lead chose it, on runs of its own); with U uniform, the count of
    ``L + log(1 − U) > ε`` is exactly Binomial(n, δ(ε)) for the exact losses (the white-box
    auditor's Bernoulli trick), and no larger for the lower bounds of a rounded release.
    The claim, converted to (ε, δ) with its float allowance, is refuted when the exact
    Clopper–Pearson lower bound on δ(ε) at level α exceeds its δ; the ε reported is the
    lower confidence bound on ε(δ). Returns what was found, with ``"reason"`` when the
    analysis failed on these paths.
    """
    from dpgp_audit.audit.blackbox.fixed import _claim_epsilon_delta
    from dpgp_audit.audit.stats import cp_lower
    from dpgp_audit.audit.whitebox import UnequalProfile

    eps_c, del_c, note = _claim_epsilon_delta(claim, None)  # type: ignore[arg-type]
    d0, d1 = (pair.d0, pair.d1) if order == 0 else (pair.d1, pair.d0)  # type: ignore[attr-defined]
    paths_seed, bern_seed = seed.spawn(2)
    got = path_losses(mechanism, d0, d1, paths_seed, n=n)
    out: dict = {"label": getattr(pair, "label", ""), "order": "D||D'" if order == 0 else
                 "D'||D", "paths": n, "alpha": alpha, "epsilon_claim": eps_c,
                 "delta_claim": del_c, "conversion": note}
    if isinstance(got, str):
        return {**out, "violation": False, "reason": got}
    u = np.random.default_rng(bern_seed).random(got.n)
    prof = UnequalProfile(np.sort(got.losses + np.log1p(-u)), got.n)
    k = prof.count(eps_c)
    low = float(cp_lower(k, got.n, alpha))
    return {**out, "violation": bool(low > del_c), "count": k, "delta_lower": low,
            "epsilon_lower": prof.epsilon_lower(del_c, alpha) if del_c > 0 else (
                math.inf if k else 0.0), "calls": got.runs}


# --------------------------------------------------------------------------- the survey step
#: Pairs of the survey given a path analysis (most distinguishable first).
PATH_PAIRS = 4
#: Releases per side the path analyses of one survey may draw (the grey-box part's second
#: allowance, deterministic): about five analyses of a few steps each.
PATH_RELEASES = 49_152
#: Statuses of the pairs a path analysis may explain: a release the survey found not
#: affine in its noise as a whole, or affine only in some outputs (a first step).
CANDIDATES = ("not-additive", "additive-part", "unfitted")
#: Reasons that say a release is not of the kind analysed (not a failed analysis): the
#: report line leaves them out.
OUT_OF_SCOPE = ("draws escaped", "draws from spawned", "draws that cannot be injected",
                "fewer than two noise draws", "the draws do not split", "the releases' draws",
                "one step", "more than", "a step draws more than", "refused")
#: A path loss must exceed a pure claim by this relative margin (the solve's round-off is
#: about 1e-15 of the outputs; a loss moves with it at most a few times faster).
LOSS_MARGIN = 1e-6


def _pure(claim: object) -> tuple[bool, float]:
    """(whether the claim is pure ε-DP, its ε).

    A claim's float allowance τ does not count as δ here: it bounds how far the floats are
    from the exact mechanism, which the claim says is ε-DP (module docstring).
    """
    from dpgp_audit.audit.greybox import _claim_numbers

    quantity, claimed, claim_delta = _claim_numbers(claim)
    return quantity == "epsilon" and not claim_delta, claimed


def _both_orders(mechanism: Mechanism, pair: object, root: np.random.SeedSequence,
                 spent: list[int]) -> tuple[list[tuple[int, PathLosses]], list[str]]:
    """Path losses of (D, D′) and of (D′, D), each with its order (0: D first); the calls
    of ``sample`` made are appended to ``spent``.
    """
    got, why = [], []
    for order, (a, b) in enumerate(((pair.d0, pair.d1),  # type: ignore[attr-defined]
                                    (pair.d1, pair.d0))):  # type: ignore[attr-defined]
        try:
            r = path_losses(mechanism, a, b, root.spawn(1)[0], spent=spent)
        except ValueError as err:  # a refused dataset: the survey reported it already
            r = f"refused: {err}"
        if isinstance(r, str):
            why.append(r)
        else:
            got.append((order, r))
    return got, why


def _gaussian_mu(claim: object) -> float:
    """The μ of the Gaussian release that meets the claim exactly (GDP: its μ; zCDP: √(2ρ);
    (ε, δ) with δ > 0: the μ whose trade-off curve passes through it).
    """
    from dpgp_audit.audit.greybox import _claim_numbers
    from dpgp_audit.privacy.gdp import gdp_mu

    quantity, claimed, claim_delta = _claim_numbers(claim)
    if quantity == "mu":
        return claimed
    if quantity == "rho":
        return math.sqrt(2.0 * claimed)
    return gdp_mu(claimed, float(claim_delta))


def with_paths(mechanism: Mechanism, survey: object, rng: np.random.Generator) -> object:
    """The survey with its iterative pairs analysed along paths (module docstring).

    Up to :data:`PATH_PAIRS` pairs the survey could not bound (:data:`CANDIDATES`, most
    distinguishable first) get :func:`path_losses` in both orders. Under a pure ε claim
    a largest loss beyond ε, reproduced on a second seed, is a definitive violation
    (status ``"iterative"``, guarantee ``GREYBOX_PATH``), and a smaller one a lower bound;
    under other claims the mean loss estimates KL(D‖D′), and one above the μ²/2 of a
    Gaussian release meeting the claim makes the pair a lead (``details["paths"]["lead"]``,
    the pair the black-box part tests by :func:`certify_lead`). The analyses draw at most
    :data:`PATH_RELEASES` releases in all. Draws nothing when the survey has a definitive
    finding already or no candidate. ``details["paths"]`` of its result says what was
    analysed, or why nothing was.
    """
    import dataclasses

    from dpgp_audit.audit.greybox import PairCoupling

    couplings = list(survey.couplings)  # type: ignore[attr-defined]
    if any(c.finding == "violation" for c in couplings):
        return survey
    cands = [(p, c) for p, c in survey.ranked()  # type: ignore[attr-defined]
             if c.status in CANDIDATES][:PATH_PAIRS]
    if not cands:
        return survey
    root = np.random.SeedSequence([int(v) for v in rng.integers(0, 2**32, size=4)])
    pure, claimed = _pure(survey.claim)  # type: ignore[attr-defined]
    mu_eq = math.nan if pure else _gaussian_mu(survey.claim)  # type: ignore[attr-defined]
    info: dict = {"pairs": 0, "calls": 0, "analysed": []}
    reasons: list[str] = []
    spent: list[int] = []
    for pair, c in cands:
        if sum(spent) * PATH_ROWS >= PATH_RELEASES:
            info["budget_spent"] = True
            break
        got, why = _both_orders(mechanism, pair, root, spent)
        info["pairs"] += 1
        reasons += why
        if not got:
            if len(why) == 2 and why[0] == why[1] and why[0].startswith(OUT_OF_SCOPE) \
                    and not info["analysed"]:
                break  # the release is not of the kind analysed, whatever the pair
            continue
        _, best = max(got, key=lambda g: g[1].worst())
        worst = best.worst()
        row = {"label": pair.label, "paths": sum(r.n for _, r in got), "steps": best.steps,
               "largest_loss": worst}
        base = {"index": c.index, "label": c.label, "status": "iterative",
                "runs": c.runs + sum(r.runs for _, r in got),
                "releases": c.releases + sum(r.runs * r.n for _, r in got),
                "delta_out": c.delta_out, "direction": c.direction}
        steps = (f"{best.steps} steps, each affine in its own noise once the released prefix "
                 f"is fixed; D' reproduces D's release from the solved noise")
        if pure:
            extra = {"largest_loss": worst, "paths": row["paths"], "steps": best.steps}
            finding, estimate = "", worst
            detail = (f"privacy loss along {row['paths']} sampled paths ({steps}): largest "
                      f"{worst:.4g}, a lower bound on eps")
            if worst > claimed * (1 + LOSS_MARGIN) + LOSS_MARGIN:
                again, _ = _both_orders(mechanism, pair, root, spent)
                second = max((r.worst() for _, r in again), default=-math.inf)
                row["second_seed"] = second
                if second > claimed * (1 + LOSS_MARGIN) + LOSS_MARGIN:
                    finding, estimate = "violation", min(worst, second)
                    detail += f"; reproduced on a second seed (largest {second:.4g})"
                else:
                    detail += f"; NOT reproduced on a second seed (largest {second:.4g})"
                    finding, estimate = "lead", math.nan
            new = PairCoupling(**base, finding=finding, score=worst, estimate=estimate,
                               detail=detail, extra=extra)
        else:  # the mean loss estimates KL(D || D'), which a mu-GDP release keeps <= mu²/2
            order, best = max(got, key=lambda g: g[1].kl())
            kl = best.kl()
            row.update(kl=kl, kl_allowed=0.5 * mu_eq**2)
            lead = kl > 0.5 * mu_eq**2
            new = PairCoupling(**base, finding="lead" if lead else "",
                               score=math.sqrt(2.0 * max(kl, 0.0)),
                               detail=(f"privacy loss along {best.n} sampled paths ({steps}): "
                                       f"mean {kl:.4g} (a point estimate of KL(D||D')) against "
                                       f"{0.5 * mu_eq**2:.4g}, what a Gaussian release meeting "
                                       f"the claim allows; largest loss {worst:.4g}; a lead for "
                                       "the certifying Monte Carlo, not a bound"),
                               extra={"kl": kl, "largest_loss": worst, "paths": best.n,
                                      "steps": best.steps})
            if lead and kl > info.get("lead", {}).get("kl", -math.inf):
                info["lead"] = {"label": pair.label, "index": c.index, "order": order,
                                "kl": kl, "calls": best.runs}
        couplings[c.index] = new
        info["analysed"].append(row)
        if new.finding == "violation":
            break  # definitive: the other pairs cannot add to it
    info["calls"] = sum(spent)
    info["releases"] = sum(spent) * PATH_ROWS
    if not info["analysed"]:
        info["reason"] = reasons[0] if reasons else "no pair analysed"
        info["out_of_scope"] = info["reason"].startswith(OUT_OF_SCOPE)
    return dataclasses.replace(survey, couplings=tuple(couplings),  # type: ignore[type-var]
                               paths=info)
