"""``uqkit run CONFIG.toml --dask ADDRESS`` against a real cluster: a ``dask scheduler`` and
``dask worker`` processes started from the shell, as the guide's propagation page tells a
user to. The runs through the cluster must equal the local pool's, row for row."""
import csv
import shutil
import socket
import subprocess
import time

import pytest

from uqkit.cli import main

from .test_cli_run import GOOD, _study

distributed = pytest.importorskip("distributed")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster(tmp_path):
    """A scheduler and two single-threaded worker processes on this machine; their
    address."""
    dask = shutil.which("dask") or pytest.skip("the dask command is not installed")
    address = f"tcp://127.0.0.1:{_free_port()}"
    logs = open(tmp_path / "cluster.log", "w")
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port",
                               address.rsplit(":", 1)[1], "--no-dashboard"],
                              stdout=logs, stderr=subprocess.STDOUT)]
    try:
        procs.append(subprocess.Popen([dask, "worker", address, "--nworkers", "2",
                                       "--nthreads", "1", "--no-dashboard"],
                                      stdout=logs, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 120
        while True:  # the scheduler may not listen yet: retry until the workers are in
            try:
                with distributed.Client(address, timeout=5) as client:
                    client.wait_for_workers(2, timeout=max(1, deadline - time.monotonic()))
                break
            except (OSError, TimeoutError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        logs.close()


def _rows(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def test_uqkit_run_on_an_external_dask_cluster_equals_the_local_pool(tmp_path, cluster, capsys):
    config = _study(tmp_path)
    assert main(["run", str(config), "--out", str(tmp_path / "dask"), "--dask", cluster,
                 "--no-progress"]) == 0
    assert main(["run", str(config), "--out", str(tmp_path / "local"), "--workers", "2",
                 "--no-progress"]) == 0
    on_dask, local = _rows(tmp_path / "dask" / "runs.csv"), _rows(tmp_path / "local" / "runs.csv")
    assert len(on_dask) == 64 and on_dask == local
    assert capsys.readouterr().out.count("64 runs: 64 ok, 0 failed") == 2


def test_an_unreachable_scheduler_is_one_line_and_exit_code_2(tmp_path, capsys, monkeypatch):
    from uqkit.execution import dask_cluster

    monkeypatch.setattr(dask_cluster, "DASK_CONNECT_SECONDS", 2)  # not the default 30 s wait
    config = _study(tmp_path)
    address = f"tcp://127.0.0.1:{_free_port()}"  # nothing listens there
    code = main(["run", str(config), "--out", str(tmp_path / "out"), "--dask", address,
                 "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and address in err[0], err
    assert not (tmp_path / "out").exists()  # it was left with an empty store


def test_a_python_function_of_a_study_file_runs_on_the_cluster(tmp_path, cluster):
    """``[model] python = "beam.py:response"`` on Dask: the model went to the workers by
    reference (Dask pickles plainly first), they could not import the file's module, every
    task failed and the command waited for ever."""
    import sys

    import numpy as np

    from .test_cli_python import _study as python_study

    config = python_study(tmp_path)
    code = ("import sys; from uqkit.cli import main; "
            f"sys.exit(main(['run', {str(config)!r}, '--out', {str(tmp_path / 'out')!r}, "
            f"'--dask', {cluster!r}, '--no-progress']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = _rows(tmp_path / "out" / "runs.csv")
    a, b = (np.array([float(r[k]) for r in rows]) for k in "ab")
    assert len(rows) == 64 and np.array_equal([float(r["y"]) for r in rows], a + 3.0 * b)


def test_a_module_beside_the_study_file_and_its_helper_run_on_the_cluster(tmp_path, cluster):
    """``python = "beam:response"`` (MODULE:NAME), beam importing helper.py: only a FILE.py
    was sent to the workers by value, and the cluster's workers, which cannot import modules
    beside the study file, failed every task ("Scheduler and Client have different
    environments")."""
    import sys

    import numpy as np

    from .test_cli_python import STUDY
    from .test_cli_python import _study as python_study

    config = python_study(tmp_path, STUDY.replace('"beam.py:response"', '"beam:response"'))
    code = ("import os, sys; os.chdir('/'); from uqkit.cli import main; "
            f"sys.exit(main(['run', {str(config)!r}, '--out', {str(tmp_path / 'out')!r}, "
            f"'--dask', {cluster!r}, '--no-progress']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=180, cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = _rows(tmp_path / "out" / "runs.csv")
    a, b = (np.array([float(r[k]) for r in rows]) for k in "ab")
    assert len(rows) == 64 and np.array_equal([float(r["y"]) for r in rows], a + 3.0 * b)


def test_uqkit_run_connects_once_for_the_runs_and_both_analyses_and_closes(tmp_path, cluster,
                                                                          monkeypatch):
    """One client for the runs, [sobol] and [failure] (each connected on its own before), and
    closed at the end."""
    from uqkit.execution import dask_cluster

    made, closed = [], []
    real = distributed.Client.__init__
    connect = dask_cluster.dask_client

    def counted_init(self, *args, **kwargs):
        made.append(args[:1])
        real(self, *args, **kwargs)

    def counted_connect(address):
        client = connect(address)
        close = client.close

        def counted_close(*args, **kwargs):
            closed.append(address)
            return close(*args, **kwargs)

        client.close = counted_close
        return client

    monkeypatch.setattr(distributed.Client, "__init__", counted_init)
    monkeypatch.setattr(dask_cluster, "dask_client", counted_connect)
    config = _study(tmp_path, GOOD.replace("[failure]", "[sobol]\nn = 64\n[failure]"))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--dask", cluster,
                 "--no-progress"]) == 0
    assert (tmp_path / "out" / "sobol.json").exists()
    assert (tmp_path / "out" / "failure.json").exists()
    assert made == [(cluster,)] and closed == [cluster]
