"""Monte Carlo propagation: run a model over samples in chunks on an executor, with an
optional resumable study store.

Example:
    >>> import numpy as np
    >>> from uqkit import propagate, sample
    >>> from uqkit.inputs import RandomInputs
    >>> inputs = RandomInputs.from_spec({"x": "normal(1, 2)"})
    >>> res = propagate(lambda X: 3 * X, sample(inputs, 1000, seed=0), executor="serial",
    ...                 progress=False)
    >>> res.computed, res.loaded, res.outputs.shape
    (1000, 0, (1000, 1))
"""
import logging
import os
import time
import uuid
from collections import Counter
from concurrent.futures import Executor

import numpy as np

# align_inputs: importable from here, as before
from .arguments import (align_inputs, check_arguments, check_chunk_size, check_executor,
                        check_settings)
from .dask_cluster import DaskExecutor
from .executors import SerialExecutor, check_picklable, cpu_count, is_local_pool, make_executor
from .interrupts import check_interrupt, interrupt_guard, iter_completed
from .identity import describe_model, identity_key
from .model import RAISED, ModelOutput, RunContext, check_output_names, evaluate, stack_values
from .loaded_code import call_reporting, take_report
from .placement import (chunk_rows, record_cost, record_in_process, runs_in_process,
                        single_threaded)
from .result import SUMMARY_REASONS, PropagationResult  # noqa: F401 - importable from here
from .store import StudyStore, describe_differences

__all__ = ["RETRY", "SYSTEMATIC_ROWS", "PropagationError", "PropagationInterrupted",
           "default_chunk_size", "default_workers", "propagate", "propagate_batch"]

log = logging.getLogger("uqkit")

#: ``retry_failed`` settings: which stored failures a rerun computes again.
RETRY = ("errors", "all", "none")
#: Rows that must all have raised one and the same error before a propagation stops early
#: (they must also include the first, the middle and the last chunk to compute).
SYSTEMATIC_ROWS = 32


class PropagationError(RuntimeError):
    """A propagation that cannot give results: the infrastructure failed (a worker died, a
    task could not be sent) or every run failed on one and the same error."""


class PropagationInterrupted(KeyboardInterrupt):
    """Ctrl-C: the finished chunks were saved. ``saved`` and ``total`` count runs; ``store``
    is the directory (None without a store)."""

    def __init__(self, saved, total, store):
        super().__init__(f"saved {saved} of {total} runs")
        self.saved, self.total, self.store = saved, total, store

    def message(self):
        """One line for the user."""
        if self.store is None:
            return (f"uqkit: interrupted after {self.saved} of {self.total} runs (no store: "
                    "nothing was saved; pass a store directory to make a run resumable)")
        return (f"saved {self.saved} of {self.total} runs to {self.store}; rerun the same "
                "command to resume")


def default_chunk_size(n, workers=1):
    """Rows per chunk of a new store (or a run without one): about 64 chunks for n rows, and
    at least one per worker (:func:`uqkit.execution.placement.chunk_rows`). A store keeps the
    chunk size it was made with (see :func:`propagate`)."""
    return chunk_rows(n, workers)


def _run_chunk(model, X, context):
    return evaluate(model, X, context)


