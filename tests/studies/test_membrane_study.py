"""A tiny membrane study end to end: report structure, surrogate close to FE truth, resume."""
import json
import math
import os

import pytest

from studies.membrane import MembraneStudy, run

#: The tiny study's log lines (its fixture runs it once per module).
LOG = []


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("membrane")
    study = MembraneStudy(out=str(out), train_sizes=(16, 32), n_seeds=2, n_validation=200,
                          n_calibration=100,
                          n_uq_train=96, n_surrogate_mc=5000, n_truth=2000, max_iter=300,
                          n_paths=4, workers=2, progress=False)
    report = run(study, log=LOG.append)
    return study, report


def test_without_progress_bars_each_task_is_logged(tiny):
    """Without progress bars a long training phase shows its progress in the log: a line per
    pool task as it is saved, counted, then the phase's seconds (``--paper``'s 20 minutes
    were silent before)."""
    import re

    done = [m for line in LOG if (m := re.fullmatch(
        r"train surrogates: (\d+)/(\d+) done \((\S+), (\d+\.\d) s\)", line))]
    # per size one Table-4 part and the baselines, per prior a UQ fit and its Monte Carlo,
    # the mesh check and the load paths
    assert [int(m[1]) for m in done] == list(range(1, 11))
    assert {int(m[2]) for m in done} == {10}
    assert len({m[3] for m in done}) == 10 and "discretisation" in {m[3] for m in done}
    assert [float(m[4]) for m in done] == sorted(float(m[4]) for m in done)
    summary = [line for line in LOG if line.startswith("surrogate fits: ")]
    assert len(summary) == 1 and re.fullmatch(
        rf"surrogate fits: {len(done)} tasks trained, 0 loaded; \d+\.\d s", summary[0])


def test_report_structure(tiny):
    study, report = tiny
    data = json.load(open(os.path.join(study.out, "report.json")))
    assert set(data["r2"]) == {"direct", "hierarchical"}
    assert set(data["r2"]["direct"]) == {"16", "32"}
    assert all(len(v) == 3 for pr in data["r2"].values() for v in pr.values())
    assert set(data["ks"]) == set(data["wasserstein"]) == {"p1", "p2", "p3"}
    assert data["fe_runs_computed"] == 106 + 200 + 100 + 2000 and data["fe_runs_loaded"] == 0
    assert data["fe_runs_failed"] == 0
    assert data["timings"]["fe_seconds_per_run"] > 0
    for name in ("fig7a_load_paths.png", "fig7c_predictive.png", "fig8_kde.png", "report.md"):
        assert os.path.getsize(os.path.join(study.out, name)) > 1000
    md = open(os.path.join(study.out, "report.md")).read()
    assert "Table 4" in md and "KS" in md
    # figure paths relative to the report, wherever the command ran
    assert data["figures"]["fig8"] == "fig8_kde.png"
    # the mesh's own error beside the surrogates', from four meshes at the mean inputs
    d = data["discretisation"]
    assert d["meshes"] == [[20, 10], [40, 20], [80, 40], [160, 80]]
    assert 0.005 < d["p1"]["relative_error"] < 0.02 and d["p2"]["asymptotic"]
    assert "FE answers are those of a 20 x 10 mesh" in md


def test_surrogate_distribution_close_to_truth(tiny):
    _, report = tiny
    # 96 training runs: the surrogate's distribution is already indistinguishable from the FE
    # truth's by a two-sample KS test at the 1% level (asymptotic critical value
    # sqrt(-ln(a / 2) / 2) sqrt((n + m) / (n m)): 0.043 for 2000 truth and 5000 surrogate
    # samples; 0.024-0.025 measured)
    n, m = 2000, 5000
    critical = math.sqrt(-math.log(0.01 / 2) / 2) * math.sqrt((n + m) / (n * m))
    assert all(0 <= v < critical for v in report["ks"].values()), (report["ks"], critical)
    for prior in ("direct", "hierarchical"):
        for p in ("p1", "p2", "p3"):
            c = report["uq"][prior][p]["comparison"]
            assert abs(c["mean_rel_error"]) < 0.02 and abs(c["std_rel_error"]) < 0.15
    # more data, better fit (median over seeds)
    for prior in ("direct", "hierarchical"):
        r2 = report["r2"][prior]
        assert sum(r2["32"]) > sum(r2["16"]) and min(r2["32"]) > 0.7


