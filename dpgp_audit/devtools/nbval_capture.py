"""A pytest plugin that keeps the notebook nbval executed, with its outputs.

nbval executes every cell and compares outputs, but writes nothing back. The
notebook harness loads this plugin (``-p dpgp_audit.devtools.nbval_capture``) and
sets ``DPGP_NBVAL_CAPTURE`` to a file path; at the end of the session the executed
notebook (the collected notebook with each code cell's outputs replaced by the ones
nbval received) is written there, so checks on executed prose and outputs
(:mod:`dpgp_audit.devtools.quoted_numbers`) run on the very execution of the
notebook test, without a second run.
"""

from __future__ import annotations

import os

ENV = "DPGP_NBVAL_CAPTURE"

_executed: dict[int, tuple[object, list]] = {}
_notebook: list = []


def pytest_runtest_makereport(item, call):
    """Record the outputs of each executed nbval cell."""
    if call.when != "call" or not hasattr(item, "test_outputs"):
        return
    cell = getattr(item, "cell", None)
    if cell is None:
        return
    _executed[id(cell)] = (cell, list(item.test_outputs or []))
    parent_nb = getattr(item.parent, "nb", None)
    if parent_nb is not None and not _notebook:
        _notebook.append(parent_nb)


def pytest_sessionfinish(session, exitstatus):
    """Write the executed notebook where ``DPGP_NBVAL_CAPTURE`` points."""
    target = os.environ.get(ENV)
    if not target or not _notebook:
        return
    import copy
    import json

    nb = copy.deepcopy(_notebook[0])
    for original, cell in zip(_notebook[0].cells, nb.cells, strict=True):
        if cell.cell_type != "code":
            continue
        recorded = _executed.get(id(original))
        cell.outputs = [dict(o) for o in recorded[1]] if recorded else []
    with open(target, "w", encoding="utf-8") as fh:  # plain JSON: outputs as nbval saw them
        json.dump(nb, fh, default=str)
