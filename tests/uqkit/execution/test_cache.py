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
