"""ResultCache and cached_map: results keyed by their settings, saved as they finish."""
import json
import os

import pytest

from uqkit.execution.cache import ResultCache, cached_map, settings_key


def square(x):
    return {"y": x * x}


def pid_of(x):
    return {"pid": os.getpid()}


def explode_on_three(x):
    if x == 3:
        raise KeyboardInterrupt
    return {"y": x}


def test_entries_are_keyed_by_their_settings(tmp_path):
    cache = ResultCache(tmp_path)
    tasks = {f"t{i}": ({"epochs": 10, "task": f"t{i}"}, i) for i in range(4)}
    res, computed = cached_map(square, tasks, cache, workers=1, progress=False)
    assert computed == 4 and res["t3"] == {"y": 9}
    # a rerun loads everything
    assert cached_map(square, tasks, cache, workers=1, progress=False) == (res, 0)
    # other settings are other entries, computed beside the old ones
    other = {k: (dict(s, epochs=20), p) for k, (s, p) in tasks.items()}
    assert cached_map(square, other, cache, workers=1, progress=False)[1] == 4
    assert len([n for n in os.listdir(tmp_path) if n.endswith(".json")]) == 8
    # an entry records its settings; one edited by hand is not taken for another's
    path = cache.path("t0", tasks["t0"][0], ".json")
    entry = json.load(open(path))
    assert entry["settings"] == {"epochs": 10, "task": "t0"}
    entry["settings"]["epochs"] = 11
    json.dump(entry, open(path, "w"))
    assert cache.load("t0", tasks["t0"][0]) is None
    assert settings_key({"a": 1}) != settings_key({"a": 2})


def test_process_pool_gives_the_same_results(tmp_path):
    tasks = {f"t{i}": ({"task": i}, i) for i in range(6)}
    serial = cached_map(square, tasks, ResultCache(tmp_path / "a"), workers=1, progress=False)
    pooled = cached_map(square, tasks, ResultCache(tmp_path / "b"), workers=2, progress=False)
    assert serial == pooled


def test_tasks_run_on_the_pool_only_with_workers_and_more_than_one_task(tmp_path):
    """One worker, or one task to compute, runs here (no pool to start for it); several
    tasks and workers run in worker processes."""
    here = os.getpid()
    tasks = {f"t{i}": ({"task": i}, i) for i in range(4)}
    serial, _ = cached_map(pid_of, tasks, ResultCache(tmp_path / "a"), workers=1,
                           progress=False)
    assert {r["pid"] for r in serial.values()} == {here}
    single, _ = cached_map(pid_of, {"t0": tasks["t0"]}, ResultCache(tmp_path / "b"), workers=2,
                           progress=False)
    assert single["t0"]["pid"] == here
    pooled, _ = cached_map(pid_of, tasks, ResultCache(tmp_path / "c"), workers=2,
                           progress=False)
    assert here not in {r["pid"] for r in pooled.values()}


@pytest.mark.parametrize("workers", [1, 2])
def test_on_result_sees_every_result_once_the_stored_ones_first(tmp_path, workers):
    cache = ResultCache(tmp_path)
    tasks = {f"t{i}": ({"task": i}, i) for i in range(5)}
    cached_map(square, {k: tasks[k] for k in ("t1", "t3")}, cache, progress=False)
    seen = []
    res, computed = cached_map(square, tasks, cache, workers=workers, progress=False,
                               on_result=lambda name, result: seen.append((name, result)))
    assert computed == 3
    # the two stored results come first, then the three computed ones, each exactly once
    assert [name for name, _ in seen[:2]] == ["t1", "t3"]
    assert sorted(name for name, _ in seen[2:]) == ["t0", "t2", "t4"]
    assert dict(seen) == res == {f"t{i}": {"y": i * i} for i in range(5)}


def test_an_interrupted_map_keeps_what_finished(tmp_path):
    cache = ResultCache(tmp_path)
    tasks = {f"t{i}": ({"task": i}, i) for i in range(6)}
    with pytest.raises(KeyboardInterrupt):
        cached_map(explode_on_three, tasks, cache, workers=1, progress=False)
    assert [cache.load(f"t{i}", {"task": i}) for i in range(4)] == [
        {"y": 0}, {"y": 1}, {"y": 2}, None]


def test_written_files_follow_the_users_umask(tmp_path):
    """mkstemp makes 0600 files; reports and stores are the user's, readable like the PNGs."""
    from uqkit.execution.cache import write_json

    old = os.umask(0o022)
    try:
        write_json(tmp_path / "a.json", {"x": 1})
        os.umask(0o077)
        write_json(tmp_path / "b.json", {"x": 1})
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b.json").stat().st_mode & 0o777 == 0o600


