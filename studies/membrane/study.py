"""The membrane study's computation: its tasks and :func:`run`.

Imports: numpy, uqkit, :mod:`studies.common` and the study's settings, tasks and report;
fem and surrogates inside the tasks that need them.
"""
import hashlib
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from uqkit import propagate, sample
from uqkit.execution.cache import cached_map
from uqkit.presets import table3

from ..common import StudyError, code_version, fe_model, locked, study_cache
from .settings import PAPER_R2, PROBES
from .report import ReportDrafts, write_report
from .tasks import (BaselineTask, DiscretisationTask, Fit, LoadPathsTask, TableTask, UQFitTask,
                    UQMonteCarloTask, parallelism, timed_task)

__all__ = ["bdl_settings", "fe_dataset", "fit_settings", "FEData", "fe_data", "TABLE_TASK_ROWS",
           "table_parts", "study_tasks", "uq_order", "run"]


def bdl_settings(n, study, seed):
    """BDL constructor arguments for a training set of n rows.

    Default: the MAP network trained by full-batch L-BFGS (float64, noise
    precision held at noise std 0.1 (standardised units) for the first half of the iterations,
    then learned; ``max_iter`` iterations in all) and the full-GGN linearised Laplace posterior
    about it (``inference="laplace"``), whose prior precision per parameter tensor and noise
    precision per output maximise the Laplace evidence (``laplace_prior_scale="evidence"``).
    Fits of one size train as batched programs of about :data:`TABLE_TASK_ROWS` rows
    (:func:`surrogates.fit_many`, :func:`table_parts`).

    ``--paper``: the paper's method and settings: mean-field VI by Adam, lr 0.005 x 0.75 every
    100 epochs, ``epochs`` epochs, batch 16, 200 ELBO samples, from a small posterior standard
    deviation (1e-5).
    """
    common = dict(hidden=(30, 15, 10), activation="tanh", seed=seed, num_threads=1,
                  device="cpu", predict_samples=200, progress=False)
    if study.paper:
        return dict(common, inference="meanfield", lr=0.005, lr_step=100, lr_gamma=0.75,
                    epochs=study.epochs, init_std=1e-5, batch_size=16, n_samples=200)
    return dict(common, inference="laplace", noise_std=0.1, max_iter=study.max_iter)


# -- FE data -----------------------------------------------------------------------------------
def fe_dataset(study, name, n, seed, model, log, need=1):
    """Run (or load) n FE samples of the Table-3 inputs; returns (X, W, result) of the runs
    that succeeded.

    Raises:
        StudyError: fewer than ``need`` runs succeeded (the study cannot go on with them).
    """
    samples = sample(table3(), n, rule="random", seed=seed)
    settings = {"dataset": name, "n": n, "seed": seed, "model": model.describe(),
                "inputs_sha256": hashlib.sha256(samples.values.tobytes()).hexdigest()}
    res = propagate(model, samples, workers=study.workers, dask=study.dask,
                    executor="dask" if study.dask else "local",
                    store=study_cache(study).path(f"fe-{name}", settings),
                    settings={"dataset": name, "seed": seed},
                    progress=f"FE {name} ({n} runs)" if study.progress else False,
                    retry_failed="all" if study.retry_failed else "errors")
    log(f"FE {name}: {res.summary()}")
    ok = res.ok
    if ok.sum() < need:
        reasons = "; ".join(f"{c} x {r}" for r, c in res.failures().most_common(3))
        raise StudyError(f"FE data set {name!r}: only {int(ok.sum())} of {n} runs succeeded "
                         f"and the study needs {need}; stopping ({reasons})")
    return res.inputs.values[ok], res.outputs[ok], res


def fit_settings(study, model):
    """What the surrogate fits depend on: the FE model and data sets behind them and the
    training settings. A fit made with other settings is another cache entry, so changing,
    say, ``epochs`` retrains while the FE runs are reused."""
    n_pool = max(max(study.train_sizes), study.n_uq_train)
    return {"seed": study.seed, "epochs": study.epochs, "paper": study.paper,
            "n_pool": n_pool, "n_validation": study.n_validation,
            "n_calibration": study.n_calibration, "priors": study.priors,
            "max_iter": study.max_iter, "model": model.describe(),
            "code": code_version(__package__), "fit_version": 7}


