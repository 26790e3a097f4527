"""The mean-field BDL's probabilistic model: prior, likelihood and variational family composed
in one torch module whose ``elbo`` is the training objective (eq 3.13-3.14 of the paper)::

    ELBO = (N / M) sum_{i in batch} E_q[log p(y_i | x_i, w)] - KL(q || p) [+ log p(tau)]

Imports torch and the package's priors.
"""
from torch import nn

from ..priors import HierarchicalPrior

__all__ = ["BayesianModel"]


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
        """KL(q || p) of the guide's posterior from the prior
        (:meth:`surrogates.priors.Prior.kl`), at the guide's standard deviations or
        ``sigma``."""
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
