import numpy as np
import pytest
from scipy import stats

from uqkit import statistics as S


def test_describe_normal_within_its_errors():
    y = np.random.default_rng(1).normal(3.0, 2.0, 200_000)
    d = S.describe(y)
    assert abs(d["mean"] - 3.0) < 4 * d["mean_se"]
    assert abs(d["std"] - 2.0) < 4 * d["std_se"]
    assert abs(d["skewness"]) < 4 * d["skewness_se"]
    assert abs(d["kurtosis"]) < 4 * d["kurtosis_se"]
    assert d["std_se"] == pytest.approx(2.0 / np.sqrt(2 * 200_000), rel=0.05)
    lo, hi = d["quantile_ci"]["0.99"]
    assert lo < 3.0 + 2.0 * 2.3263478740 < hi


def test_distances():
    rng = np.random.default_rng(2)
    a = rng.normal(0, 1, 100_000)
    b = rng.normal(0.5, 1, 100_000)
    assert S.wasserstein(a, b) == pytest.approx(0.5, abs=0.02)
    # KS of two normals shifted by 0.5: 2 Phi(0.25) - 1
    assert S.ks_statistic(a, b) == pytest.approx(0.1974, abs=0.01)
    c = S.compare(b, a)
    assert c["mean_rel_error"] == pytest.approx((b.mean() - a.mean()) / abs(a.mean()),
                                                rel=1e-12)
    assert abs(b.mean() - a.mean() - 0.5) < 0.02  # and so the relative error is huge here
    assert abs(c["std_rel_error"]) < 0.02  # same std
    assert c["q0.5_rel_error"] == pytest.approx(
        (np.quantile(b, 0.5) - np.quantile(a, 0.5)) / abs(np.quantile(a, 0.5)), rel=1e-12)
    assert c["truth_mean_se"] == pytest.approx(1 / np.sqrt(1e5), rel=0.05)


def test_exceedance_interval_covers_truth():
    y = np.random.default_rng(3).normal(0, 1, 50_000)
    p, (lo, hi) = S.exceedance_probability(y, 2.0)
    assert lo < 0.02275 < hi and lo < p < hi


def test_ecdf_kde():
    y = np.random.default_rng(4).normal(0, 1, 20_000)
    x, F = S.ecdf(y)
    assert F[-1] == 1.0 and np.all(np.diff(x) >= 0)
    grid, dens = S.kde(y, np.array([0.0]))
    assert dens[0] == pytest.approx(1 / np.sqrt(2 * np.pi), rel=0.03)


@pytest.mark.parametrize("kind", ["normal", "bimodal", "student-t"])
def test_binned_kde_matches_the_direct_sum(kind):
    """The FFT-binned KDE against scipy's direct sum with the same (Scott) bandwidth, on a
    grid wider than the sample and on one inside it."""
    from scipy import stats

    rng = np.random.default_rng(1)
    y = {"normal": rng.normal(size=3000),
         "bimodal": np.concatenate([rng.normal(-3, 0.2, 1000), rng.gamma(2, 1, 2000)]),
         "student-t": rng.standard_t(3, 5000)}[kind]
    for grid in (np.linspace(y.min() - 1, y.max() + 1, 500), np.linspace(-1, 1, 7)):
        ref = stats.gaussian_kde(y)(grid)
        _, dens = S.kde(y, grid)
        assert np.abs(dens - ref).max() <= 1e-4 * ref.max()


def test_kde_of_a_constant_sample_is_refused():
    with pytest.raises(ValueError, match="not constant.*2.5"):
        S.kde(np.full(10, 2.5))


def test_non_finite_values_are_refused():
    with pytest.raises(ValueError, match="1 non-finite values"):
        S.describe([1.0, np.nan, 2.0])


def test_quantile_interval_is_nan_beyond_the_sample():
    from uqkit.statistics import quantile_interval

    y = np.sort(np.random.default_rng(0).uniform(size=200))
    lo, hi = quantile_interval(y, 0.99)
    assert np.isnan(hi) and lo < 0.99
    lo, hi = quantile_interval(y, 0.5)
    assert lo < np.median(y) < hi


# -- every output of the module against an independent computation (mutation testing found
# these unchecked) ----------------------------------------------------------------------------

def _sample(seed=0, n=5000):
    return np.random.default_rng(seed).gamma(3.0, 2.0, n)  # skewed: the moments differ


