"""The reliability study's computation: its tasks and :func:`run`.

Imports: numpy, uqkit, :mod:`studies.common` and the study's settings, tasks and report;
fem and surrogates inside the tasks that need them.
"""
import hashlib
import math
import time
import warnings
from dataclasses import asdict

import numpy as np

from uqkit import propagate
from uqkit.adapters import MembraneModel
from uqkit.presets import table3

from ..common import StudyError, code_version, fe_model, locked, study_cache
from .settings import METHODS, PROBES
from .report import _figures, _markdown

__all__ = ["DeflectionLimit", "fe_runs", "threshold_from_pilot", "bdl_surrogate", "run_method",
           "sobol_comparison", "run"]


class DeflectionLimit:
    """The limit state ``g(x) = w_p1(x) - threshold`` of the FE membrane (a uqkit model;
    length units of the inputs, w < 0 downward). Rows the solver rejects keep its status."""

    input_names = MembraneModel.input_names
    output_names = ("g",)

    def __init__(self, threshold, nx=20, ny=10):
        self.threshold = float(threshold)
        self.fe = fe_model(nx, ny)

    def __call__(self, X):
        w, status, reasons = self.fe(X)
        return w[:, 0] - self.threshold, status, reasons

    def describe(self):
        """The FE model's identity with the limit state and its threshold."""
        return dict(self.fe.describe(), limit_state="w_p1 - threshold",
                    threshold=self.threshold)


def _normal_points(n, d, seed):
    return np.random.default_rng(seed).standard_normal((n, d))


def fe_runs(study, name, U, model, log):
    """FE runs at the standard normal points U (mapped through Table 3's Rosenblatt
    transform), stored in the study's cache; returns the propagate result."""
    from uqkit.inputs.transforms import u_to_x
    from uqkit.inputs.sampling import Samples

    inputs = table3()
    X = u_to_x(inputs, U)
    settings = {"dataset": name, "n": len(U), "model": model.describe(),
                "inputs_sha256": hashlib.sha256(X.tobytes()).hexdigest()}
    res = propagate(model, Samples(X, inputs.names), workers=study.workers, dask=study.dask,
                    executor="dask" if study.dask else "local",
                    store=study_cache(study).path(f"fe-{name}", settings),
                    settings={"dataset": name}, progress=study.progress,
                    retry_failed="all" if study.retry_failed else "errors")
    log(f"FE {name}: {res.summary()}")
    return res


def threshold_from_pilot(w, q):
    """The q-quantile of the pilot's w(p1) and the 95% distribution-free interval of it (order
    statistics at the binomial 2.5% and 97.5% ranks)."""
    from scipy import stats

    w = np.sort(np.asarray(w, dtype=float))
    n = len(w)
    lo, hi = (int(r) for r in stats.binom.ppf([0.025, 0.975], n, q))
    return float(np.quantile(w, q)), (float(w[max(lo - 1, 0)]), float(w[min(hi, n - 1)]))


def bdl_surrogate(study):
    """The BDL of the active learning and of the surrogate's Sobol' indices:
    ``make_surrogate("bdl")``, the default trainer of the membrane study (MAP by full-batch
    L-BFGS, full-GGN linearised Laplace posterior) with two hidden layers of 32."""
    from uqkit.adapters import make_surrogate

    return make_surrogate("bdl", seed=study.seed, max_iter=study.max_iter)


def _method_options(study, name, candidates):
    if name == "is":
        return {"method": "is", "n": study.n_is}
    if name == "subset":
        return {"method": "subset", "n": study.n_subset}
    if name.startswith("active-"):
        kind = name.split("-")[1]
        surrogate = bdl_surrogate(study) if kind == "bdl" else kind
        return {"method": "active", "surrogate": surrogate, "candidates": candidates,
                "batch": 4, "max_runs": study.max_runs}
    return {"method": name}


