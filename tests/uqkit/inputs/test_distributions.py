"""Distribution specs mean what they say: moments and quantiles against scipy.stats."""
import math

import numpy as np
import pytest
from scipy import stats

from uqkit.inputs.distributions import parse_distribution
from uqkit.inputs import RandomInputs

CASES = [
    ("normal(210, 10)", stats.norm(210, 10)),
    ("normal(mean=210, std=10)", stats.norm(210, 10)),
    ("uniform(0.001, 0.002)", stats.uniform(0.001, 0.001)),
    ("triangle(0, 1, 4)", stats.triang(0.25, 0, 4)),
    ("gumbel(10, 2)", stats.gumbel_r(10, 2)),
    ("gumbel(loc=10, scale=2)", stats.gumbel_r(10, 2)),
    ("studentt(5, loc=1, scale=2)", stats.t(5, 1, 2)),
    ("beta(2, 5, lower=1, upper=3)", stats.beta(2, 5, 1, 2)),
    ("gamma(2, scale=3)", stats.gamma(2, 0, 3)),
    ("gamma(shape=2, scale=3, loc=1)", stats.gamma(2, 1, 3)),
    ("weibull(1.5, scale=2)", stats.weibull_min(1.5, 0, 2)),
    ("exponential(scale=2)", stats.expon(0, 2)),
    ("exponential(rate=0.5, loc=1)", stats.expon(1, 2)),
    ("lognormal(mu=-1.2, sigma=0.1)", stats.lognorm(0.1, 0, math.exp(-1.2))),
    ("truncnormal(mu=1, sigma=2, lower=0, upper=3)",
     stats.truncnorm(-0.5, 1.0, loc=1, scale=2)),
]


@pytest.mark.parametrize("spec, ref", CASES, ids=[c[0] for c in CASES])
def test_specs_match_scipy(spec, ref):
    d = parse_distribution(spec)
    mean = float(d.mom(1))
    std = math.sqrt(float(d.mom(2)) - mean ** 2)
    assert mean == pytest.approx(ref.mean(), rel=1e-6, abs=1e-12)
    assert std == pytest.approx(ref.std(), rel=1e-5)
    for q in (0.01, 0.5, 0.99):
        assert float(d.inv(q)) == pytest.approx(ref.ppf(q), rel=1e-5, abs=1e-9)


def test_gumbel_means_location_and_scale():
    """'gumbel(10, 2)' used to become chaospy's LogWeibull(scale=10, shift=2): mean 7.77, std
    12.83 and a 1% quantile of -13.27, negative loads where location 10, scale 2 was meant."""
    d = parse_distribution("gumbel(10, 2)")
    assert float(d.mom(1)) == pytest.approx(10 + 2 * 0.5772156649, rel=1e-9)
    assert float(d.inv(0.01)) == pytest.approx(10 - 2 * math.log(-math.log(0.01)), rel=1e-9)


def test_lognormal_by_mean_and_std():
    d = parse_distribution("lognormal(mean=0.3, std=0.003)")
    assert float(d.mom(1)) == pytest.approx(0.3, rel=1e-12)
    assert math.sqrt(float(d.mom(2)) - float(d.mom(1)) ** 2) == pytest.approx(0.003, rel=1e-9)
    inputs = RandomInputs.from_spec({"nu": "lognormal(mean=0.3, std=0.003)"})
    assert "0.3 " in inputs.summary() and "0.003" in inputs.summary()


@pytest.mark.parametrize("spec, message", [
    ("gamma(2, 3)", r"gamma\(2, 3\) is ambiguous: only the first 1 may be given by position, "
                    r"as in gamma\(shape, scale=1, loc=0\)"),
    ("lognormal(-1.2, 0.01)", r"its parameters must be named, as in lognormal\(mean=..."),
    ("exponential(2)", r"its parameters must be named, as in exponential\(scale="),
    ("truncnormal(0, 1, -1, 1)", r"must be named, as in truncnormal\(mu=..."),
    ("normal(1, 2, 3)", r"normal takes at most 2 parameters, got 3"),
    ("normal(1,,2)", r"has an empty parameter"),
    ("exponential(rate=0)", r"rate must be > 0, got rate=0.0"),
    ("weibull(1.5, 2)", r"only the first 1 may be given by position"),
    ("gumbel(loc=10)", r"gumbel needs scale; use gumbel\(loc, scale\)"),
    ("gumbel(loc=10, scale=-2)", r"gumbel: scale must be > 0, got scale=-2.0"),
    ("gumbel(10, 2, scale=3)", r"parameter 'scale' is given twice"),
    ("normal(0, sd=1)", r"normal has no parameter 'sd'; use normal\(mean, std\)"),
    ("normal(mean=0, 1)", r"a positional parameter follows a keyword one"),
    ("normal(0, abc)", r"non-numeric parameter 'abc'"),
    ("normal(0, inf)", r"std=inf of normal is not a finite number"),
    ("lognormal(mean=0.3)", r"give mean= and std="),
    ("exponential(scale=1, rate=2)", r"give scale= or rate= \(one of them\)"),
    ("uniform(2, 1)", r"lower must be < upper"),
    ("cauchy(0, 1)", r"unknown distribution 'cauchy'"),
])
def test_bad_specs_are_refused_with_the_accepted_form(spec, message):
    with pytest.raises(ValueError, match=r"load: .*" + message):
        parse_distribution(spec, name="load")


