"""Starting states for the membrane's Newton iterations: solved membranes of nearly the same
shape, scaled.

From the flat state the solver needs a guess with some bulge (the flat membrane has no
out-of-plane stiffness). The one-term Rayleigh-Ritz bulge of :mod:`fem.newton` is 20-30% off
the answer, and Newton takes 7 iterations from it to ``rtol = 1e-10`` on the paper's inputs.

Scaling. In membrane (Foeppl-von Karman) theory, the equilibrium of a membrane of sides
``l x b`` under pressure p, written in the coordinates (x / l, y / b), depends on the
geometry and material only through the aspect ratio ``a = l / b``, Poisson's ratio nu and
the load parameter ``q = |p| b / (E t)``: a solution ``(u_r, v_r, w_r)`` at ``q_r`` (on
``b = 1``) gives one at q as::

    w = b (q / q_r)^(1/3) w_r,    u, v = b (q / q_r)^(2/3) (u_r, v_r)

node by node on the same mesh. The solver's Green-Lagrange strains add the in-plane
quadratic terms that break this scaling at the order of the strains (~1%), and a nearby a,
nu or q changes the shape a little, so the scaled state is a start, not the answer.

References. Each start scales the solution of a reference membrane (``b = 1``, ``t = 1``,
the row's mesh, edges and the sign of p) at (a, q, nu) rounded to a grid: ``log a`` in steps
of 0.05, ``log q`` in steps of ``log 1.5`` and nu in steps of 0.05. A reference is solved
once per process (from the Ritz bulge, ``rtol = 1e-10``) and kept: 18 of them served 300
Table-3 inputs. On Table-3 inputs Newton takes 2.99 iterations on average from the scaled
start against 7 from the bulge, and a 20 x 10 solve 0.9 against 1.6 ms
(``benchmarks/bench_fem.py`` prints both). Both reach the same converged state (to 2e-11
relative on Table-3 inputs; tested to 1e-9 on inputs well beyond them).

The start of a row depends on that row alone (and on its mesh and edges), so a batch solves
every row exactly as :meth:`fem.Membrane.solve` does. A reference that does not converge is
not used: its rows start from the bulge.

Why 7 and 3: Newton converges quadratically, e_{k+1} ~ e_k^2 in the relative error. From
the scaled start, 1% off (the strains' share), the errors run 1e-2, 1e-4, 1e-8, 1e-16: three
iterations reach ``rtol = 1e-10``; from the bulge, 20-30% off, the first iterations only
shrink the error while the membrane stiffens, and seven are needed.

Example:
    >>> from fem import Membrane
    >>> Membrane(l=2, b=1, t=0.0015, E=210, nu=0.3).solve(start="ritz").newton_iterations
    7
    >>> Membrane(l=2, b=1, t=0.0015, E=210, nu=0.3).solve().newton_iterations
    3

Imports: numpy and fem's newton, mesh and system modules (never :mod:`fem.membrane`, which
imports this one).
"""
import math
from functools import lru_cache

import numpy as np

from . import newton
from .mesh import normalise_edges
from .system import row_system, stacked_systems

__all__ = ["STARTS", "LOG_ASPECT_STEP", "LOG_LOAD_STEP", "NU_STEP", "check_start", "start_for",
           "reference_starts"]

#: How a fast solve starts: from scaled reference solutions or from the Ritz bulge alone.
STARTS = ("reference", "ritz")
#: Grid of the references: the step of log(l / b).
LOG_ASPECT_STEP = 0.05
#: Grid of the references: the step of log(q) (a factor 1.5 in the load).
LOG_LOAD_STEP = math.log(1.5)
#: Grid of the references: the step of Poisson's ratio nu.
NU_STEP = 0.05


def check_start(start):
    """Raise a ValueError unless ``start`` is one of :data:`STARTS`."""
    if start not in STARTS:
        raise ValueError(f"start must be one of {STARTS}, got start={start!r}")


def start_for(start, paper):
    """The start a solve uses: ``start`` (checked) in ``fast`` mode, the Ritz bulge in
    ``paper`` mode (which always starts from it: no reference is built for it)."""
    check_start(start)
    return "ritz" if paper else start


def reference_starts(rows, p, nx, ny, edges):
    """(n, 3 nnode) starting states for rows (l, b, t, E, nu) of one mesh and load p (see the
    module docstring); a row with no reference (p = 0, or its reference did not converge) gets
    an all-NaN row, which means "start from the Ritz bulge"."""
    rows = np.asarray(rows, dtype=float).reshape(-1, 5)
    edges_key = tuple(sorted(normalise_edges(edges).items()))
    out = np.full((len(rows), 3 * (nx + 1) * (ny + 1)), np.nan)
    for i, (l, b, t, E, nu) in enumerate(rows):
        q = abs(p) * b / (E * t)
        if not q > 0:
            continue
        ref = _reference(nx, ny, edges_key, math.copysign(1.0, p),
                         round(math.log(l / b) / LOG_ASPECT_STEP),
                         round(math.log(q) / LOG_LOAD_STEP), round(nu / NU_STEP))
        if ref is None:
            continue
        q_ref, state = ref
        s = q / q_ref
        sw, suv = b * s ** (1.0 / 3.0), b * s ** (2.0 / 3.0)
        out[i, 0::3] = suv * state[0::3]
        out[i, 1::3] = suv * state[1::3]
        out[i, 2::3] = sw * state[2::3]
    return out


@lru_cache(maxsize=256)  # 5.5 kB each on a 20 x 10 mesh, 0.3 MB on 160 x 80
def _reference(nx, ny, edges_key, sign, i_aspect, i_load, i_nu):
    """(q_ref, state) of the reference membrane of a grid point, or None if it did not
    converge."""
    aspect = math.exp(i_aspect * LOG_ASPECT_STEP)
    q_ref = math.exp(i_load * LOG_LOAD_STEP)
    nu = min(max(i_nu * NU_STEP, -0.95), 0.45)
    system = row_system(stacked_systems([(aspect, 1.0, 1.0, 1.0 / q_ref, nu)], sign, nx, ny,
                                        dict(edges_key), probes={}))
    status, state, *_ = newton.solve_path(**system, **newton.solver_settings())
    if status != newton.OK or not np.all(np.isfinite(state)):
        return None
    state.setflags(write=False)
    return q_ref, state
