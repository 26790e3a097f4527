import numpy as np
import pytest
from scipy import stats

from uqkit.inputs import RandomInputs
from uqkit.presets import table3
from uqkit.inputs.sampling import Samples, sample, unit_sample


@pytest.mark.parametrize("rule", ["random", "lhs", "sobol", "halton"])
def test_reproducible_under_seed(rule):
    a = sample(table3(), 64, rule=rule, seed=11)
    b = sample(table3(), 64, rule=rule, seed=11)
    assert a.names == ("l", "b", "t", "E", "nu") and a.values.shape == (64, 5)
    assert np.array_equal(a.values, b.values)
    assert np.all((a["t"] > 0.001) & (a["t"] < 0.002))


def test_seed_changes_random_samples_and_global_state_is_untouched():
    np.random.seed(5)
    before = np.random.get_state()[1].copy()
    a = sample(table3(), 10, seed=1)
    b = sample(table3(), 10, seed=2)
    assert not np.array_equal(a.values, b.values)
    assert np.array_equal(np.random.get_state()[1], before)


def test_lhs_stratifies():
    s = sample(table3(), 100, rule="lhs", seed=0)
    u = (s["t"] - 0.001) / 0.001  # uniform input: one point per stratum
    assert sorted(np.floor(u * 100).astype(int).tolist()) == list(range(100))


@pytest.mark.parametrize("n", [-5, 0, 2.5, "10"])
def test_bad_count(n):
    with pytest.raises(ValueError, match="n must be a positive integer"):
        sample(table3(), n)


def test_bad_rule_and_seed():
    with pytest.raises(ValueError, match="unknown sampling rule 'grid'"):
        sample(table3(), 4, rule="grid")
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        sample(table3(), 4, seed=-1)


def test_samples_container():
    s = Samples(np.arange(6.0).reshape(3, 2), ("a", "b"))
    assert np.array_equal(np.asarray(s), s.values) and len(s) == 3
    assert s["b"].tolist() == [1.0, 3.0, 5.0]
    with pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        Samples(np.zeros((3, 2)), ("a", "b", "c"))


def test_a_dict_of_specs_is_refused_naming_from_spec():
    """sample({...}, n) and the analyses ended in AttributeError: 'dict' object has no
    attribute 'dim'."""
    from uqkit.reliability import failure_probability
    from uqkit.sensitivity import sobol_indices

    spec = {"x": "normal(0, 1)"}
    for call in (lambda: sample(spec, 5), lambda: failure_probability(lambda X: X, spec),
                 lambda: sobol_indices(lambda X: X, spec, n=8, bootstrap=0)):
        with pytest.raises(ValueError, match=r"inputs must be a uqkit.inputs.RandomInputs, got "
                                             r"dict \(RandomInputs.from_spec\(...\) makes one"):
            call()


# -- points the transforms cannot map right: refused, not returned ---------------------------

def test_a_copula_inverse_that_did_not_converge_is_refused_naming_the_point():
    """chaospy's Clayton inverse at theta = 35 drew (-4.04, -4.05, 8.22) for three standard
    normals where the exact conditional inverse gives -4.04 for the last: a fake +8 sigma
    draw, with a debug log line only; at theta = 2 it mapped u = (1, -7.5) to (1, -7.5), the
    independent answer, where the exact one is -4.04."""
    from uqkit.inputs.transforms import u_to_x

    normals = RandomInputs.from_spec({k: "normal(0, 1)" for k in "abc"})
    with pytest.raises(ValueError, match="is off at the point u = .*2 of 50000 points"):
        sample(normals.with_copula("clayton", 35), 50_000, seed=2)
    pair = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})
    with pytest.raises(ValueError, match="input .b.: .* is off .* did not converge there"):
        u_to_x(pair.with_copula("clayton", 2), [[1.0, -7.5]])
    # where it converges it is the exact conditional inverse (Clayton's closed form)
    theta, (ua, ub) = 2.0, stats.norm.cdf([1.0, -2.0])
    exact = (ua ** -theta * (ub ** (-theta / (1 + theta)) - 1) + 1) ** (-1 / theta)
    x = u_to_x(pair.with_copula("clayton", theta), [[1.0, -2.0]])
    assert x[0, 1] == pytest.approx(stats.norm.ppf(exact), abs=1e-8)


