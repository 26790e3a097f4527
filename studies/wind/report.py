"""The wind study's report: report.md's text and the figures.

Imports: numpy, matplotlib (through :mod:`studies.common`) and the study's settings.
"""
import os

import numpy as np

from ..common import figure_section, pyplot, save_figure
from .settings import NETS, PRIORS

__all__ = []


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
