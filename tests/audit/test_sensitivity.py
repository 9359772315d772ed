"""A.4: the sensitivity checker (closed form, extremes, random, DE, L-BFGS-B, hypothesis)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, target

from dpgp_audit.audit.result import AuditReport, Guarantee, Verdict
from dpgp_audit.audit.sensitivity import check_sensitivity, witness_pair
from dpgp_audit.audit.strategies import neighbouring_datasets
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.methods.toolbox.primitives import GaussianSumMechanism
from dpgp_audit.norms import L1, L2, Linf, Mahalanobis
from dpgp_audit.privacy.claims import ApproxDP, PureDP, outputs_only, whole_rows


@dataclass(frozen=True, eq=False)
class LinearQuery:
    """q(D) = W y with a stated bound (test double)."""

    W: np.ndarray
    norm: object
    bound: float
    d: float = 1.0

    @property
    def claim(self):
        return ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(self.d))

    def sensitivity_bound(self):
        return self.bound

    def query(self, data):
        return self.W @ data.y


@dataclass(frozen=True, eq=False)
class KernelFeature:
    """Whole rows: q(D) = Σ_i y_i k(z, x_i) at one point z = 0 (data lie far from z)."""

    bound: float
    norm: object = L2()

    @property
    def claim(self):
        return ApproxDP(epsilon=1.0, delta=1e-5, relation=whole_rows(1.0))

    def sensitivity_bound(self):
        return self.bound

    def query(self, data):
        return np.array([np.sum(data.y * np.exp(-0.5 * data.X[:, 0] ** 2))])


def _naive_column_max(W, norm, d):
    """Oracle: loop over rows, move each target by d, measure the change."""
    best = 0.0
    for i in range(W.shape[1]):
        e = np.zeros(W.shape[1])
        e[i] = d
        best = max(best, norm(W @ (np.ones(W.shape[1]) + e) - W @ np.ones(W.shape[1])))
    return best


@pytest.mark.parametrize("norm_kind", ["L2", "L1", "Mahalanobis"])
def test_A4_closed_form_matches_naive_loop(norm_kind, rng):
    W = rng.standard_normal((4, 9))
    A = rng.standard_normal((4, 4))
    norm = {"L2": L2(), "L1": L1(), "Mahalanobis": Mahalanobis(A @ A.T + np.eye(4))}[norm_kind]
    data = Dataset(rng.uniform(0, 1, 9), rng.uniform(-1, 1, 9))
    exact = _naive_column_max(W, norm, 0.3)
    ok = check_sensitivity(LinearQuery(W, norm, exact, d=0.3), data, rng)
    assert ok.verdict is Verdict.NO_EVIDENCE
    assert ok.guarantee is Guarantee.SEARCH_LOWER_BOUND
    assert ok.details["closed_form"] == pytest.approx(exact, rel=1e-9)
    assert ok.estimate == pytest.approx(exact, rel=1e-9)
    bad = check_sensitivity(LinearQuery(W, norm, exact * 0.999, d=0.3), data, rng)
    assert bad.verdict is Verdict.VIOLATION and bad.guarantee is Guarantee.COUNTEREXAMPLE
    # the witness is a genuine counterexample, recomputed independently
    w = witness_pair(bad)
    assert np.sum(w.d0.y != w.d1.y) == 1 and np.max(np.abs(w.d0.y - w.d1.y)) <= 0.3 + 1e-12
    assert norm(W @ w.d1.y - W @ w.d0.y) > exact * 0.999


def test_A4_local_and_global_are_reported_separately(rng):
    mech = GaussianSumMechanism(d=1.0, epsilon=1.0, delta=1e-5)
    res = check_sensitivity(mech, default_dataset(), rng)
    assert res.verdict is Verdict.NO_EVIDENCE
    assert res.estimate == pytest.approx(1.0, rel=1e-12)
    assert res.details["local_sensitivity"] == pytest.approx(1.0, rel=1e-12)
    assert res.details["global_searched"] == pytest.approx(1.0, rel=1e-12)
    assert res.auditor == "sensitivity" and res.quantity == "sensitivity"


def test_A4_optimiser_finds_what_the_extremes_miss(rng):
    # Data far from z = 0: every extreme replacement (far x, duplicate x, y flips) changes
    # q by ~0; moving one record to x ≈ 0 with y = ±1 changes it by ~1. Claimed 0.5 is false.
    X = np.linspace(6.0, 10.0, 8)
    data = Dataset(X, np.zeros(8))
    res = check_sensitivity(KernelFeature(bound=0.5), data, rng, budget=400)
    assert res.details["per_strategy"]["extremes"] < 0.5
    assert res.verdict is Verdict.VIOLATION
    assert res.estimate > 0.9  # true sup is 2 (y_i: -1 -> +1 at x = 0); the search climbs
    w = witness_pair(res)
    change = abs(KernelFeature(0.5).query(w.d1)[0] - KernelFeature(0.5).query(w.d0)[0])
    assert change == pytest.approx(res.estimate, rel=1e-12)
    # the correct bound (|Δ(y k)| <= 2b) passes
    ok = check_sensitivity(KernelFeature(bound=2.0), data, rng, budget=200)
    assert ok.verdict is Verdict.NO_EVIDENCE and ok.estimate <= 2.0


def test_A4_a_gram_matrix_on_a_fine_grid_is_no_counterexample(rng):
    # R.2 on a user's two input columns in [0, 1]: 441 grid points half a lengthscale
    # apart, so the noise covariance has eigenvalues down to rounding. The range check of
    # the proof's Mahalanobis norm read that as an unprotected change (a "definitive"
    # infinite sensitivity); the exact norm is at most the RKHS bound (R Lemma A.2), and
    # the white-box auditor's exact μ for the same pairs agrees
    from dpgp_audit.catalogue import get

    X = np.random.default_rng(0).random((30, 2))
    mech, data = get("R.2/dpsetconv").make(Dataset(X, 0.9 * np.sin(6 * X[:, 0])))
    corner = data.with_row(0, np.zeros(2), -1.0)  # row 0 to the window's corner
    change = mech.query(corner) - mech.query(data)
    assert math.isinf(mech.norm(change))  # the premise: the range check calls it a leak
    assert mech.norm.lower_bound(change) <= mech.sensitivity_bound()
    res = check_sensitivity(mech, data, rng, budget=150)
    assert res.verdict is Verdict.NO_EVIDENCE and res.estimate <= mech.sensitivity_bound()
    assert res.estimate > 0.5 * mech.worst_case_mu()  # the search still finds a large change


def test_A4_infinite_mahalanobis_is_a_counterexample(rng):
    M = np.diag([1.0, 0.0])  # noise never moves coordinate 2
    W = np.array([[1.0, 0.0], [0.0, 1.0]])
    res = check_sensitivity(LinearQuery(W, Mahalanobis(M), 1.0), Dataset(np.arange(2.0),
                                                                          np.zeros(2)), rng)
    assert res.verdict is Verdict.VIOLATION and math.isinf(res.estimate)
    assert res.as_dict()["estimate"] == "inf"


def test_A4_rejects_mechanisms_without_the_interface(rng):
    class NoQuery:
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))

    with pytest.raises(TypeError, match="SensitivityQuery"):
        check_sensitivity(NoQuery(), default_dataset(), rng)


def test_A4_datasets_outside_the_domain_are_skipped_not_fatal(rng):
    mech = GaussianSumMechanism(d=1.0, epsilon=1.0, delta=1e-5, y_bound=1.0)
    res = check_sensitivity(mech, default_dataset(), rng)
    assert res.details["rejected_datasets"] > 0
    assert res.verdict is Verdict.NO_EVIDENCE and res.estimate <= 1.0 + 1e-12
    res_b = check_sensitivity(mech, default_dataset(), rng, y_bound=1.0)
    assert res_b.details["rejected_datasets"] == 0


_SUM = GaussianSumMechanism(d=1.0, epsilon=1.0, delta=1e-5)


@given(neighbouring_datasets(outputs_only(1.0), n=(1, 8)))
def test_A4_property_sum_bound_holds_with_target(pair):
    change = _SUM.norm(_SUM.query(pair.d1) - _SUM.query(pair.d0))
    target(change, label="query change")
    assert change <= _SUM.sensitivity_bound() * (1 + 1e-9)


# --------------------------------------------------------------------------- issue 20 §4
@dataclass(frozen=True, eq=False)
class NonNegativeMean:
    """Outputs only: the mean of the targets >= 0 (0 when there are none), with the bound
    d/(n/4) of "at least a quarter of the targets are non-negative" (test double).

    On the default data (13 of 20 targets non-negative) one target's move changes the
    release by at most about d/12; with every *other* target at −d, the moved one alone
    forms the group and carries its mean from 0 to d.
    """

    n_rows: int = 20
    norm: object = L2()

    @property
    def claim(self):
        return ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))

    def sensitivity_bound(self):
        return 1.0 / (self.n_rows / 4)

    def query(self, data):
        y = data.y[data.y >= 0]
        return np.array([float(np.mean(y)) if y.size else 0.0])


def test_A4_structural_bases_find_what_one_row_moves_miss(rng):
    mech = NonNegativeMean()
    data = default_dataset()
    res = check_sensitivity(mech, data, rng)
    assert res.verdict is Verdict.VIOLATION and res.guarantee is Guarantee.COUNTEREXAMPLE
    assert res.details["per_strategy"]["structural bases"] == pytest.approx(1.0)
    w = witness_pair(res)
    # definitive: the witness is a real pair of neighbours, and its change exceeds the bound
    from dpgp_audit.audit.neighbours import is_neighbour

    assert is_neighbour(w.d0, w.d1, outputs_only(1.0))
    assert abs(mech.query(w.d1)[0] - mech.query(w.d0)[0]) > mech.sensitivity_bound()
    # every one-row move from the user's D (the search before issue 20 §4) stays inside
    assert res.details["local_sensitivity"] <= mech.sensitivity_bound()


@dataclass(frozen=True, eq=False)
class ClippedSum:
    """Whole rows: clip(Σy, −1, 1) with the half-swing bound b = 1 (test double)."""

    norm: object = L2()

    @property
    def claim(self):
        return ApproxDP(epsilon=1.0, delta=1e-5, relation=whole_rows(1.0))

    def sensitivity_bound(self):
        return 1.0

    def query(self, data):
        if data.n != 20:
            raise ValueError("built for the public size n = 20")
        return np.array([float(np.clip(np.sum(data.y), -1.0, 1.0))])


def test_A4_full_swing_over_cancelling_rows_is_searched(rng):
    """Σ sin(x) ≈ 3.1 saturates the clip on D; only the full swing over cancelling rows
    moves the release by 2b."""
    res = check_sensitivity(ClippedSum(), default_dataset(), rng)
    assert res.verdict is Verdict.VIOLATION
    assert res.estimate == pytest.approx(2.0)
    assert res.details["local_sensitivity"] <= 1.0


@dataclass(frozen=True, eq=False)
class ClassWeightedSums:
    """q(D) = (Σ_{y_i = c} x_i)_c over labels {0, 1, 2}; refuses any other target."""

    bound: float
    d: float = 2.0
    norm: object = L2()

    @property
    def claim(self):
        from dpgp_audit.privacy.domain import PublicDomain

        return ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(self.d),
                        domain=PublicDomain(2.0, labels=(0.0, 1.0, 2.0)))

    def sensitivity_bound(self):
        return self.bound

    def query(self, data):
        y = np.asarray(data.y)
        if not np.all(np.isin(y, (0.0, 1.0, 2.0))):
            raise ValueError("labels are 0, 1, 2")
        return np.array([float(np.sum(data.X[y == c, 0])) for c in (0.0, 1.0, 2.0)])


@pytest.mark.parametrize("d", [1.0, 2.0])
def test_declared_labels_make_the_local_search_exact_and_refuse_nothing(d):
    x = np.array([0.3, -1.2, 2.5, 0.7, -0.1, 1.9])
    data = Dataset(x, np.array([0.0, 1.0, 2.0, 2.0, 1.0, 0.0]))
    mech = ClassWeightedSums(bound=1.0, d=d)
    # brute-force oracle: every row to every other label within d, L2 of the change
    brute = 0.0
    for i in range(x.size):
        for v in (0.0, 1.0, 2.0):
            if v != data.y[i] and abs(v - data.y[i]) <= d:
                moved = data.y.copy()
                moved[i] = v
                q0 = [x[data.y == c].sum() for c in (0.0, 1.0, 2.0)]
                q1 = [x[moved == c].sum() for c in (0.0, 1.0, 2.0)]
                brute = max(brute, float(np.linalg.norm(np.subtract(q1, q0))))
    assert brute == pytest.approx(math.sqrt(2) * 2.5)  # row 2 (x = 2.5) changes class
    res = check_sensitivity(mech, data, np.random.default_rng(0), labels=(0.0, 1.0, 2.0))
    assert res.details["rejected_datasets"] == 0  # every dataset searched is on the labels
    assert res.details["local_sensitivity"] == pytest.approx(brute, rel=1e-12)
    assert res.verdict is Verdict.VIOLATION and res.guarantee is Guarantee.COUNTEREXAMPLE
    w = witness_pair(res)
    assert set(np.unique(w.d0.y)) | set(np.unique(w.d1.y)) <= {0.0, 1.0, 2.0}
    # without the labels the search wastes its queries on targets the query refuses
    blind = check_sensitivity(mech, data, np.random.default_rng(0))
    assert blind.details["rejected_datasets"] > 0


@dataclass(frozen=True, eq=False)
class ClaimedLinearQuery(LinearQuery):
    """:class:`LinearQuery` under a claim given by the test."""

    level: object = None

    @property
    def claim(self):
        return self.level


@pytest.mark.parametrize("declared, level, expected", [
    (L2(), PureDP(epsilon=1.0, relation=outputs_only(1.0)), ("L1", 4.0)),
    (Linf(), PureDP(epsilon=1.0, relation=outputs_only(1.0)), None),  # a utility's bound
    (Linf(), ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0)), ("L2", 1.0)),
    (L2(), ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0)), None),
    (L1(), PureDP(epsilon=1.0, relation=outputs_only(1.0)), None),
])
def test_A4_a_bound_in_a_smaller_norm_than_the_noise_needs_is_named(declared, level,
                                                                     expected, rng):
    # Every record adds y_i / 4 to each of 16 coordinates; one target moves by 1, so the
    # change is 1/4 in Linf, 1 in L2 and 4 in L1 (the norms' definitions). The bound is
    # true in the declared norm, so the verdict stays NO_EVIDENCE; the line says what
    # i.i.d. noise of the claim's kind would need (Dwork & Roth, Thms 3.6 and 3.22).
    W = np.full((16, 12), 0.25)
    data = Dataset(np.linspace(0, 1, 12), np.zeros(12))
    bound = declared(W[:, 0])
    res = check_sensitivity(ClaimedLinearQuery(W, declared, bound, level=level), data, rng)
    assert res.verdict is Verdict.NO_EVIDENCE
    assert res.estimate == pytest.approx(bound, rel=1e-12)
    note = res.details.get("noise_norm")
    table = AuditReport(mechanism="M", claim={}, inputs={}, results=(res,)).table()
    if expected is None:
        assert note is None
        assert "K-norm" not in table
    else:
        assert note["norm"] == expected[0]
        assert note["largest"] == pytest.approx(expected[1], rel=1e-12)
        assert note["ratio"] == pytest.approx(expected[1] / bound, rel=1e-12)
        assert f"in {expected[0]}, the norm" in table and "K-norm" in table


def test_A4_a_scalar_query_over_its_bound_names_no_noise_norm(rng):
    # One output: L1, L2 and Linf of a change agree, so an L2 bound under a pure claim
    # that is exceeded is the declared norm's violation alone (a hunt's confusing line).
    W = np.full((1, 12), 0.25)
    data = Dataset(np.linspace(0, 1, 12), np.zeros(12))
    level = PureDP(epsilon=1.0, relation=outputs_only(1.0))
    res = check_sensitivity(ClaimedLinearQuery(W, L2(), 0.125, level=level), data, rng)
    assert res.verdict is Verdict.VIOLATION
    assert res.estimate == pytest.approx(0.25, rel=1e-12)  # one target moved by 1, / 4
    assert "noise_norm" not in res.details
    table = AuditReport(mechanism="M", claim={}, inputs={}, results=(res,)).table()
    assert "K-norm" not in table
    # the same bound on 16 coordinates: L1 reaches 4 against L2's 1, and it is named
    wide = check_sensitivity(ClaimedLinearQuery(np.full((16, 12), 0.25), L2(), 0.125,
                                                level=level), data, rng)
    assert wide.details["noise_norm"]["largest"] == pytest.approx(4.0, rel=1e-12)


def test_A4_a_selections_utility_bound_is_not_read_as_a_noise_norm(rng):
    # A DiscreteRelease (the exponential mechanism, noisy max) adds no noise to the query's
    # coordinates: its L-inf utility bound is named nowhere, whatever the claim.
    class Selection(ClaimedLinearQuery):
        def log_probabilities(self, data):
            return np.full(16, -math.log(16))

    W = np.full((16, 12), 0.25)
    data = Dataset(np.linspace(0, 1, 12), np.zeros(12))
    for level in (PureDP(epsilon=1.0, relation=outputs_only(1.0)),
                  ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))):
        res = check_sensitivity(Selection(W, Linf(), 0.25, level=level), data, rng)
        assert "noise_norm" not in res.details


@dataclass(frozen=True, eq=False)
class ChangePointSelection:
    """A change point chosen by the exponential mechanism (test double): the score of a split
    k is the absolute deviation of both segments from the overall mean, which is 2|A_k| for
    the CUSUM A_k = Σ_{t<k}(y_t − ȳ). The score sensitivity is taken as d ("a reading moves
    one segment"), but ȳ moves every term: the sup of |Δu(k)| is 2d(1 − 1/T), at k = 1 or
    T − 1 with every reading on one side."""

    declared: bool = True

    @property
    def claim(self):
        from dpgp_audit.privacy.domain import PublicDomain

        return PureDP(epsilon=1.0, relation=outputs_only(2.0), domain=PublicDomain(y_bound=1.0))

    def scores(self, data):
        c = self.claim.domain.targets(data.y) - np.mean(data.y)
        left = np.cumsum(c)[:-1]
        return np.abs(left) + np.abs(c.sum() - left)

    def sample(self, data, n, rng):
        u = self.scores(data)
        return (np.argmax(u / (2 * 2.0) + rng.gumbel(size=(n, u.size)), axis=1) + 1.0)[:, None]


@dataclass(frozen=True, eq=False)
class DeclaredChangePoint(ChangePointSelection):
    norm = Linf()

    def query(self, data):
        return self.scores(data)

    def sensitivity_bound(self):
        return 2.0


def test_A4_a_selection_declared_as_its_scores_is_searched_and_the_skip_says_how():
    """Without query the checker is skipped with a line saying what to declare; with the
    scores declared (L∞, the bound the proof used) it finds a pair beyond it, no further
    than the closed-form sup 2d(1 − 1/T)."""
    from dpgp_audit.audit.runner import audit_mechanism

    data = Dataset(np.arange(24.0)[:, None], np.sin(np.arange(24.0) / 3.0))
    plain = audit_mechanism(ChangePointSelection(), data, np.random.default_rng(1),
                            auditors=("sensitivity",))
    assert plain.result("sensitivity") is None
    assert "for a selection, such as an exponential mechanism or noisy max: the score " \
           "vector, norm = Linf()" in plain.skipped["sensitivity"]
    res = audit_mechanism(DeclaredChangePoint(), data, np.random.default_rng(1),
                          auditors=("sensitivity",)).result("sensitivity")
    assert res.verdict is Verdict.VIOLATION and res.guarantee is Guarantee.COUNTEREXAMPLE
    assert 2.0 < res.estimate <= 2 * 2.0 * (1 - 1 / 24) * (1 + 1e-12)
