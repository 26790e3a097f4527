"""Choosing a Laplace BDL by its evidence: every candidate setting (a grid of priors, widths,
architectures) and every restart fitted as few batched programs, and the fit with the highest
Laplace log marginal likelihood kept.

Bayesian model selection ranks models M by their evidence ``p(y | X, M)`` (MacKay 1992,
"Bayesian interpolation"; for networks through the Laplace approximation, Immer et al. 2021,
"Scalable marginal likelihood estimation for model selection in deep learning"). The
evidence of a fit (:attr:`surrogates.BDL.log_evidence_`,
:func:`surrogates.laplace.fit.log_evidence`) is its fit to the data less an Occam factor,
the log-volume ratio of posterior to prior: a restart that collapsed to a constant loses on
the fit, an over-fitted one on the Occam factor, so unlike the training objective it
compares restarts and priors on one scale, and it needs no held-out data.

It is an approximation and can mislead: it is the evidence of the linearised network with a
Gaussian prior about each fit's own MAP weights, so it ranks fits of one model class well and
distant classes less reliably (measured on the paper's regression example at noise 0.9: within
the hierarchical prior, the evidence's choice of 5 restarts reaches a held-out R^2 of 0.644
where the best of them by held-out data reaches 0.656; across priors it prefers a
near-constant fit of N(0, 0.3) on 6 of 10 data draws). ``results_`` keeps every candidate's
evidence so that such a choice can be read and questioned.

The fits run as batched programs (:func:`surrogates.fit_many`), which equal single fits bit
for bit only where the training rows times each hidden width are whole multiples of 16.
Elsewhere a fit that stops at ``max_iter`` takes another path than alone, so a candidate's
evidence depends on the grid beside it (25 rows, width 10: the same four restarts of one
prior moved by up to 6 nats between grids of one, two and three priors, and one choice of six
differed from that of single fits, by 0.03 nats). Give such a search a ``max_iter`` at which
its fits converge, or rows that are a multiple of 16, where its choice is to be reproduced by
single fits.

Example:
    >>> import numpy as np
    >>> from surrogates import BDL
    >>> x = np.linspace(-1, 1, 40)[:, None]
    >>> y = np.sin(3 * x[:, 0]) + 0.05 * np.random.default_rng(0).normal(size=40)
    >>> search = EvidenceSearch(BDL(hidden=(8,), inference="laplace", max_iter=200),
    ...                         {"prior": ["normal(0, 1)", "hierarchical-normal"]},
    ...                         restarts=2).fit(x, y)
    >>> len(search.results_), search.best_estimator_.predict(x[:2]).shape
    (4, (2,))
"""
import itertools
import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone

from .fit_many import fit_many

__all__ = ["EvidenceSearch", "SEED_STRIDE"]


#: A restart r of a candidate fits with the candidate's seed plus ``r * SEED_STRIDE``.
SEED_STRIDE = 1000


