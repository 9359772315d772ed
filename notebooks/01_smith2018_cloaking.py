# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 · Smith et al. (2018): standard DP-GP, cloaking, binning and private hyperparameter selection
#
# Catalogue **S18.1–S18.5**. The inputs X are public (ages, locations); only the targets y are
# private, and neighbouring datasets differ in one target by at most *d* (outputs-only relation).
#
# **Learning objectives**
#
# 1. Why the *standard* DP-GP (a scaled GP sample path added to the posterior mean, S18 §2) needs
#    so much noise — and how its paper bound compares with the exact RKHS sensitivity.
# 2. How *cloaking* (S18 §3) shapes the noise covariance M = Σ λ_i c_i c_iᵀ to the directions a
#    single target can move the predictions, and why Δ must be the **square root** of
#    max_i c_iᵀM⁻¹c_i (the paper's Algorithm 1 omits it).
# 3. Reproduce the !Kung numbers: the standard noise scale (paper: 28.53) and the cloaking RMSE
#    (paper: 6.8 cm → 12.2 cm at (1, 0.01)-DP).
# 4. Compare cloaking with DP binning baselines (Table 1 style) and see where the noise goes in 2-D
#    (Fig. 3 style) — on clearly labelled **synthetic stand-ins**.
# 5. Select hyperparameters privately (exponential mechanism on −SSE) — and see the auditor catch
#    the paper's SSE sensitivity, which forgets a cross term.
# 6. Audit every mechanism with the kit's white-box and sensitivity auditors — including the
#    paper's own ε = 50 release on the !Kung data.
#
# **What you'll need:** notebooks 00 (DP basics) and 00b (GP primer); notation as in the
# [glossary](GLOSSARY.md) — here K = K′ + σ²I, d is the outputs-only bound and c(δ) Hall's
# multiplier. **As a 90-minute lab** work through the sections in order and skip the ones whose
# heading starts with "Optional:" (come back to them after class).

# %% tags=["parameters"]
epsilon = 1.0  # privacy of the cloaking / binning releases
delta = 0.01  # δ of the Gaussian releases (S18 uses 0.01)
d = 100.0  # outputs-only bound on one height change, cm (targets clipped to 140 ± 50 cm)
lengthscale = 25.0  # EQ lengthscale in years (S18 fn. 2)
noise = 14.0  # Gaussian noise standard deviation in cm (S18 fn. 2)
kernel_sd = 7.72  # EQ kernel standard deviation in cm (S18 fn. 2)
n_repeats = 10  # random train/test splits for the RMSE confidence intervals
n_test = 120  # test inputs on the plotting grid
n_spatial = 400  # points of the synthetic spatial stand-in
n_table = 500  # points of the synthetic journey-duration stand-in
n_folds = 3  # folds of the Table 1-style comparison
seed = 2018  # seed of the random generator
show_progress = True  # progress messages (switched off in CI)
repro_json = ""  # path of the reproduction sidecar for make notebooks (empty: none)

# %%
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # small matrices: one BLAS thread is fastest
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# %matplotlib inline
import numpy as np
from IPython.display import Markdown, display

from dpgp_audit.params import check_notebook_params
from dpgp_audit.viz import show

p = check_notebook_params(epsilon=epsilon, delta=delta, d=d, lengthscale=lengthscale, noise=noise,
                          kernel_sd=kernel_sd, n_repeats=n_repeats, n_test=n_test,
                          n_spatial=n_spatial, n_table=n_table, n_folds=n_folds, seed=seed,
                          show_progress=show_progress, repro_json=repro_json)
for name in ("d", "lengthscale", "noise", "kernel_sd"):
    if not p[name] > 0:
        raise ValueError(f"{name} must be > 0, got {p[name]!r}")
rng = np.random.default_rng(p["seed"])
print(p)

# %% [markdown]
# ## Data: 287 !Kung women, age → height
#
# The Howell census is loaded from the pinned public file (or a local mirror set by
# `DPGP_AUDIT_DATA_DIR`). If it cannot be loaded (offline, no mirror) a **synthetic stand-in**
# with the same shape is used and every number below refers to it. Heights are clipped to a public
# centre ± 50 cm, so one person can move a target by at most d = 100 cm (S18 fn. 2).

# %%
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.kung import load_kung_or_standin
from dpgp_audit.experiments.s18 import KUNG_CENTRE_CM

kung, kung_note = load_kung_or_standin(rng, females_only=True)  # CI: the real data or an error
if kung_note:
    print(kung_note)
X_age, height = kung.age, kung.height
source = ("SYNTHETIC stand-in for the !Kung data" if kung_note
          else "!Kung census (Howell), 287 females")
y = np.clip(height, KUNG_CENTRE_CM - d / 2, KUNG_CENTRE_CM + d / 2)
kung_data = Dataset(X_age[:, None], y, name=source)
print(f"{source}: n = {kung_data.n}, {int(np.sum(y != height))} heights clipped")