def test_rerun_recomputes_nothing(tiny):
    study, first = tiny
    lines = []
    again = run(study, log=lines.append)
    assert again["fe_runs_computed"] == 0 and again["fe_runs_loaded"] == 106 + 200 + 100 + 2000
    assert not [line for line in lines if " done (" in line]  # no task ran
    assert again["r2"] == first["r2"]
    assert again["timings"]["fe_seconds_per_run"] == first["timings"]["fe_seconds_per_run"]


def test_fits_follow_their_settings(tiny):
    """Fits made with other training settings are kept apart (and retrained), while settings
    that do not touch them (workers, truth size) share the same fits."""
    from dataclasses import replace

    from studies.membrane import fit_settings
    from uqkit.adapters import MembraneModel

    study, _ = tiny
    model = MembraneModel()
    settings = fit_settings(study, model)
    cache = os.path.join(study.out, "cache")
    entries = os.listdir(cache)
    # one batched task per training size (its 2 priors x 2 seeds), one for the baselines
    assert sum(name.startswith("table-") and name.endswith(".json") for name in entries) == 2
    assert sum(name.startswith("baselines-") and name.endswith(".json") for name in entries) == 2
    assert sum(name.startswith("uq-") and name.endswith(".pt") for name in entries) == 2
    assert sum(name.startswith("fe-") for name in entries) == 4
    assert fit_settings(replace(study, workers=1, n_truth=5000), model) == settings
    for change in ({"max_iter": 123}, {"seed": 1}, {"n_validation": 300},
                   {"priors": {"direct": "normal(0, 2)"}}, {"n_uq_train": 700}):
        assert fit_settings(replace(study, **change), model) != settings, change
    # --paper's fits, and their epochs (the default fits' max_iter is not theirs)
    paper = replace(study, paper=True, max_iter=2000)
    assert fit_settings(paper, model) != settings
    assert fit_settings(replace(paper, epochs=300), model) != fit_settings(paper, model)
    assert fit_settings(study, MembraneModel(nx=10, ny=5)) != settings


def test_cli_rejects_bad_settings(tmp_path):
    from uqkit.cli import main

    assert main(["study", "membrane", "--out", str(tmp_path), "--n-truth", "0"]) == 2
    assert main(["study", "membrane", "--out", str(tmp_path), "--train-sizes", "4,8"]) == 2


