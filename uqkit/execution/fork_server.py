"""A fork server that imports the workers' modules once, for the local pool on Linux.

loky starts each worker as a fresh interpreter (fork + exec), so every worker imports numpy,
scipy, numba, torch and the model's code itself. On 16 cores that was the limit of the
membrane study's speed-up: a fresh worker's import of the training code cost 4.9 s of CPU
after its FE warm-up, 70 s of the 93 s of task CPU the pool gained from 2 to 16 workers
(``docs/guide/performance.md``, "A study on 16 cores").

Here the workers are forked from one server process instead (multiprocessing's ``forkserver``
method): the server is started once from this process, imports :func:`server_modules`, then
forks each worker from itself. A worker starts with those modules loaded and shares their
memory copy-on-write. Measured on 2 cores (``benchmarks/bench_cores.py --pool``): 8 workers
that each solve the membrane once and import the BDL, the baselines and torch took 24.1 s of
CPU as fresh interpreters, 3.1 s forked (and 2.5 s in the server, once).

It is safe where a plain ``fork`` of this process is not, for the reasons the forkserver
method exists: the server runs no threads (the workers' thread caps are in its environment
before it imports numpy or torch, so no BLAS, OpenMP, numba or torch pool starts), it never
ran this process's code, and on macOS, where system libraries do not survive a fork, it is
not used (:func:`available`). Two differences from multiprocessing's own forkserver context:

* the workers do not import this process's ``__main__`` (multiprocessing's do, so a script
  without an ``if __name__ == "__main__":`` guard would run again in every worker); what
  ``__main__`` defines travels with each task, pickled by value, as with loky's workers;
* a pool whose settings differ in what its workers depend on (:func:`server_key`: the
  code's generation, :func:`uqkit.execution.loaded_code.import_key`, which counts up when a
  module file changed, or ``sys.path``; the working directory; the thread cap) gets a new
  server of its own. Another server is stopped once no worker of it is alive
  (:func:`stop_unused`), never under a task or an idle pool of another thread, and starts
  again if a pool of it needs a worker later. The files the server imported count as loaded
  (its first worker reports them, :func:`note_server_files`): a module only the server
  loaded, then edited, gets a new server, where a fresh worker of the old one would run the
  old code.

A worker is forked with the server's environment and working directory, as of the server's
start (a later ``os.environ`` change reaches the next server's workers only). The server's
modules are fixed when it starts: a pool that asks for more later imports them in its
workers. It ignores Ctrl-C during its imports when started from the main thread (this
process handles it; a server started again from another thread, for an old pool, does not,
nor one of a process whose SIGINT handler was set outside Python) and ends when this process
does: it
reads a pipe whose write ends this process holds. multiprocessing gives one to each worker
too, so that a worker may ask the server for processes of its own, and a plain ``fork`` of
this process inherits one: both close theirs at once (:func:`leave_server`, and a fork
handler), or the server would outlive this process, and its workers the server. A worker
ends when the server does (:func:`uqkit.execution.executors.watch_parent`). A server that
does not end within :data:`STOP_GRACE` seconds of being stopped is killed.

This is CPython 3.11-3.13's forkserver (3.14 changed it, and made it the default start
method; 3.10 cannot keep the working directory off the server's path,
:func:`import_environment`): :func:`available` is False on other versions, which then use
loky's fresh interpreters.

Imports: the standard library only (multiprocessing's ``forkserver``), so that nothing heavy
is loaded before the thread caps are set.
"""
import io
import json
import os
import signal
import sys
import threading
import time
from functools import lru_cache
from multiprocessing import context as mp_context
from multiprocessing import forkserver, util

__all__ = ["WORKER_PACKAGES", "STOP_GRACE", "REPORT_VARIABLE", "RESTORE_VARIABLE",
           "available", "import_environment",
           "server_modules", "server_key", "PreloadServer", "ensure_server", "stop_unused",
           "server_pid", "stop_server", "note_server_files", "leave_server"]

#: Packages every worker imports (to run a chunk and take its tasks), which the server
#: imports beside a pool's request (:func:`server_modules`). Not every heavy package this
#: process has loaded: a server imports again when the code or the working directory
#: changed, and torch, which a model of numpy need not load, took 2.2 s of it on 2 cores.
WORKER_PACKAGES = ("numpy", "cloudpickle", "loky", "uqkit.execution.propagation")
#: Seconds a stopped server has to end before it is killed.
STOP_GRACE = 5.0
#: The environment variable that tells a worker where to report the server's module files.
REPORT_VARIABLE = "UQKIT_FORK_SERVER_REPORT"
#: The environment variable that holds what a worker puts back of the variables the server
#: started with to find this process's modules (:func:`import_environment`).
RESTORE_VARIABLE = "UQKIT_FORK_SERVER_RESTORE"

