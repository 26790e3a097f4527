"""Bayesian calibration (model updating): the posterior of a model's inputs given measured
outputs, on the model itself or on a surrogate that carries its own uncertainty into the
likelihood.

::

    prior (RandomInputs) --+
    measurements, noise ---+--> calibrate --> likelihood (Gaussian; + a surrogate's variance)
    model (any uqkit model)+        |             ^
                                    v             | one batch of model runs per step
                        sampler: tmcmc (evidence) | emcee (ensemble)
                                    |
                                    v
                        Posterior: draws, summaries, corner plot, predictive

May import the rest of :mod:`uqkit`; nothing in uqkit's core imports it.
"""
from .inference import METHODS, NOISE, ConvergenceWarning, FailedRunsWarning, calibrate
from .likelihood import gaussian_log_likelihood
from .posterior import Posterior
from .tmcmc import TMCMCResult, tmcmc

__all__ = ["METHODS", "NOISE", "ConvergenceWarning", "FailedRunsWarning", "Posterior",
           "TMCMCResult", "calibrate", "gaussian_log_likelihood", "tmcmc"]
