"""OpenDP 0.16 measurements on a bounded sum through the A.10 adapter (unseedable).

OpenDP draws its noise from the operating system's entropy inside its Rust core and
offers no seed: the adapter marks these mechanisms **not reproducible** (the report says
so). Their draws are still independent, so every statistical guarantee of the audit holds;
only ``--seed`` no longer repeats the noise.

The claim is the measurement's own privacy map, written by the user: the dataset has a
fixed, public size N, one record is replaced (symmetric distance 2), and each target lies
in the measurement's declared bounds [-1, 1], so one target moves by at most 2 (outputs-only
relation, d = 2, public domain |y| <= 1). ``meas.map(2)`` states ε for the Laplace
measurement (pure DP) and ρ for the Gaussian one (zero-concentrated DP).

Audit with the kit's command line (``make audit-thirdparty`` runs both)::

    .venv-thirdparty/bin/python -m dpgp_audit audit \
        --mechanism examples/third_party/opendp_sum.py:laplace_sum --seed 1
"""

from __future__ import annotations

import opendp.prelude as dp

from dpgp_audit import ZCDP, PublicDomain, PureDP, outputs_only
from dpgp_audit.adapters import adapt

dp.enable_features("contrib")

BOUND = 1.0
#: A replacement of one record, in OpenDP's symmetric distance.
REPLACE_ONE = 2


def _sum_space(n: int) -> tuple:
    domain = dp.vector_domain(dp.atom_domain(bounds=(-BOUND, BOUND), nan=False), size=n)
    return domain, dp.symmetric_distance()


def _relation_and_domain() -> dict:
    return {"relation": outputs_only(2 * BOUND), "domain": PublicDomain(y_bound=BOUND)}


def _adapt(meas, claim, name: str):
    def release(data):
        return meas([float(v) for v in data.y])

    return adapt(release, claim, seeding="unseedable", name=name)


def laplace_sum(data, epsilon=1.0):
    """``make_sum >> then_laplace(scale)`` with the scale that gives ``epsilon`` at d_in = 2."""
    space = _sum_space(data.n)
    meas = dp.binary_search_chain(
        lambda s: space >> dp.t.then_sum() >> dp.m.then_laplace(scale=s),
        d_in=REPLACE_ONE, d_out=epsilon)
    claim = PureDP(epsilon=meas.map(REPLACE_ONE), **_relation_and_domain())
    return _adapt(meas, claim, "opendp make_sum >> make_laplace")


def gaussian_sum(data, rho=0.5):
    """``make_sum >> then_gaussian(scale)``, zero-concentrated DP with ``rho`` at d_in = 2."""
    space = _sum_space(data.n)
    meas = dp.binary_search_chain(
        lambda s: space >> dp.t.then_sum() >> dp.m.then_gaussian(scale=s),
        d_in=REPLACE_ONE, d_out=rho)
    claim = ZCDP(rho=meas.map(REPLACE_ONE), **_relation_and_domain())
    return _adapt(meas, claim, "opendp make_sum >> make_gaussian")
