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
import hashlib
import math
import time
from collections import Counter
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass, field

import numpy as np

from .executors import SerialExecutor, cpu_count, make_executor
from .model import ModelOutput, describe_model, evaluate
from .sampling import Samples
from .store import StudyStore


@dataclass
class PropagationResult:
    """Outputs of :func:`propagate` for n rows.

    Attributes:
        inputs: the :class:`uqkit.sampling.Samples` that were run.
        outputs: (n, k) model outputs (NaN where a row failed).
        status: (n,) int, 0 for a good row.
        reasons: (n,) str, why a row failed ("ok" otherwise).
        computed: model runs computed in this invocation.
        loaded: model runs loaded from the study store.
        seconds: wall time of this invocation.
        output_names: names of the output columns, if the model gave them.
    """

    inputs: Samples
    outputs: np.ndarray
    status: np.ndarray
    reasons: np.ndarray
    computed: int
    loaded: int
    seconds: float
    output_names: tuple = field(default=())

    @property
    def ok(self):
        return self.status == 0

    @property
    def n_failed(self):
        return int((self.status != 0).sum())

    def good_outputs(self):
        """(n_ok, k) outputs of the rows that succeeded."""
        return self.outputs[self.ok]

    def failures(self):
        """Counter of failure reasons."""
        return Counter(self.reasons[~self.ok].tolist())

    def summary(self):
        n = len(self.status)
        lines = [f"{n} runs: {n - self.n_failed} ok, {self.n_failed} failed; "
                 f"{self.computed} computed now, {self.loaded} loaded from the store; "
                 f"{self.seconds:.1f} s"]
        for reason, count in self.failures().most_common():
            lines.append(f"  {count} x {reason}")
        return "\n".join(lines)


def default_chunk_size(n):
    """Rows per chunk: depends only on n, so that a resumed study cuts the same chunks."""
    return int(min(1024, max(16, math.ceil(n / 64))))


def _run_chunk(model, X):
    return evaluate(model, X)


def _align(model, samples):
    """The input array in the column order the model expects."""
    if isinstance(samples, Samples):
        names = getattr(model, "input_names", None)
        if names is not None and tuple(names) != samples.names:
            missing = [n for n in names if n not in samples.names]
            if missing:
                raise ValueError(f"the model needs inputs {tuple(names)} but the samples have "
                                 f"{samples.names}; missing {missing}")
            return samples, np.column_stack([samples[n] for n in names])
        return samples, samples.values
    X = np.asarray(samples, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"samples must be an (n, d) array, got shape {X.shape}")
    names = getattr(model, "input_names", None)
    if names is not None and X.shape[1] != len(names):
        raise ValueError(f"the model takes {len(names)} inputs {tuple(names)} but the samples "
                         f"have {X.shape[1]} columns")
    names = tuple(names) if names is not None else tuple(f"x{i}" for i in range(X.shape[1]))
    return Samples(X, names), X


def propagate(model, samples, executor="local", workers=None, dask=None, chunk_size=None,
              store=None, settings=None, progress=True):
    """Run ``model`` on every row of ``samples``.

    Args:
        model: callable (n, d) -> (n, k) (see :mod:`uqkit.model`); picklable for process pools.
        samples: :class:`uqkit.sampling.Samples` or an (n, d) array.
        executor: ``"local"`` (process pool pinned to one thread per worker), ``"serial"``,
            ``"dask"`` (with ``dask=ADDRESS``) or any ``concurrent.futures.Executor``.
        workers: processes of the local pool (default: every core).
        dask: Dask scheduler address; implies ``executor="dask"``.
        chunk_size: rows per task (default :func:`default_chunk_size`).
        store: a directory: finished chunks are saved there and reloaded on a rerun.
        settings: extra JSON-friendly settings recorded in the store's manifest (a seed, ...).
        progress: show a tqdm progress bar with throughput and ETA.

    Returns:
        :class:`PropagationResult`.
    """
    t0 = time.perf_counter()
    samples, X = _align(model, samples)
    n = len(X)
    if n < 1:
        raise ValueError("samples must hold at least one row")
    chunk_size = default_chunk_size(n) if chunk_size is None else int(chunk_size)
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got chunk_size={chunk_size}")
    starts = list(range(0, n, chunk_size))
    parts = [None] * len(starts)
    st = None
    if store is not None:
        manifest = {"model": describe_model(model), "n": n, "chunk_size": chunk_size,
                    "inputs_sha256": hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest(),
                    **(settings or {})}
        st = StudyStore(store, manifest)
        for i in st.finished():
            if i >= len(starts):
                raise ValueError(f"chunk {i} in {store!r} is beyond this study's {len(starts)} "
                                 "chunks; the store is inconsistent")
            data = st.load(i)
            if int(data["start"]) != starts[i] or not np.array_equal(
                    data["inputs"], X[starts[i]:starts[i] + chunk_size]):
                raise ValueError(f"chunk {i} in {store!r} does not hold this study's inputs")
            parts[i] = ModelOutput(data["outputs"], data["status"], data["reasons"])
    loaded = sum(len(p.status) for p in parts if p is not None)
    pending = [i for i, p in enumerate(parts) if p is None]

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=n, initial=loaded, unit="run", desc="propagate", smoothing=0.05,
                   dynamic_ncols=True)
    try:
        if pending:
            if isinstance(executor, Executor):
                _run(executor, model, X, starts, chunk_size, pending, parts, st, bar)
            else:
                kind = "dask" if dask is not None else executor
                if kind == "local" and (workers or cpu_count()) == 1:
                    kind = "serial"
                with make_executor(kind, workers=workers, address=dask) as ex:
                    _run(ex, model, X, starts, chunk_size, pending, parts, st, bar)
    finally:
        if bar is not None:
            bar.close()
    k = max(p.values.shape[1] for p in parts)
    outputs = np.concatenate([p.values if p.values.shape[1] == k
                              else np.full((len(p.status), k), np.nan) for p in parts])
    return PropagationResult(
        inputs=samples, outputs=outputs, status=np.concatenate([p.status for p in parts]),
        reasons=np.concatenate([p.reasons for p in parts]), computed=n - loaded, loaded=loaded,
        seconds=time.perf_counter() - t0, output_names=tuple(getattr(model, "output_names", ())))


def _finish(i, out, X, starts, chunk_size, parts, st, bar):
    parts[i] = out
    if st is not None:
        st.save(i, starts[i], X[starts[i]:starts[i] + chunk_size], out.values, out.status,
                out.reasons)
    if bar is not None:
        bar.update(len(out.status))


def _run(ex, model, X, starts, chunk_size, pending, parts, st, bar):
    if isinstance(ex, SerialExecutor):
        # in-process: run and save one chunk at a time, so an interrupt keeps finished chunks
        for i in pending:
            _finish(i, _run_chunk(model, X[starts[i]:starts[i] + chunk_size]), X, starts,
                    chunk_size, parts, st, bar)
        return
    futures = {ex.submit(_run_chunk, model, X[starts[i]:starts[i] + chunk_size]): i
               for i in pending}
    try:
        for fut in as_completed(futures):
            _finish(futures[fut], fut.result(), X, starts, chunk_size, parts, st, bar)
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise
