"""The ``uqkit`` command: its parser, its entry point and how it reports errors.

Subcommands, each registered through the ``uqkit.commands`` entry point group:
    fe      solve one membrane with the built-in FE model (:mod:`uqkit.cli.fe`)
    run     run an external program over samples from a TOML file (:mod:`uqkit.external`),
    study   run one of the paper's studies (the ``studies`` package)

Bad input exits with code 2 and a one-line message on stderr; Ctrl-C exits with code 130
after saving what finished, SIGTERM (a scheduler's time limit, ``kill``) likewise with code
143 (:func:`uqkit.execution.interrupts.stop_on_sigterm`); each warning is one line
(:func:`one_line_warnings`). Imports the standard library and :mod:`uqkit.execution` only.
"""
import argparse
import os
import sys
from contextlib import contextmanager

__all__ = ["COMMANDS", "STOPPED_BY_CTRL_C", "STOPPED_BY_SIGTERM", "UsageError", "Parser",
           "check_output_dir", "build_parser",
           "one_line_warnings", "main", "command"]

#: Entry point group of further subcommands: each is ``add(subparsers)``.
COMMANDS = "uqkit.commands"
#: Exit codes of a command stopped by Ctrl-C and by SIGTERM (128 + the signal's number, as a
#: shell reports a process the signal killed).
STOPPED_BY_CTRL_C, STOPPED_BY_SIGTERM = 130, 143


class UsageError(Exception):
    """A bad command-line value: reported on one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are :class:`UsageError`."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def check_output_dir(path, what="uqkit: --out"):
    """Refuse an output directory that is an existing file or cannot be created or written.

    Raises:
        UsageError: naming the path and the reason.
    """
    import os
    import tempfile

    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{what} {path!r} is an existing file, not a directory")
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as exc:
        raise UsageError(f"{what} {path!r} cannot be written: {exc.strerror}") from None


def build_parser():
    """The ``uqkit`` parser, with every subcommand registered under :data:`COMMANDS` (``fe``,
    ``run``, ``study``)."""
    from importlib.metadata import entry_points

    from importlib.metadata import PackageNotFoundError, version

    parser = Parser(prog="uqkit", description="Structural uncertainty quantification: FE "
                    "solves of the built-in membrane, studies of external programs and the "
                    "paper's studies.")
    try:
        parser.add_argument("--version", action="version", version=f"uqkit {version('uqkit')}")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        pass
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser,
                                metavar="{fe,run,study}",
                                help="fe: solve one membrane; run: run an external program "
                                     "over samples from a TOML file; study: run one of the "
                                     "paper's studies (uqkit COMMAND --help says more)")
    for ep in sorted(entry_points(group=COMMANDS), key=lambda e: e.name):
        ep.load()(sub)
    return parser


@contextmanager
def one_line_warnings():
    """Python's warnings printed as one line, ``uqkit: CATEGORY: MESSAGE``, while the block
    runs: without the file, line number and source line of the call that warned, which are
    uqkit's own and say nothing to a user of the command (a recorded warning, as in
    ``pytest.warns``, is not affected)."""
    import warnings

    earlier = warnings.formatwarning

    def one_line(message, category, filename, lineno, line=None):
        return f"uqkit: {category.__name__}: {message}\n"

    warnings.formatwarning = one_line
    try:
        yield
    finally:
        warnings.formatwarning = earlier


def main(argv=None):
    """Entry point of the ``uqkit`` command; returns the exit code."""
    from ..execution.dask_cluster import MissingDependencyError
    from ..execution import interrupts
    from ..execution.propagation import PropagationError, PropagationInterrupted

    # SIGTERM stops the command as Ctrl-C does, from here to the end of its reports
    with interrupts.stop_on_sigterm():
        try:
            args = build_parser().parse_args(argv)
            with one_line_warnings():
                code = args.func(args)
            if interrupts.terminated():  # its Terminated was lost (in a gc callback, say)
                print("uqkit: a SIGTERM came, but the command had run to its end (the "
                      "signal's exception was lost where Python drops exceptions)",
                      file=sys.stderr)
                return STOPPED_BY_SIGTERM
            return code
        except (UsageError, MissingDependencyError) as exc:
            print(str(exc).replace("\n", " "), file=sys.stderr)
            return 2
        except PropagationInterrupted as exc:
            print(exc.message(), file=sys.stderr)
            return STOPPED_BY_SIGTERM if interrupts.terminated() else STOPPED_BY_CTRL_C
        except KeyboardInterrupt:
            if interrupts.terminated():
                print("uqkit: stopped by SIGTERM", file=sys.stderr)
                return STOPPED_BY_SIGTERM
            print("uqkit: interrupted", file=sys.stderr)
            return STOPPED_BY_CTRL_C
        except PropagationError as exc:
            print(f"uqkit: error: {exc}", file=sys.stderr)
            return 1


def command():
    """The ``uqkit`` console script: :func:`main`, then the exit without waiting for the
    worker pool's idle processes to shut their interpreters down (every result is saved by
    then; about a second of a study's wall time)."""
    from ..execution.executors import release_workers

    # glibc keeps freed memory for torch's next steps in this process and its workers
    # (surrogates.allocator: opt-in for a library, on for the command)
    os.environ.setdefault("UQKIT_MALLOC", "keep")
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (``uqkit run ... | head``): no traceback
        # Python would report the pipe again as it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    release_workers()
    sys.exit(code)
