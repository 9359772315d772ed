"""Run every ``benchmarks/bench_*.py`` on one BLAS thread; print all headlines side by side.

Usage::

    python benchmarks/run_all.py [NAME ...]

With names (``gp``, ``bench_grid``, ``bench_grid.py``), only those benchmarks run. Each
benchmark runs in its own process with OMP/OpenBLAS/MKL pinned to one thread; its output
is streamed as it comes, except its headline rows (printed by ``_common.headline``), which
are collected and printed at the end as one Markdown table: the kit, the strongest
external baseline, and the labelled internal baseline of each case. Exit status 1 when a
benchmark reported a missed target (non-zero exit).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import HEADLINE_TAG  # noqa: E402


def _selected(names: list[str]) -> list[pathlib.Path]:
    scripts = sorted(HERE.glob("bench_*.py"))
    if not names:
        return scripts
    wanted = {n.removesuffix(".py").removeprefix("bench_") for n in names}
    chosen = [s for s in scripts if s.stem.removeprefix("bench_") in wanted]
    unknown = wanted - {s.stem.removeprefix("bench_") for s in chosen}
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(sorted(unknown))}; "
                         f"have {', '.join(s.stem for s in scripts)}")
    return chosen


def main(argv: list[str]) -> int:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), env.get("PYTHONPATH")]))
    failed: list[str] = []
    rows: list[list[str]] = []
    silent: list[str] = []
    for script in _selected(argv):
        print(f"== {script.name}", flush=True)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, str(script)], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=1)
        found = False
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(HEADLINE_TAG + "\t"):
                rows.append(line.rstrip("\n").split("\t")[1:])
                found = True
            else:
                print(line, end="", flush=True)
        rc = proc.wait()
        print(f"   ({script.name}: {time.perf_counter() - t0:.0f} s, exit {rc})", flush=True)
        if rc:
            failed.append(script.name)
        if not found:
            silent.append(script.name)

    print("\n== headlines (one BLAS thread; external = strongest external baseline, "
          "internal = labelled naive baseline)\n")
    print("| benchmark | case | kit | external baseline | internal baseline |")
    print("|---|---|---|---|---|")
    for row in rows:
        bench, case, kit, external, internal = (cell.replace("|", "\\|") for cell in row)
        print(f"| `{bench}` | {case} | {kit} | {external} | {internal} |")
    for name in silent:
        print(f"| `{name}` | (no headline row: a table, see its output above) | | | |")
    if failed:
        print("\ntargets missed (or errors) in:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
