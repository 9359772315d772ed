"""The comparisons of R §5 at CPU scale: DPConvCNP vs DP-SVGP vs the oracle (catalogue R.4, R.5).

Only the DPConvCNP branch needs PyTorch (imported when a model is passed); the
oracle and the DP-SVGP run on numpy, so the notebook works without the extra.

* :func:`nll_vs_n` — mean target NLL against the context size N on synthetic
  tasks (R Fig. 6 style);
* :func:`kung_tasks` / :func:`kung_sim_to_real` — the !Kung sim-to-real task
  (R §5.2, Fig. 7): ages scaled to [−1, 1], targets standardised (the scaling
  statistics are treated as public, as in R App. E.2), random context/target splits;
* :func:`deployment_times` — seconds per task for each method (R Fig. 5);
* :func:`run_comparison` — all of the above for notebook 04's §4–§6 in one
  :class:`Comparison`; :func:`save_comparison` / :func:`load_comparison` store it as a
  small JSON file, and the kit ships one computed with the shipped checkpoints at the
  notebook's default parameters (:data:`STORED_COMPARISON`), shown where PyTorch is
  missing. Regenerate it with ``python -m dpgp_audit.experiments.raisa --write-stored``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.kung import KungData, load_kung
from dpgp_audit.gp.kernels import Kernel, Matern32
from dpgp_audit.methods.raisa.dpsgd_svgp import DPSGDSVGP, calibrate_dpsgd_noise
from dpgp_audit.neural.tasks import TaskBatch, gaussian_nll, oracle_nll, sample_tasks
from dpgp_audit.privacy.gdp import gdp_mu

__all__ = [
    "COMPARISON_DEFAULTS",
    "STORED_COMPARISON",
    "Comparison",
    "KungSplit",
    "MethodCurve",
    "deployment_times",
    "load_comparison",
    "run_comparison",
    "save_comparison",
    "stored_comparison_rng",
    "dpsvgp_predict",
    "kung_sim_to_real",
    "kung_tasks",
    "kung_xy",
    "nll_vs_n",
]


@dataclass(frozen=True)
class MethodCurve:
    """Mean NLL and its standard error at each context size N."""

    ns: np.ndarray
    mean: np.ndarray
    sem: np.ndarray


@lru_cache(maxsize=256)
def _cached_noise(epsilon: float, delta: float, n: int, batch: int, steps: int) -> float:
    return calibrate_dpsgd_noise(epsilon, delta, n, batch, steps)


def dpsvgp_predict(xc: np.ndarray, yc: np.ndarray, xt: np.ndarray, epsilon: float, delta: float,
                   rng: np.random.Generator, *, kernel: Kernel | None = None,
                   n_inducing: int = 15, steps: int = 100, batch_size: int = 64,
                   learning_rate: float = 0.05, clip_norm: float = 1.0
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Fit the DP-SVGP baseline on one context set and predict mean/std at ``xt``.

    Inducing inputs are a fixed grid on [−1.1, 1.1] (public). The kernel defaults
    to a Matérn-3/2 with lengthscale 0.8, a middle-of-the-prior public choice.
    """
    kernel = Matern32(0.8, 1.0) if kernel is None else kernel
    n = int(np.size(xc))
    B = min(batch_size, n)
    Z = np.linspace(-1.1, 1.1, n_inducing)[:, None]
    model = DPSGDSVGP(kernel, Z, epsilon, delta, steps=steps, batch_size=B,
                   learning_rate=learning_rate, clip_norm=clip_norm)
    z = _cached_noise(float(epsilon), float(delta), n, B, int(steps))
    fit = model.fit(Dataset(np.asarray(xc)[:, None], np.asarray(yc)), rng, _noise_multiplier=z)
    mean, var = fit.predict(np.asarray(xt)[:, None])
    return mean, np.sqrt(var)


