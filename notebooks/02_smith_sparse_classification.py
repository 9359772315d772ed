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
# # S21: sparse and non-stationary cloaking, private GP classification, private hyperparameters
#
# Smith, Álvarez & Lawrence, *Differentially Private Regression and Classification with Sparse
# Gaussian Processes* (JMLR; **S21** in the catalogue), extend the S18 cloaking mechanism.
#
# **Learning objectives** — after this notebook you can
#
# 1. explain why outliers force large cloaking noise and how inducing inputs placed by k-means on the
#    *public* inputs reduce it (S21.2), while a density-driven Gibbs lengthscale does not (S21.1);
# 2. reproduce S21 Table 1 and Fig. 4 on the !Kung data;
# 3. make GP classification private by cloaking one Laplace Newton step with data sensitivity 2
#    (S21.3), see why a second private step loses accuracy, and scale it with the Subset of
#    Regressors (S21.4);
# 4. select hyperparameters privately with S21 Alg. 1 (S21.5), including why the paper's
#    sensitivity formula undercounts and what we use instead.
#
# Small defaults run in about a minute; the full-scale settings of the paper are in the next cell's
# comments (run them with papermill). **As a 90-minute lab** work through the sections in order and
# skip those whose heading starts with "Optional:". Notation in the [glossary](GLOSSARY.md) — here
# M is the number of inducing inputs (not a noise covariance) and d = 2 for a label flip.

# %% tags=["parameters"]
# Small defaults (~1-2 min; Table 1 already at the paper's scale: all 287 women, 14 folds).
# Full scale of the other figures (paper): band_points=46, map_side=10,
# inducing_list=[1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15], n_dp_reps=25,
# digits_train=256, digits_test=100, digits_lengthscales=[10.0, 20.0, 40.0, 80.0],
# digits_inducing=[4, 6, 9, 14, 21, 32, 48, 72, 108, 160, 200],
# selection_lengthscales=[1.0, 5.0, 25.0, 125.0, 625.0], selection_noise=[0.2, 1.0, 5.0, 25.0],
# selection_kvar=[1.0, 5.0, 25.0, 125.0], selection_folds=5, selection_subsample=0
seed = 0
epsilon = 1.0
delta = 0.01
kung_subsample = 0
n_folds = 14
band_points = 31
map_side = 8
inducing_list = [2, 3, 5, 8]
stripes_n = 200
n_dp_reps = 10
cancer_n = 80
digits_train = 60
digits_test = 60
digits_lengthscales = [20.0, 40.0]
digits_inducing = [4, 8]
selection_lengthscales = [5.0, 25.0, 125.0]
selection_noise = [1.0, 25.0]
selection_kvar = [1.0, 25.0]
selection_folds = 3
selection_subsample = 60
selection_epsilons = [0.1, 1.0, 10.0]
show_progress = False
repro_json = ""  # path of the reproduction sidecar for make notebooks (empty: none)

# %%
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from threadpoolctl import threadpool_limits

from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.kung import kung_dataset, load_kung_or_standin
from dpgp_audit.datasets.synthetic import stripes_2d, stripes_grid
from dpgp_audit.experiments import s21 as ex
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.s21.mechanisms import LaplaceCloakingClassifier
from dpgp_audit.viz import s21 as vz
from dpgp_audit.viz import show
from dpgp_audit.viz.style import method_colour

if not (0 < epsilon and 0 < delta < 1):
    raise ValueError("epsilon must be > 0 and delta in (0, 1)")
if n_folds < 2 or selection_folds < 2:
    raise ValueError("need at least 2 folds")
rng = np.random.default_rng(seed)
# Many small dense solves: one BLAS thread is much faster than several (measured ~40x here).
threadpool_limits(1)


def subsample(data, k, rng):
    if not k or k >= data.n:
        return data
    idx = np.sort(rng.choice(data.n, size=k, replace=False))
    return Dataset(data.X[idx], data.y[idx], data.name)


kung, kung_note = load_kung_or_standin(rng, females_only=True)  # CI: the real data or an error
if kung_note:
    print(kung_note)
kung_name = "synthetic stand-in" if kung_note else "kung-females"
kung_1d = kung.to_dataset(name=kung_name)
kung_2d = kung.to_dataset(inputs=("age", "weight"), name=kung_name)
sub = rng.choice(kung_1d.n, size=kung_subsample, replace=False) if kung_subsample else None
if sub is not None:
    sub = np.sort(sub)
    kung_1d = Dataset(kung_1d.X[sub], kung_1d.y[sub], kung_1d.name)
    kung_2d = Dataset(kung_2d.X[sub], kung_2d.y[sub], kung_2d.name)
