# ---
# jupyter:
#   jupytext:
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
# # 04 · Noise-aware DP regression by meta-learning: the DPConvCNP (Räisä et al.)
#
# Räisä et al. (NeurIPS 2024, "R") protect a whole *context set* — inputs **and**
# outputs — with the functional mechanism of Hall et al., analysed with Gaussian DP,
# and train a neural process to make calibrated predictions *from the noisy release*.
# A **neural process** is a network that takes a small dataset (the *context set*) and
# returns a predictive distribution at new inputs (the *targets*); it is trained on many
# simulated datasets, which is called **meta-learning**. This notebook walks through the
# pieces (catalogue R.1–R.5).
#
# **Learning objectives** — after this lab you can
#
# 1. calibrate the functional mechanism with Gaussian DP (you write it, exercise 1) and
#    explain why it needs about a third less noise than Hall et al.'s classical bound
#    (R Thm 4.1, Fig. 4);
# 2. sample GP noise on a D-dimensional grid with per-axis factors (you write it, exercise 2)
#    and say why the naive way does not scale (R App. B);
# 3. describe the DPSetConv release (clipping, density and signal channels, GP noise)
#    and **audit** it: exact white-box privacy loss and the sensitivity checker;
# 4. compare the DPConvCNP with a DP-SGD-trained sparse GP and the non-private oracle,
#    on synthetic data and on the !Kung census (sim-to-real).
#
# **What you'll need:** notebook 00 (the Gaussian mechanism; μ-GDP in §4) and notebook 00b
# (GPs). Notation in the [glossary](GLOSSARY.md) — here C is the clipping bound of y (not a
# cloaking matrix), t the split of μ² between the two channels, and μ the GDP parameter.
# §4–§6 run the DPConvCNP with PyTorch (`pip install 'dpgp_audit[neural]'`, the CPU build
# suffices; Binder has it). **Without PyTorch those sections show results stored with the
# kit**, computed with the same models at the default parameters, and say so above each
# figure. **Time:** the core (§1–§6 and the exercises) is a lab of about $90$ minutes; the
# appendix checks R's claims and keeps the bookkeeping. The notebook runs top to bottom in
# under a minute.

# %% tags=["parameters"]
epsilon: float = 1.0  # privacy budget ε of the releases
delta: float = 1e-3  # δ (R uses 1e-3)
seed: int = 2024  # seed of the single random generator
grid_side: int = 128  # points per axis of the 2-D noise demo
n_tasks: int = 8  # synthetic tasks per context size in the NLL comparison
context_sizes: list = [10, 30, 100, 300]  # context sizes N of the NLL comparison
n_kung_splits: int = 6  # random context/target splits of the !Kung data
n_kung_context: int = 300  # context size of the sim-to-real task (R Fig. 7: 300)
dpsvgp_steps: int = 100  # DP-SGD steps of the DP-SVGP baseline
show_progress: bool = True  # progress messages (switched off in CI)
repro_json: str = ""  # path of the reproduction sidecar for make notebooks (empty: none)

# %%
# %matplotlib inline
import time

import numpy as np
from IPython.display import Markdown, display

from dpgp_audit.exercises import check
from dpgp_audit.neural import INSTALL_HINT, torch_available
from dpgp_audit.params import check_notebook_params
from dpgp_audit.viz import show

p = check_notebook_params(epsilon=epsilon, delta=delta, seed=seed, grid_side=grid_side,
                          n_tasks=n_tasks, context_sizes=context_sizes,
                          n_kung_splits=n_kung_splits, n_kung_context=n_kung_context,
                          dpsvgp_steps=dpsvgp_steps, show_progress=show_progress,
                          repro_json=repro_json)
rng = np.random.default_rng(p["seed"])
HAVE_TORCH = torch_available()
print(p)
print("PyTorch available:", HAVE_TORCH, "" if HAVE_TORCH else "-- " + INSTALL_HINT)

