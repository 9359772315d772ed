"""Registry of every mechanism in the kit, keyed by catalogue ID.

The CLI, the test suite and the notebooks enumerate mechanisms here. A module
registers its mechanisms at import time with :func:`register`; :func:`entries`
imports every module listed in ``_MODULES`` first, so adding a module to that
tuple is all it takes to appear in ``python -m dpgp_audit list``, ``make audit``
and the invariant tests.

Planted-bug mechanisms (catalogue A.5) have IDs starting ``planted/`` and are
excluded unless asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

from dpgp_audit.contract import Mechanism
from dpgp_audit.dataset import Dataset

__all__ = ["Entry", "entries", "get", "register"]

# Modules whose import registers mechanisms. Keep sorted; one line per module.
_MODULES: tuple[str, ...] = (
    "dpgp_audit.audit.planted",
    "dpgp_audit.methods.binning",
    "dpgp_audit.methods.cloaking",
    "dpgp_audit.methods.dpsetconv",
    "dpgp_audit.methods.dpsgd_svgp",
    "dpgp_audit.methods.dpsvgp",
    "dpgp_audit.methods.dpsvgp_hetero",
    "dpgp_audit.methods.dpsvgp_hyper",
    "dpgp_audit.methods.primitives",
    "dpgp_audit.methods.s18_planted",
    "dpgp_audit.methods.s21",
    "dpgp_audit.methods.s21_selection",
    "dpgp_audit.methods.selection",
    "dpgp_audit.methods.standard",
    "dpgp_audit.privacy.coinpress",
)

_REGISTRY: dict[str, Entry] = {}
_loaded = False


@dataclass(frozen=True)
class Entry:
    """One registered mechanism.

    Attributes
    ----------
    id
        Catalogue ID, e.g. ``"P.1/analytic-gaussian"`` or ``"planted/std-as-variance"``.
    paper
        Short name of the source (``"P"`` for the toolbox, ``"S18"``, ``"H"``, …).
    title
        One line for listings.
    build
        ``build(data, epsilon=…, delta=…) -> Mechanism``: the mechanism for the
        public parts of ``data`` (e.g. its inputs under the outputs-only relation).
    default_data
        A small dataset needing no network, for ``make audit`` and quick tests.
    defaults
        Default keyword arguments for ``build`` (e.g. ``{"epsilon": 1.0, "delta": 1e-5}``).
    true_epsilon
        For planted bugs: the mechanism's true ε at the default δ (``inf`` for
        unbounded loss), for tests and the auditing lab.
    twin
        For planted bugs: the ID of the correct mechanism it breaks.
    audit_samples
        Black-box samples per side for ``make audit`` (``None``: the CLI default).
        Lower it for mechanisms whose sampling is slow, so ``--all`` stays fast.
    """

    id: str
    paper: str
    title: str
    build: Callable[..., Mechanism]
    default_data: Callable[[], Dataset]
    defaults: dict = field(default_factory=dict)
    true_epsilon: float | None = None
    twin: str | None = None
    audit_samples: int | None = None

    @property
    def planted(self) -> bool:
        """True for deliberately broken mechanisms (A.5)."""
        return self.id.startswith("planted/")

    def make(self, data: Dataset | None = None, **overrides: object) -> tuple[Mechanism, Dataset]:
        """Build the mechanism on ``data`` (default: ``default_data()``) with overrides."""
        data = self.default_data() if data is None else data
        kwargs = {**self.defaults, **{k: v for k, v in overrides.items() if v is not None}}
        return self.build(data, **kwargs), data


def register(entry: Entry) -> Entry:
    """Add ``entry`` to the registry; an ID may be registered only once."""
    if entry.id in _REGISTRY and _REGISTRY[entry.id] is not entry:
        raise ValueError(f"mechanism ID {entry.id!r} is already registered")
    _REGISTRY[entry.id] = entry
    return entry


def _load_all() -> None:
    global _loaded
    if not _loaded:
        for module in _MODULES:
            importlib.import_module(module)
        _loaded = True


def entries(*, include_planted: bool = False, paper: str | None = None) -> list[Entry]:
    """Every registered entry, sorted by ID."""
    _load_all()
    out = [e for e in _REGISTRY.values() if include_planted or not e.planted]
    if paper is not None:
        out = [e for e in out if e.paper == paper]
    return sorted(out, key=lambda e: e.id)


def get(mechanism_id: str) -> Entry:
    """The entry registered under ``mechanism_id``; ``KeyError`` lists the known IDs."""
    _load_all()
    try:
        return _REGISTRY[mechanism_id]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise KeyError(f"unknown mechanism {mechanism_id!r}; known: {known}") from None