# -- the study ---------------------------------------------------------------------------------
@dataclass
class FEData:
    """The study's FE data sets: the training pool (Xp, Wp), validation (Xv, Wv), calibration
    (Xc, Wc) and truth (Xt, Wt), with their propagation results and one core's seconds per
    truth run."""

    Xp: np.ndarray
    Wp: np.ndarray
    Xv: np.ndarray
    Wv: np.ndarray
    Xc: np.ndarray
    Wc: np.ndarray
    Xt: np.ndarray
    Wt: np.ndarray
    results: tuple
    truth_seconds: float

    def counts(self):
        """FE runs computed, loaded from the stores, and failed."""
        return (sum(r.computed for r in self.results), sum(r.loaded for r in self.results),
                sum(r.n_failed for r in self.results))

    def sha256(self):
        """A hash of the data the fits are trained and scored on."""
        return hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in (
            self.Xp, self.Wp, self.Xv, self.Wv, self.Xc, self.Wc))).hexdigest()


def fe_data(study, model, log):
    """Run (or load) the study's four FE data sets (:class:`FEData`)."""
    s = study.seed
    n_pool = max(max(study.train_sizes), study.n_uq_train)
    # a few extra runs, so that a pool run the solver rejects (p3 lies outside a membrane
    # narrower than 0.8, about 3 in 1e5 draws) does not shorten the training sets; the first
    # n_pool that succeed are used (the draws are row by row: the extra rows come last)
    Xp, Wp, pool_res = fe_dataset(study, "train-pool", n_pool + max(10, n_pool // 50),
                                  1000 * s + 1, model, log, need=n_pool)
    Xv, Wv, val_res = fe_dataset(study, "validation", study.n_validation, 1000 * s + 2, model,
                                 log, need=2)
    Xc, Wc, cal_res = fe_dataset(study, "calibration", study.n_calibration, 1000 * s + 6,
                                 model, log, need=2)
    Xt, Wt, truth_res = fe_dataset(study, "truth", study.n_truth, 1000 * s + 3, model, log,
                                   need=2)
    # one core's seconds per FE run: the median over the truth's chunks of the evaluation
    # times its store records (a worker's first chunk, with its imports, does not skew it)
    return FEData(Xp[:n_pool], Wp[:n_pool], Xv, Wv, Xc, Wc, Xt, Wt,
                  (pool_res, val_res, cal_res, truth_res), truth_res.seconds_per_run)


#: Training rows per Table-4 task: a size's fits (every prior and seed) are split into
#: batched programs of about this many rows in all (members x size), so that no task is much
#: longer than the rest (measured on 2 cores, one program per size: 7 s of CPU at 64 rows,
#: 17 s at 512, against 3-13 s for the other tasks), while small fits still share one program.
TABLE_TASK_ROWS = 1024


def table_parts(fits, size, rows=TABLE_TASK_ROWS):
    """``fits`` split into consecutive parts of ``max(1, rows // size)`` members.

    >>> [len(p) for p in table_parts(tuple(range(10)), 256)]
    [4, 4, 2]
    """
    per = max(1, rows // int(size))
    return [fits[i:i + per] for i in range(0, len(fits), per)]


def study_tasks(study, fe, fig_index, uq_paths):
    """The pool's tasks by name: per training size its Table-4 fits (every prior and seed, in
    batched programs of :data:`TABLE_TASK_ROWS` rows, :func:`table_parts`) and the GP, PCE and
    PR beside them; per prior its UQ fit (``uq-N-PRIOR-fit``, saved to ``uq_paths[PRIOR]``)
    and its surrogate Monte Carlo (``uq-N-PRIOR``), which loads that file and so runs after
    it (:func:`uq_order`); the FE mesh check and the Fig. 7a paths (a few seconds of FE solves
    each, beside the fits rather than after them in this process)."""
    s = study.seed
    tasks = {}
    for n in study.train_sizes:
        fits = tuple(Fit(f"table-{prior_name}-{n}-seed{k}", fe.Xp[:n], fe.Wp[:n], prior,
                         bdl_settings(n, study, 100 * s + k),
                         fig_index if (k == 0 and prior_name == "direct") else None)
                     for prior_name, prior in study.priors.items()
                     for k in range(study.n_seeds))
        for i, part in enumerate(table_parts(fits, n)):
            tasks[f"table-{n}-part{i}"] = TableTask(n, part, fe.Xv, fe.Wv, fe.Xc, fe.Wc)
        tasks[f"baselines-{n}"] = BaselineTask(n, fe.Xp[:n], fe.Wp[:n], fe.Xv, fe.Wv, s)
    n_uq = study.n_uq_train
    Xmc = sample(table3(), study.n_surrogate_mc, seed=1000 * s + 4).values
    for prior_name, prior in study.priors.items():
        fit = Fit(prior_name, fe.Xp[:n_uq], fe.Wp[:n_uq], prior,
                  bdl_settings(n_uq, study, 100 * s + 99), uq_paths[prior_name])
        tasks[f"uq-{n_uq}-{prior_name}-fit"] = UQFitTask(n_uq, (fit,))
    for prior_name in study.priors:
        tasks[f"uq-{n_uq}-{prior_name}"] = UQMonteCarloTask(n_uq, uq_paths[prior_name], Xmc,
                                                            fe.Wt)
    tasks["discretisation"] = DiscretisationTask(study.nx, study.ny)
    tasks["load-paths"] = LoadPathsTask(study.n_paths, 1000 * s + 5, nx=study.nx, ny=study.ny)
    return tasks


def uq_order(tasks):
    """``{Monte Carlo task: its fit's task}`` of the pool's ``tasks``
    (:func:`study_tasks`): each UQ surrogate's Monte Carlo loads the file its fit saves."""
    saves = {fit.extra: name for name, task in tasks.items() if isinstance(task, UQFitTask)
             for fit in task.fits}
    return {name: saves[task.path] for name, task in tasks.items()
            if isinstance(task, UQMonteCarloTask)}


@locked
def run(study, log=print):
    """Run the whole study; writes DIR/report.md, DIR/report.json and the PNGs; returns the
    report dict.

    Raises:
        StudyError: an FE data set came back with too few successful runs.
    """
    t_start = time.perf_counter()
    model = fe_model(study.nx, study.ny)
    fe = fe_data(study, model, log)
    t_fe = time.perf_counter() - t_start
    fig_index = int(np.argmin(np.abs(fe.Wv[:, 0] - np.median(fe.Wv[:, 0]))))
    cache = study_cache(study)
    # the fits are keyed by the very data they are trained and scored on, too
    settings = dict(fit_settings(study, model), data_sha256=fe.sha256())
    key = f"uq-{study.n_uq_train}"
    # the UQ surrogates, each saved as a file of the cache
    uq_paths = {prior_name: cache.path(f"uq-{prior_name}-{study.n_uq_train}",
                                       dict(settings, task=key), ".pt")
                for prior_name in study.priors}
    tasks = study_tasks(study, fe, fig_index, uq_paths)
    # the Monte Carlo's statistics depend on the truth and the number of inputs, too (a
    # larger Monte Carlo or truth reuses the fits)
    uq_extra = {"n_surrogate_mc": study.n_surrogate_mc, "truth_sha256": hashlib.sha256(
        np.ascontiguousarray(fe.Wt).tobytes()).hexdigest()}
    extra = {f"{key}-{prior_name}": uq_extra for prior_name in study.priors}
    # a Table-4 part is keyed by its fits too: another --n-seeds splits them otherwise, and a
    # cached part of other fits was loaded (a KeyError for the fit it lacked)
    extra.update({k: {"fits": [f.key for f in t.fits]} for k, t in tasks.items()
                  if isinstance(t, TableTask)})
    task_settings = {k: dict(settings, task=k, **extra.get(k, {})) for k in tasks}
    after = uq_order(tasks)
    for mc, fit in after.items():
        # a fit whose file is gone is made again, with its Monte Carlo, where that must run
        if not os.path.exists(tasks[mc].path) and cache.load(mc, task_settings[mc]) is None:
            cache.discard(fit, task_settings[fit])
    # largest first, so that the longest tasks do not start last (the FE tasks: last)
    order = sorted(tasks, key=lambda k: -tasks[k].size)
    with ReportDrafts(study, fe, fig_index, order) as drafts:
        t_pool = time.perf_counter()
        timed, computed = cached_map(
            timed_task, {k: (task_settings[k], tasks[k]) for k in order},
            cache, study.workers, study.progress, "train surrogates",
            on_result=lambda name, timed_result: drafts.take(name, timed_result["result"]),
            after=after, log=log)
        t_pool = time.perf_counter() - t_pool
        # what the drafts have not finished while the pool ran is serial, as it was before
        figures, stats_truth, strain = drafts.finish()
    groups = {k: v["result"] for k, v in timed.items()}
    log(f"surrogate fits: {computed} tasks trained, {len(tasks) - computed} loaded; "
        f"{t_pool:.1f} s")
    fits = {}
    for k, v in groups.items():
        if k.startswith("table-"):
            fits.update(v)
    uq = {}
    for prior_name in study.priors:
        fit_s = groups[f"{key}-{prior_name}-fit"]["fit_seconds"]
        uq[prior_name] = dict(groups[f"{key}-{prior_name}"], fit_seconds=fit_s)
        log(f"UQ surrogate ({prior_name}): fit {fit_s:.1f} s, {study.n_surrogate_mc} "
            f"predictions x 50 posterior draws in {uq[prior_name]['predict_seconds']:.1f} s "
            "on one core")

    report = _report(study, _table(fits, study), uq, fe, stats_truth, groups["discretisation"],
                     t_start)
    report["baselines"] = {name: {str(n): groups[f"baselines-{n}"][name]
                                  for n in study.train_sizes} for name in ("GP", "PCE", "PR")}
    report["fit_seconds"] = {
        "table": {str(n): sum(next(iter(v.values()))["group_fit_seconds"]
                              for k, v in groups.items() if k.startswith(f"table-{n}-part"))
                  for n in study.train_sizes},
        "uq": sum(uq[prior_name]["fit_seconds"] for prior_name in study.priors)}
    report["figures"] = figures
    # the whole study but the writing of its report files
    report["timings"]["total_seconds"] = time.perf_counter() - t_start
    # what runs in this process alone: set-up, the drafts left after the pool, the report
    serial = report["timings"]["total_seconds"] - t_fe - t_pool
    report["parallelism"] = dict(parallelism(
        {k: v["cpu_seconds"] for k, v in timed.items()},
        sum(res.compute_seconds for res in fe.results), serial, after),
        loaded=len(tasks) - computed)
    write_report(study, report, strain)
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
                          "coverage95_cal", "crps_cal", "variance_scale", "coverage95_prior",
                          "nll_prior", "prior_scale") if m in runs[0]}
    return out


