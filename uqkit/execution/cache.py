"""Results keyed by the settings that produced them.

A :class:`ResultCache` is a directory of entries. An entry is named ``NAME-KEY``, where KEY is
a hash of the settings it was computed with (everything the result depends on: data, seeds,
hyperparameters, code version), and holds ``NAME-KEY.json`` (the settings and the result)
and, if it needs them, files or a directory of its own (``cache.path(name, settings,
".pt")``, or a :class:`uqkit.execution.store.StudyStore` at ``cache.path(name, settings)``).
The JSON file is written last and atomically, so an entry is either complete or absent: a killed
study leaves no half-written result, and a study run with other settings computes new
entries beside the old ones instead of mixing them. :func:`cached_map` computes the missing
entries of a set of tasks on a process pool, saving each as soon as it finishes, in the
order given, a task that needs another's output (a file it saves, say) only after that one
(:class:`TaskOrder`).

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
import time

import numpy as np

from .store import atomic_write

__all__ = ["jsonable", "write_json", "settings_key", "ResultCache", "TaskOrder", "cached_map"]


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


def _text(obj):
    """``obj`` (JSON types) as canonical JSON text, NaN written as NaN: what
    :func:`settings_key` hashes and :meth:`ResultCache.load` compares."""
    return json.dumps(obj, sort_keys=True)


def settings_key(settings):
    """A short stable name for a JSON-friendly settings dict (12 hex digits of its SHA-256).

    >>> settings_key({"b": 1, "a": [1, 2]}) == settings_key({"a": [1, 2], "b": 1})
    True
    """
    return hashlib.sha256(_text(jsonable(settings)).encode()).hexdigest()[:12]


class ResultCache:
    """A directory of results keyed by their settings (see the module docstring)."""

    def __init__(self, directory):
        self.directory = os.fspath(directory)
        os.makedirs(self.directory, exist_ok=True)

    def path(self, name, settings, suffix=""):
        """Where the entry ``name`` made with ``settings`` keeps a file (``suffix``) or, with
        no suffix, a directory of its own."""
        return os.path.join(self.directory, f"{name}-{settings_key(settings)}{suffix}")

    def load(self, name, settings, default=None):
        """The stored result, or ``default`` if there is none for these settings (a result
        may be None itself: pass another ``default`` to tell the two apart)."""
        path = self.path(name, settings, ".json")
        if not os.path.exists(path):
            return default
        with open(path) as fh:
            entry = json.load(fh)
        # by their JSON text, as the key is made: NaN != NaN, so == never matched a NaN
        if _text(entry.get("settings")) != _text(jsonable(settings)):  # a hash collision
            return default
        return entry["result"]

    def discard(self, name, settings):
        """Remove the stored result for ``settings``, if any (its files stay, to be
        overwritten), so that the next :func:`cached_map` computes it again."""
        path = self.path(name, settings, ".json")
        if os.path.exists(path):
            os.remove(path)

    def save(self, name, settings, result):
        """Store ``result`` (JSON-friendly) for ``settings``; write any files of the entry
        first."""
        write_json(self.path(name, settings, ".json"),
                   {"settings": settings, "result": result})


class TaskOrder:
    """Tasks handed out in their priority order, each only once the tasks it comes after are
    done: a list scheduler (the next free worker takes the first ready task).

    Args:
        names: the tasks to hand out, first the most urgent.
        after: ``{name: prerequisite or (prerequisites, ...)}``; a prerequisite not among
            ``names`` counts as done (a stored result).

    Raises:
        ValueError: a task comes after itself, directly or through others.

    >>> order = TaskOrder(["fit", "predict", "other"], after={"predict": "fit"})
    >>> order.take(), order.take(), order.take()
    ('fit', 'other', None)
    >>> order.done("fit"); order.take()
    'predict'
    """

    def __init__(self, names, after=None):
        self._names = list(names)
        pending = set(self._names)
        self._needs = {}
        for name, before in (after or {}).items():
            before = (before,) if isinstance(before, str) else tuple(before)
            if name in pending:
                self._needs[name] = {b for b in before if b in pending}
        self._taken = set()
        self._check_acyclic()

    def _check_acyclic(self):
        left = {name: set(needs) for name, needs in self._needs.items() if needs}
        while left:
            free = [name for name, needs in left.items() if not needs & left.keys()]
            if not free:
                path = [min(left)]
                while path[-1] not in path[:-1]:
                    path.append(min(left[path[-1]] & left.keys()))
                cycle = path[path.index(path[-1]):]
                raise ValueError("tasks come after one another in a cycle: "
                                 + " -> ".join(cycle))
            for name in free:
                del left[name]

    def take(self):
        """The first task in priority order whose prerequisites are done, or None (none is
        ready now; :meth:`done` may release some)."""
        for name in self._names:
            if name not in self._taken and not self._needs.get(name):
                self._taken.add(name)
                return name
        return None

    def done(self, name):
        """Mark ``name`` done, releasing the tasks that come after it."""
        for needs in self._needs.values():
            needs.discard(name)

    def __len__(self):
        """Tasks not handed out yet."""
        return len(self._names) - len(self._taken)


#: What :meth:`ResultCache.load` gives :func:`cached_map` for an entry it lacks (a task's
#: result may be None: a task that only writes a file).
_MISSING = object()


def cached_map(fn, tasks, cache, workers=1, progress=True, desc="tasks", on_result=None,
               after=None, log=None):
    """Compute ``fn(payload)`` for every task whose result ``cache`` lacks.

    Args:
        fn: a picklable function returning a JSON-friendly result.
        tasks: ``{name: (settings, payload)}``; ``settings`` is everything the result depends
            on, and keys its cache entry. Started in this order, the most urgent first.
        cache: a :class:`ResultCache`.
        workers: processes (1: in this process); see
            :func:`uqkit.execution.executors.local_executor`.
        progress: show a progress bar.
        on_result: called as ``on_result(name, result)`` with every task's result, in this
            process, the stored ones first and the others as each is saved, so that the
            caller can start on what needs only some of them while the rest compute.
        after: ``{name: prerequisite or (prerequisites, ...)}``: a task that starts only once
            its prerequisites' results are saved (it reads a file one of them writes, say).
            A stored result counts as done; a task whose prerequisite must run again runs
            again too, whatever it has stored, since its stored result came from the earlier
            run's output.

    Returns:
        (``{name: result}``, number of tasks computed now). Each result is saved the moment
        it is ready, so an interrupted call loses only the tasks that were running.

    Raises:
        ValueError: ``after`` names a task not in ``tasks``, or its tasks form a cycle.
    """
    from .executors import make_executor
    from .interrupts import check_interrupt, interrupt_guard

    after = {name: (b,) if isinstance(b, str) else tuple(b) for name, b in (after or {}).items()}
    unknown = sorted({b for bs in after.values() for b in bs} - tasks.keys()
                     | after.keys() - tasks.keys())
    if unknown:
        raise ValueError(f"after names tasks that are not among the tasks: {unknown}")
    TaskOrder(tasks, after)  # no cycle, whatever is stored
    results, todo = {}, {}
    report = on_result or (lambda name, result: None)
    stored = {name: cache.load(name, settings, _MISSING) for name, (settings, _) in tasks.items()}
    missing = {name for name, result in stored.items() if result is _MISSING}
    for name, (settings, payload) in tasks.items():
        if name in missing or _prerequisites(name, after) & missing:
            todo[name] = (settings, payload)
        else:
            results[name] = stored[name]
            report(name, stored[name])
    if not todo:
        return results, 0
    order = TaskOrder(todo, after)
    bar, started, finished = None, time.perf_counter(), []
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc=desc, unit="task")

    def finish(name, result):
        results[name] = jsonable(result)
        cache.save(name, todo[name][0], results[name])
        finished.append(name)
        if bar is not None:
            bar.update(1)
        elif log is not None:
            log(f"{desc}: {len(finished)}/{len(todo)} done ({name}, "
                f"{time.perf_counter() - started:.1f} s)")
        report(name, results[name])

    # a Ctrl-C whose KeyboardInterrupt Python drops still stops it (see interrupt_guard)
    try:
        with interrupt_guard():
            if workers == 1 or len(todo) == 1:
                while (name := order.take()) is not None:
                    check_interrupt()
                    finish(name, fn(todo[name][1]))
                    order.done(name)
            else:
                with make_executor("local", workers=min(workers, len(todo))) as ex:
                    _run_on_pool(ex, fn, todo, order, min(workers, len(todo)), finish)
    finally:
        if bar is not None:
            bar.close()
    return results, len(todo)


def _prerequisites(name, after):
    """The tasks ``name`` comes after, directly or through others."""
    seen, stack = set(), list(after.get(name, ()))
    while stack:
        b = stack.pop()
        if b not in seen:
            seen.add(b)
            stack.extend(after.get(b, ()))
    return seen


def _run_on_pool(ex, fn, todo, order, slots, finish):
    """Hand ``order``'s tasks to the pool ``ex``, at most ``slots`` at a time, so that a task
    released by a finished one goes to the next free worker before lower ones; each result
    to ``finish(name, result)`` as it comes (the workers report the modules they load: a
    pool kept across models). Waits in slices, so that a dropped Ctrl-C is still seen
    (:func:`uqkit.execution.interrupts.iter_completed`)."""
    from concurrent.futures import FIRST_COMPLETED, wait

    from .interrupts import SIGNAL_POLL, check_interrupt
    from .loaded_code import call_reporting, take_report

    running = {}
    while True:
        while len(running) < slots and (name := order.take()) is not None:
            running[ex.submit(call_reporting, fn, todo[name][1])] = name
        if not running:
            return
        check_interrupt()
        done, _ = wait(running, timeout=SIGNAL_POLL, return_when=FIRST_COMPLETED)
        for fut in done:
            name = running.pop(fut)
            finish(name, take_report(fut.result()))
            order.done(name)