def test_jsonable_turns_numpy_into_json_at_any_depth_and_strict_json_has_no_nan():
    import math

    import numpy as np

    from uqkit.execution.cache import jsonable

    obj = {1: [np.float32(0.5), (np.int64(3), np.bool_(True))],
           "a": np.array([[1.0, np.nan], [np.inf, 2.0]]),
           "b": {"c": [np.float64(-np.inf), float("nan")]}}
    loose = jsonable(obj)
    assert loose["1"] == [0.5, [3, True]] and type(loose["1"][0]) is float
    assert type(loose["1"][1][0]) is int and type(loose["1"][1][1]) is bool
    assert loose["a"][0][0] == 1.0 and math.isnan(loose["a"][0][1])
    assert loose["b"]["c"][0] == -math.inf and math.isnan(loose["b"]["c"][1])
    strict = jsonable(obj, finite=True)
    assert strict == {"1": [0.5, [3, True]], "a": [[1.0, None], [None, 2.0]],
                      "b": {"c": [None, None]}}
    json.dumps(strict, allow_nan=False)
    assert jsonable(np.array([1, 2])) == [1, 2] and jsonable(np.nan) != jsonable(np.nan)


def test_settings_key_ignores_order_and_is_twelve_hex_digits():
    """The key names cache files on disk: the same settings in any order give the same
    name; any value that differs gives another."""
    import numpy as np

    key = settings_key({"b": 1, "a": [1, 2], "c": {"y": 1, "x": 2}})
    assert key == settings_key({"c": {"x": 2, "y": 1}, "a": [1, 2], "b": 1})
    assert len(key) == 12 and int(key, 16) >= 0
    assert settings_key({"a": np.array([1, 2]), "b": np.int64(1),
                         "c": {"x": 2, "y": 1}}) == key
    assert len({key, settings_key({"b": 2, "a": [1, 2], "c": {"y": 1, "x": 2}}),
                settings_key({"b": 1, "a": [2, 1], "c": {"y": 1, "x": 2}})}) == 3


def test_entry_paths_and_json_files(tmp_path):
    """An entry's path is NAME-KEY (a directory of its own) or NAME-KEY.SUFFIX; write_json
    keeps NaN readable by Python by default, and writes null with finite=True."""
    import math

    from uqkit.execution.cache import write_json

    cache = ResultCache(tmp_path)
    key = settings_key({"a": 1})
    assert cache.path("fe-truth", {"a": 1}) == os.path.join(str(tmp_path), f"fe-truth-{key}")
    assert cache.path("uq", {"a": 1}, ".pt") == os.path.join(str(tmp_path), f"uq-{key}.pt")
    write_json(tmp_path / "loose.json", {"x": float("nan"), "y": [1.5]})
    assert math.isnan(json.load(open(tmp_path / "loose.json"))["x"])
    write_json(tmp_path / "strict.json", {"x": float("nan"), "y": [1.5]}, finite=True)
    assert json.loads((tmp_path / "strict.json").read_text()) == {"x": None, "y": [1.5]}


def write_then_read(job):
    """A task that writes its file (after a pause: a slow fit) or reads its prerequisite's."""
    import time

    kind, path, value = job
    if kind == "write":
        time.sleep(0.3)
        with open(path, "w") as fh:
            fh.write(str(value))
        return {"wrote": value}
    with open(path) as fh:  # FileNotFoundError if it ran before its prerequisite
        return {"read": int(fh.read())}


def test_task_order_hands_out_by_priority_and_releases_dependents():
    from uqkit.execution.cache import TaskOrder

    order = TaskOrder(["fit", "other", "mc", "last"], after={"mc": "fit", "gone": "fit"})
    assert len(order) == 4
    assert [order.take(), order.take(), order.take()] == ["fit", "other", "last"]
    assert order.take() is None  # "mc" waits for "fit"
    order.done("other")
    assert order.take() is None
    order.done("fit")
    assert order.take() == "mc" and order.take() is None and len(order) == 0
    # a released task goes before lower-priority ones still waiting to be handed out
    order = TaskOrder(["a", "b", "c", "d"], after={"c": ("a", "b")})
    assert [order.take(), order.take()] == ["a", "b"]
    order.done("b")
    assert order.take() == "d"
    order = TaskOrder(["a", "b", "c", "d"], after={"c": "a"})
    order.take(), order.take()
    order.done("a")
    assert order.take() == "c"
    # a prerequisite not among the tasks is done already (a stored result)
    assert TaskOrder(["mc"], after={"mc": "fit"}).take() == "mc"


def test_task_order_refuses_a_cycle_and_names_its_tasks():
    from uqkit.execution.cache import TaskOrder

    with pytest.raises(ValueError, match="in a cycle: a -> b -> a$"):
        TaskOrder(["a", "b", "c"], after={"a": "b", "b": "a", "c": "a"})
    with pytest.raises(ValueError, match="in a cycle: b -> c -> b$"):
        TaskOrder(["a", "b", "c"], after={"a": "b", "b": "c", "c": "b"})
    with pytest.raises(ValueError, match="in a cycle: a -> a$"):
        TaskOrder(["a"], after={"a": "a"})


