r"""Run notebooks headless many times in a row and count hangs; measure their memory.

Each run is the papermill command line a user would type, in its own process, with
no ``DPGP_AUDIT_WIDGETS`` override (so the widgets' own detection of an unattended
run is what is tested), papermill's ``--execution-timeout`` per cell and a hard limit
per run. A run that passes the hard limit is a **hang**; a run that fails otherwise
is an **error**. Wall times are recorded per run.

``--memory`` instead executes each notebook once (nbclient, its default parameters
unless ``--params-dir`` names a folder) and reports the kernel's peak resident memory
(``ru_maxrss``) and its resident memory at the end, i.e. what the kernel keeps while the
notebook stays open.

Usage::

    nice -n 10 python -m dpgp_audit.devtools.soak --runs 30 --out build/soak.json \
        01_smith2018_cloaking 03_honkela_dp_svgp
    python -m dpgp_audit.devtools.soak --memory --out build/memory.json index 00_dp_basics
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_once(stem: str, params: Path, *, cell_timeout: int, limit: int) -> tuple[str, float]:
    """One papermill run of ``notebooks/<stem>.ipynb``: ("ok" | "error" | "hang", seconds)."""
    env = {k: v for k, v in os.environ.items() if k != "DPGP_AUDIT_WIDGETS"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "papermill", str(ROOT / "notebooks" / f"{stem}.ipynb"),
               str(Path(tmp) / "out.ipynb"), "-k", "python3", "-f", str(params), "--cwd", tmp,
               "--execution-timeout", str(cell_timeout), "--log-level", "ERROR"]
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)  # papermill and its kernel: the group this run started
            proc.communicate()
            return "hang", time.monotonic() - t0
        status = "ok" if proc.returncode == 0 else "error"
        if status == "error":
            sys.stderr.write(err.decode(errors="replace")[-2000:])
        return status, time.monotonic() - t0


_MEMORY_CELL = (
    "import json as _j, resource as _r\n"
    "_rss = [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS')]\n"
    "print('<<mem>>' + _j.dumps({'peak_mb': _r.getrusage(_r.RUSAGE_SELF).ru_maxrss / 1024,"
    " 'end_mb': _rss[0] / 1024}))")


def kernel_memory(stem: str, params: Path | None, *, cell_timeout: int) -> dict:
    """Execute ``notebooks/<stem>.ipynb`` once; the kernel's peak and final RSS in MB."""
    import nbclient
    import nbformat
    import yaml

    path = ROOT / "notebooks" / f"{stem}.ipynb"
    if not path.is_file():
        path = ROOT / "notebooks" / "answers" / f"{stem}.ipynb"
    nb = nbformat.read(path, as_version=4)
    if params is not None and params.is_file():
        import papermill as pm

        values = yaml.safe_load(params.read_text(encoding="utf-8")) or {}
        nb = pm.parameterize_notebook(nb, values, kernel_name="python3")
    nb.cells.append(nbformat.v4.new_code_cell(_MEMORY_CELL))
    os.environ["DPGP_AUDIT_WIDGETS"] = "static"
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        nbclient.NotebookClient(nb, timeout=cell_timeout, kernel_name="python3",
                                resources={"metadata": {"path": tmp}}).execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    result = json.loads(text.split("<<mem>>", 1)[1])
    result["seconds"] = round(time.monotonic() - t0, 1)
    return result


def main(argv: list[str] | None = None) -> int:
    """Command line; exit 1 when any run hung or failed."""
    parser = argparse.ArgumentParser(prog="python -m dpgp_audit.devtools.soak",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("stems", nargs="+", help="notebook names, e.g. 01_smith2018_cloaking")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--params-dir", type=Path, default=ROOT / "tests/notebooks/params",
                        help="folder of <stem>.yaml parameter files (default: the CI ones)")
    parser.add_argument("--cell-timeout", type=int, default=600)
    parser.add_argument("--limit", type=int, default=900, help="seconds before a run is a hang")
    parser.add_argument("--out", type=Path, default=None, help="write the record as JSON here")
    parser.add_argument("--memory", action="store_true",
                        help="measure each notebook's kernel memory once instead")
    args = parser.parse_args(argv)
    if args.memory:
        params_dir = None if "--params-dir" not in (argv or sys.argv) else args.params_dir
        record = {"load_before": os.getloadavg(), "notebooks": {}}
        for stem in args.stems:
            params = None if params_dir is None else params_dir / f"{stem}.yaml"
            record["notebooks"][stem] = kernel_memory(stem, params,
                                                      cell_timeout=args.cell_timeout)
            print(stem, record["notebooks"][stem], flush=True)
        record["total_end_mb"] = sum(r["end_mb"] for r in record["notebooks"].values())
        record["load_after"] = os.getloadavg()
        print(f"all kernels open at once: {record['total_end_mb']:.0f} MB", flush=True)
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(record, indent=1), encoding="utf-8")
        return 0
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    record = {"runs": args.runs, "limit_s": args.limit, "load_before": os.getloadavg(),
              "notebooks": {}}
    bad = 0
    for stem in args.stems:
        params = args.params_dir / f"{stem}.yaml"
        if not params.is_file():
            parser.error(f"no parameter file {params}")
        results = []
        for k in range(args.runs):
            status, seconds = run_once(stem, params, cell_timeout=args.cell_timeout,
                                       limit=args.limit)
            results.append({"run": k + 1, "status": status, "seconds": round(seconds, 2)})
            print(f"{stem} run {k + 1}/{args.runs}: {status} {seconds:.1f} s", flush=True)
        times = [r["seconds"] for r in results]
        summary = {s: sum(r["status"] == s for r in results) for s in ("ok", "error", "hang")}
        summary.update(median_s=statistics.median(times), min_s=min(times), max_s=max(times))
        record["notebooks"][stem] = {"summary": summary, "runs": results}
        print(f"{stem}: {summary}", flush=True)
        bad += summary["error"] + summary["hang"]
    record["load_after"] = os.getloadavg()
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
