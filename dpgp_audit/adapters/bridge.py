"""A library in its own virtualenv, audited from the kit's (catalogue A.10).

Some libraries cannot live beside the kit: dp4gp 1.01 needs numpy < 2 (it reads
``np.Inf``) while the kit needs numpy ≥ 2. :func:`bridged` runs such a release in a
child process started with the other environment's interpreter and returns a
mechanism whose ``sample(data, n, rng)`` sends the dataset's arrays and 128 bits of
seed from the audit's generator to the child and reads ``n`` releases back — one
process for every draw of the audit, one round trip per ``sample`` call.

The child (``_bridge_child.py``, numpy and the standard library only) seeds the
library there with the same :class:`~dpgp_audit.adapters.seeding.Seeding` as the
in-process adapter, so a bridged mechanism is reproducible exactly when an
in-process one would be. The release in the other environment is written like an
in-process one, ``release(data, **seed_kw)`` (or ``release(data, n, **seed_kw)``
vectorised), where ``data`` carries ``X``, ``y``, ``n`` and ``dim`` as plain arrays.

Frames and messages are documented in ``_bridge_child.py``. The child's stderr (with
everything the library prints) goes to a temporary log file; an error message quotes
its last lines.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import tempfile
import threading
from typing import Any

import numpy as np

from dpgp_audit.adapters._bridge_child import frame as _frame
from dpgp_audit.adapters._bridge_child import read_frame
from dpgp_audit.adapters.mechanism import AdaptedMechanism
from dpgp_audit.adapters.seeding import Seeding

__all__ = ["DEFAULT_CALL_TIMEOUT_S", "BridgeTimeout", "BridgedMechanism", "VenvBridge",
           "bridged"]

#: Seconds one request to the child may take before the guard kills it (a library call
#: that hangs, e.g. waiting on input or a lock, would otherwise stall the audit for ever).
DEFAULT_CALL_TIMEOUT_S = 600.0


class BridgeTimeout(RuntimeError):
    """The child did not answer one request within the bridge's ``call_timeout_s``."""

_CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bridge_child.py")


