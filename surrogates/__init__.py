"""surrogates: Bayesian deep learning by mean-field variational inference, and baselines.

Stands alone: it imports neither ``fem`` nor ``uqkit``.

Every surrogate is a scikit-learn estimator (``fit`` / ``predict``, ``get_params``, ``clone``,
pipelines and grid search); those with an uncertainty share one API, ``predict(X,
return_std=True)`` and ``predict_distribution(X)``.

>>> from surrogates import BDL
>>> BDL(hidden=(30, 15, 10), prior="hierarchical-normal")
BDL(prior='hierarchical-normal')
"""
from .baselines import (BASELINES, GaussianProcess, NeuralNetwork, PolynomialChaos,
                        PolynomialRegression, SupportVectorRegression)
from .bdl import BDL, BayesianModel, BDLClassifier, EvidenceSearch, fit_many
from .likelihoods import CategoricalLikelihood, GaussianLikelihood
from .meanfield.network import MeanFieldMLP
from .prediction import Prediction
from .priors import CauchyPrior, HierarchicalPrior, LaplacePrior, NormalPrior, make_prior

__all__ = ["BASELINES", "BDL", "BDLClassifier", "BayesianModel", "CategoricalLikelihood",
           "CauchyPrior", "EvidenceSearch", "GaussianLikelihood", "GaussianProcess",
           "HierarchicalPrior", "LaplacePrior", "MeanFieldMLP", "NeuralNetwork", "NormalPrior",
           "PolynomialChaos", "PolynomialRegression", "Prediction", "SupportVectorRegression",
           "fit_many", "make_prior"]
