"""Any program on the machine as a uqkit model: templated input files, a directory per run,
parsed outputs.

For each row of inputs, :class:`ExternalModel` makes a fresh run directory, renders the
template into it (:mod:`uqkit.external.templates`), runs the command there
(:mod:`uqkit.external.process`) and reads the outputs (:mod:`uqkit.external.outputs`).

Run directories are named by the row's index in the propagated sample, six digits at least
(``000042``), under the work directory: the one given, else ``runs/`` inside the study store,
else a new temporary directory per call. What stays there is the user's choice: nothing,
the failed runs (default) or every run.

A run fails, and the study goes on, when the program exits with a non-zero code or is killed
(status :data:`FAILED_EXIT`), outlives its timeout (:data:`FAILED_TIMEOUT`; its whole process
group is killed), or an output is missing, unparsable or not finite (:data:`FAILED_OUTPUT`).
Its reason names the cause and the run directory and quotes the last lines the program
wrote to standard error (else to standard output, where CalculiX writes its errors), e.g.
``exit code 201 (run dir runs/000042): *ERROR reading *MATERIAL ...``. These statuses are
the run's own answer, so a rerun keeps them (``retry_failed="all"`` computes them again);
a program that cannot even be started (not installed on a Dask worker, say) raises, which a
rerun retries.

A setup that cannot work is refused before any run: a command that is not found, a
placeholder that names no input, an input that no template uses, a bad output spec.

In a study store, each successful run's answer is also written to ``runs/.finished/`` (its
inputs and outputs, one small JSON file, atomically) until the store has saved its chunk
(:meth:`ExternalModel.rows_saved`, called by :func:`uqkit.propagate`): the store saves
whole chunks of runs, so a study stopped mid-chunk (Ctrl-C, SIGKILL, a lost node) would
otherwise make the chunk's finished runs again. A run whose file holds the very same inputs
is taken from it instead of being run; a failed run is always made again
(:mod:`uqkit.execution.kept_runs`, whose format it is). The store's manifest has checked the
model's identity before any of this is read.

May import :mod:`uqkit.execution.model`, :mod:`uqkit.execution.executors` and the other
modules of this package.
"""
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from ..execution import kept_runs
from ..execution.executors import THREAD_VARIABLES
from ..execution.kept_runs import FINISHED, RUN_DIGITS, run_name  # noqa: F401 - as before
from ..execution.model import ModelOutput, RunContext, check_output_names
from ..execution.result import RUN_DIR
from .outputs import OutputError, as_output, read_output
from .process import STDERR, STDOUT, describe_end, run_program, tail
from .templates import DeckTemplate, TemplateError

__all__ = ["FAILED_EXIT", "FAILED_TIMEOUT", "FAILED_OUTPUT", "KEEP", "RUN_INDEX",
           "SOURCE_MODULES", "SCRIPT_SUFFIXES", "ExternalModel"]

#: Status of a run whose program exited with a non-zero code or was killed by a signal.
FAILED_EXIT = 1
#: Status of a run stopped at its timeout.
FAILED_TIMEOUT = 2
#: Status of a run whose output was missing, unparsable or not finite.
FAILED_OUTPUT = 3
#: What :class:`ExternalModel` keeps of the run directories.
KEEP = ("none", "failed", "all")
#: The template variable that holds the run's row index.
RUN_INDEX = "run_index"
#: The modules whose source decides what an external model computes.
SOURCE_MODULES = ("uqkit.external.model", "uqkit.external.outputs",
                  "uqkit.external.templates", "uqkit.external.process",
                  "uqkit.execution.kept_runs")