def test_describe_reports_each_statistic_by_its_definition():
    y = _sample()
    d = S.describe(y, quantiles=(0.1, 0.5), level=0.9, n_boot=60, seed=3)
    n, s = len(y), y.std(ddof=1)
    kurt = stats.kurtosis(y)
    assert d["n"] == n and d["mean"] == pytest.approx(y.mean(), rel=1e-14)
    assert d["std"] == pytest.approx(np.sqrt(np.sum((y - y.mean()) ** 2) / (n - 1)), rel=1e-12)
    assert d["mean_se"] == pytest.approx(s / np.sqrt(n), rel=1e-12)
    assert d["std_se"] == pytest.approx(s * np.sqrt((kurt + 2) / (4 * n)), rel=1e-12)
    assert d["skewness"] == pytest.approx(stats.skew(y)) and d["kurtosis"] == pytest.approx(kurt)
    # the bootstrap standard errors: their own seeds (seed, seed + 1), the requested resamples
    assert d["skewness_se"] == S.bootstrap_se(y, stats.skew, 60, 3)
    assert d["kurtosis_se"] == S.bootstrap_se(y, stats.kurtosis, 60, 4)
    assert d["quantiles"] == {"0.1": np.quantile(y, 0.1), "0.5": np.quantile(y, 0.5)}
    assert d["quantile_ci"]["0.1"] == S.quantile_interval(np.sort(y), 0.1, 0.9)
    assert S.describe(y, n_boot=20)["skewness_se"] == S.bootstrap_se(y, stats.skew, 20, 0)


def test_a_light_tailed_sample_keeps_a_zero_floor_on_the_std_error():
    # excess kurtosis -2 (two points): var(s) from the delta method is 0, not negative
    y = np.tile([0.0, 1.0], 500)
    assert S.describe(y, n_boot=20)["std_se"] == 0.0


def test_quantile_interval_by_exact_binomial_order_statistics():
    """Each bound misses the q-quantile with probability at most (1 - level) / 2, the
    binomial count of points below it, and the next order statistic inwards would miss
    more. The normal approximation used before missed 7.9% a side at n = 100, q = 0.01."""
    y, n = np.arange(100.0), 100  # the i-th order statistic (0-based) is i
    for q, level in ((0.5, 0.95), (0.2, 0.8), (0.05, 0.95), (0.01, 0.95), (0.99, 0.9),
                     (0.3, 0.99)):
        a = (1 - level) / 2
        lo, hi = S.quantile_interval(y, q, level)
        if np.isnan(lo):  # even the minimum misses more
            assert stats.binom.cdf(0, n, q) > a
        else:
            j = int(lo) + 1  # Y(j) lies above the quantile when at most j - 1 points are below
            assert stats.binom.cdf(j - 1, n, q) <= a < stats.binom.cdf(j, n, q)
        if np.isnan(hi):  # even the maximum misses more
            assert stats.binom.sf(n - 1, n, q) > a
        else:
            j = int(hi) + 1  # Y(j) lies below the quantile when at least j points are below
            assert stats.binom.sf(j - 1, n, q) <= a < stats.binom.sf(j - 2, n, q)
    assert S.quantile_interval(y, 0.5) == (39.0, 60.0)
    assert np.isnan(S.quantile_interval(y, 0.02)[0]) and np.isnan(S.quantile_interval(y, 0.98)[1])
    assert S.quantile_interval(y, 0.95)[1] == 99.0


def test_quantile_interval_refuses_failed_runs():
    # np.sort puts NaN last: counted as values they moved the median's interval from
    # (40, 59) to (49, 70)
    with pytest.raises(ValueError, match="3 non-finite values .* index 100"):
        S.quantile_interval(np.sort(np.r_[np.arange(100.0), [np.nan] * 3]), 0.5)


def test_quantile_interval_covers_a_low_quantile_of_a_small_sample():
    # n q = 1: the upper bound of the 0.01 quantile of 100 uniforms missed in 7.9% of samples
    rng = np.random.default_rng(3)
    misses = [S.quantile_interval(np.sort(rng.uniform(size=100)), 0.01)[1] < 0.01
              for _ in range(4000)]
    assert np.mean(misses) < 0.025 + 3 * np.sqrt(0.025 * 0.975 / 4000)


def test_quantile_interval_covers_the_true_quantile_at_its_level():
    # 2000 samples of 200 uniforms: the 90% interval of the 0.3 quantile covers 0.3 in about
    # 90% of them (binomial sd 0.7%)
    rng = np.random.default_rng(0)
    hits = [lo <= 0.3 <= hi for lo, hi in
            (S.quantile_interval(np.sort(rng.uniform(size=200)), 0.3, 0.9) for _ in range(2000))]
    assert 0.87 < np.mean(hits) < 0.95