print(kung_1d, kung_2d)
setup_1d = ex.KungSetup()
setup_2d = ex.KungSetup(lengthscale=(15.0, 15.0), bandwidth=(5.0, 5.0), m=(40.0, 40.0),
                        neighbourhood=(10.0, 10.0))

# %% [markdown]
# ## 1. The toy example of S21 §5.1 (S21.5)
#
# Four points x = [0, 1, 2, 4], y = [0, ½, 1, 2], two folds, a 0th- vs a 1st-order polynomial,
# d = 2 and (1, 0.01)-DP. The cloaking matrices of the first fold are C0 = [[½, ½], [½, ½]] and
# C1 = [[−1, 2], [−3, 4]]. We compute the SSEs *exactly* (the expected DP noise is
# σ² tr(M) per fold); the paper's 50 and 1597 are Monte Carlo estimates of the same numbers.

# %%
from dpgp_audit.methods.s21.cv_utility import (
    config_sensitivity,
    cv_sse,
    kfold_test_sets,
    polynomial_cloaking_matrix,
    prepare_folds,
)
from dpgp_audit.methods.s21.private_selection import cloaking_noise_variance
from dpgp_audit.privacy.mechanisms import exponential_probabilities

x_toy, y_toy = np.array([0.0, 1.0, 2.0, 4.0]), np.array([0.0, 0.5, 1.0, 2.0])
noise = cloaking_noise_variance(2.0, 1.0, 0.01, "hall")
for split, interleaved in (("halves", False), ("interleaved", True)):
    tests = kfold_test_sets(4, 2, interleaved=interleaved)
    models = [prepare_folds(x_toy, polynomial_cloaking_matrix(o), tests, noise) for o in (0, 1)]
    plain = [cv_sse(m, y_toy, 2.0, clip=False, include_noise=False) for m in models]
    dp = [cv_sse(m, y_toy, 2.0, clip=False) for m in models]
    clipped = [cv_sse(m, y_toy, 2.0) for m in models]
    for rule in ("text", "valid"):
        du = max(config_sensitivity(m, 2.0, rule) for m in models)
        p = exponential_probabilities(-np.array(dp), 1.0, du)
        print(f"{split:11s} rule={rule:5s}: SSE no DP {plain[0]:.3f}/{plain[1]:.3f}, "
              f"SSE with DP {dp[0]:.2f}/{dp[1]:.2f} (clipped {clipped[0]:.1f}/{clipped[1]:.1f}), "
              f"Δu = {du:.0f}, P(0th order) = {100 * p[0]:.2f}%")

# %% [markdown]
# With the paper's rule (eq. 13, "text") we reproduce Δu = 116<!--out--> and 99.87 %<!--out-->, and
# 337<!--out-->, 53<!--out-->, 93.94 %<!--out--> for the interleaved split (numbers marked like
# these are checked against the outputs above by the notebook tests). Two caveats, both checked in `tests/test_s21_*.py`:
#
# * **The paper's sensitivity undercounts.** Moving a prediction by δ changes a squared error
#   e² by 2eδ + δ², not δ². With errors clipped to ±4d the exact per-point supremum is
#   |δ|(8d − |δ|); summed with the same perturbed point in every fold this gives Δu = 140<!--out--> for the toy
#   (a witness pair attains 140 > 116). Alg. 1 as printed sorts ascending and sums the *smallest*
#   κ − 1 folds (Δu = 61), which is smaller still. The kit's default rule is the valid one.
# * **The paper's SSEs are unclipped** (1597 > 4 · (4d)² = 256): Alg. 1 line 9 adds the unclipped SSE.
#   Using it with the clipped sensitivity is the planted bug `planted/s21-unclipped-sse`, which the
#   black-box auditor flags.

# %% [markdown]
# ## 2. !Kung regression: S21 Table 1
#
# Heights (cm) of the !Kung women from age (1-D) and age + weight (2-D); EQ kernel, lengthscale
# 15 years (and 15 kg), variance 10 cm², noise 25 cm², (1, 0.01)-DP with d = 100 cm, 5 k-means
# inducing inputs. RMSEs with DP are the exact expectation over the cloaking noise.

# %%
rows = ex.kung_table1(kung_1d, kung_2d, n_folds, rng, {"1d": setup_1d, "2d": setup_2d})
print(f"{n_folds}-fold cross-validation on n = {kung_1d.n}")
print(vz.format_table1(rows))

# %% [markdown]
# Sparse cloaking wins clearly under DP, especially in 2-D, as in the paper. Our non-stationary
# variant uses the neighbourhood-minimum density lengthscale of §6.1 with our own constants (the
# paper does not give its lengthscale function); it also fails to help, for the reason of §6.3:
# points with very different lengthscales hardly covary, so dense regions cannot support the outliers.

