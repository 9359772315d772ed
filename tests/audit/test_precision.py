"""A.7 precision auditor and the security test per mechanism family (issues 10 §4, 15 §1).

Before the fix: the unguarded twins (the releases as shipped before declared domains) are
caught by A.7 with a certified ε above the claim and a witness pair (issue 10 reports
ε ≥ 3.8 for P.1 and 6.5–7.7 for cloaking). After it: the same attack on each hardened
family is refused (the witness leaves the declared domain) or harmless (at the domain
bound A.7 sees no rounding and the black-box auditor certifies nothing above the claim).

Power: every certification below runs the black-box auditor at n = 20 000 per side, whose
ε ceiling at α = 0.05 is about 7.6; a release that rounding makes deterministic is
certified near that ceiling, far above the claim of 1 (the twins were caught on 6 of 6
seeds in development, smallest bound 1.7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpgp_audit.audit.blackbox.fixed import audit_blackbox
from dpgp_audit.audit.neighbours import NeighbourPair, is_neighbour
from dpgp_audit.audit.precision import (
    HUGE_SCALES,
    audit_precision,
    precision_pairs,
    probe_pair,
)
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.catalogue import get
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
from dpgp_audit.privacy.claims import ApproxDP, outputs_only, whole_rows
from dpgp_audit.privacy.float_release import float_safe_release

TWINS = {  # planted twin -> hardened mechanism of the same family
    "planted/gaussian-sum-no-domain": "P.1/gaussian-sum",
    "planted/laplace-sum-no-domain": "P.2/laplace-sum",
    "planted/cloaking-no-domain": "S18.2/cloaking",
    "planted/sparse-cloaking-no-domain": "S21.2/sparse-cloaking",
}
FAMILIES = ["P.1/gaussian-sum", "P.2/laplace-sum", "P.4/multivariate-gaussian",
            "P.5/functional", "S18.1/standard", "S18.2/cloaking", "S18.3/binning-gaussian",
            "S18.3/binning-laplace", "S21.1/nonstationary-cloaking", "S21.2/sparse-cloaking",
            "A.5/gp-smoother-prior", "A.5/laplace-vector"]


@pytest.fixture(scope="module")
def twin_reports():
    out = {}
    for twin in TWINS:
        mech, data = get(twin).make()
        # the rounding attack at huge legal targets (issue 10), without the float-support
        # test (which would flag the textbook twins at ordinary pairs first)
        out[twin] = audit_precision(mech, data, np.random.default_rng(0), n=20_000,
                                    support=False)
    return out


@pytest.mark.parametrize("twin", sorted(TWINS))
def test_A7_catches_each_unguarded_twin_with_a_witness(twin, twin_reports):
    res = twin_reports[twin]
    assert res.verdict is Verdict.VIOLATION, res.details.get("certified")
    assert res.estimate > 1.0 and res.claimed == 1.0
    assert res.details["witness"]["d0"] and res.details["witness_label"].startswith("precision")
    assert res.estimate <= res.details["epsilon_ceiling"] + 1e-9  # never above the ceiling


@pytest.mark.parametrize("twin", sorted(TWINS))
def test_A7_finds_nothing_on_the_hardened_twin_at_its_domain_bound(twin):
    mech, data = get(TWINS[twin]).make()
    res = audit_precision(mech, data, np.random.default_rng(0), n=20_000, support=False)
    assert res.verdict is Verdict.NO_EVIDENCE
    assert res.details["visible"] == 0 and res.alpha is None  # no test needed, none run
    # with the float-support test (the default) the rounded release passes it as well
    assert audit_precision(mech, data, np.random.default_rng(0),
                           n=20_000).verdict is not Verdict.VIOLATION


@pytest.mark.parametrize("twin", sorted(TWINS))
def test_the_twins_witness_is_refused_by_the_hardened_mechanism(twin, twin_reports):
    witness = NeighbourPair.from_dict({**twin_reports[twin].details["witness"], "label": "w"})
    mech, _ = get(TWINS[twin]).make()
    for d in (witness.d0, witness.d1):
        with pytest.raises(ValueError, match=r"y: \d+ target"):
            mech.sample(d, 1, np.random.default_rng(0))


@pytest.mark.parametrize("mech_id", FAMILIES)
def test_security_rounding_attack_at_the_domain_bound_is_harmless(mech_id):
    """Per family: out-of-domain refused; at the bound, A.7 and the black-box see nothing."""
    mech, data = get(mech_id).make()
    claim = mech.claim
    bound = claim.domain.y_bound
    # out of domain: refused by name
    y = np.array(data.y)
    y[0] = 2 * bound
    with pytest.raises(ValueError, match="y"):
        mech.sample(Dataset(data.X, y), 1, np.random.default_rng(1))
    # at the bound: the aligned attack pair (draw 0) and the best random one
    pairs = precision_pairs(data, claim.relation, np.random.default_rng(2), y_bound=bound,
                            per_scale=4)
    probes = [probe_pair(mech, p, np.random.default_rng(3), 200) for p in pairs]
    assert not any(p.refused or p.visible for p in probes), [p.as_dict() for p in probes]
    res = audit_blackbox(mech, pairs[0].d0, pairs[0].d1, n=20_000,
                         rng=np.random.default_rng(4))
    assert res.verdict is not Verdict.VIOLATION, res.estimate


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 30), d=st.floats(0.01, 100.0), bound=st.one_of(
    st.none(), st.floats(0.005, 1e12)), seed=st.integers(0, 2**32 - 1))
def test_precision_pairs_are_legal_neighbours(n, d, bound, seed):
    # any bound, also one narrower than the move (|y| <= 1 with d = 2, the README's claim)
    data = Dataset(np.linspace(0, 1, n), np.zeros(n))
    for rel in (outputs_only(d), whole_rows(d)):
        b = bound
        for pair in precision_pairs(data, rel, np.random.default_rng(seed), y_bound=b,
                                    per_scale=3):
            assert is_neighbour(pair.d0, pair.d1, rel, atol=0.0), pair.label
            top = (d if rel.kind.value == "whole-rows" else
                   (b if b is not None else max(HUGE_SCALES)))
            assert np.max(np.abs(pair.d0.y)) <= top and np.max(np.abs(pair.d1.y)) <= top


@pytest.mark.parametrize("d,bound", [(2.0, 1.0), (3.0, 1.0), (1.5, 1.0), (0.5, 1.0)])
def test_precision_pairs_inside_a_bound_narrower_than_the_move(d, bound):
    # every pair stays in |y| <= bound and moves one target by at most d; where d >= 2 bound
    # the move is the full width of the domain (-bound to +bound), never a refused probe
    data = Dataset(np.linspace(0, 1, 20), np.zeros(20))
    pairs = precision_pairs(data, outputs_only(d), np.random.default_rng(0), y_bound=bound)
    assert len(pairs) == 6
    for pair in pairs:
        assert is_neighbour(pair.d0, pair.d1, outputs_only(d), atol=0.0), pair.label
        assert max(np.abs(pair.d0.y).max(), np.abs(pair.d1.y).max()) <= bound, pair.label
        moved = np.flatnonzero(pair.d0.y != pair.d1.y)
        assert moved.size == 1
        step = abs(pair.d1.y[moved[0]] - pair.d0.y[moved[0]])
        assert step == pytest.approx(min(d, 2 * bound), rel=1e-12) if "random" in pair.label \
            else 0 < step <= d


def test_aligned_pair_crosses_a_rounding_boundary_of_the_float_sum():
    # the aligned construction: the exact sums differ by d but round to floats one
    # spacing apart (so the rounded sum moves by more than d)
    data = default_dataset()
    pair = precision_pairs(data, outputs_only(1.0), np.random.default_rng(0), y_bound=None,
                           per_scale=1, scales=(1e17,))[0]
    s0, s1 = float(np.sum(pair.d0.y)), float(np.sum(pair.d1.y))
    assert s1 - s0 == np.spacing(s0) and np.spacing(s0) > 1.0


def test_discrete_releases_are_out_of_scope():
    mech, data = get("P.2/exponential").make()
    res = audit_precision(mech, data, np.random.default_rng(0), n=1000)
    assert res.verdict is Verdict.INCONCLUSIVE and "discrete" in res.details["skipped"]


def test_default_path_reports_the_twins_violation(capsys):
    from dpgp_audit.cli import main

    code = main(["audit", "--mechanism", "planted/gaussian-sum-no-domain", "--seed", "3",
                 "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1 and "precision    VIOLATION" in out and "witness pair: precision" in out
    assert math.isfinite(float(out.split("precision    VIOLATION")[1].split()[1]))


ROWS = ["A.5/gaussian-sum-rows", "P.2/laplace-sum-rows", "H.1/dp-svgp-stats",
        "H.5/heteroscedastic-stats", "H.3/coinpress", "R.2/dpsetconv"]


@pytest.mark.parametrize("mech_id", ROWS)
def test_security_whole_row_families_refuse_or_clip_out_of_domain_targets(mech_id):
    """Whole rows: the relation's |y| <= d is the domain; beyond it, refused or clipped."""
    mech, data = get(mech_id).make()
    claim = mech.claim
    bound = claim.domain_bound
    assert bound == claim.relation.d
    y = np.array(data.y)
    y[0] = 1e18
    try:
        mech.sample(Dataset(data.X, y), 1, np.random.default_rng(1))
    except ValueError as err:
        assert "y" in str(err)
    else:  # released: only where the documented contract clips (the claim says so)
        assert "clip" in claim.note.lower(), claim.note
    # and at the bound A.7's probes see no rounding
    res = audit_precision(mech, data, np.random.default_rng(2), n=2_000, per_scale=3)
    assert res.verdict is not Verdict.VIOLATION and res.details["visible"] == 0


