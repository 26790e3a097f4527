"""Variance-based (Sobol') sensitivity indices with confidence intervals.

For a model ``Y = f(X)`` with independent inputs, the first-order index of input i and its
total index are (Sobol' 1993; Homma & Saltelli 1996)::

    S_i  = V[E(Y | X_i)] / V(Y)          (share of the variance due to X_i alone)
    ST_i = E[V(Y | X_~i)] / V(Y)          (share due to X_i with all its interactions)

Pick-freeze estimators (``method="saltelli"``). Two independent (n, d) samples A and B of the
unit hypercube are the two halves of one scrambled Sobol' design of dimension 2d
(``scipy.stats.qmc.Sobol``; n a power of two keeps it balanced). ``AB_i`` is A with its
column i taken from B. With ``f_A = f(A)`` etc. and ``V`` the variance of ``f_A`` and ``f_B``
pooled, the estimators of Saltelli et al. (2010, Table 2, (b) and (f)) are::

    S_i  = mean(f_B * (f_AB_i - f_A)) / V             (Saltelli 2010)
    ST_i = mean((f_A - f_AB_i) ** 2) / (2 V)           (Jansen 1999)

at a cost of n (d + 2) model runs. Outputs are centred by the pooled mean first (this only
lowers the variance of the first-order estimator). Confidence intervals are percentile
bootstrap intervals of the n base rows resampled as if independent, which a scrambled Sobol'
design's are not: 95% intervals held the least-covered index in 0.84-0.92 of 100 seeds at
n = 128-512, 0.95-1.00 at 1024 (``benchmarks/bench_sobol_coverage.py``); a warning below it.

Polynomial chaos (``method="pce"``): an orthonormal polynomial expansion of total degree p,
``f ~ sum_a c_a Psi_a``, fitted by least squares on n runs of a scrambled Sobol' design,
gives the indices exactly from its coefficients (Sudret 2008)::

    V = sum_{a != 0} c_a^2,   S_i = sum_{a in A_i} c_a^2 / V,   ST_i = sum_{a: a_i > 0} c_a^2 / V

with A_i the multi-indices that involve input i only. The polynomials are each input's own
(Hermite for a normal, Legendre for a uniform, those of its distribution for any other with a
bounded support) or its normal Rosenblatt variable's: :mod:`uqkit.inputs.polynomials`.
Bootstrap intervals refit the coefficients on resampled rows.

Surrogates (:func:`sobol_indices_surrogate`): the indices of the surrogate's predictive mean,
with bootstrap intervals (sampling error), plus an epistemic band: quantiles of the indices
of the surrogate's posterior function draws (each draw is one function shared by all inputs).

Dependent inputs: designs are drawn in the unit hypercube and mapped through the inverse
Rosenblatt transform of ``inputs.joint`` (copulas included). The indices are then those of the
independent Rosenblatt variables U_1, ..., U_d, which depend on the input order: U_1 carries
X_1 with everything it shares with the others ("full" index of X_1), the last one only the
part of X_d independent of the others (Mara, Tarantola & Annoni 2015).

References:
    Sobol' (1993), Math. Model. Comput. Exp. 1: 407-414. Jansen (1999), Comput. Phys. Commun.
    117: 35-43. Saltelli et al. (2010), Comput. Phys. Commun. 181: 259-270. Sudret (2008),
    Reliab. Eng. Syst. Saf. 93: 964-979. Mara, Tarantola & Annoni (2015), Environ. Model.
    Softw. 72: 173-183.
"""
import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import stats
from scipy.stats import qmc

from .adapters import SurrogateModel, feature_names, quiet_feature_names
from .execution.runner import ModelRunner
from .inputs.polynomials import basis_values, input_germs, total_degree_indices
from .inputs.transforms import unit_to_x
from .plots import plot_sobol  # noqa: F401 - importable from here, as before
from .validation import check_float, check_int, check_seed

__all__ = ["METHODS", "BOOTSTRAP_MIN_N", "CONSTANT_ULPS", "PCE_LOO_WARNING", "SobolResult",
           "pick_freeze_design", "saltelli_estimates", "sobol_indices", "pce_indices",
           "sobol_indices_surrogate"]

#: The estimators of :func:`sobol_indices`: ``"saltelli"`` (pick-freeze Monte Carlo) and
#: ``"pce"`` (from a polynomial chaos expansion's coefficients).
METHODS = ("saltelli", "pce")


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