def test_the_transforms_refuse_points_of_the_wrong_shape_or_not_finite():
    from uqkit.inputs.transforms import unit_to_x, u_to_x, x_to_u

    two = RandomInputs.from_spec({"a": "uniform(0, 1)", "b": "lognormal(mean=1, std=0.2)"})
    # one point of two inputs written as a column came back as a column of two points
    with pytest.raises(ValueError, match=r"U must be an \(n, 2\) array .* shape \(2, 1\)"):
        u_to_x(two, [[0.0], [1.0]])
    with pytest.raises(ValueError, match=r"shape \(1, 4\)"):
        x_to_u(two, [[0.5, 1.0, 0.5, 1.0]])
    with pytest.raises(ValueError, match=r"U\[0, 0\] \(input 'a'\) is nan"):
        u_to_x(two, [[np.nan, 0.0]])
    with pytest.raises(ValueError, match=r"P\[0, 1\] \(input 'b'\) is 1.5, outside \[0, 1\]"):
        unit_to_x(two, [[0.5, 1.5]])
    with pytest.raises(ValueError, match="must be a uqkit.inputs.RandomInputs"):
        u_to_x({"a": "normal(0, 1)"}, [[0.0]])


def test_samples_take_rows_or_one_input_by_name_and_distinct_names():
    s = Samples(np.array([[1.0, 10.0], [2.0, 20.0]]), ("a", "b"))
    assert s[1:].values.tolist() == [[2.0, 20.0]] and s["b"].tolist() == [10.0, 20.0]
    with pytest.raises(IndexError, match="rows .* or one input by name"):
        s[:, 0]  # gave column a's values as one row labelled a, b
    with pytest.raises(ValueError, match=r"distinct, got \['x'\]"):
        Samples(np.array([[1.0, 2.0]]), ("x", "x"))


def test_a_gaussian_copula_is_not_checked_for_convergence_as_its_inverse_is_exact():
    # the check refused exact Nataf points in the tails (the forward transform rounds there)
    # and broke importance sampling on correlated lognormals at a sample past u = 6.4
    from uqkit.inputs.transforms import u_to_x
    from uqkit.reliability import failure_probability

    tied = RandomInputs.from_spec({"a": "uniform(0, 1)", "b": "uniform(0, 1)"}).with_copula(
        "nataf", [[1.0, 0.95], [0.95, 1.0]])
    x = u_to_x(tied, [[-6.0, -6.0], [-7.5, 0.0]])
    rho = 0.95  # Nataf: x = Phi(L u), L the correlation's Cholesky factor
    z = np.array([[-6.0, rho * -6.0 + np.sqrt(1 - rho ** 2) * -6.0],
                  [-7.5, rho * -7.5 + np.sqrt(1 - rho ** 2) * 0.0]])
    np.testing.assert_allclose(x, stats.norm.cdf(z), rtol=1e-9, atol=1e-15)
    logs = RandomInputs.from_spec({"a": "lognormal(mean=200, std=20)",
                                   "b": "lognormal(mean=10, std=2)"}).with_copula(
        "nataf", [[1.0, 0.5], [0.5, 1.0]])
    res = failure_probability(lambda X: 300 - X[:, 0] - 2 * X[:, 1], logs, method="is",
                              executor="serial", seed=1)
    assert res.pf == pytest.approx(8.6e-4, rel=0.2)  # FORM: 8.61e-4


# -- each rule is scipy's with the seed's generator (a first mutation run of the module found
#    "sobol" and "halton" interchangeable in the tests, and the upper bound unchecked) --------

def _scipy_sequence(rule, d, n, rng):
    """The points scipy draws for ``rule`` from the generator ``rng``."""
    from scipy.stats import qmc

    if rule == "random":
        return rng.random((n, d))
    engine = {"lhs": qmc.LatinHypercube, "sobol": qmc.Sobol, "halton": qmc.Halton}[rule]
    return engine(d, rng=rng).random(n)


@pytest.mark.parametrize("rule, scipy_rule", [("random", "random"), ("lhs", "lhs"),
                                              ("LATIN_HYPERCUBE", "lhs"), ("sobol", "sobol"),
                                              ("halton", "halton")])
def test_each_rule_is_scipys_own_sequence_for_the_seed(rule, scipy_rule):
    from uqkit.inputs.sampling import EDGE, unit_sample

    truth = _scipy_sequence(scipy_rule, 3, 16, np.random.default_rng(5))
    np.testing.assert_array_equal(unit_sample(3, 16, rule, seed=5),
                                  np.clip(truth, EDGE, 1.0 - EDGE))


def test_an_upper_bound_alone_is_kept_and_the_centre_is_not_moved():
    from uqkit.inputs.transforms import u_to_x

    inputs = RandomInputs.from_spec({"t": "normal(0, 1)"}, bounds={"t": (None, 6.0)})
    x = u_to_x(inputs, [[8.0], [0.0], [-7.0]])[:, 0]
    assert x[0] == 6.0 and x[1] == 0.0 and x[2] == pytest.approx(-7.0, rel=1e-9)


