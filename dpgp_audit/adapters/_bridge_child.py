"""The child side of the virtualenv bridge (catalogue A.10): run as a script, not imported.

``python _bridge_child.py`` is started by :class:`dpgp_audit.adapters.bridge.VenvBridge`
with another environment's interpreter. It needs only numpy and the standard library;
it loads its two helpers (``seeding.py``, ``loading.py``) by file path from its own
folder, so the kit need not be installed there (e.g. a numpy 1.x environment).

Protocol (every message is two frames, each an 8-byte big-endian length and its bytes:
a JSON header, then an ``.npz`` payload, possibly empty):

* ``{"op": "load", "target": "FILE.py:NAME", "kwargs": {...}, "style": ..., "keyword":
  ..., "vectorised": bool}`` → the target is imported (and called with ``kwargs`` when
  they are given); the reply names the interpreter, numpy and the target's SHA-256;
* ``{"op": "sample", "n": n, "seed": [4 words]}`` with ``X`` and ``y`` in the payload →
  ``n`` releases from one seeding, as ``out`` in the reply's payload;
* ``{"op": "method", "name": "mean" | "cov" | "query"}`` with ``X`` and ``y`` → the
  target's own method of that name on the data (offered when the load reply lists it
  under ``methods``), as ``out``;
* ``{"op": "quit"}``.

A failure is answered ``{"ok": false, "type": ..., "message": ...}``; the parent raises
a ``ValueError`` for a ``ValueError`` (a dataset the release refuses) and a
``RuntimeError`` otherwise. Anything the library prints goes to stderr: the protocol
owns the original stdout.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import struct
import sys
import traceback

_HERE = os.path.dirname(os.path.abspath(__file__))
#: Optional methods of the target that the parent may call (the white-box interface and
#: the noise-free query).
_METHODS = ("mean", "cov", "query")


def _load_helper(name: str) -> object:
    spec = importlib.util.spec_from_file_location(f"_dpgp_bridge_{name}",
                                                  os.path.join(_HERE, f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class _Data:
    """What a release sees: the dataset's arrays (duck-compatible with ``Dataset``)."""

    def __init__(self, X: object, y: object) -> None:
        self.X = X
        self.y = y
        self.n = int(len(y))  # type: ignore[arg-type]
        self.dim = int(X.shape[1])  # type: ignore[attr-defined]


def frame(data: bytes) -> bytes:
    """One frame: an 8-byte big-endian length, then the bytes (the parent uses it too)."""
    return struct.pack(">Q", len(data)) + data


def read_frame(stream: io.BufferedReader) -> bytes | None:
    """The next frame's bytes, or ``None`` at the end of the stream (also mid-frame)."""
    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack(">Q", head)
    body = stream.read(size)
    if len(body) < size:
        return None
    return body


def _write(stream: io.BufferedWriter, header: dict, payload: bytes = b"") -> None:
    stream.write(frame(json.dumps(header).encode()) + frame(payload))
    stream.flush()


def main() -> int:
    """Serve requests on stdin/stdout until ``quit`` or end of input."""
    import numpy as np

    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # prints of the library (Python or C) go to stderr, never into the protocol
    sys.stdout = sys.stderr
    proto_in = sys.stdin.buffer
    seeding_mod = _load_helper("seeding")
    loading_mod = _load_helper("loading")
    release = seeding = None
    vectorised = False
    while True:
        raw = read_frame(proto_in)
        blob = read_frame(proto_in)
        if raw is None or blob is None:
            return 0
        header = json.loads(raw)
        try:
            op = header.get("op")
            if op == "quit":
                _write(proto_out, {"ok": True})
                return 0
            if op == "load":
                found = loading_mod.load_attribute(header["target"])  # type: ignore[attr-defined]
                kwargs = header.get("kwargs")
                release = found.obj(**kwargs) if kwargs is not None else found.obj
                if not callable(release):
                    raise TypeError(f"{header['target']} is not callable")
                seeding = seeding_mod.Seeding(header["style"],  # type: ignore[attr-defined]
                                              header.get("keyword"))
                vectorised = bool(header.get("vectorised"))
                methods = [m for m in _METHODS if callable(getattr(release, m, None))]
                _write(proto_out, {"ok": True, "python": sys.version.split()[0],
                                   "numpy": np.__version__, "pid": os.getpid(),
                                   "path": found.path, "sha256": found.sha256,
                                   "methods": methods})
            elif op == "sample":
                if release is None or seeding is None:
                    raise RuntimeError("sample before load")
                arrays = np.load(io.BytesIO(blob), allow_pickle=False)
                data = _Data(arrays["X"], arrays["y"])
                n = int(header["n"])
                with seeding.seeded(np.asarray(header["seed"], dtype=np.uint32)) as kw:
                    if vectorised:
                        out = release(data, n, **kw)
                    else:
                        out = [release(data, **kw) for _ in range(n)]
                arr = np.asarray(out)
                if arr.dtype == object:
                    arr = np.asarray(out, dtype=float)
                buf = io.BytesIO()
                np.savez(buf, out=arr)
                _write(proto_out, {"ok": True}, buf.getvalue())
            elif op == "method":
                name = header.get("name")
                if release is None or name not in _METHODS:
                    raise RuntimeError(f"method {name!r} is not offered")
                arrays = np.load(io.BytesIO(blob), allow_pickle=False)
                out = np.asarray(getattr(release, name)(_Data(arrays["X"], arrays["y"])),
                                 dtype=float)
                buf = io.BytesIO()
                np.savez(buf, out=out)
                _write(proto_out, {"ok": True}, buf.getvalue())
            else:
                raise RuntimeError(f"unknown op {op!r}")
        except Exception as err:  # noqa: BLE001 — every failure goes back to the parent
            traceback.print_exc(file=sys.stderr)
            _write(proto_out, {"ok": False, "type": type(err).__name__,
                               "message": " ".join(str(err).split())})


if __name__ == "__main__":
    raise SystemExit(main())
