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
# # Answers · 01 · Smith et al. (2018)
#
# Solutions to the exercises of `01_smith2018_cloaking.ipynb`. Try them first; notation as in the
# [glossary](../GLOSSARY.md). The setup repeats the notebook's !Kung data (or its synthetic
# stand-in when the data cannot be loaded).

# %% tags=["parameters"]
seed: int = 2018  # seed of the one random generator
n_repeats: int = 6  # random splits in exercise 1
n_test: int = 60  # test inputs on the grid (the notebook uses 120)

# %%
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import warnings

import numpy as np
from IPython.display import Markdown, display

from dpgp_audit.audit.sensitivity import check_sensitivity
from dpgp_audit.dataset import Dataset
from dpgp_audit.experiments.s18 import KUNG_CENTRE_CM, cloaking_rmse
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.s18.cloaking import CloakingGP
from dpgp_audit.methods.s18.hyperparameter_selection import (
    HyperparameterSelection,
    default_configs,
    s18_sse_sensitivity,
)
from dpgp_audit.methods.s18.standard import StandardDPGP
from dpgp_audit.params import check_notebook_params

p = check_notebook_params(seed=seed, n_repeats=n_repeats, n_test=n_test)
rng = np.random.default_rng(p["seed"])
try:
    from dpgp_audit.datasets.kung import load_kung

    kung = load_kung(females_only=True)
    X_age, height = kung.age, kung.height
except Exception as err:  # offline without a mirror: the notebook's synthetic stand-in
    print("could not load the !Kung data:", err)
    X_age = rng.uniform(0, 88, 287)
    height = 150 - 80 * np.exp(-X_age / 8) + rng.normal(0, 6, 287)
d = 100.0
y = np.clip(height, KUNG_CENTRE_CM - d / 2, KUNG_CENTRE_CM + d / 2)
kung_data = Dataset(X_age[:, None], y)
centred = Dataset(kung_data.X, y - KUNG_CENTRE_CM)
kern_cm = EQ(lengthscale=25.0, variance=7.72**2)
grid = np.linspace(-10, 120, p["n_test"])

# %% [markdown]
# ## 1 · ★ RMSE against ε
# The DP part of the error scales like 1/ε (σ = c(δ)Δd/ε), but the RMSE also contains the
# non-private error, so it grows more slowly than 1/ε.

# %%
rmse = {}
for eps in (1.0, 0.2):
    r = cloaking_rmse(kung_data, kern_cm, 14.0**2, d=d, epsilon=eps, delta=0.01,
                      n_repeats=p["n_repeats"], test_fraction=0.2, rng=rng, centre=KUNG_CENTRE_CM)
    rmse[eps] = (r.no_dp[0], r.dp[0])
    print(f"eps = {eps:g}: RMSE no DP {r.no_dp[0]:.1f} cm, DP {r.dp[0]:.1f} cm")
excess = {e: np.sqrt(max(v[1] ** 2 - v[0] ** 2, 0.0)) for e, v in rmse.items()}
display(Markdown(f"Going from ε = 1 to 0.2 multiplies the DP RMSE by "
                 f"**{rmse[0.2][1] / rmse[1.0][1]:.1f}** and its noise part "
                 f"sqrt(RMSE²_DP − RMSE²_noDP) by **{excess[0.2] / max(excess[1.0], 1e-9):.1f}** "
                 "(1/ε would give 5)."))

# %% [markdown]
# ## 2 · ★★ Test inputs beyond the grid
# Yes: M is optimised for the whole set of test points, so adding outputs (even far from the
# data) changes the optimal λ and the noise at the original points.

# %%
cloak = CloakingGP(kern_cm, 14.0**2, kung_data.X, grid, d, 1.0, 0.01, method="hall")
wide = np.concatenate([grid, np.linspace(121, 150, 30)])
cloak_w = CloakingGP(kern_cm, 14.0**2, kung_data.X, wide, d, 1.0, 0.01, method="hall")
sd0 = np.sqrt(np.diag(cloak.cov(centred)))
sd1 = np.sqrt(np.diag(cloak_w.cov(centred)))[: grid.size]
display(Markdown(f"At the original {grid.size} test points the noise sd changes by up to "
                 f"**{np.max(np.abs(sd1 - sd0)):.2f} cm** (relative "
                 f"{np.max(np.abs(sd1 / sd0 - 1)):.1%})."))

