"""report.md, report.json and the figures of the membrane study.

Imports: numpy, matplotlib (through :mod:`studies.common`) and the study's settings.
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from uqkit.presets import table3
from uqkit.statistics import describe, kde

from ..common import figure_section, pyplot, save_figure, write_reports
from .settings import PROBES
from .tasks import kde_grid

__all__ = ["ReportDrafts", "truth_statistics", "write_report", "markdown", "fig_load_paths",
           "fig_predictive", "fig_kde"]


def truth_statistics(Wt):
    """Per probe: the FE truth's mean, std and quantiles 0.01 / 0.5 / 0.99 with their
    bootstrap standard errors (50 resamples; :func:`uqkit.statistics.describe`)."""
    return {p: describe(Wt[:, j], quantiles=(0.01, 0.5, 0.99), n_boot=50)
            for j, p in enumerate(PROBES)}


class ReportDrafts:
    """The report's parts that need the FE data and only some of the pool's results, made in
    one background thread while the pool computes the rest: the FE truth's statistics
    (:func:`truth_statistics`), the nominal strain of the notes, and each figure as soon as
    the tasks it draws are in (:meth:`take`, the pool's ``on_result``): Fig. 7a after the load
    paths, Fig. 7c after every Table-4 task, Fig. 8 after the UQ tasks. Made after the pool
    instead, they were a serial phase of 1.3 s on 2 cores (the matplotlib import included),
    which on many cores lengthens the critical path while the other cores idle.

    matplotlib runs in that one thread alone, one figure at a time. Use as a context
    manager: leaving it cancels what has not started and waits for what has.

    Args:
        study: the :class:`studies.membrane.settings.MembraneStudy`.
        fe: the study's :class:`studies.membrane.study.FEData`.
        fig_index: the validation row of Fig. 7c.
        tasks: the names of the pool's tasks (``table-...``, ``uq-N-PRIOR`` (a Monte Carlo),
            ``uq-N-PRIOR-fit``, ``load-paths``).
    """

    def __init__(self, study, fe, fig_index, tasks):
        self.study, self.fe, self.fig_index = study, fe, fig_index
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="membrane-report")
        self._needs = {"fig7a": {"load-paths"},
                       "fig7c": {k for k in tasks if k.startswith("table-")},
                       "fig8": {k for k in tasks
                                if k.startswith("uq-") and not k.endswith("-fit")}}
        self._waiting = {fig: set(names) for fig, names in self._needs.items()}
        self._results = {}
        self._drafts = {"truth": self._thread.submit(truth_statistics, fe.Wt),
                        "strain": self._thread.submit(_nominal_strain, study)}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._thread.shutdown(wait=True, cancel_futures=True)

    def take(self, name, result):
        """A pool task's result: start each figure whose tasks are now all in, with its own
        copy of their results (the dict of results grows meanwhile, in this thread)."""
        self._results[name] = result
        for fig, names in self._waiting.items():
            names.discard(name)
            if not names and fig not in self._drafts:
                inputs = {k: self._results[k] for k in self._needs[fig]}
                self._drafts[fig] = self._thread.submit(getattr(self, f"_{fig}"), inputs)

    def finish(self):
        """Wait for the drafts; returns ``(figures, truth statistics, nominal strain)``, the
        figures as {name: file}."""
        missing = {fig: sorted(names) for fig, names in self._waiting.items() if names}
        if missing:
            raise RuntimeError(f"the report's figures lack these tasks' results: {missing}")
        done = {name: future.result() for name, future in self._drafts.items()}
        return ({fig: done[fig] for fig in self._needs}, done["truth"], done["strain"])

    def _fig7a(self, inputs):
        return fig_load_paths(self.study, inputs["load-paths"])

    def _fig7c(self, inputs):
        fits = {}
        for name in sorted(inputs):
            fits.update(inputs[name])
        return fig_predictive(self.study, fits, self.fe.Wv, self.fig_index)

    def _fig8(self, inputs):
        uq = {prior: inputs[f"uq-{self.study.n_uq_train}-{prior}"] for prior in self.study.priors}
        return fig_kde(self.study, uq, self.fe.Wt)


def write_report(study, report, strain):
    """Write report.json and report.md (``report["figures"]`` from :class:`ReportDrafts`;
    ``strain``: the largest Green-Lagrange strain at the mean inputs)."""
    write_reports(study.out, report, markdown(study, report, strain), log=lambda *_: None)


def markdown(study, r, strain):
    """The text of report.md from the report dict ``r`` (``strain`` as in
    :func:`write_report`)."""
    t = r["timings"]
    lines = ["# Membrane UQ study (paper example 3)", "",
             f"Seed {study.seed}; FE runs computed now: {r['fe_runs_computed']}, loaded from the "
             f"store: {r['fe_runs_loaded']}, failed: {r['fe_runs_failed']}. Settings: "
             f"{'paper' if study.paper else 'default'}; training sizes {list(study.train_sizes)}, "
             f"{study.n_seeds} seeds, {study.n_validation} validation runs, "
             f"{study.n_calibration} calibration runs, {study.n_uq_train} UQ training runs, "
             f"{study.n_surrogate_mc} surrogate samples, "
             f"{study.n_truth} FE truth samples.", "",
             "## Inputs (Table 3)", "", "```", table3().summary(), "```", "",
             "## Surrogate accuracy on the validation set (Table 4)", "",
             _discretisation_text(study, r["discretisation"]), "",
             "R^2 per output, median over seeds [min, max]; the paper reports one R^2 per size.",
             "", "| prior | n | R^2 w(p1) | R^2 w(p2) | R^2 w(p3) | paper |",
             "|---|---|---|---|---|---|"]
    for pr, rows in r["table"].items():
        for n, m in rows.items():
            cells = [f"{m['r2']['median'][j]:.4f} [{m['r2']['min'][j]:.4f}, "
                     f"{m['r2']['max'][j]:.4f}]" for j in range(3)]
            paper = r["paper_r2"].get(pr, {}).get(str(n))
            lines.append(f"| {pr} | {n} | " + " | ".join(cells) +
                         f" | {paper if paper is not None else '-'} |")
    base = r.get("baselines", {})
    if base:
        lines += ["", "Other surrogate families on the same training and validation runs (the "
                  "GP with an anisotropic RBF kernel plus white noise, PCE of order 3 on the "
                  "Table-3 distribution, cubic polynomial regression); one fit per size:", "",
                  "| surrogate | n | R^2 w(p1) | R^2 w(p2) | R^2 w(p3) | coverage 95% |",
                  "|---|---|---|---|---|---|"]
        for name, rows in base.items():
            for n, m in rows.items():
                cov = ("-" if m.get("coverage95") is None
                       else " / ".join(f"{v:.3f}" for v in m["coverage95"]))
                lines.append(f"| {name} | {n} | " + " | ".join(f"{v:.6f}" for v in m["r2"])
                             + f" | {cov} |")
    lines += ["", "RMSE (length units), Gaussian NLL (nats) and 95% interval coverage, medians "
              "over seeds, per output (p1 / p2 / p3); raw, and after recalibrating the predictive "
              f"variance on {study.n_calibration} further held-out FE runs:", "",
              "| prior | n | RMSE | NLL raw | coverage 95% raw | NLL recal. "
              "| coverage 95% recal. |",
              "|---|---|---|---|---|---|---|"]
    for pr, rows in r["table"].items():
        for n, m in rows.items():
            f = lambda key, fmt: " / ".join(format(v, fmt) for v in m[key]["median"])  # noqa: E731
            lines.append(f"| {pr} | {n} | {f('rmse', '.4f')} | {f('nll', '.2f')} | "
                         f"{f('coverage95', '.3f')} | {f('nll_cal', '.2f')} | "
                         f"{f('coverage95_cal', '.3f')} |")
    lines += ["", f"## Surrogate Monte Carlo vs FE truth ({study.n_uq_train} training runs)", "",
              f"Truth: {study.n_truth} FE runs (its Monte Carlo standard errors beside it). "
              "Surrogate: predictive mean at "
              f"{study.n_surrogate_mc} inputs; the band is the 95% range over the first 20 of "
              "its 50 posterior function draws.", "",
              "| prior | output | surrogate mean (truth mean +- se) | surrogate std (truth std "
              "+- se) | q01 / q50 / q99 truth | "
              "q01 / q50 / q99 surrogate | KS [band] | W1 |", "|---|---|---|---|---|---|---|---|"]
    for pr, per in r["uq"].items():
        for p in PROBES:
            tr, su, c, b = r["truth"][p], per[p]["surrogate"], per[p]["comparison"], \
                per[p]["posterior_band"]
            qt = " / ".join(f"{tr['quantiles'][q]:.4f}" for q in ("0.01", "0.5", "0.99"))
            qs = " / ".join(f"{su['quantiles'][q]:.4f}" for q in ("0.01", "0.5", "0.99"))
            lines.append(
                f"| {pr} | w({p}) | {su['mean']:.4f} ({tr['mean']:.4f} +- {tr['mean_se']:.4f}) | "
                f"{su['std']:.4f} ({tr['std']:.4f} +- {tr['std_se']:.4f}) | {qt} | {qs} | "
                f"{c['ks']:.4f} [{b['ks'][0]:.3f}, {b['ks'][1]:.3f}] | {c['wasserstein']:.5f} |")
    ks_noise = 1.36 * np.sqrt(1 / study.n_truth + 1 / study.n_surrogate_mc)
    lines += ["", f"A KS statistic below ~{ks_noise:.4f} is within the 95% sampling noise of "
              "the two sample sizes.", "", "## Timings", "",
              f"FE cost: {t['fe_seconds_per_run'] * 1e3:.2f} ms per run on one core (the "
              "median over the truth's chunks of the evaluation times its store records), "
              "so about "
              f"{t['fe_seconds_per_1e5']:.0f} s per 1e5 runs on {study.workers} cores; the whole "
              f"study took {t['total_seconds']:.0f} s of wall time in this invocation.", ""]
    par = r.get("parallelism")
    if par:
        lines += [f"Parallelism: the tasks' {par['task_seconds']:.0f} s and the FE runs' "
                  f"{par['fe_cpu_seconds']:.0f} s of work over a critical path of the longest "
                  f"chain of tasks ({' then '.join(par['critical_path'])}, "
                  f"{par['critical_path_seconds']:.1f} s) and the "
                  f"serial parts ({par['serial_seconds']:.1f} s): "
                  f"{par['ideal_speedup']:.1f}x, the bound on unlimited workers' speedup over "
                  "one core (a little above it counting the serial parts one core runs too)"
                  + (f" ({par['loaded']} tasks' seconds are those of the run that cached them)"
                     if par["loaded"] else "") + ".", ""]
    for pr in r["uq"]:
        speedup = t.get(f"speedup_{pr}")
        lines.append(f"- Surrogate Monte Carlo, {pr} prior: "
                     f"{t[f'surrogate_{pr}_seconds_per_1e5_incl_training']:.1f} s per 1e5 "
                     f"samples on {study.workers} cores (one core's prediction time shared "
                     "among them, as for the FE), training included" +
                     (f" ({speedup:.1f}x faster than FE)." if speedup else "."))
    lines += figure_section(r["figures"])
    lines += ["", "## Notes", "",
              "- Outputs: w at the paper's probes taken as mesh points, the fractions (0.5, 0.5), "
              "(0.3, 0.2), (0.8, 0.8) of l and b (`probe_frame=\"relative\"`). On the nominal "
              "2 x 1 membrane and 20 x 10 mesh these are the paper's p1, p2, p3, and nodes. At "
              "fixed physical points a node sweeps past each probe as l and b vary, so w is "
              "only C0 in the inputs: trained on 64, 128 or 256 runs, a scikit-learn GP scores "
              "R^2 0.930-0.999 on 1000 held-out runs there, and 1.000000 (six digits) at the "
              "nodes (`python benchmarks/bench_probe_smoothness.py`); and p3 = (1.6, 0.8) falls "
              "off any membrane narrower than 0.8.",
              f"- The paper's example is far beyond small strains: at the mean inputs the "
              f"largest Green-Lagrange strain is {strain:.1f} (a stretch of "
              f"{(2 * strain + 1) ** 0.5:.1f} next to the edges, where w falls by "
              "about 2.5 over half the width), while the St. Venant-Kirchhoff law holds to "
              "strains of a few percent. The study reproduces the paper's model, not a real "
              "membrane.",
              ("- Training (`--paper`): the paper's method and settings, mean-field VI by Adam "
               "(lr 0.005 x 0.75 every 100 epochs, batch 16, 200 ELBO samples, from a "
               "posterior std of 1e-5)." if study.paper else
               "- Training (default): the MAP network of the paper's architecture, trained "
               f"by full-batch L-BFGS ({study.max_iter} iterations, float64, the noise "
               "precision learned with the weights: on noise-free FE outputs it has no finite "
               "optimum, so the iteration limit stops the fit), then the full-GGN linearised "
               "Laplace posterior about it (`BDL(inference=\"laplace\")`), its prior "
               "precision per parameter tensor and its noise per output set by the Laplace "
               "evidence (ablation below); the fits of one training size train as batched "
               "programs of about 1024 rows in all (`surrogates.fit_many`), each prior's UQ "
               "fit on its own. The "
               "hierarchical prior integrates each layer's IG(1, 1) variance out (a Student-t "
               "per layer). `--paper` runs the paper's mean-field VI recipe instead."),
              *_coverage_notes(r),
              "- The UQ comparison uses each surrogate's predictive mean; its own predictive "
              "intervals are in the accuracy table (coverage)."]
    return "\n".join(lines) + "\n"


def _coverage_notes(r, lo=0.90, hi=0.99):
    """What the raw 95% coverage of the Table-4 fits says, from the report's numbers, and the
    ablation of the Laplace evidence step (the same MAP networks with the prior's own
    precision and the MAP noise) where the fits have it."""
    cells = [(pr, n, m) for pr, rows in r["table"].items() for n, m in rows.items()]
    raw = [v for _, _, m in cells for v in m["coverage95"]["median"]]
    out = [f"- Raw 95% coverage (no recalibration), medians over seeds: {min(raw):.3f} to "
           f"{max(raw):.3f} over every prior, size and output; "
           + ("every cell lies in " if all(lo <= v <= hi for v in raw) else
              "NOT every cell lies in ") + f"[{lo:.2f}, {hi:.2f}]. The recalibrated columns "
           "show what one variance factor per output, fitted on separate held-out runs "
           "(`BDL.calibrate`), makes of them."]
    if all("coverage95_prior" in m for _, _, m in cells):
        out += ["- Ablation of the posterior (same MAP networks, medians over seeds, p1 / p2 / "
                "p3): the Laplace posterior with the prior's own precision and the MAP's noise "
                "against the default, whose prior precision per parameter tensor (each layer's "
                "weights and biases) and noise precision per output maximise the Laplace "
                "evidence (`laplace_prior_scale=\"evidence\"`, `surrogates.laplace.evidence`; "
                "the MAP weights, and so R^2, are the same):", "",
                "  | prior | n | coverage 95%, prior's precision | coverage 95%, evidence | "
                "NLL, prior's precision | NLL, evidence |", "  |---|---|---|---|---|---|"]
        for pr, n, m in cells:
            f = lambda key, fmt: " / ".join(format(v, fmt) for v in m[key]["median"])  # noqa
            out.append(f"  | {pr} | {n} | {f('coverage95_prior', '.3f')} | "
                       f"{f('coverage95', '.3f')} | {f('nll_prior', '.2f')} | "
                       f"{f('nll', '.2f')} |")
        out.append("")
    return out


def _discretisation_text(study, d):
    """The mesh's own error beside the surrogates' (the FE truth is not the exact answer)."""
    errs = ", ".join(f"w({p}) {d[p]['relative_error']:.2%}" for p in PROBES)
    unsettled = [p for p in PROBES if not d[p]["asymptotic"]]
    note = (f" (the order of {', '.join(unsettled)} has not settled on these meshes: its "
            "estimate is rough)" if unsettled else "")
    meshes = ", ".join(f"{nx} x {ny}" for nx, ny in d["meshes"])
    return (f"The FE answers are those of a {study.nx} x {study.ny} mesh. At the mean inputs "
            f"it is off the mesh-converged limit (Richardson, meshes {meshes}) by {errs}"
            f"{note}: a surrogate whose RMSE is far below that reproduces the mesh's answer "
            "better than the mesh reproduces the membrane's.")


def _nominal_strain(study):
    """The largest Green-Lagrange strain of the study's mesh at the mean inputs."""
    from fem import Membrane

    mean = dict(zip(table3().names, table3().mean()))
    return Membrane(**mean, nx=study.nx, ny=study.ny, probe_frame="relative").solve().max_strain()


