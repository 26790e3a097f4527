"""The membrane study's tasks, each run in the pool: the Table-4 fits of one size, their
baselines, the UQ fits and, after each, its surrogate Monte Carlo, the FE discretisation
check and the Fig. 7a load paths.

Imports: numpy, uqkit and the study's settings; fem and surrogates inside the tasks.
"""
import math
import time
from dataclasses import dataclass

import numpy as np

from uqkit import sample
from uqkit.presets import table3
from uqkit.statistics import compare, describe, kde, ks_statistic

from .settings import PROBES, discretisation_levels

__all__ = ["Fit", "TableTask", "BaselineTask", "UQFitTask", "UQMonteCarloTask",
           "DiscretisationTask", "LoadPathsTask", "discretisation_error", "table_task",
           "baseline_task", "uq_fit_task", "uq_monte_carlo_task", "load_paths_task",
           "RUNNERS", "run_task", "timed_task", "parallelism", "kde_grid", "surrogate_densities"]


@dataclass(frozen=True)
class Fit:
    """One BDL to fit: its ``key`` (a Table-4 cell's name or the UQ prior's), training data X
    (n, 5) and Y (n, 3), ``prior`` spec, constructor ``settings``, and ``extra``: the
    validation row whose predictive Fig. 7c draws (Table 4), or the path to save it to (UQ)."""

    key: str
    X: np.ndarray
    Y: np.ndarray
    prior: str
    settings: dict
    extra: object = None


@dataclass(frozen=True)
class TableTask:
    """The Table-4 fits of one training size, scored on validation (Xv, Yv) and
    recalibrated on (Xc, Yc)."""

    size: int
    fits: tuple
    Xv: np.ndarray
    Yv: np.ndarray
    Xc: np.ndarray
    Yc: np.ndarray


@dataclass(frozen=True)
class BaselineTask:
    """GP, PCE and PR on one training size, scored on (Xv, Yv)."""

    size: int
    X: np.ndarray
    Y: np.ndarray
    Xv: np.ndarray
    Yv: np.ndarray
    seed: int


@dataclass(frozen=True)
class UQFitTask:
    """A UQ surrogate's fit (``fits``: one :class:`Fit`, its ``extra`` the path to save the
    fitted model to)."""

    size: int
    fits: tuple


@dataclass(frozen=True)
class UQMonteCarloTask:
    """The surrogate Monte Carlo of the UQ surrogate saved at ``path`` (by its
    :class:`UQFitTask`, which must run first) at the inputs Xmc, against the FE truth Wt."""

    size: int
    path: str
    Xmc: np.ndarray
    Wt: np.ndarray


@dataclass(frozen=True)
class DiscretisationTask:
    """The FE mesh's error at the mean inputs (:func:`discretisation_error`)."""

    nx: int
    ny: int
    size: int = 0


@dataclass(frozen=True)
class LoadPathsTask:
    """The Fig. 7a load paths of ``n_paths`` random inputs drawn with ``seed``, on the study's
    nx x ny mesh."""

    n_paths: int
    seed: int
    size: int = 0
    nx: int = 20
    ny: int = 10


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
    """Fit the BDLs of ``members`` (:class:`Fit` each) with :func:`surrogates.fit_many`, one
    batched program where their settings allow; returns the fitted models and the wall time
    (runs in a worker process)."""
    import torch

    from surrogates import BDL, fit_many

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    models = fit_many([BDL(prior=m.prior, **m.settings) for m in members],
                      [(m.X, m.Y) for m in members])
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


def table_task(task):
    """Train the fits of one :class:`TableTask` (some priors and seeds of one training size)
    as one batched program and score each on the validation set; returns {key: metrics}."""
    models, seconds = _fit_members(task.fits)
    out = {}
    for fit, model in zip(task.fits, models):
        out[fit.key] = _metrics(model, task.Xv, task.Yv, task.Xc, task.Yc, fit.extra)
        out[fit.key]["group_fit_seconds"] = seconds
        if model.engine_.name == "laplace":
            out[fit.key].update(_prior_precision_metrics(model, fit.X, fit.Y, task.Xv,
                                                         task.Yv))
            out[fit.key]["prior_scale"] = model.history_["prior_scale"]
    return out


def baseline_task(task):
    """GP, PCE (order 3) and cubic PR on one training size (:class:`BaselineTask`), scored
    like the BDL."""
    from surrogates import GaussianProcess, PolynomialChaos, PolynomialRegression
    from surrogates import metrics as M

    X, Y, Xv, Yv, seed = task.X, task.Y, task.Xv, task.Yv, task.seed
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


def uq_fit_task(task):
    """Train the UQ surrogates of ``task.fits`` (the study gives one per task) as one batched
    program and save each to its path (``Fit.extra``); returns the fit's wall time,
    ``{"fit_seconds": ...}``."""
    models, seconds = _fit_members(task.fits)
    for fit, model in zip(task.fits, models):
        model.save(fit.extra)
    return {"fit_seconds": seconds}


def uq_monte_carlo_task(task):
    """The surrogate Monte Carlo of the UQ surrogate saved at ``task.path``: its predictive
    mean and 50 posterior function draws at the inputs ``Xmc``, on one core
    (``predict_seconds``), and their statistics against the FE truth ``Wt``
    (``_uq_statistics``). A model loaded from its file predicts bit for bit as the
    fitted one, its posterior draws included (``tests/surrogates/laplace/test_fit.py``)."""
    import torch

    from surrogates import BDL

    torch.set_num_threads(1)
    model = BDL.load(task.path)
    t0 = time.perf_counter()
    pred = model.predict_distribution(task.Xmc, n_samples=50, return_samples=True, levels=())
    predict_s = time.perf_counter() - t0
    return {"predict_seconds": predict_s, **_uq_statistics(pred, task.Wt)}


