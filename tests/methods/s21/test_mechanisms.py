"""S21.1–S21.5 mechanisms: contracts, audits at their claims, bounds as properties, planted bug."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpgp_audit import catalogue
from dpgp_audit.audit.blackbox.fixed import audit_blackbox
from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.sensitivity import check_sensitivity
from dpgp_audit.audit.whitebox import audit_whitebox
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.laplace import LaplaceClassifier
from dpgp_audit.gp.sparse import SparseGP
from dpgp_audit.methods.s18.cloaking import CloakingGP
from dpgp_audit.methods.s21.cv_utility import (
    cv_sse,
    kfold_test_sets,
    polynomial_cloaking_matrix,
    prepare_folds,
)
from dpgp_audit.methods.s21.mechanisms import (
    LaplaceCloakingClassifier,
    SoRCloakingClassifier,
    TwoStepLaplaceClassifier,
    default_classification_data,
    default_regression_data,
    nonstationary_cloaking,
    sparse_cloaking,
)
from dpgp_audit.methods.s21.private_selection import CVSelection, cloaking_noise_variance
from dpgp_audit.privacy.claims import Neighbour

GAUSSIAN_IDS = ["S21.1/nonstationary-cloaking", "S21.2/sparse-cloaking",
                "S21.3/laplace-classification", "S21.4/sor-classification"]


@pytest.fixture(scope="module")
def built():
    return {i: catalogue.get(i).make() for i in GAUSSIAN_IDS + ["S21.5/selection",
                                                              "planted/s21-unclipped-sse"]}


def _y_bound(mech):
    return 1.0 if mech.claim.relation.d == 2.0 else None


@pytest.mark.parametrize("mid", GAUSSIAN_IDS)
def test_s21_whitebox_audit_at_claim(built, mid, rng):
    mech, data = built[mid]
    assert mech.claim.relation.kind is Neighbour.OUTPUTS
    labels = _y_bound(mech) is not None  # ±1 labels: only flips are neighbours
    pairs = neighbour_pairs(data, mech.claim.relation, rng, y_bound=_y_bound(mech),
                            max_rows=data.n, n_random=0 if labels else 4)
    res = audit_whitebox(mech, pairs)
    assert res.verdict is not Verdict.VIOLATION, res.details
    # the worst pair is tight: cloaking spends the whole budget (up to the solver's gap)
    assert res.details["mu"] == pytest.approx(mech.sensitivity_bound() / mech.release.mechanism
                                              .sigma if hasattr(mech, "release") else
                                              mech.sensitivity_bound() / mech.mechanism.sigma,
                                              rel=1e-3)


@pytest.mark.parametrize("mid", GAUSSIAN_IDS)
def test_s21_sensitivity_checker_finds_no_violation(built, mid, rng):
    mech, data = built[mid]
    res = check_sensitivity(mech, data, rng, budget=60, de_rows=1, lbfgs_starts=1,
                            y_bound=_y_bound(mech))
    assert res.verdict is Verdict.NO_EVIDENCE
    assert res.estimate <= mech.sensitivity_bound() * (1 + 1e-9)
    assert res.estimate >= 0.95 * mech.sensitivity_bound()  # the bound is attained


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 14), sparse=st.booleans())
def test_s21_1_2_mahalanobis_bound_holds_on_random_neighbours(seed, n, sparse):
    g = np.random.default_rng(seed)
    X = np.sort(g.uniform(0, 10, n)) + np.arange(n) * 1e-3
    Xs = np.linspace(-1, 11, 7)
    d = float(g.uniform(0.1, 3))
    if sparse:
        mech = sparse_cloaking(X, Xs, EQ(g.uniform(0.5, 3)), 0.2, n_inducing=min(3, n),
                               rng=g, d=d, epsilon=1.0, delta=0.01)
    else:
        mech = nonstationary_cloaking(X, Xs, d=d, epsilon=1.0, delta=0.01, bandwidth=1.0,
                                      m=5.0, n_per=2.0, neighbourhood=g.uniform(0.2, 2))
    data = Dataset(X, g.normal(size=n))
    base = mech.query(data)
    for _ in range(8):
        j = int(g.integers(n))
        other = data.with_target(j, data.y[j] + g.uniform(-d, d))
        assert mech.norm(mech.query(other) - base) <= mech.sensitivity_bound() * (1 + 1e-8)


def test_s21_1_nonstationary_uses_public_inputs_only(rng):
    assert "y" not in inspect.signature(nonstationary_cloaking).parameters
    data = default_regression_data()
    mech = nonstationary_cloaking(data.X, np.linspace(0, 10, 5), d=1.0, epsilon=1.0,
                                  delta=0.01, bandwidth=0.7, m=4.0, n_per=2.0)
    with pytest.raises(ValueError, match="public inputs"):
        mech.sample(Dataset(data.X + 1.0, data.y), 1, rng)


def test_s21_2_sparse_C_is_fitc_eq9_and_placement_sees_no_targets(rng):
    data = default_regression_data()
    seen = {}

    def placement(X, m, g):
        seen["args"] = (X.shape, m)
        return np.linspace(0, 4, m)[:, None]

    Xs = np.linspace(0, 10, 9)
    mech = sparse_cloaking(data.X, Xs, EQ(1.5), 0.1, n_inducing=3, rng=rng, d=1.0,
                           epsilon=1.0, delta=0.01, placement=placement)
    assert seen["args"] == ((data.n, 1), 3)
    assert "y" not in inspect.signature(sparse_cloaking).parameters
    want = SparseGP(EQ(1.5), 0.1, np.linspace(0, 4, 3)).fit(data.X, data.y).mean_weights(Xs)
    np.testing.assert_allclose(mech.C, want, rtol=1e-10, atol=1e-12)


def test_s21_2_sparse_cloaking_needs_less_noise_beyond_the_outliers(rng):
    """S21 Fig. 3: the standard cloaking noise explodes next to outliers; FITC's does not."""
    x = np.concatenate([np.linspace(0.0, 4.0, 40), [6.5, 8.0, 9.5]])
    data = Dataset(x, np.sin(x))
    Xs = np.linspace(5.0, 10.0, 6)
    std = CloakingGP(EQ(1.5), 0.1, data.X, Xs, 1.0, 1.0, 0.01)
    sp = sparse_cloaking(data.X, Xs, EQ(1.5), 0.1, n_inducing=3, rng=rng, d=1.0,
                         epsilon=1.0, delta=0.01)
    sd_std = np.sqrt(np.diag(std.cov(data)))
    sd_sp = np.sqrt(np.diag(sp.cov(data)))
    assert np.mean(sd_sp) < 0.7 * np.mean(sd_std)


