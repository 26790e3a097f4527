"""The membrane study's settings (a dataclass, checked on construction) and constants.

Imports: numpy, uqkit (and fem's presets) and studies.common; nothing of the study's other
modules.
"""
from dataclasses import dataclass, field

from fem.presets import PAPER_PROBES
from uqkit.adapters import MembraneModel
from uqkit.execution.executors import worker_count
from uqkit.validation import check_count

from ..common import apply_paper_defaults, check_mode_settings

__all__ = ["PROBES", "PAPER_R2", "PRIORS", "PAPER_DEFAULTS", "MembraneStudy",
           "discretisation_levels", "WORKER_MODULES"]

#: What the pool's workers import for the study's tasks (the FE, then the fits: torch
#: through the BDL), which the local pool's fork server imports once for all of them
#: (:mod:`uqkit.execution.fork_server`).
WORKER_MODULES = ("uqkit.adapters", "studies.membrane.tasks", "sklearn.gaussian_process",
                  "surrogates.baselines", "surrogates.bdl", "torch")


#: The output names: the paper's probes, in order.
PROBES = tuple(PAPER_PROBES)


#: The paper's Table 4 (R^2 on validation data).
PAPER_R2 = {"direct": {64: 0.9720, 128: 0.9982, 256: 0.9990, 512: 0.9993},
            "hierarchical": {64: 0.9935, 128: 0.9989, 256: 0.9983, 512: 0.9994}}


#: The two priors of Table 4, as :func:`surrogates.make_prior` specs.
PRIORS = {"direct": "normal(0, 1)", "hierarchical": "hierarchical-normal"}


#: The settings whose default (None) is ours, or the paper's with ``paper``: name -> (ours,
#: the paper's). A value given is kept with ``paper`` too.
PAPER_DEFAULTS = {"n_truth": (20_000, 500_000)}


@dataclass
class MembraneStudy:
    """Settings of the membrane study (the defaults finish in a few minutes on 2 cores).

    Attributes:
        out: output directory.
        seed: master seed; every data set and fit derives its seed from it.
        train_sizes: training-set sizes of the Table-4 comparison (nested subsets of one pool).
        n_validation: held-out FE runs for the comparison.
        n_calibration: further held-out FE runs on which each surrogate's predictive variance
            is recalibrated (:meth:`surrogates.BDL.calibrate`); both raw and recalibrated
            coverage are reported.
        n_seeds: training seeds per (prior, size); medians and spreads are over them.
        n_uq_train: FE runs the UQ surrogates train on (paper: 1000).
        n_surrogate_mc: surrogate Monte Carlo samples (paper: 1e5).
        n_truth: FE Monte Carlo ground-truth samples (default None: 20,000, with ``paper``
            the paper's 5e5; a value given is kept, :data:`PAPER_DEFAULTS`).
        paper: train with the paper's method and exact settings (mean-field VI, batch 16,
            200 ELBO samples) and use the paper's 5e5 truth unless ``n_truth`` is given.
        epochs: Adam epochs of ``--paper`` fits; max_iter: L-BFGS iterations of the default
            fits.
        workers: processes for FE runs and training; dask: a Dask scheduler address for the FE.
        nx, ny: the FE mesh (elements along l and b); the report gives its discretisation
            error at the mean inputs.
        retry_failed: also compute again the FE runs a store holds as failed by the solver
            (non-convergence); runs that raised are always computed again.
    """

    out: str
    seed: int = 0
    train_sizes: tuple = (64, 128, 256, 512)
    n_validation: int = 1000
    n_calibration: int = 500
    n_seeds: int = 5
    n_uq_train: int = 1000
    n_surrogate_mc: int = 100_000
    n_truth: int = None
    paper: bool = False
    workers: int = None
    dask: str = None
    epochs: int = 1000
    max_iter: int = 2000
    n_paths: int = 30
    nx: int = 20
    ny: int = 10
    progress: bool = True
    priors: dict = field(default_factory=lambda: dict(PRIORS))
    retry_failed: bool = False

    def __post_init__(self):
        apply_paper_defaults(self, PAPER_DEFAULTS)  # a value given always wins
        check_mode_settings(self, paper_only=("epochs",), default_only=("max_iter",))
        for name in ("n_validation", "n_calibration", "n_seeds", "n_uq_train", "n_surrogate_mc",
                     "n_truth", "epochs", "max_iter"):
            check_count(getattr(self, name), name)
        if not self.train_sizes or any(int(n) < 8 for n in self.train_sizes):
            raise ValueError(f"train_sizes must be integers >= 8, got {self.train_sizes!r}")
        # each size once: 32,16,32 fitted and reported 32 twice ("training sizes [16, 32, 32]")
        self.train_sizes = tuple(sorted({int(n) for n in self.train_sizes}))
        self.workers = worker_count(self.workers)
        MembraneModel(nx=self.nx, ny=self.ny)  # the mesh, validated now
        if discretisation_levels(self.nx, self.ny) < 3:
            raise ValueError(f"a {self.nx} x {self.ny} mesh refined twice (for its "
                             "discretisation error) does not fit in this machine's memory; "
                             "use a coarser --nx/--ny")


def discretisation_levels(nx, ny):
    """Meshes (4, else 3) for :func:`discretisation_error` whose finest fits in memory; fewer
    than 3 if not even that does."""
    from fem import MEMORY_SHARE, physical_memory_bytes, solver_memory_bytes

    have = physical_memory_bytes()
    for levels in (4, 3):
        f = 2 ** (levels - 1)
        if have is None or solver_memory_bytes(nx * f, ny * f) <= MEMORY_SHARE * have:
            return levels
    return 0
