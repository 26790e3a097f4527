"""``uqkit run CONFIG.toml``: its files against the runs, and bad files refused with exit
code 2 and one line that names the bad value."""
import csv
import json
import textwrap

import numpy as np
import pytest
from scipy import stats

from uqkit.cli import main

GOOD = """\
[inputs]
a = "normal(1, 2)"
b = "normal(0, 1)"

[model]
template = "run.sh"
command = ["sh", "run.sh"]
timeout = 30
constants = { c = 3.0 }

[outputs.y]
regex = '^y (\\S+)$'

[outputs.z]
table = "out.csv"
column = "z"

[sampling]
n = 64
rule = "lhs"
seed = 7

[failure]
output = "y"
above = 6.0
method = "form"
"""
SOLVER = """\
awk 'BEGIN { printf "y %.17g\\n", {{ a }} + {{ c }} * ({{ b }}) }'
echo z > out.csv
awk 'BEGIN { printf "%.17g\\n", ({{ a }}) * ({{ a }}) }' >> out.csv
"""


def _study(tmp_path, text=GOOD, solver=SOLVER):
    (tmp_path / "run.sh").write_text(solver)
    (tmp_path / "study.toml").write_text(text)
    return tmp_path / "study.toml"


def test_a_study_file_writes_runs_statistics_and_the_failure_probability(tmp_path, capsys):
    config = _study(tmp_path)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    with open(tmp_path / "out" / "runs.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 64
    a, b = (np.array([float(r[k]) for r in rows]) for k in "ab")
    assert np.array_equal([float(r["y"]) for r in rows], a + 3.0 * b)
    assert np.array_equal([float(r["z"]) for r in rows], a * a)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["ok"] == 64 and summary["computed"] == 64
    assert summary["outputs"]["y"]["mean"] == pytest.approx((a + 3 * b).mean(), rel=1e-12)
    failure = json.loads((tmp_path / "out" / "failure.json").read_text())
    # y = a + 3 b ~ N(1, 13): FORM is exact on a linear limit state of normal inputs
    assert failure["pf"] == pytest.approx(stats.norm.sf(5 / np.sqrt(13)), rel=1e-6)
    out = capsys.readouterr().out
    assert "64 runs: 64 ok, 0 failed" in out and "P[y > 6.0] = " in out
    # a rerun loads every run
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["loaded"] == 64


def test_failed_runs_are_reported_loudly(tmp_path, capsys):
    config = _study(tmp_path, GOOD.replace("[failure]", "[x]").split("[x]")[0],
                    "awk 'BEGIN { if ({{ a }} > 2) exit 1; print \"y\", {{ a }} + {{ b }} "
                    "* {{ c }} }'\necho z > out.csv; echo {{ b }} >> out.csv\n")
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "runs failed" in err and "biased" in err


BAD = [
    ('b = "normal(0, 1)"', 'b = "nromal(0, 1)"', r"\[inputs\] b = 'nromal\(0, 1\)'"),
    ('template = "run.sh"', 'template = "missing.sh"', r"template '.*missing.sh': no such"),
    ("regex = '^y (\\S+)$'", "regex = '^y (\\S+$'", r"bad regular expression '\^y \(\\\\S\+\$'"),
    ("timeout = 30", "timeout = -1", r"timeout=-1"),
    ("timeout = 30", "timout = 30", r"unknown key 'timout'"),
    ('command = ["sh", "run.sh"]', 'command = ["no-such-solver-xyz"]',
     r"'no-such-solver-xyz' is not found"),
    ('output = "y"', 'output = "w"', r"output = 'w' is not an output"),
    ('method = "form"', 'method = "form"\nn = 100', r"unknown option of method 'form' 'n'"),
    ("n = 64", "n = 0", r"\[sampling\] n must be a positive integer, got n=0"),
    ('column = "z"', 'column = "z"\nregex = "(.)"', r"exactly one of regex, table or json"),
    ("[failure]", "[sobol]\nn = 100\n[failure]", r"\[sobol\] n must be a power of 2, got 100"),
]


@pytest.mark.parametrize("old, new, message", BAD)
def test_a_bad_study_file_exits_2_with_one_line_naming_the_value(tmp_path, capsys, old, new,
                                                                  message):
    assert old in GOOD
    config = _study(tmp_path, GOOD.replace(old, new, 1))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("uqkit run: "), err
    assert __import__("re").search(message, err), err


def test_an_undefined_placeholder_in_the_deck_is_refused(tmp_path, capsys):
    config = _study(tmp_path, solver=SOLVER + "echo {{ d }}\n")
    assert main(["run", str(config), "--out", str(tmp_path / "out")]) == 2
    assert "run.sh, line 4: the placeholder 'd' names no input" in capsys.readouterr().err


def test_invalid_toml_is_refused(tmp_path, capsys):
    config = _study(tmp_path, textwrap.dedent(GOOD) + "[inputs\n")
    assert main(["run", str(config), "--out", str(tmp_path / "out")]) == 2
    assert "not valid TOML" in capsys.readouterr().err


def test_a_bad_seed_from_the_command_line_is_not_blamed_on_the_file(tmp_path, capsys):
    """--seed -1 was reported as the file's '[sampling] seed'."""
    config = _study(tmp_path)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--seed", "-1"]) == 2
    err = capsys.readouterr().err
    assert "[sampling] (with --seed from the command line) seed must be" in err, err


@pytest.mark.parametrize("make, out, message", [
    (lambda p: p.mkdir(), "out", r"is a directory, not a study file \(a .toml file\)"),
    (lambda p: p.write_bytes(b"[inputs]\nx = \xff\n"), "out",
     r"not a text file in UTF-8 \(invalid start byte at byte 13\)"),
    (lambda p: p.write_text("[inputs]\n"), "", "--out must name a directory, got an empty "
                                                "string"),
])
def test_an_unreadable_study_file_or_an_empty_out_is_one_line(tmp_path, capsys, make, out,
                                                               message):
    """A directory given as the study file ended in IsADirectoryError's traceback, a file in
    another encoding named no file, and --out "" wrote into the current directory."""
    config = tmp_path / "study.toml"
    make(config)
    assert main(["run", str(config), "--out", out and str(tmp_path / out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and __import__("re").search(message, err), err


def test_an_output_directory_of_other_samples_is_refused_in_one_line(tmp_path, capsys):
    config = _study(tmp_path)
    out = str(tmp_path / "out")
    assert main(["run", str(config), "--out", out, "--n", "8", "--no-progress"]) == 0
    capsys.readouterr()
    # LHS of another size: other samples, which the store refuses to mix
    assert main(["run", str(config), "--out", out, "--n", "12", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds other inputs than this run" in err


def test_failed_runs_are_reported_before_an_analysis_that_stops_on_them(tmp_path, capsys):
    """The warning came after the [failure] analysis, which stopped on the same failures:
    it was never printed."""
    config = _study(tmp_path, GOOD,
                    "awk 'BEGIN { if ({{ a }} > 2) exit 1; print \"y\", {{ a }} + {{ b }} "
                    "* {{ c }} }'\necho z > out.csv; echo {{ b }} >> out.csv\n")
    code = main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert "runs failed" in err and "biased" in err
    assert err.index("runs failed") < err.index("the model returned NaN or failed")
    assert code == 2


def test_an_output_named_like_an_input_is_refused_before_any_run(tmp_path, capsys):
    """It ran every run, then could not write runs.csv (left empty)."""
    config = _study(tmp_path, GOOD.replace("[outputs.z]", "[outputs.a]"))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    assert "output names ['a'] are also input names" in capsys.readouterr().err
    assert not (tmp_path / "out" / "store").exists()
