""":class:`uqkit.inputs.RandomInputs` at its edges: both tails outside the bounds, a sample on
a bound, a singular correlation, a joint without marginals, the summary's numbers against
scipy (mutation testing found them untested: docs/development/mutation_testing.md)."""
import chaospy
import numpy as np
import pytest
from scipy import stats

from uqkit.inputs import RandomInputs, sample
from uqkit.inputs.random_inputs import BOUND_TOLERANCE, check_inputs


def test_the_mass_outside_both_bounds_is_added():
    """Each tail of normal(0, 1) past 6.07 holds 6.4e-10, under the tolerance of 1e-9; both
    together hold 1.28e-9, over it."""
    tail = stats.norm.sf(6.07)
    assert tail < BOUND_TOLERANCE < 2 * tail
    spec = {"x": "normal(0, 1)"}
    for one_side in ((-6.07, None), (None, 6.07)):
        RandomInputs.from_spec(spec, bounds={"x": one_side})
    with pytest.raises(ValueError, match=r"input 'x': its distribution puts probability "
                                         r"1.28e-09 outside the physical bounds \(-6.07, 6.07\)"):
        RandomInputs.from_spec(spec, bounds={"x": (-6.07, 6.07)})


def test_a_sample_on_a_bound_is_inside_and_equal_bounds_are_refused():
    inputs = RandomInputs.from_spec({"x": "uniform(1, 2)"}, bounds={"x": (1.0, 2.0)})
    inputs.check_samples(np.array([[1.0], [2.0], [1.5]]))
    for one_side, bad in (((None, 2.0), 2.5), ((1.0, None), 0.5)):  # an open end
        half = RandomInputs.from_spec({"x": "uniform(1, 2)"}, bounds={"x": one_side})
        half.check_samples(np.array([[1.0], [2.0]]))
        with pytest.raises(ValueError, match=f"sample value {bad} lies outside"):
            half.check_samples(np.array([[bad]]))
    with pytest.raises(ValueError, match=r"sample value 2.0000000000000004 lies outside"):
        inputs.check_samples(np.array([[1.0], [np.nextafter(2.0, 3.0)]]))
    with pytest.raises(ValueError, match=r"input 'x': its bounds \(1.5, 1.5\) must be "
                                         r"\(lower, upper\) with lower < upper"):
        RandomInputs.from_spec({"x": "uniform(1, 2)"}, bounds={"x": (1.5, 1.5)})


def test_a_singular_correlation_is_refused():
    """Correlation 1 between two inputs: an eigenvalue of exactly 0, not positive definite."""
    pair = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})
    assert np.linalg.eigvalsh([[1.0, 1.0], [1.0, 1.0]])[0] == 0.0
    with pytest.raises(ValueError, match="^the nataf correlation matrix must be symmetric "
                                         "positive definite$"):
        pair.with_copula("nataf", [[1.0, 1.0], [1.0, 1.0]])


def test_a_clayton_theta_below_one_is_taken_with_its_kendall_tau():
    pair = RandomInputs.from_spec({"a": "uniform(0, 1)", "b": "uniform(0, 1)"})
    v = sample(pair.with_copula("clayton", 0.5), 4000, seed=3).values
    assert stats.kendalltau(v[:, 0], v[:, 1])[0] == pytest.approx(0.5 / 2.5, abs=0.03)


def test_a_copula_keeps_the_bounds_and_descriptions():
    pair = RandomInputs.from_spec({"a": "uniform(0, 1)", "b": "normal(8, 1)"},
                                  bounds={"b": (0.0, None)}, descriptions={"a": "ratio [-]"})
    tied = pair.with_copula("nataf", [[1.0, 0.3], [0.3, 1.0]])
    assert tied.bounds == {"b": (0.0, None)} and tied.descriptions == {"a": "ratio [-]"}


def test_a_joint_without_marginals_samples_and_says_what_it_lacks():
    """A multivariate normal given as the joint: sampled with its correlation; what needs
    the marginals says so."""
    joint = chaospy.MvNormal([1.0, -2.0], [[1.0, 0.6], [0.6, 4.0]])
    inputs = RandomInputs(("a", "b"), joint)
    v = sample(inputs, 20_000, seed=1).values
    assert np.corrcoef(v.T)[0, 1] == pytest.approx(0.3, abs=0.02)
    assert v.mean(0) == pytest.approx([1.0, -2.0], abs=0.05)
    for call in (inputs.summary, lambda: inputs.marginal("a"),
                 lambda: inputs.with_copula("clayton", 1.0)):
        with pytest.raises(ValueError, match="marginals"):
            call()


