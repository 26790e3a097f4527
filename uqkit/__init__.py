"""uqkit: structural uncertainty quantification.

Random inputs (:mod:`uqkit.inputs`), seeded sampling (:mod:`uqkit.sampling`), Monte Carlo
propagation of any model on local cores or a Dask cluster with a resumable study store
(:mod:`uqkit.propagation`, :mod:`uqkit.store`) and statistics (:mod:`uqkit.statistics`).
The paper's inputs are in :mod:`uqkit.presets`.
"""
from .inputs import RandomInputs
from .propagation import PropagationResult, propagate
from .sampling import Samples, sample
from .store import StudyStore, load_dataset

__all__ = ["PropagationResult", "RandomInputs", "Samples", "StudyStore", "load_dataset",
           "propagate", "sample"]
