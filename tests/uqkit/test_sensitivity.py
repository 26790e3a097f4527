"""Sobol' indices against closed forms (Ishigami, Sobol' G, polynomials, a Nataf pair)."""
import json
import math
import warnings

import chaospy
import matplotlib
import numpy as np
import pytest

from uqkit.reliability.problems import ishigami, ishigami_inputs
from uqkit.reliability.problems import ishigami_indices as ishigami_exact
from uqkit.inputs import RandomInputs
from uqkit.execution.propagation import PropagationError
from uqkit.sensitivity import (SobolResult, _warn_inconsistent, pce_indices, plot_sobol,
                               saltelli_estimates, sobol_indices, sobol_indices_surrogate)

matplotlib.use("Agg")

G_A = np.array([0.0, 1.0, 4.5, 9.0, 99.0])


def g_function(X):
    return np.prod((np.abs(4 * X - 2) + G_A) / (1 + G_A), axis=1)


def linear_two(X):
    """Two outputs: x1 + 2 x2 and x1 (module level, picklable for the process pool)."""
    return np.column_stack([X[:, 0] + 2 * X[:, 1], X[:, 0]])


def covers(ci, exact):
    return bool(np.all((ci[0] <= exact) & (exact <= ci[1])))


def test_ishigami_within_0_01_and_covered():
    first, total = ishigami_exact()
    res = sobol_indices(ishigami, ishigami_inputs(), n=2 ** 13, seed=0, executor="serial")
    assert res.model_runs == 5 * 2 ** 13 and res.names == ("x1", "x2", "x3")
    assert res.first.shape == (3,) and res.first_ci.shape == (2, 3)
    # measured at seed 0: max errors 4e-4 (first) and 4e-4 (total)
    assert np.abs(res.first - first).max() < 0.01
    assert np.abs(res.total - total).max() < 0.01
    assert covers(res.first_ci, first) and covers(res.total_ci, total)


def test_ishigami_within_0_02_at_4096_over_seeds():
    first, total = ishigami_exact()
    for seed in (1, 2):
        res = sobol_indices(ishigami, ishigami_inputs(), n=2 ** 12, seed=seed,
                            executor="serial")
        assert np.abs(res.first - first).max() < 0.02
        assert np.abs(res.total - total).max() < 0.02
        assert covers(res.first_ci, first) and covers(res.total_ci, total)


def test_sobol_g_function():
    Vi = 1 / (3 * (1 + G_A) ** 2)
    V = np.prod(1 + Vi) - 1
    first = Vi / V
    total = Vi * np.prod(1 + Vi) / (1 + Vi) / V
    inputs = RandomInputs.from_spec({f"x{i}": "uniform(0, 1)" for i in range(5)})
    res = sobol_indices(g_function, inputs, n=2 ** 12, seed=3, executor="serial")
    assert np.abs(res.first - first).max() < 0.02
    assert np.abs(res.total - total).max() < 0.02
    assert covers(res.first_ci, first) and covers(res.total_ci, total)


def polynomial(X):
    return 2 * X[:, 0] + X[:, 1] ** 2 + 3 * X[:, 0] * X[:, 2]


def polynomial_inputs():
    return RandomInputs.from_spec({"x1": "normal(0, 1)", "x2": "normal(0, 1)",
                                   "x3": "uniform(-1, 1)"})


def test_pce_exact_on_a_polynomial():
    # V1 = 4, V2 = var(x2^2) = 2, V13 = 9 var(x1) var(x3) = 3; V = 9
    res = sobol_indices(polynomial, polynomial_inputs(), n=128, seed=0, method="pce", order=3,
                        executor="serial")
    np.testing.assert_allclose(res.first, [4 / 9, 2 / 9, 0], atol=1e-10)
    np.testing.assert_allclose(res.total, [7 / 9, 2 / 9, 3 / 9], atol=1e-10)
    np.testing.assert_allclose(res.first_ci, [res.first, res.first], atol=1e-10)
    assert res.model_runs == 128 and res.info["order"] == 3 and res.info["loo_error"][0] < 1e-20


def test_pce_formulas_match_chaospy_sens():
    """Coefficient formulas against chaospy's own Sens_m / Sens_t of the same fit."""
    inputs = ishigami_inputs()
    rng = np.random.default_rng(0)
    P = rng.random((400, 3))
    X = 2 * math.pi * P - math.pi
    Y = ishigami(X)
    first, total, *_ = pce_indices(P, Y, inputs, order=5)
    basis = chaospy.generate_expansion(5, inputs.joint, normed=True)
    fitted = chaospy.fit_regression(basis, X.T, Y)
    np.testing.assert_allclose(first[:, 0], chaospy.Sens_m(fitted, inputs.joint), atol=1e-8)
    np.testing.assert_allclose(total[:, 0], chaospy.Sens_t(fitted, inputs.joint), atol=1e-8)