# %% [markdown]
# **Reference run** (defaults: all 287 women, 14 folds, seed 0; RMSE in cm, ours vs paper):
#
# | | standard | sparse | non-stationary |
# |---|---|---|---|
# | 1-D, DP | 14.1 ± 4.1 (13.3 ± 3.2) | 10.3 ± 1.6 (9.9 ± 1.7) | 18.1 ± 1.7 (12.8 ± 2.0) |
# | 2-D, DP | 18.2 ± 2.2 (17.2 ± 3.1) | 10.5 ± 1.8 (10.2 ± 1.6) | 15.2 ± 2.0 (16.3 ± 2.5) |
# | 1-D, no DP | 7.4 ± 1.5 (7.1 ± 1.8) | 8.0 ± 1.8 (7.7 ± 1.9) | 7.6 ± 1.6 (8.6 ± 2.2) |
# | 2-D, no DP | 5.5 ± 1.5 (5.2 ± 1.5) | 7.9 ± 2.3 (7.7 ± 2.0) | 7.6 ± 2.0 (5.9 ± 1.7) |
#
# Standard and sparse cloaking agree with the paper within a fraction of a standard deviation;
# the non-stationary numbers depend on the unpublished lengthscale function.

# %% [markdown]
# ## 3. Where the noise goes (S21 Figs. 3 and 5)

# %%
xs = np.linspace(0, 90, band_points)
tr1 = Dataset(kung_1d.X, kung_1d.y - setup_1d.y_offset)
fig, axes = plt.subplots(1, 3, figsize=(13, 3.2), sharey=True)
for ax, method in zip(axes, ("standard", "nonstationary", "sparse"), strict=True):
    rel = ex.regression_release(method, kung_1d.X, xs, setup_1d, rng)
    mean = rel.query(tr1) + setup_1d.y_offset
    sd = np.sqrt(np.clip(np.diag(rel.cov(tr1)), 0, None))
    draws = rel.sample(tr1, 3, rng) + setup_1d.y_offset
    vz.plot_noise_band_1d(kung_1d.X, kung_1d.y, xs, mean, sd, samples=draws, ax=ax,
                          title=f"{method} cloaking", xlabel="age (years)",
                          ylabel="height (cm)")
    ax.set_ylim(0, 250)
show(plt.gcf())

medians: dict[str, float] = {}
g1, g2 = np.meshgrid(np.linspace(0, 85, map_side), np.linspace(5, 60, map_side))
grid = np.column_stack([g1.ravel(), g2.ravel()])
tr2 = Dataset(kung_2d.X, kung_2d.y - setup_2d.y_offset)
fig, axes = plt.subplots(1, 3, figsize=(13, 3.5))
for ax, method in zip(axes, ("standard", "sparse", "nonstationary"), strict=True):
    rel = ex.regression_release(method, kung_2d.X, grid, setup_2d, rng)
    sd = np.sqrt(np.clip(np.diag(rel.cov(tr2)), 0, None))
    vz.plot_noise_map_2d(kung_2d.X, grid, rel.query(tr2), sd, Z=rel.info.get("Z")
                         if hasattr(rel, "info") else None, ax=ax, title=method,
                         xlabel="age (years)", ylabel="weight (kg)")
    medians[method] = float(np.median(sd))
    print(f"{method:13s}: median DP-noise sd over the grid {medians[method]:6.1f} cm")
show(plt.gcf())

# %% [markdown]
# **Reading the figures.** Top row: the DP releases (thin lines, in the cloaking colour of the
# whole course) around the non-private mean (black) with their ±1 sd noise band (dashed), along age. Bottom row: the DP-noise standard deviation over the age–weight
# plane (larger, paler marks: more noise). Cloaking puts noise where *one* target can move the
# prediction: near isolated points, which act as levers, and less where many neighbours pin the
# mean down. Sparse cloaking (inducing inputs from k-means on the public inputs) summarises each
# region by a few inducing inputs, so an outlier cannot pull the release on its own; the
# non-stationary (Gibbs) kernel changes the lengthscale with the input density but still lets
# each target act on its own neighbourhood.
# %% [markdown]
#
# %%
order_m = sorted(medians, key=medians.get)
display(Markdown(
    "In this run the median DP-noise sd over the 2-D grid is "
    + ", ".join(f"**{medians[m]:.0f} cm** ({m})" for m in order_m)
    + f": {order_m[0]} cloaking adds the least noise."))

# %% [markdown]
# ## Optional: 4. RMSE against the number of inducing inputs (S21 Fig. 4)