# ----------------------------------------------------------------------------- issue 20
class _CountReadAsRounded:
    """A private release whose outputs are integers in a float column (randomized response
    on one bit, scaled): A.7's screen sees few distinct values, the case whose certification
    used to draw 200 000 per side on every chosen pair with no limit."""

    claim = None

    def __init__(self):
        from dpgp_audit.privacy.claims import PureDP

        self.claim = PureDP(epsilon=1.0, relation=outputs_only(1.0))

    def sample(self, data, n, rng):
        p = math.exp(1.0) / (1 + math.exp(1.0))
        bit = float(np.sum(data.y) > 0)
        keep = rng.random((n, 1)) < p
        return 1e9 * np.where(keep, bit, 1.0 - bit)


def test_A7_certification_is_bounded_by_its_allowance():
    from dpgp_audit.audit.precision import PrecisionProbe, PrecisionScreen, certify_precision

    mech = _CountReadAsRounded()
    X = np.zeros((3, 1))
    pair = NeighbourPair(Dataset(X, [-1.0, 0.0, 0.0]), Dataset(X, [0.0, 0.0, 0.5]), "flip")
    probe = PrecisionProbe("flip", ratio=5e9, distinct=0.01, separation=0.5,
                           regime="categorical", dim=1)
    screen = PrecisionScreen({"pilot_per_side": 8}, ((probe, pair),) * 3)
    seq = certify_precision(screen, mech, np.random.default_rng(3), n=2_000, alpha=0.05,
                            sequential=True)
    # one anytime-valid audit over the chosen pairs, at most n per side and pair: a
    # private release (true eps = 1, the claim) runs to the cap and certifies nothing
    assert seq.details["used"]["draws"] <= 2_000
    assert seq.verdict is not Verdict.VIOLATION
    fixed = certify_precision(screen, mech, np.random.default_rng(3), n=500, alpha=0.05)
    assert fixed.details["used"] == {"pilot_draws": 8, "draws": 500, "pairs": 3}


