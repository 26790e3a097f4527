"""A BDL's predictive distribution and weight posterior as the engines assemble them
(:mod:`surrogates.bdl.prediction`): in the targets' units, per output, per layer."""
import numpy as np
import pytest

from surrogates import BDL, BDLClassifier

SETTINGS = {"laplace": dict(max_iter=60), "meanfield": dict(epochs=20, batch_size=30)}


def _data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    Y = np.column_stack([np.sin(2 * X[:, 0]) + X[:, 1], X[:, 0] * X[:, 1]])
    return X, Y + rng.normal(0, 0.05, Y.shape)


@pytest.mark.parametrize("inference", ["laplace", "meanfield"])
def test_a_prediction_moves_with_the_targets_units(inference):
    """Targets in other units (times 1000 plus 5, and times 0.01 for the second output)
    standardise to the same numbers up to rounding, so the fit is the same and its
    prediction moves with the units: the mean by the affine map, both variances by the
    squared factor, and the interval ends with the mean."""
    X, Y = _data()
    factor, shift = np.array([1000.0, 0.01]), np.array([5.0, -3.0])
    kw = dict(hidden=(8,), inference=inference, seed=0, predict_samples=40,
              **SETTINGS[inference])
    base = BDL(**kw).fit(X, Y).predict_distribution(X[:15], levels=(0.9,))
    moved = BDL(**kw).fit(X, Y * factor + shift).predict_distribution(X[:15], levels=(0.9,))
    def off(x, y):  # in the first fit's units, per output's spread
        return np.abs(((x - shift) / factor - y) / Y.std(0)).max()

    # L-BFGS amplifies the rounding of the standardised targets: 1.5e-6 at worst over 16
    # seeds of data and fit; a wrong unit is a factor of 1000 or 0.01
    assert off(moved.mean, base.mean) < 1e-4
    for name in ("epistemic_var", "aleatoric_var"):
        np.testing.assert_allclose(getattr(moved, name) / factor ** 2, getattr(base, name),
                                   rtol=1e-4)
    for a, b in zip(moved.intervals[0.9], base.intervals[0.9]):
        assert off(a, b) < 1e-4


@pytest.mark.parametrize("inference", ["laplace", "meanfield"])
def test_a_classifiers_epistemic_variance_is_its_draws_variance_per_class(inference):
    rng = np.random.default_rng(2)
    X = rng.normal(0, 1, (90, 2))
    labels = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int) + (X[:, 1] > 1).astype(int)
    model = BDLClassifier(hidden=(6,), inference=inference, seed=1, predict_samples=30,
                          **SETTINGS[inference]).fit(X, labels)
    pred = model.predict_distribution(X[:20], return_samples=True)
    assert pred.samples.shape == (30, 20, 3)
    np.testing.assert_allclose(pred.mean, pred.samples.mean(0), rtol=1e-12)
    np.testing.assert_allclose(pred.epistemic_var, pred.samples.var(0), rtol=1e-10,
                               atol=1e-18)
    assert pred.aleatoric_var is None


def test_the_laplace_posterior_per_layer_is_the_posteriors_own_slices():
    X, Y = _data(n=40)
    model = BDL(hidden=(5, 4), inference="laplace", max_iter=40, seed=0).fit(X, Y)
    post, net = model.laplace_, model.engine_.net
    std = post.marginal_std().numpy()
    layers = model.posterior()
    assert len(layers) == 3
    for (a, b), layer, fan_in, fan_out in zip(net.layers, layers, net.sizes[:-1],
                                              net.sizes[1:]):
        weights, biases = layer["weight_mean"], layer["bias_mean"]
        assert weights.size == fan_in * fan_out and biases.size == fan_out
        np.testing.assert_array_equal(
            np.concatenate([weights.ravel(), biases.ravel()]), post.w.numpy()[a:b])
        np.testing.assert_array_equal(
            np.concatenate([layer["weight_std"].ravel(), layer["bias_std"].ravel()]),
            std[a:b])
        np.testing.assert_array_equal(layer["prior_precision"], post.precision.numpy()[a:b])


def test_a_hierarchical_mean_field_posterior_gives_each_layer_its_scale():
    X, Y = _data(n=40)
    model = BDL(hidden=(5, 4), prior="hierarchical-laplace", epochs=10, batch_size=20,
                seed=0).fit(X, Y)
    scales = model.engine_.model.prior.layer_scales()
    layers = model.posterior()
    assert len(scales) == len(layers) == 3
    assert len({round(float(s), 12) for s in scales}) == 3  # three distinct scales
    for layer, scale in zip(layers, scales):
        assert layer["prior_scale"] == pytest.approx(float(scale), rel=1e-12)
