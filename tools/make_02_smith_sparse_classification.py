"""Generate notebooks/02_smith_sparse_classification.ipynb (no outputs) with nbformat."""

from __future__ import annotations

from pathlib import Path

import nbformat as nbf

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "notebooks" / "02_smith_sparse_classification.ipynb"

cells = []


def md(text: str) -> None:
    """Append a markdown cell."""
    cells.append(nbf.v4.new_markdown_cell(text.strip()))


def code(text: str, tags: list[str] | None = None) -> None:
    """Append a code cell (optionally tagged)."""
    cell = nbf.v4.new_code_cell(text.strip())
    if tags:
        cell.metadata["tags"] = tags
    cells.append(cell)


md("""
# S21: sparse and non-stationary cloaking, private GP classification, private hyperparameters

Smith, Álvarez & Lawrence, *Differentially Private Regression and Classification with Sparse
Gaussian Processes* (JMLR; **S21** in the catalogue), extend the S18 cloaking mechanism.

**Learning objectives** — after this notebook you can

1. explain why outliers force large cloaking noise and how inducing inputs placed by k-means on the
   *public* inputs reduce it (S21.2), while a density-driven Gibbs lengthscale does not (S21.1);
2. reproduce S21 Table 1 and Fig. 4 on the !Kung data;
3. make GP classification private by cloaking one Laplace Newton step with data sensitivity 2
   (S21.3), see why a second private step loses accuracy, and scale it with the Subset of
   Regressors (S21.4);
4. select hyperparameters privately with S21 Alg. 1 (S21.5), including why the paper's
   sensitivity formula undercounts and what we use instead.

Small defaults run in about a minute; the full-scale settings of the paper are in the next cell's
comments (run them with papermill).
""")

code("""
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
""", tags=["parameters"])

code("""
import matplotlib.pyplot as plt
import numpy as np
from threadpoolctl import threadpool_limits

from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.kung import DataUnavailableError, kung_dataset
from dpgp_audit.datasets.synthetic import stripes_2d, stripes_grid
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.experiments import s21 as ex
from dpgp_audit.methods.s21.mechanisms import LaplaceCloakingClassifier
from dpgp_audit.viz import s21 as vz

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


try:
    kung_1d = kung_dataset()
    kung_2d = kung_dataset(inputs=("age", "weight"))
except DataUnavailableError as err:  # offline without a mirror: a synthetic stand-in
    print("!Kung data unavailable:", err)
    age = np.sort(rng.uniform(0, 85, 287))
    height = 150 - 90 * np.exp(-age / 6) + 5 * rng.standard_normal(287)
    kung_1d = Dataset(age, height, "synthetic stand-in")
    kung_2d = Dataset(np.column_stack([age, 0.3 * height - 5 + rng.standard_normal(287)]),
                      height, "synthetic stand-in")
sub = rng.choice(kung_1d.n, size=kung_subsample, replace=False) if kung_subsample else None
if sub is not None:
    sub = np.sort(sub)
    kung_1d = Dataset(kung_1d.X[sub], kung_1d.y[sub], kung_1d.name)
    kung_2d = Dataset(kung_2d.X[sub], kung_2d.y[sub], kung_2d.name)
print(kung_1d, kung_2d)
setup_1d = ex.KungSetup()
setup_2d = ex.KungSetup(lengthscale=(15.0, 15.0), bandwidth=(5.0, 5.0), m=(40.0, 40.0),
                        neighbourhood=(10.0, 10.0))
""")

md("""
## 1. The toy example of S21 §5.1 (S21.5)

Four points x = [0, 1, 2, 4], y = [0, ½, 1, 2], two folds, a 0th- vs a 1st-order polynomial,
d = 2 and (1, 0.01)-DP. The cloaking matrices of the first fold are C0 = [[½, ½], [½, ½]] and
C1 = [[−1, 2], [−3, 4]]. We compute the SSEs *exactly* (the expected DP noise is
σ² tr(M) per fold); the paper's 50 and 1597 are Monte Carlo estimates of the same numbers.
""")

code("""
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
""")

md("""
With the paper's rule (eq. 13, "text") we reproduce Δu = 116 and 99.87 %, and 337, 53, 93.94 % for
the interleaved split. Two caveats, both checked in `tests/test_s21_*.py`:

* **The paper's sensitivity undercounts.** Moving a prediction by δ changes a squared error
  e² by 2eδ + δ², not δ². With errors clipped to ±4d the exact per-point supremum is
  |δ|(8d − |δ|); summed with the same perturbed point in every fold this gives Δu = 140 for the toy
  (a witness pair attains 140 > 116). Alg. 1 as printed sorts ascending and sums the *smallest*
  κ − 1 folds (Δu = 61), which is smaller still. The kit's default rule is the valid one.
* **The paper's SSEs are unclipped** (1597 > 4 · (4d)² = 256): Alg. 1 line 9 adds the unclipped SSE.
  Using it with the clipped sensitivity is the planted bug `planted/s21-unclipped-sse`, which the
  black-box auditor flags.
""")