def test_samples_hold_floats_and_record_how_they_were_drawn():
    s = Samples(np.array([[1, 2]]), ("a", "b"))
    assert s.values.dtype == np.float64 and s.names == ("a", "b")
    assert np.asarray(s, dtype=np.float32).dtype == np.float32
    assert np.asarray(s) is s.values
    inputs = RandomInputs.from_spec({"a": "uniform(0, 1)"})
    assert sample(inputs, 4, seed=3).origin["seed"] == 3
    assert sample(inputs, 4).origin["seed"] is None
    assert sample(inputs, 4, seed=np.random.default_rng(0)).origin["seed"] == "rng"


def test_samples_keep_their_names_as_a_tuple_and_give_them_as_a_dict():
    s = Samples(np.array([[1.0, 10.0], [2.0, 20.0]]), ["a", "b"])
    assert s.names == ("a", "b") and isinstance(s.names, tuple)
    as_dict = s.to_dict()
    assert list(as_dict) == ["a", "b"] and as_dict["b"].tolist() == [10.0, 20.0]
    with pytest.raises(KeyError, match=r"no input 'c'; inputs are \('a', 'b'\)"):
        s["c"]
    with pytest.raises(IndexError, match=r"\(samples\['a'\]\), not \(slice"):
        s[:, 0]
    as32 = np.asarray(s, dtype=np.float32)
    assert as32.dtype == np.float32 and as32.tolist() == [[1.0, 10.0], [2.0, 20.0]]


def test_the_default_rule_is_random():
    from uqkit.inputs.sampling import unit_sample

    np.testing.assert_array_equal(unit_sample(3, 5, seed=4),
                                  unit_sample(3, 5, rule="random", seed=4))
    np.testing.assert_array_equal(sample(table3(), 5, seed=4).values,
                                  sample(table3(), 5, rule="random", seed=4).values)


@pytest.mark.parametrize("n, warns", [(8, False), (64, False), (1, False), (12, True),
                                      (7, True)])
def test_sobol_warns_about_its_balance_only_where_n_is_not_a_power_of_two(n, warns):
    import warnings

    from uqkit.inputs.sampling import unit_sample

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        unit_sample(2, n, rule="sobol", seed=0)
    balance = [w for w in caught if "balance properties" in str(w.message)]
    assert bool(balance) == warns, [str(w.message) for w in caught]
    assert len(caught) == len(balance)  # nothing else


def test_a_non_finite_inverse_is_refused_naming_the_input_and_the_point(monkeypatch):
    """chaospy clips its normal at 8.22 std, so a broken distribution stands in: its
    inverse gives inf for the second row's second input."""
    from uqkit.inputs.sampling import inverse_rosenblatt

    inputs = RandomInputs.from_spec({"a": "uniform(0, 1)", "b": "normal(0, 1)"})
    exact = inputs.joint.inv

    def broken(u):
        x = exact(u)
        x[1, 1] = np.inf
        return x

    monkeypatch.setattr(inputs.joint, "inv", broken)
    with pytest.raises(ValueError, match=r"input 'b': the inverse transform of u = 0\.75 "
                                         r"gave inf; check the distribution's parameters"):
        inverse_rosenblatt(inputs, np.array([[0.5, 0.5], [0.2, 0.75]]))


def test_chaospys_own_failed_check_is_refused_naming_the_inputs(monkeypatch):
    from uqkit.inputs.sampling import inverse_rosenblatt

    inputs = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})

    def fails(u):
        raise AssertionError

    monkeypatch.setattr(inputs.joint, "inv", fails)
    with pytest.raises(ValueError, match=r"could not invert the joint distribution of "
                                         r"\('a', 'b'\) at these points \(AssertionError "
                                         r"\); for a copula, a smaller parameter"):
        inverse_rosenblatt(inputs, np.array([[0.5, 0.5]]))


def test_an_array_of_samples_is_a_copy_that_leaves_them_as_they_were():
    """NumPy 2's np.array(samples) asks for a copy: it got the values themselves."""
    s = sample(RandomInputs.from_spec({"x": "normal(0, 1)", "y": "uniform(0, 1)"}), 3, seed=0)
    before = s.values.copy()
    a = np.array(s)
    a[0, 0] = 99.0
    np.testing.assert_array_equal(s.values, before)
    assert np.asarray(s) is s.values  # no copy asked for: none made


@pytest.mark.parametrize("args, kwargs, message", [
    ((3, 0), {}, r"n must be a positive integer, got n=0"),
    ((0, 5), {}, r"d must be a positive integer, got d=0"),
    ((3, 2.5), {}, r"n must be a positive integer, got n=2.5"),
    ((2, 3), {"seed": 1.5}, r"seed must be an integer >= 0, got seed=1.5"),
])
def test_unit_sample_refuses_what_sample_refuses(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        unit_sample(*args, **kwargs)