def _uq_statistics(pred, Wt):
    """Per output: the distribution of a surrogate's predictive means (``pred.mean``) and its
    distances to the FE truth ``Wt``, the 95% band of the mean, std and KS statistic over its
    posterior function draws (``pred.samples``, the KS over the first 20), and the curves of
    Fig. 8 (:func:`surrogate_densities`)."""
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


def load_paths_task(task):
    """The FE load paths of Fig. 7a: ``n_paths`` random inputs (seed ``seed``), 60 increments
    each, on the task's mesh (the default 20 x 10 whatever the study's, before); per converged
    path the probes' deflections w (increments x probes) and the pressures p (increments), in
    the FE units."""
    from fem import Membrane

    n_paths, seed = task.n_paths, task.seed
    out = []
    for row in sample(table3(), n_paths, seed=seed).values:
        r = Membrane(*row, nx=task.nx, ny=task.ny, probe_frame="relative").solve(increments=60)
        if r.converged:
            out.append({"probes": list(r.probes), "w": r.path_w.tolist(),
                        "pressure": (r.path_load * r.membrane.p).tolist()})
    return out


#: What each kind of task computes.
RUNNERS = {TableTask: table_task, BaselineTask: baseline_task, UQFitTask: uq_fit_task,
           UQMonteCarloTask: uq_monte_carlo_task,
           DiscretisationTask: lambda task: discretisation_error(task.nx, task.ny),
           LoadPathsTask: load_paths_task}


def run_task(task):
    """One task of the study's pool, on one BLAS thread, as pool workers are
    (:func:`uqkit.execution.executors.local_executor`), also when the study runs in this
    process (``workers=1``), so that no result depends on the worker count."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return RUNNERS[type(task)](task)


def timed_task(task):
    """:func:`run_task` with its cost: ``{"result": ..., "seconds": wall, "cpu_seconds": this
    process's CPU time}`` (seconds, measured in the worker that ran it)."""
    t0, c0 = time.perf_counter(), time.process_time()
    result = run_task(task)
    return {"result": result, "seconds": time.perf_counter() - t0,
            "cpu_seconds": time.process_time() - c0}


def parallelism(task_seconds, fe_cpu_seconds, serial_seconds, after=None):
    """How far the study could speed up on unlimited workers: its parallel work (the tasks'
    CPU seconds, each task on one thread, and the FE runs' summed evaluation seconds, each FE
    run a fraction of a second and so divisible at will) over its critical path (the longest
    chain of tasks, each after the one it needs, ``after``: ``{task: prerequisite}``, plus
    the serial parts, which run in the main process alone). CPU seconds, not wall: a task's
    wall time grows when other work shares the cores, its CPU time hardly.

    >>> parallelism({"a": 6.0, "b": 2.0}, 6.0, 1.0)["ideal_speedup"]  # 14 s over 6 + 1 s
    2.0
    >>> p = parallelism({"a": 6.0, "b": 2.0, "c": 5.0}, 0.0, 1.0, after={"c": "b"})
    >>> p["critical_path"], p["critical_path_seconds"], p["ideal_speedup"]  # 13 s / (7 + 1 s)
    (['b', 'c'], 7.0, 1.625)
    >>> parallelism({"a": 6.0, "b": 2.0, "c": 5.0}, 0.0, 1.0, after={"c": ("b", "a")})[
    ...     "critical_path"]
    ['a', 'c']
    """
    after = {k: (v,) if isinstance(v, str) else tuple(v or ()) for k, v in (after or {}).items()}
    chains = {}

    def seconds(names):
        return sum(task_seconds[n] for n in names)

    def chain(name):  # the longest chain of tasks ending with ``name``
        if name not in chains:
            before = [chain(b) for b in after.get(name, ()) if b in task_seconds]
            chains[name] = max(before, key=seconds, default=[]) + [name]
        return chains[name]

    work = sum(task_seconds.values()) + fe_cpu_seconds
    longest = max(task_seconds, key=task_seconds.get)
    critical = max((chain(name) for name in task_seconds), key=seconds)
    return {"task_seconds": sum(task_seconds.values()), "fe_cpu_seconds": fe_cpu_seconds,
            "longest_task": longest, "longest_task_seconds": task_seconds[longest],
            "critical_path": critical, "critical_path_seconds": seconds(critical),
            "serial_seconds": serial_seconds,
            "ideal_speedup": work / (seconds(critical) + serial_seconds)}


def kde_grid(w):
    """Fig. 8's abscissae for one output: 300 points over the FE truth sample ``w``'s
    0.05-99.95% range, 5% of it either side (length units)."""
    lo_x, hi_x = np.quantile(w, [0.0005, 0.9995])
    pad = 0.05 * (hi_x - lo_x)
    return np.linspace(lo_x - pad, hi_x + pad, 300)


def surrogate_densities(mean, draws, grid):
    """Fig. 8's curves of one surrogate and output on ``grid``: the KDE of its predictive means
    (n,) and the 2.5-97.5% band of the KDEs of its first 20 posterior function draws (S, n)."""
    dens = np.array([kde(d, grid)[1] for d in draws[:20]])
    lo, hi = np.quantile(dens, [0.025, 0.975], axis=0)
    return {"mean": kde(mean, grid)[1].tolist(), "band": [lo.tolist(), hi.tolist()]}