def run_method(study, name, g, candidates, settings, log):
    """One method's result (a JSON-friendly dict), from the cache if it finished before."""
    from uqkit.reliability import failure_probability

    cache = study_cache(study)
    key = dict(settings, method=name)
    done = cache.load(f"method-{name}", key)
    if done is not None:
        log(f"{name}: loaded (Pf {done['pf']:.4g}, {done['model_runs']} runs)")
        return dict(done, loaded=True)
    options = _method_options(study, name, candidates)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = failure_probability(g, table3(), seed=study.seed + 17, workers=study.workers,
                                dask=study.dask, executor="dask" if study.dask else "local",
                                store=cache.path(f"runs-{name}", key), **options)
    messages = sorted({str(w.message) for w in caught
                       if issubclass(w.category, UserWarning)})
    for m in messages:
        log(f"{name}: warning: {m}")
    d = r.to_dict()
    out = {"pf": r.pf, "ci": None if not np.all(np.isfinite(r.ci)) else list(r.ci),
           "cov": d["cov"], "beta": d["beta"], "model_runs": r.model_runs,
           "seconds": r.seconds, "warnings": messages,
           "computed_runs": r.info.get("computed_runs")}
    if name in ("form", "sorm", "is"):
        out["design_point"] = d["design_point"]
        out["importance"] = d["importance"]
    if name == "sorm":
        out["pf_formulas"] = d["info"]["pf"]
        out["curvatures"] = d["info"]["curvatures"]
    if name.startswith("active-"):
        out["converged"] = bool(r.info["converged"])
        out["history"] = d["history"]
        out["iterations"] = r.info["iterations"]
    cache.save(f"method-{name}", key, out)
    log(f"{name}: Pf {r.pf:.4g}, {r.model_runs} runs, {r.seconds:.1f} s")
    return dict(out, loaded=False)


def sobol_comparison(study, model, log):
    """Sobol' indices of the three deflections: FE pick-freeze, a BDL's (with its epistemic
    band) and a PCE's on the BDL's training runs."""
    from uqkit.sensitivity import pce_indices, sobol_indices, sobol_indices_surrogate

    inputs = table3()
    cache = study_cache(study)
    settings = {"model": model.describe(), "n": study.n_sobol, "seed": study.seed}
    # the BDL is refitted on every run (seconds); its FE training runs are in a store
    t0 = time.perf_counter()
    fe = sobol_indices(model, inputs, n=study.n_sobol, seed=study.seed, workers=study.workers,
                       dask=study.dask, executor="dask" if study.dask else "local",
                       store=cache.path("fe-sobol", settings), progress=study.progress)
    fe_s = time.perf_counter() - t0
    log(f"Sobol' from FE: {fe.model_runs} runs, {fe_s:.1f} s")
    from scipy.stats import qmc

    from uqkit.inputs.transforms import unit_to_x
    from uqkit.inputs.sampling import Samples

    # a Latin hypercube in the unit cube of the Rosenblatt transform: the BDL trains on its
    # physical points, the PCE reads the same runs in the unit cube
    P = qmc.LatinHypercube(d=inputs.dim, seed=study.seed + 23).random(study.n_sobol_train)
    X = unit_to_x(inputs, P)
    key = {"dataset": "sobol-train", "model": model.describe(),
           "inputs_sha256": hashlib.sha256(X.tobytes()).hexdigest()}
    res = propagate(model, Samples(X, inputs.names), workers=study.workers, dask=study.dask,
                    executor="dask" if study.dask else "local",
                    store=cache.path("fe-sobol-train", key), settings={"dataset": "sobol"},
                    progress=study.progress)
    if res.n_failed:
        raise StudyError(f"{res.n_failed} of the Sobol' training runs failed: {res.summary()}")
    X, Y = res.inputs.values, res.outputs
    t0 = time.perf_counter()
    bdl = bdl_surrogate(study).fit(X, Y)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    sur = sobol_indices_surrogate(bdl, inputs, n=study.n_sobol_surrogate, seed=study.seed,
                                  function_draws=100)
    sur_s = time.perf_counter() - t0
    log(f"Sobol' from the BDL: fit {fit_s:.1f} s on {len(X)} runs, indices {sur_s:.1f} s")
    first, total, first_ci, total_ci, info = pce_indices(
        P, Y, inputs, bootstrap=200, rng=np.random.default_rng(study.seed))
    pce = {"first": first.tolist(), "total": total.tolist(), "first_ci": first_ci.tolist(),
           "total_ci": total_ci.tolist(), "order": info["order"],
           "loo_error": info["loo_error"], "training_runs": len(X)}
    return {"fe": dict(fe.to_dict(), seconds=fe_s),
            "bdl": dict(sur.to_dict(), fit_seconds=fit_s, seconds=sur_s,
                        training_runs=len(X)),
            "pce": pce}, (fe, sur)


