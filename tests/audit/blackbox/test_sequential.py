"""A.8 sequential (anytime-valid) black-box audits: wealth arithmetic, coverage, power, budgets."""

from __future__ import annotations

import itertools
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy import stats

from dpgp_audit.audit.blackbox.fixed import audit_blackbox
from dpgp_audit.audit.blackbox.sequential import (
    SequentialPlan,
    audit_sequential,
    epsilon_grid,
    expected_log_growth,
    log_wealth_increment,
    sequential_ceiling,
)
from dpgp_audit.audit.result import Verdict
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import ApproxDP, PureDP, outputs_only
from dpgp_audit.privacy.gdp import gdp_epsilon
from tests.audit.blackbox.test_fixed import (
    CLAIM,
    D0,
    D1,
    REL,
    SIGMA,
    Deterministic,
    RandomizedResponse,
    ScalarGaussian,
    ScalarGaussianWB,
    VectorGaussian,
    _false_alarm_ok,
)


def _power_of_false_alarm_check(runs: int, alpha: float, true_rate: float) -> float:
    """P(the binomial check rejects) when the real false-alarm rate is ``true_rate``."""
    k = np.arange(runs + 1)
    p_values = stats.binom.sf(k - 1, runs, alpha)  # P(K >= k) under the null rate alpha
    reject = p_values < 1e-3
    return float(stats.binom.pmf(k[reject], runs, true_rate).sum())


# ----------------------------------------------------------------------------- wealth arithmetic
@pytest.mark.parametrize("kind", ["continuous", "ties", "unequal"])
def test_pooled_quantiles_of_two_sorted_samples_are_those_of_their_merge(kind):
    # issue 20 §2: the binary search must give the merge's values, ties and ends included
    from dpgp_audit.audit.blackbox.sequential import _kth_of_two

    rng = np.random.default_rng(11)
    for _ in range(30):
        na, nb = rng.integers(1, 3000, size=2) if kind == "unequal" else (2048, 2048)
        if kind == "ties":
            a, b = rng.integers(0, 9, na).astype(float), rng.integers(3, 12, nb).astype(float)
        else:
            a, b = rng.normal(size=na), rng.normal(0.3, 2.0, size=nb)
        a, b = np.sort(a), np.sort(b)
        ranks = np.concatenate([[0, na + nb - 1], rng.integers(0, na + nb, 60)])
        assert np.array_equal(_kth_of_two(a, b, ranks), np.sort(np.concatenate([a, b]))[ranks])


def test_in_place_growth_is_the_growth_to_the_last_bit():
    # the event choice compares growths exactly: the faster forms must not move a bit
    from dpgp_audit.audit.blackbox.sequential import (
        BET_FRACTIONS,
        _growth,
        _growth_inplace,
        _growth_logs,
        _max_growth,
    )

    rng = np.random.default_rng(12)
    p1, p0 = rng.random(300), rng.random(300)
    logs = _growth_logs(1.3, 1e-5, BET_FRACTIONS)
    assert np.array_equal(_max_growth(p1, p0, logs),
                          _growth(p1[:, None], p0[:, None], logs).max(axis=1))
    grid_logs = _growth_logs(epsilon_grid(1.0)[:, None], 1e-5, BET_FRACTIONS[None, :])
    assert np.array_equal(_growth_inplace(0.31, 0.07, grid_logs),
                          _growth(0.31, 0.07, grid_logs))
    assert np.array_equal(_growth(0.31, 0.07, grid_logs),
                          expected_log_growth(0.31, 0.07, BET_FRACTIONS[None, :],
                                              epsilon_grid(1.0)[:, None], 1e-5))




