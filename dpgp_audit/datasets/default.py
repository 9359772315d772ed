"""The embedded default dataset: needs no network (``make audit``, quick notebooks, tests)."""

from __future__ import annotations

import numpy as np

from dpgp_audit.dataset import Dataset

__all__ = ["default_dataset"]


def default_dataset(n: int = 20) -> Dataset:
    """A small deterministic 1-D regression set: x on a grid in [0, 10], y = sin(x) in [-1, 1].

    Deterministic (no randomness) so that audits of the default configuration
    are reproducible; targets lie inside the default bound ``|y| <= 1``.
    """
    x = np.linspace(0.0, 10.0, n)
    return Dataset(x[:, None], np.sin(x), name="default-sine")