@locked
def run(study, log=print):
    """Run the whole study; writes DIR/report.md, DIR/report.json and the PNGs; returns the
    report dict.

    Raises:
        StudyError: the pilot or the truth lost too many FE runs to go on.
    """
    t_start = time.perf_counter()
    model = fe_model(study.nx, study.ny)
    d = len(table3().names)
    s = study.seed
    pilot = fe_runs(study, "pilot", _normal_points(study.n_pilot, d, 1000 * s + 11), model, log)
    if pilot.n_failed > study.n_pilot * study.quantile / 10:
        raise StudyError(f"{pilot.n_failed} pilot runs failed ({pilot.summary()}): too many "
                         f"to place the {study.quantile} quantile")
    threshold, threshold_ci = threshold_from_pilot(pilot.outputs[pilot.ok, 0], study.quantile)
    log(f"threshold: w(p1) <= {threshold:.6g} (the {study.quantile} quantile of "
        f"{int(pilot.ok.sum())} pilot runs; 95% interval [{threshold_ci[0]:.6g}, "
        f"{threshold_ci[1]:.6g}])")
    U_truth = _normal_points(study.n_truth, d, 1000 * s + 12)
    truth_res = fe_runs(study, "truth", U_truth, model, log)
    truth = _truth(truth_res, threshold)
    log(f"truth: Pf {truth['pf']:.4g}, 95% CI [{truth['ci'][0]:.4g}, {truth['ci'][1]:.4g}], "
        f"{truth['model_runs']} runs")

    g = DeflectionLimit(threshold, study.nx, study.ny)
    settings = {"g": g.describe(), "seed": s, "n_is": study.n_is, "n_subset": study.n_subset,
                "max_runs": study.max_runs, "n_truth": study.n_truth,
                "max_iter": study.max_iter,
                "code": code_version(__package__, "uqkit.reliability"), "version": 1}
    methods = {}
    for name in METHODS:
        methods[name] = run_method(study, name, g, U_truth, settings, log)
    # their warnings (a PCE that does not resolve the model, intervals that may undercover)
    # reach the report, as the methods' do: they went to stderr alone
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sobol, results = sobol_comparison(study, model, log)
    sobol_warnings = sorted({str(w.message) for w in caught
                             if issubclass(w.category, UserWarning)})
    for m in sobol_warnings:
        log(f"Sobol': warning: {m}")
    report = _report(study, threshold, threshold_ci, truth, methods, sobol, truth_res, t_start)
    report["sobol"]["warnings"] = sobol_warnings
    report["figures"] = _figures(study, methods, truth, results)
    from ..common import write_reports

    write_reports(study.out, report, _markdown(report), log)
    return report


def _truth(res, threshold):
    from uqkit.reliability import clopper_pearson

    ok = res.ok
    fails = int(np.count_nonzero(res.outputs[ok, 0] <= threshold))
    n, lost = len(ok), int(np.count_nonzero(~ok))
    # a run the solver rejected may or may not have failed: the interval counts it both ways
    lo = clopper_pearson(fails, n)[0]
    hi = clopper_pearson(fails + lost, n)[1]
    pf = fails / (n - lost)
    return {"pf": pf, "ci": [lo, hi], "model_runs": n, "failures": fails, "lost_runs": lost,
            "cov": math.sqrt((1 - pf) / (n * pf)) if pf > 0 else None,
            "seconds_per_run": res.seconds_per_run}


def _report(study, threshold, threshold_ci, truth, methods, sobol, truth_res, t_start):
    pf_t = truth["pf"]
    for m in methods.values():
        m["relative_error"] = m["pf"] / pf_t - 1 if pf_t > 0 else None
        m["inside_truth_ci"] = bool(truth["ci"][0] <= m["pf"] <= truth["ci"][1])
        m["runs_fraction_of_truth"] = m["model_runs"] / truth["model_runs"]
    names = list(table3().names)
    compact = {k: {"first": v["first"], "total": v["total"], "first_ci": v.get("first_ci"),
                   "total_ci": v.get("total_ci"), **({"first_band": v["first_band"],
                                                      "total_band": v["total_band"]}
                                                     if "first_band" in v else {})}
               for k, v in sobol.items()}
    fe_first, fe_total = np.array(sobol["fe"]["first"]), np.array(sobol["fe"]["total"])
    diff = {k: {"first": float(np.max(np.abs(np.array(v["first"]) - fe_first))),
                "total": float(np.max(np.abs(np.array(v["total"]) - fe_total)))}
            for k, v in sobol.items() if k != "fe"}
    return {
        "settings": {k: v for k, v in asdict(study).items() if k != "progress"},
        "threshold": threshold,
        "threshold_choice": {"quantile": study.quantile, "pilot_runs": study.n_pilot,
                             "ci95": list(threshold_ci)},
        "truth": truth,
        "methods": methods,
        "sobol": {**compact, "inputs": names, "outputs": [f"w_{p}" for p in PROBES],
                  "max_abs_difference_from_fe": diff,
                  "fe_model_runs": sobol["fe"]["model_runs"],
                  "surrogate_training_runs": sobol["bdl"]["training_runs"],
                  "seconds": {"fe": sobol["fe"]["seconds"],
                              "bdl_fit": sobol["bdl"]["fit_seconds"],
                              "bdl_indices": sobol["bdl"]["seconds"]}},
        "fe_runs": {"failed_in_truth": truth["lost_runs"],
                    "computed_in_truth": truth_res.computed},
        "total_seconds": time.perf_counter() - t_start,
    }