def fig_load_paths(study, load_paths):
    """Fig. 7a from the converged load paths of :func:`studies.membrane.tasks.load_paths_task`."""
    plt = pyplot()

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for ax, p in zip(axes, PROBES):
        for path in load_paths:
            w = np.asarray(path["w"])[:, path["probes"].index(p)]
            ax.plot(-w, path["pressure"], color="C0", alpha=0.5, lw=0.8)
        ax.set_xlabel(f"downward deflection -w({p}) (length units)")
        ax.set_ylabel("pressure p (force / length^2)")
        ax.grid(alpha=0.3)
        ax.set_title(f"w({p}), {len(load_paths)} of {study.n_paths} random inputs")
    fig.suptitle("Load-displacement paths scattered by the random inputs (cf. paper Fig. 7a)")
    return save_figure(fig, study.out, "fig7a_load_paths.png", 110)


def fig_predictive(study, fits, Wv, fig_index):
    """Fig. 7c: the direct-prior BDL's predictive density of w(p1) at the validation input
    ``fig_index`` for each training size (``fits``: the Table-4 fits' records), with the FE
    value from ``Wv``; returns the PNG's path."""
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6, 3.8))
    for n in study.train_sizes:
        key = f"table-direct-{n}-seed0"
        if key in fits and "fig7c_w_p1" in fits[key]:
            draws = np.asarray(fits[key]["fig7c_w_p1"])
            ax.plot(*kde(draws), label=f"n = {n}")
    ax.axvline(Wv[fig_index, 0], color="k", lw=1.5, label="FE value")
    ax.set_xlabel("w(p1) (length units)")
    ax.set_ylabel("predictive density")
    ax.set_title("Predictive distribution at one validation input, direct prior (cf. Fig. 7c)",
                 fontsize=9)
    ax.legend(fontsize=8)
    return save_figure(fig, study.out, "fig7c_predictive.png", 110)


