# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Answers · 00 · Differential privacy basics
#
# Solutions to the exercises of `00_dp_basics.ipynb`. Try them first; notation as in the
# [glossary](../GLOSSARY.md).

# %% tags=["parameters"]
seed: int = 2018  # seed of the one random generator
n_samples: int = 400000  # Laplace draws per dataset in exercise 6 (far tails need many)

# %%
import warnings

import numpy as np
from IPython.display import Markdown, display

from dpgp_audit import outputs_only, whole_rows
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.params import check_notebook_params
from dpgp_audit.privacy.calibrate import calibrate_gaussian
from dpgp_audit.privacy.calibration_table import privacy_profile
from dpgp_audit.privacy.gdp import gdp_epsilon, gdp_mu
from dpgp_audit.privacy.mechanisms import (
    exponential_probabilities,
    laplace_noise,
    laplace_scale,
)

p = check_notebook_params(seed=seed, n_samples=n_samples)
rng = np.random.default_rng(p["seed"])

# %% [markdown]
# ## 1 · ★ The classical calibration
# The first row of the table in §3, written out. Each solution cell is self-contained (it
# imports what it uses), so it can be copied into the exercise notebook as it is.

# %% tags=["solution-00.1"]
import math


def classical_sigma(epsilon, delta, sensitivity):
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


# %%
from dpgp_audit.exercises import check

check("00.1", classical_sigma)

# %% [markdown]
# ## 2 · ★★ The Laplace mechanism
# The scale is $b = \Delta_1/\varepsilon$, and the generator draws the noise.

# %% tags=["solution-00.2"]
def laplace_release(value, sensitivity, epsilon, size, rng):
    return value + rng.laplace(0.0, sensitivity / epsilon, size)


# %%
check("00.2", laplace_release)

# %% [markdown]
# ## 3 · ★★ An audit score
# Both orders of the pair, for every threshold that some sample exceeds.

# %% tags=["solution-00.3"]
import numpy as np


def worst_ratio(samples_d, samples_d_prime, thresholds):
    s0, s1 = np.asarray(samples_d, dtype=float), np.asarray(samples_d_prime, dtype=float)
    worst = 0.0
    for t in thresholds:
        p0, p1 = np.mean(s0 > t), np.mean(s1 > t)
        for num, den in ((p1, p0), (p0, p1)):
            if num > 0:
                worst = max(worst, np.inf if den == 0 else num / den)
    return worst


# %%
check("00.3", worst_ratio)

# %% [markdown]
# On Laplace samples of a pair at the full whole-rows sensitivity the score approaches
# $e^\varepsilon$ from below (up to sampling noise) once the thresholds pass both centres:

# %%
lap0 = laplace_release(0.0, 2 / 8, 1.0, p["n_samples"], rng)
lap1 = laplace_release(2 / 8, 2 / 8, 1.0, p["n_samples"], rng)
score = worst_ratio(lap0, lap1, np.quantile(np.r_[lap0, lap1], (0.5, 0.7, 0.9)))
print(f"worst ratio {score:.3f}; e^epsilon = {np.e:.3f}")

# %% [markdown]
# ## 4 · ★ Sensitivity
# One target moves by at most $d = 0.5$, so the mean of $n = 8$ targets moves by at most
# $0.5/8$ and their sum by $0.5$.

# %%
d_move = outputs_only(0.5).max_target_change
print(f"mean: {d_move / 8:.4f}   sum: {d_move:.4f}")

# %% [markdown]
# ## 5 · ★ Laplace vs Gaussian
# Compare standard deviations ($\sqrt{2}\,b$ for Laplace). For one scalar at $\delta = 10^{-5}$ the Laplace
# mechanism adds less noise at both ε: the Gaussian pays for its δ. The Gaussian's advantages
# lie elsewhere — an L2 sensitivity, which for a k-dimensional query can be √k times smaller
# than the L1 sensitivity Laplace needs, and tight composition (notebook 00 §5).

# %%
sens = 2 / 8  # the notebook's whole-rows sensitivity of the mean
for eps in (0.1, 5.0):
    b = laplace_scale(eps, sens)
    sigma = calibrate_gaussian(eps, 1e-5, sens).sigma
    print(f"eps = {eps:>4}: Laplace b = {b:.4f} (sd {np.sqrt(2) * b:.4f}), Gaussian sigma = "
          f"{sigma:.4f} -> less noise: {'Laplace' if np.sqrt(2) * b < sigma else 'Gaussian'}")