# %%
res4 = ex.rmse_vs_inducing(kung_1d, [m for m in inducing_list if m < kung_1d.n // 2], n_folds,
                           setup_1d, rng)
vz.plot_rmse_vs_inducing(res4)
show(plt.gcf())
for m, a, b in zip(res4["m"], res4["dp"], res4["no_dp"], strict=True):
    print(f"M = {m:3d}: RMSE with DP {a:6.1f} cm, without {b:5.1f} cm")
best_m = res4["m"][int(np.argmin(res4["dp"]))]
display(Markdown(
    "**Reading the figure.** Without DP, more inducing inputs can only make the sparse GP closer "
    "to the exact one. With DP they also give one target more directions in which to move the "
    "release, so the cloaking noise grows with M: the private RMSE trades approximation error "
    f"against noise (S21 Fig. 4). In this run the private RMSE is lowest at **M = {best_m}**."))

# %% [markdown]
# ## Optional: 5. Classification, 1-D: a real dataset (S21 Fig. 6)
#
# The paper's Home Equity Loans data are not shipped by any registry package, so as a **stand-in**
# we use scikit-learn's breast-cancer data with one feature (worst concave points, scaled to 0–10):
# the input is public, the diagnosis (±1) private. One private Newton step with d = 2.

# %%
from sklearn.datasets import load_breast_cancer

bc = load_breast_cancer()
col = list(bc.feature_names).index("worst concave points")
idx = np.sort(rng.choice(len(bc.target), size=cancer_n, replace=False))
xb = 10 * bc.data[idx, col] / bc.data[:, col].max()
yb = np.where(bc.target[idx] == 0, 1.0, -1.0)  # +1 = malignant
cancer = Dataset(xb, yb, "breast cancer (1 feature)")
clf = LaplaceCloakingClassifier(EQ(1.5, variance=4.0), cancer.X, epsilon, delta)
grid_b = np.linspace(0, 10, 21)
f_mode = clf.model.mode(cancer.y, 20)
p_nodp = clf.model.predict_proba(f_mode, grid_b)
p_dp = np.array([clf.predict_proba(f, grid_b) for f in clf.sample(cancer, 30, rng)])
plt.figure(figsize=(6, 3))
violins = plt.violinplot(p_dp, positions=grid_b, widths=0.4)
for part in [*violins["bodies"], violins["cbars"], violins["cmins"], violins["cmaxes"]]:
    part.set_color(method_colour("cloaking"))  # the course's colour for cloaking releases
plt.plot(grid_b, p_nodp, "kx", label="non-DP (mode, 20 steps)")
plt.xlabel("worst concave points (scaled)")
plt.ylabel("P(malignant)")
plt.legend()
show(plt.gcf())
spread = np.percentile(p_dp, 75, axis=0) - np.percentile(p_dp, 25, axis=0)
display(Markdown(
    "**Reading the figure.** Each violin is the spread of the predicted probability over 30 DP "
    "releases at one input; the crosses are the non-private classifier (20 Newton steps). A "
    "narrow violin around a cross means the private classifier can be trusted there. In this run "
    f"the interquartile range of P(malignant) over releases is between {spread.min():.2f} and "
    f"{spread.max():.2f} across the inputs (widest at input {grid_b[int(np.argmax(spread))]:g})."))

# %% [markdown]
# ## 6. Classification, 2-D stripes: one vs two private steps (S21 Fig. 7, §6.5)

# %%
train = stripes_2d(stripes_n, rng)
train = Dataset(train.X, 2 * train.y - 1, train.name)
test = stripes_grid(10)
test = Dataset(test.X, 2 * test.y - 1, test.name)
res7 = ex.stripes_accuracy(train, test, EQ(3.5), epsilon=epsilon, delta=delta,
                           n_rep=n_dp_reps, rng=rng)
print(f"accuracy without DP (20 Newton steps): {res7['no_dp']:.2f}   (paper: 0.81)")
for key, paper in (("one_step", 0.69), ("two_steps", 0.51)):
    acc = res7[key]
    print(f"{key:9s} private: {acc.mean():.2f} ± {acc.std():.2f}   (paper: {paper})")
vz.plot_stripes(train, test, res7["proba_one_step"], title="mean P(+1) over DP releases")
show(plt.gcf())
one, two = res7["one_step"].mean(), res7["two_steps"].mean()
display(Markdown(
    "**Reading the figure.** The map shows the mean private P(+1) of the one-step classifier on "
    "the test grid, with the training points. A second private step needs its own share of the "
    "budget, so each step is noisier, and the second step starts from the noisy first one "
    f"(S21 §6.5). In this run: one step **{one:.2f}**, two steps **{two:.2f}** mean accuracy "
    f"({'one step is better' if one > two else 'two steps are not worse here'}; the paper found "
    "one step better)."))

# %% [markdown]
# ## Optional: 7. Sparse classification in higher dimension (S21.4, Fig. 8)
#
# scikit-learn's 8×8 digits are our **stand-in for MNIST** (pixels 0–16, 64 dimensions):
# low {0–4} = −1 against high {5–9} = +1, Subset-of-Regressors with k-means inducing inputs.

# %%
dtrain, dtest = ex.digits_binary(digits_train, digits_test, rng)
res8 = ex.digits_sparse_accuracy(dtrain, dtest, digits_lengthscales, digits_inducing,
                                 epsilon=epsilon, delta=delta, n_rep=n_dp_reps, rng=rng)
chance = max(np.mean(dtest.y > 0), np.mean(dtest.y < 0))
vz.plot_digits_accuracy(res8, chance)
show(plt.gcf())
for a, ls in enumerate(res8["lengthscales"]):
    print(f"l = {ls:5.1f}: no DP {np.round(res8['no_dp'][a], 2)}, DP {np.round(res8['dp'][a], 2)}")
gap8 = np.asarray(res8["no_dp"]) - np.asarray(res8["dp"])
display(Markdown(
    "**Reading the figure.** Solid black lines: accuracy without DP; dashed lines in the cloaking "
    "colour: with DP; the marker tells the lengthscales apart; the dotted grey line is chance. With 64 inputs the Subset-of-Regressors model keeps the private release "
    "M-dimensional, so the noise does not grow with the number of training points. In this run "
    f"DP costs between {gap8.min():.2f} and {gap8.max():.2f} accuracy across lengthscales and M."))

# %% [markdown]
# ## 8. Private hyperparameter selection (S21 Alg. 1, Figs. 10–11)
#
# Half of the !Kung data selects (κ-fold CV inside it, clipped SSE with the expected cloaking
# noise, valid sensitivity), the other half measures each configuration's DP RMSE. The exponential
# mechanism spends ε on the selection; the regression release spends its own (1, 0.01).

# %%
sel_data = subsample(kung_dataset() if kung_1d.name != "synthetic stand-in" else kung_1d,
                     selection_subsample, rng)
res10 = ex.selection_experiment(sel_data, lengthscales=selection_lengthscales,
                                noise_variances=selection_noise, kernel_variances=selection_kvar,
                                folds=selection_folds, epsilon=epsilon, d=setup_1d.d, rng=rng)
print(f"{len(res10['labels'])} configurations; Δu = {res10['sensitivity']:.3g}")
print(f"expected RMSE, exponential mechanism: {res10['expected_rmse']:.2f} cm (paper: 19.02)")
print(f"expected RMSE, uniform choice:        {res10['uniform_rmse']:.2f} cm (paper: 87.05)")
print(f"best configuration: {res10['labels'][res10['best']]}, RMSE {res10['rmse'].min():.2f}")
vz.plot_selection(res10)
show(plt.gcf())
display(Markdown(
    "**Reading the figure.** Each bar is one configuration, sorted by its held-out DP RMSE; its "
    "width is the probability the exponential mechanism selects it (left) or 1/K (right, "
    "uniform). The dashed line is the expected RMSE of the choice. In this run private selection "
    f"expects **{res10['expected_rmse']:.1f} cm** against **{res10['uniform_rmse']:.1f} cm** for "
    f"a uniform pick and {res10['rmse'].min():.1f} cm for the best configuration."))

# %% [markdown]
# Reference run at the paper's scale (all 287 women, halves of 143/144, 5 folds, the 80
# configurations, seed 0): expected held-out RMSE 28.5 cm under the exponential mechanism with the
# valid sensitivity (25.3 cm with the paper's eq. 13 rule), 54.4 cm for a uniform pick; largest
# selection probability 0.018 (paper 0.024); best configuration l = 125, RMSE 17.8 cm (paper:
# l = 25, 14.55 cm). The valid Δu is about twice the paper's, so the choice is flatter.

# %%
# Fig. 11: probability of each lengthscale as the selection budget changes
mech = res10["mechanism"]
u = -res10["sse"][mech.kept]
labels = np.array(res10["labels"])[mech.kept]
ls_of = np.array([float(s.split(",")[0].split("=")[1]) for s in labels])
table = []
for eps in selection_epsilons:
    p = exponential_probabilities(u, eps, mech.sensitivity_bound())
    table.append([p[ls_of == ls].sum() for ls in selection_lengthscales])
from dpgp_audit.viz.style import heatmap_limits

lo11, hi11 = heatmap_limits(np.array(table))  # the data's range, not 0-1
plt.imshow(np.array(table).T, aspect="auto", cmap="viridis", origin="lower", vmin=lo11,
           vmax=hi11)
plt.xticks(range(len(selection_epsilons)), [str(e) for e in selection_epsilons])
plt.yticks(range(len(selection_lengthscales)), [str(v) for v in selection_lengthscales])
plt.xlabel("selection epsilon")
plt.ylabel("lengthscale")
plt.colorbar(label="P(selected), colour scale = the table's range")
show(plt.gcf())
top = selection_lengthscales[int(np.argmax(table[-1]))]
display(Markdown(
    "**Reading the figure.** Each column is one selection budget ε, each row a lengthscale; the "
    "colour is the total probability of selecting any configuration with that lengthscale. With "
    "a small ε the choice is close to uniform; as ε grows the probability concentrates on the "
    f"configurations with the best utility — at ε = {selection_epsilons[-1]:g} on ℓ = {top:g} in "
    f"this run (largest share {max(table[-1]):.2f})."))

# %% [markdown]
# ## 9. Audit a mechanism at its claim
#
# Every S21 mechanism is registered; here the white-box auditor checks the classification release
# on adversarial label flips, and the black-box auditor catches the planted unclipped-SSE selection.

# %%
from dpgp_audit import catalogue as registry
from dpgp_audit.audit.blackbox.fixed import audit_blackbox
from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.whitebox import audit_whitebox

mech3, data3 = registry.get("S21.3/laplace-classification").make()
pairs = neighbour_pairs(data3, mech3.claim.relation, rng, y_bound=1.0, n_random=0)
print("S21.3 white-box:", audit_whitebox(mech3, pairs).verdict.value)
planted, pdata = registry.get("planted/s21-unclipped-sse").make()
res = audit_blackbox(planted, pdata, pdata.with_target(0, pdata.y[0] + 1.0), n=20_000, rng=rng,
                     score="categorical")
print(f"planted/s21-unclipped-sse black-box: {res.verdict.value}, certified epsilon >= "
      f"{res.estimate:.2f} (claimed 1)")

# %% [markdown]
# ## Reproduction: S21's numbers, gap by gap
#
# **Table 1, non-stationary rows.** S21 §6.1 built its lengthscale function by hand and
# gives none of its constants. The kit's density lengthscale r(x) = [1/m + ρ(x)/n]⁻¹ has
# three (KDE bandwidth, cap m, points per lengthscale n): the rows move a lot with them.
# Same folds for every setting; ± is the 95% interval of the mean over folds.

# %%
from dpgp_audit.experiments.reproduction import (
    ReproRow,
    paired_sign_test,
    write_sidecar,
)

sweep = {}
for dims, data, base in (("1d", kung_1d, setup_1d), ("2d", kung_2d, setup_2d)):
    sweep[dims] = ex.table1_setting_sweep(
        data, "nonstationary", {"kit default": base,
                                "paper-like": ex.NONSTATIONARY_PAPERLIKE[dims]},
        n_folds, rng)
    for label, r in sweep[dims].items():
        print(f"{dims} {label:12s}: with DP {r['dp']['mean']:5.1f} ± {r['dp']['ci']:.1f}  "
              f"(paper {ex.PAPER_TABLE1[(dims, 'nonstationary', True)][0]}), without "
              f"{r['no_dp']['mean']:4.1f} ± {r['no_dp']['ci']:.1f}  "
              f"(paper {ex.PAPER_TABLE1[(dims, 'nonstationary', False)][0]})")
print("paper-like settings:", {k: (v.bandwidth, v.m, v.n_per)
                               for k, v in ex.NONSTATIONARY_PAPERLIKE.items()})

# %% [markdown]
# In 1-D, more points per lengthscale (n = 100, a longer lengthscale where the women are
# dense) brings the DP RMSE from ≈ 18 cm down to S21's 12.8 cm, and the no-DP RMSE up to
# its 8.6 cm; in 2-D a lower cap (m = 20) gives S21's 5.9 cm without DP and 16.3 cm with.
# The non-stationary rows are therefore *explained*: they depend on constants S21 does not
# print, and one setting per dimension lands on both of its numbers.
#
# **Stripes (§6.5).** The training set is synthetic (S21 gives neither stripe width nor
# label noise), so one draw's accuracy is one sample from a wide distribution. Over
# several draws — and paired within each draw — S21's claim that *one* private Newton step
# beats two is tested with a one-sided sign test: 12 draws, each the mean over ≥ 10 DP
# releases. p < 0.01 needs at most one lost draw; in our runs one step wins a draw with
# probability ≈ 0.99 (mean margin ≈ 0.1), so the test passes about 99 times in 100.

# %% tags=["claim"]
n_draws, n_rep_claim = 12, max(n_dp_reps, 10)  # ~5 s; passes (<= 1 loss) w.p. ~0.99
st = ex.stripes_draws(n_draws, stripes_n, rng, epsilon=epsilon, delta=delta,
                      n_rep=n_rep_claim)
p_steps = paired_sign_test(-st["one_step"], -st["two_steps"])  # higher accuracy is better
for key, paper in ex.S21_PAPER_STRIPES.items():
    print(f"{key:9s}: {st[key].mean():.2f} ± {1.96 * st[key].std(ddof=1) / np.sqrt(n_draws):.2f} "
          f"over {n_draws} training sets   (paper: {paper})")
print(f"one step beats two on {int(np.sum(st['one_step'] > st['two_steps']))}/{n_draws} "
      f"draws, sign test p = {p_steps:.4f}")
assert p_steps < 0.01, "S21's claim (one private Newton step beats two) not shown"

# %% [markdown]
# How the no-DP accuracy moves with the stand-in's unprinted choices (10 training sets each):
# S21's 0.81 lies between a dense-bottom gradient (our default, after S21's description)
# and uniformly spread points.

# %%
stand_in = {}
for label, grad in (("density gradient (default)", True), ("uniform density", False)):
    acc = ex.stripes_draws(10, stripes_n, rng, epsilon=epsilon, delta=delta, n_rep=1,
                           density_gradient=grad)["no_dp"]
    stand_in[label] = float(acc.mean())
    print(f"{label:27s}: accuracy without DP {acc.mean():.2f} (paper 0.81)")

# %% [markdown]
# **Selection (§6.7).** The expected RMSE under the exponential mechanism depends strongly
# on how many women the selection sees: the defaults subsample (`selection_subsample`) and
# use a small grid, which is why the Binder run reports far more than S21's 19.0 cm. The
# full-scale run (`notebooks/full_scale/`) uses all women and S21's 80 configurations; it
# brings the expected RMSE down to roughly 28–38 cm (it varies with the split), still above
# 19.0 cm. Two causes, shown
# next: the kit's valid SSE sensitivity is larger than the paper's (which drops a cross
# term), so its selection is flatter; and S21's own per-configuration RMSEs cannot all
# come from the stated model and data.

# %% [markdown]
# Where the remaining gap comes from. First, with S21's own sensitivity (rule "text",
# which the audit below shows to be invalid) the exponential mechanism is sharper and the
# expected RMSE drops. Second, the kit's per-configuration RMSEs rank like S21's
# Table 2, but S21's long-lengthscale rows are *below what the stated model can reach at
# all*: fitted to every woman and scored on the same women, with no DP noise, a GP with
# ℓ = 625 years and a kernel variance of at most 125 cm² is nearly a straight line in age,
# and heights from birth to 88 years are far from a line.

# %%
seed_sel = int(rng.integers(2**63))  # the same split for both sensitivity rules
by_rule = {rule: ex.selection_experiment(
    sel_data, lengthscales=selection_lengthscales, noise_variances=selection_noise,
    kernel_variances=selection_kvar, folds=selection_folds, epsilon=epsilon, d=setup_1d.d,
    rng=np.random.default_rng(seed_sel), rule=rule) for rule in ("valid", "text")}
for rule, r in by_rule.items():
    print(f"SSE sensitivity {rule:5s}: Δu = {r['sensitivity']:.3g}, expected RMSE "
          f"{r['expected_rmse']:.1f} cm")

# %%
floor = ex.in_sample_floor(kung_1d, list(ex.S21_PAPER_TABLE2), y_offset=setup_1d.y_offset)
below = []
for cfg, paper_rmse in ex.S21_PAPER_TABLE2.items():
    print(f"(l, noise var, kernel var) = {cfg}: S21 {paper_rmse:5.2f} cm (held-out, with DP); "
          f"kit floor {floor[cfg]:5.2f} cm (in-sample, no DP)")
    if paper_rmse < floor[cfg]:
        below.append(cfg)

# %%
n_sel = sel_data.n // 2
half = lambda v: 1.96 * np.std(v, ddof=1) / np.sqrt(len(v))  # noqa: E731
t1 = {(r["dims"], r["method"], r["dp"]): r for r in rows}
tab_setting = f"{n_folds}-fold CV on {kung_1d.n} women"
repro_rows = []
for (dims, method, dp), r in t1.items():
    if r["paper"] is None:
        continue
    expl = ""
    if method == "nonstationary":
        pl = sweep[dims]["paper-like"]["dp" if dp else "no_dp"]
        expl = (f"lengthscale constants unprinted: paper-like setting gives "
                f"{pl['mean']:.1f} ± {pl['ci']:.1f}")
    repro_rows.append(ReproRow("S21", f"Table 1 {dims} {method}{'' if dp else ' (no DP)'} (cm)",
                               r["paper"][0], r["rmse"],
                               1.96 * r["sd"] / np.sqrt(max(n_folds - 1, 1)), tab_setting,
                               expl))
for dims in ("1d", "2d"):
    for dp in (True, False):
        r = sweep[dims]["paper-like"]["dp" if dp else "no_dp"]
        repro_rows.append(ReproRow(
            "S21", f"Table 1 {dims} nonstationary{'' if dp else ' (no DP)'}, paper-like (cm)",
            ex.PAPER_TABLE1[(dims, "nonstationary", dp)][0], r["mean"], r["ci"],
            tab_setting + ", " + str(ex.NONSTATIONARY_PAPERLIKE[dims].bandwidth) + " bw",
            "unprinted constants"))
draw_setting = f"{n_draws} synthetic training sets of {stripes_n}, {n_rep_claim} DP draws each"
for key, paper in ex.S21_PAPER_STRIPES.items():
    repro_rows.append(ReproRow(
        "S21", f"stripes accuracy, {key.replace('_', ' ')}", paper, st[key].mean(),
        half(st[key]), draw_setting,
        "synthetic stand-in (stripe width, label noise, density unprinted); no DP moves "
        + " to ".join(f"{v:.2f}" for v in stand_in.values()) + " from gradient to uniform"))
repro_rows.append(ReproRow("S21", "one private Newton step beats two (sign-test p)", 0.01,
                           p_steps, None, draw_setting, "", bound="at_most"))
repro_rows.append(ReproRow(
    "S21", "selection: expected RMSE, exponential mechanism (cm)", 19.02,
    res10["expected_rmse"], None,
    f"{len(res10['labels'])} configurations, {n_sel} selection women, {selection_folds} folds",
    (f"{len(below)} of {len(floor)} S21 Table 2 RMSEs checked lie below the stated model's "
     f"in-sample no-DP floor (e.g. {below[-1]}: {ex.S21_PAPER_TABLE2[below[-1]]} vs "
     f"{floor[below[-1]]:.1f} cm): S21's data or scaling differ from those stated"
     if below else "") if selection_subsample == 0 and len(res10["labels"]) == 80 else
    f"defaults subsample {selection_subsample} women and {len(res10['labels'])} configurations "
    "(S21: 115 women, 80 configurations)"))
if repro_json:
    write_sidecar(repro_json, "02_smith_sparse_classification",
                  f"n_folds={n_folds}, kung_subsample={kung_subsample}, "
                  f"selection_subsample={selection_subsample}", repro_rows)

# %% [markdown]
# ## Exercises
#
# Difficulty: 1 ★★, 2 ★★, 3 ★★★, 4 ★ (★ check your understanding · ★★ apply · ★★★ explore).
# Solutions: `answers/02_smith_sparse_classification_answers.ipynb` — try first.
#
# 1. Change `setup_1d.n_inducing` and watch the outlier region of the noise band (Section 3).
#    Where does k-means put the inducing inputs when the outliers form their own cluster?
# 2. Give the two-step classifier 80 % of the budget in its first step: build
#    `TwoStepLaplaceClassifier(EQ(3.5), train.X, epsilon, delta, weights=(0.8, 0.2))` (from
#    `dpgp_audit.methods.s21.mechanisms`), sample it as `stripes_accuracy` does, and compare its
#    test accuracy with `res7["one_step"]`. Does it ever beat one step?
# 3. Rerun Section 1 with `rule="algorithm"` and find (with `check_sensitivity`) a neighbour pair
#    whose utility change exceeds the bound.
# 4. Drop configurations above a sensitivity threshold (`threshold=` in `selection_experiment`).
#    How do the expected RMSE and Δu change?
#
# <details><summary>Hints</summary>
#
# 1. `KungSetup(**{**setup_1d.__dict__, "n_inducing": m})`; k-means minimises squared
#    distances, so a tight group of outliers can capture a centroid of its own.
# 2. Each step is cloaked with its own (ε_i, δ_i) from `split_budget`; the second step starts
#    from the noisy first one.
# 3. Compare `config_sensitivity(m, 2.0, rule)` for the three rules on the toy folds.
# 4. Dropping configurations with a large sensitivity lowers Δu for the rest, so the choice
#    becomes sharper.
# </details>
