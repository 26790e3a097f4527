"""Whether a warm pool's workers may hold old code: the generation of the code loaded here
and in the workers.

A worker imports a module once, the first time a task needs it (a model pickled by
reference: a function or class of an importable module, or a module the model imports as it
runs). A pool kept after that module's file changed would run the old code (an edited model
or helper module, a notebook's ``importlib.reload``). A pool started afresh for every model
is safe but pays its start at every change of model: four pools in one reliability study
(the FE, the limit state, the limit state again after the GP, the FE), and 2,000 runs of a
second model after the FE took 2.31 s on a new pool of 2 workers against 0.90 s warm, on 2
cores (``benchmarks/bench_small_batches.py``; ``docs/guide/performance.md``).

So a pool is kept across models and replaced only when the code it would import may differ
(:func:`import_key`): when this process's ``sys.path`` changed since the workers started
(they take it from this process when they start), or when the file of a module changed
(:func:`code_generation`). This module records the size and modification time of the file
of every module loaded from outside the Python installation (the standard library and the
installed packages' directories: code there changes only by a reinstall, after which a
session is restarted): the modules this process has loaded, and those the workers report
having loaded (:func:`call_reporting` wraps a task, :func:`take_report` reads its result),
such as a helper module a model imports inside its function. A file's first record stands
until one of the files changes; then the generation counts up and the record starts again.
``__main__`` is left out: what it defines is pickled by value, its code travels with every
task.

Not covered: a package installed into the Python installation again during a session (the
old per-model key hashed the model's own module and its package version, nothing else), and
modules a Dask worker loads (its files are on another machine).

Cost: one ``os.stat`` per recorded file (38 for an editable install of uqkit with torch
loaded; 2-5 ms in all, most of it looking at the other 2,200 modules) when a pool is asked
for; a worker looks at its modules again only when it has loaded new ones.

Imports: the standard library only.

Example:
    >>> code_generation() == code_generation() and import_key() == import_key()
    True
    >>> take_report(call_reporting(abs, -3))
    3
"""
import os
import sys
import sysconfig
import threading
from functools import lru_cache

__all__ = ["installed_directories", "loaded_files", "code_generation", "import_key",
           "new_loaded_files", "note_files", "call_reporting", "take_report"]

#: file -> (size, mtime_ns) of every tracked module file, as first seen in this generation.
_seen = {}
_generation = 0
_lock = threading.Lock()
#: In a worker: the module count at its last look, and the files it has reported.
_worker = {"modules": -1, "reported": set()}


@lru_cache(maxsize=1)
def installed_directories():
    """The directories of the Python installation: the standard library's and the installed
    packages' (site-packages of this environment and of the user), as absolute paths."""
    import site

    names = ("stdlib", "platstdlib", "purelib", "platlib")
    found = {sysconfig.get_paths()[n] for n in names}
    found.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    found.add(site.getusersitepackages())
    found = {form(d) for d in found if d for form in (os.path.abspath, os.path.realpath)}
    return tuple(os.path.join(d, "") for d in found)


def _state(path):
    try:
        st = os.stat(path)
        return st.st_size, st.st_mtime_ns
    except OSError:
        return -1, -1


def loaded_files(skip=None):
    """The files of the loaded modules but ``__main__`` outside ``skip`` (default: the
    installation's directories), each with its (size, mtime_ns); a file gone is (-1, -1)."""
    skip = installed_directories() if skip is None else skip
    out = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name == "__main__" or not isinstance(path, str) or not os.path.isabs(path):
            continue  # a relative "__file__" (torch.ops's) names no file
        if path.startswith(skip):  # most modules: no system call
            continue
        path = os.path.realpath(path)
        if not path.startswith(skip) and path not in out:
            out[path] = _state(path)
    return out


def code_generation():
    """A number that changes when a recorded file (module notes) has changed since it was
    first seen: pools of one generation can run one another's models."""
    global _generation
    with _lock:
        now = loaded_files()
        for path in _seen.keys() - now.keys():  # loaded by workers only
            now[path] = _state(path)
        if any(_seen.get(path, state) != state for path, state in now.items()):
            _generation += 1
            _seen.clear()
        for path, state in now.items():
            _seen.setdefault(path, state)
        return _generation


def import_key():
    """What a pool's workers import from, as a hashable value: the code's generation and this
    process's ``sys.path``. Equal keys: a warm pool runs the code this process would."""
    return code_generation(), tuple(sys.path)


def new_loaded_files():
    """In a worker: the files of the modules it has loaded (as :func:`loaded_files`) that it
    has not reported yet; nothing to look at unless modules were loaded since the last call."""
    if len(sys.modules) == _worker["modules"]:
        return {}
    _worker["modules"] = len(sys.modules)
    new = {p: s for p, s in loaded_files().items() if p not in _worker["reported"]}
    _worker["reported"].update(new)
    return new


def note_files(files):
    """Record files a worker reported (their first record stands, see :func:`code_generation`)."""
    with _lock:
        for path, state in files.items():
            _seen.setdefault(path, tuple(state))


def call_reporting(fn, *args):
    """``fn(*args)`` in a worker, with the module files it loaded (for :func:`take_report`)."""
    return fn(*args), new_loaded_files()


def take_report(result):
    """The task's own result from :func:`call_reporting`'s, the files recorded."""
    value, files = result
    note_files(files)
    return value
