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
# # 02 · S21: sparse cloaking, private GP classification, private hyperparameters
#
# Smith, Álvarez & Lawrence, *Differentially Private Regression and Classification with Sparse
# Gaussian Processes* (JMLR; **S21** in the catalogue), extend the cloaking mechanism of
# notebook 01.
#
# **Learning objectives** — after the core of this lab you can
#
# 1. explain why outliers force large cloaking noise and how inducing inputs placed by k-means
#    on the *public* inputs reduce it (S21.2), while a density-driven lengthscale does not
#    (S21.1) — and write the sparse cloaking matrix yourself;
# 2. reproduce S21 Table 1 on the !Kung data;
# 3. make GP classification private by cloaking one Laplace Newton step (S21.3), write that
#    step's cloaking matrix, and see why a second private step loses accuracy;
# 4. select hyperparameters privately with S21 Alg. 1 (S21.5), and compute the sensitivity of
#    a clipped squared error that the paper's formula undercounts.
#
# **What you'll need:** notebook 01 (cloaking). Notation as in the [glossary](GLOSSARY.md);
# here M is the number of inducing inputs (not a noise covariance), and a classification label
# $y \in \{-1, +1\}$ can change by $d = 2$.
#
# **How to use it:** the core runs from here to the end of "Exercises" (the three exercises
# that ask you to write code are the heart of the lab). Everything after the heading
# "Appendix" is optional: further figures of the paper, the reproductions gap by gap and
# bookkeeping. The defaults run in a minute or two; the paper's sizes are in
# `notebooks/full_scale/02_smith_sparse_classification.yaml` (set them in the parameters cell).

# %% tags=["parameters"]
seed = 0  # seed of the random generator
epsilon = 1.0  # privacy of the releases and of the selection
delta = 0.01  # δ of the Gaussian releases
kung_subsample = 0  # women used (0: all)
n_folds = 14  # folds of Table 1 (S21: 14)
band_points = 31  # test inputs of the 1-D noise bands
map_side = 8  # test grid side of the 2-D noise maps
inducing_list = [2, 3, 5, 8]  # numbers of inducing inputs of the RMSE curve (appendix)
stripes_n = 200  # training points of the stripes classification (S21: 200)
n_dp_reps = 10  # DP releases per classifier
cancer_n = 80  # breast-cancer points (appendix)
digits_train = 60  # digits training images (appendix)
digits_test = 60  # digits test images (appendix)
digits_lengthscales = [20.0, 40.0]  # lengthscales of the digits classifier (appendix)
digits_inducing = [4, 8]  # numbers of inducing inputs for the digits (appendix)
selection_lengthscales = [5.0, 25.0, 125.0]  # candidate lengthscales (years)
selection_noise = [1.0, 25.0]  # candidate noise variances (cm²)
selection_kvar = [1.0, 25.0]  # candidate kernel variances (cm²)
selection_folds = 3  # folds of the selection's cross-validation
selection_subsample = 60  # women the selection sees (0: all)
selection_epsilons = [0.1, 1.0, 10.0]  # selection budgets of the Fig. 11 heat map
show_progress = False  # progress messages
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

if not (0 < epsilon and 0 < delta < 1):
    raise ValueError("epsilon must be > 0 and delta in (0, 1)")
if n_folds < 2 or selection_folds < 2:
    raise ValueError("need at least 2 folds")
rng = np.random.default_rng(seed)
# the selection gets its own generator, so its numbers do not depend on the sections before
rng_selection = np.random.default_rng([seed, 5])
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
# Private selection (S21 Alg. 1) scores each configuration by minus its cross-validated sum of
# squared errors (SSE), with errors clipped to $\pm 4d$ and the expected DP noise included, and
# picks one with the exponential mechanism, whose noise is set by the utility's sensitivity
# $\Delta u$. The paper's toy: four points $x = (0, 1, 2, 4)$, $y = (0, \tfrac12, 1, 2)$, two
# folds, a polynomial of order zero against one of order one, $d = 2$ and $(1, 0.01)$-DP. We compute the SSEs
# *exactly* (the expected DP noise is $\sigma^2 \operatorname{tr} M$ per fold); the paper's
# values are Monte Carlo estimates of the same numbers.

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
        prob = exponential_probabilities(-np.array(dp), 1.0, du)
        print(f"{split:11s} rule={rule:5s}: SSE no DP {plain[0]:.3f}/{plain[1]:.3f}, "
              f"SSE with DP {dp[0]:.2f}/{dp[1]:.2f} (clipped {clipped[0]:.1f}/{clipped[1]:.1f}), "
              f"Δu = {du:.0f}, P(0th order) = {100 * prob[0]:.2f}%")

