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

__all__ = ["PRELOAD_VARIABLE", "preload", "STARTED_NS", "FAILED", "FILES"]

#: The environment variable that names the modules, a JSON list (removed once read).
PRELOAD_VARIABLE = "UQKIT_FORK_SERVER_PRELOAD"


def preload(names):
    """Import each of ``names``; return those whose import failed."""
    failed = []
    for name in names:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - any failure: the workers meet it themselves
            failed.append(name)
    return failed


#: When the imports began (ns since the epoch, the clock of files' modification times).
STARTED_NS = time.time_ns()
#: The modules whose import failed here.
FAILED = preload(json.loads(os.environ.pop(PRELOAD_VARIABLE, "[]")))
#: The loaded modules' files outside the Python installation, with their (size, mtime_ns),
#: or (-2, -2) for a file modified since :data:`STARTED_NS`.
FILES = {path: state if state[1] < STARTED_NS else (-2, -2) for path, state in
         __import__("uqkit.execution.loaded_code", fromlist=["_"]).loaded_files().items()}
