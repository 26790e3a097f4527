"""Regression benchmark (paper example 1): y = x sin(x) from 30 noisy points.

Methods: PR (degree 11), SVR (RBF, gamma = 1 in raw x, tol 1e-4), NN (1 x 20 tanh), BDL (same
net, N(0, 0.1) prior), plus PCE (order 11), GP and two BDL rows that start variational inference
from a MAP fit: BDL-warm (N(0, 1) prior, MAP warm start, mean-field Laplace widths, then the exact
ELBO) and BDL-tempered (the same with the KL term weighted by ``tempered_kl``). Every cell is the
mean +- std over seeds, each seed redrawing the training data; R^2 is also reported on the part of
the test grid inside the training points' range (no extrapolation), and on the training points
against their noisy targets: the paper's own metric (its PR row exceeds what any degree-11
polynomial reaches on the grid, :func:`polynomial_ceiling`, and matches ours on the training
points). Run with ``uqkit study regression --out DIR``.
"""
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from uqkit.executors import cpu_count
from uqkit.sampling import check_count

from .common import (figure_section, locked, pyplot, run_tasks, save_figure,
                     write_reports)

NOISES = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9)
METHODS = ("PR", "SVR", "NN", "BDL", "PCE", "GP", "BDL-warm", "BDL-tempered")
BAYESIAN = ("BDL", "BDL-warm", "BDL-tempered")
#: The paper's Tables 1 and 2 (one data draw each).
PAPER = {
    "r2": {"PR": (0.9950, 0.9937, 0.9884, 0.9807, 0.9680, 0.9533),
           "SVR": (0.9783, 0.9784, 0.9758, 0.9604, 0.9486, 0.9388),
           "NN": (0.9890, 0.9854, 0.9828, 0.9770, 0.9526, 0.9497),
           "BDL": (0.9883, 0.9893, 0.9928, 0.9757, 0.9672, 0.9516)},
    "rmse": {"PR": (0.2483, 0.2629, 0.3917, 0.4863, 0.6227, 0.7643),
             "SVR": (0.5397, 0.5424, 0.5642, 0.6997, 0.7934, 0.9198),
             "NN": (0.3817, 0.4068, 0.4783, 0.5276, 0.7350, 0.8077),
             "BDL": (0.3270, 0.3098, 0.2964, 0.5425, 0.6091, 0.7933)}}


def truth(x):
    return x * np.sin(x)


@dataclass
class RegressionStudy:
    """Settings. ``paper`` uses the paper's training (NN: SGD lr 1e-4, 100000 epochs).

    ``bdl_epochs`` trains the paper's BDL row; BDL-warm and BDL-tempered spend two thirds of it on
    the MAP warm start and as many epochs again on variational inference. ``tempered_kl``
    weights the KL term of BDL-tempered (chosen from 1, 0.3, 0.1 on seeds 0-5: the largest
    weight whose fits stay close to the MAP accuracy).
    """

    out: str
    seeds: int = 10
    n_train: int = 30
    n_test: int = 1000
    paper: bool = False
    workers: int = None
    progress: bool = True
    bdl_epochs: int = 3000
    nn_epochs: int = 3000
    tempered_kl: float = 0.3

    def __post_init__(self):
        for name in ("seeds", "n_train", "n_test", "bdl_epochs", "nn_epochs"):
            check_count(getattr(self, name), name)
        if not (isinstance(self.tempered_kl, (int, float)) and 0 < self.tempered_kl <= 1):
            raise ValueError("tempered_kl must lie in (0, 1], got "
                             f"tempered_kl={self.tempered_kl!r}")
        self.workers = cpu_count() if self.workers is None else int(self.workers)


