"""A user's mechanism from ``--mechanism FILE.py:NAME`` (catalogue A.10).

**The rule that builds it.** ``NAME`` is imported (:func:`~dpgp_audit.adapters.loading.
load_attribute`), then

* an **instance** — an object with ``claim`` and ``sample`` that is not a class — is
  audited as it is; ``--epsilon``/``--delta`` are refused for it (there is nothing to
  apply them to);
* a **class or a function** (a factory) is called with the keyword arguments it names
  among ``data`` (the dataset audited) and the overrides given on the command line
  (``epsilon``, ``delta``, …): a class whose ``__init__`` takes nothing is called with
  nothing; one declaring ``data`` and ``epsilon`` gets both. An override the callable
  does not name is refused, and so is a required parameter the rule cannot fill.

What comes out must have a ``claim`` with a neighbour relation and a callable
``sample``. Each failure is a :class:`~dpgp_audit.adapters.loading.LoadError` (a
``ValueError``: one line, exit 2), which keeps the user's exception for ``--debug``.

:func:`~dpgp_audit.privacy.domain.domain_problem` (re-exported here) checks the data against
the claim's declared domain, and :func:`missing_domain_warning` words the warning for a
claim that declares none.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from dpgp_audit.adapters.loading import Loaded, LoadError, describe_exception, load_attribute
from dpgp_audit.contract import claim_problem
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.domain import domain_problem

__all__ = ["UserMechanism", "domain_problem", "is_mechanism", "load_mechanism",
           "missing_domain_warning"]


@dataclass(frozen=True)
class UserMechanism:
    """A built user mechanism and where its code came from."""

    mechanism: Any
    origin: Loaded


def _has(obj: object, name: str) -> bool:
    """``hasattr``, except that a property raising anything but ``AttributeError`` counts.

    (``hasattr`` lets such an error through: a ``claim`` property with a bug in it is
    still a claim, and reading it is reported as the user's error by
    :func:`_not_a_mechanism`.)
    """
    try:
        getattr(obj, name)
    except AttributeError:
        return False
    except Exception:  # noqa: BLE001 - present but broken: reported when read
        return True
    return True


def is_mechanism(obj: object) -> bool:
    """True for an object (not a class) with a ``claim`` and a callable ``sample``."""
    return (not inspect.isclass(obj) and _has(obj, "claim")
            and callable(getattr(obj, "sample", None)))


def _not_a_mechanism(obj: object, spec: str) -> str | None:
    missing = [what for what, ok in (("claim", _has(obj, "claim")),
                                     ("sample(data, n, rng)",
                                      callable(getattr(obj, "sample", None)))) if not ok]
    if missing:
        return (f"{spec} is not a mechanism: {type(obj).__name__} has no "
                f"{' and no '.join(missing)} (see `python -m dpgp_audit new-mechanism`)")
    try:
        claim = obj.claim  # type: ignore[attr-defined]
    except Exception as err:  # noqa: BLE001 - the user's property failed: one line, exit 2
        return f"reading the claim of {spec} failed: {describe_exception(err)}"
    problem = claim_problem(claim)
    return None if problem is None else f"{spec}: {problem}"


def _call_by_names(fn: Any, spec: str, data: Dataset, overrides: dict) -> Any:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: call it bare
        sig = None
    offered = {"data": data, **overrides}
    kwargs: dict = {}
    if sig is not None:
        params = sig.parameters
        var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
        for key, value in offered.items():
            p = params.get(key)
            if p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                kwargs[key] = value
            elif var_kw:
                kwargs[key] = value
            elif key != "data":
                flag = "--" + key.replace("_", "-")
                raise LoadError(f"{spec} takes no {key!r} argument, so {flag} cannot be "
                                "applied (name it in the signature, or leave the flag out)")
        unfilled = [p.name for p in params.values()
                    if p.default is p.empty and p.name not in kwargs
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if unfilled:
            raise LoadError(f"{spec} needs argument(s) {unfilled} that the command line "
                            "cannot give: it passes only 'data', 'epsilon' and 'delta' by "
                            "name (give the others defaults)")
    try:
        return fn(**kwargs)
    except LoadError:
        raise
    except Exception as err:  # noqa: BLE001 — the user's constructor failed: one line
        raise LoadError(f"building {spec} failed: {describe_exception(err)}", err) from None


def load_mechanism(spec: str, data: Dataset, overrides: dict | None = None) -> UserMechanism:
    """Import ``spec`` and build the mechanism by the rule of the module docstring.

    Parameters
    ----------
    spec
        ``"FILE.py:NAME"`` or ``"package.module:NAME"``.
    data
        The dataset the audit runs on (passed as ``data=`` where the callable names it).
    overrides
        Command-line overrides (``None`` values are dropped), e.g. ``{"epsilon": 0.5}``.
    """
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    found = load_attribute(spec)
    obj = found.obj
    if is_mechanism(obj):
        if given:
            flags = ", ".join("--" + k.replace("_", "-") for k in given)
            raise LoadError(f"{spec} is an instance: {flags} cannot be applied to it (export "
                            "a class or a factory that takes them)")
        mech = obj
    elif callable(obj):
        mech = _call_by_names(obj, spec, data, given)
    else:
        mech = obj
    problem = _not_a_mechanism(mech, spec)
    if problem:
        raise LoadError(problem)
    return UserMechanism(mech, found)


def missing_domain_warning(spec: str, claim: Any) -> str | None:
    """The warning for a claim with no declared bound on |y| (``None`` when it has one)."""
    if getattr(claim, "domain_bound", None) is not None:
        return None
    return (f"{spec}: the claim declares no public domain, so the auditors may try "
            "arbitrarily large targets, where floating-point rounding of the release leaks "
            "(the precision auditor reports it). Declare one in the claim: "
            "domain=PublicDomain(y_bound=B) (from dpgp_audit import PublicDomain; "
            "dpgp_audit/privacy/domain.py)")
