"""The papers' mechanisms, one subpackage per source.

``toolbox`` (P.*), ``s18`` (Smith et al. 2018 and supplement), ``s21`` (Smith et al.
2021), ``honkela`` (H.*) and ``raisa`` (R.*). Mechanisms here build on ``privacy/`` and
``gp/`` only; their catalogue entries live in :mod:`dpgp_audit.catalogue`.
"""
