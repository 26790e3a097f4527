"""Quantiles of the predictive Gaussian mixture against a root of its CDF."""
import numpy as np
import pytest
from scipy import optimize, special

from surrogates.prediction import mixture_interval, mixture_quantile


def mixture_cdf(x, centres, sd):
    return special.ndtr((x - centres) / sd).mean()


@pytest.mark.parametrize("p", [0.001, 0.025, 0.5, 0.9, 0.999])
def test_mixture_quantile_is_the_root_of_the_mixture_cdf(p):
    rng = np.random.default_rng(0)
    # (S, n, k) posterior samples: a bimodal, a tight and a wide mixture
    samples = np.stack([np.concatenate([rng.normal(-3, 0.1, 60), rng.normal(2, 0.5, 40)]),
                        rng.normal(1.0, 1e-4, 100), rng.normal(0, 5.0, 100)], axis=-1)
    samples = samples[:, None, :]
    noise = np.array([0.3, 0.01, 2.0])
    q = mixture_quantile(samples, noise, p)
    for j in range(3):
        c, sd = samples[:, 0, j], noise[j]
        root = optimize.brentq(lambda x: mixture_cdf(x, c, sd) - p, c.min() - 20 * sd,
                               c.max() + 20 * sd, xtol=1e-14, rtol=1e-14)
        assert q[0, j] == pytest.approx(root, rel=1e-8, abs=1e-10)


def test_one_component_gives_the_normal_quantile_and_intervals_are_central():
    samples = np.full((1, 4, 1), 2.0)
    lo, hi = mixture_interval(samples, np.array([0.5]), 0.95)
    np.testing.assert_allclose(lo, 2.0 - 0.5 * special.ndtri(0.975), rtol=1e-10)
    np.testing.assert_allclose(hi, 2.0 + 0.5 * special.ndtri(0.975), rtol=1e-10)
