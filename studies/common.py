"""Helpers shared by the studies: parallel cached tasks and JSON output."""
import json
import os

import numpy as np

from uqkit.store import atomic_write


def jsonable(obj):
    """Turn numpy containers into plain JSON types (dict keys become strings)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    return obj


def write_json(path, obj):
    """Write JSON atomically."""
    body = json.dumps(jsonable(obj), indent=1).encode()
    atomic_write(path, lambda fh: fh.write(body))


#: Study settings that say where and how runs execute, not what they compute.
RUNTIME = ("out", "workers", "dask", "progress")


def cache_settings(study, version, ignore=()):
    """What a study's cached runs depend on: its settings (a dataclass) without
    :data:`RUNTIME` and ``ignore`` (settings that only add or drop cells, such as the number of
    seeds), plus a ``cell_version`` to bump when a cell's content changes."""
    from dataclasses import asdict

    drop = set(RUNTIME) | set(ignore)
    return dict({k: v for k, v in asdict(study).items() if k not in drop}, cell_version=version)


def settings_key(settings):
    """A short stable name for a JSON-friendly settings dict (10 hex digits of its SHA-1).

    >>> settings_key({"b": 1, "a": [1, 2]}) == settings_key({"a": [1, 2], "b": 1})
    True
    """
    import hashlib

    body = json.dumps(jsonable(settings), sort_keys=True).encode()
    return hashlib.sha1(body).hexdigest()[:10]


def run_cached(tasks, fn, cache_dir, workers, progress=True, desc="tasks", settings=None):
    """Run ``fn(task)`` for every ``key -> task``, in ``workers`` processes (uqkit's start
    method, each pinned to one thread), caching each result (JSON-friendly) as
    ``cache_dir/key.json``; cached keys are loaded, not rerun.

    ``settings`` (a JSON-friendly dict) is recorded in ``cache_dir/settings.json``; a cache made
    with other settings is refused with a ValueError naming the keys that differ.
    """
    from concurrent.futures import ProcessPoolExecutor, as_completed
    import multiprocessing

    from uqkit.executors import default_start_method, pin_threads
    from uqkit.store import describe_differences

    os.makedirs(cache_dir, exist_ok=True)
    if settings is not None:
        settings = jsonable(settings)
        path = os.path.join(cache_dir, "settings.json")
        if os.path.exists(path):
            with open(path) as fh:
                old = json.load(fh)
            if old != settings:
                raise ValueError(f"{cache_dir} holds runs made with other settings (differing: "
                                 f"{describe_differences(old, settings)}); use a new output "
                                 "directory")
        elif any(name.endswith(".json") for name in os.listdir(cache_dir)):
            raise ValueError(f"{cache_dir} holds runs of an older version without recorded "
                             "settings; use a new output directory")
        else:
            write_json(path, settings)
    results, todo = {}, {}
    for key, task in tasks.items():
        path = os.path.join(cache_dir, f"{key}.json")
        if os.path.exists(path):
            with open(path) as fh:
                results[key] = json.load(fh)
        else:
            todo[key] = task
    if not todo:
        return results, 0
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc=desc, unit="task")
    if workers == 1:
        for key, task in todo.items():
            results[key] = jsonable(fn(task))
            write_json(os.path.join(cache_dir, f"{key}.json"), results[key])
            if bar is not None:
                bar.update(1)
    else:
        ctx = multiprocessing.get_context(default_start_method())
        with ProcessPoolExecutor(min(workers, len(todo)), mp_context=ctx,
                                 initializer=pin_threads) as pool:
            futures = {pool.submit(fn, task): key for key, task in todo.items()}
            for fut in as_completed(futures):
                key = futures[fut]
                results[key] = jsonable(fut.result())
                write_json(os.path.join(cache_dir, f"{key}.json"), results[key])
                if bar is not None:
                    bar.update(1)
    if bar is not None:
        bar.close()
    return results, len(todo)


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, out, name, dpi):
    """Lay out ``fig``, write it to ``out/name`` at ``dpi`` and close it; returns the path."""
    fig.tight_layout()
    path = os.path.join(out, name)
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path


def figure_section(figures):
    """Markdown lines linking a report's figures (name -> path)."""
    return ["", "## Figures", ""] + [f"![{k}]({os.path.basename(v)})" for k, v in figures.items()]


def write_reports(out, report, markdown, log=print):
    """Write ``out/report.json`` (atomically) and ``out/report.md``; log where they are."""
    write_json(os.path.join(out, "report.json"), report)
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write(markdown)
    log(f"report: {os.path.join(out, 'report.md')}")
