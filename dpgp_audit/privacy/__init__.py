"""How much noise, and what it buys: claims, calibrations, conversions, primitive mechanisms.

Pure maths; nothing here knows about Gaussian-process models.

* :mod:`.claims` — privacy claims and neighbour relations (frozen data).
* :mod:`.calibrate` — Gaussian calibrations: analytic, GDP, classical, Hall (P.1).
* :mod:`.gdp`, :mod:`.conversions` — μ-GDP profile, zCDP and RDP conversions (P.3).
* :mod:`.mechanisms` — Gaussian, Laplace, exponential and multivariate noise (P.1, P.2, P.4).
* :mod:`.multivariate` — Mahalanobis sensitivity and factors of a chosen covariance M (P.4).
* :mod:`.functional` — GP sample-path noise and the functional mechanism's multiplier (P.5).
* :mod:`.composition` — basic / GDP / zCDP composition and budget splitting (P.6).
"""
