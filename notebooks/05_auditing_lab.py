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
# # 05 · The auditing lab: can we catch a broken privacy claim?
#
# A differential-privacy claim is a statement about *every* pair of neighbouring
# datasets and *every* event, so no finite experiment can prove it. What an experiment
# *can* do is refute it. This lab takes the kit's **auditors** — programs that test a
# mechanism's privacy claim (catalogue A.1–A.6) — apart: what each one guarantees, how many
# samples it needs, and which bugs it can and cannot see.
#
# **Learning objectives** — after this lab you can
#
# 1. name the guarantee behind each auditor's number: an exact value for the worst pair
#    it *generated* (white-box), a definitive counterexample (sensitivity search), or a
#    lower bound that holds with confidence $1 - \alpha$ (black-box, GDP fit);
# 2. explain why "no violation found" is **not** a proof of privacy, using the
#    ε ceiling a given sample size can reach, and compute a certified ε lower bound from
#    counts yourself (exercise 2);
# 3. read the table of planted bugs: which auditor caught each, with how many samples,
#    and why the others were blind;
# 4. audit a mechanism you wrote yourself in about ten lines, build a neighbour pair that
#    exposes a bug (exercise 1), and avoid the common mistakes the planted bugs are built
#    from.
#
# **What you'll need:** notebook 00 (neighbours, calibration, privacy profiles, μ-GDP);
# notation in the [glossary](GLOSSARY.md) — here μ of a pair is $\|\Sigma^{-1/2}(m - m')\|$ and α the
# audit's failure probability. **Time:** the core (§1–§5 and the exercises) is a lab of about
# $90$ minutes; the appendix holds the rounding attack on floating point and the power study.
# The notebook runs top to bottom in about a minute.

# %% tags=["parameters"]
epsilon: float = 1.0  # the claim audited in section 1
delta: float = 1e-5  # its delta
alpha: float = 0.05  # each audit's failure probability (1 - confidence)
seed: int = 2026  # seed of the one random generator
n_samples: int = 20000  # fixed-mode black-box samples per side in sections 1 and 2
n_power_reps: int = 10  # independent audits per sample size in the power study
power_grid: list = [500, 2000, 8000, 32000]  # samples per side in the power study
n_rounding: int = 20000  # samples per side of the precision auditor's verdicts (appendix A)
show_progress: bool = True  # progress bars (switched off in CI)

# %%
# %matplotlib inline
import numpy as np
from IPython.display import Markdown, display

from dpgp_audit.exercises import check
from dpgp_audit.params import check_notebook_params
from dpgp_audit.viz import show

p = check_notebook_params(epsilon=epsilon, delta=delta, alpha=alpha, seed=seed,
                          n_samples=n_samples, n_power_reps=n_power_reps,
                          power_grid=power_grid, n_rounding=n_rounding,
                          show_progress=show_progress)
sizes = sorted({int(s) for s in p["power_grid"]})
rng = np.random.default_rng(p["seed"])
print(p)

# %% [markdown]
# ## 1 · Three kinds of auditor, three kinds of guarantee
#
# Every mechanism in the kit implements one small contract: a `claim` (ε, δ and the
# neighbour relation) and a vectorised `sample(data, n, rng)`. Two optional interfaces
# unlock stronger audits.
#
# * **Sensitivity search** (A.4) needs `query`, `norm` and `sensitivity_bound()`.
#   Its number is the largest query change found over neighbours. Above the bound
#   it is a **definitive counterexample** with a **witness pair** (the two neighbouring
#   datasets that show it); below it, only a lower bound on the true supremum.
# * **White-box** (A.2) needs `mean(D)` and `cov(D)` of a Gaussian output. Its number
#   is the **exact** privacy profile of each generated pair,
#   $\mu = \|\Sigma^{-1/2}(m - m')\|$, worst case over the pairs (a Monte Carlo bound with an
#   exact binomial interval when Σ depends on the data). "Exact" means exact for the
#   worst pair *the generator proposed*: a pair it never proposes is not covered, so a
#   white-box `NO_EVIDENCE` is not a proof either.
# * **Black-box** (A.3) needs only `sample`. Its number is a **lower bound on ε**,
#   valid with confidence $1 - \alpha$ and no model assumptions, from Clopper–Pearson bounds
#   (exact binomial confidence bounds) on a test's error rates measured on fresh samples.
# * **GDP fit** (A.3) needs only `sample`. Its number is a lower bound on μ, turned
#   into ε only *if* the mechanism's trade-off curve is Gaussian.
#
# Every audit ends in a **verdict**: `VIOLATION` (the claim is refuted, with the guarantee
# above), `NO_EVIDENCE` (nothing found — *not* a proof of privacy) or `INCONCLUSIVE` (the
# audit could not have refuted the claim even with a perfect test, e.g. too few samples).
#
# Pairs come from the **neighbour generator** (A.1): targets moved by ±d, targets at the
# bound, outlier rows far from the data, duplicated inputs, tiny datasets. The black-box
# auditor first *explores* (ranks pairs by a cheap score), then *confirms* the best
# pairs on fresh samples, with a Bonferroni correction (α divided among the tests) over the
# pairs it confirms.
#
# The black-box auditor has two modes. `audit_mechanism(mech, data, rng)` with nothing
# else — the **default path**, the same as `make audit` — runs it *sequentially* (A.8): it
# draws in rounds of growing size and stops at the first certified violation or when its
# budget is spent; the report says how many draws it used. §1 and §2 study what a *given*
# sample size can certify, so they pass `mode="fixed"`: exactly `n` samples per side, split
# into a fitting and a certifying part. §4 uses the default path.
#
# Let us audit a correct mechanism: the analytic Gaussian mechanism on the sum of the
# targets (P.1), on the kit's embedded sine data.

