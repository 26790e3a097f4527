"""Executors that run model chunks: a local process pool, a Dask cluster, or in-process.

All are ``concurrent.futures.Executor`` objects, so :func:`uqkit.propagate` treats them alike.

The local pool is loky's (the process pool behind joblib). On Linux its workers are forked
from a fork server that has imported the heavy modules once (:mod:`.fork_server`); elsewhere
they are fresh interpreters (loky's fork + exec). Both are safe where a plain ``fork`` of this
process is not: on macOS, and from a parent that already runs threads (tqdm, torch, numba,
``fem.solve_batch``'s thread pool). Models are sent with cloudpickle, so functions and lambdas
defined in a notebook or in ``__main__`` work, and the workers do not re-run the parent's
``__main__``, so a script without an ``if __name__ == "__main__":`` guard works too. Each
worker:

* caps its BLAS, OpenMP, numba and torch threads to one before anything loads them
  (:func:`pin_threads`), so k workers on k cores do not oversubscribe them;
* ignores SIGINT: Ctrl-C reaches the parent, which saves what finished and stops the pool;
* exits by itself when this process dies (SIGKILL included): a watchdog thread polls its
  parent's PID (:func:`watch_parent`); a fork server's workers watch the server, which ends
  when this process does;
* ends the external programs it runs when it ends (:func:`end_worker`), a program being
  started at that moment too (:func:`starting_child`).

This module imports nothing heavy, so that a worker can cap its thread pools before numpy,
numba or torch start theirs.
"""
import numbers
import os
import sys
import threading
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from functools import partial

__all__ = ["THREAD_VARIABLES", "WATCHDOG_INTERVAL", "pin_threads", "track_child_group",
           "kill_child_groups", "starting_child", "START_GRACE", "watch_parent", "worker_init",
           "WORKER_MEMORY_GROWTH", "end_worker", "cpu_count", "worker_count", "SerialExecutor",
           "DEFAULT_START_METHOD", "START_METHOD_VARIABLE", "START_METHODS", "IDLE_SECONDS",
           "check_picklable", "local_executor", "warm_pool", "start_context", "is_local_pool",
           "release_workers", "FEEDER_GRACE", "join_queue_feeders", "stop_executor",
           "WORKER_GRACE", "make_executor"]

#: Environment variables that cap the thread pools of BLAS, OpenMP and numba.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
#: Seconds between two checks of a worker's watchdog on its parent.
WATCHDOG_INTERVAL = 0.5


def pin_threads(n=1):
    """Cap this process's BLAS, OpenMP, numba and torch threads to ``n``.

    Safe whatever is already loaded. numba reads ``NUMBA_NUM_THREADS`` again whenever it
    compiles, and refuses a value that differs from the size of a thread pool it has already
    launched; so the variable is changed only while numba's pool is not running (and numba's
    own setting with it), and a running pool is capped with ``numba.set_num_threads``
    instead.
    """
    numba_running = False
    if "numba" in sys.modules:
        from numba.np.ufunc import parallel

        numba_running = bool(parallel._is_initialized)
    for var in THREAD_VARIABLES:
        if not (var == "NUMBA_NUM_THREADS" and numba_running):
            os.environ[var] = str(n)
    if "numba" in sys.modules:
        import numba

        if numba_running:
            numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
        else:
            numba.config.NUMBA_NUM_THREADS = n
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


#: Process groups of the programs this process runs now (:mod:`uqkit.external`), which
#: :func:`kill_child_groups` ends when the process itself must end at once.
_child_groups = set()


def track_child_group(pgid, running=True):
    """Record (``running``) or forget a process group this process started."""
    (_child_groups.add if running else _child_groups.discard)(pgid)


def kill_child_groups():
    """SIGKILL every process group recorded by :func:`track_child_group`."""
    import signal

    for pgid in list(_child_groups):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:  # already gone
            pass
    _child_groups.clear()


#: Seconds an end of this process (:func:`end_worker`) waits for programs being started to
#: have their groups recorded (:func:`starting_child`).
START_GRACE = 10.0
#: Guards the count of programs being started now (:func:`starting_child`).
_starting = threading.Condition()
_starts = [0]


@contextmanager
def starting_child():
    """The block that starts a program and records its group (:func:`track_child_group`),
    as one step for what ends this process: :func:`end_worker` from another thread (the
    watchdog) waits until the block is over, and in the main thread a SIGINT or SIGTERM whose
    handler was set from Python is held until then, and its handler run at the block's end.

    Between the fork and the record, an end found the group not recorded: the worker
    exited and its program ran on (a pool stopped after Ctrl-C, under load), and a Ctrl-C
    in this process raised out of the start without killing it."""
    release = _hold_signals()
    with _starting:
        _starts[0] += 1
    try:
        yield
    finally:
        with _starting:
            _starts[0] -= 1
            _starting.notify_all()
        release()


