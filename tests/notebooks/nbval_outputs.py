"""pytest plugin for the nbval subprocess of ``tests/notebooks/harness.py``.

nbval executes a notebook cell by cell but writes no executed copy. This plugin
records, for every executed cell, the type and MIME keys of each output, and
writes them as JSON to the path in ``DPGP_NBVAL_OUTPUTS`` when the session ends,
so that the notebook tests can check the executed notebook (e.g. that its figures
were really displayed as ``image/png``) without running it a second time.
Loaded with ``-p tests.notebooks.nbval_outputs``; it does nothing when the variable is unset.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ENV = "DPGP_NBVAL_OUTPUTS"
_cells: list[dict] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield
    outs = getattr(item, "test_outputs", None)
    if outs is None:  # not an nbval cell, or skipped before execution
        return
    _cells.append({
        "cell": getattr(item, "cell_num", None),
        "outputs": [{"output_type": o.get("output_type"),
                     "mime": sorted(o.get("data", {}))} for o in outs],
    })


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get(ENV)
    if path:
        Path(path).write_text(json.dumps(_cells, indent=1), encoding="utf-8")
