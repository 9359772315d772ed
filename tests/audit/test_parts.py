"""A.6: the runner as a loop over auditor parts (dpgp_audit/audit/parts.py, issue 19 §4).

The registry, the skip reasons, the allowances, and the extension point: a part of the
caller's own runs, is reported, takes its α share when statistical, can lead the pairs,
and leaves every built-in result bit for bit as it was (its random stream is spawned
after theirs). Every comparison here is clock-free: draws are the budget (issue 20), the
time guard is off (``time_guard_s=None``) or driven by a fake clock, and timings are left
out.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from dpgp_audit.audit.model_check import CHECK_N, TAIL_N
from dpgp_audit.audit.neighbours import NeighbourPair
from dpgp_audit.audit.parts import (
    AUDITORS,
    DEFAULT_AUDITORS,
    PARTS,
    Allowance,
    AuditorPart,
    AuditSettings,
    BlackBoxPart,
    GdpFitPart,
    ModelCheckPart,
    PrecisionPart,
    SensitivityPart,
    WhiteBoxPart,
)
from dpgp_audit.audit.precision import (
    CERTIFY_PAIRS,
    SUPPORT_MAX_N,
    SUPPORT_MIN_N,
    SUPPORT_PAIRS,
    SUPPORT_PILOT,
    SUPPORT_PILOT_SHARE,
)
from dpgp_audit.audit.result import AuditResult, Guarantee, Verdict
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.methods.toolbox.primitives import GaussianSumMechanism
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
from dpgp_audit.privacy.claims import ApproxDP, all_answers, outputs_only
from tests.audit.test_guard import clock_free

ROOT = Path(__file__).resolve().parents[2]
MECH = GaussianSumMechanism(d=1.0, epsilon=1.0, delta=1e-5)


class OnlySamples:
    """A user's mechanism with nothing but a claim and ``sample``."""

    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))

    def sample(self, data, n, rng):
        return np.sum(data.y) + 4.0 * rng.standard_normal((n, 1))


class Recorder(AuditorPart):
    """A part that records what it was handed and finds nothing."""

    def __init__(self, name="recorder", statistical=False, lead=None, verdict=None,
                 skip=None):
        self.name, self.statistical = name, statistical
        self.lead, self.verdict, self.skip = lead, verdict, skip
        self.seen: dict = {}

    def needs(self, mechanism, relation):
        return None

    def allowance(self, settings):
        return Allowance(draws=3)

    def run(self, context):
        rng = context.rngs[self.name]
        self.seen = {"alpha": context.alpha_share, "first": context.pairs[0].label,
                     "results": dict(context.state.results), "draw": rng.standard_normal(),
                     "n": context.settings.n}
        if self.skip is not None:
            return self.skip
        if self.lead is not None:
            context.pairs.insert(0, self.lead)
        details = {}
        if self.verdict is Verdict.VIOLATION:
            details["witness"] = self.lead.as_dict()
        return AuditResult(auditor=self.name, verdict=self.verdict or Verdict.NO_EVIDENCE,
                           guarantee=Guarantee.POINT_ESTIMATE, estimate=0.0, claimed=1.0,
                           details=details)


def _clock_free(report) -> dict:
    return clock_free(report.as_dict())  # type: ignore[return-value]


def test_A6_registry_is_the_auditors_in_run_order():
    assert AUDITORS == ("greybox", "sensitivity", "model-check", "whitebox", "blackbox",
                        "gdp-fit", "precision")
    assert tuple(p.name for p in PARTS) == AUDITORS
    assert all(isinstance(p, AuditorPart) for p in PARTS)
    assert set(DEFAULT_AUDITORS) == set(AUDITORS) - {"gdp-fit"}
    assert [p.name for p in PARTS if p.statistical] == ["model-check", "whitebox", "blackbox",
                                                        "gdp-fit", "precision"]