def _report(study, table, uq, fe, stats_truth, discretisation, t_start):
    """The report's numbers: Table 4, the surrogate Monte Carlo against the FE truth (the
    truth's own statistics ``stats_truth``: :func:`studies.membrane.report.truth_statistics`),
    the FE runs and the timings."""
    primary = "hierarchical" if "hierarchical" in uq else next(iter(uq))
    uq_cmp = {pr: u["stats"] for pr, u in uq.items()}
    n_t = len(fe.Wt)
    truth_seconds = fe.truth_seconds
    fe_computed, fe_loaded, fe_failed = fe.counts()
    # FE cost on this study's cores: one core's seconds per run, perfectly parallel
    fe_per_1e5 = truth_seconds * 1e5 / study.workers if truth_seconds else None
    timings = {"fe_seconds_per_run": truth_seconds, "fe_truth_runs": n_t,
               "fe_seconds_per_1e5": fe_per_1e5, "total_seconds": time.perf_counter() - t_start}
    for prior_name, u in uq.items():
        # the prediction on the study's cores, from one core's time as for the FE
        sur = u["fit_seconds"] + (u["predict_seconds"] * 1e5 / study.n_surrogate_mc
                                  / study.workers)
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
        "discretisation": discretisation,
        "timings": timings,
    }