# %%
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.catalogue import get

mech, data = get("P.1/gaussian-sum").make(epsilon=p["epsilon"], delta=p["delta"])
report = audit_mechanism(mech, data, rng, n=p["n_samples"], mode="fixed", alpha=p["alpha"],
                         name="P.1/gaussian-sum", progress=p["show_progress"])
print(report.table())

# %% [markdown]
# Read the table line by line:
#
# * the **sensitivity** search found a query change equal to the bound, never above it;
# * the **white-box** auditor computed ε(δ) *exactly* for the worst pair it generated:
#   it equals the claim, because the analytic calibration is tight and the generator
#   proposes a pair at the full sensitivity;
# * the **black-box** lower bound is well below the claim, and the line under it says
#   why: at this n the bound cannot get close to ε when δ is as small as `1e-5`. The
#   sample-size planner (next cell) says how many samples it would take.
#
# The plot below is the hypothesis-testing picture of the same audit. Any test of
# "was the output drawn from D or from D′?" has a type-I error (FPR) and a type-II
# error (FNR); the claim forbids the shaded region below the black curve. Orange
# points are the black-box auditor's tests with their confidence boxes; the dashed
# curve is the white-box auditor's exact trade-off curve for the worst pair.

# %%
from dpgp_audit.audit.blackbox.planner import plan_samples

plan = plan_samples(p["epsilon"], p["delta"], target_fraction=0.8, alpha=p["alpha"])
plan_gdp = plan_samples(p["epsilon"], p["delta"], target_fraction=0.8, alpha=p["alpha"],
                        method="gdp")
display(Markdown(
    f"To certify ε̂ ≥ 0.8·ε = {0.8 * p['epsilon']:g} for this correct mechanism with power 0.8, "
    f"the model-free black-box bound needs about **{plan.n_total_per_side:,}** samples per "
    f"side (we used {p['n_samples']:,}); the GDP fit, which assumes a Gaussian trade-off "
    f"curve, about **{plan_gdp.n_total_per_side:,}**. The model-free bound pays for making no "
    f"assumption: at δ = {p['delta']:g} the decisive events are rare."))

# %%
show(report.plot())

# %% [markdown]
# ## 2 · "No violation found" is not a proof
#
# A perfect distinguisher — an event that every output of M(D′) hits and no output of
# M(D) does — still only certifies a bounded ε from finitely many samples: the
# Clopper–Pearson bound cannot exclude a tiny false-positive rate. That **ε ceiling**
# grows only like log(n), so a deterministic, completely non-private release
# passes a black-box audit whose ceiling lies below its claim.

# %%
from dpgp_audit.audit.stats import epsilon_ceiling

print(f" samples/side   largest certifiable epsilon (alpha = {p['alpha']:g})")
for n in (10, 100, 1_000, 10_000, 100_000, 1_000_000):
    print(f"{n:>12,}   {epsilon_ceiling(n, p['alpha'], 0.0):8.2f}")

# %% [markdown]
# ### Explore: samples per side, the ceiling and the verdict
#
# `ceiling_explorer(n, ...)` draws the ε ceiling against n and marks the verdict a
# black-box audit with n samples per side *can at best* reach, for a claim of
# $\varepsilon = 1$ on the sum mechanism with its sensitivity halved (audited in Appendix B),
# whose true ε the next cell prints. Called once at the notebook's n; the slider cell explores
# it in a live session.

# %%
from functools import partial

from dpgp_audit.bugs import zoo
from dpgp_audit.viz.explorers import ceiling_explorer, ceiling_state

x2_true = zoo.get("planted/sensitivity-x2").true_epsilon
print(f"true epsilon of planted/sensitivity-x2: {x2_true:.3f}")
explore_ceiling = partial(ceiling_explorer, claimed_epsilon=1.0, true_epsilon=x2_true,
                          alpha=p["alpha"], delta=p["delta"])
print(ceiling_state(p["n_samples"], claimed_epsilon=1.0, true_epsilon=x2_true,
                    alpha=p["alpha"], delta=p["delta"]).reason)
show(explore_ceiling(p["n_samples"]))

# %% tags=["nbval-ignore-output"]
from dpgp_audit.viz.widgets import slider_widget

