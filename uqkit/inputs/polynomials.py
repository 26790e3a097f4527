"""Polynomials orthonormal for the inputs' distributions: the basis of a polynomial chaos
expansion (PCE).

Each input i gets a standardised variable ``z_i`` and the polynomials ``p_0 .. p_P``
orthonormal for the distribution of ``z_i``, from their three-term recurrence (Gautschi 2004,
Sec. 1.3)::

    sqrt(b_{k+1}) p_{k+1}(z) = (z - a_k) p_k(z) - sqrt(b_k) p_{k-1}(z),   p_0 = 1, p_-1 = 0

- a normal input: ``z = (x - mu) / sigma``, Hermite (``a_k = 0``, ``b_k = k``);
- a uniform input: ``z`` on [-1, 1], Legendre (``a_k = 0``, ``b_k = k^2 / (4 k^2 - 1)``);
- any other input with a bounded support (beta, triangular, truncated normal, ...): ``z`` on
  [-1, 1] by the affine map ``z = s x + t`` of its support, and the recurrence of its own
  distribution in z, by Stieltjes's procedure on its quantiles at the nodes of a graded
  Gauss-Legendre rule in probability (:func:`marginal_recurrence`; orthonormal to 1e-10
  against adaptive quadrature of its density, ``tests/uqkit/inputs/test_polynomials.py``).
  A model polynomial in such an input is then a finite expansion: its Sobol' indices are
  exact;
- any other input (lognormal, gamma, Gumbel, ...), and every input of a dependent joint: its
  standard normal Rosenblatt variable ``z = Phi^-1(F(x))``, Hermite. A lognormal's own
  polynomials are no basis at all (its moments do not determine it), and the tails of
  unbounded ones make their recurrences costly to compute; the normal variable is a smooth
  map of x for these.

The multivariate basis holds the products ``prod_i p_{a_i}(z_i)`` of total degree
``sum_i a_i <= P``, graded, the constant first (:func:`total_degree_indices`).

Why not :func:`chaospy.generate_expansion` on the inputs' own distributions: its polynomials
are monomials in x, which cancel catastrophically away from 0 (normal(1e4, 1)'s degree-2
polynomial gave Sobol' indices 0.0001 / 0 for 0.2 / 0.8), and chaospy's arithmetic on
distributions cannot standardise a beta (``(Beta - 3) * 0.5`` raises AttributeError in its
recurrence). The Rosenblatt normal variable alone, used before for bounded inputs, is a
non-polynomial map of x there: indices 1e-3 to 1e-2 off for a quadratic model.

Reference: W. Gautschi (2004), Orthogonal Polynomials: Computation and Approximation,
Oxford University Press.

>>> z = np.array([1.0])
>>> np.round(univariate_values(z, *legendre_recurrence(2), 2)[:, 0] ** 2, 12)  # 2k + 1 at z = 1
array([1., 3., 5.])
"""
import math

import numpy as np
from scipy import special

from .quadrature import probability_rule as _probability_rule
from .transforms import EPS

__all__ = ["hermite_recurrence", "legendre_recurrence", "univariate_values",
           "total_degree_indices", "discrete_recurrence", "marginal_recurrence",
           "input_germs", "basis_values"]


def hermite_recurrence(order):
    """The recurrence ``(alpha, beta)``, each ``order + 1`` long, of the standard normal's
    orthonormal polynomials (Hermite): ``alpha_k = 0``, ``beta_k = k`` (``beta_0 = 1``, the
    mass)."""
    beta = np.arange(order + 1, dtype=float)
    beta[0] = 1.0
    return np.zeros(order + 1), beta


def legendre_recurrence(order):
    """The recurrence of the uniform distribution on [-1, 1]'s orthonormal polynomials
    (Legendre): ``alpha_k = 0``, ``beta_k = k^2 / (4 k^2 - 1)`` (``beta_0 = 1``)."""
    k = np.arange(order + 1, dtype=float)
    beta = k ** 2 / (4 * k ** 2 - 1)
    beta[0] = 1.0
    return np.zeros(order + 1), beta


def univariate_values(z, alpha, beta, order):
    """(order + 1, m) values at the points ``z`` (m,) of the polynomials of degree 0 to
    ``order`` orthonormal for the measure of the recurrence ``alpha``, ``beta`` (mass
    ``beta[0]`` = 1)."""
    z = np.asarray(z, dtype=float)
    values = np.empty((order + 1,) + z.shape)
    values[0] = 1.0
    if order >= 1:
        values[1] = (z - alpha[0]) / math.sqrt(beta[1])
    for k in range(1, order):
        values[k + 1] = ((z - alpha[k]) * values[k] - math.sqrt(beta[k]) * values[k - 1]) \
            / math.sqrt(beta[k + 1])
    return values


def _of_degree(d, degree):
    """The multi-indices of d inputs whose degrees sum to ``degree``, the first input's
    falling."""
    if d == 1:
        yield (degree,)
        return
    for first in range(degree, -1, -1):
        for rest in _of_degree(d - 1, degree - first):
            yield (first,) + rest


def total_degree_indices(d, order):
    """(terms, d) multi-indices of total degree at most ``order``, ``C(order + d, d)`` of them,
    graded, the constant first.

    >>> total_degree_indices(2, 2).tolist()
    [[0, 0], [1, 0], [0, 1], [2, 0], [1, 1], [0, 2]]
    """
    rows = [a for degree in range(order + 1) for a in _of_degree(d, degree)]
    return np.array(rows, dtype=int).reshape(len(rows), d)