_lock = threading.RLock()
#: Every server this process made, by number (:class:`PreloadServer`), and the number of the
#: last one asked for.
_servers = {}
_last = []
_report_dir = []


def available():
    """Whether the pool can start its workers from a fork server: Linux (fork is safe there
    for a process without threads; not macOS, whose system libraries do not survive a fork,
    nor Windows, which has no fork), CPython 3.11-3.13 (``PYTHONSAFEPATH``, see
    :func:`import_environment`; 3.14's forkserver differs), and an interpreter that reads
    its environment (not ``python -E``, whose server would import from its working
    directory)."""
    from multiprocessing import reduction

    return (sys.platform.startswith("linux") and reduction.HAVE_SEND_HANDLE
            and (3, 11) <= sys.version_info < (3, 14) and not sys.flags.ignore_environment)


def import_environment():
    """The environment variables that make the server import from this process's
    ``sys.path``: CPython 3.11's forkserver ignores the path it is given, so the server
    imported from its working directory first (``tests/``, whose ``fem`` folder hid the
    installed ``fem`` package) and missed a script's own folder. ``PYTHONPATH`` is this
    process's path (``""`` as the working directory), ``PYTHONSAFEPATH`` keeps the working
    directory off it, and :data:`RESTORE_VARIABLE` has the workers put both back as they
    were (:func:`leave_server`), so that the programs a model runs do not inherit them."""
    path = [p or os.getcwd() for p in sys.path]
    restore = {var: os.environ.get(var) for var in ("PYTHONPATH", "PYTHONSAFEPATH")}
    return {"PYTHONPATH": os.pathsep.join(path), "PYTHONSAFEPATH": "1",
            RESTORE_VARIABLE: json.dumps(restore)}


def server_modules(requested=()):
    """The modules the server imports: ``requested`` (names, in order), then
    :data:`WORKER_PACKAGES`. ``__main__`` is never imported.

    >>> server_modules(["fem", "numpy"])[:3]
    ['fem', 'numpy', 'cloudpickle']
    """
    names = [n for n in requested if n != "__main__"]
    return list(dict.fromkeys([*names, *WORKER_PACKAGES]))


def server_key(threads, code_key):
    """What the workers forked from a server depend on, beyond its modules: ``code_key``
    (:func:`uqkit.execution.loaded_code.import_key`), the working directory and the thread
    cap. A pool of another key gets another server. Not the environment: packages change it
    as they load (joblib sets ``KMP_INIT_AT_FORK``), which would have replaced a warm pool at
    every import."""
    return threads, code_key, os.getcwd()


def _set_environment(values):
    """Set each variable of ``values`` in this process's environment; None removes it (the
    variables as they were before a change, :func:`os.environ.get`'s)."""
    for var, value in values.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value