# %% [markdown]
# ## 3 · ★★ The paper's solver
# Alg. 1 is a gradient method without the λ ≥ 0 projection. On this problem it wanders into
# negative weights, and the kit refuses to release a covariance that is not positive
# semi-definite (if it does finish on your run, compare its log|M| with the fast solver's
# certified interval).

# %%
fast = cloak.mechanism.solution
try:
    paper = CloakingGP(kern_cm, 14.0**2, kung_data.X, grid, d, 1.0, 0.01, method="hall",
                       solver="paper", solver_rng=rng).mechanism.solution
    print(f"paper: converged {paper.converged} after {paper.iterations} iterations, "
          f"log|M| = {paper.logdet:.3f}")
except (ValueError, RuntimeError) as err:  # an unconverged run may be refused
    print(f"paper solver: {type(err).__name__}: {err}")
print(f"fast : certified log|M| in [{fast.lower_bound:.3f}, {fast.logdet:.3f}]")

# %% [markdown]
# ## 4 · ★★ A proven ε = 50-like release
# With the exact RKHS sensitivity and the GDP calibration (valid at every ε) the noise is
# σ = Δ_rkhs/μ(ε, δ). Search the ε whose noise sd matches Fig. 1A's; then check the footnote's
# rounding with a noise standard deviation of 13.6 cm.

# %%
sd_y = float(np.std(height))
kern_n = EQ(lengthscale=25.0, variance=(7.72 / sd_y) ** 2)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fig1a = StandardDPGP(kern_n, (14 / sd_y) ** 2, kung_data.X, grid, d / sd_y, 50.0, 0.01,
                         sensitivity="paper-b", method="hall", allow_unproven=True)
target = fig1a.scale * sd_y
eps_try = (1.0, 2.0, 3.0, 5.0, 10.0)
mult = []
for eps in eps_try:
    proven = StandardDPGP(kern_n, (14 / sd_y) ** 2, kung_data.X, grid, d / sd_y, eps, 0.01,
                          sensitivity="rkhs", method="gdp")
    mult.append(proven.scale * sd_y)
    print(f"eps = {eps:>4}: multiplier {mult[-1]:6.2f} cm (Fig. 1A: {target:.2f})  "
          f"claim: {proven.claim.describe()}")
first = next((e for e, m in zip(eps_try, mult, strict=True) if m <= target), None)
display(Markdown(
    "With the exact sensitivity and a valid calibration, Fig. 1A's noise level needs a proven "
    + (f"ε of at most **{first:g}** (the first tried value that reaches it)" if first else
       "ε above the values tried")
    + " — instead of an unproven ε = 50."))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    rounded = StandardDPGP(kern_n, (13.6 / sd_y) ** 2, kung_data.X, grid, d / sd_y, 50.0, 0.01,
                           sensitivity="paper-b", method="hall", allow_unproven=True)
display(Markdown(f"With σ_noise = 13.6 cm the paper's setting gives a multiplier of "
                 f"**{rounded.scale * sd_y:.2f} cm** (paper 28.53 cm)."))

# %% [markdown]
# ## 5 · ★★★ Breaking the paper's SSE sensitivity
# The paper bounds the change of ‖e + δ‖² by ‖δ‖² and forgets 2eᵀδ. Large residuals e make the
# cross term dominate: alternate the targets between +a and −a, which a smooth GP cannot fit.

# %%
xs = np.linspace(0.0, 10.0, 24)
worst = 0.0
for a in (2.0, 3.0, 4.0):
    alt = Dataset(xs[:, None], a * np.where(np.arange(24) % 2 == 0, 1.0, -1.0))
    paper_sel = HyperparameterSelection(alt.X, default_configs(), 1.0, 1.0, n_folds=4,
                                        sensitivity=s18_sse_sensitivity)
    res = check_sensitivity(paper_sel, alt, rng, budget=150)
    ratio = res.estimate / paper_sel.sensitivity_bound()
    worst = max(worst, ratio)
    print(f"targets ±{a:g}: found {res.estimate:.2f} vs paper bound "
          f"{paper_sel.sensitivity_bound():.2f} (ratio {ratio:.2f})")
display(Markdown(
    f"The largest ratio found here is **{worst:.2f}**. The cross term 2eᵀδ grows with the "
    "residuals, but the utility clips errors at ±4d, and beyond that point larger targets only "
    "saturate the clipping: the excess does not keep growing. A factor of 2 needs residuals that "
    "stay inside the clipping range while the fold's prediction moves a lot — a harder search "
    "(try other inputs, folds and configurations)."))