# %% [markdown]
# ## S18.1 — the standard DP-GP and its noise scale (S18 §2, fn. 2)
#
# The posterior mean is Σ α_i k(·, x_i) with α = K⁻¹y. Changing one target by d changes the mean
# by Σ β_i k(·, x_i), β = d K⁻¹ e_j. The paper bounds this with d·b(K⁻¹) (kernel values in
# [0, 1]) and adds c(δ)Δ/ε times a GP sample path. At the footnote-2 settings (outputs normalised,
# ε = 50, Hall's c(δ)) the paper reports a multiplier of **28.53 cm**. The Hall calibration is
# proven only for ε ≤ 1, so reproducing it needs `allow_unproven=True` — the claim is then marked
# unproven. Beside it: the exact RKHS sensitivity of the same change.

# %%
import warnings

from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.s18.standard import StandardDPGP

sd_y = float(np.std(height))  # the paper's normalisation (a statistic of y: NOT private)
grid = np.linspace(-10, 120, p["n_test"])
kern_n = EQ(lengthscale=p["lengthscale"], variance=(p["kernel_sd"] / sd_y) ** 2)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    std50 = StandardDPGP(kern_n, (p["noise"] / sd_y) ** 2, kung_data.X, grid, p["d"] / sd_y, 50.0,
                         0.01, sensitivity="paper-b", method="hall", allow_unproven=True)
print(f"paper bound d*b(K^-1) = {std50.bounds['paper-b']:.3f} (normalised units)")
print(f"exact RKHS sensitivity = {std50.bounds['rkhs']:.3f}  "
      f"(paper bound / exact = {std50.bounds['paper-b'] / std50.bounds['rkhs']:.1f}x)")
print(f"noise multiplier: ours {std50.scale * sd_y:.2f} cm, paper 28.53 cm; claim: "
      f"{std50.claim.describe()}")
ours = std50.scale * sd_y
display(Markdown(
    f"Our multiplier ({ours:.1f} cm) is {abs(1 - ours / 28.53):.0%} "
    f"{'below' if ours < 28.53 else 'above'} the paper's 28.53 cm at the stated settings. The "
    f"paper's bound d·b(K⁻¹) is **{std50.bounds['paper-b'] / std50.bounds['rkhs']:.0f}×** the "
    "exact RKHS sensitivity of the same change: b(K⁻¹) bounds the pointwise change over all "
    "targets at once, while the RKHS norm of one target's change is far smaller."))

# %% [markdown]
# At the default settings the footnote's hyperparameters look rounded: a noise standard deviation
# of about 13.6 cm instead of 14 cm gives about 28.6 cm (try it in exercise 4).
#
# Fig. 1A: the standard DP-GP at ε = 50 — fifty times outside the ε ≤ 1 range of Hall's proof.
# The normalisation above used the standard deviation of the private heights, as the paper did;
# a real release would fix it a priori.

# %%
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.viz.s18 import plot_dp_fit

kern_cm = EQ(lengthscale=p["lengthscale"], variance=p["kernel_sd"] ** 2)
centred = Dataset(kung_data.X, kung_data.y - KUNG_CENTRE_CM)
fit = ExactGP(kern_cm, p["noise"] ** 2).fit(centred.X, centred.y)
mean, var = fit.predict(grid[:, None])
norm_data = Dataset(kung_data.X, centred.y / sd_y)
samples_a = std50.sample(norm_data, 5, rng) * sd_y + KUNG_CENTRE_CM
noise_sd_a = std50.scale * sd_y * np.sqrt(np.diag(std50.Kss))
show(plot_dp_fit(kung_data.X, kung_data.y, grid, mean + KUNG_CENTRE_CM, var, samples_a, noise_sd_a,
                 title="Fig. 1A: standard DP-GP, epsilon = 50 (unproven Hall calibration)",
                 ylim=(0, 260), xlabel="age (years)", ylabel="height (cm)",
                 method="standard DP-GP"))
display(Markdown(
    f"At ε = 50 the DP noise is only about **±{np.median(noise_sd_a):.0f} cm** (one standard "
    "deviation) around the mean: the sample paths hug it. That looks like a useful release — "
    "but ε = 50 is a very weak promise, and it is not even a proven one. The next cell audits it."))

# %% [markdown]
# ### Auditing the paper's ε = 50 release
#
# Hall's calibration σ = c(δ)·Δ/ε is proven only for ε ≤ 1. What does it deliver at ε = 50?
# Two different questions have two different answers:
#
# 1. **For a query that attains its sensitivity bound** (the worst case the claim must cover —
#    e.g. a synthetic dataset built so that one change moves the release by the full Δ), the
#    release is exactly μ-GDP with μ = Δ/σ = ε/c(δ), and the privacy profile of notebook 00 gives
#    its true ε at δ = 0.01.
# 2. **On this dataset**, the white-box auditor computes the exact privacy loss of the actual
#    release for the worst generated pair of neighbours; it is governed by the *exact* RKHS
#    sensitivity, which the paper's bound overestimates.

