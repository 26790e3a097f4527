"""Maps between physical inputs and the analyses' standard spaces.

Inputs are handled in the standard normal space ``u`` of the Rosenblatt transform of the
joint distribution: ``x = F^-1(Phi(u))`` (:func:`u_to_x`) and ``u = Phi^-1(F(x))``
(:func:`x_to_u`), with F the joint's Rosenblatt transform (``inputs.joint.fwd`` /
``inputs.joint.inv``), so copulas are respected; :func:`unit_to_x` maps the unit hypercube.

Imports: numpy, scipy.special and :mod:`uqkit.inputs.sampling`.

    >>> from uqkit.inputs import RandomInputs
    >>> inputs = RandomInputs.from_spec({"e": "lognormal(mean=200, std=20)"})
    >>> x = u_to_x(inputs, [[0.0], [1.5]])
    >>> x_to_u(inputs, x).round(12).ravel().tolist()      # the inverse map
    [0.0, 1.5]
"""
import numpy as np
from scipy import special

from .sampling import inverse_rosenblatt

__all__ = ["EPS", "unit_to_x", "u_to_x", "x_to_u"]

#: Probabilities are clipped to [EPS, 1 - EPS] before the inverse Rosenblatt transform, so
#: that ``|u|`` up to about 8 maps to finite x (1 - Phi(8.3) is below double precision).
EPS = 1e-16


def unit_to_x(inputs, P):
    """(n, d) points of the unit hypercube -> (n, d) physical inputs (inverse Rosenblatt)."""
    return inverse_rosenblatt(inputs, np.clip(np.asarray(P, dtype=float), EPS, 1.0 - EPS))


def u_to_x(inputs, U):
    """(n, d) standard normal points -> (n, d) physical inputs: ``F^-1(Phi(u))``."""
    return unit_to_x(inputs, special.ndtr(np.asarray(U, dtype=float)))


def x_to_u(inputs, X):
    """(n, d) physical inputs -> (n, d) standard normal points: ``Phi^-1(F(x))``."""
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    P = np.asarray(inputs.joint.fwd(X.T), dtype=float).reshape(d, n).T
    return special.ndtri(np.clip(P, EPS, 1.0 - EPS))