# %% [markdown]
# With the paper's rule (S21 eq. 13, "text") we reproduce S21's $\Delta u$ = 116<!--out--> and
# 99.87 %<!--out-->, and the SSE 337<!--out-->, $\Delta u$ = 53<!--out--> and 93.94 %<!--out-->
# for the interleaved split (numbers marked like these are checked against the printed
# output by the notebook tests). Two caveats:
#
# * **The paper's sensitivity undercounts.** Moving a prediction by $\delta$ changes a squared
#   error $e^2$ by $2e\delta + \delta^2$, not $\delta^2$. With errors clipped to $\pm 4d$ the
#   exact worst case per point is $|\delta|(8d - |\delta|)$ (you derive it in exercise 2.3);
#   summed with the same perturbed point in every fold this gives $\Delta u$ = 140<!--out-->
#   for the toy, and a pair of neighbouring datasets attains it. S21 Alg. 1 as printed sorts
#   ascending and sums the *smallest* folds, which is smaller still. The kit's default rule is
#   the valid one.
# * **The paper's SSEs are unclipped**: its SSE for the first-order polynomial exceeds what
#   clipped errors allow, since Alg. 1 line 9 adds the unclipped SSE. Using it with the clipped
#   sensitivity is the planted (deliberately wrong) mechanism `planted/s21-unclipped-sse`,
#   which the black-box auditor flags in Section 6.

# %% [markdown]
# ## 2. !Kung regression: S21 Table 1
#
# Heights (cm) of the !Kung women from age (one input) and from age and weight (two); EQ kernel, lengthscale
# $15$ years (and $15$ kg), variance $10$ cm², noise $25$ cm², $(1, 0.01)$-DP with $d = 100$ cm,
# and five k-means inducing inputs for sparse cloaking. RMSEs with DP are the exact expectation
# over the cloaking noise. *Standard* cloaking is notebook 01's; *non-stationary* cloaking
# shrinks the lengthscale where the inputs are dense (a Gibbs kernel, S21 §3.1); *sparse*
# cloaking releases the FITC mean (S21 §3.2), whose cloaking matrix you write in exercise 2.1.

# %%
rows = ex.kung_table1(kung_1d, kung_2d, n_folds, rng, {"1d": setup_1d, "2d": setup_2d})
print(f"{n_folds}-fold cross-validation on n = {kung_1d.n}")
print(vz.format_table1(rows))
close = [r for r in rows if r["paper"] is not None and r["method"] != "nonstationary"]
z = [abs(r["rmse"] - r["paper"][0]) / r["paper"][1] for r in close]
dp_rows = {(r["dims"], r["method"]): r["rmse"] for r in rows if r["dp"]}
sparse_wins = all(dp_rows[(dims, "sparse")] < dp_rows[(dims, "standard")] for dims in ("1d", "2d"))
display(Markdown(
    f"RMSE in cm, ours ± sd over folds (S21's in brackets), {n_folds}-fold cross-validation on "
    f"{kung_1d.n} women:\n\n" + vz.format_table1_markdown(rows) + "\n\n"
    f"For standard and sparse cloaking every RMSE of the kit lies within **{max(z):.1f}** of "
    "S21's standard deviations from the paper's value. "
    + ("Sparse cloaking has the lowest DP RMSE in 1-D and in 2-D, as in the paper. "
       if sparse_wins else "Sparse cloaking does not beat standard cloaking in this run. ")
    + "The non-stationary variant uses a density lengthscale with the kit's own constants (S21 "
    "does not give its lengthscale function); Appendix D shows how much its rows move with them."))

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
fig.suptitle("DP releases of height against age, (1, 0.01)-DP")
show(fig)