@pytest.mark.parametrize("workers", [1, 2])
def test_a_task_runs_after_the_task_it_needs(tmp_path, workers):
    """The reader comes first in the given order and would fail without its file; it starts
    once its writer's result is saved, also on a pool with a free worker."""
    files = {i: str(tmp_path / f"f{i}") for i in range(2)}
    tasks = {"read0": ({"t": "r0"}, ("read", files[0], None)),
             "read1": ({"t": "r1"}, ("read", files[1], None)),
             "write0": ({"t": "w0"}, ("write", files[0], 7)),
             "write1": ({"t": "w1"}, ("write", files[1], 8))}
    after = {"read0": "write0", "read1": "write1"}
    cache = ResultCache(tmp_path / "cache")
    res, computed = cached_map(write_then_read, tasks, cache, workers=workers, progress=False,
                               after=after)
    assert computed == 4 and res["read0"] == {"read": 7} and res["read1"] == {"read": 8}
    # a stored writer lets its reader run at once; a writer that runs again runs its reader
    # again, whatever the reader had stored (it read the earlier file)
    cache.discard("read0", {"t": "r0"})
    seen = []
    _, computed = cached_map(write_then_read, tasks, cache, workers=workers, progress=False,
                             after=after, on_result=lambda name, _: seen.append(name))
    assert computed == 1 and seen[-1] == "read0"
    cache.discard("write1", {"t": "w1"})
    _, computed = cached_map(write_then_read, tasks, cache, workers=workers, progress=False,
                             after=after)
    assert computed == 2


def test_after_must_name_tasks_of_the_map(tmp_path):
    tasks = {"a": ({"t": 0}, 1)}
    with pytest.raises(ValueError, match=r"not among the tasks: \['fit'\]"):
        cached_map(square, tasks, ResultCache(tmp_path), progress=False, after={"a": "fit"})
    with pytest.raises(ValueError, match=r"\['b'\]"):
        cached_map(square, tasks, ResultCache(tmp_path), progress=False, after={"b": "a"})
    # a cycle is refused even when every task of it is stored
    cache = ResultCache(tmp_path / "cycle")
    both = {"a": ({"t": 0}, 1), "b": ({"t": 1}, 2)}
    cached_map(square, both, cache, progress=False)
    with pytest.raises(ValueError, match="a -> b -> a"):
        cached_map(square, both, cache, progress=False, after={"a": "b", "b": "a"})


def writes_a_file(x):
    return None if x == "file" else {"y": x}


def test_a_stored_none_is_a_result_and_its_dependents_stay_stored(tmp_path):
    # a task whose result is None (it only writes a file) was taken for a missing entry:
    # it, and every task after it, ran again on every rerun
    cache = ResultCache(tmp_path)
    tasks = {"a": ({"k": 1}, "file"), "b": ({"k": 2}, 2)}
    first = cached_map(writes_a_file, tasks, cache, workers=1, progress=False, after={"b": "a"})
    assert first == ({"a": None, "b": {"y": 2}}, 2)
    again = cached_map(writes_a_file, tasks, cache, workers=1, progress=False, after={"b": "a"})
    assert again == ({"a": None, "b": {"y": 2}}, 0)
    assert cache.load("a", {"k": 1}, "none") is None
    assert cache.load("c", {"k": 1}, "none") == "none" and cache.load("c", {"k": 1}) is None


def test_settings_holding_nan_find_their_entry(tmp_path):
    # NaN != NaN: the comparison that guards against a hash collision never matched it
    cache = ResultCache(tmp_path)
    cache.save("fit", {"tol": float("nan"), "w": [1.0, float("inf")]}, 1.0)
    assert cache.load("fit", {"tol": float("nan"), "w": [1.0, float("inf")]}) == 1.0
    assert cache.load("fit", {"tol": 0.1, "w": [1.0, float("inf")]}) is None
    tasks = {"t": ({"tol": float("nan")}, 3)}
    assert cached_map(square, tasks, cache, progress=False)[1] == 1
    assert cached_map(square, tasks, cache, progress=False) == ({"t": {"y": 9}}, 0)


@pytest.mark.parametrize("workers", [1, 2])
def test_without_a_progress_bar_each_computed_task_is_logged(tmp_path, workers):
    """A line per task computed now, counted among those computed now, in the order saved;
    stored tasks, and runs with a progress bar, log nothing."""
    import re

    cache = ResultCache(tmp_path)
    tasks = {f"t{i}": ({"task": f"t{i}"}, i) for i in range(4)}
    cached_map(square, {"t1": tasks["t1"]}, cache, progress=False)
    lines = []
    cached_map(square, tasks, cache, workers=workers, progress=False, desc="fits",
               log=lines.append)
    found = [re.fullmatch(r"fits: (\d)/3 done \((t\d), (\d+\.\d) s\)", line) for line in lines]
    assert all(found) and len(found) == 3, lines
    assert [int(m[1]) for m in found] == [1, 2, 3]
    assert sorted(m[2] for m in found) == ["t0", "t2", "t3"]
    again = []
    cached_map(square, tasks, cache, workers=workers, progress=False, log=again.append)
    cached_map(square, {"t9": ({"task": "t9"}, 9)}, cache, progress=True, log=again.append)
    assert again == []