def _convcnp_predict(model, batch: TaskBatch, rng: np.random.Generator
                     ) -> tuple[np.ndarray, np.ndarray]:
    import torch

    T = torch.as_tensor
    G = model.encoder.grid.shape[0]
    z = T(rng.standard_normal((batch.xc.shape[0], 2, G)))
    with torch.no_grad():
        mean, std = model(T(batch.xc), T(batch.yc), T(batch.mask), T(batch.xt), T(batch.mu), z=z)
    return mean.double().numpy(), std.double().numpy()


def nll_vs_n(generator: str, ns: list[int] | np.ndarray, n_tasks: int, rng: np.random.Generator,
             *, model=None, epsilon: float = 1.0, delta: float = 1e-3, n_target: int = 64,
             dpsvgp: bool = True, dpsvgp_kwargs: dict | None = None) -> dict[str, MethodCurve]:
    """Mean target NLL against N for the oracle, the DP-SVGP and (if given) a DPConvCNP."""
    rng = check_rng(rng)
    n_tasks = check_positive_int("n_tasks", n_tasks)
    ns = np.asarray(ns, dtype=int)
    per: dict[str, list[np.ndarray]] = {"oracle": []}
    if dpsvgp:
        per["DP-SVGP"] = []
    if model is not None:
        per["DPConvCNP"] = []
    for n in ns:
        batch = sample_tasks(generator, n_tasks, rng, n_context=int(n), n_target=n_target,
                             epsilon=float(epsilon), delta=delta, exact=True)
        per["oracle"].append(oracle_nll(batch))
        if dpsvgp:
            vals = []
            for b in range(n_tasks):
                mean, std = dpsvgp_predict(batch.xc[b], batch.yc[b], batch.xt[b], epsilon, delta,
                                           rng, **(dpsvgp_kwargs or {}))
                vals.append(np.mean(gaussian_nll(batch.yt[b], mean, std)))
            per["DP-SVGP"].append(np.array(vals))
        if model is not None:
            mean, std = _convcnp_predict(model, batch, rng)
            per["DPConvCNP"].append(np.mean(gaussian_nll(batch.yt, mean, std), axis=1))
    return {k: MethodCurve(ns, np.array([v.mean() for v in vals]),
                           np.array([v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else np.nan
                                     for v in vals]))
            for k, vals in per.items()}


@dataclass(frozen=True)
class KungSplit:
    """One random context/target split of the normalised !Kung data."""

    xc: np.ndarray
    yc: np.ndarray
    xt: np.ndarray
    yt: np.ndarray
    context_idx: np.ndarray | None = None
    target_idx: np.ndarray | None = None


def kung_xy(target: str, data: KungData) -> tuple[np.ndarray, np.ndarray]:
    """Age scaled to [−1, 1] and ``target`` standardised, for every row of ``data`` (R App. E.2).

    The scaling statistics are treated as public, as in R.
    """
    if target not in ("height", "weight"):
        raise ValueError(f"target must be 'height' or 'weight', got {target!r}")
    age = np.asarray(data.age, dtype=float)
    y = np.asarray(getattr(data, target), dtype=float)
    x = 2.0 * (age - age.min()) / (age.max() - age.min()) - 1.0
    return x, (y - y.mean()) / y.std()


def kung_tasks(target: str, n_context: int, n_splits: int, rng: np.random.Generator,
               *, data: KungData | None = None) -> list[KungSplit]:
    """Random splits of the !Kung data: age scaled to [−1, 1], ``target`` standardised.

    ``data`` is the census table (all 544 rows in R §5.2); by default it is loaded with
    :func:`~dpgp_audit.datasets.kung.load_kung`, which needs the data file
    (``DPGP_AUDIT_DATA_DIR`` mirror or a download). The notebook passes the table from
    :func:`~dpgp_audit.datasets.kung.load_kung_or_standin`.
    """
    rng = check_rng(rng)
    if data is None:
        data = load_kung()
    x, y = kung_xy(target, data)
    n_context = check_positive_int("n_context", n_context)
    if n_context >= x.size:
        raise ValueError(f"n_context must be below the {x.size} rows")
    out = []
    for _ in range(check_positive_int("n_splits", n_splits)):
        perm = rng.permutation(x.size)
        c, t = perm[:n_context], perm[n_context:]
        out.append(KungSplit(x[c], y[c], x[t], y[t], c, t))
    return out


