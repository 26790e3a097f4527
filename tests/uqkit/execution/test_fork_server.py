"""The local pool's fork server (Linux): workers share one import of the modules it preloads,
see code that changed, run where the parent runs, and end with the parent. Each test runs a
script in a fresh interpreter, whose fork server is its own."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from uqkit.execution import fork_server

pytestmark = pytest.mark.skipif(not fork_server.available(), reason="fork server: Linux only")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

#: A module that records each import of it: the PID of the importing process, one per line.
PROBE = """
import os
with open({log!r}, "a") as fh:
    fh.write(f"{{os.getpid()}}\\n")
VALUE = {value}
"""


def write_probe(tmp_path, value):
    path = tmp_path / "probe_once.py"
    text = textwrap.dedent(PROBE.format(log=str(tmp_path / "imports"), value=value))
    # another size as well as another time: a change the generation cannot miss
    path.write_text(text + "#" * value + "\n")
    return path


#: Run by the scripts' pools: what a worker holds before its task imports anything.
TASK = """
import os, sys
def look(_):
    probe = sys.modules.get("probe_once")
    torch = sys.modules.get("torch")
    return {"pid": os.getpid(), "value": getattr(probe, "VALUE", None),
            "torch_threads": torch.get_num_threads() if torch else None, "cwd": os.getcwd()}
"""


def run_script(tmp_path, body, timeout=180):
    """Run :data:`TASK` then ``body`` in a fresh interpreter, in a session of its own (its
    signals to its process group reach no other); its last line of output, read as JSON."""
    path = tmp_path / "script.py"
    path.write_text(TASK + textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), ROOT])}
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         timeout=timeout, cwd=str(tmp_path), env=env, start_new_session=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_workers_share_the_servers_one_import_of_a_requested_module(tmp_path):
    """The module is imported once, by the server; every worker starts with it loaded, torch
    with it (requested), capped to one thread; the parent's environment is left as it was."""
    write_probe(tmp_path, 1)
    found = run_script(tmp_path, """
        import json, os
        from uqkit.execution import fork_server
        from uqkit.execution.executors import local_executor
        before = dict(os.environ)
        pool = local_executor(2, preload=["probe_once", "torch"])
        seen = list(pool.map(look, range(8)))
        print(json.dumps({"seen": seen, "server": fork_server.server_pid(),
                          "parent": os.getpid(), "env_kept": dict(os.environ) == before}))
    """)
    imports = [int(p) for p in (tmp_path / "imports").read_text().split()]
    assert imports == [found["server"]]
    workers = {s["pid"] for s in found["seen"]}
    assert len(workers) == 2 and found["server"] not in workers and found["parent"] not in workers
    assert {s["value"] for s in found["seen"]} == {1}
    assert {s["torch_threads"] for s in found["seen"]} == {1}
    assert found["env_kept"]


def test_a_changed_preloaded_module_gets_a_new_server(tmp_path):
    """A server keeps the code it imported: a pool after the module's file changed must fork
    from a new server, or its fresh workers run the old code."""
    write_probe(tmp_path, 1)
    found = run_script(tmp_path, """
        import importlib, json, os, time
        import probe_once
        from uqkit.execution import fork_server
        from uqkit.execution.executors import local_executor
        first = local_executor(2, preload=["probe_once"]).submit(look, 0).result()
        old = fork_server.server_pid()
        with open(probe_once.__file__, "a") as fh:
            fh.write("VALUE = 2\\n")
        importlib.reload(probe_once)
        second = local_executor(2, preload=["probe_once"]).submit(look, 0).result()
        print(json.dumps({"first": first["value"], "second": second["value"],
                          "old_server_gone": old != fork_server.server_pid()
                          and not os.path.exists(f"/proc/{old}")}))
    """)
    assert found == {"first": 1, "second": 2, "old_server_gone": True}


