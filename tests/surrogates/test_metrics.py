"""The metrics of :mod:`surrogates.metrics` against independent computations: scikit-learn's,
numerical integration, explicit loops over outputs, bins and levels (mutation testing found
the per-output axis, the interval ends, the ECE's bins and the probability checks untested:
docs/development/mutation_testing.md)."""
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from surrogates import metrics as M

RNG = np.random.default_rng(20261127)
#: Two outputs of very different scale and error, so that a metric pooled over both (an axis
#: of None for 0) is far from either output's.
Y = np.column_stack([RNG.normal(0.0, 1.0, 60), RNG.normal(500.0, 40.0, 60)])
MEAN = Y + np.column_stack([RNG.normal(0.0, 0.3, 60), RNG.normal(10.0, 30.0, 60)])
VAR = np.column_stack([np.full(60, 0.09), RNG.uniform(400.0, 1600.0, 60)])
WIDTH = np.array([2.0, 0.5])  # interval half-widths in sd: coverages apart


def _per_output(metric, *arrays, **kw):
    """``metric`` of each column alone, stacked: the truth for the (n, k) call."""
    return np.array([metric(*(a[:, j] for a in arrays), **kw) for j in range(Y.shape[1])])


@pytest.mark.parametrize("metric, arrays", [
    (M.r2, (Y, MEAN)), (M.rmse, (Y, MEAN)), (M.gaussian_nll, (Y, MEAN, VAR)),
    (M.crps_gaussian, (Y, MEAN, VAR)),
    (M.coverage, (Y, MEAN - WIDTH * np.sqrt(VAR), MEAN + WIDTH * np.sqrt(VAR)))])
def test_a_metric_of_two_outputs_is_each_outputs_own(metric, arrays):
    both = metric(*arrays)
    assert both.shape == (2,)
    np.testing.assert_allclose(both, _per_output(metric, *arrays), rtol=1e-13)
    assert abs(both[0] - both[1]) > 0.05 * abs(both).max()  # the outputs' values differ


def test_r2_and_rmse_equal_scikit_learns():
    from sklearn.metrics import mean_squared_error, r2_score

    np.testing.assert_allclose(M.r2(Y, MEAN), r2_score(Y, MEAN, multioutput="raw_values"),
                               rtol=1e-13)
    np.testing.assert_allclose(
        M.rmse(Y, MEAN), np.sqrt(mean_squared_error(Y, MEAN, multioutput="raw_values")),
        rtol=1e-13)


def test_gaussian_nll_is_scipys_mean_log_density():
    np.testing.assert_allclose(
        M.gaussian_nll(Y, MEAN, VAR),
        -stats.norm.logpdf(Y, MEAN, np.sqrt(VAR)).mean(0), rtol=1e-13)


