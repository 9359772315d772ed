"""The pure functions behind the course's widgets (``dpgp_audit.viz.explorers``).

Expected values are closed forms: the cloaking release must meet its claim exactly
(the Gaussian privacy profile of R eq. 5 at the worst Mahalanobis shift of one
target equals δ), the noise scales linearly in d, H eq. (6) agrees with the exact
sensitivity above its threshold and equals 2 R_y R_k below it, and the ε ceiling
is the Clopper-Pearson bound of a perfect distinguisher.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from dpgp_audit.privacy.calibration_table import privacy_profile  # noqa: E402
from dpgp_audit.viz import explorers as ex  # noqa: E402

X = np.linspace(0.0, 10.0, 15)
Y = np.sin(X)
GRID = np.linspace(-1.0, 11.0, 12)
KW = {"lengthscale": 2.0, "epsilon": 1.0, "delta": 1e-3, "kernel_variance": 1.0,
      "noise_variance": 0.1}


def _weights(lengthscale):
    """C = K_*f (K + σ²I)⁻¹ written out independently of the kit's GP code."""
    k = lambda a, b: np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / lengthscale**2)  # noqa: E731
    return k(GRID, X) @ np.linalg.inv(k(X, X) + KW["noise_variance"] * np.eye(X.size))


def test_cloaking_release_meets_its_claim_exactly():
    st = ex.cloaking_state(X, Y, GRID, d=0.5, rng=np.random.default_rng(1), **KW)
    C = _weights(KW["lengthscale"])
    np.testing.assert_allclose(st.mean, C @ Y, rtol=1e-8, atol=1e-10)
    pinv = np.linalg.pinv(st.noise_cov, rcond=1e-10, hermitian=True)
    shifts = 0.5 * C.T  # one target moved by d: the release moves by d c_i
    mu = np.sqrt(max(s @ pinv @ s for s in shifts))
    assert privacy_profile(np.array([KW["epsilon"]]), mu)[0] == pytest.approx(KW["delta"],
                                                                              rel=1e-3)
    assert np.allclose(st.noise_cov, st.noise_cov.T) and st.sample.shape == GRID.shape


def test_cloaking_noise_scales_linearly_in_d():
    a = ex.cloaking_state(X, Y, GRID, d=0.5, rng=np.random.default_rng(1), **KW)
    b = ex.cloaking_state(X, Y, GRID, d=1.0, rng=np.random.default_rng(1), **KW)
    np.testing.assert_allclose(b.noise_cov, 4.0 * a.noise_cov, rtol=1e-6, atol=1e-12)
    assert b.sigma == pytest.approx(2.0 * a.sigma, rel=1e-9)


@pytest.mark.parametrize("name", ["lengthscale", "d", "epsilon", "noise_variance"])
def test_cloaking_state_rejects_bad_parameters(name):
    kw = dict(KW, d=0.5)
    kw[name] = -1.0
    with pytest.raises(ValueError, match=name):
        ex.cloaking_state(X, Y, GRID, rng=np.random.default_rng(0), **kw)


def test_ceiling_verdicts():
    low = ex.ceiling_state(10, claimed_epsilon=1.0, true_epsilon=50.0, alpha=0.05)
    assert low.verdict == "INCONCLUSIVE" and low.ceiling < 1.0
    # perfect distinguisher, n draws per side: log(CP_lower(n, n) / CP_upper(0, n)) at α/2
    n, a = 100_000, 0.05
    closed = np.log((a / 2) ** (1 / n) / (1 - (a / 2) ** (1 / n)))
    big = ex.ceiling_state(n, claimed_epsilon=1.0, true_epsilon=2.15, alpha=a)
    assert big.ceiling == pytest.approx(closed, rel=1e-6)
    assert big.verdict == "VIOLATION possible"
    ok = ex.ceiling_state(n, claimed_epsilon=1.0, true_epsilon=1.0, alpha=a)
    assert ok.verdict == "NO_EVIDENCE" and "not a proof" in ok.reason
    with pytest.raises(ValueError, match="n must be"):
        ex.ceiling_state(0, claimed_epsilon=1.0, true_epsilon=1.0, alpha=a)


def test_ratio_state_matches_h_eq_6_and_its_missing_case():
    ry, rk = 1.5, 2.0
    thr = np.sqrt(ry**2 / (2 * rk**2))
    above = ex.svgp_ratio_state(2 * thr, y_bound=ry, rk=rk, epsilon=1.0, delta=1e-4)
    c = 2 * thr
    eq6 = np.sqrt(ry**4 / (2 * c**2) + 2 * ry**2 * rk**2 + 2 * c**2 * rk**4)
    assert above.paper == pytest.approx(eq6, rel=1e-12)
    assert above.exact == pytest.approx(eq6, rel=1e-9)
    below = ex.svgp_ratio_state(thr / 4, y_bound=ry, rk=rk, epsilon=1.0, delta=1e-4)
    assert below.exact == pytest.approx(2 * ry * rk, rel=1e-9)
    assert below.paper > 1.01 * below.exact
    assert below.threshold == pytest.approx(thr)
    assert below.sigma_b == pytest.approx(below.sigma_a / (thr / 4))


def test_explorers_draw_figures():
    fig = ex.cloaking_explorer(X, Y, GRID, d=0.5, rng=np.random.default_rng(0), **KW)
    assert len(fig.axes) == 3  # covariance, its colour bar, the release
    fig = ex.ceiling_explorer(1000, claimed_epsilon=1.0, true_epsilon=2.0, alpha=0.05)
    assert "INCONCLUSIVE" in fig.axes[0].get_title() or "VIOLATION" in fig.axes[0].get_title()
    fig = ex.svgp_ratio_explorer(1.0, y_bound=1.0, rk=1.0, epsilon=1.0, delta=1e-4)
    assert len(fig.axes) == 2


def test_slider_widget_builds_and_checks_its_specification():
    pytest.importorskip("ipywidgets")
    from dpgp_audit.viz.widgets import slider_widget

    calls = []
    box = slider_widget(lambda n, eps: calls.append((n, eps)),
                        {"n": (10, 1000, 100), "eps": (0.1, 10.0, 1.0)},
                        log=("eps",), integer=("n",))
    assert len(box.children[0].children) == 2
    with pytest.raises(ValueError, match="name no slider"):
        slider_widget(print, {"n": (1, 2, 1)}, log=("m",))
    with pytest.raises(ValueError, match="low > 0"):
        slider_widget(print, {"eps": (0.0, 1.0, 0.5)}, log=("eps",))
