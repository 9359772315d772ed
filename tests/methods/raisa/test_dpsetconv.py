"""R.2: DPSetConv (R Alg. 3) — calibration, sensitivities, white-box audit, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpgp_audit.catalogue import get
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.gp.grid import Grid
from dpgp_audit.methods.raisa.dpsetconv import DPSetConv, noise_scales
from dpgp_audit.norms import Mahalanobis
from dpgp_audit.privacy.claims import GaussianDP, Neighbour
from dpgp_audit.privacy.gdp import gdp_mu


def _mech(**kw) -> DPSetConv:
    base = dict(grid=Grid.from_window([0.0], [10.0], 2.0), lengthscale=1.0, clip_bound=1.0,
                mu=0.8, t=0.5)
    base.update(kw)
    return DPSetConv(**base)


def _oracle_channels(X, y, points, lam, ck=1.0):
    """Independent loop implementation of R eq. (10)."""
    dens = np.zeros(len(points))
    sig = np.zeros(len(points))
    for i, z in enumerate(points):
        for x, yy in zip(X, y, strict=True):
            w = ck * math.exp(-0.5 * float(np.sum((z - x) ** 2)) / lam**2)
            dens[i] += w
            sig[i] += yy * w
    return dens, sig


@pytest.mark.parametrize(("mu", "t", "C"), [(0.5, 0.5, 1.0), (2.0, 0.2, 3.0), (1.3, 0.9, 0.25)])
def test_r2_noise_scales_are_eq12_and_compose_to_mu(mu, t, C):
    sd, ss = noise_scales(mu, t, C)
    assert ss**2 == pytest.approx(4 * C**2 / (t * mu**2), rel=1e-13)
    assert sd**2 == pytest.approx(2 / ((1 - t) * mu**2), rel=1e-13)
    # R Thm 4.2: mu² = Δ_s²/σ_s² + Δ_d²/σ_d²
    assert math.sqrt(4 * C**2 / ss**2 + 2 / sd**2) == pytest.approx(mu, rel=1e-13)


def test_r2_claim_and_budget():
    grid = Grid.from_window([-2.0], [2.0], 8.0)
    m = DPSetConv.from_budget(grid, epsilon=1.0, delta=1e-3, lengthscale=0.2, clip_bound=2.0)
    assert isinstance(m.claim, GaussianDP)
    assert m.mu == pytest.approx(gdp_mu(1.0, 1e-3), rel=1e-14)
    assert m.claim.relation.kind is Neighbour.ROWS and m.claim.relation.d == 2.0
    assert "clipped" in m.claim.note
    assert m.claim.epsilon_at(1e-3) == pytest.approx(1.0, rel=1e-8)


def test_r2_channels_match_loop_oracle_and_clip():
    X = np.array([[0.3], [2.0], [7.7]])
    y = np.array([0.5, -4.0, 9.0])
    m = _mech(lengthscale=0.8, clip_bound=2.0, kernel_variance=1.5)
    ch = m.channels(Dataset(X, y))
    dens, sig = _oracle_channels(X, np.clip(y, -2, 2), m.grid.points(), 0.8, 1.5)
    np.testing.assert_allclose(ch[0], dens, rtol=1e-12)
    np.testing.assert_allclose(ch[1], sig, rtol=1e-12)
    strict = _mech(clip_bound=2.0, clip=False)
    with pytest.raises(ValueError, match="outside the declared bound"):
        strict.channels(Dataset(X, y))
    assert "no clipping" in strict.claim.note


def test_r2_channels_2d_match_loop_oracle():
    grid = Grid.from_window([0.0, 0.0], [2.0, 3.0], 2.0)
    m = DPSetConv(grid, 0.7, 1.0, 1.0)
    X = np.array([[0.5, 0.5], [1.5, 2.5]])
    y = np.array([0.2, -0.7])
    ch = m.channels(Dataset(X, y))
    dens, sig = _oracle_channels(X, y, grid.points(), 0.7)
    np.testing.assert_allclose(ch[0].ravel(), dens, rtol=1e-12)
    np.testing.assert_allclose(ch[1].ravel(), sig, rtol=1e-12)
    with pytest.raises(ValueError, match="dimension"):
        m.channels(default_dataset())


@pytest.mark.parametrize(("C", "ck"), [(1.0, 1.0), (1.7, 2.5)])
def test_r2_sensitivities_are_attained_by_direct_maximisation(C, ck):
    """Δ_d² = 2 C_k and Δ_s² = 4 C² C_k are the suprema, and points on the grid attain them."""
    m = _mech(clip_bound=C, kernel_variance=ck)
    data = default_dataset()
    dq, sq = m.channel_query("density"), m.channel_query("signal")
    xs = np.concatenate([m.grid.axes()[0], [-3.0, 4.3, 13.0]])  # grid points and off-grid
    ys = [-5.0, 0.0, 0.4 * C, C]
    best_d = best_s = 0.0
    for x1 in xs[::2]:
        d0s = {y1: data.with_row(0, [x1], y1) for y1 in ys}
        q0 = {y1: (dq.query(d), sq.query(d)) for y1, d in d0s.items()}
        for x2 in xs:
            for y2 in ys:
                d1 = data.with_row(0, [x2], y2)
                a, b = dq.query(d1), sq.query(d1)
                for y1 in ys:
                    best_d = max(best_d, dq.norm(q0[y1][0] - a))
                    best_s = max(best_s, sq.norm(q0[y1][1] - b))
    assert best_d**2 <= 2 * ck * (1 + 1e-9)
    assert best_s**2 <= 4 * C**2 * ck * (1 + 1e-9)
    assert best_d**2 == pytest.approx(2 * ck, rel=1e-7)  # grid corners 10 λ apart
    assert best_s**2 == pytest.approx(4 * C**2 * ck, rel=1e-7)  # same x, y flips sign
    assert dq.sensitivity_bound() ** 2 == pytest.approx(2 * ck)
    assert sq.sensitivity_bound() ** 2 == pytest.approx(4 * C**2 * ck)


def _adversarial_pairs(m: DPSetConv, data: Dataset):
    lo, hi = m.grid.starts[0], m.grid.starts[0] + m.grid.spacings[0] * (m.grid.counts[0] - 1)
    C = m.clip_bound
    return [
        (data.with_row(0, [lo], C), data.with_row(0, [hi], -C)),   # density worst
        (data.with_row(0, [lo], C), data.with_row(0, [lo], -C)),   # signal worst
        (data.with_row(3, [2.2], 0.3), data.with_row(3, [2.9], -0.6)),
        (data.with_row(5, [1.0], 3.0), data.with_row(5, [hi], -3.0)),
    ]


@pytest.mark.parametrize("t", [0.2, 0.5, 0.8])
def test_r2_whitebox_exact_mu_within_claim_and_composition_is_loose(t):
    """Exact per-pair μ (Mahalanobis of the release covariance) never exceeds the claim;
    its supremum is μ sqrt(max(1 − t/2, t)) < μ (our finding: R Thm 4.2 is not tight)."""
    m = _mech(t=t)
    data = default_dataset()
    norm = Mahalanobis(m.cov(data))
    mus = [norm(m.mean(a) - m.mean(b)) for a, b in _adversarial_pairs(m, data)]
    assert max(mus) <= m.mu * (1 + 1e-9)
    assert max(mus) == pytest.approx(m.worst_case_mu(), rel=1e-6)
    assert m.worst_case_mu() < m.mu


def test_r2_whitebox_catches_underestimated_noise():
    """A planted bug (signal noise computed with Δ_s² = C² instead of 4 C²) is caught."""
    m = _mech(t=0.5)
    buggy_cov = m.cov(default_dataset()).copy()
    G = m.grid.size
    buggy_cov[G:, G:] /= 4.0
    data = default_dataset()
    norm = Mahalanobis(buggy_cov)
    worst = max(norm(m.mean(a) - m.mean(b)) for a, b in _adversarial_pairs(m, data))
    assert worst > m.mu * 1.05


def test_r2_sample_moments_match_mean_and_cov(rng):
    m = DPSetConv(Grid.from_window([0.0], [3.0], 1.0), 1.0, 1.0, 2.0, t=0.3)
    data = Dataset(np.array([[0.5], [2.0]]), np.array([0.7, -1.5]))
    draws = m.sample(data, 30_000, rng)
    assert draws.shape == (30_000, 8)
    mean, cov = m.mean(data), m.cov(data)
    se = np.sqrt(np.diag(cov) / 30_000)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * se)
    np.testing.assert_allclose(np.cov(draws, rowvar=False), cov, atol=0.08 * np.max(cov))
    assert m.as_channels(draws).shape == (30_000, 2, 4)


@given(
    xs=st.lists(st.floats(-3.0, 13.0), min_size=1, max_size=6),
    ys=st.lists(st.floats(-10.0, 10.0), min_size=6, max_size=6),
    x_new=st.floats(-5.0, 15.0),
    y_new=st.floats(-50.0, 50.0),
    t=st.floats(0.05, 0.95),
)
def test_r2_property_bounds_hold_on_random_whole_row_neighbours(xs, ys, x_new, y_new, t):
    m = _mech(t=t, clip_bound=1.5)
    X = np.array(xs)[:, None]
    d0 = Dataset(X, np.array(ys[: len(xs)]))
    d1 = d0.with_row(0, [x_new], y_new)
    dq, sq = m.channel_query("density"), m.channel_query("signal")
    assert dq.norm(dq.query(d0) - dq.query(d1)) <= dq.sensitivity_bound() * (1 + 1e-9)
    assert sq.norm(sq.query(d0) - sq.query(d1)) <= sq.sensitivity_bound() * (1 + 1e-9)
    joint = m.norm(m.query(d0) - m.query(d1))
    assert joint <= m.worst_case_mu() * (1 + 1e-7) <= m.sensitivity_bound() * (1 + 1e-7)


@pytest.mark.parametrize(("kw", "match"), [
    (dict(mu=0.0), "mu"), (dict(t=1.0), "t "), (dict(t=0.0), "t "),
    (dict(clip_bound=-1.0), "clip_bound"), (dict(lengthscale=float("nan")), "lengthscale"),
    (dict(kernel_variance=0.0), "kernel_variance"),
])
def test_r2_bad_parameters_raise(kw, match):
    with pytest.raises(ValueError, match=match):
        _mech(**kw)


def test_r2_registered_and_builds_on_default_data(rng):
    entry = get("R.2/dpsetconv")
    m, data = entry.make()
    assert entry.paper == "R"
    assert m.sample(data, 2, rng).shape == (2, 2 * m.grid.size)
    assert m.claim.mu == pytest.approx(gdp_mu(1.0, 1e-3))


# ----------------------------------------------------------------- with the kit's auditors
def test_r2_audit_whitebox_whole_rows_no_evidence_and_exact_mu(rng):
    from dpgp_audit.audit.neighbours import neighbour_pairs
    from dpgp_audit.audit.result import Verdict
    from dpgp_audit.audit.whitebox import audit_whitebox

    m, data = get("R.2/dpsetconv").make()
    pairs = neighbour_pairs(data, m.claim.relation, rng) + _adversarial_pairs(m, data)
    res = audit_whitebox(m, pairs)
    assert res.verdict is Verdict.NO_EVIDENCE
    assert res.details["mu"] == pytest.approx(m.worst_case_mu(), rel=1e-6)
    assert res.details["mu"] < 0.9 * m.mu  # the GDP composition is loose (t = 1/2: 0.866)


class _HalfSignalNoise:
    """Planted bug: the signal channel's noise variance is 4× too small (Δ_s² = C², not 4C²)."""

    def __init__(self, m: DPSetConv) -> None:
        self._m = m
        self.claim = m.claim
        cov = m.cov(default_dataset()).copy()
        cov[m.grid.size:, m.grid.size:] /= 4.0
        self._cov = cov

    def mean(self, data):
        return self._m.mean(data)

    def cov(self, data):
        return self._cov


