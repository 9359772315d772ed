"""Issue 15 §1: the default path's former blind spots, each closed and tested.

Every planted bug of :mod:`dpgp_audit.bugs.blindspots` is caught by
``audit_mechanism(mech, data, rng, n=n, mode="fixed")`` — default pairs, default
score, default auditors — at exactly the n stated in the zoo (``bugs.zoo``), while
its correct twin is not flagged at the same n (the sequential default path is
tested in ``test_default_path.py``). Expected values come from closed forms (DKW,
Gaussian CDFs) or exact quadrature, never from the code's own output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpgp_audit.audit.blackbox.fixed import audit_blackbox
from dpgp_audit.audit.blackbox.scores import fit_atoms, fit_quadratic
from dpgp_audit.audit.model_check import (
    check_model,
    detectable_effects,
    dkw_critical,
    kolmogorov_distance,
)
from dpgp_audit.audit.neighbours import is_neighbour, neighbour_pairs, query_edge_pairs
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.bugs import blindspots as pb
from dpgp_audit.bugs import zoo
from dpgp_audit.bugs.mutants import build_form, mutants
from dpgp_audit.catalogue import get
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.experiments.mutation import run_mutation
from dpgp_audit.privacy.claims import Neighbour, PureDP, all_answers, outputs_only

BLINDSPOT_BUGS = [b for b in zoo.planted() if b.bug_class]
BUGS = [(b.id, (b.caught_by, b.n, b.audit_kwargs)) for b in BLINDSPOT_BUGS]


def _default_path(mech_id: str, n: int, seed: int = 0, **kw):
    mech, data = get(mech_id).make()
    # default auditors, pairs and scores at exactly the stated n per side (fixed mode);
    # the sequential default path is tested in test_default_path.py
    return audit_mechanism(mech, data, np.random.default_rng(seed), n=max(n, 2), name=mech_id,
                           **{"mode": "fixed", **kw})


# ----------------------------------------------------------------------------- planted bugs
@pytest.mark.parametrize(("mech_id", "row"), BUGS, ids=[b[0] for b in BUGS])
def test_blindspot_bug_caught_on_default_path(mech_id, row):
    auditor, n, kw = row
    report = _default_path(mech_id, n, **kw)
    res = report.result(auditor)
    assert res is not None, report.skipped
    assert res.verdict is Verdict.VIOLATION, report.table()
    assert report.witness is not None or auditor == "model-check"
    entry = get(mech_id)
    if auditor in ("whitebox", "blackbox") and res.quantity == "epsilon":
        assert res.estimate <= entry.true_epsilon * (1 + 1e-6)


@pytest.mark.parametrize(("mech_id", "row"), BUGS, ids=[b[0] for b in BUGS])
def test_blindspot_twin_not_flagged_at_the_same_n(mech_id, row):
    _, n, kw = row
    twin = get(mech_id).twin
    report = _default_path(twin, n, seed=1, **kw)
    assert report.verdict is not Verdict.VIOLATION, report.table()


def test_blindspot_rows_are_complete():
    assert len(BLINDSPOT_BUGS) >= 6
    classes = {b.bug_class for b in BLINDSPOT_BUGS}
    assert len(classes) >= 5
    for b in BLINDSPOT_BUGS:
        assert get(b.id).twin == b.twin


# ----------------------------------------------------------------------------- model check
def test_dkw_critical_value_closed_form():
    # Massart: P(D > c) <= 2 exp(-2 n c^2); at c the bound equals a exactly
    n, a = 4000, 0.01
    c = dkw_critical(n, a)
    assert 2 * math.exp(-2 * n * c * c) == pytest.approx(a)


def test_kolmogorov_distance_matches_scipy(rng):
    x = rng.standard_normal(500)
    assert kolmogorov_distance(x, stats.norm.cdf) == pytest.approx(
        stats.kstest(x, "norm").statistic, abs=1e-12)


def test_detectable_effects_invert_the_normal_ks_distances():
    eff = detectable_effects(4000, 0.001)
    r = eff["sd_ratio_above"]
    t = math.sqrt(2 * math.log(r) * r * r / (r * r - 1))
    assert abs(stats.norm.cdf(t) - stats.norm.cdf(t / r)) == pytest.approx(eff["distance"])
    grid = np.linspace(-6, 6, 200_001)  # the closed-form sup is the numerical sup
    assert np.max(np.abs(stats.norm.cdf(grid) - stats.norm.cdf(grid / r))) == pytest.approx(
        eff["distance"], rel=1e-6)
    m = eff["mean_shift"]
    assert 2 * stats.norm.cdf(m / 2) - 1 == pytest.approx(eff["distance"])
    assert 1 < r < 1.3 and 0.7 < eff["sd_ratio_below"] < 1 and 0 < m < 0.3


def test_model_check_quiet_on_correct_and_loud_on_shared_noise(rng):
    data = default_dataset()
    ok = check_model(pb.BinSums(1.0, 1e-5), data, rng, n=4000, alpha=0.01)
    assert ok.verdict is Verdict.NO_EVIDENCE, ok.details["rejected"]
    bad = check_model(pb.BinSums(1.0, 1e-5, shared=True), data, rng, n=4000, alpha=0.01)
    assert bad.verdict is Verdict.VIOLATION
    assert any("sum of outputs" in r or "chi2" in r for r in bad.details["rejected"])
    assert bad.details["power"]["sd_ratio_above"] > 1


def test_model_check_false_alarm_rate_binomial():
    """Size of the DKW family: 200 checks of a correct model at alpha = 0.1, false alarms
    binomial-tested (the DKW bound is conservative, so the rate is far below alpha)."""
    mech, data = pb.BinSums(1.0, 1e-5), default_dataset()
    alarms = sum(check_model(mech, data, np.random.default_rng(s), n=500, alpha=0.1).violation
                 for s in np.random.SeedSequence(15).spawn(200))
    assert stats.binomtest(alarms, 200, 0.1, alternative="greater").pvalue >= 1e-3


# ----------------------------------------------------------------------------- scores
def test_atoms_are_the_repeated_outputs(rng):
    x0 = rng.standard_normal((1000, 1))
    x1 = rng.standard_normal((1000, 1))
    assert fit_atoms(x0, x1) is None  # continuous: no value repeats
    x0[:30] = 5.0
    score = fit_atoms(x0, x1)
    assert score is not None and score.keys.tolist() == [5.0]
    # log((0 + 1/2) / (30 + 1/2)): an event likelier under D
    assert score(np.array([[5.0]]))[0] == pytest.approx(math.log(0.5 / 30.5))
    assert score(np.array([[0.1]]))[0] == 0.0


def test_quadratic_score_sees_a_variance_change(rng):
    x0 = rng.standard_normal((20_000, 1))
    x1 = 3.0 * rng.standard_normal((20_000, 1))
    q = fit_quadratic(x0, x1)
    # population log-likelihood ratio up to a constant: x^2/2 (1 - 1/9)
    t = np.array([[0.0], [2.0]])
    assert q(t)[1] - q(t)[0] == pytest.approx(2.0 * (1 - 1 / 9), rel=0.05)


def test_score_rule_is_printed_and_kde_for_non_gaussian_scalars(rng):
    spec = next(s for s in mutants(default_dataset()) if s.name == "control-laplace-1d")
    mech = build_form(spec, "sample")
    data = default_dataset()
    res = audit_blackbox(mech, data, data.with_target(0, data.y[0] + 1), n=20_000, rng=rng)
    assert "kde" in " ".join(res.details["candidates"])
    assert res.details["candidate_rule"]
    assert "Bonferroni" in res.details["bonferroni"]


def test_classifier_for_non_gaussian_vectors(rng):
    spec = next(s for s in mutants(default_dataset()) if s.name == "laplace-l2")
    mech = build_form(spec, "sample")
    data = spec.data
    res = audit_blackbox(mech, data, data.with_target(0, data.y[0] + 1), n=20_000, rng=rng)
    assert any(c.startswith("classifier") for c in res.details["candidates"])


def test_new_scores_keep_the_false_alarm_rate():
    """Soundness with the extra candidate scores (atoms, quadratic, kde) at the true claim:
    a Laplace mechanism whose atoms come from rounding (post-processing). 150 audits at
    alpha = 0.1; the binomial test rejects only at p < 0.001."""
    eps = 1.0
    rel = outputs_only(1.0)

    class RoundedLaplace:
        claim = PureDP(epsilon=eps, relation=rel)

        def sample(self, data, n, rng):
            x = float(data.y.sum()) + rng.laplace(0.0, 1.0 / eps, size=(n, 1))
            return np.where(np.abs(x) > 2.5, np.round(x), x)

    d0 = Dataset(np.zeros((1, 1)), np.zeros(1))
    d1 = d0.with_target(0, 1.0)
    runs, alpha = 150, 0.1
    alarms = 0
    for s in np.random.SeedSequence(1515).spawn(runs):
        r = audit_blackbox(RoundedLaplace(), d0, d1, n=3000, rng=np.random.default_rng(s),
                           alpha=alpha)
        alarms += r.violation
    assert stats.binomtest(alarms, runs, alpha, alternative="greater").pvalue >= 1e-3


# ----------------------------------------------------------------------------- neighbours
def test_all_answers_relation_and_patterns(rng):
    rel = all_answers(1.0)
    assert rel.kind is Neighbour.ANSWERS
    assert "every query answer" in rel.describe()
    data = pb.answers_data(10)
    pairs = neighbour_pairs(data, rel, rng)
    labels = " ".join(p.label for p in pairs)
    for pattern in ("all up", "half up, half down", "one up, rest down", "one down, rest up"):
        assert pattern in labels
    for p in pairs:
        assert is_neighbour(p.d0, p.d1, rel)
        moved = np.abs(p.d1.y - p.d0.y)
        assert moved.max() <= 1.0 + 1e-12
    # many answers move at once, in opposite directions
    assert any(np.any(p.d1.y > p.d0.y) and np.any(p.d1.y < p.d0.y) for p in pairs)
    far = Dataset(data.X, data.y + 1.5)
    assert not is_neighbour(data, far, rel)


def test_domain_end_pairs_push_the_spread_to_zero(rng):
    data = default_dataset()
    pairs = neighbour_pairs(data, outputs_only(1.0), rng)
    ends = [p for p in pairs if p.label.startswith("domain end")]
    assert ends and all(np.std(p.d0.y) == 0 for p in ends)
    for p in ends:
        assert is_neighbour(p.d0, p.d1, outputs_only(1.0))


def test_query_edge_scan_finds_the_bin_edge():
    mech = pb.HistogramRelease(1.0, 1e-5, closed=True)
    data = default_dataset()
    pairs = query_edge_pairs(mech, data, mech.claim.relation, [0, 1])
    assert pairs
    best = pairs[0]
    change = np.linalg.norm(mech.query(best.d1) - mech.query(best.d0))
    assert change == pytest.approx(2.0)  # four counts move: both values on interior edges
    assert is_neighbour(best.d0, best.d1, mech.claim.relation)
    correct = pb.HistogramRelease(1.0, 1e-5, closed=False)
    top = query_edge_pairs(correct, data, correct.claim.relation, [0, 1])[0]
    assert np.linalg.norm(correct.query(top.d1) - correct.query(top.d0)) <= math.sqrt(2) + 1e-12


def test_report_says_whitebox_is_exact_only_over_its_pairs():
    report = _default_path("A.5/histogram", 2_000)
    wb = report.result("whitebox")
    assert "only over the" in wb.details["scope"]


def test_exact_vector_losses_match_closed_forms():
    # noisy max with Lap(2/eps): the realised loss never exceeds eps on the patterns;
    # with Lap(1/eps) the one-down-rest-up pattern reaches 2 eps (ratio of e^{2}).
    data = pb.answers_data(10)
    pairs = [p for p in neighbour_pairs(data, all_answers(1.0), np.random.default_rng(0))]
    assert pb.pattern_epsilon(pb.NoisyMax(1.0), pairs) <= 1.0 + 1e-6
    assert pb.pattern_epsilon(pb.NoisyMax(1.0, scale_factor=1.0), pairs) == pytest.approx(
        2.0, abs=1e-3)
    assert pb.pattern_epsilon(pb.SparseVector(1.0, "alg5"), pairs) == math.inf
    # the histogram bug: mu = 2/sigma(sqrt 2) -> the stated 1.465 (AUDITING.md §4.2)
    assert pb.histogram_edge_true_epsilon() == pytest.approx(1.465, abs=2e-3)


# ----------------------------------------------------------------------------- mutation
FAST = ["shared-noise", "std-as-variance", "noise-before-clipping", "data-dependent-clip",
        "control-clipped-output", "control-correlated-noise"]


def test_mutation_fast_subset_every_form():
    specs = [s for s in mutants(default_dataset()) if s.name in FAST]
    rows = run_mutation(specs, np.random.default_rng(2026), n=200_000, mode="fixed")
    wrong = [(r.name, r.form, r.verdict) for r in rows if not r.correct]
    assert not wrong


def test_mutants_forms_expose_the_right_interfaces():
    from dpgp_audit.contract import GaussianRelease, SensitivityQuery

    for spec in mutants(default_dataset()):
        s, m = build_form(spec, "sample"), build_form(spec, "model")
        assert not isinstance(s, GaussianRelease) and not isinstance(s, SensitivityQuery)
        assert isinstance(m, GaussianRelease) or isinstance(m, SensitivityQuery)
    assert len([s for s in mutants(default_dataset()) if not s.private]) >= 15
    assert len([s for s in mutants(default_dataset()) if s.private]) >= 4


def test_registered_true_epsilons_match_exact_quadrature():
    data = pb.answers_data()
    pairs = neighbour_pairs(data, all_answers(1.0), np.random.default_rng(0))
    svt6 = pb.pattern_epsilon(pb.SparseVector(1.0, "alg6"), pairs)
    assert svt6 == pytest.approx(pb.SVT_NO_CUTOFF_EPSILON, abs=1e-3)
    assert svt6 <= 10 * 1.0 / 2  # the k eps / 2 upper bound
    assert get("planted/svt-no-cutoff").true_epsilon == pb.SVT_NO_CUTOFF_EPSILON


def test_repeat_call_test_catches_a_generator_seeded_from_the_data(rng):
    spec = next(s for s in mutants(default_dataset()) if s.name == "seed-from-data")
    mech = build_form(spec, "sample")
    data = spec.data
    res = audit_blackbox(mech, data, data.with_target(0, data.y[0] + 1), n=2_000, rng=rng)
    assert res.verdict is Verdict.VIOLATION
    assert any(t["score"].startswith("repeat calls") for t in res.details["tests"])
    # an honest sampler never triggers it
    ok = build_form(next(s for s in mutants(default_dataset()) if s.name == "wrong-scale"),
                    "sample")
    res = audit_blackbox(ok, data, data.with_target(0, data.y[0] + 1), n=2_000, rng=rng)
    assert not any(t["score"].startswith("repeat calls") for t in res.details["tests"])


def test_auditing_lab_blindspot_suite_runs_the_default_path():
    from dpgp_audit.experiments.auditing_lab import audit_blindspot_suite

    rows = audit_blindspot_suite(np.random.default_rng(3), n_scale=0.02)
    assert {r["id"] for r in rows} == {b.id for b in BLINDSPOT_BUGS}
    assert all(r["twin_verdict"] != "VIOLATION" for r in rows)
    assert sum(r["verdict"] == "VIOLATION" for r in rows) >= 5


def test_explained_mutation_miss_is_measured():
    """bench_mutation.EXPLAINED: the misstated utility range has realised loss <= 1.32
    on every generated pair (exact, from its log-probabilities)."""
    spec = next(s for s in mutants(default_dataset()) if s.name == "misstated-utility-range")
    pairs = neighbour_pairs(spec.data, spec.claim.relation, np.random.default_rng(0))
    lp = spec.model["logp"]
    worst = max(float(np.max(np.abs(lp(p.d0) - lp(p.d1)))) for p in pairs)
    assert 1.0 < worst <= 1.33


def test_model_ties_do_not_hide_a_pair_the_pilot_ranks_higher():
    """Every ±d pair ties in the model's μ; the sampler misbehaves on one of them only."""
    from dpgp_audit.audit.neighbours import rank_pairs
    from dpgp_audit.privacy.claims import ApproxDP

    class Sum:
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))

        def mean(self, data):
            return np.array([data.y.sum()])

        def cov(self, data):
            return np.eye(1)

        def sample(self, data, n, rng):
            shift = 25.0 if data.y[7] > 1.5 else 0.0  # the hidden bug on one pair
            return data.y.sum() + shift + rng.standard_normal((n, 1))

    data = Dataset(np.arange(8.0)[:, None], np.r_[np.zeros(7), 0.9])
    pairs = neighbour_pairs(data, outputs_only(1.0), np.random.default_rng(1))
    target = [p for p in pairs if p.d1.y[7] > 1.5 or p.d0.y[7] > 1.5]
    assert target
    top = rank_pairs(Sum(), pairs, np.random.default_rng(2), top=2, pilot_n=50)
    assert any(p.d1.y[7] > 1.5 or p.d0.y[7] > 1.5 for p, _ in top)


