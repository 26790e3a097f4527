"""Accuracy and calibration metrics for point and probabilistic predictions.

Arrays are (n,) or (n, k); per-output metrics return (k,) arrays for 2-D input.

>>> import numpy as np
>>> float(r2([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]))
1.0
"""
import warnings

import numpy as np
from scipy import special, stats

__all__ = ["PROBA_SUM_TOLERANCE", "r2", "rmse", "gaussian_nll", "crps_gaussian", "coverage",
           "regression_calibration_error", "accuracy", "classification_nll",
           "expected_calibration_error"]


def _first(mask):
    """The index of the first True entry of ``mask``, a tuple of ints."""
    return tuple(int(i) for i in np.argwhere(mask)[0])


def _finite(name, value):
    """``value`` as a float array; a NaN or infinity is refused by name and first index (a
    failed run's NaN would otherwise count as a miss, or make the metric NaN)."""
    a = np.asarray(value, dtype=float)
    bad = ~np.isfinite(a)
    if bad.any() and a.ndim == 0:  # a single number, such as one variance for every row
        raise ValueError(f"{name} must be a finite number, got {float(a)!r}")
    if bad.any():
        first = _first(bad)
        raise ValueError(f"{name} holds {int(bad.sum())} non-finite value(s) of {a.size}, the "
                         f"first {float(a[first])!r} at index {first if a.ndim > 1 else first[0]}: "
                         "drop failed runs' rows first")
    return a


def _pair(y, p, name="prediction"):
    y, p = _finite("y", y), _finite(name, p)
    if y.ndim == 0:  # numpy's reductions over axis 0 raised an AxisError here
        raise ValueError(f"y must be observations, (n,) or (n, k), got the single number "
                         f"{float(y)!r}")
    if len(y) == 0:  # the mean of none: NaN, with a RuntimeWarning
        raise ValueError(f"y holds no observations (shape {y.shape}): the metric is undefined")
    if y.shape != p.shape:
        raise ValueError(f"shapes differ: y {y.shape} vs {name} {p.shape}")
    return y, p


def _variance(var, shape, positive=True):
    """A predictive variance broadcast to ``shape``: finite and positive (or, with
    ``positive=False``, not negative)."""
    v = _finite("var", var)
    try:
        v = np.broadcast_to(v, shape)
    except ValueError:
        raise ValueError(f"var of shape {v.shape} does not match y of shape {shape}") from None
    bad = (v <= 0) if positive else (v < 0)
    if bad.any():
        first = _first(bad)
        raise ValueError(f"var must be {'positive' if positive else 'at least 0'}, got "
                         f"{float(v[first])!r} at index {first}")
    return v


def r2(y, pred):
    """Coefficient of determination 1 - SS_res / SS_tot, per output; NaN, with a warning,
    for an output whose y is constant (R^2 is undefined there).

    Raises:
        ValueError: a 1-D y is constant.
    """
    y, p = _pair(y, pred)
    total = ((y - y.mean(0)) ** 2).sum(0)
    constant = np.ravel(total == 0)
    if constant.any():
        if y.ndim == 1:
            raise ValueError("y is constant: R^2 is undefined")
        warnings.warn(f"y is constant in output(s) {np.flatnonzero(constant).tolist()}: their "
                      "R^2 is undefined (NaN)", RuntimeWarning, stacklevel=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total == 0, np.nan, 1.0 - ((y - p) ** 2).sum(0) / total)


def rmse(y, pred):
    """Root mean squared error of each output (column of ``y``), in the units of ``y``."""
    y, p = _pair(y, pred)
    return np.sqrt(((y - p) ** 2).mean(0))


def gaussian_nll(y, mean, var):
    """Mean negative log-likelihood of y under N(mean, var), per output (nats); ``var``
    positive (a point forecast has no density)."""
    y, m = _pair(y, mean, "mean")
    var = _variance(var, y.shape)
    return (0.5 * (np.log(2 * np.pi * var) + (y - m) ** 2 / var)).mean(0)


def crps_gaussian(y, mean, var):
    """Mean continuous ranked probability score of N(mean, var) forecasts (closed form;
    ``|y - mean|`` where ``var`` is 0, the score of a point forecast)."""
    y, m = _pair(y, mean, "mean")
    var = _variance(var, y.shape, positive=False)
    point = var == 0
    sd = np.sqrt(np.where(point, 1.0, var))
    z = (y - m) / sd
    crps = sd * (z * (2 * special.ndtr(z) - 1) + 2 * stats.norm.pdf(z) - 1 / np.sqrt(np.pi))
    return np.where(point, np.abs(y - m), crps).mean(0)


