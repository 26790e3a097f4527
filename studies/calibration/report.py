"""The calibration study's report: report.md's text and the figures.

Imports: numpy, matplotlib (through :mod:`studies.common`) and the study's settings.
"""
from ..common import pyplot, save_figure

__all__ = []


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
        loaded = p.get("info", {}).get("loaded_runs", 0)
        runs = f"{p['model_runs']}" + (f" ({loaded} loaded from its store)" if loaded else "")
        lines.append(f"| {name} | {runs} | {p['seconds']:.1f} | "
                     f"{p['log_evidence']:.4g} | {et['mean']:.5g} | [{et['interval_95'][0]:.5g},"
                     f" {et['interval_95'][1]:.5g}] | {et['holds_truth']} |")
    fits = report["fit_seconds"]
    lines += ["", "A surrogate's model runs are its predictions. The surrogates trained on "
              f"{report['fe_train_runs']} FE runs ({report['fe_train_seconds']:.1f} s of FE "
              "runs" + (", loaded from their store" if report.get("fe_train_loaded") else "")
              + f"; fits: BDL {fits['bdl_fit']:.1f} s, GP {fits['gp_fit']:.1f} s).", "",
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
