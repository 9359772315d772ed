"""Grade a submitted notebook: execute it, then run the public and hidden checks.

``make grade NB=00 SUBMISSION=path/to/student.ipynb`` (or ``python -m
dpgp_audit.exercises.grading --notebook 00 --hidden tests/exercises/hidden
student.ipynb``):

1. the submission's ``parameters`` cell gets the notebook's small CI parameters
   (``--params``, papermill's injection) so grading takes seconds, not minutes;
2. it is executed with nbclient in a fresh ``python3`` kernel, each cell under a
   timeout (``--timeout``: a stuck cell is interrupted and grading goes on), errors
   allowed (a broken cell costs the exercises that need it, not the whole grade),
   widgets static;
3. one more cell, run in the same kernel, looks up the name each exercise asks the
   student to define (from the hidden checks' table, else from the notebook's own
   ``check("NN.k", name)`` call) and runs the exercise's public check
   (:func:`dpgp_audit.exercises.check`) and hidden check (``tests/exercises/hidden/
   nbNN.py``, loaded by path: instructors may keep it anywhere) on it;
4. a table is printed, one row per exercise with its score — 1 when the public and
   hidden checks pass, ½ when only the public one does, 0 otherwise — and the first
   failing message; ``--json`` writes the same as JSON.

The student's code runs in a separate kernel process, not in the grader; it is not
sandboxed (grade submissions you would run yourself).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from dpgp_audit.exercises import exercises, run_check, title

__all__ = ["grade", "kernel_report", "load_hidden", "main", "names_from_notebook"]

_BEGIN, _END = "<<dpgp-grade>>", "<</dpgp-grade>>"


def load_hidden(hidden_dir: str | Path | None, notebook: str) -> dict:
    """The ``HIDDEN`` table of ``<hidden_dir>/nb<notebook>.py`` ({} when there is none)."""
    if hidden_dir is None:
        return {}
    path = Path(hidden_dir) / f"nb{notebook}.py"
    if not path.is_file():
        return {}
    spec = importlib.util.spec_from_file_location(f"_dpgp_hidden_nb{notebook}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    hidden = getattr(module, "HIDDEN", None)
    if not isinstance(hidden, dict):
        raise ValueError(f"{path} must define HIDDEN = {{exercise ID: (name, check)}}")
    return hidden


def names_from_notebook(nb: Mapping) -> dict[str, str]:
    """Exercise ID → name, read from the notebook's ``check("NN.k", name)`` calls."""
    names: dict[str, str] = {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", ""))
        source = "\n".join(line for line in source.splitlines()
                           if not line.lstrip().startswith(("%", "!")))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "check"
                    and len(node.args) == 2 and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[1], ast.Name)):
                names.setdefault(str(node.args[0].value), node.args[1].id)
    return names


def _feedback_dict(fb) -> dict:
    first = next((msg for ok, msg in fb.results if not ok), fb.error)
    return {"passed": fb.passed, "checks": [[ok, msg] for ok, msg in fb.results],
            "error": fb.error, "first_failure": "" if fb.passed else first}


def kernel_report(namespace: Mapping, notebook: str, hidden_dir: str | None,
                  names: Mapping[str, str]) -> dict:
    """Run every exercise's public and hidden check on the names defined in ``namespace``.

    Called inside the kernel that executed the submission (the last cell
    :func:`grade` appends), so that the checks see the student's objects.

    Parameters
    ----------
    namespace
        The kernel's ``globals()``.
    notebook
        ``"00"``, ``"00b"``, ``"01"``, …
    hidden_dir
        Folder of the hidden checks, or ``None``.
    names
        Exercise ID → name read from the notebook (used when the hidden table has none).

    Returns
    -------
    dict
        ``{"notebook", "exercises": [...], "score", "max_score"}``.
    """
    hidden = load_hidden(hidden_dir, notebook)
    rows = []
    for ex_id in exercises(notebook):
        name = hidden[ex_id][0] if ex_id in hidden else names.get(ex_id, "")
        row = {"id": ex_id, "title": title(ex_id), "name": name,
               "defined": bool(name) and name in namespace}
        if not row["defined"]:
            row.update(public=None, hidden=None, score=0.0)
            rows.append(row)
            continue
        answer = namespace[name]
        from dpgp_audit.exercises import check

        public = _feedback_dict(check(ex_id, answer))
        secret = (_feedback_dict(run_check(ex_id, title(ex_id), hidden[ex_id][1], answer))
                  if ex_id in hidden else None)
        score = 0.0
        if public["passed"]:
            score = 1.0 if secret is None or secret["passed"] else 0.5
        row.update(public=public, hidden=secret, score=score)
        rows.append(row)
    return {"notebook": notebook, "exercises": rows,
            "score": sum(r["score"] for r in rows), "max_score": float(len(rows))}