def test_marginals_given_as_one_input_joints_are_unwrapped():
    joint = chaospy.J(chaospy.Normal(0, 1), chaospy.Uniform(0, 2))
    wrapped = (chaospy.J(chaospy.Normal(0, 1)), chaospy.J(chaospy.Uniform(0, 2)))
    inputs = RandomInputs(("a", "b"), joint, marginals=wrapped)
    assert not isinstance(inputs.marginal("a"), chaospy.J)
    assert inputs.mean() == pytest.approx([0.0, 1.0])


def test_a_wrong_marginal_after_a_dependent_input_is_still_refused():
    """The check skips an input whose distribution depends on another (no marginal of its
    own in chaospy) and goes on to the next."""
    x = chaospy.Normal(0, 1)
    joint = chaospy.J(x, chaospy.Normal(x, 1), chaospy.Uniform(0, 2))
    given = (chaospy.Normal(0, 1), chaospy.Normal(0, np.sqrt(2)), chaospy.Normal(5, 1))
    with pytest.raises(ValueError, match=r"the one given for input 'c' .* is not the joint's"):
        RandomInputs(("a", "b", "c"), joint, marginals=given)


def test_the_summary_table_holds_scipys_moments_and_quantiles_aligned():
    inputs = RandomInputs.from_spec(
        {"l": "normal(2, 0.05)", "E": "uniform(200.123456789, 220)"},
        bounds={"l": (1.0, 3.0)}, descriptions={"l": "length [m]"})
    ell, modulus = stats.norm(2.0, 0.05), stats.uniform(200.123456789, 220 - 200.123456789)
    rows = [["input", "distribution", "mean", "std", "q01", "q99", "bounds / notes"],
            ["l", "Normal(mu=2.0,sigma=0.05)", f"{ell.mean():.6g}", f"{ell.std():.4g}",
             f"{ell.ppf(0.01):.6g}", f"{ell.ppf(0.99):.6g}", "(1.0, 3.0) length [m]"],
            ["E", "Uniform(lower=200.12,upper=220.0)", f"{modulus.mean():.6g}",
             f"{modulus.std():.4g}", f"{modulus.ppf(0.01):.6g}", f"{modulus.ppf(0.99):.6g}",
             ""]]  # no description: an empty cell
    widths = [max(len(r[c]) for r in rows) for c in range(7)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    assert inputs.summary() == "\n".join(lines)
    tied = inputs.with_copula("nataf", [[1.0, 0.2], [0.2, 1.0]])
    assert tied.summary() == "\n".join(lines + ["dependence: Nataf"])
    assert inputs.describe() == {
        "names": ["l", "E"], "bounds": {"l": [1.0, 3.0]},
        "joint": "J(Normal(mu=2.0, sigma=0.05), Uniform(lower=200.123456789, upper=220.0))"}


@pytest.mark.parametrize("call, message", [
    (lambda: RandomInputs.from_spec({}), "^at least one input is needed$"),
    (lambda: RandomInputs.from_spec({"thickness": "normal(1, x)"}), "thickness"),
    (lambda: RandomInputs(("a",), "normal(0, 1)"), "joint must be a chaospy distribution, "
                                                    "got str"),
    (lambda: RandomInputs.from_spec({"a": "normal(0, 1)"}).marginal("b"),
     r"unknown input 'b'; inputs are \('a',\)"),
    (lambda: RandomInputs.from_spec({"a": "normal(0, 1)"}, bounds={"b": (0, 1)}),
     r"bounds name an unknown input 'b'; inputs are \('a',\)"),
    (lambda: RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"}).with_copula(
        "frank", 1.0), "unknown copula 'frank'; known: clayton, nataf"),
    (lambda: RandomInputs(("a", "b"), chaospy.MvNormal([0, 0], np.eye(2))).with_copula(
        "clayton", 1.0), "with_copula needs the inputs' marginals; pass marginals= to "
                         "RandomInputs"),
    (lambda: RandomInputs(("a", "b"), chaospy.MvNormal([0, 0], np.eye(2))).marginal("a"),
     "the marginals of this joint distribution are unknown; pass marginals= to RandomInputs")])