def test_r2_audit_whitebox_catches_planted_signal_bug(rng):
    from dpgp_audit.audit.neighbours import neighbour_pairs
    from dpgp_audit.audit.result import Verdict
    from dpgp_audit.audit.whitebox import audit_whitebox

    m, data = get("R.2/dpsetconv").make()
    res = audit_whitebox(_HalfSignalNoise(m), neighbour_pairs(data, m.claim.relation, rng))
    assert res.verdict is Verdict.VIOLATION
    assert res.details["mu"] > 1.1 * m.mu


@pytest.mark.parametrize(("C", "ck"), [(1.0, 1.0), (1.7, 2.5)])
def test_r2_check_sensitivity_finds_both_channel_bounds_attained(rng, C, ck):
    """auditedge's checker reaches Δ_d = sqrt(2 C_k) and Δ_s = 2 C sqrt(C_k) (to 1e-6)."""
    from dpgp_audit.audit.result import Verdict
    from dpgp_audit.audit.sensitivity import check_sensitivity

    m = _mech(clip_bound=C, kernel_variance=ck)
    data = default_dataset()
    for channel in ("density", "signal"):
        q = m.channel_query(channel)
        res = check_sensitivity(q, data, rng, budget=200)
        assert res.verdict is Verdict.NO_EVIDENCE, res.summary()
        assert res.estimate == pytest.approx(q.sensitivity_bound(), rel=1e-6), channel


