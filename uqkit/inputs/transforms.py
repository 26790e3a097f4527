"""Maps between physical inputs and the analyses' standard spaces.

Inputs are handled in the standard normal space ``u`` of the Rosenblatt transform of the
joint distribution: ``x = F^-1(Phi(u))`` (:func:`u_to_x`) and ``u = Phi^-1(F(x))``
(:func:`x_to_u`), with F the joint's Rosenblatt transform (``inputs.joint.fwd`` /
``inputs.joint.inv``), so copulas are respected; :func:`unit_to_x` maps the unit hypercube.

Imports: numpy, scipy.special and :mod:`uqkit.inputs.sampling` (and
:mod:`uqkit.inputs.random_inputs`, with chaospy, when called).

    >>> from uqkit.inputs import RandomInputs
    >>> inputs = RandomInputs.from_spec({"e": "lognormal(mean=200, std=20)"})
    >>> x = u_to_x(inputs, [[0.0], [1.5]])
    >>> x_to_u(inputs, x).round(12).ravel().tolist()      # the inverse map
    [0.0, 1.5]
"""
import numpy as np
from scipy import special

from .sampling import inverse_rosenblatt

__all__ = ["EPS", "points", "unit_to_x", "u_to_x", "x_to_u"]

#: Probabilities are clipped to [EPS, 1 - EPS] before the inverse Rosenblatt transform, so
#: that ``|u|`` up to about 8 maps to finite x (1 - Phi(8.3) is below double precision).
EPS = 1e-16


def points(inputs, A, what):
    """``A`` as an (n, d) float array of finite points for ``inputs`` (d of them); a
    ValueError naming what is wrong (any array of n d numbers was taken: [[0.0], [1.0]] as
    one point of two inputs came back as a column, and a NaN raised chaospy's bare
    AssertionError)."""
    from .random_inputs import check_inputs

    check_inputs(inputs)
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[1] != inputs.dim or not len(A):
        raise ValueError(f"{what} must be an (n, {inputs.dim}) array of points, one column "
                         f"per input {inputs.names}, got shape {A.shape}")
    bad = ~np.isfinite(A)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"{what}[{r}, {c}] (input {inputs.names[c]!r}) is "
                         f"{float(A[r, c])!r}")
    return A


def unit_to_x(inputs, P, off="raise"):
    """(n, d) points of the unit hypercube -> (n, d) physical inputs (inverse Rosenblatt);
    ``off="nan"``: a point where a copula's inverse is off comes back as a row of NaN, where
    it raises by default (:func:`uqkit.inputs.sampling.inverse_rosenblatt`)."""
    P = points(inputs, P, "P")
    outside = (P < 0) | (P > 1)
    if outside.any():  # clipped, it was the edge of the distribution without a word
        r, c = np.argwhere(outside)[0]
        raise ValueError(f"P[{r}, {c}] (input {inputs.names[c]!r}) is {float(P[r, c])!r}, "
                         "outside [0, 1]")
    if off not in ("raise", "nan"):
        raise ValueError(f"off must be 'raise' or 'nan', got {off!r}")
    return inverse_rosenblatt(inputs, np.clip(P, EPS, 1.0 - EPS), off)


def u_to_x(inputs, U, off="raise"):
    """(n, d) standard normal points -> (n, d) physical inputs: ``F^-1(Phi(u))`` (``off``: as
    in :func:`unit_to_x`)."""
    return unit_to_x(inputs, special.ndtr(points(inputs, U, "U")), off)


def x_to_u(inputs, X):
    """(n, d) physical inputs -> (n, d) standard normal points: ``Phi^-1(F(x))``."""
    X = points(inputs, X, "X")
    n, d = X.shape
    P = np.asarray(inputs.joint.fwd(X.T), dtype=float).reshape(d, n).T
    return special.ndtri(np.clip(P, EPS, 1.0 - EPS))