def test_crps_is_the_integral_of_the_squared_cdf_difference_and_a_point_forecasts_error():
    """CRPS(F, y) = int (F(x) - 1{x >= y})^2 dx by quadrature for the Gaussian rows, and
    |y - m| for the point forecasts (var = 0) among them, with no warning from the zero
    variances."""
    y = np.array([0.3, -1.2, 4.0, 2.5, -0.7])
    m = np.array([0.0, 0.5, 3.0, -1.0, 2.0])
    var = np.array([1.0, 0.0, 2.25, 0.0, 0.49])

    def crps(yi, mi, vi):
        if vi == 0:
            return abs(yi - mi)
        cdf = stats.norm(mi, np.sqrt(vi)).cdf
        below = integrate.quad(lambda x: cdf(x) ** 2, -np.inf, yi)[0]
        above = integrate.quad(lambda x: (1 - cdf(x)) ** 2, yi, np.inf)[0]
        return below + above

    truth = np.mean([crps(*row) for row in zip(y, m, var)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # sqrt(0) must not be divided by
        assert M.crps_gaussian(y, m, var) == pytest.approx(truth, rel=1e-8)


def test_coverage_counts_the_ends_of_the_interval_as_inside():
    y = np.array([0.0, 1.0, 2.0, 3.0, 5.0])
    lo = np.array([0.0, 0.0, 2.0, 3.5, 0.0])  # y on the lower end; lower = upper = y
    hi = np.array([1.0, 1.0, 2.0, 4.0, 4.999])  # y on the upper end; a miss each side
    assert M.coverage(y, lo, hi) == pytest.approx(3 / 5, rel=1e-15)


def test_calibration_error_is_the_mean_gap_of_the_coverage_curve_output_by_output():
    """The coverage of each central interval by an explicit loop with scipy's interval; a y
    exactly on an interval's end is inside, as in :func:`coverage`."""
    levels = np.array([0.1, 0.5, 0.8, 0.95])
    err, cov = M.regression_calibration_error(Y, MEAN, VAR, levels=levels)
    assert cov.shape == (4, 2) and err.shape == (2,)
    for j in range(2):
        for i, level in enumerate(levels):
            lo, hi = stats.norm.interval(level, MEAN[:, j], np.sqrt(VAR[:, j]))
            assert cov[i, j] == np.mean((Y[:, j] >= lo) & (Y[:, j] <= hi))
        assert err[j] == pytest.approx(np.abs(cov[:, j] - levels).mean(), rel=1e-14)
    one_err, one_cov = M.regression_calibration_error(Y[:, 1], MEAN[:, 1], VAR[:, 1], levels)
    assert one_err == err[1] and np.array_equal(one_cov, cov[:, 1])
    from scipy import special

    on_end = special.ndtri(0.5 + levels / 2)  # |y - m| / sd equal to the quantile exactly
    _, at = M.regression_calibration_error(on_end, np.zeros(4), 1.0, levels)
    assert np.array_equal(at, [0.25, 0.5, 0.75, 1.0])  # row i on level i's end: inside


@pytest.mark.parametrize("levels", [[0.0, 0.5], [0.5, 1.0], [0.5, 1.5]])
def test_calibration_levels_must_be_inside_zero_and_one(levels):
    with pytest.raises(ValueError, match=r"levels must be probabilities in \(0, 1\)"):
        M.regression_calibration_error(np.zeros(3), np.zeros(3), 1.0, levels=levels)


def _ece_by_loop(labels, proba, bins):
    """ECE by its definition (Guo et al. 2017), bins [b/B, (b+1)/B) with 1.0 in the last:
    exact for confidences that are multiples of 1/64 and B a power of two."""
    conf, correct = proba.max(1), proba.argmax(1) == labels
    total = 0.0
    for b in range(bins):
        inside = np.minimum((conf * bins).astype(int), bins - 1) == b
        if inside.any():
            total += inside.mean() * abs(correct[inside].mean() - conf[inside].mean())
    return total


def _dyadic_proba(n, classes, rng):
    """Probabilities of ``classes`` classes that are multiples of 1/64, rows summing to 1
    exactly: half of them peaked (confidences up to 1), half near uniform (confidences
    below 1/8, in the first bins)."""
    rows = [rng.multinomial(64, rng.dirichlet(np.full(classes, 0.02 if i % 2 else 50.0)))
            for i in range(n)]
    return np.array(rows) / 64.0


@pytest.mark.parametrize("bins", [2, 4, 8])
def test_ece_equals_its_definition_in_every_bin(bins):
    proba = _dyadic_proba(400, 20, RNG)
    labels = RNG.integers(0, 20, 400)
    labels[:200] = proba[:200].argmax(1)  # half of them right, for a mixed accuracy per bin
    conf = proba.max(1)
    assert conf.min() < 1 / bins and (conf == 1.0).any()  # the first and the last bin used
    assert M.expected_calibration_error(labels, proba, bins=bins) == pytest.approx(
        _ece_by_loop(labels, proba, bins), rel=1e-13)


def test_ece_has_ten_bins_by_default():
    conf = RNG.uniform(0.5, 1.0, 2000)
    proba = np.column_stack([conf, 1 - conf])
    labels = (RNG.uniform(size=2000) > conf ** 2).astype(int)
    ten = M.expected_calibration_error(labels, proba, bins=10)
    assert M.expected_calibration_error(labels, proba) == ten
    assert ten != M.expected_calibration_error(labels, proba, bins=11)


@pytest.mark.parametrize("bins", [0, -1, 2.5, None])
def test_ece_needs_at_least_one_bin(bins):
    """bins=0 gave an ECE of 0.0 (no bin, no gap) for predictions far from calibrated."""
    proba = np.array([[0.9, 0.1], [0.8, 0.2]])
    assert M.expected_calibration_error([1, 1], proba, bins=1) == pytest.approx(0.85)
    with pytest.raises(ValueError, match=f"^bins must be an integer >= 1, got bins={bins}$"):
        M.expected_calibration_error([1, 1], proba, bins=bins)


def test_a_true_class_of_probability_zero_costs_the_clipped_27_6_nats():
    proba = np.array([[1.0, 0.0], [0.5, 0.5]])
    assert M.classification_nll([1, 0], proba) == pytest.approx(
        (-np.log(1e-12) - np.log(0.5)) / 2, rel=1e-15)


@pytest.mark.parametrize("proba, message", [
    ([[1.5, -0.5], [0.5, 0.5]], r"probabilities in \[0, 1\], got 1.5 at index \(0, 0\)"),
    ([[0.5, 0.5], [0.7, 0.7]], r"each row of proba must sum to 1 \(within 1e-05\), row 1 "
                                r"sums to 1.4"),
    ([[0.5, 0.4], [0.5, 0.5]], "row 0 sums to 0.9")])
def test_scores_instead_of_probabilities_are_refused(proba, message):
    """Logits or unnormalised scores gave a negative NLL and an ECE of confidences above 1."""
    for metric in (M.accuracy, M.classification_nll, M.expected_calibration_error):
        with pytest.raises(ValueError, match=message):
            metric([0, 1], np.array(proba))


def test_probabilities_summing_to_one_within_rounding_are_taken():
    proba = np.array([[0.7, 0.3 + 5e-6], [0.2, 0.8]], dtype=np.float32)
    assert M.accuracy([0, 1], proba) == 1.0


@pytest.mark.parametrize("labels", [np.array([0.5, 1, 0, 1, 0, 1]),
                                    np.zeros((2, 3), int), np.zeros((6, 1, 1), int)])
def test_labels_that_are_not_one_class_index_per_row_are_refused(labels):
    """1.5 was read as class 1; a (2, 3) or (6, 1, 1) array as six labels."""
    with pytest.raises(ValueError, match="labels must be"):
        M.accuracy(labels, np.full((6, 2), 0.5))


@pytest.mark.parametrize("call, message", [
    (lambda: M.gaussian_nll(np.zeros(3), np.zeros(4), 1.0),
     r"shapes differ: y \(3,\) vs mean \(4,\)"),
    (lambda: M.crps_gaussian(np.zeros(3), np.zeros(4), 1.0), r"vs mean \(4,\)"),
    (lambda: M.regression_calibration_error(np.zeros(3), np.zeros(4), 1.0), r"vs mean \(4,\)"),
    (lambda: M.gaussian_nll(np.zeros(3), np.zeros(3), np.ones(2)),
     r"var of shape \(2,\) does not match y of shape \(3,\)"),
    (lambda: M.regression_calibration_error(np.zeros(3), np.zeros(3), 1.0, [0.5, np.nan]),
     "levels holds 1 non-finite"),
    (lambda: M.accuracy([0], np.array([[np.nan, 1.0]])), "proba holds 1 non-finite"),
    (lambda: M.accuracy([0], np.array([0.5, 0.5])), r"proba must be \(n, classes\), got shape"),
    (lambda: M.rmse([np.nan], [0.0]), "drop failed runs' rows first$"),
    (lambda: M.r2(np.ones(3), np.zeros(3)), "^y is constant: R\\^2 is undefined$")])
def test_messages_name_the_bad_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_constant_output_warns_at_the_callers_line_and_nowhere_else():
    """One warning, naming the constant outputs, from this file; no division warning from
    an output whose y is constant (1: predicted exactly, 0/0; 2: not, x/0)."""
    y = np.column_stack([np.arange(4.0), np.ones(4), np.ones(4)])
    pred = np.column_stack([np.arange(4.0) + 0.1, np.ones(4), np.zeros(4)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = M.r2(y, pred)
    assert [str(w.message) for w in caught] == [
        "y is constant in output(s) [1, 2]: their R^2 is undefined (NaN)"]
    if not hasattr(M.r2, "__wrapped__"):  # mutmut's trampoline adds a frame
        assert caught[0].filename == __file__
    assert values[0] == pytest.approx(1 - 0.04 / 5) and np.isnan(values[1:]).all()


@pytest.mark.parametrize("y, message", [
    (1.0, r"^y must be observations, \(n,\) or \(n, k\), got the single number 1.0$"),
    (np.zeros(0), r"^y holds no observations \(shape \(0,\)\)"),
    (np.zeros((0, 2)), r"^y holds no observations \(shape \(0, 2\)\)")])
@pytest.mark.parametrize("metric", [
    lambda y: M.r2(y, y), lambda y: M.rmse(y, y), lambda y: M.gaussian_nll(y, y, 1.0),
    lambda y: M.crps_gaussian(y, y, 1.0), lambda y: M.coverage(y, y, y),
    lambda y: M.regression_calibration_error(y, y, 1.0)])
def test_a_single_number_or_no_row_is_refused_by_name(metric, y, message):
    """A single number gave numpy's AxisError (axis 0 out of bounds), and no rows a NaN with
    a RuntimeWarning (rmse, coverage)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=message):
            metric(y)
