"""Räisä et al. (catalogue R.2, R.5; R.4 is in the optional :mod:`dpgp_audit.neural`).

``dpsetconv`` (R.2 DPSetConv) and ``dpsgd_svgp`` (R.5, the DP-SGD SVGP baseline
``DPSGDSVGP`` — not Honkela's DP-SVGP).
"""
