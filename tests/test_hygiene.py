"""Code hygiene enforced in CI: explicit generators only, no stubs in the package.

The guide's randomness rule: every random function takes an
``np.random.Generator``; no legacy ``np.random.*`` calls, no module-level or
default fixed seeds. This walks the package's syntax trees.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dpgp_audit"
SOURCES = sorted(PACKAGE.rglob("*.py"))
ALLOWED_NP_RANDOM = {"default_rng", "Generator", "SeedSequence", "PCG64", "Philox", "BitGenerator"}


def _attr_chain(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def test_sources_found():
    assert len(SOURCES) > 10


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_legacy_or_seeded_randomness_and_no_stubs(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = _attr_chain(node)
            for prefix in ("np.random.", "numpy.random."):
                if chain.startswith(prefix):
                    name = chain[len(prefix):].split(".")[0]
                    if name not in ALLOWED_NP_RANDOM:
                        problems.append(f"line {node.lineno}: legacy {chain}")
        if isinstance(node, ast.Call) and _attr_chain(node.func).endswith("default_rng"):
            if node.args and isinstance(node.args[0], ast.Constant):
                problems.append(f"line {node.lineno}: default_rng with a fixed seed")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg, default in zip(reversed(node.args.args), reversed(node.args.defaults),
                                    strict=False):
                if arg.arg in {"seed", "rng"} and isinstance(default, ast.Constant) \
                        and default.value is not None:
                    problems.append(f"line {node.lineno}: {node.name}({arg.arg}=...) default seed")
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if _attr_chain(exc) == "NotImplementedError":
                problems.append(f"line {node.lineno}: raise NotImplementedError (stub)")
    assert not problems, "\n".join(problems)
