"""A program and every process it starts end with its run: at exit, at the timeout, and when
the caller is interrupted."""
import os
import signal
import time

import pytest

from uqkit.external.process import STDERR, STDOUT, describe_end, run_program, tail

# a "solver" that leaves a grandchild running in its process group and records its pid
SPAWNER = "sleep 60 & echo $! > child.pid; {rest}"


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead too (not reaped by its init parent yet)
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split(") ")[-1][0] != "Z"


def _wait_dead(pid, seconds=5.0):
    end = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.01)
    return not _alive(pid)


def test_exit_code_output_files_and_tail(tmp_path):
    done = run_program(["sh", "-c", "echo out; echo line1 >&2; echo '*ERROR in x' >&2; exit 3"],
                       tmp_path)
    assert done.returncode == 3 and not done.timed_out
    assert (tmp_path / STDOUT).read_text() == "out\n"
    assert tail(tmp_path / STDERR) == "line1 | *ERROR in x"
    assert describe_end(done) == "exit code 3"


def test_a_signal_death_is_named(tmp_path):
    done = run_program(["sh", "-c", "kill -SEGV $$"], tmp_path)
    assert describe_end(done) == "killed by signal SIGSEGV"


def test_timeout_kills_the_whole_process_group(tmp_path):
    t0 = time.monotonic()
    done = run_program(["sh", "-c", SPAWNER.format(rest="wait")], tmp_path, timeout=0.5)
    assert done.timed_out and describe_end(done) == "timeout"
    assert time.monotonic() - t0 < 10
    assert _wait_dead(int((tmp_path / "child.pid").read_text()))


def test_what_a_program_leaves_behind_at_exit_is_killed(tmp_path):
    done = run_program(["sh", "-c", SPAWNER.format(rest="exit 0")], tmp_path)
    assert done.returncode == 0
    assert _wait_dead(int((tmp_path / "child.pid").read_text()))


def test_an_interrupt_while_waiting_kills_the_group_and_goes_on(tmp_path):
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(KeyboardInterrupt):
            run_program(["sh", "-c", SPAWNER.format(rest="wait")], tmp_path)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert _wait_dead(int((tmp_path / "child.pid").read_text()))


def test_a_program_that_is_not_there_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        run_program(["no-such-solver-xyz"], tmp_path)
