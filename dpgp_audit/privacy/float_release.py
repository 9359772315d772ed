"""Float-safe continuous releases: each coordinate rounded exactly to a public grid (issue 20 §4).

A privacy proof is about real numbers; the kit releases floats. ``fl(q + Y)`` carries the
float grid of the query q wherever the noise Y cancels most of it (Sterbenz): for q = 1
every output in (−½, ½) is a multiple of 2⁻⁵³, for q = 0 most are not, so one neighbour
produces outputs the other never does (Mironov 2012, §3; catalogue A.7's float-support
test certifies it). Mironov's remedy, used here for every continuous release of the kit,
is to round the release to a **power-of-two grid Λ chosen from public quantities only**.

What this module does (docs/auditors.md, "Float-safe releases", has the proof):

* :func:`release_grid` — Λ_k = 2^(⌊log₂ σ_k⌋ − :data:`GRID_BITS`) for each released
  coordinate, from its noise sd σ_k alone (σ/2048 < Λ_k ≤ σ/1024): never from the data.
* :meth:`FloatRelease.round` — ``Λ · round((q + lo + Y) / Λ)`` for the *exact real* sum of
  the floats q, lo and Y (no rounding of the addition enters: a cheap vectorised pass, and
  :func:`math.fsum` for the rare sums within an error bound of a grid midpoint), so the
  release is a deterministic function of the float noise and the query alone.
* :func:`linear_hi_lo` — a linear query ``C y + o`` evaluated exactly as ``hi + lo``
  (error ≤ 2⁻¹⁰⁵ of it): the query's own rounding does not depend on the data either.
* :func:`gaussian_release`, :func:`iid_gaussian_release`, :func:`laplace_release` — the grid
  and the bound τ on the total variation between the float release and the same rounding
  applied to the ideal real mechanism, from the sampler's deviation from its ideal law
  (numpy's ziggurat for normals, :func:`laplace_noise_exact_uniform` for Laplace).
* :meth:`FloatRelease.check_domain` — the float-safety rule (issue 10, tightened): at the
  largest legal release ``top_k = B · gain_k + |o_k| + 64 σ_k`` the float spacing is at
  most 2^−:data:`GUARD_BITS` Λ_k; otherwise ``ValueError`` with the largest safe bound.
* the float δ, ``(1 + e^ε) τ``, is stated in the claim (``float_tv``); at the kit's
  defaults it is at most :data:`FLOAT_DELTA_SHARE` of δ, or :data:`FLOAT_DELTA_CAP` for a
  claim without δ (:func:`float_delta_budget`; tested for every catalogue entry). It grows
  like e^ε: the claims say so rather than refuse a large ε.

Rounding to Λ is post-processing of the ideal mechanism, so the rounded ideal keeps the
claim exactly; the float release differs from it with probability at most τ, hence it is
(ε, δ + (1 + e^ε) τ)-DP. Claims record τ (``float_tv``) and say so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from dpgp_audit._validation import as_finite_array, check_positive_float, check_rng
from dpgp_audit.privacy.secure_noise import uniform_open_unit, uniform_open_unit_from

__all__ = [
    "FLOAT_DELTA_CAP",
    "FLOAT_DELTA_SHARE",
    "GRID_BITS",
    "GUARD_BITS",
    "MEMO_MAX_VALUES",
    "NO_SET_BIT",
    "NORMAL_COUPLING",
    "NORMAL_LAW_TV",
    "TAIL_SDS",
    "FloatRelease",
    "encode_laplace_exact_uniform",
    "float_delta_budget",
    "float_safe_release",
    "factored_gaussian_release",
    "gaussian_release",
    "memo_by_value",
    "gaussian_tv_bound",
    "iid_gaussian_release",
    "decode_laplace_exact_uniform",
    "laplace_noise_exact_uniform",
    "laplace_release",
    "largest_safe_top",
    "lowest_set_bits",
    "linear_hi_lo",
    "release_grid",
    "round_to_grid",
]

#: Λ_k = 2^(⌊log₂ σ_k⌋ − GRID_BITS): σ_k/2048 < Λ_k ≤ σ_k/1024. Rounding adds at most
#: Λ²/12 ≤ σ²/(12 · 2²⁰) to a coordinate's variance (a relative 8·10⁻⁸).
GRID_BITS = 10
#: The float-safety rule: spacing(top_k) ≤ 2^−GUARD_BITS Λ_k at the largest legal release.
GUARD_BITS = 10
#: The largest legal release counts the noise up to TAIL_SDS sd (beyond: probability
#: < 1e-38 for the Laplace, far less for the Gaussian, counted in τ).
TAIL_SDS = 64.0
#: |ẑ − z| for numpy's ziggurat normal ẑ coupled with an exact N(0, 1) z (52-bit uniform
#: inside a layer of half-width ≤ 3.91, table entries to double precision).
NORMAL_COUPLING = 2.0**-48
#: Allowance per standard normal for the ziggurat's law outside that coupling (rounded
#: tables, the float wedge test, the tail branch's 53-bit uniforms and shared sign bit).
NORMAL_LAW_TV = 2.0**-40
#: A claim with δ > 0: the float δ may take at most this share of δ.
FLOAT_DELTA_SHARE = 0.01
#: A claim without δ (pure ε, μ-GDP, ρ-zCDP): the float δ it states may be at most this.
FLOAT_DELTA_CAP = 1e-7
#: Normals with |z| above this are counted in τ (P(|z| > 12) < 4e-33 each).
_Z_MAX = 12.0
_U = 2.0**-53  # unit roundoff
_SPLIT = 134217729.0  # 2^27 + 1, Veltkamp's splitter
#: Per coordinate: an exactly evaluated query's residual (≤ 2⁻¹⁰⁵ of a release the rule
#: keeps below 2^(53 − GUARD_BITS) Λ, so ≤ 2^−(52 + GUARD_BITS) Λ: a chance ≤ 2⁻⁶⁰ of moving
#: the rounding) and the noise beyond TAIL_SDS sd; a generous constant.
_PER_COORD = 2.0**-58
#: Built :class:`FloatRelease` objects and exact query sums, by the bytes of their inputs
#: (pure functions of immutable values; issue 20 §2: a release calls them once per
#: ``sample`` call, which the sequential auditor makes hundreds of times).
_MEMO: dict[tuple, object] = {}
_T = TypeVar("_T")
_MEMO_SIZE = 256


def memo_by_value(key: tuple, build: Callable[[], _T]) -> _T:
    """``build()`` once per ``key`` (a tuple of immutable values; bounded, cleared when full)."""
    hit = _MEMO.get(key)
    if hit is None:
        hit = build()
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        _MEMO[key] = hit
    return hit


def release_grid(sd: object) -> np.ndarray:
    """Λ_k = 2^(⌊log₂ σ_k⌋ − :data:`GRID_BITS`) for noise sds σ_k > 0 (pure, public).

    The grid depends on the noise sd alone: the same for every dataset.
    """
    s = as_finite_array("sd", sd)
    if s.size and not np.all(s > 0):
        raise ValueError("sd: every released coordinate needs noise (sd > 0) to be rounded "
                         "to a float-safe grid")
    _, ex = np.frexp(s)  # s = m · 2^ex, m in [½, 1): ⌊log₂ s⌋ = ex − 1 exactly
    return np.ldexp(np.ones_like(s), ex - 1 - GRID_BITS)


#: :func:`lowest_set_bits` of a zero, which has no set bit: above every float's.
NO_SET_BIT = int(np.iinfo(np.int32).max)


def lowest_set_bits(x: object) -> np.ndarray:
    """For each finite float ``v``, the exponent ``g`` of its lowest set bit: ``v = k · 2^g``
    with ``k`` odd (:data:`NO_SET_BIT` for a zero). Exact: the lowest bit of the 53-bit
    integer mantissa. A release rounded to a power-of-two grid Λ has every ``g >= log₂ Λ``.
    """
    x = np.asarray(x, dtype=float)
    mant, expo = np.frexp(x)  # x = mant · 2^expo, 1/2 <= |mant| < 1 (exact)
    whole = np.abs(mant * 2.0**53).astype(np.int64)  # the 53-bit integer mantissa, exact
    low = whole & -whole  # its lowest set bit (0 for a zero)
    bit = np.frexp(low.astype(float))[1] - 1  # log2 of that bit, exact
    return np.where(x == 0, NO_SET_BIT, bit + expo - 53)


def float_delta_budget(epsilon: float | None, delta: float | None) -> float:
    """The float δ a claim may carry: ``FLOAT_DELTA_SHARE · δ``, or the cap without δ."""
    if delta is not None and delta > 0:
        return FLOAT_DELTA_SHARE * float(delta)
    return FLOAT_DELTA_CAP


def largest_safe_top(grid: float) -> float:
    """The largest |v| with ``np.spacing(v) <= 2^-GUARD_BITS · grid`` (grid a power of two).

    ``np.spacing(v) = 2^(e − 52)`` on [2^e, 2^(e+1)), so the answer is the float just below
    ``2^(e_max + 1)`` with ``e_max = log₂ grid − GUARD_BITS + 52``.
    """
    grid = check_positive_float("grid", grid)
    e_max = int(round(math.log2(grid))) - GUARD_BITS + 52
    if e_max + 1 > 1023:
        return float(np.finfo(float).max)
    return float(np.nextafter(2.0 ** (e_max + 1), 0.0))


# ----------------------------------------------------------------------------- exact sums
def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a·b = p + e`` exactly (Dekker/Veltkamp; exact unless the parts underflow)."""
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    ah = ca - (ca - a)
    bh = cb - (cb - b)
    al, bl = a - ah, b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def linear_hi_lo(C: np.ndarray, y: np.ndarray, offset: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``C y + offset`` evaluated exactly as ``hi + lo``, shape (k,) each.

    Every product ``C_ki y_i`` is split exactly into two floats (Veltkamp/Dekker) and each
    row is summed with :func:`math.fsum` (correctly rounded): ``hi`` is the correctly rounded
    value and ``lo`` the correctly rounded remainder, so ``|C y + o − hi − lo| ≤ ½ ulp(lo)
    ≤ 2⁻¹⁰⁵ |C y + o|`` (plus 2⁻¹⁰⁷² per product if a product is below 2⁻⁹⁶⁹). The
    release's query is then the real product of the stored floats, whatever the data.
    """
    C = np.atleast_2d(np.asarray(C, dtype=float))
    y = np.asarray(y, dtype=float).ravel()
    if C.shape[1] != y.size:
        raise ValueError(f"C has {C.shape[1]} columns but y has {y.size} entries")
    big = max(float(np.max(np.abs(C), initial=0.0)), float(np.max(np.abs(y), initial=0.0)))
    if not math.isfinite(big) or big > 2.0**995:
        raise ValueError("C and y must be finite and below 2**995 in magnitude for an exact "
                         "evaluation")
    p, e = _two_product(C, y[None, :])
    k = C.shape[0]
    off = np.zeros(k) if offset is None else np.broadcast_to(
        np.asarray(offset, dtype=float).ravel(), (k,))
    hi = np.empty(k)
    lo = np.empty(k)
    for j in range(k):
        terms = [*p[j].tolist(), *e[j].tolist(), float(off[j])]
        h = math.fsum(terms)
        terms.append(-h)
        hi[j] = h
        lo[j] = math.fsum(terms)
    return hi, lo


#: Largest input size (values) whose results are kept by value: ``C.size + y.size`` for
#: :func:`_exact_query`, the utilities for the exponential mechanism's CDF.
MEMO_MAX_VALUES = 1 << 14


def _exact_query(C: np.ndarray, y: np.ndarray, offset: np.ndarray | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`linear_hi_lo`, computed once per content of ``(C, y, offset)`` (read-only).

    A release evaluates the same query on every ``sample`` call; the exact sums are a pure
    function of the float values, so they are kept by the bytes of the inputs themselves
    (small queries only, so the memo stays small).
    """
    C2 = np.atleast_2d(np.asarray(C, dtype=float))
    y1 = np.asarray(y, dtype=float).ravel()
    if C2.size + y1.size > MEMO_MAX_VALUES:
        return linear_hi_lo(C2, y1, offset)
    off = None if offset is None else np.asarray(offset, dtype=float)
    key = ("hi-lo", C2.shape, C2.tobytes(), y1.shape, y1.tobytes(),
           None if off is None else (off.shape, off.tobytes()))

    def build() -> tuple[np.ndarray, np.ndarray]:
        hi, lo = linear_hi_lo(C2, y1, off)
        hi.setflags(write=False)
        lo.setflags(write=False)
        return hi, lo

    return memo_by_value(key, build)


def _max_abs(x: np.ndarray, k: int | None = None) -> np.ndarray:
    """The largest |x| over every axis but the last (two reductions, no |x| temporary)."""
    k = x.shape[-1] if k is None else k
    if x.ndim == 1 and x.shape[0] == k:  # one row: its max and -min, without the reshapes
        return np.maximum(x, -x)
    if x.ndim == 2 and x.shape[1] == k and x.shape[0]:  # already rows of k
        return np.maximum(x.max(axis=0), -x.min(axis=0))
    flat = np.broadcast_to(x, x.shape[:-1] + (k,) if x.ndim else (k,)).reshape(-1, k)
    if flat.shape[0] == 0:
        return np.zeros(k)
    return np.maximum(flat.max(axis=0), -flat.min(axis=0))


def float_safe_release(query: object, noise: object, sd: object) -> np.ndarray:
    """A float-safe release in one call: Λ · round((query + noise) / Λ), Λ from ``sd`` alone.

    For a mechanism of your own (``docs/own-code.md``): ``noise`` is the float noise of sd
    ``sd`` (one per coordinate, or one for all), e.g. ``sigma * rng.standard_normal((n,
    k))``; the sum is taken exactly and rounded to the public grid
    :func:`release_grid` (``sd``), so the release's low bits do not depend on the query
    (issue 20 §4). Its float total variation is :func:`iid_gaussian_release` (``sd``)
    ``.tv`` (Gaussian noise) — state it in the claim's ``float_tv``.
    """
    return round_to_grid(query, noise, release_grid(np.atleast_1d(np.asarray(sd, dtype=float))))


def round_to_grid(query: object, noise: object, grid: object, lo: object | None = None
                  ) -> np.ndarray:
    """Λ · round((query + lo + noise) / Λ) for the exact real sum (ties to even), pure.

    ``grid`` holds powers of two and broadcasts against ``noise`` (one per coordinate, or
    one per draw when the noise scale is chosen per draw, as in CoinPress's steps).
    """
    noise = np.asarray(noise, dtype=float)
    shape = noise.shape
    _check_noise(query, noise, grid)
    out = _round_exact(np.atleast_1d(np.asarray(query, dtype=float)),
                       None if lo is None else np.atleast_1d(np.asarray(lo, dtype=float)),
                       np.atleast_1d(noise), np.atleast_1d(np.asarray(grid, dtype=float)))
    return out.reshape(np.broadcast_shapes(shape, np.shape(query), np.shape(grid)))


def _check_noise(query: object, noise: np.ndarray, grid: object) -> None:
    """Refuse non-finite values, and noise with fewer values than the release has (ValueError).

    The grid's own error ("too large for its float-safe grid") would point at the domain
    bound instead: an ``inf`` or ``nan`` comes from the sampler (a logarithm of 0 drawn
    from a float32 uniform, an overflow), and noise of shape ``(n, 1)`` beside a query of
    ``k > 1`` coordinates would add one value to them all, releasing their differences
    exactly.
    """
    bad = noise.size - int(np.count_nonzero(np.isfinite(noise)))
    if bad:
        raise ValueError(f"the noise holds {bad} non-finite value(s) (inf or nan) among "
                         f"{noise.size}: the sampler produced them (a logarithm of 0, e.g. "
                         "from a float32 uniform that can be 0, or an overflow), and a "
                         "release cannot carry them")
    q = np.asarray(query, dtype=float)
    if not np.isfinite(q).all():
        raise ValueError("the query holds a non-finite value (inf or nan): it cannot be "
                         "released on a grid")
    try:
        full = np.broadcast_shapes(noise.shape, q.shape, np.shape(grid))
    except ValueError:
        full = None
    if full != noise.shape:
        raise ValueError(f"noise of shape {noise.shape} for a query of shape {q.shape}: draw "
                         "one noise value per released value (noise of the release's full "
                         "shape, e.g. (n, k) for k coordinates); one value shared by several "
                         "coordinates would release their differences exactly")


def _round_exact(hi: np.ndarray, lo: np.ndarray | None, noise: np.ndarray, grid: np.ndarray
                 ) -> np.ndarray:
    """``grid · round((hi + lo + noise) / grid)`` for the exact real sum, ties to even.

    A vectorised pass computes ``b = fl(fl(hi + noise) + lo)``, whose distance to the exact
    sum is below ``err_k = 2⁻⁵⁰ (|hi_k| + |lo_k| + max |noise_k|) + 2⁻¹⁰⁷⁰`` (two roundings,
    each at most half a spacing, and ``spacing(v) ≤ 2⁻⁵² v`` for normal v); only where ``b``
    lies within ``err_k`` of a grid midpoint is the side decided exactly, by the sign of
    :func:`math.fsum` of the parts minus the midpoint (a correctly rounded sum has the
    exact sum's sign).
    """
    noise = np.asarray(noise, dtype=float)
    hi = np.asarray(hi, dtype=float)
    inv = 1.0 / grid  # exact: powers of two
    b = noise + hi
    if lo is not None:
        b += lo
    mag = _max_abs(noise) + _max_abs(hi, noise.shape[-1])
    if lo is not None:
        mag = mag + _max_abs(np.asarray(lo, dtype=float), noise.shape[-1])
    err = mag * 2.0**-50 + 2.0**-1070
    if not (np.isfinite(b).all() and (err < grid / 8.0).all()):
        raise ValueError("the release is too large for its float-safe grid (float spacing "
                         "near a tenth of the grid): declare a smaller domain bound")
    t = b * inv  # exact scaling by a power of two
    j = np.rint(t)
    t -= j
    np.abs(t, out=t)  # distance of b / grid to the nearest integer
    near = t >= 0.5 - err * inv
    if np.any(near):
        hi_b = np.broadcast_to(hi, noise.shape)
        lo_b = None if lo is None else np.broadcast_to(np.asarray(lo, dtype=float), noise.shape)
        g = np.broadcast_to(grid, noise.shape)
        b_full = np.broadcast_to(b, noise.shape)
        for idx in zip(*np.nonzero(near), strict=True):
            base = math.floor(float(b_full[idx]) / float(g[idx]))
            mid = (base + 0.5) * float(g[idx])
            parts = [float(hi_b[idx]), float(noise[idx]), -mid]
            if lo_b is not None:
                parts.append(float(lo_b[idx]))
            s = math.fsum(parts)
            if s > 0:
                j[idx] = base + 1.0
            elif s < 0:
                j[idx] = base
            else:  # the exact sum is the midpoint: ties to even
                j[idx] = base + (base % 2)
    j *= grid
    return j


# ----------------------------------------------------------------------------- noise laws
def laplace_noise_exact_uniform(scale: object, shape: tuple[int, ...],
                                rng: np.random.Generator) -> np.ndarray:
    """Laplace noise ``S · b · ln U*`` with U* a uniform real rounded down to a double.

    U* is :func:`~dpgp_audit.privacy.secure_noise.uniform_open_unit` (Mironov 2012, §5.2:
    every double in (0, 1) with the probability of the interval it stands for), S a fair
    sign. Because U* keeps 52 bits of relative precision at every magnitude, ``ln U*`` is
    within 2⁻⁵² of ``ln`` of the real uniform it rounds, down to the far tail, unlike
    ``log(2U)`` of a 53-bit fixed-point U (numpy's ``Generator.laplace``). ``scale``: b,
    a float or one per last-axis coordinate.
    """
    rng = check_rng(rng)
    shape = tuple(int(s) for s in shape)
    size = int(np.prod(shape)) if shape else 1
    if size == 0:
        return np.zeros(shape)
    u = uniform_open_unit(size, rng).reshape(shape)
    return _signed_log(u, rng.integers(0, 2, size=shape)) * np.asarray(scale, dtype=float)


def _signed_log(u: np.ndarray, sign_bits: np.ndarray) -> np.ndarray:
    """``S · ln U*`` with S = +1 where the sign bit is 1, −1 where it is 0."""
    return np.where(sign_bits == 1, 1.0, -1.0) * np.log(u)


class _Mismatch(Exception):
    """The recorded draws are not :func:`laplace_noise_exact_uniform`'s."""


def decode_laplace_exact_uniform(draws: Sequence[tuple[int, int, np.ndarray]]
                                 ) -> tuple[np.ndarray, int] | str:
    """The standard Laplace values of one :func:`laplace_noise_exact_uniform` call, from its draws.

    For the grey-box coupled auditor (catalogue A.9), which records every draw a mechanism
    makes: the sampler asks its generator only for uniform integers, so its Laplace values
    are visible to the auditor only through this replay. ``draws`` are integer draws in
    call order, each ``(low, high, values)`` with values uniform on ``[low, high)``. From
    the first one, the replay consumes them exactly as the sampler does —
    :func:`~dpgp_audit.privacy.secure_noise.uniform_open_unit_from` (the 32-bit exponent
    words, as many per round as exponents are still open, then the 52-bit mantissas), then
    one fair sign draw holding as many values — and returns ``(S · ln U*, used)``: the
    values in the sign draw's shape, which ``laplace_noise_exact_uniform(1.0, shape, ·)``
    would have returned bit for bit from those draws (the same arithmetic runs), and the
    number of draws used. The scale b is not recorded: the caller sees it as the factor
    between these values and the release.

    Returns a reason string, never a guess, when the draws do not follow that pattern (a
    range, a size or the number of draws differs, or a value lies outside its range).
    """
    if not isinstance(draws, Sequence):
        draws = list(draws)
    if not len(draws):
        return "no integer draws"
    pos = 0

    def take(high: int, size: int | None) -> np.ndarray:
        nonlocal pos
        if pos >= len(draws):
            raise _Mismatch(f"the draws end after {pos}; the replay asks for one more")
        low, top, values = draws[pos]
        values = np.asarray(values)
        if int(low) != 0 or top is None or int(top) != high:
            raise _Mismatch(f"draw {pos} is on [{low}, {top}), the replay asks for "
                            f"[0, {high})")
        if size is not None and values.shape != (size,):
            raise _Mismatch(f"draw {pos} has shape {values.shape}, the replay asks for "
                            f"({size},)")
        if values.dtype.kind not in "iu" or values.size == 0 or int(values.min()) < 0 or int(
                values.max()) >= high:
            raise _Mismatch(f"draw {pos} holds values outside [0, {high})")
        pos += 1
        return values.astype(np.int64)

    size = int(np.size(draws[0][2]))
    try:
        if size == 0:
            raise _Mismatch("draw 0 is empty")
        u = uniform_open_unit_from(size, take)
        sign = take(2, None)
    except _Mismatch as err:
        return str(err)
    if sign.size != size:
        return f"the sign draw holds {sign.size} values, the uniforms {size}"
    return _signed_log(u.reshape(sign.shape), sign), pos


def encode_laplace_exact_uniform(values: object) -> tuple[np.ndarray, np.ndarray, np.ndarray] | str:
    """Integer words that make :func:`laplace_noise_exact_uniform` return ``values`` (scale 1).

    The inverse of :func:`decode_laplace_exact_uniform`, for the grey-box path analysis
    (catalogue A.9), which hands a mechanism chosen noise through its generator
    (:mod:`~dpgp_audit.audit.paths`). Each value t becomes U* = the double nearest
    exp(−|t|) and a sign; returns the three draws the sampler makes when every exponent
    closes in its first 32-bit word — the exponent words (one set bit, giving U*'s
    exponent), the 52-bit mantissas and the sign bits — each flat, in the values' order.
    The sampler then returns S · ln U*, within a few ulps of t (the words stand for a
    double, not a real). A reason string when some |t| is beyond about 21.5 (U* below
    2⁻³¹ needs a second exponent word) or not finite.
    """
    t = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(t)):
        return "a value to encode is not finite"
    u = np.minimum(np.exp(-np.abs(t)), np.nextafter(1.0, 0.0))
    if np.any(u < 2.0**-31):
        return "a value to encode needs more than one exponent word (|t| > 21.4)"
    _, e2 = np.frexp(u)  # u = f · 2^e2, f in [1/2, 1): exponent e = 1 − e2 >= 1
    e = (1 - e2).astype(np.int64)
    exponent_words = np.left_shift(np.int64(1), 32 - e)  # e − 1 leading zeros of 32
    mantissas = ((np.ldexp(u, e.astype(np.int32)) - 1.0) * 2.0**52).astype(np.int64)
    signs = (t < 0).astype(np.int64)  # S = +1 (sign bit 1) gives S · ln U* < 0
    return exponent_words, mantissas, signs


