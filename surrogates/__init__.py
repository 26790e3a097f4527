"""surrogates: Bayesian deep learning by mean-field variational inference, and baselines.

Stands alone: it imports neither ``fem`` nor ``uqkit``.

>>> from surrogates import BDL
>>> BDL(hidden=(30, 15, 10), prior="hierarchical-normal")
BDL(hidden=(30, 15, 10), prior='hierarchical-normal', task='regression')
"""
from .baselines import (BASELINES, GaussianProcess, NeuralNetwork, PolynomialChaos,
                        PolynomialRegression, SupportVectorRegression)
from .bdl import BDL, BayesianModel
from .likelihoods import CategoricalLikelihood, GaussianLikelihood
from .network import MeanFieldMLP
from .prediction import Prediction
from .priors import CauchyPrior, HierarchicalPrior, LaplacePrior, NormalPrior, make_prior

__all__ = ["BASELINES", "BDL", "BayesianModel", "CategoricalLikelihood", "CauchyPrior",
           "GaussianLikelihood", "GaussianProcess", "HierarchicalPrior", "LaplacePrior",
           "MeanFieldMLP", "NeuralNetwork", "NormalPrior", "PolynomialChaos",
           "PolynomialRegression", "Prediction", "SupportVectorRegression", "make_prior"]