# %%
from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.whitebox import audit_whitebox
from dpgp_audit.privacy.gdp import gdp_epsilon

c_delta = np.sqrt(2 * np.log(2 / 0.01))  # Hall's c(δ), S18 eq. 2
eps_tight = gdp_epsilon(0.01, 50.0 / c_delta)
kung_audit = audit_whitebox(std50, neighbour_pairs(norm_data, std50.claim.relation, rng))
eps_kung = kung_audit.details["epsilon_at_claimed_delta"]
print("claimed epsilon                           : 50 (Hall calibration, outside its proof)")
print(f"true epsilon, query at its bound (delta=0.01): {eps_tight:.1f}")
print(f"true epsilon on the !Kung data (white-box)   : {eps_kung:.2f}")
print("   ", kung_audit.summary())
display(Markdown(
    f"Side by side: a query at its bound would leak **ε ≈ {eps_tight:.0f}**, about "
    f"{eps_tight / 50:.0f}× the claim — the calibration really is outside its proof. On this "
    f"dataset the same release leaks only **ε ≈ {eps_kung:.1f}**, because the paper's "
    f"sensitivity bound is {std50.bounds['paper-b'] / std50.bounds['rkhs']:.0f}× loose here. "
    "For a practitioner: the claim ε = 50 is not backed by any proof, and the release is private "
    "here only by the luck of a loose bound, which no one checked. The honest way to get this "
    "noise level is to state the exact sensitivity and calibrate with a valid method "
    "(`sensitivity=\"rkhs\", method=\"gdp\"`); then the claim itself is proven (exercise 4)."))

# %% [markdown]
# ## S18.2 — cloaking (S18 §3, S18-supp Alg. 1)
#
# With the test inputs fixed in advance, the release is f_* = C y with C = K_*f K⁻¹; one target
# moves it by ±d·c_i. Cloaking picks the Gaussian noise N(0, M) of least log-determinant that still
# hides every ±d·c_i: M = Σ λ_i c_i c_iᵀ with max_i c_iᵀM⁻¹c_i ≤ 1. The kit solves this convex
# problem (a D-optimal design in disguise) with a certified optimality gap; the paper's gradient
# method is also available (`solver="paper"`). Noise lives only in span{c_i}.

# %%
from dpgp_audit.methods.s18.cloaking import CloakingGP

cloak = CloakingGP(kern_cm, p["noise"] ** 2, kung_data.X, grid, p["d"], p["epsilon"], p["delta"],
                   method="hall")
sol = cloak.mechanism.solution
print(f"certified gap of log|M|: {sol.gap:.1e}; rank of M: {sol.rank} of {len(grid)} test points")
print(f"Delta = sqrt(max c'M+c) = {cloak.mechanism.delta_m:.6f}; sigma = {cloak.mechanism.sigma:.2f}")
print("claim:", cloak.claim.describe())
samples_b = cloak.sample(centred, 5, rng) + KUNG_CENTRE_CM
noise_sd_b = np.sqrt(np.diag(cloak.cov(centred)))
show(plot_dp_fit(kung_data.X, kung_data.y, grid, mean + KUNG_CENTRE_CM, cloak.post_var, samples_b,
                 noise_sd_b, title=f"Fig. 1B: cloaking, ({p['epsilon']:g}, {p['delta']:g})-DP",
                 ylim=(0, 260), xlabel="age (years)", ylabel="height (cm)", method="cloaking"))

# %% [markdown]
# The DP noise is smallest where the data are dense and largest beyond the last (oldest) women,
# where a single outlier acts as a lever. Much further out it would shrink to zero: there the
# posterior mean reverts to the prior whatever y is.
#
# ### Standard DP-GP and cloaking at the same ε
#
# Fig. 1A and 1B are not comparable: 1A is at ε = 50, 1B at the notebook's ε. Here both methods
# release the same posterior mean at the same (ε, δ), with the same Hall calibration and the
# paper's sensitivities, on one y-axis.

# %%
import matplotlib.pyplot as plt

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Hall is refused above epsilon = 1 unless allowed
    std_same = StandardDPGP(kern_n, (p["noise"] / sd_y) ** 2, kung_data.X, grid, p["d"] / sd_y,
                            p["epsilon"], p["delta"], sensitivity="paper-b", method="hall",
                            allow_unproven=p["epsilon"] > 1)
samples_std = std_same.sample(norm_data, 5, rng) * sd_y + KUNG_CENTRE_CM
noise_sd_std = std_same.scale * sd_y * np.sqrt(np.diag(std_same.Kss))
fig, (ax_s, ax_c) = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
plot_dp_fit(kung_data.X, kung_data.y, grid, mean + KUNG_CENTRE_CM, var, samples_std,
            noise_sd_std, title=f"standard DP-GP, ({p['epsilon']:g}, {p['delta']:g})-DP",
            ax=ax_s, method="standard DP-GP", xlabel="age (years)", ylabel="height (cm)")
