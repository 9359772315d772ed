"""Reading a student's answer without trusting its type (shared by the notebook checks)."""

from __future__ import annotations

import math

import numpy as np


def as_number(value: object) -> float | None:
    """``value`` as one finite float, or ``None`` (not a number, several numbers, NaN, inf)."""
    try:
        out = float(np.asarray(value, dtype=float).reshape(()))
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None
