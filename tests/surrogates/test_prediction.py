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


@pytest.mark.parametrize("inference", ["laplace", "meanfield"])
def test_rescaled_prediction_equals_a_prediction_after_calibrate(inference):
    from surrogates import BDL

    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (80, 2))
    Y = np.column_stack([np.sin(2 * X[:, 0]) + X[:, 1], X[:, 0] * X[:, 1]])
    Y = Y + rng.normal(0, 0.05, Y.shape)
    kw = dict(max_iter=100) if inference == "laplace" else dict(epochs=30, batch_size=40)
    m = BDL(hidden=(8,), inference=inference, seed=0, predict_samples=50, **kw).fit(X, Y)
    Xv = rng.uniform(-1, 1, (30, 2))
    raw = m.predict_distribution(Xv, levels=(0.9, 0.95), return_samples=True)
    m.calibrate(X[:40] * 1.5, Y[:40])  # a held-out set the fit misjudges: scales far from 1
    assert np.all(np.abs(np.log(m.variance_scale_)) > 0.1)
    again = m.predict_distribution(Xv, levels=(0.9, 0.95), return_samples=True)
    rescaled = raw.rescaled(m.variance_scale_)
    scale = np.abs(raw.mean).max() + np.sqrt(raw.total_var).max()
    for name in ("mean", "epistemic_var", "aleatoric_var", "samples"):
        np.testing.assert_allclose(getattr(rescaled, name), getattr(again, name), rtol=1e-9,
                                   atol=1e-12 * scale)
    for lv in (0.9, 0.95):
        for a, b in zip(rescaled.intervals[lv], again.intervals[lv]):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12 * scale)
    with pytest.raises(ValueError, match="scale must be finite and > 0"):
        raw.rescaled([1.0, -1.0])


def test_mixture_quantiles_of_hard_mixtures_are_roots_of_their_cdf():
    """300 mixtures that test the safeguards (an independent audit's fuzz): two far modes,
    Cauchy-spread centres, offsets of 1e6, a noise from 1e-4 to 100 times the spread, and
    p from 1e-6 to 1 - 1e-6; the mixture CDF at each quantile is p to 1e-9 (in the tail,
    relative to the tail's mass)."""
    rng = np.random.default_rng(11)
    S, k = 50, 300
    kinds = np.arange(k) % 3
    centres = np.where(kinds == 0, np.where(rng.uniform(size=(S, k)) < 0.3, -40.0, 25.0)
                       + rng.normal(size=(S, k)),
                       np.where(kinds == 1, rng.standard_cauchy((S, k)),
                                1e6 + rng.normal(size=(S, k))))
    spread = centres.std(0)
    noise = spread * 10.0 ** rng.uniform(-4, 2, k)
    for p in (1e-6, 0.01, 0.5, 0.97, 1 - 1e-6):
        q = mixture_quantile(centres[:, None, :], noise, p)[0]
        cdf = special.ndtr((q - centres) / noise).mean(0)
        tail = min(p, 1 - p)
        assert np.abs(cdf - p).max() <= 1e-9 + 1e-6 * tail, (p, np.abs(cdf - p).max())
