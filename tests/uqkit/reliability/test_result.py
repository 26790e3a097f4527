"""The reliability results' shared pieces: the reliability index, the exact binomial
interval and the JSON form of a result."""
import math

import numpy as np
import pytest
from scipy import stats

from uqkit.reliability import ConvergenceError, ReliabilityResult, beta_of, clopper_pearson


@pytest.mark.parametrize("k,n", [(0, 50), (3, 50), (17, 1000), (50, 50), (1, 10 ** 6)])
def test_clopper_pearson_matches_scipy(k, n):
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.9, method="exact")
    # scipy finds the bounds by root finding (relative error ~1e-7 at n = 10^6)
    np.testing.assert_allclose(clopper_pearson(k, n, 0.9), (ci.low, ci.high), rtol=1e-6)
    if k == 1:  # closed form: 1 - (1 - L)^n = 0.05
        assert clopper_pearson(k, n, 0.9)[0] == pytest.approx(-math.expm1(math.log(0.95) / n),
                                                               rel=1e-12)


@pytest.mark.parametrize("k,n,level", [(3, 1000, 0.95), (1, 24, 0.95), (17, 1000, 0.9),
                                       (40, 100, 0.99), (99, 100, 0.95)])
def test_clopper_pearson_bounds_solve_the_binomial_tail_equations(k, n, level):
    # the definition: P(X >= k | lower) = P(X <= k | upper) = (1 - level) / 2, with the
    # binomial's own tails (a route apart from the beta quantiles), to 1e-12
    lower, upper = clopper_pearson(k, n, level)
    half = (1 - level) / 2
    assert stats.binom.sf(k - 1, n, lower) == pytest.approx(half, rel=1e-12)
    assert stats.binom.cdf(k, n, upper) == pytest.approx(half, rel=1e-12)


def test_the_reliability_index_is_the_standard_normal_quantile():
    for pf in (0.5, 0.1, 1.3498980316301e-3, 1e-9):
        assert beta_of(pf) == pytest.approx(-stats.norm.ppf(pf), rel=1e-12)
    assert beta_of(1.3498980316300946e-3) == pytest.approx(3.0, rel=1e-12)
    assert beta_of(0.0) == math.inf and beta_of(1.0) == -math.inf


def test_a_result_writes_plain_json_with_nan_and_infinity_as_null():
    import json

    r = ReliabilityResult(pf=1e-3, cov=math.nan, ci=(math.nan, math.nan), beta=3.09,
                          model_runs=12, method="form",
                          design_point={"u": np.array([1.0, 2.0]), "x": np.array([3.0, 4.0])},
                          alpha=np.array([0.6, 0.8]), info={"kappa": [math.inf]})
    out = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert out["pf"] == 1e-3 and out["cov"] is None and out["ci"] == [None, None]
    assert out["design_point"] == {"u": [1.0, 2.0], "x": [3.0, 4.0]}
    assert out["alpha"] == [0.6, 0.8] and out["info"] == {"kappa": [None]}
    assert out["level"] == 0.95 and out["seconds"] == 0.0 and out["history"] == []
    assert out["method"] == "form" and out["model_runs"] == 12


def test_a_convergence_error_keeps_its_message_and_history():
    err = ConvergenceError("FORM did not converge in 3 iterations", [{"k": 1}])
    assert str(err) == "FORM did not converge in 3 iterations" and err.history == [{"k": 1}]
    assert ConvergenceError("no history").history == []
