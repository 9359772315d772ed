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
# # 01 · Smith et al. (2018): the standard DP-GP, cloaking and private hyperparameter selection
#
# Catalogue **S18.1–S18.5**. The inputs X are public (ages, locations); only the targets y are
# private, and neighbouring datasets differ in one target by at most *d* (the outputs-only
# relation of the [glossary](GLOSSARY.md)).
#
# **Learning objectives** — after the core of this lab you can
#
# 1. explain why the *standard* DP-GP (a scaled GP sample path added to the posterior mean,
#    S18 §2) needs so much noise, and compute the paper's sensitivity bound b(K⁻¹) yourself;
# 2. explain how *cloaking* (S18 §3) shapes the noise covariance M to the directions in which
#    one target can move the predictions, and compute its sensitivity Δ — with the square root
#    that S18-supp's Algorithm 1 leaves out;
# 3. reproduce the !Kung cloaking RMSE of S18 §3 and say how far the kit lands from it;
# 4. audit every S18 mechanism against its claim, and build a pair of neighbouring datasets on
#    which the paper's sensitivity for private hyperparameter selection fails.
#
# **What you'll need:** notebooks 00 (DP basics) and 00b (GP primer). Notation as in the
# glossary: K = K′ + σ_n²I is the training covariance with its noise, K′ without it; d is the
# outputs-only bound; $c(\delta) = \sqrt{2\ln(2/\delta)}$ is Hall et al.'s multiplier (S18 eq. 2).
#
# **How to use it:** the core runs from here to the end of "Exercises" (the three exercises
# that ask you to write code are the heart of the lab). Everything after the heading
# "Appendix" is optional: the full reproductions, the numbers behind each comparison with the
# paper, and bookkeeping. Run All executes everything in a couple of minutes.

# %% tags=["parameters"]
epsilon = 1.0  # privacy of the cloaking / binning releases
delta = 0.01  # δ of the Gaussian releases (S18 uses 0.01)
d = 100.0  # outputs-only bound on one height change, cm (targets clipped to 140 ± 50 cm)
lengthscale = 25.0  # EQ lengthscale in years (S18 fn. 2)
noise = 14.0  # Gaussian noise standard deviation in cm (S18 fn. 2)
kernel_sd = 7.72  # EQ kernel standard deviation in cm (S18 fn. 2)
n_repeats = 10  # random train/test splits for the RMSE confidence intervals
n_test = 120  # test inputs on the plotting grid
n_spatial = 400  # points of the synthetic spatial stand-in (appendix)
n_table = 1000  # journeys of the synthetic Table 1 stand-in (appendix)
n_folds = 3  # folds of the Table 1 comparison (appendix)
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
at_paper_settings = (p["epsilon"], p["delta"], p["d"], p["lengthscale"], p["noise"],
                     p["kernel_sd"]) == (1.0, 0.01, 100.0, 25.0, 14.0, 7.72)
print(p)

# %% [markdown]
# ## Data: the !Kung women, age → height
#
# The Howell census is loaded from the pinned public file (or a local mirror set by
# `DPGP_AUDIT_DATA_DIR`). If it cannot be loaded (offline, no mirror) a **synthetic stand-in**
# with the same shape is used and every number below refers to it. Heights are clipped to a
# public centre ± d/2, so one person can move a target by at most d (S18's footnote to §2 uses
# $d = 100$ cm).

# %%
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.kung import load_kung_or_standin
from dpgp_audit.experiments.s18 import KUNG_CENTRE_CM

kung, kung_note = load_kung_or_standin(rng, females_only=True)  # CI: the real data or an error
if kung_note:
    print(kung_note)
X_age, height = kung.age, kung.height
source = ("SYNTHETIC stand-in for the !Kung data" if kung_note
          else f"!Kung census (Howell), {kung.age.size} females")
y = np.clip(height, KUNG_CENTRE_CM - d / 2, KUNG_CENTRE_CM + d / 2)
kung_data = Dataset(X_age[:, None], y, name=source)
print(f"{source}: n = {kung_data.n}, {int(np.sum(y != height))} heights clipped")

# %% [markdown]
# ## S18.1 — the standard DP-GP and its noise scale (S18 §2)
#
# The posterior mean is $\bar f(x) = \sum_i \alpha_i k(x, x_i)$ with $\alpha = K^{-1}y$.
# Changing target $j$ by $d$ changes the mean by $\sum_i \beta_i k(x, x_i)$ with
# $\beta = d\,K^{-1}e_j$, the $j$-th column of $K^{-1}$ scaled by $d$. Hall et al.'s mechanism
# adds $c(\delta)\Delta/\varepsilon$ times a sample path of the GP prior, where $\Delta$ bounds
# this change in the RKHS norm of the kernel (S18 eqs. 1–3).
#
# **The paper's bound b(K⁻¹).** If the kernel's values lie in $[0, 1]$, the change at any $x$
# is largest when the positive entries of $\beta$ meet kernel values of $1$ and the negative ones
# values of $0$ (or the reverse). So S18 bounds it by $d\,b(K^{-1})$, where
#
# $$b(K^{-1}) = \max_j \max\Big(\sum_i \max([K^{-1}]_{ij}, 0),\ \sum_i \max(-[K^{-1}]_{ij}, 0)\Big),$$
#
# the largest positive mass or negative mass of any column of $K^{-1}$ (the sign of the change
# is unknown). You will write it in exercise 1.2. The kit also computes the **exact RKHS
# sensitivity** of the same change, $d \max_j \sqrt{e_j^\top K^{-1} K' K^{-1} e_j}$ (notebook
# 00b). The paper uses b(K⁻¹) *as if* it were the RKHS sensitivity.
#
# At the settings of S18's footnote (outputs normalised to unit standard deviation, $\varepsilon = 50$,
# Hall's c(δ)), S18 reports a multiplier of 28.53<!--paper--> for its sample paths (S18 §2). Hall's
# calibration is proven only for $\varepsilon \le 1$, so reproducing it needs
# `allow_unproven=True`, and the claim is then marked unproven.

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
ratio_b = std50.bounds["paper-b"] / std50.bounds["rkhs"]
ours = std50.scale * sd_y
print(f"paper bound d*b(K^-1) = {std50.bounds['paper-b']:.3f} (normalised units)")
print(f"exact RKHS sensitivity = {std50.bounds['rkhs']:.3f}  (paper bound / exact = {ratio_b:.1f}x)")
print(f"noise multiplier: ours {ours:.2f} cm, paper 28.53 cm; claim: {std50.claim.describe()}")
display(Markdown(
    f"Our multiplier ({ours:.1f} cm) is {abs(1 - ours / 28.53):.0%} "
    f"{'below' if ours < 28.53 else 'above'} the paper's 28.53 at the stated settings "
    "(Appendix A finds the cause: the footnote rounds the noise). The paper's bound "
    f"d·b(K⁻¹) is **{ratio_b:.0f}×** the exact RKHS sensitivity of the same change: b(K⁻¹) "
    "bounds the change at every input at once, while the RKHS norm of one target's change "
    "is far smaller."))

