"""Membrane UQ study (paper example 3): Table-3 inputs -> FE training data -> BDL surrogates ->
surrogate Monte Carlo against an FE Monte Carlo ground truth.

The outputs are w at the paper's three probes taken as mesh points: fractions (0.5, 0.5),
(0.3, 0.2), (0.8, 0.8) of l and b, the nodes the paper's points p1, p2, p3 are on the nominal
2 x 1 membrane and 20 x 10 mesh (``probe_frame="relative"``). At fixed physical points a node
sweeps past each probe as l and b vary, which makes w only C0 in the inputs (a GP's R^2 drops
from 1.000000 at the nodes to 0.930-0.999: ``benchmarks/bench_probe_smoothness.py``), and p3
falls off a membrane narrower than 0.8.

Run it with ``uqkit study membrane --out DIR`` or :func:`run`. Every result lives in the
study's cache (``DIR/cache``, :class:`uqkit.execution.cache.ResultCache`) under a key of the settings
it depends on: each FE data set is a resumable study store there, each trained surrogate an
entry. An interrupted study resumes where it stopped, a finished one reruns without computing
a single FE run of its data sets or a fit (the report's few illustrative solves, the load
paths and the mesh-convergence check, are redone), and a run with other settings computes
what it lacks beside the old results.
"""
import hashlib
import math
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from fem.presets import PAPER_PROBES

from uqkit import propagate, sample
from uqkit.adapters import MembraneModel
from uqkit.execution.cache import cached_map
from uqkit.execution.executors import cpu_count
from uqkit.presets import table3
from uqkit.statistics import compare, describe, ks_statistic
from uqkit.validation import check_count

from .common import StudyError, code_version, locked, study_cache