def test_tuple_specs_take_a_keyword_dict():
    d = parse_distribution(("gamma", 2, {"scale": 3}))
    assert float(d.mom(1)) == pytest.approx(6.0)
    assert float(parse_distribution(("normal", 1, 2)).mom(1)) == pytest.approx(1.0)
    assert np.isfinite(float(parse_distribution(("uniform", 0, 2)).inv(0.5)))


# -- every family's checks and defaults, message by message (mutation testing found them
# unchecked) -----------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, message", [
    ("normal(0, 0)", "input: normal: std must be > 0, got std=0.0"),
    ("uniform(1, 1)", "input: uniform: lower must be < upper, got lower=1.0, upper=1.0"),
    ("triangle(0, 0, 0)", "input: triangle: need lower <= mode <= upper with lower < upper, "
                          "got (0.0, 0.0, 0.0)"),
    ("triangle(0, 2, 1)", "input: triangle: need lower <= mode <= upper"),
    ("gumbel(0, -1)", "input: gumbel: scale must be > 0, got scale=-1.0"),
    ("studentt(0)", "input: studentt: df must be > 0, got df=0.0"),
    ("studentt(3, 0, 0)", "input: studentt: scale must be > 0, got scale=0.0"),
    ("beta(0, 1)", "input: beta: alpha must be > 0, got alpha=0.0"),
    ("beta(1, 0)", "input: beta: beta must be > 0, got beta=0.0"),
    ("beta(1, 1, lower=2, upper=2)", "input: beta: lower must be < upper, got lower=2.0, "
                                     "upper=2.0"),
    ("gamma(0)", "input: gamma: shape must be > 0, got shape=0.0"),
    ("gamma(2, scale=0)", "input: gamma: scale must be > 0, got scale=0.0"),
    ("weibull(-1)", "input: weibull: shape must be > 0, got shape=-1.0"),
    ("weibull(2, scale=0)", "input: weibull: scale must be > 0, got scale=0.0"),
    ("exponential()", "input: exponential: give scale= or rate= (one of them), e.g. "
                      "exponential(scale=2) or exponential(rate=0.5)"),
    ("exponential(scale=1, rate=1)", "input: exponential: give scale= or rate="),
    ("exponential(rate=0)", "input: exponential: rate must be > 0, got rate=0.0"),
    ("exponential(scale=-2)", "input: exponential: scale must be > 0, got scale=-2.0"),
    ("lognormal(mean=1)", "input: lognormal: give mean= and std= (of the variable) or mu= and "
                          "sigma= (of its logarithm), e.g. lognormal(mean=0.3, std=0.003)"),
    ("lognormal(mu=0)", "input: lognormal: give mean= and std="),
    ("lognormal(mean=1, std=1, mu=0, sigma=1)", "input: lognormal: give mean= and std="),
    ("lognormal(mean=0, std=1)", "input: lognormal: mean must be > 0, got mean=0.0"),
    ("lognormal(mean=1, std=0)", "input: lognormal: std must be > 0, got std=0.0"),
    ("lognormal(mu=0, sigma=0)", "input: lognormal: sigma must be > 0, got sigma=0.0"),
    ("truncnormal(mu=0, sigma=0, lower=-1, upper=1)",
     "input: truncnormal: sigma must be > 0, got sigma=0.0"),
    ("truncnormal(mu=0, sigma=1, lower=1, upper=1)",
     "input: truncnormal: lower must be < upper, got (1.0, 1.0)"),
    ("normal 0 1", "input: cannot read distribution 'normal 0 1'; write it as "
                   "'normal(2, 0.05)' or 'gumbel(loc=10, scale=2)'"),
    ("Normal(0, 1, 2)", "input: Normal takes at most 2 parameters, got 3; use "),
    ("gamma(2, 1)", "input: gamma(2, 1) is ambiguous: only the first 1 may be given by "
                    "position, as in gamma(shape, scale=1, loc=0) (scipy.stats orders them "
                    "differently)"),
    ("truncnormal(0, 1)", "input: truncnormal(0, 1) is ambiguous: its parameters must be named"),
    ("gamma(scale=2)", "input: gamma needs shape; use gamma(shape, scale=1, loc=0)"),
    ("truncnormal(lower=0)", "input: truncnormal needs mu, sigma; use "),
    ("normal(0, std=x)", "input: distribution 'normal(0, std=x)' has a non-numeric parameter "
                         "'x'"),
    ("normal(1, 2, std=3)", "input: normal parameter 'std' is given twice"),
    ("gamma(1, 2, 3, 4)", "input: gamma takes at most 3 parameters, got 4; use "),
    ("normal(x, 1)", "input: distribution 'normal(x, 1)' has a non-numeric parameter 'x'"),
    (("normal", True, 1.0), "input: parameter mean=True of normal is not a finite number"),
    ("cauchy(0, 1)", "input: unknown distribution 'cauchy'; known: beta, exponential, gamma, "
                     "gumbel, lognormal, normal, studentt, triangle, truncnormal, uniform, "
                     "weibull"),
    (42, "input: expected a chaospy distribution, a string like 'normal(0, 1)' or a tuple like "
         "('normal', 0, 1), got 42"),
    ([], "input: expected a chaospy distribution"),
    ((3, "normal"), "input: expected a chaospy distribution"),
])
def test_every_bad_parameter_is_named_with_its_family(spec, message):
    with pytest.raises(ValueError) as info:
        parse_distribution(spec)
    assert str(info.value).startswith(message), str(info.value)


