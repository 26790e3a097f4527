"""The flat rectangular membrane under uniform pressure: inputs, validation and the solve.

Units are any consistent set: lengths l, b, t and displacements in one length unit L, E and p
in force per L^2 (the paper's example uses l ~ 2, b ~ 1, t ~ 0.0015, E ~ 210, p = 100, and
deflections come out of order 1).
"""
import time
from dataclasses import dataclass, field

import numpy as np

from . import newton as _newton
from .mesh import normalise_edges, topology
from .newton import MODES, solver_settings  # noqa: F401 - MODES: this module's API
from .presets import PAPER_PROBES, PAPER_PROBES_RELATIVE
from .start import check_start, reference_starts, start_for
from .system import row_system, stacked_systems
from .validation import check_finite, check_int, check_positive

__all__ = ["DEFAULT_PROBES", "PROBE_FRAMES", "STRAIN_LIMIT", "MEMORY_SHARE",
           "solver_memory_bytes", "physical_memory_bytes", "MembraneResult", "Membrane"]

#: Default probe points (x, y) in the reference configuration: the paper's.
DEFAULT_PROBES = PAPER_PROBES
#: How probe coordinates are read: points (x, y) in length units, or fractions (x / l, y / b)
#: of the sides, which follow the mesh as l and b vary.
PROBE_FRAMES = ("physical", "relative")


#: Largest principal Green-Lagrange strain for which St. Venant-Kirchhoff is taken as valid
#: (:meth:`MembraneResult.max_strain`; the CLI warns above it).
STRAIN_LIMIT = 0.05
#: Share of the machine's memory a solve may plan to use.
MEMORY_SHARE = 0.8


def solver_memory_bytes(nx, ny):
    """Bytes of the two banded stiffness matrices of an nx x ny mesh (the bulk of a solve):
    3 (nx + 1)(ny + 1) unknowns times a band of 3 (min(nx, ny) + 2) + 1 (nodes are numbered
    along the shorter side), 8 bytes each. 400 x 200: 2.3 GB.

    >>> round(solver_memory_bytes(400, 200) / 1e9, 2)
    2.35
    """
    neq = 3 * (nx + 1) * (ny + 1)
    return 2 * neq * (3 * (min(nx, ny) + 2) + 1) * 8


def physical_memory_bytes():
    """This machine's memory, or None where the platform does not tell."""
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None


@dataclass
class MembraneResult:
    """Solution of one membrane problem.

    Attributes:
        displacement: (nnode, 3) nodal (u, v, w) in length units; w < 0 is downward. NaN
            where the solve failed (and so ``w``, ``grid``, the strains and stresses): the
            last converged increment's probe deflections are in ``path_w``.
        coordinates: (nnode, 2) reference nodal coordinates (x, y).
        probes: name -> (x, y) of the probe points, in length units.
        probe_w: name -> w at that probe (interpolated with the element shape functions).
        path_load: load factors (0 .. 1) of the unloaded state and every converged increment.
        path_w: (len(path_load), nprobe) probe w at those increments.
        converged, status, reason: outcome; ``reason`` explains a failure.
        increments, newton_iterations, seconds: cost of the solve.
    """

    membrane: "Membrane"
    displacement: np.ndarray
    coordinates: np.ndarray
    probes: dict
    probe_w: dict
    path_load: np.ndarray
    path_w: np.ndarray
    converged: bool
    status: int
    reason: str
    increments: int
    newton_iterations: int
    seconds: float
    mode: str = "fast"
    _topo: object = field(default=None, repr=False)

    @property
    def w(self):
        """(nnode,) vertical displacement."""
        return self.displacement[:, 2]

    def grid(self, component=2):
        """Displacement component on the (nx + 1, ny + 1) node grid, indexed [i, j]."""
        t = self._topo
        g = np.empty((t.nx + 1, t.ny + 1))
        g[t.node_ij[:, 0], t.node_ij[:, 1]] = self.displacement[:, component]
        return g

    def strains(self):
        """(nelem, 3) Green-Lagrange strains (eps_x, eps_y, gamma_xy) at element centres."""
        return self._centre_state()[0]

    def stresses(self):
        """(nelem, 3) second Piola-Kirchhoff stresses (S_x, S_y, S_xy) at element centres, in
        the units of E."""
        return self._centre_state()[1]

    def membrane_forces(self):
        """(nelem, 3) membrane forces t * S per unit reference width (force per length)."""
        return self.membrane.t * self.stresses()

    def _centre_state(self):
        m, t = self.membrane, self._topo
        hx, hy = m.l / t.nx, m.b / t.ny
        ue = self.displacement[t.conn]  # (nelem, 4, 3)
        dndxi = 0.25 * np.array([-1.0, 1.0, 1.0, -1.0]) * (2.0 / hx)
        dndeta = 0.25 * np.array([-1.0, -1.0, 1.0, 1.0]) * (2.0 / hy)
        dx = np.einsum("a,eac->ec", dndxi, ue)  # (u_x, v_x, w_x) per element
        dy = np.einsum("a,eac->ec", dndeta, ue)
        # from the gradients, as fem.element does: (g . g - 1) / 2 cancels a small strain
        eps = np.stack([dx[:, 0] + 0.5 * (dx * dx).sum(1), dy[:, 1] + 0.5 * (dy * dy).sum(1),
                        dy[:, 0] + dx[:, 1] + (dx * dy).sum(1)], axis=1)
        c = m.E / (1.0 - m.nu ** 2)
        stress = np.stack([c * (eps[:, 0] + m.nu * eps[:, 1]), c * (m.nu * eps[:, 0] + eps[:, 1]),
                           c * 0.5 * (1.0 - m.nu) * eps[:, 2]], axis=1)
        return eps, stress

    def max_strain(self):
        """The largest principal Green-Lagrange strain (absolute) at the element centres (NaN
        where the solve failed).

        St. Venant-Kirchhoff is a small-strain material law: above about :data:`STRAIN_LIMIT`
        the answer is a solution of the model, not of a real membrane.
        """
        eps = self._centre_state()[0]
        mean = 0.5 * (eps[:, 0] + eps[:, 1])
        radius = np.sqrt((0.5 * (eps[:, 0] - eps[:, 1])) ** 2 + (0.5 * eps[:, 2]) ** 2)
        return float(np.max(np.abs(mean) + radius))

    def summary(self):
        """A short text table of the probes."""
        lines = [f"{'probe':<6}{'x':>9}{'y':>9}{'w':>16}"]
        for name, (x, y) in self.probes.items():
            lines.append(f"{name:<6}{x:>9.4f}{y:>9.4f}{self.probe_w[name]:>16.8f}")
        state = "converged" if self.converged else f"NOT converged: {self.reason}"
        lines.append(f"{state}; {self.increments} increments, {self.newton_iterations} Newton "
                     f"iterations, {self.seconds * 1e3:.2f} ms")
        return "\n".join(lines)


