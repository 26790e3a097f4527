"""``uqkit run CONFIG.toml`` with a Python function of one run (``[model] python = ...``):
the same files and analyses as for a program, against the formula, and bad settings refused
in one line."""
import csv
import json

import numpy as np
import pytest
from scipy import stats

from uqkit.cli import main
from uqkit.external.config import ConfigError, load_config

STUDY = """\
[inputs]
a = "normal(1, 2)"
b = "normal(0, 1)"

[model]
python = "beam.py:response"
outputs = ["y", "z"]

[sampling]
n = 64
rule = "lhs"
seed = 7

[failure]
output = "y"
above = 6.0
method = "form"
"""
BEAM = """\
from helper import SCALE   # a sibling module: the file's folder is on sys.path


def response(b, a):        # by keyword: the order of the arguments does not matter
    return a + SCALE * b, a * a


import functools  # noqa: E402
partial_response = functools.partial(response, 1.0)
"""


def _study(tmp_path, text=STUDY, code=BEAM):
    (tmp_path / "beam.py").write_text(code)
    (tmp_path / "helper.py").write_text("SCALE = 3.0\n")
    (tmp_path / "study.toml").write_text(text)
    return tmp_path / "study.toml"


def test_a_python_function_runs_on_two_workers_with_the_programs_outputs(tmp_path, capsys):
    config = _study(tmp_path)
    out = tmp_path / "out"
    assert main(["run", str(config), "--out", str(out), "--workers", "2",
                 "--no-progress"]) == 0
    with open(out / "runs.csv") as fh:
        rows = list(csv.DictReader(fh))
    a, b = (np.array([float(r[k]) for r in rows]) for k in "ab")
    assert np.array_equal([float(r["y"]) for r in rows], a + 3.0 * b)
    assert np.array_equal([float(r["z"]) for r in rows], a * a)
    failure = json.loads((out / "failure.json").read_text())
    # y = a + 3 b ~ N(1, 13): FORM is exact on a linear limit state of normal inputs
    assert failure["pf"] == pytest.approx(stats.norm.sf(5 / np.sqrt(13)), rel=1e-6)
    assert "64 runs: 64 ok, 0 failed" in capsys.readouterr().out
    # a rerun loads every run; an edited function is another model, refused by name
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
    assert json.loads((out / "summary.json").read_text())["loaded"] == 64
    capsys.readouterr()
    (tmp_path / "beam.py").write_text(BEAM.replace("a * a", "a * a * a"))
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 2
    assert "model.per_run.fingerprint: stored" in capsys.readouterr().err
    # a constant it imports from a module beside it, edited: another model too (a review
    # found the old runs served), and in this process the module is read afresh
    (tmp_path / "beam.py").write_text(BEAM)
    (tmp_path / "helper.py").write_text("SCALE = 100.0\n")
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 2
    assert "model.per_run.fingerprint: stored" in capsys.readouterr().err
    assert main(["run", str(config), "--out", str(tmp_path / "out2"), "--no-progress"]) == 0
    with open(tmp_path / "out2" / "runs.csv") as fh:
        assert [float(r["y"]) for r in csv.DictReader(fh)] == (a + 100.0 * b).tolist()
    # settings that change how the runs are made, not what they give, keep the store
    (tmp_path / "helper.py").write_text("SCALE = 3.0\n")
    config.write_text(STUDY.replace('outputs = ["y", "z"]',
                                    'outputs = ["y", "z"]\nchunk_size = 3\ncores_per_run = 2'))
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
    assert json.loads((out / "summary.json").read_text())["loaded"] == 64


def test_keywords_false_gives_the_inputs_as_one_array_in_the_files_order(tmp_path):
    config = _study(tmp_path, STUDY.replace('outputs = ["y", "z"]',
                                            'outputs = ["y", "z"]\nkeywords = false'),
                    "def response(x):\n    return x[0] + 3 * x[1], x[0] * x[0]\n")
    model = load_config(config).model
    out = model(np.array([[1.0, 2.0]]))
    assert out.values.tolist() == [[7.0, 1.0]]


