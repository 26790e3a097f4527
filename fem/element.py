"""Q4 membrane element kernel: Green-Lagrange strain, St. Venant-Kirchhoff plane stress.

The kernel is pure: it reads the element's nodal displacements and shape-function
derivatives and writes the element internal force vector and tangent stiffness.

Kinematics (total Lagrangian, reference plane z = 0). With the deformed tangent vectors
``g_x = e_x + d(u, v, w)/dx`` and ``g_y = e_y + d(u, v, w)/dy`` the membrane strains are::

    eps_x    = (g_x . g_x - 1) / 2 = u_x + (u_x^2 + v_x^2 + w_x^2) / 2
    eps_y    = (g_y . g_y - 1) / 2 = v_y + (u_y^2 + v_y^2 + w_y^2) / 2
    gamma_xy =  g_x . g_y          = u_y + v_x + u_x u_y + v_x v_y + w_x w_y

Membrane forces per unit reference width ``n = t * C * eps`` with the plane-stress matrix
``C = E / (1 - nu^2) [[1, nu, 0], [nu, 1, 0], [0, 0, (1 - nu) / 2]]`` (units of E times
length, e.g. kN/m when E is in kN/m^2 and t in m).
"""
import math

import numpy as np
from numba import njit

__all__ = ["NODE_XI", "NODE_ETA", "shape_functions", "gauss_derivatives", "PAIRS",
           "stiffness_tables", "element_force_stiffness"]

#: Local node coordinates of the reference square, counter-clockwise: xi of nodes 1-4.
NODE_XI = np.array([-1.0, 1.0, 1.0, -1.0])
#: eta of nodes 1-4.
NODE_ETA = np.array([-1.0, -1.0, 1.0, 1.0])


def shape_functions(xi, eta):
    """Bilinear shape functions at local coordinates (xi, eta) in [-1, 1]^2.

    >>> shape_functions(0.0, 0.0)
    array([0.25, 0.25, 0.25, 0.25])
    """
    return 0.25 * (1.0 + NODE_XI * xi) * (1.0 + NODE_ETA * eta)


def gauss_derivatives(hx, hy):
    """Shape-function x/y derivatives and weights at the 2 x 2 Gauss points of an hx x hy
    rectangle (lengths in model units).

    Returns ``dndx[g, a]``, ``dndy[g, a]`` (1/length) and ``weight[g]`` (area: the Gauss
    weight times the Jacobian determinant). Arrays hx, hy (n,) give (n, 4, 4) and (n, 4), each
    row that of its own rectangle, to the last bit.

    >>> dndx, dndy, wgt = gauss_derivatives(2.0, 1.0)
    >>> float(wgt.sum())
    2.0
    """
    hx, hy = np.asarray(hx, dtype=float), np.asarray(hy, dtype=float)
    gp = 1.0 / math.sqrt(3.0)
    pts = ((-gp, -gp), (gp, -gp), (gp, gp), (-gp, gp))
    dndx = np.empty(hx.shape + (4, 4))
    dndy = np.empty(hx.shape + (4, 4))
    for g, (xi, eta) in enumerate(pts):
        dndx[..., g, :] = 0.25 * NODE_XI * (1.0 + NODE_ETA * eta) * (2.0 / hx)[..., None]
        dndy[..., g, :] = 0.25 * NODE_ETA * (1.0 + NODE_XI * xi) * (2.0 / hy)[..., None]
    weight = np.repeat((hx * hy / 4.0)[..., None], 4, axis=-1)
    return dndx, dndy, weight


#: Node pairs (a, b), a <= b, of the upper block triangle of the element matrix.
PAIRS = np.array([(a, b) for a in range(4) for b in range(a, 4)], dtype=np.int64)


