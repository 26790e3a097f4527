import chaospy
import numpy as np
import pytest

from uqkit.inputs import RandomInputs, parse_distribution
from uqkit.presets import table3


def test_table3_matches_the_paper():
    inputs = table3()
    assert inputs.names == ("l", "b", "t", "E", "nu")
    assert np.allclose(inputs.mean()[:4], [2.0, 1.0, 0.0015, 210.0])
    assert np.allclose(inputs.std()[[0, 1, 3]], [0.05, 0.05, 10.0])
    # nu: underlying normal N(log 0.3, 0.01) -> median 0.3, std ~ 0.3 * 0.01
    nu = inputs.marginal("nu")
    assert float(nu.inv(0.5)) == pytest.approx(0.3, rel=1e-12)
    assert inputs.std()[4] == pytest.approx(0.3 * 0.01, rel=1e-3)
    text = inputs.summary()
    assert "LogNormal" in text and "Young's modulus" in text and len(text.splitlines()) == 7


def test_spec_forms():
    d1 = parse_distribution("normal(2, 0.05)")
    d2 = parse_distribution(("normal", 2, 0.05))
    assert float(d1.mom(1)) == float(d2.mom(1)) == 2.0
    assert parse_distribution(chaospy.Uniform(0, 1)).upper == 1


@pytest.mark.parametrize("spec, message", [
    ("weibul(1)", "unknown distribution 'weibul'"),
    ("normal(1, x)", "non-numeric parameter"),
    (("normal", 0, float("nan")), "not a finite number"),
    (3.0, "expected a chaospy distribution"),
    ("normal 1 2", "cannot read distribution"),
])
def test_bad_distribution_specs(spec, message):
    with pytest.raises(ValueError, match=message):
        RandomInputs.from_spec({"x": spec})


def test_bounds_are_checked():
    with pytest.raises(ValueError, match=r"input 'x'.*probability 0.5.*outside"):
        RandomInputs.from_spec({"x": "normal(0, 1)"}, bounds={"x": (0.0, None)})
    ok = RandomInputs.from_spec({"x": "uniform(1, 2)"}, bounds={"x": (0.0, 5.0)})
    with pytest.raises(ValueError, match=r"input 'x': sample value -1.0 lies outside"):
        ok.check_samples(np.array([[1.5], [-1.0]]))


def test_copula_dependence():
    base = RandomInputs.from_spec({"x": "normal(0, 1)", "y": "uniform(0, 1)"})
    dep = base.with_copula("nataf", [[1.0, 0.8], [0.8, 1.0]])
    np.testing.assert_allclose(dep.mean(), base.mean())
    assert "dependence: Nataf" in dep.summary()
    from uqkit.inputs.sampling import sample

    s = sample(dep, 20_000, seed=2)
    assert np.corrcoef(s.values.T)[0, 1] > 0.7
    with pytest.raises(ValueError, match="unknown copula 'frank'"):
        base.with_copula("frank", 2.0)
    with pytest.raises(ValueError, match="2 x 2 correlation matrix"):
        base.with_copula("nataf", np.eye(3))


def test_bad_construction():
    with pytest.raises(ValueError, match="dimension 2 but 3 names"):
        RandomInputs(["a", "b", "c"], chaospy.J(chaospy.Normal(), chaospy.Normal()))
    with pytest.raises(ValueError, match="unique"):
        RandomInputs(["a", "a"], chaospy.J(chaospy.Normal(), chaospy.Normal()))


def test_clayton_keeps_its_marginals_and_has_kendalls_tau_of_its_theta():
    """Against the copula's own definition: uniform marginals stay uniform, and Kendall's
    tau is theta / (theta + 2)."""
    from scipy import stats

    from uqkit.inputs.sampling import sample

    base = RandomInputs.from_spec({"x": "uniform(0, 1)", "y": "uniform(0, 1)"})
    v = sample(base.with_copula("clayton", 2.0), 4000, seed=0).values
    assert min(stats.kstest(v[:, j], "uniform").pvalue for j in (0, 1)) > 0.01
    assert stats.kendalltau(v[:, 0], v[:, 1])[0] == pytest.approx(0.5, abs=0.03)


@pytest.mark.parametrize("kind", ["gumbel", "joe", "Gumbel"])
def test_gumbel_and_joe_copulas_are_refused_with_the_reason(kind):
    """chaospy's Gumbel and Joe copulas drew the second marginal wrong (a normal's mean 1.02
    at theta = 1, independence; uniform marginals' KS p-value 1e-97): refused, not sampled."""
    base = RandomInputs.from_spec({"x": "normal(0, 1)", "y": "normal(0, 1)"})
    with pytest.raises(ValueError, match=rf"the {kind.lower()} copula is not available: "
                                         "chaospy's .* draws wrong marginals.*use clayton"):
        base.with_copula(kind, 2.0)


@pytest.mark.parametrize("kind, parameter, message", [
    ("nataf", [[2.0, 0.5], [0.5, 2.0]], r"has 2.0 at \[0\]\[0\]: a correlation matrix has 1 "
                                         r"on its diagonal \(was a covariance matrix given\?\)"),
    ("t", [[1.0, 0.5], [0.5, 3.0]], r"has 3.0 at \[1\]\[1\]"),
    ("nataf", [[1.0, np.nan], [np.nan, 1.0]], "non-finite entries"),
    ("nataf", [[1.0, 1.5], [1.5, 1.0]], "symmetric positive definite"),
    ("clayton", -5.0, r"theta > 0 \(0 is independence, which needs no copula\), got -5.0"),
    ("clayton", 0.0, "got 0.0"),
    ("clayton", float("nan"), "got nan"),
])
def test_bad_copula_parameters_are_named(kind, parameter, message):
    """A covariance matrix given for a correlation one ran before (its off-diagonal 0.5 taken
    as a correlation), and chaospy answered a bad theta with a bare AssertionError."""
    base = RandomInputs.from_spec({"x": "normal(0, 1)", "y": "normal(0, 1)"})
    with pytest.raises(ValueError, match=message):
        base.with_copula(kind, parameter)


@pytest.mark.parametrize("bound, message", [
    ((1.0, 0.0), r"bounds \(1.0, 0.0\) must be \(lower, upper\) with lower < upper"),
    ((float("nan"), 1.0), r"bounds must be numbers or None, got \(nan, 1.0\)"),
])
def test_bounds_in_the_wrong_order_or_nan_are_named(bound, message):
    """Reversed bounds were reported as 'probability 2 outside the physical bounds'; a NaN
    bound reached chaospy's bare AssertionError."""
    with pytest.raises(ValueError, match=message):
        RandomInputs.from_spec({"x": "uniform(0, 1)"}, bounds={"x": bound})
