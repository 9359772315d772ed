"""Run every notebook of ``notebooks/`` once, with tiny CI parameters.

Notebooks are edited as text: ``notebooks/NN_name.py`` (jupytext percent format) is
paired with ``NN_name.ipynb`` through ``notebooks/jupytext.toml``. Edit the ``.py``
(or the notebook in JupyterLab), then run ``make sync`` (``jupytext --sync
notebooks/*.ipynb``); ``tests/devtools/test_jupytext_pairs.py`` and ``make lint`` fail when a
pair is out of sync. The harness runs the ``.ipynb``.

How one notebook ``notebooks/NN_name.ipynb`` is tested (``tests/notebooks/test_notebooks.py``):

1. **Parameters.** ``tests/notebooks/params/NN_name.yaml`` holds the tiny CI values
   (a missing file is a test failure). Every key must name a variable of the
   notebook's ``parameters`` cell (papermill itself only logs unknown names), and
   ``show_progress`` must be false.
2. **Prepare.** papermill (``prepare_only=True``, kernel ``python3``) injects them
   into ``build/ci/NN_name.ipynb`` without executing anything.
3. **Execute once** with nbval in a subprocess
   (``python -m pytest --nbval-lax --nbval-current-env ...``): every cell must run
   without error within ``CELL_TIMEOUT`` seconds. The kernel is the test's own
   interpreter, its working directory ``build/ci`` (notebooks load data through
   package functions, never relative paths) and ``PYTHONPATH`` starts with the
   repository root, so the kernel imports *this* checkout's ``dpgp_audit``
   whether or not the package is installed.
4. **Where numbers matter** a reference copy ``tests/notebooks/refs/NN_name.ipynb``
   (executed with the same CI parameters, written by ``make refs``) exists. Then
   the single execution of step 3 is *strict* instead of lax: the reference is
   copied to ``build/ci`` and run with ``--nbval`` and the sanitize file
   ``tests/notebooks/nbval_sanitize.cfg``, so every output must match the stored one
   (memory addresses, digits past the fourth decimal and tqdm timings
   sanitised; images are not compared). The reference's code must equal the
   prepared notebook's code, otherwise the test fails and says to run
   ``make refs``. Either way each notebook executes exactly once.
5. **Figures.** The plugin ``tests/notebooks/nbval_outputs.py`` records the MIME types of
   every output of that single run (``build/ci/NN_name.outputs.json``); the test
   checks that the notebook displayed at least the number of ``image/png``
   figures declared for it in ``tests/notebooks/figures.yaml``.
6. **Prose agrees with outputs.** The same run also keeps the executed notebook
   (plugin :mod:`dpgp_audit.devtools.nbval_capture`) and
   :func:`dpgp_audit.devtools.quoted_numbers.check_quoted_numbers` checks every
   number of the markdown: marked as computed (``<!--out-->``) it must match an output
   above it; otherwise it must be cited (``<!--paper-->``), labelled as another run's
   (``<!--run: LABEL-->``) or exempt by its form (math, code, a section number ...).
7. **No live widgets.** Kernels run with ``DPGP_AUDIT_WIDGETS=static``: slider cells
   print a note instead of opening widget comms (:func:`dpgp_audit.viz.widgets.batch_run`).

Command line (``make refs``)::

    python -m tests.notebooks.harness --write-refs            # refresh existing refs
    python -m tests.notebooks.harness --write-refs 00_dp_basics   # create/refresh one
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
PARAMS = ROOT / "tests" / "notebooks" / "params"
REFS = ROOT / "tests" / "notebooks" / "refs"
SANITIZE = ROOT / "tests" / "notebooks" / "nbval_sanitize.cfg"
FIGURES = ROOT / "tests" / "notebooks" / "figures.yaml"
BUILD = ROOT / "build" / "ci"
KERNEL = "python3"
CELL_TIMEOUT = 300  # seconds per cell; CI notebooks should take seconds in total
STARTUP_TIMEOUT = 120  # kernel start on a loaded 2-core machine
NOTEBOOK_TIMEOUT = 900  # whole nbval run of one notebook (guards against kernel hangs)


def _rel(path: Path) -> str:
    """``path`` relative to the repository root when inside it (for messages)."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def discover() -> list[Path]:
    """Every ``notebooks/*.ipynb`` and ``notebooks/answers/*.ipynb``, sorted by name.

    Answer notebooks (the solutions of each notebook's exercises) are tested like
    the others; checkpoints are excluded.
    """
    found = [*NOTEBOOKS.glob("*.ipynb"), *(NOTEBOOKS / "answers").glob("*.ipynb")]
    return sorted((p for p in found if not p.name.startswith(".")), key=lambda p: p.name)


def params_path(notebook: Path) -> Path:
    """Where the CI parameters of ``notebook`` live."""
    return PARAMS / f"{notebook.stem}.yaml"


