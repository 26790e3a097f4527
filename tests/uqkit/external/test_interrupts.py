"""A study of an external program, killed or interrupted: no solver process is left running,
and the rerun computes only the runs that were not stored."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

SCRIPT = textwrap.dedent("""
    import signal, sys
    import numpy as np
    # a terminal's Ctrl-C: CI may start us with SIGINT ignored (a background job), and Python
    # then raises no KeyboardInterrupt at all
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from uqkit import propagate
    from uqkit.external import ExternalModel, Regex
    from uqkit.inputs.sampling import Samples

    deck, store, pids, delay = sys.argv[1:5]
    model = ExternalModel(deck, ["sh", "run.sh"], outputs={"y": Regex(r"(\\S+)")},
                          input_names=["x"], constants={"pids": pids, "delay": delay})
    res = propagate(model, Samples(np.arange(40.0)[:, None], ("x",)), workers=2, store=store,
                    progress=False)
    print(res.computed, res.loaded, res.kept, res.n_failed)
""")
# each run records its shell's pid and a grandchild's (the sleep), then answers x
SOLVER = ("echo $$ > {{ pids }}/$$\nsleep {{ delay }} & echo $! > {{ pids }}/$!\nwait\n"
          "echo {{ x }}\n")


@pytest.fixture
def study(tmp_path):
    deck = tmp_path / "deck"
    deck.mkdir()
    (deck / "run.sh").write_text(SOLVER)
    (tmp_path / "pids").mkdir()
    (tmp_path / "study.py").write_text(SCRIPT)
    return tmp_path


def _start(study, delay):
    return subprocess.Popen([sys.executable, str(study / "study.py"), str(study / "deck"),
                             str(study / "store"), str(study / "pids"), str(delay)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _wait_for(condition, proc, seconds=120):
    end = time.monotonic() + seconds
    while time.monotonic() < end and proc.poll() is None and not condition():
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone before the open or the read
        return False


def _left_running(study, seconds=5.0):
    """The recorded solver processes still running after ``seconds`` (the workers' watchdog
    polls every 0.5 s)."""
    end = time.monotonic() + seconds
    while True:
        alive = [p for p in map(int, os.listdir(study / "pids")) if _alive(p)]
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.05)


def _settled(count, quiet=1.5, seconds=20.0):
    """``count()`` once it has not changed for ``quiet`` seconds: a killed study's workers
    may finish the run in hand (and write its answer) before their watchdog ends them."""
    end, last, since = time.monotonic() + seconds, count(), time.monotonic()
    while time.monotonic() < end and time.monotonic() - since < quiet:
        time.sleep(0.05)
        now = count()
        if now != last:
            last, since = now, time.monotonic()
    return last


def _chunks(study):
    folder = study / "store" / "chunks"
    return [f for f in os.listdir(folder) if f.endswith(".npz")] if folder.exists() else []


def test_sigkill_leaves_no_solver_and_the_rerun_computes_only_the_missing_runs(study):
    proc = _start(study, 0.2)
    _wait_for(lambda: len(_chunks(study)) >= 2, proc)
    proc.kill()
    proc.wait()
    assert _left_running(study) == []
    saved = len(_chunks(study))
    assert 2 <= saved < 10
    finished = study / "store" / "runs" / ".finished"
    saved_chunks = {int(name[6:12]) for name in _chunks(study)}  # chunk-NNNNNN.npz

    def waiting():  # answers of rows in no saved chunk (a saved one's are dropped after it)
        names = os.listdir(finished) if finished.exists() else []
        return len([f for f in names if f.endswith(".json")
                    and int(f.split(".")[0]) // 4 not in saved_chunks])

    kept = _settled(waiting)
    out, err = _start(study, 0.2).communicate(timeout=300)
    computed, loaded, taken, failed = map(int, out.split())
    assert (computed, loaded, taken, failed) == (40 - 4 * saved - kept, 4 * saved, kept, 0), err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_ctrl_c_or_a_killed_parent_ends_the_running_solvers(study, sig):
    proc = _start(study, 60)
    # both workers' runs have started their sleep
    _wait_for(lambda: len(os.listdir(study / "pids")) >= 4, proc)
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # as a terminal's Ctrl-C: the whole group, workers too
    else:
        proc.send_signal(sig)  # the parent alone dies
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert _left_running(study) == []


def test_a_killed_studys_finished_runs_are_not_made_again(tmp_path):
    """The store saves whole chunks (4 runs here): the runs that had finished in a chunk that
    was not saved were made again by the rerun (up to 3 per worker). Their answers now wait
    in runs/.finished. Killed once at least 3 finished runs are in no saved chunk; at most one
    run per worker can finish between its program's end and its answer's file."""
    deck = tmp_path / "deck"
    deck.mkdir()
    log = tmp_path / "finished.log"
    (deck / "run.sh").write_text(SOLVER + f"echo {{{{ x }}}} >> {log}\n")
    (tmp_path / "pids").mkdir()
    (tmp_path / "study.py").write_text(SCRIPT)

    def unsaved():
        done = len(log.read_text().split()) if log.exists() else 0
        return done - 4 * len(_chunks(tmp_path))

    proc = _start(tmp_path, 0.2)
    _wait_for(lambda: unsaved() >= 3, proc)
    proc.kill()
    proc.wait()
    made_before = _settled(lambda: len(log.read_text().split()))
    out, err = _start(tmp_path, 0.2).communicate(timeout=300)
    computed, loaded, kept, failed = map(int, out.split())
    assert computed + loaded + kept == 40 and kept >= 1 and failed == 0, err
    runs = log.read_text().split()
    # the rerun counts as computed the runs it made, not the answers it took (it counted
    # them as computed: a user read runs made again that were not)
    assert len(runs) - made_before == computed, (computed, loaded, kept)
    assert sorted(set(runs), key=float) == [f"{x:.1f}" for x in range(40)]
    assert len(runs) - 40 <= 2, sorted(runs, key=float)


SLOW_STUDY = """\
[inputs]
x = "uniform(0, 1)"