# %% [markdown]
# ### Fig. 1A: the standard DP-GP at $\varepsilon = 50$
#
# S18 writes that in its Fig. 1A, even at this large ε, the DP noise *overwhelms* the function
# (the figure's caption says $\varepsilon = 100$, the footnote $\varepsilon = 50$). Here is the
# same release at the footnote's settings. The normalisation uses the standard deviation of the
# private heights, as the paper did; a real release would fix it in advance.

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
    f"Here the DP noise has a standard deviation of only about **±{np.median(noise_sd_a):.0f} "
    "cm** and the sample paths stay close to the mean: **the kit does not reproduce the "
    "paper's description** of Fig. 1A. The noise is the multiplier times a sample path of the "
    f"model's own prior, whose standard deviation is the kernel's {p['kernel_sd']:g} cm, as "
    "Hall et al.'s mechanism prescribes for the kernel in which Δ is measured. Had the paths "
    "been drawn with unit variance in the normalised units, the noise standard deviation "
    f"would be the multiplier itself, about ±{ours:.0f} cm, and the paths would wander far "
    "from the mean — one reading that matches S18's words; the paper does not say which it "
    "drew. Either way this is not a release to use: ε = 50 is a very weak promise, and here "
    "not even a proven one. The next cell audits it."))

# %% [markdown]
# ### Auditing the paper's $\varepsilon = 50$ release
#
# Hall's calibration $\sigma = c(\delta)\Delta/\varepsilon$ is proven only for $\varepsilon \le
# 1$. What does it deliver at $\varepsilon = 50$? Two different questions have two different
# answers:
#
# 1. **For a query that attains its sensitivity bound** (the worst case the claim must cover —
#    e.g. a synthetic dataset built so that one change moves the release by the full Δ), the
#    release is exactly μ-GDP with $\mu = \Delta/\sigma = \varepsilon/c(\delta)$, and the privacy
#    profile of notebook 00 gives its true ε at $\delta = 0.01$.
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
    f"sensitivity bound is {ratio_b:.0f}× loose here. For a practitioner: the claim ε = 50 is "
    "not backed by any proof, and the release is private here only by the luck of a loose "
    "bound, which no one checked. The honest way to get this noise level is to state the exact "
    "sensitivity and calibrate with a valid method (`sensitivity=\"rkhs\", method=\"gdp\"`); "
    "then the claim itself is proven (exercise 7)."))

# %% [markdown]
# ## S18.2 — cloaking (S18 §3, S18-supp Alg. 1)
#
# With the test inputs fixed in advance, the release is $f_* = Cy$ with $C = K_{*f}K^{-1}$;
# one target moves it by $\pm d\,c_i$, where $c_i$ is the $i$-th column of $C$. Cloaking adds
# Gaussian noise $\sigma Z$, $Z \sim N(0, M)$. Its sensitivity is the Mahalanobis length of the
# worst column (S18 eqs. 6 and 9):
#
# $$\Delta = d \max_i \sqrt{c_i^\top M^{-1} c_i}, \qquad \sigma = c(\delta)\,\Delta/\varepsilon .$$
#
# Cloaking picks the $M$ of least log-determinant among $M = \sum_i \lambda_i c_i c_i^\top$
# with $\max_i c_i^\top M^{-1} c_i \le 1$. The kit solves this convex problem (a D-optimal
# design in disguise) with a certified optimality gap; the paper's gradient method is also
# available (`solver="paper"`). The noise lives only in the span of the $c_i$. You will write
# Δ in exercise 1.1.

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
# **Why the square root matters.** Algorithm 1 of S18-supp computes Δ with a routine CALCDELTA
# that returns $\max_i c_i^\top M^{+} c_i$ — the *squared* Mahalanobis length (S18 eq. 9 drops
# the root as well). At the optimum this maximum equals one and the square changes nothing. If
# the optimiser stops with weights λ too large by a factor $s$, the square gives $\Delta = 1/s$
# instead of $1/\sqrt{s}$, and the noise is $\sqrt{s}$ times too small. The next cell shows it
# on the !Kung problem; the planted (deliberately wrong) mechanism `planted/s18-delta-no-sqrt`
# does exactly this and is audited below.

