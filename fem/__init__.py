"""fem: a numba-accelerated Q4 geometrically nonlinear membrane solver.

Newton-Raphson load stepping on a total-Lagrangian St. Venant-Kirchhoff membrane with the
full Green-Lagrange strain. Stands alone: it imports neither ``uqkit`` nor ``surrogates``.
Its modules, each importing only those above it::

    validation, presets      argument checks; the paper's probe points
    element, banded, mesh    the Q4 kernel; banded Cholesky; the mesh and its edges
    assembly, newton         global assembly; Newton-Raphson paths and their settings
    system                   the solver's arrays for a stack of membranes
    start                    starting states: solved membranes of nearly the same shape
    membrane                 Membrane and MembraneResult: one solve
    batch, convergence       many solves on every core; mesh convergence
    plot                     figures of a result
    numba_cache              numba's cache of the kernels, emptied when fem's sources change

>>> from fem import Membrane
>>> Membrane(l=2, b=1, t=0.0015, E=210, nu=0.3).solve().converged
True
"""
import os as _os

from . import assembly, banded, batch, element, newton, numba_cache
from .batch import COLUMNS, BatchResult, solve_batch
from .convergence import ConvergenceResult, convergence
from .membrane import (DEFAULT_PROBES, MEMORY_SHARE, STRAIN_LIMIT, Membrane, MembraneResult,
                       physical_memory_bytes, solver_memory_bytes)
from .plot import plot_deflection, plot_load_paths

# before any kernel runs: numba would reuse a caller's machine code after a callee changed
numba_cache.refresh((element, banded, assembly, newton, batch), _os.path.dirname(__file__))

__all__ = ["COLUMNS", "BatchResult", "ConvergenceResult", "DEFAULT_PROBES", "MEMORY_SHARE",
           "Membrane", "MembraneResult", "STRAIN_LIMIT", "convergence", "physical_memory_bytes",
           "plot_deflection", "plot_load_paths", "solve_batch", "solver_memory_bytes"]
