"""H.5 heteroscedastic sensitivity (App. D, corrected), Dirichlet transform (eq. 21), classifier."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.whitebox import audit_whitebox
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.dpsvgp_bounds import dpsvgp_sensitivity, upper_vec
from dpgp_audit.methods.dpsvgp_hetero import (
    DPDirichletClassifier,
    dirichlet_targets,
    heteroscedastic_sensitivity,
)


def _row(w, y, k, ratio):
    return np.concatenate([w * y * k, ratio * upper_vec(w * np.outer(k, k))])


@given(st.floats(0.1, 3), st.floats(0.1, 3), st.floats(0.05, 2), st.floats(0.2, 4),
       st.integers(0, 2**32 - 1))
def test_heteroscedastic_bound_holds_and_is_attained(ry, rk, s2min, ratio, seed):
    r = np.random.default_rng(seed)
    bound = heteroscedastic_sensitivity(ry, rk, s2min, ratio)
    assert math.isclose(bound, dpsvgp_sensitivity(ry / math.sqrt(s2min),
                                                  rk / math.sqrt(s2min), ratio), rel_tol=1e-12)
    for _ in range(20):
        k, kp = r.normal(size=3), r.normal(size=3)
        k *= rk * r.uniform() / np.linalg.norm(k)
        kp *= rk * r.uniform() / np.linalg.norm(kp)
        w, wp = 1 / r.uniform(s2min, 5 * s2min), 1 / r.uniform(s2min, 5 * s2min)
        y, yp = r.uniform(-ry, ry, 2)
        assert np.linalg.norm(_row(w, y, k, ratio) - _row(wp, yp, kp, ratio)) <= bound * (1 + 1e-9)
    # attained by the flip k' = -k at the smallest noise when eq. (6) is loose
    e = np.array([rk, 0, 0])
    flip = np.linalg.norm(_row(1 / s2min, ry, e, ratio) - _row(1 / s2min, ry, -e, ratio))
    assert flip <= bound * (1 + 1e-9)


def test_paper_upper_bound_on_noise_does_not_bound_influence():
    # H App. D assumes sigma_i^2 <= R_sigma: a row with sigma_i^2 -> 0 has unbounded weight
    k = np.array([1.0, 0.0])
    changes = [np.linalg.norm(_row(1 / s2, 1.0, k, 1.0) - _row(1 / s2, -1.0, k, 1.0))
               for s2 in (1.0, 1e-2, 1e-4)]
    assert changes[2] > 100 * changes[0]


def test_dirichlet_targets_formula():
    ytil, s2 = dirichlet_targets(np.array([0, 2]), 3, alpha_eps=0.01)
    a = np.array([[1.01, 0.01, 0.01], [0.01, 0.01, 1.01]])
    np.testing.assert_allclose(s2, np.log(1 / a + 1))
    np.testing.assert_allclose(ytil, np.log(a) - np.log(1 / a + 1) / 2)


def _clf(**kw):
    base = dict(Z=np.linspace(-3, 3, 7), kernel=EQ(lengthscale=0.8), n_classes=3,
                epsilon=1.0, delta=1e-5)
    base.update(kw)
    return DPDirichletClassifier(**base)


def _labels(x):
    return np.digitize(x, [-1.0, 1.0]).astype(float)


@given(st.integers(0, 2**32 - 1))
def test_classifier_sensitivity_on_row_substitutions(seed):
    r = np.random.default_rng(seed)
    clf = _clf()
    x = r.uniform(-4, 4, 10)
    d0 = Dataset(x[:, None], _labels(x))
    base = clf.query(d0)
    for _ in range(5):
        d1 = d0.with_row(int(r.integers(10)), [r.choice([0.0, 30.0, r.uniform(-4, 4)])],
                         float(r.integers(3)))
        assert np.linalg.norm(clf.query(d1) - base) <= clf.sensitivity_bound() * (1 + 1e-9)


def test_classifier_whitebox_audit_and_accuracy(rng):
    clf = _clf()
    x = rng.uniform(-4, 4, 20)
    d0 = Dataset(x[:, None], _labels(x))
    pairs = [(d0, d0.with_row(0, [0.0], lab)) for lab in (0.0, 1.0, 2.0)]
    assert audit_whitebox(clf, pairs).verdict is not Verdict.VIOLATION
    big = _clf(epsilon=500.0)
    x = rng.uniform(-4, 4, 3000)
    data = Dataset(x[:, None], _labels(x))
    qus = big.fit(data, rng)
    V = np.array([-2.5, 0.0, 2.5])
    P = big.predict_proba(qus, V)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert list(P.argmax(axis=1)) == [0, 1, 2]
