"""The notebook experiment of the rounding attack (issue 10 §1): naive caught, hardened passes."""

from __future__ import annotations

import numpy as np

from dpgp_audit.experiments.rounding_attack import rounding_attack


def test_rounding_attack_rows():
    rows = rounding_attack(np.random.default_rng(0), n=20_000, pilot=500)
    assert [r["kind"] for r in rows] == ["naive", "hardened"] * 2
    for naive, hardened in zip(rows[::2], rows[1::2], strict=True):
        # naive: no domain, the release collapses onto a few floats, A.7 certifies ε > claim
        assert naive["domain"] is None and not naive["refused"]
        assert max(naive["distinct"]) <= 5
        assert naive["verdict"] == "VIOLATION" and naive["epsilon_lb"] > naive["claimed"]
        assert naive["witness"].startswith("precision")
        # hardened: at its bound the release does not collapse and A.7 finds nothing. It is
        # rounded to a grid of at most sd/1024 (issue 20 §4): two of 500 draws coincide with
        # probability at most Λ/(2√π sd) ≤ 2.8e-4, so about 35 of the 124 750 pairs at most,
        # and at least 450 values stay distinct (A.7 calls a release collapsed below 90 %)
        assert hardened["domain"] is not None and not hardened["refused"]
        assert min(hardened["distinct"]) >= 450
        assert hardened["verdict"] == "NO_EVIDENCE" and hardened["epsilon_lb"] == 0.0
