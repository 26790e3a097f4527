"""Batched model runs for the analyses (sensitivity, reliability) on top of :func:`propagate`.

An analysis calls its model many times on small or large batches (a FORM iteration's finite
difference points, a subset-simulation level, an active-learning enrichment). A
:class:`ModelRunner` opens one executor for the whole analysis (one process pool, one Dask
client), counts the true model runs, gives every batch its own sub-store of ``store`` (so a
killed analysis resumes without recomputing finished batches: the sequence of batches is
deterministic for a given seed) and refuses failed rows with a clear error naming how many rows
failed, why, and the first failing input row.

Inputs are handled in the standard normal space ``u`` of the Rosenblatt transform of the
joint distribution: ``x = F^-1(Phi(u))`` (:func:`u_to_x`) and ``u = Phi^-1(F(x))``
(:func:`x_to_u`), with F the joint's Rosenblatt transform (``inputs.joint.fwd`` /
``inputs.joint.inv``), so copulas are respected.
"""
import os
from concurrent.futures import Executor

import numpy as np
from scipy import special

from .executors import make_executor
from .propagation import default_workers, propagate
from .executors import check_picklable
from .model import identity_key
from .sampling import Samples, inverse_rosenblatt

#: Probabilities are clipped to [EPS, 1 - EPS] before the inverse Rosenblatt transform, so
#: that |u| up to about 8 maps to finite x (1 - Phi(8.3) is below double precision).
EPS = 1e-16


def unit_to_x(inputs, P):
    """(n, d) points of the unit hypercube -> (n, d) physical inputs (inverse Rosenblatt)."""
    return inverse_rosenblatt(inputs, np.clip(np.asarray(P, dtype=float), EPS, 1.0 - EPS))


def u_to_x(inputs, U):
    """(n, d) standard normal points -> (n, d) physical inputs: ``F^-1(Phi(u))``."""
    return unit_to_x(inputs, special.ndtr(np.asarray(U, dtype=float)))


def x_to_u(inputs, X):
    """(n, d) physical inputs -> (n, d) standard normal points: ``Phi^-1(F(x))``."""
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    P = np.asarray(inputs.joint.fwd(X.T), dtype=float).reshape(d, n).T
    return special.ndtri(np.clip(P, EPS, 1.0 - EPS))


def check_int(value, name, low, high=None):
    """``value`` as an int in [low, high]; a ValueError naming it otherwise."""
    ok = (not isinstance(value, bool) and isinstance(value, (int, np.integer))
          and value >= low and (high is None or value <= high))
    if not ok:
        span = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be an integer {span}, got {name}={value!r}")
    return int(value)


def check_float(value, name, low, high, open_low=True, open_high=True):
    """``value`` as a finite float inside (low, high) (closed ends where asked)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {name}={value!r}") from None
    ok = np.isfinite(v) and (v > low if open_low else v >= low) and (
        v < high if open_high else v <= high)
    if not ok:
        lo, hi = ("(" if open_low else "["), (")" if open_high else "]")
        raise ValueError(f"{name} must be a finite number in {lo}{low}, {high}{hi}, "
                         f"got {name}={value!r}")
    return v


def check_seed(seed):
    if seed is not None:
        check_int(seed, "seed", 0)
    return seed


class ModelRunner:
    """Runs a model on batches of physical inputs through :func:`propagate`.

    Use as a context manager: the executor (process pool, Dask client) lives as long as the
    ``with`` block. Arguments are those of :func:`propagate`; ``store`` is a directory whose
    sub-directories (one per batch, named by the caller's ``tag`` or ``call-00000``, ...)
    are propagate stores.

    Attributes:
        runs: rows run so far (computed or loaded from the store).
        computed: rows computed now (not loaded).
    """

    def __init__(self, model, inputs, executor="local", workers=None, dask=None,
                 chunk_size=None, store=None, settings=None, progress=False):
        self.model, self.inputs = model, inputs
        self.executor, self.workers, self.dask = executor, workers, dask
        self.chunk_size, self.store, self.settings = chunk_size, store, dict(settings or {})
        self.progress = progress
        self.runs = self.computed = self.calls = 0
        self._cm = self._ex = None

    def __enter__(self):
        if isinstance(self.executor, Executor):
            self._ex = self.executor
        else:
            kind = "dask" if self.dask is not None else self.executor
            self.workers = self.workers or default_workers(self.model)
            if kind == "local" and self.workers == 1:
                kind = "serial"
            if kind in ("local", "dask"):
                check_picklable(self.model)
            self._cm = make_executor(kind, workers=self.workers, address=self.dask,
                                     code_key=identity_key(self.model))
            self._ex = self._cm.__enter__()
        return self

    @property
    def pool(self):
        """The executor the ``with`` block opened (None outside it), for callers that run
        :func:`propagate` themselves (a calibration, whose failed runs are results)."""
        return self._ex

    def __exit__(self, *exc):
        if self._cm is not None:
            self._cm.__exit__(*exc)
        self._cm = self._ex = None
        return False

    def __call__(self, X, tag=None):
        """(n, k) outputs of the model on the (n, d) physical inputs ``X``.

        Raises:
            ValueError: some rows failed (non-finite output, raised, bad status).
        """
        if self._ex is None:
            raise RuntimeError("use ModelRunner inside a with block")
        X = np.asarray(X, dtype=float)
        self.inputs.check_samples(X)
        store = None
        if self.store is not None:
            store = os.path.join(os.fspath(self.store), tag or f"call-{self.calls:05d}")
        self.calls += 1
        res = propagate(self.model, Samples(X, self.inputs.names), executor=self._ex,
                        chunk_size=self.chunk_size, store=store, settings=self.settings,
                        progress=self.progress)
        self.runs += len(X)
        self.computed += res.computed
        if res.n_failed:
            bad = np.flatnonzero(~res.ok)
            first = dict(zip(self.inputs.names, X[bad[0]].tolist()))
            reasons = "; ".join(f"{c} x {r}" for r, c in res.failures().most_common(3))
            raise ValueError(f"the model returned NaN or failed on {len(bad)} of {len(X)} rows "
                             f"({reasons}); first failing input row {int(bad[0])}: {first}")
        return res.outputs
