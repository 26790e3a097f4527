"""Mean-field Laplace widths: exact for a conjugate linear model, curvatures against finite
differences and exact Hessians, and the BDL warm start that uses them."""
import numpy as np
import pytest
import torch

from surrogates import BDL, BayesianModel, GaussianLikelihood, MeanFieldMLP, NormalPrior
from surrogates.meanfield.warm_start import data_curvature, laplace_sigma, prior_curvature
from surrogates.likelihoods import CategoricalLikelihood
from surrogates.priors import make_prior


def linear_data(n=50, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.array([1.0, 2.0, 0.5])[:d]
    y = X @ np.array([1.0, -0.5, 2.0])[:d] + 0.3 + rng.normal(0, 0.5, n)
    return X, y


@pytest.mark.parametrize("kl_weight", [1.0, 0.3])
def test_linear_gaussian_widths_are_the_exact_mean_field_optimum(kl_weight):
    X, y = linear_data()
    noise, s0 = 0.5, 2.0
    guide = MeanFieldMLP((3, 1), init_std=1e-3, dtype=torch.float64,
                         generator=torch.Generator().manual_seed(0))
    model = BayesianModel(guide, NormalPrior(0, s0),
                          GaussianLikelihood(1, noise, learn=False).double())
    x, t = torch.as_tensor(X), torch.as_tensor(y[:, None])
    sd = laplace_sigma(model, x, t, len(X), kl_weight).numpy()
    Xa = np.column_stack([X, np.ones(len(X))])
    # for a quadratic objective the mean-field optimum has precision diag(H) / kl_weight
    h = np.diag(Xa.T @ Xa) / noise ** 2 + kl_weight / s0 ** 2
    np.testing.assert_allclose(sd, np.sqrt(kl_weight / h), rtol=1e-7)  # tau was rounded to float32 before .double()
    # a subset of the data scaled up to n gives the same curvature in expectation (here: exact
    # for a replicated data set)
    xx, tt = torch.cat([x, x]), torch.cat([t, t])
    np.testing.assert_allclose(laplace_sigma(model, xx, tt, len(X), kl_weight).numpy(), sd,
                               rtol=1e-10)


def test_tanh_network_curvature_matches_finite_differences():
    gen = torch.Generator().manual_seed(3)
    guide = MeanFieldMLP((2, 5, 3, 2), init_std=1e-3, dtype=torch.float64, generator=gen)
    lik = GaussianLikelihood(2, 0.7).double()
    with torch.no_grad():
        lik.log_tau.copy_(torch.tensor([0.3, -0.4], dtype=torch.float64))
    x = torch.randn(7, 2, generator=gen, dtype=torch.float64)
    mu0 = guide.mu.detach().clone()
    J = np.zeros((7, 2, guide.n_params))
    h = 1e-6
    for i in range(guide.n_params):
        with torch.no_grad():
            guide.mu.copy_(mu0)
            guide.mu[i] += h
            up = guide.forward_mean(x).numpy()
            guide.mu[i] -= 2 * h
            down = guide.forward_mean(x).numpy()
        J[:, :, i] = (up - down) / (2 * h)
    with torch.no_grad():
        guide.mu.copy_(mu0)
    expected = np.einsum("bkp,k->p", J ** 2, np.exp([0.3, -0.4]))
    got = data_curvature(guide, lik, x, None).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-10)


def test_softmax_curvature_equals_the_exact_hessian_of_a_linear_model():
    gen = torch.Generator().manual_seed(5)
    guide = MeanFieldMLP((3, 4), init_std=1e-3, dtype=torch.float64, generator=gen)
    x = torch.randn(20, 3, generator=gen, dtype=torch.float64)
    y = torch.randint(0, 4, (20,), generator=gen)

    def nll(mu):
        f = guide.forward_weights(x, mu.unsqueeze(0))[0]
        return torch.nn.functional.cross_entropy(f, y, reduction="sum")

    exact = torch.autograd.functional.hessian(nll, guide.mu.detach().clone())
    got = data_curvature(guide, CategoricalLikelihood(4), x, y)
    np.testing.assert_allclose(got.numpy(), torch.diagonal(exact).numpy(), rtol=1e-9,
                               atol=1e-12)


@pytest.mark.parametrize("spec", ["normal(0, 0.5)", "laplace(0, 1)",
                                  "hierarchical-normal", "hierarchical-laplace"])
def test_prior_curvature_matches_finite_differences(spec):
    gen = torch.Generator().manual_seed(1)
    guide = MeanFieldMLP((2, 4, 1), init_std=0.3, dtype=torch.float64, generator=gen)
    model = BayesianModel(guide, make_prior(spec), GaussianLikelihood(1, 0.1)).double()
    got = prior_curvature(model).numpy()
    mu, sigma = guide.mu.detach().clone(), guide.sigma().detach()

    def kl(m):
        with torch.no_grad():
            return float(model.prior.kl(m, sigma, guide.layers))

    h = 1e-4
    for i in (0, 3, 8, len(mu) - 1):
        e = torch.zeros_like(mu)
        e[i] = h
        fd = (kl(mu + e) - 2 * kl(mu) + kl(mu - e)) / h ** 2
        assert abs(got[i] - fd) <= 1e-4 * max(1.0, abs(fd)), (spec, i, got[i], fd)


