"""Classification benchmark (paper example 2): two crescent moons with six priors.

BDL 2-5-5-2 (tanh, softmax) with Laplace(0,1), N(0,1), Cauchy(1,1) and their hierarchical
IG(1,1) versions; trial 1: 900 samples with noise 0.1, trial 2: 1200 samples with noise 0.3;
70/30 split; accuracy, NLL and ECE on the validation set over seeds (mean, std and minimum).

By default the BDLs are Laplace BDLs (``inference="laplace"``): the MAP network by full-batch
L-BFGS, then the untempered full-GGN linearised Laplace posterior; ``restarts`` initialisations
per fit, the one with the highest Laplace evidence kept (:func:`studies.common.fit_restarts`),
all fits of a noise level as one batched program (:func:`surrogates.fit_many`). The
hierarchical Cauchy prior has no closed-form marginal for the Laplace fit, so its row keeps the
mean-field variational inference (Adam, ``epochs``). ``--paper`` trains every row by the paper's
mean-field VI (50000 epochs at batch 30, Adam lr 1e-3). Run with ``uqkit study moons --out DIR``.

The package::

    settings  the settings dataclass and the constants
    study     run(): the data, the tasks, the report's numbers
    report    report.md's text and the figures
"""
from .settings import ACCURACY_GOAL, GRID, MoonsStudy, PRIORS, TRIALS, make_data
from .study import laplace_priors, run

__all__ = ["ACCURACY_GOAL", "GRID", "MoonsStudy", "PRIORS", "TRIALS", "laplace_priors",
           "make_data", "run"]
