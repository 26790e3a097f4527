"""The regression study's computation: its tasks and :func:`run`.

Imports: numpy, uqkit, :mod:`studies.common` and the study's settings, tasks and report;
fem and surrogates inside the tasks that need them.
"""
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from ..common import evidence_choice, fit_restarts, locked, run_tasks, write_reports
from .settings import (BAYES_KEYS, BAYESIAN, HIER, KEYS, NOISES, PAPER, bayesian, make_data,
                       methods, truth)
from .report import _figures, _goals, _markdown, _reaching

__all__ = ["models", "bdl_models", "BaselineCell", "BayesianCells", "run", "polynomial_ceiling"]


def models(study, seed):
    """The baselines of one data draw."""
    from surrogates import (GaussianProcess, NeuralNetwork, PolynomialChaos,
                            PolynomialRegression, SupportVectorRegression)

    if study.paper:
        nn = NeuralNetwork(hidden=(20,), epochs=100_000, batch_size=study.n_train, lr=1e-4,
                           optimizer="sgd", lr_step=10 ** 9, seed=seed)
    else:
        # the BDL's optimiser: full-batch L-BFGS for as many iterations as its MAP fits
        nn = NeuralNetwork(hidden=(20,), epochs=study.max_iter, optimizer="lbfgs",
                           weight_decay=1e-6, seed=seed)
    import chaospy

    return {
        "PR": PolynomialRegression(degree=11),
        "SVR": SupportVectorRegression(C=10.0, gamma=1.0, epsilon=0.01, tol=1e-4,
                                       standardize_inputs=False),
        "NN": nn,
        "PCE": PolynomialChaos(order=11, distribution=chaospy.Uniform(-10, 10)),
        "GP": GaussianProcess(seed=seed),
    }


