"""The result of a Sobol' analysis, :class:`SobolResult`, and what every estimator applies to
its indices on the way out: NaN for an output that is constant on the design (0 / 0), and the
warnings of indices that betray too small a sample."""
import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..plots import plot_sobol

__all__ = ["CONSTANT_ULPS", "SobolResult"]


@dataclass
class SobolResult:
    """Sobol' indices of d inputs for k outputs.

    Arrays are (d,) for one output and (d, k) for k outputs; intervals add a leading axis of
    2 (lower, upper). Intervals are NaN when ``bootstrap=0``.

    Attributes:
        names: input names.
        first, total: first-order and total indices.
        first_ci, total_ci: bootstrap intervals at ``level`` (sampling error).
        model_runs: model evaluations used (0 for a surrogate's predictions).
        n: base sample size.
        method: ``"saltelli"``, ``"pce"`` or ``"surrogate"``.
        level: confidence level of the intervals.
        output_names: names of the outputs, if known.
        first_band, total_band: epistemic bands of a surrogate's indices (quantiles over its
            posterior function draws at ``band_level``), else None.
        seconds: wall time.
        info: method details (PCE order and basis size, function draws, ...).
    """

    names: tuple
    first: np.ndarray
    total: np.ndarray
    first_ci: np.ndarray
    total_ci: np.ndarray
    model_runs: int
    n: int
    method: str
    level: float
    output_names: tuple = ()
    first_band: np.ndarray = None
    total_band: np.ndarray = None
    band_level: float = None
    seconds: float = 0.0
    info: dict = field(default_factory=dict)

    def to_dict(self):
        """A JSON-friendly dict (arrays as nested lists, NaN as None)."""
        out = {}
        for key, value in self.__dict__.items():
            if isinstance(value, np.ndarray):
                value = np.where(np.isfinite(value), value, np.nan).tolist()
                value = _nan_to_none(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[key] = value
        return out

    def plot(self, axes=None):
        """Bar chart of the indices; see :func:`uqkit.plots.plot_sobol`."""
        return plot_sobol(self, axes)


def _nan_to_none(value):
    if isinstance(value, list):
        return [_nan_to_none(v) for v in value]
    return None if isinstance(value, float) and math.isnan(value) else value


#: An output whose spread on the design is within this many times the machine epsilon of its
#: largest magnitude (16 to 32 units in its last place) is constant: its indices are 0 / 0,
#: NaN.
CONSTANT_ULPS = 16


def _check_outputs(Y, rows, what="the model returned outputs"):
    Y = np.asarray(Y, dtype=float)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] != rows:
        raise ValueError(f"{what} of shape {Y.shape} for {rows} rows; "
                         f"expected ({rows},) or ({rows}, k)")
    return Y


def _undefined_where_constant(Y, *arrays):
    """NaN in every index array (..., d, k) for the outputs that are constant on the design:
    their indices are 0 / 0, undefined, where the estimators return 0 (scipy's pick-freeze)
    or rounding noise (a PCE). Applied by :func:`_saltelli_with_ci` and :func:`pce_indices`
    themselves, so that every caller gets it; :func:`_result` then warns."""
    Y = np.asarray(Y, dtype=float).reshape(len(Y), -1)
    # constant up to rounding (sin^2 + cos^2 gave indices 1.02 and 0.98): a spread within
    # CONSTANT_ULPS units in the last place of the largest value
    scale = np.max(np.abs(Y), axis=0) if len(Y) else np.zeros(Y.shape[1])
    constant = np.ptp(Y, axis=0) <= CONSTANT_ULPS * np.finfo(float).eps * scale  # (k,)
    if not constant.any():
        return arrays
    return tuple(None if a is None else np.where(constant, np.nan, a) for a in arrays)


def _result(inputs, first, total, first_ci, total_ci, runs, n, method, level, output_names,
            t0, first_band=None, total_band=None, band_level=None, info=None):
    squeeze = (lambda a: None if a is None else a[..., 0]) if first.shape[-1] == 1 else (
        lambda a: a)
    if np.any(~np.isfinite(first)):
        warnings.warn("an output has zero variance on the design: its indices are NaN",
                      UserWarning, stacklevel=3)
    return SobolResult(tuple(inputs.names), squeeze(first), squeeze(total), squeeze(first_ci),
                       squeeze(total_ci), int(runs), n, method, level, tuple(output_names),
                       squeeze(first_band), squeeze(total_band), band_level,
                       time.perf_counter() - t0, info or {})


def _warn_inconsistent(res):
    """Warn about indices that betray too small a sample (needs bootstrap intervals)."""
    if np.all(np.isnan(res.first_ci)):
        return
    f, t = np.atleast_2d(res.first.T).T, np.atleast_2d(res.total.T).T  # (d, k)
    fci = res.first_ci.reshape(2, *f.shape)
    tci = res.total_ci.reshape(2, *t.shape)
    pct = f"{100 * res.level:g}%"
    for i, name in enumerate(res.names):
        for j in range(f.shape[1]):
            out = f" of output {j}" if f.shape[1] > 1 else ""
            if fci[0, i, j] > tci[1, i, j]:
                warnings.warn(
                    f"first-order index of {name!r}{out} ({f[i, j]:.3g}, {pct} CI "
                    f"[{fci[0, i, j]:.3g}, {fci[1, i, j]:.3g}]) exceeds its total index "
                    f"({t[i, j]:.3g}, CI [{tci[0, i, j]:.3g}, {tci[1, i, j]:.3g}]) beyond the "
                    f"intervals: n={res.n} is too small", UserWarning, stacklevel=3)
            for label, v, ci in (("first-order", f, fci), ("total", t, tci)):
                if ci[1, i, j] < 0 or ci[0, i, j] > 1:
                    warnings.warn(
                        f"{label} index of {name!r}{out} is "
                        f"{'negative' if ci[1, i, j] < 0 else 'above 1'} ({v[i, j]:.3g}, "
                        f"{pct} CI [{ci[0, i, j]:.3g}, {ci[1, i, j]:.3g}]): n={res.n} is too "
                        "small", UserWarning, stacklevel=3)
    for j in range(f.shape[1]):
        if fci[0, :, j].sum() > 1:
            out = f" of output {j}" if f.shape[1] > 1 else ""
            warnings.warn(f"the first-order indices{out} sum to {f[:, j].sum():.3g}, above 1 "
                          f"even at their lower {pct} bounds (a variance share cannot): "
                          f"n={res.n} is too small", UserWarning, stacklevel=3)