# %%
from dpgp_audit.gp.cloaking import calc_delta_paper

C = cloak.C
for s in (1.0, 4.0):
    print(f"lambda = {s:g} x optimum: paper CalcDelta {calc_delta_paper(s * sol.lam, C):.4f}, "
          f"correct sqrt {np.sqrt(calc_delta_paper(s * sol.lam, C)):.4f}")

# %% [markdown]
# ### Standard DP-GP and cloaking at the same ε
#
# Fig. 1A and Fig. 1B are not comparable: Fig. 1A is at $\varepsilon = 50$, Fig. 1B at the notebook's ε. Here
# both methods release the same posterior mean at the same (ε, δ), with the same Hall
# calibration and the paper's sensitivities, on one y-axis.

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
fig.suptitle("the same posterior mean released by both mechanisms, one y-axis")
show(fig)
display(Markdown(
    f"At the same ε = {p['epsilon']:g}, the standard DP-GP's noise is about "
    f"**±{np.median(noise_sd_std):.0f} cm** everywhere (1 sd); cloaking's ranges from "
    f"**±{noise_sd_b.min():.0f} cm** to **±{noise_sd_b.max():.0f} cm** "
    f"(median ±{np.median(noise_sd_b):.0f} cm). Cloaking wins by spending noise only in the "
    "directions one target can move the predictions, instead of a whole GP sample path sized for "
    "the worst change at every input."))

# %% [markdown]
# ### Explore: the shape of the cloaking noise
#
# `cloaking_explorer` solves the cloaking problem for one lengthscale, d and ε on a coarser test
# grid and draws the noise covariance σ²M beside one DP release. Called once here with the
# notebook's values; the next cell puts the same function on sliders (run it live). Watch how the
# lengthscale *reshapes* the covariance (it fixes the directions $c_i$), while d and ε only
# *rescale* it.

# %%
from functools import partial

from dpgp_audit.viz.explorers import cloaking_explorer

explore_grid = np.linspace(-10, 120, 40)
explore_cloaking = partial(cloaking_explorer, kung_data.X[:, 0], centred.y, explore_grid,
                           delta=p["delta"], kernel_variance=p["kernel_sd"] ** 2,
                           noise_variance=p["noise"] ** 2, offset=KUNG_CENTRE_CM,
                           ylim=(40, 240), rng=np.random.default_rng(p["seed"]),
                           xlabel="age (years)", ylabel="height (cm)", unit="cm")
show(explore_cloaking(lengthscale=p["lengthscale"], d=p["d"], epsilon=p["epsilon"]))

# %% tags=["nbval-ignore-output"]
from dpgp_audit.viz.widgets import slider_widget

slider_widget(explore_cloaking,
              {"lengthscale": (3.0, 80.0, p["lengthscale"]), "d": (10.0, 200.0, p["d"]),
               "epsilon": (0.1, 1.0, min(p["epsilon"], 1.0))},
              log=("lengthscale", "epsilon"), labels={"lengthscale": "ℓ (years)", "d": "d (cm)",
                                                      "epsilon": "ε"})

# %% [markdown]
# ## Reproduction: the !Kung RMSE with and without cloaking (S18 §3)
#
# Random splits, $80/20$ (public randomness); the held-out ages are the cloaking test inputs. S18
# reports an RMSE of 6.8<!--paper--> cm without DP and 12.2<!--paper--> cm with cloaking at
# $(\varepsilon, \delta) = (1, 0.01)$; the paper does not say how it split the women.

# %%
from dpgp_audit.experiments.s18 import cloaking_rmse

res = cloaking_rmse(kung_data, kern_cm, p["noise"] ** 2, d=p["d"], epsilon=p["epsilon"],
                    delta=p["delta"], n_repeats=p["n_repeats"], test_fraction=0.2, rng=rng,
                    centre=KUNG_CENTRE_CM)
print(f"RMSE no DP : {res.no_dp[0]:.1f} +- {res.no_dp[1]:.1f} cm   (paper 6.8 cm)")
print(f"RMSE DP    : {res.dp[0]:.1f} +- {res.dp[1]:.1f} cm   (paper 12.2 cm)  over {p['n_repeats']} splits")
if at_paper_settings:
    inside = abs(res.dp[0] - 12.2) <= res.dp[1]
    display(Markdown(
        f"Over {p['n_repeats']} splits the kit's RMSE is **{res.no_dp[0]:.1f} ± "
        f"{res.no_dp[1]:.1f} cm** without DP — {res.no_dp[0] - 6.8:+.1f} cm from S18's 6.8 cm, "
        f"well outside the interval — and **{res.dp[0]:.1f} ± {res.dp[1]:.1f} cm** with "
        f"cloaking, which {'contains' if inside else 'misses'} S18's 12.2 cm. Appendix A "
        "traces the no-DP gap to the footnote's noise level and shows that no single noise "
        "level explains both of the paper's numbers."))
else:
    display(Markdown("The paper's numbers are at ε = 1, δ = 0.01, d = 100 cm and the footnote's "
                     "hyperparameters; with the parameters you chose, compare the two rows "
                     "with each other, not with the paper."))

# %% [markdown]
# ## S18.4 — private hyperparameter selection
#
# The exponential mechanism picks a configuration with probability
# $\propto \exp(\varepsilon u / (2\Delta u))$, where the utility $u$ is minus the K-fold
# cross-validated sum of squared errors (SSE), errors clipped to $\pm 4d$, and $\Delta u$ is the
# utility's sensitivity. We add to each configuration's SSE the *expected* SSE of its cloaking
# noise (a public constant), so stronger regression privacy favours longer lengthscales
# (S18-supp Fig. 4). The sensitivity used is the corrected clipped-SSE bound (the audit section
# shows why the paper's bound fails).

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
                            title="P(select lengthscale) vs regression privacy",
                            xlabel="lengthscale (years)",
                            ylabel="privacy of the regression release"))
