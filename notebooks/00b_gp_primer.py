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
# # 00b · A Gaussian-process primer for the DP-GP papers
#
# The papers of notebooks 01–04 start from a Gaussian process (GP) and ask what it
# leaks. This notebook gives the GP side of that story in the notation the course uses
# (see the [glossary and notation table](GLOSSARY.md)): every formula below is the one a
# DP mechanism later bounds or perturbs.
#
# **Learning objectives** — after working through it you can
#
# 1. compute a GP posterior mean and covariance (Rasmussen & Williams, Alg. 2.1) and say
#    why the posterior mean is a *linear* map **C y** of the targets — the object every
#    outputs-only mechanism of S18/S21 releases;
# 2. compute the **RKHS norm** of a function Σ α_i k(·, x_i) and of the change one target
#    makes to the posterior mean — the sensitivity of the functional mechanism (S18.1, R.1);
# 3. explain **inducing points**: why Titsias' sparse variational GP (SVGP) needs the data
#    only through A = K_ZX y and B = K_ZX K_XZ — the two statistics Honkela's DP-SVGP
#    privatises (H.1);
# 4. fit a **Laplace approximation** for GP classification and see that one Newton step
#    is again linear in the labels — the step S21 cloaks (S21.3);
# 5. write the posterior mean and its sensitivity yourself, checked in the notebook.
#
# **What you'll need:** linear algebra (Cholesky, inverse, eigenvalues) and the idea of a
# multivariate Gaussian. No DP knowledge; notebook 00 covers that. About an hour with the
# exercises.
#
# **Notation.** K′ = k(X, X) is the kernel (Gram) matrix of the inputs, σ² the noise
# variance and **K = K′ + σ²I** the covariance of the noisy targets; k_* = k(X, x_*).

# %% tags=["parameters"]
seed: int = 2024  # seed of the one random generator
n_points: int = 40  # training points of the regression example
lengthscale: float = 1.0  # EQ kernel lengthscale
noise_sd: float = 0.2  # standard deviation of the observation noise
d: float = 1.0  # how far one target may move (outputs-only neighbours)
n_inducing: int = 8  # inducing inputs of the sparse GP
n_class: int = 60  # training points of the classification example

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from dpgp_audit.params import check_notebook_params
from dpgp_audit.viz import show

p = check_notebook_params(seed=seed, n_points=n_points, lengthscale=lengthscale,
                          noise_sd=noise_sd, d=d, n_inducing=n_inducing, n_class=n_class)
for name in ("lengthscale", "noise_sd", "d"):
    if not p[name] > 0:
        raise ValueError(f"{name} must be > 0, got {p[name]!r}")
rng = np.random.default_rng(p["seed"])
print(p)
# The regression data of sections 2-4, drawn first from the generator (the answers
# notebook repeats these two lines and so gets the same data).
X = np.sort(rng.uniform(-4, 4, p["n_points"]))
y = np.sin(1.5 * X) + 0.3 * X + p["noise_sd"] * rng.standard_normal(X.size)

# %% [markdown]
# ## 1 · The prior: a distribution over functions
#
# A GP with kernel k says that the values f(x_1), …, f(x_n) at any inputs are jointly
# Gaussian with covariance k(x_i, x_j). The exponentiated-quadratic (EQ) kernel
# $k(x, x') = s^2 \exp(-(x - x')^2/(2\ell^2))$ makes nearby inputs strongly correlated:
# ℓ is how far apart two inputs must be before their values become nearly independent,
# and s² is the prior variance of each value. Below, prior draws for three lengthscales
# (the inputs x are unit-free numbers here, and so are ℓ and f).

# %%
from dpgp_audit.gp.kernels import EQ

xs = np.linspace(-5, 5, 200)
fig, axes = plt.subplots(1, 3, figsize=(12, 3.4), sharey=True, layout="constrained")
for ax, ell in zip(axes, (0.3, 1.0, 3.0), strict=True):
    Kp = EQ(lengthscale=ell)(xs[:, None])
    lam, Q = np.linalg.eigh(Kp)  # a square root of K′ without jitter
    draws = rng.standard_normal((3, xs.size)) @ (Q * np.sqrt(np.clip(lam, 0, None))).T
    ax.plot(xs, draws.T, lw=1)
    ax.set(title=f"three prior draws, ℓ = {ell:g}", xlabel="input x")
