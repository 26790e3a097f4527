"""Baseline surrogates: scikit-learn regressors with the same fit / predict as
:class:`surrogates.BDL`.

``predict`` returns an (n,) or (n, k) array shaped like the training target. The GP also has
the uncertainty API of the BDL: ``predict(X, return_std=True)`` and ``predict_distribution``.

Only :class:`NeuralNetwork` needs torch, and imports it when it trains or predicts: a GP,
SVR, PCE or polynomial regression (the GP of an active learning, say) does not pay torch's
import (1.0 of the 2.1 s that ``import surrogates`` took when it imported torch, on a 2-core
VM with torch's CPU build; a CUDA build loads larger libraries).
"""

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from .validation import MultiOutputRegressorMixin, check_finite, is_int, is_real
from .prediction import Prediction, check_levels
from .scaling import CONSTANT, Standardizer

__all__ = ["PolynomialRegression", "SupportVectorRegression", "NeuralNetwork", "PolynomialChaos",
           "GaussianProcess", "BASELINES"]


class _Regressor(MultiOutputRegressorMixin, BaseEstimator):
    """Shared input checks: finite numeric X (n, d) and y (n,) or (n, k)."""

    def _fit_data(self, X, y):
        X, y = self._validate_regression(X, y)
        if X.shape[0] < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 samples, got "
                             f"{X.shape[0]} sample")
        return X, y

    def fit(self, X, y):
        """Fit to the rows of X (n, d) and y (n,) or (n, k): finite numbers, n >= 2. Returns
        self."""
        raise NotImplementedError

    def predict(self, X):
        """Predictions at the rows of X (m, d): (m,) for a 1-D training target, else
        (m, k)."""
        raise NotImplementedError

    def _check_X(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=False)
        return check_finite(X, "X")


class PolynomialRegression(_Regressor):
    """Least-squares polynomial of total degree ``degree`` on standardised inputs."""

    def __init__(self, degree=3):
        self.degree = degree

    def fit(self, X, y):
        from sklearn.linear_model import LinearRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import PolynomialFeatures, StandardScaler

        X, y = self._fit_data(X, y)
        self.model_ = make_pipeline(StandardScaler(), PolynomialFeatures(self.degree),
                                    LinearRegression(fit_intercept=False)).fit(X, y)
        return self

    def predict(self, X):
        X = self._check_X(X)
        return self.model_.predict(X)


class SupportVectorRegression(_Regressor):
    """scikit-learn's epsilon-SVR with an RBF kernel, one per output, on standardised outputs
    and (unless ``standardize_inputs=False``, e.g. for a gamma set in raw input units)
    standardised inputs."""

    def __init__(self, C=10.0, gamma="scale", epsilon=0.01, tol=1e-3, standardize_inputs=True):
        self.C, self.gamma, self.epsilon, self.tol = C, gamma, epsilon, tol
        self.standardize_inputs = standardize_inputs

    def fit(self, X, y):
        from sklearn.svm import SVR

        X, y = self._fit_data(X, y)
        self.single_ = y.ndim == 1
        Y = y[:, None] if self.single_ else y
        from .scaling import IdentityScaler

        self.xs_ = (Standardizer if self.standardize_inputs else IdentityScaler)().fit(X)
        self.ys_ = Standardizer().fit(Y)
        Z, T = self.xs_.transform(X), self.ys_.transform(Y)
        self.models_ = [SVR(kernel="rbf", C=self.C, gamma=self.gamma, epsilon=self.epsilon,
                            tol=self.tol).fit(Z, T[:, j]) for j in range(T.shape[1])]
        return self

    def predict(self, X):
        X = self._check_X(X)
        Z = self.xs_.transform(X)
        out = self.ys_.inverse_transform(np.column_stack([m.predict(Z) for m in self.models_]))
        return out[:, 0] if self.single_ else out


