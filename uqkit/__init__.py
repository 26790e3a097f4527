"""uqkit: structural uncertainty quantification.

Random inputs (:mod:`uqkit.inputs`), seeded sampling (:mod:`uqkit.sampling`), Monte Carlo
propagation of any model on local cores or a Dask cluster with a resumable study store
(:mod:`uqkit.propagation`, :mod:`uqkit.store`) and statistics (:mod:`uqkit.statistics`).
External programs (CalculiX, OpenSees, Abaqus, scripts) become models through
:mod:`uqkit.external`. The paper's inputs are in :mod:`uqkit.presets`.
"""
import importlib

#: The package's names and the modules they come from, imported on first use: a process that
#: needs only part of uqkit (a worker running a model, say) does not import chaospy and
#: scipy.stats for :mod:`uqkit.inputs` (1.22 of the 1.24 s that importing uqkit.adapters took).
_EXPORTS = {"RandomInputs": "inputs", "PropagationResult": "propagation",
            "propagate": "propagation", "Samples": "sampling", "sample": "sampling",
            "StudyStore": "store", "load_dataset": "store"}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