def _hold_signals():
    """In the main thread, have SIGINT and SIGTERM recorded instead of handled (those with a
    Python handler); returns the function that puts their handlers back and runs them for
    the signals that came meanwhile."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    came, saved = [], {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(signum)
        if callable(handler):
            saved[signum] = handler
            signal.signal(signum, lambda number, frame: came.append(number))

    def release():
        # each handler put back whatever a signal arriving meanwhile raises (a Ctrl-C
        # between two of them left the other one holding its signal for good)
        _each([partial(signal.signal, n, handler) for n, handler in saved.items()])
        # SIGTERM's first (a worker's ends the process; SIGINT's raises KeyboardInterrupt),
        # and each handler runs whatever the one before it raised
        _each([partial(saved[n], n, None) for n in sorted(set(came),
                                                          key=lambda n: n != signal.SIGTERM)])

    return release


def _each(calls):
    """Call each of ``calls`` in turn; an exception one raises propagates once the others
    have run."""
    if calls:
        try:
            calls[0]()
        finally:
            _each(calls[1:])


def watch_parent(parent_pid, interval=WATCHDOG_INTERVAL):
    """Start a daemon thread that ends this process as soon as its parent is none of
    ``parent_pid`` (a PID or a tuple of them: the parent died and the process was
    re-parented), and with it the programs it runs (:func:`kill_child_groups`: they live in
    process groups of their own, which the exit would leave running)."""
    parents = parent_pid if isinstance(parent_pid, tuple) else (parent_pid,)

    def watch():
        import time

        while True:
            if os.getppid() not in parents:
                end_worker()
            time.sleep(interval)

    threading.Thread(target=watch, name="uqkit-parent-watchdog", daemon=True).start()


def worker_init(parent_pid, threads=1, pool_key=None):
    """Initializer of every local worker: thread caps, SIGINT ignored, SIGTERM ends the
    worker with the programs it runs (:func:`stop_executor` sends it), parent watchdog
    (``parent_pid``: this process's; for a fork server's worker, a tuple naming the server,
    whose process the worker watches, as it ends with this process).
    ``pool_key`` only tells pools apart (see :func:`local_executor`)."""
    import signal

    if isinstance(parent_pid, tuple):  # forked from a fork server: it is the parent to watch
        from .fork_server import leave_server

        parent_pid = (leave_server(),)
    pin_threads(threads)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, end_worker)
    watch_parent(parent_pid)


#: Bytes a local worker's memory may grow after its first task before loky ends it and starts
#: a fresh one (``LOKY_MAX_MEMORY_LEAK_SIZE``; loky's default is 300 MB): a guard against
#: leaking tasks. A worker grows past 300 MB by design when it runs the FE first and a BDL
#: fit next on a pool kept across models (torch's import, and the freed memory
#: :mod:`surrogates.allocator` keeps for reuse). Measured on 2 cores, the membrane study with
#: 2 workers under loky's default: 4 workers started where 2 sufficed, and the fits took
#: 7-10% more CPU than on a pool of their own (two interleaved runs each).
WORKER_MEMORY_GROWTH = 2 * 1024 ** 3


def end_worker(signum=None, frame=None):
    """End this process at once, and the programs it runs (:func:`kill_child_groups`): a
    worker's SIGTERM handler and its watchdog's end. A program being started is ended too,
    once its group is recorded (:func:`starting_child`, at most :data:`START_GRACE` s)."""
    with _starting:  # held to the exit: no program starts after the kill
        _starting.wait_for(lambda: not _starts[0], timeout=START_GRACE)
        kill_child_groups()
        os._exit(1)


def cpu_count():
    """Cores available to this process: :func:`loky.cpu_count`, which respects the CPU
    affinity mask and a container's CPU quota (cgroups), where ``os.cpu_count`` counts the
    host's cores."""
    import loky

    return loky.cpu_count()


def worker_count(workers):
    """``workers`` as processes to start: :func:`cpu_count` for None, else an integer >= 1
    (a ValueError naming it: ``--workers 0`` ran a whole study on every core, then failed).

    >>> worker_count(2)
    2
    """
    if workers is None:
        return cpu_count()
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got workers={workers!r}")
    return int(workers)


