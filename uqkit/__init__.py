"""uqkit: structural uncertainty quantification.

The package in layers; each imports only from the layers above it::

    uqkit.validation,        one set of argument checks (numpy only); what the installed
    uqkit.dependencies       packages can do (numpoly with this NumPy)
    uqkit.inputs             random inputs, distributions, copulas, sampling, u <-> x maps
    uqkit.execution          models, executors (cores, Dask), propagate, stores, caches
    uqkit.statistics,        analyses of a model's runs: moments and intervals, Sobol'
    uqkit.sensitivity,       indices, failure probabilities, Bayesian calibration
    uqkit.reliability,
    uqkit.calibration
    uqkit.external           FE programs on the machine (CalculiX, ...) as models
    uqkit.adapters,          the joins to :mod:`fem` and :mod:`surrogates` (the only modules
    uqkit.presets, uqkit.cli that import them) and the command line

The names below load on first use, so a pool worker that only runs a model does not import
chaospy.
"""
from importlib.metadata import PackageNotFoundError, version as _version

from ._lazy import lazy_exports

try:
    __version__ = _version("uqkit")  # single-sourced: pyproject.toml's version
except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
    __version__ = "unknown"

_EXPORTS = {"RandomInputs": "inputs", "PropagationResult": "execution.propagation",
            "propagate": "execution.propagation", "Samples": "inputs.sampling",
            "sample": "inputs.sampling", "StudyStore": "execution.store",
            "load_dataset": "execution.store", "PerRunModel": "execution.per_run"}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
