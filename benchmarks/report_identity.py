"""Reports without their timings: does a speed change decide anything? (issue 20 §2).

A change meant only to make the auditors faster must leave every draw, event, bet, verdict,
estimate and detail as it was. This script writes, for a list of catalogue entries at seeds
1 and 2, the report of ``audit_mechanism`` twice — the black-box auditor alone at the
single-audit cap with no time guard, and the default path — with every timing field
dropped and every float written by ``repr`` (so equal files mean equal values to the bit).
Run it on two checkouts and compare the files::

    PYTHONPATH=/path/to/main   python benchmarks/report_identity.py /tmp/before.json
    PYTHONPATH=/path/to/branch python benchmarks/report_identity.py /tmp/after.json
    cmp /tmp/before.json /tmp/after.json

The default list holds the cheap scalar controls, the vector, categorical and SVT ones and
eleven planted bugs (about five minutes on one core); pass catalogue IDs after the output
path to choose others. Exit 0; the comparison is ``cmp``'s.
"""

from __future__ import annotations

import json
import sys

import _common  # noqa: F401  (BLAS pinned to one thread)
import numpy as np

from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.catalogue import entries

IDS = ["A.5/gaussian-sum-rows", "P.1/gaussian-sum", "A.5/clipped-mean", "P.2/exponential",
       "P.2/laplace-sum", "P.2/laplace-sum-rows", "A.5/laplace-sum-declared-bound",
       "A.5/statdp-histogram", "P.2/laplace-sum-secure", "A.5/group-means-nominal",
       "A.5/laplace-vector", "A.5/svt", "A.5/noisy-max", "P.4/multivariate-gaussian",
       "A.5/exp-mech", "A.5/bin-sums", "A.5/statdp-noisy-max-exp",
       "A.5/gaussian-sum-sample-only",
       "planted/laplace-l2", "planted/exp-no-half", "planted/svt-no-cutoff",
       "planted/noisy-max-half-scale", "planted/laplace-max-scaled", "planted/fixed-seed",
       "planted/statdp-histogram-eps", "planted/data-dependent-scale",
       "planted/laplace-sum-no-domain", "planted/laplace-log",
       "planted/clipped-mean-half-swing"]
#: Fields that measure time, not evidence (dropped wherever they occur).
TIMING_FIELDS = {"seconds", "timings", "time", "elapsed", "elapsed_s", "wall_s"}


def without_timings(x: object) -> object:
    """``x`` with timing fields dropped and floats as ``repr`` strings (exact comparison)."""
    if isinstance(x, dict):
        return {str(k): without_timings(v) for k, v in x.items()
                if str(k) not in TIMING_FIELDS and not str(k).startswith("seconds")}
    if isinstance(x, list | tuple):
        return [without_timings(v) for v in x]
    if isinstance(x, np.ndarray):
        return without_timings(x.tolist())
    if isinstance(x, np.floating | float):
        return repr(float(x))
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, str | int | bool) or x is None:
        return x
    return repr(x)


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    ids = sys.argv[2:] or IDS
    known = {e.id: e for e in entries(include_planted=True)}
    unknown = [i for i in ids if i not in known]
    if unknown:
        print(f"unknown catalogue IDs: {', '.join(unknown)}", file=sys.stderr)
        return 2
    out = {}
    for i in ids:
        mech, data = known[i].make()
        for seed in (1, 2):
            r = audit_mechanism(mech, data, np.random.default_rng(seed),
                                auditors=("blackbox",), n=200_000, time_guard_s=None)
            out[f"{i}|blackbox at cap|{seed}"] = without_timings(r.as_dict())
            r = audit_mechanism(mech, data, np.random.default_rng(seed))
            out[f"{i}|default|{seed}"] = without_timings(r.as_dict())
        print(i, flush=True, file=sys.stderr)
    with open(sys.argv[1], "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