def test_bootstrap_se_of_the_mean_is_the_standard_error_even_when_subsampled():
    y = np.random.default_rng(1).normal(0.0, 2.0, 20_000)
    exact = y.std(ddof=1) / np.sqrt(len(y))
    assert S.bootstrap_se(y, np.mean, 400, seed=0) == pytest.approx(exact, rel=0.1)
    # resamples of 2000 rows, rescaled by sqrt(2000 / 20000) to the full sample's error
    assert S.bootstrap_se(y, np.mean, 400, seed=0, max_points=2000) == pytest.approx(exact,
                                                                                      rel=0.1)
    # the requested number of resamples, from the seed: equal to an explicit loop
    rng = np.random.default_rng(7)
    vals = [np.mean(y[rng.integers(0, len(y), len(y))]) for _ in range(30)]
    assert S.bootstrap_se(y, np.mean, 30, seed=7) == pytest.approx(np.std(vals, ddof=1),
                                                                    rel=1e-12)


def test_compare_by_definition():
    a, b = _sample(1, 3000) + 0.5, _sample(2, 4000)
    out = S.compare(a, b, quantiles=(0.25, 0.9))
    assert out["ks"] == stats.ks_2samp(a, b).statistic
    assert out["wasserstein"] == pytest.approx(stats.wasserstein_distance(a, b), rel=1e-12)
    assert out["mean_rel_error"] == pytest.approx((a.mean() - b.mean()) / abs(b.mean()))
    sa, sb = a.std(ddof=1), b.std(ddof=1)
    assert out["std_rel_error"] == pytest.approx((sa - sb) / sb, rel=1e-12)
    assert out["truth_mean_se"] == pytest.approx(sb / np.sqrt(4000), rel=1e-12)
    assert out["truth_std_se"] == pytest.approx(
        sb * np.sqrt((stats.kurtosis(b) + 2) / (4 * 4000)), rel=1e-12)
    for q in (0.25, 0.9):
        qa, qb = np.quantile(a, q), np.quantile(b, q)
        assert out[f"q{q}_rel_error"] == pytest.approx((qa - qb) / abs(qb), rel=1e-12)


def test_compare_with_a_zero_reference_has_no_relative_error():
    """A relative error of a zero reference is undefined: None, not the absolute difference
    under the relative error's name (an error of 3.0 read as 300%)."""
    a = np.array([1.0, 2.0, 3.0, 6.0])
    b = np.array([-1.0, 0.0, 0.0, 1.0])  # mean 0 and median 0: relative errors undefined
    out = S.compare(a, b, quantiles=(0.5, 1.0))
    assert out["mean_rel_error"] is None and out["q0.5_rel_error"] is None
    assert out["q1.0_rel_error"] == pytest.approx((6.0 - 1.0) / 1.0)
    assert out["std_rel_error"] == pytest.approx((a.std(ddof=1) - b.std(ddof=1)) / b.std(ddof=1))
    same = S.compare(b, np.array([0, 0, 0, 1e-300]))  # a std that underflows to 0
    assert same["std_rel_error"] is None
    # a light-tailed reference (excess kurtosis -2): its std error floors at 0, not below
    assert S.compare(a, np.tile([0.0, 1.0], 50))["truth_std_se"] == 0.0


@pytest.mark.parametrize("call, name", [(lambda y: S.compare(y, np.ones(5)), "sample"),
                                        (lambda y: S.compare(np.ones(5), y), "truth"),
                                        (lambda y: S.ks_statistic(y, np.ones(5)), "a"),
                                        (lambda y: S.ks_statistic(np.ones(5), y), "b"),
                                        (lambda y: S.wasserstein(y, np.ones(5)), "a"),
                                        (lambda y: S.wasserstein(np.ones(5), y), "b"),
                                        (lambda y: S.describe(y), "y")])
def test_bad_samples_are_named(call, name):
    with pytest.raises(ValueError, match=rf"^{name} holds 1 non-finite values \(first at "
                                         r"index 2\)"):
        call(np.array([1.0, 2.0, np.nan, 4.0]))
    with pytest.raises(ValueError, match=rf"^{name} needs at least 2 values, got 1$"):
        call(np.array([1.0]))
    call(np.array([1.0, 3.0]))  # two values are enough