medians: dict[str, float] = {}
g1, g2 = np.meshgrid(np.linspace(0, 85, map_side), np.linspace(5, 60, map_side))
grid = np.column_stack([g1.ravel(), g2.ravel()])
tr2 = Dataset(kung_2d.X, kung_2d.y - setup_2d.y_offset)
fig, axes = plt.subplots(1, 3, figsize=(14, 5.6), layout="constrained")
for ax, method in zip(axes, ("standard", "sparse", "nonstationary"), strict=True):
    rel = ex.regression_release(method, kung_2d.X, grid, setup_2d, rng)
    sd = np.sqrt(np.clip(np.diag(rel.cov(tr2)), 0, None))
    vz.plot_noise_map_2d(kung_2d.X, grid, rel.query(tr2) + setup_2d.y_offset, sd,
                         Z=rel.info.get("Z") if hasattr(rel, "info") else None, ax=ax,
                         title=f"{method} cloaking", xlabel="age (years)",
                         ylabel="weight (kg)", value_label="height", unit="cm")
    medians[method] = float(np.median(sd))
    print(f"{method:13s}: median DP-noise sd over the grid {medians[method]:6.1f} cm")
fig.suptitle("DP noise over age and weight: disk area = released height, opacity = noise")
show(fig)

# %% [markdown]
# **Reading the figures.** Top: the DP releases (thin lines, in the cloaking colour of the whole
# course) around the non-private mean (black) with their $\pm 1$ sd noise band (dashed), along age.
# Bottom: one disk per test input over the age–weight plane; its area is the released height
# and its opacity falls as the DP noise grows (the legend gives both scales). Cloaking puts
# noise where *one* target can move the prediction: near isolated points, which act as levers,
# and less where many neighbours pin the mean down. Sparse cloaking (inducing inputs from
# k-means on the public inputs) summarises each region by a few inducing inputs, so an outlier
# cannot pull the release on its own; the non-stationary (Gibbs) kernel changes the lengthscale
# with the input density but still lets each target act on its own neighbourhood.

# %%
order_m = sorted(medians, key=medians.get)
display(Markdown(
    "In this run the median DP-noise sd over the 2-D grid is "
    + ", ".join(f"**{medians[m]:.0f} cm** ({m})" for m in order_m)
    + f": {order_m[0]} cloaking adds the least noise."))

# %% [markdown]
# ## 4. Classification: one vs two private Newton steps (S21 §4, Fig. 7, §6.5)
#
# The Laplace approximation finds the posterior mode $\hat f$ by Newton steps
# $\hat f_{new} = (K^{-1} + W)^{-1}(W\hat f + \nabla \log p(y \mid \hat f))$, with
# $W = \operatorname{diag}(\pi_i(1 - \pi_i))$ and $\pi = $ logistic$(\hat f)$. With labels
# $y \in \{-1, +1\}$ the gradient is $(y + 1)/2 - \pi$, so the step is an offset that does
# not depend on the labels plus $Cy$ with $C = \tfrac12 (K^{-1} + W)^{-1}$ (S21 eqs. 10–11):
# one Newton step is a linear release of the labels, and cloaking makes it private (a label
# flip moves $y_i$ by $d = 2$). You write this C in exercise 2.2. The training set is a
# synthetic two-dimensional "stripes" stand-in (S21 does not print its data).

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
fig, ax = plt.subplots(figsize=(7.5, 4))
vz.plot_stripes(train, test, res7["proba_one_step"], ax=ax,
                title="one private Newton step: mean P(y = +1) over DP releases")
show(fig)
one, two = res7["one_step"].mean(), res7["two_steps"].mean()
display(Markdown(
    "**Reading the figure.** The colour is the mean private P(+1) of the one-step classifier on "
    "the test grid, the disk's area its confidence; the crosses are the training points. A "
    "second private step needs its own share of the budget, so each step is noisier, and the "
    "second step starts from the noisy first one (S21 §6.5). In this run: one step "
    f"**{one:.2f}**, two steps **{two:.2f}** mean accuracy "
    f"({'one step is better' if one > two else 'two steps are not worse here'}; the paper "
    "found one step better). S21 reports 0.81 without DP, 0.69 with one step and 0.51 with two."))

# %% [markdown]
# ## 5. Private hyperparameter selection (S21 Alg. 1, Figs. 10–11)
#
# Half of the !Kung women select (κ-fold cross-validation inside it, clipped SSE with the
# expected cloaking noise, valid sensitivity); the other half measures each configuration's DP
# RMSE. The exponential mechanism spends ε on the selection; the regression release spends its
# own $(1, 0.01)$. The defaults use a subsample and a small grid of configurations; S21 uses
# every woman and eighty configurations.

