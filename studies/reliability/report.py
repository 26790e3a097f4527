"""The reliability study's report: report.md's text and the figures.

Imports: numpy, matplotlib (through :mod:`studies.common`) and the study's settings.
"""
import math

from ..common import pyplot, save_figure

__all__ = []


def _figures(study, methods, truth, results):
    from uqkit.reliability import ReliabilityResult
    from uqkit.reliability.active import plot_history
    from uqkit.sensitivity import plot_sobol

    plt = pyplot()
    figs = {}
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, name in zip(axes, ("active-gp", "active-bdl")):
        m = methods[name]
        r = ReliabilityResult(pf=m["pf"], cov=math.nan, ci=(0, 0), beta=math.nan,
                              model_runs=m["model_runs"], method="active",
                              history=m["history"])
        plot_history(r, ax=ax, reference=truth["pf"])
        ax.axhspan(*truth["ci"], color="k", alpha=0.08)
        ax.set_yscale("log")
        ax.set_title(f"{name}: Pf {m['pf']:.3g} in {m['model_runs']} runs")
    figs["active_learning"] = save_figure(fig, study.out, "active_learning.png", 120)
    fe, sur = results
    fig, axes = plt.subplots(2, 3, figsize=(13, 6), sharey=True)
    plot_sobol(fe, axes=axes[0])
    plot_sobol(sur, axes=axes[1])
    for ax in axes[0]:
        ax.set_title(f"FE ({fe.model_runs} runs): {ax.get_title()}")
    for ax in axes[1]:
        ax.set_title(f"BDL ({study.n_sobol_train} FE runs): {ax.get_title()}")
    figs["sobol"] = save_figure(fig, study.out, "sobol.png", 120)
    return figs


def _fmt_ci(ci, digits=3):
    return "-" if ci is None else f"[{ci[0]:.{digits}g}, {ci[1]:.{digits}g}]"


def _markdown(rep):
    t = rep["truth"]
    lines = [
        "# Membrane reliability and sensitivity", "",
        f"Limit state: g = w(p1) - ({rep['threshold']:.6g}); failure where g <= 0. The "
        f"threshold is the {rep['threshold_choice']['quantile']} quantile of w(p1) in an "
        f"independent pilot of {rep['threshold_choice']['pilot_runs']} FE runs (95% interval of "
        f"that quantile: {_fmt_ci(rep['threshold_choice']['ci95'], 6)}).", "",  # its digits
        f"FE Monte Carlo truth: Pf = {t['pf']:.4g}, 95% CI {_fmt_ci(t['ci'])} "
        f"({t['failures']} failures in {t['model_runs']} runs"
        + (f", {t['lost_runs']} runs the solver rejected, counted both ways in the CI"
           if t["lost_runs"] else "") + ").", "",
        "| method | Pf | 95% CI | Pf / truth - 1 | inside truth CI | model runs | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, m in rep["methods"].items():
        conv = "" if m.get("converged", True) else " (not converged)"
        lines.append(f"| {name}{conv} | {m['pf']:.4g} | {_fmt_ci(m['ci'])} | "
                     f"{m['relative_error']:+.3f} | {'yes' if m['inside_truth_ci'] else 'no'} | "
                     f"{m['model_runs']} | {m['seconds']:.1f}"
                     + (" (loaded)" if m.get("loaded") else "") + " |")
    warn = [f"- {n}: {w}" for n, m in rep["methods"].items() for w in m["warnings"]]
    if warn:
        lines += ["", "Warnings:", *warn]
    sob = rep["sobol"]
    lines += ["", "## Sobol' indices (first / total)", "",
              f"FE pick-freeze on {sob['fe_model_runs']} runs; BDL and PCE trained on "
              f"{sob['surrogate_training_runs']} FE runs.", "",
              "| output | input | FE first | FE total | BDL first | BDL total | PCE first | "
              "PCE total |", "|---|---|---|---|---|---|---|---|"]
    for j, out in enumerate(sob["outputs"]):
        for i, name in enumerate(sob["inputs"]):
            cells = [f"{sob[k][m][i][j]:.4f}" for k in ("fe", "bdl", "pce")
                     for m in ("first", "total")]
            lines.append(f"| {out} | {name} | " + " | ".join(cells) + " |")
    diff = sob["max_abs_difference_from_fe"]
    lines += ["", "Largest difference from the FE indices: " + "; ".join(
        f"{k} first {v['first']:.4f}, total {v['total']:.4f}" for k, v in diff.items()) + "."]
    if sob.get("warnings"):
        lines += ["", "Warnings:", *[f"- {w}" for w in sob["warnings"]]]
    lines += ["", f"Total wall time: {rep['total_seconds']:.0f} s.", "",
              "## Figures", "", "![active learning](active_learning.png)", "",
              "![Sobol' indices](sobol.png)", ""]
    return "\n".join(lines)
