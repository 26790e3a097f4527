"""What a fork server (:mod:`uqkit.execution.fork_server`) imports first, and all it imports:
the modules named in :data:`PRELOAD_VARIABLE`, in order. multiprocessing's own preload lets a
module's ImportError pass and nothing else: a model's module that raised another error at
import (a file it reads relative to another directory, say) ended the server, and every pool
of it failed with an ``EOFError``. Here a module whose import fails, whatever the error, is
left to the workers, which import it themselves and meet its error as loky's fresh workers
would: in the chunk that needs it. Then it records the files of the modules the server has
loaded (:data:`FILES`), which the server's first worker reports to the parent
(:func:`uqkit.execution.fork_server.leave_server`), so that a later edit, even one before
that worker started, is a change of the code. A file modified since the imports began is
recorded as unknown, ``(-2, -2)``: it may have been edited after the server read it.

A module named here must start no thread when imported: the server forks its workers, and
a thread that held a lock at a fork leaves the lock held in the worker for good.

Imports: the standard library only (and :mod:`uqkit.execution.loaded_code`, which imports
nothing else), before the named modules.
"""
import json
import os
import time

__all__ = ["PRELOAD_VARIABLE", "SERVER_PID_VARIABLE", "preload", "STARTED_NS", "FAILED",
           "FILES"]

#: The environment variable that names the modules, a JSON list (removed once read).
PRELOAD_VARIABLE = "UQKIT_FORK_SERVER_PRELOAD"
#: The environment variable in which the server leaves its process id to its workers, which
#: watch it (:func:`uqkit.execution.fork_server.leave_server`).
SERVER_PID_VARIABLE = "UQKIT_FORK_SERVER_PID"


def preload(names):
    """Import each of ``names``; return those whose import failed."""
    failed = []
    for name in names:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - any failure: the workers meet it themselves
            failed.append(name)
    return failed


def _serve():
    """In a fork server: leave its process id to the workers, import the named modules and
    record the loaded files; returns ``(started_ns, failed, files)``."""
    from .loaded_code import loaded_files

    os.environ[SERVER_PID_VARIABLE] = str(os.getpid())
    started = time.time_ns()
    failed = preload(json.loads(os.environ.pop(PRELOAD_VARIABLE)))
    files = {path: state if state[1] < started else (-2, -2)
             for path, state in loaded_files().items()}
    return started, failed, files


#: When the imports began (ns since the epoch, the clock of files' modification times); the
#: modules whose import failed; the loaded modules' files outside the Python installation,
#: with their (size, mtime_ns), or (-2, -2) for a file modified since the imports began.
#: Only in a fork server (where :data:`PRELOAD_VARIABLE` is set): imported anywhere else
#: (the documentation, the tests' collection), the module does nothing.
STARTED_NS, FAILED, FILES = _serve() if PRELOAD_VARIABLE in os.environ else (None, [], {})