# %%
sel_data = subsample(kung_dataset() if kung_1d.name != "synthetic stand-in" else kung_1d,
                     selection_subsample, rng_selection)
seed_sel = int(rng_selection.integers(2**63))  # one split for every selection below
res10 = ex.selection_experiment(sel_data, lengthscales=selection_lengthscales,
                                noise_variances=selection_noise, kernel_variances=selection_kvar,
                                folds=selection_folds, epsilon=epsilon, d=setup_1d.d,
                                rng=np.random.default_rng(seed_sel))
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

# %%
# Fig. 11: probability of each lengthscale as the selection budget changes
mech = res10["mechanism"]
u = -res10["sse"][mech.kept]
labels = np.array(res10["labels"])[mech.kept]
ls_of = np.array([float(s.split(",")[0].split("=")[1]) for s in labels])
table = []
for eps in selection_epsilons:
    prob = exponential_probabilities(u, eps, mech.sensitivity_bound())
    table.append([prob[ls_of == ls].sum() for ls in selection_lengthscales])
fig, ax = plt.subplots(figsize=(6, 3.5))
vz.plot_selection_by_budget(table, selection_epsilons, selection_lengthscales, ax=ax)
show(fig)
top = selection_lengthscales[int(np.argmax(table[-1]))]
display(Markdown(
    "**Reading the figure.** Each column is one selection budget ε, each row a lengthscale; the "
    "colour is the total probability of selecting any configuration with that lengthscale. With "
    "a small ε the choice is close to uniform; as ε grows the probability concentrates on the "
    f"configurations with the best utility — at ε = {selection_epsilons[-1]:g} on ℓ = {top:g} "
    f"years in this run (largest share {max(table[-1]):.2f})."))

# %% [markdown]
# **The valid sensitivity against the paper's.** On the same split, the selection with the
# kit's valid $\Delta u$ and with S21's eq. 13 ("text", which undercounts):

# %%
by_rule = {rule: ex.selection_experiment(
    sel_data, lengthscales=selection_lengthscales, noise_variances=selection_noise,
    kernel_variances=selection_kvar, folds=selection_folds, epsilon=epsilon, d=setup_1d.d,
    rng=np.random.default_rng(seed_sel), rule=rule) for rule in ("valid", "text")}
for rule, r in by_rule.items():
    print(f"SSE sensitivity {rule:5s}: Δu = {r['sensitivity']:.3g}, expected RMSE "
          f"{r['expected_rmse']:.1f} cm, largest selection probability "
          f"{r['probabilities'].max():.3f}")
du_ratio = by_rule["valid"]["sensitivity"] / by_rule["text"]["sensitivity"]
display(Markdown(
    f"In this run the valid Δu is **{du_ratio:.2f}×** the paper's, so the exponential "
    f"mechanism is flatter: it expects {by_rule['valid']['expected_rmse']:.1f} cm against "
    f"{by_rule['text']['expected_rmse']:.1f} cm with the paper's (invalid) Δu."))

# %% [markdown]
# **At the paper's scale.** A paper-scale run (every woman, split into a selection half and an
# evaluation half, five folds, S21's eighty configurations, `seed=0`; the settings of
# `notebooks/full_scale/02_smith_sparse_classification.yaml`) expects a held-out RMSE of
# 32.8<!--run: paper-scale run--> cm under the exponential mechanism with the valid
# sensitivity, and 30.3<!--run: paper-scale run--> cm with the paper's rule; a uniform pick
# expects 60.2<!--run: paper-scale run--> cm and the best configuration reaches
# 19.15<!--run: paper-scale run--> cm. There the valid $\Delta u$ is
# 1.46<!--run: paper-scale run--> times the paper's. The split matters: over five paper-scale
# runs (`seed` from `0` to `4`) the valid $\Delta u$ was between 1.46<!--run: paper-scale run-->
# and 2.51<!--run: paper-scale run--> times the paper's, and the expected RMSE between
# 29.0<!--run: paper-scale run--> and 35.7<!--run: paper-scale run--> cm (between
# 24.7<!--run: paper-scale run--> and 30.9<!--run: paper-scale run--> cm with the paper's rule).
# S21 §6.7 reports 19.02<!--paper--> cm under the exponential mechanism and
# 87.05<!--paper--> cm for a uniform pick; Appendix D explains most of the gap.

