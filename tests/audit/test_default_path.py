"""Issue 15: the library's default path is the CLI's default path (catalogue A.6, A.8).

``audit_mechanism(mech, data, rng)``, ``python -m dpgp_audit audit`` and
``dpgp_audit.testing.assert_private`` share one black-box mode, one draw cap and the time
guard of :mod:`dpgp_audit.audit.runner` (issue 20: budgets are draws, the guard only
guards); and that default catches a hurried-user bug (:mod:`dpgp_audit.bugs.mutants`) that
the fixed split at n = 20 000 misses.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from scipy import stats

from dpgp_audit import cli, testing
from dpgp_audit.audit import runner
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.runner import (
    DEFAULT_AUDITORS,
    DEFAULT_MODE,
    DEFAULT_TIME_GUARD_S,
    FIXED_DEFAULT_N,
    SEQUENTIAL_DEFAULT_N,
    SEQUENTIAL_HEADROOM,
    audit_mechanism,
    default_n,
)
from dpgp_audit.bugs.mutants import build_form, mutants
from dpgp_audit.catalogue import get
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.methods.toolbox.primitives import GaussianSumMechanism


# ----------------------------------------------------------------------------- one path
def test_library_defaults_are_the_sequential_default_path():
    params = inspect.signature(audit_mechanism).parameters
    assert params["mode"].default == DEFAULT_MODE == "sequential"
    assert params["n"].default is None  # the mode's default, below
    assert params["time_guard_s"].default == DEFAULT_TIME_GUARD_S
    assert params["auditors"].default == DEFAULT_AUDITORS
    assert default_n("sequential") == SEQUENTIAL_DEFAULT_N == SEQUENTIAL_HEADROOM * FIXED_DEFAULT_N
    assert (FIXED_DEFAULT_N, SEQUENTIAL_DEFAULT_N) == (20_000, 200_000)
    assert default_n("fixed") == FIXED_DEFAULT_N
    with pytest.raises(ValueError, match="mode"):
        default_n("adaptive")
    # assert_private is the same path: its defaults are the library's constants
    ap = inspect.signature(testing.assert_private).parameters
    assert ap["time_guard_s"].default == DEFAULT_TIME_GUARD_S
    assert ap["max_n"].default == SEQUENTIAL_DEFAULT_N


def test_cli_parser_defaults_are_the_library_constants():
    parser, _ = cli.build_parser()
    args = parser.parse_args(["audit", "--mechanism", "P.1/gaussian-sum"])
    assert args.mode == DEFAULT_MODE
    assert args.samples is None and args.budget_s is None  # filled in from the catalogue rule
    assert args.time_guard_s == DEFAULT_TIME_GUARD_S
    assert cli._samples_for(args, get("P.1/gaussian-sum")) == default_n(DEFAULT_MODE)
    fixed = parser.parse_args(["audit", "--mechanism", "P.1/gaussian-sum", "--mode", "fixed"])
    assert cli._samples_for(fixed, get("P.1/gaussian-sum")) == FIXED_DEFAULT_N


def _recording(calls):
    """Stand-in for audit_mechanism: record the keywords, run a quick exact audit."""
    real = runner.audit_mechanism

    def record(mech, data, rng, **kw):
        calls.append(kw)
        # blas_threads=None: the real function would otherwise re-enter the patched name
        return real(mech, data, rng, auditors=("whitebox",), name=kw.get("name"),
                    blas_threads=None)
    return record


def test_cli_runs_the_library_default_path_with_the_same_guard(monkeypatch, capsys):
    calls: list[dict] = []
    monkeypatch.setattr(runner, "audit_mechanism", _recording(calls))
    code = cli.main(["audit", "--mechanism", "P.1/gaussian-sum", "--seed", "3",
                     "--no-progress"])
    capsys.readouterr()
    assert code == 0 and len(calls) == 1
    kw = calls[0]
    assert kw["mode"] == DEFAULT_MODE
    assert kw["n"] == default_n(DEFAULT_MODE)  # one mechanism: the library's cap
    assert kw["time_guard_s"] == DEFAULT_TIME_GUARD_S  # the same guard, shared constant
    assert "budget_s" not in kw
    assert tuple(kw["auditors"]) == DEFAULT_AUDITORS
    calls.clear()
    assert cli.main(["audit", "--mechanism", "P.1/gaussian-sum", "--seed", "3", "--mode",
                     "fixed", "--no-progress"]) == 0
    capsys.readouterr()
    assert (calls[0]["mode"], calls[0]["n"], calls[0]["time_guard_s"]) == (
        "fixed", FIXED_DEFAULT_N, DEFAULT_TIME_GUARD_S)


def test_assert_private_runs_the_library_default_path(monkeypatch):
    calls: list[dict] = []
    monkeypatch.setattr(testing, "audit_mechanism", _recording(calls))
    mech = GaussianSumMechanism(d=1.0, epsilon=1.0, delta=1e-5)
    testing.assert_private(mech, default_dataset(), np.random.default_rng(0))
    kw = calls[0]
    assert (kw["mode"], kw["n"], kw["time_guard_s"]) == (DEFAULT_MODE, SEQUENTIAL_DEFAULT_N,
                                                         DEFAULT_TIME_GUARD_S)


def test_n_none_is_the_modes_default_and_the_guard_is_recorded():
    mech = GaussianSumMechanism(d=1.0, epsilon=1.0, delta=1e-5)
    rep = audit_mechanism(mech, default_dataset(), np.random.default_rng(1),
                          auditors=("blackbox",), mode="fixed")
    assert rep.inputs["mode"] == "fixed"
    assert rep.inputs["time_guard_s"] == DEFAULT_TIME_GUARD_S and not rep.guard_fired
    assert rep.inputs["n_per_side"] == FIXED_DEFAULT_N
    assert rep.result("blackbox").details["n_per_side"] == FIXED_DEFAULT_N  # exactly n


@pytest.mark.parametrize(("kw", "word"), [
    ({"mode": "adaptive"}, "mode"), ({"n": 0}, "n"), ({"n": 2.5}, "n"),
    ({"budget_s": 0.0}, "budget_s"), ({"budget_s": math.nan}, "budget_s"),
    ({"budget_s": True}, "budget_s"), ({"budget_s": "10"}, "budget_s"),
    ({"time_guard_s": 0.0}, "time_guard_s"), ({"time_guard_s": -1}, "time_guard_s"),
    ({"time_guard_s": "10"}, "time_guard_s"), ({"cost_per_draw_s": 0.0}, "cost_per_draw_s"),
])
def test_bad_mode_n_or_budget_names_the_parameter(kw, word):
    mech = GaussianSumMechanism(d=1.0, epsilon=1.0, delta=1e-5)
    with pytest.raises((ValueError, TypeError), match=word):
        audit_mechanism(mech, default_dataset(), np.random.default_rng(0), **kw)


# ----------------------------------------------------------------------------- power
#: Atom mass of the mutant: the unperturbed sum is returned with probability 1e-3 = 100·δ.
ATOM = 1e-3
SEEDS = (0, 1, 2)


@pytest.mark.parametrize("form", ["sample", "model"])
def test_default_path_flags_the_rare_atom_that_fixed_n_misses(form):
    """``noise-skipped-rarely``: with probability 1e-3 the release is the exact sum.

    The atom sits at q(D) under D and has mass 0 under D′, so the true ε at δ = 1e-5 is
    infinite; but the event is rare. The fixed split at 20 000 per side certifies on about
    half of them, so it sees about 10 atom draws, while certifying ε > 1 against none on
    the other side at its Bonferroni share of α needs about 30 (docs/benchmarks.md, mutation
    benchmark): P(Poisson(10) >= 30) < 1e-6, so each fixed run misses. The sequential
    default may draw up to 200 000 per side, 200 atom draws expected; in exploration it
    stopped with a violation after 65 536 draws (7 of 8 runs) or 131 072 (1 of 8; seeds
    0–3, both forms), i.e. once it had seen about 65 to 130. Missing at the cap would need
    fewer than 65 atom draws out of an expected 200: P(Poisson(200) < 65) < 1e-20 per
    run. Each run takes well under a second (its budget is the draw cap, not seconds).
    """
    assert stats.poisson.sf(29, 10) < 1e-6 and stats.poisson.cdf(64, 200) < 1e-20
    spec = next(s for s in mutants(default_dataset()) if s.name == "noise-skipped-rarely")
    assert not spec.private
    for seed in SEEDS:
        mech = build_form(spec, form)
        default = audit_mechanism(mech, spec.data, np.random.default_rng(seed))
        bb = default.result("blackbox")
        assert default.inputs["mode"] == "sequential", default.inputs
        assert bb.verdict is Verdict.VIOLATION, default.table()
        assert bb.details["stopped"] == "violation"
        assert bb.details["n_per_side"] <= SEQUENTIAL_DEFAULT_N
        assert bb.details["reproduce"]["max_n"] == bb.details["n_per_side"]
        assert default.witness is not None

        fixed = audit_mechanism(mech, spec.data, np.random.default_rng(seed), mode="fixed")
        fb = fixed.result("blackbox")
        assert fb.details["n_per_side"] == FIXED_DEFAULT_N
        # the fixed split misses the atom (the report as a whole is flagged all the same:
        # the mutant's textbook float release leaks in its low bits, issue 20 §4)
        assert fb.verdict is not Verdict.VIOLATION, fixed.table()
        assert fb.estimate < fb.claimed


def test_all_answers_relation_confirms_every_pattern_pair_in_sequential_mode():
    # issue 20 §3: on two seeds of twenty the pilot ranked first two SVT patterns that do not
    # expose planted/svt-no-cutoff (all up, one up); every pattern is confirmed now
    from dpgp_audit.audit.defaults import ANSWERS_PAIRS, DEFAULT_PAIRS

    bug, data = get("planted/svt-no-cutoff").make()
    rep = audit_mechanism(bug, data, np.random.default_rng(0), auditors=("blackbox",),
                          n=4_000, time_guard_s=None)
    k = rep.inputs["pairs_generated"]
    assert 2 < k <= ANSWERS_PAIRS
    assert rep.inputs["n_pairs_confirmed"] == k == rep.result("blackbox").details["pairs"]
    fixed = audit_mechanism(bug, data, np.random.default_rng(0), auditors=("blackbox",),
                            n=400, mode="fixed")
    assert fixed.inputs["n_pairs_confirmed"] == DEFAULT_PAIRS  # no Bonferroni over all of them


class _MeanForOneSize:
    """A whole-rows Gaussian mean of targets in [-1, 1] with σ fixed for 20 rows (test-only).

    Correct on 20-row datasets (the mean moves by at most 2/20 when a row is replaced);
    the claim covers every size, and on one row the same σ is ten times too small for a
    move of 2. ``refuse`` makes it refuse other sizes, as docs/own-code.md advises.
    """

    def __init__(self, refuse: bool):
        from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
        from dpgp_audit.privacy.claims import ApproxDP, whole_rows
        from dpgp_audit.privacy.domain import PublicDomain
        from dpgp_audit.privacy.float_release import iid_gaussian_release

        self.refuse = refuse
        self.sigma = analytic_gaussian_sigma(1.0, 1e-5, 2.0 / 20)
        self.claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=whole_rows(1.0),
                              domain=PublicDomain(y_bound=1.0),
                              float_tv=iid_gaussian_release([self.sigma]).tv)

    def sample(self, data, n, rng):
        from dpgp_audit.privacy.float_release import float_safe_release

        if self.refuse and data.n != 20:
            raise ValueError(f"built for 20 rows, got {data.n}")
        y = self.claim.domain.targets(data.y)
        return float_safe_release(np.array([y.mean()]),
                                  self.sigma * rng.standard_normal((n, 1)), self.sigma)


def test_a_sigma_fixed_for_one_size_is_flagged_on_other_sizes_unless_they_are_refused():
    """Whole rows: datasets of one and two rows are neighbours too. A σ fixed for 20 rows
    breaks the claim there (μ = 2 / σ = 10 times the claim's on one row), and the grey-box
    auditor says so; refusing other sizes drops those pairs, with no finding (own-code)."""
    data = Dataset(np.linspace(0, 1, 20), np.sin(np.linspace(0, 6, 20)))
    fixed = audit_mechanism(_MeanForOneSize(False), data, np.random.default_rng(1),
                            auditors=("greybox",))
    assert fixed.verdict is Verdict.VIOLATION and fixed.witness.d0.n in (1, 2)
    refused = audit_mechanism(_MeanForOneSize(True), data, np.random.default_rng(1),
                              auditors=("greybox",))
    assert refused.verdict is Verdict.NO_EVIDENCE
    assert refused.results[0].details["statuses"].get("rejected", 0) >= 2