# --------------------------------------------------------------------------- issue 20 §4
from dpgp_audit.audit.blackbox.scores import (  # noqa: E402
    FLOAT_TRAILING_CAP,
    fit_float_support,
    float_structure,
)
from dpgp_audit.audit.precision import certify_support, support_pairs  # noqa: E402


def _hex_structure(x: float) -> tuple[int, int]:
    """Oracle from ``float.hex()``: (exponent e with |x| = m·2^e, m in [½, 1); trailing zero
    bits of the 53-bit significand m·2^53), read from the hexadecimal digits."""
    mant, p = float(abs(x)).hex()[2:].split("p")
    lead, frac = mant.split(".")
    f = int(frac, 16) << (4 * (13 - len(frac)))  # 52 fraction bits
    if lead == "1":  # normal: 1.f × 2^p
        sig, e = (1 << 52) | f, int(p) + 1
    else:  # subnormal: 0.f × 2^-1022 = f × 2^-1074, normalised to 53 bits
        length = f.bit_length()
        sig, e = f << (53 - length), length - 1074
    return e, (sig & -sig).bit_length() - 1


@given(st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True))
@example(0.0)
@example(-0.0)
@example(5e-324)
def test_A7_float_structure_matches_the_hex_digits(x):
    code = int(float_structure(np.array([[x]]))[0, 0])
    if x == 0:  # each zero has a code of its own, by its sign (0·m is -0.0 when m < 0)
        plus, minus = (int(float_structure(np.array([[z]]))[0, 0]) for z in (0.0, -0.0))
        assert plus != minus and code == (plus if math.copysign(1.0, x) > 0 else minus)
        return
    e, t = _hex_structure(x)
    assert code % (FLOAT_TRAILING_CAP + 1) == min(t, FLOAT_TRAILING_CAP)
    assert code // (FLOAT_TRAILING_CAP + 1) == e + 1100


def test_A7_float_structure_separates_the_2_pow_minus_53_grid(rng):
    """Below ½, x is a multiple of 2⁻⁵³ exactly when its code says "trailing bits ≥ k"."""
    x = rng.uniform(0.25, 0.5, 2000)  # exponent −1: spacing 2⁻⁵⁴
    on_grid = np.ldexp(x, 53) == np.round(np.ldexp(x, 53))
    t = float_structure(x[:, None])[:, 0] % (FLOAT_TRAILING_CAP + 1)
    assert np.array_equal(on_grid, t >= 1)
    codes = float_structure(np.array([[0.0, 1.0], [np.inf, 1.0]]))
    assert codes[0, 0] != codes[1, 0]  # zero and non-finite have codes of their own
    assert len(set(codes[:, 1]) & set(codes[:, 0])) == 0  # coordinates never collide


def test_A7_release_format_bits_reads_the_narrowest_ieee_format(rng):
    from dpgp_audit.audit.blackbox.scores import release_format_bits

    x = rng.laplace(0.0, 2.0, 500)
    assert release_format_bits(x) == 53
    assert release_format_bits(x.astype(np.float32)) == 24
    assert release_format_bits(x.astype(np.float16)) == 11
    # one float64 output among float32 ones, on either side, keeps the float64 view
    assert release_format_bits(x.astype(np.float32), x[:1]) == 53
    assert release_format_bits(np.zeros(3), np.array([np.inf])) == 53  # nothing to read


