"""ResultCache and cached_map: results keyed by their settings, saved as they finish."""
import json
import os

import pytest

from uqkit.execution.cache import ResultCache, cached_map, settings_key


def square(x):
    return {"y": x * x}


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
