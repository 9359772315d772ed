"""dp4gp 1.01's cloaking (the S18 authors' code) audited through the virtualenv bridge.

dp4gp needs numpy < 2 and GPy; the kit needs numpy >= 2. ``make audit-thirdparty``
builds ``.venv-dp4gp/`` from ``requirements-dp4gp.txt`` (then ``pip install --no-deps
dp4gp==1.01``; pip names it 1.1) and this factory runs dp4gp's code there, in one child
process, seeded from the audit (dp4gp draws from numpy's global state).

The claim is dp4gp's documented guarantee, written by the user: ``DPGP_cloaking(model,
sens, epsilon, delta)`` gives (ε, δ)-DP predictions when one training target changes by
at most ``sens`` (the inputs are public: outputs-only relation, d = sens), here with the
targets of the audited data in the public domain |y| <= 1. dp4gp itself asserts ε <= 1.

Audit it with the kit's command line (after ``make audit-thirdparty`` built the envs)::

    .venv-thirdparty/bin/python -m dpgp_audit audit \
        --mechanism examples/third_party/dp4gp_bridge.py:cloaking --seed 1
"""

from __future__ import annotations

import os

import numpy as np

from dpgp_audit import ApproxDP, PublicDomain, outputs_only
from dpgp_audit.adapters import bridged

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
#: The dp4gp environment's interpreter (override with $DPGP_DP4GP_PYTHON).
PYTHON = os.environ.get("DPGP_DP4GP_PYTHON", os.path.join(ROOT, ".venv-dp4gp", "bin", "python"))
#: Test inputs: k points spread over the inputs' range (public).
N_TEST = 10


def cloaking(data, epsilon=1.0, delta=0.01, sens=1.0, n_its=1000, lambda_scale=1.0):
    """dp4gp's ``DPGP_cloaking`` on ``data`` (its inputs are public), served by the bridge.

    ``lambda_scale`` multiplies the λ dp4gp's optimiser returns (1: dp4gp as shipped).
    """
    X = np.asarray(data.X, dtype=float)
    X_test = np.linspace(X.min(axis=0), X.max(axis=0), N_TEST)
    claim = ApproxDP(epsilon=epsilon, delta=delta, relation=outputs_only(sens),
                     domain=PublicDomain(y_bound=1.0))
    kwargs = {"X": X.tolist(), "X_test": X_test.tolist(), "sens": sens, "epsilon": epsilon,
              "delta": delta, "n_its": n_its, "lambda_scale": lambda_scale}
    return bridged(PYTHON, os.path.join(HERE, "dp4gp_cloaking.py") + ":Cloaking", claim,
                   seeding="numpy_global", vectorised=True, kwargs=kwargs,
                   name="dp4gp 1.01 DPGP_cloaking", env={"OMP_NUM_THREADS": "1",
                                                          "OPENBLAS_NUM_THREADS": "1"})


def cloaking_overshoot(data, epsilon=1.0, delta=0.01):
    """dp4gp's cloaking when its λ overshoot the optimum tenfold (../shared/design/AUDITING.md).

    dp4gp's ``calcDelta`` returns ``max c^T M^+ c`` without the square root the proof needs;
    at its optimiser's usual result that value exceeds 1 and the release is over-noised,
    but when λ are larger than the optimum (another initialisation, too long a step, a
    user's λ) it falls below 1 and the release is under-noised.
    """
    return cloaking(data, epsilon=epsilon, delta=delta, lambda_scale=10.0)