#: The output names: the paper's probes, in order.
PROBES = tuple(PAPER_PROBES)
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
        paper: train with the paper's method and exact settings (mean-field VI, batch 16,
            200 ELBO samples) and use the paper's 5e5 truth.
        epochs: Adam epochs of ``--paper`` fits; max_iter: L-BFGS iterations of the default
            fits.
        workers: processes for FE runs and training; dask: a Dask scheduler address for the FE.
        nx, ny: the FE mesh (elements along l and b); the report gives its discretisation
            error at the mean inputs.
        retry_failed: also compute again the FE runs a store holds as failed by the solver
            (non-convergence); runs that raised are always computed again.
    """

    out: str
    seed: int = 0
    train_sizes: tuple = (64, 128, 256, 512)
    n_validation: int = 1000
    n_calibration: int = 500
    n_seeds: int = 5
    n_uq_train: int = 1000
    n_surrogate_mc: int = 100_000
    n_truth: int = 20_000
    paper: bool = False
    workers: int = None
    dask: str = None
    epochs: int = 1000
    max_iter: int = 2000
    n_paths: int = 30
    nx: int = 20
    ny: int = 10
    progress: bool = True
    priors: dict = field(default_factory=lambda: dict(PRIORS))
    retry_failed: bool = False

    def __post_init__(self):
        for name in ("n_validation", "n_calibration", "n_seeds", "n_uq_train", "n_surrogate_mc",
                     "n_truth", "epochs", "max_iter"):
            check_count(getattr(self, name), name)
        if not self.train_sizes or any(int(n) < 8 for n in self.train_sizes):
            raise ValueError(f"train_sizes must be integers >= 8, got {self.train_sizes!r}")
        self.train_sizes = tuple(sorted(int(n) for n in self.train_sizes))
        if self.paper:
            self.n_truth = max(self.n_truth, 500_000)
        self.workers = cpu_count() if self.workers is None else int(self.workers)
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got workers={self.workers}")
        MembraneModel(nx=self.nx, ny=self.ny)  # the mesh, validated now
        if discretisation_levels(self.nx, self.ny) < 3:
            raise ValueError(f"a {self.nx} x {self.ny} mesh refined twice (for its "
                             "discretisation error) does not fit in this machine's memory; "
                             "use a coarser --nx/--ny")


def discretisation_levels(nx, ny):
    """Meshes (4, else 3) for :func:`discretisation_error` whose finest fits in memory; fewer
    than 3 if not even that does."""
    from fem import MEMORY_SHARE, physical_memory_bytes, solver_memory_bytes

    have = physical_memory_bytes()
    for levels in (4, 3):
        f = 2 ** (levels - 1)
        if have is None or solver_memory_bytes(nx * f, ny * f) <= MEMORY_SHARE * have:
            return levels
    return 0


def discretisation_error(nx, ny):
    """The FE mesh's own error at the mean inputs: w on the study's mesh (nx x ny elements) and
    on meshes refined by 2 (four, or three if four do not fit in memory), Richardson-
    extrapolated (:func:`fem.convergence`). Returns per probe the mesh value, the limit, the
    relative error, the observed order and whether it has settled."""
    from fem import Membrane, convergence

    mean = dict(zip(table3().names, table3().mean()))
    c = convergence(Membrane(**mean, nx=nx, ny=ny, probe_frame="relative"),
                    levels=discretisation_levels(nx, ny))
    return {"meshes": c.meshes, **{
        p: {"w": c.values[p][0], "limit": c.extrapolated[p],
            "relative_error": c.relative_error(p), "order": c.order[p],
            "asymptotic": c.asymptotic[p]} for p in PROBES}}


def bdl_settings(n, study, seed):
    """BDL constructor arguments for a training set of n rows.

    Default: the MAP network trained to convergence by full-batch L-BFGS (float64, noise
    precision held at noise std 0.1 (standardised units) for the first half of the iterations,
    then learned; ``max_iter`` iterations in all) and the full-GGN linearised Laplace posterior
    about it (``inference="laplace"``), whose prior precision per parameter tensor and noise
    precision per output maximise the Laplace evidence (``laplace_prior_scale="evidence"``).
    Fits of one size train as one batched program (:func:`surrogates.fit_many`).

    ``--paper``: the paper's method and settings: mean-field VI by Adam, lr 0.005 x 0.75 every
    100 epochs, ``epochs`` epochs, batch 16, 200 ELBO samples, from a small posterior standard
    deviation (1e-5).
    """
    common = dict(hidden=(30, 15, 10), activation="tanh", seed=seed, num_threads=1,
                  predict_samples=200, progress=False)
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
                    settings={"dataset": name, "seed": seed}, progress=study.progress,
                    retry_failed="all" if study.retry_failed else "errors")
    log(f"FE {name}: {res.summary()}")
    ok = res.ok
    if ok.sum() < need:
        reasons = "; ".join(f"{c} x {r}" for r, c in res.failures().most_common(3))
        raise StudyError(f"FE data set {name!r}: only {int(ok.sum())} of {n} runs succeeded "
                         f"and the study needs {need}; stopping ({reasons})")
    return res.inputs.values[ok], res.outputs[ok], res


# -- training ----------------------------------------------------------------------------------
def _interval_scores(pred, Yv):
    """NLL, raw 95% coverage and CRPS per output of a predictive distribution on (Xv, Yv)."""
    from surrogates import metrics as M

    lo, hi = pred.intervals[0.95]
    return {"nll": M.gaussian_nll(Yv, pred.mean, pred.total_var).tolist(),
            "coverage95": M.coverage(Yv, lo, hi).tolist(),
            "crps": M.crps_gaussian(Yv, pred.mean, pred.total_var).tolist()}


def _metrics(model, Xv, Yv, Xc, Yc, fig_index):
    """Validation metrics of a fitted BDL, raw and after recalibrating its variance on the
    calibration runs."""
    from surrogates import metrics as M

    pred = model.predict_distribution(Xv, levels=(0.95,))
    out = {"r2": M.r2(Yv, pred.mean).tolist(), "rmse": M.rmse(Yv, pred.mean).tolist(),
           **_interval_scores(pred, Yv), "noise_std": np.sqrt(pred.aleatoric_var[0]).tolist(),
           "fit_seconds": model.fit_seconds_}
    model.calibrate(Xc, Yc)
    # the recalibrated predictive is the raw one spread by the scale: no second prediction
    cal = _interval_scores(pred.rescaled(model.variance_scale_), Yv)
    out.update({f"{k}_cal": v for k, v in cal.items()})
    out["variance_scale"] = model.variance_scale_.tolist()
    model.variance_scale_ = None
    if fig_index is not None:
        one = model.predict_distribution(Xv[fig_index:fig_index + 1], n_samples=2000,
                                         return_samples=True, levels=())
        rng = np.random.default_rng(0)
        draws = one.samples[:, 0, 0] + rng.normal(0, math.sqrt(one.aleatoric_var[0, 0]), 2000)
        out["fig7c_w_p1"] = draws.tolist()
    return out


def _fit_members(members):
    """Fit the BDLs of ``members`` ((tag, X, Y, prior, settings, extra) each) with
    :func:`surrogates.fit_many`, one batched program where their settings allow; returns the
    fitted models and the wall time (runs in a worker process)."""
    import torch

    from surrogates import BDL, fit_many

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    models = fit_many([BDL(prior=prior, **kw) for _, _, _, prior, kw, _ in members],
                      [(X, Y) for _, X, Y, _, _, _ in members])
    return models, time.perf_counter() - t0


def _prior_precision_metrics(model, X, Y, Xv, Yv):
    """Ablation of the evidence step: the same MAP network's Laplace posterior with the prior's
    own precision and the MAP's noise (``laplace_prior_scale=1``), scored like the fit."""
    import copy

    import torch

    from surrogates.laplace import fit as laplace_fit
    from surrogates.priors import make_prior

    post = model.laplace_
    raw = copy.copy(model)
    raw.laplace_ = laplace_fit.posterior(
        model.net_, post.w, torch.as_tensor(model.x_scaler_.transform(X), dtype=torch.float64),
        torch.as_tensor(model.y_scaler_.transform(Y), dtype=torch.float64), "regression",
        make_prior(model.prior), post.map_log_tau, 1.0)
    scores = _interval_scores(raw.predict_distribution(Xv, levels=(0.95,)), Yv)
    return {"coverage95_prior": scores["coverage95"], "nll_prior": scores["nll"]}


