"""The reliability study's settings (a dataclass, checked on construction) and constants.

Imports: numpy, uqkit (and fem's presets) and studies.common; nothing of the study's other
modules.
"""
import math
from dataclasses import dataclass

from uqkit.adapters import MembraneModel
from uqkit.execution.executors import worker_count
from uqkit.validation import check_count

from ..common import apply_paper_defaults

__all__ = ["PROBES", "METHODS", "PAPER_DEFAULTS", "ReliabilityStudy"]


#: The membrane's outputs: the deflections at the paper's probes p1, p2 and p3.
PROBES = ("p1", "p2", "p3")


#: The methods of the comparison, in the report's order.
METHODS = ("form", "sorm", "is", "subset", "active-gp", "active-bdl")


#: The settings whose default (None) is ours, or the paper's with ``paper``: name -> (ours,
#: the paper's). A value given is kept with ``paper`` too.
PAPER_DEFAULTS = {"n_truth": (100_000, 1_000_000), "n_sobol": (1024, 4096)}


@dataclass
class ReliabilityStudy:
    """Settings of the reliability study (the defaults finish in a few minutes on 2 cores).

    Attributes:
        out: output directory.
        seed: master seed of every draw.
        quantile: the threshold's quantile of w(p1) in the pilot sample.
        n_pilot: FE runs of the pilot that sets the threshold.
        n_truth: FE Monte Carlo runs of the truth (also the active-learning population).
        n_is: importance-sampling runs; n_subset: subset-simulation runs per level.
        max_runs: true-run budget of active learning (default ``n_truth // 100``).
        n_sobol: base samples of the FE pick-freeze indices (a power of two).
        n_sobol_train: FE runs (Latin hypercube) the BDL and the PCE of the indices train on.
        n_sobol_surrogate: base samples of the surrogate's indices (a power of two).
        max_iter: L-BFGS iterations of every BDL fit.
        paper: a larger run (1e6 truth, 2^12 FE Sobol' base samples), ``n_truth`` and
            ``n_sobol`` defaulting (None) to these instead of 1e5 and 2^10; a value given is
            kept (:data:`PAPER_DEFAULTS`).
        workers, dask: processes (or a Dask scheduler) for the FE runs.
        nx, ny: the FE mesh.
    """

    out: str
    seed: int = 0
    quantile: float = 1e-3
    n_pilot: int = 20_000
    n_truth: int = None
    n_is: int = 2000
    n_subset: int = 1000
    max_runs: int = None
    n_sobol: int = None
    n_sobol_train: int = 256
    n_sobol_surrogate: int = 8192
    max_iter: int = 2000
    paper: bool = False
    workers: int = None
    dask: str = None
    nx: int = 20
    ny: int = 10
    progress: bool = True
    retry_failed: bool = False

    def __post_init__(self):
        apply_paper_defaults(self, PAPER_DEFAULTS)  # a value given always wins
        if self.max_runs is None:
            self.max_runs = max(self.n_truth // 100, 20)
        for name in ("n_pilot", "n_truth", "n_is", "n_subset", "max_runs", "n_sobol",
                     "n_sobol_train", "n_sobol_surrogate", "max_iter"):
            check_count(getattr(self, name), name)
        for name in ("n_sobol", "n_sobol_surrogate"):
            n = getattr(self, name)
            if n & (n - 1):
                raise ValueError(f"{name} must be a power of two, got {name}={n}")
        q = self.quantile
        if not (isinstance(q, (int, float)) and math.isfinite(q) and 0 < q < 0.5):
            raise ValueError(f"quantile must be a number in (0, 0.5), got quantile={q!r}")
        if self.n_pilot * q < 5:
            raise ValueError(f"n_pilot={self.n_pilot} puts fewer than 5 pilot runs below the "
                             f"quantile {q}: the threshold would be a guess; raise n_pilot to "
                             f"at least {math.ceil(5 / q)}")
        if self.n_truth * q < 10:
            raise ValueError(f"n_truth={self.n_truth} expects fewer than 10 failures at Pf "
                             f"~ {q}; raise n_truth to at least {math.ceil(10 / q)}")
        self.workers = worker_count(self.workers)
        MembraneModel(nx=self.nx, ny=self.ny)  # the mesh, validated now
