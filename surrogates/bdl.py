"""Bayesian deep learning surrogate: mean-field variational inference on an MLP.

The prior (:mod:`surrogates.priors`), the likelihood (:mod:`surrogates.likelihoods`) and the
variational family (:class:`surrogates.network.MeanFieldMLP`) are built separately and composed
in one :class:`BayesianModel`, which computes the ELBO (eq 3.13-3.14 of the paper)::

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
"""
import contextlib
import copy
import math
import numbers
import os
import time

import numpy as np
import torch
from scipy import special
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import NotFittedError
from torch import nn

from . import laplace_fit, meanfield_batched
from .allocator import keep_freed_memory
from .laplace import laplace_sigma
from .laplace_fit import LaplacePosterior, check_prior
from .likelihoods import CategoricalLikelihood, GaussianLikelihood
from .network import MeanFieldMLP, softplus_inverse
from .optim import LeanAdam
from .prediction import Prediction, mixture_interval
from .priors import HierarchicalPrior, make_prior
from .scaling import IdentityScaler, Standardizer
from .stacked import StackedMLP

FORMAT = "uqkit-bdl"
FORMAT_VERSION = 3
ACTIVATIONS = ("tanh", "relu")
INFERENCES = ("meanfield", "laplace")
#: Seconds a fit runs before its progress bar appears (``progress=None``).
PROGRESS_DELAY = 5.0


class BayesianModel(nn.Module):
    """Prior + likelihood + variational family, composed. ``elbo`` is the objective."""

    def __init__(self, guide, prior, likelihood):
        super().__init__()
        self.guide = guide
        self.prior = prior
        self.likelihood = likelihood
        if isinstance(prior, HierarchicalPrior) and prior.point_mass is None:
            prior.setup(len(guide.layers), dtype=guide.mu.dtype)

    def kl(self, generator=None, n_samples=1, sigma=None):
        sigma = self.guide.sigma() if sigma is None else sigma
        return self.prior.kl(self.guide.mu, sigma, self.guide.layers, generator, n_samples)

    def elbo(self, x, y, n_data, n_samples=1, kl_weight=1.0, local=True, generator=None,
             kl_samples=1):
        """(elbo, expected log-likelihood of the batch scaled to the data set, kl)."""
        sigma = self.guide.sigma()
        if local and self.guide.activation == "tanh":
            f = self.guide.forward_local_fused(x, n_samples, generator, sigma)
        elif local:
            f = self.guide.forward_local(x, n_samples, generator, sigma)
        else:
            f = self.guide.forward_weights(x, self.guide.sample_weights(n_samples, generator))
        data = self.likelihood.log_prob(f, y).mean(0).sum() * (n_data / x.shape[0])
        kl = self.kl(generator, kl_samples, sigma)
        return data - kl_weight * kl + self.likelihood.log_hyperprior(), data, kl


def check_finite(arr, name):
    """Raise a ValueError naming the first NaN or inf of ``arr`` (1-D or 2-D)."""
    arr2 = arr.reshape(len(arr), -1)
    bad = ~np.isfinite(arr2)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"{name} holds {int(bad.sum())} NaN or inf values (first at row {r}, "
                         f"column {c}: {arr2[r, c]})")
    return arr


def _check_target(y):
    """Name the first NaN or inf of a numeric regression target (scikit-learn's own check
    would only say that there is one)."""
    try:
        arr = np.asarray(y)
        if arr.dtype.kind == "c":
            return  # complex: scikit-learn's validation refuses it
        arr = arr.astype(float)
    except (TypeError, ValueError):
        return  # not numeric: scikit-learn's validation says so
    if arr.ndim and len(arr):
        check_finite(arr, "y")