slider_widget(explore_ceiling, {"n": (10, 10_000_000, p["n_samples"])}, log=("n",),
              integer=("n",), labels={"n": "samples/side"})

# %% [markdown]
# Now a real bug that a black-box audit at this n misses: the sum mechanism whose stated
# sensitivity is $1/1.25$ of the true one — understated by a fifth (its noise would need to
# be $1.25$ times larger). The black-box auditor finds no evidence — and that says nothing
# about privacy. The sensitivity checker needs no samples at all and produces a witness
# pair.

# %%
entry = get("planted/sensitivity-x1.25")
bug, bug_data = entry.make()
bb_only = audit_mechanism(bug, bug_data, rng, auditors=("blackbox",), n=p["n_samples"],
                          mode="fixed", alpha=p["alpha"], name=entry.id)
print(bb_only.table())
print()
sens_only = audit_mechanism(bug, bug_data, rng, auditors=("sensitivity",), name=entry.id)
print(sens_only.table())
print(f"true epsilon of this bug: {entry.true_epsilon:.3f}")
display(Markdown(
    f"Its true ε is **{entry.true_epsilon:.2f}** against the claimed {bug.claim.epsilon:g}: a "
    f"real violation. The black-box audit at n = {p['n_samples']:,} says "
    f"`{bb_only.verdict.value}`, the sensitivity checker `{sens_only.verdict.value}`."))

# %% [markdown]
# ## 3 · Every planted bug, and the auditor that catches it
#
# The kit ships deliberately broken mechanisms (IDs `planted/…`, catalogue A.5), each with
# its true ε and a correct **twin** (the same mechanism without the bug). For each bug we run
# only the **cheapest auditor able to see it**, at the sample size the test suite asserts,
# and the twin with the same auditor and n (it must not be flagged). One row is a **negative
# control**: a variant that is *still* private, which the auditor must not flag.
#
# Why are the other auditors blind? The sensitivity checker only inspects the noise-free
# query, so a wrong *noise* (std used as variance, a calibration used outside its proof, a
# fixed seed) is invisible to it. The white-box auditor trusts the mechanism's own
# `mean`/`cov`, so a sampler that ignores its generator slips through; only sampling the
# implementation catches that. And no black-box test at a realistic n can see a violation at
# $\varepsilon = 20$: the events involved have probability around $e^{-20}$.

# %%
from dpgp_audit.experiments.auditing_lab import audit_planted_suite
from dpgp_audit.viz.audit_report import plot_planted_catch

rows = audit_planted_suite(rng, progress=p["show_progress"])
print(f"{'planted bug':<36} {'true eps':>8}  {'auditor':<11} {'n/side':>7}  "
      f"{'verdict':<12} twin verdict")
for r in rows:
    tag = "  (negative control)" if r["control"] else ""
    print(f"{r['id']:<36} {r['true_epsilon']:>8.3g}  {r['auditor']:<11} {r['n']:>7,}  "
          f"{r['verdict']:<12} {r['twin_verdict']}{tag}")
fig = plot_planted_catch(rows)
fig.tight_layout()
show(fig)

# %%
missed = [r for r in rows if not r["control"] and r["verdict"] != "VIOLATION"]
controls = [r for r in rows if r["control"]]
twins_flagged = [r for r in rows if r["twin_verdict"] == "VIOLATION"]
lines = [f"- **{len(rows) - len(controls) - len(missed)} of {len(rows) - len(controls)}** "
         "planted bugs were flagged by their auditor at the stated n."]
for r in missed:
    lines.append(
        f"- `{r['id']}` (true ε {r['true_epsilon']:.3g}) was **not** flagged in this run "
        f"(`{r['verdict']}` at n = {r['n']:,}): a black-box audit at a fixed n has power "
        "below 1, and the test suite asserts this row with its own seed; a hollow dot in the "
        "chart marks it.")
for r in controls:
    ok = r["verdict"] != "VIOLATION"
    lines.append(
        f"- The negative control `{r['id']}` (true ε {r['true_epsilon']:g}, equal to its "
        f"claim) got `{r['verdict']}`"
        + (": correctly *not* flagged (the diamond in the chart)." if ok else
           ": a false alarm, which the auditor's level α allows with small probability."))
lines.append(f"- Twins flagged: {len(twins_flagged)} (a correct twin must not be flagged).")
display(Markdown("\n".join(lines)))

# %% [markdown]
# The negative control is the exponential mechanism without its factor $2$, which is still
# ε-DP when the utility is **monotone** (every utility moves in the same direction between
# neighbours). With a non-monotone utility — `planted/exp-no-half`, the vote utility — the
# same missing factor doubles the privacy loss.
#
# ## 4 · Auditing your own mechanism
#
# Any object with a `claim` and a vectorised `sample(data, n, rng)` can be audited. Here is
# the README's example: the mean of targets in $[-2, 2]$ (one change moves a target by up to
# $4$), released with noise calibrated for sensitivity $1/N$ instead of $4/N$. It runs the
# default path, `audit_mechanism(mechanism, data, rng)`: the black-box line of the table says
# how many draws the sequential audit bought before it stopped.