plot_dp_fit(kung_data.X, kung_data.y, grid, mean + KUNG_CENTRE_CM, cloak.post_var, samples_b,
            noise_sd_b, title=f"cloaking, ({p['epsilon']:g}, {p['delta']:g})-DP", ax=ax_c,
            method="cloaking", xlabel="age (years)", ylabel="height (cm)")
half = 3 * np.median(noise_sd_std)  # ±3 sd of the standard DP-GP: both panels share it
ax_s.set_ylim(KUNG_CENTRE_CM - half, KUNG_CENTRE_CM + half)
show(fig)
display(Markdown(
    f"At the same ε = {p['epsilon']:g}, the standard DP-GP's noise is about "
    f"**±{np.median(noise_sd_std):.0f} cm** everywhere (1 sd); cloaking's ranges from "
    f"**±{noise_sd_b.min():.0f} cm** to **±{noise_sd_b.max():.0f} cm** "
    f"(median ±{np.median(noise_sd_b):.0f} cm). Cloaking wins by spending noise only in the "
    "directions one target can move the predictions, instead of a whole GP sample path sized for "
    "the worst pointwise change."))

# %% [markdown]
# ### Explore: the shape of the cloaking noise
#
# `cloaking_explorer` solves the cloaking problem for one lengthscale, d and ε on a coarser test
# grid and draws the noise covariance σ²M beside one DP release. Called once here with the
# notebook's values; the next cell puts the same function on sliders (run it live). Watch how the
# lengthscale *reshapes* the covariance (it fixes the directions c_i), while d and ε only
# *rescale* it.

# %%
from functools import partial

from dpgp_audit.viz.explorers import cloaking_explorer

explore_grid = np.linspace(-10, 120, 40)
explore_cloaking = partial(cloaking_explorer, kung_data.X[:, 0], centred.y, explore_grid,
                           delta=p["delta"], kernel_variance=p["kernel_sd"] ** 2,
                           noise_variance=p["noise"] ** 2, offset=KUNG_CENTRE_CM,
                           ylim=(40, 240), rng=np.random.default_rng(p["seed"]))
show(explore_cloaking(lengthscale=p["lengthscale"], d=p["d"], epsilon=p["epsilon"]))

# %% tags=["nbval-ignore-output"]
from dpgp_audit.viz.widgets import slider_widget

slider_widget(explore_cloaking,
              {"lengthscale": (3.0, 80.0, p["lengthscale"]), "d": (10.0, 200.0, p["d"]),
               "epsilon": (0.1, 1.0, min(p["epsilon"], 1.0))},
              log=("lengthscale", "epsilon"), labels={"lengthscale": "ℓ (years)", "d": "d (cm)",
                                                      "epsilon": "ε"})
#
# **Why the square root matters.** Alg. 1's CALCDELTA returns max_i c_iᵀM⁺c_i — the *squared*
# Mahalanobis norm. At convergence it equals 1 and nothing changes; if the optimiser stops with λ
# too large by a factor s, the square gives Δ = 1/s instead of 1/√s and the noise is √s too small.
# The planted mechanism `planted/s18-delta-no-sqrt` does exactly that (audited below).

# %%
from dpgp_audit.gp.cloaking import calc_delta_paper

C = cloak.C
for s in (1.0, 4.0):
    print(f"lambda = {s:g} x optimum: paper CalcDelta {calc_delta_paper(s * sol.lam, C):.4f}, "
          f"correct sqrt {np.sqrt(calc_delta_paper(s * sol.lam, C)):.4f}")

# %% [markdown]
# ### RMSE without DP and with (ε, δ) cloaking
#
# Random 80/20 splits (public randomness); the held-out ages are the cloaking test inputs. Paper:
# 6.8 cm without DP and 12.2 cm with (1, 0.01)-DP (its split is not stated).

# %%
from dpgp_audit.experiments.s18 import cloaking_rmse

res = cloaking_rmse(kung_data, kern_cm, p["noise"] ** 2, d=p["d"], epsilon=p["epsilon"],
                    delta=p["delta"], n_repeats=p["n_repeats"], test_fraction=0.2, rng=rng,
                    centre=KUNG_CENTRE_CM)
print(f"RMSE no DP : {res.no_dp[0]:.1f} +- {res.no_dp[1]:.1f} cm   (paper 6.8 cm)")
print(f"RMSE DP    : {res.dp[0]:.1f} +- {res.dp[1]:.1f} cm   (paper 12.2 cm)  over {p['n_repeats']} splits")

