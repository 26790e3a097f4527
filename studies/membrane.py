"""Membrane UQ study (paper example 3): Table-3 inputs -> FE training data -> BDL surrogates ->
surrogate Monte Carlo against an FE Monte Carlo ground truth.

Run it with ``uqkit study membrane --out DIR`` or :func:`run`. Every FE run goes through the
study store (``DIR/store``) and every trained surrogate is cached (``DIR/fits``,
``DIR/models``), so an interrupted study resumes where it stopped and a finished one reruns
without a single FE solve.
"""
import json
import math
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from uqkit import propagate, sample, table3
from uqkit.adapters import MembraneModel
from uqkit.executors import cpu_count
from uqkit.sampling import check_count
from uqkit.statistics import compare, describe, ks_statistic

from .common import run_cached, settings_key, write_json

PROBES = ("p1", "p2", "p3")
#: The paper's Table 4 (R^2 on validation data).
PAPER_R2 = {"direct": {64: 0.9720, 128: 0.9982, 256: 0.9990, 512: 0.9993},
            "hierarchical": {64: 0.9935, 128: 0.9989, 256: 0.9983, 512: 0.9994}}
PRIORS = {"direct": "normal(0, 1)", "hierarchical": "hierarchical-normal"}


@dataclass
class MembraneStudy:
    """Settings of the membrane study (the defaults finish in a few minutes on 2 cores).

    Attributes:
        out: output directory.
        seed: master seed; every data set and fit derives its seed from it.
        train_sizes: training-set sizes of the Table-4 comparison (nested subsets of one pool).
        n_validation: held-out FE runs for the comparison.
        n_calibration: further held-out FE runs on which each surrogate's predictive variance
            is recalibrated (:meth:`surrogates.BDL.calibrate`); both raw and recalibrated
            coverage are reported.
        n_seeds: training seeds per (prior, size); medians and spreads are over them.
        n_uq_train: FE runs the UQ surrogates train on (paper: 1000).
        n_surrogate_mc: surrogate Monte Carlo samples (paper: 1e5).
        n_truth: FE Monte Carlo ground-truth samples (paper: 5e5).
        paper: train with the paper's exact settings (batch 16, 200 ELBO samples) and use
            the paper's 5e5 truth.
        workers: processes for FE runs and training; dask: a Dask scheduler address for the FE.
    """

    out: str
    seed: int = 0
    train_sizes: tuple = (64, 128, 256, 512)
    n_validation: int = 1000
    n_calibration: int = 500
    n_seeds: int = 3
    n_uq_train: int = 1000
    n_surrogate_mc: int = 100_000
    n_truth: int = 20_000
    paper: bool = False
    workers: int = None
    dask: str = None
    epochs: int = 1000
    n_paths: int = 30
    progress: bool = True
    priors: dict = field(default_factory=lambda: dict(PRIORS))

    def __post_init__(self):
        for name in ("n_validation", "n_calibration", "n_seeds", "n_uq_train", "n_surrogate_mc",
                     "n_truth", "epochs"):
            check_count(getattr(self, name), name)
        if not self.train_sizes or any(int(n) < 8 for n in self.train_sizes):
            raise ValueError(f"train_sizes must be integers >= 8, got {self.train_sizes!r}")
        self.train_sizes = tuple(sorted(int(n) for n in self.train_sizes))
        if self.paper:
            self.n_truth = max(self.n_truth, 500_000)
        self.workers = cpu_count() if self.workers is None else int(self.workers)
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got workers={self.workers}")