# %%
from dpgp_audit import ApproxDP, Dataset, outputs_only
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma


class NoisyMean:                     # targets in [-2, 2]: one change moves y_i by up to 4
    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0))

    def sample(self, data, n, rng):  # BUG: the sensitivity of the mean is 4/N, not 1/N
        sigma = analytic_gaussian_sigma(1.0, 1e-5, 1 / data.n)
        return data.y.mean() + sigma * rng.standard_normal((n, 1))


my_data = Dataset(np.linspace(0, 1, 50), np.zeros(50))
mine = audit_mechanism(NoisyMean(), my_data, rng)
print(mine.table())

# %% [markdown]
# Only the sample-based auditors could run: the table says which interfaces would unlock
# the others. Below, the corrected mechanism also states its noise-free query, norm
# and sensitivity bound, and its Gaussian mean and covariance — now the sensitivity,
# model-check and white-box auditors run too, and none of them finds a violation, nor
# does the black-box auditor. The precision auditor (A.7, Appendix A) still does: this claim
# declares no public domain (no bound on |y|), so huge legal targets round the release;
# declaring `claim.domain` closes it. And where nothing is found, read the last line of the
# table again: that is *not* a proof of privacy.

# %%
from dpgp_audit.norms import L2


class FixedNoisyMean:
    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0))
    norm = L2()

    def sensitivity_bound(self):
        return 4.0 / 50                           # one target moves by 4; N = 50

    def query(self, data):
        return np.array([data.y.mean()])

    def mean(self, data):
        return self.query(data)

    def cov(self, data):
        return np.array([[analytic_gaussian_sigma(1.0, 1e-5, self.sensitivity_bound()) ** 2]])

    def sample(self, data, n, rng):
        sigma = np.sqrt(self.cov(data)[0, 0])
        return self.query(data) + sigma * rng.standard_normal((n, 1))


fixed = audit_mechanism(FixedNoisyMean(), my_data, rng)
fixed

# %% [markdown]
# ## 5 · Common mistakes (and the planted bug that shows each)
#
# Every planted bug is a mistake people make when they implement DP by hand. Six of them are
# worth remembering before you write your own mechanism. The table is built from the bug
# zoo (`dpgp_audit.bugs.zoo`) and, for the last row, from an audit run in the cell.

# %%
fs_mech, fs_data = get("planted/fixed-seed").make()
fs_default = audit_mechanism(fs_mech, fs_data, rng, auditors=("blackbox",), n=20, mode="fixed",
                             alpha=p["alpha"], name="planted/fixed-seed")
fs_res = fs_default.result("blackbox")
what = {
    "planted/std-as-variance": (
        "**std and variance swapped**",
        "σ passed where σ² is expected (the planted bug draws noise of *variance* σ, i.e. "
        "standard deviation √σ): for σ > 1 the noise is √σ times too small",
        "the sensitivity checker is blind — the query is right"),
    "planted/s18-delta-no-sqrt": (
        "**a missing square root**",
        "a squared norm used as a norm (S18-supp's CalcDelta): harmless at the optimum, too "
        "little noise anywhere else", "the sensitivity checker as well"),
    "planted/neighbour-mismatch": (
        "**neighbour mismatch**",
        "the sensitivity of one relation (add/remove one row) used for a claim under another "
        "(replace one row), which moves the sum twice as far", "with a witness pair"),
    "planted/kernel-sum-data-sensitivity": (
        "**a bound over the inputs you happen to have**",
        "under whole-row neighbours a substituted record may sit at *any* input; a "
        "sensitivity taken over the data's own inputs misses the record placed at the point "
        "where the release is evaluated (here a kernel sum between two inputs)",
        "no generated pair comes near that point; the grey-box auditor searches for the "
        "position where one row moves the release most"),
    "planted/clip-to-data-range": (
        "**post-processing that reads the data**",
        "a function of a DP release is free only if it reads nothing private; clipping noisy "
        "bin means to the true targets' range puts point masses at min y and max y, which "
        "move with the data",
        "the precision line names the point mass; clipping to the declared bound instead is "
        "post-processing (the twin)"),
    "planted/fixed-seed": (
        "**reading NO_EVIDENCE as a proof**",
        "an audit that found nothing is taken as \"private\"; but the black-box ceiling, the "
        "pairs the generator proposed and the sample size all limit what it could find",
        f"audited in fixed mode with `n=20` and otherwise default arguments it says "
        f"`{fs_res.verdict.value}` (ceiling {fs_res.details['epsilon_ceiling']:.2f} against the "
        f"claim {fs_mech.claim.epsilon:g}); the sequential default path keeps drawing until its "
        "ceiling passes the claim"),
}
table = ["| mistake | what goes wrong | planted bug | true ε | who catches it |",
         "|---|---|---|---|---|"]
