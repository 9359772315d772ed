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
# # 00 · Differential privacy basics: neighbours, noise and calibration
#
# This notebook sets up the vocabulary every other notebook of the kit uses
# (the kit calls these capabilities P.1–P.3).
#
# **Learning objectives** — after working through it you can
#
# 1. state the two *neighbour relations* used by the DP-GP papers (outputs only;
#    whole rows) and compute the sensitivity of a simple query under each;
# 2. release a statistic with the **Laplace**, **Gaussian** and **exponential**
#    mechanisms and check on samples that neighbouring datasets give similar outputs;
# 3. compare the four **Gaussian calibrations** (analytic, GDP, classical, Hall) and
#    explain why the classical and Hall formulas are refused above $\varepsilon = 1$;
# 4. read a **privacy profile** δ(ε) and find the *true* ε of a calibrated mechanism;
# 5. combine releases: **composition** and **post-processing**, and the three accountants
#    the later notebooks use — μ-GDP, ρ-zCDP and Rényi DP (RDP);
# 6. write a calibration, a mechanism and an audit score yourself, checked in the notebook.
#
# **What you'll need:** Python and NumPy; no prior DP knowledge. Runs in well under a
# minute with the default parameters; an hour and a half as a lab with the exercises.
# Symbols (ε, δ, Δ, d, μ, ρ, …) are collected in the [glossary and notation
# table](GLOSSARY.md); the GP side of the course starts in `00b_gp_primer.ipynb`.

# %% tags=["parameters"]
epsilon: float = 1.0  # privacy budget ε used in the mechanism demos
delta: float = 1e-5  # δ for the Gaussian mechanism
seed: int = 2018  # seed of the random generator (change it to see other draws)
n_samples: int = 20000  # releases drawn per mechanism and dataset
n_grid: int = 60  # points on the ε grid of the calibration plots
show_progress: bool = True  # progress bars (switched off in CI)

# %%
# %matplotlib inline
import numpy as np

from dpgp_audit.params import check_notebook_params
from dpgp_audit.viz import show

p = check_notebook_params(epsilon=epsilon, delta=delta, seed=seed, n_samples=n_samples,
                          n_grid=n_grid, show_progress=show_progress)
rng = np.random.default_rng(p["seed"])
print(p)

# %% [markdown]
# The cell above checks the parameters (a negative ε or a size given as text stops
# the notebook with a clear message) and creates the **one** random generator that
# every random step below receives explicitly. Re-running the notebook with the same
# `seed` reproduces every number.
#
# ## 1 · Neighbouring datasets
#
# Differential privacy is a property of a **mechanism**: a randomised algorithm that
# takes a dataset and releases something computed from it. It compares the mechanism's
# output distribution on two datasets that differ in *one person's* contribution. What "differ in one person" means is a
# modelling choice, and the DP-GP papers use two:
#
# * **outputs only** (Smith et al. 2018, 2021): the inputs `X` are public; one target
#   moves, $|y_i - y_i'| \le d$;
# * **whole rows** (Honkela 2024, Räisä et al.): one row $(x_i, y_i)$ is replaced by
#   any other row from the declared domain; targets are bounded, $|y| \le d$, so one
#   target can move by up to $2d$.
#
# In `dpgp_audit` a relation is a small value attached to every privacy claim.

# %%
from dpgp_audit import outputs_only, whole_rows
from dpgp_audit.datasets.default import default_dataset

data = default_dataset(n=8)
relations = {"outputs only": outputs_only(1.0), "whole rows": whole_rows(1.0)}
for rel in relations.values():
    print(f"{rel.describe()}  ->  one target moves by <= {rel.max_target_change:g}")

# %% [markdown]
# Here is one neighbour of `data` under each relation. The outputs-only neighbour
# keeps `X`; the whole-rows neighbour swaps a complete row for a new one.

# %%
i = 3
d_outputs = data.with_target(i, data.y[i] - 1.0)  # move y_3 by d = 1
d_rows = data.with_row(i, x_new=[9.5], y_new=1.0)  # substitute the row (x_3, y_3)

