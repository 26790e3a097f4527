"""The inputs' orthonormal polynomials against quadrature and the classical families."""
import math

import chaospy
import numpy as np
import pytest
from numpy.polynomial import hermite_e, legendre
from scipy import integrate

from uqkit.inputs import RandomInputs
from uqkit.inputs.polynomials import (basis_values, discrete_recurrence, hermite_recurrence,
                                      input_germs, legendre_recurrence, marginal_recurrence,
                                      total_degree_indices, univariate_values)

ORDER = 7


def test_hermite_and_legendre_recurrences_give_the_classical_orthonormal_polynomials():
    """He_k / sqrt(k!) and sqrt(2k + 1) P_k, by numpy's own series."""
    z = np.linspace(-3, 3, 41)
    values = univariate_values(z, *hermite_recurrence(ORDER), ORDER)
    for k in range(ORDER + 1):
        expected = hermite_e.hermeval(z, np.eye(ORDER + 1)[k]) / math.sqrt(math.factorial(k))
        np.testing.assert_allclose(values[k], expected, rtol=1e-12, atol=1e-12)
    z = np.linspace(-1, 1, 41)
    values = univariate_values(z, *legendre_recurrence(ORDER), ORDER)
    for k in range(ORDER + 1):
        expected = legendre.legval(z, np.eye(ORDER + 1)[k]) * math.sqrt(2 * k + 1)
        np.testing.assert_allclose(values[k], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("marginal, breaks", [
    (chaospy.Beta(2, 5, lower=3, upper=7), None),       # analytic (Jacobi)
    (chaospy.Beta(2, 3, lower=1000, upper=1001), None),  # far from 0
    (chaospy.Triangle(1, 2, 5), [2.0]),                  # a kink in its quantiles
    (chaospy.Triangle(299, 300, 301), [300.0]),          # chaospy's recurrence: 5e-3 off
    (chaospy.TruncNormal(-1, 3, 0, 1), None),
    (chaospy.Kumaraswamy(2, 3), None),
])
def test_bounded_marginals_get_polynomials_orthonormal_for_their_own_density(marginal, breaks):
    """Gram matrix of the polynomials in x (through z = s x + t) under the marginal's density,
    by adaptive quadrature: the identity to 1e-10."""
    (alpha, beta), (s, t) = marginal_recurrence(marginal, ORDER)
    lower, upper = float(marginal.lower[0]), float(marginal.upper[0])
    assert s * lower + t == pytest.approx(-1) and s * upper + t == pytest.approx(1)

    def entry(i, j):
        def integrand(x):
            p = univariate_values(np.array([s * x + t]), alpha, beta, ORDER)[:, 0]
            return float(marginal.pdf(x)) * p[i] * p[j]
        return integrate.quad(integrand, lower, upper, points=breaks, epsabs=1e-13,
                              epsrel=1e-13, limit=200)[0]

    gram = np.array([[entry(i, j) for j in range(ORDER + 1)] for i in range(ORDER + 1)])
    np.testing.assert_allclose(gram, np.eye(ORDER + 1), atol=1e-10)


@pytest.mark.parametrize("marginal", [chaospy.Normal(0, 1), chaospy.LogNormal(0, 1),
                                      chaospy.Gamma(2), chaospy.Exponential(1),
                                      chaospy.TruncNormal(0, np.inf, 0, 1)])
def test_unbounded_marginals_get_no_recurrence_of_their_own(marginal):
    """A lognormal's polynomials are no basis (its moments do not determine it): every
    marginal with an unbounded support keeps its normal Rosenblatt variable."""
    assert marginal_recurrence(marginal, 3) is None


def test_total_degree_indices_are_the_graded_set_of_the_right_size():
    for d, order in ((1, 4), (3, 3), (5, 2), (10, 3)):
        rows = total_degree_indices(d, order)
        assert rows.shape == (math.comb(order + d, d), d)
        assert len({tuple(r) for r in rows}) == len(rows)
        assert (rows.sum(1) <= order).all() and (rows >= 0).all()
        assert (np.diff(rows.sum(1)) >= 0).all() and not rows[0].any()


def test_basis_values_are_products_of_each_inputs_polynomials():
    inputs = RandomInputs.from_spec({"a": "normal(3, 2)", "b": "uniform(0, 4)",
                                     "c": "beta(2, 5)", "d": "lognormal(mean=1, std=0.5)"})
    P = np.random.default_rng(0).random((30, 4))
    Z, recurrences, space = input_germs(inputs, P, 3)
    assert space == "inputs; standard normal for d"
    X = np.column_stack([np.asarray(inputs.marginal(n).inv(P[:, i])).ravel()
                         for i, n in enumerate(inputs.names)])
    np.testing.assert_allclose(Z[:, 0], (X[:, 0] - 3) / 2, atol=1e-9)
    np.testing.assert_allclose(Z[:, 1], X[:, 1] / 2 - 1, atol=1e-12)
    np.testing.assert_allclose(Z[:, 2], 2 * X[:, 2] - 1, atol=1e-9)
    degrees = total_degree_indices(4, 3)
    Psi = basis_values(Z, recurrences, degrees)
    k = next(i for i, r in enumerate(degrees) if r.tolist() == [1, 2, 0, 0])
    # He_1(z_a) * sqrt(5) P_2(z_b)
    np.testing.assert_allclose(Psi[:, k], Z[:, 0] * math.sqrt(5) * (3 * Z[:, 1] ** 2 - 1) / 2,
                               rtol=1e-12)


def test_a_derived_distributions_recurrence_is_its_own():
    """chaospy's recurrence of Uniform(0, 1) ** 2 has a first coefficient (the mean) of
    0.0137 where the mean is 1/3; the measure's own has 1/3 and the variance 4/45."""
    (alpha, beta), (s, t) = marginal_recurrence(chaospy.Uniform(0, 1) ** 2, 3)
    assert (alpha[0] - t) / s == pytest.approx(1 / 3, rel=1e-10)
    assert beta[1] / s ** 2 == pytest.approx(1 / 5 - 1 / 9, rel=1e-9)


def test_a_dependent_joint_takes_the_rosenblatt_variables():
    """J(a, Beta(lower=a, upper=a + 1)) raised AttributeError from chaospy."""
    a = chaospy.Uniform(0, 1)
    inputs = RandomInputs(["a", "b"], chaospy.J(a, chaospy.Beta(2, 3, lower=a, upper=a + 1)))
    Z, recurrences, space = input_germs(inputs, np.full((4, 2), 0.5), 2)
    assert space == "rosenblatt-normal" and np.allclose(Z, 0)


def test_one_input_and_a_copula_each_get_their_own_space():
    """One input given as a bare distribution (not a chaospy.J): it is still independent
    and gets its own polynomials; two inputs under a copula are dependent and get the
    Rosenblatt normal variables."""
    P = np.array([[0.25], [0.5], [0.9]])
    one = RandomInputs(["a"], chaospy.Uniform(0, 1))
    Z, recurrences, space = input_germs(one, P, 2)
    assert space == "inputs" and np.allclose(Z, 2 * P - 1)
    np.testing.assert_allclose(recurrences[0][1], legendre_recurrence(2)[1])
    pair = RandomInputs.from_spec({"a": "uniform(0, 1)", "b": "uniform(0, 1)"}).with_copula(
        "clayton", 2.0)
    P2 = np.column_stack([P[:, 0], P[::-1, 0]])
    Z2, _, space2 = input_germs(pair, P2, 2)
    assert space2 == "rosenblatt-normal"
    from scipy import special

    np.testing.assert_allclose(Z2, special.ndtri(P2), rtol=1e-12)


def test_a_measure_on_one_point_stops_its_recurrence_where_it_breaks_down():
    """One point carries no polynomial of degree 1: beta_1 = 0, and the recurrence stops
    there, its later terms as initialised (Gautschi's breakdown)."""
    from uqkit.inputs.polynomials import discrete_recurrence

    alpha, beta = discrete_recurrence(np.array([0.5]), np.array([1.0]), 3)
    assert alpha.tolist() == [0.5, 0.0, 0.0, 0.0] and beta.tolist() == [1.0, 0.0, 1.0, 1.0]


def test_a_marginal_whose_quantiles_or_recurrence_fail_gets_none(monkeypatch):
    """Non-finite quantiles (a broken distribution), or a recurrence with a zero, negative
    or non-finite coefficient: no own polynomials (the input then takes the normal
    variable), rather than a basis that is not orthonormal."""
    import uqkit.inputs.polynomials as polynomials

    triangle = chaospy.Triangle(0.0, 0.3, 1.0)
    assert marginal_recurrence(triangle, 3) is not None
    monkeypatch.setattr(triangle, "inv", lambda u: np.where(u > 0.99, np.inf, u))
    assert marginal_recurrence(triangle, 3) is None
    monkeypatch.undo()
    exact = polynomials.discrete_recurrence
    for broken in (0.0, -1e-3, np.nan):
        def recurrence(z, w, order, broken=broken):
            alpha, beta = exact(z, w, order)
            beta[2] = broken
            return alpha, beta

        monkeypatch.setattr(polynomials, "discrete_recurrence", recurrence)
        assert marginal_recurrence(triangle, 3) is None, broken
    monkeypatch.setattr(polynomials, "discrete_recurrence",
                        lambda z, w, order: (np.full(order + 1, np.inf), np.ones(order + 1)))
    assert marginal_recurrence(triangle, 3) is None


def test_a_high_order_recurrence_stays_orthonormal():
    """Stieltjes's procedure at order 40 on 60 equispaced points, where the polynomials
    nearly fill the measure: the Gram matrix of the computed polynomials is the identity to
    1e-9 (3.7e-11 measured). A reorthogonalisation that added the projections instead of
    removing them gave 1.0; no test at low order could tell."""
    z = np.linspace(-1.0, 1.0, 60)
    w = np.full(60, 1 / 60)
    alpha, beta = discrete_recurrence(z, w, 40)
    values = univariate_values(z, alpha, beta, 40)
    np.testing.assert_allclose((values * w) @ values.T, np.eye(41), atol=1e-9)


def test_the_space_names_every_input_that_takes_the_normal_variable():
    inputs = RandomInputs.from_spec({"a": "lognormal(mean=1, std=0.5)", "b": "uniform(0, 1)",
                                     "c": "gamma(2)"})
    _, _, space = input_germs(inputs, np.random.default_rng(1).random((5, 3)), 2)
    assert space == "inputs; standard normal for a, c"