#: Base samples below which pick-freeze bootstrap intervals may undercover (warned).
BOOTSTRAP_MIN_N = 1024
#: An output whose spread on the design is within this many times the machine epsilon of its
#: largest magnitude (16 to 32 units in its last place) is constant: its indices are 0 / 0,
#: NaN.
CONSTANT_ULPS = 16


def _warn_dependent(inputs):
    """Warn that dependent inputs get the indices of their Rosenblatt variables (a model of
    x2 alone gave x1 an index of 0.64 at correlation 0.8, under x1's name)."""
    if getattr(inputs.joint, "stochastic_dependent", False):
        warnings.warn(f"the inputs {inputs.names} are dependent: these are the indices of the "
                      "independent variables of their Rosenblatt transform, in this order (an "
                      "input's index holds what it shares with the inputs after it), not of "
                      "the inputs one by one", UserWarning, stacklevel=4)


def _check_common(n, seed, bootstrap, level, inputs):
    from .inputs.random_inputs import check_inputs

    check_inputs(inputs)
    n = check_int(n, "n", 2)
    check_seed(seed)
    _warn_dependent(inputs)
    return (n, *_check_intervals(bootstrap, level))


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
                      "a larger n where they matter", UserWarning, stacklevel=3)
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


def _check_outputs(Y, rows, what="the model returned outputs"):
    Y = np.asarray(Y, dtype=float)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] != rows:
        raise ValueError(f"{what} of shape {Y.shape} for {rows} rows; "
                         f"expected ({rows},) or ({rows}, k)")
    return Y


def sobol_indices(model, inputs, n=2 ** 12, seed=0, bootstrap=200, level=0.95,
                  method="saltelli", order=None, executor="local", workers=None, dask=None,
                  chunk_size=None, store=None, progress=False):
    """First-order and total Sobol' indices of ``model`` over ``inputs``.

    Args:
        model: a uqkit model, (m, d) -> (m,) or (m, k); run through :func:`uqkit.propagate`.
        inputs: :class:`uqkit.inputs.RandomInputs` (any joint; see the module notes on
            dependent inputs).
        n: base sample size, a power of two (``"saltelli"``: n (d + 2) model runs;
            ``"pce"``: n runs).
        seed: seed of the scrambled Sobol' design and of the bootstrap.
        bootstrap: bootstrap resamples for the intervals (0: none, else >= 20).
        level: confidence level of the intervals.
        method: ``"saltelli"`` (pick-freeze) or ``"pce"`` (polynomial chaos).
        order: total degree of the PCE (default: the largest <= 8 with at most n / 4 terms).
        executor, workers, dask, chunk_size, store, progress: as in :func:`uqkit.propagate`.

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
    n, bootstrap, level = _check_common(n, seed, bootstrap, level, inputs)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {METHODS}")
    if order is not None and method != "pce":
        raise ValueError(f"order={order!r} is the degree of a PCE: it takes method='pce' "
                         f"(method={method!r} has no order)")
    d = inputs.dim
    if method == "pce":
        P = _sobol_design(d, n, seed)
    else:
        P = pick_freeze_design(d, n, seed)
    X = unit_to_x(inputs, P)
    runner = ModelRunner(model, inputs, executor, workers, dask, chunk_size, store,
                         settings={"analysis": "sobol", "method": method, "seed": seed},
                         progress=progress)
    with runner:
        Y = _check_outputs(runner(X, tag="sobol"), len(X))
    rng = np.random.default_rng(None if seed is None else [seed, 1])
    info = {}
    if method == "pce":
        first, total, first_ci, total_ci, info = pce_indices(P, Y, inputs, order, bootstrap,
                                                             level, rng)
    else:
        first, total, first_ci, total_ci = _saltelli_with_ci(Y, d, n, bootstrap, level, rng)
    res = _result(inputs, first, total, first_ci, total_ci, runner.runs, n, method, level,
                  getattr(model, "output_names", ()), info=info, t0=t0)
    _warn_inconsistent(res)
    return res


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


# -- polynomial chaos ---------------------------------------------------------------------

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


# -- surrogates ---------------------------------------------------------------------------

def _unwrapped(surrogate, X, inputs):
    """The fitted surrogate inside a uqkit model of one (:class:`uqkit.adapters.SurrogateModel`,
    which has no ``predict``: it failed with an AttributeError after a warning that it drew
    no functions), with the design's columns in its ``input_names`` order."""
    from .execution.propagation import align_inputs
    from .inputs.sampling import Samples

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