print("same inputs?", data.same_inputs(d_outputs), data.same_inputs(d_rows))
print(" x      y      y (outputs-only nb.)   x (rows nb.)  y (rows nb.)")
for row in zip(data.X[:, 0], data.y, d_outputs.y, d_rows.X[:, 0], d_rows.y, strict=True):
    print("  ".join(f"{v:6.2f}" for v in row))


# %% [markdown]
# **Sensitivity.** Take the query "mean of the targets", $f(D) = \frac1n\sum_i y_i$.
# One neighbour changes one target by at most `max_target_change` ($d = 1$ for outputs
# only, $2d = 2$ for whole rows here), so the mean moves by at most `max_target_change` / n:
# that is the sensitivity $\Delta f$ (the same in every norm, since the query is a
# scalar). We check the bound on the two neighbours above.

# %%
def mean_query(ds):
    return float(np.mean(ds.y))

for (name, rel), nb in zip(relations.items(), [d_outputs, d_rows], strict=True):
    bound = rel.max_target_change / data.n
    change = abs(mean_query(data) - mean_query(nb))
    print(f"{name:>12}: |f(D) - f(D')| = {change:.4f} <= sensitivity {bound:.4f}")

sensitivity = relations["whole rows"].max_target_change / data.n  # used from here on

# %% [markdown]
# **The definition.** A randomised mechanism M is **(ε, δ)-differentially private**
# under a neighbour relation if, for every pair of neighbours D, D′ and *every* set of
# outputs S,
#
# $$P[M(D) \in S] \le e^{\varepsilon}\, P[M(D') \in S] + \delta .$$
#
# Both orders of the pair must hold (D′ is also a neighbour of D). With $\delta = 0$ this
# is **pure** ε-DP: no output set is more than e^ε times likelier under one dataset than
# under the other. $\delta > 0$ allows that bound to fail on events of total probability
# about δ, so δ must be much smaller than $1/n$. Everything below — mechanisms, calibrations,
# audits — is about meeting or checking this inequality.
#
# ## 2 · Three mechanisms
#
# A mechanism adds randomness calibrated to the sensitivity so that the output
# distributions on neighbours are close. The noise functions live in
# `dpgp_audit.privacy.mechanisms`; each takes the generator `rng`.
#
# ### Laplace mechanism (pure ε-DP)
# Adding $\mathrm{Lap}(b)$ noise with $b = \Delta_1 / \varepsilon$ makes the ratio of
# the two output densities at most $e^{\varepsilon}$ everywhere.

# %%
from IPython.display import Markdown, display

from dpgp_audit.privacy.mechanisms import laplace_noise, laplace_scale
from dpgp_audit.viz.calibration_plots import plot_output_histograms

b = laplace_scale(p["epsilon"], sensitivity)
lap = {"f(D) + noise": mean_query(data) + laplace_noise(b, p["n_samples"], rng),
       "f(D') + noise": mean_query(d_rows) + laplace_noise(b, p["n_samples"], rng)}
print(f"Laplace scale b = {b:.4f} for epsilon = {p['epsilon']:g}")
show(plot_output_histograms(
    lap, title=f"Laplace mechanism, ε = {p['epsilon']:g} (b = {b:.3f}), on neighbouring datasets"))


# %% [markdown]
# The definition is a statement about *every* set of outputs $S$ and *both* orders of
# the pair. With samples we can only estimate both sides for a few sets, e.g.
# half-lines $S = \{z > t\}$. Here f(D′) > f(D), so M(D′) lands above t more often:
# the order "P[M(D) > t] ≤ e^ε P[M(D′) > t]" holds trivially, whatever the noise. The
# informative order is the other one, where the ratio P[M(D′) > t] / P[M(D) > t] must
# stay below e^ε — and for the Laplace mechanism it *reaches* e^ε once t is past both
# centres: the guarantee is tight.

# %%
def check_sets(samples, epsilon, delta=0.0, quantiles=(0.1, 0.5, 0.9)):
    """Both orders of the DP inequality on half-lines {z > t}; returns the largest ratio."""
    (_, s0), (_, s1) = samples.items()
    bound = np.exp(epsilon)
    print(f"{'t':>7} | P[M(D)>t] <= e^eps P[M(D')>t] + d | P[M(D')>t] <= e^eps P[M(D)>t] + d"
          f" | ratio P[M(D')>t]/P[M(D)>t]")
    worst = 0.0
    for t in np.quantile(np.concatenate([s0, s1]), quantiles):
        p0, p1 = np.mean(s0 > t), np.mean(s1 > t)
        ratio = p1 / p0 if p0 > 0 else np.inf
        worst = max(worst, ratio)
        print(f"{t:+7.3f} | {p0:.4f} <= {bound * p1 + delta:.4f}{'':15}| "
              f"{p1:.4f} <= {bound * p0 + delta:.4f}{'':15}| {ratio:.3f}")
    return worst

