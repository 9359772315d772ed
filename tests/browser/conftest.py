"""Browser tests run only when asked for (``make test-browser`` = ``pytest -m browser``).

A plain ``pytest tests`` (``make test``) must not start JupyterLab and a browser:
items marked ``browser`` are skipped unless the ``-m`` expression names ``browser``.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    if "browser" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="browser test: run it with `make test-browser`")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)