def test_log_wealth_matches_a_naive_product_over_draws():
    # An independent oracle: multiply (1 + λ Z_i) one draw at a time in pure Python.
    rng = np.random.default_rng(0)
    a = rng.random(500) < 0.3
    b = rng.random(500) < 0.1
    eps, delta, u = 0.7, 1e-3, 0.4
    lam = u / (math.exp(eps) + delta)
    naive = 0.0
    for ai, bi in zip(a, b, strict=True):
        naive += math.log(1.0 + lam * (float(ai) - math.exp(eps) * float(bi) - delta))
    n11 = int(np.sum(a & b))
    counts = (int(a.sum()) - n11, int(b.sum()) - n11, n11,
              500 - int(a.sum()) - int(b.sum()) + n11)
    got = float(log_wealth_increment(counts, np.array(u), np.array(eps), delta))
    assert got == pytest.approx(naive, rel=1e-12)


@pytest.mark.parametrize("eps, delta", [(0.0, 0.0), (1.0, 1e-5), (2.0, 0.1)])
def test_one_bet_is_fair_or_unfavourable_under_the_null(eps, delta):
    # Under H0 (p1 <= e^eps p0 + delta) E[1 + λZ] <= 1 for every allowed bet: the wealth is a
    # supermartingale. Enumerate the four outcomes exactly at the boundary p1 = e^eps p0 + delta.
    for p0 in (0.0, 1e-4, 0.05, 0.2):
        p1 = min(1.0, math.exp(eps) * p0 + delta)
        for u in (0.1, 0.5, 0.99):
            lam = u / (math.exp(eps) + delta)
            mean = 0.0
            for a, b in itertools.product((0, 1), repeat=2):
                prob = (p1 if a else 1 - p1) * (p0 if b else 1 - p0)
                mean += prob * (1 + lam * (a - math.exp(eps) * b - delta))
            assert mean <= 1 + 1e-12


def test_expected_log_growth_matches_enumeration():
    p1, p0, u, eps, delta = 0.3, 0.05, 0.6, 1.0, 1e-5
    lam = u / (math.exp(eps) + delta)
    direct = sum((p1 if a else 1 - p1) * (p0 if b else 1 - p0)
                 * math.log(1 + lam * (a - math.exp(eps) * b - delta))
                 for a, b in itertools.product((0, 1), repeat=2))
    assert float(expected_log_growth(p1, p0, u, eps, delta)) == pytest.approx(direct, rel=1e-12)


def test_ceiling_solves_the_perfect_distinguisher_equation():
    n, alpha, delta, comps = 40, 0.05, 1e-5, 8
    ceiling = sequential_ceiling(n, alpha, delta, comps)
    lam_u = 0.999 * (1 - delta) / (math.exp(ceiling) + delta)
    assert n * math.log1p(lam_u) == pytest.approx(math.log(comps / alpha), rel=1e-9)
    assert sequential_ceiling(0, alpha, delta, comps) == 0.0
    # the default is the true ceiling: every process growing at once, log(1/alpha)
    top = sequential_ceiling(n, alpha, delta)
    lam_top = 0.999 * (1 - delta) / (math.exp(top) + delta)
    assert n * math.log1p(lam_top) == pytest.approx(math.log(1 / alpha), rel=1e-9)
    assert top > ceiling


def test_no_certified_bound_exceeds_the_reported_ceiling():
    """A separating release (D always 0, D' never): every process grows together, and the
    audit stops as soon as the wealth allows; what it certifies stays below its ceiling."""

    class Separates:
        claim = PureDP(epsilon=1.0, relation=outputs_only(1.0))

        def sample(self, data, n, rng):
            u = rng.random((n, 1))
            return u + (0.0 if data.y.sum() == 0 else 10.0)

    data = Dataset(np.zeros((5, 1)), np.zeros(5))
    pairs = [(data, data.with_target(0, 1.0)), (data, data.with_target(1, 1.0))]
    res = audit_sequential(Separates(), pairs, max_n=4096, rng=np.random.default_rng(0))
    assert res.verdict is Verdict.VIOLATION
    assert res.estimate <= res.details["epsilon_ceiling"]


