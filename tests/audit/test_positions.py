"""The substitution-position search of the grey-box auditor (catalogue A.9, issue 20 §4).

The expected positions are the release's own points, known in closed form (the kernel's
peak); the scores are checked against their definition on hand-built releases.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dpgp_audit.audit.greybox import couple_pairs, coupled_shift
from dpgp_audit.audit.neighbours import clip_inputs, is_neighbour, neighbour_pairs, within_inputs
from dpgp_audit.audit.positions import (
    CLUSTER_CALLS,
    MAX_CALLS,
    START_POINTS,
    SWING_CALLS,
    search_positions,
    with_positions,
)
from dpgp_audit.bugs.mutants import SKETCH
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import ApproxDP, outputs_only, whole_rows
from dpgp_audit.privacy.domain import PublicDomain


@dataclass(frozen=True)
class KernelSums:
    """``Σ_i k(z_j, x_i) y_i + N(0, σ²)`` at public points ``z_j`` (EQ kernel), sample only."""

    points: tuple[tuple[float, ...], ...]
    lengthscale: float = 0.05
    sigma: float = 8.0  # above the analytic Gaussian σ of sensitivity 2 at (1, 1e-5)
    x_bound: float | None = None

    @property
    def claim(self) -> ApproxDP:
        return ApproxDP(epsilon=1.0, delta=1e-5, relation=whole_rows(1.0),
                        domain=PublicDomain(1.0, x_bound=self.x_bound))

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        Z = np.asarray(self.points, dtype=float)
        d2 = ((np.asarray(data.X)[None, :, :] - Z[:, None, :]) ** 2).sum(axis=2)
        m = np.exp(-0.5 * d2 / self.lengthscale**2) @ np.asarray(data.y, dtype=float)
        return m + self.sigma * rng.standard_normal((n, m.size))


def _grid_data(n: int = 20, dim: int = 1) -> Dataset:
    rng = np.random.default_rng(5)
    X = np.linspace(0.0, 1.0, n)[:, None] if dim == 1 else rng.uniform(0.0, 1.0, (n, dim))
    return Dataset(X, np.sin(6 * X[:, 0]))


def test_A9_the_position_score_is_the_shift_over_the_spread():
    rng = np.random.default_rng(0)
    e = rng.standard_normal((4, 2))
    shift = np.array([0.6, -0.8])
    out0, out1 = 1.0 + 2.0 * e, 1.0 + shift + 2.0 * e
    sd = (2.0 * e).std(axis=0, ddof=1)
    assert coupled_shift(out0, out1) == pytest.approx(float(np.linalg.norm(shift / sd)))
    fixed = np.zeros((4, 1))
    assert coupled_shift(fixed, fixed + 1.0) == np.inf  # a noise-free output that moves
    assert coupled_shift(fixed, fixed) == 0.0  # nothing varies, nothing moves


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_A9_the_search_finds_the_release_point_between_the_inputs(seed):
    z, ell = 7.5 / 19, 0.02  # the middle of a gap of the 20-point grid k/19
    mech = KernelSums(((z,),), lengthscale=ell)
    data = _grid_data()
    assert np.min(np.abs(data.X[:, 0] - z)) > 1.2 * ell  # no input of the data is near z
    out = search_positions(mech, data, mech.claim.relation, np.random.default_rng(seed))
    assert out.calls <= MAX_CALLS and out.pairs
    assert abs(out.best[0]["x"][0] - z) < ell / 4
    for p in out.pairs:
        assert is_neighbour(p.d0, p.d1, mech.claim.relation)
        assert set(np.abs(np.concatenate([p.d0.y, p.d1.y]))) <= set(np.abs(data.y)) | {1.0}
    again = search_positions(mech, data, mech.claim.relation, np.random.default_rng(seed))
    assert again.best == out.best  # a function of the seed


def test_A9_the_search_in_two_dimensions_and_inside_a_declared_input_bound():
    z = (0.31, 0.77)
    mech = KernelSums((z,), lengthscale=0.08)
    data = _grid_data(dim=2)
    out = search_positions(mech, data, mech.claim.relation, np.random.default_rng(3))
    assert np.linalg.norm(np.subtract(out.best[0]["x"], z)) < 0.08 / 2
    # a point beyond the declared bound: the search stops at the bound, never past it
    far = KernelSums(((0.95,),), lengthscale=0.1, x_bound=0.9)
    found = search_positions(far, _grid_data(), far.claim.relation,
                             np.random.default_rng(0), x_bound=0.9)
    xs = [b["x"][0] for b in found.best]
    assert max(xs) <= 0.9 and max(xs) == pytest.approx(0.9, abs=0.01)


def test_A9_the_search_uses_the_declared_labels_and_needs_whole_rows():
    mech = KernelSums(((0.5,),))
    data = _grid_data()
    out = search_positions(mech, data, mech.claim.relation, np.random.default_rng(0),
                           labels=(-1.0, 0.0, 1.0))
    assert {float(p.d0.y[out.row]) for p in out.pairs} == {1.0}
    assert {float(p.d1.y[out.row]) for p in out.pairs} == {-1.0}
    none = search_positions(mech, data, outputs_only(1.0), np.random.default_rng(0))
    assert none.pairs == [] and none.calls == 0


def test_A9_with_positions_extends_the_survey_and_skips_with_a_reason():
    mech = KernelSums(((0.5,),))
    data = _grid_data()
    base = couple_pairs(mech, [(data, data.with_row(10, data.X[10], -1.0))],
                        np.random.default_rng(0))
    assert base.couplings[0].status == "additive"
    survey, added = with_positions(mech, base, data, mech.claim.relation,
                                   np.random.default_rng(1))
    assert len(added) >= 1 and len(survey.pairs) == len(base.pairs) + len(added)
    assert survey.result().details["positions"]["pairs"] == [p.label for p in added]
    same, none = with_positions(mech, base, data, outputs_only(1.0), np.random.default_rng(1))
    assert none == [] and same is base

    class Unseeded(KernelSums):
        def sample(self, data, n, rng):
            return super().sample(data, n, np.random.default_rng())  # not from its rng

    loose = Unseeded(((0.5,),))
    survey = couple_pairs(loose, [(data, data.with_row(10, data.X[10], -1.0))],
                          np.random.default_rng(0))
    skipped, none = with_positions(loose, survey, data, loose.claim.relation,
                                   np.random.default_rng(1))
    assert none == [] and "not reproducible" in skipped.positions["skipped"]


def test_A9_a_release_that_ignores_the_inputs_finds_no_place():
    @dataclass(frozen=True)
    class Sum:
        claim = KernelSums(((0.5,),)).claim

        def sample(self, data, n, rng):
            return np.sum(data.y) + 8.0 * rng.standard_normal((n, 1))

    out = search_positions(Sum(), _grid_data(), Sum.claim.relation, np.random.default_rng(0))
    # START_POINTS, no refinement, the one pair of corners of a 1-D box, and the first-pass
    # places out of a cluster at each of its two corners: none moves anything
    assert out.flat and out.pairs == [] and out.calls == START_POINTS + 1 + 2 * START_POINTS


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_A9_a_declared_input_box_is_searched_beyond_the_data(seed):
    """A point evaluated far beyond the data (a forecast at 1.7, data on [0, 1]) is reached
    when |x| <= 2 is declared: every input there is legal."""
    mech = KernelSums(((1.7,),), lengthscale=0.1, x_bound=2.0)
    out = search_positions(mech, _grid_data(), mech.claim.relation,
                           np.random.default_rng(seed), x_bound=2.0)
    assert abs(out.best[0]["x"][0] - 1.7) < 0.1 / 4
    assert out.calls <= MAX_CALLS + START_POINTS


def test_A1_generated_pairs_stay_inside_a_declared_input_bound():
    from dpgp_audit.audit.runner import audit_mechanism

    @dataclass(frozen=True)
    class Enforced(KernelSums):  # refuses an input beyond the bound, as its domain says
        def sample(self, data, n, rng):
            self.claim.domain.inputs(data.X)
            return super().sample(data, n, rng)

    mech = Enforced(((0.5,),), x_bound=1.5)
    report = audit_mechanism(mech, _grid_data(), np.random.default_rng(0),
                             auditors=("greybox",))
    statuses = report.result("greybox").details["statuses"]
    assert sum(statuses.values()) > 40 and "rejected" not in statuses
    before = neighbour_pairs(_grid_data(), mech.claim.relation, np.random.default_rng(0))
    assert any(np.max(np.abs(p.d1.X)) > 1.5 for p in before)  # the far outliers
    inside = within_inputs(before, 1.5)
    assert inside and all(max(np.max(np.abs(p.d0.X)), np.max(np.abs(p.d1.X))) <= 1.5
                          for p in inside)
    assert all(is_neighbour(p.d0, p.d1, mech.claim.relation) for p in inside)
    assert clip_inputs(before[0], None) is before[0]


# ------------------------------------------------------------ releases of the inputs alone
@dataclass(frozen=True)
class InputsOnly:
    """``f(x_i) summed over rows + N(0, σ²)``, whole rows in ``|x| <= 1``: the target unused.

    ``kind``: ``"contrast"`` Σ⟨x, (1, -1)⟩/√2 (a row moves it by at most 2√2, between
    (1, -1) and (-1, 1)); ``"cross"`` Σ x₁x₂ (at most 2, between corners whose products
    differ in sign); ``"sketch"`` P Σx for a public 3 × 8 P.
    """

    kind: str
    sens: float  # the sensitivity the σ is calibrated for

    @property
    def claim(self) -> ApproxDP:
        return ApproxDP(epsilon=1.0, delta=1e-5, relation=whole_rows(1.0),
                        domain=PublicDomain(1.0, x_bound=1.0))

    def query(self, X: np.ndarray) -> np.ndarray:
        if self.kind == "contrast":
            return np.array([np.sum(X @ np.array([1.0, -1.0])) / np.sqrt(2.0)])
        if self.kind == "cross":
            return np.array([np.sum(X[:, 0] * X[:, 1])])
        return SKETCH @ X.sum(axis=0)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
        from dpgp_audit.privacy.float_release import float_safe_release

        m = self.query(self.claim.domain.inputs(data.X))
        self.claim.domain.targets(data.y)
        sigma = analytic_gaussian_sigma(1.0, 1e-5, self.sens)
        return float_safe_release(m, sigma * rng.standard_normal((n, m.size)), sigma)




def _box_data(dim: int) -> Dataset:
    rng = np.random.default_rng(7)
    return Dataset(rng.uniform(-1, 1, (40, dim)), rng.uniform(-1, 1, 40))


def _corner_move(pair) -> tuple[np.ndarray, np.ndarray]:
    row = int(np.flatnonzero(np.any(pair.d0.X != pair.d1.X, axis=1))[0])
    return pair.d0.X[row], pair.d1.X[row]


@pytest.mark.parametrize(("kind", "best"), [("contrast", 2 * np.sqrt(2.0)), ("cross", 2.0)])
def test_A9_a_release_of_the_inputs_alone_is_searched_across_the_box_corners(kind, best):
    """Flipping the target moves nothing, so the search moves the row between corners; the
    largest move of the query over pairs of corners is known in closed form."""
    mech = InputsOnly(kind, 1.0)
    out = search_positions(mech, _box_data(2), mech.claim.relation, np.random.default_rng(0),
                           x_bound=1.0)
    assert out.flat and out.pairs
    a, b = _corner_move(out.pairs[0])
    assert set(np.abs(np.concatenate([a, b]))) == {1.0}  # corners of |x| <= 1
    moved = float(np.abs(mech.query(a[None]) - mech.query(b[None]))[0])
    assert moved == pytest.approx(best)
    assert out.calls <= MAX_CALLS + START_POINTS + SWING_CALLS + CLUSTER_CALLS
    assert "moved across the input box" in out.pairs[0].label


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(("kind", "claimed", "true_sens"), [
    ("contrast", 2.0, 2 * np.sqrt(2.0)),  # |<x, v>| <= ||x||_2 <= 1 read off a box bound
    ("sketch", 2 * np.sqrt(8.0), None),  # "a sketch preserves norms": sup ||P(a - b)||
])
def test_A9_the_default_path_flags_a_release_of_the_inputs_calibrated_for_too_little(
        seed, kind, claimed, true_sens):
    from dpgp_audit.audit.result import Verdict
    from dpgp_audit.audit.runner import audit_mechanism

    if true_sens is None:  # every pair of corners of the 8-cube: 2 max_s ||P s||
        import itertools

        true_sens = 2 * max(np.linalg.norm(SKETCH @ np.array(s))
                            for s in itertools.product((1.0, -1.0), repeat=8))
    assert true_sens > 1.25 * claimed  # the premise: a real excess
    data = _box_data(2 if kind == "contrast" else 8)
    report = audit_mechanism(InputsOnly(kind, claimed), data, np.random.default_rng(seed))
    assert report.verdict is Verdict.VIOLATION
    assert "so the row was moved between corners of the input box" in report.table()
    # and calibrated for the true sensitivity, the same release is clean
    fixed = audit_mechanism(InputsOnly(kind, true_sens), data, np.random.default_rng(seed))
    assert fixed.verdict is Verdict.NO_EVIDENCE


# ------------------------------------------------------- a cluster at a corner, one row moved out
@dataclass(frozen=True)
class ReferenceDistance:
    """An unbiased MMD² between the rows' inputs and a public reference sample ``Z`` (EQ
    kernel, lengthscale 0.3), with Laplace noise of scale ``3 / (n ε)``, whole rows in
    ``|x| <= 1``, the target unused (test double).

    The slip: one row moves the within term by 2/n (it sits in 2(n − 1) ordered pairs), not
    1/n. Moving row j from x to x′ moves the statistic by ``ΔW − ΔC`` with
    ``|ΔW| <= 2/n`` (the mean over the other rows of ``k(x′, ·) − k(x, ·)``, doubled) and
    ``|ΔC| <= 2/n``, so the true ε is at most ``4/3``; both terms reach their extremes
    together only when the other rows sit far from ``Z`` and the row lands on ``Z``, a
    dataset unlike one spread over ``Z``.
    """

    reference: tuple[float, ...] = tuple(np.linspace(0.3, 0.7, 15))

    @property
    def claim(self):
        from dpgp_audit.privacy.claims import PureDP

        return PureDP(epsilon=1.0, relation=whole_rows(1.0),
                      domain=PublicDomain(1.0, x_bound=1.0))

    def statistic(self, x: np.ndarray) -> float:
        z = np.asarray(self.reference)
        n, m = x.size, z.size

        def k(a, b):
            return np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / 0.3**2)

        kxx, kzz = k(x, x), k(z, z)
        return float((kxx.sum() - np.trace(kxx)) / (n * (n - 1)) - 2 * k(x, z).mean()
                     + (kzz.sum() - np.trace(kzz)) / (m * (m - 1)))

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        from dpgp_audit.privacy.float_release import (
            laplace_noise_exact_uniform,
            laplace_release,
            round_to_grid,
        )

        x = self.claim.domain.inputs(data.X)[:, 0]
        self.claim.domain.targets(data.y)
        if x.size < 2:
            raise ValueError(f"the unbiased MMD needs 2 rows or more, got n = {x.size}")
        scale = np.full(1, 3.0 / x.size)
        noise = laplace_noise_exact_uniform(scale, (n, 1), rng)
        return round_to_grid(np.array([self.statistic(x)]), noise,
                             laplace_release(scale).grid)


def test_A9_a_release_of_the_inputs_is_searched_out_of_a_cluster_at_each_corner():
    """Flipping the target moves nothing, so besides the corner swings the search puts every
    input at one corner and moves one row out: the best place is among the reference points
    (the statistic's largest move, against the far corner), which no corner reaches."""
    mech = ReferenceDistance()
    data = Dataset(np.linspace(0.0, 1.0, 40)[:, None], np.sin(np.linspace(0.0, 6.0, 40)))
    out = search_positions(mech, data, mech.claim.relation, np.random.default_rng(1),
                           x_bound=1.0)
    assert out.flat
    moves = [b for b in out.best if b.get("cluster")]
    assert moves and all(0.3 <= b["x_to"][0] <= 0.7 for b in moves)
    far = max(moves, key=lambda b: b["score"])
    assert far["x"] == [-1.0]  # the corner farther from the reference sample
    pair = next(p for p in out.pairs if "every x at the corner (-1)" in p.label)
    assert is_neighbour(pair.d0, pair.d1, mech.claim.relation)
    assert np.all(pair.d0.X == -1.0) and np.sum(pair.d0.X != pair.d1.X) == 1
    assert out.calls <= out.max_calls == MAX_CALLS + START_POINTS + SWING_CALLS + CLUSTER_CALLS


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_A9_the_default_path_flags_a_reference_distance_only_a_cluster_exposes(seed):
    """The grey-box bound on the cluster pair is definitive and within the closed-form 4/3."""
    from dpgp_audit.audit.result import Verdict
    from dpgp_audit.audit.runner import audit_mechanism

    mech = ReferenceDistance()
    data = Dataset(np.linspace(0.0, 1.0, 40)[:, None], np.sin(np.linspace(0.0, 6.0, 40)))
    report = audit_mechanism(mech, data, np.random.default_rng(seed),
                             auditors=("greybox", "blackbox"))
    gb = report.result("greybox")
    assert gb.verdict is Verdict.VIOLATION and 1.0 < gb.estimate <= 4 / 3
    assert "every x at the corner" in gb.details["witness_label"]
