"""A.6: `python -m dpgp_audit list` and `audit` — exit codes, JSON schema, PNG, seeds."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.catalogue import entries, get
from dpgp_audit.cli import main


def test_A6_list_prints_every_mechanism(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for e in entries():
        assert e.id in out
    assert "planted/" not in out
    assert "claim:" in out and ("outputs only" in out or "whole rows" in out)
    assert main(["list", "--planted"]) == 0
    out = capsys.readouterr().out
    assert "planted/std-as-variance" in out and "twin" in out


def test_A6_list_json(capsys):
    assert main(["list", "--planted", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ids = {r["id"] for r in rows}
    assert {e.id for e in entries(include_planted=True)} == ids
    planted = next(r for r in rows if r["id"] == "planted/fixed-seed")
    assert planted["true_epsilon"] == "inf" and planted["twin"] == "P.1/gaussian-sum"
    assert all({"paper", "claim", "relation"} <= set(r) for r in rows)


def test_A6_planted_bug_exits_1_with_json_and_png(tmp_path, capsys):
    js, png = tmp_path / "r.json", tmp_path / "r.png"
    code = main(["audit", "--mechanism", "planted/sensitivity-x2", "--samples", "2000",
                 "--seed", "5", "--json", str(js), "--plot", str(png), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1
    assert "VIOLATION" in out and "seed: 5" in out
    doc = json.loads(js.read_text())
    assert doc["schema"] == "dpgp_audit/audit-report/1"
    assert doc["seed"] == 5 and doc["verdict"] == "VIOLATION"
    (rep,) = doc["reports"]
    assert rep["mechanism"] == "planted/sensitivity-x2"
    assert set(rep) >= {"claim", "verdict", "inputs", "results", "skipped", "witness",
                        "timings", "note"}
    assert rep["inputs"]["n_per_side"] == 2000 and rep["inputs"]["seed"] == 5
    auditors = {r["auditor"]: r for r in rep["results"]}
    assert set(auditors) == {"greybox", "sensitivity", "whitebox", "blackbox", "precision",
                             "model-check"}
    for r in rep["results"]:
        assert r["guarantee"] and r["verdict"] in ("VIOLATION", "NO_EVIDENCE", "INCONCLUSIVE")
        assert "estimate" in r and "claimed" in r
    assert auditors["sensitivity"]["guarantee"].startswith("definitive counterexample")
    assert rep["witness"]["d0"]["y"] and rep["witness"]["d1"]["y"]
    assert rep["timings"]["total"] > 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_A8_a_bound_stopped_at_says_it_does_not_size_the_leak(capsys):
    """std used as the variance (true epsilon far above 1): the sequential test stops just
    above the claim, and its line says that this is where it stopped, not the leak's size."""
    code = main(["audit", "--mechanism", "planted/std-as-variance", "--seed", "1",
                 "--auditor", "blackbox", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1 and "stopped by violation" in out
    assert "it stops at its first certified violation, so its bound lies just above" in out


def test_A6_correct_mechanism_exits_0(tmp_path, capsys):
    js = tmp_path / "ok.json"
    code = main(["audit", "--mechanism", "P.1/gaussian-sum", "--samples", "5000", "--seed", "1",
                 "--json", str(js), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "not proved the mechanism private" in out
    assert json.loads(js.read_text())["verdict"] == "NO_EVIDENCE"


def test_A6_overrides_and_single_auditor(tmp_path, capsys):
    js = tmp_path / "o.json"
    code = main(["audit", "--mechanism", "P.1/gaussian-sum", "--epsilon", "2", "--delta", "1e-6",
                 "--auditor", "whitebox", "--seed", "3", "--json", str(js), "--no-progress"])
    assert code == 0
    rep = json.loads(js.read_text())["reports"][0]
    assert rep["claim"]["epsilon"] == 2.0 and rep["claim"]["delta"] == 1e-6
    assert [r["auditor"] for r in rep["results"]] == ["whitebox"]
    capsys.readouterr()


def test_A6_fresh_seed_is_printed_and_recorded(tmp_path, capsys):
    js = tmp_path / "s.json"
    main(["audit", "--mechanism", "planted/gp-sup-norm", "--auditor", "sensitivity",
          "--json", str(js), "--no-progress"])
    out = capsys.readouterr().out
    seed = int(re.search(r"seed: (\d+)", out).group(1))
    assert json.loads(js.read_text())["seed"] == seed


def test_A6_same_seed_same_report(tmp_path, capsys):
    docs = []
    for k in range(2):
        js = tmp_path / f"{k}.json"
        main(["audit", "--mechanism", "A.5/exp-mech", "--samples", "3000", "--seed", "11",
              "--json", str(js), "--no-progress"])
        docs.append(json.loads(js.read_text())["reports"][0]["results"])
    capsys.readouterr()
    strip = [[{k: v for k, v in r.items() if k != "details"} for r in d] for d in docs]
    assert strip[0] == strip[1]


@pytest.mark.parametrize("argv", [
    ["audit", "--mechanism", "no/such-mechanism"],
    ["audit", "--mechanism", "P.1/gaussian-sum", "--alpha", "1.5"],
    ["audit", "--mechanism", "P.1/gaussian-sum", "--dataset", "nope"],
    ["audit", "--mechanism", "P.1/gaussian-sum", "--epsilon", "-1"],
    ["audit", "--mechanism", "P.1/gaussian-sum", "--samples", "1"],
    ["audit", "--mechanism", "P.1/gaussian-sum", "--auditor", "oracle"],
    ["audit"],
    ["audit", "--all", "--mechanism", "P.1/gaussian-sum"],
])
def test_A6_usage_errors_exit_2(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    assert code == 2
    assert "error" in capsys.readouterr().err


def test_A6_all_audits_every_non_planted_mechanism(tmp_path, capsys):
    js = tmp_path / "all.json"
    code = main(["audit", "--all", "--auditor", "whitebox", "--seed", "2", "--json", str(js),
                 "--dataset", "default", "--no-progress"])
    out = capsys.readouterr().out
    doc = json.loads(js.read_text())
    assert {r["mechanism"] for r in doc["reports"]} == {e.id for e in entries()}
    assert code == (1 if doc["verdict"] == "VIOLATION" else 0)
    assert "mechanisms audited" in out


def test_A6_builder_rejecting_an_option_is_a_usage_error(capsys, monkeypatch):
    from dpgp_audit import catalogue
    from dpgp_audit.catalogue import Entry

    def build(data, *, epsilon):  # no delta option
        return get_entry_build(data, epsilon)

    def get_entry_build(data, epsilon):
        return catalogue.get("A.5/laplace-vector").build(data, epsilon=epsilon)

    entry = Entry("test/no-delta", "T", "test", build, catalogue.get("P.1/gaussian-sum")
                  .default_data, {"epsilon": 1.0})
    monkeypatch.setitem(catalogue._table(), entry.id, entry)
    assert main(["audit", "--mechanism", "test/no-delta", "--delta", "1e-5"]) == 2
    assert "cannot build test/no-delta" in capsys.readouterr().err


def _without_timings(value: object) -> object:
    """A report with every wall-clock reading dropped (the keys that name seconds)."""
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items()
                if k != "timings" and not k.endswith("_s") and "seconds" not in k}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def test_A6_all_in_parallel_gives_the_reports_of_one_process(tmp_path, capsys, monkeypatch):
    from dpgp_audit import catalogue

    few = [catalogue.get(i) for i in ("P.2/laplace-sum", "A.5/exp-mech", "A.5/noisy-max")]
    monkeypatch.setattr(catalogue, "entries", lambda: few)
    docs, outs = [], []
    for jobs in (1, 2):
        js = tmp_path / f"jobs{jobs}.json"
        code = main(["audit", "--all", "--samples", "4000", "--seed", "11", "--jobs",
                     str(jobs), "--json", str(js), "--no-progress"])
        assert code == 0
        docs.append(json.loads(js.read_text()))
        outs.append(capsys.readouterr().out)
    assert [r["mechanism"] for r in docs[1]["reports"]] == [e.id for e in few]
    assert _without_timings(docs[0]["reports"]) == _without_timings(docs[1]["reports"])
    # the printed tables come in the catalogue's order, whichever worker finished first
    for out in outs:
        assert [out.index(f"{e.id}") for e in few] == sorted(out.index(e.id) for e in few)


def test_A6_in_order_runs_in_other_processes_and_keeps_the_order():
    import os

    from dpgp_audit.cli import _in_order

    def who(k: int) -> tuple[int, int]:
        return k, os.getpid()

    got = list(_in_order(who, [(k,) for k in range(6)], jobs=2))
    assert [k for k, _ in got] == list(range(6))
    assert os.getpid() not in {pid for _, pid in got}
    assert [k for k, _ in _in_order(who, [(k,) for k in range(3)], jobs=1)] == [0, 1, 2]


@pytest.mark.parametrize("argv, words", [
    (["audit", "--all", "--jobs", "0"], "--jobs must be >= 1"),
    (["audit", "--mechanism", "P.1/gaussian-sum", "--jobs", "2"], "--jobs needs --all"),
    (["audit", "--all", "--jobs", "2", "--scheduler", "tcp://127.0.0.1:1"],
     "--jobs and a Dask scheduler both spread the work"),
])
def test_A6_jobs_usage_errors(argv, words, capsys):
    assert main(argv) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("files, quota", [
    ({"cpu.max": "200000 100000\n"}, 2.0),
    ({"cpu.max": "max 100000\n"}, None),
    ({"cpu/cpu.cfs_quota_us": "150000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1.5),
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    ({}, None),
])
def test_A6_a_containers_cpu_quota_caps_the_jobs(tmp_path, files, quota):
    """A Binder or CI container shows its host's CPUs but may use one or two: --all forks
    for the quota (cgroup v2 cpu.max, v1 cfs_quota_us / cfs_period_us), not the host."""
    from dpgp_audit.cli import _cgroup_cpu_quota

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert _cgroup_cpu_quota(str(tmp_path)) == quota


def test_A6_default_jobs_follow_the_usable_cpus(monkeypatch):
    import argparse

    from dpgp_audit import cli

    args = argparse.Namespace(all=True, jobs=None, scheduler=None)
    monkeypatch.delenv("DPGP_AUDIT_SCHEDULER", raising=False)
    monkeypatch.setattr(cli, "_cgroup_cpu_quota", lambda: 1.5)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(16)))
    assert cli.usable_cpus() == 2 and cli._jobs(args, 46) == 2
    monkeypatch.setattr(cli, "_cgroup_cpu_quota", lambda: None)
    assert cli.usable_cpus() == 16 and cli._jobs(args, 46) == cli.DEFAULT_MAX_JOBS
    assert cli._jobs(args, 1) == 1
    assert cli._jobs(argparse.Namespace(all=True, jobs=3, scheduler=None), 46) == 3
    assert cli._jobs(argparse.Namespace(all=False, jobs=None, scheduler=None), 46) == 1
    monkeypatch.setattr(cli.sys, "platform", "darwin")  # forking is unsafe there
    assert cli._jobs(args, 46) == 1


def test_A6_the_seed_line_names_the_generator_python_reproduces_the_audit_with(tmp_path,
                                                                              capsys):
    """One mechanism: the audit's generator is the first child of SeedSequence(seed), which
    the seed line says; handed to audit_mechanism with the same settings it gives the same
    verdicts and estimates as the command line (a hunt compared with default_rng(seed))."""
    js = tmp_path / "s.json"
    main(["audit", "--mechanism", "planted/sensitivity-x1.25", "--samples", "5000", "--seed",
          "3", "--json", str(js), "--no-progress"])
    out = capsys.readouterr().out
    assert ("in Python the audit's generator is np.random.default_rng("
            "np.random.SeedSequence(3).spawn(1)[0]), not default_rng(3)") in out
    cli = json.loads(js.read_text())["reports"][0]["results"]
    mech, data = get("planted/sensitivity-x1.25").make()
    own = audit_mechanism(mech, data, np.random.default_rng(np.random.SeedSequence(3).spawn(1)[0]),
                          n=5000).as_dict()["results"]
    assert [(r["auditor"], r["verdict"], r["estimate"]) for r in cli] == \
        [(r["auditor"], r["verdict"], r["estimate"]) for r in own]
