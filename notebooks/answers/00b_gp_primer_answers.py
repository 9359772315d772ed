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
# # Answers · 00b · A Gaussian-process primer
#
# Solutions to the exercises of `00b_gp_primer.ipynb`. Try them first; notation as in the
# [glossary](../GLOSSARY.md). The setup repeats the primer's regression data: the same
# seed and the same first draws from the generator, so the same X and y (and the same
# sensitivity the primer prints in §3).

# %% tags=["parameters"]
seed: int = 2024  # seed of the one random generator
n_points: int = 40  # training points
lengthscale: float = 1.0  # EQ kernel lengthscale
noise_sd: float = 0.2  # observation noise standard deviation
d: float = 1.0  # outputs-only bound on one target change
n_lengthscales: int = 25  # grid of exercise 3
max_inducing: int = 20  # largest M in exercise 4

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.methods.s18.standard import rkhs_sensitivity
from dpgp_audit.params import check_notebook_params

p = check_notebook_params(seed=seed, n_points=n_points, lengthscale=lengthscale,
                          noise_sd=noise_sd, d=d, n_lengthscales=n_lengthscales,
                          max_inducing=max_inducing)
rng = np.random.default_rng(p["seed"])
X = np.sort(rng.uniform(-4, 4, p["n_points"]))
y = np.sin(1.5 * X) + 0.3 * X + p["noise_sd"] * rng.standard_normal(X.size)
xs = np.linspace(-5, 5, 200)
kern = EQ(lengthscale=p["lengthscale"])
noise_var = p["noise_sd"] ** 2

# %% [markdown]
# ## 1 · ★ The posterior mean
# One linear solve with K = K′ + σ²I, then the cross-covariances. Each solution cell is
# self-contained (it imports what it uses), so it can be copied into the primer as it is.

# %% tags=["solution-00b.1"]
import numpy as np


def posterior_mean(K_prime, k_star, y, noise_var):
    K = K_prime + noise_var * np.eye(len(y))
    return k_star.T @ np.linalg.solve(K, y)


# %%
from dpgp_audit.exercises import check

check("00b.1", posterior_mean)
K_prime = kern(X[:, None])
mean_mine = posterior_mean(K_prime, kern(X[:, None], xs[:, None]), y, noise_var)
mean_kit, _ = ExactGP(kern, noise_var).fit(X[:, None], y).predict(xs[:, None])
print(f"largest difference from ExactGP on the primer's data: "
      f"{np.max(np.abs(mean_mine - mean_kit)):.1e}")

# %% [markdown]
# ## 2 · ★★ The sensitivity of the posterior mean
# The diagonal of $K^{-1} K' K^{-1}$ holds $e_j^\top K^{-1} K' K^{-1} e_j$ for every j at once.

# %% tags=["solution-00b.2"]
import numpy as np


def rkhs_change(K_prime, noise_var, d):
    Kinv = np.linalg.inv(K_prime + noise_var * np.eye(K_prime.shape[0]))
    return d * float(np.sqrt(np.max(np.diag(Kinv @ K_prime @ Kinv))))


# %%
check("00b.2", rkhs_change)
display(Markdown(f"On the primer's data: **{rkhs_change(K_prime, noise_var, p['d']):.4f}** — "
                 "the value the primer's §3 prints as the kit's `rkhs_sensitivity`."))

# %% [markdown]
# ## 3 · ★ Linearity
# The mean doubles (it is C y and C does not depend on y); the variance is unchanged (its
# formula contains no y).

# %%
m1, v1 = ExactGP(kern, noise_var).fit(X[:, None], y).predict(xs[:, None])
m2, v2 = ExactGP(kern, noise_var).fit(X[:, None], 2 * y).predict(xs[:, None])
print(f"max |mean(2y) - 2 mean(y)| = {np.max(np.abs(m2 - 2 * m1)):.1e}; "
      f"max |var(2y) - var(y)| = {np.max(np.abs(v2 - v1)):.1e}")

# %% [markdown]
# ## 4 · ★ K or K′?
# With K in the middle, e_jᵀK⁻¹KK⁻¹e_j = e_jᵀK⁻¹e_j. Since K = K′ + σ²I ⪰ K′ the result is
# **larger**: it adds the σ² part, which belongs to the noise, not to the function space
# the mean lives in. It is a valid but loose bound; it is not the RKHS norm of the change.