# %% [markdown]
# The cell above validates the parameters and creates the one random generator that
# every random step receives. With the same `seed` every number below is reproduced.
#
# ## 1 · The functional mechanism under Gaussian DP (R.1)
#
# The functional mechanism releases a function $f_D$ plus a scaled Gaussian-process
# path, $f_D + c\,g$ with $g \sim \mathcal{GP}(0, k)$. If $f_D$ lives in the RKHS of
# $k$ (the function space whose norm the kernel defines) and one neighbour moves it by at
# most $\Delta$ in RKHS norm, then *any* finite set of evaluations is a Gaussian mechanism
# whose whitened sensitivity is at most $\Delta / c$. So the release is $\mu$-GDP with
# $\mu = \Delta / c$ (R Thm 4.1), and $\mu$ is solved from $(\varepsilon, \delta)$ exactly
# with the GDP privacy profile (R eq. 5):
#
# $$\delta(\varepsilon) = \Phi\!\left(-\frac{\varepsilon}{\mu} + \frac{\mu}{2}\right)
#   - e^{\varepsilon}\,\Phi\!\left(-\frac{\varepsilon}{\mu} - \frac{\mu}{2}\right).$$
#
# Hall et al.'s original multiplier $c = \Delta\sqrt{2\ln(2/\delta)}/\varepsilon$ is proven
# only for $\varepsilon \le 1$; an RDP analysis (Jiang et al.) works for all ε but is loose.
# **Exercise 1** asks you to write the GDP multiplier.

# %%
from dpgp_audit.privacy.functional_gdp import functional_noise_comparison
from dpgp_audit.viz.dpconvcnp_plots import plot_functional_noise

eps_grid = np.linspace(0.1, 4.0, 60)
curves = functional_noise_comparison(eps_grid, delta=1e-3, sensitivity_sq=10.0)
at_one = functional_noise_comparison([1.0], delta=1e-3, sensitivity_sq=10.0)
at_four = functional_noise_comparison([4.0], delta=1e-3, sensitivity_sq=10.0)
print(f"at eps = 1: classical c = {at_one.classical[0]:.3f}, RDP c = {at_one.rdp[0]:.3f}, "
      f"GDP c = {at_one.gdp[0]:.3f}")
print(f"GDP noise is {100 * at_one.reduction('classical')[0]:.1f} % below the classical "
      f"and {100 * at_one.reduction('rdp')[0]:.1f} % below the RDP multiplier")
show(plot_functional_noise(curves))
display(Markdown(
    f"About **{100 * at_one.reduction('classical')[0]:.0f} %** less noise than the classical "
    "bound at ε = 1 — for free, because GDP is the exact privacy profile of a Gaussian "
    "mechanism. Against the RDP curve the saving shrinks with ε: "
    f"{100 * at_one.reduction('rdp')[0]:.0f} % at ε = 1, "
    f"{100 * at_four.reduction('rdp')[0]:.0f} % at ε = 4."))

# %% [markdown]
# R's introduction states a saving of "at least 25<!--paper--> %" in the settings of its
# Fig. 4; Appendix A checks it on the whole ε grid.
#
# ## 2 · GP noise on a grid (R.3)
#
# The DPSetConv evaluates the noise path on a grid. For a product kernel (the RBF is
# one) the grid covariance is a Kronecker product $K_1 \otimes \dots \otimes K_D$ of the
# per-axis covariances, so a sample needs only the small per-axis Cholesky factors $L_d$
# ($L_d L_d^\top = K_d$) and $D$ batched matrix products (R Alg. 4) instead of the Cholesky
# factor of the full $\prod N_d \times \prod N_d$ matrix. **Exercise 2** asks you to write
# that product.

# %%
from dpgp_audit.gp.grid import Grid, KroneckerGridSampler, NaiveGridSampler
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.viz.dpconvcnp_plots import plot_grid_noise

grid1 = Grid.from_window([-2.0], [2.0], 32.0)
draws1 = KroneckerGridSampler(grid1, EQ(0.2), jitter=1e-9).sample(3, rng)
show(plot_grid_noise(grid1.axes(), draws1[:, :], title="three GP noise paths, λ = 0.2"))

side = p["grid_side"]
grid2 = Grid((-2.0, -2.0), (4.0 / (side - 1),) * 2, (side, side))
t0 = time.perf_counter()
draw2 = KroneckerGridSampler(grid2, EQ(0.2), jitter=1e-9).sample(1, rng)[0]
t_kron = time.perf_counter() - t0
show(plot_grid_noise(grid2.axes(), draw2,
                     title=f"one GP noise path on a {side} x {side} grid ({t_kron:.3f} s)"))

