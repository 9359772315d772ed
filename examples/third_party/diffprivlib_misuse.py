"""diffprivlib 0.6.6 used the way a hurried user uses it: three misuses and a control.

The library is correct; each factory below misuses it in a way that reaches real code.
The claims are what the user believes they get (ε-DP for targets in [-1, 1], one record
replaced: outputs-only relation, d = 2), written by the user, as in
``diffprivlib_tools.py``. Audit one with the kit's command line::

    .venv-thirdparty/bin/python -m dpgp_audit audit \
        --mechanism examples/third_party/diffprivlib_misuse.py:mean_bounds_from_data --seed 1

* ``mean_bounds_from_data`` leaves ``bounds`` out: diffprivlib then takes them from the data
  and says so with a ``PrivacyLeakWarning``, which the user silenced. On targets that are
  all equal the bounds collapse and so does the noise.
* ``mean_and_var_each_at_eps`` releases the mean and the variance, each at the full ε, and
  claims ε for the pair (the composition is 2ε).
* ``mean_fixed_random_state`` passes ``random_state=42`` "for reproducibility" instead of
  the generator it is handed: every release of a dataset is the same number.
* ``mean_at_half_eps`` (the control) calls the mean at ε/2 and claims ε: more private than
  claimed as a real-number mechanism. Its float release is what ``diffprivlib_tools.mean``'s
  is: A.7's float-support test flags the library's textbook Laplace outputs on both
  (docs/own-code.md), so the control is judged by the black-box auditor.
"""

from __future__ import annotations

import warnings

import numpy as np
from diffprivlib import tools
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.utils import PrivacyLeakWarning

from dpgp_audit import PublicDomain, PureDP, outputs_only
from dpgp_audit.adapters import adapt

BOUNDS = (-1.0, 1.0)


def _claim(epsilon: float) -> PureDP:
    return PureDP(epsilon=epsilon, relation=outputs_only(BOUNDS[1] - BOUNDS[0]),
                  domain=PublicDomain(y_bound=BOUNDS[1]))


def mean_bounds_from_data(data, epsilon=1.0):
    """MISUSE: ``tools.mean`` without ``bounds`` (taken from the data; the warning silenced)."""
    def release(d, random_state):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            return tools.mean(d.y, epsilon=epsilon, random_state=random_state,
                              accountant=BudgetAccountant())
    return adapt(release, _claim(epsilon), seeding="random_state",
                 name="diffprivlib mean, bounds from the data")


def mean_and_var_each_at_eps(data, epsilon=1.0):
    """MISUSE: the mean and the variance, each at the full ε, the pair claimed at ε."""
    def release(d, random_state):
        acc = BudgetAccountant()
        m = tools.mean(d.y, epsilon=epsilon, bounds=BOUNDS, random_state=random_state,
                       accountant=acc)
        v = tools.var(d.y, epsilon=epsilon, bounds=BOUNDS, random_state=random_state,
                      accountant=acc)
        return np.array([m, v])
    return adapt(release, _claim(epsilon), seeding="random_state",
                 name="diffprivlib mean and var, each at eps")


def mean_fixed_random_state(data, epsilon=1.0):
    """MISUSE: ``random_state=42`` instead of the generator handed to the release."""
    def release(d, random_state):
        del random_state  # the mistake: a constant seed "for reproducibility"
        return tools.mean(d.y, epsilon=epsilon, bounds=BOUNDS, random_state=42,
                          accountant=BudgetAccountant())
    return adapt(release, _claim(epsilon), seeding="random_state",
                 name="diffprivlib mean, random_state=42")


def mean_at_half_eps(data, epsilon=1.0):
    """Control: the mean at ε/2, claimed at ε (private as a real-number mechanism)."""
    def release(d, random_state):
        return tools.mean(d.y, epsilon=epsilon / 2, bounds=BOUNDS, random_state=random_state,
                          accountant=BudgetAccountant())
    return adapt(release, _claim(epsilon), seeding="random_state",
                 name="diffprivlib mean at eps/2")
