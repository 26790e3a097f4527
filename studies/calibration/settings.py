"""The calibration study's settings (a dataclass, checked on construction) and constants.

Imports: numpy and uqkit (and fem's presets); nothing of the study's other modules.
"""
from dataclasses import dataclass

__all__ = ["VARIANTS", "CONTROL", "CalibrationStudy"]


#: The surrogate posteriors of the comparison, in the report's order.
VARIANTS = ("bdl", "bdl-no-variance", "gp")


#: The control: the FE posterior again with another seed, whose distance from the first is
#: the samplers' own Monte Carlo error, the floor of every comparison.
CONTROL = "fe-other-seed"


@dataclass
class CalibrationStudy:
    """Settings of the calibration study (the defaults finish in about 2.5 minutes on 2
    cores).

    Attributes:
        out: output directory.
        seed: seed of the true inputs, the noise, the training design and the samplers.
        noise: the measurement noise's standard deviation, a fraction of each deflection.
        n_measurements: repeated measurements of the three deflections.
        n_samples: TMCMC samples per stage (and posterior draws).
        n_train: FE runs the surrogates train on.
        max_iter: L-BFGS iterations of the BDL fit.
        workers, dask: processes (or a Dask scheduler) for the FE runs.
        progress: progress bars.
        nx, ny: the FE mesh.
        paper: refused (the study has no paper counterpart; ``--paper`` was silently
            ignored).
    """

    out: str
    seed: int = 0
    noise: float = 0.01
    n_measurements: int = 1
    n_samples: int = 8000
    n_train: int = 256
    max_iter: int = 2000
    workers: int = None
    dask: str = None
    progress: bool = True
    nx: int = 20
    ny: int = 10
    paper: bool = False

    def __post_init__(self):
        from uqkit.validation import check_float, check_int

        check_float(self.noise, "noise", 0, 1)
        check_int(self.n_measurements, "n_measurements", 1)
        check_int(self.n_samples, "n_samples", 50)
        check_int(self.n_train, "n_train", 8)
        check_int(self.max_iter, "max_iter", 1)
        if self.paper:
            raise ValueError("--paper: the calibration study has no counterpart in the paper, "
                             "so no paper settings to run")
        if self.workers is not None:
            from uqkit.execution.executors import worker_count

            self.workers = worker_count(self.workers)
        from uqkit.adapters import MembraneModel

        MembraneModel(nx=self.nx, ny=self.ny)  # the mesh, validated now
