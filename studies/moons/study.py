"""The moons study's computation: its tasks and :func:`run`.

Imports: numpy, uqkit, :mod:`studies.common` and the study's settings, tasks and report;
fem and surrogates inside the tasks that need them.
"""
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from ..common import evidence_choice, fit_restarts, locked, run_tasks, write_reports
from .settings import ACCURACY_GOAL, GRID, PRIORS, TRIALS, make_data
from .report import _effect, _figures, _markdown

__all__ = ["laplace_priors", "VIFit", "LaplaceFits", "run"]


def laplace_priors(study):
    """The rows trained as Laplace BDLs (none with ``paper``)."""
    if study.paper:
        return ()
    from surrogates.priors import make_prior

    out = []
    for name, spec in PRIORS.items():
        try:
            make_prior(spec).check_laplace()
        except ValueError:
            continue
        out.append(name)
    return tuple(out)


def _score(model, Xv, yv, seed, seconds):
    """Validation metrics of a fitted classifier; on seed 0 also the figures' grids and
    first-layer posterior draws."""
    from surrogates import metrics as M

    pred = model.predict_distribution(Xv, n_samples=200)
    out = {"accuracy": M.accuracy(yv, pred.mean), "nll": M.classification_nll(yv, pred.mean),
           "ece": M.expected_calibration_error(yv, pred.mean), "seconds": seconds}
    if seed == 0:
        gx, gy = np.meshgrid(GRID, GRID)
        g = model.predict_distribution(np.column_stack([gx.ravel(), gy.ravel()]), n_samples=200)
        out["grid_p1"] = g.mean[:, 1].tolist()
        out["grid_var"] = g.epistemic_var[:, 1].tolist()
        post = model.posterior()[0]
        rng = np.random.default_rng(0)
        w_mean, w_std = post["weight_mean"].ravel(), post["weight_std"].ravel()
        out["w1_samples"] = (w_mean[None] + w_std[None] * rng.standard_normal(
            (200, w_mean.size))).ravel().tolist()
        out["b1_samples"] = (post["bias_mean"][None] + post["bias_std"][None]
                             * rng.standard_normal((200, post["bias_mean"].size))).ravel().tolist()
    return out


@dataclass(frozen=True)
class VIFit:
    """One mean-field VI fit of the study: a prior's name, the noise level and the seed."""

    study: object
    prior: str
    noise: str
    seed: int


@dataclass(frozen=True)
class LaplaceFits:
    """Every Laplace row's fits (prior, seed) at one noise level."""

    study: object
    noise: str


