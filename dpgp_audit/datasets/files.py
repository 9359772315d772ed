"""A user's data file as a :class:`~dpgp_audit.dataset.Dataset` (catalogue A.10).

``python -m dpgp_audit audit --data FILE`` reads

* **CSV** with a header row: ``y`` names the target column, ``x`` the input columns
  (comma-separated; default: every other column; a file of one column has ``X`` =
  the row index, i.e. public positions 0, 1, …);
* **.npz** with arrays ``X`` (shape (n, D) or (n,)) and ``y`` (shape (n,)).

Every problem is a ``ValueError`` naming the file and what is wrong — a missing column
(with the columns that exist), a cell that is not a number (row and column), a NaN or an
empty cell, a missing array — so the command line answers with one line and exit 2.
"""

from __future__ import annotations

import csv
import math
import os

import numpy as np

from dpgp_audit.dataset import Dataset

__all__ = ["load_data_file"]


def _columns(spec: str | None) -> list[str] | None:
    if spec is None:
        return None
    cols = [c.strip() for c in spec.split(",")]
    if not all(cols):
        raise ValueError(f"x: empty column name in {spec!r}")
    return cols


def _read_csv(path: str, y: str | None, x: str | None) -> Dataset:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        first = fh.readline()
        fh.seek(0)
        # a spreadsheet's export may separate by ';' or tabs: read the header's separator
        sep = next((c for c in (",", ";", "\t") if c in first), ",")
        rows = list(csv.reader(fh, delimiter=sep))
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise ValueError(f"{path}: the file is empty (a header row and data rows are needed)")
    header = [h.strip() for h in rows[0]]
    if len(set(header)) != len(header):
        raise ValueError(f"{path}: the header row repeats a column name: {header}")
    body = rows[1:]
    if not body:
        raise ValueError(f"{path}: no data rows below the header")
    if y is None:
        if len(header) == 1:
            y = header[0]
        else:
            raise ValueError(f"{path}: name the target column with --y (columns: "
                             f"{', '.join(header)})")
    x_cols = _columns(x)
    if x_cols is None:
        x_cols = [h for h in header if h != y]
    for col in [y, *x_cols]:
        if col not in header:
            raise ValueError(f"{path}: no column {col!r} (columns: {', '.join(header)})")
    if y in x_cols:
        raise ValueError(f"{path}: column {y!r} is both the target and an input")
    index = {h: k for k, h in enumerate(header)}

    def number(line: int, col: str, row: list[str]) -> float:
        k = index[col]
        cell = row[k].strip() if k < len(row) else ""
        if not cell:
            raise ValueError(f"{path}: row {line}, column {col!r} is empty")
        try:
            value = float(cell)
        except ValueError:
            hint = " (a decimal comma? write 0.5, not 0,5)" if "," in cell else ""
            raise ValueError(f"{path}: row {line}, column {col!r}: {cell!r} is not a "
                             f"number{hint}") from None
        if not math.isfinite(value):
            raise ValueError(f"{path}: row {line}, column {col!r} is {cell!r} (NaN or inf "
                             "is not data)")
        return value

    ys, xs = [], []
    for line, row in enumerate(body, start=2):  # line 1 is the header
        if len(row) > len(header):
            raise ValueError(f"{path}: row {line} has {len(row)} cells for "
                             f"{len(header)} columns")
        ys.append(number(line, y, row))
        xs.append([number(line, c, row) for c in x_cols])
    X = np.asarray(xs, dtype=float) if x_cols else np.arange(len(ys), dtype=float)[:, None]
    return Dataset(X, np.asarray(ys, dtype=float), name=os.path.basename(path))


def _read_npz(path: str) -> Dataset:
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not a readable .npz archive ({err})") from None
    with archive:
        missing = [k for k in ("X", "y") if k not in archive.files]
        if missing:
            raise ValueError(f"{path}: missing array(s) {missing} (arrays found: "
                             f"{archive.files}; an .npz needs X and y)")
        X, y = archive["X"], archive["y"]
    try:
        return Dataset(X, y, name=os.path.basename(path))
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def load_data_file(path: str, *, y: str | None = None, x: str | None = None) -> Dataset:
    """Read a user's CSV or ``.npz`` file into a :class:`~dpgp_audit.dataset.Dataset`.

    Parameters
    ----------
    path
        ``*.csv`` (header row) or ``*.npz`` (arrays ``X`` and ``y``).
    y
        CSV only: the target column (may be omitted when the file has one column).
    x
        CSV only: comma-separated input columns (default: every column but ``y``).

    Raises
    ------
    ValueError
        Naming the file and the problem (module docstring).
    """
    if not os.path.isfile(path):
        raise ValueError(f"--data {path!r}: no such file")
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npz":
        if y is not None or x is not None:
            raise ValueError(f"{path}: --y and --x apply to CSV files; an .npz holds X and y")
        return _read_npz(path)
    if ext in (".csv", ".txt"):
        try:
            return _read_csv(path, y, x)
        except UnicodeDecodeError:
            raise ValueError(f"{path}: not a UTF-8 text file") from None
    raise ValueError(f"--data {path!r}: unknown file type {ext or '(none)'}; use .csv or .npz")
