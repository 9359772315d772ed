"""Generate notebooks/05_auditing_lab.ipynb (run: python tools/nb_05_auditing_lab.py)."""

from __future__ import annotations

from pathlib import Path

from dpgp_audit.devtools.nbbuild import code, md, write_notebook

OUT = Path(__file__).resolve().parent.parent / "notebooks" / "05_auditing_lab.ipynb"

CELLS = [
    md(r"""
    # 05 · The auditing lab: can we catch a broken privacy claim?

    A differential-privacy claim is a statement about *every* pair of neighbouring
    datasets and *every* event, so no finite experiment can prove it. What an experiment
    *can* do is refute it. This notebook takes the kit's auditors (catalogue A.1–A.6)
    apart: what each one guarantees, how many samples it needs, and which bugs it can
    and cannot see.

    **Learning objectives** — after working through it you can

    1. name the guarantee behind each auditor's number: an exact value (white-box), a
       definitive counterexample (sensitivity search), or a lower bound that holds with
       confidence 1 − α (black-box, GDP fit);
    2. explain why "no violation found" is **not** a proof of privacy, using the
       ε ceiling a given sample size can reach;
    3. read the table of planted bugs: which auditor caught each, with how many samples,
       and why the others were blind;
    4. relate an auditor's power to the sample size, and compare it with the sample-size
       planner's prediction;
    5. audit a mechanism you wrote yourself in about ten lines.

    **What you'll need:** notebook 00 (neighbours, calibration, privacy profiles).
    Runs in about a minute with the default parameters.
    """),
    code("""
    epsilon: float = 1.0  # the claim audited in sections 1 and 5
    delta: float = 1e-5  # its delta
    alpha: float = 0.05  # each audit's failure probability (1 - confidence)
    seed: int = 2026  # seed of the one random generator
    n_samples: int = 20000  # black-box samples per side in sections 1, 2 and 5
    n_power_reps: int = 10  # independent audits per sample size in the power study
    power_grid: list = [500, 2000, 8000, 32000]  # samples per side in the power study
    show_progress: bool = True  # progress bars (switched off in CI)
    """, "parameters"),
    code("""
    %matplotlib inline
    import numpy as np

    from dpgp_audit.params import check_notebook_params

    p = check_notebook_params(epsilon=epsilon, delta=delta, alpha=alpha, seed=seed,
                              n_samples=n_samples, n_power_reps=n_power_reps,
                              power_grid=power_grid, show_progress=show_progress)
    sizes = sorted({int(s) for s in p["power_grid"]})
    if not sizes or min(sizes) < 20:
        raise ValueError(f"power_grid needs sample sizes >= 20, got {p['power_grid']!r}")
    rng = np.random.default_rng(p["seed"])
    print(p)
    """),
    md(r"""
    ## 1 · Three kinds of auditor, three kinds of guarantee

    Every mechanism in the kit implements one small contract: a `claim` (ε, δ and the
    neighbour relation) and a vectorised `sample(data, n, rng)`. Two optional interfaces
    unlock stronger audits.

    * **Sensitivity search** (A.4) needs `query`, `norm` and `sensitivity_bound()`.
      Its number is the largest query change found over neighbours. Above the bound
      it is a **definitive counterexample** with a witness pair; below it, only a
      lower bound on the true supremum.
    * **White-box** (A.2) needs `mean(D)` and `cov(D)` of a Gaussian output. Its number
      is the **exact** privacy profile of each generated pair,
      μ = ‖Σ^{-1/2}(m − m′)‖, worst case over the pairs (a Monte Carlo bound with an
      exact binomial interval when Σ depends on the data).
    * **Black-box** (A.3) needs only `sample`. Its number is a **lower bound on ε**,
      valid with confidence 1 − α and no model assumptions, from Clopper–Pearson bounds
      on a test's error rates measured on fresh samples.
    * **GDP fit** (A.3) needs only `sample`. Its number is a lower bound on μ, turned
      into ε only *if* the mechanism's trade-off curve is Gaussian.

    Pairs come from the neighbour generator (A.1): targets moved by ±d, targets at the
    bound, outlier rows far from the data, duplicated inputs, tiny datasets. The black-box
    auditor first *explores* (ranks pairs by a cheap score), then *confirms* the best
    pairs on fresh samples, with a Bonferroni correction over the pairs it confirms.

    Let us audit a correct mechanism: the analytic Gaussian mechanism on the sum of the
    targets (P.1), on the kit's embedded sine data.
    """),
    code("""
    from dpgp_audit.audit.runner import audit_mechanism
    from dpgp_audit.catalogue import get

    mech, data = get("P.1/gaussian-sum").make(epsilon=p["epsilon"], delta=p["delta"])
    report = audit_mechanism(mech, data, rng, n=p["n_samples"], alpha=p["alpha"],
                             name="P.1/gaussian-sum", progress=p["show_progress"])
    print(report.table())
    """),
    md(r"""
    Read the table line by line:

    * the **sensitivity** search found a query change equal to the bound, never above it;
    * the **white-box** auditor computed ε(δ) *exactly* for the worst pair: it equals
      the claim, because the analytic calibration is tight;
    * the **black-box** lower bound is well below the claim, and the line under it says
      why: at this n the bound cannot get close to ε when δ is as small as 1e-5
      (AUDITING.md §4: certifying 0.8·ε needs millions of samples per side).

    The plot below is the hypothesis-testing picture of the same audit. Any test of
    "was the output drawn from D or from D′?" has a type-I error (FPR) and a type-II
    error (FNR); the claim forbids the shaded region below the black curve. Orange
    points are the black-box auditor's tests with their confidence boxes; the dashed
    curve is the white-box auditor's exact trade-off curve for the worst pair.
    """),
    code("""
    fig = report.plot()
    """),
    md(r"""
    ## 2 · "No violation found" is not a proof

    A perfect distinguisher — an event that every output of M(D′) hits and no output of
    M(D) does — still only certifies a bounded ε from finitely many samples: the
    Clopper–Pearson bound cannot exclude a tiny false-positive rate. That **ε ceiling**
    grows only like log(n), so a deterministic, completely non-private release
    passes a black-box audit whose ceiling lies below its claim.
    """),
    code("""
    from dpgp_audit.audit.stats import epsilon_ceiling

    print(f" samples/side   largest certifiable epsilon (alpha = {p['alpha']:g})")
    for n in (10, 100, 1_000, 10_000, 100_000, 1_000_000):
        print(f"{n:>12,}   {epsilon_ceiling(n, p['alpha'], 0.0):8.2f}")
    """),
    md(r"""
    Now a real bug that a black-box audit at this n misses: the sum mechanism with its
    sensitivity understated by 25 % (true ε ≈ 1.28 instead of 1). The black-box auditor
    finds no evidence — and that says nothing about privacy. The sensitivity checker
    needs no samples at all and produces a witness pair.
    """),
    code("""
    entry = get("planted/sensitivity-x1.25")
    bug, bug_data = entry.make()
    bb_only = audit_mechanism(bug, bug_data, rng, auditors=("blackbox",), n=p["n_samples"],
                              alpha=p["alpha"], name=entry.id)
    print(bb_only.table())
    print()
    sens_only = audit_mechanism(bug, bug_data, rng, auditors=("sensitivity",), name=entry.id)
    print(sens_only.table())
    print(f"true epsilon of this bug: {entry.true_epsilon:.3f}")
    """),
    md(r"""
    ## 3 · Every planted bug, and the auditor that caught it

    The kit ships deliberately broken mechanisms (IDs `planted/…`, catalogue A.5), each
    with its true ε and a correct twin. For each bug we run only the **cheapest auditor
    able to see it**, at the sample size the test suite asserts, and the twin with the
    same auditor and n (it must not be flagged).

    Why are the other auditors blind? The sensitivity checker only inspects the
    noise-free query, so a wrong *noise* (std used as variance, a calibration used outside
    its proof, a fixed seed) is invisible to it. The white-box auditor trusts the
    mechanism's own `mean`/`cov`, so a sampler that ignores its generator slips through;
    only sampling the implementation catches that. And no black-box test at a realistic
    n can see a violation at ε = 20: the events involved have probability around e⁻²⁰.
    """),
    code("""
    from dpgp_audit.experiments.auditing_lab import audit_planted_suite
    from dpgp_audit.viz.audit_report import plot_planted_catch

    rows = audit_planted_suite(rng, progress=p["show_progress"])
    print(f"{'planted bug':<36} {'true eps':>8}  {'auditor':<11} {'n/side':>7}  "
          f"{'verdict':<12} twin verdict")
    for r in rows:
        print(f"{r['id']:<36} {r['true_epsilon']:>8.3g}  {r['auditor']:<11} {r['n']:>7,}  "
              f"{r['verdict']:<12} {r['twin_verdict']}")
    fig = plot_planted_catch(rows)
    fig.tight_layout()
    """),
    md(r"""
    The last row is a *negative control*: the exponential mechanism without its factor 2
    is still ε-DP when the utility is **monotone** (every utility moves in the same
    direction between neighbours), so the auditor must stay quiet. With a non-monotone
    utility (the row above it) the same missing factor doubles the privacy loss.

    ## 4 · Power against sample size

    How many samples does a black-box audit need to catch a bug? Take the sum mechanism
    with its sensitivity halved (true ε ≈ 2.15), hand the sensitivity checker's witness
    pair to the black-box and GDP-fit auditors, and repeat each audit
    `n_power_reps` times per sample size. The dashed lines are the sample-size
    planner's predictions (`dpgp_audit.audit.planner.power_at`) for the model-free
    bound and for the GDP fit.
    """),
    code("""
    from dpgp_audit.experiments.auditing_lab import detection_rate
    from dpgp_audit.audit.planner import power_at
    from dpgp_audit.audit.sensitivity import check_sensitivity, witness_pair
    from dpgp_audit.privacy.gdp import gdp_mu
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
    fig = plot_power(curves, predicted)
    """),
    md(r"""
    The GDP fit needs far fewer samples — but its ε is only valid if the mechanism's
    trade-off curve is Gaussian (here it is: the noise is Gaussian). The model-free
    bound makes no such assumption and pays for it in samples. With few repetitions per
    point the observed rates are noisy; the bars are 95 % Clopper–Pearson intervals.

    ## 5 · Auditing your own mechanism

    Any object with a `claim` and a vectorised `sample(data, n, rng)` can be audited.
    Here is the README's example: the mean of targets in [−2, 2] (one change moves a
    target by up to 4), released with noise calibrated for sensitivity 1/N instead of 4/N.
    """),
    code("""
    from dpgp_audit import ApproxDP, Dataset, outputs_only
    from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma


    class NoisyMean:                     # targets in [-2, 2]: one change moves y_i by up to 4
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0))

        def sample(self, data, n, rng):  # BUG: the sensitivity of the mean is 4/N, not 1/N
            sigma = analytic_gaussian_sigma(1.0, 1e-5, 1 / data.n)
            return data.y.mean() + sigma * rng.standard_normal((n, 1))


    my_data = Dataset(np.linspace(0, 1, 50), np.zeros(50))
    mine = audit_mechanism(NoisyMean(), my_data, rng, n=p["n_samples"])
    print(mine.table())
    """),
    md(r"""
    Only the black-box auditor could run: the table says which interfaces would unlock
    the others. Below, the corrected mechanism also states its noise-free query, norm
    and sensitivity bound, and its Gaussian mean and covariance — now all three
    auditors run, and none finds a violation. Read the last line of the table again:
    that is *not* a proof of privacy.
    """),
    code("""
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


    fixed = audit_mechanism(FixedNoisyMean(), my_data, rng, n=p["n_samples"])
    fixed
    """),
    md(r"""
    ## Exercises

    1. **Ceilings.** Audit `planted/fixed-seed` with `auditors=("blackbox",)` and
       `n=20`. Why is it not flagged, although the release is deterministic? Which
       sample size and which two arguments of `audit_mechanism` make it visible (see
       `CHEAPEST_AUDITOR` in `dpgp_audit.audit.planted`)?
    2. **A hard tier.** Build `planted/sensitivity-x1.25` and estimate, with
       `detection_rate` and the GDP fit, the n at which it is caught 80 % of the time.
       Compare with `plan_samples(1.0, 1e-5, target_fraction=1.0, method="gdp",
       true_mu=1.25 * gdp_mu(1.0, 1e-5))`.
    3. **Blind spots.** Why does the sensitivity checker pass `planted/std-as-variance`?
       Which line of its white-box report shows the bug?
    4. **Your own bug.** Change `FixedNoisyMean.sensitivity_bound` to `1 / 50`. Which
       auditor reports it first, and what witness pair does it give?
    5. **Monotone utilities.** Using `exp_realised_epsilon` from
       `dpgp_audit.audit.planted`, compute the realised ε of `planted/exp-no-half` and of
       its monotone twin on every pair from `neighbour_pairs(exp_default_data(),
       whole_rows(1.0), rng)`. Which is larger, and why?

    <details><summary>Hints</summary>

    1. With half the samples spent on fitting and α split over two pairs and two tests,
       the ε ceiling of 10 certification samples is below 1 (print
       `epsilon_ceiling(10, 0.05 / 4)`). `n=30`, `n_pairs=1`, `fit_fraction=0.3`.
    2. The planner's plan is a few ten thousand per side; the observed rate should
       cross 0.8 near it.
    3. The query and its bound are right; the noise is wrong. Look at `mu`.
    4. The sensitivity checker (a counterexample, no samples); its witness moves one
       target by 4.
    5. The vote utility: up to ≈ 1.78 on these pairs (2 over all datasets); the monotone
       one stays at or below 1.
    </details>
    """),
]

if __name__ == "__main__":
    print(f"wrote {write_notebook(OUT, CELLS)}")