@dataclass(frozen=True)
class FloatRelease:
    """The public grid of a continuous release and its float total-variation bound τ.

    Attributes
    ----------
    grid
        Λ_k per released coordinate (powers of two, from the noise sd only), shape (k,).
    sd
        The noise sd σ_k the grid was built from.
    tv
        τ: for every dataset, the float release differs from the same rounding of the
        ideal (real-arithmetic) mechanism with probability at most τ (module docstring;
        docs/auditors.md gives each term). The query term of :meth:`check_domain` is added
        there.
    law
        ``"gaussian"`` or ``"laplace"`` (for messages).
    """

    grid: np.ndarray
    sd: np.ndarray
    tv: float
    law: str

    def __post_init__(self) -> None:
        for name in ("grid", "sd"):
            arr = np.array(getattr(self, name), dtype=float).ravel()
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "_passed", {})  # check_domain's passing checks, by value

    @property
    def k(self) -> int:
        """Number of released coordinates."""
        return int(self.grid.size)

    def delta(self, epsilon: float) -> float:
        """The float δ at ε: ``(1 + e^ε) τ`` (total variation to (ε, δ) slack)."""
        return (1.0 + math.exp(float(epsilon))) * self.tv

    def round(self, query: object, noise: object, lo: object | None = None) -> np.ndarray:
        """Λ · round((query + lo + noise) / Λ), the sum taken exactly (shape of ``noise``).

        ``query`` and ``lo`` broadcast against ``noise`` (n, k); ``lo`` is the low part of
        an exactly evaluated query (:func:`linear_hi_lo`).
        """
        noise = np.asarray(noise, dtype=float)
        q = np.asarray(query, dtype=float)
        if noise.shape[-1] != self.k:
            raise ValueError(f"the release has {noise.shape[-1]} coordinates but its grid "
                             f"{self.k}")
        return _round_exact(q, None if lo is None else np.asarray(lo, dtype=float), noise,
                            self.grid)

    def round_linear(self, C: np.ndarray, y: np.ndarray, noise: object,
                     offset: np.ndarray | None = None) -> np.ndarray:
        """The rounded release of the exactly evaluated linear query ``C y + offset``."""
        hi, lo = _exact_query(C, y, offset)
        return self.round(hi, noise, lo)

    def check_domain(self, bound: float, gains: object, *, offset: object | None = None,
                     what: str = "y_bound") -> float:
        """The float-safety rule at the largest legal release (issue 10, tightened).

        Coordinate k can reach ``top_k = bound · gains_k + |offset_k| + 64 σ_k``; the float
        spacing there must be at most 2^−GUARD_BITS Λ_k, which keeps the exact rounding's
        error bound far inside a grid cell and every grid point a float.

        Returns
        -------
        float
            The largest ``spacing(top_k) / Λ_k`` (at most 2^−GUARD_BITS).

        Raises
        ------
        ValueError
            Naming ``what`` and giving the largest bound that passes.
        """
        bound = check_positive_float(what, bound)
        gains = np.broadcast_to(np.abs(np.asarray(gains, dtype=float)).ravel(), (self.k,))
        off = (np.zeros(self.k) if offset is None else np.broadcast_to(
            np.abs(np.asarray(offset, dtype=float)).ravel(), (self.k,)))
        # a pure function of the (immutable) grid and sd and of these values: a release
        # checks the same domain on every sample call, so a passing check is kept
        key = (what, bound, gains.tobytes(), off.tobytes())
        passed = self._passed.get(key)
        if passed is not None:
            return passed
        top = bound * gains + off + TAIL_SDS * self.sd
        if not np.all(np.isfinite(top)):
            raise ValueError(f"{what} = {bound:g} times the query's gain overflows")
        ratios = np.spacing(top) / self.grid
        worst = float(np.max(ratios)) if ratios.size else 0.0
        if worst > 2.0**-GUARD_BITS:
            k = int(np.argmax(ratios))
            live = gains > 0
            safe = min(((largest_safe_top(float(self.grid[j])) - off[j] - TAIL_SDS * self.sd[j])
                        / gains[j] for j in np.flatnonzero(live)), default=0.0)
            raise ValueError(
                f"{what} = {bound:g} is not float-safe: output {k} can reach {top[k]:.4g}, "
                f"where the float spacing {np.spacing(top[k]):.3g} exceeds 2^-{GUARD_BITS} of "
                f"its release grid {self.grid[k]:.3g} (noise sd {self.sd[k]:.4g}); the largest "
                f"safe {what} is {max(safe, 0.0):.6g}")
        if len(self._passed) < 64:
            self._passed[key] = worst
        return worst


