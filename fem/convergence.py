"""Mesh convergence: solve on a sequence of meshes refined by 2, estimate the observed order and
extrapolate to the mesh-independent answer (Richardson).

With three meshes of element size h, h/2, h/4 and probe values f1, f2, f3, an error that
behaves like C h^p gives the observed order and the extrapolated value::

    p = log2(|f1 - f2| / |f2 - f3|),      f* = f3 + (f3 - f2) / (2^p - 1)

and ``|f* - f_k|`` estimates the discretisation error of mesh k; an order below
:data:`MIN_ORDER` (differences that do not shrink) extrapolates nothing: the order is NaN
and the limit the finest value. The estimate is sound in the
asymptotic range only, where the order has settled: ``asymptotic`` says whether the orders of
the last two triples of meshes agree within :data:`ORDER_AGREEMENT` (so it needs four meshes
or more). The membrane's clamped edges, where w falls steeply, keep coarse meshes out of that
range for a while: for w(p1) the orders of 20-40-80 and 40-80-160 are 1.64 and 2.12. Probes
must lie on nodes of every mesh, or at the same point of it, to compare like with like:
relative probes at node fractions do (``probe_frame="relative"``); a physical probe that is a
node of the coarsest mesh stays one.

Example:
    >>> from fem import Membrane
    >>> c = convergence(Membrane(l=2, b=1, t=0.0015, E=210, nu=0.3))  # 20 x 10 ... 160 x 80
    >>> [round(p, 2) for p in c.orders["p2"]], c.asymptotic["p2"], c.asymptotic["p1"]
    ([1.84, 1.97], True, False)
"""
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["ORDER_AGREEMENT", "MIN_ORDER", "ConvergenceResult", "richardson",
           "convergence"]

#: Relative difference within which the orders of the last two mesh triples must agree for
#: the meshes to count as in the asymptotic range.
ORDER_AGREEMENT = 0.2


@dataclass
class ConvergenceResult:
    """Probe values on refined meshes, the observed order, Richardson extrapolation.

    Attributes:
        meshes: (nx, ny) of each mesh, coarsest first.
        values: name -> w on each mesh (length units).
        order: name -> observed order p from the three finest meshes.
        orders: name -> the observed order of every triple of successive meshes.
        extrapolated: name -> Richardson-extrapolated w.
        error: name -> estimated discretisation error ``|f* - f|`` of each mesh.
        asymptotic: name -> whether the last two orders agree (:data:`ORDER_AGREEMENT`).
        seconds: solve time of each mesh.
    """

    meshes: list
    values: dict
    order: dict
    orders: dict
    extrapolated: dict
    error: dict
    asymptotic: dict
    seconds: list

    def relative_error(self, name, mesh=0):
        """Estimated relative discretisation error of ``mesh`` (index) at probe ``name``: NaN
        where the limit and the error are 0 (a probe on a clamped edge, no load), inf where
        only the limit is."""
        error, limit = self.error[name][mesh], abs(self.extrapolated[name])
        if limit == 0:
            return math.nan if error == 0 else math.inf
        return error / limit

    def summary(self):
        """A text table: w per mesh, the order and the extrapolated value per probe."""
        names = list(self.values)
        lines = [f"{'mesh':<10}" + "".join(f"{'w(' + n + ')':>16}" for n in names)
                 + f"{'seconds':>10}"]
        for k, (nx, ny) in enumerate(self.meshes):
            lines.append(f"{f'{nx} x {ny}':<10}" + "".join(
                f"{self.values[n][k]:>16.8f}" for n in names) + f"{self.seconds[k]:>10.3f}")
        lines.append(f"{'order':<10}" + "".join(f"{self.order[n]:>16.3f}" for n in names))
        lines.append(f"{'limit':<10}" + "".join(f"{self.extrapolated[n]:>16.8f}"
                                                  for n in names))
        lines.append(f"{'rel. err.':<10}" + "".join(
            f"{self.relative_error(n):>16.2e}" for n in names) + f"  (of the {self.meshes[0][0]}"
            f" x {self.meshes[0][1]} mesh)")
        if len(self.meshes) < 4:
            lines.append(f"{len(self.meshes)} meshes give one order, which cannot show whether "
                         "it has settled: use levels >= 4 before trusting the limit and the "
                         "error estimate")
        elif not all(self.asymptotic.values()):
            lines.append("not in the asymptotic range (the orders of the last two mesh triples "
                         f"differ by more than {ORDER_AGREEMENT:.0%}): refine further before "
                         "trusting the limit and the error estimate")
        return "\n".join(lines)


