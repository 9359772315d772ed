"""Float-safe releases: exact rounding to a public power-of-two grid (issue 20 §4; A.7).

Expected values come from exact rational arithmetic (:class:`fractions.Fraction`), from the
definition of the grid (Λ = 2^(⌊log₂ σ⌋ − 10), via ``math.frexp``) and from IEEE 754
facts, never from the code under test.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpgp_audit.privacy.float_release import (
    GRID_BITS,
    decode_laplace_exact_uniform,
    encode_laplace_exact_uniform,
    float_safe_release,
    gaussian_release,
    gaussian_tv_bound,
    iid_gaussian_release,
    laplace_noise_exact_uniform,
    laplace_release,
    linear_hi_lo,
    release_grid,
    round_to_grid,
)


def _exact_round(parts: list[float], grid: float) -> float:
    """grid · round(Σ parts / grid), ties to even, in exact rational arithmetic."""
    q = sum(Fraction(p) for p in parts) / Fraction(grid)
    f = math.floor(q)
    r = q - f
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and f % 2 == 1):
        f += 1
    return float(f * Fraction(grid))


# ----------------------------------------------------------------------------- the grid
@settings(max_examples=200, deadline=None)
@given(sd=st.floats(1e-150, 1e150))
def test_grid_is_the_power_of_two_between_sd_over_2048_and_sd_over_1024(sd):
    g = float(release_grid(sd))
    mant, _ = math.frexp(g)
    assert mant == 0.5  # a power of two
    assert sd * 2.0 ** -(GRID_BITS + 1) < g <= sd * 2.0**-GRID_BITS


def test_grid_refuses_a_coordinate_without_noise():
    with pytest.raises(ValueError, match="sd"):
        release_grid([1.0, 0.0])


# ----------------------------------------------------------------------------- exact rounding
@settings(max_examples=300, deadline=None)
@given(q=st.floats(-1e9, 1e9), z=st.floats(-50, 50), e=st.integers(-20, 4),
       nudge=st.integers(-3, 3), at_mid=st.booleans())
def test_rounding_is_that_of_the_exact_real_sum(q, z, e, nudge, at_mid):
    grid = 2.0**e
    noise = z * grid * 100
    if at_mid:  # put the float sum at (or a few ulps off) a grid midpoint: the hard case
        mid = (math.floor((q + noise) / grid) + 0.5) * grid
        noise = mid - q + nudge * float(np.spacing(abs(mid) + abs(q)))
    if float(np.spacing(abs(q) + abs(noise))) * 64 >= grid:
        return  # far outside the float-safety rule (2^-10): the function may refuse there
    out = round_to_grid(q, np.array([noise]), grid)[0]
    assert out == _exact_round([q, noise], grid)


def test_rounding_refuses_a_sum_too_large_for_its_grid():
    with pytest.raises(ValueError, match="too large for its float-safe grid"):
        round_to_grid(1e15, np.array([0.3]), 2.0**-10)


@pytest.mark.parametrize("bad", [-np.inf, np.inf, np.nan])
def test_A7_non_finite_noise_is_named_not_taken_for_a_large_release(bad):
    # a float32 inverse-CDF sampler draws log(0) once in 2**24 draws: the error names the
    # noise, not the domain bound (the grid's own check would read it as a large release)
    with pytest.raises(ValueError, match="noise holds 1 non-finite value"):
        float_safe_release(0.02, np.array([[0.01], [bad]]), 0.047)
    with pytest.raises(ValueError, match="query holds a non-finite value"):
        float_safe_release(bad, np.array([[0.01]]), 0.047)


def test_A7_noise_narrower_than_the_release_is_refused():
    # one noise column beside 4 counts would add the same value to every bin
    with pytest.raises(ValueError, match=r"noise of shape \(5, 1\) for a query of shape "
                                         r"\(4,\): draw one noise value per released value"):
        float_safe_release(np.zeros(4), np.ones((5, 1)), 1.0)
    assert float_safe_release(np.zeros(4), np.ones((5, 4)), 1.0).shape == (5, 4)
    assert float_safe_release(0.5, np.ones((3, 1)), 1.0).shape == (3, 1)


@settings(max_examples=100, deadline=None)
@given(j=st.integers(-2**40, 2**40), e=st.integers(-30, 5))
def test_rounding_is_idempotent_on_the_grid(j, e):
    grid = 2.0**e
    r = np.array([j * grid])
    np.testing.assert_array_equal(round_to_grid(r, np.zeros(1), grid), r)
    once = round_to_grid(0.3, np.array([j * grid / 7.0]), grid)
    np.testing.assert_array_equal(round_to_grid(once, np.zeros(1), grid), once)


def test_rounding_moves_a_release_by_at_most_half_a_grid_step():
    rng = np.random.default_rng(0)
    grid = release_grid(np.full(6, 3.7))
    q = rng.normal(size=6) * 1e5
    noise = 3.7 * rng.standard_normal((1000, 6))
    out = round_to_grid(q, noise, grid)
    assert np.all(np.abs(out - (q + noise)) <= grid / 2 + np.spacing(np.abs(q) + 20))
    assert np.all(np.mod(out, grid) == 0)


def test_linear_queries_are_evaluated_exactly():
    rng = np.random.default_rng(1)
    C = rng.normal(size=(4, 30)) * 10.0 ** rng.integers(-3, 3, size=(4, 30))
    y = rng.normal(size=30) * 1e6
    off = rng.normal(size=4)
    hi, lo = linear_hi_lo(C, y, off)
    for k in range(4):
        exact = sum(Fraction(c) * Fraction(v) for c, v in zip(C[k], y, strict=True)) \
            + Fraction(off[k])
        assert float(exact) == hi[k]  # correctly rounded
        assert abs(Fraction(hi[k]) + Fraction(lo[k]) - exact) <= abs(exact) * Fraction(2)**-104


def test_memoised_releases_and_sums_are_those_computed_afresh_and_cannot_be_altered():
    # issue 20 §2: a release's grid, τ, exact query sum and passing domain check are kept
    # by the values of their inputs; each must equal the computation from scratch
    from dpgp_audit.privacy.float_release import FloatRelease

    sd = np.array([0.7, 3.1])
    fr = iid_gaussian_release(sd)
    assert iid_gaussian_release(sd.copy()) is fr
    fresh = FloatRelease(release_grid(sd), sd, fr.tv, "gaussian")
    assert np.array_equal(fr.grid, fresh.grid) and np.array_equal(fr.sd, sd)
    assert not fr.grid.flags.writeable and not fr.sd.flags.writeable
    assert iid_gaussian_release([0.7, 3.2]).tv != fr.tv or not np.array_equal(
        iid_gaussian_release([0.7, 3.2]).sd, sd)  # another sd is another release
    with pytest.raises(ValueError, match="scale"):  # a refusal is never kept
        laplace_release([0.0])
    with pytest.raises(ValueError, match="scale"):
        laplace_release([0.0])
    rng = np.random.default_rng(4)
    C, y = rng.normal(size=(2, 7)), rng.normal(size=7)
    noise = rng.normal(size=(5, 2))
    hi, lo = linear_hi_lo(C, y)
    for _ in range(2):  # the second call reads the kept sums
        assert np.array_equal(fr.round_linear(C, y, noise), fr.round(hi, noise, lo))
    y2 = y.copy()
    y2[0] += 1.0  # other targets: other sums
    hi2, lo2 = linear_hi_lo(C, y2)
    assert np.array_equal(fr.round_linear(C, y2, noise), fr.round(hi2, noise, lo2))
    ratio = fr.check_domain(10.0, [1.0, 2.0])
    assert fr.check_domain(10.0, [1.0, 2.0]) == ratio
    for _ in range(2):  # a failing check fails every time
        with pytest.raises(ValueError, match="y_bound"):
            fr.check_domain(1e30, [1.0, 2.0])


# ----------------------------------------------------------------------------- the bounds τ
def test_total_variation_bounds_are_scale_free_and_add_over_coordinates():
    # τ depends on σ only through σ / Λ, which a power-of-two scale leaves unchanged
    assert iid_gaussian_release([3.7]).tv == iid_gaussian_release([3.7 * 2**20]).tv
    assert laplace_release([0.3]).tv == laplace_release([0.3 * 2.0**-7]).tv
    one, many = iid_gaussian_release([1.0]).tv, iid_gaussian_release(np.ones(50)).tv
    assert many == pytest.approx(50 * one)
    F = np.random.default_rng(2).normal(size=(30, 12))
    assert gaussian_release(F, 2.0).tv <= gaussian_tv_bound(30, 12)


def test_float_delta_of_the_kit_defaults_is_a_hundredth_of_delta():
    from dpgp_audit.catalogue import entries
    from dpgp_audit.privacy.float_release import float_delta_budget

    seen = 0
    for entry in entries():
        mech, _ = entry.make()
        claim = mech.claim
        if claim.float_tv == 0.0:
            continue
        seen += 1
        eps = getattr(claim, "epsilon", 1.0)
        assert claim.float_delta(eps) <= float_delta_budget(eps, getattr(claim, "delta", None)), \
            entry.id
    assert seen >= 25


# ----------------------------------------------------------------------------- Laplace noise
def test_exact_uniform_laplace_has_the_laplace_law():
    # KS test at n = 20 000, level 1e-3 (critical distance 1.95/√n ≈ 0.014): power ≈ 1
    # against a scale 20 % off (KS distance between the two laws ≈ 0.04)
    x = laplace_noise_exact_uniform(2.0, (20_000,), np.random.default_rng(3))
    assert stats.kstest(x, stats.laplace(scale=2.0).cdf).pvalue > 1e-3
    assert stats.kstest(x, stats.laplace(scale=2.4).cdf).pvalue < 1e-3


class _IntegerLog(np.random.Generator):
    """A generator that keeps ``(low, high, values)`` of each ``integers`` call (test-only)."""

    def __init__(self, seed: int) -> None:
        super().__init__(np.random.PCG64(seed))
        self.words: list[tuple[int, int, np.ndarray]] = []

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        out = super().integers(low, high, size=size, dtype=dtype, endpoint=endpoint)
        assert high is not None and not endpoint
        self.words.append((int(low), int(high), np.array(out)))
        return out


@settings(max_examples=150, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=0, max_size=3).map(tuple),
       seed=st.integers(0, 2**32 - 1))
def test_decoder_reproduces_the_exact_laplace_sampler_bit_for_bit(shape, seed):
    """A.9's decoder: from the recorded integer draws of one call, the call's values at b = 1."""
    g = _IntegerLog(seed)
    x = laplace_noise_exact_uniform(1.0, shape, g)
    got = decode_laplace_exact_uniform(g.words)
    assert not isinstance(got, str), got
    values, used = got
    assert used == len(g.words) and values.shape == x.shape
    assert np.array_equal(values.view(np.int64), np.asarray(x).view(np.int64))


def test_decoder_follows_the_exponent_rounds_and_stops_at_its_own_draws():
    g = _IntegerLog(7)
    laplace_noise_exact_uniform(1.0, (4,), g)
    first = len(g.words)
    laplace_noise_exact_uniform(1.0, (2,), g)  # a second call follows: not consumed
    values, used = decode_laplace_exact_uniform(g.words)
    assert values.shape == (4,) and used == first
    rest = decode_laplace_exact_uniform(g.words[used:])
    assert not isinstance(rest, str) and rest[0].shape == (2,) and used + rest[1] == len(g.words)
    # a zero exponent word keeps that value open for one more round of one word
    words = [(0, 2**32, np.array([0, 5])), (0, 2**32, np.array([1])),
             (0, 2**52, np.array([0, 2**51])), (0, 2, np.array([1, 0]))]
    values, used = decode_laplace_exact_uniform(words)
    assert used == 4
    assert values[0] == math.log(2.0**-64)  # 32 zeros, then 31 more before the 1: 2^-64
    assert values[1] == -math.log(1.5 * 2.0**-30)  # 29 leading zeros in 5 = 0b101


def _words(seed: int) -> list[tuple[int, int, np.ndarray]]:
    g = _IntegerLog(seed)
    laplace_noise_exact_uniform(1.0, (3, 2), g)
    return g.words


@pytest.mark.parametrize("corrupt", ["truncated", "no-sign", "range", "size", "out-of-range",
                                     "sign-size", "empty"])
def test_decoder_says_no_to_draws_that_are_not_the_samplers(corrupt):
    w = _words(1)
    if corrupt == "truncated":
        w = w[:1]
    elif corrupt == "no-sign":
        w = w[:-1]
    elif corrupt == "range":
        w[0] = (0, 2**31, w[0][2] % 2**31)
    elif corrupt == "size":
        w[-2] = (0, 2**52, w[-2][2][:-1])
    elif corrupt == "out-of-range":
        w[-1] = (0, 2, w[-1][2] + 1)
    elif corrupt == "sign-size":
        w[-1] = (0, 2, np.zeros(5, dtype=np.int64))
    else:
        w = []
    assert isinstance(decode_laplace_exact_uniform(w), str)


def test_laplace_noise_takes_one_scale_per_coordinate():
    rng = np.random.default_rng(4)
    x = laplace_noise_exact_uniform(np.array([1.0, 100.0]), (5000, 2), rng)
    ratio = np.median(np.abs(x[:, 1])) / np.median(np.abs(x[:, 0]))
    assert 80 < ratio < 125


class _Words(np.random.Generator):
    """A generator that answers the sampler's integer draws from a list (test-only)."""

    def __init__(self, words: list[np.ndarray]) -> None:
        super().__init__(np.random.PCG64(0))
        self.words = list(words)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        w = self.words.pop(0)
        assert w.size == int(np.prod(size)), "the sampler asked for another size"
        return np.asarray(w, dtype=dtype).reshape(size)