class SerialExecutor(Executor):
    """Runs each task at submit time in this process (for debugging and tiny jobs)."""

    def submit(self, fn, /, *args, **kwargs):
        """Call ``fn(*args, **kwargs)`` now; a done future holds its result or its error."""
        future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - handed to the future like a pool would
            future.set_exception(exc)
        return future


#: The default start method of local workers (see the module docstring): ``"preload"``, a
#: fork server (:mod:`.fork_server`), where it is available; else ``"loky"``. The
#: environment variable :data:`START_METHOD_VARIABLE` overrides it.
DEFAULT_START_METHOD = "preload" if sys.platform.startswith("linux") else "loky"
#: The environment variable that names the local workers' start method, when a call names
#: none: ``UQKIT_START_METHOD=loky`` starts fresh interpreters where the fork server would.
START_METHOD_VARIABLE = "UQKIT_START_METHOD"
#: The start methods :func:`local_executor` knows.
START_METHODS = ("preload", "loky", "loky_init_main", "spawn")
#: Seconds an idle local worker waits for more work before it exits (joblib's default; loky's
#: own is 10 s). An analysis's phase in its own process can outlast a minute (the reliability
#: study's active learning with a BDL: 45-65 s on 2 cores), and with 60 s every worker of
#: the pool had exited when the FE Sobol' runs came next, which started them all again
#: (those runs took 8.2 s with 16 workers on 2 cores, against 1.7 s in runs that started no
#: pool). The console script ends its workers at exit.
IDLE_SECONDS = 300


def check_picklable(obj, what="the model"):
    """Raise a ValueError that says what to do if ``obj`` cannot be sent to a worker process
    (cloudpickle, as the pool sends it)."""
    import cloudpickle

    try:
        cloudpickle.dumps(obj)
    except Exception as exc:  # noqa: BLE001 - any pickling failure means the same to the user
        raise ValueError(
            f"{what} cannot be sent to worker processes ({type(exc).__name__}: {exc}). Make it "
            "a module-level function or a class instance without open files, locks or "
            "connections, or run in this process with executor='serial'") from None


def local_executor(workers=None, start_method=None, threads=1, code_key=None, preload=()):
    """A loky process pool of ``workers`` (default: every core) processes, each pinned to
    ``threads`` threads and watching this process, or the fork server, which ends with it
    (:func:`worker_init`).

    The pool is loky's reusable one: a later call with the same settings gets the same
    workers back (warm, their imports and JIT caches loaded), whatever model it runs, unless
    the file of a module this process has loaded or its import path changed since
    (:func:`uqkit.execution.loaded_code.import_key`): workers import a module once, from the
    path they started with, so a pool kept then could run old code or miss a module; it gets
    fresh workers. Another ``code_key`` also gets fresh workers. Idle workers exit after
    :data:`IDLE_SECONDS`.

    Args:
        workers: number of processes.
        start_method: ``"preload"`` (the default on Linux: forked from a fork server that
            imported the heavy modules once, :mod:`.fork_server`), or loky's context name:
            ``"loky"`` (the default elsewhere, fork + exec), ``"loky_init_main"`` (also runs
            the parent's ``__main__``), ``"spawn"``. None: the environment variable
            :data:`START_METHOD_VARIABLE`, else :data:`DEFAULT_START_METHOD`.
        threads: threads per worker.
        code_key: a string that tells pools apart (tests, benchmarks); None for the default.
        preload: modules a fork server imports when it starts, beside
            :data:`.fork_server.WORKER_PACKAGES` (:func:`.fork_server.server_modules`); they
            must start no thread when imported. Ignored by a server already made for these
            settings, and by the other start methods.
    """
    from loky import get_reusable_executor

    from .loaded_code import import_key

    global _pool
    workers = cpu_count() if workers is None else int(workers)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got workers={workers}")
    env = {var: str(threads) for var in THREAD_VARIABLES}
    env["LOKY_MAX_MEMORY_LEAK_SIZE"] = str(WORKER_MEMORY_GROWTH)
    method = start_method or os.environ.get(START_METHOD_VARIABLE) or DEFAULT_START_METHOD
    if method not in START_METHODS:
        where = f"{START_METHOD_VARIABLE}={method!r}" if not start_method else repr(method)
        raise ValueError(f"unknown start method {where}; use one of {', '.join(START_METHODS)}")
    server = None
    if method == "preload":
        from . import fork_server

        try:
            os.getcwd()
        except FileNotFoundError:  # a server's key and start read it
            raise RuntimeError("this process's working directory was removed; change to an "
                               "existing directory (os.chdir) before running on the local "
                               "pool") from None
        if fork_server.available():
            fork_server.note_server_files()  # before the key: the server's files count
        else:
            method = "loky"
    key = (code_key, import_key())
    if method == "preload":
        server = fork_server.ensure_server(preload, env, threads, key[1])
        # its workers watch the server, which ends with this process
        parents, context = ("fork server", server.number), server.context
    else:
        parents, context = os.getpid(), start_context(method)
    _pool = get_reusable_executor(max_workers=workers, context=context,
                                  timeout=IDLE_SECONDS, initializer=worker_init,
                                  initargs=(parents, threads, key), env=env,
                                  kill_workers=_reusable_pool_is_idle())
    if server is not None:
        fork_server.stop_unused()  # the servers of pools replaced here, among others
    return _pool


