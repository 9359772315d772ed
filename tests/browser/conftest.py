"""Browser tests run only when asked for (``make test-browser`` = ``pytest -m browser``).

A plain ``pytest tests`` (``make test``) must not start JupyterLab and a browser:
items marked ``browser`` are skipped unless the ``-m`` expression names ``browser``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def pytest_collection_modifyitems(config, items):
    if "browser" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="browser test: run it with `make test-browser`")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


NO_CHROMIUM = ("no Chromium found: install one with `python -m playwright install chromium` "
               "or your package manager (`apt-get install chromium`), or point DPGP_CHROMIUM "
               "at its executable")


def system_chromium() -> str | None:
    env = os.environ.get("DPGP_CHROMIUM")
    if env:
        return env if Path(env).is_file() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, playwright):
    """pytest-playwright's launch arguments, pointed at a Chromium that exists."""
    system = system_chromium()
    if system is not None:
        return {**browser_type_launch_args, "executable_path": system}
    if Path(playwright.chromium.executable_path).is_file():
        return browser_type_launch_args
    pytest.skip(NO_CHROMIUM)