axes[0].set_ylabel("function value f(x)")
fig.suptitle("GP prior with the EQ kernel (s² = 1): shorter ℓ, wigglier functions")
show(fig)

# %% [markdown]
# ## 2 · The posterior mean and covariance (R&W Alg. 2.1)
#
# Observe y_i = f(x_i) + noise with variance σ². With K = K′ + σ²I and k_* = k(X, x_*):
#
# $$\bar f(x_*) = k_*^\top K^{-1} y = k_*^\top \alpha, \qquad
#   \operatorname{var} f(x_*) = k(x_*, x_*) - k_*^\top K^{-1} k_* .$$
#
# `ExactGP(kernel, σ²).fit(X, y)` computes both through one Cholesky factor of K. We check
# it against the formula written out with `np.linalg.solve`.

# %%
from dpgp_audit.gp.regression import ExactGP

kern = EQ(lengthscale=p["lengthscale"])
noise_var = p["noise_sd"] ** 2
fit = ExactGP(kern, noise_var).fit(X[:, None], y)
mean, var = fit.predict(xs[:, None])

K_prime = kern(X[:, None])
K = K_prime + noise_var * np.eye(X.size)  # K = K′ + σ²I
k_star = kern(X[:, None], xs[:, None])  # (n, m)
mean_direct = k_star.T @ np.linalg.solve(K, y)
var_direct = kern.diag(xs[:, None]) - np.einsum("ij,ij->j", k_star, np.linalg.solve(K, k_star))
print(f"largest difference, mean: {np.max(np.abs(mean - mean_direct)):.1e}, "
      f"variance: {np.max(np.abs(var - var_direct)):.1e}")

post = fit.sample_posterior(xs[:, None], 3, rng)
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(X, y, "k.", label="data")
ax.plot(xs, mean, "k", lw=2, label="posterior mean")
ax.fill_between(xs, mean - 2 * np.sqrt(var), mean + 2 * np.sqrt(var), color="0.8",
                label="±2 sd")
ax.plot(xs, post.T, lw=0.8, alpha=0.8, label=["three posterior draws", None, None])
ax.set(xlabel="input x", ylabel="function value f(x)",
       title="GP posterior: mean, ±2 sd and three draws")
ax.legend(frameon=False, fontsize=8)
show(fig)

# %% [markdown]
# **The posterior mean is linear in y.** f̄ = C y with C = K_*f K⁻¹ (`fit.mean_weights`).
# The posterior *variance* does not involve y at all. Under the outputs-only relation (X
# public, one y_j moves by at most d) the release f̄ moves by d times one column c_j of C:
# that is all S18's cloaking and standard DP-GP need to know.

# %%
C = fit.mean_weights(xs[:, None])
print(f"C has shape {C.shape}; max |C y - mean| = {np.max(np.abs(C @ y - mean)):.1e}")
largest_column = float(np.max(np.linalg.norm(C, axis=0)))
display(Markdown(
    f"Moving one target by d = {p['d']:g} moves the mean on this grid by at most "
    f"**{p['d'] * largest_column:.3f}** in Euclidean norm (the largest ‖d·c_j‖)."))

# %% [markdown]
# ## 3 · The RKHS norm and the sensitivity of the posterior mean
#
# The functions h = Σ_i β_i k(·, x_i) form the kernel's reproducing-kernel Hilbert space
# (RKHS), with norm ‖h‖²_H = βᵀ K′ β (S18 eq. 1; R Def. 3.3). The posterior mean is such a
# function with β = α = K⁻¹ y. Changing target j by d changes α by d K⁻¹ e_j, so the change
# of the mean has RKHS norm
#
# $$\| \bar f_D - \bar f_{D'} \|_{\mathcal H} = d \sqrt{e_j^\top K^{-1} K' K^{-1} e_j}.$$
#
# The functional mechanism adds a GP sample path scaled by this sensitivity (the largest
# over j). Note **K′** in the middle, **K** outside: confusing them is a common slip.