# %% [markdown]
# ## 6. Audit a mechanism at its claim
#
# Every S21 mechanism is in the kit's catalogue; here the white-box auditor checks the classification
# release on adversarial label flips, and the black-box auditor (which only samples the
# mechanism's output) catches the planted unclipped-SSE selection.

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
# ## Exercises
#
# Difficulty: ★ check your understanding · ★★ apply · ★★★ explore. Solutions:
# `answers/02_smith_sparse_classification_answers.ipynb` — try first.
#
# The first three ask you to **write code**: fill in the function in the cell below each one
# and run the check cell after it, which tells you at once what holds and what does not (a
# wrong answer never stops the notebook).
#
# ### Exercise 2.1 ★★ — the sparse (FITC) cloaking matrix
#
# Write `fitc_cloaking_matrix(kernel, X, Z, Xs, noise_variance)`: the matrix C of S21 eq. 9
# whose product with the training targets is the FITC posterior mean at the test inputs `Xs`,
#
# $$C = K_{*M}\, Q_{MM}^{-1} K_{MN} (\Lambda + \sigma^2 I)^{-1}, \qquad
#   Q_{MM} = K_{MM} + K_{MN} (\Lambda + \sigma^2 I)^{-1} K_{NM},$$
#
# with $\Lambda = \operatorname{diag}(k(x_n, x_n) - k_{nM} K_{MM}^{-1} k_{Mn})$. `kernel(A, B)`
# gives the covariance matrix between the rows of A and B, `kernel(A)` that of A with itself
# and `kernel.diag(A)` its diagonal; `Z` holds the inducing inputs.

# %%
def fitc_cloaking_matrix(kernel, X, Z, Xs, noise_variance):
    """C of S21 eq. 9: (number of test inputs) × (number of training inputs)."""
    ...  # your code here


# %%
from dpgp_audit.exercises import check

check("02.1", fitc_cloaking_matrix)

# %% [markdown]
# ### Exercise 2.2 ★★ — one Newton step's cloaking matrix
#
# Write `newton_cloaking_matrix(K, f_hat)`: $C = \tfrac12 (K^{-1} + W)^{-1}$ with
# $W = \operatorname{diag}(\pi_i(1 - \pi_i))$, $\pi_i = 1/(1 + e^{-\hat f_i})$ (S21 eq. 11).
# (For large K prefer a form without $K^{-1}$; the check uses small, well-conditioned ones.)

# %%
def newton_cloaking_matrix(K, f_hat):
    """C of S21 eq. 11 at the latent values f_hat."""
    ...  # your code here


# %%
check("02.2", newton_cloaking_matrix)

# %% [markdown]
# ### Exercise 2.3 ★ — the clipped squared error's sensitivity
#
# S21 Alg. 1 clips each error at $\pm 4d$: it scores $h(e) = \min(e^2, (4d)^2)$. Write
# `clipped_square_sensitivity(delta, d)`: the largest change $\sup_e |h(e + \delta) - h(e)|$
# over all errors $e$ when one prediction moves by $\delta$ — the quantity S21 eq. 13 takes to
# be $\delta^2$. Sketch $h$ first: where is the change largest?

# %%
def clipped_square_sensitivity(delta, d):
    """sup over e of |min((e + delta)², (4d)²) − min(e², (4d)²)|."""
    ...  # your code here


# %%
check("02.3", clipped_square_sensitivity)