display(Markdown(
    f"With the regression released at ε = {reg_eps[-1]:g} the most likely lengthscale is "
    f"**{lengthscales[int(np.argmax(probs[-1]))]:g} years** (probability "
    f"{probs[-1].max():.2f}); without DP noise in the utility it is "
    f"{lengthscales[int(np.argmax(probs[0]))]:g} years ({probs[0].max():.2f}). Appendix F "
    "measures what the private choice costs in RMSE."))

# %% [markdown]
# ## Audits: every mechanism against its claim
#
# * **white-box** (the exact privacy profile of a Gaussian release over adversarial pairs of
#   neighbours);
# * **sensitivity** (a search for a pair of neighbours whose query change exceeds the claimed
#   bound).
#
# Besides the S18 mechanisms, the kit ships *planted* mechanisms: deliberately wrong copies,
# each with one of the paper's pitfalls, so that you can see each auditor catch it. "No
# evidence" is not a proof of privacy; a violation is a definitive counterexample.

# %%
from dpgp_audit import catalogue as registry
from dpgp_audit.audit.sensitivity import check_sensitivity

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
# (with an optimiser that stopped at four times the optimal weights) halves the noise; the
# truncated pseudo-inverse leaves a direction of the mean change with no noise at all (an
# infinite privacy loss); the sup-norm sensitivity understates the RKHS (Mahalanobis) change.
#
# The sensitivity checker flags two of the three as well. For the missing square root, one
# target moves the release by 0.5<!--out--> in the mechanism's own Mahalanobis norm against a
# claimed 0.25<!--out--> (the square of the right value); for the truncated pseudo-inverse the
# change has norm inf<!--out-->, because it leaves the range of M. Only the sup-norm bug passes
# its sensitivity check: its query and its bound agree *in the sup norm it chose* — the error is
# the choice of norm, and only the white-box auditor's exact privacy profile exposes it.
#
# **The paper's SSE sensitivity.** S18-supp bounds how much one target can change a training
# fold's SSE by $d^2 \max_j \lVert c_{jk} \rVert^2$, the change of $\lVert\delta\rVert^2$ alone.
# But with prediction errors $e$, $\lVert e + \delta \rVert^2 - \lVert e \rVert^2 = 2e^\top\delta
# + \lVert\delta\rVert^2$, and the cross term dominates when the errors are not small. The
# sensitivity checker finds a counterexample on targets that alternate between two values; you
# will build one yourself in exercise 1.3.

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
# ## Exercises
#
# Difficulty: ★ check your understanding · ★★ apply · ★★★ explore. Solutions:
# `answers/01_smith2018_cloaking_answers.ipynb` — try first.
#
# The first three ask you to **write code**: fill in the function in the cell below each one
# and run the check cell after it, which tells you at once what holds and what does not (a
# wrong answer never stops the notebook).
#
# ### Exercise 1.1 ★★ — the cloaking sensitivity
#
# Write `cloaking_delta(C, M)`: the sensitivity Δ of the cloaking release per unit d, the
# largest Mahalanobis length $\sqrt{c_i^\top M^{-1} c_i}$ over the columns $c_i$ of C (S18
# eqs. 6 and 9). M is invertible in the check. Then try it on the !Kung release, where M is
# singular (its rank is printed above): restrict both to the span of the columns first, with
# `Q = range_basis(C)[0]` from `dpgp_audit.gp.cloaking`; then
# `cloaking_delta(Q.T @ C, Q.T @ cloak.mechanism.M @ Q)` should match
# `cloak.mechanism.delta_m`.

# %%
def cloaking_delta(C, M):
    """Δ = max over the columns c_i of C of sqrt(c_iᵀ M⁻¹ c_i), for d = 1."""
    ...  # your code here


# %%
from dpgp_audit.exercises import check

check("01.1", cloaking_delta)

# %% [markdown]
# ### Exercise 1.2 ★ — the paper's bound b(K⁻¹)
#
# Write `b_bound(Kinv)`: the larger, over the columns of $K^{-1}$, of the sum of a column's
# positive entries and the sum of the magnitudes of its negative entries (S18 §2, defined in
# the S18.1 section). Compare `p["d"] / sd_y * b_bound(np.linalg.inv(K))` with the printed
# paper bound, where `K = kern_n(kung_data.X) + (p["noise"] / sd_y) ** 2 * np.eye(kung_data.n)`.

# %%
def b_bound(Kinv):
    """b(K⁻¹) of S18 §2."""
    ...  # your code here


# %%
check("01.2", b_bound)

# %% [markdown]
# ### Exercise 1.3 ★★★ — break the paper's SSE sensitivity
#
# Write `sse_counterexample()` returning a pair `(D, D2)` of `Dataset`s with the same
# one-dimensional inputs (between $8$ and $200$ points) whose targets differ in exactly one place,
# by at most $d = 1$, such that the paper's selection —
# `HyperparameterSelection(D.X, default_configs(), 1.0, 1.0, n_folds=4,
# sensitivity=s18_sse_sensitivity)` — sees some configuration's utility (`.query(D)`) change
# by more than its claimed `.sensitivity_bound()`. Use the auditors' idea, not their output:
# search over the neighbours of a dataset you design.

# %%
def sse_counterexample():
    """A neighbouring pair (D, D2) on which the paper's SSE sensitivity is exceeded."""
    ...  # your code here


