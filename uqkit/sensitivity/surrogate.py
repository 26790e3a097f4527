"""Sobol' indices of a fitted surrogate: those of its predictive mean with bootstrap
intervals, and an epistemic band from its posterior function draws."""
import time
import warnings

import numpy as np

from ..adapters import SurrogateModel, feature_names, quiet_feature_names
from ..inputs.transforms import unit_to_x
from ..validation import check_float, check_int
from .api import _check_common
from .pick_freeze import _saltelli_with_ci, _split, pick_freeze_design, saltelli_estimates
from .result import _check_outputs, _result, _undefined_where_constant, _warn_inconsistent

__all__ = ["sobol_indices_surrogate"]


def _unwrapped(surrogate, X, inputs):
    """The fitted surrogate inside a uqkit model of one (:class:`uqkit.adapters.SurrogateModel`,
    which has no ``predict``: it failed with an AttributeError after a warning that it drew
    no functions), with the design's columns in its ``input_names`` order."""
    from ..execution.arguments import align_inputs
    from ..inputs.sampling import Samples

    inner = getattr(surrogate, "surrogate", None)
    if hasattr(surrogate, "predict") and feature_names(surrogate) is not None:
        # fitted on a DataFrame: its columns by name (they were taken by position, and a
        # surrogate fitted on E, P gave P's index to E)
        return surrogate, align_inputs(SurrogateModel(surrogate), Samples(X, inputs.names))[1]
    if hasattr(surrogate, "predict") or inner is None or not hasattr(inner, "predict"):
        return surrogate, X
    return inner, align_inputs(surrogate, Samples(X, inputs.names))[1]


def _surrogate_outputs(surrogate, X, function_draws):
    """(mean (m, k), draws (S, m, k) or None) of a surrogate at X."""
    import inspect

    if function_draws and _draws_functions(surrogate):
        kwargs = dict(n_samples=function_draws, return_samples=True)
        if "levels" in inspect.signature(surrogate.predict_distribution).parameters:
            kwargs["levels"] = ()  # no predictive intervals: only the draws are used
        pred = surrogate.predict_distribution(X, **kwargs)
        samples = getattr(pred, "samples", None)
        if samples is None:
            raise ValueError(f"{type(surrogate).__name__}.predict_distribution(..., "
                             "return_samples=True) gave no .samples of function draws; pass "
                             "function_draws=0 for the indices of the mean alone")
        samples = np.asarray(samples, dtype=float)
        if samples.ndim == 2:
            samples = samples[..., None]
        mean = _finite_predictions(_check_outputs(pred.mean, len(X)), X, "predictive mean")
        _finite_predictions(samples.reshape(-1, len(X), samples.shape[-1]).max(axis=0), X,
                            "function draws")
        return mean, samples
    if function_draws:
        warnings.warn(f"{type(surrogate).__name__} draws no posterior functions "
                      "(predict_distribution(X, n_samples=S, return_samples=True)): no epistemic "
                      "band, the indices of its predict() only", UserWarning, stacklevel=3)
    return _finite_predictions(_check_outputs(surrogate.predict(X), len(X)), X,
                               "predictions"), None


def _finite_predictions(values, X, what):
    """``values`` (m, k), or a ValueError naming the surrogate's first non-finite one (every
    index came out 0 without a word)."""
    bad = ~np.isfinite(values).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"the surrogate's {what} are not finite at {int(bad.sum())} of "
                         f"{len(X)} points of the design, the first at inputs "
                         f"{X[i].tolist()}: its indices would be meaningless")
    return values


def _draws_functions(surrogate):
    """Whether ``surrogate.predict_distribution`` can return posterior function draws."""
    import inspect

    method = getattr(surrogate, "predict_distribution", None)
    return method is not None and "return_samples" in inspect.signature(method).parameters


def sobol_indices_surrogate(surrogate, inputs, n=2 ** 12, seed=0, function_draws=100,
                            bootstrap=200, level=0.95, band=0.95):
    """Sobol' indices of a fitted surrogate, with an epistemic band.

    The pick-freeze design of :func:`sobol_indices` is predicted in this process (a
    surrogate is cheap). The indices and bootstrap intervals are those of the predictive
    mean; with ``function_draws=S`` and a surrogate offering
    ``predict_distribution(X, n_samples=S, return_samples=True)`` (a result with ``.mean``
    and ``.samples`` (S, m) or (S, m, k)), the band holds the ``band`` central quantiles of
    the indices of the S posterior function draws. A surrogate with only ``predict(X)``
    gives the indices of its prediction.

    Args:
        surrogate: a fitted surrogate trained on the columns of ``inputs.names``.
        inputs, n, seed, bootstrap, level: as in :func:`sobol_indices`.
        function_draws: posterior function draws S for the band (0: none).
        band: probability of the epistemic band.

    Returns:
        :class:`SobolResult` with ``method="surrogate"``, ``model_runs=0`` and
        ``first_band``, ``total_band`` (2, d[, k]).
    """
    t0 = time.perf_counter()
    n, bootstrap, level = _check_common(n, seed, bootstrap, level, inputs)
    function_draws = check_int(function_draws, "function_draws", 0)
    band = check_float(band, "band", 0.0, 1.0)
    d = inputs.dim
    X = unit_to_x(inputs, pick_freeze_design(d, n, seed))
    surrogate, X = _unwrapped(surrogate, X, inputs)
    with quiet_feature_names():
        mean, draws = _surrogate_outputs(surrogate, X, function_draws)
    rng = np.random.default_rng(None if seed is None else [seed, 1])
    first, total, first_ci, total_ci = _saltelli_with_ci(mean, d, n, bootstrap, level, rng)
    fb = tb = None
    if draws is not None:
        est = [saltelli_estimates(*_split(f, d, n)) for f in draws]
        q = [(1 - band) / 2, (1 + band) / 2]
        fb = np.quantile(np.stack([e[0] for e in est]), q, axis=0)
        tb = np.quantile(np.stack([e[1] for e in est]), q, axis=0)
    fb, tb = _undefined_where_constant(mean, fb, tb)  # as _saltelli_with_ci does the rest
    res = _result(inputs, first, total, first_ci, total_ci, 0, n, "surrogate", level,
                  getattr(surrogate, "output_names", ()), t0, fb, tb,
                  band if draws is not None else None,
                  {"function_draws": 0 if draws is None else len(draws),
                   "surrogate": type(surrogate).__name__, "predictions": len(X)})
    _warn_inconsistent(res)
    return res