def test_A7_float_structure_gives_the_sign_of_zero_a_code_of_its_own():
    """IEEE 754: 0.0·m is -0.0 exactly when m < 0, so a zero can carry a sign bit of the data."""
    zeros = np.array([[0.0 * -0.25], [0.0 * 0.25]])
    assert np.signbit(zeros[0, 0]) and not np.signbit(zeros[1, 0])
    codes = float_structure(zeros)[:, 0]
    assert codes[0] != codes[1]
    assert codes[1] == float_structure(np.array([[0.0]]))[0, 0]  # +0.0 keeps its code


def _grid_draws(rng, n: int, step_exponent: int) -> np.ndarray:
    """Gaussian draws (sd 0.2 about 0.45) rounded to the grid 2^step_exponent, computed by
    integer arithmetic: k·2^e is exact for every |k| < 2⁵³."""
    k = np.round(rng.normal(0.45, 0.2, n) * 2.0**-step_exponent)
    return np.ldexp(k, step_exponent)[:, None]


def test_A7_binade_grid_reads_a_rounded_release_at_its_own_grid(rng):
    """A release on 2⁻¹⁷ against one on 2⁻¹⁶: at the format's precision both sides' outputs
    are all "four or more trailing zeros" (one category per binade); read above the finest
    grid seen, the odd multiples of 2⁻¹⁷ (half of that side's outputs, none of the other's)
    are a category of their own."""
    from dpgp_audit.audit.blackbox.scores import binade_grid

    fine, coarse = _grid_draws(rng, 2000, -17), _grid_draws(rng, 2000, -16)
    odd = (np.ldexp(fine[:, 0], 17) % 2) == 1  # the oracle: integer parity of k
    assert 0.45 < odd.mean() < 0.55
    t = FLOAT_TRAILING_CAP + 1
    assert np.all(float_structure(fine) % t == FLOAT_TRAILING_CAP)  # the format's view
    grid = binade_grid(fine, coarse)
    # the binades [¼, ½) and [½, 1) hold hundreds of outputs each; the sparse ones of
    # fewer than FLOAT_GRID_MIN keep the format's view
    busy = (fine[:, 0] >= 0.25) & (fine[:, 0] < 1.0)
    assert busy.mean() > 0.8
    low_bits = float_structure(fine, grid=grid)[:, 0] % t
    assert np.array_equal(low_bits[busy] == 0, odd[busy])
    busy1 = (coarse[:, 0] >= 0.25) & (coarse[:, 0] < 1.0)
    assert np.all(float_structure(coarse, grid=grid)[busy1, 0] % t == 1)
    # the exponent part of the code is unchanged
    assert np.array_equal(float_structure(fine, grid=grid) // t, float_structure(fine) // t)


def test_A7_binade_grid_leaves_a_full_precision_release_as_it_was(rng):
    """Full-entropy doubles share no trailing zero in a binade of 32 or more outputs, and a
    float32 release's floor is the 29 bits float32 leaves zero: both keep their codes.
    (Centred at 0: ``fl(3 + Y)`` below 1 would keep the grid of 3's binade on every output,
    the very structure the float-support test reads, and its codes would be relabelled.)"""
    from dpgp_audit.audit.blackbox.scores import binade_grid

    x = rng.laplace(0.0, 2.0, (4000, 2))
    assert np.array_equal(float_structure(x, grid=binade_grid(x)), float_structure(x))
    x32 = x.astype(np.float32)
    assert np.array_equal(float_structure(x32, 24, binade_grid(x32)), float_structure(x32, 24))


class _DataScaledSnap:
    """A Gaussian mean (σ for 2/n) snapped to 2^(⌈log2 max|y|⌉ − 16), the grid read off the
    data: targets all within 1/16 give 2⁻²⁰, a target at 1 gives 2⁻¹⁶, and the odd multiples
    of 2⁻²⁰ (about half the outputs of D) never occur under D′: true ε = ∞."""

    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))

    def sample(self, data, n, rng):
        scale = max(float(np.max(np.abs(data.y))), 1.0 / 16.0)
        lam = 2.0 ** (math.ceil(math.log2(scale)) - 16)
        sd = analytic_gaussian_sigma(1.0, 1e-5, 2.0 / data.n)
        return lam * np.round((np.mean(data.y) + sd * rng.standard_normal((n, 1))) / lam)