# %% [markdown]
# ### More exercises
#
# 4. ★★ Change `setup_1d.n_inducing` and watch the outlier region of the noise band (Section
#    3). Where does k-means put the inducing inputs when the outliers form their own cluster?
# 5. ★★ Give the two-step classifier most of the budget in its first step: build
#    `TwoStepLaplaceClassifier(EQ(3.5), train.X, epsilon, delta, weights=(0.8, 0.2))` (from
#    `dpgp_audit.methods.s21.mechanisms`), sample it as `stripes_accuracy` does, and compare
#    its test accuracy with `res7["one_step"]`. Does it ever beat one step?
# 6. ★★★ Build Section 1's selection as a mechanism with `rule="algorithm"` (`CVSelection`
#    from `dpgp_audit.methods.s21.private_selection`) and find, with `check_sensitivity`, a pair
#    of neighbouring datasets whose utility change exceeds its bound.
# 7. ★ Drop configurations above a sensitivity threshold (`threshold=` in
#    `selection_experiment`). How do the expected RMSE and Δu change?
#
# <details><summary>Hints</summary>
#
# * Exercise 2.1: with $D = \Lambda + \sigma^2 I$ diagonal, `Kmn / (lam + noise_variance)` is
#   $K_{MN} D^{-1}$; `np.linalg.solve` instead of inverses.
# * Exercise 2.2: `pi = 1 / (1 + np.exp(-f_hat))`.
# * Exercise 2.3: write $h(e + \delta) - h(e)$ for an $e$ just inside the clip; the cross term $2e\delta$
#   is largest when $e$ is as large as the clip allows.
# * Exercise 4: `KungSetup(**{**setup_1d.__dict__, "n_inducing": m})`; k-means minimises squared
#   distances, so a tight group of outliers can capture a centroid of its own.
# * Exercise 5: each step is cloaked with its own (ε_i, δ_i) from `split_budget`; the second step starts
#   from the noisy first one.
# * Exercise 6: the toy's own targets have small errors; the checker needs a dataset whose folds fit
#   badly. Compare `config_sensitivity(m, 2.0, rule)` for the three rules first.
# * Exercise 7: dropping configurations with a large sensitivity lowers Δu for the rest, so the choice
#   becomes sharper.
# </details>

# %% [markdown]
# # Appendix
#
# Optional material: further figures of S21 on stand-ins, the reproductions gap by gap and
# bookkeeping.
#
# ## Appendix A · RMSE against the number of inducing inputs (S21 Fig. 4)