for mid, (name, wrong, note) in what.items():
    b = zoo.get(mid)
    n_txt = "no samples" if not b.n else f"{b.n:,} samples/side"
    table.append(f"| {name} | {wrong} | `{mid}` | {b.true_epsilon:.3g} | "
                 f"{b.caught_by} ({n_txt}); {note} |")
display(Markdown("\n".join(table)))

# %% [markdown]
# ## Auditing code you did not write
#
# Library code rarely takes a `Generator`: it draws from numpy's legacy global state, from
# a `random_state` argument, from Python's `random`, or from a sampler of its own.
# `dpgp_audit.adapters.adapt` (catalogue A.10) wraps such a call into the mechanism
# contract and seeds it from the audit's generator — then restores any global state it
# touched — so the audit stays reproducible. **The adapter never states the claim**: you
# write the guarantee the library documents. Below, a stand-in for an old library (the
# mean of values clamped to $[-1, 1]$, Laplace noise from `np.random`): its documentation
# promises ε-DP, but its scale uses the sensitivity $1/N$ where a replaced value moves the
# mean by $2/N$ — the true ε is twice the claim. (The same recipe audits real libraries:
# `examples/third_party/` wraps OpenDP, IBM's diffprivlib and the S18 authors' dp4gp, the
# last in its own virtualenv through `dpgp_audit.adapters.bridged`; see
# docs/own-code.md. They are not installed on Binder.)

# %%
from dpgp_audit import Dataset, PublicDomain, PureDP, outputs_only
from dpgp_audit.adapters import adapt
from dpgp_audit.audit.runner import audit_mechanism


def library_mean(values, epsilon, size):  # "their" code: legacy global state, no rng
    clamped = np.clip(values, -1.0, 1.0)
    scale = 1.0 / (len(values) * epsilon)  # BUG: the sensitivity is 2 / N
    return clamped.mean() + np.random.laplace(0.0, scale, size=size)  # noqa: NPY002


documented = PureDP(epsilon=1.0, relation=outputs_only(2.0),  # what the docs promise
                    domain=PublicDomain(y_bound=1.0))
theirs = adapt(lambda data, n: library_mean(data.y, 1.0, n), documented,
               seeding="numpy_global", vectorised=True, name="library_mean")
lib_data = Dataset(np.linspace(0, 1, 20), np.sin(np.linspace(0, 6, 20)))
same = np.array_equal(theirs.sample(lib_data, 5, np.random.default_rng(1)),
                      theirs.sample(lib_data, 5, np.random.default_rng(1)))
lib_report = audit_mechanism(theirs, lib_data, np.random.default_rng(seed), name=theirs.name)
print(f"same seed, same draws: {same}; cost per draw: {theirs.cost_per_draw_s:.2g} s")
print(lib_report.table())

# %% [markdown]
# The black-box auditor certifies a lower bound on ε above the documented $\varepsilon = 1$
# (the true value is $\varepsilon = 2$), with the witness pair that shows it. Only the sample-based auditors ran:
# the library states no mean, covariance or query — pass `query`, `norm` and
# `sensitivity_bound` to `adapt` when you know them, and the sensitivity checker runs
# too. A library that draws from its own entropy (OpenDP, `secrets`) is adapted with
# `seeding="unseedable"`: its draws are still independent, so the verdict keeps its
# guarantee, but the report says **NOT REPRODUCIBLE**.

# %% [markdown]
# Your own code often does the same: `sample` ignores the `rng` it is handed and calls
# `np.random.normal`. Its draws are still independent, so the verdicts keep their guarantee,
# but the grey-box auditor — which hands $D$ and $D'$ generators of one seed and reads the
# noise off them — then has nothing to couple, and gives no bound. `seed_globals` answers
# `np.random`'s and `random`'s common functions from the audit's generator during each call
# (the same laws, another stream) and restores them afterwards; the command line does this
# by itself for `--mechanism FILE.py:NAME`. Below, the `NoisyMean` bug of section 4 written
# that way, audited by the grey-box auditor as written and wrapped: its exact ε is that of a
# Gaussian release whose μ is four times the calibrated one.

# %%
from dpgp_audit.adapters import seed_globals


class HurriedMean(NoisyMean):  # the same bug, its noise from numpy's global state
    def sample(self, data, n, rng):
        sigma = analytic_gaussian_sigma(1.0, 1e-5, 1 / data.n)
        return data.y.mean() + sigma * np.random.standard_normal((n, 1))  # noqa: NPY002


for label, mech in (("as written", HurriedMean()), ("seed_globals", seed_globals(HurriedMean()))):
    grey = audit_mechanism(mech, my_data, np.random.default_rng(seed), auditors=("greybox",))
    res = grey.result("greybox")
    print(f"{label:>12}: grey-box {res.verdict.value}, epsilon {res.estimate:.3g}")

