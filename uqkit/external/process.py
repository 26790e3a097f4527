"""One external program run in its run directory, leaving no process behind.

The program runs in a process group of its own (a new session), with its standard output and
error in ``stdout.txt`` and ``stderr.txt`` of the run directory and no standard input. It ends
in one of three ways, and none leaves a process running:

* it exits: any process it left in its group (a shell's background job) is killed before the
  group's leader is reaped, so that the group id cannot have been reused by then;
* it outlives ``timeout``: the whole group is killed (SIGKILL), the solver a wrapper script
  started included;
* the caller is stopped (Ctrl-C in this process, an exception): the group is killed before
  the exception goes on. A pool worker whose parent dies kills the groups it runs
  (:func:`uqkit.execution.executors.kill_child_groups`), and a pool shut down after Ctrl-C
  kills its workers' process trees (loky), these groups included.

May import only the standard library and :mod:`uqkit.execution.executors`.
"""
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass

from ..execution.executors import starting_child, track_child_group

__all__ = ["STDOUT", "STDERR", "Finished", "run_program", "describe_end", "tail"]

#: Files of the run directory that receive the program's standard output and error.
STDOUT, STDERR = "stdout.txt", "stderr.txt"


@dataclass(frozen=True)
class Finished:
    """How a program ended: ``returncode`` (negative: killed by that signal; None when it was
    stopped at its timeout) and ``seconds`` of wall time."""

    returncode: int | None
    seconds: float

    @property
    def timed_out(self):
        """True where the program was stopped at its timeout."""
        return self.returncode is None


def run_program(argv, cwd, timeout=None, env=None, shell=False):
    """Run ``argv`` in directory ``cwd`` and wait for it, at most ``timeout`` seconds.

    Args:
        argv: the program and its arguments (a string with ``shell=True``).
        cwd: the run directory (a ``pathlib.Path``); receives :data:`STDOUT` and :data:`STDERR`.
        timeout: seconds, or None for no limit.
        env: the program's environment (None: this process's).
        shell: run ``argv`` through ``/bin/sh -c``.

    Returns:
        :class:`Finished`.

    Raises:
        OSError: the program could not be started (not found, not executable).

    Example:
        >>> import pathlib, tempfile
        >>> run_dir = pathlib.Path(tempfile.mkdtemp())
        >>> run_program(["sh", "-c", "echo hello; exit 3"], run_dir).returncode
        3
        >>> (run_dir / STDOUT).read_text()
        'hello\\n'
        >>> run_program(["sleep", "10"], run_dir, timeout=0.1).timed_out
        True
    """
    t0 = time.perf_counter()
    proc = None
    try:
        # an end or a Ctrl-C that comes before the group is recorded waits for the record
        with starting_child():
            with open(cwd / STDOUT, "wb") as out, open(cwd / STDERR, "wb") as err:
                proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=err, env=env, shell=shell,
                                        start_new_session=True)
            track_child_group(proc.pid)
        exited = _wait_unreaped(proc, timeout)
    except BaseException:
        if proc is not None:
            _kill_group(proc.pid)
            proc.wait()
            track_child_group(proc.pid, running=False)
        raise
    # the leader is not reaped yet, so its group id is still its own: end what it left behind
    _kill_group(proc.pid)
    code = proc.wait()
    track_child_group(proc.pid, running=False)
    return Finished(code if exited else None, time.perf_counter() - t0)


def _wait_unreaped(proc, timeout):
    """Wait until ``proc`` exits, without reaping it (the group id stays reserved); False if
    ``timeout`` passed first. Uses a pidfd where the system has one (Linux 5.3), else polls
    ``waitid(WNOWAIT)``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        try:
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if select.select([fd], [], [], left)[0]:
                    return True
                if deadline is not None and time.monotonic() >= deadline:
                    return False
        finally:
            os.close(fd)
    pause = 1e-4
    while True:  # pragma: no cover - systems without pidfd
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if info is not None and info.si_pid:
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(2 * pause, 0.05)


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:  # nothing left in the group
        pass


def describe_end(finished):
    """``"exit code 3"``, ``"killed by signal SIGSEGV"`` or ``"timeout"`` for a
    :class:`Finished`."""
    code = finished.returncode
    if code is None:
        return "timeout"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def tail(path, lines=3, max_chars=300):
    """The last non-empty ``lines`` of a text file, joined by `` | `` and cut to
    ``max_chars`` (empty if the file is missing or empty)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 8192))
            text = fh.read().decode(errors="replace")
    except OSError:
        return ""
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    joined = " | ".join(kept)
    return joined if len(joined) <= max_chars else "..." + joined[-max_chars:]
