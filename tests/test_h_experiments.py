"""H §6 experiment drivers (small sizes): shapes, sanity, the input-leak contrast, plotting."""

from __future__ import annotations

import matplotlib
import numpy as np

from dpgp_audit.datasets.synthetic import sinc_function
from dpgp_audit.experiments.honkela import (
    calibration_experiment,
    hyperparameter_recovery,
    outputs_only_input_leak,
    sinc_fits,
)
from dpgp_audit.viz import honkela as hviz

matplotlib.use("Agg")


def test_sinc_fits_improve_with_epsilon(rng):
    data, fits = sinc_fits([0.3, 100.0], rng, n=512)
    err = [float(np.mean(np.abs(f.mean - sinc_function(f.V))[np.abs(f.V) < 3])) for f in fits]
    assert err[1] < err[0]
    assert fits[1].sd.mean() < fits[0].sd.mean()
    hviz.plot_sinc_fits(data, fits, sinc_function)


def test_calibration_experiment_shapes_and_naive_is_less_covered(rng):
    res = calibration_experiment(rng, n_repeats=3, sigmas=(0.05,), epsilons=(0.5,),
                                 alphas=(0.5, 0.9), n_total=256)
    assert res.coverage.shape == (2, 1, 1, 2, 3)
    assert np.all((res.coverage >= 0) & (res.coverage <= 1))
    mean, _ = res.mean_and_se()
    # the noise-aware covariance adds S_2 >= 0, so its intervals are wider: coverage >= naive
    assert np.all(mean[0] >= mean[1] - 1e-12)
    hviz.plot_calibration(res)


def test_hyperparameter_recovery_counts(rng):
    counts = hyperparameter_recovery((1000.0,), 2, rng, n=256, gamma=0.3)
    assert counts.shape == (1, 3, 3) and counts.sum() <= 2
    hviz.plot_hyperparameter_recovery(counts, (1000.0,), (0.03, 0.1, 0.3), (0.3, 1, 3))


def test_outputs_only_variance_reveals_inputs_dpsvgp_stays_in_claim(rng):
    leak = outputs_only_input_leak(rng)
    assert leak.variance_change > 1e-3 and leak.variance_epsilon == float("inf")
    assert leak.dpsvgp_epsilon <= leak.claimed_epsilon
    hviz.plot_input_leak(leak)
