"""Reliability and sensitivity study on the membrane: how likely the centre deflects beyond a
limit, by every method of :mod:`uqkit.reliability` against an FE Monte Carlo truth, and which
inputs drive the deflections, by Sobol' indices from FE runs against a BDL surrogate's.

Inputs are those of Table 3 (``uqkit.presets.table3``); the outputs are w at the paper's three
probes taken as mesh points (``probe_frame="relative"``, as in the membrane study: at fixed
physical points w is only C0 in the inputs).

The limit state is ``g(x) = w_p1(x) - threshold`` (w < 0 is downward, so failure,
``g <= 0``, is a deflection at least as deep as the threshold). The threshold is the
``quantile`` (1e-3) quantile of w(p1) in a pilot FE Monte Carlo of ``n_pilot`` runs, drawn
independently of the truth, so that the truth's Pf is an unbiased estimate of a probability
near 1e-3 rather than 1e-3 by construction. The truth is an FE Monte Carlo of ``n_truth``
runs with an exact (Clopper-Pearson) interval. Both draw standard normal points u and map them
through the inputs' Rosenblatt transform (as :mod:`uqkit.reliability` does); the truth's
points are also the candidate population of active learning, so that active learning and the
truth count failures in one population and their difference is the surrogate's
misclassification alone.

Methods (each through :func:`uqkit.reliability.failure_probability`, every FE run in a store):
FORM, SORM (Tvedt; Breitung and Hohenbichler-Rackwitz in the report), importance sampling at
the design point, subset simulation and active learning on a GP and on the BDL, with at most
1/100 of the truth's runs.

Sensitivity: pick-freeze indices of w(p1), w(p2), w(p3) from FE runs (``n_sobol`` base
samples, ``n_sobol (d + 2)`` runs); the same from a BDL trained on ``n_sobol_train`` FE runs
(Latin hypercube), with its epistemic band over posterior function draws; and the indices of
a PCE fitted on those same training runs.

Run it with ``uqkit study reliability --out DIR`` or :func:`run`. Every FE run lives in a
store of the study's cache and every finished method's result in a cache entry: a killed study
resumes without recomputing a finished run or method.

The package::

    settings  the settings dataclass and the constants
    study     run(): the data, the tasks, the report's numbers
    report    report.md's text and the figures
"""
from .settings import METHODS, PROBES, ReliabilityStudy
from .study import (DeflectionLimit, bdl_surrogate, fe_runs, run, run_method,
                    sobol_comparison, threshold_from_pilot)

__all__ = ["DeflectionLimit", "METHODS", "PROBES", "ReliabilityStudy", "bdl_surrogate", "fe_runs",
           "run", "run_method", "sobol_comparison", "threshold_from_pilot"]