def _task(task):
    """One mean-field VI fit (:class:`VIFit`)."""
    import torch

    from surrogates import BDLClassifier

    torch.set_num_threads(1)
    study, prior_name, noise, seed = task.study, task.prior, task.noise, task.seed
    Xtr, ytr, Xv, yv = make_data(TRIALS[noise], float(noise), seed)
    t0 = time.perf_counter()
    model = BDLClassifier(hidden=(5, 5), prior=PRIORS[prior_name],
                          epochs=study.epochs, batch_size=study.batch_size, lr=study.lr,
                          lr_step=max(1, study.epochs // 3), lr_gamma=0.5, n_samples=4,
                          kl_samples=4, init_std=1e-3, seed=seed, num_threads=1,
                          device="cpu", progress=False).fit(Xtr, ytr)
    return _score(model, Xv, yv, seed, time.perf_counter() - t0)


def _laplace_task(task):
    """Every Laplace row's fits at one noise level (:class:`LaplaceFits`), as one batched
    program."""
    import torch

    from surrogates import BDLClassifier
    from surrogates.bdl.evidence_search import SEED_STRIDE

    torch.set_num_threads(1)
    study, noise = task.study, task.noise
    draws = [make_data(TRIALS[noise], float(noise), s) for s in range(study.seeds)]
    pairs = [(p, s) for p in laplace_priors(study) for s in range(study.seeds)]
    t0 = time.perf_counter()
    fitted, records = fit_restarts(
        lambda i, r: BDLClassifier(hidden=(5, 5), prior=PRIORS[pairs[i][0]], inference="laplace",
                                   max_iter=study.max_iter, seed=pairs[i][1] + SEED_STRIDE * r,
                                   num_threads=1, device="cpu", progress=False),
        [draws[s][:2] for _, s in pairs], study.restarts)
    seconds = (time.perf_counter() - t0) / len(pairs)
    out = {}
    for (p, s), model, rec in zip(pairs, fitted, records):
        cell = _score(model, draws[s][2], draws[s][3], s, seconds)
        cell.update(log_evidence=float(model.log_evidence_),
                    log_evidences=[float(v) for v in rec["log_evidence"]],
                    objectives=[float(v) for v in rec["objective"]],
                    restart=rec["chosen"], converged=bool(model.history_["converged"]),
                    prior_scale=list(model.history_["prior_scale"]))
        out[f"{p}-noise{noise}-seed{s}"] = cell
    return out


@locked
def run(study, log=print):
    """Run the whole study; writes DIR/report.md, DIR/report.json and the PNGs; returns the
    report dict. Finished tasks are cached in DIR, so an interrupted run resumes."""
    t0 = time.perf_counter()
    os.makedirs(study.out, exist_ok=True)
    lap = laplace_priors(study)
    tasks = {f"{p}-noise{nz}-seed{s}": VIFit(study, p, nz, s) for p in PRIORS if p not in lap
             for nz in TRIALS for s in range(study.seeds)}
    res, computed = run_tasks(study, _task, tasks, 2, ignore=("seeds",), desc="moons VI", log=log)
    if lap:
        lap_tasks = {f"laplace-noise{nz}-seeds{study.seeds}": LaplaceFits(study, nz)
                     for nz in TRIALS}
        out, n_lap = run_tasks(study, _laplace_task, lap_tasks, 2, ignore=("seeds",),
                               desc="moons Laplace", log=log)
        for cells in out.values():
            res.update(cells)
        computed += n_lap * len(lap) * study.seeds
    total = len(PRIORS) * len(TRIALS) * study.seeds
    log(f"moons: {computed} fits computed, {total - computed} loaded")
    report = {"seeds": study.seeds, "laplace_priors": list(lap),
              "vi_priors": [p for p in PRIORS if p not in lap],
              "settings": {k: v for k, v in asdict(study).items() if k != "progress"}}
    for metric in ("accuracy", "nll", "ece"):
        vals = {p: {nz: [res[f"{p}-noise{nz}-seed{s}"][metric] for s in range(study.seeds)]
                    for nz in TRIALS} for p in PRIORS}
        report[metric] = {p: {nz: float(np.mean(v)) for nz, v in row.items()}
                          for p, row in vals.items()}
        report[metric + "_std"] = {p: {nz: float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
                                       for nz, v in row.items()} for p, row in vals.items()}
        report[metric + "_seeds"] = {p: {nz: [float(a) for a in v] for nz, v in row.items()}
                                     for p, row in vals.items()}
        if metric == "accuracy":
            report["accuracy_min"] = {p: {nz: float(np.min(v)) for nz, v in row.items()}
                                      for p, row in vals.items()}
    report["goals"] = {p: {nz: {"min": report["accuracy_min"][p][nz], "goal": ACCURACY_GOAL[nz],
                                "met": report["accuracy_min"][p][nz] >= ACCURACY_GOAL[nz]}
                           for nz in TRIALS} for p in PRIORS}
    report["goals_met"] = all(c["met"] for row in report["goals"].values() for c in row.values())
    if lap:
        report["restart_chosen"] = {p: {nz: [res[f"{p}-noise{nz}-seed{s}"]["restart"]
                                             for s in range(study.seeds)] for nz in TRIALS}
                                    for p in lap}
        report["evidence_choice"] = {nz: evidence_choice(
            {p: [res[f"{p}-noise{nz}-seed{s}"] for s in range(study.seeds)] for p in lap},
            ("accuracy",)) for nz in TRIALS}
    report["hierarchical_effect"] = _effect(report)
    report["figures"] = _figures(study, res)
    report["seconds"] = time.perf_counter() - t0
    write_reports(study.out, report, _markdown(study, report), log)
    return report