def test_pce_ishigami_default_order():
    first, total = ishigami_exact()
    res = sobol_indices(ishigami, ishigami_inputs(), n=1024, seed=0, method="pce",
                        bootstrap=0, executor="serial")
    assert res.info["order"] == 8 and np.isnan(res.first_ci).all()
    assert np.abs(res.first - first).max() < 0.01 and np.abs(res.total - total).max() < 0.01


def test_correlated_inputs_go_through_the_copula():
    """y = x1 + x2, standard normals with correlation rho: in the Rosenblatt variables
    y = (1 + rho) z1 + sqrt(1 - rho^2) z2, so S = ST = ((1 + rho) / 2, (1 - rho) / 2)."""
    rho = 0.6
    inputs = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"}).with_copula(
        "nataf", [[1, rho], [rho, 1]])
    exact = np.array([(1 + rho) / 2, (1 - rho) / 2])
    res = sobol_indices(lambda X: X[:, 0] + X[:, 1], inputs, n=2 ** 12, seed=0,
                        executor="serial")
    assert np.abs(res.first - exact).max() < 0.02 and np.abs(res.total - exact).max() < 0.02
    assert covers(res.first_ci, exact) and covers(res.total_ci, exact)
    pce = sobol_indices(lambda X: X[:, 0] + X[:, 1], inputs, n=64, method="pce", order=1,
                        executor="serial")
    assert pce.info["space"] == "rosenblatt-normal"
    np.testing.assert_allclose(pce.first, exact, atol=1e-10)


def test_multi_output_shapes_and_values():
    inputs = RandomInputs.from_spec({"x1": "normal(0, 1)", "x2": "normal(0, 1)"})
    res = sobol_indices(linear_two, inputs, n=1024, seed=0, bootstrap=50, executor="serial")
    assert res.first.shape == (2, 2) and res.total_ci.shape == (2, 2, 2)
    np.testing.assert_allclose(res.first, [[0.2, 1.0], [0.8, 0.0]], atol=0.01)
    json.dumps(res.to_dict())


def test_same_numbers_whatever_the_workers():
    inputs = RandomInputs.from_spec({"x1": "normal(0, 1)", "x2": "normal(0, 1)"})
    a = sobol_indices(linear_two, inputs, n=256, seed=5, bootstrap=30, executor="serial")
    b = sobol_indices(linear_two, inputs, n=256, seed=5, bootstrap=30, executor="local",
                      workers=2, chunk_size=64)
    for key in ("first", "total", "first_ci", "total_ci"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))


def test_estimators_against_a_direct_computation():
    """The estimator formulas on hand-made outputs."""
    rng = np.random.default_rng(1)
    fA, fB, fAB = rng.normal(size=(8, 1)), rng.normal(size=(8, 1)), rng.normal(size=(2, 8, 1))
    first, total = saltelli_estimates(fA, fB, fAB)
    m = np.concatenate([fA, fB]).mean()
    V = np.concatenate([fA, fB]).var()
    i = 1
    assert np.isclose(first[i, 0], np.mean((fB[:, 0] - m) * (fAB[i, :, 0] - fA[:, 0])) / V)
    assert np.isclose(total[i, 0], np.mean((fA[:, 0] - fAB[i, :, 0]) ** 2) / (2 * V))


def test_warnings_for_small_samples():
    inputs = RandomInputs.from_spec({"x1": "normal(0, 1)", "x2": "normal(0, 1)"})
    with pytest.warns(UserWarning, match="n=1000 is not a power of two"):
        sobol_indices(linear_two, inputs, n=1000, bootstrap=0, method="pce",
                      executor="serial")
    # the pick-freeze estimators (scipy.stats.sobol_indices) take a balanced design only
    with pytest.raises(ValueError, match="n must be a power of two .* got n=1000; use n=1024"):
        sobol_indices(linear_two, inputs, n=1000, bootstrap=0, executor="serial")
    bad = SobolResult(("a", "b"), np.array([0.6, -0.2]), np.array([0.3, 0.1]),
                      np.array([[0.55, -0.3], [0.65, -0.1]]),
                      np.array([[0.25, 0.05], [0.35, 0.15]]), 10, 16, "saltelli", 0.95)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _warn_inconsistent(bad)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert "first-order index of 'a'" in messages[0] and "exceeds its total" in messages[0]
    assert "n=16 is too small" in messages[0]
    assert "first-order index of 'b' is negative" in messages[1]


