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
    assert code == 1  # the analysis not made: a run-time outcome, not a bad study file (2)


def test_an_output_named_like_an_input_is_refused_before_any_run(tmp_path, capsys):
    """It ran every run, then could not write runs.csv (left empty)."""
    config = _study(tmp_path, GOOD.replace("[outputs.z]", "[outputs.a]"))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    assert "the names ['a'] would be two columns of runs.csv" in capsys.readouterr().err
    assert not (tmp_path / "out" / "store").exists()


def test_inputs_named_like_runs_csvs_own_columns_are_refused_before_any_run(tmp_path, capsys):
    """Inputs named status and reason ran, and runs.csv had the header status, reason, y,
    status, reason: pandas read the inputs as the runs' status."""
    text = GOOD.replace("\na = ", "\nstatus = ").replace("{{ a }}", "{{ status }}")
    config = _study(tmp_path, text, SOLVER.replace("{{ a }}", "{{ status }}"))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    assert "the names ['status'] would be two columns of runs.csv" in capsys.readouterr().err
    assert not (tmp_path / "out" / "store").exists()


def test_runs_that_fail_alike_count_as_one_reason_and_all_failed_is_exit_code_1(tmp_path,
                                                                               capsys):
    """Every reason held its run's own directory: 64 runs failing on one missing column were
    64 reasons of one run each, and the command exited 0 with no statistics at all."""
    text = GOOD.replace('column = "z"', 'column = "zz"').split("[failure]")[0]
    config = _study(tmp_path, text)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 1
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["ok"] == 0 and len(summary["failures"]) == 1
    (reason, count), = summary["failures"].items()
    assert count == 64 and "zz" in reason and "run dir" not in reason
    err = capsys.readouterr().err
    assert "every one of the 64 runs failed (64 x " in err


def test_a_bad_failure_option_value_is_refused_before_any_run(tmp_path, capsys):
    """n = "100" was refused after the main study and the Sobol' runs, and the message did
    not say [failure]."""
    config = _study(tmp_path, GOOD.replace('method = "form"', 'method = "mc"\nn = "100"'))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "[failure] n must be an integer >= 1, got n='100'" in err
    assert not (tmp_path / "out" / "store").exists()


def test_a_failure_analysis_that_does_not_converge_is_one_line_and_exit_code_1(tmp_path,
                                                                              capsys):
    """FORM's ConvergenceError ended in a traceback."""
    solver = "awk 'BEGIN { printf \"y %.17g\\n\", exp({{ a }}) + ({{ b }})^3 * {{ c }} }'\n" \
             "echo z > out.csv; echo 1 >> out.csv\n"
    config = _study(tmp_path, GOOD.replace('method = "form"', 'method = "form"\nmax_iter = 1'),
                    solver)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("uqkit run: [failure] FORM did not "), err


def test_changed_analyses_rerun_beside_the_kept_runs_and_leave_no_stale_file(tmp_path,
                                                                           capsys):
    """Another [sobol] n was refused after the main study ("holds other inputs"), a changed
    [failure] limit too, and sobol.json and failure.json of the earlier settings stayed."""
    sobol = "[sobol]\nn = 8\nbootstrap = 0\n"
    out = ["--out", str(tmp_path / "out"), "--no-progress"]
    config = _study(tmp_path, GOOD + sobol)
    assert main(["run", str(config), *out]) == 0
    first = json.loads((tmp_path / "out" / "sobol.json").read_text())
    _study(tmp_path, GOOD.replace("above = 6.0", "above = 7.0") + sobol.replace("8", "16"))
    assert main(["run", str(config), *out]) == 0
    again = json.loads((tmp_path / "out" / "sobol.json").read_text())
    assert (first["model_runs"], again["model_runs"]) == (8 * 4, 16 * 4)
    failure = json.loads((tmp_path / "out" / "failure.json").read_text())
    assert failure["settings"]["above"] == 7.0
    assert failure["pf"] == pytest.approx(stats.norm.sf(6 / np.sqrt(13)), rel=1e-6)
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["loaded"] == 64
    _study(tmp_path, GOOD.split("[failure]")[0])  # no analyses asked for: none left
    assert main(["run", str(config), *out]) == 0
    assert not (tmp_path / "out" / "sobol.json").exists()
    assert not (tmp_path / "out" / "failure.json").exists()