def test_A6_needs_gives_the_skip_reasons_the_report_records():
    relation = OnlySamples.claim.relation
    reasons = {p.name: p.needs(OnlySamples(), relation) for p in PARTS}
    assert reasons["blackbox"] is None and reasons["gdp-fit"] is None
    assert "GaussianRelease" in reasons["whitebox"]
    assert "SensitivityQuery" in reasons["sensitivity"]
    rep = audit_mechanism(OnlySamples(), default_dataset(), np.random.default_rng(1), n=400,
                          mode="fixed")
    assert rep.skipped == {k: v for k, v in reasons.items() if v is not None}
    # the all-answers relation is probed by pattern pairs, not the one-record search
    assert SensitivityPart().needs(MECH, MECH.claim.relation) is None
    assert "all-answers" in SensitivityPart().needs(MECH, all_answers(1.0))


def _settings(n, mode):
    return AuditSettings(n=n, alpha=0.05, mode=mode, n_pairs=2, budget=300, n_mc=20_000,
                         score="auto", fit_fraction=None, y_bound=None, time_guard_s=None)


def test_A6_allowances_are_work_units_from_the_settings():
    fixed, seq = _settings(400, "fixed"), _settings(200_000, "sequential")
    assert SensitivityPart().allowance(fixed) == Allowance(queries=300)
    # the model check's draws per dataset: half the cap in [CHECK_N, TAIL_N], at most the cap
    assert ModelCheckPart().allowance(seq) == Allowance(draws=TAIL_N, pairs=1)
    assert ModelCheckPart().allowance(_settings(30_000, "sequential")) == Allowance(
        draws=15_000, pairs=1)
    assert ModelCheckPart().allowance(_settings(6_000, "sequential")) == Allowance(
        draws=CHECK_N, pairs=1)
    assert ModelCheckPart().allowance(fixed) == Allowance(draws=400, pairs=1)
    assert WhiteBoxPart().allowance(fixed) == Allowance(pairs=None, mc_draws=20_000)
    # pilot: a tenth of a fixed n in [20, 200], a thousandth of a sequential cap in [8, 200]
    assert BlackBoxPart().allowance(fixed) == Allowance(draws=400, pilot_draws=40, pairs=2)
    assert BlackBoxPart().allowance(seq) == Allowance(draws=200_000, pilot_draws=200, pairs=2)
    assert BlackBoxPart().allowance(_settings(3_000, "sequential")).pilot_draws == 8
    assert BlackBoxPart().allowance(_settings(20_000, "sequential")).pilot_draws == 20
    # the GDP fit is a fixed-n fit in either mode, its pilot too
    assert GdpFitPart().allowance(_settings(400, "sequential")) == Allowance(
        draws=400, pilot_draws=40, pairs=1)
    # A.7: the black-box pilot rule, and a tenth of a sequential cap per chosen pair; the
    # float-support test (on by default, issue 20 §4) adds its pairs with the same draws
    # per side and a pilot of an eighth of those draws, at least SUPPORT_PILOT (its evidence
    # needs it), where those draws reach SUPPORT_MIN_N
    both = CERTIFY_PAIRS + SUPPORT_PAIRS
    assert PrecisionPart().allowance(fixed) == Allowance(draws=400, pilot_draws=40,
                                                         pairs=CERTIFY_PAIRS)
    assert PrecisionPart().screen_pilots(fixed) == (40, 0)  # 400 < SUPPORT_MIN_N: not run
    assert PrecisionPart().screen_pilots(seq) == (200, 20_000 // SUPPORT_PILOT_SHARE)
    assert PrecisionPart().allowance(seq) == Allowance(draws=20_000, pilot_draws=2_500,
                                                       pairs=both)
    # fixed mode certifies with n itself: the support pilot stops at SUPPORT_MAX_N's share
    assert PrecisionPart().screen_pilots(_settings(10**6, "fixed"))[1] == \
        SUPPORT_MAX_N // SUPPORT_PILOT_SHARE
    at_min = _settings(10 * SUPPORT_MIN_N, "sequential")  # a tenth: SUPPORT_MIN_N draws
    assert PrecisionPart().screen_pilots(at_min) == (10, SUPPORT_PILOT)
    assert PrecisionPart().allowance(at_min) == Allowance(draws=SUPPORT_MIN_N,
                                                          pilot_draws=SUPPORT_PILOT, pairs=both)
    assert PrecisionPart().screen_pilots(_settings(10 * SUPPORT_MIN_N - 10, "sequential")
                                         )[1] == 0
    no_support = dataclasses.replace(seq, precision_support=False)
    assert PrecisionPart().allowance(no_support) == Allowance(draws=20_000, pilot_draws=200,
                                                              pairs=CERTIFY_PAIRS)
    assert PrecisionPart().allowance(_settings(30, "fixed")).pilot_draws == 20


def test_A6_every_part_reports_its_allowance_and_uses_no_more():
    # issue 20 §3: each part its share, in deterministic units, reported beside what it used
    rep = audit_mechanism(MECH, default_dataset(), np.random.default_rng(7), n=4_000,
                          time_guard_s=None)
    assert set(rep.inputs["allowances"]) == set(DEFAULT_AUDITORS)
    for res in rep.results:
        allowed = res.details["allowance"]
        assert allowed == rep.inputs["allowances"][res.auditor]
        for unit, value in res.details.get("used", {}).items():
            if unit in allowed and allowed[unit] is not None:
                assert value <= allowed[unit], (res.auditor, unit, value, allowed[unit])
    bb = rep.result("blackbox")
    assert bb.details["used"]["draws"] == bb.details["n_per_side"] <= 4_000
    assert bb.details["used"]["pilot_draws"] == BlackBoxPart().allowance(
        _settings(4_000, "sequential")).pilot_draws
    # the pilot samples every generated pair, except those A.9's coupled survey scored
    if "greybox" in bb.details["ranking"]:
        assert bb.details["used"]["pilot_pairs"] <= rep.inputs["pairs_generated"]
    else:
        assert bb.details["used"]["pilot_pairs"] == rep.inputs["pairs_generated"]
    mc = rep.result("model-check")
    assert mc.details["used"]["draws"] == min(CHECK_N, 4_000)
    # A.7's float-support test (on by default) needs SUPPORT_MIN_N draws; 4 000 / 10 is less
    assert "not run" in rep.result("precision").details["support_skipped"]


def test_A6_the_float_support_test_certifies_within_the_precision_allowance():
    # issue 20 §3-§4: a textbook float release makes A.7 certify its support pairs too;
    # they are counted in A.7's pairs and draw no more than its draws per side
    from dpgp_audit.bugs.float_support import TextbookNoiseSum

    mech = TextbookNoiseSum(d=1.0, epsilon=1.0, sampler="laplace-log")
    rep = audit_mechanism(mech, default_dataset(), np.random.default_rng(7), n=20_000,
                          auditors=("precision",), time_guard_s=None)
    prec = rep.result("precision")
    allowed, used = prec.details["allowance"], prec.details["used"]
    assert allowed == PrecisionPart().allowance(_settings(20_000, "sequential")).as_dict()
    # 2 000 certification draws: an eighth is 250 support-pilot draws per side
    assert used["pilot_draws"] == 250 == prec.details["support_pilot_per_side"]
    rows = prec.details["support_certified"]
    assert rows and all(r["n_per_side"] <= allowed["draws"] for r in rows)
    assert used["draws"] <= allowed["draws"] and used["pairs"] <= allowed["pairs"]
    assert used["pilot_draws"] <= allowed["pilot_draws"]


def test_A6_no_part_is_starved_by_the_ones_before_it():
    # issue 20 §3: the black-box part of a GP release got 16 draws in `make audit` because
    # the sensitivity search and the model check had spent the mechanism's seconds. With
    # draws as the budget it gets its cap whatever ran before (and takes however long).
    from dpgp_audit.catalogue import get

    mech, data = get("A.5/gp-smoother-iso").make()
    rep = audit_mechanism(mech, data, np.random.default_rng(3), n=3_000, time_guard_s=None)
    assert [r.auditor for r in rep.results][:4] == ["greybox", "sensitivity", "model-check",
                                                    "whitebox"]
    assert rep.result("blackbox").details["n_per_side"] == 3_000  # a clean run: to its cap


def test_A6_an_earlier_part_can_rank_the_pairs_for_the_blackbox_part():
    # the ranking hook (A.9's coupled runs use it): a part that fills state.ranking makes
    # the black-box part confirm that ranking's top pairs, with no pilot sampling
    data = default_dataset()
    lead = NeighbourPair(data, data.with_target(0, data.y[0] + 1.0), "ranked first")

    class Ranker(Recorder):
        def run(self, context):
            context.state.ranking = [(lead, 9.0)]
            context.state.ranking_source = self.name
            return "ranked only"

    rep = audit_mechanism(OnlySamples(), data, np.random.default_rng(4),
                          parts=(Ranker(name="ranker"), *PARTS),
                          auditors=("ranker", "blackbox"), n=512, time_guard_s=None)
    bb = rep.result("blackbox")
    assert bb.details["pair_labels"] == ["ranked first"]
    assert bb.details["ranking"] == "ranker"
    assert bb.details["used"]["pilot_pairs"] == 0


def test_A6_a_part_not_started_when_the_guard_fires_is_skipped_and_says_so():
    # a fake clock that jumps an hour on every reading: the guard fires before the first part
    ticks = iter(range(0, 10**9, 3600))
    rep = audit_mechanism(MECH, default_dataset(), np.random.default_rng(2), n=400,
                          time_guard_s=60.0, clock=lambda: float(next(ticks)))
    assert rep.guard_fired and rep.results == ()
    assert rep.verdict is Verdict.INCONCLUSIVE
    assert all("time guard" in why for why in rep.skipped.values())
    assert "TIME GUARD" in rep.table()


@pytest.mark.parametrize("mode", ["fixed", "sequential"])
def test_A6_an_added_part_runs_is_reported_and_changes_no_builtin_result(mode):
    data, kw = default_dataset(), {"n": 600, "mode": mode, "time_guard_s": None, "seed": 3}
    plain = audit_mechanism(MECH, data, np.random.default_rng(3), **kw)
    rec = Recorder()
    plus = audit_mechanism(MECH, data, np.random.default_rng(3), parts=(*PARTS, rec),
                           auditors=(*DEFAULT_AUDITORS, "recorder"), **kw)
    assert plus.result("recorder").verdict is Verdict.NO_EVIDENCE
    assert [r.auditor for r in plus.results] == [r.auditor for r in plain.results] + ["recorder"]
    # non-statistical: the same α share, and the built-in results bit for bit
    a, b = _clock_free(plain), _clock_free(plus)
    assert b["results"][:-1] == a["results"]
    assert b["inputs"].pop("auditors") == [*DEFAULT_AUDITORS, "recorder"]
    assert b["inputs"]["allowances"].pop("recorder") == Allowance(draws=3).as_dict()
    a["inputs"].pop("auditors")
    assert (b["inputs"], b["skipped"], b["witness"]) == (a["inputs"], a["skipped"], a["witness"])
    # it ran last and saw every earlier result, with the caller's settings
    assert list(rec.seen["results"]) == [r.auditor for r in plain.results]
    assert rec.seen["n"] == 600


def test_A6_the_same_seed_gives_the_same_report_without_a_clock():
    data = default_dataset()
    kw = {"n": 512, "mode": "sequential", "time_guard_s": None}
    one = audit_mechanism(MECH, data, np.random.default_rng(8), **kw)
    two = audit_mechanism(MECH, data, np.random.default_rng(8), **kw)
    assert _clock_free(one) == _clock_free(two)


def test_A6_a_statistical_part_takes_its_share_of_alpha():
    rec = Recorder(name="stat", statistical=True)
    rep = audit_mechanism(OnlySamples(), default_dataset(), np.random.default_rng(2),
                          parts=(*PARTS, rec), auditors=("blackbox", "stat"), n=400,
                          mode="fixed", alpha=0.05)
    assert rep.inputs["alpha_per_statistical_auditor"] == pytest.approx(0.025)
    assert rec.seen["alpha"] == pytest.approx(0.025)
    assert rep.result("blackbox").alpha == pytest.approx(0.025)


def test_A6_a_first_part_can_lead_the_pairs_and_give_the_witness():
    data = default_dataset()
    lead = NeighbourPair(data, data.with_target(0, data.y[0] + 1.0), "lead pair")
    first = Recorder(name="first", lead=lead, verdict=Verdict.VIOLATION)
    after = Recorder(name="after")
    rep = audit_mechanism(OnlySamples(), data, np.random.default_rng(4),
                          parts=(first, *PARTS, after), auditors=("first", "blackbox", "after"),
                          n=400, mode="fixed")
    assert after.seen["first"] == "lead pair"   # every later part audits it first
    assert rep.witness is not None and rep.witness.label == "lead pair"
    assert rep.inputs["witness_source"] == "first"
    assert rep.verdict is Verdict.VIOLATION


def test_A6_a_callers_own_part_list_and_run_time_skips():
    only = Recorder(name="mine", skip="nothing to do here")
    rep = audit_mechanism(OnlySamples(), default_dataset(), np.random.default_rng(5),
                          parts=[only], auditors=("mine",), n=400, mode="fixed")
    assert rep.results == () and rep.skipped == {"mine": "nothing to do here"}
    assert isinstance(only.seen["draw"], float)  # its own stream
    with pytest.raises(ValueError, match=r"unknown auditor.*choose from \('mine',\)"):
        audit_mechanism(OnlySamples(), default_dataset(), np.random.default_rng(5),
                        parts=[only])
    with pytest.raises(ValueError, match="distinct names"):
        audit_mechanism(OnlySamples(), default_dataset(), np.random.default_rng(5),
                        parts=[only, Recorder(name="mine")], auditors=("mine",))
    with pytest.raises(ValueError, match="name"):
        audit_mechanism(OnlySamples(), default_dataset(), np.random.default_rng(5),
                        parts=[Recorder(name="explore")], auditors=("explore",))
    with pytest.raises(TypeError, match="AuditorPart"):
        audit_mechanism(OnlySamples(), default_dataset(), np.random.default_rng(5),
                        parts=[object()], auditors=())


def test_A6_the_guides_adding_an_auditor_example_runs():
    text = (ROOT / "docs" / "auditors.md").read_text(encoding="utf-8")
    section = text.split("## Adding an auditor", 1)[1]
    (block,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    ns: dict = {}
    exec(block.replace("print(report.table())", ""), ns)  # noqa: S102 - the guide's code
    report = ns["report"]
    res = report.result("first-pair")
    assert res is not None and res.guarantee is Guarantee.LOWER_BOUND
    assert report.inputs["alpha_per_statistical_auditor"] == pytest.approx(0.05 / 2)
    assert report.verdict is Verdict.NO_EVIDENCE  # P.1 is a correct (1, 1e-5) Gaussian sum


class NotPSD:
    """A Gaussian release whose stated covariance is not positive semi-definite."""

    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))

    def mean(self, data):
        return np.zeros(2)

    def cov(self, data):
        return np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1

    def sample(self, data, n, rng):
        return rng.standard_normal((n, 2))


