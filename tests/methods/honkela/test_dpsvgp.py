"""H.1 mechanism: claim, calibration, whole-row sensitivity property, white-box privacy profile."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, target
from hypothesis import strategies as st

from dpgp_audit import catalogue
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.strategies import neighbouring_datasets
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.kernels import EQ, Matern32
from dpgp_audit.gp.svgp import titsias_qu
from dpgp_audit.methods.honkela.bounds import dpsvgp_sensitivity, upper_dim
from dpgp_audit.methods.honkela.dpsvgp import DPSVGPStats
from dpgp_audit.methods.honkela.posterior import noise_aware_qu
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
from dpgp_audit.privacy.claims import Neighbour
from dpgp_audit.privacy.gdp import gdp_delta


def _mech(**kw):
    base = dict(Z=np.linspace(-3, 3, 5)[:, None], kernel=EQ(lengthscale=1.0), y_bound=1.0,
                epsilon=1.0, delta=1e-5)
    base.update(kw)
    return DPSVGPStats(**base)


def _data(rng, n=30, ybound=1.0):
    X = rng.uniform(-4, 4, size=(n, 1))
    return Dataset(X, np.clip(np.sinc(X[:, 0]) + 0.1 * rng.normal(size=n), -ybound, ybound))


def test_claim_calibration_and_shapes(rng):
    mech = _mech(ratio=2.0)
    claim = mech.claim
    assert claim.relation.kind is Neighbour.ROWS and claim.relation.d == 1.0
    assert (claim.epsilon, claim.delta) == (1.0, 1e-5)
    assert math.isclose(mech.sigma_a, analytic_gaussian_sigma(1.0, 1e-5, mech.sensitivity),
                        rel_tol=1e-12)
    assert math.isclose(mech.sigma_b, mech.sigma_a / 2.0)
    assert math.isclose(mech.sensitivity, dpsvgp_sensitivity(1.0, mech.R_k, 2.0))
    data = _data(rng)
    out = mech.sample(data, 7, rng)
    assert out.shape == (7, 5 + upper_dim(5))
    stats = mech.release(data, rng)
    np.testing.assert_allclose(stats.B, stats.B.T)


def test_release_noise_has_declared_law(rng):
    mech = _mech(ratio=0.5)
    data = _data(rng)
    x = mech.sample(data, 20000, rng) - mech.mean(data)
    d = mech.n_inducing
    assert abs(x[:, :d].std() / mech.sigma_a - 1) < 0.02
    assert abs(x[:, d:].std() / mech.sigma_b - 1) < 0.02


def test_targets_outside_bound_refused_or_clipped(rng):
    X = np.zeros((3, 1))
    bad = Dataset(X, np.array([0.0, 2.0, -0.5]))
    with pytest.raises(ValueError, match="outside the declared bound"):
        _mech().mean(bad)
    clipped = _mech(clip=True)
    assert "clipped" in clipped.claim.note
    A, _ = clipped.statistics(bad)
    A_ref, _ = clipped.statistics(Dataset(X, np.array([0.0, 1.0, -0.5])))
    np.testing.assert_allclose(A, A_ref)


def test_wrong_rk_override_is_caught_on_data(rng):
    mech = _mech(rk=0.1)
    with pytest.raises(ValueError, match="R_k"):
        mech.mean(_data(rng))


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="epsilon"):
        _mech(epsilon=0.0)
    with pytest.raises(ValueError, match="delta"):
        _mech(delta=1.0)
    with pytest.raises(ValueError, match="non-finite"):
        _mech(Z=np.array([[0.0], [np.nan]]))


@given(st.integers(0, 2**32 - 1), st.sampled_from(["trivial", "grid1d-paper", "spacing-1d",
                                                    "min-distance"]),
       st.floats(0.2, 5.0), st.floats(0.3, 3.0), st.sampled_from([EQ, Matern32]))
def test_sensitivity_bound_holds_on_whole_row_neighbours(seed, rk_method, ratio, ell, kern):
    r = np.random.default_rng(seed)
    mech = _mech(kernel=kern(lengthscale=ell), ratio=ratio, rk_method=rk_method)
    data = _data(r, n=8)
    base = mech.query(data)
    for _ in range(6):
        i = int(r.integers(data.n))
        # adversarial-ish replacement rows: on an inducing point, far away, random
        x_new = r.choice([mech.Z[r.integers(5), 0], 50.0, r.uniform(-5, 5)])
        y_new = r.choice([-1.0, 1.0, r.uniform(-1, 1)])
        diff = mech.query(data.with_row(i, [x_new], y_new)) - base
        assert np.linalg.norm(diff) <= mech.sensitivity_bound() * (1 + 1e-9)


def _worst_pair(mech, rng):
    """Row 0 moved from an inducing point with y = R_y to far away with y = -R_y."""
    data = _data(rng, n=10)
    d0 = data.with_row(0, mech.Z[2], mech.y_bound)
    d1 = data.with_row(0, [1e3], -mech.y_bound)
    return d0, d1


def test_whitebox_profile_at_claim(rng):
    """Exact privacy profile of generated whole-row pairs: δ(ε) ≤ claimed δ (GDP maths)."""
    mech = _mech(epsilon=1.0, delta=1e-5)
    cov = mech.cov(_data(rng))
    prec = 1.0 / np.diag(cov)
    worst_mu = 0.0
    pairs = [_worst_pair(mech, rng)]
    for _ in range(30):
        d0 = _data(rng, n=10)
        pairs.append((d0, d0.with_row(int(rng.integers(10)), rng.uniform(-6, 6, 1),
                                      rng.uniform(-1, 1))))
    for d0, d1 in pairs:
        diff = mech.mean(d0) - mech.mean(d1)
        worst_mu = max(worst_mu, math.sqrt(float(np.sum(diff * diff * prec))))
    assert worst_mu <= mech.calibration.mu * (1 + 1e-9)
    assert gdp_delta(1.0, worst_mu) <= 1e-5 * (1 + 1e-6)
    # the exact calibration is tight: the profile at Δ/σ_a hits the claimed δ
    assert math.isclose(gdp_delta(1.0, mech.calibration.mu), 1e-5, rel_tol=1e-6)


def test_large_epsilon_recovers_regularised_titsias(rng):
    X = rng.uniform(-4, 4, size=(400, 1))
    y = np.clip(np.sinc(X[:, 0]) + 0.1 * rng.normal(size=400), -1.5, 1.5)
    data = Dataset(X, y)
    mech = DPSVGPStats(Z=np.linspace(-3, 3, 9)[:, None], kernel=EQ(lengthscale=1.0),
                       y_bound=1.5, epsilon=1e4, delta=1e-4)
    A, B = mech.statistics(data)
    V = np.linspace(-3, 3, 50)
    m_ref, _ = mech.predict(titsias_qu(np.asarray(mech.Kzz), A, B, 0.01), V)
    assert np.max(np.abs(m_ref - np.sinc(V))) < 0.1       # the sparse GP itself fits
    q = mech.fit(data, 0.01, rng)
    # same λ, no noise: what the DP release estimates (λ's bias is part of the method)
    q0 = noise_aware_qu(np.asarray(mech.Kzz), A, B, 0.01, 0.0, 0.0, lam=q.lam)
    m_dp, v_dp = mech.predict(q, V)
    m_0, _ = mech.predict(q0, V)
    assert np.max(np.abs(m_dp - m_0)) < 0.05
    assert np.all(v_dp >= 0)


def test_registry_entry_builds_on_default_data(rng):
    entry = catalogue.get("H.1/dp-svgp-stats")
    mech, data = entry.make()
    assert mech.claim.relation.kind is Neighbour.ROWS
    assert mech.sample(data, 3, rng).shape == (3, mech.output_dim)


# ----------------------------------------------------------------------------- audits


class _MissingFactorTwo(DPSVGPStats):
    """Planted bug: sensitivity R_y R_k (forgets that y can flip sign under substitution)."""

    def __post_init__(self):
        super().__post_init__()
        from dpgp_audit.privacy.calibrate import calibrate_gaussian
        wrong = self.y_bound * self.R_k
        object.__setattr__(self, "sensitivity", wrong)
        object.__setattr__(self, "calibration", calibrate_gaussian(self.epsilon, self.delta, wrong))


def _row_pairs(mech, seed, n=8, k=6):
    r = np.random.default_rng(seed)
    pairs = []
    for _ in range(k):
        d0 = _data(r, n=n)
        i = int(r.integers(n))
        x_new = r.choice([mech.Z[r.integers(mech.n_inducing), 0], 40.0, r.uniform(-5, 5)])
        pairs.append((d0, d0.with_row(i, [x_new], r.choice([-1.0, 1.0]))))
    # the adversarial pair: the same input on an inducing point, y flips sign
    d0 = _data(r, n=n).with_row(0, mech.Z[mech.n_inducing // 2], 1.0)
    pairs.append((d0, d0.with_row(0, mech.Z[mech.n_inducing // 2], -1.0)))
    return pairs


@given(st.integers(0, 2**32 - 1), st.floats(0.3, 3.0), st.floats(0.3, 2.0))
def test_whitebox_audit_at_claim_on_generated_rows(seed, ratio, ell):
    from dpgp_audit.audit.whitebox import audit_whitebox
    mech = _mech(ratio=ratio, kernel=EQ(lengthscale=ell))
    res = audit_whitebox(mech, _row_pairs(mech, seed))
    assert res.verdict is not Verdict.VIOLATION


def test_whitebox_audit_flags_missing_factor_two():
    from dpgp_audit.audit.whitebox import audit_whitebox
    # short lengthscale vs spacing: ||k(Z, z_j)|| is close to R_k (eq. 8), so 2 R_y ||k|| > R_y R_k
    bug = _MissingFactorTwo(Z=np.linspace(-3, 3, 5)[:, None], kernel=EQ(lengthscale=0.3),
                            y_bound=1.0, epsilon=1.0, delta=1e-5)
    res = audit_whitebox(bug, _row_pairs(bug, 0))
    assert res.verdict is Verdict.VIOLATION


def test_sensitivity_checker_searches_replacement_rows(rng):
    from dpgp_audit.audit.sensitivity import check_sensitivity
    mech = _mech(kernel=EQ(lengthscale=0.3))
    data = _data(rng, n=6)
    res = check_sensitivity(mech, data, rng, budget=150)
    assert res.verdict is not Verdict.VIOLATION
    assert 0 < res.estimate <= mech.sensitivity_bound() * (1 + 1e-9)
    bug = _MissingFactorTwo(Z=mech.Z, kernel=EQ(lengthscale=0.3), y_bound=1.0, epsilon=1.0,
                            delta=1e-5)
    res_bug = check_sensitivity(bug, data, rng, budget=150)
    assert res_bug.verdict is Verdict.VIOLATION


_H1_FOR_STRATEGY = _mech(kernel=EQ(lengthscale=0.5), ratio=1.0)


@given(neighbouring_datasets(_H1_FOR_STRATEGY.claim.relation, n=(1, 10), x_range=(-8.0, 8.0)))
def test_bound_holds_on_strategy_generated_whole_row_neighbours(pair):
    mech = _H1_FOR_STRATEGY
    change = mech.norm(mech.query(pair.d1) - mech.query(pair.d0))
    target(change, label="H.1 query change")
    assert change <= mech.sensitivity_bound() * (1 + 1e-9)


def test_whitebox_audit_on_auditedge_neighbour_pairs(rng):
    from dpgp_audit.audit.neighbours import neighbour_pairs
    from dpgp_audit.audit.whitebox import audit_whitebox
    mech = _mech(kernel=EQ(lengthscale=0.5))
    data = _data(rng, n=12)
    pairs = neighbour_pairs(data, mech.claim.relation, rng)
    res = audit_whitebox(mech, pairs)
    assert res.verdict is not Verdict.VIOLATION
    bug = _MissingFactorTwo(Z=mech.Z, kernel=EQ(lengthscale=0.3), y_bound=1.0, epsilon=1.0,
                            delta=1e-5)
    assert audit_whitebox(bug, neighbour_pairs(data, bug.claim.relation, rng)).violation
