"""Ctrl-C while this process waits for workers: a SIGINT that Python dropped still stops the
wait (:func:`interrupt_guard`, :func:`check_interrupt`), and the main thread waits in slices
short enough to see it (:func:`iter_completed`). The ``uqkit`` command has SIGTERM (a batch
scheduler's time limit, ``kill``, ``timeout``) stop it the same way (:func:`stop_on_sigterm`):
the finished runs saved, the message that says how to resume, exit code 143. With SIGTERM's
default action it died where it stood instead: the runs it had saved were kept, but finished
chunks held back unsaved were lost, it said nothing, and multiprocessing's resource tracker
warned of leaked semaphores.

Imports: the standard library only.
"""
import threading
from contextlib import contextmanager

__all__ = ["SIGNAL_POLL", "Terminated", "interrupt_guard", "check_interrupt", "iter_completed",
           "stop_on_sigterm", "terminated"]

#: Seconds between two checks for signals while the main thread waits for futures.
SIGNAL_POLL = 0.25


#: The SIGINT latches of the :func:`interrupt_guard` blocks running in the main thread.
_interrupt_latches = []
#: Whether a SIGTERM came during the last :func:`stop_on_sigterm` block, and whether its
#: :class:`Terminated` may not have reached anyone yet (raised where Python drops it).
_sigterm = {"came": False, "pending": False}


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised by :func:`stop_on_sigterm`'s handler: a KeyboardInterrupt, so that it
    stops what Ctrl-C stops, saving what Ctrl-C saves."""


@contextmanager
def stop_on_sigterm():
    """While the block runs, SIGTERM raises :class:`Terminated` in the main thread, which
    stops the block as Ctrl-C does; :func:`terminated` then says so. A second SIGTERM takes
    the default action (the process dies), as does one after the block. Should Python drop
    the first one's exception (raised in a garbage collector's callback, say), the next
    :func:`check_interrupt` raises it again, and :func:`terminated` still says so.

    Only over SIGTERM's default action, in the main thread: a handler the program set is
    left alone, as are the pool's workers (theirs ends them,
    :func:`uqkit.execution.executors.worker_init`). A script that uses it catches
    KeyboardInterrupt (``propagate`` raises :class:`~uqkit.execution.propagation.
    PropagationInterrupted` after saving) and exits as it sees fit (the command: 143)."""
    import signal

    _sigterm.update(came=False, pending=False)
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second one kills
        _sigterm.update(came=True, pending=True)
        raise Terminated("terminated by SIGTERM")

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        _sigterm["pending"] = False
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # whatever the block left there


def terminated():
    """Whether a SIGTERM came during the last :func:`stop_on_sigterm` block."""
    return _sigterm["came"]


@contextmanager
def interrupt_guard():
    """Make a Ctrl-C that Python dropped stop the block anyway (see :func:`check_interrupt`).

    Python runs a SIGINT handler in the main thread at its next bytecode, and that may be in
    code the garbage collector runs: a weakref callback, a ``__del__``, a ``gc.callbacks``
    entry (an in-process Dask scheduler installs one). The KeyboardInterrupt the handler
    raises there is reported as "Exception ignored in ..." and dropped, so the Ctrl-C is lost.
    The longer the session (more garbage, longer collections) and the busier the main thread,
    the likelier: in the full test suite a Ctrl-C was lost in a finished ThreadPoolExecutor's
    weakref callback, run by a collection while propagate read the installed distributions.

    While the block runs, SIGINT's handler is wrapped: when it raises KeyboardInterrupt, that
    is recorded, and :func:`check_interrupt` (called by :func:`iter_completed` at every
    poll) raises it again if the block is still running. Only in the main thread, and only
    over a Python handler (Python's default one or the user's): an ignored or default SIGINT
    is left alone, and a handler that does not raise still does not stop anything. The
    previous handler is put back at the end, unless the block replaced it.
    """
    import signal

    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return
    latch = [False]

    def handler(signum, frame):
        try:
            previous(signum, frame)
        except KeyboardInterrupt:
            latch[0] = True
            raise

    signal.signal(signal.SIGINT, handler)
    _interrupt_latches.append(latch)
    try:
        yield
    finally:
        _interrupt_latches.remove(latch)
        if signal.getsignal(signal.SIGINT) is handler:
            signal.signal(signal.SIGINT, previous)


def check_interrupt():
    """Raise KeyboardInterrupt if SIGINT's handler raised one inside a running
    :func:`interrupt_guard` block: it never reached the block, or the block would have ended;
    raise :class:`Terminated` if a SIGTERM's may not have reached anyone
    (:func:`stop_on_sigterm`), once."""
    if _sigterm["pending"]:
        _sigterm["pending"] = False
        raise Terminated("terminated by SIGTERM")
    if any(latch[0] for latch in _interrupt_latches):
        for latch in _interrupt_latches:  # nested blocks saw the same one
            latch[0] = False
        raise KeyboardInterrupt


def iter_completed(futures, poll=SIGNAL_POLL, waiting=None):
    """Yield ``futures`` as they complete, like ``concurrent.futures.as_completed``, but wait
    in slices of ``poll`` seconds, and check for a dropped Ctrl-C (:func:`check_interrupt`)
    after each. ``waiting(n, progressed=...)``, when given, is called after each slice, with
    the number still pending and whether one completed in it (a Dask executor's check for
    workers, :meth:`uqkit.execution.dask_cluster.DaskExecutor.waiting`).

    Python runs signal handlers in the main thread only, and a signal may be delivered to any
    thread of the process: a Ctrl-C that lands in one of the pool's helper threads does not
    wake a main thread blocked in an untimed wait (``as_completed`` waits so), which would then
    hang until a future completes. Timed waits let the main thread see it within ``poll``.
    """
    from concurrent.futures import FIRST_COMPLETED, wait

    pending = set(futures)
    while pending:
        check_interrupt()
        done, pending = wait(pending, timeout=poll, return_when=FIRST_COMPLETED)
        if waiting is not None:
            waiting(len(pending), progressed=bool(done))
        yield from done
