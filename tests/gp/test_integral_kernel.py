"""S18.3 integral (box-average) EQ kernel against numerical quadrature; registry membership."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from dpgp_audit.gp.integral_kernel import IntegralEQ, boxes, points_as_boxes
from dpgp_audit.gp.kernels import EQ, kernel_examples


def quad_avg(a, b, a2, b2, ls, var):
    if b - a < 1e-12 and b2 - a2 < 1e-12:
        return var * np.exp(-0.5 * ((a - a2) / ls) ** 2)
    f = lambda x, y: var * np.exp(-0.5 * ((x - y) / ls) ** 2)  # noqa: E731
    if b - a < 1e-12:
        return integrate.quad(lambda y: f(a, y), a2, b2)[0] / (b2 - a2)
    if b2 - a2 < 1e-12:
        return integrate.quad(lambda x: f(x, a2), a, b)[0] / (b - a)
    return integrate.dblquad(lambda y, x: f(x, y), a, b, a2, b2)[0] / ((b - a) * (b2 - a2))


@pytest.mark.parametrize("ls", [0.3, 1.0, 4.0])
def test_matches_quadrature_1d(rng, ls):
    lo = rng.uniform(-2, 2, 5)
    w = rng.uniform(0, 2, 5) * np.array([1, 0, 1, 1, 0])
    B = boxes(lo[:, None], (lo + w)[:, None])
    k = IntegralEQ(lengthscale=ls, variance=1.7)
    K = k(B)
    for i in range(5):
        for j in range(5):
            ref = quad_avg(lo[i], lo[i] + w[i], lo[j], lo[j] + w[j], ls, 1.7)
            assert K[i, j] == pytest.approx(ref, rel=1e-7, abs=1e-10)
    np.testing.assert_allclose(k.diag(B), np.diag(K), rtol=1e-12)


def test_points_reduce_to_eq(rng):
    X = rng.normal(size=(6, 2))
    k = IntegralEQ(lengthscale=[0.7, 1.3], variance=0.9)
    np.testing.assert_allclose(k(points_as_boxes(X)), EQ([0.7, 1.3], 0.9)(X), rtol=1e-12)


def test_registered_for_psd_invariant():
    names = [ex.name for ex in kernel_examples()]
    assert "IntegralEQ" in names and "IntegralEQ-ARD" in names


def test_bad_boxes():
    with pytest.raises(ValueError):
        boxes([[1.0]], [[0.0]])
    with pytest.raises(ValueError):
        IntegralEQ()(np.ones((3, 3)))