def test_sample_only_boundary_pairs_from_the_data_values(rng):
    data = default_dataset()
    labels = " ".join(p.label for p in neighbour_pairs(data, outputs_only(1.0), rng))
    for what in ("tie with another target", "quantile", "round value"):
        assert what in labels
    from dpgp_audit.privacy.claims import whole_rows

    labels = " ".join(p.label for p in neighbour_pairs(data, whole_rows(1.0), rng))
    for what in ("round values 0.5 -> -0.5", "corner", "quantile"):
        assert what in labels


def test_candidate_scores_are_executor_independent_and_picklable():
    import pickle
    from concurrent.futures import ThreadPoolExecutor

    mech = pb.NoiseSkippedSum(1.0, 1e-5, p_skip=0.01)
    data = default_dataset()
    d1 = data.with_target(0, data.y[0] + 1)
    a = audit_blackbox(mech, data, d1, n=20_000, rng=np.random.default_rng(5))
    with ThreadPoolExecutor(max_workers=2) as ex:
        b = audit_blackbox(mech, data, d1, n=20_000, rng=np.random.default_rng(5), executor=ex)
    assert a.estimate == b.estimate and a.details["tests"] == b.details["tests"]
    assert any(t["score"].startswith("atoms") for t in a.details["tests"])
    assert a.verdict is Verdict.VIOLATION  # an atom of 1000 delta at 20 000 per side
    from dpgp_audit.audit.blackbox.scores import fit_classifier, fit_kde

    X0 = np.random.default_rng(0).laplace(size=(500, 2))
    X1 = X0 + 1
    from dpgp_audit.audit.blackbox.scores import fit_lda

    for sc in (fit_classifier(X0, X1, np.random.default_rng(1)),
               fit_kde(fit_lda(X0, X1), X0, X1)):
        assert sc is not None
        back = pickle.loads(pickle.dumps(sc))  # dask workers receive the score pickled
        np.testing.assert_array_equal(back(X0[:50]), sc(X0[:50]))
