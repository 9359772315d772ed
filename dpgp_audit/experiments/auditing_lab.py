"""Experiments on the auditors themselves, for the auditing lab notebook (catalogue A.5, A.6).

* :func:`audit_planted_suite` — every planted bug audited by the cheapest
  auditor able to see it, at the sample size it needs (its row of
  :func:`dpgp_audit.bugs.zoo.planted`), next to its correct twin audited the same way;
* :func:`audit_blindspot_suite` — the planted bugs of the default path's former
  blind spots (issue 15 §1: atoms, a sampler that contradicts its own model,
  data-dependent noise, vector answers, bin edges), each audited by the *default
  path* — no auditor, pair or score chosen by hand — next to its correct twin;
* :func:`detection_rate` — how often an auditor flags a mechanism on a fixed
  pair, as a function of the samples per side (empirical power, with
  Clopper–Pearson intervals on the rate).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.audit.neighbours import NeighbourPair
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.audit.stats import cp_lower, cp_upper
from dpgp_audit.bugs import zoo
from dpgp_audit.catalogue import get
from dpgp_audit.contract import Mechanism

__all__ = ["audit_blindspot_suite", "audit_planted_suite", "detection_rate"]


def audit_blindspot_suite(rng: np.random.Generator, *, n_scale: float = 1.0) -> list[dict]:
    """Audit every blind-spot planted bug and its twin on the default path.

    ``audit_mechanism(mech, data, rng, n=n, mode="fixed")`` with its other defaults
    (every auditor the mechanism supports, generated pairs, automatic scores), at
    exactly the samples per side stated in their rows of :func:`dpgp_audit.bugs.zoo.planted`
    (times ``n_scale``;
    at least 2 000 so the black-box has something to fit). Fixed mode, because the
    table states what a given n catches; the sequential default path with its cap
    catches the same bugs (docs/own-code.md).

    Returns
    -------
    list of dict
        One row per bug: ``id``, ``class``, ``n``, ``verdict``, ``caught_by`` (the
        auditors that found a violation), ``twin``, ``twin_verdict``, ``seconds``.
    """
    rng = check_rng(rng)
    bugs = [b for b in zoo.planted() if b.bug_class]
    rows = []
    for bug, child in zip(bugs, rng.spawn(len(bugs)), strict=True):
        n_used = max(2_000, int(round(bug.n * n_scale)))
        r_bug, r_twin = child.spawn(2)
        out = {"id": bug.id, "class": bug.bug_class, "n": n_used, "twin": bug.twin}
        t = time.perf_counter()
        kw = bug.audit_kwargs
        for key, ident, r in (("", bug.id, r_bug), ("twin_", bug.twin, r_twin)):
            mech, data = get(ident).make()
            rep = audit_mechanism(mech, data, r, n=n_used, name=ident,
                                  **{"mode": "fixed", **kw})
            out[f"{key}verdict"] = rep.verdict.value
            if not key:
                out["caught_by"] = [x.auditor for x in rep.results if x.violation]
        out["seconds"] = time.perf_counter() - t
        rows.append(out)
    return rows


def audit_planted_suite(rng: np.random.Generator, *, ids: Sequence[str] | None = None,
                        n_scale: float = 1.0, progress: bool = False) -> list[dict]:
    """Audit each planted bug (and its twin) with its cheapest auditor.

    In fixed mode (``audit_mechanism(..., mode="fixed")``): exactly the samples per
    side that the bug's row of :func:`dpgp_audit.bugs.zoo.planted` states.

    Parameters
    ----------
    rng
        Generator; each bug and each twin gets a spawned child.
    ids
        Planted IDs (default: every planted bug of the zoo).
    n_scale
        Multiply the stated sample sizes (e.g. 0.5 to see where an audit starts
        to miss); deterministic auditors ignore it.
    progress
        tqdm bar over the bugs.

    Returns
    -------
    list of dict
        One row per bug: ``id``, ``title``, ``true_epsilon``, ``auditor``, ``n``,
        ``verdict``, ``estimate``, ``quantity``, ``guarantee``, ``twin``,
        ``twin_verdict``, ``seconds``, ``control`` (True for a negative control: a
        planted variant whose true ε does not exceed its claim, so it must not be flagged).
    """
    rng = check_rng(rng)
    ids = [b.id for b in zoo.planted()] if ids is None else list(ids)
    it = ids
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(ids, desc="planted bugs")
    rows = []
    for mech_id, child in zip(it, rng.spawn(len(ids)), strict=True):
        bug = zoo.get(mech_id)
        auditor, n, kw = bug.caught_by, bug.n, bug.audit_kwargs
        n_used = max(2, int(round(n * n_scale))) if n else 2
        entry = get(mech_id)
        mech, data = entry.make()
        r_bug, r_twin = child.spawn(2)
        t = time.perf_counter()
        kw = {"mode": "fixed", **kw}  # the table states exact draws per side
        report = audit_mechanism(mech, data, r_bug, auditors=(auditor,), n=n_used,
                                 name=mech_id, **kw)
        seconds = time.perf_counter() - t
        res = report.result(auditor)
        twin_verdict = None
        if entry.twin is not None:
            twin_entry = get(entry.twin)
            twin_mech, twin_data = twin_entry.make(**{k: v for k, v in entry.defaults.items()
                                                      if k in twin_entry.defaults})
            twin_report = audit_mechanism(twin_mech, twin_data, r_twin, auditors=(auditor,),
                                          n=n_used, name=entry.twin, **kw)
            twin_verdict = twin_report.verdict.value
        rows.append({
            "id": mech_id, "title": entry.title, "true_epsilon": entry.true_epsilon,
            "auditor": auditor, "n": n if n else 0, "n_used": n_used if n else 0,
            "verdict": report.verdict.value if res is None else res.verdict.value,
            "estimate": None if res is None else res.estimate,
            "claimed": None if res is None else res.claimed,
            "quantity": None if res is None else res.quantity,
            "guarantee": None if res is None else res.guarantee.value,
            "twin": entry.twin, "twin_verdict": twin_verdict, "seconds": seconds,
            # a planted variant whose true ε does not exceed its claim is still private:
            # a negative control, which the auditor must NOT flag
            "control": bool(entry.true_epsilon <= mech.claim.epsilon * (1 + 1e-9)),
        })
    return rows


def detection_rate(mechanism: Mechanism, pair: NeighbourPair, sizes: Sequence[int], reps: int,
                   rng: np.random.Generator, *, auditor: str = "blackbox", alpha: float = 0.05,
                   confidence: float = 0.95, progress: bool = False) -> dict:
    """Empirical power: the share of ``reps`` independent audits of ``pair`` that flag a violation.

    Parameters
    ----------
    mechanism
        Any :class:`~dpgp_audit.contract.Mechanism`.
    pair
        The neighbour pair to audit (e.g. a sensitivity witness).
    sizes
        Samples per side to try.
    reps
        Independent audits per size.
    rng
        Generator (spawned per size and repetition).
    auditor
        ``"blackbox"`` or ``"gdp-fit"``.
    alpha
        Level of each audit.
    confidence
        Level of the Clopper–Pearson interval on each rate.

    Returns
    -------
    dict
        ``sizes``, ``rate``, ``rate_lo``, ``rate_hi``, ``hits``, ``reps``, ``auditor``.
    """
    from dpgp_audit.audit.blackbox import fixed as blackbox
    from dpgp_audit.audit.blackbox import gdp_fit

    rng = check_rng(rng)
    reps = check_positive_int("reps", reps)
    sizes = [check_positive_int("sizes[i]", int(s)) for s in sizes]
    fn = {"blackbox": blackbox.audit_blackbox, "gdp-fit": gdp_fit.audit_gdp_fit}.get(auditor)
    if fn is None:
        raise ValueError(f"auditor must be 'blackbox' or 'gdp-fit', got {auditor!r}")
    hits = []
    it = list(zip(sizes, rng.spawn(len(sizes)), strict=True))
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc=f"power ({auditor})")
    for n, child in it:
        k = 0
        for r in child.spawn(reps):
            k += fn(mechanism, pair.d0, pair.d1, n=n, rng=r, alpha=alpha).violation
        hits.append(k)
    hits_arr = np.asarray(hits)
    a = (1 - confidence) / 2
    return {"sizes": sizes, "hits": hits, "reps": reps, "auditor": auditor,
            "rate": (hits_arr / reps).tolist(),
            "rate_lo": np.atleast_1d(cp_lower(hits_arr, reps, a)).tolist(),
            "rate_hi": np.atleast_1d(cp_upper(hits_arr, reps, a)).tolist()}
