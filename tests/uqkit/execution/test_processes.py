"""Worker processes a user can trust: a cold numba cache, unpicklable models, Ctrl-C, a killed
parent, threads in the parent and scripts without a main guard. Most run a script in a fresh
interpreter, as a user would."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from uqkit import propagate
from uqkit.execution.propagation import PropagationInterrupted

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_script(tmp_path, body, env=None, timeout=180):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(body))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})})


def test_pin_threads_with_numba_running_then_compiling(tmp_path):
    """numba re-reads NUMBA_NUM_THREADS when it compiles and refuses a value that differs from
    its running pool: pin_threads must not change the variable under a running pool."""
    out = run_script(tmp_path, """
        import numba
        numba.set_num_threads(1)          # launches numba's thread pool
        from uqkit.execution.executors import pin_threads
        pin_threads(1)
        @numba.njit
        def f(x):
            return x + 1
        print(f(1))                       # compiling reloads numba's configuration
    """, env={"NUMBA_CACHE_DIR": str(tmp_path / "numba")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2"


def test_fe_model_with_cold_numba_cache_on_two_workers(tmp_path):
    """The README's main job failed on a fresh machine: every FE run raised in the workers."""
    out = run_script(tmp_path, """
        from uqkit import propagate, sample
        from uqkit.adapters import MembraneModel
        from uqkit.presets import table3
        res = propagate(MembraneModel(), sample(table3(), 8, seed=1), workers=2, chunk_size=4,
                        progress=False)
        print(res.n_failed, res.summary())
    """, env={"NUMBA_CACHE_DIR": str(tmp_path / "cold-numba-cache")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "0", out.stdout


def test_unguarded_script_with_lambda_and_threads_in_the_parent(tmp_path):
    """No main guard, a lambda as the model, numba and torch loaded and busy threads in the
    parent: the default start method must still work."""
    out = run_script(tmp_path, """
        import threading, time
        import numba, torch
        import numpy as np
        from uqkit import propagate
        torch.set_num_threads(2)
        torch.ones(500, 500) @ torch.ones(500, 500)      # torch's OpenMP pool is up
        stop = threading.Event()
        threading.Thread(target=lambda: stop.wait(30), daemon=True).start()
        res = propagate(lambda X: np.tanh(torch.as_tensor(X).numpy()) * 2, np.ones((40, 2)),
                        workers=2, chunk_size=5, progress=False)
        stop.set()
        print(res.n_failed, float(res.outputs.sum()))
    """, timeout=120)
    assert out.returncode == 0, out.stderr
    failed, total = out.stdout.split()
    assert failed == "0" and float(total) == pytest.approx(80 * 2 * np.tanh(1.0))


class Holding:
    """A model holding a lock: it cannot be sent to a worker process."""

    def __init__(self):
        import threading

        self.lock = threading.Lock()

    def __call__(self, X):
        return X


def test_unpicklable_model_is_refused_before_any_worker_starts(monkeypatch):
    from uqkit.execution import executors, propagation

    started = []

    def no_pool(*args, **kwargs):
        started.append(args)
        raise AssertionError("a pool was started")

    monkeypatch.setattr(executors, "make_executor", no_pool)
    monkeypatch.setattr(propagation, "make_executor", no_pool)
    with pytest.raises(ValueError, match="cannot be sent to worker processes .*"
                                         "executor='serial'"):
        propagate(Holding(), np.ones((10, 1)), workers=2, progress=False)
    assert started == []  # refused by the check, not by a worker's failure
    monkeypatch.undo()
    assert propagate(Holding(), np.ones((10, 1)), executor="serial", progress=False).n_failed == 0


SLOW_CHUNKS = """
    import faulthandler, os, signal, sys, time
    import numpy as np
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # where it hangs, if it does
    # a terminal's Ctrl-C: CI may start us with SIGINT ignored (a background job), and Python
    # then raises no KeyboardInterrupt at all
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from uqkit import propagate
    from uqkit.execution.propagation import PropagationInterrupted
    DIR = sys.argv[1] if len(sys.argv) > 1 else {dir!r}

    def model(X):
        # chunks 0-3 and the middle and last (5 and 9, which propagate runs first) are fast;
        # the others hang
        with open(os.path.join(DIR, "pids"), "a") as fh:
            fh.write(f"{{os.getpid()}}\\n")
        if X[0, 0] >= 16 and X[0, 0] not in (20, 36):
            time.sleep(120)
        else:
            open(os.path.join(DIR, f"done-{{int(X[0, 0])}}"), "w").close()
        return X

    try:
        propagate(model, np.arange(40.0)[:, None], workers=2, chunk_size=4,
                  store=os.path.join(DIR, "store"), progress=False)
    except PropagationInterrupted as exc:
        print(exc.message())
        sys.exit(130)
"""


def _wait_for(predicate, timeout=60):
    t0 = time.time()
    while not predicate():
        if time.time() - t0 > timeout:
            raise AssertionError("timed out")
        time.sleep(0.1)


def test_ctrl_c_stops_promptly_and_saves_every_finished_chunk(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text(textwrap.dedent(SLOW_CHUNKS.format(dir=str(tmp_path))))
    # output to files: the workers inherit them, and a pipe would wait for them too, while a
    # terminal waits for the parent only
    stdout, stderr = open(tmp_path / "out", "w+"), open(tmp_path / "err", "w+")
    proc = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, stdout=stdout,
                            stderr=stderr, text=True, start_new_session=True)
    try:
        # the six fast chunks are done; both workers hang in slow ones
        _wait_for(lambda: all(os.path.exists(tmp_path / f"done-{i}")
                              for i in (0, 4, 8, 12, 20, 36))
                  and len(open(tmp_path / "pids").read().split()) >= 8)
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGUSR1)
            time.sleep(1)
            raise AssertionError("no exit 10 s after Ctrl-C; its threads:\n"
                                 + open(tmp_path / "err").read()) from None
        out, err = open(tmp_path / "out").read(), open(tmp_path / "err").read()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert out.strip() == (f"saved 24 of 40 runs to {tmp_path / 'store'}; rerun the same "
                           "command to resume")
    chunks = sorted(os.listdir(tmp_path / "store" / "chunks"))
    assert chunks == [f"chunk-{i:06d}.npz" for i in (0, 1, 2, 3, 5, 9)]
    pids = {int(p) for p in open(tmp_path / "pids").read().split()}
    _wait_for(lambda: not any(_alive(p) for p in pids), timeout=10)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_exit_when_their_parent_dies(tmp_path, sig):
    script = tmp_path / "slow.py"
    script.write_text(textwrap.dedent(SLOW_CHUNKS.format(dir=str(tmp_path))))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        _wait_for(lambda: os.path.exists(tmp_path / "pids")
                  and len(set(open(tmp_path / "pids").read().split())) >= 2)
        pids = {int(p) for p in open(tmp_path / "pids").read().split()}
        assert proc.pid not in pids and all(_alive(p) for p in pids)
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        _wait_for(lambda: not any(_alive(p) for p in pids), timeout=15)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def negate(X):
    return -X


class AlreadyDone(ThreadPoolExecutor):
    """An executor whose futures are all finished when submitted (not a SerialExecutor, so
    propagate takes its pool path)."""

    def submit(self, fn, *args):
        fut = super().submit(fn, *args)
        fut.result()
        return fut


def test_interrupt_while_saving_keeps_every_other_finished_chunk(tmp_path, monkeypatch):
    from uqkit.execution.store import StudyStore

    calls = []
    save = StudyStore.save

    def interrupted_once(self, *args, **kwargs):
        calls.append(args[0])
        if len(calls) == 1:
            raise KeyboardInterrupt
        return save(self, *args, **kwargs)

    monkeypatch.setattr(StudyStore, "save", interrupted_once)
    with pytest.raises(PropagationInterrupted) as info:
        propagate(negate, np.arange(20.0)[:, None], executor=AlreadyDone(), chunk_size=4,
                  store=str(tmp_path / "s"), progress=False)
    # every finished chunk is kept, the one whose save was interrupted saved again
    assert info.value.saved == 20 and info.value.total == 20
    assert len(os.listdir(tmp_path / "s" / "chunks")) == 5


def test_a_changed_model_module_gets_fresh_workers(tmp_path, monkeypatch):
    """Workers import a model's module once; a pool reused after the code changed would run
    the old code (a notebook's importlib.reload, say)."""
    import importlib

    (tmp_path / "changing.py").write_text("def model(X):\n    return 2 * X\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    import changing

    X = np.ones((8, 1))
    assert propagate(changing.model, X, workers=2, chunk_size=4, progress=False).outputs[0, 0] == 2
    (tmp_path / "changing.py").write_text("def model(X):\n    return 3 * X\n")
    importlib.reload(changing)
    assert propagate(changing.model, X, workers=2, chunk_size=4, progress=False).outputs[0, 0] == 3


#: Set when a test is over: the tasks below wait for it, so "the run stopped before its task
#: finished" is an event, not a clock reading.
RELEASE = threading.Event()
FINISHED = threading.Event()


def sleepy(X):
    RELEASE.wait(60)
    FINISHED.set()
    return X


def test_ctrl_c_delivered_to_another_thread_still_stops_the_run(tmp_path):
    """The kernel may deliver a terminal's SIGINT to any thread; Python handles it in the main
    thread only. A main thread blocked in an untimed wait (as_completed's) then hung until a
    future completed: seen once in CI, with a worker stuck for minutes. (In the full suite the
    KeyboardInterrupt was once in a while dropped in a weakref callback the garbage collector
    ran: see the next test.)"""
    import threading

    def interrupt_from_this_thread():
        time.sleep(0.5)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # lands in this thread

    pool = ThreadPoolExecutor(1)
    # as in a terminal (CI may run the tests with SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    RELEASE.clear()
    FINISHED.clear()
    threading.Thread(target=interrupt_from_this_thread, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            propagate(sleepy, np.ones((2, 1)), executor=pool, chunk_size=1,
                      store=str(tmp_path / "s"), progress=False)
        assert not FINISHED.is_set()  # it stopped while its task still ran
    finally:
        RELEASE.set()
        signal.signal(signal.SIGINT, previous)
        pool.shutdown(wait=False, cancel_futures=True)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("store", [False, True])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_ctrl_c_python_drops_in_a_gc_callback_still_stops_the_run(tmp_path, store, sig):
    """Python runs a SIGINT handler in the main thread at its next bytecode, which may be in
    code the garbage collector runs (a weakref callback, a __del__, a gc callback such as an
    in-process Dask scheduler's); a KeyboardInterrupt raised there is dropped ("Exception
    ignored in ...") and the run went on. It happened in the full test suite: the handler ran
    in a finished ThreadPoolExecutor's weakref callback, collected while propagate read the
    installed distributions for the store's manifest. Here the Ctrl-C lands in a gc callback
    once the first chunk runs; so does a SIGTERM to the command (stop_on_sigterm), which was
    dropped likewise."""
    import gc
    import threading

    from uqkit.execution.interrupts import stop_on_sigterm, terminated

    started, sent, finished, release = (threading.Event(), [], threading.Event(),
                                        threading.Event())

    def slow(X):
        started.set()
        release.wait(60)
        finished.set()
        return X

    def on_gc(phase, info):
        if started.is_set() and not sent and threading.current_thread() is threading.main_thread():
            sent.append(time.perf_counter())
            signal.raise_signal(getattr(signal, sig))  # its handler runs here, in the callback

    pool = ThreadPoolExecutor(1)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    thresholds = gc.get_threshold()
    gc.set_threshold(1, 10**9, 10**9)  # the youngest generation at every allocation, only it
    gc.callbacks.append(on_gc)
    try:
        # propagate's PropagationInterrupted, a KeyboardInterrupt, whichever signal it was
        with pytest.raises(KeyboardInterrupt), stop_on_sigterm():
            propagate(slow, np.ones((2, 1)), executor=pool, chunk_size=1,
                      store=str(tmp_path / "s") if store else None, progress=False)
        assert sent and not finished.is_set()  # it stopped while its task still ran
        assert terminated() == (sig == "SIGTERM")
    finally:
        release.set()
        gc.callbacks.remove(on_gc)
        gc.set_threshold(*thresholds)
        signal.signal(signal.SIGINT, previous)
        pool.shutdown(wait=False, cancel_futures=True)


@pytest.mark.parametrize("handler", [signal.SIG_IGN, signal.SIG_DFL, signal.default_int_handler,
                                     lambda signum, frame: None])
def test_propagate_leaves_the_sigint_handler_as_it_was(handler):
    """propagate wraps a Python SIGINT handler while it runs and puts it back; an ignored or
    default SIGINT is left alone, and a handler that does not raise does not stop a run."""
    import threading

    def interrupt(X):
        if handler is not signal.SIG_DFL:  # a SIGINT would end the test run
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            time.sleep(0.3)  # the main thread runs the handler meanwhile
        return X

    previous = signal.signal(signal.SIGINT, handler)
    pool = ThreadPoolExecutor(1)
    try:
        if handler is signal.default_int_handler:
            with pytest.raises(KeyboardInterrupt):
                propagate(interrupt, np.ones((2, 1)), executor=pool, chunk_size=1,
                          progress=False)
        else:
            res = propagate(interrupt, np.ones((2, 1)), executor=pool, chunk_size=1,
                            progress=False)
            assert res.computed == 2
        assert signal.getsignal(signal.SIGINT) is handler
    finally:
        signal.signal(signal.SIGINT, previous)
        pool.shutdown(wait=False, cancel_futures=True)


def _pid(_):
    return os.getpid()


def test_release_workers_stops_the_pool_and_a_new_one_starts_after():
    from uqkit.execution.executors import local_executor, release_workers

    ex = local_executor(workers=2, code_key="release-test")
    first = set(ex.map(_pid, range(8)))
    procs = list(ex._processes.values())
    release_workers()
    assert all(not p.is_alive() for p in procs)
    again = local_executor(workers=2, code_key="release-test")
    assert again is not ex and not first & set(again.map(_pid, range(8)))
    release_workers()
    release_workers()  # nothing to release: a no-op


def test_warm_pool_starts_the_workers_that_the_next_pool_request_gets():
    """loky starts workers at the first task; warm_pool starts them at once, runs its task on
    them, and the next request with the same settings gets that pool, not a new one."""
    from uqkit.execution import executors

    futures = executors.warm_pool(2, _pid, 0, code_key="warm-test")
    assert len(futures) == 2
    ran_on = {f.result(timeout=60) for f in futures}  # submitted from a thread
    pool = executors.local_executor(workers=2, code_key="warm-test")
    workers = set(pool._processes)
    assert len(workers) == 2 and all(p.is_alive() for p in pool._processes.values())
    assert ran_on <= workers
    assert set(pool.map(_pid, range(8))) <= workers
    executors.release_workers()


def test_warm_pool_with_one_worker_starts_nothing():
    """One worker runs in the calling process (propagate, cached_map): no pool to warm."""
    from uqkit.execution import executors

    executors.release_workers()
    assert executors.warm_pool(1, _pid, 0, code_key="warm-one") == []
    assert executors._pool is None


def test_release_workers_leaves_no_queue_feeder_running():
    """A feeder thread still ending when the interpreter exits is stopped between unlinking a
    semaphore and telling loky's resource tracker, which then warns of a leaked semlock: the
    pool's own feeders, and one made slow on purpose, have ended when release_workers
    returns."""
    from uqkit.execution.executors import local_executor, release_workers

    ex = local_executor(workers=2, code_key="feeder-test")
    assert sorted(ex.map(_pid, range(8)))
    slow = threading.Thread(target=time.sleep, args=(0.3,), name="QueueFeederThread",
                            daemon=True)
    slow.start()
    release_workers()
    assert not [t for t in threading.enumerate() if t.name == "QueueFeederThread"]


def test_join_queue_feeders_waits_for_a_feeder_and_gives_up_on_one_that_hangs():
    from uqkit.execution.executors import join_queue_feeders

    done, hang = threading.Event(), threading.Event()
    ending = threading.Thread(target=lambda: (time.sleep(0.3), done.set()),
                              name="QueueFeederThread", daemon=True)
    ending.start()
    join_queue_feeders(timeout=5.0)
    assert done.is_set()
    stuck = threading.Thread(target=hang.wait, name="QueueFeederThread", daemon=True)
    stuck.start()
    t0 = time.perf_counter()
    join_queue_feeders(timeout=0.2)
    assert 0.15 < time.perf_counter() - t0 < 2.0 and stuck.is_alive()
    hang.set()


def _sleep_then_pid(seconds):
    time.sleep(seconds)
    return os.getpid()


#: What a task keeps in its worker (the memory-growth test).
_KEPT = []


def _grow_then_pid(megabytes):
    time.sleep(1.1)  # loky looks at a worker's memory at most once a second
    _KEPT.append(bytearray(megabytes * 2 ** 20))
    return os.getpid()


def test_a_worker_whose_memory_grows_by_a_bdl_fit_keeps_running():
    """loky ended a worker whose memory grew by 300 MB since its first task and started a
    fresh one, which imported everything again: on a pool kept across models, the workers
    that ran the FE were restarted once they trained. psutil is how loky measures."""
    pytest.importorskip("psutil")
    from uqkit.execution.executors import WORKER_MEMORY_GROWTH, local_executor, release_workers

    assert WORKER_MEMORY_GROWTH > 400 * 2 ** 20
    try:
        ex = local_executor(workers=1, code_key="memory-growth")
        first = ex.submit(_pid, 0).result()
        assert ex.submit(_grow_then_pid, 400).result() == first
        assert ex.submit(_pid, 0).result() == first
    finally:
        release_workers()


def test_an_idle_pool_replaced_by_another_model_is_killed_a_busy_one_is_waited_for():
    """Another code key replaces the pool. Its idle workers are killed (a negative exit
    code: a signal), not waited for while their interpreters shut down; a pool with a task
    still running is waited for, and the task's result arrives."""
    from uqkit.execution.executors import local_executor, release_workers

    ex = local_executor(workers=2, code_key="replace-idle")
    list(ex.map(_pid, range(4)))
    idle = list(ex._processes.values())
    busy_pool = local_executor(workers=2, code_key="replace-busy")
    assert busy_pool is not ex
    assert all(p.exitcode is not None and p.exitcode < 0 for p in idle)
    list(busy_pool.map(_pid, range(4)))
    busy = list(busy_pool._processes.values())
    future = busy_pool.submit(_sleep_then_pid, 0.5)
    time.sleep(0.1)
    local_executor(workers=2, code_key="replace-after")
    assert future.result(timeout=10) in {p.pid for p in busy}
    assert all(p.exitcode == 0 for p in busy)
    release_workers()


def test_a_busy_pool_is_not_killed_when_another_thread_made_the_last_pool():
    """loky keeps a reusable pool per thread: the pool that a new key replaces is this
    thread's, busy here, whatever pool another thread made last; its task's result arrives."""
    import threading

    from uqkit.execution.executors import local_executor, release_workers

    busy = local_executor(workers=2, code_key="thread-a")
    future = busy.submit(_sleep_then_pid, 1.0)
    time.sleep(0.2)
    other = threading.Thread(target=lambda: local_executor(workers=2, code_key="thread-b"))
    other.start()
    other.join()
    local_executor(workers=2, code_key="thread-c")
    assert future.result(timeout=20) > 0
    release_workers()


def test_the_console_script_releases_the_workers():
    import tomllib

    root = os.path.join(os.path.dirname(__file__), "..", "..", "..")
    with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
        scripts = tomllib.load(fh)["project"]["scripts"]
    assert scripts["uqkit"] == "uqkit.cli:command"
    code = "from uqkit.cli import command; import sys; sys.argv = ['uqkit', '--help']; command()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and "study" in out.stdout


def test_the_console_script_stops_the_pool_after_the_command_and_exits_with_its_code(
        monkeypatch):
    from uqkit.cli import app
    from uqkit.execution import executors

    calls = []
    monkeypatch.setattr(app, "main", lambda: calls.append("main") or 3)
    monkeypatch.setattr(executors, "release_workers", lambda: calls.append("release"))
    with pytest.raises(SystemExit) as exit_:
        app.command()
    assert calls == ["main", "release"] and exit_.value.code == 3


def test_signals_held_while_a_program_starts_are_each_handled_after_it():
    """A SIGTERM and a SIGINT that both came while a program was being started: SIGINT's
    handler raised first and SIGTERM's never ran (a worker then went on; a review). Now
    SIGTERM's runs first, and SIGINT's KeyboardInterrupt comes after it."""
    from uqkit.execution.executors import starting_child

    handled = []
    old = {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGTERM, lambda n, f: handled.append("term"))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with starting_child():
                signal.raise_signal(signal.SIGINT)
                signal.raise_signal(signal.SIGTERM)
                handled.append("held")  # neither handler ran inside
        assert handled == ["held", "term"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        for n, h in old.items():
            signal.signal(n, h)
