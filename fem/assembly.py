"""Assembly of the internal force vector and banded tangent stiffness (numba).

Every element's equation numbers are precomputed (:class:`fem.mesh.MeshTopology.elem_eq`), so
assembly is one pass over the elements that scatters into the banded storage of
:mod:`fem.banded`. All elements of the structured mesh share one set of shape-function
derivatives.
"""
import numpy as np
from numba import njit

from .banded import add_symmetric
from .element import element_force_stiffness

__all__ = ["assemble"]


@njit(cache=True)
def assemble(U, conn, elem_eq, dndx, dndy, weight, ktab, c11, c12, c33, f, ab, want_k):
    """Assemble the internal force ``f`` (free equations) and, if ``want_k``, the banded
    tangent ``ab`` at the full displacement vector ``U``; return the total strain energy.

    ``f`` and ``ab`` are overwritten.
    """
    f[:] = 0.0
    if want_k:
        ab[:, :] = 0.0
    ue = np.empty(12)
    fe = np.empty(12)
    ke = np.empty((12, 12))
    energy = 0.0
    for e in range(conn.shape[0]):
        for a in range(4):
            n = conn[e, a]
            for c in range(3):
                ue[3 * a + c] = U[3 * n + c]
        energy += element_force_stiffness(ue, dndx, dndy, weight, ktab, c11, c12, c33, fe,
                                          ke, want_k)
        for r in range(12):
            er = elem_eq[e, r]
            if er < 0:
                continue
            f[er] += fe[r]
            if want_k:
                # ke holds the upper triangle: each unordered pair (r, c) once
                for c in range(r, 12):
                    ec = elem_eq[e, c]
                    if ec >= 0:
                        add_symmetric(ab, er, ec, ke[r, c])
    return energy
