"""The package's layers import one way only, and module-level imports form no cycle.

Layers, from the bottom (ARCHITECTURE.md; issue 13 §1):

* **base**: ``contract``, ``dataset``, ``norms``, ``_validation`` — import only base;
* ``gp/``: gp and base;  ``privacy/``: privacy and base;
* ``datasets/``: data loaders and synthetic generators — datasets, gp and base;
* ``methods/``: methods, privacy, gp, datasets and base;
* ``audit/``: audit, privacy and base (the auditors see mechanisms only through the
  contract), plus the documented lazy viz imports of :data:`ALLOWED_EXCEPTIONS`;
* ``bugs/``: the zoo of broken mechanisms (A.5) — bugs, methods, privacy, gp, datasets
  and base; never audit (the auditors must not know which bugs exist, and the zoo
  must not lean on them), and only edges import it;
* **edges**: ``catalogue``, ``cli``, ``__main__``, ``experiments/``, ``exercises/`` (the
  course's in-notebook checks), ``viz/``, ``neural/``, ``adapters/`` (third-party and
  user code, A.10),
  ``devtools/``, ``params``, ``testing`` (assertions for users' suites) and the package
  ``__init__`` — may import anything, and only
  edges may import an edge.

Every ``import`` in every module counts: at module level and inside functions.
Imports under ``if TYPE_CHECKING:`` are annotations only (no run-time edge) and are
skipped. Run this file as a script, ``python tests/test_layers.py [PACKAGE_DIR]``, to
print the violations and cycles of any checkout (e.g. the state before a refactor).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = "dpgp_audit"
BASE = frozenset({"contract", "dataset", "norms", "_validation"})
LAYERS = frozenset({"gp", "privacy", "datasets", "methods", "audit", "bugs"})
EDGES = frozenset({"catalogue", "cli", "__main__", "experiments", "exercises", "viz", "neural",
                   "devtools", "adapters",
                   "params", "testing", "__init__"})
ALLOWED: dict[str, frozenset[str]] = {
    "base": frozenset({"base"}),
    "gp": frozenset({"gp", "base"}),
    "privacy": frozenset({"privacy", "base"}),
    "datasets": frozenset({"datasets", "gp", "base"}),
    "methods": frozenset({"methods", "privacy", "gp", "datasets", "base"}),
    "audit": frozenset({"audit", "privacy", "base"}),
    "bugs": frozenset({"bugs", "methods", "privacy", "gp", "datasets", "base"}),
}
#: (importing module, imported module): allowed although it crosses a layer, each with
#: its reason. Only function-level (lazy) imports may be listed.
ALLOWED_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("dpgp_audit.audit.result", "dpgp_audit.viz.tradeoff"):
        "AuditResult.plot() draws with viz, imported lazily inside the method",
    ("dpgp_audit.audit.result", "dpgp_audit.viz.audit_report"):
        "AuditReport.plot() draws with viz, imported lazily inside the method",
}


def _module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules(root: Path) -> dict[str, Path]:
    return {_module_name(root, p): p for p in sorted(root.rglob("*.py"))}


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "edge"  # the package __init__
    head = parts[1]
    if head in BASE:
        return "base"
    if head in LAYERS:
        return head
    if head in EDGES or head == "registry":  # registry: the catalogue's old name (old checkouts)
        return "edge"
    raise AssertionError(f"{module}: no layer declared for {head!r}; add it to test_layers.py")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, known: set[str]) -> list[tuple[str, bool]]:
    """``(imported module, at module level)`` for every package import in ``path``.

    ``from pkg import name`` counts as an import of ``pkg.name`` when that is a module.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    out: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child, top)
            return
        if isinstance(node, ast.Import):
            out.extend((a.name, top) for a in node.names if a.name.split(".")[0] == PACKAGE)
            return
        if isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node)
            if target.split(".")[0] != PACKAGE:
                return
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub if sub in known else target, top))
            return
        inner = top and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    for stmt in tree.body:
        visit(stmt, True)
    return out


def import_graph(root: Path) -> dict[str, list[tuple[str, bool]]]:
    """Module → its package imports (duplicates kept once)."""
    mods = _modules(root)
    known = set(mods)
    return {m: sorted(set(imports_of(m, p, known))) for m, p in mods.items()}


