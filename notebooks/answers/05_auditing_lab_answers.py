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
# [glossary](../GLOSSARY.md).

# %% tags=["parameters"]
seed: int = 2026  # seed of the one random generator
n_power_reps: int = 10  # audits per sample size in exercise 2
power_grid: list = [8000, 16000, 32000]  # samples per side in exercise 2

# %%
import numpy as np
from IPython.display import Markdown, display

from dpgp_audit import ApproxDP, Dataset, outputs_only, whole_rows
from dpgp_audit.audit.blackbox.planner import plan_samples
from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.audit.sensitivity import check_sensitivity, witness_pair
from dpgp_audit.audit.stats import epsilon_ceiling
from dpgp_audit.bugs import zoo
from dpgp_audit.bugs.calibration import exp_default_data, exp_realised_epsilon
from dpgp_audit.catalogue import get
from dpgp_audit.experiments.auditing_lab import detection_rate
from dpgp_audit.norms import L2
from dpgp_audit.params import check_notebook_params
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
from dpgp_audit.privacy.gdp import gdp_mu

p = check_notebook_params(seed=seed, n_power_reps=n_power_reps, power_grid=power_grid)
rng = np.random.default_rng(p["seed"])

# %% [markdown]
# ## 1 · ★★ Ceilings
# In fixed mode with n = 20, a quarter to a half of the samples go to fitting the test and α is
# split over the pairs and tests, so the ε ceiling of the few certification samples is below the
# claim: even a perfect distinguisher certifies less than ε = 1. One pair and a small fitting
# share fix it. The default path (sequential, at most 200 000 per side) needs no tuning: it
# keeps doubling its draws until the ceiling passes the claim, and prints how many it used.

# %%
fixed_seed, fs_data = get("planted/fixed-seed").make()
default = audit_mechanism(fixed_seed, fs_data, rng, auditors=("blackbox",), n=20, mode="fixed")
print(default.table())
print(f"ceiling of 10 certification samples at alpha/4: {epsilon_ceiling(10, 0.05 / 4):.2f}")
bug = zoo.get("planted/fixed-seed")
auditor, n_side, kwargs = bug.caught_by, bug.n, bug.audit_kwargs
tuned = audit_mechanism(fixed_seed, fs_data, rng, auditors=(auditor,), n=n_side, mode="fixed",
                        **kwargs)
print(f"with n={n_side} and {kwargs}: {tuned.verdict.value}")
sequential = audit_mechanism(fixed_seed, fs_data, rng, auditors=("blackbox",))
print(f"default path (sequential): {sequential.verdict.value} after "
      f"{sequential.result('blackbox').details['n_per_side']} draws per side")

# %% [markdown]
# ## 2 · ★★★ A hard tier
# The GDP fit catches `planted/sensitivity-x1.25` at a few ten thousand samples per side; the
# planner predicts where its power crosses 0.8.

# %%
bug, bug_data = get("planted/sensitivity-x1.25").make()
pair = witness_pair(check_sensitivity(bug, bug_data, rng))
sizes = sorted(int(s) for s in p["power_grid"])
curve = detection_rate(bug, pair, sizes, p["n_power_reps"], rng, auditor="gdp-fit")
plan = plan_samples(1.0, 1e-5, target_fraction=1.0, method="gdp",
                    true_mu=1.25 * gdp_mu(1.0, 1e-5))
print("observed detection rate:", dict(zip(curve["sizes"], np.round(curve["rate"], 2),
                                           strict=True)))
display(Markdown(f"The planner's plan: **{plan.n_total_per_side:,}** samples per side for "
                 "power 0.8 (compare where the observed rate crosses 0.8; with few audits per "
                 "size the observed rates are noisy)."))

# %% [markdown]
# ## 3 · ★ Blind spots
# The sensitivity checker inspects only the noise-free query and its bound, and both are right;
# the bug is in the noise. The white-box report's μ (and its ε) shows it: the covariance the
# mechanism declares is too small for its claim.

# %%
sv, sv_data = get("planted/std-as-variance").make()
print(audit_mechanism(sv, sv_data, rng, auditors=("sensitivity", "whitebox")).table())

# %% [markdown]
# ## 4 · ★ Your own bug
# With the bound set to 1/50 the sensitivity checker reports first (no samples): its witness
# moves one target by the full 4, which changes the mean by 4/50.

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
# ## 5 · ★★ Monotone utilities
# Without the factor 2 the exponential mechanism's privacy loss can reach 2ε when one
# neighbour moves utilities in opposite directions (the vote utility); a monotone utility moves
# them all the same way, and the normalisation cancels half of the change.

# %%
pairs = neighbour_pairs(exp_default_data(), whole_rows(1.0), rng)
for mid in ("planted/exp-no-half", "planted/exp-no-half-monotone"):
    mech, _ = get(mid).make()
    worst = max(exp_realised_epsilon(mech, pr.d0, pr.d1) for pr in pairs)
    print(f"{mid:<30} largest realised epsilon over the pairs: {worst:.3f}")
