"""Baseline surrogates with the same fit / predict shape as :class:`surrogates.BDL`.

``predict`` returns an (n,) or (n, k) array shaped like the training target; the GP also
offers ``predict_distribution`` with its predictive variance.
"""

import numpy as np
import torch
from torch import nn

from .scaling import Standardizer


def _xy(X, y):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or len(X) != len(y) or not np.isfinite(X).all() or not np.isfinite(y).all():
        raise ValueError(f"X must be (n, d) and y (n,) or (n, k), finite; got {X.shape} and "
                         f"{y.shape}")
    return X, y


class PolynomialRegression:
    """Least-squares polynomial of total degree ``degree`` on standardised inputs."""

    def __init__(self, degree=3):
        self.degree = degree

    def fit(self, X, y):
        from sklearn.linear_model import LinearRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import PolynomialFeatures, StandardScaler

        X, y = _xy(X, y)
        self.model_ = make_pipeline(StandardScaler(), PolynomialFeatures(self.degree),
                                    LinearRegression(fit_intercept=False)).fit(X, y)
        return self

    def predict(self, X):
        return self.model_.predict(np.asarray(X, dtype=float))


class SupportVectorRegression:
    """scikit-learn's epsilon-SVR with an RBF kernel, one per output, on standardised outputs
    and (unless ``standardize_inputs=False``, e.g. for a gamma set in raw input units)
    standardised inputs."""

    def __init__(self, C=10.0, gamma="scale", epsilon=0.01, tol=1e-3, standardize_inputs=True):
        self.C, self.gamma, self.epsilon, self.tol = C, gamma, epsilon, tol
        self.standardize_inputs = standardize_inputs

    def fit(self, X, y):
        from sklearn.svm import SVR

        X, y = _xy(X, y)
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
        Z = self.xs_.transform(X)
        out = self.ys_.inverse_transform(np.column_stack([m.predict(Z) for m in self.models_]))
        return out[:, 0] if self.single_ else out


class NeuralNetwork:
    """A deterministic torch MLP (tanh hidden layers) trained by Adam or SGD on MSE."""

    def __init__(self, hidden=(30, 15, 10), activation="tanh", epochs=1000, batch_size=16,
                 lr=5e-3, optimizer="adam", lr_step=100, lr_gamma=0.75, weight_decay=0.0,
                 seed=0, standardize=True):
        self.hidden, self.activation, self.epochs = tuple(hidden), activation, epochs
        self.batch_size, self.lr, self.optimizer = batch_size, lr, optimizer
        self.lr_step, self.lr_gamma, self.weight_decay = lr_step, lr_gamma, weight_decay
        self.seed, self.standardize = seed, standardize

    def fit(self, X, y):
        X, y = _xy(X, y)
        self.single_ = y.ndim == 1
        Y = y[:, None] if self.single_ else y
        self.xs_ = Standardizer().fit(X) if self.standardize else None
        self.ys_ = Standardizer().fit(Y) if self.standardize else None
        Z = self.xs_.transform(X) if self.standardize else X
        T = self.ys_.transform(Y) if self.standardize else Y
        gen = torch.Generator().manual_seed(self.seed)
        torch.manual_seed(self.seed)
        act = {"tanh": nn.Tanh, "relu": nn.ReLU}[self.activation]
        layers, d = [], X.shape[1]
        for h in self.hidden:
            layers += [nn.Linear(d, h), act()]
            d = h
        layers.append(nn.Linear(d, T.shape[1]))
        self.net_ = nn.Sequential(*layers)
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
        return self

    @torch.no_grad()
    def predict(self, X):
        X = np.asarray(X, dtype=float)
        Z = self.xs_.transform(X) if self.standardize else X
        out = self.net_(torch.as_tensor(Z, dtype=torch.float32)).double().numpy()
        out = self.ys_.inverse_transform(out) if self.standardize else out
        return out[:, 0] if self.single_ else out


class PolynomialChaos:
    """Point-collocation polynomial chaos (chaospy): least squares on an orthogonal
    expansion of ``order`` over the inputs' distribution (a chaospy distribution; by default
    uniform over the training data's range)."""

    def __init__(self, order=3, distribution=None):
        self.order, self.distribution = order, distribution

    def fit(self, X, y):
        import chaospy

        X, y = _xy(X, y)
        dist = self.distribution
        if dist is None:
            lo, hi = X.min(0), X.max(0)
            pad = 1e-9 + 0.01 * (hi - lo)
            dist = chaospy.J(*[chaospy.Uniform(a - p, b + p) for a, b, p in zip(lo, hi, pad)])
        self.expansion_ = chaospy.generate_expansion(self.order, dist)
        self.model_ = chaospy.fit_regression(self.expansion_, X.T, y)
        return self

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        out = np.asarray(self.model_(*X.T))
        return out.T if out.ndim == 2 else out


class GaussianProcess:
    """scikit-learn Gaussian process: constant x anisotropic RBF plus white noise, on
    standardised inputs and normalised outputs."""

    def __init__(self, n_restarts=2, seed=0):
        self.n_restarts, self.seed = n_restarts, seed

    def fit(self, X, y):
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

        X, y = _xy(X, y)
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

    def predict(self, X):
        return self.model_.predict(self.xs_.transform(X))

    def predict_distribution(self, X):
        """(mean, variance) of the latent function plus noise."""
        mean, sd = self.model_.predict(self.xs_.transform(X), return_std=True)
        if mean.ndim == 2 and sd.ndim == 1:
            sd = sd[:, None]
        return mean, sd ** 2


#: Short names used by the studies.
BASELINES = {"PR": PolynomialRegression, "SVR": SupportVectorRegression, "NN": NeuralNetwork,
             "PCE": PolynomialChaos, "GP": GaussianProcess}