class EvidenceSearch(BaseEstimator):
    """Fit every setting of ``param_grid`` on ``estimator`` ``restarts`` times and keep the fit
    with the highest Laplace evidence; it predicts as that fit does.

    Args:
        estimator: an unfitted :class:`surrogates.BDL` or :class:`surrogates.BDLClassifier`
            with ``inference="laplace"`` (the only engine with an evidence).
        param_grid: ``{setting: [values]}`` (scikit-learn's grid form; every combination is a
            candidate), or a list of such dicts, or None (the estimator as given).
        restarts: initialisations per candidate; restart r adds ``r * SEED_STRIDE`` to the
            seed.
        n_jobs: worker processes for :func:`surrogates.fit_many`.

    Attributes:
        best_estimator_: the chosen fitted estimator.
        best_params_: its grid setting.
        best_index_: its row in ``results_``.
        log_evidence_: its evidence (nats, targets in their own units).
        results_: one dict per fit: ``params``, ``restart``, ``seed``, ``log_evidence``,
            ``objective`` (the MAP's training objective) and ``converged``.
    """

    def __init__(self, estimator, param_grid=None, restarts=3, n_jobs=None):
        self.estimator, self.param_grid = estimator, param_grid
        self.restarts, self.n_jobs = restarts, n_jobs

    def candidates(self):
        """The grid's settings, in order: a list of dicts."""
        grids = self.param_grid if isinstance(self.param_grid, list) else [self.param_grid]
        out = []
        for grid in grids:
            grid = grid or {}
            if not isinstance(grid, dict):
                raise ValueError(f"param_grid must be a dict or a list of dicts, got {grid!r}")
            keys = sorted(grid)
            for key in keys:
                if isinstance(grid[key], str) or not hasattr(grid[key], "__iter__") \
                        or not len(grid[key]):
                    raise ValueError(f"param_grid[{key!r}] must be a non-empty list of "
                                     f"values, got {grid[key]!r}")
            out += [dict(zip(keys, values))
                    for values in itertools.product(*(grid[k] for k in keys))]
        return out

    def _check(self):
        if getattr(self.estimator, "inference", None) != "laplace":
            raise ValueError("EvidenceSearch needs a BDL or BDLClassifier with "
                             "inference='laplace', got "
                             f"{type(self.estimator).__name__}(inference="
                             f"{getattr(self.estimator, 'inference', None)!r})")
        if isinstance(self.restarts, bool) or not isinstance(self.restarts, (int, np.integer)) \
                or self.restarts < 1:
            raise ValueError(f"restarts must be an integer >= 1, got restarts={self.restarts!r}")
        valid = self.estimator.get_params()
        for params in self.candidates():
            unknown = sorted(set(params) - set(valid))
            if unknown:
                raise ValueError(f"param_grid names {unknown}, which "
                                 f"{type(self.estimator).__name__} does not have")
            if params.get("inference", "laplace") != "laplace":
                raise ValueError("every candidate must keep inference='laplace', got "
                                 f"{params!r}")
            seed = params.get("seed", valid["seed"])
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(f"seed must be an integer >= 0, got seed={seed!r} (each "
                                 f"restart r adds r * {SEED_STRIDE} to it)")

    def fit(self, X, y):
        """Fit every candidate and restart on (X, y) (one :func:`surrogates.fit_many` call)
        and choose; returns self."""
        self._check()
        fits, rows, made = [], [], {}
        for params in self.candidates():
            for r in range(self.restarts):
                est = clone(self.estimator).set_params(**params)
                est.set_params(seed=int(est.seed) + r * SEED_STRIDE)
                fit_key = repr(sorted(est.get_params().items()))
                if fit_key in made:  # a grid over seed meeting a restart's seed
                    raise ValueError(f"{params} restart {r} fits seed {est.seed}, as "
                                     f"{made[fit_key]} did: the same fit twice (restart r adds "
                                     f"r * {SEED_STRIDE} to the seed); space the grid's seeds "
                                     f"by at least {self.restarts * SEED_STRIDE}")
                made[fit_key] = f"{params} restart {r}"
                fits.append(est)
                rows.append({"params": params, "restart": r, "seed": int(est.seed)})
        fit_many(fits, [(X, y)] * len(fits), n_jobs=self.n_jobs)
        for row, est in zip(rows, fits):
            row.update(log_evidence=float(est.log_evidence_),
                       objective=float(est.laplace_.objective),
                       converged=bool(est.laplace_.converged))
        scores = [row["log_evidence"] for row in rows]
        if not any(math.isfinite(v) for v in scores):
            raise RuntimeError("no candidate has a finite evidence: "
                               f"{[row['params'] for row in rows]}")
        broken = [i for i, v in enumerate(scores) if not math.isfinite(v)]
        if broken:  # a NaN or an infinity is a broken fit, not the best or the worst one
            warnings.warn(f"{len(broken)} of {len(rows)} fits have no finite evidence and are "
                          f"left out of the choice: rows {broken} of results_ "
                          f"({[rows[i]['params'] for i in broken[:3]]}"
                          f"{' ...' if len(broken) > 3 else ''})", RuntimeWarning,
                          stacklevel=2)
        self.best_index_ = int(np.nanargmax(np.where(np.isfinite(scores), scores, np.nan)))
        self.best_estimator_ = fits[self.best_index_]
        self.best_params_ = rows[self.best_index_]["params"]
        self.log_evidence_ = scores[self.best_index_]
        self.results_ = rows
        return self

    def table(self):
        """``results_`` as text: one line per fit, best evidence first, the chosen marked."""
        def rank(i):  # best first; fits without a finite evidence last
            value = self.results_[i]["log_evidence"]
            return (0, -value) if math.isfinite(value) else (1, 0.0)

        order = sorted(range(len(self.results_)), key=rank)
        lines = [f"{'':2}{'log evidence':>13}  {'objective':>10}  restart  setting"]
        for i in order:
            row = self.results_[i]
            lines.append(f"{'*' if i == self.best_index_ else ' ':2}"
                         f"{row['log_evidence']:13.3f}  {row['objective']:10.4f}  "
                         f"{row['restart']:7d}  {row['params']}")
        return "\n".join(lines)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "best_estimator_")

    @property
    def feature_names_in_(self):
        """The chosen fit's input column names (a fit on a DataFrame): what
        :class:`uqkit.adapters.SurrogateModel` and ``sobol_indices_surrogate`` order the inputs
        by. An AttributeError where the fit had no names (an array), as scikit-learn's."""
        return self._best().feature_names_in_

    def _best(self):
        if not self.__sklearn_is_fitted__():
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this EvidenceSearch is not fitted yet; call fit(X, y) first")
        return self.best_estimator_

    def predict(self, X, **kwargs):
        """The chosen fit's ``predict``."""
        return self._best().predict(X, **kwargs)

    def predict_distribution(self, X, **kwargs):
        """The chosen fit's ``predict_distribution``."""
        return self._best().predict_distribution(X, **kwargs)

    def predict_proba(self, X, **kwargs):
        """The chosen fit's ``predict_proba`` (a :class:`surrogates.BDLClassifier`)."""
        return self._best().predict_proba(X, **kwargs)

    def save(self, path):
        """Save the chosen fit (:meth:`surrogates.BDL.save`); load it with the BDL class."""
        return self._best().save(path)
