"""Issue 15 §1 on ``make audit``'s default path: the CLI's sequential black-box auditor (A.8).

Each blind-spot planted bug of :mod:`dpgp_audit.bugs.blindspots` must be
flagged by the *black-box* auditor itself (not only by the model check, the white-box
auditor or A.7) when run as ``python -m dpgp_audit audit --mechanism ID --seed S``,
within the catalogue's draw cap (:meth:`~dpgp_audit.catalogue.Entry.draw_cap`), and each
correct twin must stay clean on the same path — no auditor flags it, and A.7 finds no
rounding leak because every one of them declares ``claim.domain``.

The draw cap is the budget and the time guard is off (``--time-guard-s none``): the
verdicts depend on the draws, never on the machine's load.
The true ε of every bug exceeds its claim (``Entry.true_epsilon``, from closed forms), so
a VIOLATION is the right answer; the twins are private, so a VIOLATION would be a false
alarm of an anytime-valid test (probability ≤ α = 0.05 per run).
"""

from __future__ import annotations

import json

import pytest

from dpgp_audit.bugs import zoo
from dpgp_audit.catalogue import get
from dpgp_audit.cli import main

BUGS = sorted(b.id for b in zoo.planted() if b.bug_class)
TWINS = sorted({get(b).twin for b in BUGS})


def _cli(mech_id: str, seed: int, tmp_path) -> tuple[int, dict]:
    js = tmp_path / "report.json"
    code = main(["audit", "--mechanism", mech_id, "--seed", str(seed), "--json", str(js),
                 "--no-progress", "--time-guard-s", "none"])
    report = json.loads(js.read_text())["reports"][0]
    return code, {r["auditor"]: r for r in report["results"]}


@pytest.mark.parametrize("mech_id", BUGS)
def test_blindspot_bug_flagged_by_the_blackbox_on_the_cli_default_path(mech_id, tmp_path,
                                                                       capsys):
    entry = get(mech_id)
    assert entry.true_epsilon is not None and entry.true_epsilon > 1.0  # claims are eps = 1
    code, res = _cli(mech_id, 2, tmp_path)
    capsys.readouterr()
    bb = res["blackbox"]
    assert bb["details"]["mode"] == "sequential"
    assert bb["verdict"] == "VIOLATION", bb["details"].get("stopped")
    assert bb["estimate"] <= entry.true_epsilon * (1 + 1e-6)  # a valid lower bound
    assert code == 1
    assert res["precision"]["verdict"] != "VIOLATION"  # caught for its own mistake


@pytest.mark.parametrize("mech_id", TWINS)
def test_blindspot_twin_clean_on_the_cli_default_path(mech_id, tmp_path, capsys):
    assert get(mech_id).true_epsilon is None  # a correct mechanism, not a planted bug
    code, res = _cli(mech_id, 2, tmp_path)
    capsys.readouterr()
    assert res["blackbox"]["details"]["mode"] == "sequential"
    assert res["blackbox"]["verdict"] == "NO_EVIDENCE"
    assert res["precision"]["verdict"] == "NO_EVIDENCE"  # the declared domain is respected
    assert code == 0, {k: r["verdict"] for k, r in res.items()}


def test_every_blindspot_mechanism_declares_its_domain():
    for mech_id in BUGS + TWINS:
        mech, _ = get(mech_id).make()
        assert mech.claim.domain is not None, mech_id