def test_messages_name_the_bad_value(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_only_a_dict_gets_the_from_spec_hint():
    with pytest.raises(ValueError, match=r"got dict \(RandomInputs.from_spec"):
        check_inputs({"a": "normal(0, 1)"})
    with pytest.raises(ValueError) as info:
        check_inputs(["a"])
    assert str(info.value) == "inputs must be a uqkit.inputs.RandomInputs, got list"


def test_swapped_marginals_of_a_copula_or_of_one_input_are_refused():
    """A Nataf joint of (Normal(100, 10), Uniform(0, 1)) took the marginals given in the
    other order: mean() said (0.5, 100) and with_copula sampled a load of mean 0.5."""
    normal, uniform = chaospy.Normal(100, 10), chaospy.Uniform(0, 1)
    joint = chaospy.Nataf(chaospy.J(normal, uniform), [[1, 0.5], [0.5, 1]])
    with pytest.raises(ValueError, match=r"input 'load' \(Uniform\(\)\) is not the joint's"):
        RandomInputs(("load", "frac"), joint, marginals=(uniform, normal))
    with pytest.raises(ValueError, match=r"input 'a' \(Uniform\(\)\) is not the joint's"):
        RandomInputs(("a",), normal, marginals=(uniform,))
    inputs = RandomInputs(("load", "frac"), joint)  # its J's marginals, unasked
    np.testing.assert_allclose(inputs.mean(), [100, 0.5])
    np.testing.assert_allclose(inputs.std(), [10, 1 / np.sqrt(12)])


def test_a_joint_of_conditionals_has_no_marginals_to_tie_again():
    """J(a, Normal(a, 1)): its second member is b given a. with_copula(nataf, I) kept a
    correlation of 0.71 and a nataf at 0.5 gave b a std of 1.73 for sqrt(2); mean() failed
    with chaospy's bare AssertionError. Now both name what they lack; sampling is as before."""
    a = chaospy.Normal(0, 1)
    inputs = RandomInputs(("a", "b"), chaospy.J(a, chaospy.Normal(a, 1)))
    for call in (inputs.mean, inputs.std, lambda: inputs.with_copula("nataf", np.eye(2))):
        with pytest.raises(ValueError, match="marginals"):
            call()
    v = sample(inputs, 20_000, seed=1).values
    assert np.corrcoef(v.T)[0, 1] == pytest.approx(1 / np.sqrt(2), abs=0.02)


@pytest.mark.parametrize("spec, exact", [
    # chaospy's raw moments: a std of 0 (m2 - m1^2 = 2 for 1, its recurrence 0); scipy's
    # lognorm cancels too: the spec's own mean and std
    ("lognormal(mean=1e8, std=1)", stats.norm(1e8, 1)),
    # chaospy's m2 = -153 and m1 = 0.50008; then m1 = -10, outside [0, 1]: at these sigmas
    # the cut normal is uniform on [0, 1] to 1e-11 (scipy's own truncnorm fails here)
    ("truncnormal(mu=-10, sigma=1e6, lower=0, upper=1)", stats.uniform(0, 1)),
    ("truncnormal(mu=-10, sigma=1e9, lower=0, upper=1)", stats.uniform(0, 1)),
    ("truncnormal(mu=1000, sigma=1, lower=999, upper=1001)", stats.truncnorm(-1, 1, 1000, 1)),
    ("normal(1e8, 1)", stats.norm(1e8, 1)),
])
def test_moments_where_chaospys_cancel_or_are_wrong(spec, exact):
    inputs = RandomInputs.from_spec({"x": spec})
    assert inputs.mean()[0] == pytest.approx(exact.mean(), rel=1e-12, abs=1e-7)
    assert inputs.std()[0] == pytest.approx(exact.std(), rel=1e-6)


@pytest.mark.parametrize("df, mean", [(0.5, np.nan), (1, np.nan), (1.5, 3.0), (3, 3.0)])
def test_a_student_t_has_a_mean_only_above_one_degree_of_freedom(df, mean):
    """chaospy gave the Cauchy (df = 1) a mean: its loc, 3."""
    got = RandomInputs.from_spec({"t": f"studentt({df}, 3, 2)"}).mean()[0]
    assert got == pytest.approx(mean, nan_ok=True)


@pytest.mark.parametrize("call, message", [
    (lambda: RandomInputs.independent(["normal(0, 1)"]),
     r"marginals must be a dict of name -> distribution spec.*got list \['normal\(0, 1\)'\]"),
    (lambda: RandomInputs.from_spec({"x": "exponential(rate=1e-320)"}),
     r"exponential: rate=1e-320 gives an infinite scale"),
])
def test_bad_specs_are_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()