def _gaussian_tv(sd: np.ndarray, grid: np.ndarray, rel_dev: np.ndarray, n_normals: int,
                 extra: float = 0.0) -> float:
    """Σ_k 2 ρ_k (1/Λ_k + 3 f_k) + normals · (law allowance + tail), f_k = 1/(σ_k √(2π))."""
    rho = sd * rel_dev
    f = 1.0 / (sd * math.sqrt(2.0 * math.pi))
    per = 2.0 * rho * (1.0 / grid + 3.0 * f)
    tail = 4e-33  # P(|z| > 12) per normal
    return (float(np.sum(per)) + n_normals * (NORMAL_LAW_TV + tail) + sd.size * _PER_COORD
            + extra)


def iid_gaussian_release(sd: object) -> FloatRelease:
    """Grid and τ of ``q_k + σ_k ẑ_k`` with one numpy normal per coordinate.

    Deviation of the float noise from its ideal coupled value: the ziggurat's
    :data:`NORMAL_COUPLING` times σ_k, plus the product's rounding ``u σ_k |ẑ|`` (|ẑ| ≤ 12).
    """
    s = as_finite_array("sd", sd).ravel()

    def build() -> FloatRelease:
        grid = release_grid(s)
        rel = np.full(s.shape, NORMAL_COUPLING + 1.01 * _U * _Z_MAX)
        return FloatRelease(grid, s, _gaussian_tv(s, grid, rel, s.size), "gaussian")

    return memo_by_value(("iid-gaussian", s.shape, s.tobytes()), build)  # frozen, read-only arrays