def stiffness_tables(dndx, dndy, weight, c11, c12, c33):
    """Per Gauss point and node pair, the coefficients of the element tangent.

    With ``ax = dN_a/dx``, ``ay = dN_a/dy`` (and ``bx``, ``by`` for node b) the 3 x 3 block
    K_ab of the tangent is, summed over Gauss points with weight ``w``::

        w [ (c11 ax bx + c33 ay by) g_x g_x^T + (c11 ay by + c33 ax bx) g_y g_y^T
          + (c12 ax by + c33 ay bx) g_x g_y^T + (c12 ay bx + c33 ax by) g_y g_x^T
          + (n_x ax bx + n_y ay by + n_xy (ax by + ay bx)) I ]

    Returns ``tab[g, pair, 7]``: the four material coefficients and the three geometric
    products ``ax bx``, ``ay by``, ``ax by + ay bx``, all times ``w``. Leading axes stack
    elements of different sizes (``dndx`` (n, 4, 4), ``weight`` (n, 4), ``c11`` ... (n, 1, 1)
    give (n, 4, 10, 7), each row the table of its own element, to the last bit).
    """
    a, b = PAIRS[:, 0], PAIRS[:, 1]
    ax, ay, bx, by = dndx[..., a], dndy[..., a], dndx[..., b], dndy[..., b]
    w = weight[..., None]
    return np.ascontiguousarray(np.stack(
        [w * (c11 * ax * bx + c33 * ay * by), w * (c11 * ay * by + c33 * ax * bx),
         w * (c12 * ax * by + c33 * ay * bx), w * (c12 * ay * bx + c33 * ax * by),
         w * ax * bx, w * ay * by, w * (ax * by + ay * bx)], axis=-1))


@njit(cache=True)
def element_force_stiffness(ue, dndx, dndy, weight, ktab, c11, c12, c33, fe, ke, want_k):
    """Internal force ``fe`` (12) and, if ``want_k``, the upper block triangle of the tangent
    stiffness ``ke`` (12 x 12; blocks (a, b) with a <= b) of one element; returns its strain
    energy.

    ``c11, c12, c33`` are the entries of ``t * C`` (force per length), ``ktab`` comes from
    :func:`stiffness_tables`. ``fe`` and ``ke`` are overwritten. The tangent is the exact
    derivative of ``fe``: material part ``B^T (tC) B`` plus the initial-stress part.
    """
    fe[:] = 0.0
    if want_k:
        ke[:, :] = 0.0
    energy = 0.0
    for g in range(4):
        ux = 0.0  # displacement gradients
        vx = 0.0
        wx = 0.0
        uy = 0.0
        vy = 0.0
        wy = 0.0
        for a in range(4):
            ax = dndx[g, a]
            ay = dndy[g, a]
            u = ue[3 * a]
            v = ue[3 * a + 1]
            z = ue[3 * a + 2]
            ux += ax * u
            vx += ax * v
            wx += ax * z
            uy += ay * u
            vy += ay * v
            wy += ay * z
        # the strains from the gradients, not as (g . g - 1) / 2: that difference cancels
        # the digits of a small strain (its residual stalled at 4e-9 of the load where
        # strains are ~1e-6, a 1 mm steel sheet under 100 Pa in SI units)
        ex = ux + 0.5 * (ux * ux + vx * vx + wx * wx)
        ey = vy + 0.5 * (uy * uy + vy * vy + wy * wy)
        gxy = uy + vx + ux * uy + vx * vy + wx * wy
        gx0 = 1.0 + ux
        gx1 = vx
        gx2 = wx
        gy0 = uy
        gy1 = 1.0 + vy
        gy2 = wy
        w = weight[g]
        nx_ = c11 * ex + c12 * ey
        ny_ = c12 * ex + c11 * ey
        nxy = c33 * gxy
        energy += 0.5 * w * (nx_ * ex + ny_ * ey + nxy * gxy)
        for a in range(4):
            ax = w * dndx[g, a]
            ay = w * dndy[g, a]
            cx = nx_ * ax + nxy * ay
            cy = ny_ * ay + nxy * ax
            fe[3 * a] += cx * gx0 + cy * gy0
            fe[3 * a + 1] += cx * gx1 + cy * gy1
            fe[3 * a + 2] += cx * gx2 + cy * gy2
        if want_k:
            gx = (gx0, gx1, gx2)
            gy = (gy0, gy1, gy2)
            for p in range(10):
                a = PAIRS[p, 0]
                b = PAIRS[p, 1]
                cxx = ktab[g, p, 0]
                cyy = ktab[g, p, 1]
                cxy = ktab[g, p, 2]
                cyx = ktab[g, p, 3]
                geo = nx_ * ktab[g, p, 4] + ny_ * ktab[g, p, 5] + nxy * ktab[g, p, 6]
                for i in range(3):
                    xi_ = gx[i]
                    yi_ = gy[i]
                    pxx = cxx * xi_
                    pxy = cxy * xi_
                    pyy = cyy * yi_
                    pyx = cyx * yi_
                    for j in range(3):
                        kij = (pxx + pyx) * gx[j] + (pyy + pxy) * gy[j]
                        if i == j:
                            kij += geo
                        ke[3 * a + i, 3 * b + j] += kij
    return energy