def test_workers_run_in_the_parents_working_directory(tmp_path):
    """Workers forked from a server started elsewhere ran in the server's directory: a model
    reading a relative path read another file."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    found = run_script(tmp_path, """
        import json, os
        from uqkit.execution.executors import local_executor
        os.chdir("a")
        first = local_executor(2).submit(look, 0).result()["cwd"]
        os.chdir("../b")
        second = local_executor(2).submit(look, 0).result()["cwd"]
        print(json.dumps([os.path.basename(first), os.path.basename(second)]))
    """)
    assert found == ["a", "b"]


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_the_server_and_its_workers_end_when_the_parent_is_killed(tmp_path):
    """Each worker holds a copy of the pipe that keeps the server up: unless it closes it,
    the server outlives a killed parent, and the workers, which watch the server, with it."""
    script = tmp_path / "idle.py"
    script.write_text(TASK + textwrap.dedent("""
        import json, os, time
        from uqkit.execution import fork_server
        from uqkit.execution.executors import local_executor
        pool = local_executor(2)
        pids = sorted({pool.submit(look, i).result()["pid"] for i in range(6)})
        print(json.dumps({"server": fork_server.server_pid(), "workers": pids}), flush=True)
        time.sleep(120)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        found = json.loads(proc.stdout.readline())
        pids = [found["server"], *found["workers"]]
        assert all(_alive(p) for p in pids)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(p) for p in pids)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def test_server_modules_takes_the_request_then_what_every_worker_imports():
    names = fork_server.server_modules(["fem", "__main__", "numpy"])
    assert names == ["fem", "numpy", *[n for n in fork_server.WORKER_PACKAGES if n != "numpy"]]


def test_the_start_method_variable_picks_loky_and_a_bad_name_is_refused(tmp_path,
                                                                       monkeypatch):
    """``UQKIT_START_METHOD=loky`` gives fresh interpreters (each imports the module itself,
    no server starts); a name uqkit does not know is refused, naming the variable."""
    write_probe(tmp_path, 1)
    script = """
        import json, os
        from uqkit.execution import fork_server
        from uqkit.execution.executors import local_executor
        pool = local_executor(2, preload=["probe_once"])
        seen = [pool.submit(look, 0).result()["value"]]
        print(json.dumps({"value": seen, "server": fork_server.server_pid()}))
    """
    monkeypatch.setenv("UQKIT_START_METHOD", "loky")
    found = run_script(tmp_path, script)
    assert found == {"value": [None], "server": None}
    from uqkit.execution.executors import local_executor

    monkeypatch.setenv("UQKIT_START_METHOD", "fork")
    with pytest.raises(ValueError, match="UQKIT_START_METHOD='fork'.*preload, loky"):
        local_executor(2)


def test_a_new_server_leaves_a_busy_pool_of_the_old_one_running(tmp_path):
    """Another thread cap needs another server; stopping the old one at once killed the
    workers of a pool still running a task (in another thread here)."""
    found = run_script(tmp_path, """
        import json, threading, time
        from uqkit.execution.executors import local_executor
        def slow(x):
            time.sleep(2.0)
            return x + 1
        running = local_executor(2).submit(slow, 41)
        time.sleep(0.5)  # the task runs
        other = threading.Thread(target=lambda: local_executor(2, threads=2).submit(abs, -1)
                                 .result())
        other.start()
        other.join()
        print(json.dumps(running.result(timeout=60)))
    """)
    assert found == 42


def test_a_plain_fork_of_the_parent_keeps_no_server_running(tmp_path):
    """A child forked from the parent inherits the server's pipe: the old server's stop then
    waited for that child to exit (a multiprocessing 'fork' pool's worker, say)."""
    found = run_script(tmp_path, """
        import json, os, signal, time
        from uqkit.execution import fork_server
        from uqkit.execution.executors import local_executor
        local_executor(2).submit(abs, -1).result()
        old = fork_server.server_pid()
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        t0 = time.monotonic()
        local_executor(2, threads=2).submit(abs, -1).result()  # the old one idle: stopped
        waited = time.monotonic() - t0
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        print(json.dumps({"waited_under_2_s": waited < 2,
                          "old_gone": not os.path.exists(f"/proc/{old}")}))
    """)
    assert found == {"waited_under_2_s": True, "old_gone": True}


