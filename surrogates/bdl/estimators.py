"""The BDL estimators: :class:`BDL` (regression) and :class:`BDLClassifier`, Bayesian MLPs
fitted by mean-field variational inference or the linearised Laplace approximation.

The prior (:mod:`surrogates.priors`), the likelihood (:mod:`surrogates.likelihoods`) and the
variational family (:class:`surrogates.meanfield.network.MeanFieldMLP`) are built separately
and composed in one :class:`BayesianModel`, which computes the ELBO (eq 3.13-3.14 of the paper)::

    ELBO = (N / M) sum_{i in batch} E_q[log p(y_i | x_i, w)] - KL(q || p) [+ log p(tau)]

with the expectation estimated by ``n_samples`` reparameterised draws (local
reparameterisation by default). :class:`BDL` (regression) and :class:`BDLClassifier` wrap it
as scikit-learn estimators: ``predict`` gives predictive means (class labels for the
classifier), ``predict(X, return_std=True)`` means and standard deviations as scikit-learn's
``GaussianProcessRegressor`` does, and ``predict_distribution`` the whole predictive
distribution (:class:`surrogates.prediction.Prediction`).

Example:
    >>> import numpy as np
    >>> x = np.linspace(-1, 1, 64)[:, None]
    >>> model = BDL(hidden=(16,), epochs=200, batch_size=16, lr=0.01, seed=0).fit(x, x ** 2)
    >>> model.predict(x[:3]).shape
    (3, 1)
    >>> pred = model.predict_distribution(x[:3])
    >>> pred.mean.shape, pred.epistemic_var.shape, sorted(pred.intervals)
    ((3, 1), (3, 1), [0.95])

Imports numpy, torch, scikit-learn and the package's modules; the estimators delegate
training to their engine (:mod:`surrogates.meanfield`, :mod:`surrogates.laplace`) and
:mod:`surrogates.bdl.fit_many`, prediction to :mod:`surrogates.bdl.prediction` and files to
:mod:`surrogates.bdl.persistence`.
"""
import inspect

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError

from ..laplace import LaplaceEngine
from ..meanfield import MeanFieldEngine
from ..meanfield.trainer import fit_autograd
from ..runtime import torch_threads
from ..stacked import StackedMLP
from ..validation import MultiOutputRegressorMixin, check_finite, is_int
from .fit_many import (_batched_meanfield_reason, _fit_laplace_group, _fit_meanfield_group,
                       fit_many)
from .persistence import load, save
from ..prediction import check_levels
from .prediction import posterior, predict
from .settings import check_prediction_settings, check_settings, fit_device

__all__ = ["BDL", "BDLClassifier"]


