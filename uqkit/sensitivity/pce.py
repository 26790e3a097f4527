"""Sobol' indices from the coefficients of a least-squares polynomial chaos expansion
(Sudret 2008); the formulas are in :mod:`uqkit.sensitivity`."""
import math
import warnings

import numpy as np

from ..inputs.polynomials import basis_values, input_germs, total_degree_indices
from ..validation import check_int
from .pick_freeze import _check_intervals
from .result import _check_outputs, _undefined_where_constant

__all__ = ["PCE_LOO_WARNING", "pce_indices"]


#: Relative leave-one-out error of a PCE above which its indices are suspect (a warning).
PCE_LOO_WARNING = 0.01


def _default_order(d, m):
    order = 1
    while order < 8 and math.comb(order + 1 + d, d) <= m / 4:
        order += 1
    return order


def pce_indices(P, Y, inputs, order=None, bootstrap=0, level=0.95, rng=0):
    """Sobol' indices from a least-squares PCE fitted on runs ``Y`` (m, k) at the points
    ``P`` (m, d) of the unit hypercube: the runs' inputs mapped by the inputs' Rosenblatt
    transform (their CDFs when independent; ``inputs.joint.fwd(X.T).T`` for physical inputs
    X). Any runs of the inputs' distribution will do.

    Returns first, total (d, k), their intervals (2, d, k) and an info dict (order, terms,
    space, relative leave-one-out error per output). Warns where the leave-one-out error is
    above :data:`PCE_LOO_WARNING`: the expansion does not resolve the model, and the
    bootstrap intervals, which only refit it, do not show that. ``rng``: a seed or a NumPy
    Generator for the bootstrap; ``bootstrap``: 0 or at least 20 resamples.

    Raises:
        ValueError: P is not (m, d) points in [0, 1] (physical inputs, say), or Y is not
            (m,) or (m, k) finite outputs (failed runs: drop their rows from P and Y).
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[1] != inputs.dim:
        raise ValueError(f"P must be (m, {inputs.dim}) points of the unit hypercube, one column "
                         f"per input, got shape {P.shape}")
    if not np.isfinite(P).all() or P.min() < 0 or P.max() > 1:
        raise ValueError(f"P must lie in the unit hypercube [0, 1]^{inputs.dim} (the inputs' "
                         f"CDF values), got values in [{float(np.nanmin(P))!r}, "
                         f"{float(np.nanmax(P))!r}]"
                         f"{' and non-finite ones' if not np.isfinite(P).all() else ''}: map "
                         "physical inputs X with inputs.joint.fwd(X.T).T")
    m, d = P.shape
    bootstrap, level = _check_intervals(bootstrap, level)
    rng = np.random.default_rng(rng)
    Y = _check_outputs(Y, m, "Y holds outputs")
    bad = ~np.isfinite(Y).all(axis=1)
    if bad.any():
        raise ValueError(f"Y holds non-finite outputs in {int(bad.sum())} of {m} rows (first at "
                         f"row {int(np.argmax(bad))}): drop failed runs' rows from P and Y")
    order = _default_order(d, m) if order is None else check_int(order, "order", 1, 20)
    terms = math.comb(order + d, d)
    if terms >= m:
        raise ValueError(f"a PCE of order {order} in {d} inputs has {terms} terms but only "
                         f"{m} runs: lower order or raise n")
    Z, recurrences, space = input_germs(inputs, P, order)
    degrees = total_degree_indices(d, order)  # (terms, d)
    Psi = basis_values(Z, recurrences, degrees)  # (m, terms)
    involved = degrees > 0  # (terms, d)
    only = involved & (involved.sum(1, keepdims=True) == 1)

    def indices(Psi_, Y_):
        coef = np.linalg.lstsq(Psi_, Y_, rcond=None)[0]
        c2 = coef[1:] ** 2  # term 0 is the constant
        V = c2.sum(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (only[1:].T @ c2) / V, (involved[1:].T @ c2) / V, coef

    first, total, coef = indices(Psi, Y)
    leverage = np.einsum("ij,ji->i", Psi, np.linalg.pinv(Psi))  # diagonal of the hat matrix
    loo = ((Y - Psi @ coef) / (1 - leverage)[:, None]) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):  # a constant output: inf or NaN
        loo_error = loo.mean(0) / Y.var(0)
    info = {"order": order, "terms": terms, "space": space, "loo_error": loo_error.tolist()}
    for j in np.flatnonzero(np.isfinite(loo_error) & (loo_error > PCE_LOO_WARNING)):
        out = f" of output {j}" if Y.shape[1] > 1 else ""
        warnings.warn(f"the PCE (order {order}, {terms} terms, {m} runs) does not resolve the "
                      f"model{out}: relative leave-one-out error {loo_error[j]:.3g} > "
                      f"{PCE_LOO_WARNING}; its indices may be far off (their intervals only "
                      "refit it): raise n, or use method='saltelli'", UserWarning,
                      stacklevel=2)
    if not bootstrap:
        nan = np.full((2,) + first.shape, np.nan)
        return (*_undefined_where_constant(Y, first, total, nan, nan.copy()), info)
    bf = np.empty((bootstrap,) + first.shape)
    bt = np.empty_like(bf)
    for b in range(bootstrap):
        idx = rng.integers(0, m, m)
        bf[b], bt[b], _ = indices(Psi[idx], Y[idx])
    q = [(1 - level) / 2, (1 + level) / 2]
    return (*_undefined_where_constant(Y, first, total, np.quantile(bf, q, axis=0),
                                       np.quantile(bt, q, axis=0)), info)