def _table_task(task):
    """Train the fits of one training size (every prior and seed) as one batched program and
    score each on the validation set; returns {key: metrics}."""
    members, Xv, Yv, Xc, Yc = task
    models, seconds = _fit_members(members)
    out = {}
    for (key, X, Y, _, _, fig_index), model in zip(members, models):
        out[key] = _metrics(model, Xv, Yv, Xc, Yc, fig_index)
        out[key]["group_fit_seconds"] = seconds
        if hasattr(model, "laplace_"):
            out[key].update(_prior_precision_metrics(model, X, Y, Xv, Yv))
            out[key]["prior_scale"] = model.history_["prior_scale"]
    return out


def _baseline_task(task):
    """GP, PCE (order 3) and cubic PR on one training size, scored like the BDL."""
    from surrogates import GaussianProcess, PolynomialChaos, PolynomialRegression
    from surrogates import metrics as M

    X, Y, Xv, Yv, seed = task
    out = {}
    for name, model in (("GP", GaussianProcess(seed=seed)),
                        ("PCE", PolynomialChaos(order=3, distribution=table3().joint)),
                        ("PR", PolynomialRegression(degree=3))):
        t0 = time.perf_counter()
        model.fit(X, Y)
        entry = {"fit_seconds": time.perf_counter() - t0}
        if name == "GP":
            pred = model.predict_distribution(Xv)
            lo, hi = pred.intervals[0.95]
            entry.update(r2=M.r2(Yv, pred.mean).tolist(),
                         coverage95=M.coverage(Yv, lo, hi).tolist())
        else:
            entry.update(r2=M.r2(Yv, model.predict(Xv)).tolist(), coverage95=None)
        out[name] = entry
    return out


