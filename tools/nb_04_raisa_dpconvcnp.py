"""Generate notebooks/04_raisa_dpconvcnp.ipynb (run: python tools/nb_04_raisa_dpconvcnp.py)."""

from __future__ import annotations

from pathlib import Path

from dpgp_audit.devtools.nbbuild import code, md, write_notebook

OUT = Path(__file__).resolve().parent.parent / "notebooks" / "04_raisa_dpconvcnp.ipynb"

CELLS = [
    md(r"""
    # 04 · Noise-aware DP regression by meta-learning: the DPConvCNP (Räisä et al.)

    Räisä et al. (NeurIPS 2024, "R") protect a whole *context set* — inputs **and**
    outputs — with the functional mechanism of Hall et al., analysed with Gaussian DP,
    and train a neural process to make calibrated predictions *from the noisy release*.
    This notebook walks through the pieces (catalogue R.1–R.5).

    **Learning objectives** — after working through it you can

    1. explain why Gaussian DP lets the functional mechanism use about a third less
       noise than Hall et al.'s classical bound (R Thm 4.1, Fig. 4);
    2. sample GP noise on a D-dimensional grid in milliseconds with Kronecker
       factors, and say why the naive way does not scale (R App. B);
    3. describe the DPSetConv release (clipping, density and signal channels, GP noise)
       and **audit** it: exact white-box privacy loss and the sensitivity checker;
    4. compare the DPConvCNP with a DP-SGD-trained sparse GP and the non-private oracle,
       on synthetic data and on the !Kung census (sim-to-real).

    **What you'll need:** the kit. Sections 5–7 use the optional PyTorch extra
    (`pip install 'dpgp_audit[neural]'`); without it they run the numpy baselines only.
    Default parameters run in about a minute on a laptop CPU.
    """),
    code("""
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
    """, "parameters"),
    code("""
    %matplotlib inline
    import time

    import numpy as np
    from IPython.display import display

    from dpgp_audit.neural import INSTALL_HINT, torch_available
    from dpgp_audit.params import check_notebook_params

    p = check_notebook_params(epsilon=epsilon, delta=delta, seed=seed, grid_side=grid_side,
                              n_tasks=n_tasks, context_sizes=context_sizes,
                              n_kung_splits=n_kung_splits, n_kung_context=n_kung_context,
                              dpsvgp_steps=dpsvgp_steps, show_progress=show_progress)
    if not all(isinstance(n, int) and n >= 2 for n in p["context_sizes"]):
        raise ValueError("context_sizes must be a list of integers >= 2")
    rng = np.random.default_rng(p["seed"])
    HAVE_TORCH = torch_available()
    print(p)
    print("PyTorch available:", HAVE_TORCH, "" if HAVE_TORCH else "-- " + INSTALL_HINT)
    """),
    md(r"""
    The cell above validates the parameters and creates the one random generator that
    every random step receives. With the same `seed` every number below is reproduced.

    ## 1 · The functional mechanism under Gaussian DP (R.1)

    The functional mechanism releases a function $f_D$ plus a scaled Gaussian-process
    path, $f_D + c\,g$ with $g \sim \mathcal{GP}(0, k)$. If $f_D$ lives in the RKHS of
    $k$ and one neighbour moves it by at most $\Delta$ in RKHS norm, then *any* finite
    set of evaluations is a Gaussian mechanism whose whitened sensitivity is at most
    $\Delta / c$. So the release is $\mu$-GDP with $\mu = \Delta / c$ (R Thm 4.1), and
    $\mu$ is solved from $(\varepsilon, \delta)$ exactly (R eq. 5). Hall et al.'s
    original multiplier $c = \Delta\sqrt{2\ln(2/\delta)}/\varepsilon$ is proven only
    for $\varepsilon \le 1$; an RDP analysis (Jiang et al.) works for all ε but is loose.
    """),
    code("""
    from dpgp_audit.privacy.functional_gdp import functional_noise_comparison
    from dpgp_audit.viz.dpconvcnp_plots import plot_functional_noise

    eps_grid = np.linspace(0.1, 4.0, 60)
    curves = functional_noise_comparison(eps_grid, delta=1e-3, sensitivity_sq=10.0)
    at_one = functional_noise_comparison([1.0], delta=1e-3, sensitivity_sq=10.0)
    print(f"at eps = 1: classical c = {at_one.classical[0]:.3f}, RDP c = {at_one.rdp[0]:.3f}, "
          f"GDP c = {at_one.gdp[0]:.3f}")
    print(f"GDP noise is {100 * at_one.reduction('classical')[0]:.1f} % below the classical "
          f"and {100 * at_one.reduction('rdp')[0]:.1f} % below the RDP multiplier")
    display(plot_functional_noise(curves))
    """),
    md(r"""
    About **34 %** less noise than the classical bound at ε = 1 — for free, because GDP
    is the exact privacy profile of a Gaussian mechanism. (R's introduction says "at
    least 25 % lower" in the settings of its Fig. 4; against the RDP curve the saving
    shrinks with ε and is about 21 % at ε = 4 — see the tests.)

    ## 2 · GP noise on a grid (R.3)

    The DPSetConv evaluates the noise path on a grid. For a product kernel (the RBF is
    one) the grid covariance is a Kronecker product $K_1 \otimes \dots \otimes K_D$, so a
    sample needs only the small per-axis Cholesky factors and $D$ batched matrix products
    (R Alg. 4) instead of the Cholesky factor of the full $\prod N_d \times \prod N_d$ matrix.
    """),
    code("""
    from dpgp_audit.gp.grid import Grid, KroneckerGridSampler, NaiveGridSampler
    from dpgp_audit.gp.kernels import EQ
    from dpgp_audit.viz.dpconvcnp_plots import plot_grid_noise

    grid1 = Grid.from_window([-2.0], [2.0], 32.0)
    draws1 = KroneckerGridSampler(grid1, EQ(0.2), jitter=1e-9).sample(3, rng)
    display(plot_grid_noise(grid1.axes(), draws1[:, :], title="three GP noise paths, λ = 0.2"))

    side = p["grid_side"]
    grid2 = Grid((-2.0, -2.0), (4.0 / (side - 1),) * 2, (side, side))
    t0 = time.perf_counter()
    draw2 = KroneckerGridSampler(grid2, EQ(0.2), jitter=1e-9).sample(1, rng)[0]
    t_kron = time.perf_counter() - t0
    display(plot_grid_noise(grid2.axes(), draw2, title=f"{side} x {side} grid: {t_kron:.3f} s"))

    small = Grid((-0.5, -0.5), (1 / 32, 1 / 32), (32, 32))
    t0 = time.perf_counter()
    KroneckerGridSampler(small, EQ(0.2), jitter=1e-9).sample(1, rng)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    NaiveGridSampler(small, EQ(0.2), jitter=1e-9).sample(1, rng)
    t_naive = time.perf_counter() - t0
    print(f"32 x 32 grid, factorise + one sample: Kronecker {t_fast * 1e3:.2f} ms, "
          f"naive full Cholesky {t_naive * 1e3:.1f} ms (about {t_naive / t_fast:.0f}x slower)")
    """),
    md(r"""
    The benchmark script `benchmarks/bench_grid.py` times this with BLAS pinned to one
    thread (a 256 × 256 sample takes about 10 ms).

    ## 3 · DPSetConv: the private encoder (R.2)

    R Alg. 3 clips every target to $[-C, C]$ and computes two functions from the context
    set: the **density** $r_d(x) = \sum_n k(x, x_n)$ and the **signal**
    $r_s(x) = \sum_n \tilde y_n k(x, x_n)$. Replacing one row moves them by at most
    $\Delta_d^2 = 2C_k$ and $\Delta_s^2 = 4C^2 C_k$ in RKHS norm ($C_k = k(x, x) = 1$).
    Each gets its own GP noise; a split $t$ of $\mu^2$ fixes the scales
    $\sigma_s^2 = 4C^2/(t\mu^2)$, $\sigma_d^2 = 2/((1-t)\mu^2)$ (R eq. 12), and GDP
    composition gives $\mu$ in total (R Thm 4.2).
    """),
    code("""
    from dpgp_audit.datasets.synthetic import sawtooth
    from dpgp_audit.methods.raisa.dpsetconv import DPSetConv
    from dpgp_audit.viz.dpconvcnp_plots import plot_dpsetconv_release

    context = sawtooth(150, rng, period=0.8, noise_std=0.1, x_range=(-1.0, 1.0))
    enc = DPSetConv.from_budget(Grid.from_window([-2.0], [2.0], 32.0), epsilon=p["epsilon"],
                                delta=p["delta"], lengthscale=0.2, clip_bound=1.0, t=0.5)
    print(enc.claim.describe())
    print(f"sigma_d = {enc.sigma_density:.3f}, sigma_s = {enc.sigma_signal:.3f}")
    released = enc.as_channels(enc.sample(context, 1, rng))[0]
    display(plot_dpsetconv_release(enc.grid.axes()[0], enc.channels(context), released,
                                   context.X[:, 0], context.y, clip_bound=enc.clip_bound))
    """),
    md(r"""
    ### Auditing the DPSetConv

    On the grid the release is exactly Gaussian: mean = the two channels, covariance
    $\mathrm{blockdiag}(\sigma_d^2 K, \sigma_s^2 K)$. The **white-box auditor** computes
    the exact privacy loss $\mu$ of each whole-row neighbour pair; the **sensitivity
    checker** searches for the largest change of each channel. A small grid keeps the
    dense covariance cheap.
    """),
    code("""
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
    """),
    md(r"""
    Both channel bounds are **attained** (two far-apart inputs for the density; one input
    whose target flips from $C$ to $-C$ for the signal), so R eq. (11) is tight channel by
    channel. The composed claim, however, is **not** tight: one substitution cannot
    produce both worst cases at once, and the exact supremum of the joint privacy loss is
    $\mu\sqrt{\max(1 - t/2,\, t)}$ — 0.866 μ at $t = 1/2$. The release is private with
    some budget to spare; the auditor finds no violation.

    ## 4 · DPConvCNP vs DP-SVGP vs the oracle (R.4, R.5)

    The DPConvCNP feeds the DPSetConv release (plus the two noise levels) to a small
    UNet and reads out a mean and a log standard deviation at any target input. It was
    meta-trained on simulated tasks **with the mechanism in the loop** (fresh noise every
    step), so it learns to undo clipping and noise. The baseline is a sparse variational
    GP trained by DP-SGD (per-example clipping, Gaussian noise, dp-accounting's RDP
    accountant); the oracle is the exact non-private GP posterior.
    """),
    code("""
    from dpgp_audit.gp.kernels import EQ
    from dpgp_audit.experiments.raisa import nll_vs_n
    from dpgp_audit.viz.dpconvcnp_plots import plot_nll_curves

    model_eq = model_matern = None
    if HAVE_TORCH:
        from dpgp_audit.neural.dpconvcnp import load_pretrained

        try:
            model_eq, meta_eq = load_pretrained("eq")
            print("EQ model trained by:", meta_eq["command"], f"({meta_eq['steps']} steps)")
        except FileNotFoundError as err:
            print(err)
        try:
            model_matern, meta_m = load_pretrained("matern")
            print("Matern model trained by:", meta_m["command"], f"({meta_m['steps']} steps)")
        except FileNotFoundError as err:
            print(err)
    else:
        print(INSTALL_HINT, "-- showing the oracle and the DP-SVGP only")

    t0 = time.perf_counter()
    eq_curves = nll_vs_n("eq", p["context_sizes"], p["n_tasks"], rng, model=model_eq,
                         epsilon=p["epsilon"], delta=p["delta"],
                         dpsvgp_kwargs={"kernel": EQ(0.5, 1.0), "steps": p["dpsvgp_steps"]})
    for name, c in eq_curves.items():
        pairs = zip(c.ns, c.mean, strict=True)
        print(f"{name:>10}: " + ", ".join(f"N={n}: {m:.3f}" for n, m in pairs))
    if p["show_progress"]:
        print(f"({time.perf_counter() - t0:.1f} s)")
    display(plot_nll_curves(eq_curves, title=f"EQ-GP tasks, eps = {p['epsilon']:g}"))
    """),
    md(r"""
    An example task: the three predictors on one EQ-GP context set with 95 % intervals.
    """),
    code("""
    from dpgp_audit.experiments.raisa import dpsvgp_predict
    from dpgp_audit.neural.tasks import oracle_predict, sample_tasks
    from dpgp_audit.viz.dpconvcnp_plots import plot_predictive

    task = sample_tasks("eq", 1, rng, n_context=100, n_target=200, epsilon=p["epsilon"],
                        delta=p["delta"])
    order = np.argsort(task.xt[0])
    xs = task.xt[0][order]
    m_o, s_o = oracle_predict(task, 0)
    preds = {"oracle (non-private)": (m_o[order], s_o[order])}
    m_s, s_s = dpsvgp_predict(task.xc[0], task.yc[0], xs, p["epsilon"], p["delta"], rng,
                              kernel=EQ(0.5, 1.0), steps=p["dpsvgp_steps"])
    preds["DP-SVGP"] = (m_s, s_s)
    if model_eq is not None:
        from dpgp_audit.neural.dpconvcnp import predict_numpy

        preds["DPConvCNP"] = predict_numpy(model_eq, task.xc[0], task.yc[0], xs,
                                           float(task.mu[0]), rng)
    display(plot_predictive(task.xc[0], task.yc[0], xs, preds, title="N = 100, EQ-GP task"))
    """),
    md(r"""
    ### Non-Gaussian data: sawtooth waves

    The same comparison on the truncated sawtooth process (R App. E.1). Its Bayes
    posterior is intractable, so the "oracle" line is the NLL of the observation noise
    alone — a lower bound no predictor can beat. The DP-SVGP gets an EQ kernel (the kit
    has no periodic kernel; R gave the baseline a periodic one).
    """),
    code("""
    model_saw = None
    if HAVE_TORCH:
        try:
            model_saw, _ = load_pretrained("sawtooth")
        except FileNotFoundError as err:
            print(err)
    saw_curves = nll_vs_n("sawtooth", p["context_sizes"], p["n_tasks"], rng, model=model_saw,
                          epsilon=p["epsilon"], delta=p["delta"],
                          dpsvgp_kwargs={"kernel": EQ(0.3, 1.0), "steps": p["dpsvgp_steps"]})
    saw_curves["noise lower bound"] = saw_curves.pop("oracle")
    for name, c in saw_curves.items():
        pairs = zip(c.ns, c.mean, strict=True)
        print(f"{name:>17}: " + ", ".join(f"N={n}: {m:.3f}" for n, m in pairs))
    display(plot_nll_curves(saw_curves, title=f"sawtooth tasks, eps = {p['epsilon']:g}"))
    """),
    md(r"""
    ## 5 · Sim-to-real: the !Kung census (R §5.2, Fig. 7)

    A DPConvCNP trained only on simulated Matérn-3/2 GP data is applied to real data:
    height and weight against age for the 544 people of the !Kung census, N = 300 random
    people as the private context set, ε = 1, δ = 1e-3. Ages are scaled to [−1, 1] and
    the targets standardised with statistics treated as public (R App. E.2).
    """),
    code("""
    from dpgp_audit.datasets.kung import DataUnavailableError
    from dpgp_audit.experiments.raisa import kung_sim_to_real, kung_tasks
    from dpgp_audit.privacy.gdp import gdp_mu

    for target in ("height", "weight"):
        try:
            splits = kung_tasks(target, p["n_kung_context"], p["n_kung_splits"], rng)
        except DataUnavailableError as err:
            print("!Kung data unavailable:", err)
            break
        kung = kung_sim_to_real(splits, p["epsilon"], p["delta"], rng, model=model_matern,
                                dpsvgp_kwargs={"steps": p["dpsvgp_steps"]})
        for name, v in kung.items():
            print(f"{target} | {name:>10}: mean target NLL {v.mean():.3f} "
                  f"(+- {2 * v.std(ddof=1) / np.sqrt(v.size):.3f}) over {v.size} splits")
        s = splits[0]
        xs = np.linspace(-1.0, 1.0, 200)
        preds = {"DP-SVGP": dpsvgp_predict(s.xc, s.yc, xs, p["epsilon"], p["delta"], rng,
                                           steps=p["dpsvgp_steps"])}
        if model_matern is not None:
            from dpgp_audit.neural.dpconvcnp import predict_numpy

            preds["DPConvCNP"] = predict_numpy(model_matern, s.xc, s.yc, xs,
                                               gdp_mu(p["epsilon"], p["delta"]), rng)
        display(plot_predictive(s.xc, s.yc, xs, preds, xt=s.xt, yt=s.yt,
                                title=f"!Kung {target} vs age (scaled), N = {s.xc.size}, "
                                      f"eps = {p['epsilon']:g}"))
    """),
    md(r"""
    ## 6 · Deployment time (R Fig. 5)

    At meta-test time the DPConvCNP needs one forward pass; the DP-SVGP must be trained
    by DP-SGD on every new dataset.
    """),
    code("""
    from dpgp_audit.experiments.raisa import deployment_times
    from dpgp_audit.viz.dpconvcnp_plots import plot_deployment_times

    times = deployment_times(300, rng, model=model_matern, epsilon=p["epsilon"],
                             delta=p["delta"], repeats=2,
                             dpsvgp_steps=(p["dpsvgp_steps"], 4 * p["dpsvgp_steps"]))
    for name, sec in times.items():
        print(f"{name:>30}: {sec * 1e3:.1f} ms")
    display(plot_deployment_times(times))
    """),
    md(r"""
    ## Exercises

    1. Re-run section 1 with `delta = 1e-6`. Does the GDP advantage over the classical
       bound grow or shrink? Why does the classical curve stop at ε = 1?
    2. In section 3, change `t` to 0.9. Which channel becomes noisier? Check that
       `mech.worst_case_mu()` matches the white-box audit, and find the `t` at which the
       composed bound is loosest.
    3. Plant a bug: build a `DPSetConv` and halve its signal noise covariance (see
       `tests/test_r_dpsetconv.py`). Does `audit_whitebox` catch it?
    4. Train your own DPConvCNP on the sawtooth generator
       (`python -m dpgp_audit.neural.train --generator sawtooth --minutes 5 --out my.pt`)
       and compare it with the noise lower bound in `oracle_nll`.
    5. The DP-SVGP keeps its kernel hyperparameters fixed. Try a shorter lengthscale in
       `dpsvgp_predict(..., kernel=EQ(0.3))` on the !Kung data: what happens to the NLL?
    """),
]


if __name__ == "__main__":
    print(write_notebook(OUT, CELLS))