md("""
## 2. !Kung regression: S21 Table 1

Heights (cm) of the !Kung women from age (1-D) and age + weight (2-D); EQ kernel, lengthscale
15 years (and 15 kg), variance 10 cm², noise 25 cm², (1, 0.01)-DP with d = 100 cm, 5 k-means
inducing inputs. RMSEs with DP are the exact expectation over the cloaking noise.
""")

code("""
rows = ex.kung_table1(kung_1d, kung_2d, n_folds, rng, {"1d": setup_1d, "2d": setup_2d})
print(f"{n_folds}-fold cross-validation on n = {kung_1d.n}")
print(vz.format_table1(rows))
""")

md("""
Sparse cloaking wins clearly under DP, especially in 2-D, as in the paper. Our non-stationary
variant uses the neighbourhood-minimum density lengthscale of §6.1 with our own constants (the
paper does not give its lengthscale function); it also fails to help, for the reason of §6.3:
points with very different lengthscales hardly covary, so dense regions cannot support the outliers.
""")

md("""
**Reference run** (defaults: all 287 women, 14 folds, seed 0; RMSE in cm, ours vs paper):

| | standard | sparse | non-stationary |
|---|---|---|---|
| 1-D, DP | 14.1 ± 4.1 (13.3 ± 3.2) | 10.3 ± 1.6 (9.9 ± 1.7) | 18.1 ± 1.7 (12.8 ± 2.0) |
| 2-D, DP | 18.2 ± 2.2 (17.2 ± 3.1) | 10.5 ± 1.8 (10.2 ± 1.6) | 15.2 ± 2.0 (16.3 ± 2.5) |
| 1-D, no DP | 7.4 ± 1.5 (7.1 ± 1.8) | 8.0 ± 1.8 (7.7 ± 1.9) | 7.6 ± 1.6 (8.6 ± 2.2) |
| 2-D, no DP | 5.5 ± 1.5 (5.2 ± 1.5) | 7.9 ± 2.3 (7.7 ± 2.0) | 7.6 ± 2.0 (5.9 ± 1.7) |

Standard and sparse cloaking agree with the paper within a fraction of a standard deviation;
the non-stationary numbers depend on the unpublished lengthscale function.
""")

md("## 3. Where the noise goes (S21 Figs. 3 and 5)")

code("""
xs = np.linspace(0, 90, band_points)
tr1 = Dataset(kung_1d.X, kung_1d.y - setup_1d.y_offset)
fig, axes = plt.subplots(1, 3, figsize=(13, 3.2), sharey=True)
for ax, method in zip(axes, ("standard", "nonstationary", "sparse"), strict=True):
    rel = ex.regression_release(method, kung_1d.X, xs, setup_1d, rng)
    mean = rel.query(tr1) + setup_1d.y_offset
    sd = np.sqrt(np.clip(np.diag(rel.cov(tr1)), 0, None))
    draws = rel.sample(tr1, 3, rng) + setup_1d.y_offset
    vz.plot_noise_band_1d(kung_1d.X, kung_1d.y, xs, mean, sd, samples=draws, ax=ax,
                          title=f"{method} cloaking")
    ax.set_ylim(0, 250)
plt.show()

g1, g2 = np.meshgrid(np.linspace(0, 85, map_side), np.linspace(5, 60, map_side))
grid = np.column_stack([g1.ravel(), g2.ravel()])
tr2 = Dataset(kung_2d.X, kung_2d.y - setup_2d.y_offset)
fig, axes = plt.subplots(1, 3, figsize=(13, 3.5))
for ax, method in zip(axes, ("standard", "sparse", "nonstationary"), strict=True):
    rel = ex.regression_release(method, kung_2d.X, grid, setup_2d, rng)
    sd = np.sqrt(np.clip(np.diag(rel.cov(tr2)), 0, None))
    vz.plot_noise_map_2d(kung_2d.X, grid, rel.query(tr2), sd, Z=rel.info.get("Z")
                         if hasattr(rel, "info") else None, ax=ax, title=method)
    ax.set_xlabel("age (years)")
    ax.set_ylabel("weight (kg)")
    print(f"{method:13s}: median DP-noise sd over the grid {np.median(sd):6.1f} cm")
plt.show()
""")

md("## 4. RMSE against the number of inducing inputs (S21 Fig. 4)")

code("""
res4 = ex.rmse_vs_inducing(kung_1d, [m for m in inducing_list if m < kung_1d.n // 2], n_folds,
                           setup_1d, rng)
vz.plot_rmse_vs_inducing(res4)
plt.show()
for m, a, b in zip(res4["m"], res4["dp"], res4["no_dp"], strict=True):
    print(f"M = {m:3d}: RMSE with DP {a:6.1f} cm, without {b:5.1f} cm")
""")

md("""
## 5. Classification, 1-D: a real dataset (S21 Fig. 6)

The paper's Home Equity Loans data are not shipped by any registry package, so as a **stand-in**
we use scikit-learn's breast-cancer data with one feature (worst concave points, scaled to 0–10):
the input is public, the diagnosis (±1) private. One private Newton step with d = 2.
""")