worst_lap = check_sets(lap, p["epsilon"], quantiles=(0.1, 0.5, 0.7, 0.8))
shift = abs(mean_query(d_rows) - mean_query(data))
display(Markdown(
    f"In the tight order the largest estimated ratio is **{worst_lap:.2f}**; the bound is "
    f"e^ε = **{np.exp(p['epsilon']):.2f}**. Beyond both centres the two Laplace tails decay "
    f"at the same rate, so their ratio is exactly e^(ε·|f(D) − f(D′)|/Δ) = "
    f"**{np.exp(p['epsilon'] * shift / sensitivity):.2f}** for this pair (it moves the mean "
    f"by {shift / sensitivity:.2f} of the sensitivity); a pair at the full sensitivity "
    "reaches e^ε. Sampling noise can push an estimate slightly above its limit; that alone "
    "is not a violation (notebook 05 turns such estimates into certified bounds)."))

# %% [markdown]
# ### Gaussian mechanism ((ε, δ)-DP)
# Gaussian noise has lighter tails, so its density ratio is unbounded far out; it is
# (ε, δ)-DP, and σ must be *calibrated* for the pair (ε, δ). Section 3 compares the
# ways of doing so; here we use the exact (analytic) one.

# %%
from dpgp_audit.privacy.calibrate import calibrate_gaussian
from dpgp_audit.privacy.mechanisms import gaussian_noise

cal = calibrate_gaussian(p["epsilon"], p["delta"], sensitivity, "analytic")
gau = {"f(D) + noise": mean_query(data) + gaussian_noise(cal.sigma, p["n_samples"], rng),
       "f(D') + noise": mean_query(d_rows) + gaussian_noise(cal.sigma, p["n_samples"], rng)}
print(f"analytic sigma = {cal.sigma:.4f}")
check_sets(gau, p["epsilon"], p["delta"])
show(plot_output_histograms(
    gau, title=f"Gaussian mechanism, ε = {p['epsilon']:g}, δ = {p['delta']:g} (σ = {cal.sigma:.3f})"))

# %% [markdown]
# ### Exponential mechanism (selecting, not adding)
# To *choose* one of $k$ candidates privately, pick candidate $j$ with probability
# proportional to $\exp(\varepsilon u_j / (2\Delta u))$, where $u_j$ is its utility
# and $\Delta u$ bounds how much one person can change any utility. Example: which of
# five price bands is most popular, with utility = number of people in the band
# ($\Delta u = 1$). In the neighbour one person moved from band C to band D.

# %%
from dpgp_audit.privacy.mechanisms import exponential_mechanism, exponential_probabilities
from dpgp_audit.viz.calibration_plots import plot_selection_frequencies

bands = ["A", "B", "C", "D", "E"]
counts = {"D": np.array([3, 9, 12, 11, 4]), "D'": np.array([3, 9, 11, 12, 4])}
probs = {k: exponential_probabilities(u, p["epsilon"], 1.0) for k, u in counts.items()}
freqs = {k: np.bincount(exponential_mechanism(u, p["epsilon"], 1.0, p["n_samples"], rng),
                        minlength=len(bands)) / p["n_samples"]
         for k, u in counts.items()}
worst = np.max(np.abs(np.log(probs["D"] / probs["D'"])))
print(f"largest |log P_D(j) / P_D'(j)| = {worst:.4f} <= epsilon = {p['epsilon']:g}")
show(plot_selection_frequencies(probs, freqs, candidates=bands))