# %%
from dpgp_audit.methods.s18.standard import rkhs_sensitivity

Kinv = np.linalg.inv(K)
per_target = p["d"] * np.sqrt(np.einsum("ij,jk,ki->i", Kinv, K_prime, Kinv))
j_worst = int(np.argmax(per_target))
kit_value = rkhs_sensitivity(Kinv, K_prime, p["d"])
print(f"largest RKHS change {per_target[j_worst]:.4f} (target {j_worst}); "
      f"kit's rkhs_sensitivity: {kit_value:.4f}")

beta = p["d"] * Kinv[:, j_worst]
change = k_star.T @ beta  # Σ β_i k(x_*, x_i)
fig, ax = plt.subplots(figsize=(7, 3))
ax.plot(xs, change, lw=2, label=f"f̄_D − f̄_D′ when y_{j_worst} moves by d")
ax.plot(X[j_worst], 0, "o", color="C3", label=f"x_{j_worst}, the target that moves most")
ax.plot(X, np.full(X.size, change.min()), "|", color="0.4", ms=10, label="training inputs")
ax.axhline(0, color="0.6", lw=0.5)
ax.set(xlabel="input x", ylabel="change of the posterior mean",
       title=f"the change one target makes to the posterior mean (d = {p['d']:g})")
ax.legend(frameon=False, fontsize=8)
show(fig)

# where does the worst target sit? (its distance to its nearest neighbours in X)
gaps = np.diff(X)
left = gaps[j_worst - 1] if j_worst > 0 else np.inf
right = gaps[j_worst] if j_worst < X.size - 1 else np.inf
isolation = min(left, right)
edge = j_worst in (0, X.size - 1)
where = ("at an edge of the data" if edge else
         f"inside the data, where its nearest neighbour is {isolation:.2f} away — "
         f"{isolation / np.median(gaps):.1f} times the median spacing of the inputs "
         f"({np.median(gaps):.2f})")
rank = int(np.sum(np.minimum(np.r_[np.inf, gaps], np.r_[gaps, np.inf]) > isolation)) + 1
display(Markdown(
    f"The change is localised near $x_j$ (on the scale of ℓ) and is largest where few other "
    f"points pin the mean down. Here the worst target, $x_{{{j_worst}}}$ = "
    f"{X[j_worst]:.2f}, sits {where}; among the {X.size} inputs it is the "
    f"{'most' if rank == 1 else f'no. {rank} most'} isolated. Edges and gaps in the data "
    "both leave a target alone; it is the isolation that matters."))

# %% [markdown]
# A shorter lengthscale or a smaller noise variance σ² makes K⁻¹ larger and the
# sensitivity with it.
#
# ## 4 · Inducing points and the sparse variational GP (SVGP)
#
# Exact inference costs O(n³). Sparse GPs summarise the function by its values u = f(Z) at
# M ≪ n **inducing inputs** Z. Titsias' optimal variational q(u) = N(m, S) (H eq. 2) needs
# the data only through two statistics (H eq. 3):
#
# $$A = K_{ZX}\, y = \sum_i y_i k_i, \qquad B = K_{ZX} K_{XZ} = \sum_i k_i k_i^\top,
#   \qquad k_i = k(Z, x_i).$$
#
# Each data row contributes one term to each sum, which is why Honkela's DP-SVGP can
# privatise them with one Gaussian mechanism (notebook 03). Z is placed by k-means on the
# *public* inputs (S21 §3.2), never using y.

# %%
from dpgp_audit.gp.inducing import kmeans_inducing
from dpgp_audit.gp.svgp import predict_from_qu, sufficient_statistics, titsias_qu

