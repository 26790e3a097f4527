"""The calibration study's computation: its tasks and :func:`run`.

Imports: numpy, uqkit, :mod:`studies.common` and the study's settings, tasks and report;
fem and surrogates inside the tasks that need them.
"""
import os
import time
from dataclasses import asdict

import numpy as np

from ..common import fe_model, locked, study_cache
from .settings import CONTROL, VARIANTS
from .report import _figure, _markdown

__all__ = ["measurements", "compare", "run"]


def measurements(study, model, inputs):
    """The true inputs (1, 5), the noise's standard deviations (3,) and the measurements
    (m, 3): the FE deflections at the truth plus seeded Gaussian noise."""
    from uqkit import sample

    truth = sample(inputs, 1, seed=study.seed).values
    w, status, reasons = model(truth)
    if status[0] != 0:
        raise RuntimeError(f"the FE model failed at the true inputs: {reasons[0]}")
    noise_std = study.noise * np.abs(w[0])
    rng = np.random.default_rng([study.seed, 1])
    observed = w[0] + rng.standard_normal((study.n_measurements, w.shape[1])) * noise_std
    return truth, noise_std, observed


def compare(post, reference, truth):
    """Per parameter: mean difference and std ratio in units of the reference's std, the
    1-D Wasserstein distance in the same units, the 95% interval and whether it holds the
    truth."""
    from scipy.stats import wasserstein_distance

    out = {}
    ref_mean, ref_std = reference.mean(), reference.std()
    lo, hi = post.interval()
    for j, name in enumerate(post.names):
        out[name] = {
            "mean": float(post.mean()[j]), "std": float(post.std()[j]),
            "mean_shift_in_std": float((post.mean()[j] - ref_mean[j]) / ref_std[j]),
            "std_ratio": float(post.std()[j] / ref_std[j]),
            "wasserstein_in_std": float(wasserstein_distance(
                post.samples[:, j], reference.samples[:, j]) / ref_std[j]),
            "interval_95": [float(lo[j]), float(hi[j])],
            "holds_truth": bool(lo[j] <= truth[j] <= hi[j])}
    return out


def _product(post, a="E", b="t"):
    """Draws of the product of two parameters."""
    return post.samples[:, post.names.index(a)] * post.samples[:, post.names.index(b)]