def _uq_task(task):
    """Train the UQ surrogates (one per prior) as one batched program and save each to its
    path; then each one's surrogate Monte Carlo: its predictive mean and 50 posterior function
    draws at the inputs ``Xmc``, on one core (``predict_seconds``), and their statistics against
    the FE truth ``Wt`` (:func:`_uq_statistics`)."""
    members, Xmc, Wt = task
    models, seconds = _fit_members(members)
    out = {"fit_seconds": seconds, "priors": {}}
    for (name, _, _, _, _, path), model in zip(members, models):
        model.save(path)
        t0 = time.perf_counter()
        pred = model.predict_distribution(Xmc, n_samples=50, return_samples=True, levels=())
        predict_s = time.perf_counter() - t0
        out["priors"][name] = {"predict_seconds": predict_s, **_uq_statistics(pred, Wt)}
    return out


def _uq_statistics(pred, Wt):
    """Per output: the distribution of a surrogate's predictive means (``pred.mean``) and its
    distances to the FE truth ``Wt``, the 95% band of the mean, std and KS statistic over its
    posterior function draws (``pred.samples``, the KS over the first 20), and the curves of
    Fig. 8 (:func:`studies.membrane_report.surrogate_densities`)."""
    from .membrane_report import kde_grid, surrogate_densities

    stats, curves = {}, {}
    for j, p in enumerate(PROBES):
        mean, draws = pred.mean[:, j], pred.samples[:, :, j]
        band = {"mean": np.quantile(draws.mean(1), [0.025, 0.975]).tolist(),
                "std": np.quantile(draws.std(1), [0.025, 0.975]).tolist(),
                "ks": np.quantile([ks_statistic(dr, Wt[:, j]) for dr in draws[:20]],
                                  [0.025, 0.975]).tolist()}
        stats[p] = {"surrogate": describe(mean, quantiles=(0.01, 0.5, 0.99), n_boot=50),
                    "comparison": compare(mean, Wt[:, j]), "posterior_band": band}
        curves[p] = surrogate_densities(mean, draws, kde_grid(Wt[:, j]))
    return {"stats": stats, "kde": curves}


def _load_paths_task(task):
    """The FE load paths of Fig. 7a: ``n_paths`` random inputs (seed ``seed``), 60 increments
    each; per converged path the probes' deflections w (increments x probes) and the
    pressures p (increments), in the FE units."""
    from fem import Membrane

    n_paths, seed = task
    out = []
    for row in sample(table3(), n_paths, seed=seed).values:
        r = Membrane(*row, probe_frame="relative").solve(increments=60)
        if r.converged:
            out.append({"probes": list(r.probes), "w": r.path_w.tolist(),
                        "pressure": (r.path_load * r.membrane.p).tolist()})
    return out


def _train(task):
    """One task of the study's pool: Table-4 fits of one size, their baselines, the UQ fits,
    the FE discretisation check or the Fig. 7a load paths; on one BLAS thread, as pool
    workers are (:func:`uqkit.execution.executors.local_executor`), also when the study runs in this
    process (``workers=1``), so that no result depends on the worker count."""
    from threadpoolctl import threadpool_limits

    kind, payload = task
    with threadpool_limits(1):
        return {"table": _table_task, "baselines": _baseline_task, "uq": _uq_task,
                "discretisation": lambda nxy: discretisation_error(*nxy),
                "load_paths": _load_paths_task}[kind](payload)