def kung_sim_to_real(splits: list[KungSplit], epsilon: float, delta: float,
                     rng: np.random.Generator, *, model=None, dpsvgp: bool = True,
                     dpsvgp_kwargs: dict | None = None) -> dict[str, np.ndarray]:
    """Per-split mean target NLL of the DPConvCNP (if given) and the DP-SVGP on !Kung splits."""
    rng = check_rng(rng)
    out: dict[str, list[float]] = {}
    mu = gdp_mu(epsilon, delta)
    for s in splits:
        if model is not None:
            from dpgp_audit.neural.dpconvcnp import predict_numpy

            mean, std = predict_numpy(model, s.xc, s.yc, s.xt, mu, rng)
            out.setdefault("DPConvCNP", []).append(float(np.mean(gaussian_nll(s.yt, mean, std))))
        if dpsvgp:
            mean, std = dpsvgp_predict(s.xc, s.yc, s.xt, epsilon, delta, rng,
                                       **(dpsvgp_kwargs or {}))
            out.setdefault("DP-SVGP", []).append(float(np.mean(gaussian_nll(s.yt, mean, std))))
    return {k: np.array(v) for k, v in out.items()}


def deployment_times(n_context: int, rng: np.random.Generator, *, model=None,
                     epsilon: float = 1.0, delta: float = 1e-3, repeats: int = 3,
                     dpsvgp_steps: tuple[int, ...] = (50, 200)) -> dict[str, float]:
    """Seconds per task at meta-test time: one DPConvCNP forward pass vs DP-SVGP training."""
    rng = check_rng(rng)
    batch = sample_tasks("matern", 1, rng, n_context=n_context, n_target=64, epsilon=epsilon,
                         delta=delta)
    out: dict[str, float] = {}
    if model is not None:
        from dpgp_audit.neural.dpconvcnp import predict_numpy

        def run_cnp() -> None:
            predict_numpy(model, batch.xc[0], batch.yc[0], batch.xt[0], float(batch.mu[0]), rng)

        run_cnp()  # warm-up
        out["DPConvCNP forward"] = _best_time(run_cnp, repeats)
    for steps in dpsvgp_steps:
        _cached_noise(float(epsilon), float(delta), n_context, min(64, n_context), int(steps))

        def run_svgp(steps: int = steps) -> None:
            dpsvgp_predict(batch.xc[0], batch.yc[0], batch.xt[0], epsilon, delta, rng,
                           steps=steps)

        out[f"DP-SVGP ({steps} DP-SGD steps)"] = _best_time(run_svgp, repeats)
    return out


