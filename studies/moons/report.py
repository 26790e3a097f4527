"""The moons study's report: report.md's text and the figures.

Imports: numpy, matplotlib (through :mod:`studies.common`) and the study's settings.
"""
import numpy as np

from ..common import figure_section, pyplot, save_figure
from .settings import ACCURACY_GOAL, GRID, PRIORS, TRIALS, make_data

__all__ = ["hierarchical_verdict", "paired_standard_error"]


def _effect(r):
    """Per base prior and trial: hierarchical minus direct (accuracy, NLL, ECE), means over
    the seeds, and ``nll_se``, the standard error of the NLL difference from the seeds' paired
    differences (both priors are fitted to each seed's data, so the seed's own difficulty
    cancels; ``paired_standard_error``)."""
    out = {}
    for base in ("laplace", "normal", "cauchy"):
        out[base] = {nz: {m: r[m][f"hier-{base}"][nz] - r[m][base][nz]
                          for m in ("accuracy", "nll", "ece")} for nz in TRIALS}
        for nz in TRIALS:
            out[base][nz]["nll_se"] = paired_standard_error(r["nll_seeds"][f"hier-{base}"][nz],
                                                            r["nll_seeds"][base][nz])
    return out


def paired_standard_error(a, b):
    """The standard error of mean(a) - mean(b) from the pairs' differences a_s - b_s (the
    seeds' results of two priors on the same data); NaN for a single pair, which has none
    (0 made one seed's difference read as significant).

    >>> round(paired_standard_error([1.0, 2.0, 3.1], [0.5, 1.5, 2.5]), 4)  # sd 0.0577 / sqrt 3
    0.0333
    """
    d = np.asarray(a, float) - np.asarray(b, float)
    return float(np.std(d, ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")


def hierarchical_verdict(nll, accuracy, se):
    """Did the hierarchical prior help, given its NLL and accuracy minus the direct prior's
    and the NLL difference's standard error ``se``? A lower NLL with a lower accuracy is a
    mixed outcome (it read "no clear difference"), as is the reverse.

    >>> hierarchical_verdict(-0.1, -0.05, 0.01)
    'mixed: a lower NLL but a lower accuracy'
    >>> hierarchical_verdict(-0.1, 0.0, float("nan"))
    'n/a: one seed gives no standard error'
    """
    if not np.isfinite(se):
        return "n/a: one seed gives no standard error"
    if nll < -se:
        return "yes" if accuracy >= 0 else "mixed: a lower NLL but a lower accuracy"
    if nll > se:
        return "no, it did worse" if accuracy <= 0 else "mixed: a higher NLL but a higher accuracy"
    return "no clear difference"


def _markdown(study, r):
    lap, vi = r["laplace_priors"], r["vi_priors"]
    how = []
    if lap:
        how.append(f"{', '.join(lap)}: Laplace BDLs (MAP by full-batch L-BFGS, {study.max_iter} "
                   "iterations, then the untempered full-GGN linearised Laplace posterior, its "
                   f"prior precision scaled by the evidence); {study.restarts} initialisations "
                   "per fit, the one with the highest Laplace evidence (log marginal likelihood "
                   "of the training data) kept")
    if vi:
        how.append(f"{', '.join(vi)}: mean-field variational inference, {study.epochs} Adam "
                   f"epochs at batch {study.batch_size}, lr {study.lr}" +
                   ("" if study.paper else " (the Laplace fit has no closed-form marginal for "
                    "the hierarchical Cauchy prior)"))
    lines = ["# Two moons classification (paper example 2)", "",
             f"BDL 2-5-5-2, tanh, softmax; {study.seeds} seeds (each redraws the data). "
             + "; ".join(how) + ". Validation metrics, mean +- std over seeds; "
             "accuracy also as the minimum over seeds.", "",
             "| prior | acc (0.1) | min acc (0.1) | acc (0.3) | min acc (0.3) | NLL (0.1) | "
             "NLL (0.3) | ECE (0.1) | ECE (0.3) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for p in PRIORS:
        cells = []
        for nz in TRIALS:
            cells += [f"{r['accuracy'][p][nz]:.4f} +- {r['accuracy_std'][p][nz]:.4f}",
                      f"{r['accuracy_min'][p][nz]:.4f}"]
        cells += [f"{r[m][p][nz]:.4f} +- {r[m + '_std'][p][nz]:.4f}"
                  for m in ("nll", "ece") for nz in TRIALS]
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    lines += ["", "## Goals: every prior, every seed", "",
              "Accuracy at least " + " and ".join(f"{g} at noise {nz}"
                                                  for nz, g in ACCURACY_GOAL.items())
              + " on every seed, i.e. the minimum over seeds:", ""]
    for p in PRIORS:
        lines.append(f"- {p}: " + "; ".join(
            f"noise {nz}: min {c['min']:.4f} -> {'met' if c['met'] else 'NOT met'}"
            for nz, c in r["goals"][p].items()) + ".")
    failed = [f"{p} (noise {nz}: seeds " + ", ".join(
        f"{s} at {a:.4f}" for s, a in enumerate(r["accuracy_seeds"][p][nz])
        if a < ACCURACY_GOAL[nz]) + ")"
        for p in PRIORS for nz in TRIALS if not r["goals"][p][nz]["met"]]
    lines += ["", "All goals met." if r["goals_met"] else
              "Not met: " + "; ".join(failed) + ".", ""]
    if "restart_chosen" in r:
        lines += [f"Restarts: fits (of {study.seeds}) that kept another initialisation than "
                  "the first: " + ", ".join(
                      f"{p} " + "/".join(str(sum(k != 0 for k in r["restart_chosen"][p][nz]))
                                          for nz in TRIALS) for p in r["restart_chosen"])
                  + " (noise " + "/".join(TRIALS) + ").", ""]
    if "evidence_choice" in r:
        lines += _evidence_lines(r["evidence_choice"])
    lines += ["## Did the hierarchical priors help at the stronger noise (0.3)?", "",
              "Hierarchical minus direct prior, mean over seeds; the NLL difference against its "
              "standard error over the seeds' paired differences (both priors fit each seed's "
              "data). 'yes' needs a lower NLL by more than one standard error and no "
              "lower accuracy.", ""]
    for base, eff in r["hierarchical_effect"].items():
        e = eff["0.3"]
        se = e["nll_se"]
        verdict = hierarchical_verdict(e["nll"], e["accuracy"], se)
        # a Laplace fit against a mean-field one: the difference is the inference's too
        mixed = (base in lap) != (f"hier-{base}" in lap)
        lines.append(f"- {base}: accuracy {r['accuracy'][base]['0.3']:.4f} -> "
                     f"{r['accuracy'][f'hier-{base}']['0.3']:.4f} ({e['accuracy']:+.4f}), "
                     f"NLL {r['nll'][base]['0.3']:.4f} -> {r['nll'][f'hier-{base}']['0.3']:.4f} "
                     f"({e['nll']:+.4f} +- {se:.4f}), ECE {e['ece']:+.4f} -> {verdict}"
                     + (f" ({'Laplace' if base in lap else 'mean field'} against "
                        f"{'Laplace' if f'hier-{base}' in lap else 'mean field'}: the "
                        "difference mixes the prior with the inference)" if mixed else "")
                     + ".")
    lines += figure_section(r["figures"])
    return "\n".join(lines) + "\n"


def _figures(study, res):
    plt = pyplot()

    paths = {}
    for nz in TRIALS:
        Xtr, ytr, _, _ = make_data(TRIALS[nz], float(nz), 0)
        fig, axes = plt.subplots(2, 6, figsize=(20, 6.5))
        for k, p in enumerate(PRIORS):
            cell = res[f"{p}-noise{nz}-seed0"]
            for row, (key, cmap, label) in enumerate((("grid_p1", "RdBu_r", "P(class 1)"),
                                                      ("grid_var", "viridis", "variance"))):
                ax = axes[row, k]
                z = np.asarray(cell[key]).reshape(len(GRID), len(GRID))
                cs = ax.contourf(GRID, GRID, z, levels=20, cmap=cmap)
                fig.colorbar(cs, ax=ax, label=label)
                ax.scatter(Xtr[:, 0], Xtr[:, 1], c=ytr, s=3, cmap="coolwarm", edgecolors="none")
                ax.set_title(f"{p}: {label}", fontsize=9)
                ax.set_xlim(-3, 3)
                ax.set_ylim(-3, 3)
        fig.suptitle(f"Predictive mean probability and variance, noise {nz} (cf. paper Fig. 5)")
        paths[f"fig5_noise{nz}"] = save_figure(fig, study.out, f"fig5_noise{nz}.png", 80)
    fig, axes = plt.subplots(2, 6, figsize=(20, 5.5))
    for k, p in enumerate(PRIORS):
        cell = res[f"{p}-noise0.3-seed0"]
        axes[0, k].hist(cell["w1_samples"], bins=60, color="C0")
        axes[0, k].set_title(f"{p}: layer-1 weights", fontsize=9)
        axes[1, k].hist(cell["b1_samples"], bins=60, color="C1")
        axes[1, k].set_title(f"{p}: layer-1 biases", fontsize=9)
    fig.suptitle("Posterior samples of the first layer (marginals), noise 0.3 (cf. Fig. 6)")
    paths["fig6"] = save_figure(fig, study.out, "fig6_posteriors.png", 80)
    return paths


def _evidence_lines(choice):
    """The section on the prior the evidence chooses per data draw (the Laplace rows)."""
    lines = ["## The prior chosen by the evidence", "",
             "Per seed, the Laplace row with the highest evidence (log marginal likelihood of "
             "the training data, nats): its validation accuracy against the best any row "
             "reached on that seed.", "",
             "| noise | seed | chosen | accuracy | best of the rows | "
             + " | ".join(f"log Z {p}" for p in next(iter(choice.values()))["log_evidence"])
             + " |", "|---" * (5 + len(next(iter(choice.values()))["log_evidence"])) + "|"]
    for nz, c in choice.items():
        for s, p in enumerate(c["chosen"]):
            lines.append(f"| {nz} | {s} | {p} | {c['accuracy'][s]:.4f} | "
                         f"{c['accuracy_best'][s]:.4f} | " + " | ".join(
                             f"{v[s]:.1f}" for v in c["log_evidence"].values()) + " |")
    lines += ["", "Mean accuracy of the evidence's choice: " + "; ".join(
        f"noise {nz}: {np.mean(c['accuracy']):.4f} (minimum {min(c['accuracy']):.4f}, best "
        f"row per seed {np.mean(c['accuracy_best']):.4f})" for nz, c in choice.items()) + ".",
        ""]
    return lines