def test_plan_doubles_and_truncates_at_max_n():
    assert SequentialPlan(max_n=1000, first=50).sizes() == [50, 50, 100, 200, 400, 200]
    plan = SequentialPlan(max_n=1000, first=50)
    assert plan.rounds()[-1] == (800, 200)  # scheduled 800, cut at max_n
    assert plan.piece_sizes(800, 200) == [100, 100]  # pieces of the schedule, not of the cut
    assert plan.piece_sizes(50, 50) == [7] * 7 + [1]
    assert sum(SequentialPlan(max_n=777, first=32).sizes()) == 777
    grid = epsilon_grid(1.0)
    assert grid[0] == 0.0 and 1.0 in grid and np.all(np.diff(grid) > 0)


# ----------------------------------------------------------------------------- coverage


@pytest.mark.parametrize("runs, alpha, copies, seed", [(200, 0.1, 0, 11), (100, 0.2, 6, 21)])
def test_coverage_randomized_response_at_true_epsilon(runs, alpha, copies, seed):
    # Randomized response is tight at EVERY event (P1(S) = e^eps P0(S) exactly for the
    # informative bit), so any invalid step would show as false alarms; if the real
    # false-alarm rate were 2α the check below would fail with the power asserted here.
    # With ``copies`` evidence pairs (A.8), every one of them tight too: at α = 0.2 a
    # weighting that gave each evidence process a confirmed one's weight would start the
    # average at log 6.75 > log 5 and alarm on every run.
    eps = 1.0
    p = math.exp(eps) / (1 + math.exp(eps))
    mech = RandomizedResponse(p, PureDP(epsilon=eps, relation=REL))
    assert _power_of_false_alarm_check(runs, alpha, 2 * alpha) >= 0.75
    evidence = [(D0, D1, f"copy {i}") for i in range(copies)]
    alarms, bounds = 0, []
    for s in np.random.SeedSequence(seed).spawn(runs):
        r = audit_sequential(mech, [(D0, D1)], max_n=4000 if not copies else 2000,
                             rng=np.random.default_rng(s), alpha=alpha, evidence=evidence)
        alarms += r.violation
        bounds.append(r.estimate)
    assert _false_alarm_ok(alarms, runs, alpha)
    assert np.mean(bounds) > 0.3 * eps  # not vacuous: the confidence sequence gets close


def test_coverage_gaussian_at_true_epsilon_large_delta():
    delta, mu = 0.05, 1.0
    eps_true = gdp_epsilon(delta, mu)
    mech = ScalarGaussianWB(1.0 / mu, ApproxDP(epsilon=eps_true, delta=delta, relation=REL))
    runs, alpha = 200, 0.1
    alarms = 0
    for s in np.random.SeedSequence(12).spawn(runs):
        r = audit_sequential(mech, [(D0, D1)], max_n=4000, rng=np.random.default_rng(s),
                             alpha=alpha)
        alarms += r.violation
    assert _false_alarm_ok(alarms, runs, alpha)


@pytest.mark.slow
def test_coverage_many_runs_learned_score_slow():
    # 1000 runs with the learned (identity) score at the true claim; power against a real
    # false-alarm rate of 1.5α is asserted.
    delta, mu = 0.05, 0.8
    eps_true = gdp_epsilon(delta, mu)
    mech = ScalarGaussian(1.0 / mu, ApproxDP(epsilon=eps_true, delta=delta, relation=REL))
    runs, alpha = 1000, 0.1
    assert _power_of_false_alarm_check(runs, alpha, 1.5 * alpha) >= 0.9
    alarms = sum(audit_sequential(mech, [(D0, D1)], max_n=20_000, rng=np.random.default_rng(s),
                                  alpha=alpha).violation
                 for s in np.random.SeedSequence(13).spawn(runs))
    assert _false_alarm_ok(alarms, runs, alpha)


# ----------------------------------------------------------------------------- power


def test_deterministic_mechanism_stops_after_a_few_dozen_draws(rng):
    r = audit_sequential(Deterministic(CLAIM), [(D0, D1)], max_n=1_000_000, rng=rng)
    assert r.verdict is Verdict.VIOLATION
    assert r.details["n_per_side"] <= 100
    assert r.details["stopped"] == "violation"