def fig_kde(study, uq, Wt):
    """Fig. 8 from the FE truth ``Wt`` and each UQ surrogate's :func:`surrogate_densities`
    (``uq[prior]["kde"][probe]``, made where the surrogate predicted)."""
    plt = pyplot()

    from matplotlib.patches import Patch

    fig, axes = plt.subplots(1, 3, figsize=(13, 4.3))
    for j, (ax, p) in enumerate(zip(axes, PROBES)):
        grid = kde_grid(Wt[:, j])
        ax.plot(grid, kde(Wt[:, j], grid)[1], "k-", lw=2.2, label=f"FE truth ({len(Wt)})")
        for k, (pr, u) in enumerate(uq.items()):
            curves = u["kde"][p]
            ax.fill_between(grid, *curves["band"], color=f"C{k}", alpha=0.25)
            ax.plot(grid, curves["mean"], "--", color=f"C{k}", lw=1.5,
                    label=f"BDL {pr} ({study.n_surrogate_mc})")
        ax.set_xlabel(f"w({p}) (length units)")
        ax.set_ylabel("density")
    # one legend below the panels, so that none covers a curve; the bands get their entries
    handles, labels = axes[0].get_legend_handles_labels()
    for k, pr in enumerate(uq):
        handles.append(Patch(color=f"C{k}", alpha=0.25))
        labels.append(f"BDL {pr}: 95% band over posterior draws")
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.suptitle("Surrogate Monte Carlo vs FE truth, with 95% posterior bands (cf. paper Fig. 8)")
    return save_figure(fig, study.out, "fig8_kde.png", 110, rect=(0, 0.08, 1, 1))
