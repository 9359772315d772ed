"""binder/ pins every runtime dependency exactly, consistently with pyproject.toml."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for raw in (BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        specs = list(req.specifier)
        assert len(specs) == 1 and specs[0].operator == "==", f"not an exact pin: {raw!r}"
        assert not req.url and not line.startswith(("-e", ".")), f"local reference: {raw!r}"
        name = canonicalize_name(req.name)
        assert name not in pins, f"{req.name} pinned twice"
        pins[name] = specs[0].version
    return pins


def _runtime_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = project["dependencies"] + project["optional-dependencies"]["notebooks"]
    return [Requirement(r) for r in reqs]


@pytest.mark.parametrize("req", _runtime_requirements(), ids=str)
def test_binder_pins_runtime_dependency_exactly(req):
    pins = _pins()
    name = canonicalize_name(req.name)
    assert name in pins, f"binder/requirements.txt lacks an exact pin for {req.name}"
    assert req.specifier.contains(pins[name], prereleases=True), (
        f"binder pin {req.name}=={pins[name]} violates pyproject's {req}")


def test_binder_python_matches_requires_python():
    runtime = (BINDER / "runtime.txt").read_text(encoding="utf-8").strip()
    m = re.fullmatch(r"python-(\d+)\.(\d+)", runtime)
    assert m, f"runtime.txt must read python-X.Y, got {runtime!r}"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    from packaging.specifiers import SpecifierSet

    assert SpecifierSet(project["requires-python"]).contains(f"{m[1]}.{m[2]}.0")


def test_binder_scripts_are_executable_and_strict():
    post = (BINDER / "postBuild").read_text(encoding="utf-8")
    assert "set -euo pipefail" in post and "pip install --no-deps -e ." in post
    assert os.access(BINDER / "postBuild", os.X_OK), "binder/postBuild is not executable"
    # a start script that only exported an unused variable was removed (issue 11)
    assert not (BINDER / "start").exists()
