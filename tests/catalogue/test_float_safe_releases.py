"""Every continuous release of the catalogue lies on its public grid (issue 20 §4; A.7).

A release is either on the grid Λ of :mod:`dpgp_audit.privacy.float_release` coordinate by
coordinate, or (correlated noise) the fixed public factor F applied to a vector on the
grid — the rounding happens where the noise is (:class:`LinearGaussianRelease`). The grid
comes from the mechanism alone, before any data is seen; the tests draw from datasets with
different targets and check every draw against that one grid. The expected grid relation
is a definition (a release is an integer multiple of Λ), not a snapshot of the output.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpgp_audit.catalogue import entries, get
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.multivariate import factor_pinv

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    BUILT = {e.id: e.make() for e in entries()}

#: Releases whose grid is chosen per draw from public values (CoinPress: each step's sd
#: follows the previous noisy step; S21.3 two-step: step 2's noise follows f̃₁), or whose
#: rounded release is post-processed by the mechanism (R.5: the rounded noisy gradients
#: drive an optimiser): their claims carry τ, their grids are tested in their own modules.
PER_DRAW_GRID = {"H.3/coinpress", "S21.3/laplace-classification-two-step", "R.5/dpsgd-svgp"}
#: Discrete releases, or exact samplers (P.1/P.2/P.4 -secure): no float rounding needed.
NOT_ROUNDED = {"A.5/exp-mech", "A.5/noisy-max", "A.5/statdp-noisy-max-exp", "A.5/svt",
               "H.4/hyperparameter-search",
               "P.2/exponential", "S18.4/selection", "S21.5/selection",
               "P.1/gaussian-sum-secure", "P.2/laplace-sum-secure",
               "P.4/multivariate-gaussian-secure"}


def _grid_and_factor(mech: object) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """(grid, factor F or None, public offset) of a mechanism's release."""
    from dpgp_audit.methods.linear_gaussian import LinearGaussianRelease
    from dpgp_audit.methods.raisa.dpsetconv import DPSetConv
    from dpgp_audit.methods.toolbox.primitives import FunctionalMechanism

    offset = np.zeros(1)
    inner = getattr(mech, "release", None)  # S21.3/S21.4: the cloaked Newton step
    if inner is not None and hasattr(inner, "mechanism"):
        mech = inner
    if hasattr(mech, "mechanism"):  # a CloakedRelease
        offset = np.zeros(1) if mech.offset is None else mech.offset
        mech = mech.mechanism
    if isinstance(mech, LinearGaussianRelease):
        return mech.float_release().grid, mech.noise_factor, offset
    if isinstance(mech, FunctionalMechanism):
        return mech.float_release().grid, mech.sampler.factor, offset
    if isinstance(mech, DPSetConv):
        return mech.float_release.grid, None, offset
    if hasattr(mech, "_factor") and getattr(mech, "_inner", False):  # bugs' linear Gaussian
        return mech.float_release().grid, mech._factor, offset
    if hasattr(mech, "float_release"):
        return mech.float_release().grid, None, offset
    # the zoo's sample-only controls: one noise sd for every coordinate
    sigma = mech.sigma if hasattr(mech, "sigma") else None
    if sigma is None:  # NoiseSkippedSum / MaxScaledLaplaceSum: rebuild from the claim
        from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
        from dpgp_audit.privacy.float_release import laplace_release, release_grid

        if hasattr(mech, "scale_from"):
            return laplace_release([mech.d * mech.y_bound / mech.epsilon]).grid, None, offset
        return release_grid([analytic_gaussian_sigma(mech.epsilon, mech.delta, mech.d)]), \
            None, offset
    from dpgp_audit.privacy.float_release import release_grid

    return release_grid([float(sigma)]), None, offset


def _inner_coordinates(mech_id: str, mech: object, out: np.ndarray, F: np.ndarray | None,
                       offset: np.ndarray) -> np.ndarray:
    out = out - offset
    if mech_id == "R.2/dpsetconv":
        shape = (out.shape[0] * 2, *mech.grid.shape)
        return mech._to_inner(out.reshape(shape)).reshape(out.shape[0], -1)
    if F is None:
        return out
    return out @ factor_pinv(F).T