def coverage(y, lower, upper):
    """Share of y inside [lower, upper], per output (all three of one shape)."""
    y, lo = _pair(y, lower, "lower")
    _, hi = _pair(y, upper, "upper")
    crossed = lo > hi
    if crossed.any():
        first = _first(crossed)
        raise ValueError(f"lower > upper at index {first}: {float(lo[first])!r} > "
                         f"{float(hi[first])!r}")
    return ((y >= lo) & (y <= hi)).mean(0)


def regression_calibration_error(y, mean, var, levels=np.linspace(0.05, 0.95, 19)):
    """Mean ``|empirical coverage - nominal|`` of central Gaussian intervals over ``levels``
    (probabilities in (0, 1)); also returns the coverage curve. (error per output, coverage
    (len(levels), ...))."""
    y, m = _pair(y, mean, "mean")
    sd = np.sqrt(_variance(var, y.shape))
    levels = np.atleast_1d(_finite("levels", levels))
    if levels.ndim != 1 or not np.all((levels > 0) & (levels < 1)):
        raise ValueError(f"levels must be probabilities in (0, 1), got {levels.tolist()}")
    z = np.abs(y - m) / sd
    cov = np.array([(z <= special.ndtri(0.5 + lv / 2)).mean(0) for lv in levels])
    err = np.abs(cov - np.reshape(levels, (-1,) + (1,) * (cov.ndim - 1))).mean(0)
    return err, cov


#: How far a row of class probabilities may sum from 1 (float32 softmax rounding, averaged).
PROBA_SUM_TOLERANCE = 1e-5


def _classes(labels, proba):
    """(labels (n,) int, proba (n, k)): one class index in [0, k) per row of ``proba``, whose
    rows are probabilities (in [0, 1], summing to 1): scores or logits would give a negative
    NLL and an ECE of confidences above 1 without a word."""
    proba = _finite("proba", proba)
    if proba.ndim != 2:
        raise ValueError(f"proba must be (n, classes), got shape {proba.shape}")
    outside = (proba < 0) | (proba > 1)
    if outside.any():
        first = _first(outside)
        raise ValueError(f"proba must hold probabilities in [0, 1], got {float(proba[first])!r} "
                         f"at index {first}: pass predicted probabilities, not scores")
    off = np.abs(proba.sum(1) - 1.0) > PROBA_SUM_TOLERANCE
    if off.any():
        i = int(np.argmax(off))
        raise ValueError(f"each row of proba must sum to 1 (within {PROBA_SUM_TOLERANCE}), "
                         f"row {i} sums to {float(proba[i].sum())!r}: pass every class's "
                         "probability (a low-precision softmax: cast it to float32 first)")
    raw = np.asarray(labels)
    flat = raw.reshape(-1) if raw.ndim == 2 and 1 in raw.shape else raw
    if flat.ndim != 1 or len(flat) != len(proba):
        raise ValueError(f"labels must be one class per row of proba ({len(proba)}), got "
                         f"shape {raw.shape}")
    as_int = np.asarray(flat, dtype=float)
    bad = ~np.isfinite(as_int) | (as_int != np.round(as_int)) | (as_int < 0) \
        | (as_int >= proba.shape[1])
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"labels must be class indices 0 to {proba.shape[1] - 1}, got "
                         f"{np.asarray(flat[i]).item()!r} at row {i}")
    return as_int.astype(int), proba


def accuracy(labels, proba):
    """Share of correct argmax predictions; ``labels`` one class index per row of ``proba``
    (n, classes)."""
    labels, proba = _classes(labels, proba)
    return float((proba.argmax(1) == labels).mean())


def classification_nll(labels, proba):
    """Mean negative log-probability of the true classes (nats; probabilities clipped at
    1e-12)."""
    labels, proba = _classes(labels, proba)
    p = np.maximum(proba[np.arange(len(labels)), labels], 1e-12)  # <= 1: checked
    return float(-np.log(p).mean())


def expected_calibration_error(labels, proba, bins=10):
    """ECE: confidence-binned mean ``|accuracy - confidence|``, weighted by bin size, in
    ``bins`` (an integer >= 1) bins of equal width."""
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be an integer >= 1, got bins={bins!r}")
    labels, proba = _classes(labels, proba)
    conf = proba.max(1)
    correct = proba.argmax(1) == labels
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.digitize(conf, edges[1:-1])  # 0 .. bins - 1: conf in [0, 1] is checked
    ece = 0.0
    for b in range(bins):
        m = which == b
        if m.any():
            ece += m.mean() * abs(correct[m].mean() - conf[m].mean())
    return float(ece)