def test_A6_an_unusable_stated_covariance_is_the_whitebox_skip_reason():
    rep = audit_mechanism(NotPSD(), default_dataset(12), np.random.default_rng(0),
                          auditors=("whitebox", "model-check"))
    why = rep.skipped["whitebox"]
    assert why.startswith("cov() cannot be factored for any generated pair"), why
    assert "positive semi-definite" in why and "accepted by the mechanism" not in why
    assert "positive semi-definite" in rep.skipped["model-check"]


class StatesMoreNoise:
    """A Gaussian sum whose mean()/cov() state σ for d = 1 while sample() draws σ/2."""

    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0))
    sigma = analytic_gaussian_sigma(1.0, 1e-5, 1.0)

    def mean(self, data):
        return np.array([float(np.sum(data.y))])

    def cov(self, data):
        return np.array([[self.sigma ** 2]])

    def sample(self, data, n, rng):
        return self.mean(data) + 0.5 * self.sigma * rng.standard_normal((n, 1))


def test_A6_a_whitebox_result_voided_by_the_model_check_is_not_no_evidence():
    """The exact audit describes the stated model; when sample() contradicts it, its
    'no evidence' says nothing about the release, so the row reads INCONCLUSIVE."""
    rep = audit_mechanism(StatesMoreNoise(), default_dataset(12), np.random.default_rng(0),
                          auditors=("whitebox", "model-check"))
    assert rep.result("model-check").verdict is Verdict.VIOLATION
    wb = rep.result("whitebox")
    assert wb.verdict is Verdict.INCONCLUSIVE and wb.details["model_check"].startswith("VOID")


