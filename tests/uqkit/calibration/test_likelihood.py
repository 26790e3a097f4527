"""The Gaussian likelihood of repeated measurements (:mod:`uqkit.calibration.likelihood`)
against scipy's multivariate normal of the stacked measurements."""
import numpy as np
import pytest
from scipy import stats

from uqkit.calibration.likelihood import gaussian_log_likelihood

Y = np.array([[1.0, 2.0], [1.3, 1.7], [0.8, 2.2]])  # m = 3 measurements of k = 2 outputs


def stacked(f, noise_var, model_var):
    """log N(vec(Y); 1 x f, noise I + model_var shared by the m measurements) per output."""
    m = len(Y)
    return sum(stats.multivariate_normal(np.full(m, f[c]), noise_var[c] * np.eye(m)
                                         + model_var[c] * np.ones((m, m))).logpdf(Y[:, c])
               for c in range(Y.shape[1]))


def test_matches_the_stacked_multivariate_normal():
    F = np.array([[1.1, 1.9], [0.5, 3.0]])
    noise, model = np.array([0.04, 0.09]), np.array([[0.01, 0.2], [0.0, 0.05]])
    ll = gaussian_log_likelihood(Y, F, noise, model)
    np.testing.assert_allclose(ll, [stacked(F[i], noise, model[i]) for i in range(2)],
                               rtol=1e-12)
    ll0 = gaussian_log_likelihood(Y, F, noise)
    np.testing.assert_allclose(ll0, [stacked(F[i], noise, np.zeros(2)) for i in range(2)],
                               rtol=1e-12)


def test_a_failed_run_has_zero_likelihood_never_infinite_likelihood():
    """A NaN output (a failed run) or an infinite one must weigh nothing: -inf, not NaN and
    not +inf (which would make it the whole posterior)."""
    F = np.array([[1.1, np.nan], [np.inf, 2.0], [1.0, 2.0]])
    ll = gaussian_log_likelihood(Y, F, np.array([0.04, 0.09]))
    assert ll[0] == -np.inf and ll[1] == -np.inf and np.isfinite(ll[2])


def test_one_measurement_as_a_vector_is_one_measurement_of_k_outputs():
    """Y = [1, 2] was read as m = 2 measurements of one output: -76.47 for 1.767."""
    import pytest

    expected = stats.norm([1.1, 1.9], 0.1).logpdf([1.0, 2.0]).sum()
    for Y, F in (([1.0, 2.0], [[1.1, 1.9]]), (np.array([1.0, 2.0]), [1.1, 1.9])):
        assert gaussian_log_likelihood(Y, F, np.array([0.01]))[0] == \
            pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match=r"got Y \(1, 3\) and F \(1, 2\)"):
        gaussian_log_likelihood([1.0, 2.0, 3.0], [[1.0, 2.0]], 0.01)


def test_a_vector_of_measurements_of_one_output_is_m_measurements():
    expected = stats.norm(1.5, 0.1).logpdf([1.6, 1.4]).sum()
    assert gaussian_log_likelihood(np.array([1.6, 1.4]), [[1.5]], 0.01)[0] == \
        __import__("pytest").approx(expected, rel=1e-12)


@pytest.mark.parametrize("kw, message", [
    (dict(Y=np.array([[1.0, np.nan]])), "Y holds 1 non-finite measurement(s), the first nan"),
    (dict(noise_var=np.array([0.04, 0.0])), "noise_var must be > 0 and finite, got 0.0"),
    (dict(noise_var=np.array([-0.04, 0.09])), "noise_var must be > 0 and finite, got -0.04"),
    (dict(model_var=np.array([[0.01, -0.005]])), "model_var must be >= 0 (a variance), got "
                                                 "-0.005"),
])
def test_bad_values_are_refused_by_name(kw, message):
    """Each gave every run -inf (a NaN measurement, a zero or negative noise), or a finite
    wrong value (a negative model variance: 3.46 for 2.77), without a word."""
    import re

    args = dict(Y=Y, F=np.array([[1.1, 1.9]]), noise_var=np.array([0.04, 0.09]),
                model_var=None)
    args.update(kw)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        gaussian_log_likelihood(**args)