def violations(graph: dict[str, list[tuple[str, bool]]]) -> list[str]:
    """Every import that breaks the layer rules, as readable lines."""
    out = []
    for mod, deps in sorted(graph.items()):
        src = _layer(mod)
        for dep, top in deps:
            if dep == PACKAGE and src != "edge":
                out.append(f"{mod} -> {dep} (the package __init__ is an edge)")
                continue
            dst = _layer(dep)
            if src == "edge":
                continue
            if dst == "edge" or dst not in ALLOWED[src]:
                if (mod, dep) in ALLOWED_EXCEPTIONS and not top:
                    continue
                where = "module level" if top else "in a function"
                out.append(f"{mod} ({src}) -> {dep} ({dst}), {where}")
    return out


def cycles(graph: dict[str, list[tuple[str, bool]]], *,
           lazy: bool = False) -> list[list[str]]:
    """Strongly connected components (size > 1, or a self-import) of module-level imports.

    With ``lazy=True`` function-level imports count too (reported, not enforced).
    """
    edges = {m: sorted({d for d, top in deps if (top or lazy) and d in graph})
             for m, deps in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[list[str]] = []
    counter = [0]

    def strongconnect(v: str) -> None:  # Tarjan (1972)
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges[v]:
                comps.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(edges) + 100))
    try:
        for v in sorted(edges):
            if v not in index:
                strongconnect(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(comps)


def _package_root() -> Path:
    return Path(__file__).resolve().parents[1] / PACKAGE


# ------------------------------------------------------------------------------- tests
def test_checker_sees_a_known_violation_and_cycle():
    graph = {
        "dpgp_audit.gp.a": [("dpgp_audit.methods.b", True)],
        "dpgp_audit.methods.b": [("dpgp_audit.gp.a", True)],
        "dpgp_audit.audit.c": [("dpgp_audit.viz.d", False), ("dpgp_audit.privacy.e", True)],
        "dpgp_audit.viz.d": [("dpgp_audit.catalogue", True)],
        "dpgp_audit.privacy.e": [],
        "dpgp_audit.catalogue": [("dpgp_audit.bugs.f", True)],
        "dpgp_audit.bugs.f": [("dpgp_audit.methods.b", True)],
        "dpgp_audit.audit.g": [("dpgp_audit.bugs.f", True)],
        "dpgp_audit.bugs.h": [("dpgp_audit.audit.g", True)],
    }
    found = violations(graph)
    assert any(v.startswith("dpgp_audit.gp.a (gp) -> dpgp_audit.methods.b") for v in found)
    assert any(v.startswith("dpgp_audit.audit.c (audit) -> dpgp_audit.viz.d") for v in found)
    assert any(v.startswith("dpgp_audit.audit.g (audit) -> dpgp_audit.bugs.f") for v in found)
    assert any(v.startswith("dpgp_audit.bugs.h (bugs) -> dpgp_audit.audit.g") for v in found)
    # methods -> gp, audit -> privacy, edge -> bugs, bugs -> methods and edge -> edge are allowed
    assert len(found) == 4
    assert cycles(graph) == [["dpgp_audit.gp.a", "dpgp_audit.methods.b"]]


def test_function_level_imports_are_seen(tmp_path):
    pkg = tmp_path / PACKAGE
    (pkg / "gp").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "gp" / "__init__.py").write_text("")
    (pkg / "gp" / "k.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from dpgp_audit.methods import x\n"
        "def f():\n    from dpgp_audit.catalogue import get\n    return get\n")
    graph = import_graph(pkg)
    assert graph["dpgp_audit.gp.k"] == [("dpgp_audit.catalogue", False)]
    assert violations(graph) == [
        "dpgp_audit.gp.k (gp) -> dpgp_audit.catalogue (edge), in a function"]


def test_layers_import_one_way():
    found = violations(import_graph(_package_root()))
    assert not found, "layer violations:\n" + "\n".join(found)


def test_no_import_cycle_at_module_level():
    found = cycles(import_graph(_package_root()))
    assert not found, "module-level import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_allowed_exceptions_are_current():
    graph = import_graph(_package_root())
    for (mod, dep), why in ALLOWED_EXCEPTIONS.items():
        assert (dep, False) in graph.get(mod, []), f"stale exception {mod} -> {dep} ({why})"


if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else _package_root()
    g = import_graph(root)
    v = violations(g)
    c = cycles(g)
    print("\n".join(v))
    for comp in c:
        print("cycle:", " <-> ".join(comp))
    print(f"{len(v)} layer violations, {len(c)} module-level import cycles "
          f"({sum(len(x) for x in c)} modules in them)")
    c_all = cycles(g, lazy=True)
    for comp in c_all:
        print("cycle counting function-level imports:", " <-> ".join(comp))
    print(f"{len(c_all)} cycles when function-level imports count too")
