"""dpgp_audit: differentially private Gaussian processes, with empirical privacy auditors.

Layers (one direction): ``privacy`` (calibration, claims, primitive noise) and
``gp`` (models) are pure maths; ``methods`` composes them into the papers'
mechanisms; ``audit`` checks any mechanism through the protocols of
:mod:`dpgp_audit.contract`. The edges import the layers and are imported by none:
:mod:`dpgp_audit.catalogue` (catalogue ID -> mechanism), ``cli``, ``experiments``
(notebook drivers), ``viz`` (drawing) and ``neural`` (optional PyTorch).
``tests/test_layers.py`` checks the direction.
"""

from dpgp_audit.contract import GaussianRelease, Mechanism, SensitivityQuery
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import (
    ZCDP,
    ApproxDP,
    GaussianDP,
    Neighbour,
    NeighbourRelation,
    PureDP,
    outputs_only,
    whole_rows,
)
from dpgp_audit.privacy.domain import PublicDomain

__version__ = "0.1.0"

__all__ = [
    "ZCDP",
    "ApproxDP",
    "Dataset",
    "GaussianDP",
    "GaussianRelease",
    "Mechanism",
    "Neighbour",
    "NeighbourRelation",
    "PublicDomain",
    "PureDP",
    "SensitivityQuery",
    "outputs_only",
    "whole_rows",
]