# %%
check("01.3", sse_counterexample)

# %% [markdown]
# ### More exercises
#
# 4. ★ Lower `epsilon` to $0.2$ and rerun the cloaking RMSE. How does the DP RMSE scale with $1/\varepsilon$?
# 5. ★★ The test grid already runs to age $120$. Append $30$ test inputs at ages $121$–$150$ to `grid`
#    and rebuild `CloakingGP`. Does the noise at the original test points change? (Cloaking's
#    noise depends on the *whole* test set.)
# 6. ★★ Use `solver="paper"` in `CloakingGP` (pass `solver_rng=rng`). Does Alg. 1 converge on the
#    !Kung problem? Compare its log|M| with the certified optimum interval.
# 7. ★★ In the standard DP-GP, set `sensitivity="rkhs"` and `method="gdp"`: how large must ε be
#    for Fig. 1A's noise level to be reached with a *proven* claim? And does a noise standard
#    deviation of $13.6$ cm reproduce the paper's multiplier of 28.53<!--paper--> (S18 §2)?
#
# <details><summary>Hints</summary>
#
# * Exercise 1.1: `np.linalg.solve(M, C)` gives $M^{-1}C$ column by column.
# * Exercise 1.2: `np.clip(Kinv, 0, None)` keeps the positive entries.
# * Exercise 1.3: large errors $e$ make the cross term $2e^\top\delta$ dominate: targets that a smooth GP
#   cannot follow (alternating signs, as large as the clip allows) and then the best single
#   move among all neighbours.
# * Exercise 4: the Gaussian noise scale is $c(\delta)\Delta d/\varepsilon$, so the DP part of the error grows like $1/\varepsilon$; the
#   RMSE also contains the non-DP error, so it grows more slowly.
# * Exercise 5: `np.concatenate([grid, np.linspace(121, 150, 30)])`; compare the first `grid.size`
#   entries of `np.diag(cov)`.
# * Exercise 6: look at `mechanism.solution` (`converged`, `logdet`, `gap`, `lower_bound`).
# * Exercise 7: $\mu = \Delta_{rkhs}/\sigma$ for GDP; search ε with `gdp_epsilon` or simply try a few values.
# </details>

# %% [markdown]
# # Appendix
#
# Optional material: the reproductions of S18's numbers gap by gap, the synthetic stand-ins for
# the datasets the kit cannot ship, the input-privacy bound of S18.5 and bookkeeping.
#
# ## Appendix A · S18's !Kung numbers, gap by gap
#
# S18 prints three numbers for the women: the standard mechanism's multiplier (28.53<!--paper-->
# at the settings of S18's footnote to §2) and the cloaking RMSE without DP (6.8<!--paper--> cm)
# and with $(1, 0.01)$-DP (12.2<!--paper--> cm, S18 §3). Rather than guess why the kit lands
# elsewhere, we vary one choice at a time and see which one lands on the paper's value.
#
# **The multiplier.** It falls as the noise grows (a larger $\sigma_n^2$ shrinks $K^{-1}$), and
# S18's footnote says its hyperparameters only *look* precise. Which noise standard deviation gives
# the paper's value?

# %%
from dpgp_audit.experiments import s18 as s18x
from dpgp_audit.experiments.reproduction import ReproRow, paired_sign_test, write_sidecar

ages = kung_data.X[:, 0]
mult_printed = s18x.footnote2_multiplier(ages, sd_y, noise_sd=14.0)
ns_paper = s18x.noise_sd_for_multiplier(s18x.S18_PAPER["multiplier"], ages, sd_y)
for ns in (13.5, ns_paper, 14.0, 14.49):
    print(f"noise sd {ns:6.3f} cm -> multiplier {s18x.footnote2_multiplier(ages, sd_y, noise_sd=ns):6.2f} cm")
display(Markdown(
    f"The paper's 28.53 needs a noise standard deviation of **{ns_paper:.2f} cm**"
    + (", which prints as 14 cm to two significant figures: the footnote's value is rounded."
       if 13.5 <= ns_paper < 14.5 else ", which does not round to the footnote's 14 cm.")))

# %% [markdown]
# **The RMSE.** The split, the scoring and the noise level are candidates. First we solve for
# the noise standard deviation whose held-out no-DP RMSE is the paper's (on two independent
# sets of random splits, to see how much the answer moves),
# and fit the noise by maximum likelihood for comparison. Then one table holds every reading on
# the same splits and the same normal draws, so its rows differ only by the choice named.
# "in-sample" scores the predictions at the training women themselves (S18 does not say which
# women it scores).

# %%
n_rep_repro = max(3, p["n_repeats"])
n_solve = max(40, n_rep_repro)  # no DP here, so many splits cost little even in CI
try:  # two independent sets of splits show how much the answer moves
    ns_twice = [s18x.noise_sd_for_rmse(s18x.S18_PAPER["rmse_no_dp"], kung_data,
                                       n_repeats=n_solve, test_fraction=0.2, rng=rng)
                for _ in range(2)]
    ns_68 = float(np.mean(ns_twice))
except ValueError as err:  # e.g. the offline synthetic stand-in
    ns_twice, ns_68 = [], float("nan")
    print(err)
ml_kern_sd, ml_noise = s18x.ml_noise_sd(kung_data, lengthscale=25.0)
print(f"held-out no-DP RMSE of 6.8 cm needs a noise sd of {ns_68:.2f} cm (mean of "
      + " and ".join(f"{v:.2f}" for v in ns_twice) + f" cm on two sets of {n_solve} splits)")
