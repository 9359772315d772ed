"""A.9's structure-boundary search: where a calibration read off the targets flips.

Expected values come from closed forms: a noise scale that switches when the variance of
the targets crosses a threshold ``c`` flips on the alternating path ``t · A · (±1)`` (even
n, mean 0, variance ``t² A²``) at ``t* = √c / A``, and on the scaled data at
``t* = √(c / var(y)) · max|y| / A``; the pairs found must cross the branch the mechanism
itself reports. The planted lengthscale bug's loss is bounded below by an event of two
scalar Gaussians (scipy), independent of the auditors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from dpgp_audit.audit.boundary import (
    MAX_CALLS,
    SEGMENTS,
    moves_without_noise,
    search_boundaries,
    skip_reason,
)
from dpgp_audit.audit.greybox import (
    CouplingSurvey,
    PairCoupling,
    couple,
    couple_pairs,
    same_structure,
)
from dpgp_audit.audit.neighbours import (
    BasePath,
    LabelCountPath,
    NeighbourPair,
    is_neighbour,
    label_count_paths,
    structure_paths,
)
from dpgp_audit.audit.result import Guarantee, Verdict
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.bugs.calibration import LengthscaleSelectedGP, lengthscale_from_data_epsilon
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
from dpgp_audit.privacy.claims import ApproxDP, PureDP, all_answers, outputs_only, whole_rows
from dpgp_audit.privacy.domain import PublicDomain
from dpgp_audit.privacy.float_release import float_safe_release

EPS, DELTA, D, BOUND = 1.0, 1e-5, 2.0, 1.0
SIGMA = analytic_gaussian_sigma(EPS, DELTA, D)
CLAIM = ApproxDP(epsilon=EPS, delta=DELTA, relation=outputs_only(D),
                 domain=PublicDomain(y_bound=BOUND))
VAR_CUT = 0.2


@dataclass(frozen=True)
class VarianceSwitch:
    """Sum + N(0, s²): s = σ, or 2σ once var(y) exceeds ``VAR_CUT`` ("more noise for
    spread-out data", the hurried bug: each branch is private, the switch is not);
    ``switch=False`` is the correct twin. ``rounded``: released float-safe."""

    switch: bool = True
    rounded: bool = False
    claim: object = CLAIM
    cut: float = VAR_CUT

    def branch(self, data: Dataset) -> bool:
        return self.switch and float(np.var(data.y)) > self.cut

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        y = self.claim.domain.targets(data.y)
        s = 2 * SIGMA if self.branch(data) else SIGMA
        noise = s * rng.standard_normal((n, 1))
        return float_safe_release(y.sum(), noise, s) if self.rounded else y.sum() + noise


DATA = default_dataset()  # 20 rows, y = sin(x): var(y) above the cut, max |y| near 1


def _search(mech, data=DATA, seed=1, **kw):
    return search_boundaries(mech, data, mech.claim.relation, np.random.default_rng(seed),
                             y_bound=BOUND, **kw)


# --------------------------------------------------------------------------- same_structure
@pytest.mark.parametrize("rounded", [False, True])
def test_same_structure_true_for_one_noise_map_on_any_two_datasets(rounded):
    mech = VarianceSwitch(switch=False, rounded=rounded)
    far = Dataset(DATA.X, -DATA.y[::-1])  # not a neighbour: every row differs
    run = couple(mech, DATA, far, 8, np.random.SeedSequence(3))
    assert same_structure(run)


def test_same_structure_false_when_the_noise_scale_or_its_map_differs():
    low = Dataset(DATA.X, 0.1 * np.sign(DATA.y))  # var below the cut: sigma
    run = couple(VarianceSwitch(), low, DATA, 8, np.random.SeedSequence(3))
    assert not same_structure(run)  # the standard normals are shared; the map s differs
    assert same_structure(couple(VarianceSwitch(), DATA, DATA.with_target(0, 0.9), 8,
                                 np.random.SeedSequence(5)))  # both above the cut

    @dataclass(frozen=True)
    class ScaleParam:  # the scale passed to the sampler: the log itself differs
        claim: object = CLAIM

        def sample(self, data, n, rng):
            return data.y.sum() + rng.normal(0.0, 1.0 + float(np.var(data.y)), (n, 1))

    assert not same_structure(couple(ScaleParam(), low, DATA, 8, np.random.SeedSequence(4)))


def test_same_structure_allows_the_grid_steps_of_a_rounded_release():
    """Four releases can have a spread far below the grid: the rounding (one step per side)
    must not read as a change of structure (it once sent the search after a spurious
    boundary on a Laplace release)."""

    @dataclass(frozen=True)
    class TinySpread:  # rounded to the grid of sd SIGMA, but this call's noise is tiny
        claim: object = CLAIM

        def sample(self, data, n, rng):
            noise = 1e-4 * SIGMA * rng.standard_normal((n, 1))
            return float_safe_release(data.y.sum(), noise, SIGMA)

    a = Dataset(DATA.X, 0.3 * np.ones(DATA.n))
    b = Dataset(DATA.X, 0.3 * np.ones(DATA.n) + 1e-3 / 7)  # not a whole number of steps
    run = couple(TinySpread(), a, b, 8, np.random.SeedSequence(2))
    diff = run.out1 - run.out0
    spread = max(run.out0.std(), run.out1.std())
    assert np.abs(diff - diff[0]).max() > 2.0**-6 * spread  # the spread alone: "a change"
    assert same_structure(run)


# --------------------------------------------------------------------------- paths and pairs
def test_structure_paths_span_the_domain_and_move_labels_one_row_at_a_time():
    paths = structure_paths(DATA, outputs_only(D), y_bound=BOUND)
    assert [p.label for p in paths] == ["the data's targets scaled", "targets alternating +-A",
                                        "half at +A, half at -A", "every target at A",
                                        "the data's targets to alternating +-A",
                                        "the data's targets to every target at -A"]
    own = DATA.y / np.max(np.abs(DATA.y)) * BOUND
    assert np.allclose(paths[4].at(0.0).y, own) and np.allclose(paths[5].at(0.0).y, own)
    assert np.allclose(paths[4].at(1.0).y, paths[1].at(1.0).y)
    assert np.allclose(paths[5].at(1.0).y, -BOUND)
    for p in paths:
        for t in (p.start, p.stop):
            y = p.at(t).y
            assert np.max(np.abs(y)) <= BOUND and np.array_equal(p.at(t).X, DATA.X)
    assert np.max(np.abs(paths[0].at(1.0).y)) == pytest.approx(BOUND)
    # every target at the bound (implied labels -1, +1, a move of 2 = D): one label path
    labels = Dataset(DATA.X, np.where(DATA.y > 0, 1.0, -1.0))
    (path,) = structure_paths(labels, outputs_only(D), y_bound=1.0)
    assert isinstance(path, LabelCountPath) and (path.low, path.high) == (-1.0, 1.0)
    assert structure_paths(labels, outputs_only(1.0), y_bound=1.0) == []  # 2 is beyond d
    # declared labels: rows moved between consecutive labels, whatever the data
    classes = Dataset(DATA.X, np.arange(DATA.n) % 3.0)
    paths = structure_paths(classes, outputs_only(1.0), y_bound=2.0, labels=(0.0, 1.0, 2.0))
    assert [(p.low, p.high) for p in paths] == [(0.0, 1.0), (1.0, 2.0)]
    for k in range(DATA.n + 1):
        y = paths[1].at(k + 0.5).y  # t is floored: k rows at the upper label
        assert np.count_nonzero(y == 2.0) == k and np.count_nonzero(y == 1.0) == DATA.n - k
    assert len(structure_paths(classes, outputs_only(D), y_bound=2.0)) == 6
    assert structure_paths(DATA, all_answers(1.0)) == []


def test_label_paths_bisect_on_counts_and_end_on_neighbours():
    data = Dataset(DATA.X, np.zeros(DATA.n))
    (path,) = label_count_paths(data, outputs_only(1.0), (0.0, 1.0))
    assert path.midpoint(0.0, 5.0) == 2.0 and path.midpoint(4.0, 5.0) == 4.0
    assert path.resolved(4.0, 5.0) and not path.resolved(3.0, 5.0)
    (pair,) = path.boundary_pairs(4.0, 5.0, outputs_only(1.0))
    assert is_neighbour(pair.d0, pair.d1, outputs_only(1.0))
    assert (pair.d0.y.sum(), pair.d1.y.sum()) == (4.0, 5.0)
    assert path.boundary_pairs(4.0, 6.0, outputs_only(1.0)) == []  # two rows apart
    # whole rows: any two labels are one substitution apart; outputs only: within d
    assert len(label_count_paths(data, whole_rows(1.0), (-1.0, 0.0, 1.0))) == 2
    assert [(p.low, p.high) for p in label_count_paths(data, outputs_only(1.0),
                                                       (0.0, 1.0, 3.0))] == [(0.0, 1.0)]


@dataclass(frozen=True)
class SuppressedCount:
    """The count of positive labels + two-sided geometric noise, 0 when the true count is
    below ``cut`` (``on_noisy``: when the noisy count is, the post-processed twin)."""

    cut: int = 7
    on_noisy: bool = False
    claim: object = PureDP(epsilon=1.0, relation=outputs_only(1.0),
                           domain=PublicDomain(1.0, labels=(0.0, 1.0)))

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        c = float(self.claim.domain.targets(data.y).sum())
        p = -math.expm1(-1.0)
        noisy = c + (rng.geometric(p, (n, 1)) - rng.geometric(p, (n, 1))).astype(float)
        if self.on_noisy:
            return np.where(noisy < self.cut, 0.0, noisy)
        return np.zeros((n, 1)) if c < self.cut else noisy


def test_search_along_labels_finds_a_count_threshold_of_integer_noise():
    """The survey calls no pair additive (integer noise), yet along the label path the one
    step where the release stops being 0 is found: the pair cut-1 -> cut positives."""
    data = Dataset(DATA.X, (np.arange(DATA.n) % 3 == 0).astype(float))
    mech = SuppressedCount()
    relation, labels = mech.claim.relation, (0.0, 1.0)
    survey = couple_pairs(mech, [(data, data.with_target(1, 1.0))], np.random.default_rng(0))
    assert skip_reason(survey) is not None  # not additive: the continuous paths stay shut
    assert skip_reason(survey, additive=False) is None
    out = search_boundaries(mech, data, relation, np.random.default_rng(1), labels=labels)
    (found,) = out.boundaries
    assert found["path"] == "rows moved one by one from label 0 to 1"
    assert [math.floor(t) for t in found["t"]] == [6, 7]  # t is floored to a count
    (pair,) = out.pairs
    assert (pair.d0.y.sum(), pair.d1.y.sum()) == (6.0, 7.0)
    assert out.calls <= SEGMENTS + 4  # a grid pass and a bisection on integers
    report = audit_mechanism(mech, data, np.random.default_rng(2))
    assert report.verdict is Verdict.VIOLATION, report.table()
    twin = audit_mechanism(SuppressedCount(on_noisy=True), data, np.random.default_rng(2))
    assert twin.verdict is not Verdict.VIOLATION, twin.table()


class UnnoisedMargin:
    """Propose-test-release with its test un-noised: label 1 is released when the count of
    ones minus the count of zeros exceeds 3 exactly, -1 otherwise. The noise drawn is never
    used, so the release is a deterministic step of the count (true ε = ∞ across it)."""

    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0),
                     domain=PublicDomain(1.0, labels=(0.0, 1.0)))

    def __init__(self, noised: bool = False) -> None:
        self.noised = noised

    def sample(self, data, n, rng):
        ones = float(np.sum(data.y == 1.0))
        margin = ones - (data.n - ones)
        test = margin + (rng.laplace(0.0, 2.0, (n, 1)) if self.noised else 0.0 * rng.random((n, 1)))
        return np.where(test > 3.0, 1.0, -1.0)


def test_a_step_without_noise_is_a_boundary():
    """Two releases constant on both sides but different: ``same_structure`` reads the
    constant coupled difference as a shift under one noise map; ``moves_without_noise``
    sees the step, and the label search finds the count where the margin crosses 3."""
    n = DATA.n  # 20 rows: the margin 2·ones − 20 exceeds 3 from 12 ones on
    below = Dataset(DATA.X, (np.arange(n) < 11).astype(float))
    above = below.with_target(11, 1.0)
    run = couple(UnnoisedMargin(), below, above, 4, np.random.SeedSequence(5))
    assert same_structure(run) and moves_without_noise(run)
    assert not moves_without_noise(couple(UnnoisedMargin(), above, above.with_target(12, 1.0),
                                          4, np.random.SeedSequence(5)))
    start = Dataset(DATA.X, (np.arange(n) < 4).astype(float))  # far from the step
    out = search_boundaries(UnnoisedMargin(), start, UnnoisedMargin.claim.relation,
                            np.random.default_rng(1), labels=(0.0, 1.0))
    assert {(p.d0.y.sum(), p.d1.y.sum()) for p in out.pairs} >= {(11.0, 12.0)}
    report = audit_mechanism(UnnoisedMargin(), start, np.random.default_rng(2))
    assert report.verdict is Verdict.VIOLATION, report.table()
    twin = audit_mechanism(UnnoisedMargin(noised=True), start, np.random.default_rng(2))
    assert twin.verdict is not Verdict.VIOLATION, twin.table()


def test_same_structure_reads_integer_noise_without_a_grid_allowance():
    data = Dataset(DATA.X, np.zeros(DATA.n))
    mech = SuppressedCount(cut=1)  # integer noise, often within two steps of its grid
    moved = data.with_target(0, 1.0)
    assert not same_structure(couple(mech, data, moved, 4, np.random.SeedSequence(3)))
    assert same_structure(couple(mech, moved, moved.with_target(1, 1.0), 4,
                                 np.random.SeedSequence(3)))


@pytest.mark.parametrize("relation", [outputs_only(D), whole_rows(BOUND)])
def test_boundary_pairs_are_neighbours_inside_the_domain(relation):
    path = structure_paths(DATA, relation, y_bound=BOUND)[1]
    pairs = path.boundary_pairs(0.4, 0.41, relation)
    assert pairs
    for pair in pairs:
        assert isinstance(pair, NeighbourPair)
        assert is_neighbour(pair.d0, pair.d1, relation)
        assert np.max(np.abs(pair.d1.y)) <= BOUND
        moved = np.flatnonzero(pair.d0.y != pair.d1.y)
        assert moved.size == 1
        i = int(moved[0])
        # "towards" moves the row the way the path moves it from t_a to t_b, "back" the other
        way = math.copysign(1.0, path.pattern[i])
        assert math.copysign(1.0, pair.d1.y[i] - pair.d0.y[i]) == \
            (way if "towards" in pair.label else -way)


def test_base_path_with_an_offset_runs_from_one_pattern_to_another():
    a, b = np.ones(DATA.n), -np.ones(DATA.n)
    path = BasePath("ones to minus ones", DATA, b - a, 0.0, 1.0, None, offset=a)
    assert np.array_equal(path.at(0.0).y, a) and np.array_equal(path.at(1.0).y, b)
    assert np.array_equal(path.at(0.5).y, np.zeros(DATA.n))


# --------------------------------------------------------------------------- the search
@pytest.mark.parametrize("rounded", [False, True])
def test_search_locates_the_closed_form_variance_boundary(rounded):
    mech = VarianceSwitch(rounded=rounded)
    out = _search(mech)
    found = {b["path"]: b["t"] for b in out.boundaries}
    lo, hi = found["targets alternating +-A"]
    t_star = math.sqrt(VAR_CUT) / BOUND  # even n: var(t A alt) = t^2 A^2
    assert lo <= t_star <= hi and hi - lo < 1e-6
    assert out.pairs and out.calls <= MAX_CALLS
    for pair in out.pairs:  # every pair kept crosses the mechanism's own branch
        assert mech.branch(pair.d0) != mech.branch(pair.d1)
        assert is_neighbour(pair.d0, pair.d1, mech.claim.relation)
        assert max(np.max(np.abs(pair.d0.y)), np.max(np.abs(pair.d1.y))) <= BOUND
    if "the data's targets scaled" in found:
        lo, hi = found["the data's targets scaled"]
        top = float(np.max(np.abs(DATA.y)))
        t_data = math.sqrt(VAR_CUT / float(np.var(DATA.y))) * top / BOUND
        assert lo <= t_data <= hi


def test_search_finds_nothing_without_a_switch_and_is_deterministic():
    out = _search(VarianceSwitch(switch=False))
    assert out.boundaries == [] and out.pairs == []
    assert out.calls == SEGMENTS * len(structure_paths(DATA, outputs_only(D), y_bound=BOUND))
    a, b = _search(VarianceSwitch(), seed=5), _search(VarianceSwitch(), seed=5)
    assert a.as_dict() == b.as_dict()


def test_search_respects_its_call_allowance():
    out = _search(VarianceSwitch(), max_calls=10)
    assert out.calls <= 10


def test_search_records_refused_bases():
    @dataclass(frozen=True)
    class RefusesLarge:
        claim: object = CLAIM

        def sample(self, data, n, rng):
            if np.max(np.abs(data.y)) > 0.5:
                raise ValueError("targets above 0.5 are refused")
            return data.y.sum() + SIGMA * rng.standard_normal((n, 1))

    out = _search(RefusesLarge())
    assert out.refused and "refused" in out.refused[0]


def test_skip_reason_gates_on_reproducible_additive_surveys():
    pair = NeighbourPair(DATA, DATA.with_target(1, 0.0), "y[1] -> 0")
    survey = couple_pairs(VarianceSwitch(switch=False), [pair], np.random.default_rng(0))
    assert skip_reason(survey) is None

    @dataclass(frozen=True)
    class Categorical:
        claim: object = CLAIM

        def sample(self, data, n, rng):
            return (rng.random((n, 1)) < 0.5 + 0.01 * data.y[0]).astype(float)

    cat = couple_pairs(Categorical(), [pair], np.random.default_rng(0))
    assert "additive" in skip_reason(cat)


# --------------------------------------------------------------------------- default path
def test_default_path_flags_the_switch_and_its_twin_stays_clean():
    # at var 0.6 no generated pair crosses the switch (the tail-count bases cross 0.2, the
    # test below), so the structure-boundary search is what finds it
    bad = audit_mechanism(VarianceSwitch(rounded=True, cut=0.6), DATA,
                          np.random.default_rng(2), n=20_000)
    grey = bad.result("greybox")
    assert grey.verdict is Verdict.VIOLATION and grey.guarantee is Guarantee.GREYBOX_SCALE
    assert grey.details["boundary"]["pairs"]
    assert bad.witness is not None and bad.witness.label.startswith("structure boundary")
    assert bad.result("blackbox").verdict is Verdict.VIOLATION
    ok = audit_mechanism(VarianceSwitch(switch=False, rounded=True), DATA,
                         np.random.default_rng(2), n=20_000)
    assert ok.verdict is not Verdict.VIOLATION, ok.table()
    assert ok.result("greybox").details["boundary"]["pairs"] == []


def test_a_generated_pair_that_crosses_the_switch_makes_the_search_unneeded():
    """At var 0.2 the base with 2 of 20 targets at -1 (var 0.36) and one moved to +1 (0.19)
    crosses the switch: the survey's own pair is a definitive finding, and the search is
    skipped as such."""
    bad = audit_mechanism(VarianceSwitch(rounded=True), DATA, np.random.default_rng(2),
                          n=20_000)
    grey = bad.result("greybox")
    assert grey.verdict is Verdict.VIOLATION and grey.guarantee is Guarantee.GREYBOX_SCALE
    assert grey.details["boundary"] == {"skipped": "the survey already has a definitive finding"}
    assert bad.witness.label.startswith("tail count: 2 targets")


def test_violation_findings_rank_first_for_the_certifiers():
    pairs = tuple(NeighbourPair(DATA, DATA.with_target(i, 0.0), f"p{i}") for i in range(3))
    couplings = (PairCoupling(0, "p0", "additive", score=0.9),
                 PairCoupling(1, "p1", "unequal-scale", finding="violation", score=0.2),
                 PairCoupling(2, "p2", "unequal-scale", finding="violation", score=0.3))
    survey = CouplingSurvey(pairs, couplings, CLAIM, 0)
    scores = survey.pair_scores()
    assert scores[2] > scores[1] > scores[0] == 0.9
    assert [p.label for p, _ in survey.top(3)] == ["p2", "p1", "p0"]


# --------------------------------------------------------------------------- the planted bug
def test_lengthscale_bug_loss_grows_with_the_targets_scale():
    """planted/lengthscale-from-data: the event bound (scipy) grows about as the scale²."""
    b10, b100 = (lengthscale_from_data_epsilon(DATA, scale=s) for s in (10.0, 100.0))
    assert b10 > 10 * EPS and b100 > 20 * b10


def test_lengthscale_twin_has_no_boundary():
    fixed = LengthscaleSelectedGP(EPS, DELTA, 1.0, select=False)
    out = search_boundaries(fixed, DATA, fixed.claim.relation, np.random.default_rng(0))
    assert out.boundaries == [] and out.pairs == []


# --------------------------------------------------------------------------- group sizes
@dataclass(frozen=True)
class ArmDifference:
    """The difference of two arms' success rates, Laplace noise scaled by the arm sizes
    (1/n1 + 1/n0)/ε, each size guarded by max(n, 1): a tenth hunt's slip. The sizes are
    private under whole rows; on data with two large arms one record moves the scale by
    under 1 % (within the claim over every output the sampler reaches), while one treated
    row against two halves it (ε = ∞)."""

    claim = PureDP(epsilon=1.0, relation=whole_rows(1.0),
                   domain=PublicDomain(1.0, labels=(0.0, 1.0), x_bound=1.0))

    def sample(self, data, n, rng):
        arm = np.asarray(data.X, dtype=float).ravel() > 0.5
        y = np.asarray(data.y, dtype=float)
        n1, n0 = max(int(arm.sum()), 1), max(int((~arm).sum()), 1)
        diff = y[arm].sum() / n1 - y[~arm].sum() / n0
        b = 1.0 / n1 + 1.0 / n0
        return float_safe_release(float(diff), rng.laplace(0.0, b, (n, 1)), math.sqrt(2.0) * b)


ARMS = Dataset(np.r_[np.ones(34), np.zeros(46)],
               (np.random.default_rng(7).uniform(size=80) < 0.45).astype(float))


def test_A9_a_noise_scale_read_off_group_sizes_is_found_at_the_smallest_groups(monkeypatch):
    report = audit_mechanism(ArmDifference(), ARMS, np.random.default_rng(1),
                             auditors=("greybox",))
    grey = report.result("greybox")
    assert grey.verdict is Verdict.VIOLATION and grey.guarantee is Guarantee.GREYBOX_SCALE
    assert len(grey.details["group_sizes"]["pairs"]) == 4
    assert report.witness.label.startswith("group sizes: 1 row(s)")
    assert "an input group of one or two rows" in report.table()
    # the step is what finds it: without it every surveyed pair keeps both arms large
    from dpgp_audit.audit import boundary

    monkeypatch.setattr(boundary, "with_group_sizes", lambda m, survey, *a, **k: (survey, []))
    blind = audit_mechanism(ArmDifference(), ARMS, np.random.default_rng(1),
                            auditors=("greybox",)).result("greybox")
    assert not blind.violation
    assert any(s == "noise-depends-on-data" for s in blind.details["statuses"])