class NeuralNetwork(_Regressor):
    """A deterministic torch MLP (tanh hidden layers) trained on MSE (plus ``weight_decay / 2``
    times the squared weights) by Adam or SGD in minibatches for ``epochs`` epochs, or, with
    ``optimizer="lbfgs"``, full batch in float64 by torch's L-BFGS (strong-Wolfe line search)
    for at most ``epochs`` iterations: the optimiser of ``BDL(inference="laplace")``'s MAP
    network, for a fair comparison."""

    def __init__(self, hidden=(30, 15, 10), activation="tanh", epochs=1000, batch_size=16,
                 lr=5e-3, optimizer="adam", lr_step=100, lr_gamma=0.75, weight_decay=0.0,
                 seed=0, standardize=True):
        self.hidden, self.activation, self.epochs = hidden, activation, epochs
        self.batch_size, self.lr, self.optimizer = batch_size, lr, optimizer
        self.lr_step, self.lr_gamma, self.weight_decay = lr_step, lr_gamma, weight_decay
        self.seed, self.standardize = seed, standardize

    #: The hidden layers' activations it takes (the BDL's).
    ACTIVATIONS = ("tanh", "relu")

    def _check_settings(self):
        """Raise a ValueError naming the first bad setting."""
        if not isinstance(self.optimizer, str) or self.optimizer not in ("adam", "sgd",
                                                                         "lbfgs"):
            raise ValueError("optimizer must be 'adam', 'sgd' or 'lbfgs', got "
                             f"optimizer={self.optimizer!r}")
        try:
            hidden = tuple(self.hidden)
        except TypeError:
            raise ValueError(f"hidden must be a sequence of layer widths, got "
                             f"hidden={self.hidden!r}") from None
        if not all(is_int(h, 1) for h in hidden):
            raise ValueError(f"hidden widths must be integers >= 1, got hidden={self.hidden!r}")
        if not isinstance(self.activation, str) or self.activation not in self.ACTIVATIONS:
            raise ValueError(f"activation must be one of {self.ACTIVATIONS}, got "
                             f"activation={self.activation!r}")
        for name, least in (("epochs", 1), ("batch_size", 1), ("lr_step", 1), ("seed", 0)):
            v = getattr(self, name)
            if not is_int(v, least):
                raise ValueError(f"{name} must be an integer >= {least}, got {name}={v!r}")
        for name in ("lr", "lr_gamma"):
            v = getattr(self, name)
            if not (is_real(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {name}={v!r}")
        if not (is_real(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(f"weight_decay must be a finite number >= 0, got "
                             f"weight_decay={self.weight_decay!r}")

    def fit(self, X, y):
        self._check_settings()
        X, y = self._fit_data(X, y)
        self.single_ = y.ndim == 1
        Y = y[:, None] if self.single_ else y
        self.xs_ = Standardizer().fit(X) if self.standardize else None
        self.ys_ = Standardizer().fit(Y) if self.standardize else None
        Z = self.xs_.transform(X) if self.standardize else X
        T = self.ys_.transform(Y) if self.standardize else Y
        import torch
        from torch import nn

        gen = torch.Generator().manual_seed(int(self.seed))
        act = {"tanh": nn.Tanh, "relu": nn.ReLU}[self.activation]
        layers, d = [], X.shape[1]
        # the weights are drawn from torch's global generator, seeded here: forked, so that
        # the caller's stream of torch.rand goes on as if no network had been fitted
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(self.seed))
            for h in self.hidden:
                layers += [nn.Linear(d, h), act()]
                d = h
            layers.append(nn.Linear(d, T.shape[1]))
        self.net_ = nn.Sequential(*layers)
        if self.optimizer == "lbfgs":
            return self._fit_lbfgs(Z, T)
        opt_cls = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}[self.optimizer]
        opt = opt_cls(self.net_.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        sched = torch.optim.lr_scheduler.StepLR(opt, self.lr_step, self.lr_gamma)
        x = torch.as_tensor(Z, dtype=torch.float32)
        t = torch.as_tensor(T, dtype=torch.float32)
        n = len(x)
        bs = min(self.batch_size, n)
        for _ in range(self.epochs):
            order = torch.randperm(n, generator=gen)
            for s in range(0, n, bs):
                idx = order[s:s + bs]
                loss = ((self.net_(x[idx]) - t[idx]) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            sched.step()
        # predict in float64: in float32 a row's output can change in its last bit with its
        # position in the batch (another kernel path), so row order would matter
        self.net_ = self.net_.double()
        return self

    def _fit_lbfgs(self, Z, T):
        import torch

        self.net_ = self.net_.double()
        x, t = torch.as_tensor(Z, dtype=torch.float64), torch.as_tensor(T, dtype=torch.float64)
        params = list(self.net_.parameters())
        opt = torch.optim.LBFGS(params, lr=1.0, max_iter=int(self.epochs), history_size=20,
                                tolerance_grad=1e-12, tolerance_change=1e-15,
                                line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = ((self.net_(x) - t) ** 2).mean()
            if self.weight_decay:
                loss = loss + 0.5 * self.weight_decay * sum((p * p).sum() for p in params)
            loss.backward()
            return loss

        opt.step(closure)
        return self

    def predict(self, X):
        import torch

        X = self._check_X(X)
        Z = self.xs_.transform(X) if self.standardize else X
        with torch.no_grad():
            out = self.net_(torch.as_tensor(Z, dtype=torch.float64)).numpy()
        out = self.ys_.inverse_transform(out) if self.standardize else out
        return out[:, 0] if self.single_ else out


class PolynomialChaos(_Regressor):
    """Point-collocation polynomial chaos (chaospy): least squares on the polynomials of total
    degree ``order`` in the inputs, a basis orthonormal for ``distribution`` (a chaospy
    distribution; by default uniform over the training data's range).

    The basis is built in standardised inputs ``z = (x - shift) / scale``: Legendre
    polynomials on a uniform input's support, Hermite at a normal input's own mean and std,
    and Hermite at the data's mean and std for any other input and for a dependent joint
    (there a well-conditioned basis of the same space: least squares gives the same fit in
    any basis of it). chaospy's own polynomials of the inputs, monomials in x, cancel: a
    monic cubic of t ~ U(0.001, 0.002) is 1e-13 of one of E ~ N(210, 10), and least
    squares' rank cut-off dropped such columns (Table 4's PCE scored R^2 0.9977 where the
    same cubic space fits 0.99995); normed, a Student t's norms do not exist, and inputs
    near 1e4 cancelled still."""

    def __init__(self, order=3, distribution=None):
        self.order, self.distribution = order, distribution

    def fit(self, X, y):
        import chaospy

        if not is_int(self.order, 0):
            raise ValueError(f"order must be an integer >= 0, got order={self.order!r}")
        X, y = self._fit_data(X, y)
        dist = self.distribution
        if dist is not None and not isinstance(dist, chaospy.Distribution):
            raise ValueError(f"distribution must be None or a chaospy distribution, got "
                             f"distribution={dist!r}")
        if dist is not None and len(dist) != X.shape[1]:
            raise ValueError(f"distribution={dist!r} has {len(dist)} dimension(s), but X has "
                             f"{X.shape[1]} column(s): give one per input")
        if dist is None:
            lo, hi = X.min(0), X.max(0)
            # a column constant in the data (to Standardizer's rounding noise) gets a unit
            # pad: a pad of 1e-9 scaled its polynomials by 1e9 (at 5.01 for 5.0, a
            # prediction of -1e14), and at 210e9 was lost to rounding (chaospy asserted)
            flat = hi - lo <= CONSTANT * np.maximum(np.abs(lo), np.abs(hi))
            pad = np.where(flat, 1.0, 1e-9 + 0.01 * (hi - lo))
            dist = chaospy.J(*[chaospy.Uniform(a - p, b + p) for a, b, p in zip(lo, hi, pad)])
        self.shift_, self.scale_, germ = _standardisation(dist, X)
        self.expansion_ = chaospy.generate_expansion(self.order, chaospy.J(*germ),
                                                     normed=True)
        self.model_ = chaospy.fit_regression(self.expansion_, self._standardise(X).T, y)
        return self

    def _standardise(self, X):
        return (X - self.shift_) / self.scale_

    # A numpoly polynomial cannot be unpickled from read-only buffers (joblib memory maps):
    # pickle it as plain arrays and rebuild it from writable copies.
    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: object.__getstate__ gives __dict__
        for key in ("model_", "expansion_"):
            if key in state:
                p = state[key]
                state[key] = ("numpoly", p.exponents, [np.asarray(c) for c in p.coefficients],
                              p.names)
        return state

    def __setstate__(self, state):
        import numpoly

        for key in ("model_", "expansion_"):
            if isinstance(state.get(key), tuple) and state[key][0] == "numpoly":
                _, exponents, coefficients, names = state[key]
                state[key] = numpoly.polynomial_from_attributes(
                    np.array(exponents), [np.array(c) for c in coefficients], names)
        super().__setstate__(state)

    def predict(self, X):
        X = self._check_X(X)
        out = np.asarray(self.model_(*self._standardise(X).T))
        return out.T if out.ndim == 2 else out


def _standardisation(dist, X):
    """Per input of ``dist`` (a chaospy distribution of X's columns): the shift and scale of
    its standardised variable and the germ its basis is orthonormal for (see
    :class:`PolynomialChaos`)."""
    import chaospy

    d = X.shape[1]
    marginals = [dist] if d == 1 else list(dist) if isinstance(dist, chaospy.J) \
        and not dist.stochastic_dependent else [None] * d
    data = Standardizer().fit(X)  # a constant column (to rounding noise) keeps scale 1
    shift, scale = data.mean_.copy(), data.scale_.copy()
    germ = [chaospy.Normal(0, 1) for _ in range(d)]  # one object each: chaospy reads a
    # repeated object as one variable
    for i, m in enumerate(marginals):
        m = m[0] if isinstance(m, chaospy.J) and len(m) == 1 else m
        if isinstance(m, chaospy.Uniform):
            lo, hi = float(np.ravel(m.lower)[0]), float(np.ravel(m.upper)[0])
            shift[i], scale[i], germ[i] = (lo + hi) / 2, (hi - lo) / 2, chaospy.Uniform(-1, 1)
        elif isinstance(m, chaospy.Normal):
            alpha, beta = chaospy.stieltjes(1, m)[0]  # mean and variance, no cancellation
            shift[i], scale[i] = float(np.ravel(alpha)[0]), float(np.sqrt(np.ravel(beta)[1]))
    return shift, scale, germ


class GaussianProcess(_Regressor):
    """scikit-learn Gaussian process: constant x anisotropic RBF plus white noise, on
    standardised inputs and normalised outputs.

    Its uncertainty API is the BDL's: the epistemic variance is the latent function's, the
    aleatoric one the fitted white-noise level.
    """

    def __init__(self, n_restarts=2, seed=0):
        self.n_restarts, self.seed = n_restarts, seed

    def fit(self, X, y):
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

        X, y = self._fit_data(X, y)
        self.y_shape_ = y.shape[1:]  # sklearn's GP predicts (n,) for a (n, 1) target
        self.xs_ = Standardizer().fit(X)
        kernel = ConstantKernel(1.0) * RBF(np.ones(X.shape[1]), (1e-2, 1e3)) + WhiteKernel(
            1e-3, (1e-10, 1e1))
        self.model_ = GaussianProcessRegressor(kernel, normalize_y=True,
                                               n_restarts_optimizer=self.n_restarts,
                                               random_state=self.seed)
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        with warnings.catch_warnings():
            # individual restarts of the marginal-likelihood optimiser may stop early; the
            # best restart is kept
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model_.fit(self.xs_.transform(X), y)
        return self

    def predict(self, X, return_std=False):
        """Predictive means at X, and with ``return_std=True`` the predictive standard
        deviations (latent function and noise)."""
        pred = self.predict_distribution(X)
        return (pred.mean, pred.std) if return_std else pred.mean

    def predict_distribution(self, X, levels=(0.95,)):
        """The Gaussian predictive distribution at X (:class:`surrogates.Prediction`), with
        central intervals at ``levels``."""
        from scipy import special

        levels = check_levels(levels)
        X = self._check_X(X)
        Z = self.xs_.transform(X)
        mean, sd = self.model_.predict(Z, return_std=True)
        mean = mean.reshape((len(Z),) + self.y_shape_)  # a (n, 1) target: (n, 1), as fitted
        if mean.ndim == 2 and sd.ndim == 1:
            sd = sd[:, None]
        total = np.broadcast_to(sd ** 2, mean.shape)
        noise = self.model_.kernel_.k2.noise_level * np.asarray(self.model_._y_train_std) ** 2
        aleatoric = np.broadcast_to(np.minimum(noise, total), mean.shape).copy()
        sd = np.sqrt(total)
        intervals = {lv: (mean - special.ndtri(0.5 + lv / 2) * sd,
                          mean + special.ndtri(0.5 + lv / 2) * sd) for lv in levels}
        return Prediction(mean=mean, epistemic_var=total - aleatoric, aleatoric_var=aleatoric,
                          intervals=intervals)


#: Short names used by the studies.
BASELINES = {"PR": PolynomialRegression, "SVR": SupportVectorRegression, "NN": NeuralNetwork,
             "PCE": PolynomialChaos, "GP": GaussianProcess}