def _product_rel(r: int, depth: int) -> float:
    """ρ_k / σ_k for noise ``s · (F z)`` with r normals and dot products of total length depth."""
    return NORMAL_COUPLING * math.sqrt(r) + 1.01 * (depth + 1) * _U * (math.sqrt(r) + _Z_MAX)


def factored_gaussian_release(sd: object, r: int, depth: int | None = None,
                              n_normals: int | None = None) -> FloatRelease:
    """Grid and τ of ``q + s (F z)`` given each coordinate's sd σ_k = s ‖F_k‖₂.

    ``r``: the normals each coordinate combines; ``depth``: the total length of the dot
    products that compute it (r for one matrix product, Σ_d r_d for a Kronecker product
    applied axis by axis, whose rounding errors add up stage by stage); ``n_normals``: the
    normals one release draws (default r).
    """
    sd = as_finite_array("sd", sd).ravel()
    r = int(r)
    depth = r if depth is None else int(depth)
    n_normals = r if n_normals is None else int(n_normals)
    grid = release_grid(sd)
    rel = np.full(sd.shape, _product_rel(r, depth))
    return FloatRelease(grid, sd, _gaussian_tv(sd, grid, rel, n_normals, extra=math.exp(-72.0)),
                        "gaussian")


def gaussian_release(factor: np.ndarray, scale: float) -> FloatRelease:
    """Grid and τ of ``q + s · (ẑ Fᵀ)`` with ẑ ~ numpy normals (F: k × r, rank-r noise).

    Per coordinate k, with a_k = ‖F_k‖₂ (so σ_k = s a_k), outside an event of probability
    ``r · 2⁻⁴⁰`` (the ziggurat's law) plus ``e⁻⁷²`` (‖z‖ > √r + 12), the float noise is
    within ``ρ_k = σ_k [2⁻⁴⁸ √r + 1.01 (r + 1) u (√r + 12)]`` of the ideal ``s F z``:
    the coupling moves each z_j by ≤ 2⁻⁴⁸ (Σ_j |F_kj| ≤ √r a_k), the matrix product errs by
    ≤ γ_r Σ_j |ẑ_j F_kj| ≤ γ_r ‖ẑ‖ a_k, the scaling by u (Higham 2002, §3.1).
    A coordinate with no noise (a_k = 0) cannot be rounded: refused.
    """
    F = np.atleast_2d(as_finite_array("factor", factor, ndim=(1, 2)))
    s = check_positive_float("scale", scale)
    return factored_gaussian_release(s * np.sqrt(np.sum(F * F, axis=1)), F.shape[1])