# %% [markdown]
# ## 3 · Four Gaussian calibrations
#
# One more definition first, because one of the four calibrations is built on it.
# **μ-Gaussian DP (μ-GDP)** (Dong, Roth & Su): a mechanism M is μ-GDP if telling
# M(D) from M(D′) is, for every pair of neighbours, no easier than telling a sample of
# $N(0, 1)$ from a sample of $N(\mu, 1)$. The Gaussian mechanism with noise σ and L2
# sensitivity Δ is *exactly* μ-GDP with $\mu = \Delta/\sigma$, and one μ stands for a
# whole curve of (ε, δ) guarantees (§4 draws it). So σ can be calibrated by finding the
# μ that delivers the target (ε, δ) and setting $\sigma = \Delta/\mu$.
#
# | method | σ for L2 sensitivity Δ | proven for |
# |---|---|---|
# | classical (Dwork & Roth) | $\Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon$ | $\varepsilon \le 1$ |
# | Hall et al. (2013) | $\Delta\sqrt{2\ln(2/\delta)}/\varepsilon$ | $\varepsilon \le 1$ |
# | analytic (Balle & Wang 2018) | smallest σ that is (ε, δ)-DP | every ε |
# | GDP (Dong, Roth & Su) | $\Delta/\mu(\varepsilon,\delta)$ | every ε |
#
# The analytic and GDP routes compute the same exact σ by two independent methods.
# The two closed formulas are proofs only for $\varepsilon \le 1$, and `dpgp_audit`
# refuses them above that instead of silently returning a number:

# %%
from dpgp_audit.privacy.calibrate import CALIBRATION_METHODS, CalibrationRangeError

for method in CALIBRATION_METHODS:
    try:
        c = calibrate_gaussian(2.0, p["delta"], 1.0, method)
        print(f"{method:>9}: sigma = {c.sigma:.4f}")
    except CalibrationRangeError as err:
        print(f"{method:>9}: {type(err).__name__}: {err}")

# %% [markdown]
# Over a grid of ε the refused values become gaps. Note how much noise the classical
# formulas waste even where they are valid.

# %%
from dpgp_audit.privacy.calibration_table import calibration_sigmas
from dpgp_audit.viz.calibration_plots import plot_calibrations

eps_grid = np.geomspace(0.05, 20.0, p["n_grid"])
sigmas = calibration_sigmas(eps_grid, p["delta"], progress=p["show_progress"])
at_one = {m: calibrate_gaussian(1.0, p["delta"], 1.0, m).sigma for m in CALIBRATION_METHODS}
print("sigma at epsilon = 1:", {m: round(s, 4) for m, s in at_one.items()})
print(f"classical / analytic at epsilon = 1: {at_one['classical'] / at_one['analytic']:.3f}")
show(plot_calibrations(eps_grid, sigmas, delta=p["delta"]))

# %% [markdown]
# ## 4 · Privacy profiles δ(ε)
#
# A mechanism is not just "(ε, δ)-DP" for one pair: it satisfies a whole curve of
# pairs, its **privacy profile** δ(ε). The Gaussian mechanism with noise σ is
# exactly μ-GDP with $\mu = \Delta/\sigma$ (§3), and its profile is (Räisä et al., eq. 5)
#
# $$\delta(\varepsilon;\mu) = \Phi\!\left(-\tfrac{\varepsilon}{\mu} + \tfrac{\mu}{2}\right)
#   - e^{\varepsilon}\,\Phi\!\left(-\tfrac{\varepsilon}{\mu} - \tfrac{\mu}{2}\right).$$
#
# Larger μ (less noise) means a higher curve: more leakage at every ε.

# %%
from dpgp_audit.privacy.calibration_table import privacy_profile
from dpgp_audit.viz.calibration_plots import plot_privacy_profiles

eps_lin = np.linspace(0.0, 6.0, p["n_grid"])
profiles = {f"mu = {mu:g}": privacy_profile(eps_lin, mu) for mu in (0.25, 0.5, 1.0, 2.0)}
mu_target = 1.0 / calibrate_gaussian(p["epsilon"], p["delta"], 1.0).sigma
profiles[f"analytic at target (mu = {mu_target:.3f})"] = privacy_profile(eps_lin, mu_target)
show(plot_privacy_profiles(eps_lin, profiles,
                           targets={"(epsilon, delta)": (p["epsilon"], p["delta"])}))