def grade(submission: str | Path, notebook: str, *, hidden_dir: str | Path | None = None,
          params: str | Path | None = None, timeout: int = 300,
          kernel_name: str = "python3") -> dict:
    """Execute ``submission`` and grade notebook ``notebook``'s exercises in it.

    Parameters
    ----------
    submission
        The student's ``.ipynb``.
    notebook
        Which notebook's exercises: ``"00"``, ``"00b"``, ``"01"``, …
    hidden_dir
        Folder holding ``nb<notebook>.py`` with the hidden checks (``None``: public only).
    params
        A YAML file of parameters injected into the ``parameters`` cell (papermill).
    timeout
        Seconds per cell; a cell that runs longer is interrupted.
    kernel_name
        The Jupyter kernel to execute with.

    Returns
    -------
    dict
        The report of :func:`kernel_report` plus ``"submission"``, ``"cell_errors"``
        (how many of the submission's cells raised) and ``"graded"`` (False when the
        grading cell itself could not run, e.g. the kernel died).
    """
    import nbclient
    import nbformat

    submission = Path(submission)
    if not submission.is_file():
        raise ValueError(f"submission {submission} is not a file")
    if not exercises(notebook):
        raise ValueError(f"notebook {notebook!r} has no registered exercises")
    with tempfile.TemporaryDirectory() as tmp:
        source = submission
        if params is not None:
            import papermill as pm
            import yaml

            values = yaml.safe_load(Path(params).read_text(encoding="utf-8")) or {}
            source = Path(tmp) / "prepared.ipynb"
            pm.execute_notebook(str(submission), str(source), parameters=values,
                                kernel_name=kernel_name, prepare_only=True,
                                progress_bar=False, log_output=False)
        nb = nbformat.read(source, as_version=4)
        n_student = len(nb.cells)
        names = names_from_notebook(nb)
        hidden_arg = None if hidden_dir is None else str(Path(hidden_dir).resolve())
        nb.cells.append(nbformat.v4.new_code_cell(
            "import json as _json\n"
            "from dpgp_audit.exercises.grading import kernel_report as _report\n"
            f"print({_BEGIN!r} + _json.dumps(_report(globals(), {notebook!r}, "
            f"{hidden_arg!r}, {names!r})) + {_END!r})"))
        previous = os.environ.get("DPGP_AUDIT_WIDGETS")
        os.environ["DPGP_AUDIT_WIDGETS"] = "static"
        try:
            client = nbclient.NotebookClient(
                nb, timeout=timeout, startup_timeout=120, kernel_name=kernel_name,
                allow_errors=True, interrupt_on_timeout=True,
                resources={"metadata": {"path": tmp}})
            try:
                client.execute()
            except Exception as err:  # noqa: BLE001 - a dead kernel is a grade, not a crash
                sys.stderr.write(f"grading: execution stopped: {type(err).__name__}: {err}\n")
        finally:
            if previous is None:
                os.environ.pop("DPGP_AUDIT_WIDGETS", None)
            else:
                os.environ["DPGP_AUDIT_WIDGETS"] = previous
    errors = sum(any(o.get("output_type") == "error" for o in c.get("outputs", []))
                 for c in nb.cells[:n_student] if c.cell_type == "code")
    text = "".join("".join(o.get("text", "")) for o in nb.cells[-1].get("outputs", [])
                   if o.get("output_type") == "stream")
    if _BEGIN in text and _END in text:
        report = json.loads(text.split(_BEGIN, 1)[1].split(_END, 1)[0])
        report["graded"] = True
    else:
        rows = [{"id": i, "title": title(i), "name": "", "defined": False, "public": None,
                 "hidden": None, "score": 0.0} for i in exercises(notebook)]
        report = {"notebook": notebook, "exercises": rows, "score": 0.0,
                  "max_score": float(len(rows)), "graded": False}
    report.update(submission=str(submission), cell_errors=errors)
    return report


def format_report(report: Mapping) -> str:
    """The report as a table, one row per exercise, with the first failing message."""
    lines = [f"Grading {report['submission']} (notebook {report['notebook']}): "
             f"{report['cell_errors']} cell(s) raised an error"
             + ("" if report.get("graded", True) else "; the grading cell did not run")]
    lines.append(f"{'exercise':<9} {'name':<22} {'public':<7} {'hidden':<7} score")
    for row in report["exercises"]:
        def verdict(part):
            return "-" if part is None else ("pass" if part["passed"] else "FAIL")

        public = "missing" if not row["defined"] else verdict(row["public"])
        lines.append(f"{row['id']:<9} {row['name'] or '?':<22} {public:<7} "
                     f"{verdict(row['hidden']):<7} {row['score']:g}")
        for part, label in ((row["public"], "public"), (row["hidden"], "hidden")):
            if part is not None and not part["passed"]:
                lines.append(f"          {label}: {part['first_failure']}")
    lines.append(f"total {report['score']:g} / {report['max_score']:g}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line; exit 0 when the submission was graded (whatever its score), 2 on bad input."""
    parser = argparse.ArgumentParser(prog="python -m dpgp_audit.exercises.grading",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("submission", help="the student's .ipynb")
    parser.add_argument("--notebook", required=True, help="00, 00b, 01, ...")
    parser.add_argument("--hidden", default=None, help="folder of the hidden checks nbNN.py")
    parser.add_argument("--params", default=None, help="YAML parameters to inject")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    parser.add_argument("--json", default=None, help="also write the report as JSON here")
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        parser.error("--timeout must be > 0")
    try:
        report = grade(args.submission, args.notebook, hidden_dir=args.hidden,
                       params=args.params, timeout=args.timeout)
    except (ValueError, FileNotFoundError) as err:
        print(f"grading: {err}", file=sys.stderr)
        return 2
    print(format_report(report))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")
        print(f"report written to {args.json}")
    return 0 if report.get("graded") else 1


if __name__ == "__main__":
    raise SystemExit(main())
