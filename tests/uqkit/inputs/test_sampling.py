import numpy as np
import pytest

from uqkit.presets import table3
from uqkit.inputs.sampling import Samples, sample


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