def test_the_study_process_leaves_torch_to_its_workers(tmp_path):
    """The fits, and the surrogate Monte Carlo with its statistics, run in the pool's tasks:
    the study's own process never loads torch (~2 s of a default run's serial time)."""
    import subprocess
    import sys

    code = ("import sys; from studies.membrane import MembraneStudy, run; "
            f"r = run(MembraneStudy(out={str(tmp_path)!r}, train_sizes=(16,), n_seeds=1, "
            "n_validation=24, n_calibration=24, n_uq_train=32, n_surrogate_mc=300, n_truth=64, "
            "max_iter=50, n_paths=2, workers=2, progress=False), log=lambda *_: None); "
            "print('torch' in sys.modules, sorted(r['uq']['direct']['p1']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split(maxsplit=1)
    assert out[0] == "False"
    assert out[1].strip() == "['comparison', 'posterior_band', 'surrogate']"


def test_the_command_starts_the_fe_pool_before_it_imports_the_study_code(tmp_path,
                                                                          warm_up_seen):
    """`uqkit study membrane` reads its settings' defaults without the study's code, and has
    the FE pool started (studies.common.warm_fe_pool) before it imports that code and its
    dependencies: the workers' start overlaps the imports. An eager import in the package's
    __init__ would load them first."""
    argv = ["membrane", "--workers", "3", "--no-progress", "--out", str(tmp_path / "out"),
            "--train-sizes", "16", "--n-seeds", "1", "--n-validation", "8",
            "--n-calibration", "8", "--n-uq-train", "16", "--n-surrogate-mc", "50",
            "--n-truth", "20", "--max-iter", "5"]
    record = ("loaded=sorted(m for m in ('studies.membrane.study', 'studies.membrane.tasks', "
              "'scipy.stats', 'chaospy') if m in sys.modules), workers=study.workers, "
              "torch='torch' in preload")
    assert warm_up_seen(argv, record) == "{'loaded': [], 'workers': 3, 'torch': True}"


def test_warm_fe_pool_solves_the_study_mesh_on_the_pool_and_nothing_with_dask(tmp_path):
    """Only a new output directory gets a warm pool: a rerun may need no FE run, and a
    directory in use is refused by the study's lock."""
    from types import SimpleNamespace

    from fem import Membrane
    from studies.common import warm_fe_pool
    from uqkit.execution.executors import release_workers

    (tmp_path / "used").mkdir()
    (tmp_path / "used" / ".lock").write_text("")
    (tmp_path / "empty").mkdir()
    study = SimpleNamespace(dask=None, workers=2, nx=6, ny=4, out=str(tmp_path / "empty"))
    assert warm_fe_pool(SimpleNamespace(**dict(vars(study), dask="tcp://127.0.0.1:1"))) == []
    assert warm_fe_pool(SimpleNamespace(**dict(vars(study), out=str(tmp_path / "used")))) == []
    futures = warm_fe_pool(study)
    direct = Membrane(nx=6, ny=4, probe_frame="relative").solve()
    for future in futures:
        w, status, _ = future.result(timeout=120)
        assert status.tolist() == [0]
        assert w[0].tolist() == pytest.approx(list(direct.probe_w.values()), rel=1e-9)
    release_workers()


def test_a_larger_monte_carlo_reuses_the_uq_fits_and_a_lost_fit_file_is_refitted(tiny):
    """The UQ fits are tasks of their own, each saving its surrogate to a file that its Monte
    Carlo task loads: another Monte Carlo size reruns only the two Monte Carlo tasks, and a
    fit whose file is gone is made again (with its Monte Carlo), to the same numbers."""
    from dataclasses import replace

    study, first = tiny
    cache = os.path.join(study.out, "cache")
    fit_files = sorted(n for n in os.listdir(cache) if n.startswith("uq-") and n.endswith(".pt"))
    stamps = [os.stat(os.path.join(cache, n)).st_mtime_ns for n in fit_files]
    n_tasks = 2 + 2 + 2 * 2 + 2  # Table-4 programs, baselines, UQ fits and Monte Carlos, FE
    larger = run(replace(study, n_surrogate_mc=6000), log=lambda *_: None)
    assert larger["parallelism"]["loaded"] == n_tasks - 2
    assert [os.stat(os.path.join(cache, n)).st_mtime_ns for n in fit_files] == stamps
    assert larger["settings"]["n_surrogate_mc"] == 6000
    for prior in ("direct", "hierarchical"):
        assert larger["uq"][prior]["p1"]["surrogate"] != first["uq"][prior]["p1"]["surrogate"]
    # a Monte Carlo's chain counts its fit's (stored) seconds before it: on the critical
    # path it comes right after its own fit. Which chain is the longest is a matter of
    # timing (the discretisation check's, once workers forked from the fork server no longer
    # paid torch's import in the UQ tasks)
    path = larger["parallelism"]["critical_path"]
    for i, name in enumerate(path):
        if name.startswith("uq-96-") and not name.endswith("-fit"):
            assert i > 0 and path[i - 1] == f"{name}-fit", path
    # the direct prior's fitted surrogate is lost: a rerun whose results are all stored
    # needs no file and computes nothing; one whose Monte Carlo must run fits it again, to
    # the same file and the same numbers
    direct = [n for n in fit_files if n.startswith("uq-direct-")]
    assert len(direct) == 1
    os.remove(os.path.join(cache, direct[0]))
    again = run(study, log=lambda *_: None)
    assert again["parallelism"]["loaded"] == n_tasks
    assert not os.path.exists(os.path.join(cache, direct[0]))
    third = run(replace(study, n_surrogate_mc=7000), log=lambda *_: None)
    assert third["parallelism"]["loaded"] == n_tasks - 3  # the direct fit and both Monte Carlos
    assert os.path.exists(os.path.join(cache, direct[0]))
    assert again["uq"] == first["uq"]


def test_more_seeds_in_the_same_folder_fit_the_new_ones(tiny, tmp_path):
    """--n-seeds 2, then 3 in the same --out: a Table-4 part was keyed by its name alone, so
    the cached part of 4 fits was loaded for the part of 6 (KeyError: its third seed)."""
    import shutil
    from dataclasses import replace

    study, first = tiny
    out = tmp_path / "copy"
    shutil.copytree(study.out, out)
    more = run(replace(study, out=str(out), n_seeds=3), log=lambda *_: None)
    assert more["fe_runs_computed"] == 0
    for prior in ("direct", "hierarchical"):
        for n in ("16", "32"):
            lo, hi = more["table"][prior][n]["r2"]["min"], more["table"][prior][n]["r2"]["max"]
            old = first["table"][prior][n]["r2"]
            # the two old seeds are among the three: their range lies inside the new one
            assert all(a <= b for a, b in zip(lo, old["min"]))
            assert all(a >= b for a, b in zip(hi, old["max"]))


@pytest.mark.parametrize("name", ["membrane", "regression", "moons", "wind", "reliability",
                                  "calibration"])
@pytest.mark.parametrize("workers", ["0", "-1"])
def test_every_study_refuses_a_bad_worker_count_in_one_line(name, workers, tmp_path, capsys):
    """regression, moons and wind raised a traceback; calibration took 0 for every core, ran
    its 104,000-run FE posterior, then failed."""
    from uqkit.cli import main

    assert main(["study", name, "--out", str(tmp_path), "--workers", workers]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"workers must be an integer >= 1, got workers={workers}" in err[0]


def test_paper_flags_do_what_their_help_says(tmp_path):
    """calibration --paper was silently ignored; moons --paper replaced an explicit --epochs
    by 50000."""
    from studies.moons import MoonsStudy
    from uqkit.cli import main

    assert main(["study", "calibration", "--out", str(tmp_path), "--paper"]) == 2
    assert MoonsStudy(out=str(tmp_path), paper=True, epochs=1000).epochs == 1000
    assert MoonsStudy(out=str(tmp_path), paper=True).epochs == 50_000


def test_uq_order_puts_each_monte_carlo_after_the_fit_that_saves_its_file():
    from types import SimpleNamespace

    from studies.membrane.study import uq_order
    from studies.membrane.tasks import UQFitTask, UQMonteCarloTask

    tasks = {"uq-8-direct-fit": UQFitTask(8, (SimpleNamespace(extra="a.pt"),)),
             "uq-8-hierarchical-fit": UQFitTask(8, (SimpleNamespace(extra="b.pt"),)),
             "uq-8-hierarchical": UQMonteCarloTask(8, "b.pt", None, None),
             "uq-8-direct": UQMonteCarloTask(8, "a.pt", None, None),
             "discretisation": object()}
    assert uq_order(tasks) == {"uq-8-hierarchical": "uq-8-hierarchical-fit",
                               "uq-8-direct": "uq-8-direct-fit"}



def test_the_load_paths_of_fig7a_are_solved_on_the_studys_mesh():
    """They were solved on the default 20 x 10 mesh whatever --nx/--ny: a 10 x 6 study's
    Fig. 7a ended at the 20 x 10 mesh's -2.63025, its own mesh gives -2.66153."""
    import numpy as np

    from fem import Membrane
    from studies.membrane.tasks import LoadPathsTask, load_paths_task
    from uqkit import sample
    from uqkit.presets import table3

    row = sample(table3(), 1, seed=5).values[0]
    paths = load_paths_task(LoadPathsTask(1, 5, nx=10, ny=6))
    own = Membrane(*row, nx=10, ny=6, probe_frame="relative").solve(increments=60)
    default = Membrane(*row, probe_frame="relative").solve(increments=60)
    np.testing.assert_array_equal(paths[0]["w"], own.path_w.tolist())
    assert not np.allclose(paths[0]["w"][-1], default.path_w[-1], rtol=1e-4)


def test_a_training_size_given_twice_is_fitted_and_reported_once(tmp_path):
    """--train-sizes 32,16,32 fitted 32 twice and the report said [16, 32, 32]."""
    study = MembraneStudy(out=str(tmp_path), train_sizes=(32, 16, 32), progress=False)
    assert study.train_sizes == (16, 32)