# %% [markdown]
# ## Optional: Fig. 3-style map on a SYNTHETIC spatial stand-in
#
# The paper's London house prices are not shipped by any package registry; this is a **synthetic**
# stand-in (clustered locations in a 100 km square, prices in k£ thresholded to [100, 500], so
# d = 400). Circles: DP predictions on a grid (area = price), transparent where the DP noise sd is
# ≥ 40% of d.

# %%
from dpgp_audit.experiments.s18 import spatial_standin
from dpgp_audit.viz.s18 import plot_spatial_noise

sp = spatial_standin(p["n_spatial"], rng)
gx = np.linspace(5, 95, 9)
Gs = np.array([[a, b] for a in gx for b in gx])
sp_centre = 300.0  # public prior mean (k£)
sp_mech = CloakingGP(EQ(lengthscale=15.0, variance=100.0**2), 100.0**2, sp.X, Gs, 400.0,
                     p["epsilon"], p["delta"], method="analytic")
sp_c = Dataset(sp.X, sp.y - sp_centre)
pred_sp = sp_mech.sample(sp_c, 1, rng)[0] + sp_centre
sd_sp = np.sqrt(np.diag(sp_mech.cov(sp_c)))
print(f"DP noise sd on the grid: min {sd_sp.min():.1f}, median {np.median(sd_sp):.1f}, max {sd_sp.max():.1f} k£")
show(plot_spatial_noise(sp.X, Gs, pred_sp, sd_sp, 400.0, title="SYNTHETIC stand-in: DP predictions",
                        xlabel="east (km)", ylabel="north (km)"))

# %% [markdown]
# ## Optional: Table 1-style comparison on a SYNTHETIC journey-duration stand-in
#
# Citi Bike journeys are not available here either: a **synthetic** 2-D stand-in (durations in s,
# thresholded at 2000 s, d = 2000) replaces the 4-D data. Cloaking over lengthscales vs simple and
# integral binning over bin counts (Laplace noise, S18 §4), at no DP and ε ∈ {1, 0.5, 0.2}
# (cloaking uses the analytic Gaussian calibration; δ as above). Mean RMSE ± 95% interval over
# folds. With few training points the DP noise dominates more than in the paper's 4 900-journey
# folds.

# %%
from dpgp_audit.experiments.s18 import journey_standin, table1_comparison

jd = journey_standin(p["n_table"], rng)
eps_list = [None, 1.0, 0.5, 0.2]
tab = table1_comparison(jd, lengthscales=[0.3, 0.1], bins_per_dim=[3, 6], epsilons=eps_list,
                        d=2000.0, delta=p["delta"], n_folds=p["n_folds"], n_test=50,
                        kernel_variance=300.0**2, noise_variance=300.0**2, rng=rng, centre=700.0)
print(f"{'method':<18}{'param':>7}" + "".join(f"{('no DP' if e is None else f'eps={e:g}'):>16}" for e in eps_list))
for method, params in (("cloaking", [0.3, 0.1]), ("integral binning", [3, 6]),
                       ("simple binning", [3, 6])):
    for q in params:
        row = "".join(f"{tab[(method, q, e)][0]:>9.0f} +-{tab[(method, q, e)][1]:>4.0f}" for e in eps_list)
        print(f"{method:<18}{q:>7g}{row}")

# %% [markdown]
# ## S18.4 — private hyperparameter selection
#
# The exponential mechanism picks a configuration with probability ∝ exp(ε u / (2Δu)),
# u = −(K-fold CV SSE, errors clipped to ±4d). We add to each configuration's SSE the *expected*
# SSE of its cloaking noise (a public constant), so stronger regression privacy favours longer
# lengthscales (S18-supp Fig. 4). The sensitivity used is the corrected clipped-SSE bound (see the
# audit section for why the paper's bound fails).

# %%
from dpgp_audit.experiments.s18 import selection_heatmap
from dpgp_audit.viz.s18 import plot_selection_heatmap

lengthscales = [3.0, 9.0, 27.0, 81.0]
reg_eps = [None, 1.0, 0.2]
probs, offsets = selection_heatmap(kung_data, lengthscales, p["noise"] ** 2, p["kernel_sd"] ** 2,
                                   d=p["d"], regression_epsilons=reg_eps, delta=p["delta"],
                                   selection_epsilon=p["epsilon"], n_folds=5,
                                   centre=KUNG_CENTRE_CM)
rows = ["no DP" if e is None else f"eps={e:g}" for e in reg_eps]
for r, pr in zip(rows, probs, strict=True):
    print(f"{r:>8}: " + "  ".join(f"l={l:g}: {q:.2f}" for l, q in zip(lengthscales, pr, strict=True)))
show(plot_selection_heatmap(probs, rows, [f"{l:g}" for l in lengthscales],
                            title="P(select lengthscale) vs regression privacy"))

