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
# # Answers · 05 · The auditing lab
#
# Solutions to the exercises of `05_auditing_lab.ipynb`. Try them first; notation as in the
# [glossary](../GLOSSARY.md). The solutions of exercises 1 and 2 are the cells the course's
# tests check.

# %% tags=["parameters"]
seed: int = 2026  # seed of the one random generator
n_power_reps: int = 10  # audits per sample size in exercise 4
power_grid: list = [8000, 16000, 32000]  # samples per side in exercise 4

# %%
import numpy as np
from IPython.display import Markdown, display

from dpgp_audit import ApproxDP, outputs_only, whole_rows
from dpgp_audit.audit.blackbox.planner import plan_samples
from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.audit.sensitivity import check_sensitivity, witness_pair
from dpgp_audit.bugs import zoo
from dpgp_audit.bugs.calibration import exp_default_data, exp_realised_epsilon
from dpgp_audit.catalogue import get
from dpgp_audit.exercises import check
from dpgp_audit.experiments.auditing_lab import detection_rate
from dpgp_audit.norms import L2
from dpgp_audit.params import check_notebook_params
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
from dpgp_audit.privacy.gdp import gdp_mu

p = check_notebook_params(seed=seed, n_power_reps=n_power_reps, power_grid=power_grid)
rng = np.random.default_rng(p["seed"])

# %% [markdown]
# ## Exercise 1 · ★★ A pair that exposes a bug
#
# Under add/remove-one a row's target enters or leaves the sum: the sum moves by at most the
# bound, $1$. Under replace-one a target can go from $-1$ to $+1$: the sum moves by $2$, twice
# what the noise was calibrated for. So take any row, set its target to $-1$ in `d0` and to
# $+1$ in `d1`, and leave everything else as in `data`.

# %% tags=["solution-05.1"]
import numpy as np

from dpgp_audit.dataset import Dataset


def exposing_pair(data):
    """Two whole-row neighbours (d0, d1) on which planted/neighbour-mismatch breaks its claim."""
    y0, y1 = np.array(data.y, dtype=float), np.array(data.y, dtype=float)
    y0[0], y1[0] = -1.0, 1.0  # one row's target flips across the whole range |y| <= 1
    return Dataset(data.X, y0), Dataset(data.X, y1)


# %%
check("05.1", exposing_pair)

# %%
from dpgp_audit.exercises.nb05 import mismatch_mechanism, pair_epsilon

mm_mech, mm_data = get("planted/neighbour-mismatch").make()
d0, d1 = exposing_pair(mm_data)
print(f"exact epsilon on the pair: {pair_epsilon(mismatch_mechanism(mm_data), d0, d1):.3f} "
      f"(claimed {mm_mech.claim.epsilon:g}; the zoo's true epsilon "
      f"{zoo.get('planted/neighbour-mismatch').true_epsilon:.3f})")

# %% [markdown]
# ## Exercise 2 · ★★ A certified ε lower bound from counts
#
# The Clopper–Pearson bounds are quantiles of Beta distributions: with $k$ hits in $n$ draws
# the one-sided lower bound at level $a$ is the $a$-quantile of $\mathrm{Beta}(k, n-k+1)$
# ($0$ when $k = 0$), the upper bound the $(1-a)$-quantile of $\mathrm{Beta}(k+1, n-k)$ ($1$
# when $k = n$). With $a = \alpha/2$ for each, both hold together with confidence
# $1 - \alpha$ (union bound), and then $\varepsilon \ge \log((p_1^{lo} - \delta) /
# p_0^{hi})$.

# %% tags=["solution-05.2"]
import math

from scipy import stats


def eps_lower_bound(k1, n1, k0, n0, delta, alpha):
    """Certified lower bound on ε from one event's counts (Clopper–Pearson, α/2 per side)."""
    a = alpha / 2
    p1_lo = 0.0 if k1 == 0 else float(stats.beta.ppf(a, k1, n1 - k1 + 1))
    p0_hi = 1.0 if k0 == n0 else float(stats.beta.ppf(1 - a, k0 + 1, n0 - k0))
    if p1_lo - delta <= 0:
        return 0.0
    return max(0.0, math.log((p1_lo - delta) / p0_hi))


# %%
check("05.2", eps_lower_bound)

# %%
fs_mech, fs_data = get("planted/fixed-seed").make()
fs = audit_mechanism(fs_mech, fs_data, rng, auditors=("blackbox",), n=20, mode="fixed")
d = fs.result("blackbox").details
mine = eps_lower_bound(d["n_cert"], d["n_cert"], 0, d["n_cert"], fs_mech.claim.delta,
                       d["alpha_per_test"])