code("""
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
plt.violinplot(p_dp, positions=grid_b, widths=0.4)
plt.plot(grid_b, p_nodp, "kx", label="non-DP (mode, 20 steps)")
plt.xlabel("worst concave points (scaled)")
plt.ylabel("P(malignant)")
plt.legend()
plt.show()
""")

md("## 6. Classification, 2-D stripes: one vs two private steps (S21 Fig. 7, §6.5)")

code("""
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
plt.show()
""")

md("""
## 7. Sparse classification in higher dimension (S21.4, Fig. 8)

scikit-learn's 8×8 digits are our **stand-in for MNIST** (pixels 0–16, 64 dimensions):
low {0–4} = −1 against high {5–9} = +1, Subset-of-Regressors with k-means inducing inputs.
""")

code("""
dtrain, dtest = ex.digits_binary(digits_train, digits_test, rng)
res8 = ex.digits_sparse_accuracy(dtrain, dtest, digits_lengthscales, digits_inducing,
                                 epsilon=epsilon, delta=delta, n_rep=n_dp_reps, rng=rng)
chance = max(np.mean(dtest.y > 0), np.mean(dtest.y < 0))
vz.plot_digits_accuracy(res8, chance)
plt.show()
for a, ls in enumerate(res8["lengthscales"]):
    print(f"l = {ls:5.1f}: no DP {np.round(res8['no_dp'][a], 2)}, DP {np.round(res8['dp'][a], 2)}")
""")

md("""
## 8. Private hyperparameter selection (S21 Alg. 1, Figs. 10–11)

Half of the !Kung data selects (κ-fold CV inside it, clipped SSE with the expected cloaking
noise, valid sensitivity), the other half measures each configuration's DP RMSE. The exponential
mechanism spends ε on the selection; the regression release spends its own (1, 0.01).
""")

code("""
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
plt.show()
""")

md("""
Reference run at the paper's scale (all 287 women, halves of 143/144, 5 folds, the 80
configurations, seed 0): expected held-out RMSE 28.5 cm under the exponential mechanism with the
valid sensitivity (25.3 cm with the paper's eq. 13 rule), 54.4 cm for a uniform pick; largest
selection probability 0.018 (paper 0.024); best configuration l = 125, RMSE 17.8 cm (paper:
l = 25, 14.55 cm). The valid Δu is about twice the paper's, so the choice is flatter.
""")

code("""
# Fig. 11: probability of each lengthscale as the selection budget changes
mech = res10["mechanism"]
u = -res10["sse"][mech.kept]
labels = np.array(res10["labels"])[mech.kept]
ls_of = np.array([float(s.split(",")[0].split("=")[1]) for s in labels])
table = []
for eps in selection_epsilons:
    p = exponential_probabilities(u, eps, mech.sensitivity_bound())
    table.append([p[ls_of == ls].sum() for ls in selection_lengthscales])
plt.imshow(np.array(table).T, aspect="auto", cmap="Greys", origin="lower")
plt.xticks(range(len(selection_epsilons)), [str(e) for e in selection_epsilons])
plt.yticks(range(len(selection_lengthscales)), [str(v) for v in selection_lengthscales])
plt.xlabel("selection epsilon")
plt.ylabel("lengthscale")
plt.colorbar(label="P(selected)")
plt.show()
""")

md("""
## 9. Audit a mechanism at its claim

Every S21 mechanism is registered; here the white-box auditor checks the classification release
on adversarial label flips, and the black-box auditor catches the planted unclipped-SSE selection.
""")

code("""
from dpgp_audit import catalogue
from dpgp_audit.audit.blackbox import audit_blackbox
from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.whitebox import audit_whitebox

mech3, data3 = catalogue.get("S21.3/laplace-classification").make()
pairs = neighbour_pairs(data3, mech3.claim.relation, rng, y_bound=1.0, n_random=0)
print("S21.3 white-box:", audit_whitebox(mech3, pairs).verdict.value)
planted, pdata = catalogue.get("planted/s21-unclipped-sse").make()
res = audit_blackbox(planted, pdata, pdata.with_target(0, pdata.y[0] + 1.0), n=20_000, rng=rng,
                     score="categorical")
print(f"planted/s21-unclipped-sse black-box: {res.verdict.value}, certified epsilon >= "
      f"{res.estimate:.2f} (claimed 1)")
""")

md("""
## Exercises

1. Change `setup_1d.n_inducing` and watch the outlier region of the noise band (Section 3).
   Where does k-means put the inducing inputs when the outliers form their own cluster?
2. Give the two-step classifier 80 % of the budget in its first step (`weights=(0.8, 0.2)`).
   Does it ever beat one step?
3. Rerun Section 1 with `rule="algorithm"` and find (with `check_sensitivity`) a neighbour pair
   whose utility change exceeds the bound.
4. Drop configurations above a sensitivity threshold (`threshold=` in `selection_experiment`).
   How do the expected RMSE and Δu change?
""")

nb = nbf.v4.new_notebook()
nb.cells = cells
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nb.metadata["language_info"] = {"name": "python"}
OUT.parent.mkdir(exist_ok=True)
nbf.write(nb, OUT)
print(f"wrote {OUT}")
