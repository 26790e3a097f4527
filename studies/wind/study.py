"""The wind study's computation: its tasks and :func:`run`.

Imports: numpy, uqkit, :mod:`studies.common` and the study's settings, tasks and report;
fem and surrogates inside the tasks that need them.
"""
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from ..common import StudyInputError, locked, run_tasks, write_reports
from ..tpu import load_tpu
from .settings import NETS, PAPER_RMS, PRIORS
from .report import _figures, _markdown

__all__ = ["reference_fields", "WindFit", "run"]


def _file_sha256(path):
    """The content's hash: a data file replaced at the same path is other data."""
    import hashlib

    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def reference_fields(data, grid):
    """Thin-plate spline fields per face: {face: (X, Z, {"mean": F, "rms": F})}, F of shape
    (nz, nx) on an nx x nz grid spanning the face."""
    from scipy.interpolate import RBFInterpolator

    nx, nz = grid
    out = {}
    for name, face in data.faces.items():
        x = np.linspace(0.0, face.width, nx)
        z = np.linspace(0.0, data.height, nz)
        X, Z = np.meshgrid(x, z)
        pts = np.column_stack([X.ravel(), Z.ravel()])
        taps = np.column_stack([face.x, face.z])
        fields = {}
        for target, values in (("mean", face.cp_mean), ("rms", face.cp_rms)):
            rbf = RBFInterpolator(taps, values, kernel="thin_plate_spline")
            fields[target] = rbf(pts).reshape(X.shape)
        out[name] = (X, Z, fields)
    return out


@dataclass(frozen=True)
class WindFit:
    """One BDL fit of a face's field: the grid points and the field there, its target
    (``mean`` or ``rms``), prior, training size, seed and epochs; ``keep`` keeps the fit's
    predictions and weight trace for the figures."""

    points: np.ndarray
    field: np.ndarray
    target: str
    prior: str
    n: int
    seed: int
    epochs: int
    keep: bool


def _task(task):
    """One :class:`WindFit`: its RMSE over the whole field."""
    import torch

    from surrogates import BDL

    torch.set_num_threads(1)
    pts, field, target, prior = task.points, task.field, task.target, task.prior
    n, seed, epochs, keep = task.n, task.seed, task.epochs, task.keep
    rng = np.random.default_rng([seed, n])
    idx = rng.choice(len(field), n, replace=False)
    t0 = time.perf_counter()
    model = BDL(hidden=NETS[target], prior=PRIORS[prior], epochs=epochs,
                batch_size=max(16, n // 4), lr=0.03, lr_step=max(1, epochs // 10),
                lr_gamma=0.75, n_samples=4, init_std=1e-5, seed=seed, num_threads=1,
                device="cpu", progress=False, trace_weights=6 if keep else 0
                ).fit(pts[idx], field[idx])
    pred = model.predict_distribution(pts, n_samples=32, levels=())
    out = {"rmse": float(np.sqrt(np.mean((pred.mean - field) ** 2))),
           "seconds": time.perf_counter() - t0}
    if keep:
        out["mean"] = pred.mean.astype(np.float32).tolist()
        out["std"] = np.sqrt(pred.total_var).astype(np.float32).tolist()
        out["train_idx"] = idx.tolist()
        out["trace_mu"] = model.history_["trace_mu"]
        out["trace_sigma"] = model.history_["trace_sigma"]
    return out


@locked
def run(study, log=print):
    """Run the whole study; writes DIR/report.md, DIR/report.json and the PNGs; returns the
    report dict. Finished tasks are cached in DIR, so an interrupted run resumes.

    Raises:
        StudyInputError: the ``--tpu`` file is not a TPU database file.
    """
    t0 = time.perf_counter()
    os.makedirs(study.out, exist_ok=True)
    try:
        data = load_tpu(study.tpu)
    except ValueError as exc:  # a malformed file is the user's input
        raise StudyInputError(f"--tpu {study.tpu}: {exc}") from None
    fields = reference_fields(data, study.grid)
    n_max = max(study.sizes)
    tasks = {}
    for face, (X, Z, fl) in fields.items():
        pts = np.column_stack([X.ravel(), Z.ravel()])
        for target in NETS:
            for prior in PRIORS:
                for n in study.sizes:
                    for s in range(study.seeds):
                        keep = n == n_max and s == 0 and prior == "hierarchical"
                        tasks[f"{face}-{target}-{prior}-{n}-seed{s}"] = WindFit(
                            pts, fl[target].ravel(), target, prior, n, s, study.epochs, keep)
    res, computed = run_tasks(study, _task, tasks, 1, ignore=("seeds", "sizes", "paper", "tpu"),
                              desc="wind", extra={"tpu_sha256": _file_sha256(study.tpu)}, log=log)
    log(f"wind: {computed} fits computed, {len(tasks) - computed} loaded")
    rmse = {target: {prior: {face: {str(n): float(np.median(
        [res[f"{face}-{target}-{prior}-{n}-seed{s}"]["rmse"] for s in range(study.seeds)]))
        for n in study.sizes} for face in fields} for prior in PRIORS} for target in NETS}
    report = {
        # the primary table uses the hierarchical prior; both priors are under rmse_by_prior
        "rmse": {target: rmse[target]["hierarchical"] for target in NETS},
        "rmse_by_prior": rmse,
        "paper_rms": {p: {f: dict(zip(map(str, range(100, 601, 100)), v)) for f, v in t.items()}
                      for p, t in PAPER_RMS.items()},
        "data": {"file": study.tpu, "taps": data.n_taps, "height": data.height,
                 "breadth": data.breadth, "depth": data.depth},
        "settings": {k: v for k, v in asdict(study).items() if k != "progress"},
    }
    report["figures"] = _figures(study, data, fields, res, n_max)
    report["seconds"] = time.perf_counter() - t0
    write_reports(study.out, report, _markdown(study, report, fields), log)
    return report