print(f"maximum likelihood, lengthscale held at 25 years: noise sd {ml_noise:.2f} cm, "
      f"kernel sd {ml_kern_sd:.0f} cm")
choices = [s18x.KungChoice("as printed (noise 14 cm), held-out 20%"),
           s18x.KungChoice(f"noise {ns_paper:.2f} cm (the multiplier's)", noise_sd=ns_paper),
           s18x.KungChoice("as printed, in-sample", in_sample=True)]
if np.isfinite(ns_68):
    choices.append(s18x.KungChoice(f"noise {ns_68:.2f} cm (solved for 6.8), held-out",
                                   noise_sd=ns_68))
by_choice = s18x.kung_rmse_choices(kung_data, choices, d=p["d"], epsilon=1.0, delta=0.01,
                                   n_repeats=n_rep_repro, test_fraction=0.2, rng=rng)
print(f"\n{'reading':44s} {'RMSE no DP':>14s} {'RMSE (1, 0.01)-DP':>20s}   ({n_rep_repro} splits)")
for label, r in by_choice.items():
    print(f"{label:44s} {r.no_dp[0]:7.2f} ± {r.no_dp[1]:4.2f} {r.dp[0]:12.2f} ± {r.dp[1]:4.2f}")

# %%
printed = by_choice[choices[0].label]
in_sample = by_choice[choices[2].label]
solved = by_choice[choices[3].label] if len(choices) > 3 else None


def _inside(r, target):
    return abs(r[0] - target) <= r[1]


text = (
    f"With the printed noise (14 cm) the no-DP RMSE is {printed.no_dp[0]:.2f} cm held-out and "
    f"still {in_sample.no_dp[0]:.2f} cm scored in-sample, against S18's 6.8 cm: the split is "
    "not the cause. ")
if solved is not None:
    text += (
        f"The noise standard deviation that brings the held-out no-DP RMSE to 6.8 cm is "
        f"**{ns_68:.2f} cm** ({' and '.join(f'{v:.2f}' for v in ns_twice)} cm on two "
        f"independent sets of {n_solve} splits), {ns_68 / 14:.0%} of the printed value (on this "
        "table's splits it "
        f"gives {solved.no_dp[0]:.2f} ± {solved.no_dp[1]:.2f} cm); a maximum-likelihood fit "
        f"with the lengthscale held at 25 years gives {ml_noise:.2f} cm. Less GP noise means "
        f"more DP noise: at {ns_68:.2f} cm the DP RMSE is {solved.dp[0]:.2f} ± "
        f"{solved.dp[1]:.2f} cm, against {printed.dp[0]:.2f} ± {printed.dp[1]:.2f} cm at the "
        f"printed noise. S18's 12.2 cm lies "
        + {(True, True): "inside both intervals", (True, False): "inside the interval at the "
           "solved noise only", (False, True): "inside the interval at the printed noise only",
           (False, False): "outside both intervals"}[(_inside(solved.dp, 12.2),
                                                       _inside(printed.dp, 12.2))]
        + ". The multiplier and the "
        f"no-DP RMSE point to different noise levels (**{ns_paper:.2f} cm** against "
        f"**{ns_68:.2f} cm**): no single noise level in the footnote explains both of the "
        "paper's numbers. The DP RMSE is heavy-tailed, so its interval shrinks slowly; the "
        "full-scale run uses more splits.")
display(Markdown(text))

# %% [markdown]
# **S18's qualitative claim**: cloaking needs far less noise than the standard mechanism of §2.
# Paired test: on each split both releases share the GP mean, so their expected RMSEs differ
# only by the noise each adds; a one-sided sign test over at least eight splits can reach
# $p < 0.01$ only if cloaking wins (almost) every split. The verdict is printed, not asserted:
# the test suite checks the claim at the default parameters.

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
print("S18's claim (cloaking beats the standard DP-GP):",
      "shown (p < 0.01)" if p_cloak < 0.01 else "not shown at this size")

# %% [markdown]
# ## Appendix B · Table 1 on a synthetic journey stand-in (S18.3, S18 §4)
#
# S18 Table 1 compares cloaking with two DP binning baselines on Citi Bike journeys: four
# inputs (start and end latitude and longitude), durations thresholded at 2000<!--paper--> s
# (so $d = 2000$ s), five lengthscales from 0.02<!--paper-->° to 0.781<!--paper-->° and bins
# from $3^4$ to $10^4$ (S18 §4). The journeys are not shipped by any package registry, so this
# is a **synthetic** stand-in with the same geometry: journeys start anywhere in the paper's
# box of stations and end a random distance away; a duration grows with the distance, plus a
# location effect and some long leisure rides (`journey_standin`). *Simple binning* predicts
# a test journey by its bin's DP mean (Laplace noise, S18 §4); *integral binning* fits a GP
# whose observations are the bins' averages. The kit's integral binning tells its GP each
# bin's noise variance, DP noise included; the row "DP noise not modelled" gives it the
# sampling noise only. Cloaking uses the analytic Gaussian calibration. Mean RMSE ± $95\%$
# interval over random folds. S18 used 4900<!--paper--> training journeys per fold, the
# defaults far fewer.

# %%
from dpgp_audit.experiments.s18 import journey_standin, table1_best, table1_comparison

jd = journey_standin(p["n_table"], rng)
eps_list = [None, 1.0, 0.5, 0.2]
ls_list = [0.781, 0.312, 0.125, 0.05, 0.02]
bins_list = [3, 6]
methods = {"cloaking": ls_list, "integral binning": bins_list,
           "integral binning, DP noise not modelled": bins_list, "simple binning": bins_list}