print(f"a perfect distinguisher on {d['n_cert']} certification samples per side at alpha "
      f"{d['alpha_per_test']:g} per test certifies {mine:.4f}; the auditor's ceiling: "
      f"{d['epsilon_ceiling']:.4f}")

# %% [markdown]
# ## Exercise 3 · ★★ Ceilings
# In fixed mode with $n = 20$, part of the samples go to fitting the test and α is split over
# the pairs and tests, so the ε ceiling of the few certification samples is below the claim:
# even a perfect distinguisher certifies less than the claimed ε. Confirming one pair only
# (`n_pairs=1`) doubles α per test and lifts the ceiling above the claim; the zoo's row also
# fixes the fitting share. The default path (sequential) needs no tuning: it keeps drawing
# until the ceiling passes the claim, and prints how many draws it used.

# %%
print(fs.table())
bug = zoo.get("planted/fixed-seed")
auditor, n_side, kwargs = bug.caught_by, bug.n, bug.audit_kwargs
tuned = audit_mechanism(fs_mech, fs_data, rng, auditors=(auditor,), n=n_side, mode="fixed",
                        **kwargs)
print(f"with n={n_side} and {kwargs}: {tuned.verdict.value} (ceiling "
      f"{tuned.result(auditor).details['epsilon_ceiling']:.3f})")
sequential = audit_mechanism(fs_mech, fs_data, rng, auditors=("blackbox",))
print(f"default path (sequential): {sequential.verdict.value} after "
      f"{sequential.result('blackbox').details['n_per_side']} draws per side")

# %% [markdown]
# ## Exercise 4 · ★★★ A hard tier
# The GDP fit catches `planted/sensitivity-x1.25` with enough samples per side; the planner
# predicts where its power crosses $0.8$.

# %%
x125, x125_data = get("planted/sensitivity-x1.25").make()
pair = witness_pair(check_sensitivity(x125, x125_data, rng))
sizes = sorted(int(s) for s in p["power_grid"])
curve = detection_rate(x125, pair, sizes, p["n_power_reps"], rng, auditor="gdp-fit")
plan = plan_samples(1.0, 1e-5, target_fraction=1.0, method="gdp",
                    true_mu=1.25 * gdp_mu(1.0, 1e-5))
print("observed detection rate:", {n: round(float(r), 2)
                                   for n, r in zip(curve["sizes"], curve["rate"], strict=True)})
display(Markdown(f"The planner's plan: **{plan.n_total_per_side:,}** samples per side for "
                 f"power {plan.power:.2f} (compare where the observed rate crosses 0.8; with "
                 f"{p['n_power_reps']} audits per size the observed rates are noisy)."))

# %% [markdown]
# ## Exercise 5 · ★ Blind spots
# The sensitivity checker inspects only the noise-free query and its bound, and both are right;
# the bug is in the noise. The white-box report's μ (and its ε) shows it: the covariance the
# mechanism declares is too small for its claim.

# %%
sv, sv_data = get("planted/std-as-variance").make()
print(audit_mechanism(sv, sv_data, rng, auditors=("sensitivity", "whitebox")).table())

# %% [markdown]
# ## Exercise 6 · ★ Your own bug
# With the bound set to $1/50$ the sensitivity checker reports first (no samples): its witness
# moves one target by the full $4$, which changes the mean by $4/50$.

# %%
class BuggyFixedNoisyMean:
    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0))
    norm = L2()

    def sensitivity_bound(self):
        return 1.0 / 50  # BUG: one target moves by 4, so the mean moves by 4/50

    def query(self, data):
        return np.array([data.y.mean()])

    def mean(self, data):
        return self.query(data)

    def cov(self, data):
        return np.array([[analytic_gaussian_sigma(1.0, 1e-5, self.sensitivity_bound()) ** 2]])

    def sample(self, data, n, rng):
        return self.query(data) + np.sqrt(self.cov(data)[0, 0]) * rng.standard_normal((n, 1))


my_data = Dataset(np.linspace(0, 1, 50), np.zeros(50))
print(audit_mechanism(BuggyFixedNoisyMean(), my_data, rng, auditors=("sensitivity",)).table())

# %% [markdown]
# ## Exercise 7 · ★★ Monotone utilities
# Without the factor $2$ the exponential mechanism's privacy loss can reach $2\varepsilon$ when one
# neighbour moves utilities in opposite directions (the vote utility); a monotone utility moves
# them all the same way, and the normalisation cancels half of the change.

# %%
pairs = neighbour_pairs(exp_default_data(), whole_rows(1.0), rng)
for mid in ("planted/exp-no-half", "planted/exp-no-half-monotone"):
    mech, _ = get(mid).make()
    worst = max(exp_realised_epsilon(mech, pr.d0, pr.d1) for pr in pairs)
    print(f"{mid:<30} largest realised epsilon over the pairs: {worst:.3f}")