# %% [markdown]
# ### The true ε of the classical calibrations
#
# Reading the profile backwards gives the *true* ε of any σ at a fixed δ. Below
# $\varepsilon = 1$ the classical and Hall formulas over-deliver (true ε < claimed). Above
# $\varepsilon = 1$ there is no proof, and if we force them (`allow_unproven=True`, which warns and marks any
# claim as unproven) the true ε eventually **exceeds** the claim: the mechanism
# leaks more than it promises. That is why the kit refuses them.

# %%
from dpgp_audit.privacy.calibration_table import true_epsilons
from dpgp_audit.viz.calibration_plots import plot_true_epsilon

forced = calibration_sigmas(eps_grid, p["delta"], methods=("classical", "hall"),
                            allow_unproven=True)
true = {m: true_epsilons(s, p["delta"]) for m, s in forced.items()}
true["analytic"] = true_epsilons(sigmas["analytic"], p["delta"])
for m in ("classical", "hall"):
    bad = eps_grid[true[m] > eps_grid]
    first = f"from claimed epsilon = {bad[0]:.2f} on" if bad.size else "nowhere on this grid"
    print(f"{m:>9} formula violates its claim {first}")
exact = np.allclose(true["analytic"], eps_grid, rtol=1e-9)
print(f" analytic calibration: true epsilon equals the claim (to 1e-9): {exact}")
show(plot_true_epsilon(eps_grid, true, delta=p["delta"]))

# %% [markdown]
# ## 5 · Combining releases: post-processing, composition and three accountants
#
# Real pipelines release more than one thing: notebook 01 spends part of ε on choosing
# hyperparameters and the rest on the fit; notebook 03 releases A and B, then a private
# validation score; notebook 04 trains with thousands of noisy gradient steps. Two rules
# and three "accountants" make this manageable.
#
# * **Post-processing.** Anything computed from a DP release *alone* — a posterior, a
#   prediction, a plot, a clipped value — is exactly as private as the release: an event
#   about g(M(D)) is an event about M(D). It costs nothing.
# * **Basic composition.** Releasing M₁, …, M_k on the same data, each (ε_i, δ_i)-DP,
#   is (Σ ε_i, Σ δ_i)-DP. Always valid, often loose.
# * **μ-GDP** (defined in §3; R §2): the Gaussian mechanism with noise σ and L2
#   sensitivity Δ is exactly $(\Delta/\sigma)$-GDP; k releases compose to
#   $\sqrt{\sum_i \mu_i^2}$-GDP; the privacy profile of §4 converts μ to (ε, δ) without loss.
# * **ρ-zCDP** (zero-concentrated DP; Bun & Steinke; H §4.1 for CoinPress): a bound ρ on
#   the Rényi divergences of all orders, growing linearly in the order. The Gaussian
#   mechanism is $\Delta^2/(2\sigma^2) = \mu^2/2$-zCDP; ρ's add; ρ-zCDP implies
#   $(\rho + 2\sqrt{\rho\ln(1/\delta)}, \delta)$-DP (H eq. 19).
# * **Rényi DP** (RDP; Mironov; R App. A.6 for DP-SGD): at order $\alpha > 1$ the
#   Gaussian mechanism has Rényi divergence $\varepsilon_\alpha = \alpha\mu^2/2$;
#   $\varepsilon_\alpha$'s add at each α; $(\alpha, \varepsilon_\alpha)$-RDP implies
#   $(\varepsilon_\alpha + \ln(1/\delta)/(\alpha - 1), \delta)$-DP, minimised over α
#   (R eqs. 38–39).
#
# The cell composes k Gaussian releases, each μ_i-GDP, and converts the total to ε at the
# notebook's δ along each route.

# %%
from dpgp_audit import ZCDP, ApproxDP, GaussianDP
from dpgp_audit.privacy.composition import (
    basic_composition,
    gdp_composition,
    zcdp_composition,
)
from dpgp_audit.privacy.conversions import rdp_gaussian_epsilon, zcdp_to_epsilon
from dpgp_audit.privacy.gdp import gdp_epsilon