[model]
template = "run.sh"
command = ["sh", "run.sh"]
chunk_size = 2

[outputs.y]
regex = '^y (\\S+)$'

[sampling]
n = 40
seed = 1
"""


def test_sigterm_stops_the_command_as_ctrl_c_does_and_the_rerun_resumes(tmp_path):
    """A batch scheduler's time limit sends SIGTERM: the command saved what had finished,
    said how to resume and exited with 143. It died where it stood before (exit -15, not a
    word, multiprocessing's resource tracker warning of leaked semaphores)."""
    (tmp_path / "run.sh").write_text(f"echo $$ > {tmp_path}/pids/$$\nsleep 0.4\n"
                                     "echo y {{ x }}\n")
    (tmp_path / "pids").mkdir()
    (tmp_path / "study.toml").write_text(SLOW_STUDY)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "uqkit", "run", str(tmp_path / "study.toml"), "--out",
           str(out), "--workers", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    chunks = out / "store" / "chunks"
    _wait_for(lambda: chunks.exists() and len(os.listdir(chunks)) >= 3, proc)
    proc.send_signal(signal.SIGTERM)  # the command alone, as `kill` and `timeout` send it
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, err
    saved = len([f for f in os.listdir(chunks) if f.endswith(".npz")])
    assert 3 <= saved < 20
    assert f"saved {2 * saved} of 40 runs to" in err and "rerun the same command" in err, err
    assert "leaked" not in err and "Traceback" not in err, err
    assert _left_running(tmp_path) == []
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs"] == 40 and summary["loaded"] == 2 * saved, summary
    assert summary["computed"] + summary["kept"] == 40 - 2 * saved and summary["failed"] == 0