def test_doubled_sensitivity_stops_early_and_the_bound_is_below_the_truth(rng):
    # gain 2 at the analytic sigma: true eps at 1e-5 is 2.155 (AUDITING.md §4.2).
    mech = ScalarGaussianWB(SIGMA, CLAIM, gain=2.0)
    r = audit_sequential(mech, [(D0, D1)], max_n=2_000_000, rng=rng)
    assert r.verdict is Verdict.VIOLATION
    assert r.details["n_per_side"] < 200_000
    assert 1.0 <= r.estimate < 2.155


def test_learned_score_catches_vector_bug(rng):
    # No mean()/cov(): the main score is the learned LDA direction, and the learned
    # quadratic candidate (means and covariances) competes with it between rounds; which
    # of the two certifies depends on the draws, but one of them must.
    d = 5
    A = np.zeros((d, 1))
    A[0, 0] = 2.0
    mech = VectorGaussian(A, SIGMA * np.eye(d), CLAIM)
    r = audit_sequential(mech, [(D0, D1)], max_n=400_000, rng=rng)
    assert r.verdict is Verdict.VIOLATION
    assert r.details["score"] in ("lda", "quadratic (learned means and covariances)")


def test_several_pairs_witness_is_the_leaky_one(rng):
    mech = ScalarGaussianWB(SIGMA, CLAIM, gain=2.0)
    same = (D0, D0, "identical")
    r = audit_sequential(mech, [same, (D0, D1, "y0: 0 -> 1")], max_n=400_000, rng=rng)
    assert r.violation and r.details["witness_label"] == "y0: 0 -> 1"


def test_correct_mechanism_not_flagged_and_inconclusive_above_ceiling(rng):
    r = audit_sequential(ScalarGaussianWB(SIGMA, CLAIM), [(D0, D1)], max_n=20_000, rng=rng)
    assert r.verdict is Verdict.NO_EVIDENCE and r.details["stopped"] == "max_n"
    big = ApproxDP(epsilon=30.0, delta=1e-5, relation=REL)
    r = audit_sequential(Deterministic(big), [(D0, D1)], max_n=200, rng=rng)
    assert r.verdict is Verdict.INCONCLUSIVE


# ----------------------------------------------------------------------------- reproducibility


def test_reproducible_from_the_recorded_draws_and_executor_independent():
    mech = ScalarGaussianWB(SIGMA, CLAIM, gain=2.0)
    a = audit_sequential(mech, [(D0, D1)], max_n=1_000_000, rng=np.random.default_rng(5))
    rep = a.details["reproduce"]
    b = audit_sequential(mech, [(D0, D1)], max_n=rep["max_n"], first_round=rep["first_round"],
                         rng=np.random.default_rng(5))
    assert (a.estimate, a.details["n_per_side"]) == (b.estimate, b.details["n_per_side"])
    with ThreadPoolExecutor(2) as pool:
        c = audit_sequential(mech, [(D0, D1)], max_n=1_000_000, rng=np.random.default_rng(5),
                             executor=pool)
    assert c.details["rounds"] == [{**r, "seconds": c.details["rounds"][i]["seconds"]}
                                   for i, r in enumerate(a.details["rounds"])]
    assert c.estimate == a.estimate