def test_an_edited_module_only_the_server_imported_gets_a_new_server(tmp_path):
    """The parent never imports the preloaded module, so its file was not among the loaded
    code's files: after an edit, a new pool's fresh workers came from the old server and ran
    the old code."""
    write_probe(tmp_path, 1)
    found = run_script(tmp_path, """
        import json, sys
        from uqkit.execution.executors import local_executor, release_workers
        first = local_executor(2, preload=["probe_once"]).submit(look, 0).result()["value"]
        with open("probe_once.py", "a") as fh:
            fh.write("VALUE = 2\\n")
        release_workers()
        second = local_executor(2, preload=["probe_once"]).submit(look, 0).result()["value"]
        print(json.dumps([first, second, "probe_once" in sys.modules]))
    """)
    assert found == [1, 2, False]


def test_warm_pool_returns_before_the_server_has_imported(tmp_path):
    """warm_pool's caller goes on with its own imports while the server imports torch: the
    first worker is forked only after them, and a submit in the caller waited for it."""
    found = run_script(tmp_path, """
        import json, time
        from uqkit.execution.executors import warm_pool
        t0 = time.perf_counter()
        futures = warm_pool(2, abs, -3, preload=["torch"])
        returned = time.perf_counter() - t0
        results = [f.result(timeout=120) for f in futures]
        done = time.perf_counter() - t0
        print(json.dumps({"results": results, "returned_first": returned < done / 2}))
    """)
    assert found == {"results": [3, 3], "returned_first": True}


def test_a_ctrl_c_while_the_server_imports_does_not_end_it(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group. The server, started with the
    default SIGINT action, died of it in the middle of its imports (a KeyboardInterrupt
    traceback, then an EOFError in the parent); the parent here survives it by a handler of
    its own."""
    found = run_script(tmp_path, """
        import json, os, signal, time
        signal.signal(signal.SIGINT, lambda *_: None)
        from uqkit.execution.executors import warm_pool
        futures = warm_pool(2, abs, -3, preload=["torch", "scipy.stats", "sklearn"])
        time.sleep(0.3)  # the server imports
        os.killpg(0, signal.SIGINT)
        print(json.dumps([f.result(timeout=120) for f in futures]))
    """)
    assert found == [3, 3]


def test_the_server_imports_from_the_parents_path_not_its_working_directory(tmp_path):
    """CPython 3.11's forkserver ignores the parent's sys.path: run from a folder holding a
    folder named like a package (``tests/`` holds ``fem/``), the server imported that as a
    namespace package and failed, and a module beside the script was not found. A worker's
    environment gets no trace of the fix (PYTHONPATH, PYTHONSAFEPATH)."""
    (tmp_path / "run_here" / "uqkit").mkdir(parents=True)  # named like a package it imports
    (tmp_path / "beside.py").write_text("VALUE = 7\n")
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import json, os, sys
        from uqkit.execution import fork_server
        from uqkit.execution.executors import local_executor
        def look(_):
            import sys
            return [getattr(sys.modules.get("beside"), "VALUE", None),
                    os.environ.get("PYTHONPATH"), os.environ.get("PYTHONSAFEPATH")]
        print(json.dumps(local_executor(2, preload=["beside"]).submit(look, 0).result()))
    """))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, cwd=str(tmp_path / "run_here"), env=env,
                         start_new_session=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [7, None, None]


def test_a_module_that_fails_to_import_in_the_server_leaves_it_running(tmp_path):
    """multiprocessing's preload lets only ImportError pass: a model module that raised
    another error at import ended the server, and the pool failed with an EOFError instead
    of the module's own error in the chunk that needs it."""
    (tmp_path / "broken.py").write_text("raise RuntimeError('broken at import')\n")
    found = run_script(tmp_path, """
        import json
        from uqkit.execution.executors import local_executor
        def use(_):
            import broken  # noqa: F401
        pool = local_executor(2, preload=["broken"])
        try:
            pool.submit(use, 0).result()
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        print(json.dumps([error, pool.submit(abs, -5).result()]))
    """)
    assert found == ["RuntimeError: broken at import", 5]


def test_the_module_imports_where_multiprocessing_has_no_fork_server(tmp_path):
    """Windows' multiprocessing has no forkserver classes: importing the module there must
    work (the local pool asks it whether it is available), and it says no."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import sys
        from multiprocessing import context
        del context.ForkServerProcess, context.ForkServerContext
        from uqkit.execution import fork_server
        sys.platform = "win32"
        print(fork_server.available())
    """)], capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