tab = table1_comparison(jd, lengthscales=ls_list, bins_per_dim=bins_list, epsilons=eps_list,
                        d=2000.0, delta=p["delta"], n_folds=p["n_folds"],
                        n_test=min(50, p["n_table"] // 4), kernel_variance=300.0**2,
                        noise_variance=300.0**2, rng=rng, centre=800.0)
print(f"{p['n_table']} synthetic journeys, {p['n_folds']} folds; RMSE in s (mean +- 95% half-width)")
print(f"{'method':<40}{'param':>7}" + "".join(f"{('no DP' if e is None else f'eps={e:g}'):>15}"
                                             for e in eps_list))
for method, params in methods.items():
    for q in params:
        row = "".join(f"{tab[(method, q, e)][0]:>8.0f} +-{tab[(method, q, e)][1]:>4.0f}"
                      for e in eps_list)
        label = f"{q:g} deg" if method == "cloaking" else f"{q}^4"
        print(f"{method:<40}{label:>7}{row}")

# %%
lines = []
for e in eps_list:
    q_c, m_c, h_c = table1_best(tab, "cloaking", e)
    _, m_i, h_i = table1_best(tab, "integral binning", e)
    _, m_b, h_b = table1_best(tab, "integral binning, DP noise not modelled", e)
    _, m_s, h_s = table1_best(tab, "simple binning", e)
    m_bin, h_bin = min((m_i, h_i), (m_s, h_s))
    lead = "cloaking" if m_c < m_bin else "binning"
    overlap = abs(m_c - m_bin) <= h_c + h_bin
    lines.append(f"| {'no DP' if e is None else f'ε = {e:g}'} | {m_c:.0f} ± {h_c:.0f} ({q_c:g}°) "
                 f"| {m_i:.0f} ± {h_i:.0f} | {m_b:.0f} ± {h_b:.0f} | {m_s:.0f} ± {h_s:.0f} "
                 f"| {lead} by {abs(m_c - m_bin):.0f} s{' (intervals overlap)' if overlap else ''} |")
e_min = eps_list[-1]
coarse, fine = (tab[("simple binning", b, e_min)][0] for b in bins_list)
ls_free, ls_tight = table1_best(tab, "cloaking", None)[0], table1_best(tab, "cloaking", e_min)[0]
blind_loses = all(table1_best(tab, "cloaking", e)[1]
                  < table1_best(tab, "integral binning, DP noise not modelled", e)[1]
                  for e in eps_list[1:])
display(Markdown(
    "Best setting of each method (RMSE in s; cloaking's lengthscale in brackets; the last "
    "column compares cloaking with the better binning):\n\n"
    "| | cloaking | integral binning | integral, DP noise not modelled | simple binning | |\n"
    "|---|---|---|---|---|---|\n" + "\n".join(lines) + "\n\n"
    "S18 Table 1 has cloaking ahead at every ε. Against it, in this run: simple binning with "
    f"{bins_list[-1]}⁴ bins {'does worse' if fine > coarse else 'does not do worse'} than with "
    f"{bins_list[0]}⁴ at ε = {e_min:g} ({fine:.0f} s against {coarse:.0f} s; S18 finds it worst "
    f"with the most bins); cloaking's best lengthscale moves from {ls_free:g}° without DP to "
    f"{ls_tight:g}° at ε = {e_min:g} (S18: longer lengthscales as ε falls). Whether cloaking "
    "beats *integral* binning at small ε depends on the integral GP knowing each bin's "
    "DP-noise variance. Without it (S18 does not say that its GP knew), the noisiest, emptiest "
    "bins pull the fit, and here cloaking "
    f"{'beats that variant at every ε' if blind_loses else 'does not beat that variant at every ε'}; "
    "with it, the two come close once both fall back towards the overall mean."))

# %% [markdown]
# **At the paper's size.** The full-scale run of this notebook (`make notebooks`, with
# `n_table=5000` and `n_folds=10`, close to S18's folds of 4900<!--paper--> training
# journeys) has cloaking lowest at every ε, as in S18: its best RMSE is
# 183<!--run: full-scale run--> s without DP and 219<!--run: full-scale run-->,
# 251<!--run: full-scale run--> and 308<!--run: full-scale run--> s at
# $\varepsilon = 1, 0.5, 0.2$, against 227<!--run: full-scale run-->,
# 287<!--run: full-scale run-->, 294<!--run: full-scale run--> and
# 324<!--run: full-scale run--> s for the best binning (the kit's integral binning
# throughout, the DP noise variance of each bin known to the GP).

# %% [markdown]
# ## Appendix C · Why a two-dimensional stand-in reverses Table 1
#
# An earlier version of this notebook used a two-dimensional stand-in: a smooth surface of durations on the
# unit square under heavy noise (`surface_standin_2d`), with lengthscales of a tenth and three
# tenths of the square. On it, binning beat cloaking at every ε — the reverse of S18. The cell
# below reruns that comparison (adding one long lengthscale) to show the cause.

# %%
from dpgp_audit.experiments.s18 import surface_standin_2d

sd2 = surface_standin_2d(min(p["n_table"], 500), rng)
tab2 = table1_comparison(sd2, lengthscales=[3.0, 0.3, 0.1], bins_per_dim=[3, 6],
                         epsilons=[None, 1.0],
                         d=2000.0, delta=p["delta"], n_folds=p["n_folds"],
                         n_test=min(50, sd2.n // 4), kernel_variance=300.0**2,
                         noise_variance=300.0**2, rng=rng, centre=700.0)
old_rows = {k: v for k, v in tab2.items() if not (k[0] == "cloaking" and k[1] == 3.0)}
no_dp = {m: table1_best(old_rows, m, None)[1]
         for m in ("cloaking", "integral binning", "simple binning")}
at1 = {m: table1_best(old_rows, m, 1.0)[1]
       for m in ("cloaking", "integral binning", "simple binning")}
long_ls = tab2[("cloaking", 3.0, 1.0)][0]
spread = max(no_dp.values()) - min(no_dp.values())
per_bin = np.histogram2d(sd2.X[:, 0], sd2.X[:, 1], bins=6)[0]
display(Markdown(
    f"Without DP the three methods are within **{spread:.0f} s** of each other "
    f"(best RMSE {min(no_dp.values()):.0f} s; the durations' standard deviation is "
    f"{np.std(sd2.y):.0f} s): the surface is mostly noise, so a GP gains nothing over bin "
    f"means. At ε = 1 cloaking's best is {at1['cloaking']:.0f} s against "
    f"{at1['integral binning']:.0f} s for integral binning. Three things turned the table: "
    "(1) with nothing to gain without DP, only the DP noise decides, and with two inputs the "
    f"bins stay full (a median of {np.median(per_bin[per_bin > 0]):.0f} points per bin even "
    "with six bins per input), so a bin mean needs little noise; (2) the "
    "lengthscales (a tenth and three tenths of the square) were all short, where cloaking's "
    f"noise is largest: with a lengthscale of three squares cloaking gets {long_ls:.0f} s at "
    "ε = 1 on the same folds, and S18's longest lengthscale is about eight times the width of "
    "its box of stations; (3) the kit's integral binning models each bin's DP noise "
    "(Appendix B). The four-dimensional journey stand-in of Appendix B removes "
    "(1) and (2)."))

# %% [markdown]
# ## Appendix D · A Fig. 3-style map on a synthetic spatial stand-in (S18.2)
#
# The paper's London house prices are not shipped by any package registry; this is a
# **synthetic** stand-in (clustered locations in a square of side $100$ km, prices in k£
# thresholded to $[100, 500]$, so $d = 400$ k£). Circles: DP predictions on a grid; the area
# shows the price and the opacity the DP noise (transparent where its standard deviation is at
# least $40\%$ of d, as in S18 Fig. 3).

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
show(plot_spatial_noise(sp.X, Gs, pred_sp, sd_sp, 400.0,
                        title="SYNTHETIC stand-in: DP price predictions (cloaking)",
                        xlabel="east (km)", ylabel="north (km)", value_label="price",
                        unit="k£"))

# %% [markdown]
# ## Appendix E · Varah's bound: inputs private too (S18.5)
#
# For a strictly diagonally dominant $J$, $\lVert J^{-1}\rVert_\infty \le \max_i
# 1/(|J_{ii}| - \sum_{j\ne i}|J_{ij}|)$: a bound on the standard DP-GP's sensitivity that does
# not depend on where the inputs are.

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
# ## Appendix F · What private selection costs in RMSE (S18.4)
#
# The cloaking RMSE of each candidate lengthscale, and the RMSE expected when the exponential
# mechanism of the S18.4 section chooses (at the regression's ε). S18 §4 reports
# 14.3<!--paper--> cm with the best choice and 17.4<!--paper--> cm under private selection,
# with its two-parameter grid.

# %%
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
# ## Appendix G · Bookkeeping for the full-scale runs
#
# `make notebooks` runs this notebook at the sizes of `notebooks/full_scale/` and collects the
# rows below, one per number of the paper, into a machine-readable summary (`repro_json`).

# %%
setting = f"{n_rep_repro} random 80/20 splits, (1, 0.01)-DP, Hall calibration"
repro_rows = [
    ReproRow("S18", "§2 noise multiplier, fn. 2 settings (cm)", 28.53, mult_printed, None,
             "fn. 2 as printed (noise sd 14 cm, ε = 50)",
             f"fn. 2 rounds the noise sd: {ns_paper:.2f} cm (prints as 14) gives 28.53"
             if 13.5 <= ns_paper < 14.5 else ""),
    ReproRow("S18", "!Kung RMSE without DP (cm)", 6.8, *printed.no_dp, setting + ", noise 14 cm",
             f"printed noise sd too large: >= {in_sample.no_dp[0]:.1f} cm even in-sample; "
             f"noise {ns_68:.2f} cm gives 6.8 (next row)"),
    ReproRow("S18", "!Kung RMSE with (1, 0.01)-DP (cm)", 12.2, *printed.dp,
             setting + ", noise 14 cm", ""),
]
if solved is not None:
    repro_rows += [
        ReproRow("S18", f"!Kung RMSE without DP (cm), noise {ns_68:.2f} cm", 6.8, *solved.no_dp,
                 setting + f", noise {ns_68:.2f} cm", "noise sd is the cause (row above)"),
        ReproRow("S18", f"!Kung RMSE with (1, 0.01)-DP (cm), noise {ns_68:.2f} cm", 12.2,
                 *solved.dp, setting + f", noise {ns_68:.2f} cm",
                 f"less noise, more DP noise: the multiplier needs {ns_paper:.2f} cm, the "
                 f"no-DP RMSE {ns_68:.2f} cm"),
    ]
repro_rows.append(ReproRow("S18", "cloaking beats the standard DP-GP (sign-test p)", 0.01,
                           p_cloak, None, f"{pairs['cloaking'].size} paired splits, "
                           f"ε = {p['epsilon']:g}", "", bound="at_most"))
if repro_json:
    write_sidecar(repro_json, "01_smith2018_cloaking", f"n_repeats={p['n_repeats']}",
                  repro_rows)
print(f"{len(repro_rows)} reproduction rows" + (f" written to {repro_json}" if repro_json else ""))