def test_bdl_warm_start_hands_the_exact_widths_to_variational_inference():
    """MAP warm start, then one variational step: the means are the conjugate posterior means
    and the widths the exact mean-field optimum (not ``init_std``)."""
    X, y = linear_data(n=80)
    noise, s0 = 0.5, 1.0
    model = BDL(hidden=(), prior=f"normal(0, {s0})", noise_std=noise, learn_noise=False,
                standardize=False, map_epochs=3000, epochs=3001, batch_size=80, lr=0.02,
                lr_step=1000, lr_gamma=0.5, init_std=1e-4, seed=0).fit(X, y)
    Xa = np.column_stack([X, np.ones(len(X))])
    A = Xa.T @ Xa / noise ** 2 + np.eye(4) / s0 ** 2
    mean = np.linalg.solve(A, Xa.T @ y / noise ** 2)
    layer = model.posterior()[0]
    np.testing.assert_allclose(np.append(layer["weight_mean"][0], layer["bias_mean"]), mean,
                               rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(np.append(layer["weight_std"][0], layer["bias_std"]),
                               1 / np.sqrt(np.diag(A)), rtol=0.02)
    keep = BDL(hidden=(), prior=f"normal(0, {s0})", noise_std=noise, learn_noise=False,
               standardize=False, map_epochs=30, epochs=31, batch_size=80, init_std=1e-4,
               warm_sigma="keep", seed=0).fit(X, y)
    assert keep.posterior()[0]["bias_std"][0] < 2e-4
    with pytest.raises(ValueError, match="warm_sigma must be 'laplace' or 'keep'"):
        BDL(warm_sigma="fisher").fit(X, y)


def test_tempered_posterior_matches_its_closed_form():
    """With the KL weighted by lam, the optimum of a conjugate linear model is
    m = (tau X^T X + lam / s0^2)^-1 tau X^T y and s_i^2 = lam / (tau (X^T X)_ii + lam / s0^2)."""
    n, noise, s0, lam = 60, 0.5, 1.0, 0.25
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, 3))
    A -= A.mean(0)
    X = np.linalg.qr(A)[0] * np.sqrt(n)  # orthogonal columns: mean field is exact
    y = X @ np.array([1.5, -2.0, 0.8]) + 0.5 + rng.normal(0, noise, n)
    Xa = np.column_stack([X, np.ones(n)])
    P = Xa.T @ Xa / noise ** 2 + lam * np.eye(4) / s0 ** 2
    mean = np.linalg.solve(P, Xa.T @ y / noise ** 2)
    model = BDL(hidden=(), prior=f"normal(0, {s0})", noise_std=noise, learn_noise=False,
                standardize=False, kl_weight=lam, epochs=4000, batch_size=n, n_samples=16,
                lr=0.01, lr_step=1000, lr_gamma=0.5, init_std=0.05, seed=0).fit(X, y)
    layer = model.posterior()[0]
    np.testing.assert_allclose(np.append(layer["weight_mean"][0], layer["bias_mean"]), mean,
                               rtol=0.02)
    np.testing.assert_allclose(np.append(layer["weight_std"][0], layer["bias_std"]),
                               np.sqrt(lam / np.diag(P)), rtol=0.10)
    with pytest.raises(ValueError, match="kl_weight must be a finite number > 0"):
        BDL(kl_weight=0.0).fit(X, y)


@pytest.mark.parametrize("spec", ["laplace(0, 1)", "cauchy(0, 1)"])
def test_widths_stay_finite_where_the_quadratic_model_gives_none(spec):
    """A narrow posterior under a Laplace or Cauchy prior has prior curvature only in a spike
    at the prior's centre, and a unit the data do not reach has no data curvature: the width
    is capped instead of blowing up."""
    gen = torch.Generator().manual_seed(0)
    guide = MeanFieldMLP((1, 8, 1), init_std=1e-5, generator=gen)
    model = BayesianModel(guide, make_prior(spec), GaussianLikelihood(1, 0.1))
    x = torch.zeros(10, 1)  # first-layer weights multiply 0: no data curvature
    sd = laplace_sigma(model, x, torch.zeros(10, 1), 10, cap=0.5)
    assert torch.isfinite(sd).all() and float(sd.max()) == pytest.approx(0.5)
    assert float(sd.min()) > 0


def test_early_stopping_waits_for_the_variational_phase():
    x = np.linspace(-1, 1, 50)[:, None]
    y = np.sin(3 * x[:, 0])
    model = BDL(hidden=(6,), map_epochs=40, epochs=80, val_fraction=0.2, patience=1,
                eval_every=5, init_std=1e-5, seed=0).fit(x, y)
    assert min(model.history_["val_epoch"]) > 40
    assert model.stopped_epoch_ > 40
    assert float(model.model_.guide.sigma().detach().max()) > 1e-4  # the Laplace widths were handed over