# %%
K_prime = kern(X[:, None])
K = K_prime + noise_var * np.eye(X.size)
Kinv = np.linalg.inv(K)
right = rkhs_sensitivity(Kinv, K_prime, p["d"])
wrong = rkhs_sensitivity(Kinv, K, p["d"])
display(Markdown(f"RKHS sensitivity with K′: **{right:.4f}**; with K by mistake: "
                 f"**{wrong:.4f}** ({wrong / right:.2f}× larger)."))

# %% [markdown]
# ## 5 · ★★ Lengthscale and sensitivity
# Short-to-moderate lengthscales are expensive: each target pins its own piece of the
# mean, so moving it moves that piece almost freely. As ℓ grows, neighbouring points share
# the load and the RKHS change of one target shrinks. The cell below says where the
# maximum lies on this data.

# %%
ells = np.geomspace(0.2, 5.0, p["n_lengthscales"])
sens = []
for ell in ells:
    Kp = EQ(lengthscale=float(ell))(X[:, None])
    sens.append(rkhs_sensitivity(np.linalg.inv(Kp + noise_var * np.eye(X.size)), Kp, p["d"]))
fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(ells, sens, "k-o", ms=3)
ax.set(xscale="log", xlabel="lengthscale ℓ (same unit as x)", ylabel="RKHS sensitivity Δ",
       title=f"sensitivity of the posterior mean, d = {p['d']:g}, σ = {p['noise_sd']:g}")
display(Markdown(f"Largest sensitivity **{max(sens):.2f}** at ℓ ≈ {ells[int(np.argmax(sens))]:.2g}; "
                 f"at the longest ℓ = {ells[-1]:.2g} it is **{sens[-1]:.2f}**."));

# %% [markdown]
# ## 6 · ★★ How many inducing inputs?

# %%
from dpgp_audit.gp.inducing import kmeans_inducing
from dpgp_audit.gp.svgp import predict_from_qu, sufficient_statistics, titsias_qu

exact_mean, _ = ExactGP(kern, noise_var).fit(X[:, None], y).predict(xs[:, None])
ms = list(range(2, min(p["max_inducing"], p["n_points"]) + 1, 2))
gaps = []
for m in ms:
    Z = kmeans_inducing(X[:, None], m, rng)
    A, B = sufficient_statistics(kern, Z, X[:, None], y)
    Kzz = kern(Z) + 1e-8 * np.eye(m)
    mean_m, _ = predict_from_qu(Kzz, kern(xs[:, None], Z), kern.diag(xs[:, None]),
                                titsias_qu(Kzz, A, B, noise_var))
    gaps.append(float(np.sqrt(np.mean((mean_m - exact_mean) ** 2))))
fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(ms, gaps, "k-o", ms=3)
ax.set(yscale="log", xlabel="number of inducing inputs M",
       ylabel="RMS gap to the exact mean", title="SVGP mean against the exact posterior mean")
span = float(X.max() - X.min())
display(Markdown(f"The gap falls quickly once the inducing inputs are about one lengthscale "
                 f"apart (here the inputs span {span:.1f} units with ℓ = {p['lengthscale']:g})."));

# %% [markdown]
# ## 7 · ★★★ One person's row in A and B

# %%
i = 3
A_all, B_all = sufficient_statistics(kern, Z, X[:, None], y)
A_less, B_less = sufficient_statistics(kern, Z, np.delete(X, i)[:, None], np.delete(y, i))
k_i = kern(Z, X[i : i + 1])[:, 0]
print(f"A change minus y_i k_i: {np.max(np.abs(A_all - A_less - y[i] * k_i)):.1e}; "
      f"B change minus k_i k_iᵀ: {np.max(np.abs(B_all - B_less - np.outer(k_i, k_i))):.1e}")
print(f"‖k_i‖ = {np.linalg.norm(k_i):.3f} <= sqrt(M) = {np.sqrt(len(Z)):.3f}")

# %% [markdown]
# Each entry of $k_i = k(Z, x_i)$ is at most the kernel variance $s^2 = 1$, so
# $\|k_i\| \le \sqrt{M}$: that is H's trivial bound R_k (H eq. 4). Tighter bounds use the
# spacing of Z (eqs. 7–8): k(z, x) is near its maximum s² only for the few z close to x.
