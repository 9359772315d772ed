"""The rounding attack on a naive release, caught by A.7; the hardened release passing.

For the notebooks (00 basics or 05 auditing lab; issue 10 §1, catalogue A.7). A pure
function: it returns rows of plain data, and the notebook draws or prints them.

For each (naive twin, hardened mechanism) pair of the catalogue, it

1. builds the attack pair at huge other targets (A.7's "aligned" candidate at 1e17 for
   the naive release, the same construction at the declared domain bound for the
   hardened one) and counts the distinct values among ``pilot`` releases per side;
2. runs the precision auditor (A.7) on the default data, which finds the pair itself
   and hands it to the black-box auditor for a certified ε lower bound.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.audit.precision import audit_precision, precision_pairs
from dpgp_audit.catalogue import get

__all__ = ["ATTACK_PAIRS", "rounding_attack"]

#: (naive release as shipped before declared domains, hardened mechanism)
ATTACK_PAIRS: tuple[tuple[str, str], ...] = (
    ("planted/gaussian-sum-no-domain", "P.1/gaussian-sum"),
    ("planted/cloaking-no-domain", "S18.2/cloaking"),
)


def rounding_attack(rng: np.random.Generator, *,
                    pairs: Sequence[tuple[str, str]] = ATTACK_PAIRS, n: int = 20_000,
                    pilot: int = 2_000, scale: float = 1e17) -> list[dict]:
    """One row per mechanism: the attack's footprint and A.7's verdict.

    Parameters
    ----------
    rng
        Generator (children for the attack pilot and for each audit).
    pairs
        (naive, hardened) catalogue IDs.
    n
        Black-box samples per side in A.7's certification.
    pilot
        Releases per side for counting distinct values.
    scale
        Magnitude of the other targets in the naive attack.

    Returns
    -------
    list of dict
        ``id``, ``kind`` (``"naive"``/``"hardened"``), ``domain`` (the bound on |y| or
        ``None``), ``attack`` (the pair's label), ``refused`` (the mechanism refused the
        attack pair), ``distinct`` (distinct released values per side, smallest
        coordinate), ``verdict``, ``epsilon_lb`` (A.7's certified bound), ``claimed`` and
        ``witness`` (label of A.7's witness pair, if any).
    """
    rng = check_rng(rng)
    n = check_positive_int("n", n)
    pilot = check_positive_int("pilot", pilot)
    rows = []
    for naive, hardened in pairs:
        for kind, mech_id in (("naive", naive), ("hardened", hardened)):
            mech, data = get(mech_id).make()
            claim = mech.claim
            bound = None if claim.domain is None else claim.domain.y_bound
            r_pair, r0, r1, r_audit = rng.spawn(4)
            pair = precision_pairs(data, claim.relation, r_pair, y_bound=bound, per_scale=1,
                                   scales=(scale,))[0]
            row: dict = {"id": mech_id, "kind": kind, "domain": bound, "attack": pair.label,
                         "refused": False, "distinct": None}
            try:
                s0 = np.asarray(mech.sample(pair.d0, pilot, r0)).reshape(pilot, -1)
                s1 = np.asarray(mech.sample(pair.d1, pilot, r1)).reshape(pilot, -1)
                row["distinct"] = [int(min(len(np.unique(s[:, k])) for k in range(s.shape[1])))
                                   for s in (s0, s1)]
            except ValueError:
                row["refused"] = True
            # the rounding attack at huge legal targets (issue 10); the float-support test at
            # ordinary pairs (on by default) is another attack, left out here
            res = audit_precision(mech, data, r_audit, n=n, support=False)
            row.update(verdict=res.verdict.value, epsilon_lb=res.estimate,
                       claimed=res.claimed, witness=res.details.get("witness_label"))
            rows.append(row)
    return rows
