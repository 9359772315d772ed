"""Write small throw-away notebooks from Python (used by the tests).

The teaching notebooks themselves are edited as jupytext text
(``notebooks/NN_name.py``, paired with the ``.ipynb``; ``make sync``). A test
lists cells with :func:`md` and :func:`code` and calls :func:`write_notebook`,
which produces a clean nbformat-4 notebook: kernelspec ``python3``, no outputs,
no execution counts, deterministic cell ids — exactly what
:mod:`dpgp_audit.devtools.check_notebooks` requires.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

__all__ = ["code", "md", "write_notebook"]


def md(text: str) -> dict:
    """A markdown cell (text is dedented and stripped)."""
    return {"cell_type": "markdown", "source": textwrap.dedent(text).strip(), "tags": []}


def code(text: str, *tags: str) -> dict:
    """A code cell with optional tags (``"parameters"``, ``"nbval-ignore-output"``, ...)."""
    return {"cell_type": "code", "source": textwrap.dedent(text).strip(), "tags": list(tags)}


def write_notebook(path: str | Path, cells: list[dict]) -> Path:
    """Write ``cells`` as a clean python3 notebook at ``path`` and return the path."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)",
                                 "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    stem = Path(path).stem.split("_")[0]
    for i, spec in enumerate(cells):
        make = nbformat.v4.new_markdown_cell if spec["cell_type"] == "markdown" \
            else nbformat.v4.new_code_cell
        cell = make(spec["source"])
        cell["id"] = f"nb{stem}-{i:02d}"
        if spec["tags"]:
            cell.metadata["tags"] = spec["tags"]
        nb.cells.append(cell)
    nbformat.validate(nb)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path
