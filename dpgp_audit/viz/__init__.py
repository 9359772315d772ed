"""dpgp_audit.viz: plots (pure functions returning figures), widgets, :func:`show` and
:func:`describe`.
"""

from dpgp_audit.viz.display import describe, show

__all__ = ["describe", "show"]
