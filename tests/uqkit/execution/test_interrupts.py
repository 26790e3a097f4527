"""SIGTERM taken as Ctrl-C (stop_on_sigterm): raised once in the main thread, raised again by
the next check where Python dropped it, a second one left to kill, and the command's exit
codes."""
import signal

import pytest

from uqkit.execution import interrupts
from uqkit.execution.interrupts import (Terminated, check_interrupt, stop_on_sigterm,
                                        terminated)


class RaisesOnCollection:
    """Raises SIGTERM in its ``__del__``, where Python drops the handler's exception."""

    def __del__(self):
        signal.raise_signal(signal.SIGTERM)


def test_a_sigterm_raises_terminated_once_and_a_second_one_would_kill():
    with stop_on_sigterm():
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL and not terminated()
        with pytest.raises(Terminated):
            signal.raise_signal(signal.SIGTERM)
        assert terminated() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL and terminated()
    with stop_on_sigterm():  # a new block forgets the last one's
        assert not terminated()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_sigterm_python_drops_is_raised_by_the_next_check():
    """The handler's Terminated raised in a __del__ is dropped ("Exception ignored in"): the
    run went on, and the command exited 0 after a SIGTERM. The next check raises it, once."""
    with stop_on_sigterm():
        RaisesOnCollection()  # collected at once: its SIGTERM's exception is dropped
        assert terminated()
        with pytest.raises(Terminated):
            check_interrupt()
        check_interrupt()  # once
    with stop_on_sigterm():
        check_interrupt()  # nothing left of the last block


def test_a_handler_the_program_set_is_left_alone():
    def mine(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        with stop_on_sigterm():
            assert signal.getsignal(signal.SIGTERM) is mine
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def _command(monkeypatch, run):
    """uqkit.cli.main with one subcommand that calls ``run()``."""
    from uqkit.cli import app

    def parser():
        p = app.Parser(prog="uqkit")
        p.set_defaults(func=lambda args: run())
        return p

    monkeypatch.setattr(app, "build_parser", parser)
    return app.main


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_the_command_exits_143_on_sigterm_130_on_ctrl_c(monkeypatch, capsys):
    def sigterm():
        signal.raise_signal(signal.SIGTERM)
        return 0

    def ctrl_c():
        raise KeyboardInterrupt

    def lost():  # the SIGTERM's exception dropped, and no check after it: the run ends
        RaisesOnCollection()
        return 0

    assert _command(monkeypatch, sigterm)([]) == 143
    assert "stopped by SIGTERM" in capsys.readouterr().err
    assert _command(monkeypatch, ctrl_c)([]) == 130  # not taken for the last call's SIGTERM
    assert "interrupted" in capsys.readouterr().err
    assert _command(monkeypatch, lost)([]) == 143
    assert "a SIGTERM came" in capsys.readouterr().err
    assert _command(monkeypatch, lambda: 0)([]) == 0
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert not interrupts._sigterm["pending"]