class Membrane:
    """Geometrically nonlinear Q4 membrane, clamped on its edges, under uniform pressure.

    Args:
        l, b: side lengths along x and y (length).
        t: thickness (length).
        E: Young's modulus (force / length^2).
        nu: Poisson's ratio, in (-1, 0.5).
        p: pressure acting downward (-z) on the reference area, a dead load (force / length^2).
        nx, ny: elements along x and y.
        edges: ``"clamped"`` (u = v = w = 0), ``"w"`` (w = 0 only) or a dict per edge
            (``bottom`` y=0, ``right`` x=l, ``top`` y=b, ``left`` x=0).
        probes: name -> (x, y) points of the reference configuration where w is reported
            (default: the paper's p1, p2, p3).
        probe_frame: ``"physical"`` (default): probes in length units; ``"relative"``: probes
            as fractions (x / l, y / b) of the sides, which name the same mesh point (a node
            where a fraction times the element count is whole) whatever l and b are; the
            default relative probes are the paper's points on the nominal 2 x 1 membrane,
            nodes of the 20 x 10 mesh.

    Example:
        -2.4686 is this 20 x 10 mesh's answer, 1.2% from the mesh-converged -2.439 that
        :func:`fem.convergence` extrapolates from four meshes; ``tests/fem/test_probes.py``
        checks the mesh error and ``test_membrane.py`` the solver against the long-strip
        analytic deflection.

        >>> res = Membrane(l=2, b=1, t=0.0015, E=210, nu=0.3).solve()
        >>> res.converged, round(res.probe_w["p1"], 4)
        (True, -2.4686)
    """

    def __init__(self, l=2.0, b=1.0, t=0.0015, E=210.0, nu=0.3, p=100.0, nx=20, ny=10,
                 edges="clamped", probes=None, probe_frame="physical"):
        for name, value in (("l", l), ("b", b), ("t", t), ("E", E)):
            check_positive(value, name)
        if not -1.0 < check_finite(nu, "nu") < 0.5:
            raise ValueError(f"nu must lie in (-1, 0.5), got nu={nu!r}")
        check_finite(p, "p")
        # at least 2 x 2 elements, so that a node lies inside the edges (nx=0 was told
        # ">= 1", and 1 refused next)
        check_int(nx, "nx", 2)
        check_int(ny, "ny", 2)
        need, have = solver_memory_bytes(nx, ny), physical_memory_bytes()
        if have and need > MEMORY_SHARE * have:
            raise ValueError(f"a {nx} x {ny} mesh needs about {need / 2 ** 30:.3g} GiB for the "
                             f"solver's stiffness matrices, more than {MEMORY_SHARE:.0%} of this "
                             f"machine's {have / 2 ** 30:.3g} GiB; use a coarser mesh")
        self.l, self.b, self.t, self.E, self.nu, self.p = map(float, (l, b, t, E, nu, p))
        self.nx, self.ny = int(nx), int(ny)
        self.edges = normalise_edges(edges)
        if probe_frame not in PROBE_FRAMES:
            raise ValueError(f"probe_frame must be one of {PROBE_FRAMES}, got "
                             f"probe_frame={probe_frame!r}")
        self.probe_frame = probe_frame
        relative = probe_frame == "relative"
        default = PAPER_PROBES_RELATIVE if relative else DEFAULT_PROBES
        self.probes = dict(default if probes is None else probes)
        for name, xy in self.probes.items():
            if not (isinstance(xy, (tuple, list, np.ndarray)) and len(xy) == 2):
                raise ValueError(f"probe {name} must be an (x, y) pair, got {xy!r}")
            x, y = xy
            check_finite(x, f"probe {name} x")
            check_finite(y, f"probe {name} y")
            if relative and not (0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
                raise ValueError(f"relative probe {name}=({x}, {y}) must lie in [0, 1] x [0, 1] "
                                 "(fractions of l and b)")
            if not relative and not (0.0 <= x <= self.l and 0.0 <= y <= self.b):
                raise ValueError(f"probe {name}=({x}, {y}) lies outside the membrane "
                                 f"[0, {self.l}] x [0, {self.b}]")

    @property
    def probe_points(self):
        """name -> (x, y) of the probes in length units."""
        if self.probe_frame == "physical":
            return dict(self.probes)
        return {n: (x * self.l, y * self.b) for n, (x, y) in self.probes.items()}

    def __repr__(self):
        return (f"Membrane(l={self.l}, b={self.b}, t={self.t}, E={self.E}, nu={self.nu}, "
                f"p={self.p}, nx={self.nx}, ny={self.ny})")

    @property
    def topology(self):
        """The mesh's :class:`fem.mesh.MeshTopology` (numbering, equations, bandwidth),
        built once per process for each mesh and set of edge conditions."""
        return topology(self.nx, self.ny, tuple(sorted(self.edges.items())))

    def system(self, start="reference"):
        """The arrays :func:`fem.newton.solve_path` takes (geometry, material, load and
        starting state): :func:`stacked_systems` of this one membrane."""
        check_start(start)
        row = (self.l, self.b, self.t, self.E, self.nu)
        starts = (reference_starts([row], self.p, self.nx, self.ny, self.edges)
                  if start == "reference" else None)
        return row_system(stacked_systems([row], self.p, self.nx, self.ny, self.edges,
                                          self.probes, self.probe_frame, starts))

    def solve(self, mode="fast", increments=None, rtol=1e-10, tol=1e-4, max_iter=None,
              start_scale=1.0, start="reference"):
        """Solve by Newton-Raphson load stepping.

        Args:
            mode: ``"fast"`` (adaptive increments, relative residual ``rtol``, line search) or
                ``"paper"`` (``increments`` fixed increments, default 400; absolute tolerance
                ``tol`` on the 2-norm of the unbalanced force over the free unknowns, in force
                units; at most ``max_iter`` (100) iterations per increment).
            increments: fixed increments for ``paper``; for ``fast`` the smallest number of
                equal increments to take (default 1: first try the full load).
            start_scale: factor on the starting state's w (and its square on u and v; for
                studies of the start).
            start: ``fast`` mode's start: ``"reference"`` (a solved membrane of nearly the same
                shape, scaled; :mod:`fem.start`; Newton takes about 3 iterations from it on
                the paper's inputs) or ``"ritz"`` (the one-term Rayleigh-Ritz bulge alone,
                about 7). ``paper`` mode starts from the bulge. Both reach the same state.

        Returns:
            :class:`MembraneResult`; ``converged`` is False, with a reason, on failure.
        """
        settings = solver_settings(mode, increments, rtol, tol, max_iter, start_scale)
        start = start_for(start, settings["paper"])
        t0 = time.perf_counter()
        system = self.system(start)
        status, U, plam, pw, nincr, nit = _newton.solve_path(**system, **settings)
        seconds = time.perf_counter() - t0
        topo = self.topology
        if status != _newton.OK:  # U is a partial load's state: not this load's answer
            U = np.full_like(U, np.nan)
        return MembraneResult(
            membrane=self, displacement=U.reshape(-1, 3),
            coordinates=topo.coordinates(self.l, self.b),
            probes=self.probe_points,
            probe_w={n: float(pw[-1, k]) if status == _newton.OK else float("nan")
                     for k, n in enumerate(self.probes)},
            path_load=plam, path_w=pw, converged=status == _newton.OK, status=int(status),
            reason=_newton.STATUS_TEXT[int(status)], increments=int(nincr),
            newton_iterations=int(nit), seconds=seconds, mode=mode, _topo=topo)
