"""Audits of the registered H.3, H.4, H.5 and R.5 mechanisms at their claims (small, seeded).

White-box at the claim for the Gaussian releases (H.5), black-box with a
categorical / automatic score for the discrete (H.4) and non-Gaussian (H.3,
R.5) ones, plus oracle checks of the contract wrappers: the vectorised
CoinPress sampler against the sequential :func:`coinpress_mean`, and the R.5
sampler against :meth:`DPSGDSVGP.fit` (same calibration, same stream).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgp_audit import catalogue
from dpgp_audit.audit.blackbox import audit_blackbox
from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.audit.whitebox import audit_whitebox
from dpgp_audit.privacy.claims import ZCDP, Neighbour
from dpgp_audit.privacy.coinpress import CoinPressMean, coinpress_mean
from dpgp_audit.privacy.conversions import zcdp_to_epsilon

NEW = ("H.3/coinpress", "H.4/hyperparameter-search", "H.5/dirichlet-classifier",
       "H.5/heteroscedastic-stats", "R.5/dpsgd-svgp")


def test_new_ids_are_registered_with_epsilon_delta_defaults():
    ids = {e.id for e in catalogue.entries()}
    for mech_id in NEW:
        assert mech_id in ids
        entry = catalogue.get(mech_id)
        assert {"epsilon", "delta"} <= set(entry.defaults)
        mech, data = entry.make()
        assert mech.claim.relation.kind is Neighbour.ROWS
        assert data.n <= 50


# ----------------------------------------------------------------------------- H.3 CoinPress


def test_h3_vectorised_sample_equals_sequential_coinpress(rng):
    mech, data = catalogue.get("H.3/coinpress").make()
    y = np.concatenate([data.y, [3.0, -7.0]])  # values outside the prior get clipped
    from dpgp_audit.dataset import Dataset

    data = Dataset(np.arange(y.size, dtype=float)[:, None], y)
    seed = int(rng.integers(2**32))
    fast = mech.sample(data, 7, np.random.default_rng(seed))[:, 0]
    g = np.random.default_rng(seed)  # run j consumes the j-th block of n_iter normals
    slow = [coinpress_mean(np.clip(y, -1.0, 1.0), 0.0, 1.0, mech.rho, g).estimate
            for _ in range(7)]
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-15)


def test_h3_claim_is_eq19_zcdp():
    mech, _ = catalogue.get("H.3/coinpress").make(epsilon=2.0, delta=1e-6)
    assert isinstance(mech.claim, ZCDP)
    assert math.isclose(zcdp_to_epsilon(mech.claim.rho, 1e-6), 2.0, rel_tol=1e-10)
    with pytest.raises(ValueError, match="radius"):
        CoinPressMean(centre=0.0, radius=0.0, rho=0.1)


def test_h3_blackbox_at_claim_and_catches_an_overstated_claim(rng):
    mech, data = catalogue.get("H.3/coinpress").make()
    d0 = data.with_row(0, data.X[0], 1.0)
    d1 = data.with_row(0, data.X[0], -1.0)
    res = audit_blackbox(mech, d0, d1, n=4000, rng=rng)
    assert res.verdict is not Verdict.VIOLATION
    # the same release at a 1000x larger budget, claimed at the default rho: caught
    loud = CoinPressMean(centre=0.0, radius=1.0, rho=1000 * mech.rho)
    res = audit_blackbox(loud, d0, d1, n=4000, rng=rng, claim=mech.claim)
    assert res.verdict is Verdict.VIOLATION


# ----------------------------------------------------------------------------- H.4 search


def test_h4_blackbox_categorical_at_claim(rng):
    mech, data = catalogue.get("H.4/hyperparameter-search").make()
    # move a validation target (the last rows validate) from +b to -b
    d0 = data.with_row(data.n - 1, data.X[-1], 1.0)
    d1 = data.with_row(data.n - 1, data.X[-1], -1.0)
    res = audit_blackbox(mech, d0, d1, n=120, rng=rng, score="categorical")
    assert res.verdict is not Verdict.VIOLATION
    out = mech.sample(data, 30, rng)
    assert set(np.unique(out)) <= {-1.0, 0.0, 1.0, 2.0, 3.0}


# ----------------------------------------------------------------------------- H.5


@pytest.mark.parametrize("mech_id", ["H.5/heteroscedastic-stats", "H.5/dirichlet-classifier"])
def test_h5_whitebox_at_claim_over_generated_pairs(mech_id, rng):
    mech, data = catalogue.get(mech_id).make()
    pairs = []
    for p in neighbour_pairs(data, mech.claim.relation, rng):
        try:
            mech.mean(p.d0)
            mech.mean(p.d1)
        except ValueError:  # e.g. a label outside 0..C-1 for the classifier
            continue
        pairs.append((p.d0, p.d1))
    assert len(pairs) >= 5
    res = audit_whitebox(mech, pairs)
    assert res.verdict is Verdict.NO_EVIDENCE
    assert res.estimate <= mech.claim.epsilon * (1 + 1e-9)


def test_h5_refuses_noise_below_declared_floor():
    # claim the noise variances are >= 1.0 while the rule gives 0.1 + 0.2|y|:
    # statistics() refuses rather than release with a too-small sensitivity
    mech, data = catalogue.get("H.5/heteroscedastic-stats").make(base_noise=0.1)
    from dpgp_audit.methods.honkela.heteroscedastic import (
        AffineNoiseVariance,
        DPHeteroscedasticStats,
    )

    wrong = DPHeteroscedasticStats(Z=mech.Z, kernel=mech.kernel, y_bound=1.0, epsilon=1.0,
                                   delta=1e-5, noise_var_fn=AffineNoiseVariance(0.1, 0.2),
                                   min_noise_var=1.0)
    with pytest.raises(ValueError, match="min_noise_var"):
        wrong.mean(data)


# ----------------------------------------------------------------------------- R.5 DP-SGD

pytest.importorskip("dp_accounting")


def test_r5_sample_is_fit_with_its_own_calibration():
    mech, data = catalogue.get("R.5/dpsgd-svgp").make()
    rows = mech.sample(data, 1, np.random.default_rng(5))
    fit = mech.model.fit(data, np.random.default_rng(5))  # calibrates without the generator
    assert fit.noise_multiplier == mech.noise_multiplier(data.n)
    np.testing.assert_array_equal(rows[0], mech.unpack(fit))
    assert "dp-accounting" in mech.claim.note and "RDP" in catalogue.get("R.5/dpsgd-svgp").title


def test_r5_blackbox_at_claim_and_catches_missing_noise(rng):
    mech, data = catalogue.get("R.5/dpsgd-svgp").make(batch_size=20)
    d0 = data.with_row(0, data.X[0], 1.0)
    d1 = data.with_row(0, data.X[0], -1.0)
    res = audit_blackbox(mech, d0, d1, n=100, rng=rng)
    assert res.verdict is not Verdict.VIOLATION

    class NoNoise:  # the same full-batch trainer with the noise switched off, same claim
        claim = mech.claim

        def sample(self, data, n, rng):
            return np.stack([mech.unpack(mech.model.fit(data, rng, _noise_multiplier=0.0))
                             for _ in range(n)])

    res = audit_blackbox(NoNoise(), d0, d1, n=100, rng=rng)
    assert res.verdict is Verdict.VIOLATION


# ----------------------------------------------------------------------------- make audit


@pytest.mark.parametrize("mech_id", NEW)
def test_make_audit_settings_give_no_evidence(mech_id):
    entry = catalogue.get(mech_id)
    mech, data = entry.make()
    n = entry.audit_samples or 2000
    report = audit_mechanism(mech, data, np.random.default_rng(20261122), n=n,
                             auditors=("whitebox", "blackbox", "sensitivity"))
    assert report.verdict is Verdict.NO_EVIDENCE, report.table()