@settings(max_examples=100, deadline=None)
@given(t=st.lists(st.floats(-21.0, 21.0), min_size=1, max_size=8))
def test_A9_encoded_words_make_the_sampler_return_the_values(t):
    """The path analysis's encoder inverts the sampler: fed its words, the kit's exact
    Laplace sampler returns S · ln U* with U* the double nearest exp(−|t|) — within a few
    ulps of t (U* is a double, not a real) — and the decoder reads back the same values."""
    t = np.array(t)
    words = encode_laplace_exact_uniform(t)
    assert not isinstance(words, str)
    g = _Words(list(words))
    x = laplace_noise_exact_uniform(1.0, (t.size,), g)
    assert not g.words  # one exponent round, the mantissas, the signs: nothing left over
    u = np.minimum(np.exp(-np.abs(t)), np.nextafter(1.0, 0.0))
    expected = np.where(t < 0, 1.0, -1.0) * np.log(u)
    assert np.array_equal(x, expected)
    assert np.all(np.abs(x - t) <= 4 * 2.0**-52 * np.maximum(np.abs(t), 1.0))
    got, used = decode_laplace_exact_uniform([(0, 2**32, words[0]), (0, 2**52, words[1]),
                                              (0, 2, words[2])])
    assert used == 3 and np.array_equal(got, x)


def test_A9_encoder_refuses_values_a_single_exponent_word_cannot_hold():
    assert isinstance(encode_laplace_exact_uniform([22.0]), str)
    assert isinstance(encode_laplace_exact_uniform([math.nan]), str)
    assert not isinstance(encode_laplace_exact_uniform([21.4]), str)
