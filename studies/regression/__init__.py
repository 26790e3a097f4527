"""Regression benchmark (paper example 1): y = x sin(x) from 30 noisy points.

Methods: PR (degree 11), SVR (RBF, gamma = 1 in raw x, tol 1e-4), NN (1 x 20 tanh; by default
full-batch L-BFGS for ``max_iter`` iterations with weight decay 1e-6, the optimiser of the
BDLs' MAP networks), PCE (order 11), GP, and two Bayesian 1-20-1 tanh networks: BDL (the
paper's N(0, 0.1) prior) and BDL-hierarchical (the hierarchical prior N(0, s^2), s^2 ~ IG(1, 1)
per layer). By default both are Laplace BDLs (``inference="laplace"``): the MAP network trained
by full-batch L-BFGS, then the untempered linearised Laplace posterior (the exact-Bayes
counterpart of the ELBO with KL weight 1); ``restarts`` initialisations per fit, the one with
the highest Laplace evidence kept (:func:`studies.common.fit_restarts`); every seed's and
noise level's fits train as one batched program (:func:`surrogates.fit_many`). ``--paper``
trains both by the paper's mean-field variational inference (exact ELBO) and adds BDL-warm
and BDL-tempered (a MAP warm start, then the exact ELBO, or the ELBO with its KL term weighted
by ``tempered_kl``).

Every cell is the mean +- std over seeds, each seed redrawing the training data. R^2 is reported
on the whole test grid in (-10, 10), on the part of it inside the training points' range
(``r2_inside``: no extrapolation), and on the training points against their noisy targets
(``r2_train``): the paper's own metric (its PR row exceeds what any degree-11 polynomial reaches
on the grid, :func:`polynomial_ceiling`, and matches ours on the training points). 95% coverage
is measured on the noisy test targets inside the training range. Run with
``uqkit study regression --out DIR``.

The package::

    settings  the settings dataclass and the constants
    study     run(): the data, the tasks, the report's numbers
    report    report.md's text and the figures
"""
from .settings import (BASELINES, BAYES_KEYS, BAYESIAN, BAYESIAN_PAPER, COVERAGE_RANGE, GP_MARGIN,
                       HIER, KEYS, METHODS, NOISES, PAPER, RegressionStudy, bayesian, make_data,
                       methods, truth)
from .study import bdl_models, models, polynomial_ceiling, run

__all__ = ["BASELINES", "BAYESIAN", "BAYESIAN_PAPER", "BAYES_KEYS", "COVERAGE_RANGE", "GP_MARGIN",
           "HIER", "KEYS", "METHODS", "NOISES", "PAPER", "RegressionStudy", "bayesian",
           "bdl_models", "make_data", "methods", "models", "polynomial_ceiling", "run",
           "truth"]