small = Grid((-0.5, -0.5), (1 / 32, 1 / 32), (32, 32))
t0 = time.perf_counter()
KroneckerGridSampler(small, EQ(0.2), jitter=1e-9).sample(1, rng)
t_fast = time.perf_counter() - t0
t0 = time.perf_counter()
NaiveGridSampler(small, EQ(0.2), jitter=1e-9).sample(1, rng)
t_naive = time.perf_counter() - t0
print(f"32 x 32 grid, factorise + one sample: Kronecker {t_fast * 1e3:.2f} ms, "
      f"naive full Cholesky {t_naive * 1e3:.1f} ms (about {t_naive / t_fast:.0f}x slower)")

# %% [markdown]
# The kit's benchmark `benchmarks/bench_grid.py` times larger grids with BLAS pinned to one
# thread.
#
# ## 3 · DPSetConv: the private encoder (R.2)
#
# R Alg. 3 clips every target to $[-C, C]$ and computes two functions from the context
# set: the **density** $r_d(x) = \sum_n k(x, x_n)$ and the **signal**
# $r_s(x) = \sum_n \tilde y_n k(x, x_n)$. Replacing one row moves them by at most
# $\Delta_d^2 = 2C_k$ and $\Delta_s^2 = 4C^2 C_k$ in RKHS norm ($C_k = k(x, x) = 1$).
# Each gets its own GP noise; a split $t$ of $\mu^2$ fixes the scales
# $\sigma_s^2 = 4C^2/(t\mu^2)$, $\sigma_d^2 = 2/((1-t)\mu^2)$ (R eq. 12), and GDP
# composition gives $\mu$ in total (R Thm 4.2).

# %%
from dpgp_audit.datasets.synthetic import sawtooth
from dpgp_audit.methods.raisa.dpsetconv import DPSetConv
from dpgp_audit.viz.dpconvcnp_plots import plot_dpsetconv_release

context = sawtooth(150, rng, period=0.8, noise_std=0.1, x_range=(-1.0, 1.0))
enc = DPSetConv.from_budget(Grid.from_window([-2.0], [2.0], 32.0), epsilon=p["epsilon"],
                            delta=p["delta"], lengthscale=0.2, clip_bound=1.0, t=0.5)
print(enc.claim.describe())
print(f"sigma_d = {enc.sigma_density:.3f}, sigma_s = {enc.sigma_signal:.3f}")
released = enc.as_channels(enc.sample(context, 1, rng))[0]
show(plot_dpsetconv_release(enc.grid.axes()[0], enc.channels(context), released,
                            context.X[:, 0], context.y, clip_bound=enc.clip_bound))

# %% [markdown]
# ### Auditing the DPSetConv
#
# On the grid the release is exactly Gaussian: mean = the two channels, covariance
# $\mathrm{blockdiag}(\sigma_d^2 K, \sigma_s^2 K)$. The **white-box auditor** computes
# the exact privacy loss $\mu$ of each generated whole-row neighbour pair; the
# **sensitivity checker** searches for the largest change of each channel. A small grid
# keeps the dense covariance cheap.

# %%
from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.sensitivity import check_sensitivity
from dpgp_audit.audit.whitebox import audit_whitebox
from dpgp_audit.datasets.default import default_dataset

data = default_dataset()
mech = DPSetConv.from_budget(Grid.from_window([0.0], [10.0], 2.0), epsilon=p["epsilon"],
                             delta=p["delta"], lengthscale=1.0, clip_bound=1.0, t=0.5)
wb = audit_whitebox(mech, neighbour_pairs(data, mech.claim.relation, rng))
print(wb.summary())
print(f"exact worst-case mu over whole-row neighbours: mu*sqrt(max(1 - t/2, t)) = "
      f"{mech.worst_case_mu():.4f} (claimed {mech.mu:.4f})")
for channel in ("density", "signal"):
    res = check_sensitivity(mech.channel_query(channel), data, rng, budget=200)
    print(f"{channel:>7}: largest change found {res.estimate:.6f}, "
          f"bound {res.claimed:.6f} -> {res.verdict.value}")