def bdl_models(study, seed, restart=0):
    """The Bayesian rows of one data draw (unfitted); ``restart`` shifts the seed of the
    default (Laplace) rows' initialisation."""
    from surrogates import BDL
    from surrogates.bdl.evidence_search import SEED_STRIDE

    if not study.paper:
        kw = dict(hidden=(20,), inference="laplace", max_iter=study.max_iter, noise_std=0.1,
                  seed=seed + SEED_STRIDE * restart, num_threads=1, device="cpu",
                  progress=False,
                  laplace_prior_scale="evidence" if study.noise == "evidence" else 1.0)
        return {"BDL": BDL(prior="normal(0, 0.1)", **kw),
                HIER: BDL(prior="hierarchical-normal", **kw)}
    paper = dict(hidden=(20,), epochs=study.bdl_epochs, batch_size=study.n_train, n_samples=8,
                 lr=0.01, lr_step=study.bdl_epochs // 4, lr_gamma=0.5, init_std=1e-5,
                 seed=seed, num_threads=1, device="cpu", progress=False)
    warm = vi = max(1, 2 * study.bdl_epochs // 3)
    warm_start = dict(hidden=(20,), prior="normal(0, 1)", map_epochs=warm, warm_sigma="laplace",
                      batch_size=study.n_train, n_samples=8, lr=0.01,
                      lr_step=max(1, study.bdl_epochs // 3), lr_gamma=0.5, init_std=1e-5,
                      noise_std=0.1, seed=seed, num_threads=1, device="cpu", progress=False)
    return {"BDL": BDL(prior="normal(0, 0.1)", **paper),
            HIER: BDL(prior="hierarchical-normal", **paper),
            "BDL-warm": BDL(epochs=warm + vi, kl_weight=1.0, **warm_start),
            "BDL-tempered": BDL(epochs=warm + vi, kl_weight=study.tempered_kl, **warm_start)}


def _score(name, model, data, seed, seconds, bayes):
    """One fit's metrics on one data draw."""
    from surrogates import metrics as M

    x, y, xt, yt, yt_noisy = data
    inside = (xt[:, 0] >= x.min()) & (xt[:, 0] <= x.max())
    out = {}
    if bayes:
        pred = model.predict_distribution(xt, levels=(0.95,))
        mean = np.asarray(pred.mean).ravel()
        lo, hi = (np.asarray(v).ravel() for v in pred.intervals[0.95])
        total = np.asarray(pred.total_var).ravel()
        out.update(nll=float(M.gaussian_nll(yt_noisy, mean, total)),
                   coverage=float(M.coverage(yt_noisy[inside], lo[inside], hi[inside])),
                   noise=float(np.sqrt(np.mean(pred.aleatoric_var))))
        if seed == 0:
            out["band"] = [lo.tolist(), hi.tolist()]
        fit = np.asarray(model.predict(x)).ravel()
    else:
        mean = np.asarray(model.predict(xt)).ravel()
        fit = np.asarray(model.predict(x)).ravel()
    out.update(r2=float(M.r2(yt, mean)), rmse=float(M.rmse(yt, mean)),
               r2_inside=float(M.r2(yt[inside], mean[inside])),
               r2_train=float(M.r2(y, fit)), rmse_train=float(M.rmse(y, fit)),
               seconds=float(seconds))
    if seed == 0:
        out["curve"] = mean.tolist()
    return out


@dataclass(frozen=True)
class BaselineCell:
    """The baselines on one data draw: its seed and noise level."""

    study: object
    seed: int
    noise: float


@dataclass(frozen=True)
class BayesianCells:
    """The Bayesian rows on every seed's draw at one noise level."""

    study: object
    noise: float


def _task(task):
    """The baselines on one (seed, noise) draw (:class:`BaselineCell`)."""
    import torch

    torch.set_num_threads(1)
    study, seed, noise = task.study, task.seed, task.noise
    data = make_data(seed, noise, study.n_train, study.n_test)
    out = {}
    for name, model in models(study, seed).items():
        t0 = time.perf_counter()
        model.fit(data[0], data[1])
        out[name] = _score(name, model, data, seed, time.perf_counter() - t0, name == "GP")
    return out


def _bdl_task(task):
    """The Bayesian rows on every seed's draw at one noise level, as one batched program
    (:func:`surrogates.fit_many`; ``--paper``'s mean-field fits run one by one)."""
    import torch

    torch.set_num_threads(1)
    study, noise = task.study, task.noise
    draws = [make_data(s, noise, study.n_train, study.n_test) for s in range(study.seeds)]
    names = bayesian(study)
    restarts = 1 if study.paper else study.restarts
    pairs = [(s, name) for s in range(study.seeds) for name in names]
    t0 = time.perf_counter()
    fitted, records = fit_restarts(
        lambda i, r: bdl_models(study, pairs[i][0], r)[pairs[i][1]],
        [draws[s][:2] for s, _ in pairs], restarts)
    seconds = (time.perf_counter() - t0) / len(pairs)
    out = {}
    for (s, name), model, rec in zip(pairs, fitted, records):
        cell = _score(name, model, draws[s], s, seconds, True)
        if model.inference == "laplace":
            cell.update(restart=rec["chosen"], log_evidence=float(model.log_evidence_),
                        log_evidences=[float(v) for v in rec["log_evidence"]],
                        objectives=[float(v) for v in rec["objective"]],
                        prior_scale=list(model.history_["prior_scale"]),
                        # the evidence's noise std over the MAP's
                        noise_scale=float(torch.exp(0.5 * (model.laplace_.map_log_tau
                                                           - model.laplace_.log_tau))[0]),
                        converged=bool(model.history_["converged"]))
        else:
            cell["kl"] = float(model.history_["kl"][-1])
        out.setdefault(f"seed{s}", {})[name] = cell
    return out


@locked
def run(study, log=print):
    """Run the whole study; writes DIR/report.md, DIR/report.json and the PNGs; returns the
    report dict. Finished tasks are cached in DIR, so an interrupted run resumes."""
    t0 = time.perf_counter()
    os.makedirs(study.out, exist_ok=True)
    tasks = {f"seed{s}-noise{nz}": BaselineCell(study, s, nz) for s in range(study.seeds)
             for nz in NOISES}
    res, computed = run_tasks(study, _task, tasks, 4, ignore=("seeds",), desc="regression", log=log)
    log(f"regression: {computed} (seed, noise) cells of baselines computed, "
        f"{len(tasks) - computed} loaded")
    bdl_tasks = {f"bdl-noise{nz}-seeds{study.seeds}": BayesianCells(study, nz) for nz in NOISES}
    bdl, computed = run_tasks(study, _bdl_task, bdl_tasks, 4, ignore=("seeds",),
                              desc="regression BDL", log=log)
    log(f"regression: {computed} noise levels of BDL fits computed, "
        f"{len(bdl_tasks) - computed} loaded")
    for nz in NOISES:
        for key, cells in bdl[f"bdl-noise{nz}-seeds{study.seeds}"].items():
            res[f"{key}-noise{nz}"].update(cells)
    rows = methods(study)
    report = {"methods": list(rows), "seeds": study.seeds,
              "settings": {k: v for k, v in asdict(study).items() if k != "progress"}}

    def average(key, names):
        vals = {m: {str(nz): [res[f"seed{s}-noise{nz}"][m][key] for s in range(study.seeds)]
                    for nz in NOISES} for m in names}
        report[key] = {m: {nz: float(np.mean(v)) for nz, v in row.items()}
                       for m, row in vals.items()}
        report[f"{key}_std"] = {m: {nz: float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
                                    for nz, v in row.items()} for m, row in vals.items()}
        return vals

    for key in KEYS:
        vals = average(key, rows)
        if key == "r2_inside":
            report["r2_inside_min"] = {m: {nz: float(np.min(v)) for nz, v in row.items()}
                                       for m, row in vals.items()}
    for key in BAYES_KEYS:
        average(key, bayesian(study) + ("GP",))
    if not study.paper:
        report["restart_chosen"] = {
            m: {str(nz): [res[f"seed{s}-noise{nz}"][m]["restart"] for s in range(study.seeds)]
                for nz in NOISES} for m in BAYESIAN}
        for key in ("prior_scale", "noise_scale"):  # means over seeds (per parameter tensor)
            report[key] = {
                m: {str(nz): np.mean([res[f"seed{s}-noise{nz}"][m][key]
                                      for s in range(study.seeds)], 0).tolist()
                    for nz in NOISES}
                for m in BAYESIAN}
        report["evidence_choice"] = {str(nz): evidence_choice(
            {m: [res[f"seed{s}-noise{nz}"][m] for s in range(study.seeds)] for m in BAYESIAN},
            ("r2_train", "r2_inside")) for nz in NOISES}
    else:
        average("kl", bayesian(study))
    report["paper"] = {k: {m: dict(zip(map(str, NOISES), v)) for m, v in t.items()}
                       for k, t in PAPER.items()}
    report["goals"] = {name: _goals(report, name) for name in bayesian(study)}
    report["goals_met"] = {name: {g: all(cell[f"{g}_met"] for cell in report["goals"][name]
                                         .values()) for g in ("r2_train", "r2_inside",
                                                              "coverage")}
                           for name in bayesian(study)}
    report["draws_reaching_paper_train"] = _reaching(study, res, "r2_train")
    report["collapsed"] = {m: {str(nz): int(sum(res[f"seed{s}-noise{nz}"][m]["r2_train"] < 0.5
                                                for s in range(study.seeds))) for nz in NOISES}
                           for m in bayesian(study)}
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

    (``tests/studies/test_regression_moons.py`` gets the same number by a least-squares
    solve on a Legendre basis.)
    """
    xt = np.linspace(-10, 10, n_test)
    yt = truth(xt)
    fit = np.polynomial.Polynomial.fit(xt, yt, degree)(xt)
    return float(1.0 - np.sum((yt - fit) ** 2) / np.sum((yt - yt.mean()) ** 2))
