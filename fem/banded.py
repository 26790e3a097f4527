"""Symmetric banded storage and an in-place banded Cholesky solver (numba).

Storage: ``ab[i, k] = A[i, i + k]`` for ``0 <= k <= bw`` (the upper band, row by row).
Factorisation ``A = U^T U`` costs ``O(n bw^2)``.
"""
import math

import numpy as np
from numba import njit, uint64

__all__ = ["add_symmetric", "cholesky_banded", "solve_cholesky_banded"]


@njit(cache=True)
def add_symmetric(ab, r, c, value):
    """Add ``value`` to A[r, c] (and so to A[c, r]) of the banded matrix ``ab``."""
    if r <= c:
        ab[r, c - r] += value
    else:
        ab[c, r - c] += value


@njit(cache=True)
def cholesky_banded(ab):
    """Factor ``ab`` in place into the upper Cholesky factor; return False if A is not
    positive definite (a pivot <= 0 or non-finite)."""
    n, m = ab.shape
    bw = m - 1
    urow = np.empty(m)  # a copy of the factor row: no aliasing with the rows it updates
    for i in range(n):
        d = ab[i, 0]
        if not d > 0.0:
            return False
        d = math.sqrt(d)
        ab[i, 0] = d
        kmax = min(bw, n - 1 - i)
        inv = 1.0 / d
        for k in range(1, kmax + 1):
            ab[i, k] *= inv
            urow[k] = ab[i, k]
        for j in range(1, kmax + 1):
            uij = urow[j]
            trow = ab[i + j]
            # unsigned indices spare numba's negative-index wraparound and let LLVM vectorise
            ju = uint64(j)
            for k in range(uint64(kmax + 1 - j)):
                trow[k] -= uij * urow[k + ju]
    return True


@njit(cache=True)
def solve_cholesky_banded(ab, rhs):
    """Solve ``A x = rhs`` in place with the factor from :func:`cholesky_banded`."""
    n, m = ab.shape
    bw = m - 1
    # U^T y = rhs
    for i in range(n):
        s = rhs[i] / ab[i, 0]
        rhs[i] = s
        kmax = min(bw, n - 1 - i)
        for k in range(1, kmax + 1):
            rhs[i + k] -= ab[i, k] * s
    # U x = y
    for i in range(n - 1, -1, -1):
        s = rhs[i]
        kmax = min(bw, n - 1 - i)
        for k in range(1, kmax + 1):
            s -= ab[i, k] * rhs[i + k]
        rhs[i] = s / ab[i, 0]
    return rhs
