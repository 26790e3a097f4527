"""Structured Q4 mesh of the rectangle [0, l] x [0, b] with band-minimising numbering.

Nodes are numbered along the side with fewer nodes first, so that neighbouring nodes differ by
at most ``min(nx, ny) + 2`` in number and the stiffness matrix has a narrow band. Each node
carries three unknowns (u, v, w) in that order; constrained unknowns get no equation.
"""
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["EDGES", "EDGE_CONDITIONS", "MeshTopology", "node_number", "build_topology",
           "locate_relative", "locate", "normalise_edges", "topology"]

#: Edge names: bottom is y = 0, right is x = l, top is y = b, left is x = 0.
EDGES = ("bottom", "right", "top", "left")
#: Supported edge conditions: ``clamped`` fixes u, v and w; ``w`` fixes w only.
EDGE_CONDITIONS = ("clamped", "w")


@dataclass(frozen=True)
class MeshTopology:
    """Connectivity and equation numbering of an nx x ny mesh (independent of l and b).

    Attributes:
        nx, ny: elements along x and y.
        node_ij: (nnode, 2) grid indices (i along x, j along y) of every node.
        conn: (nelem, 4) node numbers of every element, counter-clockwise from (i, j).
        elem_ij: (nelem, 2) grid indices of every element's lower-left corner.
        eq: (3 * nnode,) equation number of every unknown, -1 where constrained.
        elem_eq: (nelem, 12) equation numbers of each element's unknowns.
        neq: number of equations (free unknowns).
        bandwidth: upper half-bandwidth of the free stiffness matrix.
    """

    nx: int
    ny: int
    node_ij: np.ndarray
    conn: np.ndarray
    elem_ij: np.ndarray
    eq: np.ndarray
    elem_eq: np.ndarray
    neq: int
    bandwidth: int

    @property
    def nnode(self):
        """The number of nodes, (nx + 1) (ny + 1)."""
        return self.node_ij.shape[0]

    def node_number(self, i, j):
        """Node number of grid point (i, j)."""
        return node_number(i, j, self.nx, self.ny)

    def coordinates(self, l, b):
        """(nnode, 2) reference coordinates for a membrane of size l x b."""
        return self.node_ij * np.array([l / self.nx, b / self.ny])


def node_number(i, j, nx, ny):
    """Number of grid node (i, j): along the side with fewer nodes first (narrow band)."""
    return i * (ny + 1) + j if ny <= nx else j * (nx + 1) + i


def build_topology(nx, ny, edges):
    """Build the mesh topology for ``edges``, a dict edge name -> condition.

    >>> topo = build_topology(20, 10, dict.fromkeys(EDGES, "clamped"))
    >>> topo.neq, topo.bandwidth
    (513, 32)
    """
    nnode = (nx + 1) * (ny + 1)
    node_ij = np.empty((nnode, 2), dtype=np.int64)
    for i in range(nx + 1):
        for j in range(ny + 1):
            node_ij[node_number(i, j, nx, ny)] = (i, j)
    fixed = np.zeros((nnode, 3), dtype=bool)
    ii, jj = node_ij[:, 0], node_ij[:, 1]
    on_edge = {"bottom": jj == 0, "right": ii == nx, "top": jj == ny, "left": ii == 0}
    for name, cond in edges.items():
        mask = on_edge[name]
        fixed[mask, 2] = True
        if cond == "clamped":
            fixed[mask, 0:2] = True
    eq = np.full(3 * nnode, -1, dtype=np.int64)
    free = ~fixed.ravel()
    neq = int(free.sum())
    eq[free] = np.arange(neq)
    elem_ij = np.array([(i, j) for i in range(nx) for j in range(ny)], dtype=np.int64)
    conn = np.array([[node_number(a, b, nx, ny) for a, b in
                      ((i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1))]
                     for i, j in elem_ij], dtype=np.int64)
    elem_eq = eq.reshape(nnode, 3)[conn].reshape(len(conn), 12)
    bandwidth = 0
    for row in elem_eq:
        r = row[row >= 0]
        if r.size:
            bandwidth = max(bandwidth, int(r.max() - r.min()))
    return MeshTopology(nx, ny, node_ij, conn, elem_ij, eq, elem_eq, neq, bandwidth)


def locate_relative(xr, yr, nx, ny):
    """Element grid indices and local coordinates (xi, eta) of the point at the fractions
    (xr, yr) of the sides. A point whose fraction times the element count is a whole number
    (to 1e-9, so that 0.1 x 30 counts) is a node, exactly.

    >>> locate_relative(0.5, 0.2, 20, 10)
    (10, 2, -1.0, -1.0)
    """
    gx, gy = xr * nx, yr * ny
    gx = round(gx) if abs(gx - round(gx)) < 1e-9 else gx
    gy = round(gy) if abs(gy - round(gy)) < 1e-9 else gy
    i = min(max(int(np.floor(gx)), 0), nx - 1)
    j = min(max(int(np.floor(gy)), 0), ny - 1)
    return i, j, 2.0 * (gx - i) - 1.0, 2.0 * (gy - j) - 1.0


def locate(x, y, l, b, nx, ny):
    """Element grid indices and local coordinates (xi, eta) of the reference point (x, y).

    Points on an inner element boundary go to the element on their upper/right side, except
    on the outer boundary.
    """
    hx, hy = l / nx, b / ny
    i = min(max(int(np.floor(x / hx)), 0), nx - 1)
    j = min(max(int(np.floor(y / hy)), 0), ny - 1)
    xi = 2.0 * (x - i * hx) / hx - 1.0
    eta = 2.0 * (y - j * hy) / hy - 1.0
    return i, j, xi, eta


def normalise_edges(edges):
    """Edge conditions as a dict over all four edges.

    ``edges`` is one condition for all edges (``"clamped"`` or ``"w"``) or a dict naming some
    edges (the rest stay clamped).
    """
    if isinstance(edges, str):
        edges = dict.fromkeys(EDGES, edges)
    out = dict.fromkeys(EDGES, "clamped")
    for name, cond in dict(edges).items():
        if name not in EDGES:
            raise ValueError(f"unknown edge {name!r}; edges are {EDGES}")
        if cond not in EDGE_CONDITIONS:
            raise ValueError(f"edge {name!r}: unknown condition {cond!r}; use one of "
                             f"{EDGE_CONDITIONS}")
        out[name] = cond
    clamped = [n for n in EDGES if out[n] == "clamped"]
    if not clamped:
        raise ValueError("at least one edge must be clamped, or in-plane rigid motion is free: "
                         f"edges={out}")
    return out


@lru_cache(maxsize=32)
def topology(nx, ny, edges_key):
    """The :class:`MeshTopology` of an nx x ny mesh with ``edges_key`` (the sorted items of
    :func:`normalise_edges`), built once per process."""
    return build_topology(nx, ny, dict(edges_key))