# %% [markdown]
# ## Exercises
#
# Difficulty: ★ check your understanding · ★★ apply · ★★★ explore. Exercises 1 and 2 are
# checked in the notebook: write the function, run the check cell below it, and read the
# feedback (✓ / ✗ with a hint). Solutions: `answers/05_auditing_lab_answers.ipynb` — try
# first.
#
# **Exercise 1** ★★ · **A pair that exposes a bug.** `planted/neighbour-mismatch` releases
# the sum of the targets with noise calibrated for the *add/remove-one* sensitivity, but
# claims privacy under *replace-one* (whole rows, every target within $|y| \le 1$). Write
# `exposing_pair(data)` returning two datasets `(d0, d1)` — both yours to choose, e.g.
# copies of `data` with changed targets (`Dataset(data.X, y)`) — that are neighbours under
# the bug's claim and on which the release's exact privacy loss exceeds the claimed ε. The
# check builds the bug on `data` and computes that loss.

# %%
def exposing_pair(data):
    """Two whole-row neighbours (d0, d1) on which planted/neighbour-mismatch breaks its claim."""
    ...  # your code here


check("05.1", exposing_pair)

# %% [markdown]
# **Exercise 2** ★★ · **A certified ε lower bound from counts.** A black-box test fixes an
# event S, counts `k1` hits among `n1` draws of M(D′) and `k0` among `n0` draws of M(D), and
# uses that (ε, δ)-DP implies $P(M(D') \in S) \le e^\varepsilon P(M(D) \in S) + \delta$. Write
# `eps_lower_bound(k1, n1, k0, n0, delta, alpha)`: the ε lower bound that holds with
# confidence $1 - \alpha$, using a Clopper–Pearson lower bound on the first rate and an upper
# bound on the second (`scipy.stats.beta.ppf`), with α split evenly between the two, and
# floored at $0$. Then use it: what does a perfect distinguisher certify with the
# certification samples of §5's fixed-seed audit (`fs_res.details["n_cert"]` per side, at
# its `fs_res.details["alpha_per_test"]`)?

# %%
def eps_lower_bound(k1, n1, k0, n0, delta, alpha):
    """Certified lower bound on ε from one event's counts (Clopper–Pearson, α/2 per side)."""
    ...  # your code here


check("05.2", eps_lower_bound)

# %%
from dpgp_audit.audit.blackbox.planner import plan_samples
from dpgp_audit.privacy.gdp import gdp_mu

fs_bug = zoo.get("planted/fixed-seed")
x125_plan = plan_samples(1.0, 1e-5, target_fraction=1.0, method="gdp",
                         true_mu=1.25 * gdp_mu(1.0, 1e-5))
display(Markdown(f"""
3. ★★ **Ceilings.** Audit `planted/fixed-seed` with `auditors=("blackbox",)`,
   `mode="fixed"` and `n=20`. Why is it not flagged, although the release is
   deterministic? Which two arguments of `audit_mechanism` make it visible at that fixed n
   (see the bug's row in `dpgp_audit.bugs.zoo`)? How many draws does the default
   (sequential) path need?
4. ★★★ **A hard tier.** Build `planted/sensitivity-x1.25` and estimate, with
   `detection_rate` (Appendix B) and the GDP fit, the n at which it is caught 80 % of the
   time. Compare with `plan_samples(1.0, 1e-5, target_fraction=1.0, method="gdp",
   true_mu=1.25 * gdp_mu(1.0, 1e-5))`.
5. ★ **Blind spots.** Why does the sensitivity checker pass `planted/std-as-variance`?
   Which line of its white-box report shows the bug?
6. ★ **Your own bug.** Change `FixedNoisyMean.sensitivity_bound` to `1 / 50`. Which
   auditor reports it first, and what witness pair does it give?
7. ★★ **Monotone utilities.** Using `exp_realised_epsilon` from
   `dpgp_audit.bugs.calibration`, compute the realised ε of `planted/exp-no-half` and of
   its monotone twin on every pair from `neighbour_pairs(exp_default_data(),
   whole_rows(1.0), rng)`. Which is larger, and why?

<details><summary>Hints</summary>

3. With the default arguments, n = 20 leaves {fs_res.details['n_cert']} certification
   samples per side after fitting, and α is split over {fs_res.details['pairs_confirmed']}
   pairs and two tests ({fs_res.details['alpha_per_test']:g} per test): the ε ceiling is
   {fs_res.details['epsilon_ceiling']:.2f}, below the claim {fs_mech.claim.epsilon:g} (print
   `fs_res.details`). The zoo's row uses n = {fs_bug.n} and `{fs_bug.audit_kwargs}`. The
   sequential mode draws in growing rounds until the ceiling passes the claim.
4. The planner's plan is {x125_plan.n_total_per_side:,} samples per side for power
   {x125_plan.power:.2f}; the observed rate should cross 0.8 near it.
5. The query and its bound are right; the noise is wrong. Look at `mu`.
6. The sensitivity checker (a counterexample, no samples); its witness moves one
   target by 4.
7. The vote utility: the realised ε reaches up to twice the claim on some pairs; the
   monotone one stays at or below the claim.
</details>
"""))

