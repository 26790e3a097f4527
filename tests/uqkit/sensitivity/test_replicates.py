"""Intervals from replicate designs (``sobol_indices(..., replicates=R)``): R independent
scramblings of n / R base rows, the indices their mean and the intervals Student-t, checked
against the estimates of each design made by hand, and for coverage where the bootstrap's
falls short."""
import warnings

import numpy as np
import pytest
from scipy import stats

from uqkit.inputs import RandomInputs
from uqkit.inputs.transforms import unit_to_x
from uqkit.sensitivity import (pick_freeze_design, replicate_designs, saltelli_estimates,
                               sobol_indices)

G_A = np.array([0.0, 1.0, 4.5, 9.0, 99.0])


def g_function(X):
    return np.prod((np.abs(4 * X - 2) + G_A) / (1 + G_A), axis=1)


def g_exact():
    vi = 1 / (3 * (1 + G_A) ** 2)
    v = np.prod(1 + vi) - 1
    return vi / v, np.array([vi[i] * np.prod(np.delete(1 + vi, i)) for i in range(5)]) / v


G_INPUTS = RandomInputs.from_spec({f"g{i}": "uniform(0, 1)" for i in range(5)})
PAIR = RandomInputs.from_spec({"x1": "normal(0, 1)", "x2": "normal(0, 1)"})


def test_each_replicate_is_a_pick_freeze_design_of_its_own_scrambling():
    rows = replicate_designs(3, 64, 4, seed=5)
    assert rows.shape == (5 * 64, 3)
    blocks = rows.reshape(4, 5 * 16, 3)
    for block in blocks:
        a, b, ab = block[:16], block[16:32], block[32:].reshape(3, 16, 3)
        for i in range(3):
            expected = a.copy()
            expected[:, i] = b[:, i]
            np.testing.assert_array_equal(ab[i], expected)
    assert len({block[:16].tobytes() for block in blocks}) == 4  # four scramblings
    np.testing.assert_array_equal(blocks[0], pick_freeze_design(3, 16, np.random.default_rng(5)))
    np.testing.assert_array_equal(rows, replicate_designs(3, 64, 4, seed=5))


def test_indices_are_the_mean_of_the_replicates_and_the_interval_student_t():
    level, replicates, n = 0.9, 8, 256
    res = sobol_indices(g_function, G_INPUTS, n=n, seed=3, replicates=replicates, level=level,
                        executor="serial")
    size = n // replicates
    blocks = unit_to_x(G_INPUTS, replicate_designs(5, n, replicates, 3)).reshape(
        replicates, 7 * size, 5)
    firsts, totals = [], []
    for x in blocks:
        y = g_function(x)[:, None]
        f, t = saltelli_estimates(y[:size], y[size:2 * size], y[2 * size:].reshape(5, size, 1))
        firsts.append(f[:, 0])
        totals.append(t[:, 0])
    for est, value, ci in ((firsts, res.first, res.first_ci), (totals, res.total, res.total_ci)):
        lower, upper = stats.t.interval(level, replicates - 1, loc=np.mean(est, axis=0),
                                        scale=stats.sem(est, axis=0))
        np.testing.assert_allclose(value, np.mean(est, axis=0), rtol=1e-12)
        np.testing.assert_allclose(ci, [lower, upper], rtol=1e-12, atol=1e-15)
    assert res.model_runs == 7 * n and res.n == n
    assert res.info == {"replicates": 8, "replicate_n": 32}


def test_replicate_intervals_cover_the_index_that_the_bootstrap_misses():
    """The g-function's total index of g3 (0.0105), at n = 256: the bootstrap's 95% interval
    held it for 87 of 100 seeds (benchmarks/bench_sobol_coverage.py); 8 replicates'."""
    first, total = g_exact()
    hits = np.zeros((2, 5))
    seeds = 60
    for seed in range(seeds):
        res = sobol_indices(g_function, G_INPUTS, n=256, seed=seed, replicates=8,
                            executor="serial")
        for row, (exact, ci) in enumerate(((first, res.first_ci), (total, res.total_ci))):
            hits[row] += (ci[0] <= exact) & (exact <= ci[1])
    assert hits.min() / seeds >= 0.9, hits / seeds
    assert hits[1, 3] / seeds >= 0.92


def test_a_constant_output_and_a_rare_event_over_the_replicates():
    """A constant output has NaN indices and intervals; an output whose few hits miss some
    replicates (constant on them) is estimated over the others, with a warning."""
    def model(X):
        return np.column_stack([np.full(len(X), 2.0), (X[:, 0] > 2.6) + 0.1 * X[:, 1]])

    with pytest.warns(UserWarning) as caught:
        res = sobol_indices(model, PAIR, n=256, replicates=8, executor="serial")
    assert np.isnan(res.first[:, 0]).all() and np.isnan(res.first_ci[..., 0]).all()
    assert np.isfinite(res.first[:, 1]).all() and np.isfinite(res.total_ci[..., 1]).all()
    assert res.first_ci.shape == (2, 2, 2)
    messages = " ".join(str(w.message) for w in caught)
    assert "replicates have an output that is constant on them" not in messages  # 0.1 x2


def test_a_rare_event_constant_on_some_replicates_is_estimated_over_the_others():
    def model(X):
        return (X[:, 0] > 2.6) + 0.0 * X[:, 1]  # P = 0.0047: 1.2 hits in 256 rows

    with pytest.warns(UserWarning, match=r"of 8 replicates have an output that is constant "
                                         r"on them \(a rare event\?\)"):
        res = sobol_indices(model, PAIR, n=512, replicates=8, seed=1, executor="serial")
    assert np.isfinite(res.first).all() and np.isfinite(res.first_ci).all()


@pytest.mark.parametrize("kwargs, message", [
    ({"replicates": 3}, r"replicates=3 does not split n=256 into replicate designs of a power "
                        r"of two of at least 16 base rows each: use replicates in "
                        r"\[2, 4, 8, 16\]"),
    ({"replicates": 32}, r"replicates=32 does not split n=256"),
    ({"replicates": 1}, r"replicates"),
    ({"replicates": 8, "n": 16}, r"n=16 is too small for replicate intervals: they need "
                                 r"n >= 32"),
    ({"replicates": 8, "bootstrap": 100}, r"replicates=8 gives the intervals of "
                                          r"method='saltelli' without a bootstrap; got "
                                          r"bootstrap=100 too: pass one of them"),
    ({"replicates": 8, "method": "pce"}, r"got method='pce'"),
])
def test_bad_replicates_are_refused_by_name(kwargs, message):
    kwargs = {"n": 256, **kwargs}
    with pytest.raises(ValueError, match=message):
        sobol_indices(lambda X: X[:, 0], PAIR, executor="serial", **kwargs)


def test_replicates_with_bootstrap_zero_and_the_default_bootstrap_unchanged():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = sobol_indices(lambda X: X[:, 0] + 2 * X[:, 1], PAIR, n=256, executor="serial")
        zero = sobol_indices(lambda X: X[:, 0] + 2 * X[:, 1], PAIR, n=256, replicates=8,
                             bootstrap=0, executor="serial")
    assert plain.info == {} and zero.info["replicates"] == 8
    assert np.isfinite(plain.first_ci).all() and np.isfinite(zero.first_ci).all()
    np.testing.assert_allclose(zero.first, [0.2, 0.8], atol=0.02)