def test_s21_3_release_is_cloaked_newton_step_with_label_sensitivity(rng):
    data = default_classification_data()
    mech = LaplaceCloakingClassifier(EQ(3.5), data.X, 1.0, 0.01)
    assert mech.claim.relation.d == 2.0
    C = LaplaceClassifier(EQ(3.5), data.X).newton_map().C
    np.testing.assert_allclose(mech.query(data), C @ data.y, atol=1e-10)
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        mech.sample(Dataset(data.X, (data.y + 1) / 2), 1, rng)
    f = mech.sample(data, 1, rng)[0]
    p = mech.predict_proba(f, data.X)
    assert p.shape == (data.n,) and np.all((p >= 0) & (p <= 1))
    # a flipped label is a neighbour; the white-box audit of that pair stays within the claim
    flip = data.with_target(0, -data.y[0])
    assert audit_whitebox(mech, [(data, flip)]).verdict is not Verdict.VIOLATION


def test_s21_3_two_steps_split_the_budget(rng):
    data = default_classification_data(30)
    two = TwoStepLaplaceClassifier(EQ(3.5), data.X, 1.0, 0.01)
    assert two.claim.epsilon == pytest.approx(1.0) and two.claim.delta == pytest.approx(0.01)
    assert [b.epsilon for b in two.budgets] == pytest.approx([0.5, 0.5])
    out = two.sample(data, 3, rng)
    assert out.shape == (3, data.n) and np.all(np.isfinite(out))


def test_s21_4_sor_release_lives_in_inducing_space(rng):
    data = default_classification_data()
    mech = SoRCloakingClassifier(EQ(3.5), data.X, 5, rng, 1.0, 0.01)
    u = mech.sample(data, 2, rng)
    assert u.shape == (2, 5)
    np.testing.assert_allclose(mech.model.V.T @ mech.query(data),
                               mech.model.latent(mech.model.newton_step(None, data.y)), atol=1e-10)
    assert mech.predict_proba(u[0], data.X[:4]).shape == (4,)


# ----------------------------------------------------------------- S21.5 selection
def test_s21_5_toy_with_the_s18_solver_matches_closed_form():
    x, y = np.array([0.0, 1.0, 2.0, 4.0]), np.array([0.0, 0.5, 1.0, 2.0])
    noise = cloaking_noise_variance(2.0, 1.0, 0.01, "hall")
    sse = [cv_sse(prepare_folds(x, polynomial_cloaking_matrix(o), kfold_test_sets(4, 2), noise),
                  y, 2.0, clip=False) for o in (0, 1)]
    assert sse == pytest.approx([49.2615, 1589.495], rel=1e-4)


