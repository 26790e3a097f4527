"""A study run twice with one seed, or with 1 and 2 workers, gives identical numbers."""
import json

import pytest

from studies.membrane import MembraneStudy
from studies.membrane import run as run_membrane
from studies.moons import MoonsStudy
from studies.moons import run as run_moons

#: Report entries that depend on where and how fast a run went, not on what it computed.
RUNTIME_KEYS = ("timings", "figures", "seconds", "fe_runs_computed", "fe_runs_loaded",
                "parallelism")


def numbers(path):
    report = json.load(open(path / "report.json"))
    for key in RUNTIME_KEYS:
        report.pop(key, None)
    report.get("settings", {}).pop("out", None)
    report.get("settings", {}).pop("workers", None)
    return _drop_seconds(report)


def _drop_seconds(obj):
    if isinstance(obj, dict):
        return {k: _drop_seconds(v) for k, v in obj.items() if "seconds" not in k}
    if isinstance(obj, list):
        return [_drop_seconds(v) for v in obj]
    return obj


@pytest.mark.parametrize("kind", ["membrane", "moons"])
def test_same_numbers_with_one_and_two_workers_and_on_a_second_run(tmp_path, kind):
    """a: one worker; b: two; c: two again in a new directory; b again: all loaded."""
    reports = []
    for name, workers in (("a", 1), ("b", 2), ("c", 2), ("b", 2)):
        out = tmp_path / name
        if kind == "membrane":
            run_membrane(MembraneStudy(out=str(out), train_sizes=(16,), n_seeds=1,
                                       n_validation=24, n_calibration=24, n_uq_train=32,
                                       n_surrogate_mc=300, n_truth=64, n_paths=2,
                                       workers=workers, progress=False), log=lambda *_: None)
        else:
            run_moons(MoonsStudy(out=str(out), seeds=1, epochs=10, batch_size=60, lr=0.03,
                                 max_iter=150, restarts=2,
                                 workers=workers, progress=False), log=lambda *_: None)
        reports.append(numbers(out))
    assert reports[0] == reports[1] == reports[2] == reports[3]
    report = json.load(open(tmp_path / "b" / "report.json"))
    if kind == "membrane":  # the rerun computed nothing
        assert report["fe_runs_computed"] == 0 and report["fe_runs_loaded"] == 42 + 24 + 24 + 64
