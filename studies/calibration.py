"""Calibration study: the membrane of the main job, measured, and its inputs inferred.

Synthetic measurements: the FE model's deflections w at the paper's three probes (mesh
points, ``probe_frame="relative"``) at true inputs drawn once from Table 3 (``seed``), plus
Gaussian noise of ``noise`` (1%) of each deflection, repeated ``n_measurements`` times. The
posterior of all five inputs, with Table 3 as the prior, is sampled by TMCMC
(:func:`uqkit.calibration.calibrate`):

* with the FE model itself (the reference);
* with a BDL surrogate (``make_surrogate("bdl")``, the Laplace BDL) trained on ``n_train`` FE
  runs (a Latin hypercube of the prior), its predictive variance in the likelihood;
* with the same BDL ignoring its predictive variance;
* with the GP baseline, its predictive variance in the likelihood;
* and, as the control, with the FE model again under another seed: its distance from the
  first FE posterior is the samplers' own Monte Carlo error.

The report compares each surrogate posterior with the FE posterior per input: the difference
of the means and the ratio of the standard deviations in units of the FE posterior's, the
1-D Wasserstein distance in the same units, the 95% intervals and whether they hold the true
input; and the model runs and wall time of each. A membrane's deflection depends on E and t
mostly through their product (the load parameter |p| b / (E t) of membrane theory), so the
measurements inform E t far better than E and t apart: the report gives E t's posterior too.

Run it with ``uqkit study calibration --out DIR`` or :func:`run`. It writes ``report.md``,
``report.json``, ``posterior_corner.png`` and every posterior's draws
(``posterior_draws.npz``). Every FE run lives in a store, so a killed study resumes without
recomputing them.
"""
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from .common import locked, pyplot, save_figure

#: The surrogate posteriors of the comparison, in the report's order.
VARIANTS = ("bdl", "bdl-no-variance", "gp")
#: The control: the FE posterior again with another seed, whose distance from the first is
#: the samplers' own Monte Carlo error, the floor of every comparison.
CONTROL = "fe-other-seed"


@dataclass
class CalibrationStudy:
    """Settings of the calibration study (the defaults finish in about 2.5 minutes on 2
    cores).

    Attributes:
        out: output directory.
        seed: seed of the true inputs, the noise, the training design and the samplers.
        noise: the measurement noise's standard deviation, a fraction of each deflection.
        n_measurements: repeated measurements of the three deflections.
        n_samples: TMCMC samples per stage (and posterior draws).
        n_train: FE runs the surrogates train on.
        max_iter: L-BFGS iterations of the BDL fit.
        workers, dask: processes (or a Dask scheduler) for the FE runs.
        progress: progress bars.
        nx, ny: the FE mesh.
        paper: unused (the study has no paper counterpart); accepted for the command line.
    """

    out: str
    seed: int = 0
    noise: float = 0.01
    n_measurements: int = 1
    n_samples: int = 8000
    n_train: int = 256
    max_iter: int = 2000
    workers: int = None
    dask: str = None
    progress: bool = True
    nx: int = 20
    ny: int = 10
    paper: bool = False

    def __post_init__(self):
        from uqkit.validation import check_float, check_int

        check_float(self.noise, "noise", 0, 1)
        check_int(self.n_measurements, "n_measurements", 1)
        check_int(self.n_samples, "n_samples", 50)
        check_int(self.n_train, "n_train", 8)
        check_int(self.max_iter, "max_iter", 1)
        from uqkit.adapters import MembraneModel

        MembraneModel(nx=self.nx, ny=self.ny)  # the mesh, validated now


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
    from uqkit.adapters import MembraneModel, SurrogateModel, make_surrogate
    from uqkit.execution.cache import write_json
    from uqkit.calibration import calibrate
    from uqkit.presets import table3

    os.makedirs(study.out, exist_ok=True)
    inputs = table3()
    fe = MembraneModel(nx=study.nx, ny=study.ny, probe_frame="relative")
    truth, noise_std, observed = measurements(study, fe, inputs)
    log(f"true inputs {dict(zip(inputs.names, truth[0].round(6)))}; measured w "
        f"{observed.mean(axis=0).round(5).tolist()} (noise std {noise_std.round(6).tolist()})")
    execution = {"workers": study.workers, "dask": study.dask, "progress": study.progress}
    posts, seconds = {}, {}

    t0 = time.perf_counter()
    posts["fe"] = calibrate(fe, inputs, observed, noise_std, n_samples=study.n_samples,
                            seed=study.seed, store=os.path.join(study.out, "fe-runs"),
                            **execution)
    seconds["fe"] = time.perf_counter() - t0
    log(f"FE posterior: {posts['fe'].model_runs} FE runs, {seconds['fe']:.1f} s")
    t0 = time.perf_counter()
    posts[CONTROL] = calibrate(fe, inputs, observed, noise_std, n_samples=study.n_samples,
                               seed=study.seed + 1,
                               store=os.path.join(study.out, "fe-runs-other-seed"),
                               **execution)
    seconds[CONTROL] = time.perf_counter() - t0
    log(f"FE posterior with another seed (the control): {seconds[CONTROL]:.1f} s")

    t0 = time.perf_counter()
    train = propagate(fe, sample(inputs, study.n_train, rule="lhs", seed=study.seed),
                      store=os.path.join(study.out, "train-runs"), **execution)
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
    write_json(os.path.join(study.out, "report.json"), report)
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