def test_s21_5_blackbox_audit_of_selection_at_claim(built, rng):
    mech, data = built["S21.5/selection"]
    # adversarial neighbour: the target whose move shifts the utilities most
    worst = max(((j, s) for j in range(data.n) for s in (-1.0, 1.0)),
                key=lambda js: np.max(np.abs(mech.log_probabilities(data) - mech.log_probabilities(
                    data.with_target(js[0], data.y[js[0]] + js[1])))))
    d1 = data.with_target(worst[0], data.y[worst[0]] + worst[1])
    res = audit_blackbox(mech, data, d1, n=20_000, rng=rng, score="categorical")
    assert res.verdict is not Verdict.VIOLATION
    chk = check_sensitivity(mech, data, rng, budget=40, de_rows=1, lbfgs_starts=1)
    assert chk.verdict is Verdict.NO_EVIDENCE


def test_s21_5_planted_unclipped_sse_is_flagged_by_blackbox(built, rng):
    mech, data = built["planted/s21-unclipped-sse"]
    assert catalogue.get("planted/s21-unclipped-sse").twin == "S21.5/selection"
    np.testing.assert_allclose(mech.probabilities(data), [0.5, 0.5], atol=1e-6)
    d1 = data.with_target(0, data.y[0] + 1.0)
    res = audit_blackbox(mech, data, d1, n=20_000, rng=rng, score="categorical")
    assert res.verdict is Verdict.VIOLATION
    assert res.estimate > 2.0  # certified ε lower bound far above the claimed 1
    # the correct twin on the same pair stays within its claim
    twin = CVSelection(data.X, mech.configs, 1.0, 1.0, folds=3)
    lp = twin.log_probabilities(data) - twin.log_probabilities(d1)
    assert np.max(np.abs(lp)) <= 1.0


def test_s21_5_paper_rules_fail_the_sensitivity_checker(rng):
    """Text (largest κ−1 folds) and algorithm (smallest) both undercount; 'valid' holds."""
    x = np.array([0.0, 1.0, 2.0, 4.0])
    configs = (("0th order", polynomial_cloaking_matrix(0)),
               ("1st order", polynomial_cloaking_matrix(1)))
    adversarial = Dataset(x, np.array([0.0, 0.0, -4.0, 0.0]))
    found = {}
    for rule in ("text", "algorithm", "valid"):
        mech = CVSelection(x, configs, 2.0, 1.0, folds=2, include_noise=False, rule=rule)
        res = check_sensitivity(mech, adversarial, rng, budget=40, de_rows=1, lbfgs_starts=1)
        found[rule] = (res.verdict, res.estimate, mech.sensitivity_bound())
    assert found["text"][0] is Verdict.VIOLATION and found["text"][2] == pytest.approx(116)
    assert found["algorithm"][0] is Verdict.VIOLATION and found["algorithm"][2] == pytest.approx(61)
    assert found["valid"][0] is Verdict.NO_EVIDENCE and found["valid"][2] == pytest.approx(140)
    assert found["valid"][1] == pytest.approx(140, rel=1e-6)  # the valid bound is tight


def test_s21_5_threshold_drops_configurations(built):
    mech, data = built["S21.5/selection"]
    lo = float(np.min(mech.sensitivities))
    kept = CVSelection(mech.X, mech.configs, 1.0, 1.0, folds=3, threshold=lo)
    assert kept.kept.size == 1 and kept.sensitivity_bound() == pytest.approx(lo)
    p = kept.probabilities(data)
    assert p.sum() == pytest.approx(1.0) and np.count_nonzero(p) == 1
    with pytest.raises(ValueError, match="threshold"):
        CVSelection(mech.X, mech.configs, 1.0, 1.0, folds=3, threshold=lo / 2)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4, 16), sor=st.booleans())
def test_s21_3_4_label_flip_bound_holds(seed, n, sor):
    g = np.random.default_rng(seed)
    X = g.uniform(0, 6, size=(n, 2))
    k = EQ(g.uniform(0.5, 4.0), variance=g.uniform(0.5, 3.0))
    mech = (SoRCloakingClassifier(k, X, min(3, n), g, 1.0, 0.01) if sor
            else LaplaceCloakingClassifier(k, X, 1.0, 0.01))
    data = Dataset(X, np.where(g.uniform(size=n) < 0.5, -1.0, 1.0))
    base = mech.query(data)
    for j in range(n):
        flipped = data.with_target(j, -data.y[j])
        assert mech.norm(mech.query(flipped) - base) <= mech.sensitivity_bound() * (1 + 1e-8)


@pytest.mark.parametrize("mid", ["S21.3/laplace-classification",
                                 "S21.3/laplace-classification-two-step",
                                 "S21.4/sor-classification"])
def test_s21_3_4_claims_declare_the_label_domain(mid):
    """The classifiers take labels in {-1, +1} only: the claim says so, so a refused
    non-label target is the domain's (and the audit's pairs stay labels)."""
    mech, data = catalogue.get(mid).make()
    assert mech.claim.domain.labels == (-1.0, 1.0)
    assert mech.claim.domain.targets(data.y).tolist() == data.y.tolist()
    with pytest.raises(ValueError):
        mech.claim.domain.targets(np.where(data.y > 0, 0.5, -1.0))