@locked
def run(study, log=print):
    """Run the study; returns the report (a dict, also in ``report.json`` and
    ``report.md``)."""
    from uqkit import propagate, sample
    from uqkit.adapters import SurrogateModel, make_surrogate
    from uqkit.execution.cache import write_json
    from uqkit.calibration import calibrate
    from uqkit.presets import table3

    os.makedirs(study.out, exist_ok=True)
    inputs = table3()
    fe = fe_model(study.nx, study.ny)
    truth, noise_std, observed = measurements(study, fe, inputs)
    log(f"true inputs {dict(zip(inputs.names, truth[0].round(6).tolist()))}; measured w "
        f"{observed.mean(axis=0).round(5).tolist()} (noise std {noise_std.round(6).tolist()})")
    execution = {"workers": study.workers, "dask": study.dask, "progress": study.progress}
    posts, seconds = {}, {}
    # a store per settings that decide its runs (at fixed paths, another noise or seed on
    # the same --out stopped in a traceback: "holds other inputs than this run")
    cache = study_cache(study)
    measured = {"seed": study.seed, "noise": study.noise, "nx": study.nx, "ny": study.ny,
                "n_measurements": study.n_measurements, "n_samples": study.n_samples}

    t0 = time.perf_counter()
    posts["fe"] = calibrate(fe, inputs, observed, noise_std, n_samples=study.n_samples,
                            seed=study.seed, store=cache.path("fe-runs", measured),
                            **execution)
    seconds["fe"] = time.perf_counter() - t0
    log(f"FE posterior: {posts['fe'].model_runs} FE runs, {seconds['fe']:.1f} s")
    t0 = time.perf_counter()
    posts[CONTROL] = calibrate(fe, inputs, observed, noise_std, n_samples=study.n_samples,
                               seed=study.seed + 1,
                               store=cache.path("fe-runs-other-seed", measured),
                               **execution)
    seconds[CONTROL] = time.perf_counter() - t0
    log(f"FE posterior with another seed (the control): {seconds[CONTROL]:.1f} s")

    t0 = time.perf_counter()
    train = propagate(fe, sample(inputs, study.n_train, rule="lhs", seed=study.seed),
                      store=cache.path("train-runs", {"seed": study.seed, "nx": study.nx,
                                                      "ny": study.ny, "n_train": study.n_train}),
                      **execution)
    X, Y = train.inputs.values[train.ok], train.outputs[train.ok]
    train_s = time.perf_counter() - t0
    surrogates = {}
    for name, kind, kw in (("bdl", "bdl", {"seed": study.seed, "max_iter": study.max_iter}),
                           ("gp", "gp", {"seed": study.seed})):
        t0 = time.perf_counter()
        surrogates[name] = SurrogateModel(make_surrogate(kind, **kw).fit(X, Y),
                                          input_names=inputs.names)
        seconds[f"{name}_fit"] = time.perf_counter() - t0
    for variant in VARIANTS:
        model = surrogates[variant.split("-")[0]]
        t0 = time.perf_counter()
        posts[variant] = calibrate(model, inputs, observed, noise_std,
                                   n_samples=study.n_samples, seed=study.seed,
                                   use_model_variance=not variant.endswith("no-variance"),
                                   executor="serial")
        seconds[variant] = time.perf_counter() - t0
        log(f"{variant} posterior: {seconds[variant]:.1f} s")

    truth_row = truth[0]
    reference = posts["fe"]
    report = {
        "settings": asdict(study), "truth": dict(zip(inputs.names, truth_row.tolist())),
        "observed": observed.tolist(), "noise_std": noise_std.tolist(),
        "fe_train_runs": int(len(X)), "fe_train_seconds": train_s,
        "fe_train_loaded": int(train.loaded),
        "posteriors": {name: {**post.to_dict(), "seconds": seconds[name],
                              "model_variance_share": post.info.get("model_variance_share"),
                              "Et": _summary(_product(post), truth_row[2] * truth_row[3])}
                       for name, post in posts.items()},
        "fit_seconds": {k: v for k, v in seconds.items() if k.endswith("_fit")},
        "against_fe": {name: compare(posts[name], reference, truth_row)
                       for name in (CONTROL, *VARIANTS)},
        "fe_alone": compare(reference, reference, truth_row),
    }
    report["goal"] = _goal(report, reference)
    # the measurements' own information: how well the truth fits them, and the ridge of b
    # and E t along which they cannot tell the inputs apart
    w_truth = fe(truth)[0][0]
    report["chi2_at_truth"] = float((((observed - w_truth) / noise_std) ** 2).sum())
    report["fe_corr_b_Et"] = float(np.corrcoef(
        reference.samples[:, inputs.names.index("b")], _product(reference))[0, 1])
    write_json(os.path.join(study.out, "report.json"), report, finite=True)
    np.savez(os.path.join(study.out, "posterior_draws.npz"), names=np.array(inputs.names),
             **{name: post.samples for name, post in posts.items()})
    _figure(study, posts, dict(zip(inputs.names, truth_row)))
    with open(os.path.join(study.out, "report.md"), "w") as fh:
        fh.write(_markdown(report))
    log(f"report: {os.path.join(study.out, 'report.md')}")
    return report


def _summary(draws, truth):
    lo, hi = np.quantile(draws, [0.025, 0.975])
    return {"mean": float(draws.mean()), "std": float(draws.std(ddof=1)),
            "interval_95": [float(lo), float(hi)], "truth": float(truth),
            "holds_truth": bool(lo <= truth <= hi)}


def _goal(report, reference):
    """The issue's goal for the BDL posterior: E and t within 0.1 FE-posterior std of its
    mean and within 10% of its std, at under 1/20 of the FE posterior's runs; and the
    control's distances (the samplers' own error) beside them."""
    bdl = report["against_fe"]["bdl"]
    runs = report["fe_train_runs"] / reference.model_runs
    met = {name: abs(bdl[name]["mean_shift_in_std"]) <= 0.1
           and abs(bdl[name]["std_ratio"] - 1) <= 0.1 for name in ("E", "t")}
    control = report["against_fe"][CONTROL]
    floor = {name: {"mean_shift_in_std": control[name]["mean_shift_in_std"],
                    "std_ratio": control[name]["std_ratio"]} for name in ("E", "t")}
    return {"E_and_t_close": met, "fe_run_fraction": runs, "control": floor,
            "met": all(met.values()) and runs < 1 / 20}