class MultiOutputRegressorMixin(RegressorMixin):
    """A scikit-learn regressor of (n,) or (n, k) targets: the tag, and the validation of its
    training data (finite numbers; the first NaN or inf named)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _validate_regression(self, X, y):
        from sklearn.utils.validation import validate_data

        _check_target(y)
        X, y = validate_data(self, X, y, reset=True, dtype=np.float64, multi_output=True,
                             y_numeric=True, ensure_all_finite=False)
        check_finite(X, "X")
        check_finite(y, "y")
        return X, y


@contextlib.contextmanager
def _torch_threads(n):
    """Run the block with ``n`` torch threads (None: leave the setting alone), with freed
    memory kept for reuse (:func:`surrogates.allocator.keep_freed_memory`)."""
    keep_freed_memory()
    threads = torch.get_num_threads()
    if n:
        torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _epoch_bar(progress, epochs, desc):
    """A tqdm bar over ``epochs`` epochs per the estimators' ``progress`` setting (False: none;
    None: on a terminal, once a fit has run for ``PROGRESS_DELAY`` seconds; True: at once)."""
    if progress is False:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=epochs, desc=desc, unit="epoch", dynamic_ncols=True,
                delay=PROGRESS_DELAY if progress is None else 0.0,
                disable=None if progress is None else False)


def _start_full_batch_fit(est, X, Y, dtype, drop):
    """Begin a fit of ``est`` on every row of (X, Y) (no validation rows): forget the
    recalibration and the attributes ``drop`` (another trainer's fitted state), fit the input
    and (regression) output scalers; returns the scaled X and Y as ``dtype`` tensors (class
    indices as int64 for classification)."""
    est.variance_scale_ = None
    for name in drop:
        est.__dict__.pop(name, None)
    scaler = Standardizer if est.standardize else IdentityScaler
    est.validation_rows_ = np.empty(0, dtype=np.int64)
    est.x_scaler_ = scaler().fit(X)
    x = torch.as_tensor(est.x_scaler_.transform(X), dtype=dtype)
    if est._task == "regression":
        est.y_scaler_ = scaler().fit(Y)
        return x, torch.as_tensor(est.y_scaler_.transform(Y), dtype=dtype)
    est.y_scaler_ = None
    return x, torch.as_tensor(Y, dtype=torch.int64)


def _is_int(v, minimum):
    return not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= minimum


def _is_real(v):
    return not isinstance(v, bool) and isinstance(v, numbers.Real) and math.isfinite(v)


class _BaseBDL(BaseEstimator):
    """Bayesian MLP trained by mean-field variational inference (shared by :class:`BDL` and
    :class:`BDLClassifier`).

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
        device: torch device (``"cpu"``, ``"cuda"``).
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
            :mod:`surrogates.meanfield_batched` (hand-written gradients, ~4x faster per fit);
            other settings by the autograd trainer; ``trainer_`` says which.
            ``"laplace"``: the MAP network
            trained to convergence by full-batch L-BFGS, with the noise precision learned, then
            the full-GGN linearised Laplace posterior about it
            (:mod:`surrogates.laplace_fit`); it uses ``hidden``, ``activation``, ``prior``,
            ``noise_std``, ``learn_noise``, ``noise_prior``, ``standardize``, ``seed``,
            ``max_iter`` and the prediction settings, and fits far more closely on small data
            (the membrane study's report measures both).
        max_iter: L-BFGS iterations of ``inference="laplace"`` (an integer >= 1).
        laplace_prior_scale: ``inference="laplace"``: ``"evidence"`` (default) multiplies the
            posterior's prior precision of each parameter tensor (each layer's weight matrix
            and bias vector) by a factor and, with ``learn_noise``, sets each output's noise
            precision, both to maximise the Laplace evidence on the training data (MacKay's
            empirical Bayes; laplace-torch's post-hoc marginal-likelihood prior precision per
            parameter tensor; :mod:`surrogates.evidence`). The MAP network is unchanged, and
            so is the predictive mean. A number > 0 multiplies every prior precision by it
            (1: the prior's own) and keeps the MAP noise. The factors used are
            ``history_["prior_scale"]``.
    """

    _task = None

    def __init__(self, hidden=(30, 15, 10), activation="tanh", prior="normal(0, 1)",
                 noise_std=0.1, learn_noise=True, noise_prior=None,
                 init_std=1e-3, n_samples=1, local_reparam=True, kl_samples=1, epochs=1000,
                 batch_size=16, lr=5e-3, lr_step=100, lr_gamma=0.75, kl_weight=1.0, kl_anneal=0,
                 map_epochs=0, warm_sigma="laplace", trace_weights=0,
                 val_fraction=0.0, patience=None, eval_every=10, standardize=True, seed=0,
                 device="cpu", predict_samples=200, predict_batch=4096, num_threads=None,
                 progress=None, inference="meanfield", max_iter=2000,
                 laplace_prior_scale="evidence"):
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

    def _config(self):
        """The constructor arguments as plain data (a prior object by its description)."""
        params = self.get_params()
        if not isinstance(params["prior"], (str, dict)):
            params["prior"] = params["prior"].describe()
        params["hidden"] = list(params["hidden"])
        return params

    def _check_settings(self):
        try:
            hidden = tuple(self.hidden)
        except TypeError:
            raise ValueError(f"hidden must be a sequence of layer widths, got {self.hidden!r}") \
                from None
        if any(not _is_int(h, 1) for h in hidden):
            raise ValueError(f"hidden widths must be integers >= 1, got hidden={self.hidden!r}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got "
                             f"activation={self.activation!r}")
        for name in ("epochs", "batch_size", "n_samples", "kl_samples", "lr_step", "eval_every",
                     "predict_samples", "predict_batch"):
            v = getattr(self, name)
            if not _is_int(v, 1):
                raise ValueError(f"{name} must be an integer >= 1, got {name}={v!r}")
        for name in ("map_epochs", "kl_anneal", "trace_weights", "seed"):
            v = getattr(self, name)
            if not _is_int(v, 0):
                raise ValueError(f"{name} must be an integer >= 0, got {name}={v!r}")
        for name in ("lr", "lr_gamma", "noise_std", "init_std", "kl_weight"):
            v = getattr(self, name)
            if not (_is_real(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {name}={v!r}")
        for name in ("patience", "num_threads"):
            v = getattr(self, name)
            if v is not None and not _is_int(v, 1):
                raise ValueError(f"{name} must be None or an integer >= 1, got {name}={v!r}")
        if not (_is_real(self.val_fraction) and 0.0 <= self.val_fraction < 1.0):
            raise ValueError(f"val_fraction must be a number in [0, 1), got "
                             f"val_fraction={self.val_fraction!r}")
        for name in ("learn_noise", "local_reparam", "standardize"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.progress is not None and not isinstance(self.progress, (bool, np.bool_)):
            raise ValueError(f"progress must be None, True or False, got {self.progress!r}")
        if self.noise_prior is not None and not (
                len(self.noise_prior) == 2 and all(_is_real(v) and v > 0
                                                   for v in self.noise_prior)):
            raise ValueError(f"noise_prior must be None or (shape, rate) > 0, got "
                             f"{self.noise_prior!r}")
        if not isinstance(self.warm_sigma, str) or self.warm_sigma not in ("laplace", "keep"):
            raise ValueError(f"warm_sigma must be 'laplace' or 'keep', got {self.warm_sigma!r}")
        try:
            torch.device(self.device)
        except (RuntimeError, TypeError):
            raise ValueError(f"device must name a torch device, got {self.device!r}") from None
        prior = make_prior(self.prior)  # raises on an unknown prior
        if not isinstance(self.inference, str) or self.inference not in INFERENCES:
            raise ValueError(f"inference must be one of {INFERENCES}, got "
                             f"inference={self.inference!r}")
        if not _is_int(self.max_iter, 1):
            raise ValueError(f"max_iter must be an integer >= 1, got max_iter={self.max_iter!r}")
        scale = self.laplace_prior_scale
        if not (isinstance(scale, str) and scale == "evidence") and not (
                _is_real(scale) and math.isfinite(scale) and scale > 0):
            raise ValueError(f"laplace_prior_scale must be 'evidence' or a number > 0, got "
                             f"laplace_prior_scale={scale!r}")
        if self.inference == "laplace":
            check_prior(prior)
            if torch.device(self.device).type != "cpu":
                raise ValueError(f"inference='laplace' trains on the CPU (in float64), got "
                                 f"device={self.device!r}")
            if self.val_fraction:
                raise ValueError("val_fraction and early stopping apply to "
                                 "inference='meanfield'; inference='laplace' trains to "
                                 f"convergence (got val_fraction={self.val_fraction!r})")

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
        per-epoch ELBO, NLL and KL (``inference="meanfield"``) or the L-BFGS record."""
        X, Y = self._prepare(X, y)
        with _torch_threads(self.num_threads or 1):
            if self.inference == "laplace":
                _fit_laplace_group([self], [(X, Y)])
                return self
            return self._fit(X, Y)

    def _prepare(self, X, y):
        """Check the settings and the training data; returns the validated (X, Y)."""
        self._check_settings()
        X, Y = self._fit_data(X, y)
        if X.shape[0] < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 samples, got "
                             f"{X.shape[0]} sample")
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
        """The autograd trainer: :meth:`BayesianModel.elbo` and :class:`LeanAdam`."""
        t0 = time.perf_counter()
        self.trainer_ = "autograd"
        self.variance_scale_ = None
        for name in ("laplace_", "net_"):
            self.__dict__.pop(name, None)
        dev = torch.device(self.device)
        # initial weights and batch order come from a CPU generator, so a seed gives the same
        # ones on every device; the reparameterisation draws come from one on the device
        # (on a CPU, the same generator serves both, as it always did)
        cpu_gen = torch.Generator().manual_seed(int(self.seed))
        gen = cpu_gen if dev.type == "cpu" else torch.Generator(device=dev).manual_seed(
            int(self.seed))
        scaler = Standardizer if self.standardize else IdentityScaler
        n = X.shape[0]
        perm = torch.randperm(n, generator=cpu_gen).numpy()
        n_val = int(round(self.val_fraction * n))
        if self.val_fraction > 0 and (n_val < 1 or n - n_val < 1):
            raise ValueError(f"val_fraction={self.val_fraction} leaves no training or no "
                             f"validation rows out of {n}")
        val_idx, tr_idx = perm[:n_val], perm[n_val:]
        self.validation_rows_ = val_idx
        self.x_scaler_ = scaler().fit(X[tr_idx])
        if self._task == "regression":
            self.y_scaler_ = scaler().fit(Y[tr_idx])
            k = Y.shape[1]
            likelihood = GaussianLikelihood(k, self.noise_std, self.learn_noise, self.noise_prior)
            Yt = torch.as_tensor(self.y_scaler_.transform(Y), dtype=torch.float32, device=dev)
        else:
            self.y_scaler_ = None
            k = len(self.classes_)
            likelihood = CategoricalLikelihood(k)
            Yt = torch.as_tensor(Y, device=dev)
        guide = MeanFieldMLP((X.shape[1], *self.hidden, k), self.activation, self.init_std,
                             generator=cpu_gen)
        self.model_ = BayesianModel(guide, copy.deepcopy(make_prior(self.prior)),
                                    likelihood).to(dev)
        Xt = torch.as_tensor(self.x_scaler_.transform(X), dtype=torch.float32, device=dev)
        x_tr, y_tr = Xt[tr_idx], Yt[tr_idx]
        n_tr = len(tr_idx)
        opt = LeanAdam(self.model_.parameters(), lr=self.lr)
        hist = {"epoch": [], "elbo": [], "nll": [], "kl": [], "lr": [], "val_epoch": [],
                "val_nll": [], "val_rmse": [], "val_accuracy": [], "trace_mu": [],
                "trace_sigma": []}
        n_trace = min(int(self.trace_weights), guide.n_params)
        best, best_state, bad_evals = math.inf, None, 0
        bs = min(int(self.batch_size), n_tr)
        bar = _epoch_bar(self.progress, self.epochs, "BDL fit")
        self.stopped_epoch_ = self.epochs
        for epoch in range(1, self.epochs + 1):
            kl_weight = self._kl_weight_at(epoch)
            order = torch.randperm(n_tr, generator=cpu_gen).to(dev)
            parts = []
            n_batches = 0
            for start in range(0, n_tr, bs):
                idx = order[start:start + bs]
                elbo, data, kl = self.model_.elbo(x_tr[idx], y_tr[idx], n_tr, self.n_samples,
                                                  kl_weight, self.local_reparam, gen,
                                                  self.kl_samples)
                loss = -elbo / n_tr
                opt.zero_grad()
                loss.backward()
                if epoch <= self.map_epochs:
                    self.model_.guide.rho.grad = None  # MAP warm start: sigma stays put
                    if hasattr(self.model_.likelihood, "log_tau"):
                        self.model_.likelihood.log_tau.grad = None  # and so does the noise
                opt.step()
                with torch.no_grad():
                    parts.append(torch.stack((elbo, data, kl)))
                n_batches += 1
            if epoch == self.map_epochs < self.epochs and self.warm_sigma == "laplace":
                sd = laplace_sigma(self.model_, x_tr, y_tr, n_tr, self._kl_weight_at(epoch + 1),
                                   gen)
                with torch.no_grad():
                    guide.rho.copy_(softplus_inverse(sd))
            # step decay: lr * gamma^(epochs done // lr_step)
            opt.set_lr(self.lr * self.lr_gamma ** (epoch // self.lr_step))
            with torch.no_grad():
                sum_elbo, sum_data, sum_kl = torch.stack(parts).sum(0).tolist()
            hist["epoch"].append(epoch)
            hist["elbo"].append(sum_elbo / n_batches)
            hist["nll"].append(-sum_data / n_batches / n_tr)
            hist["kl"].append(sum_kl / n_batches)
            hist["lr"].append(opt.lr)
            if n_trace:
                with torch.no_grad():
                    hist["trace_mu"].append(guide.mu[:n_trace].tolist())
                    hist["trace_sigma"].append(guide.sigma()[:n_trace].tolist())
            if not math.isfinite(hist["elbo"][-1]):
                raise FloatingPointError(f"the ELBO became non-finite at epoch {epoch}; lower "
                                         f"lr (now {self.lr}) or init_std")
            validating = epoch > self.map_epochs or self.map_epochs >= self.epochs
            if n_val and validating and (epoch % self.eval_every == 0 or epoch == self.epochs):
                metrics = self._validate(X[val_idx], Y[val_idx])
                hist["val_epoch"].append(epoch)
                for key, v in metrics.items():
                    hist[f"val_{key}"].append(v)
                if metrics["nll"] < best:
                    best, bad_evals = metrics["nll"], 0
                    best_state = copy.deepcopy(self.model_.state_dict())
                else:
                    bad_evals += 1
                    if self.patience is not None and bad_evals >= self.patience:
                        self.stopped_epoch_ = epoch
                        break
            if bar is not None:
                bar.update(1)
                bar.set_postfix(elbo=f"{hist['elbo'][-1]:.4g}", refresh=False)
        if bar is not None:
            bar.close()
        if best_state is not None:
            self.model_.load_state_dict(best_state)
        self.history_ = hist
        self.n_iter_ = self.stopped_epoch_  # epochs run (scikit-learn's name)
        self.fit_seconds_ = time.perf_counter() - t0
        return self

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
        return hasattr(self, "model_") or hasattr(self, "laplace_")

    def _n_outputs(self):
        return (self.net_ if hasattr(self, "laplace_") else self.model_.guide).sizes[-1]

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
        if not _is_int(S, 1):
            raise ValueError(f"n_samples must be an integer >= 1, got {n_samples!r}")
        return self._distribution(X, int(S), return_samples, tuple(levels),
                                  self.seed if seed is None else seed)

    @torch.no_grad()
    def _distribution(self, X, S, return_samples, levels, seed):
        with _torch_threads(self.num_threads):
            return self._predict(X, S, return_samples, levels, seed)

    def _predict(self, X, S, return_samples, levels, seed):
        laplace = hasattr(self, "laplace_")
        if laplace:
            gen = torch.Generator().manual_seed(int(seed) + 7919)
            deltas = self.laplace_.sample(S, gen)
            noise = torch.exp(-self.laplace_.log_tau).numpy() \
                if self._task == "regression" else None
        else:
            guide = self.model_.guide
            dev = guide.mu.device
            gen = torch.Generator(device=dev).manual_seed(int(seed) + 7919)
            weights = guide.draw_weights(guide.sample_weights(S, gen))
            if self._task == "regression":
                noise = self.model_.likelihood.noise_variance().detach().cpu().numpy()
        Z = self.x_scaler_.transform(X)
        regression = self._task == "regression"
        scale = getattr(self, "variance_scale_", None)
        if regression:
            ys, ym = self.y_scaler_.scale_, self.y_scaler_.mean_
            noise_var = noise * ys ** 2
            if scale is not None:
                noise_var = noise_var * scale
        means, variances, samples = [], [], []
        bounds = {lv: ([], []) for lv in levels} if regression else {}
        # the tangent pass is memory-bound: chunks of S x step x width that stay in the cache
        # (measured, 1e5 inputs x 200 draws: 2.2 s at step 128, 4.0 s at 1024)
        step = min(self.predict_batch, max(64, 32768 // S)) if laplace else self.predict_batch
        if not laplace:  # mean field: chunks of S x 655 x width at S = 200 (1.5x faster
            step = min(self.predict_batch, max(64, 131072 // S))  # than 4096, measured)
        # a Laplace draw's output about the mean: J(x) delta, in output units (recalibrated)
        spread = None if not (laplace and regression) else (
            ys if scale is None else ys * np.sqrt(scale))
        for start in range(0, len(Z), step):
            if laplace:  # the linearised network: f(x, w*) + J(x) delta for every draw
                x = torch.as_tensor(Z[start:start + step], dtype=torch.float64)
                f0, tangent = self.net_.forward_tangent(self.laplace_.w, x, deltas)
                if not regression:
                    f = f0 + tangent
            else:
                x = torch.as_tensor(Z[start:start + step], dtype=torch.float32, device=dev)
                f = guide.forward_draws(x, weights)
            if regression and laplace:
                # the linearised predictive's mean is the MAP network's output, exactly, and
                # its epistemic variance the draws' mean square of J(x) delta
                mean = f0.numpy() * ys + ym
                var = tangent.square().mean(0).numpy() * spread ** 2
                if return_samples:
                    f = mean + tangent.numpy() * spread
            elif regression:
                f = f.double().cpu().numpy() * ys + ym
                m0 = f.mean(0)
                if scale is not None:  # recalibrated spread about the mean
                    f = m0 + np.sqrt(scale) * (f - m0)
                mean, var = m0, f.var(0)
            else:
                f = torch.softmax(f, -1).double().cpu().numpy()
                mean, var = f.mean(0), f.var(0)
            means.append(mean)
            variances.append(var)
            if return_samples:
                samples.append(f)
            for lv in levels if regression else ():
                if laplace:  # Gaussian: a mixture quantile would only add sampling noise
                    half = special.ndtri(0.5 + lv / 2) * np.sqrt(var + noise_var)
                    lo, hi = mean - half, mean + half
                else:
                    lo, hi = mixture_interval(f, np.sqrt(np.maximum(noise_var, 1e-300)), lv)
                bounds[lv][0].append(lo)
                bounds[lv][1].append(hi)
        squeeze = (lambda a: a[..., 0]) if getattr(self, "single_output_", False) else (
            lambda a: a)
        pred = Prediction(
            mean=squeeze(np.concatenate(means)),
            epistemic_var=squeeze(np.concatenate(variances)),
            aleatoric_var=squeeze(np.broadcast_to(noise_var, (len(Z), len(noise_var))).copy())
            if regression else None,
            samples=squeeze(np.concatenate(samples, axis=1)) if return_samples else None,
            intervals={lv: (squeeze(np.concatenate(lo)), squeeze(np.concatenate(hi)))
                       for lv, (lo, hi) in bounds.items()})
        return pred

    def posterior(self):
        """Per layer: posterior means and standard deviations of the weights and biases,
        and the inferred prior scale for hierarchical priors."""
        self._check_fitted()
        laplace = hasattr(self, "laplace_")
        if laplace:
            net, mu, sd = self.net_, self.laplace_.w, self.laplace_.marginal_std()
        else:
            g = self.model_.guide
            net, mu, sd = g.net, g.mu.detach().cpu(), g.sigma().detach().cpu()
        prior = None if laplace else self.model_.prior
        out = []
        for l, (a, b) in enumerate(net.layers):
            Wm, bm = net.split(mu, l)
            Ws, bs = net.split(sd, l)
            layer = {"weight_mean": Wm.numpy(), "weight_std": Ws.numpy(), "bias_mean": bm.numpy(),
                     "bias_std": bs.numpy()}
            if laplace:
                layer["prior_precision"] = self.laplace_.precision[a:b].numpy()
            elif isinstance(prior, HierarchicalPrior):
                layer["prior_scale"] = float(prior.scales()[min(l, len(prior.scales()) - 1)])
            out.append(layer)
        return out

    # -- persistence -----------------------------------------------------------------------
    def save(self, path):
        """Write weights, configuration, scalers and the format version to one file."""
        self._check_fitted()
        laplace = hasattr(self, "laplace_")
        state = (self.laplace_.state() if laplace else
                 {k: v.detach().cpu() for k, v in self.model_.state_dict().items()})
        sizes = self.net_.sizes if laplace else self.model_.guide.sizes
        blob = {"format": FORMAT, "version": FORMAT_VERSION, "estimator": type(self).__name__,
                "config": self._config(), "sizes": list(sizes), "state": state,
                "x_scaler": self.x_scaler_.state(),
                "y_scaler": None if self.y_scaler_ is None else self.y_scaler_.state(),
                "single_output": bool(getattr(self, "single_output_", False)),
                "variance_scale": (None if getattr(self, "variance_scale_", None) is None
                                   else self.variance_scale_.tolist()),
                "classes": None if self._task == "regression" else self.classes_.tolist()}
        torch.save(blob, path)

    @classmethod
    def load(cls, path, device=None):
        """Load a model written by :meth:`save` (a :class:`BDL` or a :class:`BDLClassifier`,
        whichever was saved)."""
        blob = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(blob, dict) or blob.get("format") != FORMAT:
            raise ValueError(f"{path} is not a saved BDL model")
        if blob["version"] > FORMAT_VERSION:
            raise ValueError(f"{path} has format version {blob['version']}; this uqkit reads "
                             f"up to {FORMAT_VERSION}")
        config = dict(blob["config"])
        if blob["version"] == 1:  # one class with a task setting
            task = config.pop("task")
            name = "BDL" if task == "regression" else "BDLClassifier"
            classes = None if blob["n_classes"] is None else list(range(blob["n_classes"]))
            config["progress"] = None
        else:
            name, classes = blob["estimator"], blob["classes"]
        if device is not None:
            config["device"] = device
        self = {"BDL": BDL, "BDLClassifier": BDLClassifier}[name](**config)
        self.hidden = tuple(self.hidden)
        sizes = blob["sizes"]
        k = sizes[-1]
        if config.get("inference", "meanfield") == "laplace":
            self.net_ = StackedMLP(sizes, self.activation)
            self.laplace_ = LaplacePosterior.from_state(blob["state"])
        else:
            likelihood = (GaussianLikelihood(k, self.noise_std, self.learn_noise,
                                             self.noise_prior)
                          if self._task == "regression" else CategoricalLikelihood(k))
            guide = MeanFieldMLP(sizes, self.activation, self.init_std)
            self.model_ = BayesianModel(guide, make_prior(self.prior), likelihood)
            self.model_.load_state_dict(blob["state"])
            self.model_.to(torch.device(self.device))
        self.x_scaler_ = Standardizer.from_state(blob["x_scaler"])
        self.y_scaler_ = None if blob["y_scaler"] is None else Standardizer.from_state(
            blob["y_scaler"])
        self.single_output_ = blob["single_output"]
        self.n_features_in_ = sizes[0]
        if blob.get("variance_scale") is not None:
            self.variance_scale_ = np.asarray(blob["variance_scale"])
        if classes is not None:
            self.classes_ = np.asarray(classes)
        return self


def _fit_laplace_group(estimators, data):
    """Fit ``inference="laplace"`` estimators of one architecture and task as one batched
    program; ``data`` holds each one's validated (X, Y) (Y as (n, k), or class indices)."""
    t0 = time.perf_counter()
    first = estimators[0]
    xs, ys, priors, seeds = [], [], [], []
    for est, (X, Y) in zip(estimators, data):
        x, y = _start_full_batch_fit(est, X, Y, torch.float64, drop=("model_",))
        xs.append(x)
        ys.append(y)
        priors.append(copy.deepcopy(make_prior(est.prior)))
        seeds.append(int(est.seed))
    k = data[0][1].shape[1] if first._task == "regression" else len(first.classes_)
    net = StackedMLP((data[0][0].shape[1], *first.hidden, k), first.activation)
    posts = laplace_fit.fit(net, xs, ys, first._task, priors, seeds, noise_std=first.noise_std,
                            learn_noise=first.learn_noise, noise_prior=first.noise_prior,
                            max_iter=int(first.max_iter),
                            prior_scales=[e.laplace_prior_scale for e in estimators])
    seconds = (time.perf_counter() - t0) / len(estimators)
    for est, post in zip(estimators, posts):
        est.net_, est.laplace_ = net, post
        est.history_ = {"iterations": post.iterations, "converged": post.converged,
                        "prior_scale": post.prior_scale, "objective": post.objective}
        est.stopped_epoch_ = None
        est.n_iter_ = post.iterations  # L-BFGS iterations (scikit-learn's name)
        est.fit_seconds_ = seconds  # the group's wall time, shared out


#: Settings that must agree for estimators to train as one batched program.
_BATCH_KEYS = ("activation", "noise_std", "learn_noise", "noise_prior", "max_iter",
               "num_threads")


def fit_many(estimators, datasets, n_jobs=None):
    """Fit K estimators on K data sets; returns the fitted estimators (the same objects).

    ``inference="laplace"`` estimators of one task and architecture (``hidden`` and the
    settings in ``_BATCH_KEYS`` equal) train as one batched program per number of outputs
    and training-set size: each network follows exactly the path it follows alone, so a
    member equals its single fit to rounding (tested), while the per-step overhead is paid
    once for all of them. Members may differ in data (sizes included), seed and prior.
    ``inference="meanfield"`` regression estimators that the batched trainer takes
    (:func:`_batched_meanfield_reason`) train as one program per architecture, batch size,
    ``n_samples``, ``learn_noise``, prior family and thread/progress setting
    (:mod:`surrogates.meanfield_batched`): members may differ in data (sizes included), seed,
    prior parameters, ``kl_weight``, ``kl_anneal``, ``lr``, ``lr_step``, ``lr_gamma``,
    ``epochs``, ``init_std``, ``noise_std``, ``noise_prior`` and ``standardize``; each keeps
    its own epochs and minibatches and random stream, so it equals its single fit to rounding
    (tested). Other estimators are fitted one by one. Every member is an ordinary fitted
    estimator (``predict``, ``save``, ``load``).

    With ``n_jobs`` > 1 the batched programs are split into parts of about equal work, as
    many parts per program as processes, and the parts run in ``n_jobs`` worker processes
    (loky's: fresh interpreters; torch with the members' ``num_threads`` there): a member's
    fit does not depend on its batch-mates, so it is the same (to rounding) however its
    program is split (tested). Worth it when the fits take longer than a worker's start
    (~3 s: importing torch).

    Args:
        estimators: K unfitted (or refittable) :class:`BDL` / :class:`BDLClassifier` objects.
        datasets: K (X, y) pairs.
        n_jobs: worker processes for the batched programs: None or 1 (this process), an
            integer >= 1, or -1 (one per CPU core).

    Raises:
        ValueError: K = 0, the lengths differ, the data sets disagree on the number of
            features, ``n_jobs`` is not None, -1 or an integer >= 1, or any data or setting
            is invalid (the message names the member).

    Example:
        >>> import numpy as np
        >>> x = np.linspace(-1, 1, 40)[:, None]
        >>> models = fit_many([BDL(hidden=(8,), inference="laplace", seed=s) for s in (0, 1)],
        ...                   [(x, np.sin(3 * x)), (x[:20], np.cos(3 * x[:20]))])
        >>> [round(float(m.score(x, np.sin(3 * x))), 3) for m in models][0]
        1.0
    """
    estimators, datasets = list(estimators), list(datasets)
    if n_jobs is None or (not isinstance(n_jobs, bool) and n_jobs == -1):
        n_jobs = 1 if n_jobs is None else (os.cpu_count() or 1)
    elif not _is_int(n_jobs, 1):
        raise ValueError(f"n_jobs must be None, -1 or an integer >= 1, got n_jobs={n_jobs!r}")
    if not estimators:
        raise ValueError("fit_many needs at least one estimator and data set, got K = 0")
    if len(estimators) != len(datasets):
        raise ValueError(f"fit_many got {len(estimators)} estimators and {len(datasets)} data "
                         "sets; give one data set per estimator")
    data = []
    for i, (est, pair) in enumerate(zip(estimators, datasets)):
        try:
            X, y = pair
        except (TypeError, ValueError):
            raise ValueError(f"data set {i} must be an (X, y) pair") from None
        try:
            data.append(est._prepare(X, y))
        except ValueError as exc:
            raise ValueError(f"member {i}: {exc}") from None
    d0 = data[0][0].shape[1]
    for i, (X, Y) in enumerate(data):
        if X.shape[1] != d0:
            raise ValueError(f"data set {i} has {X.shape[1]} features and data set 0 has {d0}; "
                             "fit_many trains models of one input size")
    groups, meanfield = {}, {}
    for i, est in enumerate(estimators):
        if est.inference != "laplace":
            if _batched_meanfield_reason(est) is None:
                meanfield.setdefault(_meanfield_key(est, data[i][1]), []).append(i)
                continue
            with _torch_threads(est.num_threads or 1):
                est._fit(*data[i])
            continue
        key = (type(est).__name__, tuple(est.hidden),
               *(repr(getattr(est, k)) for k in _BATCH_KEYS))
        if est._task == "classification":
            key += (tuple(est.classes_.tolist()),)
        else:
            key += (data[i][1].shape[1],)  # outputs
        # one program per training-set size: padding would change the rounding of the
        # data sums, and L-BFGS on a non-convex loss amplifies rounding into another path
        key += (data[i][0].shape[0],)
        groups.setdefault(key, []).append(i)
    programs = ([("laplace", rows) for rows in groups.values()]
                + [("meanfield", rows) for rows in meanfield.values()])
    if n_jobs == 1:
        for kind, rows in programs:
            _fit_program(kind, [estimators[i] for i in rows], [data[i] for i in rows])
        return estimators
    parts = []
    for kind, rows in programs:  # split each program into n_jobs parts of about equal work
        work = {i: len(data[i][0]) * (estimators[i].max_iter if kind == "laplace"
                                      else estimators[i].epochs) for i in rows}
        bins = [[] for _ in range(min(n_jobs, len(rows)))]
        load = [0] * len(bins)
        for i in sorted(rows, key=lambda i: -work[i]):  # largest first, to the lightest part
            b = load.index(min(load))
            bins[b].append(i)
            load[b] += work[i]
        parts += [(load[b], kind, sorted(rows_b)) for b, rows_b in enumerate(bins)]
    parts.sort(key=lambda p: -p[0])
    from loky import ProcessPoolExecutor  # fresh interpreters (fork + exec), any __main__

    with ProcessPoolExecutor(min(n_jobs, len(parts))) as pool:
        futures = [(rows, pool.submit(_fit_program, kind, [estimators[i] for i in rows],
                                      [data[i] for i in rows]))
                   for _, kind, rows in parts]
        for rows, future in futures:
            for i, fitted in zip(rows, future.result()):
                estimators[i].__dict__.update(fitted.__dict__)
    return estimators


def _fit_program(kind, estimators, data):
    """Train ``estimators`` on their prepared ``data`` as one batched program of ``kind``
    (``"laplace"`` or ``"meanfield"``) with their torch thread setting; returns them."""
    with _torch_threads(estimators[0].num_threads or 1):
        if kind == "laplace":
            _fit_laplace_group(estimators, data)
        else:
            _fit_meanfield_group(estimators, data)
    return estimators


def _batched_meanfield_reason(est):
    """None if ``est`` (``inference="meanfield"``) trains with the batched trainer
    (:mod:`surrogates.meanfield_batched`), else why it takes the autograd trainer."""
    if est._task != "regression":
        return "classification"
    checks = (("activation", est.activation == "tanh"), ("local_reparam", est.local_reparam),
              ("device", torch.device(est.device).type == "cpu"),
              ("prior", meanfield_batched.direct_prior(make_prior(est.prior)) is not None),
              ("val_fraction", not est.val_fraction), ("map_epochs", not est.map_epochs),
              ("trace_weights", not est.trace_weights))
    for name, ok in checks:
        if not ok:
            return f"{name}={getattr(est, name)!r}"
    return None


def _meanfield_key(est, Y):
    """Estimators with equal keys train as one batched mean-field program."""
    prior = meanfield_batched.direct_prior(make_prior(est.prior))
    return (type(est).__name__, tuple(est.hidden), Y.shape[1], int(est.batch_size),
            int(est.n_samples), bool(est.learn_noise), prior[0], est.num_threads,
            est.progress)


def _fit_meanfield_group(estimators, data):
    """Fit batchable ``inference="meanfield"`` regression estimators of one architecture
    (equal :func:`_meanfield_key`) with :func:`surrogates.meanfield_batched.train`; ``data``
    holds each one's validated (X, Y (n, k))."""
    t0 = time.perf_counter()
    first = estimators[0]
    members, priors = [], []
    for est, (X, Y) in zip(estimators, data):
        x, y = _start_full_batch_fit(est, X, Y, torch.float32, drop=("laplace_", "net_"))
        prior = copy.deepcopy(make_prior(est.prior))
        priors.append(prior)
        members.append(meanfield_batched.Member(
            x, y, seed=est.seed, epochs=est.epochs, lr=est.lr, lr_step=est.lr_step,
            lr_gamma=est.lr_gamma, kl_weight=est.kl_weight, kl_anneal=est.kl_anneal,
            prior=meanfield_batched.direct_prior(prior), init_std=est.init_std,
            noise_std=est.noise_std, noise_prior=est.noise_prior))
    sizes = (data[0][0].shape[1], *first.hidden, data[0][1].shape[1])
    epochs = max(est.epochs for est in estimators)
    bar = _epoch_bar(first.progress, epochs, "BDL fit" if len(estimators) == 1 else
                     f"BDL fit x{len(estimators)}")
    try:
        results = meanfield_batched.train(
            sizes, members, first.n_samples, first.batch_size, bool(first.learn_noise),
            None if bar is None else lambda frac: bar.update(int(round(frac * epochs)) - bar.n))
    finally:
        if bar is not None:
            bar.close()
    seconds = (time.perf_counter() - t0) / len(estimators)
    k = sizes[-1]
    for est, res, prior in zip(estimators, results, priors):
        guide = MeanFieldMLP(sizes, est.activation, est.init_std)
        likelihood = GaussianLikelihood(k, est.noise_std, est.learn_noise, est.noise_prior)
        with torch.no_grad():
            guide.mu.copy_(res["mu"])
            guide.rho.copy_(res["rho"])
            likelihood.log_tau.copy_(res["log_tau"])
        est.model_ = BayesianModel(guide, prior, likelihood)
        hist = {key: [] for key in ("val_epoch", "val_nll", "val_rmse", "val_accuracy",
                                    "trace_mu", "trace_sigma")}
        est.history_ = {**res["history"], **hist}
        est.stopped_epoch_ = est.n_iter_ = est.epochs
        est.trainer_ = "batched"
        est.fit_seconds_ = seconds  # the group's wall time, shared out


class BDL(MultiOutputRegressorMixin, _BaseBDL):
    """Bayesian MLP regression surrogate (Gaussian likelihood with a learned noise precision
    per output), trained by mean-field variational inference.

    ``predict(X)`` gives the predictive means, shaped like the training target;
    ``predict(X, return_std=True)`` the means and the predictive standard deviations (weights
    and noise); :meth:`predict_distribution` the whole distribution. Settings: see
    :class:`_BaseBDL`.
    """

    _task = "regression"

    def _fit_data(self, X, y):
        X, Y = self._validate_regression(X, y)
        self.single_output_ = Y.ndim == 1
        return X, Y.reshape(len(Y), -1)

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
        Y = check_finite(np.asarray(y, dtype=float), "y").reshape(len(X), -1)
        self.variance_scale_ = np.ones(self._n_outputs())
        pred = self.predict_distribution(X, n_samples=n_samples, levels=())
        mean = pred.mean.reshape(Y.shape)
        var = pred.total_var.reshape(Y.shape)
        self.variance_scale_ = np.mean((Y - mean) ** 2 / var, axis=0)
        return self



class BDLClassifier(ClassifierMixin, _BaseBDL):
    """Bayesian MLP classifier (categorical likelihood), trained by mean-field variational
    inference. ``predict`` gives labels, ``predict_proba`` the mean class probabilities over
    posterior draws, :meth:`predict_distribution` their mean and variance. Settings: see
    :class:`_BaseBDL`.
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