k = 100  # a 100-dimensional query, each coordinate moved by at most 1/8 by one person
print(f"k = {k}: L1 sensitivity {k / 8:.1f} -> Laplace sd per coordinate "
      f"{np.sqrt(2) * laplace_scale(1.0, k / 8):.1f}; L2 sensitivity {np.sqrt(k) / 8:.2f} -> "
      f"Gaussian sigma {calibrate_gaussian(1.0, 1e-5, np.sqrt(k) / 8).sigma:.1f} (eps = 1)")

# %% [markdown]
# ## 6 · ★ Refusal
# The warning names the proof's range ($\varepsilon \le 1$) and the claim is marked unproven.

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    forced = calibrate_gaussian(2.0, 1e-5, 1.0, "classical", allow_unproven=True)
print(caught[0].message if caught else "no warning")
print("proven:", forced.proven)

# %% [markdown]
# ## 7 · ★★ Profiles
# Interpolate where $\delta(\varepsilon; \mu = 1)$ crosses $10^{-5}$ on a fine grid, and
# compare with the exact inverse.

# %%
grid = np.linspace(0.0, 8.0, 8001)
prof = privacy_profile(grid, 1.0)
crossing = grid[np.argmax(prof < 1e-5)]
print(f"grid crossing {crossing:.3f}; gdp_epsilon(1e-5, 1) = {gdp_epsilon(1e-5, 1.0):.3f}")

# %% [markdown]
# ## 8 · ★★ Exponential mechanism
# ε and Δu are unchanged, so the privacy is the same. The utility gaps double, so the top band
# is picked more often: more accurate.

# %%
counts = np.array([3, 9, 12, 11, 4])
for scale in (1, 2):
    pr = exponential_probabilities(scale * counts, 1.0, 1.0)
    print(f"counts x{scale}: P(select) = {np.round(pr, 3)}")

# %% [markdown]
# ## 9 · ★★ The tight direction
# Move $y_3$ from one end of its range to the other: the mean moves by exactly the
# sensitivity $2/8$, and beyond both centres the ratio of the Laplace tails is e^ε.

# %%
data = default_dataset(n=8)
lo = data.with_target(3, -1.0)  # |y| <= 1 under whole_rows(1.0)
hi = lo.with_row(3, x_new=[9.5], y_new=1.0)
shift = abs(hi.y.mean() - lo.y.mean())
print(f"shift of the mean {shift:.4f} = sensitivity {whole_rows(1.0).max_target_change / 8:.4f}")
b = laplace_scale(1.0, 2 / 8)
s0 = lo.y.mean() + laplace_noise(b, p["n_samples"], rng)
s1 = hi.y.mean() + laplace_noise(b, p["n_samples"], rng)
ratios = []
for t in np.quantile(np.concatenate([s0, s1]), (0.8, 0.9, 0.95)):
    ratios.append(np.mean(s1 > t) / np.mean(s0 > t))
    print(f"t = {t:+.3f}: ratio P[M(D')>t]/P[M(D)>t] = {ratios[-1]:.3f}")
display(Markdown(f"The estimated ratios approach e^ε = **{np.e:.3f}** (largest estimate "
                 f"**{max(ratios):.3f}**; sampling noise makes them scatter around it)."))

# %% [markdown]
# ## 10 · ★★★ Budgets
# GDP composes the `20` releases exactly: $\mu_i = \mu_\text{total}/\sqrt{20}$. Basic
# composition must give each release $(1/20, 10^{-5}/20)$, which costs much more noise.

# %%
mu_total = gdp_mu(1.0, 1e-5)
mu_i = mu_total / np.sqrt(20)
sigma_gdp = 1.0 / mu_i
sigma_basic = calibrate_gaussian(1 / 20, 1e-5 / 20, 1.0).sigma
display(Markdown(f"Per release (Δ = 1): GDP allows μ_i = **{mu_i:.4f}**, i.e. σ = {sigma_gdp:.2f}; "
                 f"basic composition needs σ = {sigma_basic:.2f} — "
                 f"**{sigma_basic / sigma_gdp:.1f}×** more noise."))