def warm_pool(workers=None, task=None, *args, code_key=None, preload=()):
    """Start the local pool of ``workers`` processes now (:func:`local_executor`), and have
    it run ``task(*args)`` once per worker, without waiting for them: a program that will
    run a model on the pool starts its workers, and lets them load the model's code, while
    it imports and sets up the rest (loky starts workers only at the first task).

    The later :func:`local_executor` with the same settings, from the same thread (loky keeps
    a reusable pool per thread), gets this pool back, warm. The futures are returned and
    need not be read: an error there comes back again with the first real batch. ``task`` is
    sent with cloudpickle, like a model; with 1 worker nothing is started (one worker runs in
    the calling process, :func:`uqkit.propagate`). The tasks are submitted from a thread:
    a fork server's first worker is forked only after the server's imports, which this
    process need not wait for. ``code_key`` and ``preload``: as for
    :func:`local_executor`.

    Measured on 2 cores (``uqkit study membrane``, 2 workers, warm numba cache): its first FE
    data set (1,020 runs) took 0.6 s against 1.3 s, the study 0.7 s less in all; with a free
    core per worker the workers' start (about 1 s) overlaps the caller's imports whole
    (``docs/guide/performance.md``, "The pool starts while the command imports").
    """
    workers = cpu_count() if workers is None else int(workers)
    if workers == 1:
        return []
    pool = local_executor(workers, code_key=code_key, preload=preload)
    futures = [Future() for _ in range(workers)]
    # submitting forks the workers, which waits for a fork server's imports: in a thread
    threading.Thread(target=_submit_into, args=(pool, futures, task or int, args),
                     name="uqkit-warm-pool", daemon=True).start()
    return futures


def _submit_into(pool, futures, task, args):
    """Submit ``task(*args)`` to ``pool`` once per future of ``futures``, each future taking
    its task's outcome."""
    from concurrent.futures import InvalidStateError

    def relay(done, future):
        try:
            if done.cancelled():
                future.cancel()
            elif done.exception() is not None:
                future.set_exception(done.exception())
            else:
                future.set_result(done.result())
        except InvalidStateError:  # cancelled by the caller meanwhile
            pass

    for future in futures:
        if not future.set_running_or_notify_cancel():  # cancelled by the caller: not sent
            continue
        try:
            submitted = pool.submit(task, *args)
        except BaseException as exc:  # noqa: BLE001 - handed to the future, as submit would
            future.set_exception(exc)
        else:
            submitted.add_done_callback(lambda done, future=future: relay(done, future))


#: Start contexts by name, as first resolved (see :func:`start_context`).
_contexts = {}


def start_context(name):
    """loky's own start context ``name``, the same object at every call. loky resolves a name
    in multiprocessing's registry, where joblib's copy of loky (imported with scikit-learn)
    registers contexts of the same names: a pool asked for with joblib's object had other
    settings, so loky replaced the warm pool (seen in the reliability study: the pool after
    the GP's active learning), and ran loky's pool with joblib's processes."""
    if name not in _contexts:
        from loky.backend import context

        own = {"loky": getattr(context, "ctx_loky", None),
               "loky_init_main": getattr(context, "LokyInitMainContext", lambda: None)()}
        _contexts[name] = own.get(name) or context.get_context(name)
    return _contexts[name]


def _reusable_pool_is_idle():
    """Whether the pool loky would replace (its reusable executor, kept per thread) exists
    and has no task pending. A pool that other settings or changed code replace has its
    workers killed when it is idle, rather than waited for: the interpreters' shutdown of 16
    workers that had run the FE took 1.9 s on 2 cores (0.1 s killed), paid by every analysis
    whose model differed from the last one's while pools were kept per model. A busy pool,
    or one loky's private storage does not show, is waited for, as loky does."""
    try:
        from loky import reusable_executor

        pool = reusable_executor._executor_storage.executor
        return pool is not None and not pool._pending_work_items
    except AttributeError:  # pragma: no cover - another loky's internals
        return False


