"""The checks of :func:`uqkit.propagate`'s arguments, all made before a model runs or a store
is touched (a store made by a call with a bad argument kept its chunk size), and the samples
taken in the column order of the model's inputs (:func:`align_inputs`).

Imports: numpy, :mod:`uqkit.inputs.sampling` and :mod:`uqkit.validation`.
"""
from concurrent.futures import Executor

import numpy as np

from ..inputs.sampling import Samples
from ..validation import check_int

__all__ = ["KINDS", "align_inputs", "check_arguments", "check_executor", "check_settings",
           "check_chunk_size"]

#: The executors :func:`uqkit.propagate` starts by name.
KINDS = ("local", "serial", "dask")


def align_inputs(model, samples):
    """``(samples, X)``: the samples (an array becomes :class:`Samples` named by the model's
    ``input_names`` or x0, x1, ...) and their values in the column order of the model's
    ``input_names``, taken by name from named samples (a subset, reordered): a
    :class:`Samples` or a pandas DataFrame whose columns are names (they were read by
    position: a, b, c got the columns c, a, b); other DataFrames are arrays.

    Raises:
        ValueError: named samples lack an input the model needs, or an array has another
            number of columns than its ``input_names``.
    """
    if hasattr(samples, "columns") and hasattr(samples, "to_numpy") and all(
            isinstance(c, str) for c in samples.columns):  # a DataFrame of named columns
        samples = Samples(samples.to_numpy(dtype=float), tuple(samples.columns))
    if isinstance(samples, Samples):
        names = getattr(model, "input_names", None)
        if names is not None and tuple(names) != samples.names:
            missing = [n for n in names if n not in samples.names]
            if missing:
                raise ValueError(f"the model needs inputs {tuple(names)} but the samples have "
                                 f"{samples.names}; missing {missing}")
            return samples, np.column_stack([samples[n] for n in names])
        return samples, samples.values
    X = np.asarray(samples, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"samples must be an (n, d) array, got shape {X.shape}")
    names = getattr(model, "input_names", None)
    if names is not None and X.shape[1] != len(names):
        raise ValueError(f"the model takes {len(names)} inputs {tuple(names)} but the samples "
                         f"have {X.shape[1]} columns")
    names = tuple(names) if names is not None else tuple(f"x{i}" for i in range(X.shape[1]))
    return Samples(X, names), X


def check_arguments(model, samples):
    """Refuse, by name, the two mistakes propagate's arguments invite (numpy's "float()
    argument must be ... not 'RandomInputs'" came from deep inside): the random inputs
    where their sample belongs, as sobol_indices(model, inputs) takes them, and the two
    arguments swapped."""
    import sys

    module = sys.modules.get("uqkit.inputs.random_inputs")  # unloaded: none was made
    if module is not None and isinstance(samples, module.RandomInputs):
        raise TypeError("propagate(model, samples) runs the model over a sample, not over the "
                        "random inputs: propagate(model, sample(inputs, n, seed=...))")
    if callable(samples) and not callable(model):
        raise TypeError(f"propagate(model, samples): the model comes first; got a "
                        f"{type(model).__name__} and then a callable "
                        f"{type(samples).__name__}")


def check_executor(executor, dask=None):
    """Refuse an executor that is neither an open ``concurrent.futures.Executor`` nor one of
    :data:`KINDS` (None reached the pool as "'NoneType' object has no attribute 'submit'"),
    and a Dask one without the scheduler's address, with a ValueError naming it.

    >>> check_executor("gpu")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown executor kind 'gpu'; use 'local', 'serial' or 'dask', or an open ...
    """
    if isinstance(executor, Executor) or dask is not None:
        return
    if not (isinstance(executor, str) and executor in KINDS):
        raise ValueError(f"unknown executor kind {executor!r}; use 'local', 'serial' or "
                         "'dask', or an open concurrent.futures.Executor")
    if executor == "dask":
        raise ValueError("executor='dask' needs the scheduler's address: dask='tcp://host:8786'")


def check_settings(settings):
    """``settings`` as a dict (None: none), or a ValueError naming it where it is not a dict
    of string keys (a store records them as its manifest's JSON object).

    >>> check_settings(None), check_settings({"seed": 1})
    ({}, {'seed': 1})
    """
    if settings is None:
        return {}
    if not isinstance(settings, dict):
        raise ValueError(f"settings must be a dict of names to values, got "
                         f"settings={settings!r}")
    bad = [key for key in settings if not isinstance(key, str)]
    if bad:
        raise ValueError(f"settings' keys must be strings (names), got {bad!r} in "
                         f"settings={settings!r}")
    return dict(settings)


def check_chunk_size(chunk_size, name="chunk_size"):
    """``chunk_size`` (None: the default) as an int >= 1, or a ValueError naming it (NaN's
    message named no argument, and 2.7 became 2 without a word)."""
    return None if chunk_size is None else check_int(chunk_size, name, 1)
