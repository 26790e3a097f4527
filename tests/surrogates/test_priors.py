"""Closed-form KLs against Monte Carlo; the point-mass hyperprior reproduces the direct prior."""
import math

import numpy as np
import pytest
from scipy import stats
import torch

from surrogates import BDL
from surrogates.priors import (CauchyPrior, HierarchicalPrior, LaplacePrior, NormalPrior,
                               make_prior)

LAYERS = [(0, 30), (30, 50)]


@pytest.fixture
def posterior():
    g = torch.Generator().manual_seed(0)
    mu = torch.randn(50, generator=g, dtype=torch.float64) * 0.7
    sigma = torch.rand(50, generator=g, dtype=torch.float64) * 0.3 + 0.05
    return mu, sigma


def _mc(prior, mu, sigma, reps=40, n=5000):
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        vals = torch.stack([prior.kl_monte_carlo(mu, sigma, LAYERS, n, g) for _ in range(reps)])
    return float(vals.mean()), float(vals.std() / math.sqrt(reps))


@pytest.mark.parametrize("prior", [NormalPrior(0, 1), NormalPrior(0.5, 0.1), LaplacePrior(0, 1),
                                   LaplacePrior(0.2, 0.5)])
def test_direct_closed_form_kl_matches_monte_carlo(prior, posterior):
    mu, sigma = posterior
    with torch.no_grad():
        exact = float(prior.kl(mu, sigma, LAYERS))
    est, se = _mc(prior, mu, sigma)
    assert abs(exact - est) < 4 * se + 1e-9


@pytest.mark.parametrize("base, alpha, beta", [("normal", 1.0, 1.0), ("normal", 3.0, 2.0),
                                               ("laplace", 1.0, 1.0), ("laplace", 4.0, 1.0)])
def test_hierarchical_closed_form_matches_monte_carlo(base, alpha, beta, posterior):
    mu, sigma = posterior
    prior = HierarchicalPrior(base, alpha=alpha, beta=beta)
    prior.setup(len(LAYERS), torch.float64)
    with torch.no_grad():
        prior.m += torch.tensor([0.3, -0.4], dtype=torch.float64)
        exact = float(prior.kl(mu, sigma, LAYERS))
    est, se = _mc(prior, mu, sigma, reps=60, n=20000)
    assert abs(exact - est) < 4 * se


def test_cauchy_monte_carlo_kl_is_consistent(posterior):
    mu, sigma = posterior
    prior = CauchyPrior(1, 1)
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        a = float(prior.kl(mu, sigma, LAYERS, g, n_samples=200_000))
    est, se = _mc(prior, mu, sigma)
    assert abs(a - est) < 4 * se + 0.05


def test_point_mass_hyperprior_reproduces_direct_prior(posterior):
    mu, sigma = posterior
    for base, direct in (("normal", NormalPrior(0, math.sqrt(0.3))), ("laplace", LaplacePrior(0, 0.3))):
        h = HierarchicalPrior(base, point_mass=0.3)
        assert float(h.kl(mu, sigma, LAYERS)) == float(direct.kl(mu, sigma, LAYERS))
        # and the concentrating limit of IG(alpha, beta) with beta / (alpha + 1) = 0.3
        conc = HierarchicalPrior(base, alpha=1e7, beta=0.3 * (1e7 + 1))
        conc.setup(2, torch.float64)
        with torch.no_grad():
            assert float(conc.kl(mu, sigma, LAYERS)) == pytest.approx(
                float(direct.kl(mu, sigma, LAYERS)), rel=1e-5)
    # trained models coincide
    x = np.linspace(-1, 1, 30)[:, None]
    a = BDL(hidden=(5,), prior=HierarchicalPrior("normal", point_mass=0.25), epochs=20,
            seed=1).fit(x, x[:, 0] ** 2).predict(x)
    b = BDL(hidden=(5,), prior="normal(0, 0.5)", epochs=20, seed=1).fit(x, x[:, 0] ** 2) \
        .predict(x)
    assert np.array_equal(a, b)


def test_hierarchical_scale_is_learned():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (200, 2))
    y = np.tanh(2 * x[:, 0]) - x[:, 1]
    model = BDL(hidden=(10,), prior="hierarchical-normal", epochs=150, batch_size=50,
                lr=0.01, seed=0).fit(x, y)
    scales = [layer["prior_scale"] for layer in model.posterior()]
    # Given the weights' posterior, the exact posterior of a layer's variance s under
    # w ~ N(0, s), s ~ IG(1, 1) is IG(1 + n/2, 1 + sum(mu^2 + sigma^2)/2): the learned
    # log-normal factor's median lands within 15% of that posterior's median
    g = model.model_.guide
    mu = g.mu.detach().double().numpy()
    sd = g.sigma().detach().double().numpy()
    for (a, b), s in zip(g.layers, scales):
        n, ss = b - a, float((mu[a:b] ** 2 + sd[a:b] ** 2).sum())
        exact = stats.invgamma(1 + n / 2, scale=1 + ss / 2).median()
        assert s == pytest.approx(exact, rel=0.15)
    assert abs(scales[0] - scales[1]) > 0.1  # two layers, two scales, both moved off 0.5


def test_make_prior_specs():
    assert isinstance(make_prior("laplace(0, 1)"), LaplacePrior)
    h = make_prior("hierarchical-normal(0, alpha=2, beta=3)")
    assert (h.alpha, h.beta, h.base) == (2.0, 3.0, "normal")
    assert make_prior(h.describe()).describe() == h.describe()
    for bad in ("student(1)", "normal(a)", 3):
        with pytest.raises(ValueError):
            make_prior(bad)


@pytest.mark.parametrize("prior_class, scipy_dist", [(NormalPrior, stats.norm),
                                                     (LaplacePrior, stats.laplace),
                                                     (CauchyPrior, stats.cauchy)])
@pytest.mark.parametrize("loc, scale", [(0.0, 1.0), (0.7, 0.3), (-2.0, 4.0)])
def test_direct_prior_densities_are_scipys(prior_class, scipy_dist, loc, scale):
    w = torch.linspace(-6, 6, 49, dtype=torch.float64)
    prior = prior_class(loc, scale)
    expected = scipy_dist.logpdf(w.numpy(), loc=loc, scale=scale)
    assert np.allclose(prior.log_prob(w).numpy(), expected, rtol=1e-12, atol=1e-12)
    # the scale argument (the hierarchical prior's per-layer scale) overrides the prior's own
    other = prior_class(loc, 1.0).log_prob(w, scale=torch.tensor(scale, dtype=torch.float64))
    assert np.allclose(other.numpy(), expected, rtol=1e-12, atol=1e-12)
