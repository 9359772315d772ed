"""Toolbox mechanisms (catalogue P.1, P.2, P.4, P.5).

``primitives``: Gaussian and Laplace sums, the exponential threshold mechanism, the
multivariate Gaussian mechanism and the functional mechanism.
"""