def test_sobol_replicates_from_the_study_file_keep_a_store_of_their_own(tmp_path):
    """[sobol] replicates = 2 gives Student-t intervals from two designs of n / 2 rows, in a
    store beside the bootstrap's: switching between them recomputes nothing of the other."""
    out = ["--out", str(tmp_path / "out"), "--no-progress"]
    main_study = GOOD.split("[failure]")[0]
    config = _study(tmp_path, main_study + "[sobol]\nn = 32\nreplicates = 2\n")
    assert main(["run", str(config), *out]) == 0
    result = json.loads((tmp_path / "out" / "sobol.json").read_text())
    assert result["info"] == {"replicates": 2, "replicate_n": 16}
    assert result["model_runs"] == 32 * 4
    assert (tmp_path / "out" / "sobol-store" / "n32-seed0-r2").is_dir()
    lower, upper = np.array(result["first_ci"])[..., 0]  # y = a + 3 b: 4 / 13 and 9 / 13
    assert np.all((lower < [4 / 13, 9 / 13]) & ([4 / 13, 9 / 13] < upper))
    assert np.array(result["total"])[1, 1] == 0  # z = a^2 does not depend on b


def test_timed_out_runs_are_made_again_with_a_longer_timeout(tmp_path, capsys):
    """A longer timeout was another model ("model.timeout: stored 2, now 40"), and no option
    made the timed-out runs again."""
    solver = "if awk 'BEGIN { exit !({{ a }} > 3) }'; then sleep {{ c }}; fi\n" + SOLVER
    text = GOOD.split("[failure]")[0].replace("timeout = 30", "timeout = 1")
    config = _study(tmp_path, text, solver)
    out = ["--out", str(tmp_path / "out"), "--no-progress"]
    assert main(["run", str(config), *out]) == 0
    first = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert first["failed"] > 0 and all("timeout" in r for r in first["failures"])
    _study(tmp_path, text.replace("timeout = 1", "timeout = 30"), solver)
    assert main(["run", str(config), *out]) == 0  # errors only: the timeouts stay
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["failed"] == \
        first["failed"]
    assert main(["run", str(config), *out, "--retry-failed", "all"]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["failed"], summary["computed"]) == (0, first["failed"])


def test_a_template_folder_that_holds_the_study_file_or_out_is_refused(tmp_path, capsys):
    """template = "." made every run copy the study file and --out into its run directory,
    and each rerun found another template."""
    config = _study(tmp_path, GOOD.replace('template = "run.sh"', 'template = "."'))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    assert "is a folder that holds this study file" in capsys.readouterr().err
    (tmp_path / "deck").mkdir()
    (tmp_path / "deck" / "run.sh").write_text(SOLVER)
    config = _study(tmp_path, GOOD.replace('template = "run.sh"', 'template = "deck"'))
    assert main(["run", str(config), "--out", str(tmp_path / "deck" / "out"),
                 "--no-progress"]) == 2
    assert "is inside the template folder" in capsys.readouterr().err


@pytest.mark.parametrize("old, new, message", [
    ("constants = { c = 3.0 }", "constants = 5", "constants must be a table of names and "
                                                 "values, got 5"),
    ("timeout = 30", "timeout = 30\nrender = 5", "render must be a file pattern or a list of "
                                                 "them, got 5"),
    ("timeout = 30", 'timeout = 30\ntemplate_options = "x"', "template_options must be a table "
                                                             "of Jinja2 options, got 'x'"),
    ("timeout = 30", 'timeout = 30\nshell = "false"', "shell must be true or false, got "
                                                      "'false'"),
    ('command = ["sh", "run.sh"]', "command = 5", "command must be a string or a list of "
                                                  "strings, got 5"),
])
def test_model_keys_of_the_wrong_kind_are_named(tmp_path, capsys, old, new, message):
    """'int' object is not iterable, naming no key; shell = "false" was true."""
    config = _study(tmp_path, GOOD.replace(old, new))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"[model] {message}" in err, err


def test_a_refused_rerun_leaves_the_earlier_result_files(tmp_path, capsys):
    """The result files were removed before the store could refuse the run (another seed):
    the refused rerun left the store without its runs.csv and summary.json."""
    config = _study(tmp_path, GOOD.split("[failure]")[0])
    out = ["--out", str(tmp_path / "out"), "--no-progress"]
    assert main(["run", str(config), *out]) == 0
    before = (tmp_path / "out" / "summary.json").read_text()
    assert main(["run", str(config), *out, "--seed", "8"]) == 2
    assert (tmp_path / "out" / "summary.json").read_text() == before
    assert (tmp_path / "out" / "runs.csv").exists()


