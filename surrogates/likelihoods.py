"""Likelihoods: Gaussian regression with a learned homoscedastic noise precision per output,
and categorical classification."""
import math
import numbers

import torch
from torch import nn

__all__ = ["LOG_2PI", "GaussianLikelihood", "CategoricalLikelihood"]

#: log(2 pi), the Gaussian density's constant.
LOG_2PI = math.log(2.0 * math.pi)


def _finite_positive(v):
    """True for a finite real number > 0 (not a bool)."""
    return (not isinstance(v, bool) and isinstance(v, numbers.Real) and math.isfinite(v)
            and v > 0)


class GaussianLikelihood(nn.Module):
    """y ~ N(f(x), 1 / tau) with one precision tau per output.

    Args:
        n_outputs: number of outputs.
        init_std: initial noise standard deviation (in standardised output units).
        learn: learn tau (a point estimate) or keep it fixed (known noise).
        gamma_prior: optional (shape, rate) of a Gamma prior on tau; its log density is added
            to the objective, so tau is a MAP estimate.
    """

    kind = "gaussian"

    def __init__(self, n_outputs, init_std=0.1, learn=True, gamma_prior=None):
        super().__init__()
        if not _finite_positive(init_std):
            raise ValueError(f"init_std must be a finite number > 0, got init_std={init_std!r}")
        log_tau = torch.full((n_outputs,), -2.0 * math.log(init_std))
        if learn:
            self.log_tau = nn.Parameter(log_tau)
        else:
            self.register_buffer("log_tau", log_tau)
        if gamma_prior is not None:
            # an infinite shape or rate made the log density NaN
            if not (len(gamma_prior) == 2 and all(map(_finite_positive, gamma_prior))):
                raise ValueError(f"gamma_prior needs shape and rate > 0 and finite, got "
                                 f"gamma_prior={gamma_prior!r}")
            gamma_prior = tuple(map(float, gamma_prior))
        self.gamma_prior = gamma_prior
        self.learn = learn

    def log_prob(self, f, y):
        """(S, B) log-likelihood summed over outputs; f is (S, B, k), y (B, k)."""
        r = (y - f).square_()
        return (0.5 * (self.log_tau - LOG_2PI)).sum() - 0.5 * torch.matmul(
            r, torch.exp(self.log_tau))

    def log_hyperprior(self):
        """Log density of the noise precisions under the Gamma prior ``gamma_prior`` (0
        without one), a scalar tensor."""
        if self.gamma_prior is None:
            return torch.zeros(())
        a, b = self.gamma_prior
        tau = torch.exp(self.log_tau)
        # Gamma(shape a, rate b) density of tau (the log-tau Jacobian is left out: MAP in tau)
        return (a * math.log(b) - math.lgamma(a) + (a - 1) * self.log_tau - b * tau).sum()

    def noise_variance(self):
        """(k,) noise variance of each output, 1 / tau."""
        return torch.exp(-self.log_tau)


class CategoricalLikelihood(nn.Module):
    """y ~ Categorical(softmax(f(x))); y holds integer class labels."""

    kind = "categorical"

    def __init__(self, n_classes):
        super().__init__()
        self.n_classes = n_classes

    def log_prob(self, f, y):
        """(S, B) log-probability of the labels y (B,) under the logits f (S, B, k)."""
        return torch.distributions.Categorical(logits=f).log_prob(y.expand(f.shape[:-1]))

    def log_hyperprior(self):
        """0: a categorical likelihood has no noise to put a prior on."""
        return torch.zeros(())