def test_the_time_guard_stops_with_an_explicit_inconclusive(rng):
    # issue 20 §1: a wall-clock limit is a guard, never a budget. A fake clock that
    # advances one "second" per reading makes it fire deterministically; the result must
    # say so and must not read as "no evidence".
    ticks = itertools.count()

    def clock():
        return float(next(ticks))

    r = audit_sequential(ScalarGaussianWB(SIGMA, CLAIM), [(D0, D1)], max_n=10**7, rng=rng,
                         time_guard_s=6.0, clock=clock)
    assert r.details["stopped"] == "time_guard"
    assert r.verdict is Verdict.INCONCLUSIVE
    note = r.details["time_guard"]
    assert note["limit_s"] == 6.0 and note["draws"] == r.details["n_per_side"] < 10**7
    assert "stopped by the time guard" in note["message"] and "INCONCLUSIVE" in note["message"]
    assert r.details["n_per_side"] == sum(x["draws"] for x in r.details["rounds"]) \
        + r.details["n_fit"]
    # the former keyword is the same guard
    ticks = itertools.count()
    old = audit_sequential(ScalarGaussianWB(SIGMA, CLAIM), [(D0, D1)], max_n=10**7,
                           rng=np.random.default_rng(4), budget_s=6.0, clock=clock)
    assert old.details["stopped"] == "time_guard" and old.verdict is Verdict.INCONCLUSIVE


def test_a_certified_violation_stands_when_the_guard_fires_later(rng):
    # the certificate is anytime-valid: a guard firing after it changes nothing
    r = audit_sequential(Deterministic(CLAIM), [(D0, D1)], max_n=10_000, rng=rng,
                         guard=lambda: False)
    assert r.violation and "time_guard" not in r.details


def test_draws_are_a_function_of_the_inputs_not_of_the_clock():
    # issue 20 §1: the same seed under a fast and a slow (fake) clock, with a guard that
    # does not fire, gives the same draws, bound and verdict; only the timings differ.
    mech = ScalarGaussianWB(SIGMA, CLAIM)
    fast = itertools.count()
    slow = itertools.count(step=1000)
    a = audit_sequential(mech, [(D0, D1)], max_n=30_000, rng=np.random.default_rng(6),
                         time_guard_s=1e12, clock=lambda: float(next(fast)))
    b = audit_sequential(mech, [(D0, D1)], max_n=30_000, rng=np.random.default_rng(6),
                         time_guard_s=1e12, clock=lambda: float(next(slow)))
    assert (a.verdict, a.estimate, a.details["n_per_side"]) == \
        (b.verdict, b.estimate, b.details["n_per_side"])
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in a.details["rounds"]]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"}
                     for r in b.details["rounds"]]
    assert a.details["stopped"] == "max_n"


def test_input_validation(rng):
    mech = ScalarGaussianWB(SIGMA, CLAIM)
    with pytest.raises(ValueError, match="max_n"):
        audit_sequential(mech, [(D0, D1)], max_n=1, rng=rng)
    with pytest.raises(ValueError, match="alpha"):
        audit_sequential(mech, [(D0, D1)], max_n=100, rng=rng, alpha=1.5)
    with pytest.raises(ValueError, match="budget_s"):
        audit_sequential(mech, [(D0, D1)], max_n=100, rng=rng, budget_s=0)
    with pytest.raises(ValueError, match="time_guard_s"):
        audit_sequential(mech, [(D0, D1)], max_n=100, rng=rng, time_guard_s=-1.0)
    with pytest.raises(ValueError, match="score"):
        audit_sequential(mech, [(D0, D1)], max_n=100, rng=rng, score=["auto", "lda"])
    with pytest.raises(ValueError, match="pairs"):
        audit_sequential(mech, [], max_n=100, rng=rng)
    with pytest.raises(ValueError, match="tests"):
        audit_sequential(mech, [(D0, D1)], max_n=100, rng=rng, tests=5)


def test_sequential_needs_fewer_draws_than_fixed_n_on_a_gross_bug(rng):
    # The fixed-n auditor spends its n whatever happens; the sequential one stops.
    mech = ScalarGaussianWB(SIGMA, CLAIM, gain=4.0)
    fixed = audit_blackbox(mech, D0, D1, n=50_000, rng=rng)
    seq = audit_sequential(mech, [(D0, D1)], max_n=50_000, rng=rng)
    assert fixed.violation and seq.violation
    assert seq.details["n_per_side"] <= 50_000 // 5


