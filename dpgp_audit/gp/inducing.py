"""Inducing-input placement from public inputs only (S21 §3.2, §4.1; catalogue S21.2, S21.4).

S21 places inducing inputs by k-means clustering of the training inputs: it
needs only X (public under the outputs-only relation) and tends to put them
where the data are dense, away from outliers. Optimising them on the marginal
likelihood would read the private targets, so this module's functions take
**no targets**: there is no argument through which y could reach the placement.

k-means is scikit-learn's ``KMeans`` (k-means++ seeding, several restarts, empty
clusters handled), seeded from the caller's generator.
"""

from __future__ import annotations

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.gp.kernels import as_inputs

__all__ = ["kmeans_inducing"]


def kmeans_inducing(X: object, m: int, rng: np.random.Generator, *, n_init: int = 4
                    ) -> np.ndarray:
    """M inducing inputs: the k-means centroids of the public inputs ``X`` (S21 §3.2).

    Parameters
    ----------
    X
        Public training inputs (n,) or (n, D). Targets are deliberately not accepted.
    m
        Number of inducing inputs, 1 ≤ m ≤ number of distinct rows of X.
    rng
        Generator seeding the k-means++ initialisations.
    n_init
        Number of k-means restarts (the best inertia is kept).

    Returns
    -------
    numpy.ndarray
        Centroids of shape (m, D), sorted lexicographically (a deterministic order).
    """
    from sklearn.cluster import KMeans

    Xa = as_inputs("X", X)
    m = check_positive_int("m", m)
    rng = check_rng(rng)
    n_distinct = np.unique(Xa, axis=0).shape[0]
    if m > n_distinct:
        raise ValueError(f"m = {m} inducing inputs but X has only {n_distinct} distinct rows")
    seed = int(rng.integers(2**31 - 1))
    km = KMeans(n_clusters=m, n_init=check_positive_int("n_init", n_init), random_state=seed)
    Z = km.fit(Xa).cluster_centers_
    order = np.lexsort(Z.T[::-1])
    return np.ascontiguousarray(Z[order])
