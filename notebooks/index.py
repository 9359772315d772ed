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
# about a minute with its default parameters, and ends with graded exercises and hints;
# the solutions are in separate answer notebooks (`answers/`). Times are for reading,
# running and trying the exercises; each notebook fits a 90-minute lab (skip the sections
# headed "Optional:"). The symbols of all notebooks are collected in the
# [glossary and notation table](GLOSSARY.md).
#
# ## The course path
#
# | step | notebook | what you learn | time |
# |---|---|---|---|
# | 1 | [00 · DP basics](00_dp_basics.ipynb) | neighbouring datasets, Laplace / Gaussian / exponential mechanisms, the four Gaussian calibrations, privacy profiles; an ε/δ explorer | 45 min |
# | 1b | [00b · A GP primer](00b_gp_primer.ipynb) | posterior mean and covariance, the RKHS norm, inducing points and the SVGP, the Laplace approximation — the GP objects the papers make private | 45 min |
# | 2 | [01 · Smith et al. 2018](01_smith2018_cloaking.ipynb) | the standard DP-GP and why its bound is loose; cloaking (optimal noise for a fixed test set) on the !Kung heights; binning; private hyperparameter selection | 60 min |
# | 3 | [02 · Smith et al. 2021](02_smith_sparse_classification.ipynb) | sparse (FITC) and non-stationary cloaking, private GP classification (Laplace, SoR), selection over 80 configurations | 60 min |
# | 4 | [03 · Honkela](03_honkela_dp_svgp.ipynb) | DP sparse variational GPs with private inputs *and* outputs, the noise-aware posterior and its calibration, hyperparameter recovery | 60 min |
# | 5 | [04 · Räisä et al.](04_raisa_dpconvcnp.ipynb) | GDP functional mechanism, Kronecker grid noise, the DPSetConv and DPConvCNP against DP-SVGP (neural parts need PyTorch; without it they are skipped with a note) | 45 min |
# | 6 | [05 · The auditing lab](05_auditing_lab.ipynb) | what each auditor guarantees, why "no violation found" is not a proof, planted bugs, the rounding attack, power against sample size, auditing your own mechanism | 45 min |
#
# Notebooks 00 and 05 form a short course on auditing on their own (1.5 h); 01–04
# can be taken in any order after 00. *(Instructors: to add a notebook, add a row
# to this table in `notebooks/index.py` and run `make sync`.)*
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
    "torch": "notebook 04's DPConvCNP sections (optional: skipped with a note without it)",
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
