"""surrogates: Bayesian deep learning by mean-field variational inference, and baselines.

Stands alone: it imports neither ``fem`` nor ``uqkit``.

Every surrogate is a scikit-learn estimator (``fit`` / ``predict``, ``get_params``, ``clone``,
pipelines and grid search); those with an uncertainty share one API, ``predict(X,
return_std=True)`` and ``predict_distribution(X)``.

>>> from surrogates import BDL
>>> BDL(hidden=(30, 15, 10), prior="hierarchical-normal")
BDL(prior='hierarchical-normal')
"""
import importlib as _importlib

#: Each public name and the submodule that defines it: imported on first use (PEP 562), so
#: that a process that needs a baseline only (the GP of an active learning, a pool worker
#: fitting a PCE) does not import torch, which the BDL modules load.
_EXPORTS = {
    **dict.fromkeys(["BASELINES", "GaussianProcess", "NeuralNetwork", "PolynomialChaos",
                     "PolynomialRegression", "SupportVectorRegression"], "baselines"),
    **dict.fromkeys(["BDL", "BayesianModel", "BDLClassifier", "EvidenceSearch", "fit_many"],
                    "bdl"),
    **dict.fromkeys(["CategoricalLikelihood", "GaussianLikelihood"], "likelihoods"),
    "MeanFieldMLP": "meanfield.network",
    "Prediction": "prediction",
    **dict.fromkeys(["CauchyPrior", "HierarchicalPrior", "LaplacePrior", "NormalPrior",
                     "make_prior"], "priors"),
}

__all__ = ["BASELINES", "BDL", "BDLClassifier", "BayesianModel", "CategoricalLikelihood",
           "CauchyPrior", "EvidenceSearch", "GaussianLikelihood", "GaussianProcess",
           "HierarchicalPrior", "LaplacePrior", "MeanFieldMLP", "NeuralNetwork", "NormalPrior",
           "PolynomialChaos", "PolynomialRegression", "Prediction", "SupportVectorRegression",
           "fit_many", "make_prior"]


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(_importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