#: The local pool :func:`local_executor` gave last (loky keeps it up for reuse).
_pool = None


def is_local_pool(ex):
    """Whether ``ex`` is a local process pool (loky's), whose workers run on this machine."""
    if "loky" not in sys.modules:  # no pool was ever made here
        return False
    from loky import ProcessPoolExecutor

    return isinstance(ex, ProcessPoolExecutor)


def release_workers():
    """Stop the local pool's workers at once, without waiting for their interpreters to shut
    down (about a second when they hold torch): for a process about to exit, whose results
    are saved. Then wait for the pool's queue feeder threads to end
    (:func:`join_queue_feeders`). A later :func:`local_executor` starts a new pool."""
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=True, kill_workers=True)
        _pool = None
        join_queue_feeders()


#: Seconds :func:`join_queue_feeders` waits in all.
FEEDER_GRACE = 1.0


def join_queue_feeders(timeout=FEEDER_GRACE):
    """Wait, ``timeout`` seconds at most in all, for this process's queue feeder threads
    (multiprocessing's ``QueueFeederThread``) to end. A shut-down pool leaves its queues'
    feeders ending on their own; as they end they release the queues' semaphores, each by
    unlinking it and then telling loky's resource tracker. They are daemon threads, so one
    still at it when the interpreter exits stops between the two, and the tracker then warns
    of a "leaked semlock" whose file is gone, after a run that went well (about one exit in
    40 of a small study on 2 cores, traced to a feeder alive after the pool's shutdown)."""
    import time

    deadline = time.monotonic() + timeout
    for thread in threading.enumerate():
        if thread.name == "QueueFeederThread" and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))


def stop_executor(ex, wait=True):
    """Shut a pool down; ``wait=False`` kills its workers at once (after an interrupt), and
    every process they started (an external program's solver, in a session of its own)."""
    if isinstance(ex, SerialExecutor):
        return
    from loky import ProcessPoolExecutor

    if isinstance(ex, ProcessPoolExecutor):
        if not wait:
            _end_workers(list(getattr(ex, "_processes", {}).values()))
        ex.shutdown(wait=wait, kill_workers=not wait)
    else:
        ex.shutdown(wait=wait, cancel_futures=True)


#: Seconds a worker has to end itself on SIGTERM before it is killed.
WORKER_GRACE = 2.0


def _end_workers(processes, grace=WORKER_GRACE):
    """End a pool's workers now, here rather than in loky's manager thread (a process that
    exits right after may not leave it the time): SIGTERM first, on which a worker kills the
    programs it runs (in sessions of their own, out of reach of a process-tree kill that
    races their start) and exits; then, after ``grace`` seconds, SIGKILL to what is left and
    its descendants."""
    import signal
    import time

    from loky.backend.utils import kill_process_tree

    for process in processes:
        try:
            os.kill(process.pid, signal.SIGTERM)
        except OSError:  # already gone
            pass
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            try:
                kill_process_tree(process)
            except (OSError, ValueError):  # gone meanwhile
                pass


@contextmanager
def make_executor(kind="local", workers=None, address=None, code_key=None, preload=()):
    """Context manager yielding an executor. A local pool stays up for the next call (see
    :func:`local_executor`), except when the block ends by an exception such as
    KeyboardInterrupt: then its workers are killed at once. A Dask client made here is
    closed (:func:`.dask_cluster.dask_executor`).

    Args:
        kind: ``"local"`` (process pool), ``"serial"`` or ``"dask"``.
        workers: processes of the local pool.
        address: scheduler address of a Dask cluster (``tcp://host:8786``), for ``"dask"``;
            a ``distributed.Client`` object also works.
        code_key: for ``"local"``, a key that tells pools apart (see :func:`local_executor`).
        preload: for ``"local"``, modules a new fork server imports (:func:`local_executor`).
    """
    if kind == "serial":
        yield SerialExecutor()
    elif kind == "local":
        ex = local_executor(workers, code_key=code_key, preload=preload)
        try:
            yield ex
        except BaseException:
            stop_executor(ex, wait=False)
            raise
    elif kind == "dask":
        if address is None:
            raise ValueError("kind='dask' needs the scheduler address, e.g. tcp://10.0.0.5:8786")
        from .dask_cluster import dask_executor

        with dask_executor(address) as ex:
            yield ex
    else:
        raise ValueError(f"unknown executor kind {kind!r}; use 'local', 'serial' or 'dask'")
