"""The likelihoods against scipy's densities."""
import math

import numpy as np
import pytest
import torch
from scipy import stats

from surrogates.likelihoods import CategoricalLikelihood, GaussianLikelihood


def test_gaussian_log_likelihood_is_the_normal_density_summed_over_outputs():
    lik = GaussianLikelihood(2, init_std=0.3)
    with torch.no_grad():
        lik.log_tau.copy_(torch.tensor([0.5, -1.0]))
    g = torch.Generator().manual_seed(0)
    f = torch.randn(4, 6, 2, generator=g)
    y = torch.randn(6, 2, generator=g)
    sd = np.exp(-0.5 * lik.log_tau.detach().numpy().astype(float))
    expected = stats.norm.logpdf(y.numpy()[None], f.numpy(), sd).sum(-1)
    assert np.allclose(lik.log_prob(f, y).detach().numpy(), expected, rtol=1e-5)
    assert np.allclose(lik.noise_variance().detach().numpy(), sd ** 2, rtol=1e-6)


def test_the_initial_noise_and_what_is_learned():
    lik = GaussianLikelihood(3, init_std=0.2)
    assert torch.allclose(lik.noise_variance(), torch.full((3,), 0.04), rtol=1e-6)
    assert isinstance(lik.log_tau, torch.nn.Parameter) and lik.learn
    fixed = GaussianLikelihood(3, init_std=0.2, learn=False)
    assert not isinstance(fixed.log_tau, torch.nn.Parameter)
    assert "log_tau" in dict(fixed.named_buffers()) and not fixed.learn
    for bad in (0, float("inf"), float("nan")):  # inf: a noise precision of 0
        with pytest.raises(ValueError, match=rf"^init_std must be a finite number > 0, got "
                                             rf"init_std={bad}$"):
            GaussianLikelihood(1, init_std=bad)


def test_the_gamma_hyperprior_is_scipys_density_of_the_precision():
    lik = GaussianLikelihood(2, gamma_prior=(3.0, 0.5))
    with torch.no_grad():
        lik.log_tau.copy_(torch.tensor([0.2, 1.5]))
    tau = np.exp(lik.log_tau.detach().numpy())
    expected = stats.gamma.logpdf(tau, 3.0, scale=1 / 0.5).sum()
    assert float(lik.log_hyperprior()) == pytest.approx(expected, rel=1e-6)
    assert float(GaussianLikelihood(2).log_hyperprior()) == 0.0
    GaussianLikelihood(1, gamma_prior=(0.5, 0.1))  # a shape below 1 is a valid Gamma
    assert torch.allclose(GaussianLikelihood(1).noise_variance(), torch.tensor([0.01]))
    # an infinite shape or rate made the log density NaN
    for bad in ((0.0, 1.0), (1.0, -2.0), (1.0, 0.0), (2, math.inf), (math.inf, 1), (1, 2, 3)):
        with pytest.raises(ValueError, match=r"gamma_prior needs shape and rate > 0 and "
                                             r"finite, got gamma_prior=\("):
            GaussianLikelihood(1, gamma_prior=bad)


def test_categorical_log_likelihood_is_the_log_softmax_of_the_label():
    lik = CategoricalLikelihood(3)
    g = torch.Generator().manual_seed(1)
    f = torch.randn(2, 5, 3, generator=g, dtype=torch.float64)
    y = torch.tensor([0, 2, 1, 1, 0])
    logp = f - torch.logsumexp(f, -1, keepdim=True)
    expected = logp.gather(-1, y.expand(2, 5)[..., None])[..., 0]
    assert torch.allclose(lik.log_prob(f, y), expected, rtol=1e-12)
    assert float(lik.log_hyperprior()) == 0.0 and lik.n_classes == 3
    assert math.isclose(float(torch.exp(lik.log_prob(f, y)).sum()), float(
        torch.softmax(f, -1).gather(-1, y.expand(2, 5)[..., None]).sum()), rel_tol=1e-12)