k, mu_i = 10, 0.3
rel = whole_rows(1.0)
per_release = gdp_epsilon(p["delta"] / k, mu_i)  # each release at delta/k, exactly
routes = {
    "basic composition of (eps_i, delta/k)": basic_composition(
        [ApproxDP(epsilon=per_release, delta=p["delta"] / k, relation=rel)] * k).epsilon,
    "GDP (exact for Gaussians)": gdp_epsilon(
        p["delta"], gdp_composition([GaussianDP(mu=mu_i, relation=rel)] * k).mu),
    "zCDP": zcdp_to_epsilon(
        zcdp_composition([ZCDP(rho=mu_i**2 / 2, relation=rel)] * k).rho, p["delta"]),
    "RDP (best order)": rdp_gaussian_epsilon(np.sqrt(k) * mu_i, p["delta"]),
}
print(f"{k} Gaussian releases, each mu = {mu_i:g}; total epsilon at delta = {p['delta']:g}:")
for name, eps_total in routes.items():
    print(f"  {name:<40} {eps_total:7.3f}")
exact_eps, closed_eps = routes["GDP (exact for Gaussians)"], routes["zCDP"]
basic_eps = routes["basic composition of (eps_i, delta/k)"]
display(Markdown(
    f"Read the table from the bottom. For Gaussian noise the zCDP and RDP routes give the "
    f"same closed form, $\\mu^2/2 + \\mu\\sqrt{{2\\ln(1/\\delta)}}$ with "
    f"$\\mu = \\sqrt{{k}}\\,\\mu_i$: ε = **{closed_eps:.2f}**, which is "
    f"**{100 * (closed_eps / exact_eps - 1):.0f} %** above the exact GDP value "
    f"**{exact_eps:.2f}** — the price of converting through a bound rather than the exact "
    f"profile. Adding up per-release (ε_i, δ_i) pairs gives **{basic_eps:.2f}**, "
    f"{basic_eps / exact_eps:.1f} times the exact value, because it pays the tail δ and the "
    "$\\sqrt{\\ln(1/\\delta)}$ term k times."))

# %% [markdown]
# This is why notebook 03 accounts for its CoinPress steps in zCDP (a few steps, where
# the bound's overhead is small and the arithmetic simple), and notebook 04 uses GDP for
# its functional mechanism and an RDP accountant for DP-SGD; a plain budget split
# (`dpgp_audit.privacy.composition.split_budget`) is the simplest option and the least
# efficient.
#
# ## 6 · Explore: move ε and δ
#
# `calibration_explorer(epsilon, delta)` draws σ of every calibration and the profile
# each σ buys. Here it is called once with the notebook's parameters; the next cell
# attaches the same function to two sliders (run the notebook live, e.g. with
# `make lab` or on Binder, to use them).

# %%
from dpgp_audit.viz.calibration_plots import calibration_explorer

show(calibration_explorer(p["epsilon"], p["delta"]))

# %% tags=["nbval-ignore-output"]
from dpgp_audit.viz.widgets import epsilon_delta_widget

epsilon_delta_widget(calibration_explorer, epsilon=p["epsilon"], delta=p["delta"])

# %% [markdown]
# ## Exercises
#
# Difficulty: ★ check your understanding · ★★ apply · ★★★ explore. Solutions are in
# `answers/00_dp_basics_answers.ipynb` — try first.
#
# **Exercises 1–3: write the code.** Each has a cell with a function to complete (it
# does nothing until you write its body) and a check cell below it: run both, and the
# check says ✓ for every property your function has, or gives a hint for the first one
# it lacks. A wrong answer never stops the notebook.
#
# ### Exercise 1 · ★ The classical calibration
# Complete `classical_sigma(epsilon, delta, sensitivity)` so that it returns the noise
# σ of the classical Gaussian mechanism (first row of the table in §3).

# %%
from dpgp_audit.exercises import check


def classical_sigma(epsilon, delta, sensitivity):
    ...  # your code here


check("00.1", classical_sigma)

# %% [markdown]
# ### Exercise 2 · ★★ The Laplace mechanism
# Complete `laplace_release(value, sensitivity, epsilon, size, rng)`: it returns `size`
# independent releases of `value` by the Laplace mechanism, ε-DP for a query whose L1
# sensitivity is `sensitivity`. Take every random number from the generator `rng`
# (`rng.laplace(loc, scale, size)` draws Laplace noise), never from a global one.

