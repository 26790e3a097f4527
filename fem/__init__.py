"""fem: a numba-accelerated Q4 geometrically nonlinear membrane solver.

Newton-Raphson load stepping on a total-Lagrangian St. Venant-Kirchhoff membrane with the
full Green-Lagrange strain. Stands alone: it imports neither ``uqkit`` nor ``surrogates``.

>>> from fem import Membrane
>>> Membrane(l=2, b=1, t=0.0015, E=210, nu=0.3).solve().converged
True
"""
from .batch import COLUMNS, BatchResult, solve_batch
from .convergence import ConvergenceResult, convergence
from .membrane import DEFAULT_PROBES, Membrane, MembraneResult
from .plot import plot_deflection, plot_load_paths

__all__ = ["COLUMNS", "BatchResult", "ConvergenceResult", "DEFAULT_PROBES", "Membrane",
           "MembraneResult", "convergence",
           "plot_deflection", "plot_load_paths", "solve_batch"]