class SumOfUniformsGaussian(StatesMoreNoise):
    """A "normal" drawn as the sum of 12 uniforms minus 6 (Irwin–Hall): bounded, light
    tails, and within a Kolmogorov distance of about 0.001 of N(0, 1)."""

    def sample(self, data, n, rng):
        z = rng.random((n, 1, 12)).sum(axis=2) - 6.0
        return self.mean(data) + self.sigma * z


class NormalGaussian(StatesMoreNoise):
    def sample(self, data, n, rng):
        return self.mean(data) + self.sigma * rng.standard_normal((n, 1))


def test_A2_a_sum_of_uniforms_behind_a_gaussian_model_is_caught_by_its_tails():
    """Twelve uniforms summed minus 6 are within a Kolmogorov distance of about 0.001 of
    N(0, 1), below what 4 000 draws resolve; their mass beyond 3.5 sd is 0.52 of the
    Gaussian's (Irwin–Hall's closed form), which the tail counts on 100 000 draws see. The
    white-box line says that sample() draws no normals, and the check's reach."""
    from scipy import stats

    from dpgp_audit.audit.model_check import detectable_effects

    auditors = ("greybox", "model-check", "whitebox")
    rep = audit_mechanism(SumOfUniformsGaussian(), default_dataset(12),
                          np.random.default_rng(0), auditors=auditors)
    mc = rep.result("model-check")
    assert mc.verdict is Verdict.VIOLATION
    assert mc.details["ks_rejected"] == 0 and mc.details["tail_rejected"] > 0
    assert all(re.search(r"beyond (2\.5|3|3\.5) sd \(\d+ drawn, \d+ expected", r)
               for r in mc.details["rejected"])
    wb = rep.result("whitebox")
    assert wb.verdict is Verdict.INCONCLUSIVE  # voided by the model check
    reach = detectable_effects(CHECK_N, mc.details["power"]["level"])
    t = stats.norm.isf(reach["distance"])
    assert 1.0 < t < 2.5
    note = wb.details["noise_drawn"]
    assert note.startswith("sample() draws its noise as random, not as normals")
    assert f"only beyond {t:.2g} sd can pass its Kolmogorov tests" in note
    assert "tail counts on 100000 draws" in note
    assert "draws its noise as random" in rep.table()
    clean = audit_mechanism(NormalGaussian(), default_dataset(12), np.random.default_rng(0),
                            auditors=auditors)
    assert clean.result("model-check").verdict is Verdict.NO_EVIDENCE
    assert "noise_drawn" not in clean.result("whitebox").details
