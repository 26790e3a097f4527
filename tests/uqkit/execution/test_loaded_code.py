"""One warm pool for every model while the loaded code is unchanged; fresh workers when a
module file any model may use has changed (uqkit.execution.loaded_code)."""
import importlib
import os
import sys

import numpy as np
import pytest

from uqkit import propagate
from uqkit.execution import executors
from uqkit.execution.loaded_code import code_generation, loaded_files


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A directory of the user's modules on the path of this process and of the workers."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    return tmp_path


def _write(path, text):
    """Write a module and move its modification time on, as an editor a moment later does."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    if path.stat().st_mtime_ns <= before:  # a coarse file-system clock
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def _first_output(model):
    """The first output of ``model`` on 8 rows of ones, run on a pool of 2 workers."""
    return propagate(model, np.ones((8, 1)), workers=2, chunk_size=4,
                     progress=False).outputs[0, 0]


def test_the_generation_moves_only_when_a_loaded_file_changes(project):
    _write(project / "gen_first.py", "VALUE = 1\n")
    import gen_first  # noqa: F401

    start = code_generation()
    assert str(project / "gen_first.py") in loaded_files()
    assert code_generation() == start  # nothing changed
    _write(project / "gen_second.py", "VALUE = 2\n")
    import gen_second  # noqa: F401

    assert code_generation() == start  # a module loaded since joins the record
    _write(project / "gen_first.py", "VALUE = 10\n")
    assert code_generation() == start + 1  # a loaded module's file changed
    assert code_generation() == start + 1


def test_models_of_different_modules_share_the_warm_workers(project):
    """The FE truth, importance sampling and the FE Sobol' runs of a reliability study call
    different models; each used to start a pool of its own."""
    _write(project / "share_a.py", "import os\nimport numpy as np\n"
           "def model(X):\n    return np.full((len(X), 1), float(os.getpid()))\n")
    _write(project / "share_b.py", "import os\nimport numpy as np\n"
           "class Model:\n    def __call__(self, X):\n"
           "        return np.full((len(X), 1), float(-os.getpid()))\n")
    import share_a
    import share_b

    X = np.ones((8, 1))
    first = propagate(share_a.model, X, workers=2, chunk_size=1, progress=False)
    pool = executors._pool
    workers = set(pool._processes)
    second = propagate(share_b.Model(), X, workers=2, chunk_size=1, progress=False)
    assert executors._pool is pool and set(pool._processes) == workers
    assert set(first.outputs[:, 0].astype(int)) <= workers
    assert set((-second.outputs[:, 0]).astype(int)) <= workers


def test_a_changed_helper_module_gets_fresh_workers(project):
    """The model's own code is unchanged; the module it calls into changed. A pool kept per
    model identity missed this (the function's fingerprint hashes its own module only)."""
    _write(project / "helper_scale.py", "FACTOR = 2\n")
    _write(project / "helper_model.py", "import helper_scale\n"
           "def model(X):\n    return helper_scale.FACTOR * X\n")
    import helper_model
    import helper_scale

    assert _first_output(helper_model.model) == 2
    _write(project / "helper_scale.py", "FACTOR = 3\n")
    importlib.reload(helper_scale)
    assert _first_output(helper_model.model) == 3


def test_a_module_only_the_workers_loaded_gets_fresh_workers_when_it_changes(project):
    """The model imports its helper as it runs: this process never loads it, the workers
    report it. Edited, it is new code for every model after."""
    _write(project / "lazy_helper.py", "FACTOR = 2\n")
    _write(project / "lazy_model.py", "def model(X):\n    import lazy_helper\n"
           "    return lazy_helper.FACTOR * X\n")
    import lazy_model

    from uqkit.execution import loaded_code

    assert _first_output(lazy_model.model) == 2
    assert "lazy_helper" not in sys.modules
    assert str(project / "lazy_helper.py") in loaded_code._seen  # the workers' report
    _write(project / "lazy_helper.py", "FACTOR = 3\n")
    assert _first_output(lazy_model.model) == 3


def test_a_directory_put_on_the_path_later_reaches_the_workers(project, monkeypatch):
    """Workers take the import path when they start: a module of a directory added since
    (a notebook's sys.path.insert) needs workers started after it."""
    _write(project / "path_first.py", "def model(X):\n    return X + 1\n")
    import path_first

    assert _first_output(path_first.model) == 2
    later = project / "later"
    later.mkdir()
    _write(later / "path_later.py", "def model(X):\n    return X + 5\n")
    monkeypatch.syspath_prepend(str(later))  # this process's path only
    import path_later

    assert _first_output(path_later.model) == 6


def test_importing_joblib_keeps_the_warm_pool():
    """joblib's copy of loky (scikit-learn imports it) registers a "loky" start context of
    its own: a pool asked for after it had other settings, and replaced the warm one. A
    fresh interpreter, where joblib is not imported yet."""
    import subprocess

    code = ("from uqkit.execution.executors import local_executor\n"
            "first = local_executor(2)\n"
            "import joblib  # noqa: F401\n"
            "print(local_executor(2) is first)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "True", out.stderr[-2000:]