class ExternalModel:
    """A program run on templated input files, as a uqkit model (an (n, d) array in, (n, k)
    outputs with status and reasons out).

    Args:
        template: a template file, or a directory whose files make each run directory (see
            :class:`uqkit.external.templates.DeckTemplate`).
        command: the program and its arguments, run in the run directory, e.g.
            ``["ccx", "-i", "beam"]``; each argument is a template too (``"--E={{ E }}"``).
            A string with ``shell=True``.
        outputs: ``name -> parser``: a function ``f(run_dir: pathlib.Path) -> float``, an
            :class:`~uqkit.external.outputs.Output` (a function with ``size`` values), or a
            :class:`~uqkit.external.outputs.Regex`, :class:`~uqkit.external.outputs.Table`
            or :class:`~uqkit.external.outputs.JSONValue`. An output of size m > 1 gives the
            columns ``name_0 .. name_{m-1}``.
        input_names: the names of X's columns, in order; the templates' variables.
        timeout: seconds a run may take (None: no limit); then its process group is killed.
        workdir: the directory of the run directories (default: ``runs/`` in the store, else
            a temporary directory per call); with a store, a folder of it per store
            (``<store name>-<8 hex digits of its path>``), as the runs of each store (each
            batch of an analysis) are numbered from 0.
        keep: which run directories stay: ``"none"``, ``"failed"`` (default) or ``"all"``.
        constants: ``name -> value``: further template variables, the same for every run.
            ``run_index`` (the row's index) is always one.
        render, template_options, static: which files to render, Jinja2 settings, and copy
            or link the others (see :class:`~uqkit.external.templates.DeckTemplate`).
        env: environment variables set for the program (over this process's).
        shell: run ``command`` through ``/bin/sh -c`` (a string then).
        cores_per_run: cores one run takes (a multi-threaded solver): the program gets
            ``OMP_NUM_THREADS`` and the like set to it, and a local pool starts ``cores //
            cores_per_run`` workers by default.
        chunk_size: runs per task of a new store: each task's runs are stored together, so a
            killed study loses at most this many runs per worker (default 4).

    Example:
        >>> import pathlib, sys, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "square.py").write_text("print(({{ x }}) ** 2)\\n")
        >>> from uqkit.external import Regex
        >>> model = ExternalModel(folder / "square.py", [sys.executable, "square.py"],
        ...                       outputs={"y": Regex(r"(\\S+)")}, input_names=["x"])
        >>> y, status, reasons = model(np.array([[3.0], [-1.5]]))
        >>> y.ravel().tolist(), status.tolist()
        ([9.0, 2.25], [0, 0])
    """

    takes_context = True

    def __init__(self, template, command, outputs, input_names, timeout=None, workdir=None,
                 keep="failed", constants=None, render=None, template_options=None,
                 static="copy", env=None, shell=False, cores_per_run=1, chunk_size=4):
        self.input_names = _names(input_names)
        self.constants = dict(constants or {})
        clash = sorted(set(self.constants) & {*self.input_names, RUN_INDEX})
        if clash:
            raise ValueError(f"constants {clash} have the names of inputs or of {RUN_INDEX!r}")
        if not isinstance(outputs, dict) or not outputs:
            raise ValueError(f"outputs must be a non-empty dict name -> parser, got {outputs!r}")
        self.outputs = {str(name): as_output(spec, name) for name, spec in outputs.items()}
        if len(self.outputs) != len(outputs):
            raise ValueError(f"outputs {list(outputs)} name one output twice")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(
                timeout, (int, float)) or not 0 < timeout < float("inf")):
            raise ValueError(f"timeout must be a finite number of seconds > 0 or None, got "
                             f"timeout={timeout!r}")
        if keep not in KEEP:
            raise ValueError(f"keep must be one of {KEEP}, got keep={keep!r}")
        for name, value, low in (("cores_per_run", cores_per_run, 1),
                                 ("chunk_size", chunk_size, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {name}={value!r}")
        self.timeout, self.keep = timeout, keep
        self.workdir = None if workdir is None else os.path.abspath(workdir)
        self.cores_per_run, self.chunk_size = cores_per_run, chunk_size
        if env is not None and not isinstance(env, dict):
            raise ValueError(f"env must be a table (a dict) of variable -> value, got env={env!r}")
        self.shell, self.env = bool(shell), {str(k): str(v) for k, v in (env or {}).items()}
        self.template = DeckTemplate(template, render=render, options=template_options,
                                     static=static)
        folder = self.template.path if self.template.path.is_dir() else None
        if self.workdir is not None and folder is not None and (
                Path(self.workdir).resolve().is_relative_to(folder)):
            # the kept run directories joined the template, and every rerun was refused as
            # another model's ("model.templates: stored ..., now ...")
            raise ValueError(f"workdir {self.workdir!r} is inside the template folder "
                             f"{str(folder)!r}: its run directories would become template "
                             "files; put it elsewhere")
        self.command = _command(command, self.shell)
        self._check_variables()
        deck = set(self.template.files())  # outputs read from files the deck writes too
        self._deck_outputs = sorted({parser.file for parser in self.outputs.values()
                                     if getattr(parser, "file", None) is not None
                                     and Path(parser.file).as_posix() in deck})
        self.program = _find_program(self.command, self.shell, self.template)
        self.output_names = check_output_names(
            name if p.size == 1 else f"{name}_{j}"
            for name, p in self.outputs.items() for j in range(p.size))
        self._argv_templates = None

    def _check_variables(self):
        """Every placeholder names a variable, and every input is used somewhere."""
        known = {*self.input_names, *self.constants, RUN_INDEX}
        self.template.check(known)
        argv = self._argv_parts()
        used = set(self.template.variables) | (
            {*self.template.global_names, *self.template.included_variables} & known)
        for text in argv:
            parsed = self.template.variables_of(text)
            unknown = sorted(parsed - known)
            if unknown:
                raise TemplateError(f"command {text!r}: the placeholder {unknown[0]!r} names "
                                    f"no input or constant (known: {', '.join(sorted(known))})")
            used |= parsed
        unused = [n for n in self.input_names if n not in used]
        if unused:
            raise TemplateError(f"input(s) {unused} are used by no template file "
                                f"({', '.join(self.template.files())}) nor the command: a "
                                "sample of them would change nothing")

    def _argv_parts(self):
        return [self.command] if self.shell else list(self.command)

    def _render_argv(self, variables):
        if self._argv_templates is None:
            env = self.template.environment()
            self._argv_templates = [env.from_string(a) for a in self._argv_parts()]
        parts = [a.render(variables) for a in self._argv_templates]
        return parts[0] if self.shell else parts

    def _environment(self):
        env = dict(os.environ)
        env.update({var: str(self.cores_per_run) for var in THREAD_VARIABLES})
        env.update(self.env)
        return env

    def __getstate__(self):
        return {**self.__dict__, "_argv_templates": None}

    def __call__(self, X, context=None):
        """Run the program on each row of X; returns a
        :class:`uqkit.execution.model.ModelOutput`, which unpacks as (outputs (n, k), status
        (n,), reasons (n,)) and counts the answers taken from an interrupted run (``kept``)."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != len(self.input_names):
            raise ValueError(f"X must be (n, {len(self.input_names)}) with columns "
                             f"{self.input_names}, got shape {X.shape}")
        if context is None:
            context = RunContext(np.arange(len(X)))
        finished = self._finished_dir(context.store)  # before base makes the store's path
        base, temporary = self._base_dir(context.store)
        env = self._environment()
        try:
            answers, taken = kept_runs.take_or_run(
                finished, X, context.rows, len(self.output_names), context.invocation,
                lambda x, row, k: self._run_one(x, row, base, env))
        finally:
            if temporary and not any(base.iterdir()):
                base.rmdir()
        values = np.array([v for v, _, _ in answers], dtype=float).reshape(
            len(X), len(self.output_names))
        status = np.array([s for _, s, _ in answers], dtype=np.int64)
        reasons = np.array([r for _, _, r in answers], dtype=str)
        return ModelOutput(values, status, reasons, kept=taken)

    def rows_saved(self, context):
        """Drop the kept answers of the runs of ``context.rows``: the store
        ``context.store`` has saved them (see the module docstring)."""
        kept_runs.drop(self._finished_dir(context.store), context.rows)

    def _finished_dir(self, store):
        """Where successful runs' answers wait for their chunk
        (:func:`uqkit.execution.kept_runs.kept_folder`): only in a study store, whose
        manifest has checked the model, not in a work directory of the user's; None
        otherwise."""
        return None if self.workdir is not None else kept_runs.kept_folder(store)

    def _base_dir(self, store):
        """The work directory and whether it is a temporary one made for this call."""
        if self.workdir is not None and store is not None:  # a folder per store: the
            # batches of an analysis, and the analyses of a study, each number rows from 0
            digest = hashlib.sha256(os.path.abspath(store).encode()).hexdigest()[:8]
            base = Path(self.workdir) / f"{Path(store).name}-{digest}"
        elif self.workdir is not None:
            base = Path(self.workdir)
        elif store is not None:
            base = Path(store) / "runs"
        else:
            return Path(tempfile.mkdtemp(prefix="uqkit-runs-")), True
        base.mkdir(parents=True, exist_ok=True)
        return base, False

    def _run_one(self, x, row, base, env):
        """(values, status, reason) of one run in ``base / run_name(row)``."""
        run_dir = base / run_name(row)
        if run_dir.exists():  # an earlier run of this row (a retry): start afresh
            shutil.rmtree(run_dir)
        run_dir.mkdir()
        variables = {**self.constants, **dict(zip(self.input_names, x.tolist())),
                     RUN_INDEX: row}
        self.template.render_into(run_dir, variables)
        as_written = {f: _file_digest(run_dir / f) for f in self._deck_outputs}
        argv = self._render_argv(variables)
        try:
            finished = run_program(argv, run_dir, self.timeout, env, self.shell)
        except OSError as exc:
            shutil.rmtree(run_dir, ignore_errors=True)
            raise RuntimeError(f"cannot start {argv if self.shell else argv[0]!r}: "
                               f"{exc.strerror or exc}") from None
        values = np.full(len(self.output_names), np.nan)
        if finished.timed_out:
            status, what = FAILED_TIMEOUT, f"timeout after {self.timeout:g} s"
        elif finished.returncode != 0:
            status, what = FAILED_EXIT, describe_end(finished)
        else:
            status, what = 0, ""
            # a file of the deck that the program left as the deck wrote it is no answer (a
            # result left in the template folder by a trial run would read as every run's)
            stale = [f for f, digest in as_written.items() if _file_digest(run_dir / f) == digest]
            try:
                if stale:
                    raise OutputError(f"{stale[0]!r} is as the template wrote it: the program "
                                      "did not write it")
                values = np.concatenate([_read(name, p, run_dir)
                                         for name, p in self.outputs.items()])
            except OutputError as exc:
                status, what = FAILED_OUTPUT, str(exc)
        removed = self.keep == "none" or (self.keep == "failed" and status == 0)
        if removed:
            shutil.rmtree(run_dir, ignore_errors=True)
        if status == 0:
            return values, 0, "ok"
        said = "" if status == FAILED_OUTPUT else (tail(run_dir / STDERR)
                                                     or tail(run_dir / STDOUT))
        # the run's own directory named apart, so that like failures count together
        # (uqkit.execution.result.reason_kind)
        said = said.replace(str(run_dir), RUN_DIR)
        what = what.replace(str(run_dir), RUN_DIR)
        where = f"run dir {run_dir}{', removed' if removed else ''}"
        return values, status, f"{what} ({where})" + (f": {said}" if said else "")

    def describe(self):
        """The model's identity for the study store and the result cache: the templates'
        content, the command and the program it finds, the output parsers (a function's
        code), the inputs, constants and environment, and the source of this package, and
        of the scripts the command names by absolute path (``python3 /abs/solver.py``: an
        edited script was served its old results; :data:`SCRIPT_SUFFIXES`). An edited deck
        or parser is never served old results. The timeout is not in it: it decides which
        runs fail, not what a finished run gives, so a rerun with a longer one resumes the
        store and makes its timed-out runs again (``retry_failed="all"``, ``uqkit run
        --retry-failed all``), where it was refused."""
        from ..execution.sources import source_digest

        return {"model": "uqkit.external", "templates": self.template.digest(),
                "command": self.command, "shell": self.shell, "program": self.program,
                "argument_files": _argument_files(self.command, self.shell),
                "outputs": {name: p.describe() for name, p in self.outputs.items()},
                "input_names": list(self.input_names), "constants": self.constants,
                "env": self.env,
                "source": source_digest(SOURCE_MODULES)}


def _read(name, parser, run_dir):
    try:
        return read_output(parser, run_dir)
    except OutputError as exc:
        raise OutputError(f"output {name!r}: {exc}") from None


def _names(input_names):
    if isinstance(input_names, str):
        raise ValueError(f"input_names must be a list of names, got the string {input_names!r}")
    names = tuple(input_names)
    if not names:
        raise ValueError("input_names must name at least one input")
    bad = [n for n in names if not (isinstance(n, str) and n.isidentifier())]
    if bad:
        raise ValueError(f"input names must be identifiers (usable in a template), got {bad}")
    if len(set(names)) != len(names):
        raise ValueError(f"input names must be unique, got {names}")
    if RUN_INDEX in names:
        raise ValueError(f"{RUN_INDEX!r} is the template's run index, not an input name")
    return names


def _command(command, shell):
    if shell:
        if not isinstance(command, str) or not command.strip():
            raise ValueError(f"with shell=True the command is one string, got {command!r}")
        return command
    if isinstance(command, str) or not command or \
            not all(isinstance(a, (str, os.PathLike)) for a in command):
        raise ValueError(f"command must be a list of strings (the program and its arguments; "
                         f"shell=True for a shell line), got {command!r}")
    return [os.fspath(a) for a in command]


#: The suffixes of scripts an interpreter in the command runs (``python3 /abs/solver.py``,
#: ``OpenSees /abs/model.tcl``), whose content is part of the model's identity.
SCRIPT_SUFFIXES = (".py", ".sh", ".bash", ".tcl", ".r", ".m", ".jl", ".pl", ".rb", ".lua",
                   ".js", ".inp", ".apdl", ".mac")


def _argument_files(command, shell=False):
    """``{path: sha256}`` of the scripts (:data:`SCRIPT_SUFFIXES`) the command's arguments name
    by absolute path: an edited script was served its old results. A relative path is a file
    of the run directory, which the template's digest covers; other files named by absolute
    path (a log, a restart file the program writes, a large mesh) are not read: hashing a
    file the program writes refused every rerun of its store. A shell line's first word is
    one too (``/abs/solver.sh args``: the shell runs it)."""
    words = _words(command)
    return {w: _file_digest(w) for w in (words if shell else words[1:]) if os.path.isabs(w)
            and w.lower().endswith(SCRIPT_SUFFIXES) and os.path.isfile(w)}


def _words(command):
    """The words of a command: a list as it is, a shell line split as the shell would (as it
    stands where shlex cannot split it)."""
    import shlex

    if not isinstance(command, str):
        return list(command)
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _shell_program(command, template):
    """The program a shell line starts, past ``NAME=value`` assignments, where its first word
    is a file or on PATH ({"path", "size", "mtime"}), else None (a builtin such as ``cd``, a
    placeholder, or a word the shell resolves otherwise)."""
    words = [w for w in _words(command)
             if not ("=" in w and w.split("=", 1)[0].isidentifier())]
    if not words:
        return None
    first = words[0]
    env = template.environment()
    if any(mark in first for mark in (env.variable_start_string, env.block_start_string)):
        return None  # a placeholder ("{{ prog }} deck.inp": shlex split its braces off)
    if os.sep in first and not os.path.isabs(first):
        # a path in the run directory, where the line runs: a file of the template, whose
        # bytes its digest covers (never the process's working directory's)
        rel = os.path.normpath(first)
        return {"path": rel, "from": "template"} if rel in template.files() else None
    path = first if os.path.isabs(first) else shutil.which(first)
    if path is None or not os.path.isfile(path):
        return None
    stat = os.stat(path)
    return {"path": os.path.realpath(path), "size": stat.st_size, "mtime": stat.st_mtime}


def _file_digest(path, block=1 << 20):
    """SHA-256 of a file, read a block at a time (None where it is gone or unreadable)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(block), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _find_program(command, shell, template):
    """The program the command runs, as found now ({"path", "size", "mtime"}: a rebuilt or
    upgraded program changes the model's identity).

    Raises:
        ValueError: the program is neither on PATH nor a file of the template.
    """
    program = "sh" if shell else command[0]
    if template.variables_of(program):
        return {"path": program}
    if shell:  # the shell, and the program its line starts where that is one: an upgraded
        # ccx behind "ccx job > log" served the old results
        found = _find_program(["sh"], False, template)
        started = _shell_program(command, template)
        return found if started is None else dict(found, runs=started)
    if os.sep in program or (os.altsep and os.altsep in program):
        rel = os.path.normpath(program)
        if rel in template.files():  # a script that the template puts in each run directory
            return {"path": rel, "from": "template"}
        path = program if os.path.isabs(program) else None
    else:
        path = shutil.which(program)
    if path is None or not os.path.isfile(path):
        raise ValueError(f"the command's program {program!r} is not found"
                         + ("" if os.sep in program else " on PATH")
                         + "; install it"
                         + (" (CalculiX: apt-get install calculix-ccx)"
                            if os.path.basename(program).startswith("ccx") else "")
                         + " or give its full path")
    stat = os.stat(path)
    return {"path": os.path.realpath(path), "size": stat.st_size, "mtime": stat.st_mtime}
