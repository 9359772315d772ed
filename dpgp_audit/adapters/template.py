"""The commented mechanism template of ``python -m dpgp_audit new-mechanism`` (A.10).

:data:`TEMPLATE` is a complete, correct mechanism that audits cleanly as written
(``tests/cli/test_usercode.py`` writes it, audits it with the command line and expects
exit status 0): a Gaussian mechanism on the mean of bounded targets, with every part of
the contract explained where it is written.
"""

from __future__ import annotations

import os

__all__ = ["TEMPLATE", "TEMPLATE_NAME", "write_template"]

#: The class the template defines (``--mechanism FILE.py:MyMechanism``).
TEMPLATE_NAME = "MyMechanism"

TEMPLATE = '''\
"""My mechanism, in the dpgp_audit contract (written by `dpgp-audit new-mechanism`).

Audit it with
    python -m dpgp_audit audit --mechanism THIS_FILE.py:MyMechanism [--data my.csv --y COL]
or  make audit MECH=THIS_FILE.py:MyMechanism DATA=my.csv Y=COL

How the command line builds it: a class (or function) is called with the keyword
arguments it names among `data` (the dataset audited) and the overrides given on the
command line (`epsilon`, `delta`); an instance is used as it is.
"""

import numpy as np

from dpgp_audit import ApproxDP, PublicDomain, outputs_only
from dpgp_audit.norms import L2
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
from dpgp_audit.privacy.float_release import float_safe_release, iid_gaussian_release


class MyMechanism:
    """Releases the mean of the targets plus Gaussian noise."""

    def __init__(self, data, epsilon=1.0, delta=1e-5):
        # (1) THE CLAIM: the guarantee you promise, as data. It has three parts:
        #   - the level: ApproxDP(epsilon, delta); also PureDP, GaussianDP(mu), ZCDP(rho);
        #   - the neighbour relation: outputs_only(d) = X is public and one target moves
        #     by at most d; whole_rows(b) = one (x, y) row is replaced, |y| <= b;
        #   - the public domain (dpgp_audit/privacy/domain.py): |y| <= y_bound. Data
        #     outside it is refused. Without a domain the auditors may try huge targets,
        #     and floating-point rounding then leaks (the precision auditor reports it).
        # Here targets lie in [-1, 1], so one change moves a target by at most 2.
        # Under outputs_only the inputs, and so the size, are public: storing it is fine.
        # A whole_rows claim covers datasets of every size (the audit tries one and two
        # rows): there, compute what depends on the size from data.n inside sample().
        self.n = data.n
        # the mean moves by at most 2 / n when one target moves by 2
        self.sigma = analytic_gaussian_sigma(epsilon, delta, self.sensitivity_bound())
        # float_tv: the release is rounded to a public grid (see (2)); its floats are within
        # this total variation of the exact mechanism, which adds (1 + e^eps) x it to delta
        self.claim = ApproxDP(epsilon=epsilon, delta=delta, relation=outputs_only(2.0),
                              domain=PublicDomain(y_bound=1.0),
                              float_tv=iid_gaussian_release([self.sigma]).tv)

    # (2) THE RELEASE (required): n independent draws, shape (n, *output_shape),
    # vectorised, drawing only from the generator it is given. Floats are part of the
    # release: `mean + sigma * z` as a float carries the low bits of the mean wherever the
    # noise cancels it (Mironov 2012), which the precision auditor's float-support test
    # flags. float_safe_release rounds the exact sum to a public power-of-two grid of about
    # sigma / 1500 (docs/auditors.md, "Float-safe releases").
    def sample(self, data, n, rng):
        # mean() refuses targets outside the declared domain (ValueError)
        return float_safe_release(self.mean(data), self.sigma * rng.standard_normal((n, 1)),
                                  self.sigma)

    # (3) OPTIONAL, the exact white-box audit (GaussianRelease): the release given `data`
    # is N(mean(data), cov(data)). The model check tests sample() against these.
    def mean(self, data):
        y = self.claim.domain.targets(data.y)
        return np.array([y.mean()])

    def cov(self, data):
        return np.array([[self.sigma ** 2]])

    # (4) OPTIONAL, the sensitivity checker (SensitivityQuery): the noise-free query,
    # the norm your proof bounds and the bound itself.
    norm = L2()

    def query(self, data):
        return self.mean(data)

    def sensitivity_bound(self):
        return 2.0 / self.n
'''


def write_template(path: str | None) -> str:
    """The template's text; with ``path``, also written there (refusing to overwrite)."""
    if path is not None:
        if not path.endswith(".py"):
            raise ValueError(f"new-mechanism: the path must end in .py, got {path!r}")
        if os.path.exists(path):
            raise ValueError(f"new-mechanism: {path!r} exists; choose another path "
                             "(nothing was overwritten)")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise ValueError(f"new-mechanism: the folder {folder!r} does not exist")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(TEMPLATE)
    return TEMPLATE
