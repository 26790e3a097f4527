"""The linearised Laplace inference engine of the BDL estimators.

The MAP network trained by batched L-BFGS, then a Gaussian posterior about it from the full
generalised Gauss-Newton matrix, its prior precision and noise from the evidence::

    lbfgs     batched L-BFGS (K networks, each its own line search)
    fit       the MAP objective, the K-network fit and LaplacePosterior
    evidence  the Laplace evidence and its maximisation over prior scales and noise
    engine    LaplaceEngine: a fitted posterior's predictions, posterior and state

Imports torch, numpy, scipy and the surrogates' priors and stacked networks; never
:mod:`surrogates.meanfield` or :mod:`surrogates.bdl`.
"""
from .engine import LaplaceEngine

__all__ = ["LaplaceEngine"]
