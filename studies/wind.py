"""Wind-pressure field surrogate on a tall building (paper example 4).

Per face, the taps' Cp_mean and Cp_rms are interpolated by thin-plate (biharmonic) splines
(``scipy.interpolate.RBFInterpolator``) to a 250 x 750 grid (across x up), the reference
field. BDL surrogates (2-15-10-1 for Cp_mean, 2-30-15-1 for Cp_rms; N(0,1) and N(0, IG(1,1))
priors) train on n random grid points and predict the whole field with a confidence band;
the RMSE over the field is tabulated by face and n in the layout of the paper's Table 5.
Run with ``uqkit study wind [--tpu FILE.mat] --out DIR``; without ``--tpu`` it uses the shipped
synthetic dataset (:mod:`studies.data.make_synthetic_tpu`).
"""
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from uqkit.execution.executors import cpu_count
from uqkit.validation import check_count

from .common import (StudyInputError, figure_section, locked, pyplot, run_tasks, save_figure,
                     write_reports)
from .tpu import load_tpu

SYNTHETIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                         "tpu_synthetic_1to1to5_0deg.mat")
PRIORS = {"direct": "normal(0, 1)", "hierarchical": "hierarchical-normal"}
NETS = {"mean": (15, 10), "rms": (30, 15)}
#: The paper's Table 5: RMSE of Cp_rms for 100..600 training points.
PAPER_RMS = {
    "direct": {"windward": (0.077, 0.030, 0.027, 0.022, 0.019, 0.017),
               "leftside": (0.039, 0.030, 0.027, 0.019, 0.013, 0.012),
               "leeward": (0.014, 0.013, 0.011, 0.011, 0.010, 0.010),
               "rightside": (0.037, 0.025, 0.025, 0.021, 0.019, 0.015)},
    "hierarchical": {"windward": (0.051, 0.021, 0.021, 0.020, 0.018, 0.015),
                     "leftside": (0.037, 0.030, 0.024, 0.016, 0.012, 0.012),
                     "leeward": (0.014, 0.011, 0.011, 0.010, 0.010, 0.009),
                     "rightside": (0.033, 0.025, 0.023, 0.020, 0.014, 0.011)}}


@dataclass
class WindStudy:
    """Settings; ``paper`` runs every size 100..700 with 3 seeds."""

    out: str
    tpu: str = None
    sizes: tuple = (100, 200, 400, 700)
    seeds: int = 2
    grid: tuple = (250, 750)
    epochs: int = 1000
    paper: bool = False
    workers: int = None
    progress: bool = True

    def __post_init__(self):
        if self.paper:
            self.sizes, self.seeds = tuple(range(100, 701, 100)), max(self.seeds, 3)
        check_count(self.seeds, "seeds")
        if not self.sizes or any(int(n) < 10 for n in self.sizes):
            raise ValueError(f"sizes must be integers >= 10, got {self.sizes!r}")
        self.sizes = tuple(int(n) for n in self.sizes)
        check_count(self.epochs, "epochs")
        self.tpu = self.tpu or SYNTHETIC
        if not os.path.isfile(self.tpu):
            raise ValueError(f"--tpu: no such file: {self.tpu}")
        self.workers = cpu_count() if self.workers is None else int(self.workers)


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