# %%
def laplace_release(value, sensitivity, epsilon, size, rng):
    ...  # your code here


check("00.2", laplace_release)

# %% [markdown]
# ### Exercise 3 · ★★ An audit score
# Complete `worst_ratio(samples_d, samples_d_prime, thresholds)`, the score §2 computed
# by eye: for each threshold t, estimate $P[M(D) > t]$ and $P[M(D') > t]$ by the fraction
# of samples above t, and return the largest ratio of the two over all thresholds, in
# *both* orders of the pair. A threshold that no sample exceeds on either side says
# nothing (skip it); when one side never exceeds t but the other does, no finite
# $e^\varepsilon$ covers the pair: return `np.inf`. Then try it on the Laplace samples of §2:
# `worst_ratio(lap["f(D) + noise"], lap["f(D') + noise"], np.quantile(...))`.

# %%
def worst_ratio(samples_d, samples_d_prime, thresholds):
    ...  # your code here


check("00.3", worst_ratio)

# %% [markdown]
# ### Questions
#
# 4. ★ **Sensitivity.** Under the outputs-only relation with $d = 0.5$, what is the
#    sensitivity of the mean of $n = 8$ targets? Of their *sum*? Check with
#    `outputs_only(0.5).max_target_change`.
# 5. ★ **Laplace vs Gaussian.** Re-run section 2 with `epsilon = 0.1` and `epsilon = 5`.
#    Which mechanism adds less noise in each regime (compare `b` with `cal.sigma`)?
# 6. ★ **Refusal.** Call `calibrate_gaussian(2.0, 1e-5, 1.0, "classical",
#    allow_unproven=True)` inside `warnings.catch_warnings(record=True)`. What does the
#    warning say, and what is `.proven` of the result?
# 7. ★★ **Profiles.** Using `privacy_profile`, find (approximately) the ε at which the
#    $\mu = 1$ curve crosses $\delta = 10^{-5}$, and compare with
#    `dpgp_audit.privacy.gdp.gdp_epsilon(1e-5, 1.0)`.
# 8. ★★ **Exponential mechanism.** Double every count in `counts`. Does the selection
#    become more or less private? More or less accurate? Explain using the formula.
# 9. ★★ **The tight direction.** Build a whole-rows neighbour that moves the mean by the
#    full sensitivity (set $y_3$ to the opposite end of its range) and re-run `check_sets`
#    on Laplace samples with `quantiles=(0.8, 0.9, 0.95)`. How close does the ratio get to
#    e^ε?
# 10. ★★★ **Budgets.** You must release `20` Gaussian statistics at
#     $(\varepsilon, \delta) = (1, 10^{-5})$ in total. Which per-release μ_i does GDP
#     composition allow? Which per-release (ε_i, δ_i) does basic composition allow, and
#     how much larger is the resulting σ?
#
# <details><summary>Hints</summary>
#
# 1. The first row of the table in §3; `math.sqrt` and `math.log`.
# 2. The Laplace scale b of §2; `loc` is the value.
# 3. `np.mean(samples > t)`; compute both ratios only when their numerator is positive.
# 4. `max_target_change / n` for the mean; `max_target_change` for the sum.
# 5. For one scalar, $b = \Delta/\varepsilon$ grows like $1/\varepsilon$; σ grows
#    roughly like $1/\sqrt{\varepsilon}$ for large ε.
# 6. It names the proof's range; `proven` is `False`.
# 7. Interpolate where the profile drops below $10^{-5}$.
# 8. The privacy is the same (ε and Δu are unchanged); the utility gaps double, so the
#    mode is picked more often.
# 9. `data.with_row(3, x_new=[9.5], y_new=...)`; the default data's targets lie in
#    $[-1, 1]$. Far tails need many samples: use $n_\text{samples} \ge 10^5$.
# 10. $\mu_\text{total}$ = `gdp_mu(1, 1e-5)` and $\mu_i = \mu_\text{total}/\sqrt{20}$;
#     $\sigma = \Delta/\mu$. For basic composition use `calibrate_gaussian(1/20, 1e-5/20, Δ)`.
# </details>
#
# **Next:** `00b_gp_primer.ipynb` (GPs, if you need them), then 01–05 apply these tools to
# differentially private Gaussian processes and audit them.