def test_the_name_of_the_input_leads_every_message():
    with pytest.raises(ValueError, match=r"^E: normal: std must be > 0"):
        parse_distribution("normal(210, -1)", name="E")


@pytest.mark.parametrize("spec, scipy_dist", [
    ("studentt(5)", stats.t(5)),
    ("studentt(5, 2)", stats.t(5, loc=2)),
    ("beta(2, 3)", stats.beta(2, 3)),
    ("beta(2, 3, lower=1, upper=4)", stats.beta(2, 3, loc=1, scale=3)),
    ("gamma(2.5)", stats.gamma(2.5)),
    ("gamma(2.5, loc=1)", stats.gamma(2.5, loc=1)),
    ("weibull(1.7)", stats.weibull_min(1.7)),
    ("weibull(1.7, scale=2, loc=3)", stats.weibull_min(1.7, loc=3, scale=2)),
    ("exponential(rate=4, loc=1)", stats.expon(loc=1, scale=0.25)),
    ("lognormal(mu=0.1, sigma=0.4)", stats.lognorm(0.4, scale=math.exp(0.1))),
    ("triangle(0, 1, 4)", stats.triang(0.25, loc=0, scale=4)),
    ("uniform(-1, 3)", stats.uniform(-1, 4))])
def test_defaults_and_parameters_are_scipys(spec, scipy_dist):
    dist = parse_distribution(spec)
    for p in (0.05, 0.5, 0.95):
        assert float(dist.inv(p)) == pytest.approx(scipy_dist.ppf(p), rel=1e-6, abs=1e-9)


def test_a_keyword_value_holding_an_equals_sign_is_refused():
    with pytest.raises(ValueError, match="non-numeric parameter '2=3'"):
        parse_distribution("normal(0, std=2=3)")


def test_a_right_triangle_is_a_triangle():
    # the mode may sit on either bound (lower <= mode <= upper)
    assert float(parse_distribution("triangle(0, 0, 1)").inv(0.75)) == pytest.approx(
        stats.triang(0.0, 0, 1).ppf(0.75))
    assert float(parse_distribution("triangle(0, 1, 1)").inv(0.25)) == pytest.approx(
        stats.triang(1.0, 0, 1).ppf(0.25))


@pytest.mark.parametrize("lower, upper", [(7.0, 8.0), (9.0, 10.0), (50.0, 60.0), (-60.0, -50.0),
                                          (-40.0, -38.0)])
def test_a_truncnormal_window_too_far_in_a_tail_is_refused(lower, upper):
    """chaospy inverts the normal CDF in double precision: at 9 sigma every draw was 8.22,
    outside the window; at 7 sigma the 99.9% quantile was off by 0.006 sigma (against
    scipy's log-space truncnorm)."""
    with pytest.raises(ValueError, match=r"the window lies .* sigma from mu, too far in the "
                                         r"tail for chaospy's sampler"):
        parse_distribution(f"truncnormal(mu=0, sigma=1, lower={lower}, upper={upper})")


def test_a_truncnormal_window_within_reach_samples_as_scipys():
    from scipy import stats

    d = parse_distribution("truncnormal(mu=10, sigma=2, lower=20, upper=24)")  # 5-7 sigma
    q = np.array([0.01, 0.3, 0.99])
    np.testing.assert_allclose(d.inv(q), stats.truncnorm(5, 7, 10, 2).ppf(q), atol=2e-6)
    one_sided = parse_distribution("truncnormal(mu=0, sigma=1, lower=-1)")
    assert float(one_sided.inv(0.5)) == pytest.approx(stats.truncnorm(-1, np.inf).ppf(0.5))


def test_a_lognormal_beyond_the_largest_double_is_refused():
    """lognormal(mu=1000, sigma=1) ended in chaospy's OverflowError: mu is of the logarithm."""
    with pytest.raises(ValueError, match=r"lognormal: mu=1000.0, sigma=1.0 put the variable "
                                         r"beyond the largest double.*give mean= and std="):
        parse_distribution("lognormal(mu=1000, sigma=1)")
    assert parse_distribution("lognormal(mu=600, sigma=1)") is not None