def _best_time(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return float(best)




# --------------------------------------------------------------------------- notebook 04 §4–§6
#: Where the kit's stored comparison lives (package data).
STORED_COMPARISON = Path(__file__).resolve().parent / "stored" / "raisa_comparison.json"

#: Notebook 04's default parameters that the comparison depends on (its parameters cell).
COMPARISON_DEFAULTS: dict = {"epsilon": 1.0, "delta": 1e-3, "seed": 2024, "n_tasks": 8,
                             "context_sizes": [10, 30, 100, 300], "n_kung_splits": 6,
                             "n_kung_context": 300, "dpsvgp_steps": 100}

_CHECKPOINTS = ("eq", "matern", "sawtooth")
_META_KEYS = ("command", "steps", "seconds", "val_nll", "val_oracle_nll")


@dataclass(frozen=True)
class Comparison:
    """What notebook 04 shows in §4–§6: DPConvCNP vs DP-SVGP vs the oracle (R.4, R.5).

    Attributes
    ----------
    params
        The parameters it was computed with (the keys of :data:`COMPARISON_DEFAULTS`).
    eq_curves, saw_curves
        Mean target NLL against N on EQ-GP and on sawtooth tasks, per method (for the
        sawtooth the "oracle" entry is the noise lower bound).
    example
        One EQ-GP task with N = 100: ``xc``, ``yc``, ``xs`` and ``preds`` (method →
        (mean, sd) at ``xs``).
    kung
        Per target (``"height"``, ``"weight"``): ``nll`` (method → per-split NLL),
        ``data_note`` (empty for the real census), and for one split the row indices
        ``context_idx``/``target_idx``, the grid ``xs`` and ``preds`` at it; plus
        ``xc``, ``yc``, ``xt``, ``yt`` when the data is at hand (the stored file keeps
        only the indices: the census is not redistributed with the kit).
    times
        Seconds per task at meta-test time (R Fig. 5), per method.
    checkpoints
        Training metadata of each checkpoint used (``steps``, ``seconds``,
        ``val_nll``, ``val_oracle_nll``, ``command``).
    stored
        True when loaded from a file (computed elsewhere), False when just computed.
    note
        Where the numbers come from, in one sentence (for the notebook).
    """

    params: dict
    eq_curves: dict[str, MethodCurve]
    saw_curves: dict[str, MethodCurve]
    example: dict
    kung: dict[str, dict]
    times: dict[str, float]
    checkpoints: dict[str, dict] = field(default_factory=dict)
    stored: bool = False
    note: str = ""

    @property
    def has_dpconvcnp(self) -> bool:
        """True when the DPConvCNP is part of the comparison."""
        return "DPConvCNP" in self.eq_curves


def run_comparison(params: dict, rng: np.random.Generator, *,
                   models: dict | None = None) -> Comparison:
    """Compute notebook 04's §4–§6 (R Figs. 5–7 at CPU scale) in one call.

    Parameters
    ----------
    params
        ``epsilon``, ``delta``, ``n_tasks``, ``context_sizes``, ``n_kung_splits``,
        ``n_kung_context``, ``dpsvgp_steps`` (as in :data:`COMPARISON_DEFAULTS`; ``seed``
        is recorded only: the draws come from ``rng``).
    rng
        Generator for every draw (tasks, DP-SGD noise, DPSetConv noise).
    models
        ``{"eq" | "matern" | "sawtooth": (model, metadata)}`` from
        :func:`dpgp_audit.neural.dpconvcnp.load_pretrained`; a missing entry leaves the
        DPConvCNP out of that part (the oracle and the DP-SVGP always run, on numpy).
    """
    from dpgp_audit.datasets.kung import load_kung_or_standin
    from dpgp_audit.gp.kernels import EQ

    rng = check_rng(rng)
    p = {k: params[k] for k in COMPARISON_DEFAULTS}
    models = dict(models or {})
    model = {k: (models[k][0] if k in models else None) for k in _CHECKPOINTS}
    eps, delta, steps = float(p["epsilon"]), float(p["delta"]), int(p["dpsvgp_steps"])
    eq_curves = nll_vs_n("eq", p["context_sizes"], p["n_tasks"], rng, model=model["eq"],
                         epsilon=eps, delta=delta,
                         dpsvgp_kwargs={"kernel": EQ(0.5, 1.0), "steps": steps})
    # one example task: the three predictors with their intervals
    task = sample_tasks("eq", 1, rng, n_context=100, n_target=200, epsilon=eps, delta=delta)
    order = np.argsort(task.xt[0])
    xs = task.xt[0][order]
    from dpgp_audit.neural.tasks import oracle_predict

    m_o, s_o = oracle_predict(task, 0)
    preds = {"oracle (non-private)": (m_o[order], s_o[order]),
             "DP-SVGP": dpsvgp_predict(task.xc[0], task.yc[0], xs, eps, delta, rng,
                                       kernel=EQ(0.5, 1.0), steps=steps)}
    if model["eq"] is not None:
        from dpgp_audit.neural.dpconvcnp import predict_numpy

        preds["DPConvCNP"] = predict_numpy(model["eq"], task.xc[0], task.yc[0], xs,
                                           float(task.mu[0]), rng)
    example = {"xc": task.xc[0], "yc": task.yc[0], "xs": xs, "preds": preds}
    saw = nll_vs_n("sawtooth", p["context_sizes"], p["n_tasks"], rng, model=model["sawtooth"],
                   epsilon=eps, delta=delta,
                   dpsvgp_kwargs={"kernel": EQ(0.3, 1.0), "steps": steps})
    saw["noise lower bound"] = saw.pop("oracle")
    table, note = load_kung_or_standin(rng)
    kung: dict[str, dict] = {}
    for target in ("height", "weight"):
        splits = kung_tasks(target, int(p["n_kung_context"]), int(p["n_kung_splits"]), rng,
                            data=table)
        nll = kung_sim_to_real(splits, eps, delta, rng, model=model["matern"],
                               dpsvgp_kwargs={"steps": steps})
        s = splits[0]
        grid = np.linspace(-1.0, 1.0, 200)
        kp = {"DP-SVGP": dpsvgp_predict(s.xc, s.yc, grid, eps, delta, rng, steps=steps)}
        if model["matern"] is not None:
            from dpgp_audit.neural.dpconvcnp import predict_numpy

            kp["DPConvCNP"] = predict_numpy(model["matern"], s.xc, s.yc, grid,
                                            gdp_mu(eps, delta), rng)
        kung[target] = {"nll": nll, "xc": s.xc, "yc": s.yc, "xt": s.xt, "yt": s.yt,
                        "context_idx": s.context_idx, "target_idx": s.target_idx,
                        "xs": grid, "preds": kp, "data_note": note}
    times = deployment_times(300, rng, model=model["matern"], epsilon=eps, delta=delta,
                             repeats=2, dpsvgp_steps=(steps, 4 * steps))
    meta = {k: {m: models[k][1][m] for m in _META_KEYS if m in models[k][1]}
            for k in _CHECKPOINTS if k in models}
    return Comparison(p, eq_curves, saw, example, kung, times, meta, stored=False,
                      note="computed now, with the parameters of this run")


def _round(x: object, digits: int = 6) -> object:
    """Floats to ``digits`` significant digits, recursively (keeps the stored file small)."""
    if isinstance(x, dict):
        return {k: _round(v, digits) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_round(v, digits) for v in x]
    if isinstance(x, np.ndarray):
        return _round(x.tolist(), digits)
    if isinstance(x, float | np.floating):
        return float(f"{float(x):.{digits}g}")
    if isinstance(x, np.integer):
        return int(x)
    return x


def _curves_to_json(curves: dict[str, MethodCurve]) -> dict:
    return {k: {"ns": c.ns, "mean": c.mean, "sem": c.sem} for k, c in curves.items()}


def _curves_from_json(d: dict) -> dict[str, MethodCurve]:
    return {k: MethodCurve(np.asarray(v["ns"], dtype=int), np.asarray(v["mean"], dtype=float),
                           np.asarray(v["sem"], dtype=float)) for k, v in d.items()}


def _preds_from_json(d: dict) -> dict:
    return {k: (np.asarray(m, dtype=float), np.asarray(s, dtype=float)) for k, (m, s) in d.items()}


def save_comparison(comparison: Comparison, path: str | Path, *, command: str = "") -> Path:
    """Write ``comparison`` as JSON (floats to 6 significant digits); return the path."""
    path = Path(path)
    c = comparison
    doc = {
        "format": 1,
        "command": command,
        "params": c.params,
        "eq_curves": _curves_to_json(c.eq_curves),
        "saw_curves": _curves_to_json(c.saw_curves),
        "example": {k: v for k, v in c.example.items()},
        "kung": {t: {f: k[f] for f in ("nll", "context_idx", "target_idx", "xs", "preds",
                                        "data_note")} for t, k in c.kung.items()},
        "times": c.times,
        "checkpoints": c.checkpoints,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_round(doc), indent=None, separators=(",", ":")) + "\n",
                    encoding="utf-8")
    return path