def test_r2_check_sensitivity_joint_reaches_worst_case_not_claim(rng):
    from dpgp_audit.audit.sensitivity import check_sensitivity

    m, data = get("R.2/dpsetconv").make()
    res = check_sensitivity(m, data, rng, budget=200)
    # the search is a lower bound on the supremum, which is worst_case_mu < mu
    assert m.worst_case_mu() * 0.98 <= res.estimate <= m.worst_case_mu() * (1 + 1e-9)
    assert res.estimate < m.sensitivity_bound()


def test_r2_blackbox_lower_bound_below_exact_epsilon(rng):
    """A.3 on the density-worst pair: the certified ε lower bound stays below the exact ε."""
    from dpgp_audit.audit.blackbox.fixed import audit_blackbox
    from dpgp_audit.audit.result import Verdict
    from dpgp_audit.privacy.gdp import gdp_epsilon

    m, data = get("R.2/dpsetconv").make()
    d0, d1 = data.with_row(0, [0.0], 1.0), data.with_row(0, [10.0], -1.0)
    exact_mu = Mahalanobis(m.cov(data))(m.mean(d0) - m.mean(d1))
    res = audit_blackbox(m, d0, d1, n=40_000, rng=rng, delta=1e-3)
    assert res.verdict is Verdict.NO_EVIDENCE
    assert 0.0 < res.estimate <= gdp_epsilon(1e-3, exact_mu) <= 1.0
