"""Running chunks on a Dask cluster, and saying so when the cluster cannot run them.

A Dask scheduler holds tasks until a worker can take them: a cluster whose only worker died,
or one whose workers a batch queue has not started yet, leaves the study waiting with no
word, its progress bar still. :class:`DaskExecutor` asks the scheduler, while chunks wait,
how many workers it has (at most every :data:`WORKER_CHECK_SECONDS`), and logs a warning
once the cluster has had none (or the scheduler does not answer) for
:data:`NO_WORKER_SECONDS`, again each time that wait doubles, and a line when chunks finish
again. It keeps waiting: an adaptive cluster starts its workers late, and a user may start one
by hand. Ctrl-C stops the wait and keeps the finished runs.

A worker that dies in a task is Dask's to handle: it runs the task again on another worker,
and after ``distributed.scheduler.allowed-failures`` deaths marks it failed
(``KilledWorker``), which :func:`uqkit.propagate` reports as an infrastructure failure.

Imports: the standard library; ``distributed`` when a client is made (``uqkit[dask]``).
"""
import logging
import time
from concurrent.futures import Executor
from contextlib import contextmanager

__all__ = ["MissingDependencyError", "DASK_CONNECT_SECONDS", "DASK_INSTALL",
           "NO_WORKER_SECONDS", "WORKER_CHECK_SECONDS", "dask_client_class", "DaskExecutor",
           "dask_client", "dask_executor"]

log = logging.getLogger("uqkit")

#: Seconds to wait for a Dask scheduler to answer before the address is refused.
DASK_CONNECT_SECONDS = 30
#: How to install uqkit's optional Dask support.
DASK_INSTALL = 'pip install "uqkit[dask]"'
#: Seconds a cluster may have no worker while chunks wait before a warning says so.
NO_WORKER_SECONDS = 30.0
#: Least seconds between two questions to the scheduler about its workers.
WORKER_CHECK_SECONDS = 2.0


class MissingDependencyError(ImportError):
    """An optional dependency that a requested feature needs is not installed; the message
    says how to install it."""


def dask_client_class():
    """``distributed.Client``, or :class:`MissingDependencyError` saying how to install it
    (Dask is an optional dependency: ``uqkit[dask]``)."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise MissingDependencyError(
            "running on a Dask cluster needs the 'distributed' package, which is not "
            f"installed here: {DASK_INSTALL}") from exc
    return Client


class DaskExecutor(Executor):
    """A ``distributed.Client``'s executor that warns while its cluster has no worker.

    :func:`uqkit.execution.interrupts.iter_completed` calls :meth:`waiting` after each poll
    of the chunks.

    Args:
        client: a connected ``distributed.Client``.
        address: the scheduler's address, for the messages.
        silence: seconds without a worker before the first warning
            (:data:`NO_WORKER_SECONDS` if None).
    """

    def __init__(self, client, address, silence=None):
        self.client, self.address = client, str(address)
        self.silence = float(NO_WORKER_SECONDS if silence is None else silence)
        self._executor = client.get_executor()
        self._next_check = 0.0
        self._since = None  # monotonic time from which the cluster had no worker
        self._warn_at = None  # the wait, in seconds, at which the next warning is due
        self._warned = False

    def submit(self, fn, /, *args, **kwargs):
        """``fn(*args, **kwargs)`` on the cluster: the client executor's future."""
        return self._executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait=True, *, cancel_futures=False):
        """Shut the client's executor down (the client stays open)."""
        self._executor.shutdown(wait=wait)

    def _workers(self):
        """The cluster's workers now (a number), or why the scheduler did not say (a str)."""
        status = getattr(self.client, "status", "running")
        if status != "running":  # a lost scheduler: the client reconnects, or has closed
            return f"the client's connection is {status!r}"
        try:
            return len(self.client.scheduler_info()["workers"])
        except Exception as exc:  # noqa: BLE001 - whatever the reason, it is said
            return f"{type(exc).__name__}: {exc}"

    def waiting(self, pending, now=None, progressed=False):
        """After a poll of the chunks: ``progressed`` if one finished (the cluster works),
        else ``pending`` still wait. Warns once the cluster has had no worker for
        ``silence`` seconds (then at twice that wait, four times, ...), and says when chunks
        finish again."""
        now = time.monotonic() if now is None else now
        if progressed:
            self._over()
            return
        if now < self._next_check:
            return
        self._next_check = now + WORKER_CHECK_SECONDS
        workers = self._workers()
        if not isinstance(workers, str) and workers > 0:
            self._over()
            return
        if self._since is None:
            self._since, self._warn_at = now, self.silence
        waited = now - self._since
        if waited < self._warn_at:
            return
        self._warn_at, self._warned = 2 * waited, True
        why = "has no worker" if not isinstance(workers, str) else f"does not answer ({workers})"
        one = pending == 1
        log.warning("uqkit: the Dask cluster at %s %s, for %.0f s now; %d %s of runs %s. "
                    "Start a worker (dask worker %s), or press Ctrl-C (a store keeps the "
                    "finished runs)", self.address, why, waited, pending,
                    "chunk" if one else "chunks", "waits" if one else "wait", self.address)

    def _over(self):
        """The cluster works (again): a warned wait is said to be over, and a later one
        counts from its own start."""
        if self._warned:
            log.warning("uqkit: the Dask cluster at %s runs the chunks again", self.address)
        self._since = self._warn_at = None
        self._warned = False


def dask_client(address):
    """A ``distributed.Client`` connected to the scheduler at ``address``
    (``tcp://host:8786``); ValueError naming the address where it does not answer within
    :data:`DASK_CONNECT_SECONDS`, :class:`MissingDependencyError` without ``distributed``.
    The caller closes it."""
    Client = dask_client_class()
    try:
        return Client(address, timeout=DASK_CONNECT_SECONDS)
    except OSError as exc:
        raise ValueError(f"cannot reach the Dask scheduler at {address!r}: {exc}") from None


@contextmanager
def dask_executor(address):
    """A :class:`DaskExecutor` on the cluster at ``address`` (``tcp://host:8786``, or a
    ``distributed.Client``). A client made here is closed at the end; one given is not."""
    own = not isinstance(address, dask_client_class())
    client = dask_client(address) if own else address
    where = getattr(address, "scheduler_address", address) if own else \
        getattr(client.scheduler, "address", "the client's cluster")  # a LocalCluster's too
    try:
        yield DaskExecutor(client, where)
    finally:
        if own:
            client.close()