def make_data(seed, noise, n_train, n_test):
    """Training points uniform in (-10, 10) with N(0, noise^2) noise; a dense clean test grid,
    and noisy test targets (same noise) for the predictive NLL and coverage."""
    rng = np.random.default_rng([seed, int(round(noise * 1000))])
    x = rng.uniform(-10, 10, n_train)
    y = truth(x) + rng.normal(0, noise, n_train)
    xt = np.linspace(-10, 10, n_test)
    yt_noisy = truth(xt) + rng.normal(0, noise, n_test)
    return x[:, None], y, xt[:, None], truth(xt), yt_noisy


def models(study, seed):
    from surrogates import (BDL, GaussianProcess, NeuralNetwork, PolynomialChaos,
                            PolynomialRegression, SupportVectorRegression)

    if study.paper:
        nn = NeuralNetwork(hidden=(20,), epochs=100_000, batch_size=study.n_train, lr=1e-4,
                           optimizer="sgd", lr_step=10 ** 9, seed=seed)
    else:
        nn = NeuralNetwork(hidden=(20,), epochs=study.nn_epochs, batch_size=study.n_train,
                           lr=0.01, lr_step=1000, lr_gamma=0.5, seed=seed)
    import chaospy

    warm = vi = max(1, 2 * study.bdl_epochs // 3)
    warm_start = dict(hidden=(20,), prior="normal(0, 1)", map_epochs=warm, warm_sigma="laplace",
                      batch_size=study.n_train, n_samples=8, lr=0.01,
                      lr_step=max(1, study.bdl_epochs // 3), lr_gamma=0.5, init_std=1e-5,
                      noise_std=0.1, seed=seed, num_threads=1, progress=False)
    return {
        "PR": PolynomialRegression(degree=11),
        "SVR": SupportVectorRegression(C=10.0, gamma=1.0, epsilon=0.01, tol=1e-4,
                                       standardize_inputs=False),
        "NN": nn,
        "BDL": BDL(hidden=(20,), prior="normal(0, 0.1)", epochs=study.bdl_epochs,
                   batch_size=study.n_train, n_samples=8, lr=0.01, lr_step=study.bdl_epochs // 4,
                   lr_gamma=0.5, init_std=1e-5, seed=seed, num_threads=1, progress=False),
        "PCE": PolynomialChaos(order=11, distribution=chaospy.Uniform(-10, 10)),
        "GP": GaussianProcess(seed=seed),
        "BDL-warm": BDL(epochs=warm + vi, kl_weight=1.0, **warm_start),
        "BDL-tempered": BDL(epochs=warm + vi, kl_weight=study.tempered_kl, **warm_start),
    }


def _task(task):
    import torch

    from surrogates import metrics as M

    torch.set_num_threads(1)
    study, seed, noise = task
    x, y, xt, yt, yt_noisy = make_data(seed, noise, study.n_train, study.n_test)
    out = {}
    hull = (xt[:, 0] >= x.min()) & (xt[:, 0] <= x.max())
    for name, model in models(study, seed).items():
        t0 = time.perf_counter()
        model.fit(x, y)
        if name in BAYESIAN:
            pred = model.predict_distribution(xt, levels=(0.95,))
            mean = pred.mean
            lo, hi = pred.intervals[0.95]
            out[f"{name}_nll"] = float(M.gaussian_nll(yt_noisy, mean, pred.total_var))
            out[f"{name}_coverage95"] = float(M.coverage(yt_noisy, lo, hi))
            out[f"{name}_kl"] = float(model.history_["kl"][-1])
            out[f"{name}_noise"] = float(np.sqrt(np.mean(pred.aleatoric_var)))
            if seed == 0:
                out[f"{name}_band"] = [lo.tolist(), hi.tolist()]
            fit = model.predict(x)
        else:
            mean = model.predict(xt).ravel()
            fit = model.predict(x).ravel()
        out[name] = {"r2": float(M.r2(yt, mean)), "rmse": float(M.rmse(yt, mean)),
                     "r2_hull": float(M.r2(yt[hull], mean[hull])),
                     "r2_train": float(M.r2(y, fit)), "rmse_train": float(M.rmse(y, fit)),
                     "seconds": time.perf_counter() - t0}
        if seed == 0:
            out[name]["curve"] = mean.tolist()
    return out


@locked
def run(study, log=print):
    t0 = time.perf_counter()
    os.makedirs(study.out, exist_ok=True)
    tasks = {f"seed{s}-noise{nz}": (study, s, nz) for s in range(study.seeds) for nz in NOISES}
    res, computed = run_tasks(study, _task, tasks, 3, ignore=("seeds",), desc="regression")
    log(f"regression: {computed} (seed, noise) cells computed, {len(tasks) - computed} loaded")
    report = {"r2": {}, "rmse": {}, "r2_std": {}, "rmse_std": {}, "seeds": study.seeds,
              "settings": {k: v for k, v in asdict(study).items() if k != "progress"}}
    report.update(r2_hull={}, r2_hull_std={}, r2_train={}, r2_train_std={}, rmse_train={},
                  rmse_train_std={})
    for m in METHODS:
        for key in ("r2", "rmse", "r2_hull", "r2_train", "rmse_train"):
            vals = {str(nz): [res[f"seed{s}-noise{nz}"][m][key] for s in range(study.seeds)]
                    for nz in NOISES}
            report[key][m] = {nz: float(np.mean(v)) for nz, v in vals.items()}
            report[f"{key}_std"][m] = {nz: float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
                                       for nz, v in vals.items()}
    for name in BAYESIAN:
        for key in ("nll", "coverage95", "kl", "noise"):
            report[f"{name}_{key}"] = {
                str(nz): float(np.mean([res[f"seed{s}-noise{nz}"][f"{name}_{key}"]
                                        for s in range(study.seeds)])) for nz in NOISES}
    report["paper"] = {k: {m: dict(zip(map(str, NOISES), v)) for m, v in t.items()}
                       for k, t in PAPER.items()}
    report["goals"] = _goals(report)
    report["goals_bdl_warm"] = _goals(report, "BDL-warm")
    report["goals_bdl_tempered"] = _goals(report, "BDL-tempered")
    report["goals_train"] = {name: _goals(report, name, "r2_train") for name in BAYESIAN}
    report["paired_vs_best"] = _paired(study, res, report)
    report["paired_vs_best_train"] = _paired(study, res, report, "r2_train")
    report["draws_reaching_paper"] = _reaching(study, res, "r2")
    report["draws_reaching_paper_train"] = _reaching(study, res, "r2_train")
    report["pr_grid_ceiling"] = polynomial_ceiling(11, study.n_test)
    report["figures"] = _figures(study, res)
    report["seconds"] = time.perf_counter() - t0
    write_reports(study.out, report, _markdown(study, report), log)
    return report


def polynomial_ceiling(degree, n_test):
    """The highest R^2 any polynomial of ``degree`` reaches on the clean test grid of
    ``n_test`` points in (-10, 10): that of the least-squares fit to the grid itself.

    >>> round(polynomial_ceiling(11, 1000), 4)
    0.9658
    """
    xt = np.linspace(-10, 10, n_test)
    yt = truth(xt)
    fit = np.polynomial.Polynomial.fit(xt, yt, degree)(xt)
    return float(1.0 - np.sum((yt - fit) ** 2) / np.sum((yt - yt.mean()) ** 2))


def _reaching(study, res, key):
    """Per method and noise: on how many draws the R^2 (``key``) reaches the paper's BDL value."""
    return {m: {str(nz): int(sum(res[f"seed{s}-noise{nz}"][m][key] >= PAPER["r2"]["BDL"][i]
                                 for s in range(study.seeds))) for i, nz in enumerate(NOISES)}
            for m in METHODS}


def _paired(study, res, r, key="r2"):
    """Per noise level and Bayesian row: mean and std over seeds of the per-draw difference
    R^2(row) - R^2(best), where best is the method with the highest mean R^2 at that noise
    (``key``: ``"r2"`` on the test grid, ``"r2_train"`` on the training points)."""
    out = {}
    for name in BAYESIAN:
        out[name] = {}
        for nz in NOISES:
            best = max(METHODS, key=lambda m: r[key][m][str(nz)])
            d = [res[f"seed{s}-noise{nz}"][name][key] - res[f"seed{s}-noise{nz}"][best][key]
                 for s in range(study.seeds)]
            out[name][str(nz)] = {"best": best, "mean": float(np.mean(d)),
                                  "std": float(np.std(d, ddof=1)) if len(d) > 1 else 0.0}
    return out


def _goals(r, name="BDL", key="r2"):
    """Per noise level: does ``name``'s mean R^2 (``key``) reach the paper's BDL row, and is it
    best or tied best (within its std) among all methods?"""
    out = {}
    for nz in map(str, NOISES):
        bdl, paper = r[key][name][nz], PAPER["r2"]["BDL"][NOISES.index(float(nz))]
        best = max(r[key][m][nz] for m in METHODS)
        tied = bdl >= best - r[f"{key}_std"][name][nz]
        out[nz] = {"bdl_r2": bdl, "paper_bdl_r2": paper, "meets_paper": bdl >= paper,
                   "best_or_tied": bool(tied)}
    return out


def _table(r, key, fmt, paper=None):
    """Mean +- std per method and noise; ``paper``: the key of the paper's table to show in
    brackets (None: none)."""
    lines = ["| method | " + " | ".join(f"sigma={nz}" for nz in NOISES) + " |",
             "|---" * (len(NOISES) + 1) + "|"]
    for m in METHODS:
        cells = []
        for nz in map(str, NOISES):
            p = r["paper"][paper].get(m, {}).get(nz) if paper else None
            cells.append(f"{r[key][m][nz]:{fmt}} +- {r[key + '_std'][m][nz]:{fmt}}" +
                         (f" [{p}]" if p is not None else ""))
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return lines + [""]


def _markdown(study, r):
    n, seeds = study.n_train, study.seeds
    lines = ["# Regression benchmark: y = x sin(x) (paper example 1)", "",
             f"{n} training points per draw, {seeds} seeds (each redraws the data); metrics on a "
             f"clean grid of {study.n_test} points in (-10, 10). Cells: mean +- std over seeds; "
             "the paper's single-draw value in brackets.", "",
             "BDL is the paper's row (N(0, 0.1) prior, exact ELBO). BDL-warm and BDL-tempered use "
             "an N(0, 1) prior on standardised data, a MAP warm start and mean-field Laplace "
             "widths before variational inference; BDL-warm then maximises the exact ELBO, "
             f"BDL-tempered the ELBO with its KL term weighted by {study.tempered_kl}.", "",
             "## R2", ""] + _table(r, "r2", ".4f", "r2")
    lines += ["## RMSE", ""] + _table(r, "rmse", ".4f", "rmse")
    lines += ["## R2 inside the training range", "",
              "The same fits scored only on test points between the smallest and the largest "
              "training x of each draw, i.e. without extrapolation.", ""]
    lines += _table(r, "r2_hull", ".4f")
    lines += ["## The paper's metric: the training points and their noisy targets", "",
              "The paper's Table 1 cannot be held-out R^2 on (-10, 10): its PR row (degree 11) "
              f"reads {PAPER['r2']['PR'][0]} at sigma = 0, but no degree-11 polynomial reaches "
              f"more than {r['pr_grid_ceiling']:.4f} on this grid (the least-squares fit to the "
              "grid itself). Scored on the 30 training points against their noisy targets, our PR "
              "row lands next to the paper's, so these tables use that metric; they reward "
              "fitting the noise and say nothing about extrapolation.", "",
              "### R2 on the training points", ""] + _table(r, "r2_train", ".4f", "r2")
    lines += ["### RMSE on the training points", ""] + _table(r, "rmse_train", ".4f", "rmse")
    rows = (("nll", "NLL (noisy targets)", ".3f"), ("coverage95", "95% coverage", ".3f"),
            ("kl", "KL(q || prior) at the end, nats", ".1f"),
            ("noise", "noise std estimate", ".3f"))
    lines += ["## BDL predictive quality", "",
              "| | " + " | ".join(f"sigma={nz}" for nz in NOISES) + " |",
              "|---" * (len(NOISES) + 1) + "|"]
    lines += [f"| {name} {label} | " + " | ".join(f"{r[f'{name}_{key}'][str(nz)]:{fmt}}"
                                                  for nz in NOISES) + " |"
              for name in BAYESIAN for key, label, fmt in rows]
    lines += ["", "## Goals", "",
              "Goal: BDL's mean R^2 at least the paper's BDL row at every noise, and BDL best or "
              "tied best (within one std) at sigma >= 0.5. Each cell: the row's mean R^2, "
              "whether it reaches the paper's BDL value, whether it is best or tied within one "
              "std, and the per-draw R^2 difference to the best method (mean +- std).", ""]
    grid_goals = {"BDL": r["goals"], "BDL-warm": r["goals_bdl_warm"],
                  "BDL-tempered": r["goals_bdl_tempered"]}
    for title, goals, paired, reach in (
            ("On the test grid (the metric of the tables above)", grid_goals,
             r["paired_vs_best"], r["draws_reaching_paper"]),
            ("On the training points (the paper's metric)", r["goals_train"],
             r["paired_vs_best_train"], r["draws_reaching_paper_train"])):
        lines += [f"### {title}", "", "| row | " + " | ".join(f"sigma={nz}" for nz in NOISES)
                  + " |", "|---" * (len(NOISES) + 1) + "|"]
        for name in BAYESIAN:
            cells = []
            for nz in map(str, NOISES):
                g, pair = goals[name][nz], paired[name][nz]
                cells.append(f"{g['bdl_r2']:.4f} {'met' if g['meets_paper'] else 'NOT met'}, "
                             f"{'best/tied' if g['best_or_tied'] else 'behind'}, "
                             f"{pair['mean']:+.3f} +- {pair['std']:.3f} vs {pair['best']}")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines += ["", f"Draws (of {seeds}) on which a method's R^2 reaches the paper's BDL "
                  "value:", "", "| method | " + " | ".join(f"sigma={nz}" for nz in NOISES)
                  + " |", "|---" * (len(NOISES) + 1) + "|"]
        lines += [f"| {m} | " + " | ".join(str(reach[m][str(nz)]) for nz in NOISES) + " |"
                  for m in METHODS] + [""]
    best_mean = {nz: max(r["r2"][m][str(nz)] for m in METHODS) for nz in NOISES}
    sd_y = float(np.std(truth(np.linspace(-10, 10, study.n_test))))
    kl, budget = r["BDL-warm_kl"]["0.5"], n * np.log(sd_y / 0.5)
    short = [nz for nz in NOISES if best_mean[nz] < PAPER["r2"]["BDL"][NOISES.index(nz)]]
    hi_noise = [nz for nz in NOISES if nz >= 0.3]
    best = {nz: max(METHODS, key=lambda m: r["r2"][m][str(nz)]) for nz in hi_noise}
    inside = ", ".join(f"{best[nz]} {r['r2_hull'][best[nz]][str(nz)]:.3f} vs "
                       f"{r['r2'][best[nz]][str(nz)]:.3f}" for nz in hi_noise)
    w, t = r["r2"]["BDL-warm"], r["r2"]["BDL-tempered"]
    cw, ct = r["BDL-warm_coverage95"], r["BDL-tempered_coverage95"]
    more_r2 = sum(t[str(nz)] > w[str(nz)] for nz in NOISES)
    less_cov = sum(ct[str(nz)] < cw[str(nz)] for nz in NOISES)
    pr_gap = max(abs(r["r2_train"]["PR"][str(nz)] - PAPER["r2"]["PR"][i])
                 for i, nz in enumerate(NOISES))
    reached = {name: [nz for nz in NOISES if r["goals_train"][name][str(nz)]["meets_paper"]]
               for name in BAYESIAN}
    lines += ["", "## What the numbers say", "",
              "- The paper's Table 1 is a training-set metric: on the training points our PR "
              f"row's mean R^2 is within {pr_gap:.4f} of the paper's PR row at every noise, while "
              f"no degree-11 polynomial exceeds R^2 {r['pr_grid_ceiling']:.4f} on the test grid.",
              "- On that metric the paper's BDL value is reached in the mean by " +
              "; ".join(f"{name} at sigma = " + (", ".join(map(str, reached[name])) or "none")
                        for name in BAYESIAN) + ".",
              "- On the test grid no method reaches the paper's BDL R^2 in the mean at sigma = "
              + (", ".join(map(str, short)) if short else "(none)") +
              ". The paper's values are one draw each; the tables above count how many of our "
              "draws reach them.",
              "- Extrapolation: the best method's R^2 inside the training range vs on the whole "
              f"grid, for sigma = {', '.join(map(str, hi_noise))}: {inside}. A random draw of "
              f"{n} points can leave part of either end of (-10, 10) empty, where |x sin x| "
              "reaches 7.9 and every method extrapolates.",
              f"- The paper-prior BDL reaches R^2 {min(r['r2']['BDL'].values()):.3f} to "
              f"{max(r['r2']['BDL'].values()):.3f}. Each weight the data pin down costs about "
              "log(prior std / posterior std) nats of KL; at sigma = 0.5 the BDL-warm posterior "
              f"ends with {kl:.0f} nats of KL, while {n} points can pay at most about {n} "
              f"log(std(y) / sigma) = {budget:.0f} nats for a perfect fit.",
              f"- BDL-tempered (KL weight {study.tempered_kl}, same epochs as BDL-warm) has the "
              f"higher mean R^2 at {more_r2} of {len(NOISES)} noise levels and the lower 95% "
              f"coverage at {less_cov} of {len(NOISES)}. Its KL weight was chosen from 1, 0.3 "
              "and 0.1 on seeds 0-5 of this study, so it is not a held-out result.",
              ]
    lines += figure_section(r["figures"])
    return "\n".join(lines) + "\n"


def _figures(study, res):
    plt = pyplot()

    fig, axes = plt.subplots(2, 3, figsize=(14, 7.5), sharex=True)
    for ax, nz in zip(axes.ravel(), NOISES):
        x, y, xt, yt, _ = make_data(0, nz, study.n_train, study.n_test)
        cell = res[f"seed0-noise{nz}"]
        ax.plot(xt[:, 0], yt, "k-", lw=2, label="x sin x")
        for name, color in zip(BAYESIAN, ("C3", "C6", "C7")):
            lo, hi = cell[f"{name}_band"]
            ax.fill_between(xt[:, 0], lo, hi, color=color, alpha=0.15, label=f"{name} 95%")
        for k, m in enumerate(METHODS):
            ax.plot(xt[:, 0], cell[m]["curve"], lw=1, color=f"C{k}", label=m)
        ax.plot(x[:, 0], y, "ko", ms=3.5, label="data")
        ax.set_ylim(-12, 12)
        ax.set_title(f"noise sigma = {nz}")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
    axes[0, 0].legend(fontsize=7, ncol=2)
    fig.suptitle("Fits to 30 points (seed 0), cf. paper Fig. 3")
    return {"fig3": save_figure(fig, study.out, "fig3_fits.png", 100)}