# %% [markdown]
# # Appendix
#
# ## Appendix A · The rounding attack: when floating point swallows the noise
#
# Every proof in this course is about real numbers; the kit releases double-precision floats. A float
# near a value v can only be one of the points of a grid whose spacing is about
# $|v| \cdot 2^{-52}$ (`np.spacing(v)`): about $10^{-16}$ around $1$, but $16$ around
# $10^{17}$ and $256$ around $2 \cdot 10^{18}$. A claim for an outputs-only neighbour
# relation with no bound on |y| allows datasets whose *other* targets are that large: the
# neighbour still moves one target by at most d, exactly as the proof assumes. Then the sum
# query plus Gaussian noise whose sd is a few units is rounded to the grid — every release of
# D is the *same* float, every release of D′ perhaps the next one — and the noise no longer
# hides anything. Mironov (2012) showed this kind of leak for the textbook Laplace sampler
# (the low bits of a float release betray the input); Jin et al. (IEEE S&P 2022) for Gaussian
# samplers and DP-SGD. The privacy loss of such a release is unbounded, although every line
# of the proof holds.
#
# The kit answers with two rules, checked when a mechanism meets a dataset,
# (`dpgp_audit.privacy.domain`):
#
# 1. **a declared public domain** in every claim — here |y| ≤ B — and data outside it is
#    refused with an error naming `y` and the bound (or clipped, when the documented
#    contract is to clip);
# 2. **a floating-point safety rule**: the float spacing at the largest release the domain
#    allows (B × the query's gain, n for a sum of n targets) must be at most $2^{-10}$ of the
#    release grid Λ (about sd/1500), otherwise the mechanism refuses and names the largest
#    safe B;
#
# and every continuous release is rounded, exactly, to that public power-of-two grid Λ
# (`dpgp_audit.privacy.float_release`): the low bits of the floats then say nothing about
# the data, and the release is within a stated total variation of the exact mechanism
# (docs/auditors.md, "Float-safe releases").
#
# The **precision auditor** (catalogue A.7) attacks a mechanism as an adversary would. It
# builds neighbouring pairs at huge but legal targets — at the declared bound, or over a range
# of huge magnitudes when there is none — with the exact release placed next to a rounding
# boundary, draws a pilot of releases, and where rounding is visible next to the noise (few
# distinct values, or a float spacing that is not negligible against the sd) hands the pair to
# the black-box auditor, which certifies a lower bound on ε with its usual guarantee.
# `rounding_attack` runs it on two naive releases (the planted twins `planted/*-no-domain`:
# P.1's Gaussian sum and S18's cloaking as they were before domains existed) and on their
# hardened versions. It also builds one attack pair of its own (the other targets at one
# fixed magnitude, printed below) and counts the distinct values in a pilot of releases of it.

# %%
from dpgp_audit.experiments.rounding_attack import rounding_attack
from dpgp_audit.viz.audit_report import plot_rounding_attack

# a stream of its own: the later sections draw the same numbers with or without this one
rng_rounding = np.random.default_rng([p["seed"], 4])
pilot = min(1_000, p["n_rounding"])
attack = rounding_attack(rng_rounding, n=p["n_rounding"], pilot=pilot)
print(f"{'mechanism':<30} {'domain':>8}  {'distinct/' + str(pilot):>13}  {'verdict':<12} "
      f"{'certified eps':>13}  pilot pair / A.7's witness")
for r in attack:
    dom = "none" if r["domain"] is None else f"{r['domain']:g}"
    distinct = "refused" if r["refused"] else min(r["distinct"])
    print(f"{r['id']:<30} {dom:>8}  {distinct:>13}  {r['verdict']:<12} "
          f"{r['epsilon_lb']:>13.2f}  {r['attack']} / {r['witness'] or '-'}")
show(plot_rounding_attack(attack, pilot))

# %%
import re


def _magnitude(label):
    """The |y| magnitude a precision pair's label states ('|y| ~ 1e+17'), as text."""
    m = re.search(r"\|y\| ~ ([0-9.e+\-]+)", label or "")
    return m.group(1) if m else "?"


naive = [r for r in attack if r["kind"] == "naive"]
hardened = [r for r in attack if r["kind"] == "hardened"]
display(Markdown(
    "**Reading the table and the figure.** With the other targets at "
    + " and ".join(sorted({_magnitude(r["attack"]) for r in naive}))
    + " (the pilot pair), the naive releases take **"
    + " and ".join(f"{min(r['distinct'])}" for r in naive if r["distinct"])
    + f"** distinct value(s) in {pilot:,} draws: the noise has vanished into the float grid. "
    "A.7's own search certifies ε ≥ " + " and ≥ ".join(f"**{r['epsilon_lb']:.2f}**"
                                                         for r in naive)
    + f" against the claimed {naive[0]['claimed']:g} — a `VIOLATION` with a witness pair at "
    "|y| ~ " + " and ".join(_magnitude(r["witness"]) for r in naive)
    + f", from {p['n_rounding']:,} samples per side. The hardened releases, attacked at their "
    "declared bound |y| ≤ " + " and ".join(sorted({f"{r['domain']:g}" for r in hardened}))
    + ", keep " + " and ".join(f"{min(r['distinct']):,}" for r in hardened if r["distinct"])
    + f" of {pilot:,} values distinct and the auditor finds "
    + " / ".join(f"`{r['verdict']}`" for r in hardened)
    + ". As everywhere in this lab, an audit that finds nothing is no proof of privacy; the "
    "proof here is the rounding to a public grid with its stated float slack, or the exact "
    "samplers of `dpgp_audit.privacy.secure_noise`."))

