"""The maps of :mod:`uqkit.inputs.transforms` against scipy's marginals and the Gaussian
copula's Rosenblatt transform in closed form (mutation testing found ``x_to_u`` unchecked
here, and the ends of the unit interval: docs/development/mutation_testing.md)."""
import numpy as np
import pytest
from scipy import special, stats

from uqkit.inputs import RandomInputs
from uqkit.inputs.transforms import EPS, unit_to_x, u_to_x, x_to_u

#: Three marginals and their scipy twins (lognormal of mean 200 and std 20: sigma^2 =
#: log(1 + 0.1^2), mu = log 200 - sigma^2 / 2).
INPUTS = RandomInputs.from_spec({"e": "lognormal(mean=200, std=20)", "p": "normal(3, 0.5)",
                                 "h": "uniform(0.1, 0.3)"})
_S2 = np.log(1.01)
SCIPY = [stats.lognorm(np.sqrt(_S2), scale=np.exp(np.log(200.0) - _S2 / 2)),
         stats.norm(3.0, 0.5), stats.uniform(0.1, 0.2)]
X = np.array([[180.0, 2.2, 0.15], [200.0, 3.0, 0.2], [260.0, 4.4, 0.299]])


def test_x_to_u_is_the_normal_quantile_of_each_marginals_cdf():
    truth = np.column_stack([stats.norm.ppf(d.cdf(X[:, j])) for j, d in enumerate(SCIPY)])
    np.testing.assert_allclose(x_to_u(INPUTS, X), truth, rtol=1e-9, atol=1e-12)


def test_u_to_x_and_unit_to_x_are_scipys_quantiles_and_invert_x_to_u():
    u = np.array([[-1.5, 0.0, 2.0], [0.3, -2.2, -0.4]])
    truth = np.column_stack([d.ppf(stats.norm.cdf(u[:, j])) for j, d in enumerate(SCIPY)])
    np.testing.assert_allclose(u_to_x(INPUTS, u), truth, rtol=1e-9)
    np.testing.assert_allclose(unit_to_x(INPUTS, stats.norm.cdf(u)), truth, rtol=1e-9)
    np.testing.assert_allclose(x_to_u(INPUTS, u_to_x(INPUTS, u)), u, atol=1e-9)


def test_x_to_u_of_a_gaussian_copula_is_its_rosenblatt_transform():
    """Nataf with correlation rho: z = Phi^-1(F(x)) per input, then u1 = z1 and
    u2 = (z2 - rho z1) / sqrt(1 - rho^2), the conditional of the second given the first."""
    rho = 0.6
    pair = RandomInputs.from_spec({"a": "normal(3, 0.5)", "b": "uniform(0.1, 0.3)"})
    tied = pair.with_copula("nataf", [[1.0, rho], [rho, 1.0]])
    x = np.array([[2.5, 0.12], [3.4, 0.27], [3.0, 0.2]])
    z = np.column_stack([SCIPY[1].cdf(x[:, 0]), SCIPY[2].cdf(x[:, 1])])
    z = stats.norm.ppf(z)
    truth = np.column_stack([z[:, 0], (z[:, 1] - rho * z[:, 0]) / np.sqrt(1 - rho ** 2)])
    np.testing.assert_allclose(x_to_u(tied, x), truth, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(u_to_x(tied, truth), x, rtol=1e-8)


def test_points_past_double_precision_map_to_the_clipped_u_not_to_infinity():
    """A point 100 sigma out has F(x) = 0 or 1 in floating point: u is Phi^-1(EPS) or
    Phi^-1(1 - EPS), finite, not -inf or inf."""
    normal = RandomInputs.from_spec({"a": "normal(0, 1)"})
    u = x_to_u(normal, [[-100.0], [100.0]])[:, 0]
    np.testing.assert_array_equal(u, special.ndtri([EPS, 1.0 - EPS]))
    assert u[0] < -8 and u[1] > 8


def test_the_ends_of_the_unit_interval_map_to_the_clipped_quantiles():
    """P = 0 and 1 are allowed (a design's corner) and map to F^-1(EPS) and F^-1(1 - EPS),
    finite; only P outside [0, 1] is refused. (chaospy's normal has the support
    [-8.22, 8.22], which holds Phi^-1(1 - EPS) = 8.2095 but not Phi^-1(EPS) = -8.2221.)"""
    normal = RandomInputs.from_spec({"a": "normal(0, 1)"})
    x = unit_to_x(normal, [[0.0], [1.0]])[:, 0]
    np.testing.assert_allclose(x, [-8.22, special.ndtri(1.0 - EPS)], rtol=1e-12)
    # a lognormal's P = 0 is its far tail at EPS (87.6 here), not the support's end 0, where
    # a model would take log 0
    lognormal = RandomInputs.from_spec({"e": "lognormal(mean=200, std=20)"})
    ends = unit_to_x(lognormal, [[0.0], [EPS]])[:, 0]
    assert ends[0] == ends[1] and 80 < ends[0] < 90
    for bad in (-1e-12, 1.0 + 1e-12):
        with pytest.raises(ValueError, match=r"P\[0, 0\] \(input 'a'\) is .* outside \[0, 1\]"):
            unit_to_x(normal, [[bad]])


def _off_point():
    """A Clayton pair and a point where chaospy's inverse does not converge (see
    test_sampling's copula test)."""
    pair = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})
    return pair.with_copula("clayton", 2), np.array([[1.0, -7.5], [0.0, 0.5]])


def test_off_nan_gives_a_row_of_nan_where_the_copulas_inverse_is_off():
    tied, u = _off_point()
    with pytest.raises(ValueError, match="did not converge there"):
        u_to_x(tied, u)
    for x in (u_to_x(tied, u, off="nan"), unit_to_x(tied, stats.norm.cdf(u), off="nan")):
        assert np.isnan(x[0]).all() and np.isfinite(x[1]).all()


def test_a_bad_off_is_named():
    with pytest.raises(ValueError, match="off must be 'raise' or 'nan', got 'skip'"):
        unit_to_x(INPUTS, [[0.5, 0.5, 0.5]], off="skip")


def test_messages_name_the_argument_and_the_input():
    with pytest.raises(ValueError, match=r"^X\[1, 2\] \(input 'h'\) is inf$"):
        x_to_u(INPUTS, [[200.0, 3.0, 0.2], [200.0, 3.0, np.inf]])
    with pytest.raises(ValueError, match=r"P must be an \(n, 3\) array"):
        unit_to_x(INPUTS, [[0.5, 0.5]])