# ----------------------------------------------------------------------------- candidates
def test_candidates_close_the_atom_blind_spot_between_rounds():
    # Issue 15 §1 in A.8: the noise is skipped w.p. 100 delta, so {output = sum(D)} has
    # probability 1e-3 under D and 0 under D' (true eps infinite). Only the 'atoms'
    # candidate, chosen between rounds on earlier draws, sees it: the main (identity)
    # score alone sees a correct Gaussian sum and cannot certify more than the claim.
    from dpgp_audit.audit.blackbox.scores import CANDIDATE_RULE
    from dpgp_audit.bugs.blindspots import NoiseSkippedSum
    from dpgp_audit.dataset import Dataset

    mech = NoiseSkippedSum(1.0, 1e-5, 1.0, p_skip=1e-3)
    X = np.zeros((5, 1))
    d0, d1 = Dataset(X, np.zeros(5)), Dataset(X, np.r_[np.zeros(4), 1.0])
    seed = np.random.SeedSequence(2026)
    with_c = audit_sequential(mech, [(d0, d1)], max_n=400_000, rng=np.random.default_rng(seed))
    without = audit_sequential(mech, [(d0, d1)], max_n=400_000,
                               rng=np.random.default_rng(seed), extra_scores=False)
    assert with_c.verdict is Verdict.VIOLATION
    assert with_c.details["score"].startswith("atoms")
    assert with_c.details["candidate_rule"] == CANDIDATE_RULE
    assert without.verdict is not Verdict.VIOLATION
    assert without.details["candidate_rule"] is None


def test_a_violation_stops_inside_a_round_at_a_piece_boundary():
    # A.8: the wealth is checked after every eighth of a round (Ville holds at every draw),
    # so the audit need not finish the round in which the evidence became sufficient.
    mech = ScalarGaussianWB(SIGMA, CLAIM, gain=2.0)
    cut_short = 0
    for seed in range(4):
        r = audit_sequential(mech, [(D0, D1)], max_n=2_000_000, rng=np.random.default_rng(seed))
        assert r.details["stopped"] == "violation"
        plan = SequentialPlan(max_n=2_000_000, first=r.details["n_fit"])
        scheduled = plan.rounds()[len(r.details["rounds"])][0]
        piece = plan.piece_sizes(scheduled, scheduled)[0]
        last = r.details["rounds"][-1]["draws"]
        assert last % piece == 0 and 0 < last <= scheduled
        cut_short += last < scheduled
    assert cut_short >= 1  # a stop at the round's end in all four would mean no checks inside


def test_stopped_says_max_n_only_when_the_cap_was_reached():
    # A round cut short by the time guard ends the run, and the report says so, also
    # when it was the last scheduled round. Fake time advances by 1 ms per draw; the
    # mechanism declares an expensive draw, so every round has eight pieces to stop after.
    class Timed(ScalarGaussianWB):
        now = 0.0
        declared_cost_per_draw_s = 1e-3  # declared: the audit never measures it

        def sample(self, data, n, rng):
            Timed.now += 1e-3 * n
            return super().sample(data, n, rng)

    last_round_cut = False
    for limit in np.arange(6.0, 13.0, 0.5):  # 6 000 draws in all need 12 s (two sides)
        Timed.now = 0.0
        r = audit_sequential(Timed(SIGMA, CLAIM), [(D0, D1)], max_n=6_000,
                             rng=np.random.default_rng(1), time_guard_s=float(limit),
                             clock=lambda: Timed.now)
        reached = r.details["n_per_side"] == 6_000
        assert (r.details["stopped"] == "max_n") == reached, (limit, r.details["stopped"])
        assert (r.verdict is Verdict.INCONCLUSIVE) or reached
        last_round_cut |= not reached and len(r.details["rounds"]) == 9  # inside the last
    assert last_round_cut


