"""A quadrature rule in probability: integrals over (0, 1) of a marginal's quantile function,
such as its moments ``E[g(X)] = int_0^1 g(F^-1(u)) du``, where the quantile function is
singular at the ends (a beta's ``sqrt(u)`` at 0). Used for the orthonormal polynomials of a
bounded marginal (:mod:`uqkit.inputs.polynomials`) and for moments that chaospy gets wrong
(:meth:`uqkit.inputs.RandomInputs.std`).

Imports: numpy.

Example:
    >>> u, w = probability_rule()
    >>> round(float(w.sum()), 12), round(float(w @ u ** 2), 12)   # 1 and 1/3
    (1.0, 0.333333333333)
"""
import numpy as np

__all__ = ["PANEL_POINTS", "probability_rule"]


def probability_rule():
    """Nodes and weights of a composite Gauss-Legendre rule on (0, 1), its panels graded
    geometrically towards both ends (down to 1e-16 and 1 - 1e-15), where a bounded marginal's
    quantile function has its singularities (a beta's sqrt(u) at 0, say)."""
    ends = 10.0 ** -np.arange(16, 1, -1)  # 1e-16 .. 1e-2
    edges = np.unique(np.concatenate([[0.0], ends, np.linspace(0.01, 0.99, 129),
                                      1 - ends[1:][::-1], [1.0]]))
    x, w = np.polynomial.legendre.leggauss(PANEL_POINTS)
    half = np.diff(edges) / 2
    nodes = (edges[:-1] + half)[:, None] + half[:, None] * x[None, :]
    return nodes.ravel(), (half[:, None] * w[None, :]).ravel()


#: Gauss-Legendre points per panel of :func:`probability_rule`.
PANEL_POINTS = 20
