"""Whether a warm pool's workers may hold old code: the generation of the code this process
has loaded.

A worker imports a module once, the first time a task needs it (a model pickled by
reference: a function or class of an importable module). A pool kept after that module's
file changed would run the old code for the parent's new one (a notebook's
``importlib.reload``, an edited helper module). A pool started afresh for every model is safe
but pays its start at every change of model: four pools in one reliability study (the FE,
the limit state, the limit state again after the GP, the FE), and 2,000 runs of a second
model after the FE took 2.25 s on a new pool of 2 workers against 0.94 s warm, on 2 cores
(``benchmarks/bench_small_batches.py``; ``docs/guide/performance.md``).

So a pool is kept across models and replaced only when the code it would import may differ
(:func:`import_key`): when this process's import path (``sys.path``, and the working
directory its relative entries name) changed since the workers started, which they took
from it then; or when a module's file changed (:func:`code_generation`). This module
remembers the size and modification time of the file of every module this process has
loaded from outside the Python installation (the standard library and the installed
packages' directories: code there changes only by a reinstall, after which a session is
restarted), and :func:`code_generation` counts up when one of them changes. ``__main__`` is
left out: what it defines is pickled by value, its code travels with every task. Files seen
first later (modules loaded since) join the record: the workers could not have imported an
older version of them.

Cost: one ``os.stat`` per such module (38 for an editable install of uqkit with torch
loaded; 2-5 ms in all, most of it looking at the other 2,200 modules), paid when a pool is
asked for, not per batch.

Imports: the standard library only.

Example:
    >>> code_generation() == code_generation() and import_key() == import_key()
    True
"""
import os
import sys
import sysconfig
from functools import lru_cache

__all__ = ["installed_directories", "loaded_files", "code_generation", "import_key"]

#: file -> (size, mtime_ns) of every tracked module file, as first seen in this generation.
_seen = {}
_generation = [0]


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
        if path.startswith(skip) or path in out:
            continue
        try:
            st = os.stat(path)
            out[path] = (st.st_size, st.st_mtime_ns)
        except OSError:
            out[path] = (-1, -1)
    return out


def code_generation():
    """A number that changes when the file of a loaded module (module notes) has changed
    since it was first seen: pools of one generation can run one another's models."""
    now = loaded_files()
    if any(_seen.get(path, state) != state for path, state in now.items()):
        _generation[0] += 1
        _seen.clear()
    for path, state in now.items():
        _seen.setdefault(path, state)
    return _generation[0]


def import_key():
    """What a pool's workers import from, as a hashable value: the code's generation, this
    process's ``sys.path`` and its working directory. Equal keys: a warm pool runs the code
    this process would."""
    return code_generation(), tuple(sys.path), os.getcwd()