# %% [markdown]
# Both channel bounds are **attained** (two far-apart inputs for the density; one input
# whose target flips from $C$ to $-C$ for the signal), so R eq. (11) is tight channel by
# channel. The composed claim, however, is **not** tight: one substitution cannot
# produce both worst cases at once, and the exact supremum of the joint privacy loss is
# $\mu\sqrt{\max(1 - t/2,\, t)}$ — $\sqrt{3}/2 \approx 0.866$ times μ at $t = 1/2$. The
# release is private with some budget to spare; the auditor finds no violation.
#
# ## 4 · DPConvCNP vs DP-SVGP vs the oracle (R.4, R.5)
#
# The DPConvCNP feeds the DPSetConv release (plus the two noise levels) to a small
# UNet and reads out a mean and a log standard deviation at any target input. It was
# meta-trained on simulated tasks **with the mechanism in the loop** (fresh noise every
# step), so it learns to undo clipping and noise. The baseline is a sparse variational
# GP trained by **DP-SGD** (gradient descent with per-example clipping and Gaussian noise
# on every step; its budget is tracked by dp-accounting's RDP accountant); the **oracle** is
# the exact non-private GP posterior with the true kernel. The comparison is scored by the
# **target NLL**: the negative log-likelihood of held-out targets under each predictive
# distribution, in nats per point (lower is better).
#
# The next cell computes §4–§6 in one go — or, without PyTorch, loads the results stored
# with the kit — and says which.

# %%
from dpgp_audit.datasets.kung import load_kung_or_standin
from dpgp_audit.experiments.raisa import (
    load_comparison,
    run_comparison,
    stored_comparison_rng,
)

kung_table, kung_note = load_kung_or_standin(rng)  # CI: the real data or an error
if kung_note:
    print(kung_note)
models, why = {}, ""
if HAVE_TORCH:
    from dpgp_audit.neural.dpconvcnp import load_pretrained

    try:
        models = {name: load_pretrained(name) for name in ("eq", "matern", "sawtooth")}
    except FileNotFoundError as err:
        why = f"a checkpoint is missing ({err})"
else:
    why = "PyTorch is not installed"
t0 = time.perf_counter()
if models:
    cmp = run_comparison(p, stored_comparison_rng(p["seed"]), models=models)
    for name, (_, meta) in models.items():
        print(f"{name:>8} model trained by: {meta['command']} ({meta['steps']:,} steps)")
else:
    cmp = load_comparison(kung_data=None if kung_note else kung_table)
if p["show_progress"]:
    print(f"({time.perf_counter() - t0:.1f} s)")
same = all(cmp.params[k] == p[k] for k in cmp.params if k in p)
if cmp.stored:
    display(Markdown(
        f"> **Stored results.** {why[:1].upper() + why[1:]}, so §4–§6 show the comparison "
        f"{cmp.note}, with the shipped checkpoints and the parameters {cmp.params}"
        + ("" if same else " — **not this run's parameters**") + ". Install the `neural` "
        "extra to recompute it here. The DPSetConv and the audits above were computed now."))
else:
    display(Markdown("> **Computed now** with the shipped checkpoints and this run's "
                     "parameters (the DPConvCNP runs on PyTorch, the rest on numpy)."))

# %%
from dpgp_audit.viz.dpconvcnp_plots import plot_nll_curves

source = " (stored results)" if cmp.stored else ""
eq_curves = cmp.eq_curves
for name, c in eq_curves.items():
    pairs = zip(c.ns, c.mean, strict=True)
    print(f"{name:>10}: " + ", ".join(f"N={n}: {m:.3f}" for n, m in pairs))
show(plot_nll_curves(eq_curves, title=f"EQ-GP tasks, ε = {cmp.params['epsilon']:g}{source}"))

# %% [markdown]
# **Reading the figure.** The oracle is the exact GP posterior *without* privacy, with the
# true kernel: no private method can beat it on average, so its curve is a floor, and the gap
# to it is the price of privacy plus the price of each method's modelling. The DP-SVGP pays
# three times: DP-SGD noise on every gradient, clipping, and a fixed kernel it must learn from
# the noisy gradients. The DPConvCNP pays the DPSetConv noise once and has *learned*, across
# many simulated tasks, how to read a noisy release — but it only knows the task distribution
# it was trained on, and only as well as its short training allowed. The cell states the gaps.

