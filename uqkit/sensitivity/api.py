"""The entry point of a Sobol' analysis on a model, :func:`sobol_indices`: its checks, the
design its method needs, the runs and the estimator."""
import time
import warnings

import numpy as np

from ..execution.runner import ModelRunner
from ..inputs.transforms import unit_to_x
from ..validation import check_int, check_seed
from .pce import pce_indices
from .pick_freeze import (_check_intervals, _saltelli_replicates, _saltelli_with_ci,
                          _check_replicates, _sobol_design, pick_freeze_design,
                          replicate_designs)
from .result import _check_outputs, _result, _warn_inconsistent

__all__ = ["BOOTSTRAP_DEFAULT", "METHODS", "sobol_indices"]

#: The estimators of :func:`sobol_indices`: ``"saltelli"`` (pick-freeze Monte Carlo) and
#: ``"pce"`` (from a polynomial chaos expansion's coefficients).
METHODS = ("saltelli", "pce")
#: Bootstrap resamples of :func:`sobol_indices` unless told otherwise.
BOOTSTRAP_DEFAULT = 200


def _warn_dependent(inputs):
    """Warn that dependent inputs get the indices of their Rosenblatt variables (a model of
    x2 alone gave x1 an index of 0.64 at correlation 0.8, under x1's name)."""
    if getattr(inputs.joint, "stochastic_dependent", False):
        warnings.warn(f"the inputs {inputs.names} are dependent: these are the indices of the "
                      "independent variables of their Rosenblatt transform, in this order (an "
                      "input's index holds what it shares with the inputs after it), not of "
                      "the inputs one by one", UserWarning, stacklevel=4)


def _check_common(n, seed, bootstrap, level, inputs):
    from ..inputs.random_inputs import check_inputs

    check_inputs(inputs)
    n = check_int(n, "n", 2)
    check_seed(seed)
    _warn_dependent(inputs)
    return (n, *_check_intervals(bootstrap, level))


def sobol_indices(model, inputs, n=2 ** 12, seed=0, bootstrap=None, level=0.95,
                  method="saltelli", order=None, executor="local", workers=None, dask=None,
                  chunk_size=None, store=None, progress=False, replicates=None):
    """First-order and total Sobol' indices of ``model`` over ``inputs``.

    Args:
        model: a uqkit model, (m, d) -> (m,) or (m, k); run through :func:`uqkit.propagate`.
        inputs: :class:`uqkit.inputs.RandomInputs` (any joint; see the module notes on
            dependent inputs).
        n: base sample size, a power of two (``"saltelli"``: n (d + 2) model runs;
            ``"pce"``: n runs).
        seed: seed of the scrambled Sobol' design and of the bootstrap.
        bootstrap: bootstrap resamples for the intervals (0: none, else >= 20; default
            200, none with ``replicates``).
        level: confidence level of the intervals.
        method: ``"saltelli"`` (pick-freeze) or ``"pce"`` (polynomial chaos).
        order: total degree of the PCE (default: the largest <= 8 with at most n / 4 terms).
        executor, workers, dask, chunk_size, store, progress: as in :func:`uqkit.propagate`.
        replicates: R >= 2 (8 or more advised) for intervals from R independent scrambled
            designs of n / R base rows each (``"saltelli"`` only): the indices are the mean
            of theirs and the intervals Student-t. At the same n (d + 2) runs they cover
            their level where the bootstrap may not (n < 1024), and the indices are less
            accurate: the module notes give both measured.

    Returns:
        :class:`SobolResult`. Warns (UserWarning) when n looks too small: a first-order
        index above its total index beyond the intervals, or an index below 0 beyond its
        interval.

    Example:
        >>> from uqkit.inputs import RandomInputs
        >>> inputs = RandomInputs.from_spec({"x1": "normal(0, 1)", "x2": "normal(0, 1)"})
        >>> res = sobol_indices(lambda X: X[:, 0] + 2 * X[:, 1], inputs, n=1024, bootstrap=50,
        ...                     executor="serial")
        >>> res.first.round(2), res.total.round(2), res.model_runs   # exact: 0.2 and 0.8
        (array([0.2, 0.8]), array([0.2, 0.8]), 4096)
    """
    t0 = time.perf_counter()
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {METHODS}")
    if replicates is not None:
        if method != "saltelli" or bootstrap:
            raise ValueError(f"replicates={replicates!r} gives the intervals of "
                             "method='saltelli' without a bootstrap; got " + (
                                 f"method={method!r}" if method != "saltelli" else
                                 f"bootstrap={bootstrap!r} too: pass one of them"))
        bootstrap = 0
    elif bootstrap is None:
        bootstrap = BOOTSTRAP_DEFAULT
    n, bootstrap, level = _check_common(n, seed, bootstrap, level, inputs)
    if replicates is not None:
        replicates = _check_replicates(replicates, n)
    if order is not None and method != "pce":
        raise ValueError(f"order={order!r} is the degree of a PCE: it takes method='pce' "
                         f"(method={method!r} has no order)")
    d = inputs.dim
    settings = {"analysis": "sobol", "method": method, "seed": seed}
    if method == "pce":
        P = _sobol_design(d, n, seed)
    elif replicates:
        P = replicate_designs(d, n, replicates, seed)
        settings["replicates"] = replicates
    else:
        P = pick_freeze_design(d, n, seed)
    X = unit_to_x(inputs, P)
    runner = ModelRunner(model, inputs, executor, workers, dask, chunk_size, store,
                         settings=settings, progress=progress)
    with runner:
        Y = _check_outputs(runner(X, tag="sobol"), len(X))
    rng = np.random.default_rng(None if seed is None else [seed, 1])
    info = {}
    if method == "pce":
        first, total, first_ci, total_ci, info = pce_indices(P, Y, inputs, order, bootstrap,
                                                             level, rng)
    elif replicates:
        first, total, first_ci, total_ci = _saltelli_replicates(Y, d, n, replicates, level)
        info = {"replicates": replicates, "replicate_n": n // replicates}
    else:
        first, total, first_ci, total_ci = _saltelli_with_ci(Y, d, n, bootstrap, level, rng)
    res = _result(inputs, first, total, first_ci, total_ci, runner.runs, n, method, level,
                  getattr(model, "output_names", ()), info=info, t0=t0)
    _warn_inconsistent(res)
    return res