def _on_grid(mech_id: str, mech: object, data: Dataset, rng: np.random.Generator) -> None:
    grid, F, offset = _grid_and_factor(mech)
    out = np.asarray(mech.sample(data, 64, rng), dtype=float).reshape(64, -1)
    inner = _inner_coordinates(mech_id, mech, out, F, offset)
    units = inner / grid
    if F is None and mech_id != "R.2/dpsetconv":  # rounded coordinate by coordinate: exact
        np.testing.assert_array_equal(units, np.rint(units), err_msg=mech_id)
        return
    # F applied to a grid vector R: recovering R as F⁺ out (F⁺ as computed) differs from R
    # by three float errors, each bounded (Higham §3.5, γ_m ≈ (m + 2) u for a dot product of
    # length m): the release's product, |fl(F R) − F R| ≤ γ_r |F| |R|, carried by |F⁺|; the
    # recovery's own product, ≤ γ_k |F⁺| |out|; and F⁺ F ≠ I for the computed F⁺, ≤ |F⁺ F − I|
    # |R|, with F⁺ F − I itself as computed (plus γ_r |F⁺| |F|). A coordinate is checked where
    # the sum is below 0.05 grid units (ill-conditioned directions of F are not recoverable
    # from the floats, whatever the release)
    if F is None:  # R.2: the Kronecker factor; its recovery error is far below 1e-6 units
        np.testing.assert_allclose(units, np.rint(units), rtol=0, atol=1e-6, err_msg=mech_id)
        return
    u = 2.0**-53
    k, r = F.shape
    P = factor_pinv(F)
    R = np.rint(units) * grid
    product = ((r + 2) * u * (np.abs(R) @ np.abs(F).T)) @ np.abs(P).T
    recovery = (k + 2) * u * (np.abs(out - offset) @ np.abs(P).T)
    identity = np.abs(P @ F - np.eye(r)) + (r + 2) * u * (np.abs(P) @ np.abs(F))
    bound = (product + recovery + np.abs(R) @ identity.T) / grid
    testable = bound < 0.05
    assert testable.mean() > 0.5, (mech_id, float(testable.mean()))
    assert np.all(np.abs(units - np.rint(units))[testable] <= 2 * bound[testable] + 1e-9), mech_id


CONTINUOUS = sorted(set(BUILT) - PER_DRAW_GRID - NOT_ROUNDED)


@pytest.mark.parametrize("mech_id", CONTINUOUS)
def test_A7_every_continuous_release_lies_on_its_public_grid(mech_id):
    mech, data = BUILT[mech_id]
    assert mech.claim.float_tv > 0, "the claim states the float total variation"
    _on_grid(mech_id, mech, data, np.random.default_rng(0))


@pytest.mark.parametrize("mech_id", ["P.1/gaussian-sum", "P.2/laplace-sum",
                                     "P.4/multivariate-gaussian", "S18.2/cloaking",
                                     "S18.3/binning-laplace"])
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([1.0, 1e3, 1e5]))
def test_A7_the_grid_does_not_depend_on_the_targets(mech_id, seed, scale):
    # the grid is computed from the mechanism before any data; releases of other targets
    # (anywhere in the declared domain) lie on that same grid
    mech, data = BUILT[mech_id]
    rng = np.random.default_rng(seed)
    y = np.clip(rng.normal(size=data.n) * scale, -1e6, 1e6)
    _on_grid(mech_id, mech, Dataset(data.X, y, data.name), rng)


@pytest.mark.parametrize("mech_id", sorted(PER_DRAW_GRID))
def test_A7_per_draw_grids_are_stated_in_the_claim(mech_id):
    mech, data = BUILT[mech_id]
    assert mech.claim.float_tv > 0
    assert np.all(np.isfinite(mech.sample(data, 3, np.random.default_rng(0))))


def test_A7_coinpress_steps_lie_on_the_grid_of_their_sd():
    from dpgp_audit.privacy.coinpress import coinpress_mean
    from dpgp_audit.privacy.float_release import release_grid

    data = get("H.3/coinpress").default_data()
    res = coinpress_mean(np.clip(data.y, -1, 1), 0.0, 1.0, 0.05, np.random.default_rng(1))
    g = float(release_grid(res.noise_sds[-1]))
    assert res.estimate / g == np.rint(res.estimate / g)