class _BaseBDL(BaseEstimator):
    """Bayesian MLP fitted by mean-field variational inference or the linearised Laplace
    approximation (``inference``), shared by :class:`BDL` and :class:`BDLClassifier`.

    Args:
        hidden: hidden layer widths; ``()`` gives a Bayesian linear model.
        activation: hidden activation (``tanh``).
        prior: weight prior: a :class:`surrogates.priors.Prior` or a spec such as
            ``"normal(0, 1)"``, ``"laplace(0, 1)"``, ``"cauchy(1, 1)"``,
            ``"hierarchical-normal"`` (N(0, IG(1, 1))).
        noise_std: initial (or, with ``learn_noise=False``, known) noise standard deviation, in
            standardised output units when ``standardize`` is on.
        noise_prior: optional (shape, rate) Gamma prior on the noise precision.
        init_std: initial posterior standard deviation of the weights.
        n_samples: Monte Carlo samples of the ELBO's expectation per step (paper: 200 in
            example 3).
        local_reparam: local reparameterisation (lower-variance gradients) or sampled weights.
        kl_samples: draws for Monte Carlo KL (Cauchy priors only).
        epochs, batch_size, lr: Adam training settings.
        lr_step, lr_gamma: multiply the learning rate by ``lr_gamma`` every ``lr_step`` epochs.
        kl_weight: weight of the KL term in the objective (1: the ELBO; below 1 a tempered
            posterior that trusts the data more than the prior, for very small data sets).
        kl_anneal: epochs (an integer >= 0) over which the KL weight rises linearly from 0 to
            ``kl_weight`` (0: off).
        trace_weights: record the posterior mean and std of the first ``trace_weights``
            weights after every epoch (``history_["trace_mu"]``, ``["trace_sigma"]``).
        map_epochs: warm start: for this many first epochs the posterior standard deviations
            stay at ``init_std``, the noise at ``noise_std``, and only the means train, which is
            MAP estimation under the prior; full variational inference follows (0: off).
            Validation and early stopping start with the variational phase.
        warm_sigma: after the warm start, ``"laplace"`` (default) sets each posterior standard
            deviation to its mean-field Laplace value at the MAP means and ``noise_std``
            (:mod:`surrogates.laplace`); ``"keep"`` leaves them at ``init_std``.
        val_fraction: share of the training data held out for validation, in [0, 1).
        patience: stop after this many evaluations (an integer >= 1) without a better
            validation NLL (the best state is restored); None trains all epochs.
        eval_every: epochs between validation evaluations.
        standardize: standardise inputs and (for regression) outputs with the mean and
            standard deviation of the training rows (the validation rows excluded).
        seed: seed of initialisation, batching and sampling.
        device: torch device (``"cpu"``, ``"cuda"``), or ``"auto"``: the GPU where one is
            present and the problem is big enough to train faster there, else the CPU
            (:func:`surrogates.bdl.settings.choose_device`; the choice is ``device_``). A
            GPU named for a smaller problem trains there with a ``SlowDeviceWarning``.
        predict_samples: posterior samples used by :meth:`predict` by default.
        predict_batch: inputs per prediction chunk (bounds memory).
        num_threads: torch threads (an integer >= 1) while training and predicting. None: one
            thread while training (these small networks train fastest on one: torch's
            default of every core made fits 9-37x slower on a 2-core machine) and torch's
            setting while predicting.
        progress: show a tqdm progress bar over epochs; None (default) shows it on a terminal
            once a fit has run for ``PROGRESS_DELAY`` seconds.
        inference: ``"meanfield"``: mean-field variational inference trained by Adam (the
            paper's method; every setting above applies). Regression with tanh, local
            reparameterisation, a normal or Laplace prior (or a point-mass hierarchical one),
            no validation, warm start or weight trace trains by the batched trainer of
            :mod:`surrogates.meanfield.batched` (hand-written gradients, ~4x faster per fit);
            other settings by the autograd trainer; ``trainer_`` says which.
            ``"laplace"``: the MAP network
            trained by full-batch L-BFGS for ``max_iter`` iterations at most, with the noise
            precision learned (where the network can interpolate its data this has no finite
            optimum, so ``max_iter`` is the stop and ``history_["converged"]`` is False), then
            the full-GGN linearised Laplace posterior about it
            (:mod:`surrogates.laplace.fit`); it uses ``hidden``, ``activation``, ``prior``,
            ``noise_std``, ``learn_noise``, ``noise_prior``, ``standardize``, ``seed``,
            ``max_iter`` and the prediction settings, and fits far more closely on small data
            (the membrane study's report measures both).
        max_iter: L-BFGS iterations of ``inference="laplace"`` (an integer >= 1).
        laplace_prior_scale: ``inference="laplace"``: ``"evidence"`` (default) multiplies the
            posterior's prior precision of each parameter tensor (each layer's weight matrix
            and bias vector) by a factor and, with ``learn_noise`` and no ``noise_prior`` (the
            MAP's noise honours one), sets each output's noise precision, both to maximise the
            Laplace evidence on the training data (MacKay's empirical Bayes; laplace-torch's
            post-hoc marginal-likelihood prior precision per parameter tensor;
            :mod:`surrogates.laplace.evidence`). The MAP network is unchanged, and so is the
            predictive mean. A number > 0 multiplies every prior precision by it, for the MAP
            fit too (1: the prior's own; 4 on ``normal(0, 1)`` is ``normal(0, 0.5)``), and
            keeps the MAP noise. The factors used are ``history_["prior_scale"]``.
        laplace_variance: ``inference="laplace"``, regression: how predictions get the
            epistemic variance ``diag(J Sigma J^T)`` of the linearised network. ``"draws"``
            (default): the mean square of ``predict_samples`` draws' outputs about the mean, a
            relative error of about ``sqrt(2 / predict_samples)`` (10% at 200 draws, 5% in
            the standard deviation and the intervals' epistemic part), and the same draws at
            every input. ``"exact"``: the Jacobian through Sigma, to rounding and the same for
            any seed (:meth:`surrogates.laplace.fit.LaplacePosterior.variance`); the draws
            then serve ``return_samples`` alone. Its cost per input grows with the weights
            (P) where the draws' grows with their number: ``docs/guide/surrogates.md``
            measures both. A prediction setting: ``set_params`` changes it on a fitted model.
    """

    _task = None

    def __init__(self, hidden=(30, 15, 10), activation="tanh", prior="normal(0, 1)",
                 noise_std=0.1, learn_noise=True, noise_prior=None,
                 init_std=1e-3, n_samples=1, local_reparam=True, kl_samples=1, epochs=1000,
                 batch_size=16, lr=5e-3, lr_step=100, lr_gamma=0.75, kl_weight=1.0, kl_anneal=0,
                 map_epochs=0, warm_sigma="laplace", trace_weights=0,
                 val_fraction=0.0, patience=None, eval_every=10, standardize=True, seed=0,
                 device="auto", predict_samples=200, predict_batch=4096, num_threads=None,
                 progress=None, inference="meanfield", max_iter=2000,
                 laplace_prior_scale="evidence", laplace_variance="draws"):
        self.hidden = hidden
        self.activation = activation
        self.prior = prior
        self.noise_std = noise_std
        self.learn_noise = learn_noise
        self.noise_prior = noise_prior
        self.init_std = init_std
        self.n_samples = n_samples
        self.local_reparam = local_reparam
        self.kl_samples = kl_samples
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.lr_step = lr_step
        self.lr_gamma = lr_gamma
        self.kl_weight = kl_weight
        self.kl_anneal = kl_anneal
        self.map_epochs = map_epochs
        self.warm_sigma = warm_sigma
        self.trace_weights = trace_weights
        self.val_fraction = val_fraction
        self.patience = patience
        self.eval_every = eval_every
        self.standardize = standardize
        self.seed = seed
        self.device = device
        self.predict_samples = predict_samples
        self.predict_batch = predict_batch
        self.num_threads = num_threads
        self.progress = progress
        self.inference = inference
        self.max_iter = max_iter
        self.laplace_prior_scale = laplace_prior_scale
        self.laplace_variance = laplace_variance

    def _config(self):
        """The constructor arguments as plain data (a prior object by its description)."""
        params = self.get_params()
        if not isinstance(params["prior"], (str, dict)):
            params["prior"] = params["prior"].describe()
        params["hidden"] = list(params["hidden"])
        return params

    def _check_settings(self):
        check_settings(self)

    # -- training ------------------------------------------------------------------------
    @classmethod
    def fit_many(cls, datasets, settings=None, n_jobs=None):
        """K models of this class fitted at once (see :func:`fit_many`, which ``n_jobs`` is
        passed to): ``settings`` is one dict of constructor arguments for all, or a list of
        K dicts; returns the K fitted models."""
        datasets = list(datasets)
        if settings is None or isinstance(settings, dict):
            settings = [dict(settings or {})] * len(datasets)
        settings = list(settings)
        if len(settings) != len(datasets):
            raise ValueError(f"fit_many got {len(datasets)} data sets and {len(settings)} "
                             "settings; give one dict, or one per data set")
        return fit_many([cls(**kw) for kw in settings], datasets, n_jobs=n_jobs)

    def fit(self, X, y):
        """Train on inputs X (n, d) and targets y; returns self. ``history_`` holds the
        per-epoch ELBO, NLL and KL (``inference="meanfield"``; in the units of the
        standardised targets) or the L-BFGS record."""
        X, Y = self._prepare(X, y)
        with torch_threads(self.num_threads or 1):
            if self.inference == "laplace":
                _fit_laplace_group([self], [(X, Y)])
                return self
            return self._fit(X, Y)

    def _prepare(self, X, y):
        """Check the settings and the training data; returns the validated (X, Y). The
        settings are recorded as ``fit_config_``: a saved model is the fitted one, whatever
        ``set_params`` changed since (a tanh fit saved after ``activation="relu"`` loaded
        as a relu network), but for the prediction settings, which it saves as they stand
        (:data:`surrogates.bdl.persistence.PREDICTION_SETTINGS`)."""
        self._check_settings()
        X, Y = self._fit_data(X, y)
        if X.shape[0] < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 samples, got "
                             f"{X.shape[0]} sample")
        self.fit_config_ = self._config()  # once the data is good: a refit that fails
        # keeps the network it had, and so its settings
        k = Y.shape[1] if self._task == "regression" else len(self.classes_)
        fit_device(self, X.shape[0], StackedMLP((X.shape[1], *self.hidden, k)).n_params)
        return X, Y

    def _check_X(self, X, reset):
        from sklearn.utils.validation import validate_data

        X = validate_data(self, X, reset=reset, dtype=np.float64, ensure_all_finite=False)
        return check_finite(X, "X")

    def _fit(self, X, Y):
        """Mean-field training: by the batched trainer (K = 1) where it applies
        (:func:`_batched_meanfield_reason`), else by :meth:`_fit_autograd`."""
        if _batched_meanfield_reason(self) is None:
            _fit_meanfield_group([self], [(X, Y)])
            return self
        return self._fit_autograd(X, Y)

    def _fit_autograd(self, X, Y):
        """The autograd mean-field trainer (:func:`surrogates.meanfield.trainer.fit_autograd`)."""
        return fit_autograd(self, X, Y)

    def _kl_weight_at(self, epoch):
        """KL weight in force at ``epoch`` (1-based): ``kl_weight``, ramped over ``kl_anneal``."""
        return self.kl_weight * (min(1.0, epoch / self.kl_anneal) if self.kl_anneal else 1.0)

    def _validate(self, Xv, Yv):
        pred = self._distribution(Xv, min(64, self.predict_samples), False, (), self.seed)
        if self._task == "regression":
            mean = pred.mean.reshape(Yv.shape)  # a 1-D target comes back as (n,)
            var = pred.total_var.reshape(Yv.shape)
            nll = float(np.mean(0.5 * (np.log(2 * np.pi * var) + (Yv - mean) ** 2 / var)))
            return {"nll": nll, "rmse": float(np.sqrt(np.mean((Yv - mean) ** 2))),
                    "accuracy": float("nan")}
        p = np.clip(pred.mean[np.arange(len(Yv)), Yv], 1e-12, 1.0)
        return {"nll": float(-np.mean(np.log(p))), "rmse": float("nan"),
                "accuracy": float(np.mean(pred.mean.argmax(1) == Yv))}

    # -- prediction ------------------------------------------------------------------------
    def _check_fitted(self):
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call "
                                 "fit(X, y) first")

    def __sklearn_is_fitted__(self):
        return "model_" in vars(self) or "laplace_" in vars(self)

    @property
    def engine_(self):
        """The fitted inference engine (:class:`surrogates.laplace.LaplaceEngine` or
        :class:`surrogates.meanfield.MeanFieldEngine`): what prediction, the posterior and
        the saved file read. The one place that tells the engines apart."""
        self._check_fitted()
        if "laplace_" in vars(self):
            return LaplaceEngine(self.net_, self.laplace_)
        return MeanFieldEngine(self.model_)

    def _n_outputs(self):
        return self.engine_.sizes[-1]

    @property
    def log_evidence_(self):
        """The Laplace approximation of the log marginal likelihood ``log p(y | X)`` of the
        training targets in their own units (the density of the standardised targets less
        ``n sum_j log scale_j``), constants included: what :class:`EvidenceSearch` and the
        studies rank restarts and priors by (:func:`surrogates.laplace.fit.log_evidence`).
        Laplace fits only. A mean-field fit's ``history_["elbo"]`` is no bound on it to compare
        with: it is a training record, per epoch, of minibatch estimates, with the KL weighted
        by ``kl_weight``, and in the units of the standardised targets (without the
        ``n sum_j log scale_j``)."""
        self._check_fitted()
        if "laplace_" not in vars(self):
            raise AttributeError(f"log_evidence_ is the Laplace evidence; this "
                                 f"{type(self).__name__} was fitted by inference="
                                 f"{self.inference!r}, whose history_['elbo'] is a "
                                 "training record in the standardised targets' units, not "
                                 "comparable with it")
        value = self.laplace_.log_evidence
        if value is None:
            raise AttributeError("this Laplace fit was saved by uqkit 0.2.0, before the "
                                 "evidence was stored; fit it again to rank it by evidence")
        if self.y_scaler_ is not None:
            value -= self.laplace_.n_data * float(np.log(self.y_scaler_.scale_).sum())
        return value

    def predict_distribution(self, X, n_samples=None, return_samples=False, levels=(0.95,),
                             seed=None):
        """Predictive distribution at X (n, d).

        Args:
            n_samples: posterior weight samples (default ``predict_samples``); each is one
                function draw shared by all inputs.
            return_samples: also return the (S, n, k) sampled outputs (memory: S x n x k).
            levels: central predictive interval levels to compute (regression), e.g.
                (0.9, 0.95). Laplace: the linearised network's predictive is Gaussian,
                N(mean, epistemic_var + aleatoric_var), and these are its quantiles (the
                epistemic variance estimated from the draws); mean field: exact quantiles of
                the Gaussian mixture of the draws.
            seed: seed of the weight draws (default: the model's seed).

        Returns:
            :class:`surrogates.prediction.Prediction`; with a 1-D training target the
            arrays are (n,) instead of (n, 1).
        """
        self._check_fitted()
        X = self._check_X(X, reset=False)
        S = self.predict_samples if n_samples is None else n_samples
        if not is_int(S, 1):
            name = "predict_samples" if n_samples is None else "n_samples"
            raise ValueError(f"{name} must be an integer >= 1, got {name}={S!r}")
        return self._distribution(X, int(S), return_samples, check_levels(levels),
                                  self.seed if seed is None else seed)

    @torch.no_grad()
    def _distribution(self, X, S, return_samples, levels, seed):
        check_prediction_settings(self)  # set_params may have changed them since the fit
        with torch_threads(self.num_threads):
            return predict(self, X, S, return_samples, levels, seed)

    def posterior(self):
        """Per layer: posterior means and standard deviations of the weights and biases,
        and the inferred prior scale for hierarchical priors (the prior precision, Laplace)."""
        self._check_fitted()
        return posterior(self)

    # -- persistence -----------------------------------------------------------------------
    def save(self, path):
        """Write weights, configuration, scalers and the format version to one file
        (:mod:`surrogates.bdl.persistence`)."""
        self._check_fitted()
        save(self, path)

    @classmethod
    def load(cls, path, device=None):
        """Load a model written by :meth:`save` (a :class:`BDL` or a :class:`BDLClassifier`,
        whichever was saved)."""
        return load({"BDL": BDL, "BDLClassifier": BDLClassifier}, path, device)

    # -- persistence -----------------------------------------------------------------------


