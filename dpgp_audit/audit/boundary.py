"""Structure boundaries: where a calibration read off the private data flips (catalogue A.9).

A release whose noise is calibrated from the private targets — a lengthscale or signal
variance fitted to them, a noise scale read off ``var(y)``, a branch on their mean — is
additive in its noise on every neighbour pair of the user's D on which the calibration
does not move, and the coupled survey (:mod:`~dpgp_audit.audit.greybox`) then measures
the query change alone: the audit passes. The leak sits where the calibration flips: one
record moves it, and the two releases have different noise laws (two Gaussians of
unequal covariance are not (ε, δ)-close for any useful ε). Such datasets are rarely the
user's, so this module looks for them without knowing the statistic:

1. along each path of bases ``D(t)`` of
   :func:`~dpgp_audit.audit.neighbours.structure_paths` (the data's targets scaled,
   alternating and half-and-half signs, a constant, and from the data's targets to
   alternating signs and to a constant, where rows cross zero one at a time), consecutive
   bases on a grid of
   :data:`SEGMENTS` steps are run on one seed and compared by
   :func:`~dpgp_audit.audit.greybox.same_structure` (the same draws with the same scales,
   and a coupled difference that is constant across the releases of the call);
2. where two consecutive bases differ, :data:`BISECT` halvings bring two bases of
   different structure within ``2^-BISECT`` of a grid step of each other (on a path of
   class labels, :class:`~dpgp_audit.audit.neighbours.LabelCountPath`, the halvings stop
   when the two bases are one row apart);
3. on each of those two bases one row moves by the relation's step towards the other
   (:meth:`~dpgp_audit.audit.neighbours.BasePath.boundary_pairs`); a pair whose own
   coupled run shows two structures is kept (at most :data:`MAX_PAIRS`).

The pairs kept are ordinary neighbour pairs inside the declared domain. Nothing here is a
verdict: the coupled survey analyses them (an unequal-scale bound beyond the claim,
reproduced on a fresh seed, is definitive, as for every other pair) and the black-box
auditor certifies them on fresh draws. The bases compared in steps 1–2 differ in every
row and are never called neighbours. The search is deterministic given its seed and
spends at most :data:`MAX_CALLS` coupled calls of
:data:`~dpgp_audit.audit.greybox.PROBE_ROWS` releases per side; it runs only for a
release the survey found additive in its noise on some pair (for any other, every two
bases differ and there is no boundary to find), reproducible from its generator, with
no definitive finding yet. Along the paths of class labels the first condition is waived:
consecutive counts are one row apart, so a release that is not additive in the noise the
survey can model — integer noise on a count, a count suppressed below a threshold — still
shows the one step where its structure changes (its noise drawn or not, its coupled
difference constant or not), and costs at most one grid pass and a bisection when it
changes at every step (randomised response).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import one_line
from dpgp_audit.audit.greybox import (
    PROBE_ROWS,
    CoupledRun,
    CouplingSurvey,
    couple,
    coupled_shift,
    same_structure,
)
from dpgp_audit.audit.neighbours import (
    LabelCountPath,
    NeighbourPair,
    StructurePath,
    group_size_pairs,
    on_labels,
    structure_paths,
)
from dpgp_audit.contract import ContractError, Mechanism
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import Neighbour, NeighbourRelation

__all__ = ["ADDITIVE_STATUSES", "BISECT", "BOUNDARY_RELEASES", "MAX_CALLS", "MAX_PAIRS",
           "SEGMENTS", "BoundarySearch", "moves_without_noise", "search_boundaries",
           "skip_reason", "with_boundaries", "with_group_sizes"]

#: Grid steps per path in the first pass.
SEGMENTS = 6
#: Halvings of a grid step that shows a change (the bases end within 2^-BISECT of a step).
BISECT = 24
#: Coupled calls the search may make in all (a deterministic allowance).
MAX_CALLS = 96
#: Boundary pairs handed to the coupled survey, at most.
MAX_PAIRS = 4
#: Releases per side the coupled survey of the pairs kept may draw (probe, fit, confirmation).
BOUNDARY_RELEASES = 256
#: Survey statuses of a release verified affine in its recorded noise.
ADDITIVE_STATUSES = ("additive", "additive-mixed", "additive-grid", "additive-declared-grid")


@dataclass
class BoundarySearch:
    """What the search did: calls made, boundaries located, pairs kept (JSON-ready)."""

    calls: int = 0
    max_calls: int = MAX_CALLS
    boundaries: list[dict] = field(default_factory=list)
    pairs: list[NeighbourPair] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        """The record the grey-box result keeps (``details["boundary"]``)."""
        return {"calls": self.calls, "max_calls": self.max_calls,
                "boundaries": self.boundaries, "pairs": [p.label for p in self.pairs],
                "refused": self.refused}


def skip_reason(survey: CouplingSurvey, *, additive: bool = True) -> str | None:
    """Why the search does not run after ``survey`` (``None``: it runs).

    ``additive=False`` waives the condition that some pair was additive in its recorded
    noise: along the paths of class labels (:class:`~dpgp_audit.audit.neighbours.
    LabelCountPath`) one step moves one row, so a release that is not additive (integer
    noise, a threshold) still shows where its structure changes.
    """
    if survey.reproducible is not True:
        return "sample() is not reproducible from its generator, so no two runs are coupled"
    if any(c.finding == "violation" for c in survey.couplings):
        return "the survey already has a definitive finding"
    if additive and not any(c.status in ADDITIVE_STATUSES for c in survey.couplings):
        return "no pair was additive in its recorded noise"
    return None


def moves_without_noise(run: CoupledRun) -> bool:
    """Whether an output that does not vary on either side of a coupled run differs between them.

    :func:`~dpgp_audit.audit.greybox.same_structure` reads a coupled difference that is the
    same on every release as a shift of the query under the same noise, and so it is for a
    noisy output. An output constant on both sides that changes is a step of a release
    without noise there — a mode published once an un-noised margin clears its threshold,
    ``⊥`` below it — and the place of such a step is a boundary as much as a change of
    noise law (ε = ∞ on the neighbours across it). The survey's score says so
    (:func:`~dpgp_audit.audit.greybox.coupled_shift` is ``inf`` exactly then). Needs two
    releases a side.
    """
    return run.n >= 2 and math.isinf(coupled_shift(run.out0, run.out1))


def search_boundaries(mechanism: Mechanism, data: Dataset, relation: NeighbourRelation,
                      rng: np.random.Generator, *, y_bound: float | None = None,
                      labels: Sequence[float] | None = None,
                      max_calls: int = MAX_CALLS, max_pairs: int = MAX_PAIRS,
                      paths: Sequence[StructurePath] | None = None
                      ) -> BoundarySearch:
    """Neighbour pairs across a change of the noise structure (module docstring).

    Parameters
    ----------
    mechanism
        Anything with ``sample(data, n, rng)`` that draws from the generator it is handed.
    data
        The user's D: its inputs, size and targets shape the paths.
    relation
        The claim's relation (outputs only or whole rows; none for all answers).
    rng
        Source of the search's seeds.
    y_bound
        Outputs only: the declared target bound.
    labels
        The declared class labels, if any: the paths then move rows from one label to the
        next one at a time (:func:`~dpgp_audit.audit.neighbours.label_count_paths`), since
        the other paths' intermediate targets are outside the domain.
    max_calls, max_pairs
        The allowance (coupled calls) and the most pairs kept.
    paths
        The paths walked (default :func:`~dpgp_audit.audit.neighbours.structure_paths`
        of ``data``); a path of one's own, e.g. from one pattern to another at a large
        amplitude, looks for a boundary elsewhere.

    Returns
    -------
    BoundarySearch
        Its ``pairs`` are neighbours under ``relation`` inside the domain.
    """
    root = np.random.SeedSequence([int(v) for v in rng.integers(0, 2**32, size=4)])
    out = BoundarySearch(max_calls=max_calls)

    def same(a: Dataset, b: Dataset, what: str) -> bool | None:
        out.calls += 1
        try:
            run = couple(mechanism, a, b, PROBE_ROWS, root.spawn(1)[0])
        except ContractError:
            raise
        except (ValueError, ArithmeticError) as err:  # a base the mechanism refuses
            out.refused.append(one_line(f"{what}: {type(err).__name__}: {err}"))
            return None
        return same_structure(run) and not moves_without_noise(run)

    found = []
    if paths is None:
        paths = structure_paths(data, relation, y_bound=y_bound, labels=labels)
    for path in paths:
        ts = np.linspace(path.start, path.stop, SEGMENTS + 1)
        for lo, hi in zip(ts[:-1], ts[1:], strict=True):
            if out.calls >= max_calls:
                break
            verdict = same(path.at(lo), path.at(hi), path.label)
            if verdict is None:
                break
            if not verdict:
                found.append((path, float(lo), float(hi)))
                break  # the first change along a path
    for path, lo, hi in found:
        if len(out.pairs) >= max_pairs:
            break
        for _ in range(BISECT):
            if out.calls >= max_calls or path.resolved(lo, hi):
                break
            mid = path.midpoint(lo, hi)
            verdict = same(path.at(lo), path.at(mid), path.label)
            if verdict is None:
                break
            lo, hi = (mid, hi) if verdict else (lo, mid)
        out.boundaries.append({"path": path.label, "t": [lo, hi]})
        for pair in path.boundary_pairs(lo, hi, relation):
            if len(out.pairs) >= max_pairs or out.calls >= max_calls:
                break
            if same(pair.d0, pair.d1, pair.label) is False:
                out.pairs.append(pair)
    return out


def with_boundaries(mechanism: Mechanism, survey: CouplingSurvey, data: Dataset,
                    relation: NeighbourRelation, rng: np.random.Generator, *,
                    y_bound: float | None = None, labels: Sequence[float] | None = None
                    ) -> tuple[CouplingSurvey, list[NeighbourPair]]:
    """The default path's grey-box step after the survey of the generated pairs.

    Runs :func:`search_boundaries` unless :func:`skip_reason` says why not, surveys the pairs
    it keeps (at most :data:`BOUNDARY_RELEASES` releases per side, findings confirmed on a
    second seed as every other pair's) and returns the survey extended by them, with the
    search's record in ``boundary``, and the pairs added (for the later auditors).
    """
    paths = structure_paths(data, relation, y_bound=y_bound, labels=labels)
    on_labels = bool(paths) and isinstance(paths[0], LabelCountPath)  # all or none of them
    why = skip_reason(survey, additive=not on_labels)
    if why is not None:
        return dataclasses.replace(survey, boundary={"skipped": why}), []
    search = search_boundaries(mechanism, data, relation, rng, y_bound=y_bound, labels=labels,
                               paths=paths)
    survey = survey.with_pairs(mechanism, search.pairs, rng, max_releases=BOUNDARY_RELEASES)
    return dataclasses.replace(survey, boundary=search.as_dict()), list(search.pairs)


def with_group_sizes(mechanism: Mechanism, survey: CouplingSurvey, data: Dataset,
                     relation: NeighbourRelation, rng: np.random.Generator, *,
                     labels: Sequence[float] | None = None
                     ) -> tuple[CouplingSurvey, list[NeighbourPair]]:
    """The grey-box step for a noise law read off the data: the smallest input groups.

    Under whole rows, when some surveyed pair's noise parameters depended on the data
    (status ``noise-depends-on-data``), a scale computed from how many rows share an
    input (a group's size) changes most where a group holds one or two rows, which the
    user's data rarely has: the pairs of
    :func:`~dpgp_audit.audit.neighbours.group_size_pairs` (moved onto the declared
    labels) are surveyed like every other pair (at most :data:`BOUNDARY_RELEASES` releases
    per side, findings confirmed on a second seed) and returned for the later auditors.
    The survey's ``group_sizes`` records the pairs added, or why none were.
    """
    if relation.kind is not Neighbour.ROWS or not any(
            c.status == "noise-depends-on-data" for c in survey.couplings):
        return survey, []
    why = skip_reason(survey, additive=False)
    if why is not None:
        return dataclasses.replace(survey, group_sizes={"skipped": why}), []
    pairs = group_size_pairs(data, relation)
    if labels is not None:
        pairs = on_labels(pairs, relation, labels)
    survey = survey.with_pairs(mechanism, pairs, rng, max_releases=BOUNDARY_RELEASES)
    return (dataclasses.replace(survey, group_sizes={"pairs": [p.label for p in pairs]}),
            list(pairs))