def fit_settings(study, model):
    """What the surrogate fits depend on: the FE model and data sets behind them and the
    training settings. A fit made with other settings is another cache entry, so changing,
    say, ``epochs`` retrains while the FE runs are reused."""
    n_pool = max(max(study.train_sizes), study.n_uq_train)
    return {"seed": study.seed, "epochs": study.epochs, "paper": study.paper,
            "n_pool": n_pool, "n_validation": study.n_validation,
            "n_calibration": study.n_calibration, "priors": study.priors,
            "max_iter": study.max_iter, "model": model.describe(),
            "code": code_version(__name__), "fit_version": 6}


# -- the study ---------------------------------------------------------------------------------
@locked
def run(study, log=print):
    """Run the whole study; writes DIR/report.md, DIR/report.json and the PNGs; returns the
    report dict.

    Raises:
        StudyError: an FE data set came back with too few successful runs.
    """
    t_start = time.perf_counter()
    model = MembraneModel(nx=study.nx, ny=study.ny, probe_frame="relative")
    s = study.seed
    n_pool = max(max(study.train_sizes), study.n_uq_train)
    # a few extra runs, so that a pool run the solver rejects (p3 lies outside a membrane
    # narrower than 0.8, about 3 in 1e5 draws) does not shorten the training sets; the first
    # n_pool that succeed are used (the draws are row by row: the extra rows come last)
    Xp, Wp, pool_res = fe_dataset(study, "train-pool", n_pool + max(10, n_pool // 50),
                                  1000 * s + 1, model, log, need=n_pool)
    Xp, Wp = Xp[:n_pool], Wp[:n_pool]
    Xv, Wv, val_res = fe_dataset(study, "validation", study.n_validation, 1000 * s + 2, model,
                                 log, need=2)
    Xc, Wc, cal_res = fe_dataset(study, "calibration", study.n_calibration, 1000 * s + 6,
                                 model, log, need=2)
    Xt, Wt, truth_res = fe_dataset(study, "truth", study.n_truth, 1000 * s + 3, model, log,
                                   need=2)
    # one core's seconds per FE run, from the evaluation times the truth's store records
    truth_seconds = truth_res.compute_seconds / len(truth_res.status)
    fe_results = (pool_res, val_res, cal_res, truth_res)
    fe_computed = sum(r.computed for r in fe_results)
    fe_loaded = sum(r.loaded for r in fe_results)
    fe_failed = sum(r.n_failed for r in fe_results)

    # Table-4 comparison: one task per training size, its fits (every prior and seed)
    # trained as one batched program; the GP, PCE and PR on the same data beside them
    fig_index = int(np.argmin(np.abs(Wv[:, 0] - np.median(Wv[:, 0]))))
    tasks = {}
    for n in study.train_sizes:
        members = []
        for prior_name, prior in study.priors.items():
            for k in range(study.n_seeds):
                members.append((f"table-{prior_name}-{n}-seed{k}", Xp[:n], Wp[:n], prior,
                                bdl_settings(n, study, 100 * s + k),
                                fig_index if (k == 0 and prior_name == "direct") else None))
        tasks[f"table-{n}"] = ("table", (members, Xv, Wv, Xc, Wc))
        tasks[f"baselines-{n}"] = ("baselines", (Xp[:n], Wp[:n], Xv, Wv, s))
    cache = study_cache(study)
    # the fits are keyed by the very data they are trained and scored on, too
    data = hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes()
                                   for a in (Xp, Wp, Xv, Wv, Xc, Wc))).hexdigest()
    settings = dict(fit_settings(study, model), data_sha256=data)
    # the UQ surrogates on n_uq_train runs, each saved as a file of the cache, and their
    # surrogate Monte Carlo against the truth (in the pool, beside the other fits)
    key = f"uq-{study.n_uq_train}"
    Xmc = sample(table3(), study.n_surrogate_mc, seed=1000 * s + 4).values
    uq_paths = {}
    members = []
    for prior_name, prior in study.priors.items():
        uq_paths[prior_name] = cache.path(f"uq-{prior_name}-{study.n_uq_train}",
                                          dict(settings, task=key), ".pt")
        members.append((prior_name, Xp[:study.n_uq_train], Wp[:study.n_uq_train], prior,
                        bdl_settings(study.n_uq_train, study, 100 * s + 99),
                        uq_paths[prior_name]))
    tasks[key] = ("uq", (members, Xmc, Wt))
    # the Monte Carlo's statistics depend on the truth and the number of inputs, too
    extra = {key: {"n_surrogate_mc": study.n_surrogate_mc, "truth_sha256": hashlib.sha256(
        np.ascontiguousarray(Wt).tobytes()).hexdigest()}}
    # the FE mesh check and the Fig. 7a paths (a few seconds of FE solves each) run beside
    # the fits rather than after them in this process
    tasks["discretisation"] = ("discretisation", (study.nx, study.ny))
    tasks["load-paths"] = ("load_paths", (study.n_paths, 1000 * s + 5))
    # largest first, so that the longest tasks do not start last (the FE tasks: last)
    order = sorted(tasks, key=lambda k: -int(k.split("-")[-1]) if k[-1].isdigit() else 0)
    groups, computed = cached_map(
        _train, {k: (dict(settings, task=k, **extra.get(k, {})), tasks[k]) for k in order},
        cache,
        study.workers, study.progress, "train surrogates")
    log(f"surrogate fits: {computed} tasks trained, {len(tasks) - computed} loaded")
    fits = {}
    for k, v in groups.items():
        if k.startswith("table-"):
            fits.update(v)
    baselines = {n: groups[f"baselines-{n}"] for n in study.train_sizes}
    table = _table(fits, study)

    uq = {}
    for prior_name in study.priors:
        fit_s = groups[key]["fit_seconds"] / len(study.priors)
        uq[prior_name] = dict(groups[key]["priors"][prior_name], fit_seconds=fit_s)
        log(f"UQ surrogate ({prior_name}): fit {fit_s:.1f} s, {study.n_surrogate_mc} "
            f"predictions x 50 posterior draws in {uq[prior_name]['predict_seconds']:.1f} s "
            "on one core")

    report = _report(study, table, uq, Wt, fits, fig_index, Xv, Wv, fe_computed, fe_loaded,
                     fe_failed, truth_seconds, t_start, groups["discretisation"])
    report["baselines"] = {name: {str(n): baselines[n][name] for n in study.train_sizes}
                           for name in ("GP", "PCE", "PR")}
    report["fit_seconds"] = {"table": {str(n): next(iter(groups[f"table-{n}"].values()))[
        "group_fit_seconds"] for n in study.train_sizes}, "uq": groups[key]["fit_seconds"]}
    from .membrane_report import figures, write_report

    report["figures"] = figures(study, uq, Wt, Wv, fits, fig_index, groups["load-paths"])
    # the whole study but the writing of its report files
    report["timings"]["total_seconds"] = time.perf_counter() - t_start
    write_report(study, report)
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


def _report(study, table, uq, Wt, fits, fig_index, Xv, Wv, fe_computed, fe_loaded, fe_failed,
            truth_seconds, t_start, discretisation):
    from concurrent.futures import ThreadPoolExecutor

    primary = "hierarchical" if "hierarchical" in uq else next(iter(uq))

    def truth_stats(j):
        return describe(Wt[:, j], quantiles=(0.01, 0.5, 0.99), n_boot=50)

    # each statistic is its own computation (its own bootstrap seeds), mostly numpy sorts
    # that release the GIL: on every core at once, with the same results (the surrogates'
    # were made in their task, see _uq_statistics)
    with ThreadPoolExecutor(max_workers=study.workers) as ex:
        stats_truth = dict(zip(PROBES, ex.map(truth_stats, range(len(PROBES)))))
    uq_cmp = {pr: u["stats"] for pr, u in uq.items()}
    n_t = len(Wt)
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