def _process_stat(pid):
    """The fields of ``/proc/PID/stat`` after the command's name (the state letter first,
    ``"Z"`` for a zombie, then the parent's process id), or None if there is no process."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):  # gone meanwhile
        return None


class PreloadServer(forkserver.ForkServer):
    """One fork server: the modules it imports, the environment it starts with (``env``: the
    workers' thread caps), its :func:`server_key`, its number and its multiprocessing
    context. Stopped, it starts again when a pool of it needs a worker."""

    def __init__(self, modules, env, key):
        super().__init__()
        self.number = len(_servers) + 1
        _servers[self.number] = self
        self.modules = list(modules)
        # multiprocessing's preload: only the module that imports ours, error-proof
        self._preload_modules = ["uqkit.execution.server_preload"]
        self.env = dict(env)
        self.key = key
        self.report = None
        self.launching = 0  # workers being forked now (see stop_unused)
        self.context = _PreloadContext()
        self.context.Process = self.process
        _forget_in_fork_children()

    def process(self, *args, **kwargs):
        """A process of this server (the context's ``Process``)."""
        proc = _PreloadProcess(*args, **kwargs)
        proc._uqkit_server = self.number
        return proc

    def running(self):
        """Whether the server process runs (a zombie does not)."""
        pid = self._forkserver_pid
        return pid is not None and (_process_stat(pid) or ["Z"])[0] != "Z"

    def ensure_running(self):
        """Start the server unless it runs: with ``env`` and the report variable in its
        environment, and Ctrl-C ignored (a terminal's Ctrl-C during its imports would end
        it). This process's environment changes only while it starts."""
        if self.running():
            return
        with _lock:
            if self.running():  # another thread started it meanwhile
                return
            self.report = os.path.join(_reports(), f"{id(self)}-{time.monotonic_ns()}.json")
            from .server_preload import PRELOAD_VARIABLE

            env = {**self.env, **import_environment(), REPORT_VARIABLE: self.report,
                   PRELOAD_VARIABLE: json.dumps(self.modules)}
            saved = {var: os.environ.get(var) for var in env}
            os.environ.update(env)
            # ignored across the exec; not where it cannot be put back: another thread's
            # call, or a handler not set from Python (getsignal gives None)
            previous = signal.getsignal(signal.SIGINT)
            swap = threading.current_thread() is threading.main_thread() and previous is not None
            if swap:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                super().ensure_running()
            finally:
                if swap:
                    signal.signal(signal.SIGINT, previous)
                _set_environment(saved)

    def workers(self):
        """The process ids of the server's live children (its workers)."""
        pid = self._forkserver_pid
        if pid is None:
            return []
        stats = {int(e): _process_stat(e) for e in os.listdir("/proc") if e.isdigit()}
        return [child for child, fields in stats.items()
                if fields and int(fields[1]) == pid and fields[0] != "Z"]

    def stop(self, grace=STOP_GRACE):
        """Close this process's end of the server's pipe, which ends it (its workers follow);
        kill it if it has not ended within ``grace`` seconds."""
        with self._lock:
            pid = self._forkserver_pid
            if pid is None:
                return
            os.close(self._forkserver_alive_fd)
            deadline = time.monotonic() + grace
            try:
                while os.waitpid(pid, os.WNOHANG)[0] == 0:
                    if time.monotonic() > deadline:
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                        break
                    time.sleep(0.01)
            except ChildProcessError:  # reaped already (SIGCHLD ignored, say)
                pass
            address = self._forkserver_address
            if address and not util.is_abstract_socket_namespace(address):
                try:
                    os.unlink(address)
                except OSError:  # gone already
                    pass
            self._forkserver_pid = self._forkserver_alive_fd = self._forkserver_address = None


# Windows has no forkserver classes: the module imports there, and available() says no
_ForkServerProcess = getattr(mp_context, "ForkServerProcess", mp_context.process.BaseProcess)
_ForkServerContext = getattr(mp_context, "ForkServerContext", mp_context.BaseContext)


class _PreloadProcess(_ForkServerProcess):
    """A process forked from a :class:`PreloadServer`, without this process's ``__main__``."""

    @staticmethod
    def _Popen(process_obj):
        return _popen_class()(process_obj)


class _PreloadContext(_ForkServerContext):
    """multiprocessing's forkserver context; each server sets its own ``Process``."""


@lru_cache(maxsize=1)
def _popen_class():
    from multiprocessing import popen_forkserver, spawn

    class Popen(popen_forkserver.Popen):
        """multiprocessing's forkserver Popen (CPython 3.11-3.13), asking the process's own
        server, less the parent's ``__main__`` in the preparation data the child reads."""

        def _launch(self, process_obj):
            server = _servers[process_obj._uqkit_server]
            prep_data = spawn.get_preparation_data(process_obj._name)
            for name in ("init_main_from_path", "init_main_from_name"):
                prep_data.pop(name, None)
            buf = io.BytesIO()
            mp_context.set_spawning_popen(self)
            try:
                mp_context.reduction.dump(prep_data, buf)
                mp_context.reduction.dump(process_obj, buf)
            finally:
                mp_context.set_spawning_popen(None)
            with _lock:  # until the worker is the server's child, stop_unused leaves it
                server.launching += 1
            try:
                server.ensure_running()
                self.sentinel, w = server.connect_to_new_process(self._fds)
                parent_w = os.dup(w)
                self.finalizer = util.Finalize(self, util.close_fds,
                                               (parent_w, self.sentinel))
                with open(w, "wb", closefd=True) as f:
                    f.write(buf.getbuffer())
                self.pid = forkserver.read_signed(self.sentinel)
            finally:
                with _lock:
                    server.launching -= 1

    return Popen


def _reports():
    """This process's folder for the servers' reports (removed at exit)."""
    if not _report_dir:
        import atexit
        import shutil
        import tempfile

        folder, owner = tempfile.mkdtemp(prefix="uqkit-fork-server-"), os.getpid()
        _report_dir.append(folder)
        # not at a plain fork's exit: the folder is this process's
        atexit.register(lambda: os.getpid() == owner and shutil.rmtree(folder, True))
    return _report_dir[0]


@lru_cache(maxsize=1)
def _forget_in_fork_children():
    """Have a plain ``fork`` of this process close its copies of the servers' pipes."""

    def forget():
        global _lock
        _lock = threading.RLock()  # a copy may be held by the thread that forked
        for server in _servers.values():
            if server._forkserver_alive_fd is not None:
                try:
                    os.close(server._forkserver_alive_fd)
                except OSError:
                    pass
            server._forkserver_pid = server._forkserver_alive_fd = None
        _servers.clear()
        _last.clear()
        _report_dir.clear()

    os.register_at_fork(after_in_child=forget)
    return True


def ensure_server(modules, env, threads, code_key):
    """The server for a pool of ``threads`` threads per worker and code ``code_key``
    (:func:`server_key`), running: the one made for that key, or a new one importing
    :func:`server_modules` of ``modules`` with ``env`` in its environment."""
    key = server_key(threads, code_key)
    with _lock:
        server = next((s for s in _servers.values() if s.key == key), None)
        if server is None:
            server = PreloadServer(server_modules(modules), env, key)
        _last[:] = [server.number]
    server.ensure_running()
    return server


def stop_unused():
    """Stop every server but the last one asked for that has no live worker and none being
    forked: a pool replaced (for changed code, say) has had its workers ended, and one idle
    or busy in another thread keeps its server. A stopped server starts again if a pool of
    it needs a worker later."""
    with _lock:
        for server in list(_servers.values()):
            if server.number not in _last and not server.launching and not server.workers():
                server.stop()


def note_server_files():
    """Record the files of the modules each server imported, as they were when it imported
    them (:func:`leave_server`), among the loaded code's files
    (:func:`uqkit.execution.loaded_code.note_files`): their later change changes the code's
    generation."""
    from .loaded_code import note_files

    for server in list(_servers.values()):
        if server.report and os.path.exists(server.report):
            with open(server.report) as fh:
                note_files({path: tuple(state) for path, state in json.load(fh).items()})
            server.report = None


def server_pid():
    """The process id of the last server asked for, or None."""
    return _servers[_last[0]]._forkserver_pid if _last else None


def stop_server():
    """Stop every server (their workers end with them). A later :func:`ensure_server` starts
    one again."""
    with _lock:
        for server in _servers.values():
            server.stop()


def leave_server():
    """In a worker forked from a server: close its copy of the pipe that keeps the server
    running (see the module docstring), so that the server ends when this process's parent
    does, and, as the server's first worker, report the files of the modules it imported
    (:data:`REPORT_VARIABLE`). A later pool in the worker starts a server of its own.
    Returns the server's process id, which the worker watches: as the server left it
    (``server_preload``), not the pool's, as a server may have been started again since the
    pool was made; the worker's parent now if the server left none."""
    server = forkserver._forkserver
    if server._forkserver_pid is None and server._forkserver_alive_fd is not None:
        os.close(server._forkserver_alive_fd)
        server._forkserver_alive_fd = None
        server._forkserver_address = None
    _set_environment(json.loads(os.environ.pop(RESTORE_VARIABLE, "{}")))
    report = os.environ.pop(REPORT_VARIABLE, None)
    if report and not os.path.exists(report):
        from .loaded_code import loaded_files

        preloaded = sys.modules.get("uqkit.execution.server_preload")
        files = getattr(preloaded, "FILES", None) or loaded_files()  # as the server saw them
        partial = f"{report}.{os.getpid()}"
        try:
            with open(partial, "w") as fh:
                json.dump(files, fh)
            os.replace(partial, report)
        except OSError:  # the parent is gone (its folder with it): nothing to report to
            pass
    from .server_preload import SERVER_PID_VARIABLE

    return int(os.environ.pop(SERVER_PID_VARIABLE, 0)) or os.getppid()
