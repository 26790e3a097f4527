"""Classification benchmark (paper example 2): two crescent moons with six priors.

BDL 2-5-5-2 (tanh, softmax) with Laplace(0,1), N(0,1), Cauchy(1,1) and their hierarchical
IG(1,1) versions; trial 1: 900 samples with noise 0.1, trial 2: 1200 samples with noise 0.3;
70/30 split; accuracy, NLL and ECE on the validation set over seeds. Run with
``uqkit study moons --out DIR``.
"""
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from uqkit.executors import cpu_count
from uqkit.sampling import check_count

from .common import (figure_section, locked, pyplot, run_tasks, save_figure,
                     write_reports)

PRIORS = {"laplace": "laplace(0, 1)", "normal": "normal(0, 1)", "cauchy": "cauchy(1, 1)",
          "hier-laplace": "hierarchical-laplace", "hier-normal": "hierarchical-normal",
          "hier-cauchy": "hierarchical-cauchy(1)"}
TRIALS = {"0.1": 900, "0.3": 1200}
GRID = np.linspace(-3, 3, 61)


@dataclass
class MoonsStudy:
    """Settings; ``paper`` trains 50000 epochs at batch 30 (Adam lr 1e-3)."""

    out: str
    seeds: int = 5
    epochs: int = 300
    batch_size: int = 30
    lr: float = 0.01
    paper: bool = False
    workers: int = None
    progress: bool = True

    def __post_init__(self):
        for name in ("seeds", "epochs", "batch_size"):
            check_count(getattr(self, name), name)
        if self.paper:
            self.epochs, self.lr = 50_000, 1e-3
        self.workers = cpu_count() if self.workers is None else int(self.workers)


def make_data(n, noise, seed):
    """Two moons (scikit-learn), standardised to fit the (-3, 3) window, split 70/30."""
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=noise, random_state=seed)
    X = (X - np.array([0.5, 0.25])) * 2.0
    rng = np.random.default_rng(seed)
    idx = rng.permutation(n)
    cut = int(0.7 * n)
    return X[idx[:cut]], y[idx[:cut]], X[idx[cut:]], y[idx[cut:]]