def default_workers(model):
    """Processes of a local pool when the caller names none: every core, shared among runs
    that take ``model.cores_per_run`` cores each."""
    return max(1, cpu_count() // max(1, int(getattr(model, "cores_per_run", 1))))


def _retry_mask(status, retry_failed):
    """Stored rows a rerun computes again: rows that raised or gave non-finite outputs
    (``"errors"``, the default: an exception may come from the environment rather than the
    inputs), every failed row (``"all"``), or none."""
    if retry_failed == "all":
        return status != 0
    if retry_failed == "errors":
        return status == RAISED
    return np.zeros(len(status), bool)


def propagate(model, samples, executor="local", workers=None, dask=None, chunk_size=None,
              store=None, settings=None, progress=True, retry_failed="errors"):
    """Run ``model`` on every row of ``samples``.

    Args:
        model: callable (n, d) -> (n, k) (see :mod:`uqkit.execution.model`). For a process pool
            or Dask it is sent with cloudpickle (checked before any worker starts).
        samples: :class:`uqkit.inputs.sampling.Samples` or an (n, d) array.
        executor: ``"local"`` (loky process pool, one thread per worker), ``"serial"``,
            ``"dask"`` (with ``dask=ADDRESS``) or any ``concurrent.futures.Executor``.
        workers: processes of the local pool (default: every core, or ``cores //
            model.cores_per_run`` for a model whose runs take several).
        dask: Dask scheduler address; implies ``executor="dask"``.
        chunk_size: rows per task (default: the store's, for an existing store, else the
            model's ``chunk_size`` attribute, else :func:`default_chunk_size`). A store keeps
            its chunk size, so that a larger sample of the same draws adds chunks to it; a
            store started with a tiny pilot sample has tiny chunks, so give a chunk size, or
            use a new store, for a much larger run.
        store: a directory: finished chunks are saved there and reloaded on a rerun; the
            directory is locked while the run lasts. It may hold a shorter or longer sample of
            the same draws: a larger n computes only the new rows, a smaller one loads a
            prefix (rows beyond it stay in the store, untouched).
        settings: extra JSON-friendly settings recorded in the store's manifest (a seed, ...).
        progress: show a tqdm progress bar with throughput and ETA; a string also labels it
            (a study's phase, say; ``True``: "propagate").
        retry_failed: which failures stored by an earlier run are computed again:
            ``"errors"`` (rows whose model call raised or returned NaN or inf; default),
            ``"all"`` (also the failures the model reported itself, such as non-convergence)
            or ``"none"``.

    Returns:
        :class:`PropagationResult`.

    Raises:
        PropagationError: a worker died or a task could not be sent (finished chunks are
            saved first), or the first runs all raised one and the same error (a broken
            environment or a bug: nothing of it is stored).
        PropagationInterrupted: Ctrl-C; every finished chunk was saved first.
    """
    if workers is not None:
        from ..validation import check_int

        check_int(workers, "workers", 1)
    # a Ctrl-C whose KeyboardInterrupt Python drops (raised in code the garbage collector
    # runs) still stops the run
    with interrupt_guard():
        return _propagate(model, samples, executor, workers, dask, chunk_size, store, settings,
                          progress, retry_failed)


def propagate_batch(model, samples, executor, chunk_size=None, store=None, settings=None,
                    progress=False, retry_failed="errors", model_key=None,
                    stop_systematic=True, refuse_boolean=None):
    """:func:`propagate` of one batch of an analysis on an open ``executor``; on a local pool a
    small batch runs in this process instead, single-threaded as in a worker, by the rule of
    :mod:`uqkit.execution.placement` (a batch of a few cheap runs costs more to send than to
    run). ``model_key``: the model's :func:`~uqkit.execution.identity.identity_key`, if the
    caller has it (about 1 ms to compute). ``stop_systematic=False``: a batch whose every run
    fails with one error is an answer, not a broken model (a calibration's proposals where the
    model fails on most of the prior). ``refuse_boolean``: a message with which a chunk of
    True/False answers is refused before it is saved (a limit state's). The analyses' runner
    (:class:`uqkit.execution.runner.ModelRunner`) calls it."""
    with interrupt_guard():
        return _propagate(model, samples, executor, None, None, chunk_size, store, settings,
                          progress, retry_failed, place=True, model_key=model_key,
                          stop_systematic=stop_systematic, refuse_boolean=refuse_boolean)


def _propagate(model, samples, executor, workers, dask, chunk_size, store, settings, progress,
               retry_failed, place=False, model_key=None, stop_systematic=True,
               refuse_boolean=None):
    t0 = time.perf_counter()
    if retry_failed not in RETRY:
        raise ValueError(f"retry_failed must be one of {RETRY}, got {retry_failed!r}")
    # every argument checked before a store is touched (a bad executor's manifest was
    # written first, and the corrected run inherited its chunk size)
    check_arguments(model, samples)
    check_executor(executor, dask)
    settings, chunk_size = check_settings(settings), check_chunk_size(chunk_size)
    samples, X = align_inputs(model, samples)
    check_output_names(getattr(model, "output_names", None) or ())
    n = len(X)
    if n < 1:
        raise ValueError("samples must hold at least one row")
    kind = executor if not isinstance(executor, Executor) else None
    if kind is not None:
        kind = "dask" if dask is not None else kind
        workers = workers or default_workers(model)
        if kind == "local" and workers == 1:
            kind = "serial"
    if kind in ("local", "dask"):
        check_picklable(model)
    cost_key, pool_workers = None, 1
    if kind == "local" or (kind is None and is_local_pool(executor)):
        # an analysis's small batch runs here (place): see uqkit.execution.placement
        cost_key = model_key or identity_key(model)
        pool_workers = workers if kind == "local" else executor._max_workers
        if place and runs_in_process(model, cost_key, n, pool_workers / cpu_count()):
            kind, executor, pool_workers = "serial", "serial", 1
    if chunk_size is None:  # a store keeps the chunks it was made with, whatever n is now
        stored = StudyStore.stored_settings(store) if store is not None else None
        chunk_size = stored["chunk_size"] if stored else (
            check_chunk_size(getattr(model, "chunk_size", None) or None, "model.chunk_size")
            or chunk_rows(n, pool_workers))
    # an absolute path: a model run in this process may change the working directory
    run = _Run(model, X, chunk_size, None if store is None else os.path.abspath(store),
               progress)
    run.cost_key, run.refuse_boolean = cost_key, refuse_boolean
    if not stop_systematic:
        run.systematic = False
    if store is None:
        return run.execute(executor, kind, workers, dask, samples, t0)
    # the store's chunks are checked against these inputs one by one, so a store may hold a
    # shorter or longer sample of the same draws: a larger n computes only the new rows
    reserved = {"model", "chunk_size"} & set(settings)
    if reserved:
        raise ValueError(f"settings may not set {sorted(reserved)}: propagate records them itself")
    manifest = {**settings, "model": describe_model(model), "chunk_size": run.chunk_size}
    # the names of the stored inputs' columns: the model's order where it declares one
    # (propagate reorders the samples' columns, or takes a subset, by those names)
    metadata = {"input_names": list(getattr(model, "input_names", None) or samples.names),
                "output_names": list(getattr(model, "output_names", ())),
                "samples": samples.origin}
    with StudyStore(store, manifest, metadata) as st:
        run.load(st, retry_failed)
        result = run.execute(executor, kind, workers, dask, samples, t0)
        # every row is stored: what a stopped run kept of the rows it saved goes too
        run.rows_saved(np.arange(len(run.X)))
        return result


class _Run:
    """The chunks of one propagation: which are done, which rows are left, saving them.
    ``store`` is an absolute path (or None), as :func:`_propagate` makes it."""

    def __init__(self, model, X, chunk_size, store, progress):
        self.model, self.X, self.chunk_size = model, X, chunk_size
        self.starts = list(range(0, len(X), chunk_size))
        self.parts = [None] * len(self.starts)
        self.todo = {i: None for i in range(len(self.starts))}  # chunk -> rows (None: all)
        self.store, self.st, self.progress, self.bar = store, None, progress, None
        self.computed = self.kept = 0  # rows run now; rows taken from kept answers
        # this propagation's token: the answers its own calls keep are not an earlier run's
        self.invocation = uuid.uuid4().hex
        self.held = []  # finished chunks not saved yet (see _finish)
        self.stored = {}  # chunk -> its rows of this sample in the store
        # the one error that every row computed so far raised; False once a row did not
        self.systematic = None
        self.width = None  # the number of outputs of the first successful runs
        self.probes = set()
        self.rows_rerun, self.batch_errors = 0, Counter()
        self.boolean = False  # whether a chunk's outputs were True/False
        self.refuse_boolean = None  # or why such a chunk is refused, before it is saved
        self.reporting = False  # whether the chunks come back with call_reporting's report
        # the model's identity key where a local pool was asked for: its chunks' costs are
        # recorded for the placement rule, and a batch run here is single-threaded as there
        self.cost_key = None

    def rows(self, i):
        return slice(self.starts[i], self.starts[i] + self.chunk_size)

    def load(self, st, retry_failed):
        self.st = st
        for i in st.finished():
            if i >= len(self.starts):
                continue  # rows beyond this sample: kept in the store, not used now
            data = st.load(i)
            X, stored = self.X[self.rows(i)], data["inputs"]
            m = min(len(X), len(stored))
            # a NaN input is the same input (a sample may hold one for the model to handle)
            if int(data["start"]) != self.starts[i] or \
                    not np.array_equal(stored[:m], X[:m], equal_nan=True):
                before, now = st.stored_metadata.get("samples"), st.metadata.get("samples")
                what = describe_differences(before, now) if isinstance(before, dict) and \
                    isinstance(now, dict) and before != now else ""
                what = what or "another seed or rule, or another n with lhs, sobol or halton"
                raise ValueError(
                    f"chunk {i} (rows {self.starts[i]}-{self.starts[i] + len(X) - 1}) in "
                    f"{self.store!r} holds other inputs than this run: the store was made with "
                    f"other samples ({what}); use another store or the same samples")
            self.stored[i] = m
            seconds = float(data["seconds"]) * m / len(stored) if "seconds" in data else 0.0
            part = ModelOutput(data["outputs"][:m], data["status"][:m], data["reasons"][:m],
                               seconds=seconds)
            truncated = len(stored) > len(X)  # saving it again would drop its other rows
            new = np.arange(m, len(X))  # a longer sample: the rest of a stored last chunk
            if len(new):
                part = _merge(ModelOutput(np.full((len(X), part.values.shape[1]), np.nan),
                                          np.full(len(X), RAISED), np.full(len(X), "not run")),
                              np.arange(m), part)
            self.parts[i] = part
            if part.ok.any():  # the model works here: a rerun's errors are the rows' own
                self.systematic = False
                self.width = self.width or part.values.shape[1]
            retry = np.union1d([] if truncated else
                               np.flatnonzero(_retry_mask(part.status[:m], retry_failed)),
                               new).astype(np.int64)
            if len(retry):
                self.todo[i] = retry
            else:
                del self.todo[i]

    def order(self):
        """The chunks to compute, the first, middle and last first: a run that fails in all
        three on one error is broken, while an ordered sweep that only starts in a region
        where the model raises is not (see :meth:`_finish`)."""
        todo = list(self.todo)
        probes = list(dict.fromkeys((todo[0], todo[len(todo) // 2], todo[-1])))
        self.probes = set(probes)
        return probes + [i for i in todo if i not in self.probes]

    def _size(self, i):
        rows = self.todo[i]
        return len(self.X[self.rows(i)]) if rows is None else len(rows)

    def task_inputs(self, i):
        X = self.X[self.rows(i)]
        return X if self.todo[i] is None else X[self.todo[i]]

    def task_context(self, i):
        """Where chunk i's rows to compute sit in the sample, and the store."""
        rows = np.arange(self.starts[i], self.starts[i] + len(self.X[self.rows(i)]))
        return RunContext(rows if self.todo[i] is None else rows[self.todo[i]], self.store,
                          self.invocation)

    def execute(self, executor, kind, workers, dask, samples, t0):
        n = len(self.X)
        remaining = sum(self._size(i) for i in self.todo)
        if self.progress:
            from tqdm.auto import tqdm

            label = self.progress if isinstance(self.progress, str) else "propagate"
            self.bar = tqdm(total=n, initial=n - remaining, unit="run", desc=label,
                            smoothing=0.05, dynamic_ncols=True)
        try:
            if self.todo:
                if kind is None:
                    self._run(executor)
                else:
                    with make_executor(kind, workers=workers, address=dask) as ex:
                        self._run(ex)
        except KeyboardInterrupt:
            self._flush()
            raise PropagationInterrupted(sum(self.stored.values()), n, self.store) from None
        finally:
            if self.bar is not None:
                self.bar.close()
        if self.batch_errors:
            first = self.batch_errors.most_common(1)[0][0].splitlines()[0]
            log.warning("uqkit: %d batch calls of the model raised (most often %s); their %d "
                        "rows were run one by one", sum(self.batch_errors.values()), first,
                        self.rows_rerun)
        parts = self.parts
        width = len(getattr(self.model, "output_names", None) or ()) or None
        return PropagationResult(
            inputs=samples, outputs=stack_values([p.values for p in parts],
                                                 [p.status for p in parts], width=width),
            status=np.concatenate([p.status for p in parts]),
            reasons=np.concatenate([p.reasons for p in parts]), computed=self.computed,
            loaded=n - self.computed - self.kept, kept=self.kept,
            seconds=time.perf_counter() - t0,
            output_names=tuple(getattr(self.model, "output_names", ())),
            compute_seconds=float(sum(p.seconds for p in parts)), rows_rerun=self.rows_rerun,
            batch_errors=self.batch_errors, seconds_per_run=_median_row_seconds(parts),
            boolean_outputs=self.boolean)

    def _run(self, ex):
        order = self.order()
        if isinstance(ex, SerialExecutor):
            # in-process: run and save one chunk at a time, so an interrupt keeps finished chunks
            for i in order:
                check_interrupt()
                if self.cost_key is None:
                    out = _run_chunk(self.model, self.task_inputs(i), self.task_context(i))
                else:  # instead of a pool's worker: one thread, as there
                    with single_threaded():
                        out = _run_chunk(self.model, self.task_inputs(i), self.task_context(i))
                    record_in_process(self.cost_key, out.seconds)
                self._finish(i, out)
            return
        check_interrupt()  # one dropped while the run was being set up
        # a local pool's workers report the modules they load (loaded_code: a pool is kept
        # across models while that code is unchanged)
        self.reporting = is_local_pool(ex)
        call = (call_reporting, _run_chunk) if self.reporting else (_run_chunk,)
        futures = {ex.submit(*call, self.model, self.task_inputs(i), self.task_context(i)): i
                   for i in order}
        try:
            waiting = ex.waiting if isinstance(ex, DaskExecutor) else None
            for fut in iter_completed(futures, waiting=waiting):
                self._finish(futures[fut], self._result(fut))
        except BaseException:
            # stop the rest, but keep every chunk that has finished: also those that finished
            # while this one was being saved, or after the interrupt
            for fut, i in futures.items():
                if i in self.todo and not fut.cancel() and fut.done() and \
                        fut.exception() is None:
                    self._finish(i, self._value(fut.result()))
            raise

    def _value(self, result):
        return take_report(result) if self.reporting else result

    def _result(self, fut):
        try:
            return self._value(fut.result())
        except Exception as exc:  # evaluate() catches the model's own exceptions
            self._flush()
            saved = sum(self.stored.values())  # not the chunks held back, nor unrun rows
            where = f"; {saved} finished runs are saved in {self.store}" if self.st else ""
            raise PropagationError(
                f"the infrastructure failed, not the model: {type(exc).__name__}: {exc}{where}. "
                "Rerun to resume; if a worker died, the machine may be short of memory, or the "
                "model may crash its process (executor='serial' shows where)") from exc

    def _same_width(self, out):
        """``out`` with its successful rows failed where they give another number of outputs
        than the first successful runs did: the study ran to its end before, then could not
        stack its chunks, and every rerun of the store failed the same way."""
        ok = out.status == 0
        if not ok.any():
            return out
        width = out.values.shape[1]
        self.width = self.width or width
        if width == self.width:
            return out
        reason = f"the model returned {width} outputs where its first runs returned {self.width}"
        return ModelOutput(np.full((len(ok), self.width), np.nan),
                           np.where(ok, RAISED, out.status),
                           np.where(ok, reason, out.reasons).astype(str), out.batch_error,
                           out.rows_rerun, out.seconds, out.traceback, out.kept)

    def _finish(self, i, out):
        if self.refuse_boolean and out.boolean:  # never saved: a rerun would load it as
            raise ValueError(self.refuse_boolean)  # numbers
        self.boolean = self.boolean or out.boolean
        out = self._same_width(out)
        rows = self.todo.pop(i)
        self.computed += len(out.status) - out.kept
        self.kept += out.kept
        if self.cost_key is not None:  # answers taken from kept ones cost (almost) nothing
            record_cost(self.cost_key, int(out.ok.sum()) - out.kept, out.seconds)
        if out.batch_error:
            self.batch_errors[out.batch_error] += 1
            self.rows_rerun += out.rows_rerun
        if self.bar is not None:
            self.bar.update(len(out.status))
        if rows is not None:  # some rows of a stored chunk were retried
            out = _merge(self.parts[i], rows, out)
        self.parts[i] = out
        self.held.append(i)
        # A run whose every row raises one and the same error is broken, not unlucky: hold its
        # chunks back, and stop once the first, middle and last chunk and SYSTEMATIC_ROWS rows
        # (or all of them) agree.
        raised = set(out.reasons[out.status == RAISED].tolist())
        if self.systematic is not False and (out.status == RAISED).all() and len(raised) == 1 \
                and self.systematic in (None, *raised):
            self.systematic = raised.pop()
            n_held = sum(len(self.parts[j].status) for j in self.held)
            if (n_held >= SYSTEMATIC_ROWS and self.probes <= set(self.held)) or not self.todo:
                for j in self.held:
                    self.parts[j] = None
                self.held = []
                where = ("at the start, middle and end of the sample " if self.todo else "")
                raise PropagationError(
                    f"every one of the first {n_held} runs {where}failed with the same error, "
                    f"so the run was stopped and none of them stored: {self.systematic}"
                    + (f"\n\nThe model's traceback:\n{out.traceback}" if out.traceback else ""))
            return
        self.systematic = False
        self._flush()

    def rows_saved(self, rows):
        """Tell a model that keeps each run's answer until it is stored (its ``rows_saved``)
        that ``rows`` are."""
        saved = getattr(self.model, "rows_saved", None)
        if callable(saved) and self.store is not None:
            saved(RunContext(rows, os.path.abspath(self.store)))

    def _flush(self):
        """Save the finished chunks held back, unless they may be a systematic failure."""
        if self.systematic is not False:
            return
        for j in self.held:
            if self.st is not None:
                out = self.parts[j]
                self.st.save(j, self.starts[j], self.X[self.rows(j)], out.values, out.status,
                             out.reasons, _chunk_seconds(out))
                self.stored[j] = len(out.status)
                self.rows_saved(np.arange(self.starts[j],
                                          self.starts[j] + len(self.X[self.rows(j)])))
        self.held = []


def _chunk_seconds(out):
    """The seconds to save with a finished chunk: the time of its runs, where some rows'
    answers were taken from kept ones (``out.kept``) the time per run made times its rows, so
    that a later rerun, which loads it, reads the cost of a run; 0 where every row was kept
    (no run timed)."""
    made = len(out.status) - out.kept
    return out.seconds * len(out.status) / made if made > 0 else 0.0


def _median_row_seconds(parts):
    """The median over chunks of seconds per row run (not taken from kept answers), or NaN
    where no chunk has a time."""
    costs = [p.seconds / (len(p.status) - p.kept) for p in parts
             if p.seconds > 0 and len(p.status) > p.kept]
    return float(np.median(costs)) if costs else float("nan")


def _merge(old, rows, new):
    """A stored chunk with the outputs of its retried ``rows`` replaced by ``new``."""
    status, reasons = old.status.copy(), old.reasons.astype(object)
    status[rows], reasons[rows] = new.status, new.reasons
    blocks = [old.values, new.values]
    widths = {b.shape[1] for b, s in zip(blocks, (old.status, new.status)) if (s == 0).any()}
    if len(widths) > 1:
        raise ValueError(f"the model returned different numbers of outputs for successful "
                         f"rows: {sorted(widths)}; a model must return the same outputs for "
                         "every row")
    k = widths.pop() if widths else max(b.shape[1] for b in blocks)
    values = np.full((len(status), k), np.nan)
    if old.values.shape[1] == k:
        values[:] = old.values
    values[rows] = new.values if new.values.shape[1] == k else np.nan
    return ModelOutput(values, status, reasons.astype(str), seconds=old.seconds + new.seconds,
                       kept=new.kept)
