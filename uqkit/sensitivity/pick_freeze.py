"""Pick-freeze estimators of Sobol' indices (Saltelli 2010, Jansen 1999) on scrambled Sobol'
designs, with their two kinds of confidence interval: a bootstrap over the base rows, or
Student-t over independent replicate designs. The formulas and the coverage measured for
each are in :mod:`uqkit.sensitivity`."""
import warnings

import numpy as np
from scipy import stats
from scipy.stats import qmc

from ..validation import check_float, check_int
from .result import _undefined_where_constant

__all__ = ["BOOTSTRAP_MIN_N", "REPLICATE_MIN_N", "pick_freeze_design", "replicate_designs",
           "saltelli_estimates"]

#: Base samples below which pick-freeze bootstrap intervals may undercover (warned).
BOOTSTRAP_MIN_N = 1024


def _check_intervals(bootstrap, level):
    """(bootstrap, level), checked: 0 or at least 20 resamples, a level in (0, 1)."""
    bootstrap = check_int(bootstrap, "bootstrap", 0)
    if 0 < bootstrap < 20:
        raise ValueError(f"bootstrap must be 0 (no intervals) or >= 20 resamples, got "
                         f"bootstrap={bootstrap}")
    return bootstrap, check_float(level, "level", 0.0, 1.0)


def _sobol_design(dim, n, seed):
    """(n, dim) scrambled Sobol' points; warn when n is not a power of two."""
    if n & (n - 1):
        warnings.warn(f"n={n} is not a power of two: the Sobol' design loses its balance "
                      f"properties; use n={1 << (n - 1).bit_length()} or "
                      f"{1 << ((n - 1).bit_length() - 1)}", UserWarning, stacklevel=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scipy's own balance warning: said above
        return qmc.Sobol(d=dim, scramble=True, seed=seed).random(n)


def pick_freeze_design(d, n, seed):
    """The unit-hypercube rows [A; B; AB_1; ...; AB_d] ((d + 2) n, d) of the pick-freeze
    estimators: A and B are the two halves of an (n, 2d) scrambled Sobol' design, n a power
    of two (:func:`scipy.stats.sobol_indices` requires it: the design's balance)."""
    if n & (n - 1):
        raise ValueError(f"n must be a power of two for the pick-freeze estimators, got n={n}; "
                         f"use n={1 << (n - 1).bit_length()} or "
                         f"{1 << ((n - 1).bit_length() - 1)}")
    P = _sobol_design(2 * d, n, seed)
    A, B = P[:, :d], P[:, d:]
    AB = np.repeat(A[None], d, axis=0)
    for i in range(d):
        AB[i, :, i] = B[:, i]
    return np.concatenate([A, B, AB.reshape(d * n, d)])


def saltelli_estimates(fA, fB, fAB):
    """First-order (Saltelli 2010) and total (Jansen 1999) estimates, each (d, k), by
    :func:`scipy.stats.sobol_indices` on the precomputed evaluations (it centres the outputs
    by their pooled mean, as the module notes say; n must be a power of two). NaN for an
    output that is constant (0 / 0).

    Args:
        fA, fB: (n, k) outputs on A and B; fAB: (d, n, k) outputs on AB_i.

    Raises:
        ValueError: an output is NaN or infinite (scipy set every index to 0).
    """
    fA, fB, fAB = (np.asarray(a, dtype=float) for a in (fA, fB, fAB))
    for name, a in (("fA", fA), ("fB", fB), ("fAB", fAB)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} holds {int((~np.isfinite(a)).sum())} non-finite outputs: "
                             "drop or rerun the failed runs first")
    k = fA.shape[1]
    if k == 1:  # scipy fails on one input with one output: the output is given twice
        fA, fB, fAB = (np.concatenate([a, a], axis=-1) for a in (fA, fB, fAB))
    with np.errstate(divide="ignore", invalid="ignore"):
        res = stats.sobol_indices(func={"f_A": fA.T, "f_B": fB.T,
                                        "f_AB": np.transpose(fAB, (0, 2, 1))}, n=len(fA))
    first = np.reshape(res.first_order, (fA.shape[1], -1)).T[:, :k]
    total = np.reshape(res.total_order, (fA.shape[1], -1)).T[:, :k]
    return _undefined_where_constant(np.concatenate([fA, fB])[:, :k], first, total)


def _split(Y, d, n):
    return Y[:n], Y[n:2 * n], Y[2 * n:].reshape(d, n, -1)