def test_A7_support_test_certifies_a_grid_chosen_from_the_data(rng):
    data = default_dataset()
    zeros = Dataset(data.X, np.zeros(data.n))
    pair = NeighbourPair(zeros, zeros.with_target(0, 1.0), "grid from the data")
    row = certify_support(_DataScaledSnap(), pair, rng, n=4000, alpha=0.05)
    # odd multiples of 2⁻²⁰ on one side only, in every binade busy enough to read (the
    # outputs nearest 0 are spread over binades too sparse for a floor): far above the claim
    assert row["epsilon_lb"] > 3.0 and "grid" in row["score"]
    # about half of D's 3 000 certifying draws against a handful of D′'s (the event's
    # threshold may admit a sparse binade's category)
    assert any(t["hits"] > 1000 and t["hits_other_side"] < t["hits"] / 50
               for t in row["tests"])
    same = NeighbourPair(zeros.with_target(0, 0.75), zeros.with_target(0, 1.0), "one grid")
    assert certify_support(_DataScaledSnap(), same, rng, n=4000, alpha=0.05)["epsilon_lb"] < 1


class _SignedZeroFloor:
    """A float-safe mean floored at 0, the zero written 0.0·mean: -0.0 whenever the noisy
    mean is ≤ 0 and the mean is negative, never when the mean is ≥ 0 (true ε = ∞)."""

    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))

    def sample(self, data, n, rng):
        m = float(np.mean(data.y))
        sd = analytic_gaussian_sigma(1.0, 1e-5, 2.0 / data.n)
        r = float_safe_release(m, sd * rng.standard_normal((n, 1)), sd)
        return np.where(r > 0, r, 0.0 * m)


def test_A7_support_test_certifies_a_zero_whose_sign_follows_the_data(rng):
    data = default_dataset()
    zeros = Dataset(data.X, np.zeros(data.n))
    pair = NeighbourPair(zeros, zeros.with_target(0, -1.0), "sign of zero")
    assert certify_support(_SignedZeroFloor(), pair, rng, n=4000, alpha=0.05)["epsilon_lb"] > 5
    # and the default path finds it without the pair
    rep = audit_mechanism(_SignedZeroFloor(), data, np.random.default_rng(1))
    assert rep.verdict is Verdict.VIOLATION


def test_A7_pilot_reads_the_support_of_an_output_without_spread(rng):
    """A second output 0.0·mean + 0.0·noise has no spread on either side, yet its sign bit
    varies on one side only: the pilot's support evidence includes it."""
    from dpgp_audit.audit.precision import probe_pair

    class TwoOutputs(_SignedZeroFloor):
        def sample(self, data, n, rng):
            first = super().sample(data, n, rng)
            m = float(np.mean(data.y))
            return np.hstack([first, 0.0 * m + 0.0 * rng.standard_normal((n, 1))])

    data = default_dataset()
    zeros = Dataset(data.X, np.zeros(data.n))
    pair = NeighbourPair(zeros.with_target(0, 1.0), zeros.with_target(0, -1.0), "signs")
    probe = probe_pair(TwoOutputs(), pair, rng, pilot=200, support=True)
    assert probe.support_visible


def test_A7_float32_structure_counts_trailing_bits_of_the_float32_significand(rng):
    x = rng.uniform(0.25, 0.5, 2000).astype(np.float32)  # exponent −1: float32 spacing 2⁻²⁵
    on_grid = np.ldexp(x.astype(float), 24) == np.round(np.ldexp(x.astype(float), 24))
    t64 = float_structure(x[:, None])[:, 0] % (FLOAT_TRAILING_CAP + 1)
    t32 = float_structure(x[:, None], 24)[:, 0] % (FLOAT_TRAILING_CAP + 1)
    assert np.all(t64 == FLOAT_TRAILING_CAP)  # float64's view: one category for all
    assert np.array_equal(on_grid, t32 >= 1)  # float32's: the 2⁻²⁴ grid is a category


@pytest.mark.parametrize("relation", [outputs_only(1.0), outputs_only(2.0), whole_rows(1.0)])
def test_A7_support_pairs_are_neighbours_in_the_domain(relation):
    data = default_dataset()
    pairs = support_pairs(data, relation, y_bound=1.0)
    assert len(pairs) == 3
    for p in pairs:
        assert is_neighbour(p.d0, p.d1, relation), p.label
        assert np.all(np.abs(p.d1.y) <= 1.0)
    assert np.all(pairs[0].d0.y == 0) and pairs[0].d1.y[0] == 1.0


def _uniform_doubles(rng, n, grid: bool):
    """Every double of [¼, ½) equally likely (spacing 2⁻⁵⁴), or only the multiples of 2⁻⁵³."""
    m = rng.integers(2**52, 2**53, n)
    if grid:
        m = m & ~1
    return np.ldexp(m.astype(float), -54)


class _GridVsFine:
    """Toy release: D gives multiples of 2⁻⁵³ in [¼, ½), D′ any double there.

    The event "odd last bit" has probability 0 under D and exactly ½ under D′: true ε = ∞.
    """

    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))

    def sample(self, data, n, rng):
        return _uniform_doubles(rng, n, grid=data.y[0] == 0)[:, None]


