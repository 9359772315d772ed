"""Tests of the candidate-score helpers in :mod:`dpgp_audit.audit.blackbox.scores` (A.8)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpgp_audit.audit.blackbox.scores import normaltest_pvalues


@pytest.mark.parametrize("law", ["normal", "laplace", "exponential", "uniform", "rounded"])
@pytest.mark.parametrize("n", [20, 257, 20_000])
def test_normaltest_pvalues_equal_scipy(law, n):
    # issue 20 §2: the D'Agostino-Pearson p-values that decide the kde/classifier
    # candidates, computed without scipy's per-call overhead; expected values from the
    # independent implementation scipy.stats.normaltest, column by column.
    rng = np.random.default_rng(n)
    draw = {"normal": rng.normal, "laplace": rng.laplace, "exponential": rng.exponential,
            "uniform": rng.uniform}
    M = np.round(rng.normal(size=(n, 3)) * 4) / 4 if law == "rounded" else draw[law](size=(n, 3))
    want = stats.normaltest(M, axis=0).pvalue
    np.testing.assert_allclose(normaltest_pvalues(M), want, rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("n_keys", [1, 3, 8, 9, 40])
def test_categorical_score_is_the_fitted_log_ratio_of_each_outcome_and_zero_elsewhere(n_keys):
    # few keys are compared one by one, many are binary-searched (issue 20 §2): both must
    # give each row its outcome's value, -0.0 and 0.0 being one outcome, unseen ones 0
    from dpgp_audit.audit.blackbox.scores import CategoricalScore

    rng = np.random.default_rng(n_keys)
    keys = np.arange(n_keys, dtype=float) - n_keys // 2
    values = rng.normal(size=n_keys)
    score = CategoricalScore(keys=keys, values=values)
    X = rng.integers(-n_keys, n_keys + 1, size=(500, 1)).astype(float)
    X[:5, 0] = -0.0
    table = {float(k): float(v) for k, v in zip(keys, values, strict=True)}
    expected = [table.get(float(x), 0.0) for x in X[:, 0]]
    assert score(X).tolist() == expected


@pytest.mark.parametrize("keys", [[0.0, 1.0, 2.0, 3.0, 4.0], [-3.0, 0.0, 7.0], [5.0],
                                  list(range(-20, 20)), [-0.0, 2.0], [0.0, 4096.0],
                                  [0.0, 4097.0], [0.5, 1.0, 2.0], [1e300, 2e300]])
def test_categorical_score_integer_outcomes_by_slot_equal_a_lookup_table(keys):
    # integer-valued keys within a short span are looked up by slot (issue 20 §2); every row
    # must still get exactly its outcome's value: non-integers, values outside the span,
    # -0.0 against 0.0, infinities and NaN included (unseen outcomes score 0)
    from dpgp_audit.audit.blackbox.scores import CategoricalScore

    rng = np.random.default_rng(len(keys))
    keys = np.asarray(keys, dtype=float)
    values = rng.normal(size=keys.size)
    score = CategoricalScore(keys=keys, values=values)
    x = np.concatenate([rng.choice(keys, 300), rng.integers(-30, 30, 300).astype(float),
                        rng.choice(keys, 50) + 0.5, rng.choice(keys, 50) - 0.25,
                        [-0.0, 0.0, np.nan, np.inf, -np.inf, 1e300, -1e300, 4096.0, 4097.0]])
    table = {float(k): float(v) for k, v in zip(keys, values, strict=True)}
    expected = [table.get(float(v), 0.0) for v in x]  # NaN is in no key: 0
    got = score(x[:, None])
    assert got.dtype == np.float64 and got.shape == x.shape
    assert got.tolist() == expected


def test_categorical_integer_slots_only_for_distinct_integer_keys_in_a_short_span():
    from dpgp_audit.audit.blackbox.scores import _TABLE_SPAN, _integer_table

    v = np.ones(3)
    assert _integer_table(np.array([0.0, 2.0, 5.0]), v) is not None
    assert _integer_table(np.array([1.0, 1.0, 2.0]), v) is None  # repeated keys
    assert _integer_table(np.array([0.0, 0.5, 2.0]), v) is None
    assert _integer_table(np.array([0.0, 1.0, _TABLE_SPAN + 1.0]), v) is None


@pytest.mark.parametrize(("dim", "cells"), [(1, None), (5, None), (16, None), (5, 8)])
def test_classifier_score_from_tree_tables_is_scikit_learns_decision_function(
        dim, cells, monkeypatch):
    # issue 20 §2: the boosted trees are read from tables of their cells; the scores must be
    # scikit-learn's decision_function to the last bit, on rows at the split thresholds
    # themselves, just past them, at +-inf, and with NaN (scikit-learn's missing branch);
    # cells=8 forces most trees back to scikit-learn's traversal, mixed with tables
    from dpgp_audit.audit.blackbox import scores as sc

    if cells is not None:
        monkeypatch.setattr(sc, "_TREE_TABLE_CELLS", cells)
    rng = np.random.default_rng(dim)
    X0 = np.round(rng.laplace(size=(1024, dim)) * 16) / 16
    X1 = rng.laplace(size=(1024, dim)) + 0.4
    clf = sc.fit_classifier(X0, X1, rng, **sc.LIGHT_CLASSIFIER)
    assert clf is not None
    thr = np.concatenate([t.nodes["num_threshold"][t.nodes["is_leaf"] == 0]
                          for (t,) in clf.model._predictors])
    X = rng.laplace(size=(3000, dim)) * 1.5
    X[:1000] = X0[:1000]
    X[1000:1400, 0] = rng.choice(thr, 400)
    X[1400:1800, -1] = np.nextafter(rng.choice(thr, 400), np.inf)
    X[1800, 0], X[1801, -1] = np.inf, -np.inf
    want = np.asarray(clf.model.decision_function(X), dtype=float)
    got = clf(X)
    assert sc._tree_tables(clf.model) is not None
    assert clf.__dict__["_tables"] is not None  # the checked tables are what scored X
    assert got.dtype == np.float64 and got.tolist() == want.tolist()
    X[5, 0] = np.nan
    assert clf(X).tolist() == np.asarray(clf.model.decision_function(X)).tolist()


@pytest.mark.parametrize("case", ["distinct", "one copy", "many atoms", "signed zero", "ints",
                                  "scalar"])
def test_fit_atoms_with_the_row_hash_shortcut_equals_a_count_of_row_bytes(case):
    # issue 20 §2: distinct row hashes prove distinct rows and skip the sort of row bytes;
    # the atoms found (or None) must be those of counting each row's bytes directly
    from collections import Counter

    from dpgp_audit.audit.blackbox.scores import _rows_distinct, fit_atoms

    rng = np.random.default_rng(len(case))
    dim = 1 if case == "scalar" else 4
    X0 = np.round(rng.normal(size=(3000, dim)) * 50) / 50  # first values repeat
    X1 = np.round(rng.normal(size=(2500, dim)) * 50) / 50 + 0.01
    if case == "one copy":
        X1[7] = X0[3]
    elif case == "many atoms":
        X0[::10] = X0[0]
        X1[::7] = X0[0]
        X1[1::9] = X1[1]
    elif case == "signed zero":  # bytes differ: not one outcome for row keys
        X0[0], X1[0] = 0.0, -0.0
    elif case == "ints":
        X0 = rng.integers(0, 3, size=(3000, dim)).astype(np.int64)
        X1 = rng.integers(0, 3, size=(2500, dim)).astype(np.int64)
    elif case == "scalar":
        X0 = np.round(rng.normal(size=(3000, 1)) * 1e6) / 1e6
        X1 = np.round(rng.normal(size=(2500, 1)) * 1e6) / 1e6
        X1[4] = X0[9]
    n0 = Counter(r.tobytes() for r in np.ascontiguousarray(X0))
    n1 = Counter(r.tobytes() for r in np.ascontiguousarray(X1))
    atoms = {k for k in n0.keys() | n1.keys() if n0[k] + n1[k] >= 2}
    if dim > 1:  # these rows are few enough for the hashes of distinct rows to differ
        assert _rows_distinct(X0, X1) == (not atoms)
    score = fit_atoms(X0, X1)
    if not atoms:
        assert score is None
        return
    assert score is not None
    if dim == 1:
        assert sorted(score.keys.tolist()) == sorted(np.frombuffer(k).item() for k in atoms)
        return
    got = {k.tobytes(): v for k, v in zip(score.keys, score.values, strict=True)}
    want = {k: np.log((n1[k] + 0.5) / (n0[k] + 0.5)) - np.log(X1.shape[0] / X0.shape[0])
            for k in atoms}
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("case", ["index", "negative", "signed zero", "fractions", "wide", "one"])
def test_fit_categorical_and_looks_discrete_by_slot_equal_the_sorting_computation(case):
    # issue 20 §2: integer outputs are counted by slot; keys (to the bit), values and the
    # discreteness verdict must be those of np.unique on the outputs
    from dpgp_audit.audit.blackbox.scores import _row_keys, fit_categorical, looks_discrete

    rng = np.random.default_rng(len(case))
    make = {"index": lambda n: rng.integers(0, 5, n).astype(float),
            "negative": lambda n: rng.integers(-40, 3, n).astype(float),
            "signed zero": lambda n: np.where(rng.random(n) < 0.5, -0.0, 1.0),
            "fractions": lambda n: rng.integers(0, 8, n) / 2.0,
            "wide": lambda n: rng.choice([0.0, 1e4], n),
            "one": lambda n: np.full(n, 3.0)}[case]
    X0, X1 = make(3000)[:, None], make(2000)[:, None]
    both = np.concatenate([_row_keys(X0), _row_keys(X1)])
    keys, inv = np.unique(both, return_inverse=True)
    c0 = np.bincount(inv[:3000], minlength=keys.size)
    c1 = np.bincount(inv[3000:], minlength=keys.size)
    vals = np.log((c1 + 0.5) / (c0 + 0.5)) - np.log(2000 / 3000)
    score = fit_categorical(X0, X1)
    assert score.keys.dtype == keys.dtype and score.keys.tobytes() == keys.tobytes()
    assert score.values.tobytes() == vals.tobytes()
    for X in (X0, X1, X0[:40]):
        limit = min(1000, max(2, X.shape[0] // 20))
        assert looks_discrete(X) == (np.unique(X[:, 0]).size <= limit)


@pytest.mark.parametrize("fault", ["moved value", "private api error"])
def test_classifier_tree_tables_that_differ_from_scikit_learn_are_never_used(fault, monkeypatch):
    # the tables read scikit-learn's private attributes: a future release that changes them
    # must send every row back to scikit-learn (the same scores), never change a score or
    # raise; here one leaf value of the first table is moved by one ulp, or building fails
    from dpgp_audit.audit.blackbox import scores as sc

    rng = np.random.default_rng(7)
    X0 = rng.laplace(size=(1024, 3))
    X1 = rng.laplace(size=(1024, 3)) + 0.4
    clf = sc.fit_classifier(X0, X1, rng, **sc.LIGHT_CLASSIFIER)
    assert clf is not None
    real = sc._tree_tables

    def faulty(model):
        if fault == "private api error":
            raise TypeError("predict() takes 4 positional arguments")
        base, union, trees, args = real(model)
        kind, maps, values = next(t for t in trees if t[0] == "table")
        i = trees.index((kind, maps, values))
        moved = values.copy()
        moved[:] = np.nextafter(moved, np.inf)
        return base, union, [*trees[:i], (kind, maps, moved), *trees[i + 1:]], args

    monkeypatch.setattr(sc, "_tree_tables", faulty)
    X = rng.laplace(size=(500, 3))
    assert clf(X).tolist() == np.asarray(clf.model.decision_function(X)).tolist()
    assert clf.__dict__["_tables"] is None


# --------------------------------------------------------------------------- float-support reading
def test_float_support_reading_separates_low_bits_from_magnitudes():
    from dpgp_audit.audit.blackbox.scores import float_support_reading

    rng = np.random.default_rng(0)
    # in [1, 2): a grid of 2^-20 (32 or more trailing zero bits, capped at 4), and every
    # significand equally likely (exact: 1 + k 2^-52), of which a share 1/16 ends in 4 or
    # more zero bits. Low bits only: exponents equal, low bits 15/16 apart
    inside = 1.0 + rng.integers(0, 2**20, (8000, 1)) * 2.0**-20
    full = 1.0 + rng.integers(0, 2**52, (8000, 1)) * 2.0**-52
    r = float_support_reading(inside, full)
    assert r["reading"] == "low bits" and r["tv_exponent"] == 0.0
    assert r["tv_low_bits"] == pytest.approx(15 / 16, abs=4 * math.sqrt(1 / 16 / 8000))
    # magnitudes only: doubling keeps every significand, moves every exponent by one
    r = float_support_reading(inside, 2.0 * inside)
    assert r == {"tv_exponent": 1.0, "tv_low_bits": 0.0, "atom_share": 0.0,
                 "negative_zero_share": 0.0, "reading": "magnitudes"}
    # zeros are a value of their own in both parts
    zeros = np.zeros_like(inside)
    r = float_support_reading(zeros, inside)
    assert r["tv_exponent"] == 1.0 and r["tv_low_bits"] == 1.0
    assert r["reading"] == "atoms" and r["atom_share"] == 1.0  # 0 always, and never beside


def test_float_support_reading_names_a_selection_among_a_few_exact_values():
    """A median read off a noisy scan of 20 public half-unit times: both sides release the
    same few values with data-dependent frequencies, so it is the values' law that moved,
    not their float rounding (whole numbers stay "integers", a continuous law is never
    read as discrete: it repeats no value)."""
    from dpgp_audit.audit.blackbox.scores import float_support_reading

    rng = np.random.default_rng(3)
    times = 0.25 + 0.5 * np.arange(20)
    p0 = np.exp(-0.5 * (np.arange(20) - 8.0) ** 2)
    p1 = np.exp(-0.5 * (np.arange(20) - 9.0) ** 2)
    X0 = rng.choice(times, size=(400, 1), p=p0 / p0.sum())
    X1 = rng.choice(times, size=(400, 1), p=p1 / p1.sum())
    r = float_support_reading(X0, X1)
    assert r["reading"] == "discrete"
    assert r["distinct_values"] == np.unique(np.concatenate([X0, X1])).size <= 20
    assert float_support_reading(np.round(4 * X0), np.round(4 * X1))["reading"] == "integers"
    cont = float_support_reading(rng.standard_normal((400, 1)), rng.standard_normal((400, 1)))
    assert cont["reading"] != "discrete" and "distinct_values" not in cont


def test_float_support_reading_names_a_zero_whose_sign_follows_the_data():
    """A noisy value floored at 0 with the zero written 0.0·m: -0.0 on the side of negative
    m (the share of draws at or below 0), +0.0 on the other; both sides hold the same
    atom at 0 by value, so only the sign tells them apart."""
    from dpgp_audit.audit.blackbox.scores import float_support_reading

    rng = np.random.default_rng(2)
    n = 20_000

    def floored(m):
        r = m + 0.4 * rng.standard_normal((n, 1))
        return np.where(r > 0, r, 0.0 * m)
    r = float_support_reading(floored(-0.05), floored(0.0))
    share = stats.norm.cdf(0.05 / 0.4)
    assert r["reading"] == "signed zeros" and r["atom_share"] == 0.0
    assert r["negative_zero_share"] == pytest.approx(share, abs=4 * math.sqrt(share / n))
    assert float_support_reading(floored(0.0), floored(0.05))["negative_zero_share"] == 0.0


def test_float_support_reading_names_a_point_mass_at_a_data_valued_place():
    """A clip at the data's own maximum: atoms at 0.86 under D and at 1.0 under D′.

    Their fixed bits differ (1.0 ends in 52 zero bits), so the low-bits part alone would
    blame the rounding; the share on moved atoms is the clipped mass, P(Z > 0.86 - m).
    """
    from dpgp_audit.audit.blackbox.scores import SUPPORT_ATOM_SHARE, float_support_reading

    rng = np.random.default_rng(1)
    m, sd, n = 0.5, 0.4, 20_000
    X0 = np.minimum(m + sd * rng.standard_normal((n, 3)), 0.86)
    X1 = np.minimum(m + sd * rng.standard_normal((n, 3)), 1.0)
    r = float_support_reading(X0, X1)
    clipped = stats.norm.sf((0.86 - m) / sd)  # the larger moved atom: D's
    assert r["reading"] == "atoms"
    assert r["atom_share"] == pytest.approx(clipped, abs=4 * math.sqrt(clipped / (3 * n)))
    # the same samples unclipped, and a shared clip at the public bound 1: no moved atom
    Y0, Y1 = m + sd * rng.standard_normal((n, 3)), m + sd * rng.standard_normal((n, 3))
    assert float_support_reading(Y0, Y1)["atom_share"] == 0.0
    r = float_support_reading(np.minimum(Y0, 1.0), np.minimum(Y1 + 0.01, 1.0))
    assert r["atom_share"] == 0.0 and r["reading"] != "atoms"
    # a value repeated below the share is no atom
    few = np.concatenate([np.full((int(SUPPORT_ATOM_SHARE * n) - 1, 1), 0.3),
                          rng.standard_normal((n - int(SUPPORT_ATOM_SHARE * n) + 1, 1))])
    assert float_support_reading(few, rng.standard_normal((n, 1)))["atom_share"] == 0.0


def test_float_support_reading_names_whole_number_outputs_as_counts():
    """Counts as floats: an exact count on one side against a noisy one (two-sided
    geometric) on the other. Exponents and trailing zeros of whole numbers are their
    magnitudes and parities, so the reading says counts, not low bits or float rounding."""
    from dpgp_audit.audit.blackbox.scores import float_support_reading

    rng = np.random.default_rng(5)
    noisy = 20.0 + rng.geometric(0.4, (4000, 3)) - rng.geometric(0.4, (4000, 3))
    wider = 20.0 + rng.geometric(0.2, (4000, 3)) - rng.geometric(0.2, (4000, 3))
    r = float_support_reading(noisy, wider)
    assert r["reading"] == "integers" and r["atom_share"] == 0.0
    assert float_support_reading(noisy.astype(np.int64), wider)["reading"] == "integers"
    # counts shifted apart, every value on one side only: still counts, not a moved atom
    assert float_support_reading(noisy, noisy + 255.0)["reading"] == "integers"
    # off the integers (a continuous jitter): the float readings as before
    u = rng.uniform(0.0, 1.0, noisy.shape)
    assert float_support_reading(noisy + u, wider + u)["reading"] in ("low bits", "magnitudes")