Z = kmeans_inducing(X[:, None], p["n_inducing"], rng)
A, B = sufficient_statistics(kern, Z, X[:, None], y)
Kzz = kern(Z) + 1e-8 * np.eye(len(Z))
qu = titsias_qu(Kzz, A, B, noise_var)
sv_mean, sv_var = predict_from_qu(Kzz, kern(xs[:, None], Z), kern.diag(xs[:, None]), qu)
gap = float(np.sqrt(np.mean((sv_mean - mean) ** 2)))
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(X, y, "k.", ms=4, label="data")
ax.plot(xs, mean, "k", lw=2, label="exact posterior mean")
ax.plot(xs, sv_mean, color="C0", lw=2, ls="--", label=f"SVGP mean, M = {len(Z)}")
ax.fill_between(xs, sv_mean - 2 * np.sqrt(sv_var), sv_mean + 2 * np.sqrt(sv_var),
                color="C0", alpha=0.15)
ax.plot(Z[:, 0], np.full(len(Z), ax.get_ylim()[0]), "^", color="C0", ms=9,
        label="inducing inputs Z")
ax.set(xlabel="input x", ylabel="function value f(x)",
       title="exact GP vs sparse variational GP (band: SVGP ±2 sd)")
ax.legend(frameon=False, fontsize=8)
show(fig)
display(Markdown(f"With M = {len(Z)} inducing inputs the SVGP mean differs from the exact one "
                 f"by **{gap:.3f}** (root mean square over the grid)."));

# %% [markdown]
# ## 5 · The Laplace approximation for classification
#
# With labels $y \in \{-1, +1\}$ and a logistic likelihood the posterior is not Gaussian. The
# Laplace approximation replaces it by a Gaussian at its mode f̂, found by Newton steps
# (R&W eq. 3.18). One step from f̂ is
#
# $$f_{new} = (K'^{-1} + W)^{-1}(W \hat f + t - \pi(\hat f)), \qquad t = (y + 1)/2,$$
#
# with π = σ(f̂) and $W = \mathrm{diag}(\pi(1 - \pi))$. Only t depends on the labels, so a step is
# offset + **C y** with C = ½(K′⁻¹ + W)⁻¹ (S21 eq. 11): linear again, and S21 cloaks it.

# %%
from dpgp_audit.gp.laplace import LaplaceClassifier

Xc = np.sort(rng.uniform(-4, 4, p["n_class"]))
prob_true = 1 / (1 + np.exp(-3 * np.sin(Xc)))
yc = np.where(rng.uniform(size=Xc.size) < prob_true, 1.0, -1.0)
clf = LaplaceClassifier(EQ(lengthscale=p["lengthscale"], variance=4.0), Xc[:, None])
f_hat = clf.mode(yc)
proba = clf.predict_proba(f_hat, xs[:, None])
step = clf.newton_map(f_hat)  # the step as offset + C y
pi = 1 / (1 + np.exp(-f_hat))
w = pi * (1 - pi)
Kc, sw = clf.K, np.sqrt(w)
# (K′⁻¹ + W)⁻¹ without inverting the ill-conditioned K′ (Woodbury; R&W eq. 3.27)
A_inv = Kc - (Kc * sw) @ np.linalg.solve(np.eye(Kc.shape[0]) + sw[:, None] * Kc * sw, sw[:, None] * Kc)
by_formula = A_inv @ (w * f_hat + (yc + 1) / 2 - pi)
print(f"one Newton step, kit vs formula: {np.max(np.abs(step.apply(yc) - by_formula)):.1e}; "
      f"C vs ½(K′⁻¹ + W)⁻¹: {np.max(np.abs(step.C - 0.5 * A_inv)):.1e}")
accuracy = float(np.mean((clf.predict_proba(f_hat, Xc[:, None]) > 0.5) == (yc > 0)))
fig, ax = plt.subplots(figsize=(7, 3))
ax.plot(Xc, (yc + 1) / 2, "k|", ms=12, label="labels (0/1)")
ax.plot(xs, proba, "k", lw=2, label="P(y = +1), Laplace")
ax.plot(xs, 1 / (1 + np.exp(-3 * np.sin(xs))), color="0.6", ls="--", label="true probability")
ax.set(xlabel="input x", ylabel="probability of class +1", ylim=(-0.05, 1.05),
       title="GP classification by the Laplace approximation")
ax.legend(frameon=False, fontsize=8)
show(fig)
display(Markdown(f"Training accuracy of the Laplace classifier: **{accuracy:.2f}**."));

