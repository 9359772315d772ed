"""dpgp_audit.viz: plots (pure functions returning figures), widgets and :func:`show`."""

from dpgp_audit.viz.display import show

__all__ = ["show"]