def ref_path(notebook: Path) -> Path:
    """Where the executed reference copy of ``notebook`` lives (may not exist)."""
    return REFS / notebook.name


def load_params(notebook: Path) -> dict:
    """The CI parameters for ``notebook`` from its YAML file.

    Raises ``FileNotFoundError`` with instructions if the file is missing and
    ``ValueError`` if it is not a mapping.
    """
    import yaml

    path = params_path(notebook)
    if not path.is_file():
        raise FileNotFoundError(
            f"{notebook.name} has no CI parameters: add {_rel(path)} with tiny "
            "values for its parameters cell (e.g. 'n_samples: 200' and 'show_progress: false') "
            "so that the notebook runs in seconds in `make test`"
        )
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError(f"{_rel(path)} must hold a mapping name: value")
    return data


def parameters_cell(nb) -> dict | None:
    """The first cell tagged ``parameters`` (or ``None``)."""
    for cell in nb.cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return cell
    return None


def parameter_names(nb) -> set[str]:
    """Names assigned in the ``parameters`` cell (plain and annotated assignments)."""
    cell = parameters_cell(nb)
    if cell is None:
        return set()
    names: set[str] = set()
    for node in ast.parse(cell.source).body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def check_params_match(notebook: Path, params: dict) -> None:
    """Raise ``ValueError`` if the YAML names an unknown parameter or leaves progress on."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    names = parameter_names(nb)
    if parameters_cell(nb) is None:
        raise ValueError(f"{notebook.name} has no cell tagged 'parameters'")
    unknown = sorted(set(params) - names)
    if unknown:
        raise ValueError(
            f"{_rel(params_path(notebook))} sets {unknown}, which the parameters "
            f"cell of {notebook.name} does not define (it defines {sorted(names)})"
        )
    if "show_progress" in names and params.get("show_progress", True) is not False:
        raise ValueError(
            f"{_rel(params_path(notebook))} must set 'show_progress: false' "
            "(progress bars make outputs unstable and slow CI)"
        )


def prepare(notebook: Path, params: dict, out_dir: Path = BUILD) -> Path:
    """Inject ``params`` with papermill without executing; return the output path."""
    import papermill as pm

    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / notebook.name
    pm.execute_notebook(
        str(notebook), str(out), parameters=params, kernel_name=KERNEL,
        prepare_only=True, progress_bar=False, log_output=False,
    )
    return out


def _code(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def ref_is_current(prepared: Path, ref: Path) -> bool:
    """True when the reference holds exactly the prepared notebook's code cells.

    Markdown is not compared: nbval executes the reference's code, so prose edits
    need no new reference.
    """
    import nbformat

    return _code(nbformat.read(prepared, as_version=4)) == _code(
        nbformat.read(ref, as_version=4))


def kernel_env() -> dict[str, str]:
    """Environment for kernels: this checkout first on ``PYTHONPATH``, quiet debugger."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env.setdefault("MPLBACKEND", "Agg")
    return env


def nbval_command(path: Path, *, strict: bool) -> list[str]:
    """The pytest/nbval command line that executes ``path`` once."""
    cmd = [sys.executable, "-m", "pytest", "-q", "--color=no", "-p", "no:cacheprovider",
           "-p", "tests.notebooks.nbval_outputs", "-p", "dpgp_audit.devtools.nbval_capture",
           "-o", "addopts=", "--rootdir", str(path.parent),
           "--nbval-current-env", f"--nbval-cell-timeout={CELL_TIMEOUT}",
           f"--nbval-kernel-startup-timeout={STARTUP_TIMEOUT}"]
    if strict:
        cmd += ["--nbval", f"--nbval-sanitize-with={SANITIZE}"]
    else:
        cmd += ["--nbval-lax"]
    return cmd + [str(path)]


def run_notebook(notebook: Path, out_dir: Path = BUILD) -> tuple[bool, str, str]:
    """Prepare and execute ``notebook`` once; return (passed, mode, log).

    ``mode`` is ``"strict"`` when a reference copy exists, else ``"lax"``.
    """
    params = load_params(notebook)
    check_params_match(notebook, params)
    prepared = prepare(notebook, params, out_dir)
    ref = ref_path(notebook)
    strict = ref.is_file()
    target = prepared
    if strict:
        if not ref_is_current(prepared, ref):
            return False, "strict", (
                f"{_rel(ref)} is stale: its code differs from {notebook.name} "
                "with the CI parameters. Run `make refs` (python -m tests.notebooks.harness "
                "--write-refs), review the output diff, and commit it."
            )
        target = out_dir / f"{notebook.stem}.ref.ipynb"
        shutil.copyfile(ref, target)
    env = kernel_env()
    env["DPGP_AUDIT_WIDGETS"] = "static"  # nobody moves a slider here (viz.widgets.batch_run)
    record = outputs_path(notebook, out_dir)
    record.unlink(missing_ok=True)
    env["DPGP_NBVAL_OUTPUTS"] = str(record)
    executed = out_dir / f"{notebook.stem}.executed.ipynb"
    executed.unlink(missing_ok=True)
    env["DPGP_NBVAL_CAPTURE"] = str(executed)
    try:
        proc = subprocess.run(nbval_command(target, strict=strict), cwd=out_dir,
                              env=env, capture_output=True, text=True, check=False,
                              timeout=NOTEBOOK_TIMEOUT)
    except subprocess.TimeoutExpired as err:
        out = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        return False, "strict" if strict else "lax", (
            f"{out}\nnbval did not finish within {NOTEBOOK_TIMEOUT} s (kernel hang?)")
    log = proc.stdout + proc.stderr
    if strict and proc.returncode != 0:
        log += (f"\n(outputs are compared with {_rel(ref)}; if the change is "
                "intended, run `make refs` and commit the reviewed diff)")
    passed = proc.returncode == 0
    if passed:
        problems = quoted_number_problems(executed)
        if problems:
            passed = False
            log += "\nprose contradicts outputs:\n" + "\n".join(problems)
    return passed, "strict" if strict else "lax", log


