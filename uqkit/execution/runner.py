"""Batched model runs for the analyses (sensitivity, reliability, calibration) on top of
:func:`~uqkit.execution.propagation.propagate`.

An analysis calls its model many times on small or large batches (a FORM iteration's finite
difference points, a subset-simulation level, an active-learning enrichment). A
:class:`ModelRunner` opens one executor for the whole analysis (one process pool, one Dask
client), counts the true model runs, gives every batch its own sub-store of ``store`` (so a
killed analysis resumes without recomputing finished batches: the sequence of batches is
deterministic for a given seed) and refuses failed rows with a clear error naming how many rows
failed, why, and the first failing input row. On a local pool, a batch too small to gain from
the pool (a few runs of a cheap model) runs in this process instead
(:func:`~uqkit.execution.propagation.propagate_batch`, :mod:`uqkit.execution.placement`), so
that more workers never make such a batch slower.

Imports: numpy, the execution layer (arguments, executors, model, propagation),
:mod:`uqkit.inputs.sampling` and :mod:`uqkit.validation`.
"""
import os
from concurrent.futures import Executor

import numpy as np

from ..inputs.sampling import Samples
from ..validation import check_int
from .arguments import check_chunk_size, check_settings
from .executors import check_picklable, make_executor
from .identity import identity_key
from .propagation import default_workers, propagate_batch

__all__ = ["FailedRunsError", "ModelRunner"]


class FailedRunsError(ValueError):
    """Rows of an analysis's batch failed (an analysis needs every run's outputs); the
    message names how many, why, and the first failing input row. ``failed`` and ``runs``
    count the batch's failed rows and its rows."""

    def __init__(self, message, failed, runs):
        super().__init__(message)
        self.failed, self.runs = failed, runs

    def __reduce__(self):  # from a worker process: its three arguments, not the message alone
        return type(self), (str(self), self.failed, self.runs)


class ModelRunner:
    """Runs a model on batches of physical inputs through :func:`propagate`.

    Use as a context manager: the executor (process pool, Dask client) lives as long as the
    ``with`` block. Arguments are those of :func:`propagate`; ``store`` is a directory whose
    sub-directories (one per batch, named by the caller's ``tag`` or ``call-00000``, ...)
    are propagate stores.

    ``failed_value``: None (a failed row raises :class:`FailedRunsError`), or the value
    every output of a failed row takes instead (a reliability analysis that counts a failed
    run as a failure: ``-inf``). ``refuse_boolean``: a message with which a model that answers
    True/False is refused (a reliability analysis, which needs a margin), or None.

    Attributes:
        runs: rows run so far (computed, loaded from the store, or taken from the answers
            an interrupted run had kept).
        computed: rows computed now (neither loaded nor taken).
        failed: failed rows given ``failed_value``.
    """

    def __init__(self, model, inputs, executor="local", workers=None, dask=None,
                 chunk_size=None, store=None, settings=None, progress=False,
                 failed_value=None, refuse_boolean=None):
        if workers is not None:  # None: every core (as propagate); 0 meant that too
            workers = check_int(workers, "workers", 1)
        self.model, self.inputs = model, inputs
        self.executor, self.workers, self.dask = executor, workers, dask
        self.chunk_size, self.store = check_chunk_size(chunk_size), store
        self.settings = check_settings(settings)
        self.progress, self.failed_value = progress, failed_value
        self.refuse_boolean = refuse_boolean
        self.runs = self.computed = self.calls = self.failed = self.succeeded = 0
        # outputs per row: the model's output names, else its first successful batch's
        self._width = len(getattr(model, "output_names", None) or ()) or None
        self._cm = self._ex = self._key = None

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
            self._key = identity_key(self.model)
            self._cm = make_executor(kind, workers=self.workers, address=self.dask)
            self._ex = self._cm.__enter__()
        return self

    @property
    def pool(self):
        """The executor the ``with`` block opened (None outside it), for callers that run
        :func:`propagate` themselves (a calibration, whose failed runs are results)."""
        return self._ex

    @property
    def model_key(self):
        """The model's :func:`~uqkit.execution.identity.identity_key`, computed once when the
        ``with`` block opened its executor (None where the caller gave one), for callers of
        :func:`~uqkit.execution.propagation.propagate_batch` on :attr:`pool`."""
        return self._key

    def __exit__(self, *exc):
        if self._cm is not None:
            self._cm.__exit__(*exc)
        self._cm = self._ex = None
        return False

    def __call__(self, X, tag=None):
        """(n, k) outputs of the model on the (n, d) physical inputs ``X``.

        Raises:
            FailedRunsError: some rows failed (non-finite output, raised, bad status) and
                there is no ``failed_value``; a ValueError.
        """
        if self._ex is None:
            raise RuntimeError("use ModelRunner inside a with block")
        X = np.asarray(X, dtype=float)
        self.inputs.check_samples(X)
        store = None
        if self.store is not None:
            store = os.path.join(os.fspath(self.store), tag or f"call-{self.calls:05d}")
        self.calls += 1
        # counting failed runs, a batch whose every run fails (an MCMC step deep in the
        # failing zone) is an answer once a run has worked; before, the model may be broken
        counting = self.failed_value is not None and self.succeeded > 0
        res = propagate_batch(self.model, Samples(X, self.inputs.names), self._ex,
                              chunk_size=self.chunk_size, store=store, settings=self.settings,
                              progress=self.progress, model_key=self._key,
                              stop_systematic=not counting, refuse_boolean=self.refuse_boolean)
        self.runs += len(X)
        self.succeeded += int(res.ok.sum())
        self.computed += res.computed
        outputs = res.outputs
        if res.ok.any():
            self._width = self._width or outputs.shape[1]
        elif self._width and outputs.shape[1] != self._width:  # rows that raised have no outputs
            outputs = np.full((len(X), self._width), np.nan)
        if res.n_failed and self.failed_value is not None:
            self.failed += res.n_failed
            return np.where(res.ok[:, None], outputs, self.failed_value)
        if res.n_failed:
            bad = np.flatnonzero(~res.ok)
            first = dict(zip(self.inputs.names, X[bad[0]].tolist()))
            reasons = "; ".join(f"{c} x {r}" for r, c in res.failures().most_common(3))
            raise FailedRunsError(f"the model returned NaN or failed on {len(bad)} of "
                                  f"{len(X)} rows ({reasons}); first failing input row "
                                  f"{int(bad[0])}: {first}", len(bad), len(X))
        return res.outputs