def _figure(study, posts, truths):
    plt = pyplot()
    fig = plt.figure(figsize=(11, 11))
    posts["fe"].plot_corner(truths=truths, others=[("BDL (with its variance)", posts["bdl"]),
                                                    ("BDL (without)", posts["bdl-no-variance"])],
                            fig=fig)
    fig.axes[0].legend(["FE", "BDL (with its variance)", "BDL (without)"], fontsize=7)
    save_figure(fig, study.out, "posterior_corner.png", dpi=90)


def _markdown(report):
    lines = ["# Calibration study", "",
             f"True inputs (Table 3, seed {report['settings']['seed']}): "
             + ", ".join(f"{k} = {v:.6g}" for k, v in report["truth"].items()) + ".",
             f"Measurements: w at p1, p2, p3 plus {100 * report['settings']['noise']:g}% "
             f"Gaussian noise, {report['settings']['n_measurements']} repetition(s). Prior: "
             "Table 3. Sampler: TMCMC, "
             f"{report['settings']['n_samples']} samples per stage.", "",
             "| posterior | model runs | seconds | log evidence | E t mean | E t 95% interval "
             "| holds the true E t |", "|---|---|---|---|---|---|---|"]
    for name, p in report["posteriors"].items():
        et = p["Et"]
        lines.append(f"| {name} | {p['model_runs']} | {p['seconds']:.1f} | "
                     f"{p['log_evidence']:.4g} | {et['mean']:.5g} | [{et['interval_95'][0]:.5g},"
                     f" {et['interval_95'][1]:.5g}] | {et['holds_truth']} |")
    fits = report["fit_seconds"]
    lines += ["", "A surrogate's model runs are its predictions. The surrogates trained on "
              f"{report['fe_train_runs']} FE runs ({report['fe_train_seconds']:.1f} s of FE "
              f"runs; fits: BDL {fits['bdl_fit']:.1f} s, GP {fits['gp_fit']:.1f} s).", "",
              "Each surrogate posterior against the FE posterior (shift of the mean, ratio of "
              "the standard deviations and Wasserstein distance in FE-posterior standard "
              "deviations; does the 95% interval hold the truth):", "",
              "| posterior | input | mean | std | shift / std | std ratio | W / std | 95% "
              "interval | holds truth |", "|---|---|---|---|---|---|---|---|---|"]
    rows = {"fe": report["fe_alone"], **report["against_fe"]}
    for name, per in rows.items():
        for inp, c in per.items():
            lines.append(f"| {name} | {inp} | {c['mean']:.5g} | {c['std']:.3g} | "
                         f"{c['mean_shift_in_std']:+.3f} | {c['std_ratio']:.3f} | "
                         f"{c['wasserstein_in_std']:.3f} | [{c['interval_95'][0]:.5g}, "
                         f"{c['interval_95'][1]:.5g}] | {c['holds_truth']} |")
    goal = report["goal"]
    share = report["posteriors"]["bdl"]["model_variance_share"]
    lines += ["", f"Goal (BDL: E and t within 0.1 FE-posterior std of the mean and 10% of the "
              f"std, at under 1/20 of the FE runs): **{'met' if goal['met'] else 'not met'}** "
              f"(E {goal['E_and_t_close']['E']}, t {goal['E_and_t_close']['t']}; FE runs "
              f"{goal['fe_run_fraction']:.4f} of the FE posterior's). The control, the FE "
              f"posterior with another seed, is {goal['control']['E']['mean_shift_in_std']:+.3f}"
              f" / {goal['control']['t']['mean_shift_in_std']:+.3f} std off in E / t with std "
              f"ratios {goal['control']['E']['std_ratio']:.3f} / "
              f"{goal['control']['t']['std_ratio']:.3f}: the samplers' own error, below which "
              "no difference is resolved. The BDL's predictive "
              f"variance is {100 * share:.1f}% of the likelihood's variance at its posterior "
              "draws.", "",
              f"The truth fits the measurements (chi-square {report['chi2_at_truth']:.2f} over "
              f"{len(report['observed']) * 3} values). In the FE posterior b and E t correlate "
              f"at {report['fe_corr_b_Et']:.3f}: three deflections tell a wider membrane from "
              "a stiffer one poorly, so along that ridge the prior decides, and a truth in the "
              "prior's tail can fall outside the 95% intervals of b and E t while it fits the "
              "data.", "", "![corner plot](posterior_corner.png)", ""]
    return "\n".join(lines)
