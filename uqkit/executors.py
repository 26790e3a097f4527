"""Executors that run model chunks: a local process pool, a Dask cluster, or in-process.

All are ``concurrent.futures.Executor`` objects, so :func:`uqkit.propagate` treats them alike.
This module imports nothing heavy so that a spawned worker can cap its thread pools before
numpy, numba or torch start theirs.
"""
import os
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager

#: Environment variables that cap the thread pools of BLAS, OpenMP and numba.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def pin_threads(n=1):
    """Cap this process's BLAS, OpenMP, numba and torch threads to ``n`` (a pool initializer,
    so that k workers on k cores do not oversubscribe them)."""
    for var in THREAD_VARIABLES:
        os.environ[var] = str(n)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        pass
    import sys

    if "numba" in sys.modules:
        import numba

        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


def cpu_count():
    """Cores available to this process."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class SerialExecutor(Executor):
    """Runs each task at submit time in this process (for debugging and tiny jobs)."""

    def submit(self, fn, /, *args, **kwargs):
        future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - handed to the future like a pool would
            future.set_exception(exc)
        return future


def default_start_method():
    """``fork`` where the platform has it, else ``spawn``.

    Forked workers start at once and run models defined in a notebook or in a script without
    an ``if __name__ == "__main__"`` guard. Each worker is pinned to one thread at start
    (:func:`pin_threads`), so torch, if the model uses it, runs without its OpenMP pool, as
    PyTorch's own DataLoader workers do.
    """
    import multiprocessing

    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


def local_executor(workers=None, start_method=None):
    """A process pool of ``workers`` (default: every core) processes, each pinned to one
    thread; ``start_method`` defaults to :func:`default_start_method`."""
    import multiprocessing

    workers = cpu_count() if workers is None else int(workers)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got workers={workers}")
    ctx = multiprocessing.get_context(start_method or default_start_method())
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=pin_threads)


@contextmanager
def make_executor(kind="local", workers=None, address=None):
    """Context manager yielding an executor and shutting it down afterwards.

    Args:
        kind: ``"local"`` (process pool), ``"serial"`` or ``"dask"``.
        workers: processes of the local pool.
        address: scheduler address of a Dask cluster (``tcp://host:8786``), for ``"dask"``;
            a ``distributed.Client`` object also works.
    """
    if kind == "serial":
        yield SerialExecutor()
    elif kind == "local":
        ex = local_executor(workers)
        try:
            yield ex
        finally:
            ex.shutdown(wait=True, cancel_futures=True)
    elif kind == "dask":
        if address is None:
            raise ValueError("kind='dask' needs the scheduler address, e.g. tcp://10.0.0.5:8786")
        from distributed import Client

        own = not isinstance(address, Client)
        try:
            client = Client(address, timeout=30) if own else address
        except OSError as exc:
            raise ValueError(f"cannot reach the Dask scheduler at {address!r}: {exc}") from None
        try:
            yield client.get_executor()
        finally:
            if own:
                client.close()
    else:
        raise ValueError(f"unknown executor kind {kind!r}; use 'local', 'serial' or 'dask'")
