"""The wind study's settings (a dataclass, checked on construction) and constants.

Imports: numpy, uqkit (and fem's presets) and studies.common; nothing of the study's other
modules.
"""
import os
from dataclasses import dataclass

from uqkit.execution.executors import worker_count
from uqkit.validation import check_count

from ..common import apply_paper_defaults

__all__ = ["SYNTHETIC", "PRIORS", "NETS", "PAPER_RMS", "PAPER_DEFAULTS", "WindStudy"]


#: The shipped synthetic building in the TPU database's .mat layout.
SYNTHETIC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                         "tpu_synthetic_1to1to5_0deg.mat")


#: The two priors compared, as :func:`surrogates.make_prior` specs.
PRIORS = {"direct": "normal(0, 1)", "hierarchical": "hierarchical-normal"}


#: Hidden layers of the BDL for the mean and the rms pressure coefficient.
NETS = {"mean": (15, 10), "rms": (30, 15)}


#: The paper's Table 5: RMSE of Cp_rms for 100..600 training points.
PAPER_RMS = {
    "direct": {"windward": (0.077, 0.030, 0.027, 0.022, 0.019, 0.017),
               "leftside": (0.039, 0.030, 0.027, 0.019, 0.013, 0.012),
               "leeward": (0.014, 0.013, 0.011, 0.011, 0.010, 0.010),
               "rightside": (0.037, 0.025, 0.025, 0.021, 0.019, 0.015)},
    "hierarchical": {"windward": (0.051, 0.021, 0.021, 0.020, 0.018, 0.015),
                     "leftside": (0.037, 0.030, 0.024, 0.016, 0.012, 0.012),
                     "leeward": (0.014, 0.011, 0.011, 0.010, 0.010, 0.009),
                     "rightside": (0.033, 0.025, 0.023, 0.020, 0.014, 0.011)}}


#: The settings whose default (None) is ours, or the paper's with ``paper``: name -> (ours,
#: the paper's). A value given is kept with ``paper`` too.
PAPER_DEFAULTS = {"sizes": ((100, 200, 400, 700), tuple(range(100, 701, 100))),
                  "seeds": (2, 3)}


@dataclass
class WindStudy:
    """Settings; ``sizes`` and ``seeds`` default (None) to 100, 200, 400, 700 and 2, with
    ``paper`` to every size 100..700 and 3 seeds (:data:`PAPER_DEFAULTS`; a value given is
    kept)."""

    out: str
    tpu: str = None
    sizes: tuple = None
    seeds: int = None
    grid: tuple = (250, 750)
    epochs: int = 1000
    paper: bool = False
    workers: int = None
    progress: bool = True

    def __post_init__(self):
        apply_paper_defaults(self, PAPER_DEFAULTS)  # a value given always wins
        check_count(self.seeds, "seeds")
        if not self.sizes or any(int(n) < 10 for n in self.sizes):
            raise ValueError(f"sizes must be integers >= 10, got {self.sizes!r}")
        self.sizes = tuple(int(n) for n in self.sizes)
        check_count(self.epochs, "epochs")
        self.tpu = self.tpu or SYNTHETIC
        if os.path.isdir(self.tpu):
            raise ValueError(f"--tpu: {self.tpu} is a directory, not a TPU .mat file")
        if not os.path.isfile(self.tpu):
            raise ValueError(f"--tpu: no such file: {self.tpu}")
        self.workers = worker_count(self.workers)