# %%
# RMSE with the best (non-private) choice vs the expected RMSE under private selection
rmse_by_l = []
for l in lengthscales:
    r = cloaking_rmse(kung_data, EQ(l, p["kernel_sd"] ** 2), p["noise"] ** 2, d=p["d"],
                      epsilon=p["epsilon"], delta=p["delta"], n_repeats=max(2, p["n_repeats"] // 3),
                      test_fraction=0.2, rng=rng, centre=KUNG_CENTRE_CM)
    rmse_by_l.append(r.dp[0])
rmse_by_l = np.array(rmse_by_l)
print("DP RMSE per lengthscale:", np.round(rmse_by_l, 1))
print(f"best lengthscale (no private selection): {rmse_by_l.min():.1f} cm; expected under the "
      f"exponential mechanism (eps={p['epsilon']:g}): {float(probs[1] @ rmse_by_l):.1f} cm "
      "(paper: 14.3 -> 17.4 cm with its 2-parameter grid)")

# %% [markdown]
# ## Audits: every mechanism against its claim
#
# * **white-box** (exact privacy profile of a Gaussian release over adversarial neighbour pairs);
# * **sensitivity** (search for a neighbour pair whose query change exceeds the claimed bound).
#
# "No evidence" is not a proof of privacy; a violation is a definitive counterexample.

# %%
from dpgp_audit import catalogue as registry
from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.sensitivity import check_sensitivity
from dpgp_audit.audit.whitebox import audit_whitebox

for mid in ["S18.1/standard", "S18.1/standard-rkhs", "S18.2/cloaking", "S18.3/binning-laplace",
            "S18.3/binning-gaussian", "S18.4/selection", "planted/s18-delta-no-sqrt",
            "planted/s18-pinv-drops-direction", "planted/s18-supnorm"]:
    mech, data0 = registry.get(mid).make()
    print(f"--- {mid}: {mech.claim.describe()}")
    if hasattr(mech, "cov"):
        print("   ", audit_whitebox(mech, neighbour_pairs(data0, mech.claim.relation, rng)).summary())
    if hasattr(mech, "sensitivity_bound"):
        print("   ", check_sensitivity(mech, data0, rng, budget=100).summary())

# %% [markdown]
# All three planted S18 pitfalls are flagged by the white-box auditor: the missing square root
# (with an optimiser that stopped at 4× the optimal weights) halves the noise; the truncated
# pseudo-inverse leaves a direction of the mean change with no noise at all (infinite privacy
# loss); the sup-norm sensitivity understates the RKHS/Mahalanobis change.
#
# The sensitivity checker flags two of the three as well. For the missing square root, one target
# moves the release by 0.5<!--out--> in the mechanism's own Mahalanobis norm against a claimed
# 0.25<!--out--> (the square of the right value); for the truncated pseudo-inverse the change has
# norm inf<!--out-->, because it leaves the range of M. Only the sup-norm bug passes its
# sensitivity check: its query and its bound agree *in the sup norm it chose* — the error is the
# choice of norm, and only the white-box auditor's exact privacy profile exposes it.
#
# **The paper's SSE sensitivity.** S18-supp bounds a training fold's SSE change by
# d² max_j ‖c_jk‖², the change of ‖δ‖² alone; but ‖e + δ‖² − ‖e‖² = 2eᵀδ + ‖δ‖², and the cross
# term dominates when the errors are not small. The sensitivity checker finds a counterexample:

# %%
from dpgp_audit.methods.s18.hyperparameter_selection import (
    HyperparameterSelection,
    default_configs,
    s18_sse_sensitivity,
)

xs = np.linspace(0.0, 10.0, 24)
alt = Dataset(xs[:, None], 2.0 * np.where(np.arange(24) % 2 == 0, 1.0, -1.0))
paper_sel = HyperparameterSelection(alt.X, default_configs(), 1.0, 1.0, n_folds=4,
                                    sensitivity=s18_sse_sensitivity)
valid_sel = HyperparameterSelection(alt.X, default_configs(), 1.0, 1.0, n_folds=4)
print("paper bound :", check_sensitivity(paper_sel, alt, rng, budget=150).summary())
print("valid bound :", check_sensitivity(valid_sel, alt, rng, budget=150).summary())

# %% [markdown]
# ## Optional: S18.5 — Varah's bound (inputs private too)
#
# For a strictly diagonally dominant J, ‖J⁻¹‖∞ ≤ max_i 1/(|J_ii| − Σ_{j≠i}|J_ij|): a bound on the
# standard DP-GP sensitivity that does not depend on where the inputs are.

# %%
from dpgp_audit.gp.varah import is_strictly_diagonally_dominant, varah_bound
from dpgp_audit.methods.s18.standard import inverse_inf_norm

xs5 = np.array([[0.0], [3.0], [6.0], [9.0], [12.0]])
J = EQ(lengthscale=1.5)(xs5) + 0.5 * np.eye(5)
print("strictly diagonally dominant:", is_strictly_diagonally_dominant(J))
print(f"||J^-1||_inf = {inverse_inf_norm(np.linalg.inv(J)):.4f} <= Varah {varah_bound(J):.4f}")
try:
    varah_bound(EQ(lengthscale=5.0)(xs5))
except ValueError as err:
    print("expected error:", err)

# %% [markdown]
# ## Reproduction: S18's !Kung numbers, gap by gap
#
# S18 prints three numbers for the 287 women: the standard mechanism's multiplier
# (28.53 at the footnote-2 settings) and the cloaking RMSE without DP (6.8 cm) and with
# (1, 0.01)-DP (12.2 cm). At the settings as printed the kit gets ≈ 26.9 and ≈ 8.5 cm.
# Rather than guess, we vary one choice at a time and see which one lands on the
# paper's value.
#
# **The multiplier.** It scales like 1/σ_n² (a larger noise shrinks K⁻¹), and fn. 2 says
# its hyperparameters only *look* precise. Which noise standard deviation gives 28.53?

# %%
from dpgp_audit.experiments import s18 as s18x
from dpgp_audit.experiments.reproduction import ReproRow, paired_sign_test, write_sidecar

ages = kung_data.X[:, 0]
mult_printed = s18x.footnote2_multiplier(ages, sd_y, noise_sd=14.0)
ns_paper = s18x.noise_sd_for_multiplier(s18x.S18_PAPER["multiplier"], ages, sd_y)
for ns in (13.5, ns_paper, 14.0, 14.49):
    print(f"noise sd {ns:6.3f} cm -> multiplier {s18x.footnote2_multiplier(ages, sd_y, noise_sd=ns):6.2f} cm")
print(f"28.53 needs a noise sd of {ns_paper:.2f} cm, which prints as 14 cm to two significant "
      f"figures: the footnote's value is rounded")

# %% [markdown]
# **The RMSE.** The split, the test points and the noise are candidates. The table uses
# the same splits (and the same normal draws) for every reading, so its rows differ only
# by the choice named. "in-sample" scores the predictions at the training women
# themselves (S18 does not say which women it scores).

# %%
choices = [s18x.KungChoice("as printed (noise 14 cm), held-out 20%"),
           s18x.KungChoice("noise 13.6 cm (fn. 2 rounding)", noise_sd=13.6),
           s18x.KungChoice("noise 7 cm, held-out 20%", noise_sd=7.0),
           s18x.KungChoice("as printed, in-sample", in_sample=True),
           s18x.KungChoice("noise 8 cm, in-sample", noise_sd=8.0, in_sample=True)]
n_rep_repro = max(3, p["n_repeats"])
by_choice = s18x.kung_rmse_choices(kung_data, choices, d=p["d"], epsilon=1.0, delta=0.01,
                                   n_repeats=n_rep_repro, test_fraction=0.2, rng=rng)
print(f"{'reading':42s} {'RMSE no DP':>14s} {'RMSE (1, 0.01)-DP':>20s}   ({n_rep_repro} splits)")
for label, r in by_choice.items():
    print(f"{label:42s} {r.no_dp[0]:7.2f} ± {r.no_dp[1]:4.2f} {r.dp[0]:12.2f} ± {r.dp[1]:4.2f}")
try:  # no DP here, so 20 splits cost little even in CI
    ns_68 = s18x.noise_sd_for_rmse(s18x.S18_PAPER["rmse_no_dp"], kung_data,
                                   n_repeats=max(20, n_rep_repro), test_fraction=0.2, rng=rng)
except ValueError as err:  # e.g. the offline synthetic stand-in
    ns_68 = float("nan")
    print(err)
print(f"held-out no-DP RMSE of 6.8 cm needs a noise sd of {ns_68:.1f} cm (20+ splits)")

# %% [markdown]
# What the table shows: with the printed noise (14 cm) the no-DP RMSE cannot reach
# 6.8 cm under any split — even scored in-sample it stays near 8 cm — so the split is not
# the cause. A noise of about 7 cm (half the printed 14 cm; a maximum-likelihood fit with
# the lengthscale fixed at 25 years gives ≈ 5.5 cm) lands on 6.8. Lowering the noise
# raises the DP noise, so the DP RMSE moves the other way; S18's 12.2 cm lies inside the
# kit's interval at the printed settings, and within about one interval of the held-out
# 7 cm reading (its spread is wide: Hall's calibration with a few outlying women). The
# multiplier and the RMSE thus point to different noise values (13.6 vs ≈ 7 cm): the
# footnote's σ_n cannot be the one behind both numbers. The DP RMSE is heavy-tailed, so
# its interval shrinks slowly; the full-scale run uses 50 splits.
#
# **S18's qualitative claim**: cloaking needs far less noise than the standard mechanism
# of §2. Paired test: on each split both releases share the GP mean, so their expected
# RMSEs differ only by the noise each adds; a one-sided sign test over ≥ 8 splits can
# reach p < 0.01 only if cloaking wins (almost) every split.

# %% tags=["claim"]
pairs = s18x.standard_vs_cloaking_rmse(kung_data, lengthscale=25.0, kernel_sd=7.72,
                                       noise_sd=14.0, d=p["d"], epsilon=p["epsilon"],
                                       delta=p["delta"], n_repeats=max(8, p["n_repeats"]),
                                       test_fraction=0.2, rng=rng)
p_cloak = paired_sign_test(pairs["cloaking"], pairs["standard"])
print(f"expected RMSE, standard (paper bound): {pairs['standard'].mean():6.1f} cm; cloaking: "
      f"{pairs['cloaking'].mean():5.1f} cm; cloaking better on "
      f"{int(np.sum(pairs['cloaking'] < pairs['standard']))}/{pairs['cloaking'].size} splits, "
      f"sign test p = {p_cloak:.4f}")
assert p_cloak < 0.01, "S18's claim (cloaking beats the standard DP-GP) not shown at this size"

# %%
printed, seven = by_choice[choices[0].label], by_choice[choices[2].label]
in_sample = by_choice[choices[3].label]
setting = f"{n_rep_repro} random 80/20 splits, (1, 0.01)-DP, Hall calibration"
repro_rows = [
    ReproRow("S18", "§2 noise multiplier, fn. 2 settings (cm)", 28.53, mult_printed, None,
             "fn. 2 as printed (noise sd 14 cm, ε = 50)",
             f"fn. 2 rounds the noise sd: {ns_paper:.2f} cm (prints as 14) gives 28.53"
             if 13.5 <= ns_paper < 14.5 else ""),
    ReproRow("S18", "!Kung RMSE without DP (cm)", 6.8, *printed.no_dp, setting + ", noise 14 cm",
             f"printed noise sd too large: >= {in_sample.no_dp[0]:.1f} cm even in-sample; "
             f"noise {ns_68:.1f} cm gives 6.8 (next row)"),
    ReproRow("S18", "!Kung RMSE without DP (cm), noise 7 cm", 6.8, *seven.no_dp,
             setting + ", noise 7 cm", "noise sd is the cause (row above)"),
    ReproRow("S18", "!Kung RMSE with (1, 0.01)-DP (cm)", 12.2, *printed.dp,
             setting + ", noise 14 cm", ""),
    ReproRow("S18", "!Kung RMSE with (1, 0.01)-DP (cm), noise 7 cm", 12.2, *seven.dp,
             setting + ", noise 7 cm",
             "less noise, more DP noise: no single noise sd gives both 6.8 and 12.2 held-out"),
    ReproRow("S18", "cloaking beats the standard DP-GP (sign-test p)", 0.01, p_cloak, None,
             f"{pairs['cloaking'].size} paired splits, ε = {p['epsilon']:g}", "",
             bound="at_most"),
]
if repro_json:
    write_sidecar(repro_json, "01_smith2018_cloaking", f"n_repeats={p['n_repeats']}",
                  repro_rows)

# %% [markdown]
# ## Exercises
#
# Difficulty: ★ check your understanding · ★★ apply · ★★★ explore. Solutions:
# `answers/01_smith2018_cloaking_answers.ipynb` — try first.
#
# 1. ★ Lower `epsilon` to 0.2 and rerun the cloaking RMSE. How does the DP RMSE scale with 1/ε?
# 2. ★★ The test grid already runs to age 120. Append 30 test inputs at ages 121–150 to `grid`
#    and rebuild `CloakingGP`. Does the noise at the original 120 test points change? (Cloaking's
#    noise depends on the *whole* test set.)
# 3. ★★ Use `solver="paper"` in `CloakingGP` (pass `solver_rng=rng`). Does Alg. 1 converge on the
#    !Kung problem? Compare its log|M| with the certified optimum interval.
# 4. ★★ In the standard DP-GP, set `sensitivity="rkhs"` and `method="gdp"`: how large must ε be
#    for Fig. 1A's noise level (±8 cm) to be reached with a *proven* claim? And does a noise
#    standard deviation of 13.6 cm reproduce the paper's 28.53 cm multiplier?
# 5. ★★★ Construct a dataset for which the paper's SSE sensitivity fails. How large a factor
#    can you reach?
#
# <details><summary>Hints</summary>
#
# 1. The Gaussian noise scale is c(δ)Δd/ε, so the DP part of the error grows like 1/ε; the RMSE
#    also contains the non-DP error, so it grows more slowly.
# 2. `np.concatenate([grid, np.linspace(121, 150, 30)])`; compare `np.diag(cov)[:120]`.
# 3. Look at `mechanism.solution` (`converged`, `logdet`, `gap`, `lower_bound`).
# 4. μ = Δ_rkhs/σ for GDP; search ε with `gdp_epsilon` or simply try a few values.
# 5. Large errors e make the cross term 2eᵀδ dominate; alternate targets of ±2d.
# </details>
