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
    for script in ("postBuild", "install-torch"):
        assert os.access(BINDER / script, os.X_OK), f"binder/{script} is not executable"
    assert "set -euo pipefail" in (BINDER / "install-torch").read_text(encoding="utf-8")
    # a start script that only exported an unused variable was removed (issue 11)
    assert not (BINDER / "start").exists()


def _torch_default() -> str:
    script = (BINDER / "install-torch").read_text(encoding="utf-8")
    m = re.search(r"^TORCH_VERSION=\$\{TORCH_VERSION:-([0-9.]+)\}$", script, re.MULTILINE)
    assert m, "binder/install-torch must set TORCH_VERSION=${TORCH_VERSION:-X.Y.Z}"
    return m[1]


def test_binder_installs_the_cpu_torch_the_makefile_installs():
    """Issue 22 §4: notebook 04's DPConvCNP comparison runs on Binder (PyTorch, CPU-only)."""
    post = (BINDER / "postBuild").read_text(encoding="utf-8")
    assert "bash binder/install-torch" in post
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    pin = re.search(r"^TORCH_VERSION \?= ([0-9.]+)$", makefile, re.MULTILINE)
    assert pin and pin[1] == _torch_default(), "Makefile and binder/install-torch pin torch apart"
    assert "bash binder/install-torch" in makefile  # the neural step uses the same script
    script = (BINDER / "install-torch").read_text(encoding="utf-8")
    assert "download.pytorch.org/whl/cpu" in script and "--index-url" in script
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (torch_req,) = [Requirement(r) for r in project["optional-dependencies"]["neural"]
                    if Requirement(r).name == "torch"]
    assert torch_req.specifier.contains(_torch_default())
    # torch is not in requirements.txt, where pip would take PyPI's CUDA build
    assert "torch" not in _pins()


def test_binder_check_runs_notebook_04_with_torch():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile[makefile.index("binder-check: $(BINDER_STAMP)"):]
    recipe = recipe[:recipe.index("\n\n")]
    assert "PyTorch available: True" in recipe and "04_raisa_dpconvcnp" in recipe
