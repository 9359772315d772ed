"""IBM's diffprivlib 0.6.6 statistics through the A.10 adapter (``random_state`` seeding).

Each factory takes the audited dataset and ε (the command line's rule: keyword arguments
named ``data``, ``epsilon``) and returns a mechanism whose release is one call of the
library per draw. The claims are diffprivlib's documented guarantees, written here by
the user, not by the adapter: ``diffprivlib.tools.mean/var/std(array, epsilon, bounds)``
satisfy ε-differential privacy for data within ``bounds``; the dataset has a fixed, public
size and one record is replaced, so with ``bounds=(-1, 1)`` one target moves by at most 2
(outputs-only relation, d = 2) inside the public domain |y| <= 1.

Audit one with the kit's command line (``make audit-thirdparty`` runs them all)::

    .venv-thirdparty/bin/python -m dpgp_audit audit \
        --mechanism examples/third_party/diffprivlib_tools.py:mean --seed 1
"""

from __future__ import annotations

import numpy as np
from diffprivlib import tools
from diffprivlib.accountant import BudgetAccountant

from dpgp_audit import PublicDomain, PureDP, outputs_only
from dpgp_audit.adapters import adapt
from dpgp_audit.norms import L1

BOUNDS = (-1.0, 1.0)


def _claim(epsilon: float) -> PureDP:
    return PureDP(epsilon=epsilon, relation=outputs_only(BOUNDS[1] - BOUNDS[0]),
                  domain=PublicDomain(y_bound=BOUNDS[1]))


def _statistic(tool, epsilon: float, name: str, exact=None, sensitivity=None):
    def release(data, random_state):
        # a fresh accountant per call: the global one would record every draw of the audit
        return tool(data.y, epsilon=epsilon, bounds=BOUNDS, random_state=random_state,
                    accountant=BudgetAccountant())

    extra = {}
    if exact is not None:  # the noise-free statistic: enables the sensitivity checker
        extra = {"query": exact, "norm": L1(), "sensitivity_bound": sensitivity}
    return adapt(release, _claim(epsilon), seeding="random_state", name=name, **extra)


def _clipped(data):
    return np.clip(np.asarray(data.y, dtype=float), *BOUNDS)  # diffprivlib clips to bounds


def mean(data, epsilon=1.0):
    """``diffprivlib.tools.mean`` (Laplace, sensitivity (upper - lower) / n).

    The noise-free mean of the clipped targets and its documented sensitivity are given
    too, so the sensitivity checker and the model ranking of pairs run.
    """
    width = BOUNDS[1] - BOUNDS[0]
    return _statistic(tools.mean, epsilon, "diffprivlib.tools.mean",
                      exact=lambda d: np.array([_clipped(d).mean()]),
                      sensitivity=width / data.n)


def var(data, epsilon=1.0):
    """``diffprivlib.tools.var`` (Laplace on the bounded variance).

    Its documented sensitivity is (upper - lower)^2 (n - 1) / n^2.
    """
    width, n = BOUNDS[1] - BOUNDS[0], data.n
    return _statistic(tools.var, epsilon, "diffprivlib.tools.var",
                      exact=lambda d: np.array([_clipped(d).var()]),
                      sensitivity=width ** 2 * (n - 1) / n ** 2)


def std(data, epsilon=1.0):
    """``diffprivlib.tools.std`` (the square root of ``var``'s release)."""
    return _statistic(tools.std, epsilon, "diffprivlib.tools.std")


def median(data, epsilon=1.0):
    """``diffprivlib.tools.median`` (exponential mechanism over the bounded range)."""
    return _statistic(tools.median, epsilon, "diffprivlib.tools.median")
