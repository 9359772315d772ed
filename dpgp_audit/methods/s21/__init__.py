"""Smith et al. 2021 (catalogue S21.1–S21.5).

``mechanisms`` (S21.1 Gibbs cloaking, S21.2 sparse cloaking, S21.3 Laplace and S21.4 SoR
classification), ``cv_utility`` (the Alg. 1 SSE utility, S21.5) and ``private_selection``
(the Alg. 1 exponential-mechanism selection, S21.5).
"""