def _saltelli_with_ci(Y, d, n, bootstrap, level, rng):
    fA, fB, fAB = _split(Y, d, n)
    first, total = saltelli_estimates(fA, fB, fAB)
    if bootstrap and n < BOOTSTRAP_MIN_N:
        warnings.warn(f"bootstrap intervals of pick-freeze indices at n = {n} < "
                      f"{BOOTSTRAP_MIN_N} may cover less than their level (95%: 0.84-0.92 "
                      "at n = 128-512, 0.81-0.89 at 32-64, for the index covered least); use "
                      "a larger n where they matter, or replicates=8 (0.90-0.95, at some "
                      "accuracy)", UserWarning, stacklevel=3)
    if not bootstrap:
        return _undefined_where_constant(Y, first, total, np.full((2,) + first.shape, np.nan),
                                         np.full((2,) + total.shape, np.nan))
    boots_f = np.empty((bootstrap,) + first.shape)
    boots_t = np.empty_like(boots_f)
    for b in range(bootstrap):
        idx = rng.integers(0, n, n)
        boots_f[b], boots_t[b] = saltelli_estimates(fA[idx], fB[idx], fAB[:, idx])
    q = [(1 - level) / 2, (1 + level) / 2]
    # a resample where an output is constant (a rare event's few hits all left out) has
    # undefined indices: the intervals are over the other resamples
    undefined = int(np.isnan(boots_f).any(axis=(1, 2)).sum())
    if undefined:
        warnings.warn(f"{undefined} of {bootstrap} bootstrap resamples have an output that is "
                      "constant on them (a rare event?): its intervals are over the other "
                      "resamples", UserWarning, stacklevel=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # every resample undefined: NaN
        first_ci, total_ci = (np.nanquantile(b, q, axis=0) for b in (boots_f, boots_t))
    return _undefined_where_constant(Y, first, total, first_ci, total_ci)


#: Base rows of one replicate design below which replicate intervals are refused.
REPLICATE_MIN_N = 16


def _check_replicates(replicates, n):
    """``replicates``, checked: an integer R >= 2 that splits n into R replicate designs of
    a power of two of at least :data:`REPLICATE_MIN_N` base rows each."""
    replicates = check_int(replicates, "replicates", 2)
    size, rest = divmod(n, replicates)
    if rest or size & (size - 1) or size < REPLICATE_MIN_N:
        fits = [r for r in (2, 4, 8, 16, 32, 64) if n // r >= REPLICATE_MIN_N and n % r == 0]
        raise ValueError(f"replicates={replicates} does not split n={n} into replicate designs "
                         f"of a power of two of at least {REPLICATE_MIN_N} base rows each: "
                         f"use replicates in {fits} (8 or more where n allows)" if fits else
                         f"n={n} is too small for replicate intervals: they need n >= "
                         f"{2 * REPLICATE_MIN_N}")
    return replicates


def replicate_designs(d, n, replicates, seed):
    """The rows of ``replicates`` pick-freeze designs (:func:`pick_freeze_design`) of
    ``n // replicates`` base rows each, one after the other ((d + 2) n, d): independent
    scramblings drawn in turn from ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    size = n // replicates
    return np.concatenate([pick_freeze_design(d, size, rng) for _ in range(replicates)])


def _saltelli_replicates(Y, d, n, replicates, level):
    """(first, total, first_ci, total_ci) from the outputs Y of :func:`replicate_designs`:
    the mean of the replicates' estimates and its Student-t interval at ``level``, over the
    replicates where an output is not constant (a rare event's hits all in a few)."""
    size = n // replicates
    rows = (d + 2) * size
    est = [saltelli_estimates(*_split(Y[r * rows:(r + 1) * rows], d, size))
           for r in range(replicates)]
    constant = np.isnan(_undefined_where_constant(Y, np.zeros(Y.shape[1]))[0])  # (k,)
    out = []
    for e in (np.stack([f for f, _ in est]), np.stack([t for _, t in est])):  # (R, d, k)
        undefined = int(np.isnan(e[..., ~constant]).any(axis=(1, 2)).sum())
        if undefined and not out:
            warnings.warn(f"{undefined} of {replicates} replicates have an output that is "
                          "constant on them (a rare event?): its indices and intervals are "
                          "over the other replicates", UserWarning, stacklevel=3)
        count = np.isfinite(e).sum(axis=0)
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)  # no defined replicate: NaN
            mean = np.nanmean(e, axis=0)
            half = (stats.t.ppf((1 + level) / 2, np.maximum(count - 1, 1))
                    * np.nanstd(e, axis=0, ddof=1) / np.sqrt(count))
        half = np.where(count >= 2, half, np.nan)
        out += [mean, np.stack([mean - half, mean + half])]
    return _undefined_where_constant(Y, out[0], out[2], out[1], out[3])