def _with_settings(cls):
    """Append the shared settings (the ``Args`` of :class:`_BaseBDL`) to an estimator's
    docstring, so that its reference page lists them."""
    shared = inspect.cleandoc(_BaseBDL.__doc__)  # dedented: Python 3.13 dedents docstrings
    cls.__doc__ = inspect.cleandoc(cls.__doc__) + "\n\n" + shared[shared.index("Args:"):]
    return cls


@_with_settings
class BDL(MultiOutputRegressorMixin, _BaseBDL):
    """Bayesian MLP regression surrogate (Gaussian likelihood with a learned noise precision
    per output), trained by mean-field variational inference (``inference="meanfield"``, the
    default) or the linearised Laplace approximation (``inference="laplace"``).

    ``predict(X)`` gives the predictive means, shaped like the training target;
    ``predict(X, return_std=True)`` the means and the predictive standard deviations (weights
    and noise); :meth:`predict_distribution` the whole distribution.
    """

    _task = "regression"

    def _fit_data(self, X, y):
        X, Y = self._validate_regression(X, y)
        self.single_output_ = Y.ndim == 1
        Y = Y.reshape(len(Y), -1)
        if self.inference == "laplace" and len(Y) > 1:
            constant = np.flatnonzero(np.ptp(Y, axis=0) == 0)
            if constant.size:
                j = int(constant[0])
                raise ValueError(
                    f"output {j} is constant (every value {float(Y[0, j])!r}): its noise "
                    "precision has no maximum, and the Laplace fit of the other outputs "
                    "stopped short with it (RMSE 7.5 for 0.5); fit the others, and take "
                    "this one as the constant")
        return X, Y

    def predict(self, X, return_std=False):
        """Predictive means at X (n, d): (n,) for a 1-D training target, else (n, k); with
        ``return_std=True`` also the predictive standard deviations, shaped alike."""
        pred = self.predict_distribution(X, levels=())
        return (pred.mean, pred.std) if return_std else pred.mean

    def calibrate(self, X, y, n_samples=None):
        """Post-hoc variance recalibration on held-out data (regression).

        Fits one factor per output, ``c = mean((y - mean)^2 / total_var)``: the maximum-likelihood
        scale of the predictive variance. Later predictions spread every posterior sample about
        the mean and the noise by ``sqrt(c)``, so variances and intervals scale together while the
        mean is unchanged. Returns self; ``variance_scale_`` holds the factors.
        """
        self._check_fitted()
        X = self._check_X(X, reset=False)
        Y = check_finite(np.asarray(y, dtype=float), "y")
        k = self._n_outputs()
        shapes = [(len(X), k)] + ([(len(X),)] if k == 1 else [])
        if Y.shape not in shapes:
            raise ValueError(f"y must be {' or '.join(map(str, shapes))} for {len(X)} rows of "
                             f"X and {k} output(s), got shape {Y.shape}")
        Y = Y.reshape(len(X), k)
        previous = getattr(self, "variance_scale_", None)  # a loaded model may have none
        self.variance_scale_ = np.ones(k)
        try:
            pred = self.predict_distribution(X, n_samples=n_samples, levels=())
        finally:
            self.variance_scale_ = previous
        scale = np.mean((Y - pred.mean.reshape(Y.shape)) ** 2
                        / pred.total_var.reshape(Y.shape), axis=0)
        if not (np.isfinite(scale).all() and (scale > 0).all()):
            raise ValueError(f"the calibration set gives variance factors {scale.tolist()}: "
                             "each must be finite and > 0 (residuals of 0 would give "
                             "intervals of zero width)")
        self.variance_scale_ = scale
        return self



@_with_settings
class BDLClassifier(ClassifierMixin, _BaseBDL):
    """Bayesian MLP classifier (categorical likelihood), trained by mean-field variational
    inference or the linearised Laplace approximation. ``predict`` gives labels,
    ``predict_proba`` the mean class probabilities over posterior draws,
    :meth:`predict_distribution` their mean and variance.
    """

    _task = "classification"

    def _fit_data(self, X, y):
        from sklearn.utils.multiclass import check_classification_targets
        from sklearn.utils.validation import validate_data

        X, y = validate_data(self, X, y, reset=True, dtype=np.float64, ensure_all_finite=False)
        check_finite(X, "X")
        check_classification_targets(y)
        self.classes_, labels = np.unique(y, return_inverse=True)
        return X, labels.astype(np.int64)

    def predict_proba(self, X, n_samples=None):
        """(n, n_classes) mean class probabilities over posterior weight draws."""
        return self.predict_distribution(X, n_samples=n_samples).mean

    def predict(self, X):
        """The most probable class of each row."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
