"""The arrays of the Newton solver for a stack of membranes of one mesh, load and probes.

:func:`stacked_systems` builds the arguments of :func:`fem.newton.solve_path` for n rows
(l, b, t, E, nu) at once; :func:`row_system` takes one row out of a stack. The starting states
come in as an argument (:mod:`fem.start` computes them), so this module needs neither the
starts nor :class:`fem.Membrane`.

Imports: numpy and fem's element, mesh and presets modules.
"""
import numpy as np

from .element import gauss_derivatives, shape_functions, stiffness_tables
from .mesh import locate, locate_relative, normalise_edges, topology
from .presets import PAPER_PROBES, PAPER_PROBES_RELATIVE

__all__ = ["SHARED_SYSTEM_KEYS", "stacked_systems", "row_system"]

#: Keys of :func:`stacked_systems` shared by every row (the mesh); the rest are per row.
SHARED_SYSTEM_KEYS = ("conn", "elem_eq", "free_dofs", "bandwidth")


def stacked_systems(rows, p, nx, ny, edges="clamped", probes=None, probe_frame="physical",
                    starts=None):
    """The arguments of :func:`fem.newton.solve_path` for n membranes (l, b, t, E, nu) of one
    mesh, load and probes, stacked along a first axis (but the mesh's, ``SHARED_SYSTEM_KEYS``):
    element derivatives and stiffness tables, materials, the consistent load, the Ritz shape,
    the starting states ``starts`` ((n, 3 nnode), a row of NaN for "from the Ritz bulge"; None:
    all from the bulge, (n, 0)) and the probes' nodes and weights. Rows must be valid inputs
    (:class:`fem.Membrane` checks them); :meth:`fem.Membrane.system` is this with one row, so a
    batch solves every row exactly as one by one.
    """
    rows = [tuple(map(float, r)) for r in rows]
    n, p = len(rows), float(p)
    edges = normalise_edges(edges)
    topo = topology(nx, ny, tuple(sorted(edges.items())))
    relative = probe_frame == "relative"
    probes = dict((PAPER_PROBES_RELATIVE if relative else PAPER_PROBES)
                  if probes is None else probes)
    ls = np.array([r[0] for r in rows])
    bs = np.array([r[1] for r in rows])
    hx, hy = ls / nx, bs / ny
    dndx, dndy, weight = gauss_derivatives(hx, hy)
    # per row in Python floats, as the one-row build always did
    cs = [E * t / (1.0 - nu ** 2) for _, _, t, E, nu in rows]
    c11 = np.array(cs)
    c12 = np.array([c * r[4] for c, r in zip(cs, rows)])
    c33 = np.array([c * 0.5 * (1.0 - r[4]) for c, r in zip(cs, rows)])
    ktab = stiffness_tables(dndx, dndy, weight, c11[:, None, None], c12[:, None, None],
                            c33[:, None, None])
    free_dofs = np.nonzero(topo.eq >= 0)[0]
    # consistent nodal load of -p on the reference area (int N_a dA = hx hy / 4), summed
    # element by element at each node: the running sums of np.add.at
    uses = np.bincount(topo.conn.ravel(), minlength=topo.nnode)
    v = -p * hx * hy / 4.0
    partial = np.zeros((uses.max() + 1, n))
    for k in range(1, uses.max() + 1):
        partial[k] = partial[k - 1] + v
    fext_full = np.zeros((n, 3 * topo.nnode))
    fext_full[:, 2::3] = partial[uses].T
    # the Ritz bulge on each row's own reference coordinates
    xi = topo.node_ij[:, 0] * hx[:, None] / ls[:, None]
    eta = topo.node_ij[:, 1] * hy[:, None] / bs[:, None]
    phi = 16.0 * xi * (1.0 - xi) * eta * (1.0 - eta)
    starts = np.empty((n, 0)) if starts is None else np.asarray(starts, dtype=float)
    nprobe = len(probes)
    probe_nodes = np.empty((n, nprobe, 4), dtype=np.int64)
    probe_shape = np.empty((n, nprobe, 4))
    for i, (l, b, *_rest) in enumerate(rows):
        if relative and i:  # fractions of the sides: the same nodes and weights
            probe_nodes[i], probe_shape[i] = probe_nodes[0], probe_shape[0]
            continue
        for k, (x, y) in enumerate(probes.values()):
            ei, ej, pxi, peta = (locate_relative(x, y, nx, ny) if relative
                                 else locate(x, y, l, b, nx, ny))
            probe_nodes[i, k] = topo.conn[ei * ny + ej]
            probe_shape[i, k] = shape_functions(pxi, peta)
    return dict(conn=topo.conn, elem_eq=topo.elem_eq, free_dofs=free_dofs,
                bandwidth=topo.bandwidth, dndx=dndx, dndy=dndy, weight=weight, ktab=ktab,
                c11=c11, c12=c12, c33=c33, fext=np.ascontiguousarray(fext_full[:, free_dofs]),
                phi=phi, start=starts, probe_nodes=probe_nodes, probe_shape=probe_shape)


def row_system(stacked, i=0):
    """Row ``i`` of :func:`stacked_systems`: the keyword arguments of one solve."""
    return {k: (v if k in SHARED_SYSTEM_KEYS else float(v[i]) if v.ndim == 1 else v[i])
            for k, v in stacked.items()}