def test_A7_support_test_certifies_an_impossible_event(rng):
    data = default_dataset()
    pair = NeighbourPair(data.with_target(0, 0.0), data.with_target(0, 1.0), "grid vs fine")
    row = certify_support(_GridVsFine(), pair, rng, n=4000, alpha=0.05)
    # 3000 certifying draws, about 1500 hits against 0: the Clopper–Pearson bounds (α/4 per
    # proportion) give ε ≥ log(0.47·3000 / ln(80)) ≈ 5.8
    assert row["epsilon_lb"] > 5.0
    assert any(t["hits_other_side"] == 0 and t["hits"] > 1000 for t in row["tests"])
    assert row["epsilon_lb"] <= row["epsilon_ceiling"] + 1e-9


def test_A7_support_test_has_its_level_on_equal_laws(rng):
    """Soundness: on (D, D) the true ε is 0, so a positive certified bound is a false alarm.

    Each run is one test at level α = 0.2 (to see the level with few runs); 40 runs at the
    full level would give Bin(40, 0.2) false alarms, P(> 14) ≈ 0.016: the assertion fails
    with probability below 2 % for a valid test, and always for one that ignores α.
    """
    data = default_dataset()
    from dpgp_audit.bugs.float_support import TextbookNoiseSum

    mech = TextbookNoiseSum(d=1.0, epsilon=1.0, sampler="laplace-log")
    pair = NeighbourPair(data, data, "equal laws")
    alarms = sum(certify_support(mech, pair, child, n=400, alpha=0.2)["epsilon_lb"] > 0
                 for child in rng.spawn(40))
    assert alarms <= 14


def test_A7_float_support_score_is_large_where_only_one_side_goes(rng):
    fine = _uniform_doubles(rng, 500, grid=False)[:, None]
    grid = _uniform_doubles(rng, 500, grid=True)[:, None]
    s = fit_float_support(grid, fine, sign=1.0)  # large = evidence for the fine side (D′)
    # on fresh draws: about half the fine ones (odd last bit), none of the grid ones
    assert 0.4 < np.mean(s(_uniform_doubles(rng, 2000, False)[:, None]) > 2) < 0.6
    assert np.mean(s(_uniform_doubles(rng, 2000, True)[:, None]) > 2) == 0.0


def test_A7_support_test_is_on_unless_turned_off(rng):
    from dpgp_audit.bugs.float_support import TextbookNoiseSum

    mech = TextbookNoiseSum(d=1.0, epsilon=1.0, sampler="laplace-log")
    data = default_dataset()
    off = audit_precision(mech, data, np.random.default_rng(0), n=2_000, support=False)
    assert off.verdict is Verdict.NO_EVIDENCE and "support_certified" not in off.details
    on = audit_precision(mech, data, np.random.default_rng(0), n=2_000)  # the default
    assert on.verdict is Verdict.VIOLATION and on.details["witness_test"] == "float support"


@dataclass(frozen=True)
class _Float32Copy:
    """A mechanism's releases stored as float32 (exact when every value fits in 24 bits)."""

    inner: object

    @property
    def claim(self):
        return self.inner.claim

    def sample(self, data, n, rng):
        return np.asarray(self.inner.sample(data, n, rng)).astype(np.float32)


@pytest.mark.parametrize("mech_id", ["P.2/laplace-sum", "P.2/laplace-sum-secure",
                                     "P.1/gaussian-sum"])
def test_A7_a_correct_release_stored_as_float32_is_not_flagged(mech_id):
    # reading outputs at their own precision must not turn a private release into a finding:
    # the kit's grid releases fit in float32 exactly, so the copy is the same release
    mech, data = get(mech_id).make()
    copy = _Float32Copy(mech)
    x = mech.sample(data, 200, np.random.default_rng(0))
    assert np.array_equal(np.asarray(copy.sample(data, 200, np.random.default_rng(0)),
                                     dtype=float), x)
    for seed in (1, 2):
        r = audit_precision(copy, data, np.random.default_rng(seed), n=5_000)
        assert r.verdict is not Verdict.VIOLATION, r.details.get("support_certified")


# --------------------------------------------------------------------------- issue 20 §3
# A leak on rare outputs that lands in a different coordinate from draw to draw: the
# textbook SVT Alg. 3 (Lyu, Su & Li 2017) releases q_i + ν_i at the first query above the
# noisy threshold, as a float; below ½ the value is on the 2⁻⁵³ grid when q = 1 and off it
# when q = 0 (Mironov 2012, §3), about 0.5 % of draws, spread over its 10 value columns.
from dpgp_audit.audit.blackbox.scores import float_support_evidence  # noqa: E402
from dpgp_audit.audit.precision import (  # noqa: E402
    SUPPORT_MAX_N,
    SUPPORT_MIN_BITS,
    SUPPORT_PILOT,
    SUPPORT_PILOT_SHARE,
    support_pilot_draws,
)


def _svt3_all_answers_pair():
    mech, data = get("planted/statdp-svt3").make()
    pair = next(p for p in support_pairs(data, mech.claim.relation) if "all answers" in p.label)
    return mech, pair


