"""Problems with known answers, for checking sensitivity and reliability methods.

* :func:`ishigami` on U(-pi, pi)^3 (:func:`ishigami_inputs`), with its exact Sobol' indices
  (:func:`ishigami_indices`);
* :func:`hyperplane`, ``beta - sum(u) / sqrt(d)`` in standard normal space: exact
  ``Pf = Phi(-beta)``;
* :func:`four_branch`, the four-branch series system (Waarts 2000; Echard et al. 2011) in 2-D
  standard normal space, with the literature's reference Pf (:data:`FOUR_BRANCH_PF`).

Example:
    >>> first, total = ishigami_indices()
    >>> first.round(4).tolist(), total.round(4).tolist()
    ([0.3139, 0.4424, 0.0], [0.5576, 0.4424, 0.2437])
"""
import math

import numpy as np

from ..inputs.random_inputs import RandomInputs

__all__ = ["FOUR_BRANCH_PF", "ishigami", "ishigami_indices", "ishigami_inputs",
           "standard_normals", "hyperplane", "four_branch"]

#: Echard, Gayton & Lemaire (2011), Tables 1 and 2: Monte Carlo with 10^6 runs, by k.
FOUR_BRANCH_PF = {6.0: 4.416e-3, 7.0: 2.233e-3}


def ishigami(X, a=7.0, b=0.1):
    """(n,) Ishigami function of the rows of X (n, 3)."""
    return np.sin(X[:, 0]) + a * np.sin(X[:, 1]) ** 2 + b * X[:, 2] ** 4 * np.sin(X[:, 0])


def ishigami_indices(a=7.0, b=0.1):
    """Exact (first, total) Sobol' indices of :func:`ishigami` on U(-pi, pi)^3:
    V1 = (1 + b pi^4 / 5)^2 / 2, V2 = a^2 / 8, V13 = 8 b^2 pi^8 / 225."""
    pi = math.pi
    V = a ** 2 / 8 + b * pi ** 4 / 5 + b ** 2 * pi ** 8 / 18 + 0.5
    V1, V2 = 0.5 * (1 + b * pi ** 4 / 5) ** 2, a ** 2 / 8
    V13 = b ** 2 * pi ** 8 * (1 / 18 - 1 / 50)
    return np.array([V1, V2, 0.0]) / V, np.array([V1 + V13, V2, V13]) / V


def ishigami_inputs(names=("x1", "x2", "x3")):
    """Three independent U(-pi, pi) inputs."""
    return RandomInputs.from_spec({name: ("uniform", -math.pi, math.pi) for name in names})


def standard_normals(d, prefix="u"):
    """d independent N(0, 1) inputs named ``prefix0``, ``prefix1``, ..."""
    return RandomInputs.from_spec({f"{prefix}{i}": "normal(0, 1)" for i in range(d)})


def hyperplane(X, beta=4.5):
    """(n,) limit state ``beta - sum(u) / sqrt(d)``: exact Pf = Phi(-beta), design point
    ``beta / sqrt(d) (1, ..., 1)``."""
    return beta - X.sum(1) / math.sqrt(X.shape[1])


def four_branch(X, k=6.0):
    """(n,) four-branch series system of the rows of X (n, 2) in standard normal space."""
    x1, x2 = X[:, 0], X[:, 1]
    return np.min([3 + 0.1 * (x1 - x2) ** 2 - (x1 + x2) / math.sqrt(2),
                   3 + 0.1 * (x1 - x2) ** 2 + (x1 + x2) / math.sqrt(2),
                   (x1 - x2) + k / math.sqrt(2), (x2 - x1) + k / math.sqrt(2)], axis=0)
