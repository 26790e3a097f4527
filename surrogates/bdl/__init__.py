"""The Bayesian deep-learning estimators and how they are fitted, predicted and stored.

The estimators hold the settings and delegate; the inference engines live beside this
package (mean field: ``network``, ``meanfield_batched``, ``laplace`` (its warm start),
``optim``; Laplace: ``laplace_fit``, ``evidence``, ``lbfgs``; both: ``priors``,
``likelihoods``, ``stacked``)::

    estimators   BDL, BDLClassifier: settings, fit, predict, save/load (delegating)
    settings     the checks of the settings
    model        BayesianModel: prior + likelihood + variational family, its ELBO
    training     the autograd mean-field trainer; the start of a full-batch fit
    fit_many     many fits as batched programs, on worker processes
    evidence_search  EvidenceSearch: the candidate and restart with the highest evidence
    prediction   the predictive distribution and weight posterior of either engine
    persistence  the file format
    runtime      torch threads, malloc and progress bars
"""
from .estimators import BDL, BDLClassifier
from .evidence_search import EvidenceSearch
from .fit_many import fit_many
from ..meanfield.model import BayesianModel

__all__ = ["BDL", "BDLClassifier", "BayesianModel", "EvidenceSearch", "fit_many"]
