import numpy as np
import pytest

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
