import chaospy
import numpy as np
import pytest

from uqkit.inputs import RandomInputs, parse_distribution, sample
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
    ("nataf", [[1.0, 0.5], [0.5, 3.0]], r"has 3.0 at \[1\]\[1\]"),
    ("nataf", [[1.0, np.nan], [np.nan, 1.0]], "non-finite entries"),
    ("nataf", [[1.0, 1.5], [1.5, 1.0]], "symmetric positive definite"),
    ("clayton", -5.0, r"theta > 0 \(0 is independence, which needs no copula\), got -5.0"),
    ("clayton", 0.0, "got 0.0"),
    ("clayton", float("nan"), "got nan"),
    ("clayton", "x", "needs a number theta > 0 .* got 'x'"),
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


# -- the audit's silent wrong numbers in the inputs ---------------------------------------------

def test_the_t_copula_is_refused_it_drew_wrong_marginals():
    """chaospy's TCopula applies a Cholesky factor to independent t variables: at correlation
    0.8 the second of two normal(0, 1) inputs had std 1.019 and P(x > 3) a third or more
    low."""
    base = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})
    with pytest.raises(ValueError, match="t copula is not available: .* use nataf"):
        base.with_copula("t", [[1, 0.8], [0.8, 1]])


def test_a_second_copula_replaces_the_first_rather_than_stacking():
    """nataf on nataf at 0.5 drew a correlation of 0.78 and a std of 1.2 for 1."""
    from scipy import stats

    R = [[1, 0.5], [0.5, 1]]
    base = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})
    twice = base.with_copula("clayton", 2.0).with_copula("nataf", R)
    X = sample(twice, 100_000, seed=0).values
    assert abs(np.corrcoef(X.T)[0, 1] - 0.5) < 0.01 and abs(X[:, 1].std() - 1) < 0.01
    assert stats.kstest(X[:, 1], "norm").pvalue > 0.01


def test_a_keyword_given_twice_in_a_spec_is_refused():
    with pytest.raises(ValueError, match="'std' is given twice"):
        RandomInputs.from_spec({"x": "normal(mean=0, std=1, std=2)"})


@pytest.mark.parametrize("spec, exact, rel", [
    ("normal(1e8, 1)", 1.0, 1e-9),                     # m2 - m1^2 gave 1.414
    ("uniform(1000, 1000.001)", 0.001 / np.sqrt(12), 1e-9),
    ("gumbel(1e6, 1)", np.pi / np.sqrt(6), 1e-9),
    ("triangle(1e6, 1000001, 1000003)", np.sqrt((0 + 1 + 9 - 0 - 0 - 3) / 18), 1e-9),
    ("lognormal(mean=0.3, std=0.003)", 0.003, 1e-9),
    # chaospy's recurrence gives the untruncated sigma (1.0) here: its moments are taken,
    # as exact as chaospy's numerical moments of a truncated normal (3e-7)
    ("truncnormal(mu=1000, sigma=1, lower=999, upper=1001)", 0.5395602346392972, 1e-6),
])
def test_std_of_inputs_far_from_zero_does_not_cancel(spec, exact, rel):
    inputs = RandomInputs.from_spec({"x": spec})
    assert inputs.std()[0] == pytest.approx(exact, rel=rel)


def test_std_of_a_derived_distribution_is_its_own():
    """chaospy's recurrence of Uniform(0, 1) ** 2 is wrong (a variance of 0.0115 for 4/45):
    its moments give the std where they do not cancel."""
    inputs = RandomInputs(["x"], chaospy.Uniform(0, 1) ** 2)
    assert inputs.std()[0] == pytest.approx(np.sqrt(4 / 45), rel=1e-12)


def test_moments_a_student_t_lacks_are_nan_and_inf_not_a_crash():
    """df <= 2 raised chaospy's bare 'too high mom' from mean(), std() and summary()."""
    inputs = RandomInputs.from_spec({"a": "studentt(1.5)", "b": "studentt(0.8)",
                                     "c": "studentt(5)"})
    mean, std = inputs.mean(), inputs.std()
    assert mean[0] == 0 and np.isnan(mean[1]) and mean[2] == 0
    assert std[0] == np.inf and std[1] == np.inf and std[2] == pytest.approx(np.sqrt(5 / 3))
    assert "studentt" in inputs.summary().lower() or "StudentT" in inputs.summary()


def test_mapped_points_stay_within_the_physical_bounds():
    """normal(6.4, 1) bounded below by 0 (7.8e-11 below it): u = -8 mapped to -1.6, a
    negative thickness for a reliability search's model."""
    from uqkit.inputs.transforms import u_to_x

    inputs = RandomInputs.from_spec({"t": "normal(6.4, 1)"}, bounds={"t": (0.0, None)})
    x = u_to_x(inputs, [[-8.0], [-6.0], [0.0], [5.0]])[:, 0]
    assert x[0] == 0.0 and x[1:] == pytest.approx([0.4, 6.4, 11.4], rel=1e-9)


@pytest.mark.parametrize("bound, message", [(0, r"bounds must be a pair \(lower, upper\)"),
                                            ((0, 1, 2), "bounds must be a pair"),
                                            (None, "bounds must be a pair")])
def test_malformed_bounds_are_named(bound, message):
    with pytest.raises(ValueError, match=f"input 'x': {message}"):
        RandomInputs.from_spec({"x": "uniform(0, 1)"}, bounds={"x": bound})


def test_std_leaves_the_inputs_unchanged():
    """A cache of the stds on the instance changed a model's fingerprint once summary() had
    run: a store of a model holding its inputs was then refused."""
    inputs = RandomInputs.from_spec({"x": "normal(1e8, 1)", "y": "uniform(0, 1)"})
    before = {k: repr(v) for k, v in vars(inputs).items()}
    inputs.summary()
    assert {k: repr(v) for k, v in vars(inputs).items()} == before


def test_marginals_that_are_not_the_joints_are_refused_by_name():
    """Given swapped, summary() described other distributions than those sampled, and
    with_copula() sampled them: a and b swapped without a word; too few gave an IndexError."""
    joint = chaospy.J(chaospy.Normal(0, 1), chaospy.Uniform(0, 2))
    with pytest.raises(ValueError, match=r"the one given for input 'a' .* is not the joint's"):
        RandomInputs(("a", "b"), joint, marginals=(chaospy.Uniform(0, 2), chaospy.Normal(0, 1)))
    with pytest.raises(ValueError, match=r"marginals must be 2 chaospy distributions"):
        RandomInputs(("a", "b"), joint, marginals=(chaospy.Normal(0, 1),))
    same = RandomInputs(("a", "b"), joint, marginals=(chaospy.Normal(0, 1), chaospy.Uniform(0, 2)))
    assert np.allclose(same.mean(), [0.0, 1.0])


def test_marginals_that_are_not_one_input_distributions_are_refused_by_name():
    joint = chaospy.J(chaospy.Normal(0, 1), chaospy.Uniform(0, 2))
    with pytest.raises(ValueError, match=r"got \['str', 'str'\]"):
        RandomInputs(("a", "b"), joint, marginals={"a": 1, "b": 2})
    x = chaospy.Normal(0, 1)
    with pytest.raises(ValueError, match=r"input 'b' .* not a distribution of one input"):
        RandomInputs(("a", "b"), joint, marginals=(chaospy.Normal(0, 1), chaospy.Normal(x, 1)))
