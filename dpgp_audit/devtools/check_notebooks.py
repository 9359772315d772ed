"""Check that committed notebooks are clean teaching sources (``make lint``).

Usage::

    python -m dpgp_audit.devtools.check_notebooks notebooks/*.ipynb

A notebook passes when it is valid nbformat JSON, has no outputs and no
execution counts (outputs live only in ``tests/notebooks/refs``), has a code cell
tagged ``parameters`` holding only plain literal assignments (papermill does not
re-derive anything else, see NOTEBOOKS.md §2.1), and its kernelspec is
``python3``. With ``--paired``, each notebook must also have its jupytext
percent-format twin ``NN_name.py`` beside it (the text instructors edit, see
``notebooks/jupytext.toml``) holding the same cells — same type, source and tags —
so that a forgotten ``make sync`` fails lint. One line ``path: problem`` is
printed per problem; the exit status is 1 if any was found, else 0.
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["check_notebook", "check_pair", "main"]

KERNEL = "python3"


def _literal_assignments_problem(source: str) -> str | None:
    try:
        body = ast.parse(source).body
    except SyntaxError as err:
        return f"parameters cell is not valid Python ({err.msg}, line {err.lineno})"
    for node in body:
        if isinstance(node, ast.Assign):
            value = node.value
            ok_target = all(isinstance(t, ast.Name) for t in node.targets)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            value = node.value
            ok_target = isinstance(node.target, ast.Name)
        else:
            return f"parameters cell line {node.lineno}: only 'name = literal' assignments allowed"
        try:
            ast.literal_eval(value)
        except ValueError:
            return (f"parameters cell line {node.lineno}: value is not a plain literal "
                    "(derive values in the next cell)")
        if not ok_target:
            return f"parameters cell line {node.lineno}: assign to plain names only"
    return None


def check_notebook(path: str | Path) -> list[str]:
    """Return the problems of one notebook file (empty list when clean)."""
    path = Path(path)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ["file not found (no notebooks matched?)"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return [f"cannot read notebook JSON: {err}"]
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return ["not an nbformat 4 notebook (no 'cells' list)"]
    problems: list[str] = []
    kernel = nb.get("metadata", {}).get("kernelspec", {}).get("name")
    if kernel != KERNEL:
        problems.append(f"kernelspec name is {kernel!r}, expected {KERNEL!r}")
    n_params = 0
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        where = f"cell {i}"
        if cell.get("outputs"):
            problems.append(f"{where} has outputs (commit notebooks without outputs)")
        if cell.get("execution_count") is not None:
            problems.append(f"{where} has an execution count (clear it before committing)")
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            n_params += 1
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            problem = _literal_assignments_problem(source)
            if problem:
                problems.append(f"{where}: {problem}")
    if n_params == 0:
        problems.append("no code cell tagged 'parameters'")
    elif n_params > 1:
        problems.append(f"{n_params} cells tagged 'parameters' (papermill uses only the first)")
    return problems


def _cell_key(cell: dict) -> tuple[str, str, tuple[str, ...]]:
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    return cell.get("cell_type", ""), source, tuple(cell.get("metadata", {}).get("tags", []))


def check_pair(path: str | Path) -> list[str]:
    """Return the problems of the jupytext pair ``NN_name.ipynb`` / ``NN_name.py``.

    The ``.py`` twin (percent format) must exist and read, through jupytext, as the
    same sequence of cells as the stored notebook: same cell type, same source and
    same tags. Outputs, cell ids and other metadata are not compared. The first
    differing cell is named so that the fix (``make sync``) is obvious.
    """
    import jupytext  # the notebooks/test/dev extras; only lint and tests need it

    path = Path(path)
    twin = path.with_suffix(".py")
    if not twin.is_file():
        return [f"no jupytext twin {twin.name} (create it: jupytext --set-formats "
                f"ipynb,py:percent {path})"]
    try:
        stored = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        text = jupytext.read(twin).cells
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return [f"cannot compare with {twin.name}: {err}"]
    a = [_cell_key(c) for c in stored]
    b = [_cell_key(dict(c)) for c in text]
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            what = "type" if x[0] != y[0] else "source" if x[1] != y[1] else "tags"
            return [f"cell {i} differs from {twin.name} in its {what} "
                    "(out of sync: run make sync)"]
    if len(a) != len(b):
        return [f"{len(a)} cells but {twin.name} has {len(b)} (out of sync: run make sync)"]
    return []


def main(argv: Sequence[str] | None = None) -> int:
    """Check every notebook named in ``argv``; print problems; return the exit status.

    ``--paired`` (anywhere in ``argv``) also checks each notebook's jupytext twin.
    """
    paths: Iterable[str] = sys.argv[1:] if argv is None else argv
    paths = list(paths)
    paired = "--paired" in paths
    paths = [p for p in paths if p != "--paired"]
    if not paths:
        print("usage: python -m dpgp_audit.devtools.check_notebooks [--paired] "
              "NOTEBOOK.ipynb ...", file=sys.stderr)
        return 2
    n_bad = 0
    for path in paths:
        problems = check_notebook(path)
        if paired and Path(path).is_file():
            problems += check_pair(path)
        for problem in problems:
            print(f"{path}: {problem}")
            n_bad += 1
    if n_bad == 0:
        print(f"{len(paths)} notebook(s) clean")
    return 1 if n_bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
