"""Quantiles of the predictive Gaussian mixture against a root of its CDF."""
import numpy as np
import pytest
from scipy import optimize, special

from surrogates.prediction import Prediction, check_levels, mixture_interval, mixture_quantile


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


def test_the_start_is_the_moment_matched_gaussians_quantile_exact_for_one_component():
    """With no iteration the answer is the start: the quantile of the Gaussian with the
    mixture's mean and variance (samples' variance plus the noise's), per position; exact
    for a one-component mixture (a wrong start costs steps, not the answer)."""
    rng = np.random.default_rng(3)
    centres = rng.normal(0, 4, (1, 6, 2))
    noise = np.array([0.3, 1.7])
    for p in (0.01, 0.5, 0.975):
        np.testing.assert_allclose(mixture_quantile(centres, noise, p, iterations=0),
                                   centres[0] + special.ndtri(p) * noise, rtol=1e-13)
    two = rng.normal(0, 1, (40, 5, 2))
    start = two.mean(0) + special.ndtri(0.9) * np.sqrt(two.var(0) + noise ** 2)
    np.testing.assert_allclose(mixture_quantile(two, noise, 0.9, iterations=0), start,
                               rtol=1e-13)


class _CountingSpecial:
    """scipy.special with its ndtr counted: the positions each iteration evaluates."""

    def __init__(self):
        self.evaluated = []

    def ndtr(self, z):
        self.evaluated.append(z.shape[-1])
        return special.ndtr(z)

    ndtri = staticmethod(special.ndtri)


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_positions_stop_after_a_few_newton_steps_and_only_the_rest_iterate(monkeypatch,
                                                                          scale):
    """The docstring's promise: most positions stop after 3-5 Newton steps, and later steps
    evaluate the positions still iterating only. 1000 mixtures whose noise is comparable to
    their samples' spread (a BDL's predictive), in units from 1e-6 to 1e6 (the tolerance is
    relative to the bracket): 7 iterations, 4064 evaluations in all when measured; a step
    that never stops, a wrong density (a linearly converging Newton) or a tolerance far too
    tight costs at least twice that, and one far too loose misses the root."""
    import surrogates.prediction as prediction

    rng = np.random.default_rng(0)
    samples = scale * (rng.normal(0, 1, (200, 1000, 1)) * rng.uniform(0.1, 2, (1, 1000, 1))
                       + rng.normal(0, 3, (1, 1000, 1)))
    counting = _CountingSpecial()
    monkeypatch.setattr(prediction, "special", counting)
    q = mixture_quantile(samples, np.array([0.5 * scale]), 0.975)
    monkeypatch.undo()
    cdf = special.ndtr((q[None] - samples) / (0.5 * scale)).mean(0)
    assert np.abs(cdf - 0.975).max() < 1e-10
    assert len(counting.evaluated) <= 8 and counting.evaluated[0] == 1000
    assert sum(counting.evaluated) <= 5 * 1000
    assert counting.evaluated[-1] < 100  # the last steps are those of a few positions


@pytest.mark.parametrize("a, p", [(1000.0, 0.975), (1000.0, 0.5), (38.2, 0.975)])
def test_far_starts_raise_no_floating_point_error_and_find_the_root(a, p):
    """Two far modes with a narrow noise: the start lies where the density underflows to
    0 (a division by zero), or where the CDF is exactly p there too (0 / 0), or where it is
    subnormal (an overflow); each is a bisection, not a warning or an error, even where
    the caller has numpy raise them."""
    centres = np.array([-a, a])[:, None, None]
    noise = np.array([1e-3 if a > 100 else 1.0])
    with np.errstate(divide="raise", invalid="raise", over="raise"):
        q = float(mixture_quantile(centres, noise, p)[0, 0])
    cdf = special.ndtr((q - centres.ravel()) / noise[0]).mean()
    assert cdf == pytest.approx(p, abs=1e-9)


def test_levels_are_a_flat_tuple_of_probabilities_and_the_refusal_names_the_level():
    assert check_levels(0.9) == (0.9,) and check_levels(np.array([0.5, 0.95])) == (0.5, 0.95)
    with pytest.raises(ValueError, match=r"probabilities in \(0, 1\), got 'x'"):
        check_levels("x")
    with pytest.raises(ValueError, match=r"e\.g\. \(0\.9, 0\.95\), got 95\.0"):
        check_levels([0.9, 95])
    for nested in ([[0.9, 0.95]], [[0.9], [0.95]], [[0.9]]):  # refused on every NumPy
        with pytest.raises(ValueError, match=r"e\.g\. \(0\.9, 0\.95\), got \[\["):
            check_levels(nested)


def _prediction(samples=True):
    mean, var = np.array([[1.0, -2.0]]), np.array([[0.25, 1.0]])
    return Prediction(mean, var, var * 2, samples=mean + np.array([[[0.5, -1.0]]])
                      if samples else None,
                      intervals={0.9: (mean - 1.0, mean + 1.0)})


def test_a_prediction_is_its_mean_as_an_array():
    pred = _prediction()
    np.testing.assert_array_equal(np.asarray(pred), [[1.0, -2.0]])
    as32 = np.asarray(pred, dtype=np.float32)
    assert as32.dtype == np.float32 and as32.tolist() == [[1.0, -2.0]]


def test_rescaled_keeps_no_samples_where_there_were_none_and_refuses_a_zero_scale():
    pred = _prediction(samples=False)
    shrunk = pred.rescaled([0.25, 0.5])  # scales below 1 narrow it
    assert shrunk.samples is None
    np.testing.assert_allclose(shrunk.total_var, [[0.1875, 1.5]])
    np.testing.assert_allclose(shrunk.intervals[0.9][1], [[1.5, -2.0 + np.sqrt(0.5)]])
    with pytest.raises(ValueError, match=r"scale must be finite and > 0, got scale=0\.0"):
        pred.rescaled(0.0)
    classes = Prediction(pred.mean, pred.epistemic_var)
    with pytest.raises(ValueError) as info:
        classes.rescaled(2.0)
    assert str(info.value) == "rescaled() is for regression predictions (with a noise variance)"
