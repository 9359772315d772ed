"""Serial against a real Dask LocalCluster (2 worker processes): chunks that pay (issue 15 §4).

Two audits, each timed serially and through ``LocalCluster(n_workers=2)`` (the
cluster's start-up excluded; results are checked bit-identical):

* a cheap Gaussian release (``P.1/gaussian-sum``, ~0.1 µs per draw), n = 2·10⁶ per
  side: the batching executor keeps it in process — target: never > 10 % slower;
* a mechanism whose draw costs about 1 ms (an eigen-decomposition per draw),
  n = 6 000 per side — target: ≥ 1.6× faster on 2 workers.

On a machine shared with other work the speed-up is bounded by the idle cores:
the load average is printed beside each timing.

Usage: ``python benchmarks/bench_dask.py``.
"""

from __future__ import annotations

import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import _common  # noqa: F401  (BLAS pinned to one thread)
import numpy as np  # noqa: E402

from dpgp_audit.audit.blackbox import audit_blackbox  # noqa: E402
from dpgp_audit.audit.executors import BatchingExecutor  # noqa: E402
from dpgp_audit.catalogue import get  # noqa: E402
from dpgp_audit.privacy.claims import ApproxDP, outputs_only  # noqa: E402


@dataclass(frozen=True)
class SlowRelease:
    """Benchmark-only: the sum of targets plus N(0, σ²), with ~1 ms of linear algebra per draw."""

    claim: ApproxDP = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))
    size: int = 160

    def sample(self, data, n, rng):
        z = rng.standard_normal(n)
        extra = np.empty(n)
        for i in range(n):  # per-draw work standing in for a refit
            a = rng.standard_normal((self.size, self.size))
            extra[i] = np.linalg.eigvalsh(a @ a.T)[0] * 1e-12
        return (data.y.sum() + 3.73 * z + extra)[:, None]


def _pin_blas() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def _time(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> int:
    from dask.distributed import Client, LocalCluster

    cheap, data = get("P.1/gaussian-sum").make()
    slow = SlowRelease()
    d1 = data.with_target(0, float(data.y[0]) + 1.0)
    cases = [("cheap Gaussian", cheap, 2_000_000, 1.10, None),
             ("~1 ms per draw", slow, 6_000, None, 1.6)]
    ok = True
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.run(_pin_blas)
        for name, mech, n, max_ratio, min_speedup in cases:
            t0 = time.perf_counter()
            mech.sample(data, 50, np.random.default_rng(0))
            per_draw = (time.perf_counter() - t0) / 50
            ts, rs = _time(lambda m=mech, n=n: audit_blackbox(
                m, data, d1, n=n, rng=np.random.default_rng(3)))
            load_s = os.getloadavg()[0]
            batching = BatchingExecutor(client)
            tp, rp = _time(lambda m=mech, n=n, b=batching: audit_blackbox(
                m, data, d1, n=n, rng=np.random.default_rng(3), executor=b))
            load_p = os.getloadavg()[0]
            same = rs.estimate == rp.estimate and rs.details["tests"] == rp.details["tests"]
            ratio = tp / ts
            line = (f"{name:<16} {per_draw * 1e3:7.3f} ms/draw  n={n:>9}  serial {ts:6.2f} s "
                    f"(load {load_s:.1f})  2 workers {tp:6.2f} s (load {load_p:.1f})  "
                    f"parallel/serial {ratio:.2f}  tasks sent {batching.submitted}  "
                    f"bit-identical {same}")
            if max_ratio is not None:
                good = ratio <= max_ratio
                line += f"  target <= {max_ratio}: {'ok' if good else 'MISS'}"
            else:
                good = 1 / ratio >= min_speedup
                line += f"  speed-up {1 / ratio:.2f}, target >= {min_speedup}: " \
                        f"{'ok' if good else 'MISS'}"
            ok &= good and same
            print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