def _task(task):
    import torch

    from surrogates import BDLClassifier
    from surrogates import metrics as M

    torch.set_num_threads(1)
    study, prior_name, noise, seed = task
    Xtr, ytr, Xv, yv = make_data(TRIALS[noise], float(noise), seed)
    t0 = time.perf_counter()
    model = BDLClassifier(hidden=(5, 5), prior=PRIORS[prior_name],
                          epochs=study.epochs, batch_size=study.batch_size, lr=study.lr,
                          lr_step=max(1, study.epochs // 3), lr_gamma=0.5, n_samples=4,
                          kl_samples=4, init_std=1e-3, seed=seed, num_threads=1,
                          progress=False).fit(Xtr, ytr)
    pred = model.predict_distribution(Xv, n_samples=200)
    out = {"accuracy": M.accuracy(yv, pred.mean), "nll": M.classification_nll(yv, pred.mean),
           "ece": M.expected_calibration_error(yv, pred.mean),
           "seconds": time.perf_counter() - t0}
    if seed == 0:
        gx, gy = np.meshgrid(GRID, GRID)
        g = model.predict_distribution(np.column_stack([gx.ravel(), gy.ravel()]), n_samples=200)
        out["grid_p1"] = g.mean[:, 1].tolist()
        out["grid_var"] = g.epistemic_var[:, 1].tolist()
        post = model.posterior()[0]
        rng = np.random.default_rng(0)
        out["w1_samples"] = (post["weight_mean"].ravel()[None] + post["weight_std"].ravel()[None]
                             * rng.standard_normal((200, post["weight_mean"].size))).ravel().tolist()
        out["b1_samples"] = (post["bias_mean"][None] + post["bias_std"][None]
                             * rng.standard_normal((200, post["bias_mean"].size))).ravel().tolist()
    return out


@locked
def run(study, log=print):
    t0 = time.perf_counter()
    os.makedirs(study.out, exist_ok=True)
    tasks = {f"{p}-noise{nz}-seed{s}": (study, p, nz, s) for p in PRIORS for nz in TRIALS
             for s in range(study.seeds)}
    res, computed = run_tasks(study, _task, tasks, 1, ignore=("seeds",), desc="moons")
    log(f"moons: {computed} fits computed, {len(tasks) - computed} loaded")
    report = {"seeds": study.seeds,
              "settings": {k: v for k, v in asdict(study).items() if k != "progress"}}
    for metric in ("accuracy", "nll", "ece"):
        report[metric] = {p: {nz: float(np.mean([res[f"{p}-noise{nz}-seed{s}"][metric]
                                                 for s in range(study.seeds)]))
                              for nz in TRIALS} for p in PRIORS}
        report[metric + "_std"] = {p: {nz: float(np.std([res[f"{p}-noise{nz}-seed{s}"][metric]
                                                         for s in range(study.seeds)], ddof=1))
                                       if study.seeds > 1 else 0.0 for nz in TRIALS}
                                   for p in PRIORS}
    report["hierarchical_effect"] = _effect(report)
    report["figures"] = _figures(study, res)
    report["seconds"] = time.perf_counter() - t0
    write_reports(study.out, report, _markdown(study, report), log)
    return report


def _effect(r):
    """Per base prior and trial: hierarchical minus direct (accuracy, NLL, ECE)."""
    out = {}
    for base in ("laplace", "normal", "cauchy"):
        out[base] = {nz: {m: r[m][f"hier-{base}"][nz] - r[m][base][nz]
                          for m in ("accuracy", "nll", "ece")} for nz in TRIALS}
    return out


def _markdown(study, r):
    lines = ["# Two moons classification (paper example 2)", "",
             f"BDL 2-5-5-2, tanh, softmax; {study.seeds} seeds; {study.epochs} epochs at batch "
             f"{study.batch_size}. Validation metrics, mean +- std over seeds.", "",
             "| prior | acc (0.1) | acc (0.3) | NLL (0.1) | NLL (0.3) | ECE (0.1) | ECE (0.3) |",
             "|---|---|---|---|---|---|---|"]
    for p in PRIORS:
        cells = [f"{r[m][p][nz]:.4f} +- {r[m + '_std'][p][nz]:.4f}"
                 for m in ("accuracy", "nll", "ece") for nz in TRIALS]
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    lines += ["", "## Did the hierarchical priors help at the stronger noise (0.3)?", ""]
    for base, eff in r["hierarchical_effect"].items():
        e = eff["0.3"]
        se = np.hypot(r["nll_std"][base]["0.3"], r["nll_std"][f"hier-{base}"]["0.3"]) / np.sqrt(
            max(r["seeds"], 1))
        verdict = ("yes" if e["nll"] < -se and e["accuracy"] >= 0 else
                   "no, it did worse" if e["nll"] > se else "no clear difference")
        lines.append(f"- {base}: accuracy {e['accuracy']:+.4f}, NLL {e['nll']:+.4f} "
                     f"(+- {se:.4f}), ECE {e['ece']:+.4f} -> {verdict}.")
    lines += figure_section(r["figures"])
    return "\n".join(lines) + "\n"


def _figures(study, res):
    plt = pyplot()

    paths = {}
    for nz in TRIALS:
        Xtr, ytr, _, _ = make_data(TRIALS[nz], float(nz), 0)
        fig, axes = plt.subplots(2, 6, figsize=(20, 6.5))
        for k, p in enumerate(PRIORS):
            cell = res[f"{p}-noise{nz}-seed0"]
            for row, (key, cmap, label) in enumerate((("grid_p1", "RdBu_r", "P(class 1)"),
                                                      ("grid_var", "viridis", "variance"))):
                ax = axes[row, k]
                z = np.asarray(cell[key]).reshape(len(GRID), len(GRID))
                cs = ax.contourf(GRID, GRID, z, levels=20, cmap=cmap)
                fig.colorbar(cs, ax=ax, label=label)
                ax.scatter(Xtr[:, 0], Xtr[:, 1], c=ytr, s=3, cmap="coolwarm", edgecolors="none")
                ax.set_title(f"{p}: {label}", fontsize=9)
                ax.set_xlim(-3, 3)
                ax.set_ylim(-3, 3)
        fig.suptitle(f"Predictive mean probability and variance, noise {nz} (cf. paper Fig. 5)")
        paths[f"fig5_noise{nz}"] = save_figure(fig, study.out, f"fig5_noise{nz}.png", 80)
    fig, axes = plt.subplots(2, 6, figsize=(20, 5.5))
    for k, p in enumerate(PRIORS):
        cell = res[f"{p}-noise0.3-seed0"]
        axes[0, k].hist(cell["w1_samples"], bins=60, color="C0")
        axes[0, k].set_title(f"{p}: layer-1 weights", fontsize=9)
        axes[1, k].hist(cell["b1_samples"], bins=60, color="C1")
        axes[1, k].set_title(f"{p}: layer-1 biases", fontsize=9)
    fig.suptitle("Variational posterior samples of the first layer, noise 0.3 (cf. Fig. 6)")
    paths["fig6"] = save_figure(fig, study.out, "fig6_posteriors.png", 80)
    return paths
