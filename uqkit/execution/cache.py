"""Results keyed by the settings that produced them.

A :class:`ResultCache` is a directory of entries. An entry is named ``NAME-KEY``, where KEY is
a hash of the settings it was computed with (everything the result depends on: data, seeds,
hyperparameters, code version), and holds ``NAME-KEY.json`` (the settings and the result)
and, if it needs them, files or a directory of its own (``cache.path(name, settings,
".pt")``, or a :class:`uqkit.execution.store.StudyStore` at ``cache.path(name, settings)``).
The JSON file is written last and atomically, so an entry is either complete or absent: a killed
study leaves no half-written result, and a study run with other settings computes new
entries beside the old ones instead of mixing them. :func:`cached_map` computes the missing
entries of a set of tasks on a process pool, saving each as soon as it finishes.

Example:
    >>> import tempfile
    >>> cache = ResultCache(tempfile.mkdtemp())
    >>> cache.load("fit", {"epochs": 10}) is None
    True
    >>> cache.save("fit", {"epochs": 10}, {"r2": 0.99})
    >>> cache.load("fit", {"epochs": 10}), cache.load("fit", {"epochs": 20})
    ({'r2': 0.99}, None)
"""
import hashlib
import json
import math
import os

import numpy as np

from .store import atomic_write

__all__ = ["jsonable", "write_json", "settings_key", "ResultCache", "cached_map"]


def jsonable(obj, finite=False):
    """Turn numpy containers into plain JSON types (dict keys become strings); with
    ``finite``, NaN and infinities become None (strict JSON)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v, finite) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v, finite) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist(), finite) if finite else obj.tolist()
    if isinstance(obj, (np.floating, np.integer, np.bool_)):
        obj = obj.item()
    if finite and isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_json(path, obj, finite=False):
    """Write JSON atomically (the user's umask applies); ``finite``: NaN and infinities as
    null (strict JSON, for other programs to read)."""
    body = json.dumps(jsonable(obj, finite), indent=1).encode()
    atomic_write(path, lambda fh: fh.write(body))


def settings_key(settings):
    """A short stable name for a JSON-friendly settings dict (12 hex digits of its SHA-256).

    >>> settings_key({"b": 1, "a": [1, 2]}) == settings_key({"a": [1, 2], "b": 1})
    True
    """
    body = json.dumps(jsonable(settings), sort_keys=True).encode()
    return hashlib.sha256(body).hexdigest()[:12]


class ResultCache:
    """A directory of results keyed by their settings (see the module docstring)."""

    def __init__(self, directory):
        self.directory = os.fspath(directory)
        os.makedirs(self.directory, exist_ok=True)

    def path(self, name, settings, suffix=""):
        """Where the entry ``name`` made with ``settings`` keeps a file (``suffix``) or, with
        no suffix, a directory of its own."""
        return os.path.join(self.directory, f"{name}-{settings_key(settings)}{suffix}")

    def load(self, name, settings):
        """The stored result, or None if there is none for these settings."""
        path = self.path(name, settings, ".json")
        if not os.path.exists(path):
            return None
        with open(path) as fh:
            entry = json.load(fh)
        if entry.get("settings") != jsonable(settings):  # a hash collision, in theory
            return None
        return entry["result"]

    def save(self, name, settings, result):
        """Store ``result`` (JSON-friendly) for ``settings``; write any files of the entry
        first."""
        write_json(self.path(name, settings, ".json"),
                   {"settings": settings, "result": result})


def cached_map(fn, tasks, cache, workers=1, progress=True, desc="tasks", on_result=None):
    """Compute ``fn(payload)`` for every task whose result ``cache`` lacks.

    Args:
        fn: a picklable function returning a JSON-friendly result.
        tasks: ``{name: (settings, payload)}``; ``settings`` is everything the result depends
            on, and keys its cache entry.
        cache: a :class:`ResultCache`.
        workers: processes (1: in this process); see
            :func:`uqkit.execution.executors.local_executor`.
        progress: show a progress bar.
        on_result: called as ``on_result(name, result)`` with every task's result, in this
            process, the stored ones first and the others as each is saved, so that the
            caller can start on what needs only some of them while the rest compute.

    Returns:
        (``{name: result}``, number of tasks computed now). Each result is saved the moment
        it is ready, so an interrupted call loses only the tasks that were running.
    """
    from .executors import check_interrupt, interrupt_guard, iter_completed, make_executor
    from .loaded_code import call_reporting, take_report

    results, todo = {}, {}
    report = on_result or (lambda name, result: None)
    for name, (settings, payload) in tasks.items():
        stored = cache.load(name, settings)
        if stored is None:
            todo[name] = (settings, payload)
        else:
            results[name] = stored
            report(name, stored)
    if not todo:
        return results, 0
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc=desc, unit="task")

    def finish(name, result):
        results[name] = jsonable(result)
        cache.save(name, todo[name][0], results[name])
        if bar is not None:
            bar.update(1)
        report(name, results[name])

    # a Ctrl-C whose KeyboardInterrupt Python drops still stops it (see interrupt_guard)
    try:
        with interrupt_guard():
            if workers == 1 or len(todo) == 1:
                for name, (_, payload) in list(todo.items()):
                    check_interrupt()
                    finish(name, fn(payload))
            else:
                with make_executor("local", workers=min(workers, len(todo))) as ex:
                    # the workers report the modules they load (a pool kept across models)
                    futures = {ex.submit(call_reporting, fn, payload): name
                               for name, (_, payload) in todo.items()}
                    for fut in iter_completed(futures):
                        finish(futures[fut], take_report(fut.result()))
    finally:
        if bar is not None:
            bar.close()
    return results, len(todo)