def richardson(f1, f2, f3, ratio=2.0):
    """(observed order, extrapolated value) from values on meshes of size h, h/r, h/r^2.

    >>> p, f = richardson(1 + 0.25, 1 + 0.0625, 1 + 0.015625)  # f = 1 + h^2, h = 1/2, 1/4, 1/8
    >>> round(p, 12), round(f, 12)
    (2.0, 1.0)
    """
    d1, d2 = f1 - f2, f2 - f3
    if d2 == 0.0 or d1 == 0.0 or d1 / d2 <= 0:
        return float("nan"), f3  # converged to rounding, or not monotone
    p = math.log(abs(d1 / d2)) / math.log(ratio)
    if p < MIN_ORDER:  # differences that do not shrink: no limit to extrapolate to (an order
        return float("nan"), f3  # of -0.14 put it outside the data, on the wrong side)
    return p, f3 + (f3 - f2) / (ratio ** p - 1.0)


#: The least observed order :func:`richardson` extrapolates with: below it the differences
#: barely shrink (at 0.5 the limit lies 2.4 last differences beyond the finest value), and
#: the meshes are not in the asymptotic range.
MIN_ORDER = 0.5


def convergence(membrane, levels=4, mode="fast"):
    """Solve ``membrane`` on its mesh and ``levels - 1`` meshes refined by 2 in each direction.

    Args:
        membrane: a :class:`fem.Membrane` (its mesh is the coarsest).
        levels: meshes to solve, >= 3 (default 4: the order then comes from the three
            finest).
        mode: solve mode (see :meth:`fem.Membrane.solve`).

    Raises:
        ValueError: bad ``levels``; a mesh too large for memory (from :class:`fem.Membrane`);
            a solve that does not converge.
    """
    from .membrane import Membrane

    if isinstance(levels, bool) or not isinstance(levels, int) or levels < 3:
        raise ValueError(f"levels must be an integer >= 3, got levels={levels!r}")
    m = membrane
    meshes = [(m.nx * 2 ** k, m.ny * 2 ** k) for k in range(levels)]
    values = {n: [] for n in m.probes}
    seconds = []
    for nx, ny in meshes:
        # one solve per mesh: a reference start (fem.start) would cost a solve of its own
        res = Membrane(m.l, m.b, m.t, m.E, m.nu, m.p, nx, ny, m.edges, m.probes,
                       m.probe_frame).solve(mode=mode, start="ritz")
        if not res.converged:
            raise ValueError(f"the {nx} x {ny} mesh did not converge: {res.reason}")
        for n in m.probes:
            values[n].append(res.probe_w[n])
        seconds.append(res.seconds)
    order, orders, extrapolated, error, asymptotic = {}, {}, {}, {}, {}
    for n, v in values.items():
        orders[n] = [richardson(*v[k:k + 3])[0] for k in range(len(v) - 2)]
        p, f = richardson(*v[-3:])
        order[n], extrapolated[n] = p, f
        error[n] = [abs(f - x) for x in v]
        asymptotic[n] = bool(len(orders[n]) >= 2 and np.isfinite(orders[n][-2:]).all()
                             and abs(orders[n][-1] - orders[n][-2]) <= ORDER_AGREEMENT * abs(p))
    return ConvergenceResult(meshes, values, order, orders, extrapolated, error, asymptotic,
                             seconds)