def test_analyses_stopped_by_failed_runs_exit_1_with_a_remedy_and_keep_the_runs(tmp_path,
                                                                                 capsys):
    """Sobol' indices and a failure probability need every run: where some failed, each
    analysis says it was not made and what to do, the other is still tried, the runs' files
    stay, and the exit code is 1 (a run-time outcome, not 2, a bad study file)."""
    text = GOOD.replace('method = "form"', 'method = "mc"\nn = 200') + \
        "\n[sobol]\nn = 16\n"
    config = _study(tmp_path, text,
                    "awk 'BEGIN { if ({{ a }} > 4) exit 3; "
                    "printf \"y %.17g\\n\", {{ a }} + {{ b }} }'\n"
                    "echo z > out.csv; echo 1 >> out.csv\n")
    code = main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1, err
    for name in ("sobol", "failure"):
        line = next(x for x in err.splitlines() if x.startswith(f"uqkit run: [{name}] not made"))
        assert "failed on" in line and "no match of" in line and "rerun" in line, line
    assert (tmp_path / "out" / "runs.csv").exists() and (tmp_path / "out" /
                                                        "summary.json").exists()
    assert not (tmp_path / "out" / "sobol.json").exists()


def test_a_warning_of_the_command_is_one_line_without_uqkits_source(tmp_path):
    """Python's format printed uqkit's file, line number and source line under each warning
    (``s = sobol_indices(config.model, ...``), which say nothing to a user of the command."""
    import subprocess
    import sys

    config = _study(tmp_path, GOOD.replace("n = 64", "n = 8").split("[failure]")[0])
    out = subprocess.run([sys.executable, "-m", "uqkit.cli", "run", str(config), "--out",
                          str(tmp_path / "out"), "--no-progress"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stderr.strip().splitlines()
    assert any(x.startswith("uqkit: UserWarning: describe: only 8 values") for x in lines), lines
    assert not any(".py:" in x or "describe(" in x for x in lines), lines


def test_a_refused_study_leaves_no_out_folder(tmp_path, capsys):
    config = _study(tmp_path, GOOD.replace("[outputs.z]", "[outputs.a]"))
    assert main(["run", str(config), "--out", str(tmp_path / "new"), "--no-progress"]) == 2
    assert not (tmp_path / "new").exists()


def test_workers_and_dask_exclude_each_other(tmp_path, capsys):
    """Both were taken, and --workers was ignored without a word."""
    config = _study(tmp_path)
    code = main(["run", str(config), "--out", str(tmp_path / "out"), "--workers", "2",
                 "--dask", "tcp://127.0.0.1:1", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "not allowed with argument" in err, err


def test_the_error_of_an_lhs_mean_is_said_to_be_that_of_independent_draws(tmp_path, capsys):
    config = _study(tmp_path, GOOD.split("[failure]")[0])
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    assert "(+-: the standard error of 64 independent draws, std/sqrt(n); that of this lhs " \
        "sample is usually smaller)" in capsys.readouterr().out


FAILING = ("awk 'BEGIN { if ({{ a }} > 4) exit 3; "
           "printf \"y %.17g\\n\", {{ a }} + {{ b }} }'\necho z > out.csv; echo 1 >> out.csv\n")


def test_failed_runs_counted_as_failures_from_the_study_file(tmp_path, capsys):
    """A program that fails where a > 4 (y = a + b, failure y > 6: about as deep): the study
    stops its analysis (exit 1, naming the remedy); with ``failed_runs = "failure"`` added,
    the rerun counts the failed runs as failures, says how many, and makes no run again."""
    text = GOOD.replace('method = "form"', 'method = "mc"\nn = 400')
    config = _study(tmp_path, text, FAILING)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 1
    assert 'failed_runs = "failure"' in capsys.readouterr().err
    config.write_text(text.replace("n = 400", 'n = 400\nfailed_runs = "failure"'))
    code = main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    line = next(x for x in captured.out.splitlines() if x.startswith("P[y > 6.0]"))
    assert "failed runs counted as failures" in line, line
    failure = json.loads((tmp_path / "out" / "failure.json").read_text())
    assert failure["info"]["failed_runs"] > 0 and failure["settings"]["failed_runs"] == "failure"
    assert failure["info"]["computed_runs"] == 0  # the 400 runs of the first try were kept


def test_counting_failed_runs_with_active_learning_is_refused_before_any_run(tmp_path,
                                                                             capsys):
    config = _study(tmp_path, GOOD.replace('method = "form"',
                                           'method = "active"\nfailed_runs = "failure"'))
    code = main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "failed_runs='failure' is for the methods" in err, err
    assert "not 'active'" in err, err
    assert not (tmp_path / "out" / "store").exists()


def test_a_random_rule_written_in_capitals_gets_no_note_on_its_error(tmp_path, capsys):
    config = _study(tmp_path, GOOD.split("[failure]")[0].replace('rule = "lhs"',
                                                                 'rule = "Random"'))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    assert "independent draws" not in capsys.readouterr().out


def test_dask_without_distributed_leaves_no_out_folder(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)
    config = _study(tmp_path)
    code = main(["run", str(config), "--out", str(tmp_path / "new"), "--dask",
                 "tcp://127.0.0.1:1", "--no-progress"])
    assert code == 2 and 'pip install "uqkit[dask]"' in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