def test_A7_support_pilot_is_a_share_of_the_certification_draws():
    # an eighth of the draws the test may certify with (at most SUPPORT_MAX_N), never less
    # than SUPPORT_PILOT: 2 500 at make audit MECH=…'s 20 000, the floor at make audit's 1 200
    assert SUPPORT_PILOT_SHARE == 8
    assert support_pilot_draws(20_000) == 2_500
    assert support_pilot_draws(10**7) == SUPPORT_MAX_N // 8
    assert support_pilot_draws(1_200) == SUPPORT_PILOT
    with pytest.raises(ValueError, match="n"):
        support_pilot_draws(0)


def test_A7_pooled_support_evidence_sees_a_leak_spread_over_coordinates():
    # Power: in development the pooled evidence of this pair at 2 500 draws per side was at
    # least 9.0 bits on 20 of 20 seeds (median 14.4), the per-coordinate one below
    # SUPPORT_MIN_BITS on 1 of 20; at the old 200-draw pilot the pair was support-visible on
    # 3 of 20. Three fixed seeds: a failure means the pooled evidence lost its power.
    mech, pair = _svt3_all_answers_pair()
    for seed in range(3):
        r0, r1 = np.random.default_rng(seed).spawn(2)
        X0 = np.asarray(mech.sample(pair.d0, 2_500, r0))
        X1 = np.asarray(mech.sample(pair.d1, 2_500, r1))
        assert float_support_evidence(X0, X1) >= SUPPORT_MIN_BITS


def test_A7_pooled_support_score_is_fitted_on_every_coordinate(rng):
    # a grid leak in one random coordinate of 10 per draw (the others exactly 0): the pooled
    # table sees ten times the outputs of each per-coordinate one
    def spread(grid, n):
        X = np.zeros((n, 10))
        X[np.arange(n), rng.integers(0, 10, n)] = _uniform_doubles(rng, n, grid)
        return X

    s = fit_float_support(spread(True, 200), spread(False, 200), sign=1.0, pooled=True)
    assert s.pooled and "pooled" in s.name
    # on fresh draws: about half the fine ones (odd last bit), none of the grid ones
    assert 0.4 < np.mean(s(spread(False, 2_000)) > 2) < 0.6
    assert np.mean(s(spread(True, 2_000)) > 2) == 0.0


def test_A7_support_test_certifies_svt3_on_its_exposing_pair():
    # Power: at n = 20 000 per side (make audit MECH=…'s allowance) the certified bound on
    # this pair was 1.85–3.1 on 20 of 20 seeds in development (the per-coordinate table
    # alone: 0 on 3 of 20, median 0.54), against the claim ε₀ = 0.1; a fixed seed, the
    # bound asserted well below the smallest seen.
    mech, pair = _svt3_all_answers_pair()
    row = certify_support(mech, pair, np.random.default_rng(0), n=20_000, alpha=0.05)
    assert row["epsilon_lb"] > 1.0 > mech.claim.epsilon
    assert any("pooled" in t["score"] for t in row["tests"] if t["epsilon_lb"] > 1.0)
    assert row["epsilon_lb"] <= row["epsilon_ceiling"] + 1e-9


def test_A7_support_test_has_its_level_on_equal_laws_with_many_coordinates(rng):
    """Soundness of the choice between the per-coordinate and the pooled table: on (D, D)
    (the SVT3 release, 20 coordinates) a positive certified bound is a false alarm.

    Each run is one test at level α = 0.2; 40 runs of a valid test give at most
    Bin(40, 0.2) false alarms, P(> 14) ≈ 0.016: the assertion fails with probability below
    2 % for a valid test (in development: 1 alarm in 40 at n = 400 and at n = 4 000).
    """
    mech, pair = _svt3_all_answers_pair()
    same = NeighbourPair(pair.d0, pair.d0, "equal laws")
    alarms = sum(certify_support(mech, same, child, n=400, alpha=0.2)["epsilon_lb"] > 0
                 for child in rng.spawn(40))
    assert alarms <= 14


class _OnlyItsOwnData:
    """Accepts the dataset it was built for and refuses every neighbour of it."""

    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))

    def __init__(self, data):
        self.y = np.array(data.y)

    def sample(self, data, n, rng):
        if not np.array_equal(data.y, self.y):
            raise ValueError("built for one training set only")
        return rng.laplace(size=(n, 1))


def test_A7_a_screen_whose_every_pair_is_refused_is_skipped_not_no_evidence():
    from dpgp_audit.audit.runner import audit_mechanism

    data = default_dataset(12)
    rep = audit_mechanism(_OnlyItsOwnData(data), data, np.random.default_rng(0))
    assert rep.result("precision") is None  # compared nothing: no "no evidence" either
    assert rep.skipped["precision"].startswith("no generated pair is accepted by the mechanism")
    assert rep.verdict is Verdict.INCONCLUSIVE


def test_A7_probes_only_datasets_of_the_declared_labels():
    from dpgp_audit.audit.precision import screen_precision

    mech, data = get("H.5/dirichlet-classifier").make()  # refuses any target but 0, 1, 2
    screen = screen_precision(mech, data, np.random.default_rng(0))
    assert screen.details["candidates"] > 0 and screen.details["refused"] == 0
    assert screen.details["domain_y_bound"] == 2.0


