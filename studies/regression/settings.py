"""The regression study's settings (a dataclass, checked on construction) and constants.

Imports: numpy and uqkit (and fem's presets); nothing of the study's other modules.
"""
from dataclasses import dataclass

import numpy as np

from uqkit.execution.executors import worker_count
from uqkit.validation import check_count

from ..common import check_mode_settings

__all__ = ["NOISES", "BASELINES", "BAYESIAN", "BAYESIAN_PAPER", "METHODS", "HIER", "GP_MARGIN",
           "COVERAGE_RANGE", "PAPER", "truth", "RegressionStudy", "bayesian", "methods",
           "make_data", "KEYS", "BAYES_KEYS"]


#: The noise levels sigma of the paper's Tables 1 and 2.
NOISES = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9)


#: The baselines' rows.
BASELINES = ("PR", "SVR", "NN", "PCE", "GP")


#: The Bayesian rows of the default run and of ``--paper``.
BAYESIAN = ("BDL", "BDL-hierarchical")


#: The Bayesian rows of ``--paper``'s tables: also a warm-started and a tempered BDL.
BAYESIAN_PAPER = BAYESIAN + ("BDL-warm", "BDL-tempered")


#: The default run's rows.
METHODS = BASELINES + BAYESIAN


#: The row the issue's goals are about: hierarchical prior, untempered posterior.
HIER = "BDL-hierarchical"


#: The goals' bounds: R^2 inside the range within this of the GP's; 95% coverage in this range.
GP_MARGIN = 0.03


#: The goals' bounds: the 95% intervals' coverage within this range.
COVERAGE_RANGE = (0.85, 0.99)


#: The paper's Tables 1 and 2 (one data draw each).
PAPER = {
    "r2": {"PR": (0.9950, 0.9937, 0.9884, 0.9807, 0.9680, 0.9533),
           "SVR": (0.9783, 0.9784, 0.9758, 0.9604, 0.9486, 0.9388),
           "NN": (0.9890, 0.9854, 0.9828, 0.9770, 0.9526, 0.9497),
           "BDL": (0.9883, 0.9893, 0.9928, 0.9757, 0.9672, 0.9516)},
    "rmse": {"PR": (0.2483, 0.2629, 0.3917, 0.4863, 0.6227, 0.7643),
             "SVR": (0.5397, 0.5424, 0.5642, 0.6997, 0.7934, 0.9198),
             "NN": (0.3817, 0.4068, 0.4783, 0.5276, 0.7350, 0.8077),
             "BDL": (0.3270, 0.3098, 0.2964, 0.5425, 0.6091, 0.7933)}}


def truth(x):
    """The paper's regression function, y = x sin(x)."""
    return x * np.sin(x)


@dataclass
class RegressionStudy:
    """Settings. ``paper`` uses the paper's training: NN by SGD (lr 1e-4, 100000 epochs), the
    BDL rows by mean-field variational inference (``bdl_epochs`` Adam epochs), plus BDL-warm
    and BDL-tempered.

    ``max_iter`` and ``restarts``: L-BFGS iterations (also of the NN row) and initialisations
    per fit of the default (Laplace) BDL rows; ``noise``: ``"evidence"`` (their noise precision
    and the prior precision of each parameter tensor set by the Laplace evidence at the MAP
    weights, ``BDL(laplace_prior_scale="evidence")``, :mod:`surrogates.laplace.evidence`) or
    ``"map"`` (the MAP fit's noise and the prior's own precision, ``laplace_prior_scale=1``).
    ``bdl_epochs`` trains the ``--paper`` BDL rows; BDL-warm and BDL-tempered spend two thirds
    of it on the MAP warm start and as many epochs again on variational inference.
    ``tempered_kl`` weights the KL term of BDL-tempered.
    """

    out: str
    seeds: int = 10
    n_train: int = 30
    n_test: int = 1000
    paper: bool = False
    workers: int = None
    progress: bool = True
    bdl_epochs: int = 3000
    tempered_kl: float = 0.3
    max_iter: int = 2000
    restarts: int = 5
    noise: str = "evidence"

    def __post_init__(self):
        check_mode_settings(self, paper_only=("bdl_epochs", "tempered_kl"),
                            default_only=("max_iter", "restarts", "noise"))
        for name in ("seeds", "n_train", "n_test", "bdl_epochs", "max_iter",
                     "restarts"):
            check_count(getattr(self, name), name)
        if not (isinstance(self.tempered_kl, (int, float)) and 0 < self.tempered_kl <= 1):
            raise ValueError("tempered_kl must lie in (0, 1], got "
                             f"tempered_kl={self.tempered_kl!r}")
        if self.noise not in ("evidence", "map"):
            raise ValueError(f"noise must be 'evidence' or 'map', got noise={self.noise!r}")
        self.workers = worker_count(self.workers)


def bayesian(study):
    """The study's Bayesian rows."""
    return BAYESIAN_PAPER if study.paper else BAYESIAN


def methods(study):
    """The study's rows."""
    return BASELINES + bayesian(study)


def make_data(seed, noise, n_train, n_test):
    """Training points uniform in (-10, 10) with N(0, noise^2) noise; a dense clean test grid,
    and noisy test targets (same noise) for the predictive NLL and coverage."""
    rng = np.random.default_rng([seed, int(round(noise * 1000))])
    x = rng.uniform(-10, 10, n_train)
    y = truth(x) + rng.normal(0, noise, n_train)
    xt = np.linspace(-10, 10, n_test)
    yt_noisy = truth(xt) + rng.normal(0, noise, n_test)
    return x[:, None], y, xt[:, None], truth(xt), yt_noisy


#: Per-fit metrics averaged over seeds into the report.
KEYS = ("r2", "rmse", "r2_inside", "r2_train", "rmse_train")


#: Per-fit metrics of the Bayesian rows only, averaged over seeds into the report.
BAYES_KEYS = ("coverage", "nll", "noise")