# %%
res4 = ex.rmse_vs_inducing(kung_1d, [m for m in inducing_list if m < kung_1d.n // 2], n_folds,
                           setup_1d, rng)
fig, ax = plt.subplots(figsize=(6, 3.5))
vz.plot_rmse_vs_inducing(res4, ax=ax)
show(fig)
for m, a, b in zip(res4["m"], res4["dp"], res4["no_dp"], strict=True):
    print(f"M = {m:3d}: RMSE with DP {a:6.1f} cm, without {b:5.1f} cm")
best_m = res4["m"][int(np.argmin(res4["dp"]))]
display(Markdown(
    "**Reading the figure.** Without DP, more inducing inputs can only make the sparse GP closer "
    "to the exact one. With DP they also give one target more directions in which to move the "
    "release, so the cloaking noise grows with M: the private RMSE trades approximation error "
    f"against noise (S21 Fig. 4). In this run the private RMSE is lowest at **M = {best_m}**."))

# %% [markdown]
# ## Appendix B · Classification with one input on a real dataset (S21 Fig. 6)
#
# The paper's Home Equity Loans data are not shipped by any registry package, so as a
# **stand-in** we use scikit-learn's breast-cancer data with one feature (worst concave points,
# scaled to the range from zero to ten): the input is public, the diagnosis ($\pm 1$) private.
# One private Newton step with $d = 2$.

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
fig, ax = plt.subplots(figsize=(6.5, 3.2))
vz.plot_release_violins(grid_b, p_dp, p_nodp, ax=ax,
                        xlabel="worst concave points (scaled to 0–10)",
                        ylabel="P(malignant)",
                        title="one private Newton step: P(malignant) over 30 releases")
show(fig)
spread = np.percentile(p_dp, 75, axis=0) - np.percentile(p_dp, 25, axis=0)
display(Markdown(
    "**Reading the figure.** Each violin is the spread of the predicted probability over 30 DP "
    "releases at one input; the crosses are the non-private classifier (20 Newton steps). A "
    "narrow violin around a cross means the private classifier can be trusted there. In this run "
    f"the interquartile range of P(malignant) over releases is between {spread.min():.2f} and "
    f"{spread.max():.2f} across the inputs (widest at input {grid_b[int(np.argmax(spread))]:g})."))

# %% [markdown]
# ## Appendix C · Sparse classification in higher dimension (S21.4, Fig. 8)
#
# scikit-learn's digits (images of eight by eight pixels, values from zero to sixteen) are our
# **stand-in for MNIST**: the digits zero to four against five to nine, a Subset-of-Regressors
# classifier with k-means inducing inputs.

# %%
dtrain, dtest = ex.digits_binary(digits_train, digits_test, rng)
res8 = ex.digits_sparse_accuracy(dtrain, dtest, digits_lengthscales, digits_inducing,
                                 epsilon=epsilon, delta=delta, n_rep=n_dp_reps, rng=rng)
chance = max(np.mean(dtest.y > 0), np.mean(dtest.y < 0))
fig, ax = plt.subplots(figsize=(7.5, 3.5), layout="constrained")
vz.plot_digits_accuracy(res8, chance, ax=ax)
show(fig)
for a, ls in enumerate(res8["lengthscales"]):
    print(f"l = {ls:5.1f}: no DP {np.round(res8['no_dp'][a], 2)}, DP {np.round(res8['dp'][a], 2)}")
dp8, nodp8 = np.asarray(res8["dp"]), np.asarray(res8["no_dp"])
gap8 = nodp8 - dp8
low = [(a, k) for a in range(dp8.shape[0]) for k in range(dp8.shape[1]) if dp8[a, k] <= chance]
if low:
    where = "; ".join(f"ℓ = {res8['lengthscales'][a]:g}, M = {res8['m'][k]} ({dp8[a, k]:.2f}, "
                      f"without DP {nodp8[a, k]:.2f})" for a, k in low)
    both = all(nodp8[a, k] <= chance for a, k in low)
    chance_text = (
        f"The private classifier is **at or below chance** ({chance:.2f}: always guessing the "
        f"test set's majority class) at {where}: there it is useless"
        + (", and so is the non-private one — too few inducing inputs, not DP, are the cause."
           if both else "."))
else:
    chance_text = f"Every private setting beats chance ({chance:.2f}) in this run."
display(Markdown(
    "**Reading the figure.** Solid black lines: accuracy without DP; dashed lines in the cloaking "
    "colour: with DP; the marker tells the lengthscales apart; the dotted grey line is chance. "
    "With sixty-four inputs the Subset-of-Regressors model keeps the private release "
    "M-dimensional, so the noise does not grow with the number of training points. In this run "
    f"the accuracy lost to DP ranges from {gap8.min():.2f} to {gap8.max():.2f} across "
    f"lengthscales and M (a negative value: the private run happened to do better). "
    + chance_text))

# %% [markdown]
# ## Appendix D · S21's numbers, gap by gap
#
# **Table 1, non-stationary rows.** S21 §6.1 built its lengthscale function by hand and gives
# none of its constants. The kit's density lengthscale $r(x) = [1/m + \rho(x)/n]^{-1}$ has
# three (a KDE bandwidth, a cap $m$, points per lengthscale $n$): the rows move a lot with
# them. The same folds for every setting; ± is the $95\%$ interval of the mean over folds.

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
lines = []
for dims in ("1d", "2d"):
    kit, like = sweep[dims]["kit default"], sweep[dims]["paper-like"]
    pl = ex.NONSTATIONARY_PAPERLIKE[dims]
    lines.append(
        f"In {dims.upper()}, the paper-like setting (cap m = {pl.m[0]:g}, n = {pl.n_per:g} points "
        f"per lengthscale) moves the DP RMSE from {kit['dp']['mean']:.1f} to "
        f"**{like['dp']['mean']:.1f} ± {like['dp']['ci']:.1f} cm** (S21: "
        f"{ex.PAPER_TABLE1[(dims, 'nonstationary', True)][0]}) and the no-DP RMSE from "
        f"{kit['no_dp']['mean']:.1f} to **{like['no_dp']['mean']:.1f} ± "
        f"{like['no_dp']['ci']:.1f} cm** (S21: {ex.PAPER_TABLE1[(dims, 'nonstationary', False)][0]}).")
display(Markdown(" ".join(lines) + " The non-stationary rows depend on constants S21 does not "
                 "print; one setting per dimension lands near both of its numbers."))

# %% [markdown]
# **Stripes (S21 §6.5).** The training set is synthetic (S21 gives neither stripe width nor
# label noise), so one draw's accuracy is one sample from a wide distribution. Over several
# draws — paired within each draw — S21's claim that *one* private Newton step beats two is
# tested with a one-sided sign test over twelve draws, each the mean over at least ten DP
# releases; $p < 0.01$ needs at most one lost draw. The verdict is printed, not asserted: the
# test suite checks the claim at the default settings.

# %% tags=["claim"]
n_draws, n_rep_claim = 12, max(n_dp_reps, 10)
st = ex.stripes_draws(n_draws, stripes_n, rng, epsilon=epsilon, delta=delta,
                      n_rep=n_rep_claim)
p_steps = paired_sign_test(-st["one_step"], -st["two_steps"])  # higher accuracy is better
for key, paper in ex.S21_PAPER_STRIPES.items():
    print(f"{key:9s}: {st[key].mean():.2f} ± {1.96 * st[key].std(ddof=1) / np.sqrt(n_draws):.2f} "
          f"over {n_draws} training sets   (paper: {paper})")
print(f"one step beats two on {int(np.sum(st['one_step'] > st['two_steps']))}/{n_draws} "
      f"draws, sign test p = {p_steps:.4f}")
print("S21's claim (one private Newton step beats two):",
      "shown (p < 0.01)" if p_steps < 0.01 else "not shown at this size")

# %% [markdown]
# How the no-DP accuracy moves with the stand-in's unprinted choices (ten training sets each):

# %%
stand_in = {}
for label, grad in (("density gradient (default)", True), ("uniform density", False)):
    acc = ex.stripes_draws(10, stripes_n, rng, epsilon=epsilon, delta=delta, n_rep=1,
                           density_gradient=grad)["no_dp"]
    stand_in[label] = float(acc.mean())
    print(f"{label:27s}: accuracy without DP {acc.mean():.2f} (paper 0.81)")
lo_acc, hi_acc = sorted(stand_in.values())
display(Markdown(
    f"S21's 0.81 {'lies between' if lo_acc <= 0.81 <= hi_acc else 'lies outside'} the "
    f"no-DP accuracy of a dense-bottom gradient (our default, after S21's description: "
    f"{stand_in['density gradient (default)']:.2f}) and of uniformly spread points "
    f"({stand_in['uniform density']:.2f})."))

# %% [markdown]
# **Selection (S21 §6.7).** The expected RMSE under the exponential mechanism depends strongly
# on how many women the selection sees: the defaults subsample (`selection_subsample`) and use a
# small grid, which is why the default run reports far more than S21's 19.02<!--paper--> cm.
# Section 5 quotes a paper-scale run, still above it. Two causes: the kit's valid SSE
# sensitivity is larger than the paper's (which drops a cross term), so its selection is
# flatter (Section 5); and S21's own per-configuration RMSEs cannot all come from the stated
# model and data. Fitted to every woman and scored on the same women, with no DP noise, a GP
# with a lengthscale of hundreds of years and a small kernel variance is nearly a straight line
# in age, and heights from birth to old age are far from a line:

# %%
floor = ex.in_sample_floor(kung_1d, list(ex.S21_PAPER_TABLE2), y_offset=setup_1d.y_offset)
below = []
for cfg, paper_rmse in ex.S21_PAPER_TABLE2.items():
    print(f"(l, noise var, kernel var) = {cfg}: S21 {paper_rmse:5.2f} cm (held-out, with DP); "
          f"kit floor {floor[cfg]:5.2f} cm (in-sample, no DP)")
    if paper_rmse < floor[cfg]:
        below.append(cfg)
display(Markdown(
    f"{len(below)} of the {len(floor)} S21 Table 2 RMSEs checked lie **below** the in-sample, "
    "noise-free error of the stated model on the stated data — impossible for a held-out RMSE "
    "with DP noise; S21's data or scaling must differ from those it states."
    if below else "Every S21 Table 2 RMSE checked lies above the stated model's in-sample floor."))

# %% [markdown]
# ## Appendix E · Bookkeeping for the full-scale runs
#
# `make notebooks` runs this notebook at the sizes of `notebooks/full_scale/` and collects the
# rows below, one per number of the paper, into a machine-readable summary (`repro_json`).

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
print(f"{len(repro_rows)} reproduction rows" + (f" written to {repro_json}" if repro_json else ""))