def gaussian_tv_bound(k: int, r: int) -> float:
    """τ of :func:`gaussian_release` for *any* factor of shape (k, r) and any scale.

    Per coordinate ``2 ρ_k (1/Λ_k + 3 f_k) < 2 c_r (2^(GRID_BITS+1) + 3/√(2π))`` because
    ρ_k = σ_k c_r, Λ_k > σ_k 2^−(GRID_BITS+1) and f_k = 1/(σ_k √(2π)): for a release whose
    noise shape is chosen at run time from public values (S21.3's second step).
    """
    per = 2.0 * _product_rel(r, r) * (2.0 ** (GRID_BITS + 1) + 3.0 / math.sqrt(2.0 * math.pi))
    return k * (per + _PER_COORD) + r * (NORMAL_LAW_TV + 4e-33) + math.exp(-72.0)


def laplace_release(scale: object) -> FloatRelease:
    """Grid and τ of ``q_k + b_k L_k`` with L from :func:`laplace_noise_exact_uniform`.

    τ_k ≤ 2⁻⁴⁸ (b_k/Λ_k + 3) per coordinate (docs/auditors.md): with E = −ln U′ of the real
    uniform U′ that U* rounds, on the band U′ ∈ [2^−j, 2^(1−j)) (probability 2^−j) the float
    noise is within ρ_j = b · 2⁻⁵² (1 + 1.1 j) of b E (U*'s 52 relative bits, the log's and
    the products' roundings); there b E has density at most 2/(b ln 2) on an interval of
    length b ln 2 meeting at most b ln 2/Λ + 2 grid midpoints, so a rounding differs with
    probability ≤ 4 ρ_j (1/Λ + 2/(b ln 2)); Σ_j 2^−j (1 + 1.1 j) = 3.2.
    """
    b = as_finite_array("scale", scale).ravel()
    if not np.all(b > 0):
        raise ValueError("scale: every Laplace scale must be > 0")

    def build() -> FloatRelease:
        sd = math.sqrt(2.0) * b
        grid = release_grid(sd)
        per = 2.0**-48 * (b / grid + 3.0)
        return FloatRelease(grid, sd, float(np.sum(per)) + b.size * _PER_COORD, "laplace")

    return memo_by_value(("laplace", b.shape, b.tobytes()), build)  # frozen, read-only arrays
