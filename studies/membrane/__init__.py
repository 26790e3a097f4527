"""Membrane UQ study (paper example 3): Table-3 inputs -> FE training data -> BDL surrogates ->
surrogate Monte Carlo against an FE Monte Carlo ground truth.

The outputs are w at the paper's three probes taken as mesh points: fractions (0.5, 0.5),
(0.3, 0.2), (0.8, 0.8) of l and b, the nodes the paper's points p1, p2, p3 are on the nominal
2 x 1 membrane and 20 x 10 mesh (``probe_frame="relative"``). At fixed physical points a node
sweeps past each probe as l and b vary, which makes w only C0 in the inputs (a GP's R^2 drops
from 1.000000 at the nodes to 0.930-0.999: ``benchmarks/bench_probe_smoothness.py``), and p3
falls off a membrane narrower than 0.8.

Run it with ``uqkit study membrane --out DIR`` or :func:`run`. Every result lives in the
study's cache (``DIR/cache``, :class:`uqkit.execution.cache.ResultCache`) under a key of the
settings it depends on: each FE data set is a resumable study store there, each trained
surrogate an entry. An interrupted study resumes where it stopped, a finished one reruns
without computing a single FE run of its data sets or a fit (the report's few illustrative
solves, the load paths and the mesh-convergence check, are redone), and a run with other
settings computes what it lacks beside the old results.

The package::

    settings  the settings dataclass and the constants
    tasks     the pool's tasks (small dataclasses) and what each computes
    study     run(): the data, the tasks, the report's numbers
    report    report.md's text and the figures, drafted while the pool runs (ReportDrafts)

The settings load with the package; the names of ``tasks`` and ``study`` on first use, so
that the command line reads the settings' defaults (and starts the FE pool) before it
imports the training code's dependencies (scipy.stats: 0.6 s).
"""
from uqkit._lazy import lazy_exports

from .settings import (MembraneStudy, PAPER_R2, PRIORS, PROBES, WORKER_MODULES,
                       discretisation_levels)

_TASKS = ("BaselineTask", "DiscretisationTask", "Fit", "LoadPathsTask", "RUNNERS", "TableTask",
          "UQFitTask", "UQMonteCarloTask", "baseline_task", "discretisation_error", "kde_grid",
          "load_paths_task", "run_task", "surrogate_densities", "table_task", "uq_fit_task",
          "uq_monte_carlo_task")
_STUDY = ("FEData", "bdl_settings", "fe_data", "fe_dataset", "fit_settings", "run",
          "study_tasks", "uq_order")
_EXPORTS = {**dict.fromkeys(_TASKS, "tasks"), **dict.fromkeys(_STUDY, "study")}

__all__ = sorted(["MembraneStudy", "PAPER_R2", "PRIORS", "PROBES", "WORKER_MODULES",
                  "discretisation_levels", *_EXPORTS])
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
