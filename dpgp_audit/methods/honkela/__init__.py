"""Honkela's DP sparse variational GP (catalogue H.1, H.2, H.4, H.5).

``dpsvgp`` (H.1 statistics), ``bounds`` (the sensitivity bounds), ``posterior`` (H.2 the
noise-aware posterior), ``hyperparameters`` (H.4 random-stopping search) and
``heteroscedastic`` (H.5 heteroscedastic and Dirichlet classification). H.3 CoinPress is
pure maths and lives in :mod:`dpgp_audit.privacy.coinpress`.
"""