def bdl_settings(n, study, seed):
    """BDL constructor arguments for a training set of n rows.

    ``--paper``: the paper's settings (Adam lr 0.005 x 0.75 every 100 epochs, 1000 epochs,
    batch 16, 200 ELBO samples). Default: the same schedule with 4 ELBO samples and batches of
    max(16, n / 4), so every fit takes 4000 steps whatever n. Both start from a small
    posterior standard deviation (1e-5): the decaying schedule then stops short of the fully
    converged ELBO, which at these data sizes underfits (see the report's notes).
    """
    common = dict(hidden=(30, 15, 10), activation="tanh", lr=0.005, lr_step=100, lr_gamma=0.75,
                  epochs=study.epochs, init_std=1e-5, seed=seed, num_threads=1,
                  predict_samples=200)
    if study.paper:
        return dict(common, batch_size=16, n_samples=200)
    return dict(common, batch_size=max(16, n // 4), n_samples=4)


# -- FE data -----------------------------------------------------------------------------------
def fe_dataset(study, name, n, seed, model, log):
    """Run (or load) n FE samples of the Table-3 inputs; returns (X, W, result)."""
    samples = sample(table3(), n, rule="random", seed=seed)
    res = propagate(model, samples, workers=study.workers, dask=study.dask,
                    executor="dask" if study.dask else "local",
                    store=os.path.join(study.out, "store", name),
                    settings={"dataset": name, "seed": seed}, progress=study.progress)
    log(f"FE {name}: {res.summary()}")
    ok = res.ok
    return res.inputs.values[ok], res.outputs[ok], res


# -- training ----------------------------------------------------------------------------------
def _fit_task(task):
    """Train one BDL and evaluate it on the validation set (runs in a worker process)."""
    import torch

    from surrogates import BDL
    from surrogates import metrics as M

    torch.set_num_threads(1)
    X, Y, Xv, Yv, Xc, Yc, prior, kwargs, fig_index = task
    t0 = time.perf_counter()
    model = BDL(prior=prior, **kwargs).fit(X, Y)
    fit_s = time.perf_counter() - t0
    pred = model.predict(Xv, levels=(0.95,))
    lo, hi = pred.intervals[0.95]
    out = {"r2": M.r2(Yv, pred.mean).tolist(), "rmse": M.rmse(Yv, pred.mean).tolist(),
           "nll": M.gaussian_nll(Yv, pred.mean, pred.total_var).tolist(),
           "coverage95": M.coverage(Yv, lo, hi).tolist(),
           "crps": M.crps_gaussian(Yv, pred.mean, pred.total_var).tolist(),
           "noise_std": np.sqrt(pred.aleatoric_var[0]).tolist(), "fit_seconds": fit_s}
    model.calibrate(Xc, Yc)
    cal = model.predict(Xv, levels=(0.95,))
    lo, hi = cal.intervals[0.95]
    out.update({"nll_cal": M.gaussian_nll(Yv, cal.mean, cal.total_var).tolist(),
                "coverage95_cal": M.coverage(Yv, lo, hi).tolist(),
                "crps_cal": M.crps_gaussian(Yv, cal.mean, cal.total_var).tolist(),
                "variance_scale": model.variance_scale_.tolist()})
    if fig_index is not None:
        one = model.predict(Xv[fig_index:fig_index + 1], n_samples=2000, return_samples=True,
                            levels=())
        rng = np.random.default_rng(0)
        draws = one.samples[:, 0, 0] + rng.normal(0, math.sqrt(one.aleatoric_var[0, 0]), 2000)
        out["fig7c_w_p1"] = draws.tolist()
    return out


def _fe_seconds_per_run(study, res):
    """Wall seconds per FE run of the truth Monte Carlo, measured when it was computed (kept
    in DIR/fe_timing.json so that a resumed study reports the same figure)."""
    path = os.path.join(study.out, "fe_timing.json")
    if res.computed >= 100:
        per_run = res.seconds / res.computed
        write_json(path, {"seconds_per_run": per_run, "runs_timed": res.computed,
                            "workers": study.workers})
        return per_run
    if os.path.exists(path):
        with open(path) as fh:
            return json.load(fh)["seconds_per_run"]
    return None


def fit_settings(study):
    """What the surrogate fits depend on (the FE data sets behind them included): fits made
    with other settings live in another directory, so changing, say, ``epochs`` retrains
    while the FE runs are reused."""
    n_pool = max(max(study.train_sizes), study.n_uq_train)
    return {"seed": study.seed, "epochs": study.epochs, "paper": study.paper,
            "n_pool": n_pool, "n_validation": study.n_validation,
            "n_calibration": study.n_calibration, "priors": study.priors, "fit_version": 3}


def fits_dir(study, kind):
    """``DIR/<kind>-<key>``: where fits (``kind="fits"``) or saved UQ models (``"models"``)
    made with this study's :func:`fit_settings` are kept."""
    return os.path.join(study.out, f"{kind}-{settings_key(fit_settings(study))}")


def run_fits(tasks, study, log):
    """Run (or load) training tasks {key: task}; results are cached one JSON file per fit."""
    results, computed = run_cached(tasks, _fit_task, fits_dir(study, "fits"), study.workers,
                                   study.progress, "train BDL", settings=fit_settings(study))
    log(f"surrogate fits: {computed} trained, {len(tasks) - computed} loaded")
    return results


# -- the study ---------------------------------------------------------------------------------
def run(study, log=print):
    """Run the whole study; writes DIR/report.md, DIR/report.json and the PNGs; returns the
    report dict."""
    t_start = time.perf_counter()
    os.makedirs(study.out, exist_ok=True)
    model = MembraneModel()
    s = study.seed
    n_pool = max(max(study.train_sizes), study.n_uq_train)
    Xp, Wp, pool_res = fe_dataset(study, "train-pool", n_pool, 1000 * s + 1, model, log)
    Xv, Wv, val_res = fe_dataset(study, "validation", study.n_validation, 1000 * s + 2, model, log)
    Xc, Wc, cal_res = fe_dataset(study, "calibration", study.n_calibration, 1000 * s + 6,
                                 model, log)
    Xt, Wt, truth_res = fe_dataset(study, "truth", study.n_truth, 1000 * s + 3, model, log)
    truth_seconds = _fe_seconds_per_run(study, truth_res)
    fe_results = (pool_res, val_res, cal_res, truth_res)
    fe_computed = sum(r.computed for r in fe_results)
    fe_loaded = sum(r.loaded for r in fe_results)
    fe_failed = sum(r.n_failed for r in fe_results)

    # Table-4 comparison
    fig_index = int(np.argmin(np.abs(Wv[:, 0] - np.median(Wv[:, 0]))))
    tasks = {}
    for prior_name, prior in study.priors.items():
        for n in study.train_sizes:
            for k in range(study.n_seeds):
                key = f"table-{prior_name}-{n}-seed{k}"
                tasks[key] = (Xp[:n], Wp[:n], Xv, Wv, Xc, Wc, prior,
                              bdl_settings(n, study, 100 * s + k),
                              fig_index if (k == 0 and prior_name == "direct") else None)
    # UQ surrogates on n_uq_train runs: trained and saved in the main process below
    fits = run_fits(tasks, study, log)
    table = _table(fits, study)

    uq = {}
    models_dir = fits_dir(study, "models")
    os.makedirs(models_dir, exist_ok=True)
    Xmc = sample(table3(), study.n_surrogate_mc, seed=1000 * s + 4).values
    import torch

    from surrogates import BDL

    for prior_name, prior in study.priors.items():
        path = os.path.join(models_dir, f"bdl-{prior_name}-{study.n_uq_train}.pt")
        t0 = time.perf_counter()
        if os.path.exists(path):
            bdl = BDL.load(path)
            fit_s = json.load(open(path + ".json"))["fit_seconds"]
        else:
            torch.set_num_threads(study.workers)
            bdl = BDL(prior=prior, **bdl_settings(study.n_uq_train, study, 100 * s + 99))
            bdl.fit(Xp[:study.n_uq_train], Wp[:study.n_uq_train])
            fit_s = time.perf_counter() - t0
            bdl.save(path)
            write_json(path + ".json", {"fit_seconds": fit_s})
        t1 = time.perf_counter()
        torch.set_num_threads(study.workers)
        pred = bdl.predict(Xmc, n_samples=50, return_samples=True, levels=())
        predict_s = time.perf_counter() - t1
        uq[prior_name] = {"mean": pred.mean, "samples": pred.samples, "fit_seconds": fit_s,
                          "predict_seconds": predict_s}
        log(f"UQ surrogate ({prior_name}): fit {fit_s:.1f} s, {study.n_surrogate_mc} "
            f"predictions x 50 posterior draws in {predict_s:.1f} s")

    report = _report(study, table, uq, Wt, fits, fig_index, Xv, Wv, fe_computed, fe_loaded,
                     fe_failed, truth_seconds, t_start)
    from .membrane_report import write_report

    write_report(study, report, uq, Wt, Xv, Wv, fits, fig_index)
    log(f"report: {os.path.join(study.out, 'report.md')}")
    return report


def _table(fits, study):
    """{prior: {n: {metric: {"median": [...], "min": [...], "max": [...]}}}}."""
    out = {}
    for prior_name in study.priors:
        out[prior_name] = {}
        for n in study.train_sizes:
            runs = [fits[f"table-{prior_name}-{n}-seed{k}"] for k in range(study.n_seeds)]
            out[prior_name][n] = {
                m: {"median": np.median([r[m] for r in runs], 0).tolist(),
                    "min": np.min([r[m] for r in runs], 0).tolist(),
                    "max": np.max([r[m] for r in runs], 0).tolist()}
                for m in ("r2", "rmse", "nll", "coverage95", "crps", "nll_cal",
                          "coverage95_cal", "crps_cal", "variance_scale")}
    return out


def _report(study, table, uq, Wt, fits, fig_index, Xv, Wv, fe_computed, fe_loaded, fe_failed,
            truth_seconds, t_start):
    primary = "hierarchical" if "hierarchical" in uq else next(iter(uq))
    stats_truth = {p: describe(Wt[:, j], quantiles=(0.01, 0.5, 0.99), n_boot=50)
                   for j, p in enumerate(PROBES)}
    uq_cmp = {}
    for prior_name, u in uq.items():
        uq_cmp[prior_name] = {}
        for j, p in enumerate(PROBES):
            c = compare(u["mean"][:, j], Wt[:, j])
            d = describe(u["mean"][:, j], quantiles=(0.01, 0.5, 0.99), n_boot=50)
            # epistemic band of the statistics over posterior function draws
            draws = u["samples"][:, :, j]
            band = {"mean": np.quantile(draws.mean(1), [0.025, 0.975]).tolist(),
                    "std": np.quantile(draws.std(1), [0.025, 0.975]).tolist(),
                    "ks": np.quantile([ks_statistic(dr, Wt[:, j]) for dr in draws[:20]],
                                      [0.025, 0.975]).tolist()}
            uq_cmp[prior_name][p] = {"surrogate": d, "comparison": c, "posterior_band": band}
    n_t = len(Wt)
    fe_per_1e5 = truth_seconds * 1e5 if truth_seconds else None
    timings = {"fe_seconds_per_run": truth_seconds, "fe_truth_runs": n_t,
               "fe_seconds_per_1e5": fe_per_1e5, "total_seconds": time.perf_counter() - t_start}
    for prior_name, u in uq.items():
        sur = u["fit_seconds"] + u["predict_seconds"] * 1e5 / study.n_surrogate_mc
        timings[f"surrogate_{prior_name}_seconds_per_1e5_incl_training"] = sur
        if fe_per_1e5:
            timings[f"speedup_{prior_name}"] = fe_per_1e5 / sur
    return {
        "settings": {k: v for k, v in asdict(study).items() if k != "progress"},
        "r2": {pr: {str(n): table[pr][n]["r2"]["median"] for n in study.train_sizes}
               for pr in study.priors},
        "table": {pr: {str(n): v for n, v in table[pr].items()} for pr in study.priors},
        "paper_r2": {pr: {str(n): v for n, v in PAPER_R2[pr].items()} for pr in PAPER_R2},
        "ks": {p: uq_cmp[primary][p]["comparison"]["ks"] for p in PROBES},
        "wasserstein": {p: uq_cmp[primary][p]["comparison"]["wasserstein"] for p in PROBES},
        "ks_by_prior": {pr: {p: uq_cmp[pr][p]["comparison"]["ks"] for p in PROBES} for pr in uq},
        "primary_prior": primary,
        "uq": uq_cmp,
        "truth": stats_truth,
        "fe_runs_computed": fe_computed,
        "fe_runs_loaded": fe_loaded,
        "fe_runs_failed": fe_failed,
        "timings": timings,
    }