BAD = [
    ('python = "beam.py:response"', 'python = "beam.py"', r"must be \"FILE.py:NAME\""),
    ('python = "beam.py:response"', 'python = "nope.py:response"', r"no such file"),
    ('python = "beam.py:response"', 'python = "beam.py:respons"', r"has no function 'respons'"),
    ('python = "beam.py:response"', 'python = "beam.py:SCALE"',
     r"has no function 'SCALE' \(it is float\)"),
    ('python = "beam.py:response"', 'python = "no_such_module_xyz:f"',
     r"importing 'no_such_module_xyz' raised ModuleNotFoundError"),
    ('outputs = ["y", "z"]', 'outputs = "y"', r"outputs must list the function's outputs"),
    ('outputs = ["y", "z"]', 'outputs = ["y", "z"]\ntimeout = 3',
     r"'timeout' is for a program, not for a Python function"),
    ('outputs = ["y", "z"]', 'outputs = ["y", "z"]\nkeywords = 1', r"keywords must be true"),
    ('[sampling]', '[outputs.y]\nregex = "(.)"\n[sampling]', r"\[outputs\] reads a program's"),
    ('output = "y"', 'output = "w"', r"output = 'w' is not an output \(outputs: y, z\)"),
    ('a = "normal(1, 2)"', 'c = "normal(1, 2)"',
     r"response\(b, a\) cannot take the inputs c, b as keywords"),
    ('python = "beam.py:response"', 'python = "beam.py:partial_response"',
     r"partial\(a\) cannot take the inputs a, b as keywords"),
]


@pytest.mark.parametrize("old, new, message", BAD)
def test_a_bad_python_model_exits_2_with_one_line_naming_the_value(tmp_path, capsys, old, new,
                                                                    message):
    assert old in STUDY
    config = _study(tmp_path, STUDY.replace(old, new, 1))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("uqkit run: "), err
    assert __import__("re").search(message, err), err


def test_two_study_files_with_modules_of_the_same_names_each_get_their_own(tmp_path):
    """Loaded in one process, the second file's function ran with the first's helper."""
    for scale, folder in ((3.0, tmp_path / "A"), (5.0, tmp_path / "B")):
        folder.mkdir()
        _study(folder)
        (folder / "helper.py").write_text(f"SCALE = {scale}\n")
    first, second = (load_config(tmp_path / f / "study.toml").model for f in "AB")
    X = np.array([[1.0, 2.0]])
    assert first(X).values.tolist() == [[7.0, 1.0]]
    assert second(X).values.tolist() == [[11.0, 1.0]]


def test_a_module_beside_the_study_file_is_found_by_its_name(tmp_path, monkeypatch):
    """MODULE:NAME found the module only where the current directory was on sys.path
    (python -m, not the uqkit command)."""
    config = _study(tmp_path, STUDY.replace("beam.py:response", "beam:response"))
    monkeypatch.chdir("/")
    monkeypatch.setattr("sys.path", [p for p in __import__("sys").path if p not in ("", ".")])
    assert load_config(config).model(np.array([[1.0, 2.0]])).values.tolist() == [[7.0, 1.0]]


def test_a_module_that_raises_on_import_is_named(tmp_path):
    config = _study(tmp_path, code="raise RuntimeError('licence server down')\n")
    with pytest.raises(ConfigError, match=r"importing 'beam.py' raised RuntimeError: licence "
                                          "server down"):
        load_config(config)


def test_a_programs_file_may_not_use_the_python_keys(tmp_path):
    (tmp_path / "run.sh").write_text("echo {{ a }}\n")
    (tmp_path / "study.toml").write_text(
        '[inputs]\na = "normal(0, 1)"\n[model]\ntemplate = "run.sh"\ncommand = ["sh", '
        '"run.sh"]\nkeywords = true\n[outputs.y]\nregex = "(.+)"\n')
    with pytest.raises(ConfigError, match="'keywords' is for a Python function"):
        load_config(tmp_path / "study.toml")


def test_a_reader_that_goes_away_ends_the_command_without_a_traceback(tmp_path):
    """``uqkit run ... | head -1`` ended in BrokenPipeError's traceback."""
    import subprocess
    import sys

    config = _study(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "uqkit.cli", "run", str(config), "--out",
                             str(tmp_path / "out"), "--no-progress", "--workers", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 1
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["ok"] == 64


def test_a_module_with_a_lock_runs_on_a_local_pool(tmp_path):
    """Every module beside the study file went to the workers by value, for a local pool
    too: a module-global lock made every run fail ("cannot pickle '_thread.lock'")."""
    code = "import threading\nLOCK = threading.Lock()\n\n\n" \
           "def response(a, b):\n    with LOCK:\n        return a + 3.0 * b, a * a\n"
    (tmp_path / "lockbeam.py").write_text(code)
    config = _study(tmp_path, STUDY.replace('"beam.py:response"', '"lockbeam:response"'))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--workers", "2",
                 "--no-progress"]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["ok"] == 64