def test_ks_and_wasserstein_by_definition():
    a, b = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.5, 1.5, 2.5, 3.5, 10.0])
    grid = np.sort(np.concatenate([a, b]))
    fa = np.searchsorted(np.sort(a), grid, side="right") / 4
    fb = np.searchsorted(np.sort(b), grid, side="right") / 5
    assert S.ks_statistic(a, b) == pytest.approx(np.max(np.abs(fa - fb)))
    # W1 = the integral of |F_a - F_b|
    xs = np.linspace(-1, 11, 120_001)
    ca = np.searchsorted(np.sort(a), xs, side="right") / 4
    cb = np.searchsorted(np.sort(b), xs, side="right") / 5
    assert S.wasserstein(a, b) == pytest.approx(np.sum(np.abs(ca - cb)) * (xs[1] - xs[0]),
                                                rel=1e-3)


def test_ecdf_steps_by_one_over_n():
    y, F = S.ecdf(np.array([3.0, 1.0, 2.0, 2.0]))
    assert y.tolist() == [1.0, 2.0, 2.0, 3.0] and F.tolist() == [0.25, 0.5, 0.75, 1.0]


def test_exceedance_is_strict_and_its_interval_is_clopper_pearson():
    from uqkit.reliability import clopper_pearson

    y = np.array([0.0, 1.0, 1.0, 2.0, 3.0])
    p, (lo, hi) = S.exceedance_probability(y, 1.0, level=0.9)  # y > 1: two of five
    assert p == 0.4
    assert (lo, hi) == pytest.approx(clopper_pearson(2, 5, 0.9), rel=1e-9)
    assert S.exceedance_probability(y, 1.0)[1] == pytest.approx(clopper_pearson(2, 5), rel=1e-9)


def test_kde_default_grid_spans_the_sample_and_a_tenth_beyond():
    y = _sample(3, 2000)
    grid, dens = S.kde(y)
    pad = 0.1 * (y.max() - y.min())
    np.testing.assert_allclose(grid, np.linspace(y.min() - pad, y.max() + pad, 256))
    assert len(S.kde(y, n_grid=50)[0]) == 50
    # and the density there is scipy's Gaussian KDE (Scott's bandwidth), within the binning
    ref = stats.gaussian_kde(y)(grid)
    assert np.max(np.abs(dens - ref)) < 1e-3 * ref.max()


def test_kde_refuses_a_range_too_wide_for_its_bandwidth():
    # a bandwidth of 2.5e-7 against a grid point 1e6 away: 2.6e14 mesh points
    y = 1e-6 * np.random.default_rng(0).normal(size=1000)
    with pytest.raises(ValueError, match=r"^kde: the sample and grid span 1e\+06, .* too wide a "
                                         r"range"):
        S.kde(y, np.array([1e6]))
    with pytest.raises(ValueError, match=r"kde needs a sample that is not constant \(all 10 "
                                         r"values are 2.5\)"):
        S.kde(np.full(10, 2.5))


def test_a_sample_of_several_columns_is_refused_not_pooled():
    """describe(result.outputs) of a 2-output run must not pool the two outputs into one
    sample (n doubled, a mean between the two)."""
    y = np.column_stack([np.arange(10.0), 100 + np.arange(10.0)])
    for call in (S.describe, S.ecdf, S.kde, lambda v: S.exceedance_probability(v, 1.0)):
        with pytest.raises(ValueError, match=r"one sample \(1-D\), got shape \(10, 2\)"):
            call(y)
    # a single column in any orientation is one sample
    assert S.describe(y[:, :1])["n"] == S.describe(y[:, 0][None, :])["n"] == 10


@pytest.mark.parametrize("call, message", [
    (lambda y: S.describe(y, level=0), "level must be a confidence level between 0 and 1, got 0"),
    (lambda y: S.describe(y, level=2), "got 2"),
    (lambda y: S.describe(y, n_boot=0), "n_boot must be an integer >= 2, got n_boot=0"),
    (lambda y: S.describe(y, n_boot=-1), "got n_boot=-1"),
    (lambda y: S.describe(y, quantiles=(0.5, 1.5)), r"quantiles must lie in \[0, 1\], got \[1.5\]"),
    (lambda y: S.kde(y, bins_per_bandwidth=0),
     "bins_per_bandwidth must be a finite number >= 1, got 0"),
    (lambda y: S.kde(y, n_grid=0), "n_grid must be an integer >= 2, got n_grid=0"),
    (lambda y: S.kde(y, grid=[0.0, np.nan, 1.0]), "1 non-finite values"),
    (lambda y: S.kde(y, grid=[]), "1-D array of finite abscissae, got shape \\(0,\\)"),
    (lambda y: S.exceedance_probability(y, float("nan")), "threshold must be a number, got nan"),
    (lambda y: S.exceedance_probability(y, 0.0, level=1.0), "got 1.0"),
])
def test_bad_options_are_refused_by_name_never_a_nan_result(call, message):
    """Each of these returned NaN (densities, standard errors) or a wrong probability (a NaN
    threshold: P = 0) before."""
    y = np.random.default_rng(0).normal(size=200)
    with pytest.raises(ValueError, match=message):
        call(y)