class VenvBridge:
    """One child process in another environment that serves a release (module docstring).

    Parameters
    ----------
    python
        The other environment's interpreter, e.g. ``".venv-dp4gp/bin/python"``.
    target
        ``"FILE.py:NAME"`` or ``"package.module:NAME"``, resolved in the child.
    kwargs
        When given, the child calls ``NAME(**kwargs)`` once and serves what it returns.
    seeding
        How the release is seeded there (:class:`~dpgp_audit.adapters.seeding.Seeding`).
    vectorised
        Whether one call returns a batch.
    env
        Extra environment variables for the child (e.g. ``OMP_NUM_THREADS``).
    call_timeout_s
        A guard on one request (loading the target, one ``sample`` call): when the child
        has not answered after this many seconds it is killed and the request raises
        :class:`BridgeTimeout`, which names the guard. ``None``: wait for ever. The guard
        decides nothing about privacy: it ends an audit that a hung library would stall.
    """

    def __init__(self, python: str, target: str, *, kwargs: dict | None = None,
                 seeding: Seeding, vectorised: bool = False,
                 env: dict[str, str] | None = None,
                 call_timeout_s: float | None = DEFAULT_CALL_TIMEOUT_S) -> None:
        if not os.path.isfile(python) or not os.access(python, os.X_OK):
            raise ValueError(f"python: {python!r} is not an executable interpreter (build the "
                             "library's virtualenv first)")
        if call_timeout_s is not None and not call_timeout_s > 0:
            raise ValueError(f"call_timeout_s must be a positive number of seconds or None, "
                             f"got {call_timeout_s!r}")
        self.call_timeout_s = call_timeout_s
        self.python = python
        self.target = target
        self.kwargs = kwargs
        self.seeding = seeding
        self.vectorised = bool(vectorised)
        self.env = dict(env or {})
        self.info: dict = {}
        self._proc: subprocess.Popen | None = None
        self._log: Any = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ process
    def start(self) -> dict:
        """Start the child and load the target; returns what the child reports."""
        if self._proc is not None and self._proc.poll() is None:
            return self.info
        self._log = tempfile.NamedTemporaryFile(prefix="dpgp-bridge-", suffix=".log",  # noqa: SIM115
                                                delete=False)
        env = {**os.environ, **self.env, "PYTHONNOUSERSITE": "1"}
        env.pop("PYTHONPATH", None)  # the kit's path must not shadow the other environment
        self._proc = subprocess.Popen([self.python, "-u", _CHILD], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._log, env=env)
        header = {"op": "load", "target": self.target, "kwargs": self.kwargs,
                  "style": self.seeding.style, "keyword": self.seeding.keyword,
                  "vectorised": self.vectorised}
        self.info, _ = self._request(header, b"")
        return self.info

    def close(self) -> None:
        """Ask the child to quit (then end it) and remove its log."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                if proc.poll() is None:
                    assert proc.stdin is not None
                    proc.stdin.write(_frame(json.dumps({"op": "quit"}).encode()) + _frame(b""))
                    proc.stdin.flush()
                    proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                proc.kill()
                proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()
        if self._log is not None:
            self._log.close()
            try:
                os.unlink(self._log.name)
            except OSError:
                pass
            self._log = None

    def __enter__(self) -> VenvBridge:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 — interpreter shutdown: nothing to report to
            pass

    def __getstate__(self) -> dict:  # a pickled copy (executor workers) starts its own child
        state = dict(self.__dict__)
        state.update(_proc=None, _log=None, _lock=None, info={})
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return None if self._proc is None else self._proc.pid

    # ------------------------------------------------------------------ requests
    def _log_tail(self, lines: int = 5) -> str:
        if self._log is None:
            return ""
        try:
            with open(self._log.name, encoding="utf-8", errors="replace") as fh:
                tail = fh.read().strip().splitlines()[-lines:]
        except OSError:
            return ""
        return (" | child stderr: " + " / ".join(t.strip() for t in tail)) if tail else ""

    def _request(self, header: dict, payload: bytes) -> tuple[dict, bytes]:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(_frame(json.dumps(header).encode()) + _frame(payload))
            proc.stdin.flush()
            raw, blob = self._reply(proc)
        except (BrokenPipeError, EOFError, OSError):
            code = proc.poll()
            raise RuntimeError(f"the bridge's child ({self.python}) ended"
                               f"{'' if code is None else f' with status {code}'}"
                               f"{self._log_tail()}") from None
        reply = json.loads(raw)
        if not reply.get("ok"):
            kind, message = reply.get("type", "Error"), reply.get("message", "")
            text = f"{self.target} in {self.python}: {kind}: {message}"
            if kind in ("ValueError", "LoadError"):
                raise ValueError(text)
            raise RuntimeError(text + self._log_tail())
        return reply, blob

    def _reply(self, proc: subprocess.Popen) -> tuple[bytes, bytes]:
        """The reply's two frames, read under the per-call guard (kills a silent child)."""
        got: dict[str, Any] = {}

        def read() -> None:
            try:
                got["frames"] = (self._read(proc.stdout), self._read(proc.stdout))
            except BaseException as err:  # noqa: BLE001 — handed to the caller's thread
                got["error"] = err

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(self.call_timeout_s)
        if reader.is_alive():  # the guard fired: end the child, which ends the read
            proc.kill()
            reader.join(10)
            self._proc = None
            raise BridgeTimeout(
                f"time guard: {self.target} in {self.python} did not answer within "
                f"{self.call_timeout_s:g} s (child killed); raise call_timeout_s or fix the "
                f"library call{self._log_tail()}")
        if "error" in got:
            raise got["error"]
        return got["frames"]

    @staticmethod
    def _read(stream: Any) -> bytes:
        body = read_frame(stream)
        if body is None:
            raise EOFError
        return body

    def _exchange(self, header: dict, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self.start()
            buf = io.BytesIO()
            np.savez(buf, X=np.asarray(X, dtype=float), y=np.asarray(y, dtype=float))
            _, blob = self._request(header, buf.getvalue())
        return np.load(io.BytesIO(blob), allow_pickle=False)["out"]

    def sample(self, X: np.ndarray, y: np.ndarray, n: int, words: np.ndarray) -> np.ndarray:
        """``n`` releases from the child for the arrays ``X``, ``y`` and seed ``words``."""
        return self._exchange({"op": "sample", "n": int(n),
                               "seed": [int(w) for w in np.asarray(words).ravel()]}, X, y)

    def method(self, name: str, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The target's own ``mean``/``cov``/``query`` on ``X``, ``y`` (when it has one)."""
        return self._exchange({"op": "method", "name": name}, X, y)

    @property
    def methods(self) -> tuple[str, ...]:
        """The optional methods the target offers (known once started)."""
        return tuple(self.info.get("methods", ()))


class BridgedMechanism(AdaptedMechanism):
    """An adapted mechanism whose release runs in another environment (:func:`bridged`)."""

    def __init__(self, bridge: VenvBridge, claim: Any, *, name: str | None = None) -> None:
        super().__init__(bridge.sample, claim, seeding=bridge.seeding, vectorised=True,
                         name=name or bridge.target)
        self.bridge = bridge

    def _draw(self, data: Any, n: int, words: np.ndarray) -> Any:
        return self.bridge.sample(data.X, data.y, n, words)

    def close(self) -> None:
        """End the child process (a later ``sample`` starts a new one)."""
        self.bridge.close()

    def __repr__(self) -> str:
        return (f"BridgedMechanism({self.name!r}, python={self.bridge.python!r}, "
                f"seeding={self.seeding.style!r})")


#: Datasets whose ``mean``/``cov`` a bridged mechanism remembers (the auditors ask for the
#: same pair's model several times; each answer is a round trip to the child).
_MODEL_CACHE = 256


class _BridgedGaussian(BridgedMechanism):
    """A bridged mechanism whose target states its Gaussian model (``mean``/``cov``).

    ``mean`` and ``cov`` are functions of the data by the contract, so their answers are
    remembered per dataset (the arrays' bytes), at most :data:`_MODEL_CACHE` of them.
    """

    def __init__(self, bridge: VenvBridge, claim: Any, *, name: str | None = None) -> None:
        super().__init__(bridge, claim, name=name)
        self._model: dict[tuple, np.ndarray] = {}

    def _ask(self, what: str, data: Any) -> np.ndarray:
        X, y = np.asarray(data.X, dtype=float), np.asarray(data.y, dtype=float)
        key = (what, X.shape, X.tobytes(), y.tobytes())
        if key not in self._model:
            if len(self._model) >= _MODEL_CACHE:
                self._model.pop(next(iter(self._model)))
            self._model[key] = self.bridge.method(what, X, y)
        return self._model[key].copy()

    def mean(self, data: Any) -> np.ndarray:
        """The target's ``mean(data)``, flattened (computed in the other environment)."""
        return np.ravel(self._ask("mean", data))

    def cov(self, data: Any) -> np.ndarray:
        """The target's ``cov(data)`` (computed in the other environment)."""
        return np.atleast_2d(self._ask("cov", data))


def bridged(python: str, target: str, claim: Any, *, seeding: str | Seeding,
            keyword: str | None = None, vectorised: bool = False, kwargs: dict | None = None,
            name: str | None = None, env: dict[str, str] | None = None,
            call_timeout_s: float | None = DEFAULT_CALL_TIMEOUT_S) -> BridgedMechanism:
    """A mechanism whose release runs in another virtualenv (catalogue A.10).

    Parameters
    ----------
    python
        That environment's interpreter (``.venv-dp4gp/bin/python``).
    target
        The release there: ``"FILE.py:NAME"`` or ``"package.module:NAME"``; with
        ``kwargs``, a factory called once as ``NAME(**kwargs)`` in the child.
    claim
        The library's documented guarantee, written by the user.
    seeding, keyword, vectorised
        As for :func:`~dpgp_audit.adapters.mechanism.adapt`; applied in the child.
    env
        Extra environment variables for the child.
    call_timeout_s
        The guard on one request (:class:`VenvBridge`); ``None`` for none.

    The child is started here, so that a broken environment fails at once. When the
    target also has ``mean(data)`` and ``cov(data)`` (its own statement of the Gaussian
    release, e.g. the covariance a library computes before drawing), the mechanism
    offers them too: the white-box auditor and the model check then run on them.
    """
    if not isinstance(seeding, Seeding):
        seeding = Seeding(seeding, keyword)
    bridge = VenvBridge(python, target, kwargs=kwargs, seeding=seeding, vectorised=vectorised,
                        env=env, call_timeout_s=call_timeout_s)
    bridge.start()
    cls = _BridgedGaussian if {"mean", "cov"} <= set(bridge.methods) else BridgedMechanism
    return cls(bridge, claim, name=name)