def test_pieces_of_small_rounds_are_one_call_unless_the_draw_is_declared_expensive():
    # issue 20 §2: a sample() call costs hundreds of cheap draws, so small rounds are drawn
    # in one piece of at least MIN_PIECE draws; a declared expensive draw keeps eight pieces.
    from dpgp_audit.audit.blackbox.sequential import MIN_PIECE

    cheap = SequentialPlan(max_n=10**6, first=16, min_piece=MIN_PIECE)
    assert cheap.piece_sizes(512, 512) == [512]
    assert cheap.piece_sizes(2 * MIN_PIECE, 2 * MIN_PIECE) == [MIN_PIECE] * 2
    assert cheap.piece_sizes(64 * MIN_PIECE, 64 * MIN_PIECE) == [8 * MIN_PIECE] * 8
    assert SequentialPlan(max_n=10**6, first=16).piece_sizes(512, 512) == [64] * 8


# ----------------------------------------------------------------------------- evidence pairs


def test_A8_the_weights_of_every_wealth_process_sum_to_one():
    # Nothing separates the sides (a deterministic release on identical datasets): no bet is
    # ever placed, every process keeps wealth 1, and the average must be exactly 1 — the
    # evidence processes hold EVIDENCE_WEIGHT between them, the confirmed ones the rest.
    same = [(D0, D0, f"identical {i}") for i in range(7)]
    r = audit_sequential(Deterministic(CLAIM), same[:2], max_n=3000,
                         rng=np.random.default_rng(4), evidence=same[2:])
    assert r.details["evidence"]["pairs"] == 5
    assert all(abs(rd["log_wealth_at_claim"]) < 1e-12 for rd in r.details["rounds"])


def test_A8_a_leaking_evidence_pair_is_certified_and_becomes_the_witness(rng):
    from dpgp_audit.audit.blackbox.sequential import EVIDENCE_KEEP

    mech = ScalarGaussianWB(SIGMA, CLAIM, gain=2.0)  # true ε 2.155 on the moving pair
    same = [(D0, D0, f"identical {i}") for i in range(5)]
    r = audit_sequential(mech, same[:1], max_n=400_000, rng=rng,
                         evidence=[*same[1:], (D0, D1, "y0: 0 -> 1")])
    assert r.violation and r.details["witness_label"] == "y0: 0 -> 1"
    ev = r.details["evidence"]
    assert ev["pairs"] == 5 and ev["most_drawn"][0]["label"] == "y0: 0 -> 1"
    # every evidence pair draws in the warm-up rounds, then at most EVIDENCE_KEEP of them
    assert ev["warmup_per_side"] == 4096  # the default; a 32nd of the cap where that is less
    warm = [n for n in np.cumsum(SequentialPlan(400_000, 16).sizes())[:-1] if n < 4096]
    per_round = ev["drawing_per_round"]
    assert per_round[:len(warm)] == [5] * len(warm)
    assert all(k <= EVIDENCE_KEEP for k in per_round[len(warm):])