# %%
def nll_gap(curves, name, k):
    """NLL of ``name`` minus the oracle's at the k-th context size."""
    return float(curves[name].mean[k] - curves["oracle"].mean[k])


n_lo, n_hi = eq_curves["oracle"].ns[0], eq_curves["oracle"].ns[-1]
lines = [f"- DP-SVGP is {nll_gap(eq_curves, 'DP-SVGP', 0):.2f} nats above the oracle at "
         f"N = {n_lo} and {nll_gap(eq_curves, 'DP-SVGP', -1):.2f} at N = {n_hi}."]
if cmp.has_dpconvcnp:
    meta_eq = cmp.checkpoints["eq"]
    lines.append(f"- DPConvCNP is {nll_gap(eq_curves, 'DPConvCNP', 0):.2f} nats above it at "
                 f"N = {n_lo} and {nll_gap(eq_curves, 'DPConvCNP', -1):.2f} at N = {n_hi}.")
    lines.append(
        f"- The checkpoint was trained for {meta_eq['steps']:,} steps on one CPU "
        f"({meta_eq['seconds'] / 60:.0f} min), against R's 409,600 on a GPU "
        f"({409_600 / meta_eq['steps']:.0f}× more); on its own validation tasks it reached an "
        f"NLL of {meta_eq['val_nll']:.2f} against the oracle's {meta_eq['val_oracle_nll']:.2f}.")
display(Markdown("\n".join(lines)))

# %% [markdown]
# **What the CPU checkpoints can and cannot show.** They are small models trained for minutes
# (see `dpgp_audit/neural/checkpoints/README.md`), on context sizes $1 \le N \le 300$ and
# budgets $0.9 \le \varepsilon \le 4$ at $\delta = 10^{-3}$. Inside that range they show the
# *shape* of R's result — a learned predictor that improves with N under a fixed privacy
# budget — but not its size: R's models are trained far longer (the cell above says how much)
# and come much closer to the oracle. Outside the range (another ε, larger N, another kind of
# function) they are extrapolating, and a large NLL there says nothing about the method. The
# privacy guarantee does not depend on the training: it comes from DPSetConv's calibrated
# noise alone (R.2), so a poorly trained model is inaccurate, never less private.
#
# An example task: the three predictors on one EQ-GP context set with $95\,\%$ intervals.

# %%
from dpgp_audit.viz.dpconvcnp_plots import plot_predictive

ex = cmp.example
show(plot_predictive(ex["xc"], ex["yc"], ex["xs"], ex["preds"],
                     title=f"one EQ-GP task, N = {len(ex['xc'])}{source}",
                     xlabel="input x (no units)", ylabel="output y (no units)"))

# %% [markdown]
# ### Non-Gaussian data: sawtooth waves
#
# The same comparison on the truncated sawtooth process (R App. E.1). Its Bayes posterior
# is intractable, so the "oracle" line is the NLL of the observation noise alone — a lower
# bound no predictor can beat. The DP-SVGP gets an EQ kernel (the kit has no periodic kernel;
# R gave the baseline a periodic one).

# %%
saw_curves = cmp.saw_curves
for name, c in saw_curves.items():
    pairs = zip(c.ns, c.mean, strict=True)
    print(f"{name:>17}: " + ", ".join(f"N={n}: {m:.3f}" for n, m in pairs))
show(plot_nll_curves(saw_curves,
                     title=f"sawtooth tasks, ε = {cmp.params['epsilon']:g}{source}"))

# %% [markdown]
# ## 5 · Sim-to-real: the !Kung census (R §5.2, Fig. 7)
#
# A DPConvCNP trained only on simulated Matérn-$3/2$ GP data is applied to real data: height
# and weight against age for the people of the !Kung census, a random context set of
# $N = 300$ people as the private data, $\varepsilon = 1$, $\delta = 10^{-3}$. Ages are scaled
# to $[-1, 1]$ and the targets standardised, with statistics treated as public (R App. E.2).