def _task(task):
    import torch

    from surrogates import BDL

    torch.set_num_threads(1)
    pts, field, target, prior, n, seed, epochs, keep = task
    rng = np.random.default_rng([seed, n])
    idx = rng.choice(len(field), n, replace=False)
    t0 = time.perf_counter()
    model = BDL(hidden=NETS[target], prior=PRIORS[prior], epochs=epochs,
                batch_size=max(16, n // 4), lr=0.03, lr_step=max(1, epochs // 10),
                lr_gamma=0.75, n_samples=4, init_std=1e-5, seed=seed, num_threads=1,
                progress=False, trace_weights=6 if keep else 0).fit(pts[idx], field[idx])
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
                        tasks[f"{face}-{target}-{prior}-{n}-seed{s}"] = (
                            pts, fl[target].ravel(), target, prior, n, s, study.epochs, keep)
    res, computed = run_tasks(study, _task, tasks, 1, ignore=("seeds", "sizes", "paper", "tpu"),
                              desc="wind", extra={"tpu_sha256": _file_sha256(study.tpu)})
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


def _markdown(study, r, fields):
    d = r["data"]
    lines = ["# Wind pressure on a tall building (paper example 4)", "",
             f"Data: `{os.path.basename(d['file'])}`, {d['taps']} taps, building "
             f"{d['breadth']} x {d['depth']} x {d['height']} (model scale). Reference: thin-plate "
             f"spline fields on {study.grid[0]} x {study.grid[1]} points per face. RMSE of the "
             f"BDL predictive mean over the whole field, median over {study.seeds} seeds.", ""]
    for target in NETS:
        lines += [f"## RMSE of Cp_{target} (net 2-{'-'.join(map(str, NETS[target]))}-1)", "",
                  "| face | prior | " + " | ".join(f"n={n}" for n in study.sizes) + " |",
                  "|---|---|" + "---|" * len(study.sizes)]
        for face in fields:
            for prior in PRIORS:
                cells = []
                for n in study.sizes:
                    v = r["rmse_by_prior"][target][prior][face][str(n)]
                    p = (r["paper_rms"][prior].get(face, {}).get(str(n)) if target == "rms"
                         else None)
                    cells.append(f"{v:.4f}" + (f" [{p}]" if p is not None else ""))
                lines.append(f"| {face} | {prior} | " + " | ".join(cells) + " |")
        lines.append("")
    lines.append("Brackets: the paper's Table 5 (measured TPU data; the shipped dataset is "
                 "synthetic, so those numbers are a scale, not a target, unless run with --tpu).")
    lines += figure_section(r["figures"])
    return "\n".join(lines) + "\n"


def _figures(study, data, fields, res, n_max):
    plt = pyplot()
    paths = {}
    for target in NETS:
        fig, axes = plt.subplots(4, 4, figsize=(11, 13))
        for k, (face, (X, Z, fl)) in enumerate(fields.items()):
            cell = res[f"{face}-{target}-hierarchical-{n_max}-seed0"]
            mean = np.asarray(cell["mean"]).reshape(X.shape)
            std = np.asarray(cell["std"]).reshape(X.shape)
            ref = fl[target]
            rel = np.abs(mean - ref) / np.maximum(np.abs(ref), 1e-3)
            idx = np.asarray(cell["train_idx"])
            panels = ((ref, f"reference Cp_{target}", "RdBu_r"),
                      (mean, f"BDL mean (n={n_max})", "RdBu_r"),
                      (rel, "relative error", "magma"), (std, "predictive std", "viridis"))
            for row, (img, title, cmap) in enumerate(panels):
                ax = axes[row, k]
                cs = ax.pcolormesh(X, Z, img, cmap=cmap, shading="auto")
                fig.colorbar(cs, ax=ax)
                if row == 1:
                    ax.plot(X.ravel()[idx], Z.ravel()[idx], "k.", ms=1)
                ax.set_title(f"{face}: {title}", fontsize=8)
                ax.set_aspect("equal")
                ax.set_xlabel("x (m)")
                ax.set_ylabel("z (m)")
        fig.suptitle(f"Cp_{target}: field, prediction, relative error and predictive std, "
                     "N(0, IG(1,1)) prior (cf. paper Figs. 9-10)")
        paths[f"fields_{target}"] = save_figure(fig, study.out, f"fig9_10_cp_{target}.png", 80)
    face = next(iter(fields))
    cell = res[f"{face}-rms-hierarchical-{n_max}-seed0"]
    mu, sd = np.asarray(cell["trace_mu"]), np.asarray(cell["trace_sigma"])
    fig, ax = plt.subplots(figsize=(7, 4))
    ep = np.arange(1, len(mu) + 1)
    for j in range(mu.shape[1]):
        ax.plot(ep, mu[:, j], color=f"C{j}", lw=1)
        ax.fill_between(ep, mu[:, j] - 2 * sd[:, j], mu[:, j] + 2 * sd[:, j], color=f"C{j}",
                        alpha=0.2)
    ax.set_xlabel("epoch")
    ax.set_ylabel("first-layer weight: posterior mean +- 2 std")
    ax.set_title(f"Variational posterior during training ({face}, Cp_rms, n={n_max}; cf. Fig. 11)",
                 fontsize=9)
    paths["fig11"] = save_figure(fig, study.out, "fig11_posterior_trace.png", 100)
    return paths
