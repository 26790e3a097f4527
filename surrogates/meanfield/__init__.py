"""The mean-field variational inference engine of the BDL estimators.

A factorised Gaussian posterior over the weights, fitted by maximising the ELBO::

    network     MeanFieldMLP: the variational family (means, softplus std devs)
    model       BayesianModel: family + prior + likelihood, and its ELBO
    optim       LeanAdam, the trainers' optimiser
    warm_start  the mean-field Laplace standard deviations after a MAP warm start
    trainer     the autograd trainer (any prior, likelihood or setting)
    batched     K regression fits as one program with hand-written gradients
    engine      MeanFieldEngine: a fitted model's predictions, posterior and state

Imports torch and the surrogates' priors, likelihoods, stacked networks, scaling and runtime;
never :mod:`surrogates.laplace` or :mod:`surrogates.bdl`.
"""
from .engine import MeanFieldEngine

__all__ = ["MeanFieldEngine"]