def load_comparison(path: str | Path | None = None, *,
                    kung_data: KungData | None = None) -> Comparison:
    """Read a comparison written by :func:`save_comparison` (default: the kit's stored one).

    The result has ``stored=True`` and a ``note`` naming the command that computed it.
    The file keeps the !Kung splits as row indices only; pass the census table as
    ``kung_data`` (the real one: indices into a stand-in would be meaningless) to get the
    context and target points back, otherwise they are ``None``.
    """
    path = STORED_COMPARISON if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no stored comparison at {path}")
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("format") != 1:
        raise ValueError(f"{path}: unknown format {doc.get('format')!r}")
    ex = doc["example"]
    example = {"xc": np.asarray(ex["xc"]), "yc": np.asarray(ex["yc"]),
               "xs": np.asarray(ex["xs"]), "preds": _preds_from_json(ex["preds"])}
    kung = {}
    for target, k in doc["kung"].items():
        c_idx = np.asarray(k["context_idx"], dtype=int)
        t_idx = np.asarray(k["target_idx"], dtype=int)
        entry = {"nll": {m: np.asarray(v, dtype=float) for m, v in k["nll"].items()},
                 "context_idx": c_idx, "target_idx": t_idx, "xs": np.asarray(k["xs"]),
                 "preds": _preds_from_json(k["preds"]), "data_note": k["data_note"],
                 "xc": None, "yc": None, "xt": None, "yt": None}
        if kung_data is not None:
            x, y = kung_xy(target, kung_data)
            if max(c_idx.max(), t_idx.max()) < x.size:
                entry.update(xc=x[c_idx], yc=y[c_idx], xt=x[t_idx], yt=y[t_idx])
        kung[target] = entry
    cmd = doc.get("command") or "an earlier run"
    return Comparison(doc["params"], _curves_from_json(doc["eq_curves"]),
                      _curves_from_json(doc["saw_curves"]), example, kung,
                      {k: float(v) for k, v in doc["times"].items()}, doc["checkpoints"],
                      stored=True, note=f"stored with the kit, computed by `{cmd}`")


def _models() -> dict:
    from dpgp_audit.neural.dpconvcnp import load_pretrained

    return {k: load_pretrained(k) for k in _CHECKPOINTS}


def stored_comparison_rng(seed: int) -> np.random.Generator:
    """The generator of §4–§6 in notebook 04: a stream of its own, so §1–§3 do not shift it."""
    return np.random.default_rng([int(seed), 4])


def main(argv: list[str] | None = None) -> int:
    """``python -m dpgp_audit.experiments.raisa --write-stored [PATH]``: recompute the file."""
    ap = argparse.ArgumentParser(prog="python -m dpgp_audit.experiments.raisa",
                                 description=main.__doc__)
    ap.add_argument("--write-stored", nargs="?", const=str(STORED_COMPARISON), metavar="PATH",
                    help="compute notebook 04's comparison at its default parameters with the "
                         "shipped checkpoints (needs PyTorch) and write it")
    args = ap.parse_args(argv)
    if not args.write_stored:
        ap.print_help()
        return 2
    p = dict(COMPARISON_DEFAULTS)
    c = run_comparison(p, stored_comparison_rng(p["seed"]), models=_models())
    out = save_comparison(c, args.write_stored,
                          command="python -m dpgp_audit.experiments.raisa --write-stored")
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
