"""Accuracy and calibration metrics for point and probabilistic predictions.

Arrays are (n,) or (n, k); per-output metrics return (k,) arrays for 2-D input.

>>> import numpy as np
>>> float(r2([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]))
1.0
"""
import numpy as np
from scipy import special, stats

__all__ = ["r2", "rmse", "gaussian_nll", "crps_gaussian", "coverage",
           "regression_calibration_error", "accuracy", "classification_nll",
           "expected_calibration_error"]


def _pair(y, p):
    y = np.asarray(y, dtype=float)
    p = np.asarray(p, dtype=float)
    if y.shape != p.shape:
        raise ValueError(f"shapes differ: y {y.shape} vs prediction {p.shape}")
    return y, p


def r2(y, pred):
    """Coefficient of determination 1 - SS_res / SS_tot, per output."""
    y, p = _pair(y, pred)
    return 1.0 - ((y - p) ** 2).sum(0) / ((y - y.mean(0)) ** 2).sum(0)


def rmse(y, pred):
    y, p = _pair(y, pred)
    return np.sqrt(((y - p) ** 2).mean(0))


def gaussian_nll(y, mean, var):
    """Mean negative log-likelihood of y under N(mean, var), per output (nats)."""
    y, m = _pair(y, mean)
    var = np.broadcast_to(np.asarray(var, dtype=float), y.shape)
    return (0.5 * (np.log(2 * np.pi * var) + (y - m) ** 2 / var)).mean(0)


def crps_gaussian(y, mean, var):
    """Mean continuous ranked probability score of N(mean, var) forecasts (closed form)."""
    y, m = _pair(y, mean)
    sd = np.sqrt(np.broadcast_to(np.asarray(var, dtype=float), y.shape))
    z = (y - m) / sd
    crps = sd * (z * (2 * special.ndtr(z) - 1) + 2 * stats.norm.pdf(z) - 1 / np.sqrt(np.pi))
    return crps.mean(0)


def coverage(y, lower, upper):
    """Share of y inside [lower, upper], per output (all three of one shape)."""
    y, lo = _pair(y, lower)
    _, hi = _pair(y, upper)
    return ((y >= lo) & (y <= hi)).mean(0)


def regression_calibration_error(y, mean, var, levels=np.linspace(0.05, 0.95, 19)):
    """Mean ``|empirical coverage - nominal|`` of central Gaussian intervals over ``levels``;
    also returns the coverage curve. (error per output, coverage (len(levels), ...))."""
    y, m = _pair(y, mean)
    sd = np.sqrt(np.broadcast_to(np.asarray(var, dtype=float), y.shape))
    z = np.abs(y - m) / sd
    cov = np.array([(z <= special.ndtri(0.5 + lv / 2)).mean(0) for lv in levels])
    err = np.abs(cov - np.reshape(levels, (-1,) + (1,) * (cov.ndim - 1))).mean(0)
    return err, cov


def accuracy(labels, proba):
    """Share of correct argmax predictions."""
    return float((np.asarray(proba).argmax(1) == np.asarray(labels)).mean())


def classification_nll(labels, proba):
    p = np.clip(np.asarray(proba)[np.arange(len(labels)), np.asarray(labels)], 1e-12, 1.0)
    return float(-np.log(p).mean())


def expected_calibration_error(labels, proba, bins=10):
    """ECE: confidence-binned mean ``|accuracy - confidence|``, weighted by bin size."""
    proba = np.asarray(proba, dtype=float)
    conf = proba.max(1)
    correct = proba.argmax(1) == np.asarray(labels)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(conf, edges[1:-1]), 0, bins - 1)
    ece = 0.0
    for b in range(bins):
        m = which == b
        if m.any():
            ece += m.mean() * abs(correct[m].mean() - conf[m].mean())
    return float(ece)