# %% [markdown]
# ## Summary
#
# | object | formula | used by |
# |---|---|---|
# | posterior mean | f̄ = K_*f K⁻¹ y = C y, K = K′ + σ²I | S18.1, S18.2, S21.2 |
# | RKHS sensitivity | d max_j sqrt(e_jᵀ K⁻¹ K′ K⁻¹ e_j) | S18.1, R.1 |
# | SVGP statistics | A = K_ZX y, B = K_ZX K_XZ | H.1 |
# | Laplace step | offset + C y, C = ½(K′⁻¹ + W)⁻¹ | S21.3 |
#
# **Next:** notebook 00 (DP basics) if you have not read it, then 01 (S18).
#
# ## Exercises
#
# Difficulty: ★ check your understanding · ★★ apply · ★★★ explore. Solutions:
# `answers/00b_gp_primer_answers.ipynb` (try first!).
#
# **Exercises 1–2: write the code.** Complete the function in the cell, then run it: the
# check below it says ✓ for every property your function has, or gives a hint for the
# first one it lacks. A wrong answer never stops the notebook.
#
# ### Exercise 1 · ★ The posterior mean
# Complete `posterior_mean(K_prime, k_star, y, noise_var)`: given K′ = k(X, X), the
# cross-covariances `k_star` = k(X, X_*) (one column per test input), the targets y and
# the noise variance σ², return the posterior mean at every test input (§2). Prefer
# `np.linalg.solve` to an explicit inverse.

# %%
from dpgp_audit.exercises import check


def posterior_mean(K_prime, k_star, y, noise_var):
    ...  # your code here


check("00b.1", posterior_mean)

# %% [markdown]
# ### Exercise 2 · ★★ The sensitivity of the posterior mean
# Complete `rkhs_change(K_prime, noise_var, d)`: the largest RKHS norm of the change of
# the posterior mean when one target moves by at most d (the formula of §3, maximised
# over the targets j). Compare your value on this notebook's data with the kit's
# `rkhs_sensitivity` printed in §3.

# %%
def rkhs_change(K_prime, noise_var, d):
    ...  # your code here


check("00b.2", rkhs_change)

# %% [markdown]
# ### Questions
#
# 3. ★ **Linearity.** Double every target. What happens to the posterior mean, and to the
#    posterior variance? Check with `ExactGP(...).fit(X[:, None], 2 * y)`.
# 4. ★ **K or K′?** Compute the RKHS sensitivity with K′ replaced by K in the middle of the
#    formula. Is the result larger or smaller, and why is it wrong?
# 5. ★★ **Lengthscale and sensitivity.** Plot `rkhs_sensitivity` against ℓ from `0.2` to
#    `5` with σ fixed. Which lengthscales make a private release expensive?
# 6. ★★ **How many inducing inputs?** Plot the RMS gap between the SVGP and exact means
#    against the number of inducing inputs, `range(2, 21, 2)`.
# 7. ★★★ **One person's row in A and B.** Remove one training row and recompute A and B.
#    Show that the change equals $(y_i k_i, k_i k_i^\top)$ exactly, and bound ‖k_i‖ for the
#    EQ kernel.
#
# <details><summary>Hints</summary>
#
# 1. §2's formula; `np.linalg.solve(K, y)` solves K α = y.
# 2. Take the diagonal of $K^{-1} K' K^{-1}$; `np.einsum` or `np.diag` both work.
# 3. C does not depend on y; the variance formula has no y in it.
# 4. $K = K' + \sigma^2 I \succeq K'$, so $e^\top K^{-1} K K^{-1} e = e^\top K^{-1} e
#    \ge e^\top K^{-1} K' K^{-1} e$.
# 5. Loop over `EQ(lengthscale=l)`; rebuild K and K⁻¹ each time.
# 6. Reuse `kmeans_inducing`, `sufficient_statistics`, `titsias_qu`, `predict_from_qu`.
# 7. `sufficient_statistics` on `np.delete(X, i)`; each entry of k_i is at most $s^2 = 1$,
#    so $\|k_i\| \le \sqrt{M}$.
# </details>