# %%
for target, k in cmp.kung.items():
    for name, v in k["nll"].items():
        print(f"{target} | {name:>10}: mean target NLL {v.mean():.3f} "
              f"(+- {2 * v.std(ddof=1) / np.sqrt(v.size):.3f}) over {v.size} splits")
    note = "" if k["xc"] is not None else " (data points not shown: census file missing)"
    show(plot_predictive(k["xc"], k["yc"], k["xs"], k["preds"], xt=k["xt"], yt=k["yt"],
                         title=f"!Kung {target} vs age, N = {len(k['context_idx'])}, "
                               f"ε = {cmp.params['epsilon']:g}{source}{note}",
                         xlabel="age (scaled to [−1, 1])",
                         ylabel=f"{target} (standardised)"))

# %% [markdown]
# ## 6 · Deployment time (R Fig. 5)
#
# At meta-test time the DPConvCNP needs one forward pass; the DP-SVGP must be trained by
# DP-SGD on every new dataset.

# %%
from dpgp_audit.viz.dpconvcnp_plots import plot_deployment_times

for name, sec in cmp.times.items():
    print(f"{name:>30}: {sec * 1e3:.1f} ms")
fig = plot_deployment_times(cmp.times)
fig.axes[0].set_title("seconds per new dataset at deployment"
                      + (" (stored: timed when the file was made)" if cmp.stored else ""))
show(fig)

# %% [markdown]
# ## Exercises
#
# Difficulty: ★ check your understanding · ★★ apply · ★★★ explore. Exercises 1 and 2 are
# checked in the notebook: write the function, run the check cell below it, and read the
# feedback (✓ / ✗ with a hint). Solutions: `answers/04_raisa_dpconvcnp_answers.ipynb` — try
# first.
#
# **Exercise 1** ★★ · **The GDP multiplier.** Write `functional_multiplier(epsilon, delta,
# sensitivity)`: the multiplier $c$ of the functional mechanism that makes it
# $(\varepsilon, \delta)$-DP through GDP — solve R eq. (5) (§1) for μ with a root finder
# (`scipy.optimize.brentq`; `scipy.stats.norm.cdf` is Φ), then use R Thm 4.1. Compare your
# $c$ at $\varepsilon = 1$ with the GDP curve of §1.

# %%
def functional_multiplier(epsilon, delta, sensitivity):
    """Multiplier c of the functional mechanism under GDP (R Thm 4.1, eq. 5)."""
    ...  # your code here


check("04.1", functional_multiplier)

# %% [markdown]
# **Exercise 2** ★★ · **GP noise on a grid.** Write `kron_noise(covs, z)`: given the
# per-axis covariance matrices `covs` $= [K_1, \dots, K_D]$ and an array `z` of independent
# standard normal draws with one axis per grid dimension (`z.shape` $= (N_1, \dots, N_D)$),
# return $(L_1 \otimes \dots \otimes L_D)\,z$ as an array of the same shape — R Alg. 4:
# factor each $K_d$, then multiply along axis $d$ (`np.tensordot` and `np.moveaxis` help),
# never forming the Kronecker product. Then draw one path on a $64 \times 64$ grid with it.

# %%
def kron_noise(covs, z):
    """(L_1 ⊗ … ⊗ L_D) z on a D-dimensional grid, axis by axis (R Alg. 4)."""
    ...  # your code here


check("04.2", kron_noise)

# %% [markdown]
# 3. ★ Re-run §1 with `delta = 1e-6`. Does the GDP advantage over the classical bound grow
#    or shrink? Why does the classical curve stop at $\varepsilon = 1$?
# 4. ★★ In §3, change `t` to `0.9`. Which channel becomes noisier? Check that
#    `mech.worst_case_mu()` matches the white-box audit, and find the `t` at which the
#    composed bound is loosest.
# 5. ★★ Plant a bug: build a `DPSetConv` and halve the covariance (the variance) of its
#    signal channel's noise — wrap the mechanism so that `cov` returns the broken matrix. Does
#    `audit_whitebox` catch it?
# 6. ★★★ Train your own DPConvCNP on the sawtooth generator
#    (`python -m dpgp_audit.neural.train --generator sawtooth --minutes 5 --out my.pt`)
#    and compare its validation NLL with the noise lower bound (both in its metadata).
# 7. ★★ The DP-SVGP keeps its kernel hyperparameters fixed. Try a shorter lengthscale,
#    `dpsvgp_predict(..., kernel=EQ(0.3))`, on the !Kung data: what happens to the NLL?
#    (This runs without PyTorch.)
#
# <details><summary>Hints</summary>
#
# 3. The classical bound is proven only for $\varepsilon \le 1$ (notebook 00 §3); GDP is
#    exact at every ε.
# 4. The signal channel gets the share t of μ²; `worst_case_mu` composes the two channels.
# 5. A halved noise covariance multiplies the signal channel's μ by $\sqrt2$ for the same
#    change.
# 6. Compare your checkpoint's `val_nll` with `val_oracle_nll` in its metadata.
# 7. Compare the two kernels on the same splits (a paired comparison): a shorter lengthscale
#    can follow the data more closely, but also the DP-SGD noise. `kung_tasks` and
#    `gaussian_nll` (in `dpgp_audit.neural.tasks`) give the splits and the score.
# </details>

