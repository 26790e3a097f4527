"""Execution: a model run over samples, on local cores or a Dask cluster, resumably.

Layer: below :mod:`uqkit.inputs`, above the analyses. ``model`` states the model protocol
(outputs, statuses), ``per_run`` a model from a function of one run; ``identity`` a
model's identity (what stores key its results by); ``executors`` the pools,
``fork_server`` the fork server the local pool's workers come from on Linux
(``server_preload`` what it imports), ``interrupts`` Ctrl-C while waiting for them;
``loaded_code`` when a warm pool may be kept; ``placement`` where a batch runs;
``propagation`` runs a model over a sample in chunks, ``result`` holds what it gives back;
``store`` and ``cache`` keep finished runs on disk, ``kept_runs`` each run's answer until
its chunk is stored; ``runner`` batches an analysis's calls on one pool. Imports numpy,
loky, Dask (when asked), :mod:`uqkit.inputs` and :mod:`uqkit.validation`; never fem or
surrogates.
"""
from .._lazy import lazy_exports

_EXPORTS = {"propagate": "propagation", "PropagationResult": "result",
            "PropagationError": "propagation", "PropagationInterrupted": "propagation",
            "StudyStore": "store", "load_dataset": "store", "ResultCache": "cache",
            "ModelRunner": "runner", "RunContext": "model", "make_executor": "executors",
            "PerRunModel": "per_run"}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
