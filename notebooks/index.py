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
# # Differentially private Gaussian processes — start here
#
# This course teaches how Gaussian-process regression and classification can be
# released with **differential privacy** (DP), following five papers (Smith et al.
# 2018 and 2021, Honkela, Räisä et al., and the DP toolbox they share), and
# how to **audit** a privacy claim: test it against samples, exact formulas and
# adversarial neighbouring datasets.
#
# **How to use it.** Open the notebooks in the order below and run them top to
# bottom (*Run → Run All Cells*). Each one opens with learning objectives, runs in
# about a minute with its default parameters, and ends with exercises: some ask you to
# write a function, which a check cell right below tests on the spot; the others are
# questions. The solutions are in separate answer notebooks (`answers/`). Each paper
# notebook (01–05) is a lab of an hour and a half: its core, everything above the
# heading "Appendix", with the exercises; the appendix holds full reproductions and
# details for later. The times below are for that core, including the exercises. The
# symbols of all notebooks are collected in the
# [glossary and notation table](GLOSSARY.md).
#
# ## The course path
#
# | notebook | what you learn | time |
# |---|---|---|
# | [00 · DP basics](00_dp_basics.ipynb) | neighbouring datasets, Laplace / Gaussian / exponential mechanisms, the four Gaussian calibrations, privacy profiles, composition and the accountants; an ε/δ explorer; you write a calibration, a mechanism and an audit score | $90$ min |
# | [00b · A GP primer](00b_gp_primer.ipynb) | posterior mean and covariance, the RKHS norm, inducing points and the SVGP, the Laplace approximation — the GP objects the papers make private; you write the posterior mean and its sensitivity | $60$ min |
# | [01 · Smith et al. 2018](01_smith2018_cloaking.ipynb) | the standard DP-GP and why its bound is loose; cloaking (optimal noise for a fixed test set) on the !Kung heights; binning; private hyperparameter selection | $90$ min |
# | [02 · Smith et al. 2021](02_smith_sparse_classification.ipynb) | sparse (FITC) and non-stationary cloaking, private GP classification (Laplace, SoR), private model selection | $90$ min |
# | [03 · Honkela](03_honkela_dp_svgp.ipynb) | DP sparse variational GPs with private inputs *and* outputs, the noise-aware posterior and its calibration, hyperparameter recovery | $90$ min |
# | [04 · Räisä et al.](04_raisa_dpconvcnp.ipynb) | GDP functional mechanism, Kronecker grid noise, the DPSetConv and DPConvCNP against DP-SVGP (the neural parts need PyTorch, installed on Binder) | $90$ min |
# | [05 · The auditing lab](05_auditing_lab.ipynb) | what each auditor guarantees, why "no violation found" is not a proof, planted bugs, the rounding attack, power against sample size, auditing your own mechanism | $90$ min |
#
# Notebooks 00 and 05 form a short course on auditing on their own (two labs);
# notebooks 01–04 can be taken in any order after 00 (and 00b, if GPs are new to you).
# *(Instructors: to add a notebook, add a row to this table in `notebooks/index.py` and
# run `make sync`.)*
#
# ## Memory: shut down the kernels you are done with
#
# Every open notebook keeps its own Python process (its *kernel*) in memory until you
# shut it down, and Binder gives a session at most $2$ GB. The table gives each
# notebook's kernel memory when run at its default parameters: the peak while it
# runs, and what it keeps while it stays open.
#
# | notebook | peak while it runs at default parameters (MB) | kept while it stays open (MB) |
# |---|---|---|
# | index | 100<!--run: default parameters--> | 90<!--run: default parameters--> |
# | 00 · DP basics | 160<!--run: default parameters--> | 160<!--run: default parameters--> |
# | 00b · GP primer | 200<!--run: default parameters--> | 200<!--run: default parameters--> |
# | 01 · Smith et al. 2018 | 180<!--run: default parameters--> | 180<!--run: default parameters--> |
# | 02 · Smith et al. 2021 | 280<!--run: default parameters--> | 270<!--run: default parameters--> |
# | 03 · Honkela | 280<!--run: default parameters--> | 210<!--run: default parameters--> |
# | 04 · Räisä et al. (with PyTorch) | 410<!--run: default parameters--> | 410<!--run: default parameters--> |
# | 05 · auditing lab | 230<!--run: default parameters--> | 230<!--run: default parameters--> |
#
# With every notebook run at its default parameters and left open, the kernels alone keep
# about 1750<!--run: default parameters--> MB, and the Jupyter server needs some more: that is at Binder's limit,
# where the session's kernels start to die. (Measured on the course's development
# machine with `python -m dpgp_audit.devtools.soak --memory`; the answer notebooks, if
# you open them too, add their own kernels.)
#
# When you move on to the next notebook, shut the previous one's kernel down (*Kernel →
# Shut Down Kernel*, or the *Running Terminals and Kernels* tab in JupyterLab's left
# sidebar). Closing the tab alone does not free the memory.
#
# ## Check your setup
#
# The cell below says which optional parts of the course your environment can run.

# %% tags=["parameters"]
verbose: bool = True  # also print the version of every package the course uses

# %%
import importlib.metadata as md
import importlib.util
import platform

import dpgp_audit
from dpgp_audit.params import check_notebook_params

p = check_notebook_params(verbose=verbose)
PARTS = {
    "numpy": "every notebook",
    "matplotlib": "every figure",
    "dp_accounting": "R.5's DP-SGD accounting (notebook 04, make audit)",
    "ipywidgets": "the sliders of notebooks 00, 01, 03 and 05",
    "torch": "notebook 04's DPConvCNP sections (on Binder; locally `make install`)",
}
print(f"Python {platform.python_version()}, dpgp_audit from {dpgp_audit.__path__[0]}")
for module, used_for in PARTS.items():
    found = importlib.util.find_spec(module) is not None
    version = ""
    if found and p["verbose"]:
        try:
            version = " " + md.version(module.replace("_", "-"))
        except md.PackageNotFoundError:
            version = ""
    status = f"available{version}" if found else "MISSING"
    print(f"  {module:<14} {status:<22} needed for {used_for}")