def test_bad_arguments_are_named():
    inputs = RandomInputs.from_spec({"x1": "normal(0, 1)", "x2": "normal(0, 1)"})
    f = linear_two
    for kwargs, match in (({"n": 0}, "n must be an integer >= 2, got n=0"),
                          ({"n": 8.0}, "n=8.0"), ({"bootstrap": 5}, "bootstrap=5"),
                          ({"level": 1.5}, "level=1.5"), ({"level": float("nan")}, "level=nan"),
                          ({"method": "fast"}, "unknown method 'fast'"),
                          ({"seed": -1}, "seed=-1")):
        with pytest.raises(ValueError, match=match):
            sobol_indices(f, inputs, executor="serial", **kwargs)

    def nan_model(X):
        return np.where(X[:, 0] > 1.0, np.nan, X[:, 0])

    with pytest.raises(ValueError, match=r"NaN or failed on \d+ of 64 rows.*first failing "
                                         r"input row \d+: \{'x1': 1\.\d+"):
        sobol_indices(nan_model, inputs, n=16, bootstrap=0, executor="serial")
    # a model that fails on every row the same way stops the run (nothing is stored)
    with pytest.raises(PropagationError, match="same error.*outputs of shape"):
        sobol_indices(lambda X: np.zeros(len(X) + 1), inputs, n=16, bootstrap=0,
                      executor="serial")


class DrawSurrogate:
    """Posterior function draws f_s(x) = x1 + c_s x2, c_s = 1 + 0.3 z_s: each draw has
    S1 = 1 / (1 + c_s^2) exactly (standard normal inputs)."""

    def __init__(self, c):
        self.c = np.asarray(c)

    def predict_distribution(self, X, n_samples, return_samples=True):
        samples = X[None, :, 0] + self.c[:n_samples, None] * X[None, :, 1]
        return type("Pred", (), {"mean": samples.mean(0), "samples": samples})()


def test_surrogate_band_from_function_draws():
    inputs = RandomInputs.from_spec({"x1": "normal(0, 1)", "x2": "normal(0, 1)"})
    c = 1 + 0.3 * np.random.default_rng(0).standard_normal(200)
    res = sobol_indices_surrogate(DrawSurrogate(c), inputs, n=2 ** 12, function_draws=200,
                                  bootstrap=50)
    cbar = c.mean()
    np.testing.assert_allclose(res.first, [1 / (1 + cbar ** 2), cbar ** 2 / (1 + cbar ** 2)],
                               atol=0.01)
    band = np.quantile(1 / (1 + c ** 2), [0.025, 0.975])
    np.testing.assert_allclose(res.first_band[:, 0], band, atol=0.01)
    assert res.model_runs == 0 and res.band_level == 0.95 and res.method == "surrogate"


def test_surrogate_with_predict_only():
    from sklearn.linear_model import LinearRegression

    inputs = RandomInputs.from_spec({"x1": "normal(0, 1)", "x2": "normal(0, 1)"})
    X = np.random.default_rng(0).normal(size=(50, 2))
    reg = LinearRegression().fit(X, X[:, 0] + 2 * X[:, 1])
    with pytest.warns(UserWarning, match="no epistemic band"):
        res = sobol_indices_surrogate(reg, inputs, n=1024, bootstrap=0)
    np.testing.assert_allclose(res.first, [0.2, 0.8], atol=0.01)
    assert res.first_band is None


def test_bar_chart(tmp_path):
    inputs = RandomInputs.from_spec({"x1": "normal(0, 1)", "x2": "normal(0, 1)"})
    res = sobol_indices(linear_two, inputs, n=256, bootstrap=30, executor="serial")
    fig = plot_sobol(res)
    assert len(fig.axes) == 2
    fig.savefig(tmp_path / "sobol.png")
    assert (tmp_path / "sobol.png").stat().st_size > 1000


SOBOL_CALLS = {"rows": 0}


def counted_linear(X):
    SOBOL_CALLS["rows"] += len(X)
    return X[:, 0] + 2 * X[:, 1]


def test_store_reloads_instead_of_recomputing(tmp_path):
    inputs = RandomInputs.from_spec({"x1": "normal(0, 1)", "x2": "normal(0, 1)"})
    SOBOL_CALLS["rows"] = 0
    a = sobol_indices(counted_linear, inputs, n=256, bootstrap=30, executor="serial",
                      store=tmp_path)
    assert SOBOL_CALLS["rows"] == a.model_runs == 1024
    b = sobol_indices(counted_linear, inputs, n=256, bootstrap=30, executor="serial",
                      store=tmp_path)
    assert SOBOL_CALLS["rows"] == 1024 and np.array_equal(a.first_ci, b.first_ci)
    assert (tmp_path / "sobol" / "manifest.json").exists()