# %% [markdown]
# What does the hardened mechanism do with such an attack — the same dataset with its other
# targets at $10^{17}$? It refuses before releasing anything, and says why:

# %%
hard_mech, hard_data = get("P.1/gaussian-sum").make()
huge = Dataset(hard_data.X, np.full(hard_data.n, 1e17))
try:
    hard_mech.sample(huge, 1, rng_rounding)
    print("NOT refused: the hardened mechanism released outside its declared domain")
except ValueError as err:
    print("refused:", err)
sd = float(np.sqrt(np.min(np.diag(np.atleast_2d(hard_mech.cov(hard_data))))))
print(f"noise sd {sd:.3g}; float spacing at n x 1e17 = {np.spacing(hard_data.n * 1e17):g}; "
      f"at n x the bound {np.spacing(hard_data.n * hard_mech.claim.domain.y_bound):.3g}")

# %% [markdown]
# ## Appendix B · Power against sample size
#
# How many samples does a black-box audit need to catch a bug? Take the sum mechanism with
# its sensitivity halved, hand the sensitivity checker's witness pair to the black-box and
# GDP-fit auditors, and repeat each audit `n_power_reps` times per sample size. The **power**
# of an audit is the probability that it flags the bug; the dashed lines are the sample-size
# planner's predictions (`dpgp_audit.audit.blackbox.planner.power_at`) for the model-free
# bound and for the GDP fit.

# %%
from dpgp_audit.audit.blackbox.planner import power_at
from dpgp_audit.audit.sensitivity import check_sensitivity, witness_pair
from dpgp_audit.experiments.auditing_lab import detection_rate
from dpgp_audit.viz.audit_report import plot_power

x2, x2_data = get("planted/sensitivity-x2").make()
pair = witness_pair(check_sensitivity(x2, x2_data, rng))
print("witness pair:", pair.label)
curves = [detection_rate(x2, pair, sizes, p["n_power_reps"], rng, auditor=a,
                         alpha=p["alpha"], progress=p["show_progress"])
          for a in ("blackbox", "gdp-fit")]
true_mu = 2 * gdp_mu(1.0, 1e-5)  # sensitivity x 2 doubles mu
predicted = {
    f"planner, {m}": (sizes, [power_at(n // 2, method=m, true_mu=true_mu, target_epsilon=1.0,
                                       delta=1e-5, alpha=p["alpha"])[0] for n in sizes])
    for m in ("blackbox", "gdp")}
for c in curves:
    print(c["auditor"], dict(zip(c["sizes"], c["rate"], strict=True)))
show(plot_power(curves, predicted))

# %% [markdown]
# The GDP fit needs far fewer samples — but its ε is only valid if the mechanism's
# trade-off curve is Gaussian (here it is: the noise is Gaussian). The model-free
# bound makes no such assumption and pays for it in samples. With few repetitions per
# point the observed rates are noisy; the bars are $95\,\%$ Clopper–Pearson intervals.
#
# ### Explore: one audit at the n you choose
#
# `blackbox_view(n)` runs the black-box auditor alone on the same halved-sensitivity bug
# with n samples per side and draws its report: the boxes and the verdict in the title. It is
# called once here; the slider below reruns it in a live session (`make lab` or Binder).
# Where along the slider does the verdict turn to `VIOLATION`, and how does that compare with
# the power curve above?

# %%
from dpgp_audit.viz.audit_report import plot_report


def blackbox_view(n: int):
    """The black-box audit of planted/sensitivity-x2 at n samples per side, as a figure."""
    rep = audit_mechanism(x2, x2_data, rng, auditors=("blackbox",), n=int(n), mode="fixed",
                          alpha=p["alpha"], name="planted/sensitivity-x2")
    fig = plot_report(rep)
    best = max((r.estimate for r in rep.results), default=float("nan"))
    fig.suptitle(f"planted/sensitivity-x2, black-box at n = {int(n):,}/side: "
                 f"{rep.verdict.value} (epsilon lower bound {best:.3g})", fontsize=11)
    return fig


show(blackbox_view(sizes[-1]))

# %% tags=["nbval-ignore-output"]
from dpgp_audit.viz.widgets import sample_size_widget

sample_size_widget(blackbox_view, n=sizes[-1], n_range=(200, 50_000))