def _bounded_support(marginal):
    """``(lower, upper)`` of ``marginal``'s support where chaospy gives it a bounded one (its
    CDF exactly 0 and 1 at the ends chaospy reports; an unbounded one's ends cut a tail of
    about 1e-16 or more), else None."""
    lower, upper = float(np.ravel(marginal.lower)[0]), float(np.ravel(marginal.upper)[0])
    bounded = (math.isfinite(lower) and math.isfinite(upper) and lower < upper
               and float(marginal.cdf(lower)) == 0.0 and float(marginal.cdf(upper)) == 1.0)
    return (lower, upper) if bounded else None


def discrete_recurrence(z, weights, order):
    """The recurrence ``(alpha, beta)`` (``order + 1`` each, ``beta_0`` = 1) of the
    polynomials orthonormal for the discrete measure ``weights`` (summing to 1) at the
    points ``z``: Stieltjes's procedure on orthonormal vectors, each reorthogonalised against
    the previous ones (Gautschi 2004, Sec. 2.2).

    >>> z, w = np.polynomial.legendre.leggauss(10)
    >>> alpha, beta = discrete_recurrence(z, w / 2, 3)
    >>> np.round(beta, 12).tolist()                    # Legendre: k^2 / (4 k^2 - 1)
    [1.0, 0.333333333333, 0.266666666667, 0.257142857143]
    """
    alpha, beta = np.zeros(order + 1), np.ones(order + 1)
    basis = [np.ones_like(z)]
    for k in range(order + 1):
        q = basis[-1]
        alpha[k] = float(np.sum(weights * z * q * q))
        if k == order:
            break
        r = (z - alpha[k]) * q - (math.sqrt(beta[k]) * basis[-2] if k else 0.0)
        for previous in basis:
            r = r - np.sum(weights * r * previous) * previous
        beta[k + 1] = float(np.sum(weights * r * r))
        if not beta[k + 1] > 0:
            break
        basis.append(r / math.sqrt(beta[k + 1]))
    return alpha, beta


def marginal_recurrence(marginal, order):
    """The recurrence ``(alpha, beta)`` of ``marginal``'s orthonormal polynomials in its
    variable on [-1, 1], and that map ``(s, t)`` (``z = s x + t``); None where the marginal's
    support is not bounded or its recurrence is not valid.

    The recurrence is that of the marginal's measure itself in z, by
    :func:`discrete_recurrence` on its quantiles at the nodes of a graded Gauss-Legendre rule
    in probability (``_probability_rule``): chaospy's own (``chaospy.stieltjes``) works
    in x, and cancels for a support far from 0 (a triangle on [299, 301]: its polynomials'
    Gram matrix 5e-3 from the identity at order 5, 1.0 on [999, 1001]; indices 0.987 / 0.013
    for 0.264 / 0.736 without a warning), and it is wrong for some of chaospy's derived
    distributions (``Uniform(0, 1) ** 2``: a mean of 0.0137 for 1/3)."""
    support = _bounded_support(marginal)
    if support is None:
        return None
    lower, upper = support
    s = 2.0 / (upper - lower)
    t = -1.0 - s * lower
    u, w = _probability_rule()
    try:
        x = np.asarray(marginal.inv(u), dtype=float).ravel()
    except Exception:  # noqa: BLE001 - a quantile chaospy cannot compute: Rosenblatt
        return None
    if x.shape != u.shape or not np.isfinite(x).all():
        return None
    alpha, beta = discrete_recurrence(np.clip(s * x + t, -1.0, 1.0), w, order)
    if not (np.isfinite(alpha).all() and np.isfinite(beta).all() and (beta > 0).all()):
        return None
    return (alpha, beta), (s, t)


def input_germs(inputs, P, order):
    """Per input its standardised variable at the unit-hypercube points ``P`` (m, d): ``Z``
    (m, d), the recurrences (one ``(alpha, beta)`` per input) and the space's name: "inputs"
    (every input its own polynomials), "inputs; standard normal for NAMES" or
    "rosenblatt-normal" (a dependent joint: every input its Rosenblatt normal variable)."""
    import chaospy

    normal = special.ndtri(np.clip(P, 1e-16, 1 - 1e-16))
    if getattr(inputs.joint, "stochastic_dependent", False) or not (
            isinstance(inputs.joint, chaospy.J) or inputs.dim == 1):
        return normal, [hermite_recurrence(order)] * inputs.dim, "rosenblatt-normal"
    Z, recurrences, others = normal.copy(), [], []
    for i, name in enumerate(inputs.names):
        marginal = inputs.marginal(name)  # a one-input joint comes unwrapped
        if isinstance(marginal, chaospy.Normal):
            recurrences.append(hermite_recurrence(order))
            continue
        if isinstance(marginal, chaospy.Uniform):
            Z[:, i] = 2 * P[:, i] - 1
            recurrences.append(legendre_recurrence(order))
            continue
        own = marginal_recurrence(marginal, order)
        if own is None:
            others.append(name)
            recurrences.append(hermite_recurrence(order))
            continue
        (s, t) = own[1]
        x = np.asarray(marginal.inv(np.clip(P[:, i], EPS, 1 - EPS)), dtype=float).ravel()
        Z[:, i] = s * x + t
        recurrences.append(own[0])
    return Z, recurrences, ("inputs" if not others else
                            f"inputs; standard normal for {', '.join(others)}")


def basis_values(Z, recurrences, indices):
    """(m, terms) values at ``Z`` (m, d) of the products of each input's orthonormal
    polynomials (``recurrences``) of degrees ``indices`` (terms, d)."""
    order = int(indices.max(initial=0))
    out = np.ones((Z.shape[0], len(indices)))
    for i, (alpha, beta) in enumerate(recurrences):
        values = univariate_values(Z[:, i], alpha, beta, order)  # (order + 1, m)
        out *= values[indices[:, i]].T
    return out
