"""Smith et al. 2018 and its supplement (catalogue S18.1–S18.5).

``standard`` (S18.1), ``cloaking`` (S18.2), ``binning`` (S18.3),
``hyperparameter_selection`` (S18.4) and ``planted`` (the supplement's bugs, A.5 style).
"""