def quoted_number_problems(executed: Path) -> list[str]:
    """Marked quoted numbers of the executed notebook that its outputs do not support."""
    import json

    from dpgp_audit.devtools.quoted_numbers import check_quoted_numbers

    if not executed.is_file():
        return [f"the executed notebook {_rel(executed)} was not captured (nbval plugin?)"]
    return check_quoted_numbers(json.loads(executed.read_text(encoding="utf-8")))


def outputs_path(notebook: Path, out_dir: Path = BUILD) -> Path:
    """Where :func:`run_notebook` records the outputs of its run (see ``nbval_outputs``)."""
    return out_dir / f"{notebook.stem}.outputs.json"


def executed_outputs(notebook: Path, out_dir: Path = BUILD) -> list[dict]:
    """The outputs recorded by the last :func:`run_notebook` of ``notebook``, per cell."""
    import json

    return json.loads(outputs_path(notebook, out_dir).read_text(encoding="utf-8"))


def count_images(cells: list[dict], mime: str = "image/png") -> int:
    """Number of outputs carrying ``mime`` in recorded ``cells``."""
    return sum(mime in out["mime"] for cell in cells for out in cell["outputs"])


def declared_figures() -> dict[str, int]:
    """Per notebook stem, the least number of ``image/png`` outputs its CI run must show."""
    import yaml

    data = yaml.safe_load(FIGURES.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in data.values()):
        raise ValueError(f"{_rel(FIGURES)} must map notebook stems to counts >= 0")
    return data


def _clean_reference(nb):
    """Drop what nbval never compares and what bloats a diff: images, widget state, timings."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("papermill", None)
        for out in cell.get("outputs", []):
            data = out.get("data")
            if data:
                for key in [k for k in data if k.startswith("image/")]:
                    del data[key]
                data.pop("application/vnd.jupyter.widget-view+json", None)
                out["metadata"] = {}
    return nb


def write_reference(notebook: Path, out_dir: Path = BUILD) -> Path:
    """Execute ``notebook`` with its CI parameters and store the outputs as reference."""
    import nbclient
    import nbformat

    params = load_params(notebook)
    check_params_match(notebook, params)
    prepared = prepare(notebook, params, out_dir)
    nb = nbformat.read(prepared, as_version=4)
    os.environ.update(kernel_env())
    os.environ["DPGP_AUDIT_WIDGETS"] = "static"  # as in run_notebook
    client = nbclient.NotebookClient(
        nb, timeout=CELL_TIMEOUT, startup_timeout=STARTUP_TIMEOUT, kernel_name=KERNEL,
        resources={"metadata": {"path": str(out_dir)}})
    client.execute()
    REFS.mkdir(parents=True, exist_ok=True)
    ref = ref_path(notebook)
    nbformat.write(_clean_reference(nb), ref)
    return ref


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--write-refs [NAME ...]``."""
    parser = argparse.ArgumentParser(prog="python -m tests.notebooks.harness",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-refs", action="store_true",
                        help="(re)write tests/notebooks/refs/ from the CI parameters")
    parser.add_argument("names", nargs="*",
                        help="notebook stems (default: every notebook that has a reference)")
    args = parser.parse_args(argv)
    if not args.write_refs:
        parser.print_help()
        return 2
    by_stem = {p.stem: p for p in discover()}
    if args.names:
        missing = [n for n in args.names if n not in by_stem]
        if missing:
            parser.error(f"no notebooks/{missing[0]}.ipynb")
        chosen = [by_stem[n] for n in args.names]
    else:
        chosen = [p for p in by_stem.values() if ref_path(p).is_file()]
        if not chosen:
            print("no reference notebooks yet; name one, e.g. "
                  "python -m tests.notebooks.harness --write-refs 00_dp_basics")
    for nb in chosen:
        print(f"wrote {_rel(write_reference(nb))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