def test_numbers_of_any_numeric_type_are_taken():
    """A NumPy 0-d or one-element array and a Fraction are numbers too (refused for a while
    by a first version of the checks above; a review found it)."""
    from fractions import Fraction

    y = np.linspace(0.0, 1.0, 101)
    p = S.exceedance_probability(y, 0.5)
    for threshold in (np.array(0.5), np.array([0.5]), Fraction(1, 2), np.float32(0.5)):
        assert S.exceedance_probability(y, threshold) == p
    assert repr(S.describe(y, level=np.array(0.9))) == repr(S.describe(y, level=0.9))
    for bad in ("a", "0.5", True, None):
        with pytest.raises(ValueError, match=f"threshold must be a number, got {bad!r}"):
            S.exceedance_probability(y, bad)
    with pytest.raises(ValueError, match="level must be a number, got '0.9'"):
        S.describe(y, level="0.9")


# -- the audit's edge cases: tiny, constant and q = 0 --------------------------------------------

def test_quantile_interval_of_the_minimum_is_bounded_by_the_sample_minimum():
    """q = 0: the upper index was -1, which wrapped round to the sample's maximum."""
    from uqkit.statistics import quantile_interval

    y = np.arange(1.0, 11.0)
    lo, hi = quantile_interval(y, 0.0)
    assert np.isnan(lo) and hi == 1.0
    lo, hi = quantile_interval(y, 1.0)  # the maximum bounds the 1-quantile from below only
    assert lo == 10.0 and np.isnan(hi)


@pytest.mark.parametrize("args, message", [
    ((np.arange(5.0), 50), r"q must be a probability in \[0, 1\], got 50.0"),
    ((np.arange(5.0), -0.1), r"q must be a probability in \[0, 1\]"),
    ((np.arange(5.0), 0.5, 95), "level must be a confidence level between 0 and 1, got 95"),
    ((np.array([3.0, 1.0, 2.0]), 0.5), r"y_sorted must be sorted ascending"),
])
def test_quantile_interval_checks_its_arguments(args, message):
    from uqkit.statistics import quantile_interval

    with pytest.raises(ValueError, match=message):
        quantile_interval(*args)


def test_describe_of_a_constant_or_tiny_sample_says_so():
    """A constant sample: its skewness and kurtosis are undefined, said so in a warning (its
    std and standard errors are 0); a tiny one warns that its standard errors are rough,
    and its bootstrap errors leave out the resamples of one repeated value (they were NaN)."""
    from uqkit.statistics import compare, describe

    with pytest.warns(UserWarning, match="every value is 2.0: skewness and kurtosis"):
        d = describe(np.full(20, 2.0))
    assert d["std"] == 0 and d["std_se"] == 0 and d["mean_se"] == 0
    assert np.isnan(d["skewness"]) and np.isnan(d["kurtosis_se"])
    with pytest.warns(UserWarning, match="only 4 values: the standard errors"):
        d = describe([0.1, 0.7, 0.3, 0.9])
    assert np.isfinite(d["skewness_se"]) and np.isfinite(d["kurtosis_se"])
    assert compare(np.arange(5.0), np.full(5, 1.0))["truth_std_se"] == 0.0


def test_describe_takes_one_quantile_and_an_unseeded_bootstrap():
    """quantiles=0.5 was "not iterable" and seed=None "None + 1": TypeErrors."""
    y = np.random.default_rng(0).normal(size=400)
    one = S.describe(y, quantiles=0.5, seed=None)
    assert one["quantiles"] == {"0.5": pytest.approx(np.median(y))}
    assert np.isfinite(one["kurtosis_se"]) and np.isfinite(one["skewness_se"])
    with pytest.raises(ValueError, match=r"seed must be an integer >= 0, got seed=-1"):
        S.describe(y, seed=-1)


def test_kde_refuses_an_infinite_mesh():
    with pytest.raises(ValueError, match=r"bins_per_bandwidth must be a finite number >= 1, "
                                         r"got inf"):
        S.kde(np.random.default_rng(0).normal(size=50), bins_per_bandwidth=np.inf)