def test_A7_rounding_ratio_reads_a_float32_release_at_float32_spacing():
    @dataclass(frozen=True)
    class Float32Sum:  # a Gaussian sum computed and released in float32 (sd 1)
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))

        def sample(self, data, n, rng):
            return (np.float32(np.sum(data.y)) + rng.standard_normal((n, 1)).astype(np.float32))

    data = Dataset(np.arange(4.0), np.array([3000.0, 3000.0, 3000.0, 3000.0]))
    pair = NeighbourPair(data, data.with_target(0, 3001.0), "y[0] + 1")
    probe = probe_pair(Float32Sum(), pair, np.random.default_rng(0), pilot=400)
    # top |output| is about 12 000: float32 spacing 2**(13 - 23) ~ 1e-3 per sd, against the
    # float64 spacing 2**(13 - 52) ~ 2e-12 the ratio read before
    assert 2.0**-10 / 1.2 < probe.ratio < 2.0**-10 * 1.2


def test_a_float_support_witness_says_whether_low_bits_or_magnitudes_separate():
    from dpgp_audit.audit.result import _support_reading_line

    low = {"witness_test": "float support",
           "support_reading": {"tv_exponent": 0.02, "tv_low_bits": 0.2, "reading": "low bits"}}
    line = _support_reading_line(low)
    assert "the low bits depend on the data" in line
    # noisy values transformed after rounding (synthetic rows mean + clip(sd, 0) * z, an
    # interval noisy mean ± the data's own sd) show an un-noised statistic in their low
    # bits: the line names it beside the float-release leak and a calibration error
    assert "a query and its noise added in floats (the float-release leak)" in line
    assert "an exact value read off the data added to or multiplied into" in line
    assert "a calibration error" in line
    grids = {"witness_test": "float support",
             "support_reading": {"tv_exponent": 0.0, "tv_low_bits": 0.5, "reading": "grids",
                                 "grid_exponents": [-14, -13]}}
    line = _support_reading_line(grids)
    assert "(2^-14 on one, 2^-13 on the other)" in line and "not the float rounding" in line
    mag = {"witness_test": "float support",
           "support_reading": {"tv_exponent": 0.8, "tv_low_bits": 0.0, "reading": "magnitudes"}}
    assert "a calibration error shows here too" in _support_reading_line(mag)
    counts = {"witness_test": "float support",
              "support_reading": {"tv_exponent": 0.3, "tv_low_bits": 0.4, "reading": "integers"}}
    line = _support_reading_line(counts)
    assert "whole-number outputs" in line and "not float rounding" in line
    assert _support_reading_line({**mag, "witness_test": "black-box"}) == ""
    atoms = {"witness_test": "float support",
             "support_reading": {"tv_exponent": 0.33, "tv_low_bits": 0.43,
                                 "atom_share": 0.19, "reading": "atoms"}}
    line = _support_reading_line(atoms)
    assert "a point mass whose place depends on the data" in line and "0.19 of" in line
    assert "low bits depend" not in line
    signed = {"witness_test": "float support",
              "support_reading": {"tv_exponent": 0.61, "tv_low_bits": 0.61, "atom_share": 0.0,
                                  "negative_zero_share": 0.6, "reading": "signed zeros"}}
    line = _support_reading_line(signed)
    assert "-0.0 on one side only (0.6 of its outputs)" in line and "calibration" not in line


def test_A7_a_float_support_reading_tells_a_grid_set_by_a_data_dependent_scale():
    """float_safe_release rounds to 2^(floor(log2 sd) - GRID_BITS): an sd read off the data
    that crosses a power of two puts the two sides on grids a factor 2 apart. The reading
    names the two grids (exact: the lowest set bit of each output), while a float-safe
    release at one public sd, raw floats and a grid fixed on both sides read otherwise."""
    from dpgp_audit.audit.blackbox.scores import float_support_reading, grid_exponent
    from dpgp_audit.privacy.float_release import GRID_BITS, release_grid

    rng = np.random.default_rng(0)
    z = rng.standard_normal((4000, 1))
    lo, hi = (float_safe_release(0.3, sd * z, sd) for sd in (0.9, 1.1))  # binades -1 and 0
    assert grid_exponent(lo[:, 0]) == -1 - GRID_BITS == np.log2(release_grid(0.9))
    assert grid_exponent(hi[:, 0]) == -GRID_BITS
    r = float_support_reading(lo, hi)
    assert r["reading"] == "grids" and r["grid_exponents"] == [-1 - GRID_BITS, -GRID_BITS]
    same = float_support_reading(float_safe_release(0.3, 0.9 * z, 0.9),
                                 float_safe_release(0.7, 0.9 * z, 0.9))
    assert same["reading"] != "grids" and "grid_exponents" not in same
    assert grid_exponent(0.3 + z[:, 0]) is None  # raw floats: their spacing, not a grid
    assert grid_exponent(np.ldexp(np.arange(1.0, 10.0), -3)) is None  # under 16 outputs
