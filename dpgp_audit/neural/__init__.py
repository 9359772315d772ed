"""Optional PyTorch models (catalogue R.4): the DPConvCNP.

Nothing in the core package imports this subpackage; it needs the ``neural``
extra (``pip install 'dpgp_audit[neural]'``). :func:`torch_available` lets
notebooks check for PyTorch without importing it.
"""

from __future__ import annotations

import importlib.util

__all__ = ["INSTALL_HINT", "torch_available"]

INSTALL_HINT = "PyTorch is not installed: pip install 'dpgp_audit[neural]' (CPU wheels suffice)"


def torch_available() -> bool:
    """True when PyTorch can be imported (without importing it)."""
    return importlib.util.find_spec("torch") is not None