# %% [markdown]
# # Appendix
#
# ## Appendix A · R's claims at CPU scale
#
# **GDP below the classical noise (R Thm 4.1, Fig. 4).** Deterministic: the multipliers are
# closed forms, so the claim is checked on the whole ε grid of §1 where the classical bound
# is defined ($\varepsilon \le 1$), with no statistical margin needed.
#
# **The shipped checkpoints against R's figures.** R meta-trains for 409,600<!--paper-->
# steps of 16<!--paper--> tasks on a GPU (R App. E.1, E.4); the shipped models had minutes
# on a CPU (the cell prints their steps). Their validation NLL stays well above the
# non-private oracle's on the same tasks, while R's Fig. 6 shows the paper-scale DPConvCNP
# approaching the oracle as N grows. Expect paper-scale training (`python -m
# dpgp_audit.neural.train --paper-scale`, see `dpgp_audit/neural/checkpoints/README.md`) to
# shrink that gap, mostly at small and moderate N where the decoder must learn to undo
# clipping and noise, and to matter least where the DP noise dominates (small ε). The ranking
# against the DP-SVGP in §4–§5 is what the CPU models can show; the size of the gap to the
# oracle is not. No GPU was available to train the paper-scale models for the kit.

# %% tags=["claim"]
from dpgp_audit.experiments.reproduction import ReproRow, write_sidecar

classical_ok = np.isfinite(curves.classical)
below = bool(classical_ok.any()
             and np.all(curves.gdp[classical_ok] < curves.classical[classical_ok]))
reduction_pct = 100 * float(at_one.reduction("classical")[0])
print(f"GDP multiplier below the classical one on all {int(classical_ok.sum())} grid points "
      f"with eps <= 1: {below}; at eps = 1: {reduction_pct:.1f} % less noise "
      f"(R: at least 25 %) -> {'reproduced' if below and reduction_pct >= 25 else 'NOT met'}")
repro_rows = [ReproRow("R", "GDP noise below classical at ε = 1, δ = 1e-3 (%)", 25.0,
                       reduction_pct, None, "closed form (R Thm 4.1)", "", bound="at_least")]
for name, meta in cmp.checkpoints.items():
    gap = meta["val_nll"] - meta["val_oracle_nll"]
    print(f"{name:>8}: {meta['steps']:6d} steps; validation NLL {meta['val_nll']:.3f} vs "
          f"oracle {meta['val_oracle_nll']:.3f} (gap {gap:.2f} nats)")
    repro_rows.append(ReproRow(
        "R", f"DPConvCNP training steps ({name} checkpoint)", 409_600, meta["steps"], None,
        f"{meta['seconds'] / 60:.1f} CPU minutes; validation NLL gap to the oracle "
        f"{gap:.2f} nats", "CPU budget; --paper-scale needs about 1.4 h of an H200 (measured), not run"))
if repro_json:
    write_sidecar(repro_json, "04_raisa_dpconvcnp", "closed forms and shipped checkpoints",
                  repro_rows)

# %% [markdown]
# ## Appendix B · Where the stored results come from
#
# `dpgp_audit/experiments/stored/raisa_comparison.json` (tens of kilobytes) holds what §4–§6
# show, computed with the shipped checkpoints at this notebook's default parameters by
#
# ```
# python -m dpgp_audit.experiments.raisa --write-stored
# ```
#
# It keeps the !Kung splits as row indices only (the census is not redistributed with the
# kit). With PyTorch and the default parameters, §4–§6 recompute the same comparison from the
# same random stream; only the timings of §6 depend on the machine.