def test_A8_evidence_pairs_that_cannot_grow_stop_drawing_after_the_warm_up(rng):
    from dpgp_audit.audit.blackbox.sequential import EVIDENCE_KEEP, EVIDENCE_WARMUP

    same = [(D0, D0, f"identical {i}") for i in range(4)]  # no pair differs: no wealth
    r = audit_sequential(ScalarGaussianWB(SIGMA, CLAIM), [(D0, D1)], max_n=100_000, rng=rng,
                         evidence=same)
    assert r.verdict is Verdict.NO_EVIDENCE
    ev = r.details["evidence"]
    assert ev["warmup_per_side"] == min(EVIDENCE_WARMUP, 100_000 // 32)
    assert 4 * EVIDENCE_WARMUP <= ev["draws_per_side"] <= 4 * EVIDENCE_WARMUP + \
        EVIDENCE_KEEP * 100_000
    assert ev["draws_per_side"] < 4 * 100_000 / 2  # most of the cap was never drawn there


def test_A8_no_evidence_pairs_is_exactly_the_run_without_them():
    mech = ScalarGaussianWB(SIGMA, CLAIM, gain=1.3)
    a = audit_sequential(mech, [(D0, D1)], max_n=50_000, rng=np.random.default_rng(3))
    b = audit_sequential(mech, [(D0, D1)], max_n=50_000, rng=np.random.default_rng(3),
                         evidence=())
    drop = ("seconds",)
    assert [{k: v for k, v in r.items() if k not in drop} for r in a.details["rounds"]] == \
        [{k: v for k, v in r.items() if k not in drop} for r in b.details["rounds"]]
    assert (a.verdict, a.estimate) == (b.verdict, b.estimate) and "evidence" not in b.details


def test_A8_a_small_cap_is_not_spent_on_every_evidence_pair(rng):
    # a slow mechanism's cap of a few hundred draws: each evidence pair fits on its first
    # round and warms up on a 32nd of the cap, not on the cap itself
    same = [(D0, D0, f"identical {i}") for i in range(10)]
    r = audit_sequential(ScalarGaussianWB(SIGMA, CLAIM), [(D0, D1)], max_n=640, rng=rng,
                         evidence=same)
    ev = r.details["evidence"]
    assert ev["warmup_per_side"] == 20
    assert ev["draws_per_side"] <= 10 * 32 + 2 * 640  # fit + warm-up rounds, then two at most
    assert ev["draws_per_side"] < 10 * 640 / 4


def test_A8_a_pair_that_stops_passes_its_wealth_on_and_the_fund_keeps_its_value():
    from dpgp_audit.audit.blackbox.sequential import _Evidence

    class Idle:  # a pair's stream, reduced to what stopping it touches
        frozen = False
        s0 = s1 = np.ones(3)

        def _freeze(self):
            self.frozen = True

    rng = np.random.default_rng(7)
    pairs = [Idle() for _ in range(4)]
    ev = _Evidence(streams=pairs, tests=1, round_rngs=[])  # two processes per pair
    ev.log_w = rng.normal(0.0, 2.0, size=(8, 5))
    ev.log_cap = np.log(rng.random((8, 5)))
    before = np.exp(ev.log_cap + ev.log_w)
    ev._pass_on([0, 3], [1, 2])
    after = np.exp(ev.log_cap + ev.log_w)
    # at every ε′ of the grid the fund holds what it held, all of it now with pairs 1 and 2,
    # each of whose processes grew by the same factor (proportional shares)
    np.testing.assert_allclose(after.sum(axis=0), before.sum(axis=0), rtol=1e-12)
    assert np.all(after[[0, 1, 6, 7]] == 0.0) and ev.stopped == {0, 3}
    # the pairs that stop never draw again: their raw draws and scores are let go
    assert [p.frozen for p in pairs] == [True, False, False, True]
    assert pairs[0].s0.size == 0 and pairs[1].s0.size == 3
    np.testing.assert_allclose(after[2:6] / before[2:6],
                               np.broadcast_to(before.sum(axis=0) / before[2:6].sum(axis=0),
                                               (4, 5)), rtol=1e-12)


def test_A8_with_evidence_pairs_the_recorded_rerun_repeats_the_audit():
    # their warm-up is a share of the cap, so the rerun recorded is the same cap (a rerun
    # capped at the draws made would warm them up differently)
    mech = ScalarGaussianWB(SIGMA, CLAIM, gain=1.6)
    more = [(D0, D0, "identical"), (D1, D0, "y0: 1 -> 0")]
    a = audit_sequential(mech, [(D0, D1)], max_n=60_000, rng=np.random.default_rng(8),
                         evidence=more)
    assert a.violation and a.details["n_per_side"] < 60_000
    rep = a.details["reproduce"]
    assert rep["max_n"] == 60_000
    b = audit_sequential(mech, [(D0, D1)], max_n=rep["max_n"], first_round=rep["first_round"],
                         rng=np.random.default_rng(8), evidence=more)
    assert (a.estimate, a.details["n_per_side"], a.details["evidence"]) == \
        (b.estimate, b.details["n_per_side"], b.details["evidence"])
