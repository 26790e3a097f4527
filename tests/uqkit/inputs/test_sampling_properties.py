"""Properties of sampling that a wrong number would break: seeds repeat, no global random state
is read or changed, threads are safe, marginals and copulas are followed."""
import threading

import numpy as np
import pytest
from scipy import stats

from uqkit import sample
from uqkit.inputs import RandomInputs
from uqkit.presets import table3


# 1. sampling: no global state, unseeded calls differ, exact distributions --------------------
def test_unseeded_samples_differ_and_seeded_ones_repeat():
    a, b = sample(table3(), 50), sample(table3(), 50)
    assert not np.array_equal(a.values, b.values)
    for rule in ("random", "lhs", "sobol", "halton"):
        assert np.array_equal(sample(table3(), 32, rule, seed=3).values,
                              sample(table3(), 32, rule, seed=3).values)
        assert not np.array_equal(sample(table3(), 32, rule).values,
                                  sample(table3(), 32, rule).values)


def test_sampling_neither_reads_nor_changes_the_global_random_state():
    np.random.seed(7)
    expected = np.random.random(3)
    np.random.seed(7)
    sample(table3(), 100, seed=1)
    sample(table3(), 100)
    assert np.array_equal(np.random.random(3), expected)


def test_sampling_is_thread_safe():
    out = [None] * 8

    def draw(k):
        out[k] = sample(table3(), 2000, rule="lhs", seed=4).values

    threads = [threading.Thread(target=draw, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(o, out[0]) for o in out)


@pytest.mark.parametrize("rule", ["random", "lhs", "sobol", "halton"])
def test_samples_follow_the_marginals(rule):
    inputs = table3()
    s = sample(inputs, 4096, rule, seed=2)
    for name in inputs.names:
        d = inputs.marginal(name)
        assert stats.kstest(s[name], lambda v: np.asarray(d.cdf(v))).pvalue > 0.01, name


def test_a_copula_is_sampled_through_the_inverse_rosenblatt_transform():
    inputs = RandomInputs.from_spec({"x": "normal(0, 1)", "y": "normal(0, 1)"}) \
        .with_copula("nataf", [[1.0, 0.7], [0.7, 1.0]])
    s = sample(inputs, 20000, "sobol", seed=0)
    assert np.corrcoef(s["x"], s["y"])[0, 1] == pytest.approx(0.7, abs=0.01)
    assert stats.kstest(s["y"], "norm").pvalue > 0.01