def test_an_idle_pool_of_another_thread_keeps_its_server(tmp_path):
    """loky keeps a pool per thread: another thread's pool of another thread cap got a new
    server, and the first one, idle, was stopped under its live workers."""
    found = run_script(tmp_path, """
        import json, threading
        from uqkit.execution.executors import local_executor
        first = local_executor(2)
        first.submit(abs, -1).result()
        other = threading.Thread(target=lambda: local_executor(2, threads=2).submit(abs, -2)
                                 .result())
        other.start()
        other.join()
        print(json.dumps(list(first.map(abs, [-3, -4, -5]))))
    """)
    assert found == [3, 4, 5]



def test_an_edit_after_the_servers_import_and_before_its_first_worker_counts(tmp_path):
    """The first worker reported the files as it saw them at its start: an edit made after
    the server had imported the module, but before any worker was forked, was never seen."""
    write_probe(tmp_path, 1)
    found = run_script(tmp_path, """
        import json, os, time
        from uqkit.execution.executors import local_executor, release_workers
        pool = local_executor(2, preload=["probe_once"])  # the server starts; no worker yet
        while not os.path.exists("imports"):  # the server has imported the module
            time.sleep(0.01)
        with open("probe_once.py", "a") as fh:
            fh.write("VALUE = 2\\n")
        first = pool.submit(look, 0).result()["value"]
        release_workers()
        second = local_executor(2, preload=["probe_once"]).submit(look, 0).result()["value"]
        print(json.dumps([first, second]))
    """)
    assert found == [1, 2]


def test_a_pool_whose_server_was_stopped_and_started_again_gets_workers_that_live(tmp_path):
    """A pool whose idle workers had exited lost its server to another thread's request (no
    live worker); its next task started the server again, under another process id, and its
    new workers, which watched the old one, ended themselves at once."""
    found = run_script(tmp_path, """
        import json, threading, time
        from uqkit.execution import executors, fork_server
        executors.IDLE_SECONDS = 1  # the workers exit after a second idle
        first = executors.local_executor(2)
        first.submit(abs, -1).result()
        old = fork_server.server_pid()
        time.sleep(3)
        other = threading.Thread(target=lambda: executors.local_executor(2, threads=2)
                                 .submit(abs, -2).result())
        other.start()
        other.join()
        stopped = not fork_server._servers[1].running()
        print(json.dumps([stopped, list(first.map(abs, [-3, -4, -5]))]))
    """)
    assert found == [True, [3, 4, 5]]


def test_a_pool_asked_for_from_a_removed_working_directory_says_so(tmp_path):
    """multiprocessing reads the working directory to start a server or a worker, and
    ``os.getcwd`` raises once it was removed (a test's temporary folder, say): a bare
    FileNotFoundError without a file name, deep in multiprocessing."""
    found = run_script(tmp_path, """
        import json, os, shutil
        from uqkit.execution.executors import local_executor
        os.mkdir("gone")
        os.chdir("gone")
        shutil.rmtree(os.path.join("..", "gone"))
        try:
            local_executor(2)
        except RuntimeError as exc:
            print(json.dumps(str(exc)))
    """)
    assert "working directory was removed" in found



def test_a_server_forking_a_worker_is_not_stopped(tmp_path):
    """Until a worker is the server's child, the server has no live worker to show:
    another thread's request stopped it in the middle of the fork, and the pool broke."""
    found = run_script(tmp_path, """
        import json
        from uqkit.execution import fork_server
        from uqkit.execution.executors import THREAD_VARIABLES
        env = {var: "1" for var in THREAD_VARIABLES}
        server = fork_server.ensure_server([], env, 1, "a")
        fork_server.ensure_server([], env, 2, "b")  # another is the last asked for
        server.launching = 1  # as _launch has it while it forks a worker
        fork_server.stop_unused()
        kept = server.running()
        server.launching = 0
        fork_server.stop_unused()
        print(json.dumps([kept, server.running()]))
    """)
    assert found == [True, False]
