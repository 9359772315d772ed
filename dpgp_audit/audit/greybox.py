"""Grey-box coupled auditor: M(D) and M(D′) on the same seed, draw by draw (catalogue A.9).

Every mechanism of the kit draws its noise from the generator the auditor hands it.
Handing it a :class:`~dpgp_audit.audit.recording.RecordingGenerator` for D and another
built from the *same* seed for D′ couples the two runs: as long as the mechanism asks
for the same noise, it gets the same noise, so whatever differs between the two outputs
was caused by the data. This is the principle of Re:cord-play (Cebere et al., PETS
2026), applied here with the kit's claims and exact profiles. Per neighbour pair the
auditor runs a handful of coupled calls (one vectorised ``sample`` call per side and
run) and reports:

(a) **diverging draws** — the two logs differ in which samplers are called or in the
    shape of a draw: the data decides which or how much noise is drawn (control flow);
(b) **data-dependent noise** — a noise scale (``scale``, ``cov``, a uniform's width)
    differs between D and D′, or the release's linear map from the noise differs;
(c) **additive releases** — when every draw is Gaussian or Laplace noise and each
    release is exactly affine in the noise it drew (verified by least squares on the
    recorded values with spare rows, and on both datasets), the release is
    ``c(D) + A·e`` with a known noise law, so the coupled difference ``c(D′) − c(D)``
    is the query change itself. Against the recorded noise it gives the exact μ =
    ‖Σ^{−1/2}Δ‖ of the pair (Σ = A Σ_e Aᵀ, with the white-box range check) or its
    Laplace ε = Σ_j |Δ_j|/b_j, and hence the exact ε(δ) to compare with the claim. The
    kit's exact Laplace sampler draws only uniform integers: :func:`decode_kit_laplace`
    replays them through the sampler's own arithmetic
    (:func:`~dpgp_audit.privacy.float_release.decode_laplace_exact_uniform`) into
    standard Laplace draws, the scale b entering through the fitted map;
(c′) **rounded additive releases** — a Gaussian or Laplace release rounded to a public
    power-of-two grid after the noise (the kit's float-safe releases,
    privacy/float_release.py), seen on every release as ``Λ_k round((c_k + a_k·e)/Λ_k)``:
    a *lower bound* on the pair's μ (:func:`grid_mu_lower`) or pure ε
    (:func:`grid_laplace_epsilon`; docs/auditors.md "Releases rounded to a public grid"); a
    release rounded in the noise's own coordinates is first mapped back by the public
    inverse of its noise factor (a post-processing); with a grid only declared, a lead;
(c″) **unequal scales** — when (b) is a Gaussian or Laplace noise scale and each side's
    release is verified affine in its own noise (exactly, or up to a grid its outputs
    show), each side is a law of its own scale: along a few directions w (for Laplace,
    single outputs carrying one Laplace value), the scalar w·release under D and D′ is
    bounded by :func:`~dpgp_audit.privacy.unequal_scale.hockey_stick_lower` over the fits'
    error boxes, a *lower bound* on the pair's δ(ε) (:func:`_unequal_bound`);
(d) **no noise at all** — a release that draws nothing from the generator and returns
    the same value on every run with different seeds, yet differs between D and D′,
    is a pair of point masses (ε = ∞); likewise a release that draws nothing for one
    dataset while its neighbour's release is continuous;
(e) **a refusal of one legal side** — ``ValueError`` for one dataset of a pair and a
    release for the other, both inside the claim's declared domain, the refusal before
    any draw on two seeds (:func:`_one_side_refusal`): the error itself tells them apart
    (ε = ∞).

Soundness
---------
Only (c), (c′) and (c″) beyond the claim, (d) and (e) are *definitive*, and only after a
second coupled run on a fresh seed reproduces them: they set ``VIOLATION`` with the guarantee
:attr:`~dpgp_audit.audit.result.Guarantee.GREYBOX_EXACT` — exact for the witness pair
*given the recorded structure* (the release was affine in the recorded noise on every
row seen; (d) rests on the ``Mechanism`` contract that all randomness comes from the
handed generator; (e) likewise) — or, for (c′),
:attr:`~dpgp_audit.audit.result.Guarantee.GREYBOX_GRID`: a lower bound given the
recorded structure (affine up to the rounding to the grid seen on every row), or, for
(c″), :attr:`~dpgp_audit.audit.result.Guarantee.GREYBOX_SCALE`, the same with each side's
own noise law. (a), (b) that no bound takes beyond the claim,
a noise-free output coordinate that moves, a bound on a declared grid, and every score
of a release that is not verified additive are **leads**: they never set a violation;
they rank the pairs, and the white-box and black-box auditors certify.
No statistics are involved, so no α is spent: the runs only choose and describe pairs
(the certifying auditors draw fresh samples).

The survey is cheap — a few releases per pair and side — so for slow mechanisms its
ranking (:func:`rank_pairs_by_coupling`) replaces pilot sampling of every pair.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng, one_line
from dpgp_audit.audit.neighbours import NeighbourPair
from dpgp_audit.audit.recording import (
    Draw,
    DrawLog,
    recording_generator,
    recording_pair,
    verify_log,
)
from dpgp_audit.audit.result import AuditResult, Guarantee, Verdict
from dpgp_audit.contract import ContractError, Mechanism, checked_sample, same_release_shape
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.domain import domain_problem
from dpgp_audit.privacy.float_release import (
    NO_SET_BIT,
    decode_laplace_exact_uniform,
    lowest_set_bits,
)
from dpgp_audit.privacy.unequal_scale import (
    FAMILIES,
    ScaleBox,
    candidate_events,
    hockey_stick_lower,
)

__all__ = [
    "DISCRETE_SAMPLERS",
    "GRID_MAX_REL",
    "MAX_RELEASES",
    "AffineFit",
    "CoupledRun",
    "CouplingSurvey",
    "GridFit",
    "NoiseDesign",
    "PairCoupling",
    "audit_greybox",
    "couple",
    "couple_pairs",
    "coupled_shift",
    "decode_kit_laplace",
    "kit_laplace_runs",
    "fit_affine",
    "fit_grid",
    "fit_precision",
    "grid_laplace_epsilon",
    "grid_mu_best",
    "grid_mu_lower",
    "noise_design",
    "output_grid",
    "value_grid",
    "rank_pairs_by_coupling",
    "same_structure",
]

#: Samplers whose draws can enter a release additively with a known law.
ADDITIVE_FAMILIES: dict[str, str] = {"standard_normal": "gaussian", "normal": "gaussian",
                                     "multivariate_normal": "gaussian", "laplace": "laplace"}
#: Tolerance of the affine fit, relative to the size of the noise each output receives.
#: Round-off of a textbook ``q + noise`` at the float-safety margin (spacing <= 2^-20 of
#: the noise sd, privacy/domain.py) stays below it; a release that rounds on a coarser grid
#: than that — the kit's own releases, rounded to a public grid of about sd/1500
#: (issue 20 §4) — clips, selects or iterates misses by far more and is not called affine.
FIT_RTOL = 1e-6
#: A release rounded to a grid is bounded (grid-additive, :func:`_analyse_grid`) only when
#: each output's grid is at most this fraction of the noise sd it receives (the kit's
#: float-safe grid is between sd/2048 and sd/1024, privacy/float_release.py).
GRID_MAX_REL = 2.0**-8
#: Samplers whose values are integer-valued noise in their own right (not uniform words of
#: an exact continuous sampler, ``integers``): a release drawing only from these is not a
#: rounded continuous release (:func:`same_structure`).
DISCRETE_SAMPLERS: tuple[str, ...] = ("binomial", "geometric", "hypergeometric", "logseries",
                                      "multinomial", "multivariate_hypergeometric",
                                      "negative_binomial", "poisson", "zipf")
#: Two recorded parameters or noise maps "differ" above this relative difference.
PARAM_RTOL = 1e-12
#: Spare rows beyond the unknowns of the affine fit (its residual degrees of freedom).
EXTRA_ROWS = 3
#: Releases per side of the first coupled call (it reveals the noise per release).
PROBE_ROWS = 4
#: Most releases per side in one coupled call.
MAX_ROWS = 256
#: Releases per side the survey may draw over all pairs on the default path (the
#: ``GreyBoxPart``'s allowance): a deterministic budget; 37-57 generated pairs at four
#: releases each, plus confirmations and wider calls for vector releases, fit inside it.
MAX_RELEASES = 1024
#: How :func:`fit_affine` says a call had too few releases to check its fit, and how
#: :func:`noise_design` names draws it has no exact bound for (:func:`_unbounded_status`).
CANNOT_CHECK = "cannot check an affine fit"
OTHER_NOISE = "draws other than Gaussian or Laplace noise"
_REL_SLACK = 1e-9  # as the white-box auditor: floating-point slack against a claim
#: An exact estimate read off a verified affine fit is known only to about the fit's
#: largest residual over the smallest noise an output receives (float64 round-off:
#: ~1e-15; a release computed in float32: ~1e-7). It must exceed the claim by this many
#: times that precision to be called a violation: the shift and the noise map each carry
#: about one such error, and an ε or ρ moves at most a few times faster than μ.
FIT_MARGIN = 64.0

# tiers of the ranking (higher first)
_VIOLATION, _LEAD, _MEASURED, _NOTHING = 3, 2, 1, 0


# --------------------------------------------------------------------------- one coupled call
@dataclass(frozen=True, eq=False)
class CoupledRun:
    """One call of ``sample`` per side, both on generators built from one seed.

    ``out0``/``out1`` are the releases flattened to ``(n, d)``; ``log0``/``log1`` what the
    generators recorded; ``complete0``/``complete1`` whether a replay proved that no draw
    escaped the log (:func:`~dpgp_audit.audit.recording.verify_log`).
    """

    n: int
    out0: np.ndarray
    out1: np.ndarray
    log0: DrawLog
    log1: DrawLog
    complete: bool
    why_incomplete: str = ""


def couple(mechanism: Mechanism, d0: Dataset, d1: Dataset, n: int,
           seed: np.random.SeedSequence) -> CoupledRun:
    """Run ``sample(d0, n, ·)`` and ``sample(d1, n, ·)`` on recording generators from ``seed``.

    Raises whatever ``sample`` raises (``ValueError`` for a dataset it refuses).
    """
    n = check_positive_int("n", n)
    g0, g1 = recording_pair(seed)
    raws = [checked_sample(mechanism, d, n, g) for d, g in ((d0, g0), (d1, g1))]
    same_release_shape(mechanism, raws)
    outs = [raw.astype(float).reshape(n, -1) for raw in raws]
    why = ""
    for tag, log in (("D", g0.log), ("D'", g1.log)):
        chk = verify_log(log)
        if not chk.complete:
            why = f"{tag}: {chk.reason}"
        elif any("pickled" in note for note in log.notes):
            why = f"{tag}: the generator was pickled, so a copy may have drawn unrecorded"
    return CoupledRun(n, outs[0], outs[1], g0.log, g1.log, not why, why)


# --------------------------------------------------------------------------- noise design
@dataclass(frozen=True, eq=False)
class NoiseDesign:
    """The recorded noise of one call, one row per release.

    Attributes
    ----------
    E
        ``(n, m)``: the centred noise values (draw − location) of each release.
    family
        ``"gaussian"``, ``"laplace"`` or ``"mixed"``.
    cov
        ``(m, m)`` covariance of a row of ``E`` (Gaussian and mixed; Laplace columns
        carry their variance 2b²).
    laplace_scale
        ``(m,)`` Laplace scale b per column (0 for Gaussian columns).
    """

    E: np.ndarray
    family: str
    cov: np.ndarray
    laplace_scale: np.ndarray


def _centred(d: Draw) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """(values − location, per-element variance, MVN covariance or None, Laplace scale)."""
    v = np.asarray(d.value, dtype=float)
    loc = d.location()
    centred = v - np.broadcast_to(next(iter(loc.values())), v.shape) if loc else v
    if d.method == "multivariate_normal":
        cov = np.atleast_2d(np.asarray(d.params["cov"], dtype=float))
        var = np.broadcast_to(np.diag(cov), v.shape)
        return centred, var, cov, np.zeros(v.shape)
    scale = np.broadcast_to(np.asarray(d.params.get("scale", 1.0), dtype=float), v.shape)
    if d.method == "laplace":
        return centred, 2.0 * scale**2, None, scale
    return centred, scale**2, None, np.zeros(v.shape)


def _block_cov(var: np.ndarray, mvn: np.ndarray | None) -> np.ndarray:
    """Covariance of a flattened piece of one draw (diagonal, or MVN blocks)."""
    if mvn is None:
        return np.diag(np.ravel(var))
    k = mvn.shape[0]
    return np.kron(np.eye(np.size(var) // k), mvn)


def _integer_words(d: Draw) -> tuple[int, int, np.ndarray] | None:
    """``(low, high, values)`` of an ``integers`` draw on ``[low, high)``, else None."""
    if d.method != "integers" or d.value.dtype.kind not in "iu":
        return None
    low, high = d.params.get("low"), d.params.get("high")
    if high is None:  # integers(h) draws on [0, h)
        low, high = 0, low
    if not isinstance(low, int | np.integer) or not isinstance(high, int | np.integer):
        return None  # array bounds: not the kit's sampler
    return int(low), int(high) + (1 if d.params.get("endpoint") else 0), d.value


class _Run(Sequence):
    """``words[start:stop]`` without copying it (the replay reads from the front)."""

    def __init__(self, words: list, start: int, stop: int) -> None:
        self._words, self._start, self._len = words, start, stop - start

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, pos: int) -> tuple[int, int, np.ndarray]:  # type: ignore[override]
        if not 0 <= pos < self._len:
            raise IndexError(pos)
        return self._words[self._start + pos]


def decode_kit_laplace(draws: Sequence[Draw]) -> list[Draw]:
    """The draws with each run of the kit's exact Laplace sampler replaced by its values.

    :func:`~dpgp_audit.privacy.float_release.laplace_noise_exact_uniform` (every Laplace
    release of the kit) draws only uniform integers; a run of consecutive ``integers``
    draws of one stream that
    :func:`~dpgp_audit.privacy.float_release.decode_laplace_exact_uniform` accepts is
    replaced by one ``laplace`` draw of location 0 and scale 1 holding the decoded
    values — bit for bit the values that call computed before multiplying by its scale b,
    which the affine fit then finds as the release's map. Decoding is the sampler's own
    arithmetic, not an estimate; integer draws it rejects are kept as they are (so the
    release stays "not additive").
    """
    return [d for _, _, d in kit_laplace_runs(draws)]


def kit_laplace_runs(draws: Sequence[Draw]) -> list[tuple[int, int, Draw]]:
    """:func:`decode_kit_laplace`'s draws, each with the span ``[start, stop)`` of ``draws``
    it stands for (one draw for a draw kept as it is, the sampler's run for a decoded one).
    """
    # Each draw's integer words once, and where the run of integer draws of one stream
    # that starts at each draw ends (right to left): a start the replay rejects then costs
    # only the draws the replay reads, not the whole run (a discrete Gaussian sampler makes
    # thousands of integer draws per call, and the replay is tried from each of them).
    words = [_integer_words(d) for d in draws]
    end = [0] * len(draws)
    for j in range(len(draws) - 1, -1, -1):
        if words[j] is None:
            end[j] = j
        elif j + 1 < len(draws) and words[j + 1] is not None and \
                draws[j + 1].stream == draws[j].stream:
            end[j] = end[j + 1]
        else:
            end[j] = j + 1
    out: list[tuple[int, int, Draw]] = []
    i = 0
    while i < len(draws):
        d = draws[i]
        if words[i] is not None:
            got = decode_laplace_exact_uniform(_Run(words, i, end[i]))
            if not isinstance(got, str):
                values, used = got
                out.append((i, i + used, Draw(d.stream, "laplace",
                                              {"loc": 0.0, "scale": 1.0,
                                               "size": values.shape}, values)))
                i += used
                continue
        out.append((i, i + 1, d))
        i += 1
    return out


def noise_design(draws: Sequence[Draw], n: int) -> NoiseDesign | str:
    """Split a call's recorded draws into one row of centred noise per release.

    Runs of the kit's exact Laplace sampler are first decoded into standard Laplace draws
    (:func:`decode_kit_laplace`). A draw whose leading axis is a multiple of ``n`` is split
    along it (release i gets the i-th slice); the remaining draws must come in ``n`` equal
    groups in call order (a loop over releases). Returns a reason string when a draw is
    not Gaussian or Laplace noise or the draws do not split into ``n`` releases.
    """
    draws = decode_kit_laplace(draws)
    pieces: list[list[tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray, str]]] = [
        [] for _ in range(n)]
    loose: list[tuple[Draw, tuple]] = []
    for d in draws:
        fam = ADDITIVE_FAMILIES.get(d.method)
        if fam is None:
            return f"{OTHER_NOISE} ({d.method})"
        c, var, mvn, lap = _centred(d)
        if c.ndim >= 1 and c.shape[0] >= n and c.shape[0] % n == 0 and (
                mvn is None or c.ndim >= 2):
            q = c.shape[0] // n
            for i in range(n):
                sl = slice(i * q, (i + 1) * q)
                pieces[i].append((c[sl].ravel(), var[sl], mvn, lap[sl].ravel(), fam))
        else:
            loose.append((d, (c, var, mvn, lap, fam)))
    if loose:
        if len(loose) % n:
            return f"{len(loose)} draws do not split into {n} releases"
        per = len(loose) // n
        sigs = [tuple(x[0].signature() for x in loose[i * per:(i + 1) * per]) for i in range(n)]
        if any(s != sigs[0] for s in sigs):
            return "the releases' draws differ in shape"
        for i in range(n):
            for _, (c, var, mvn, lap, fam) in loose[i * per:(i + 1) * per]:
                pieces[i].append((np.ravel(c), var, mvn, np.ravel(lap), fam))
    if not pieces[0]:
        return "no noise drawn"
    E = np.stack([np.concatenate([p[0] for p in row]) for row in pieces])
    blocks = [_block_cov(p[1], p[2]) for p in pieces[0]]
    m = E.shape[1]
    cov = np.zeros((m, m))
    at = 0
    for b in blocks:
        k = b.shape[0]
        cov[at:at + k, at:at + k] = b
        at += k
    lap = np.concatenate([p[3] for p in pieces[0]])
    fams = {p[4] for p in pieces[0]}
    family = fams.pop() if len(fams) == 1 else "mixed"
    return NoiseDesign(E, family, cov, lap)


# --------------------------------------------------------------------------- affine fit
@dataclass(frozen=True, eq=False)
class AffineFit:
    """``out = intercept + A · e`` on every release of a call (least squares, verified).

    ``noise_free`` marks output coordinates that took one value on every release (their
    row of ``A`` is set to zero).
    """

    intercept: np.ndarray
    A: np.ndarray
    noise_free: np.ndarray
    max_residual: float


def fit_affine(out: np.ndarray, E: np.ndarray, rtol: float = FIT_RTOL, *,
               A: np.ndarray | None = None) -> AffineFit | str:
    """Fit ``out ≈ c + E Aᵀ`` and verify it is exact up to round-off.

    Needs more releases than unknowns (``n > m + 1``): the spare rows are the check.
    With a known map ``A`` (fitted on earlier releases of the same mechanism) only the
    intercept is unknown: every release must then give the same ``out − E Aᵀ``, which
    two releases already check. Returns a reason string when the fit is not exact (the
    release is not affine in the recorded noise, or not with this ``A``) or cannot be
    checked.
    """
    out = np.asarray(out, dtype=float)
    n, m = E.shape
    const = np.all(out == out[:1], axis=0)
    if A is not None:
        if n < 2 or A.shape != (out.shape[1], m):
            return "the known noise map does not apply to this call"
        noise = E @ A.T
        c = (out - noise).mean(axis=0)
        resid = np.abs(out - noise - c).max(axis=0)
        size = np.abs(noise).max(axis=0)
        bad = resid > rtol * size
        if np.any(bad):
            return "the noise map fitted on earlier releases does not hold here"
        A = A.copy()
        A[const] = 0.0
        c[const] = out[0, const]
        return AffineFit(c, A, const, float(resid.max(initial=0.0)))
    X = np.hstack([np.ones((n, 1)), E])
    rank = int(np.linalg.matrix_rank(X))
    if n <= rank:
        return f"{n} releases {CANNOT_CHECK} with {rank} unknowns"
    coef, *_ = np.linalg.lstsq(X, out, rcond=None)
    noise = E @ coef[1:]
    resid = np.abs(out - coef[0] - noise).max(axis=0)
    size = np.abs(noise).max(axis=0)  # the noise each output receives, not its magnitude
    bad = ~const & (resid > rtol * size)
    if np.any(bad):
        j = int(np.flatnonzero(bad)[np.argmax((resid / np.maximum(size, 1e-300))[bad])])
        return (f"not affine in the recorded noise (output {j}: residual {resid[j]:.3g} "
                f"against noise of size {size[j]:.3g})")
    A = coef[1:].T.copy()
    c = coef[0].copy()
    A[const] = 0.0
    c[const] = out[0, const]
    return AffineFit(c, A, const, float(resid.max(initial=0.0)))


#: Fewest surveyed pairs, all unchanged with varied releases, that mark the data as unread.
UNREAD_MIN_PAIRS = 8


def _data_unread(couplings: Sequence[PairCoupling]) -> bool:
    """True when no surveyed pair's release depended on the data handed to ``sample``.

    Every pair that ran gave identical releases on D and D′ under one seed, on at least
    :data:`UNREAD_MIN_PAIRS` pairs, and the releases of a call varied (all rows distinct),
    so the generator did reach them: the release is a function of the seed alone, as when
    ``sample`` reuses a fit cached on its first call or reads a global dataset. A
    selection that rarely changes under coupling repeats its outputs and is not marked.
    """
    ran = [c for c in couplings if c.status not in ("rejected", "not-run")]
    return (len(ran) >= UNREAD_MIN_PAIRS
            and all(c.status == "unchanged" and c.extra.get("varied") for c in ran))


# --------------------------------------------------------------------------- one pair
@dataclass(frozen=True, eq=False)
class PairCoupling:
    """What the coupled runs showed for one neighbour pair.

    Attributes
    ----------
    index, label
        The pair's position in the list audited, and its label.
    status
        ``"additive"`` (verified affine in Gaussian or Laplace noise), ``"additive-part"``
        (bounded on the outputs that are: :func:`_on_affine_outputs`), ``"additive-mixed"``,
        ``"diverges"`` (a), ``"noise-depends-on-data"`` (b), ``"noise-free-output"``,
        ``"no-noise"``, ``"one-side-no-noise"``, ``"not-additive"`` (an affine fit checked and
        failed), ``"unfitted"`` (too few releases in the call to check one),
        ``"other-noise"`` (noise neither Gaussian nor Laplace: :func:`_unbounded_status`),
        ``"not-recordable"``, ``"unchanged"``, ``"rejected"``, ``"refuses-one-side"``
        (only one dataset of a pair inside the declared domain is refused) or
        ``"not-run"``.
    finding
        ``"violation"`` (definitive), ``"lead"`` (exploratory) or ``""``.
    score
        How distinguishable the pair looked: the exact μ (Gaussian) or pure ε (Laplace)
        of a verified-additive pair, else a point estimate (coupled difference over the
        spread of the releases); ``inf`` for an unbounded lead.
    estimate
        The exact value compared with the claim (ε at the claimed δ, μ or ρ, as the
        white-box auditor), ``nan`` when none was computed.
    runs, releases
        Coupled calls made, and releases drawn per side in total.
    detail
        One line: what was seen.
    delta_out
        The coupled output difference Δ (flattened; verified constant for additive pairs).
    direction
        For Gaussian additive pairs the likelihood-ratio direction Σ⁺Δ (or the direction
        the noise omits); else Δ.
    extra
        The claim comparison's numbers (δ at the claimed ε, …) and the noise summary; for
        an ``"unchanged"`` pair, ``varied``: whether the releases of one call differed.
    spread
        For a release whose coupled difference is constant but whose noise law was not
        recorded: the within-side sum of squares per output and its degrees of freedom
        (pooled over pairs by the survey).
    """

    index: int
    label: str
    status: str
    finding: str = ""
    score: float = 0.0
    estimate: float = math.nan
    runs: int = 0
    releases: int = 0
    detail: str = ""
    delta_out: np.ndarray | None = field(default=None, repr=False)
    direction: np.ndarray | None = field(default=None, repr=False)
    extra: dict = field(default_factory=dict)
    spread: tuple[np.ndarray, int] | None = field(default=None, repr=False, compare=False)

    @property
    def tier(self) -> int:
        """Ranking tier: definitive findings, then leads, then measured pairs."""
        if self.finding == "violation":
            return _VIOLATION
        if self.finding == "lead":
            return _LEAD
        if self.status in ("rejected", "not-run", "unchanged"):
            return _NOTHING
        return _MEASURED

    @property
    def weak(self) -> bool:
        """True when the score is only a standardised difference of a few releases.

        That is, no exact value, no lead, and no noise that cancels in the coupled
        difference (whose spread the survey pools over pairs): a selection, a threshold
        pattern or an iteration seen on four releases per side, or identical releases.
        """
        return (not self.finding and self.spread is None
                and self.status in ("not-additive", "unfitted", "other-noise",
                                    "not-recordable", "unchanged"))

    def rank_key(self) -> tuple[int, float, float]:
        """Sort key, larger first: tier, then score, then the exact estimate."""
        est = self.estimate if not math.isnan(self.estimate) else -math.inf
        return (self.tier, self.score, est)

    def as_dict(self) -> dict:
        """JSON-ready summary (arrays as lists)."""
        out = {"index": self.index, "label": self.label, "status": self.status,
               "finding": self.finding, "score": self.score, "estimate": self.estimate,
               "runs": self.runs, "releases_per_side": self.releases, "detail": self.detail}
        if self.delta_out is not None:
            out["delta"] = self.delta_out.tolist()
        if self.direction is not None:
            out["direction"] = self.direction.tolist()
        out.update(self.extra)
        return out


def _claim_numbers(claim: object) -> tuple[str, float, float | None]:
    from dpgp_audit.audit.whitebox import claim_target

    return claim_target(claim, None)  # type: ignore[arg-type]


def _differs(a: object, b: object) -> bool:
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape:
        return True
    scale = max(float(np.abs(a_arr).max(initial=0.0)), float(np.abs(b_arr).max(initial=0.0)))
    return bool(np.abs(a_arr - b_arr).max(initial=0.0) > PARAM_RTOL * max(scale, 1e-300))


def _compare_logs(log0: DrawLog, log1: DrawLog) -> tuple[str, str, float]:
    """('diverges' | 'noise' | '', one line, size) for two coupled logs.

    For a noise parameter that differs, ``size`` is √2 times the largest |log ratio| of
    the two values (the Fisher distance of two centred Gaussians that differ in scale).
    """
    a, b = log0.draws, log1.draws
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x.signature() != y.signature():
            return "diverges", (f"draw {i} differs: {x.method}{list(x.shape)} under D, "
                                f"{y.method}{list(y.shape)} under D'"), math.inf
    if len(a) != len(b):
        return "diverges", (f"{len(a)} draws under D, {len(b)} under D' (the data decides "
                            "how much noise is drawn)"), math.inf
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        sx, sy = x.scales(), y.scales()
        for k in sx:
            if _differs(sx[k], sy[k]):
                u, v = np.abs(np.ravel(sx[k])), np.abs(np.ravel(sy[k]))
                with np.errstate(divide="ignore", invalid="ignore"):
                    logs = np.abs(np.log(v) - np.log(u))
                size = float(np.nanmax(np.where((u == 0) != (v == 0), np.inf, logs),
                                       initial=0.0))
                return "noise", (f"draw {i} ({x.method}): noise parameter {k!r} depends on "
                                 f"the data ({float(u.min()):.4g} under D, "
                                 f"{float(v.min()):.4g} under D')"), math.sqrt(2.0) * size
    return "", "", 0.0


#: Two coupled releases share their noise structure when their difference varies across
#: the releases of one call by at most this fraction of the releases' own spread: the
#: kit's float-safe grids (about sd/1500) move a difference by two grid steps at most.
STRUCTURE_RTOL = 2.0**-6


def same_structure(run: CoupledRun, rtol: float = STRUCTURE_RTOL) -> bool:
    """Whether D and D′ of a coupled run drew the same noise and map it the same way.

    The two logs call the same samplers with the same shapes and scale parameters
    (:func:`_compare_logs` finds nothing), and the coupled difference ``out1 − out0`` is
    the same on every release of the call, up to ``rtol`` of the larger within-call
    spread of each output (exactly, for an output that does not vary) or two steps of the
    grid the outputs show (:func:`output_grid`: a rounded release moves each difference
    by at most one step per side, however small the spread of four releases is) — unless
    every draw comes from a discrete sampler (:data:`DISCRETE_SAMPLERS`): integer noise is
    not a rounding, and its few values would hide a count suppressed on one side only
    within two steps. Any two datasets
    may be compared, not only neighbours: the structure-boundary search
    (:mod:`~dpgp_audit.audit.boundary`) compares bases that differ in every row. With
    a single release per side only the logs can be compared.
    """
    if _compare_logs(run.log0, run.log1)[0]:
        return False
    if run.n < 2:
        return True
    diff = run.out1 - run.out0
    moved = np.abs(diff - diff[0]).max(axis=0)
    spread = np.maximum(run.out0.std(axis=0), run.out1.std(axis=0))
    scale = np.maximum(np.abs(run.out0).max(axis=0), np.abs(run.out1).max(axis=0))
    tol = np.where(spread > 0, rtol * spread, PARAM_RTOL * np.maximum(scale, 1e-300))
    # a release rounded to a grid moves each coupled difference by up to one grid step per
    # side: allowed whatever the spread of a few releases happens to be; integer noise from a
    # discrete sampler is not a rounding, and one structure moves nothing (a count suppressed
    # on one side only differs by a step or two of its own grid)
    grid = output_grid(np.vstack([run.out0, run.out1]))
    discrete = all(d.method in DISCRETE_SAMPLERS for d in run.log0.noise() + run.log1.noise())
    steps = np.where(np.isfinite(grid) & (not discrete), 2.0 * grid, 0.0)
    return bool(np.all(moved <= np.maximum(tol, steps)))


def _gaussian_distance(delta: np.ndarray, s0: np.ndarray, s1: np.ndarray) -> float:
    """How far apart N(c, s0²) and N(c + Δ, s1²) are, output by output (a ranking score).

    √(Σ_j Δ_j²/((s0_j² + s1_j²)/2) + 2 log²(s1_j/s0_j)): the Fisher distance for small
    changes; μ when the scales agree; ``inf`` when an output has noise on one side only,
    or none on either side yet moves.
    """
    zero0, zero1 = s0 == 0, s1 == 0
    if np.any(zero0 != zero1) or np.any(zero0 & zero1 & (delta != 0)):
        return math.inf
    ok = ~zero0
    pooled = 0.5 * (s0[ok] ** 2 + s1[ok] ** 2)
    d2 = delta[ok] ** 2 / pooled + 2.0 * np.log(s1[ok] / s0[ok]) ** 2
    return float(math.sqrt(float(np.sum(d2))))


def _heuristic(out0: np.ndarray, out1: np.ndarray
               ) -> tuple[float, str, np.ndarray, tuple[np.ndarray, int] | None]:
    """A point-estimate score from coupled outputs alone (no noise model).

    If the coupled difference is the same on every release (the noise cancels) it is
    ‖Δ/sd‖ over the coordinates (sd: the spread of the releases; a μ estimate for
    independent Gaussian noise), and the spread is returned too — ``(sum of squares per
    output, degrees of freedom)`` — so that the survey can pool it over pairs
    (:func:`_pool_spreads`); otherwise the largest standardised mean difference.
    A coordinate constant on both sides that moves scores ``inf``.
    """
    diff = out1 - out0
    mean = diff.mean(axis=0)
    if not np.any(diff):
        return 0.0, "identical releases on D and D'", mean, None
    n = out0.shape[0]
    ss = np.sum((out0 - out0.mean(0)) ** 2, axis=0) + np.sum((out1 - out1.mean(0)) ** 2, axis=0)
    sd = np.sqrt(ss / (2 * (n - 1))) if n > 1 else np.zeros(out0.shape[1])
    moved = np.abs(mean) > 0
    if np.any(moved & (sd == 0)):
        return (math.inf, "an output constant on every release differs between D and D'",
                mean, None)
    spread = np.abs(diff - mean).max(axis=0)
    z = np.where(sd > 0, np.abs(mean) / np.where(sd > 0, sd, 1.0), 0.0)
    if np.all(spread <= FIT_RTOL * sd):
        return (float(np.sqrt(np.sum(z * z))),
                "coupled difference constant over releases (noise cancels), noise law "
                "not recorded: |delta/sd| is a point estimate", mean, (ss, 2 * (n - 1)))
    return (float(z.max(initial=0.0)), "not additive: standardised coupled difference", mean,
            None)


def coupled_shift(out0: np.ndarray, out1: np.ndarray) -> float:
    """The survey's point-estimate score of one coupled call (``_heuristic``), alone.

    For a release additive in data-independent noise: ``‖Δ/sd‖`` over the outputs, the
    coupled shift over the releases' pooled spread; ``inf`` for an output constant on
    every release that moves; 0 for identical releases.
    """
    return _heuristic(out0, out1)[0]


def _pool_spreads(results: list[PairCoupling]) -> list[PairCoupling]:
    """Rescore the pairs whose noise cancels with an sd pooled over all of them.

    Four releases per side give a poor sd (3 degrees of freedom); when the noise is the
    same for every dataset, as the coupling suggests, pooling over the pairs makes
    ``‖Δ/sd‖`` rank them by their query change. Still a point estimate.
    """
    with_spread = [c for c in results if c.spread is not None]
    if len(with_spread) < 2:
        return results
    dims = {c.spread[0].shape for c in with_spread}  # type: ignore[index]
    if len(dims) != 1:
        return results
    ss = sum(c.spread[0] for c in with_spread)  # type: ignore[index]
    dof = sum(c.spread[1] for c in with_spread)  # type: ignore[index]
    var = ss / dof
    out = []
    for c in results:
        if c.spread is not None and c.delta_out is not None:
            d = c.delta_out
            score = (math.inf if np.any((var == 0) & (d != 0)) else
                     float(np.sqrt(np.sum(np.where(var > 0, d * d / np.where(var > 0, var, 1),
                                                   0.0)))))
            c = _replace(c, score=score, extra={**c.extra, "pooled_sd_pairs": len(with_spread)})
        out.append(c)
    return out


def _mu_allowed(quantity: str, claimed: float, claim_delta: float | None) -> float | None:
    """The largest Gaussian μ the claim allows (``None`` for pure DP: none is allowed)."""
    if quantity == "mu":
        return claimed
    if quantity == "rho":
        return math.sqrt(2.0 * claimed)
    if not claim_delta:
        return None
    from dpgp_audit.privacy.gdp import gdp_mu

    return gdp_mu(claimed, claim_delta)


def _laplace_exact(fit: AffineFit, design: NoiseDesign, delta: np.ndarray) -> tuple[
        float, int] | None:
    """Pure ε = Σ_j |Δ_j|/b_j when each output gets exactly one Laplace value (else None)."""
    A = fit.A
    noisy = ~fit.noise_free
    tol = 1e-12 * max(float(np.abs(A).max(initial=0.0)), 1e-300)
    nz = np.abs(A) > tol
    if np.any(nz.sum(axis=1)[noisy] != 1) or np.any(nz.sum(axis=0) > 1):
        return None
    cols = np.argmax(nz, axis=1)
    b = np.abs(A[np.arange(A.shape[0]), cols]) * design.laplace_scale[cols]
    if np.any(b[noisy] <= 0):
        return None
    eps = float(np.sum(np.abs(delta[noisy]) / b[noisy]))
    return eps, int(np.count_nonzero(delta[noisy]))


def _laplace_compare(eps0: float, moved: int, quantity: str, claimed: float,
                     claim_delta: float | None) -> tuple[float, bool | None, dict]:
    """Exact verdict for a Laplace pair (None: not decided exactly)."""
    extra = {"laplace_pure_epsilon": eps0}
    if quantity == "epsilon" and not claim_delta:
        extra["sensitivity_excess"] = eps0 / claimed  # Δ₁/b against the claimed ε
    if quantity != "epsilon":
        return eps0, None, extra
    if not claim_delta or eps0 <= claimed:
        # pure eps0 <= claim implies (claim, delta) for every delta
        return eps0, eps0 > claimed * (1 + _REL_SLACK), extra
    if moved == 1:  # one Laplace coordinate: delta(eps) = 1 - exp((eps - eps0)/2)
        eps_d = max(0.0, eps0 + 2.0 * math.log1p(-claim_delta))
        extra["epsilon_at_claimed_delta"] = eps_d
        return eps_d, eps_d > claimed * (1 + _REL_SLACK), extra
    return eps0, None, extra


def fit_precision(fits: Sequence[AffineFit], designs: Sequence[NoiseDesign],
                  noisy: np.ndarray) -> float:
    """Relative precision of verified affine fits: largest residual over smallest noise.

    The shift and the noise map read off the fits (:func:`fit_affine`) are exact only up
    to the round-off the fit allowed; in the same relative units, that is the largest
    residual over the smallest noise an output receives. 0 when no output is noisy.
    """
    rel = 0.0
    for fit, des in zip(fits, designs, strict=True):
        size = np.abs(des.E @ fit.A.T).max(axis=0, initial=0.0)[noisy]
        if size.size:
            rel = max(rel, fit.max_residual / max(float(size.min()), 1e-300))
    return rel


def _beyond_precision(violated: bool, estimate: float, claimed: float, rel: float,
                      extra: dict) -> bool:
    """Keep an exact violation only if it clears the claim beyond the fit's precision.

    The margin is :data:`FIT_MARGIN` times ``rel``; an estimate within it is the claim's
    boundary read through round-off, and ``extra`` says so.
    """
    if violated and math.isfinite(estimate) and estimate <= claimed * (1 + FIT_MARGIN * rel):
        extra["within_fit_precision"] = FIT_MARGIN * rel
        return False
    return violated


def _design_key(des: NoiseDesign) -> tuple:
    """Which fitted noise maps a call's design can reuse: noise values per release, law."""
    return (int(des.E.shape[1]), des.family)


# --------------------------------------------------------------------------- grid-additive
def value_grid(values: np.ndarray) -> np.ndarray:
    """Per value, the largest power of two it is a multiple of (``inf`` for a zero, ``nan``
    for a value that is not finite).
    """
    values = np.asarray(values, dtype=float)
    finite = np.isfinite(values)
    bits = lowest_set_bits(np.where(finite, values, 0.0))
    grid = np.where(bits == NO_SET_BIT, np.inf,
                    np.ldexp(1.0, np.minimum(bits, 1023).astype(np.int32)))
    return np.where(finite, grid, np.nan)


def output_grid(out: np.ndarray) -> np.ndarray:
    """Per column of ``out``, the largest power of two of which every value is a multiple.

    ``inf`` for a column of zeros, ``nan`` where a value is not finite. A release rounded
    to a power-of-two grid Λ (privacy/float_release.py) gives at least Λ here; the
    largest such power is what the outputs themselves show.
    """
    return value_grid(np.atleast_2d(np.asarray(out, dtype=float))).min(axis=0)


def _sym_sqrt(cov: np.ndarray) -> np.ndarray:
    """Σ^{1/2} of a covariance (negative round-off eigenvalues set to zero)."""
    vals, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
    return (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T


@dataclass(frozen=True, eq=False)
class GridFit:
    """A least-squares fit of releases rounded to a public grid, with its error bounds.

    The structure checked: ``out[i, k] = Λ_k · round((c_k + a_k · e_i) / Λ_k)``, i.e.
    ``out = X θ + ρ`` with ``|ρ[i, k]| <= Λ_k / 2`` (``X`` the intercept columns and the
    recorded noise ``E``). For any weights ``w`` the projection ``out · w`` then carries
    an error of at most ``η_w = Σ_k |w_k| Λ_k / 2`` per row, and the least-squares error
    of the noise map is linear in it: ``‖Σ_e^{1/2}(Âᵀw − Aᵀw)‖ <= η_w · spread`` with
    ``spread = ‖Σ_e^{1/2} S X⁺‖`` over the hypercube of ρ (``S`` selects the noise rows).

    Attributes
    ----------
    theta
        ``(p + m, d)`` fitted coefficients (``p`` intercepts, then ``Aᵀ``).
    grid
        ``(d,)`` Λ_k.
    spread
        The factor above: min(‖M‖₂ √rows, Σ_j ‖M_:j‖) with ``M = Σ_e^{1/2} S X⁺``.
    root
        ``Σ_e^{1/2}``.
    intercepts
        ``p``: one intercept per block of releases fitted (one per side).
    inner, kappa
        For a grid declared in the noise's own coordinates: λ_j per noise value (then
        ``grid`` is each output's rounding carried through the fitted map) and κ with
        ``Σ_j |u_j| λ_j/2 <= κ ‖Σ_e^{1/2} u‖``; ``None`` and 0 for a grid seen in the outputs.
    intercept_gain
        ``max_b Σ_i |X⁺[b, i]|``: a fitted intercept's projection ``w · ĉ_b`` is off by at
        most ``η_w`` times this (``inf``: unknown).
    """

    theta: np.ndarray
    grid: np.ndarray
    spread: float
    root: np.ndarray
    intercepts: int
    inner: np.ndarray | None = None
    kappa: float = 0.0
    intercept_gain: float = math.inf

    @property
    def A(self) -> np.ndarray:
        """The fitted noise map ``(d, m)``."""
        return self.theta[self.intercepts:].T

    def eta(self, w: np.ndarray) -> float:
        """η_w: the most the rounding moves ``w · out`` on one release.

        Output grid: ``Σ_k |w_k| Λ_k / 2``. Grid ``λ`` in the noise's own coordinates
        (``inner``; the release is ``c + A (e + ρ)``, ``|ρ_j| <= λ_j/2``): ``Σ_j |v_j| λ_j/2``
        with ``v = Aᵀw`` known only as ``v̂``; since ``Σ_j |v_j − v̂_j| λ_j/2 <= κ ‖Σ_e^{1/2}
        (v − v̂)‖ <= κ η_w · spread``, ``η_w <= η̂_w / (1 − κ · spread)``.
        """
        w = np.asarray(w, dtype=float)
        if self.inner is None:
            return 0.5 * float(np.abs(w) @ self.grid) * (1.0 + 1e-12)
        est = 0.5 * float(np.abs(self.A.T @ w) @ self.inner) * (1.0 + 1e-9)
        k = self.kappa * self.spread
        return est / (1.0 - k) if k < 1.0 else math.inf

    def sd_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) bound of each output's noise sd, given the structure."""
        s_hat = np.linalg.norm(self.root @ self.theta[self.intercepts:], axis=0)
        err = np.array([self.eta(row) for row in np.eye(s_hat.size)]) * self.spread
        return np.maximum(s_hat - err, 0.0), s_hat + err


def fit_grid(outs: Sequence[np.ndarray], E: np.ndarray, cov: np.ndarray, *,
             inner: np.ndarray | None = None) -> GridFit | str:
    """Fit ``outs[j] ≈ c_j + E Aᵀ`` (one intercept per block, one shared map) to a grid.

    Infers Λ_k from the outputs (:func:`output_grid`), fits by least squares and checks
    that every residual is one a rounding to Λ allows: ``(I − H) ρ`` with
    ``|ρ| <= Λ/2`` has entries at most ``Λ/2 · ‖I − H‖_∞``. Returns a reason string when
    the outputs show no grid, the fit cannot be checked, or a residual is too large.

    ``inner``: a grid λ_j (in units of the recorded noise) on which the release is rounded
    in the noise's own coordinates before a linear map — declared by the mechanism, not
    read off the outputs; each output's grid is then ``Σ_j |Â_kj| λ_j`` (approximate: the
    check of the residuals is a consistency check only, and such a fit gives leads).
    """
    blocks = [np.asarray(o, dtype=float) for o in outs]
    n, m = E.shape
    Y = np.vstack(blocks)
    grid = output_grid(Y) if inner is None else np.ones(Y.shape[1])
    if np.any(~np.isfinite(grid)) or np.any(grid <= 0):
        return "the outputs are not all on a common power-of-two grid per coordinate"
    p = len(blocks)
    ind = np.kron(np.eye(p), np.ones((n, 1)))
    X = np.hstack([ind, np.vstack([E] * p)])
    rank = int(np.linalg.matrix_rank(X))
    if rank < X.shape[1] or X.shape[0] <= rank:
        return f"{X.shape[0]} rows cannot check a rounded affine fit with {X.shape[1]} unknowns"
    pinv = np.linalg.pinv(X)
    theta = pinv @ Y
    if inner is not None:  # each output's rounding, carried through the fitted map
        grid = 1.01 * np.abs(theta[p:].T) @ inner
    resid = np.abs(Y - X @ theta)
    gain = float(np.abs(np.eye(X.shape[0]) - X @ pinv).sum(axis=1).max())
    fp = 1e-9 * (np.abs(Y).max(axis=0) + grid)  # round-off of the fit itself
    bad = resid.max(axis=0) > 0.5 * grid * gain + fp
    if np.any(bad):
        k = int(np.flatnonzero(bad)[0])
        return (f"not affine in the recorded noise up to a grid (output {k}: residual "
                f"{resid[:, k].max():.3g}, grid {grid[k]:.3g})")
    root = _sym_sqrt(cov)
    M = root @ pinv[p:]
    spread = min(float(np.linalg.norm(M, 2)) * math.sqrt(X.shape[0]),
                 float(np.linalg.norm(M, axis=0).sum()))
    kappa = 0.0
    if inner is not None:  # Σ_j |u_j| λ_j/2 <= κ ‖Σ_e^{1/2} u‖ (Cauchy–Schwarz)
        low = float(np.linalg.eigvalsh(0.5 * (cov + cov.T)).min())
        kappa = 0.5 * float(np.linalg.norm(inner)) / math.sqrt(low) if low > 0 else math.inf
    gain = float(np.abs(pinv[:p]).sum(axis=1).max()) * (1.0 + 1e-9)
    return GridFit(theta, grid, spread * (1.0 + 1e-9), root, p, inner, kappa, gain)


def grid_mu_lower(out0: np.ndarray, out1: np.ndarray, fit: GridFit, w: np.ndarray) -> float:
    """A lower bound on the μ of the rounded pair along the test direction ``w``.

    With ``X = c + A e`` unrounded and ``R`` the rounded release, ``|w·R − w·X| <= η_w``.
    The test ``{w·R > t}`` has ``P_D′ >= Φ̄((t + η_w − w·c′)/s_w)`` and
    ``P_D <= Φ̄((t − η_w − w·c)/s_w)``, so the rounded pair's hockey-stick divergence at
    every ε is at least that of two Gaussians ``μ_eff = (w·Δc − 2η_w)/s_w`` apart. The
    coupled rows bound ``w·Δc >= w·(out1_i − out0_i) − 2η_w`` (same noise, two roundings)
    and the fit bounds ``s_w <= ‖Σ_e^{1/2}Âᵀw‖ + η_w · spread``. Returns 0 when the bound
    says nothing. Sound for every ``w`` given the structure :func:`fit_grid` checked.
    """
    w = np.asarray(w, dtype=float)
    if not np.all(np.isfinite(w)) or not np.any(w):
        return 0.0
    d = w.size
    top = np.maximum(np.abs(out0).max(axis=0), np.abs(out1).max(axis=0))
    fp = 4.0 * d * 2.0**-53 * float(np.abs(w) @ top)  # round-off of one dot product
    eta = fit.eta(w) + fp
    if not math.isfinite(eta):
        return 0.0
    t = (out1 - out0) @ w
    gap = max(float(t.max()), float(-t.min())) - 4.0 * eta - 2.0 * fp
    if gap <= 0:
        return 0.0
    s_up = float(np.linalg.norm(fit.root @ (fit.A.T @ w))) * (1.0 + 1e-9) + eta * fit.spread
    return gap / s_up if s_up > 0 else math.inf


#: Ridge weights (times diag(Λ²)) of the test directions tried by :func:`grid_mu_best`.
_RIDGE = (0.0, 1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)


def grid_mu_best(out0: np.ndarray, out1: np.ndarray, fit: GridFit) -> tuple[float, np.ndarray]:
    """The best :func:`grid_mu_lower` over a few directions, and that direction.

    Tried: ``(Σ̂ + λ diag(Λ²))⁺ Δ̂`` over :data:`_RIDGE` (Σ̂ = Â Σ_e Âᵀ, Δ̂ the mean coupled
    difference; the ridge keeps near-singular directions of Σ̂, where the grid error
    dominates, from taking over), ``Δ̂`` and each output alone. The bound holds for every
    direction, so choosing it from the data costs nothing.
    """
    delta = (out1 - out0).mean(axis=0)
    A = fit.A
    sig = A @ (fit.root @ fit.root) @ A.T
    cands = [delta] + [row for row in np.eye(delta.size)]
    for lam in _RIDGE:
        reg = sig + lam * np.diag(fit.grid**2)
        cands.append(np.linalg.pinv(reg, hermitian=True) @ delta)
    best, arg = 0.0, delta
    for w in cands:
        mu = grid_mu_lower(out0, out1, fit, w)
        if mu > best:
            best, arg = mu, w
    return best, arg


#: δ at which a ρ-zCDP claim is refuted through its (ε, δ) implication (the grid and the
#: unequal-scale routes).
_RHO_DELTAS = (1e-2, 1e-3, 1e-5, 1e-8, 1e-12)


def _floats_tv(eps: float, float_tv: float) -> float:
    """The δ a claim's float distance τ costs at ε: (1 + e^ε)τ, counted twice.

    Once from the released floats to the ideal mechanism and once back (:func:`_grid_compare`).
    """
    return 2.0 * (1.0 + math.exp(eps)) * float_tv if float_tv else 0.0


def _grid_compare(mu: float, quantity: str, claimed: float, claim_delta: float | None,
                  float_tv: float) -> tuple[float, bool, dict]:
    """(lower bound of the claimed quantity, violated, details) for a rounded pair of μ >= mu.

    The bound is on the rounding of the ideal (real-arithmetic) mechanism; the released
    floats are within total variation τ = ``float_tv`` of it, which the claim states as
    ``(1 + e^ε) τ`` more δ, and which costs as much again to pass from the ideal to the
    floats: a violation needs ``δ_Gauss(mu; ε) > δ_claim (1 + slack) + 2 (1 + e^ε) τ``.
    """
    from dpgp_audit.privacy.conversions import zcdp_from_epsilon_delta, zcdp_to_epsilon
    from dpgp_audit.privacy.gdp import gdp_delta, gdp_epsilon

    def hockey(eps: float) -> float:
        return gdp_delta(eps, mu) if mu > 0 else 0.0

    def floats(eps: float) -> float:
        return _floats_tv(eps, float_tv)

    extra: dict = {"mu_lower": mu}
    if quantity == "epsilon":
        del_c = float(claim_delta or 0.0)
        d_at = hockey(claimed)
        extra.update(delta_at_claimed_epsilon_lower=d_at, delta_claimed=del_c)
        violated = mu > 0 and d_at > del_c * (1 + _REL_SLACK) + floats(claimed)
        est = (math.inf if mu > 0 else 0.0) if del_c == 0 else (
            gdp_epsilon(del_c, mu) if mu > 0 else 0.0)
        return est, bool(violated), extra
    if quantity == "mu":
        if float_tv == 0.0:
            return mu, mu > claimed * (1 + _REL_SLACK), extra
        violated = mu > claimed and any(
            hockey(e) > gdp_delta(e, claimed) * (1 + _REL_SLACK) + floats(e)
            for e in (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0))
        return mu, bool(violated), extra
    # ρ-zCDP implies (ρ + 2√(ρ ln 1/δ), δ)-DP at every δ: a point beyond it refutes ρ
    points = _RHO_DELTAS
    violated = mu > 0 and any(hockey(e) > dl * (1 + _REL_SLACK) + floats(e)
                              for dl in points for e in [zcdp_to_epsilon(claimed, dl)])
    rho = max((zcdp_from_epsilon_delta(gdp_epsilon(dl, mu), dl) for dl in points),
              default=0.0) if mu > 0 else 0.0
    extra["rho_lower"] = rho
    return rho, bool(violated), extra


def _analyse_grid(run: CoupledRun, des0: NoiseDesign, des1: NoiseDesign,
                  claim: tuple[str, float, float | None], float_tv: float,
                  base: dict, inner_rel: np.ndarray | None = None,
                  basis: tuple[np.ndarray, np.ndarray] | None = None) -> PairCoupling | str:
    """The grid-additive route of (c): a release rounded to a public grid after the noise.

    Both sides are fitted alone first: if their noise sds are apart beyond what the
    rounding allows, the noise depends on the data (a lead). Then one noise map for both
    sides; a Gaussian release whose grid is at most :data:`GRID_MAX_REL` of its noise gets
    :func:`grid_mu_best`'s lower bound on μ, compared with the claim (a definitive finding
    once confirmed). A release whose outputs show no grid, but whose mechanism declares one
    in the noise's own coordinates is first mapped back by the public ``basis`` ``(P,
    Λ)`` (:func:`_public_basis`): if ``P · out`` lies on the grid Λ up to round-off, the
    rounded ``h(out) = Λ round(P out / Λ)`` is a fixed post-processing of the release, so
    any lower bound for h's pair bounds the release's pair too, and h's grid is *seen*.
    Failing that, with a declared grid (``inner_rel``: grid over sd per recorded noise
    value, :func:`_declared_inner_grid`) it gets the bound with that grid — a lead only,
    since the grid is declared, not seen. Returns a reason string when no route applies.
    """
    if des0.family != des1.family or des0.family not in ("gaussian", "laplace"):
        return f"rounded {des0.family} releases are not bounded"
    if des0.E.shape != des1.E.shape or not np.array_equal(des0.E, des1.E) or not np.allclose(
            des0.cov, des1.cov, rtol=PARAM_RTOL, atol=0.0):
        return "the coupled runs drew different noise"
    fixed0 = np.all(run.out0 == run.out0[:1], axis=0)
    fixed1 = np.all(run.out1 == run.out1[:1], axis=0)
    if np.any(fixed0 | fixed1):
        return _grid_fixed_outputs(run, des0, des1, claim, float_tv, base, inner_rel,
                                   fixed0, fixed1)
    n, m = des0.E.shape
    if n <= m + 1:  # each side alone is checked first: the survey grows the call
        return f"{n} releases per side cannot check a rounded fit with {m + 1} unknowns"
    fit: GridFit | str
    side = [fit_grid([o], des0.E, des0.cov) for o in (run.out0, run.out1)]
    if isinstance(side[0], GridFit) and isinstance(side[1], GridFit):
        (lo0, hi0), (lo1, hi1) = side[0].sd_bounds(), side[1].sd_bounds()
        delta = side[1].theta[0] - side[0].theta[0]
        apart = (lo1 > hi0) | (lo0 > hi1)
        if np.any(apart):
            s0 = np.linalg.norm(side[0].root @ side[0].theta[1:], axis=0)
            s1 = np.linalg.norm(side[1].root @ side[1].theta[1:], axis=0)
            k = int(np.flatnonzero(apart)[0])
            lead = PairCoupling(status="noise-depends-on-data", finding="lead",
                                score=_gaussian_distance(delta, s0, s1), delta_out=delta,
                                detail=(f"the release is rounded to a grid, and its noise sd "
                                        f"depends on the data beyond what the rounding allows "
                                        f"(output {k}: sd in [{lo0[k]:.6g}, {hi0[k]:.6g}] under "
                                        f"D, [{lo1[k]:.6g}, {hi1[k]:.6g}] under D')"), **base)
            return _unequal_bound(lead, _side_laws(run.out0, run.out1, side, (des0, des1)),
                                  claim, float_tv, rounded=True)
        fit = fit_grid([run.out0, run.out1], des0.E, des0.cov)
        if isinstance(fit, str):
            return fit + " with one noise map for D and D'"
        lo, _ = fit.sd_bounds()
        if np.any(fit.grid > GRID_MAX_REL * lo):
            k = int(np.argmax(fit.grid / np.maximum(lo, 1e-300)))
            return (f"grid too coarse for a bound (output {k}: grid {fit.grid[k]:.3g} against "
                    f"noise sd >= {lo[k]:.3g})")
        if des0.family == "laplace":
            return _laplace_grid(run, des0, fit, claim, float_tv, base)
        declared = False
    elif des0.family != "gaussian":
        return next(s for s in side if isinstance(s, str))
    else:
        reason = next(s for s in side if isinstance(s, str))
        if basis is not None and basis[0].shape[1] == run.out0.shape[1]:
            P, lam_abs = basis
            mapped = [o @ P.T for o in (run.out0, run.out1)]
            snapped = [lam_abs * np.round(g / lam_abs) for g in mapped]
            # a sanity check only: h is a fixed map whatever it lands on, and its own
            # structure is checked below, so soundness does not rest on this tolerance
            if all(np.all(np.abs(g - r) <= 2.0**-6 * lam_abs)
                   for g, r in zip(mapped, snapped, strict=True)):
                inner = _analyse_grid(dataclasses.replace(run, out0=snapped[0],
                                                          out1=snapped[1]),
                                      des0, des1, claim, float_tv, base)
                if isinstance(inner, PairCoupling):
                    return dataclasses.replace(inner, detail=(
                        "mapped by the public inverse of the noise factor onto its grid (a "
                        "fixed post-processing, so a bound for it bounds the release): "
                        + inner.detail), extra={**inner.extra, "public_basis": True})
                reason = f"{reason}; mapped onto the noise's own grid: {inner}"
            else:
                reason += "; the public inverse of the noise factor does not land on its grid"
        if inner_rel is None or inner_rel.shape != (m,):
            return reason
        if not np.all(inner_rel <= GRID_MAX_REL):
            return reason + "; the declared grid is too coarse for a bound"
        lam = inner_rel * np.sqrt(np.clip(np.diag(des0.cov), 0.0, None))
        fit = fit_grid([run.out0, run.out1], des0.E, des0.cov, inner=lam)
        if isinstance(fit, str):
            return f"{reason}; with the declared grid in the noise's coordinates: {fit}"
        declared = True
    mu, w = grid_mu_best(run.out0, run.out1, fit)
    quantity, claimed, claim_delta = claim
    estimate, violated, extra = _grid_compare(mu, quantity, claimed, claim_delta, float_tv)
    extra.update(noise="gaussian", noise_values_per_release=int(des0.E.shape[1]),
                 grid=fit.grid.tolist(), grid_spread=fit.spread)
    allowed = _mu_allowed(quantity, claimed, claim_delta)
    if allowed:
        extra["sensitivity_excess_lower"] = mu / allowed
    if declared:
        return PairCoupling(status="additive-declared-grid", finding="lead" if violated else "",
                            score=mu, estimate=math.nan, delta_out=fit.theta[1] - fit.theta[0],
                            direction=w, extra={**extra, "estimate_if_declared": estimate},
                            detail=(f"additive Gaussian noise rounded in its own coordinates on "
                                    f"the grid the mechanism declares: mu >= {mu:.4g} if that "
                                    "grid is the one used (declared, not seen in the outputs: "
                                    "a lead)"), **base)
    return PairCoupling(status="additive-grid", finding="violation" if violated else "",
                        score=mu, estimate=estimate, delta_out=fit.theta[1] - fit.theta[0],
                        direction=w, extra=extra,
                        detail=(f"additive Gaussian noise, release rounded to a public grid: "
                                f"mu >= {mu:.4g} (a lower bound given the structure)"),
                        **base)


def _grid_fixed_outputs(run: CoupledRun, des0: NoiseDesign, des1: NoiseDesign,
                        claim: tuple[str, float, float | None], float_tv: float, base: dict,
                        inner_rel: np.ndarray | None, fixed0: np.ndarray,
                        fixed1: np.ndarray) -> PairCoupling | str:
    """The grid route for a release with outputs that take one value on every release.

    Such an output beside rounded noisy ones (a count or a public size released "for
    context") is, as far as these releases show, a constant of each side. If it takes
    *different* values under D and D′ while other outputs vary, it is a lead of score ∞
    (as :func:`_analyse_run`'s noise-free outputs: a few releases do not prove an output
    constant, so the black-box auditor certifies). If it takes the same value, dropping it
    is a fixed post-processing, so a bound on the other outputs bounds the release; they
    are analysed alone. Otherwise (all outputs fixed, or one fixed on one side only) a
    reason string: the other auditors decide.
    """
    both = fixed0 & fixed1
    moved = both & (run.out0[0] != run.out1[0])
    if np.any(moved) and not np.all(both):
        k = int(np.flatnonzero(moved)[0])
        return PairCoupling(
            status="noise-free-output", finding="lead", score=math.inf,
            delta_out=run.out1.mean(axis=0) - run.out0.mean(axis=0),
            direction=moved.astype(float),
            detail=(f"output {k} gets no noise (one value on every release, {run.out0[0, k]:.6g} "
                    f"under D and {run.out1[0, k]:.6g} under D') beside outputs rounded to a "
                    "grid, and differs between D and D'"), **base)
    if np.any(fixed0 != fixed1) or np.all(both):
        return "an output takes one value on every release"
    keep = ~both
    inner = _analyse_grid(dataclasses.replace(run, out0=run.out0[:, keep],
                                              out1=run.out1[:, keep]),
                          des0, des1, claim, float_tv, base, inner_rel)
    if not isinstance(inner, PairCoupling):
        return f"{inner} (on the {int(keep.sum())} outputs that vary)"
    widened = {}
    for name in ("delta_out", "direction"):
        part = getattr(inner, name)
        if part is not None and part.shape == (int(keep.sum()),):
            full = np.zeros(keep.shape)
            full[keep] = part
            widened[name] = full
    return dataclasses.replace(inner, **widened, detail=(
        f"{int(both.sum())} output(s) fixed at the same value on both sides left out (a "
        f"fixed post-processing): " + inner.detail))


def grid_laplace_epsilon(out0: np.ndarray, out1: np.ndarray, fit: GridFit,
                         scale: np.ndarray) -> tuple[float, float] | str:
    """Lower bounds ``(ε, p)`` for a rounded release of independent scaled Laplace draws.

    Structure: output k is ``Λ_k round((c_k + a_k e_j(k)) / Λ_k)`` with its own Laplace
    value ``e_j(k)`` (scale β_j), so b_k = |a_k| β_j. On the grid cells beyond both centres
    of a coordinate the rounded laws' ratio is exactly ``e^{|Δc_k|/b_k}`` (the Laplace
    densities' ratio is constant there), so the product of those tails, a set S, has
    ``P_D′(S) = e^{Σ_k |Δc_k|/b_k} P_D(S)``: pure ε >= Σ_k |Δc_k|/b_k. The coupled rows give
    ``|Δc_k| >= |out1_ik − out0_ik| − Λ_k``; the fit gives ``|b_k − b̂_k| <= Λ_k · spread /
    (2√2)`` (the map's error, in the noise's sd units, as for the Gaussian bound). Each tail
    starts within one cell of the farther centre, so ``P_D′(S) >= Π_k ½ e^{−Λ_k/b_k}`` over
    the coordinates used: δ(ε) >= p (1 − e^{ε − ε_lower}). A reason string when the fitted
    map is not one Laplace value per output, each its own.
    """
    got = _laplace_tails(out0, out1, fit, scale)
    if isinstance(got, str):
        return got
    t, log_tail = got
    return float(np.sum(t)), math.exp(float(np.sum(log_tail[t > 0])))


def grid_laplace_delta(out0: np.ndarray, out1: np.ndarray, fit: GridFit, scale: np.ndarray,
                       epsilon: float, delta: float = 0.0) -> dict | str:
    """:func:`grid_laplace_epsilon`'s bound at ``epsilon``, over subsets of the outputs.

    The product of tails may be taken over any subset S of the outputs (the others left
    free, their laws integrate to one on both sides), giving ``δ(ε) >= p_S (1 −
    e^{ε − ε_S})``. Over all outputs p_S is a product of as many halves: with a hundred
    outputs each moved a little, p_S is far below any claimed δ while a few tens of the
    most moved outputs give a bound above it. The outputs are taken in order of ε gained
    per tail mass spent (``t_k / −log p_k``) and the best prefix is kept. Returns
    ``delta_lower`` (the best δ(ε) bound), ``epsilon_at_delta`` (the largest ε_S +
    log(1 − δ/p_S) over prefixes: the ε the bound reaches at the claimed δ, 0 when none),
    ``epsilon_lower``, ``tail_mass_lower`` (the whole set's, as
    :func:`grid_laplace_epsilon`), ``outputs`` (the prefix size of ``delta_lower``) and
    ``tail_set`` (those outputs' indices).
    """
    got = _laplace_tails(out0, out1, fit, scale)
    if isinstance(got, str):
        return got
    t, log_tail = got
    used = np.flatnonzero(t > 0)
    order = used[np.argsort(-t[used] / -log_tail[used], kind="stable")]
    eps_s = np.cumsum(t[order])
    log_p = np.cumsum(log_tail[order])
    d_at = np.where(eps_s > epsilon, np.exp(log_p) * -np.expm1(epsilon - eps_s), 0.0)
    best = int(np.argmax(d_at)) if d_at.size else -1
    p_s = np.exp(log_p)
    with np.errstate(divide="ignore", invalid="ignore"):
        reach = np.where(delta < p_s, eps_s + np.log1p(-delta / p_s), 0.0)
    return {"delta_lower": float(d_at[best]) if best >= 0 else 0.0,
            "epsilon_at_delta": max(float(np.max(reach, initial=0.0)), 0.0),
            "epsilon_lower": float(np.sum(t)),
            "tail_mass_lower": math.exp(float(np.sum(log_tail[used]))),
            "outputs": best + 1 if best >= 0 and d_at[best] > 0 else 0,
            "tail_set": order[:best + 1].tolist() if best >= 0 and d_at[best] > 0 else []}


def _laplace_tails(out0: np.ndarray, out1: np.ndarray, fit: GridFit,
                   scale: np.ndarray) -> tuple[np.ndarray, np.ndarray] | str:
    """Per output k: the lower bound of ``|Δc_k|/b_k`` and of log of its tail's mass.

    The pieces of :func:`grid_laplace_epsilon` (which see); an output that did not move
    visibly has 0 and adds nothing to a product of tails.
    """
    B = np.abs(fit.A) * scale  # |a_kj| β_j: each output's Laplace scale, per noise value
    err = fit.grid * fit.spread / (2.0 * math.sqrt(2.0))
    j = np.argmax(B, axis=1)
    rows = np.arange(B.shape[0])
    b_hat = B[rows, j]
    others = B.copy()
    others[rows, j] = 0.0
    if np.any(b_hat <= err) or np.any(others > err[:, None]) or len(set(j.tolist())) < j.size:
        return "the rounded release is not one Laplace value per output, each its own"
    top = np.maximum(np.abs(out0).max(axis=0), np.abs(out1).max(axis=0))
    moved = np.abs(out1 - out0).max(axis=0) - fit.grid - 4.0 * 2.0**-53 * top
    moved = np.clip(moved, 0.0, None)
    t = moved / (b_hat + err) * (1.0 - 1e-12)
    return t, -math.log(2.0) - fit.grid / (b_hat - err)


# --------------------------------------------------------------------------- unequal scales
#: Directions tried by the unequal-scale bound besides Δ̂ and its whitened form: the outputs
#: whose scale or mean moves most, at most this many.
_UNEQUAL_OUTPUTS = 16
#: ε at which the Neyman–Pearson events of the fitted laws are taken (with the claimed ε).
_UNEQUAL_EPS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


@dataclass(frozen=True, eq=False)
class _SideLaw:
    """One side's release ``c + A e``, its noise law, and how well it is known.

    ``e`` has covariance ``root²``: Gaussian, or (``family="laplace"``) independent Laplace
    values. ``fit`` is the side's own :class:`GridFit` (one block: the release rounded to the
    grid its outputs show), or ``None`` for a verified :class:`AffineFit`, whose parameters
    are taken as exact and whose largest residual is carried as a perturbation.
    """

    c: np.ndarray
    A: np.ndarray
    root: np.ndarray
    top: np.ndarray  # the largest |output| per coordinate (round-off of a projection)
    fit: GridFit | None = None
    residual: float = 0.0
    family: str = "gaussian"

    def law(self, w: np.ndarray) -> ScaleBox | None:
        """The laws ``w · release`` may follow, given the structure; ``None`` if unbounded.

        ``w · X`` has location ``w · c`` and sd ``‖root Aᵀ w‖`` for the unrounded X, and the
        release is X moved by at most η. A grid fit knows ``w · c`` to ``η · intercept_gain``
        and the sd to ``η · spread`` (:class:`GridFit`); round-off adds a relative 10⁻⁹.
        Gaussian noise: ``w · X`` is Gaussian along every w. Laplace noise: only where
        ``Aᵀw`` has one non-zero entry (a single Laplace value, as :func:`_laplace_exact`
        asks), whose scale is its sd over √2; elsewhere ``None``.
        """
        fp = 4.0 * w.size * 2.0**-53 * float(np.abs(w) @ self.top)
        m = float(w @ self.c)
        v = self.A.T @ w
        s = float(np.linalg.norm(self.root @ v))
        if self.family == "laplace":
            if np.count_nonzero(np.abs(v) > 1e-12 * float(np.abs(v).max(initial=0.0))) != 1:
                return None
            s /= math.sqrt(2.0)  # Laplace variance 2b²
        if self.fit is None:
            eta, dm, ds = float(np.abs(w).sum()) * self.residual + fp, 0.0, 0.0
        else:
            eta = self.fit.eta(w) + fp
            dm, ds = eta * self.fit.intercept_gain, eta * self.fit.spread
        if self.family == "laplace":
            ds /= math.sqrt(2.0)
        dm += 1e-9 * (abs(m) + s)
        ds += 1e-9 * s
        if not (math.isfinite(eta) and math.isfinite(dm) and s - ds > 0.0):
            return None
        return ScaleBox(m - dm, m + dm, s - ds, s + ds, eta, self.family)


def _side_laws(out0: np.ndarray, out1: np.ndarray, fits: Sequence[AffineFit | GridFit],
               designs: Sequence[NoiseDesign]) -> tuple[_SideLaw, _SideLaw] | None:
    """The two sides' :class:`_SideLaw` from their own fits (affine, or one-block grid)."""
    if designs[0].family != designs[1].family or designs[0].family not in FAMILIES:
        return None  # mixed noise: no scalar law of one family along a direction
    top = np.maximum(np.abs(out0).max(axis=0), np.abs(out1).max(axis=0))
    laws = []
    for fit, des in zip(fits, designs, strict=True):
        root = _sym_sqrt(des.cov)
        if isinstance(fit, AffineFit):
            laws.append(_SideLaw(fit.intercept, fit.A, root, top, None, fit.max_residual,
                                 des.family))
        elif fit.inner is None and fit.intercepts == 1:
            laws.append(_SideLaw(fit.theta[0], fit.A, root, top, fit, 0.0, des.family))
        else:
            return None
    return laws[0], laws[1]


def _unequal_directions(laws: tuple[_SideLaw, _SideLaw]) -> list[np.ndarray]:
    """Δ̂, (Σ̂₀ + Σ̂₁)⁺Δ̂ and the outputs that move most in mean or scale."""
    p, q = laws
    delta = q.c - p.c
    cov0 = p.A @ p.root @ p.root @ p.A.T
    cov1 = q.A @ q.root @ q.root @ q.A.T
    d = delta.size
    if d == 1:
        return [np.ones(1)]
    if p.family == "laplace":  # only single outputs can carry one Laplace value
        return [row for row in np.eye(d)]
    s0, s1 = np.sqrt(np.clip(np.diag(cov0), 0, None)), np.sqrt(np.clip(np.diag(cov1), 0, None))
    ok = (s0 > 0) & (s1 > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        move = np.where(ok, np.abs(delta) / np.sqrt(0.5 * (s0**2 + s1**2))
                        + np.abs(np.log(s1 / s0)), -np.inf)
    ws = [delta, np.linalg.pinv(cov0 + cov1, hermitian=True) @ delta]
    ws += [np.eye(d)[k] for k in np.argsort(-move, kind="stable")[:_UNEQUAL_OUTPUTS] if ok[k]]
    return [w for w in ws if np.all(np.isfinite(w)) and np.any(w)]


#: Where the unequal-scale bound's search for the largest refuted ε stops: it doubles from
#: 1 and reports at most this value, a lower bound, so a leak that reaches it may be far
#: larger (the report says so).
BOUND_SEARCH_CEILING = 512.0


def _unequal_compare(dl: Callable[[float], float], quantity: str, claimed: float,
                     claim_delta: float | None, float_tv: float,
                     estimate: bool = True) -> tuple[float, float, dict]:
    """(excess, lower bound of the claimed quantity, details) for a lower profile ``dl``.

    ``dl(ε)`` is a lower bound on the pair's δ(ε), decreasing in ε. ``excess`` is the
    largest ratio of ``dl`` to what the claim allows at the points checked (violated when
    it exceeds 1): the claimed ε for (ε, δ) claims; a grid of ε against the μ-GDP profile;
    for ρ-zCDP its (ε, δ) implications. The estimate (a lower bound, given the structure)
    is found by bisection, and only when ``estimate``.
    """
    from dpgp_audit.privacy.conversions import zcdp_from_epsilon_delta, zcdp_to_epsilon
    from dpgp_audit.privacy.gdp import gdp_delta

    def allowed(eps: float, delta: float) -> float:
        # (10⁻¹³: the masses' round-off, so a pure claim is refuted by a bound, not by noise)
        return delta * (1 + _REL_SLACK) + _floats_tv(eps, float_tv) + 1e-13

    def eps_lower(delta: float) -> float:  # sup {ε : dl(ε) beyond what δ allows}
        if dl(0.0) <= allowed(0.0, delta):
            return 0.0
        # lo is always a point where the bound was seen beyond δ: what is returned is
        # verified, even where dl is not monotone
        lo, hi = 0.0, 1.0
        while hi <= BOUND_SEARCH_CEILING and dl(hi) > allowed(hi, delta):
            lo, hi = hi, 2.0 * hi
        while hi <= BOUND_SEARCH_CEILING and hi - lo > 1e-6 * hi:
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if dl(mid) > allowed(mid, delta) else (lo, mid)
        return lo

    if quantity == "epsilon":
        del_c = float(claim_delta or 0.0)
        d_at = dl(claimed)
        excess = d_at / allowed(claimed, del_c)
        extra = {"delta_at_claimed_epsilon_lower": d_at, "delta_claimed": del_c}
        return excess, (eps_lower(del_c) if estimate else math.nan), extra
    if quantity == "mu":
        grid = sorted({*_UNEQUAL_EPS, 3.0 * claimed, claimed})
        lows = [dl(e) for e in grid]

        def beyond(mu: float) -> float:
            return max(v / allowed(e, gdp_delta(e, mu)) for e, v in zip(grid, lows, strict=True))

        excess = beyond(claimed)
        mu_lo = math.nan
        if estimate:
            lo, hi = 0.0, claimed
            while beyond(hi) > 1.0 and hi < 1e3:
                lo, hi = hi, 2.0 * hi
            while hi - lo > 1e-6 * hi:
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if beyond(mid) > 1.0 else (lo, mid)
            mu_lo = lo
        return excess, mu_lo, {"mu_lower": mu_lo}
    # ρ-zCDP implies (ρ + 2√(ρ ln 1/δ), δ)-DP at every δ: a point beyond it refutes ρ
    excess = max(dl(e) / allowed(e, dp) for dp in _RHO_DELTAS
                 for e in [zcdp_to_epsilon(claimed, dp)])
    rho = math.nan
    if estimate:
        rho = 0.0
        for dp in _RHO_DELTAS:
            e = eps_lower(dp)
            if e > 0:
                rho = max(rho, math.inf if math.isinf(e) else zcdp_from_epsilon_delta(e, dp))
    return excess, rho, {"rho_lower": rho}


def _unequal_bound(lead: PairCoupling, laws: tuple[_SideLaw, _SideLaw] | None,
                   claim: tuple[str, float, float | None], float_tv: float,
                   rounded: bool) -> PairCoupling:
    """Upgrade a "noise depends on the data" lead to a bounded finding where it can.

    Each side's release is a Gaussian or Laplace law of its own (fitted, verified) scale:
    along a direction w (:func:`_unequal_directions`), ``w · release`` on D and on D′ are
    two scalar laws of unequal scale, up to the fit's error boxes and the rounding, and
    ``w · release`` is a post-processing of the release.
    :func:`~dpgp_audit.privacy.unequal_scale.hockey_stick_lower` on their Neyman–Pearson
    events bounds the pair's δ(ε) from below, so a bound beyond the claim is a definitive
    finding (once a second seed reproduces it). Otherwise the lead stays a
    lead, with the bound in its details.
    """
    if laws is None:
        return lead
    quantity, claimed, claim_delta = claim
    best: tuple[float, Callable[[float], float], np.ndarray] | None = None
    for w in _unequal_directions(laws):
        w = w / np.abs(w).max()
        b0, b1 = laws[0].law(w), laws[1].law(w)
        if b0 is None or b1 is None:
            continue
        fitted = (0.5 * (b0.m_lo + b0.m_hi), 0.5 * (b0.s_lo + b0.s_hi),
                  0.5 * (b1.m_lo + b1.m_hi), 0.5 * (b1.s_lo + b1.s_hi))
        fam = b0.family
        fixed = candidate_events(*fitted, _UNEQUAL_EPS, fam)

        def dl(eps: float, ev: list = fixed, f: tuple = fitted, p: ScaleBox = b0,
               q: ScaleBox = b1, fam: str = fam) -> float:
            # the fitted laws' own Neyman-Pearson events at this ε, and the fixed ones: each
            # value is a valid lower bound on δ(ε) whatever events it uses
            here = candidate_events(*f, (eps,), fam) + ev
            return hockey_stick_lower(eps, here, p, q, both=True)

        excess, _, _ = _unequal_compare(dl, quantity, claimed, claim_delta, float_tv,
                                        estimate=False)
        if best is None or excess > best[0]:
            best = (excess, dl, w)
    if best is None:
        return lead
    excess, dl, w = best
    how = "rounded to the grid its outputs show" if rounded else "verified affine"
    fam = laws[0].family
    if not excess > 1.0:
        return _replace(lead, extra={**lead.extra, "unequal_excess": excess},
                        detail=lead.detail + f"; as two {fam} laws of unequal scale ({how}) "
                                             f"the pair stays within the claim along every "
                                             f"direction tried ({excess:.3g} of it)")
    _, estimate, extra = _unequal_compare(dl, quantity, claimed, claim_delta, float_tv)
    extra.update(noise=fam, unequal_excess=excess, rounded=rounded)
    if quantity == "epsilon":  # the number compared, and what the claim allows there
        seen = (f"delta({claimed:g}) >= {extra['delta_at_claimed_epsilon_lower']:.3g} against "
                f"the claimed {float(claim_delta or 0.0):g}")
    else:
        seen = f"delta(eps) exceeds what the claim allows {excess:.3g}-fold"
    return _replace(lead, status="unequal-scale", finding="violation", estimate=estimate,
                    direction=w, extra={**lead.extra, **extra},
                    detail=(f"{lead.detail}; each side is a {fam} law of its own scale ({how}): "
                            f"along the direction shown {seen}, so {quantity} >= "
                            f"{estimate:.4g} (a lower bound given the structure)"))


def _unequal_grid(run: CoupledRun, des0: NoiseDesign | str, des1: NoiseDesign | str,
                  lead: PairCoupling, claim: tuple[str, float, float | None],
                  float_tv: float) -> PairCoupling:
    """:func:`_unequal_bound` for releases each side of which is rounded to a grid.

    For noise drawn with a data-dependent scale parameter, so each side has its own noise
    design; each side's rounded fit (:func:`fit_grid`, one block) must hold on its own.
    """
    if not (isinstance(des0, NoiseDesign) and isinstance(des1, NoiseDesign)
            and des0.family == des1.family and des0.E.shape == des1.E.shape
            and run.n > des0.E.shape[1] + 1):
        return lead
    fits = [fit_grid([o], d.E, d.cov) for o, d in ((run.out0, des0), (run.out1, des1))]
    if not all(isinstance(f, GridFit) for f in fits):
        return lead
    return _unequal_bound(lead, _side_laws(run.out0, run.out1, fits, (des0, des1)), claim,
                          float_tv, rounded=True)


def _laplace_grid(run: CoupledRun, des: NoiseDesign, fit: GridFit,
                  claim: tuple[str, float, float | None], float_tv: float,
                  base: dict) -> PairCoupling | str:
    """(c′) for Laplace noise: :func:`grid_laplace_epsilon` against an (ε, δ) claim."""
    quantity, claimed, claim_delta = claim
    del_c = float(claim_delta or 0.0)
    floats = _floats_tv(claimed, float_tv) if quantity == "epsilon" else 0.0
    got = grid_laplace_delta(run.out0, run.out1, fit, des.laplace_scale,
                             claimed if quantity == "epsilon" else 0.0, del_c + floats)
    if isinstance(got, str):
        return got
    eps, p = got["epsilon_lower"], got["tail_mass_lower"]
    extra = {"noise": "laplace", "laplace_pure_epsilon_lower": eps, "tail_mass_lower": p,
             "noise_values_per_release": int(des.E.shape[1]), "grid": fit.grid.tolist(),
             "grid_spread": fit.spread}
    what = f"additive Laplace noise, release rounded to a public grid: pure eps >= {eps:.4g}"
    if quantity != "epsilon":  # a GDP or zCDP claim: measured, not compared
        return PairCoupling(status="additive-grid", score=eps, delta_out=fit.theta[1] -
                            fit.theta[0], extra=extra, detail=what + " (not compared with a "
                            f"{quantity} claim)", **base)
    if del_c == 0.0 and floats == 0.0:
        violated, estimate = eps > claimed * (1 + _REL_SLACK), eps
    else:  # δ(ε) >= p_S (1 − e^{ε − ε_S}) on the best set of tails, and the ε it reaches
        d_at = got["delta_lower"]
        violated = d_at > del_c * (1 + _REL_SLACK) + floats
        estimate = got["epsilon_at_delta"]
        extra["delta_at_claimed_epsilon_lower"] = d_at
        extra["tail_outputs"] = got["outputs"]
        if got["outputs"] and got["outputs"] < int(np.count_nonzero(fit.grid > 0)):
            what += (f"; delta at the claimed eps >= {d_at:.3g} on the tails of "
                     f"{got['outputs']} output(s)")
    return PairCoupling(status="additive-grid", finding="violation" if violated else "",
                        score=eps, estimate=max(estimate, 0.0),
                        delta_out=fit.theta[1] - fit.theta[0], extra=extra,
                        detail=what + " (a lower bound given the structure)", **base)


def _public_basis(mechanism: object) -> tuple[np.ndarray, np.ndarray] | None:
    """``(F⁺, Λ)`` for a release ``F · Λ round((B y + s z)/Λ)`` (methods/linear_gaussian.py).

    F is the mechanism's public, data-independent ``noise_factor`` and Λ the grid its
    ``float_release()`` states. Any fixed map will do for soundness (a post-processing can
    only lose privacy); these make the inner grid visible. ``None`` when not declared.
    """
    F = getattr(mechanism, "noise_factor", None)
    grid = _declared_inner_grid(mechanism, absolute=True)
    if F is None or grid is None:
        return None
    try:
        F = np.atleast_2d(np.asarray(F, dtype=float))
    except (TypeError, ValueError):
        return None
    if F.ndim != 2 or F.shape[1] != grid.size or not np.all(np.isfinite(F)):
        return None
    return np.linalg.pinv(F), grid


def _declared_inner_grid(mechanism: object, *, absolute: bool = False) -> np.ndarray | None:
    """Grid over noise sd per noise coordinate, from a mechanism's ``float_release()``.

    The kit's release classes round in the noise's own coordinates and map the result by
    a public factor (methods/linear_gaussian.py); their ``float_release()`` states that
    grid. ``None`` when the mechanism declares none (or not a Gaussian one).
    ``absolute``: the grid itself (in the release's units) instead of grid over sd.
    """
    fr = getattr(mechanism, "float_release", None)
    if not callable(fr):
        return None
    try:
        rel = fr()
        grid = np.asarray(rel.grid, dtype=float).ravel()
        sd = np.asarray(rel.sd, dtype=float).ravel()
        law = rel.law
    except Exception:  # noqa: BLE001 - a declaration that cannot be read is no declaration
        return None
    if law != "gaussian" or grid.shape != sd.shape or not (
            np.all(np.isfinite(grid)) and np.all(sd > 0) and np.all(np.isfinite(sd))):
        return None
    return grid if absolute else grid / sd


def _unbounded_status(des0: NoiseDesign | str, des1: NoiseDesign | str,
                      reason: str) -> tuple[str, dict]:
    """Why a pair got no bound, as its status (and what it records): three causes a user
    acts on differently.

    ``"other-noise"`` when a side drew noise other than Gaussian or Laplace (a discrete or
    uniform law: no exact bound here; ``{"draws": sampler}``), ``"unfitted"`` when the call
    had too few releases to check an affine fit (the survey's row cap or release budget:
    more noise values per release than it affords), and ``"not-additive"`` when the fit was
    checked and failed (the noisy value passed through a transform, or noise that is not
    added).
    """
    for d in (des0, des1):
        if isinstance(d, str) and d.startswith(OTHER_NOISE):  # "<OTHER_NOISE> (method)"
            return "other-noise", {"draws": d[len(OTHER_NOISE) + 2:-1]}
    if CANNOT_CHECK in reason:
        return "unfitted", {}
    return "not-additive", {}


#: Most outputs a release may have for :func:`_on_affine_outputs` to fit them one by one.
MAX_PART_OUTPUTS = 64
#: Statuses of a pair bounded on the affine part of its outputs (:func:`_on_affine_outputs`).
_PART_OF = ("additive", "additive-grid", "additive-mixed")


def _on_affine_outputs(run: CoupledRun, index: int, label: str,
                       claim: tuple[str, float, float | None],
                       designs: tuple[NoiseDesign, NoiseDesign], float_tv: float
                       ) -> PairCoupling | None:
    """The pair bounded on the outputs that are affine in the recorded noise, the rest left out.

    A release of a noisy statistic beside a transform of it — a p-value, an interval end, a
    decision — is not affine in its noise as a whole, so the survey bounds nothing; the
    noisy statistic alone is. Each output is fitted on its own (both sides); the outputs
    that fit, when some but not all do, are analysed as a release of their own
    (:func:`_analyse_run`). That part is a post-processing of the release, so a bound on it
    bounds the release from below, and a violation found on it is definitive; the pair's
    status is ``"additive-part"`` (never read as exact for the whole release), with the
    outputs kept in ``extra["outputs"]``. ``None`` when no output or every output fits,
    when the part gives no bound, or for more than :data:`MAX_PART_OUTPUTS` outputs.
    """
    k = run.out0.shape[1]
    if not 1 < k <= MAX_PART_OUTPUTS:
        return None
    des0, des1 = designs

    def fits(j: int) -> bool:  # affine in the noise on both sides, exactly or up to a grid
        o0, o1 = run.out0[:, [j]], run.out1[:, [j]]
        if isinstance(fit_affine(o0, des0.E), AffineFit) and isinstance(fit_affine(o1, des1.E),
                                                                        AffineFit):
            return True
        return all(isinstance(fit_grid([o], d.E, d.cov), GridFit)
                   for o, d in ((o0, des0), (o1, des1)))

    cols = [j for j in range(k) if fits(j)]
    if not cols or len(cols) == k:
        return None
    sub = dataclasses.replace(run, out0=run.out0[:, cols], out1=run.out1[:, cols])
    res = _analyse_run(sub, index, label, claim, None, float_tv=float_tv)
    if res.status not in _PART_OF or math.isnan(res.estimate):
        return None

    def full(v: np.ndarray | None) -> np.ndarray | None:
        if v is None:
            return None
        out = np.zeros(k)
        out[cols] = v
        return out

    return dataclasses.replace(
        res, status="additive-part", delta_out=full(res.delta_out), direction=full(res.direction),
        extra={**res.extra, "outputs": cols, "part_status": res.status},
        detail=(f"output(s) {cols} of {k} alone, the others not affine in the recorded noise "
                f"(a transform of it, left out): {res.detail}"))


def _analyse_run(run: CoupledRun, index: int, label: str,
                 claim: tuple[str, float, float | None],
                 maps: dict[tuple, np.ndarray] | None = None, *,
                 float_tv: float = 0.0, inner_rel: np.ndarray | None = None,
                 basis: tuple[np.ndarray, np.ndarray] | None = None) -> PairCoupling:
    """Everything one coupled call shows about a pair (before any confirmation).

    ``maps`` holds the noise maps fitted on earlier pairs (by :func:`_design_key`): a
    release that keeps one of them is verified on a few releases instead of refitted.
    ``float_tv`` is the claim's τ (the released floats' distance to the exact mechanism),
    used by the grid-additive route (:func:`_analyse_grid`), with ``inner_rel``, the grid
    the mechanism declares in the noise's coordinates (:func:`_declared_inner_grid`), and
    ``basis`` the public map onto that grid (:func:`_public_basis`).
    """
    base = {"index": index, "label": label, "runs": 1, "releases": run.n}
    if not run.complete:
        score, why, mean, spread = _heuristic(run.out0, run.out1)
        return PairCoupling(status="not-recordable", score=score, delta_out=mean, spread=spread,
                            detail=f"draws escaped the log ({run.why_incomplete}); {why}",
                            **base)
    noise0, noise1 = run.log0.noise(), run.log1.noise()
    if not np.any(run.out1 != run.out0):
        varied = run.n >= 2 and np.unique(run.out0, axis=0).shape[0] == run.n
        return PairCoupling(status="unchanged", detail="identical releases on D and D'",
                            delta_out=np.zeros(run.out0.shape[1]), extra={"varied": varied},
                            **base)
    if not noise0 and not noise1:
        return PairCoupling(status="no-noise", finding="lead", score=math.inf,
                            detail="no draw from the handed generator on D or D', and the "
                                   "releases differ", delta_out=(run.out1 - run.out0).mean(0),
                            **base)
    if not noise0 or not noise1:
        side = "D" if not noise0 else "D'"
        return PairCoupling(status="one-side-no-noise", finding="lead", score=math.inf,
                            detail=f"no draw from the handed generator under {side}: the data "
                                   "decides whether noise is drawn at all",
                            delta_out=(run.out1 - run.out0).mean(0), **base)
    kind, why, size = _compare_logs(run.log0, run.log1)
    if kind == "diverges":
        _, _, mean, _ = _heuristic(run.out0, run.out1)
        return PairCoupling(status="diverges", finding="lead", score=math.inf, detail=why,
                            delta_out=mean, **base)
    des0 = noise_design(noise0, run.n)
    des1 = noise_design(noise1, run.n)
    fit0 = fit1 = None
    if isinstance(des0, NoiseDesign) and isinstance(des1, NoiseDesign):
        known = None if maps is None else maps.get(_design_key(des0))
        if known is not None:  # the map of earlier pairs: verified on every release here
            fit0 = fit_affine(run.out0, des0.E, A=known)
            fit1 = fit_affine(run.out1, des1.E, A=known)
        if not isinstance(fit0, AffineFit) or not isinstance(fit1, AffineFit):
            fit0, fit1 = fit_affine(run.out0, des0.E), fit_affine(run.out1, des1.E)
        if maps is not None and isinstance(fit0, AffineFit) and isinstance(fit1, AffineFit):
            maps.setdefault(_design_key(des0), fit0.A)
    if not isinstance(fit0, AffineFit) or not isinstance(fit1, AffineFit):
        reason = next(r for r in (des0, des1, fit0, fit1) if isinstance(r, str))
        score, how, mean, spread = _heuristic(run.out0, run.out1)
        if kind:  # a noise scale depends on the data; the parameters measure by how much
            lead = PairCoupling(status="noise-depends-on-data", finding="lead", score=size,
                                detail=why, delta_out=mean, **base)
            return _unequal_grid(run, des0, des1, lead, claim, float_tv)
        if isinstance(des0, NoiseDesign) and isinstance(des1, NoiseDesign):
            grid = _analyse_grid(run, des0, des1, claim, float_tv, base, inner_rel,
                                 basis)
            if isinstance(grid, PairCoupling):
                return grid
            reason = f"{reason}; {grid}"
        status, extra = _unbounded_status(des0, des1, reason)
        if status == "not-additive" and isinstance(des0, NoiseDesign) \
                and isinstance(des1, NoiseDesign):
            part = _on_affine_outputs(run, index, label, claim, (des0, des1), float_tv)
            if part is not None:
                return part
        return PairCoupling(status=status, score=score, delta_out=mean, spread=spread,
                            detail=f"{reason}; {how}", extra=extra, **base)
    assert isinstance(des0, NoiseDesign) and isinstance(des1, NoiseDesign)
    cov0 = fit0.A @ des0.cov @ fit0.A.T  # the law of each release's noise
    cov1 = fit1.A @ des1.cov @ fit1.A.T
    top = max(float(np.abs(cov0).max(initial=0.0)), float(np.abs(cov1).max(initial=0.0)))
    if kind or not np.allclose(cov0, cov1, rtol=FIT_RTOL, atol=FIT_RTOL * top):
        s0, s1 = np.sqrt(np.diag(cov0)), np.sqrt(np.diag(cov1))
        ok = s0 > 0
        ratio = s1[ok] / s0[ok] if np.any(ok) else np.array([math.nan])
        delta = fit1.intercept - fit0.intercept
        lead = PairCoupling(status="noise-depends-on-data", finding="lead",
                            score=_gaussian_distance(delta, s0, s1),
                            detail=(why or "the release's map from the noise depends on the "
                                           "data") + f" (noise sd ratio D'/D in "
                                                     f"[{ratio.min():.4g}, {ratio.max():.4g}])",
                            delta_out=delta, **base)
        return _unequal_bound(lead, _side_laws(run.out0, run.out1, (fit0, fit1), (des0, des1)),
                              claim, float_tv, rounded=False)
    delta = fit1.intercept - fit0.intercept
    free = fit0.noise_free & fit1.noise_free
    noisy = ~free
    if np.any(delta[free] != 0):
        if np.any(noisy):
            j = int(np.flatnonzero(free & (delta != 0))[0])
            return PairCoupling(status="noise-free-output", finding="lead", score=math.inf,
                                detail=(f"output {j} gets no noise (one value on every "
                                        "release) and differs between D and D'"),
                                delta_out=delta, direction=(free & (delta != 0)).astype(float),
                                **base)
        return PairCoupling(status="not-additive", score=math.inf, delta_out=delta,
                            detail="the releases are constant on each side (noise drawn but "
                                   "not visible in the output) and differ", **base)
    quantity, claimed, claim_delta = claim
    rel = fit_precision((fit0, fit1), (des0, des1), noisy)
    summary = {"noise": des0.family, "noise_values_per_release": int(des0.E.shape[1]),
               "affine_residual": max(fit0.max_residual, fit1.max_residual),
               "fit_precision": rel}
    if des0.family == "gaussian":
        from dpgp_audit.audit.whitebox import compare_exact, gaussian_profile

        idx = np.flatnonzero(noisy)
        cov = cov0[np.ix_(idx, idx)]
        try:
            prof = gaussian_profile(fit0.intercept[idx], fit1.intercept[idx], cov)
        except ValueError as err:  # e.g. noise of zero variance on every output
            return PairCoupling(status="not-additive", score=math.inf, delta_out=delta,
                                detail=f"recorded noise covariance unusable: {err}", **base)
        estimate, violated, extra = compare_exact(prof, quantity, claimed, claim_delta)
        violated = _beyond_precision(violated, estimate, claimed, rel, extra)
        full = np.zeros_like(delta)
        if prof.infinite:
            full[idx] = prof.direction  # type: ignore[assignment]
        else:
            full[idx] = np.linalg.pinv(cov, hermitian=True) @ delta[idx]
        extra.update(summary, mu=prof.mu, rank=prof.rank)
        allowed = _mu_allowed(quantity, claimed, claim_delta)
        if allowed is not None:  # the query change over what the noise was calibrated for
            extra["sensitivity_excess"] = prof.mu / allowed
        what = ("the query change leaves the range of the recorded noise (mu = inf)"
                if prof.infinite else f"mu = {prof.mu:.4g} exactly")
        return PairCoupling(status="additive", finding="violation" if violated else "",
                            score=prof.mu, estimate=estimate,
                            detail=f"additive Gaussian noise, {what}", delta_out=delta,
                            direction=full, extra=extra, **base)
    if des0.family == "laplace":
        got = _laplace_exact(fit0, des0, delta)
        if got is not None:
            estimate, violated, extra = _laplace_compare(got[0], got[1], quantity, claimed,
                                                         claim_delta)
            if violated is not None:
                violated = _beyond_precision(violated, estimate, claimed, rel, extra)
            extra.update(summary)
            if violated is None:  # measured, but no exact comparison with this claim
                return PairCoupling(status="additive", score=got[0], delta_out=delta,
                                    direction=delta, extra=extra, **base,
                                    detail=(f"additive Laplace noise, pure eps = {got[0]:.4g}; "
                                            "its (eps, delta) or GDP profile against the claim "
                                            "is not computed exactly"))
            return PairCoupling(status="additive", finding="violation" if violated else "",
                                score=got[0], estimate=estimate, delta_out=delta,
                                direction=delta, extra=extra,
                                detail=f"additive Laplace noise, pure eps = {got[0]:.4g} "
                                       "exactly", **base)
    # mixed families or shared Laplace values: a variance-matched point estimate
    idx = np.flatnonzero(noisy)
    cov = cov0[np.ix_(idx, idx)]
    w = np.linalg.pinv(cov, hermitian=True) @ delta[idx]
    score = float(math.sqrt(max(float(delta[idx] @ w), 0.0)))
    return PairCoupling(status="additive-mixed", score=score, delta_out=delta,
                        detail=(f"additive {des0.family} noise whose law is not one Gaussian "
                                "or independent Laplace per output: variance-matched "
                                "|delta| is a point estimate"), extra=summary, **base)


def _confirm(first: PairCoupling, second: PairCoupling, run1: CoupledRun,
             run2: CoupledRun) -> PairCoupling:
    """Keep a definitive finding only if a second seed reproduces it; else demote to a lead."""
    runs = first.runs + second.runs
    rel = first.releases + second.releases
    if first.status in ("additive-grid", "unequal-scale", "additive-part"):  # a bound: the
        # second seed must give one beyond the claim too
        if second.status == first.status and second.finding == "violation":
            return _replace(first, runs=runs, releases=rel,
                            score=min(first.score, second.score),
                            estimate=min(first.estimate, second.estimate),
                            detail=first.detail + "; reproduced on a second seed (" + (
                                f"mu >= {second.score:.4g})" if first.status == "additive-grid"
                                else f"estimate >= {second.estimate:.4g})"))
        return _replace(first, finding="lead", runs=runs, releases=rel,
                        detail=first.detail + "; NOT reproduced on a second seed "
                                              f"({second.status}: {second.detail})")
    if first.status == "no-noise":
        same = (second.status == "no-noise" and np.array_equal(run1.out0, run2.out0)
                and np.array_equal(run1.out1, run2.out1))
        if same:
            return _replace(first, finding="violation", estimate=math.inf, runs=runs,
                            releases=rel,
                            detail=("the release draws nothing from the handed generator and "
                                    "returned the same values on two seeds, different for D "
                                    "and D': two point masses, eps = inf (definitive under "
                                    "the Mechanism contract)"))
        return _replace(first, status="not-recordable", finding="", score=0.0, runs=runs,
                        releases=rel, detail="no draw from the handed generator, yet the "
                                             "releases change with the seed: randomness from "
                                             "elsewhere, so the runs were not coupled")
    if first.status == "one-side-no-noise":
        empty0 = not run1.log0.noise()
        o_first = run1.out0 if empty0 else run1.out1
        o_second = run2.out0 if empty0 else run2.out1
        other = _other_side_continuous(run1, empty0) and _other_side_continuous(run2, empty0)
        if second.status == first.status and np.array_equal(o_first, o_second) and other:
            return _replace(first, finding="violation", estimate=math.inf, runs=runs,
                            releases=rel,
                            detail=(first.detail + "; that release is the same on two seeds "
                                    "while its neighbour's is continuous (Gaussian or Laplace "
                                    "noise, verified affine): eps = inf (definitive under the "
                                    "Mechanism contract)"))
        return _replace(first, runs=runs, releases=rel)
    # the two seeds' values agree to the precision of their fits (float32 releases: ~1e-7)
    tol = max(1e-8, FIT_MARGIN * max(float(c.extra.get("fit_precision", 0.0))
                                     for c in (first, second)))
    ok = (second.status == first.status and second.finding == first.finding
          and first.delta_out is not None and second.delta_out is not None
          and np.allclose(first.delta_out, second.delta_out, rtol=tol,
                          atol=tol * float(np.abs(first.delta_out).max(initial=0.0)))
          and (math.isinf(first.score) and math.isinf(second.score)
               or math.isclose(first.score, second.score, rel_tol=max(1e-6, tol))))
    if ok:
        return _replace(first, runs=runs, releases=rel)
    return _replace(first, finding="lead", runs=runs, releases=rel,
                    detail=first.detail + "; NOT reproduced on a second seed "
                                          f"({second.status}: {second.detail})")


def _other_side_continuous(run: CoupledRun, side1: bool) -> bool:
    """True when one side's release is verified affine with some noise in it."""
    log, out = (run.log1, run.out1) if side1 else (run.log0, run.out0)
    des = noise_design(log.noise(), run.n)
    if not isinstance(des, NoiseDesign):
        return False
    fit = fit_affine(out, des.E)
    return isinstance(fit, AffineFit) and bool(np.any(~fit.noise_free)) and bool(
        np.any(np.abs(fit.A) > 0))


def _replace(p: PairCoupling, **kw: object) -> PairCoupling:
    import dataclasses

    return dataclasses.replace(p, **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the survey
def _pairs(pairs: Sequence[object]) -> list[NeighbourPair]:
    out = []
    for i, p in enumerate(pairs):
        if isinstance(p, NeighbourPair):
            out.append(p)
        elif isinstance(p, tuple) and len(p) in (2, 3):
            out.append(NeighbourPair(p[0], p[1], str(p[2]) if len(p) == 3 else f"pair {i}"))
        else:
            raise TypeError(f"pairs[{i}] must be a NeighbourPair or a (D, D'[, label]) tuple")
    return out


@dataclass(frozen=True, eq=False)
class CouplingSurvey:
    """Every pair's :class:`PairCoupling`, with the claim and the releases spent."""

    pairs: tuple[NeighbourPair, ...]
    couplings: tuple[PairCoupling, ...]
    claim: object
    releases: int
    seconds: float = 0.0
    #: whether ``sample`` repeated itself on two generators of one seed (``None``: not run)
    reproducible: bool | None = None
    #: what the structure-boundary search did (:mod:`~dpgp_audit.audit.boundary`), if run
    boundary: dict | None = None
    #: what the substitution-position search did (:mod:`~dpgp_audit.audit.positions`), if run
    positions: dict | None = None
    #: the group-size pairs surveyed (:func:`~dpgp_audit.audit.boundary.with_group_sizes`)
    group_sizes: dict | None = None
    #: what the path analysis of iterative releases did (:mod:`~dpgp_audit.audit.paths`)
    paths: dict | None = None

    def extended(self, other: CouplingSurvey, boundary: dict | None = None) -> CouplingSurvey:
        """One survey: these pairs, then ``other``'s (their indices shifted)."""
        k = len(self.pairs)
        moved = tuple(_replace(c, index=c.index + k) for c in other.couplings)
        return dataclasses.replace(self, pairs=self.pairs + other.pairs,
                                   couplings=self.couplings + moved,
                                   releases=self.releases + other.releases,
                                   seconds=self.seconds + other.seconds,
                                   boundary=self.boundary if boundary is None else boundary)

    def with_pairs(self, mechanism: Mechanism, pairs: Sequence[NeighbourPair],
                   rng: np.random.Generator, *, max_releases: int | None = None
                   ) -> CouplingSurvey:
        """The survey extended by the coupled survey of ``pairs`` (:func:`couple_pairs`,
        under its claim); itself, drawing nothing, when there are none.
        """
        if not pairs:
            return self
        return self.extended(couple_pairs(mechanism, pairs, rng, claim=self.claim,
                                          max_releases=max_releases))

    def ranked(self) -> list[tuple[NeighbourPair, PairCoupling]]:
        """Pairs by :meth:`PairCoupling.rank_key`, most distinguishable first (stable)."""
        order = sorted(range(len(self.pairs)),
                       key=lambda i: tuple(-v for v in self.couplings[i].rank_key()))
        return [(self.pairs[i], self.couplings[i]) for i in order]

    def result(self) -> AuditResult:
        """The A.9 :class:`~dpgp_audit.audit.result.AuditResult` (module docstring: soundness)."""
        quantity, claimed, _ = _claim_numbers(self.claim)
        ranked = self.ranked()
        violations = [c for _, c in ranked if c.finding == "violation"]
        leads = [c for _, c in ranked if c.finding == "lead"]
        # a finding a second seed did not reproduce is a lead: its number is no estimate
        exact = [c for _, c in ranked if not math.isnan(c.estimate) and c.finding != "lead"
                 and c.status in ("additive", "no-noise", "one-side-no-noise")]
        bounded = [c for _, c in ranked if not math.isnan(c.estimate) and c.finding != "lead"
                   and c.status in ("additive-grid", "additive-part", "iterative")]
        statuses: dict[str, int] = {}
        for c in self.couplings:
            statuses[c.status] = statuses.get(c.status, 0) + 1
        details: dict = {
            "pairs": len(self.pairs), "statuses": statuses, "releases_per_side": self.releases,
            "seconds": self.seconds, "leads": [c.as_dict() for c in leads[:10]],
            "ranking": [{"label": p.label, "status": c.status, "finding": c.finding,
                         "score": c.score} for p, c in ranked[:10]],
            "alpha_spent": 0.0,
            "scores_by_label": self.scores_by_label(),
            "note": ("leads are exploratory: they rank pairs for the white-box and black-box "
                     "auditors and never set a violation by themselves")}
        gave_up = sum(1 for c in self.couplings if c.status == "unfitted" and "gave_up" in c.extra)
        if gave_up:  # unfitted because the release failed every fit tried, not for the budget
            details["unfitted_not_additive"] = gave_up
        drawn = sorted({c.extra["draws"] for c in self.couplings if "draws" in c.extra})
        if drawn:  # the samplers of the pairs with noise it gives no exact bound for
            details["other_noise_draws"] = drawn
        if self.boundary is not None:
            details["boundary"] = self.boundary
        if self.positions is not None:
            details["positions"] = self.positions
        if self.group_sizes is not None:
            details["group_sizes"] = self.group_sizes
        if self.paths is not None:
            details["paths"] = self.paths
        if self.reproducible is False:  # said only when it is not: the runner reports it
            details["reproducible"] = False
        if _data_unread(self.couplings):  # said only when so: the runner reports it
            details["data_read"] = False
        if violations:
            top = violations[0]
            verdict, estimate = Verdict.VIOLATION, top.estimate
            guarantee = {"additive-grid": Guarantee.GREYBOX_GRID,
                         "unequal-scale": Guarantee.GREYBOX_SCALE,
                         "additive-part": Guarantee.GREYBOX_PART,
                         "iterative": Guarantee.GREYBOX_PATH}.get(top.status,
                                                                  Guarantee.GREYBOX_EXACT)
        elif exact:
            top = max(exact, key=lambda c: c.estimate)
            verdict, guarantee, estimate = Verdict.NO_EVIDENCE, Guarantee.GREYBOX_EXACT, \
                top.estimate
        elif bounded:
            top = max(bounded, key=lambda c: c.estimate)
            verdict, estimate = Verdict.NO_EVIDENCE, top.estimate
            guarantee = {"additive-part": Guarantee.GREYBOX_PART,
                         "iterative": Guarantee.GREYBOX_PATH}.get(top.status,
                                                                  Guarantee.GREYBOX_GRID)
        else:
            top = ranked[0][1] if ranked else None
            verdict, guarantee, estimate = Verdict.INCONCLUSIVE, Guarantee.GREYBOX_LEAD, \
                math.nan
        if top is not None:
            pair = self.pairs[top.index]
            details.update(witness={**pair.as_dict()}, witness_label=pair.label,
                           witness_index=top.index, witness_coupling=top.as_dict())
        details["exact_pairs"] = len(exact)
        details["grid_bounded_pairs"] = sum(c.status == "additive-grid" for c in bounded)
        details["part_bounded_pairs"] = sum(c.status == "additive-part" for c in bounded)
        if self.paths is not None:
            details["path_bounded_pairs"] = sum(c.status == "iterative" for c in bounded)
        if (verdict is Verdict.VIOLATION and top.status == "unequal-scale"
                and quantity == "epsilon" and estimate >= BOUND_SEARCH_CEILING):
            details["estimate_at_ceiling"] = BOUND_SEARCH_CEILING
        return AuditResult(auditor="greybox", verdict=verdict, guarantee=guarantee,
                           estimate=float(estimate), claimed=float(claimed),
                           quantity=quantity, alpha=None, details=details)

    def pair_scores(self) -> list[float | None]:
        """One ranking score per pair, in the order of :attr:`pairs`.

        The pair's :attr:`PairCoupling.score` — in μ-like units whatever its status
        (exact μ or ε, a lead's distance, ``inf`` for unbounded leads; a confirmed
        definitive finding is lifted above every other pair, in its own order, so the
        certifiers take it first) — ``-inf`` for a
        pair left unrun by the budget, ``None`` for a pair the mechanism refused, and
        and ``nan`` — the runner leaves the pair to the black-box pilot — for every pair
        without a finding as soon as one pair's score is only a few-release guess
        (:attr:`PairCoupling.weak`: selections, threshold patterns), since the pilot's
        z-scores and these scores are on different scales (the ``implementation``
        argument of :func:`~dpgp_audit.audit.neighbours.rank_pairs`). The findings then
        get :data:`_FINDING_TOP` over their place in :meth:`PairCoupling.rank_key` order.
        """
        # a pilot's z-scores and these μ-like scores do not mix: if some pair has only a
        # guess, the pilot ranks every pair but those with a finding (which go first)
        strong = not any(c.weak and c.status != "unchanged" for c in self.couplings)
        # with a pilot beside them, the findings go first in their own order (violations,
        # then by score): huge finite values, above any pilot z, that keep that order
        found = [] if strong else sorted(
            (i for i, c in enumerate(self.couplings) if c.finding),
            key=lambda i: self.couplings[i].rank_key(), reverse=True)
        place = {i: _FINDING_TOP / (1 + r) for r, i in enumerate(found)}
        scores = [None if c.status in _UNSAMPLED else -math.inf if c.status == "not-run"
                  else c.score if strong else place[i] if c.finding else math.nan
                  for i, c in enumerate(self.couplings)]
        return _violations_first(scores, self.couplings)

    def scores_by_label(self) -> dict[str, float | None]:
        """:meth:`pair_scores` keyed by pair label (labels that are not unique left out)."""
        labels = [p.label for p in self.pairs]
        return {lab: sc for lab, sc in zip(labels, self.pair_scores(), strict=True)
                if labels.count(lab) == 1}

    def top(self, k: int) -> list[tuple[NeighbourPair, float]]:
        """The ``k`` most distinguishable pairs, for the certifiers, with their scores.

        Confirmed violations first, then by score (the pair's own μ-like score is
        returned); pairs the mechanism refused are left out; ties keep the pairs' order.
        """
        scored = [(i, -math.inf if c.status == "not-run" else c.score)
                  for i, c in enumerate(self.couplings) if c.status not in _UNSAMPLED]
        scored.sort(key=lambda t: (self.couplings[t[0]].finding != "violation", -t[1]))
        return [(self.pairs[i], sc) for i, sc in scored[:k]]


#: Statuses of pairs the certifiers cannot sample (the mechanism refuses a side).
_UNSAMPLED = ("rejected", "refuses-one-side")
#: The first finding's ranking score when a pilot ranks the other pairs (the k-th gets
#: this over k): above any pilot z-score, finite so that the findings keep their order.
_FINDING_TOP = 1e250


def _violations_first(scores: list[float | None], couplings: Sequence[PairCoupling]
                      ) -> list[float | None]:
    """``scores`` with every confirmed violation's finite score lifted above all the others.

    A definitive finding's μ-like score (e.g. an unequal-scale pair's) can be smaller than
    the exact μ of an additive pair within the claim; its pair is still the one to certify.
    The lift keeps the findings' own order (the larger bound first).
    """
    viol = {i for i, c in enumerate(couplings) if c.finding == "violation"}
    others = [sc for i, sc in enumerate(scores) if i not in viol and sc is not None
              and math.isfinite(sc)]
    lift = max([0.0, *others]) + 1.0
    return [sc + lift if i in viol and sc is not None and math.isfinite(sc) else sc
            for i, sc in enumerate(scores)]


def couple_pairs(mechanism: Mechanism, pairs: Sequence[object], rng: np.random.Generator, *,
                 claim: object | None = None, extra_rows: int = EXTRA_ROWS,
                 max_rows: int = MAX_ROWS, max_releases: int | None = None,
                 confirm: bool = True) -> CouplingSurvey:
    """Run the coupled survey (A.9) over ``pairs``.

    Parameters
    ----------
    mechanism
        Anything with ``sample(data, n, rng)`` (and ``claim`` unless given).
    pairs
        :class:`~dpgp_audit.audit.neighbours.NeighbourPair` objects or ``(D, D′)`` tuples.
    rng
        Source of the seeds of the coupled runs (each run gets its own).
    claim
        Defaults to ``mechanism.claim``.
    extra_rows
        Releases per call beyond the unknowns of the affine fit (its check).
    max_rows
        Most releases per side in one call (releases with more noise values than this
        are not fitted; their pairs get a point-estimate score).
    max_releases
        Deterministic budget: releases per side over the whole survey. Pairs beyond it
        are ``"not-run"`` (ranked last). ``None``: no limit.
    confirm
        Re-run every pair with a definitive finding on a fresh seed (required before it
        sets a violation; ``False`` demotes such findings to leads).

    Returns
    -------
    CouplingSurvey
    """
    import time

    t0 = time.perf_counter()
    rng = check_rng(rng)
    claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
    numbers = _claim_numbers(claim)
    float_tv = float(getattr(claim, "float_tv", 0.0) or 0.0)
    inner_rel = _declared_inner_grid(mechanism)
    basis = _public_basis(mechanism)
    extra_rows = check_positive_int("extra_rows", extra_rows)
    max_rows = check_positive_int("max_rows", max_rows)
    if max_releases is not None:
        max_releases = check_positive_int("max_releases", max_releases)
    plist = _pairs(pairs)
    root = np.random.SeedSequence([int(v) for v in rng.integers(0, 2**32, size=4)])
    # refusal checks draw their seeds from a stream of their own, so that checking a
    # refused pair leaves every other pair's seeds as they were
    refusals = np.random.SeedSequence(root.entropy, spawn_key=(2**31,))
    spent = 0
    maps: dict[tuple, np.ndarray] = {}  # noise maps fitted so far, reused and re-verified
    # a release that is never affine stops growing the calls; a rounded one grows them
    # while the budget leaves a probe for every later pair
    fits = {"affine": 0, "not": 0, "grid": 0}
    coupled: bool | None = None  # does one seed give one release? (checked once)
    results: list[PairCoupling] = []

    def run(pair: NeighbourPair, n: int) -> CoupledRun:
        nonlocal spent
        spent += n
        return couple(mechanism, pair.d0, pair.d1, n, root.spawn(1)[0])

    direct: int | None = None  # a rounded release's fit size, once known: no probe call

    def affords(rows: int, i: int) -> bool:
        # ``rows`` now and a probe for every later pair: a rounded release's larger fits
        # never leave pairs unrun that probes alone would have reached
        return max_releases is None or spent + rows + PROBE_ROWS * (
            len(plist) - i - 1) <= max_releases

    for i, pair in enumerate(plist):
        n_first = direct if direct is not None and affords(direct, i) else PROBE_ROWS
        if max_releases is not None and spent + n_first > max_releases:
            results.append(PairCoupling(i, pair.label, "not-run",
                                        detail="the survey's release budget was spent"))
            continue
        try:
            if coupled is None:  # D twice on one seed: a reproducible release repeats itself
                rep = couple(mechanism, pair.d0, pair.d0, PROBE_ROWS, root.spawn(1)[0])
                spent += PROBE_ROWS
                coupled = bool(np.array_equal(rep.out0, rep.out1, equal_nan=True))
            first = run(pair, n_first)
            res = _analyse_run(first, i, pair.label, numbers, maps,
                                    float_tv=float_tv, inner_rel=inner_rel,
                                    basis=basis)
            need = _rows_needed(first, extra_rows)
            hopeless = fits["not"] >= 3 and not fits["affine"]
            checkable = need is not None and need - extra_rows < PROBE_ROWS  # n > m + 1
            if (res.status in ("not-additive", "unfitted") and need is not None
                    and not checkable
                    and first.n < need <= max_rows and not hopeless
                    and (not fits["grid"] or affords(need, i))):
                # the first call showed how much noise one release draws: fit it afresh
                first = run(pair, need)
                res = _analyse_run(first, i, pair.label, numbers, maps,
                                    float_tv=float_tv, inner_rel=inner_rel,
                                    basis=basis)
                res = _replace(res, runs=2, releases=res.releases + PROBE_ROWS)
            elif need is not None and need > max_rows and res.status == "unfitted":
                res = _replace(res, detail=res.detail + f" (an affine fit needs {need} "
                                                        f"releases per call, above {max_rows})")
            elif res.status == "unfitted" and hopeless:
                # not the budget: earlier fits all failed, so the survey stopped refitting
                res = _replace(res, extra={**res.extra, "gave_up": fits["not"]},
                               detail=res.detail + f" (not refitted: {fits['not']} earlier "
                                                   "pairs failed an affine fit and none passed)")
            if res.status in ("additive", "additive-mixed", "additive-grid",
                              "additive-declared-grid"):
                fits["affine"] += 1
            if res.status in ("additive-grid", "additive-declared-grid") and need is not None:
                fits["grid"] += 1
                # a rounded release reuses no noise map: later pairs go straight to its fit
                direct = max(need, PROBE_ROWS)
            elif res.status == "not-additive" and need is not None and (
                    checkable or first.n >= need):
                fits["not"] += 1
            if res.finding == "violation" or res.status in ("no-noise", "one-side-no-noise"):
                if confirm:
                    second = run(pair, first.n)
                    res = _confirm(res, _analyse_run(second, i, pair.label, numbers, maps,
                                    float_tv=float_tv, inner_rel=inner_rel,
                                    basis=basis),
                                   first, second)
                elif res.finding == "violation":
                    res = _replace(res, finding="lead",
                                   detail=res.detail + " (not confirmed on a second seed)")
        except ContractError:
            raise  # a broken contract is never a refusal: the audit stops and says so
        except ValueError as err:  # the mechanism refuses a dataset of this pair
            one_side = _one_side_refusal(mechanism, pair, claim, refusals, i, confirm)
            spent += 0 if one_side is None else one_side.releases
            results.append(one_side or PairCoupling(i, pair.label, "rejected",
                                                    detail=f"{type(err).__name__}: {err}"))
            continue
        except Exception as err:  # noqa: BLE001 - a mechanism that breaks under recording
            results.append(PairCoupling(i, pair.label, "not-recordable",
                                        detail=f"sample() failed under the recording "
                                               f"generator: {type(err).__name__}: {err}"))
            continue
        if not coupled:
            res = _replace(res, status="not-recordable", finding="", estimate=math.nan,
                           detail="sample() is not reproducible from the generator it is "
                                  "handed (two calls on one seed differ): the runs are not "
                                  f"coupled, the score is a point estimate; {res.detail}")
        results.append(res)
    return CouplingSurvey(tuple(plist), tuple(_pool_spreads(results)), claim, spent,
                          time.perf_counter() - t0, reproducible=coupled)


def _one_side_refusal(mechanism: Mechanism, pair: NeighbourPair, claim: object,
                      root: np.random.SeedSequence, index: int, confirm: bool
                      ) -> PairCoupling | None:
    """A pair inside the declared domain of which the mechanism refuses exactly one side.

    The refusal (``ValueError``) is an output too: when it comes before any draw, on two
    seeds, while the other dataset is released on both, it depends on the data alone and
    tells the two apart with certainty — ε = ∞, definitive under the ``Mechanism``
    contract (all randomness from the handed generator), as a release that draws nothing.
    A refusal after some draws is a lead. ``None``: no declared domain, a dataset outside
    it, both sides refused, or the refusal not reproduced (then the pair is "rejected").
    """
    if getattr(claim, "domain", None) is None or any(
            domain_problem(claim, d) is not None for d in (pair.d0, pair.d1)):
        return None
    seeds = 2 if confirm else 1
    outcome: list[list[tuple[str, bool, str]]] = [[], []]
    for side, data in enumerate((pair.d0, pair.d1)):
        for _ in range(seeds):
            gen = recording_generator(root.spawn(1)[0])
            try:
                checked_sample(mechanism, data, PROBE_ROWS, gen)
                outcome[side].append(("released", False, ""))
            except ContractError:
                raise
            except ValueError as err:
                drew = any(d.method != "spawn" for d in gen.log.draws)
                outcome[side].append(("refused", drew, f"{type(err).__name__}: "
                                      + one_line(err, 160)))
    refused = [all(o[0] == "refused" for o in outcome[s]) for s in (0, 1)]
    released = [all(o[0] == "released" for o in outcome[s]) for s in (0, 1)]
    if not ((refused[0] and released[1]) or (refused[1] and released[0])):
        return None
    side = 0 if refused[0] else 1
    drew = any(o[1] for o in outcome[side])
    tag = "D" if side == 0 else "D'"
    why = outcome[side][0][2]
    base = dict(index=index, label=pair.label, status="refuses-one-side", score=math.inf,
                runs=seeds, releases=PROBE_ROWS * seeds)
    if drew or not confirm:
        return PairCoupling(**base, finding="lead",
                            detail=(f"{tag} (inside the declared domain) is refused ({why}) "
                                    f"while its neighbour is released" + (
                                        " after some draws: the refusal may depend on the "
                                        "noise" if drew else " (not confirmed on a second "
                                                             "seed)")))
    return PairCoupling(**base, finding="violation", estimate=math.inf,
                        detail=(f"{tag} (inside the declared domain) is refused ({why}) before "
                                "any draw, on two seeds, while its neighbour is released: the "
                                "refusal alone tells them apart, eps = inf (definitive under "
                                "the Mechanism contract). Release something for every dataset "
                                "of the domain, or declare a domain that excludes this one"))


def _rows_needed(run: CoupledRun, extra_rows: int) -> int | None:
    """Releases per call the affine fit needs, from the noise values one release drew."""
    noise = decode_kit_laplace(run.log0.noise())
    if not noise or any(d.method not in ADDITIVE_FAMILIES for d in noise):
        return None  # no affine fit to make, however many releases
    total = sum(int(d.value.size) for d in noise)
    if total % run.n:
        return None
    return total // run.n + 1 + extra_rows


def audit_greybox(mechanism: Mechanism, pairs: Sequence[object], rng: np.random.Generator,
                  **kwargs: object) -> AuditResult:
    """A.9: the grey-box coupled audit of ``pairs`` (keywords as :func:`couple_pairs`)."""
    return couple_pairs(mechanism, pairs, rng, **kwargs).result()  # type: ignore[arg-type]


def rank_pairs_by_coupling(mechanism: Mechanism, pairs: Sequence[object],
                           rng: np.random.Generator, *, top: int = 3,
                           **kwargs: object) -> list[tuple[NeighbourPair, float]]:
    """The ``top`` pairs by the coupled survey's scores, most distinguishable first.

    Scores are in μ-like units: the exact μ or ε, a lead's distance, ``inf`` for an
    unbounded lead (:meth:`CouplingSurvey.pair_scores`). For slow mechanisms this
    replaces pilot sampling of every pair (a few releases per pair instead of hundreds).
    The survey's seeds come from ``rng``; the certifying auditors must draw from another
    generator.
    """
    return couple_pairs(mechanism, pairs, rng, **kwargs).top(  # type: ignore[arg-type]
        check_positive_int("top", top))
