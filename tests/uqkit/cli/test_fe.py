import json
import subprocess
import sys

import pytest

from uqkit.cli import main

ARGS = ["fe", "--l", "2.0117", "--b", "1.0157", "--t", "0.0019", "--E", "213.118", "--nu",
        "0.3018"]


def test_fe_json(capsys, tmp_path):
    png = tmp_path / "w.png"
    assert main(ARGS + ["--json", "--plot", str(png)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["inputs"] == {"l": 2.0117, "b": 1.0157, "t": 0.0019, "E": 213.118, "nu": 0.3018,
                             "p": 100.0}
    assert out["mesh"] == [20, 10] and out["mode"] == "fast" and out["converged"] is True
    assert [p["name"] for p in out["probes"]] == ["p1", "p2", "p3"]
    assert out["probes"][0]["x"] == 1.0 and out["probes"][0]["y"] == 0.5
    assert out["probes"][0]["w"] < out["probes"][1]["w"] < 0
    # the values are the library's own solve of the same membrane, to the last digit
    from fem import Membrane

    solved = Membrane(l=2.0117, b=1.0157, t=0.0019, E=213.118, nu=0.3018, p=100.0).solve(
        start="ritz")
    assert {p["name"]: p["w"] for p in out["probes"]} == solved.probe_w
    assert out["increments"] >= 1 and out["newton_iterations"] >= 1 and out["seconds"] > 0
    assert png.stat().st_size > 10_000


def test_fe_table(capsys):
    assert main(ARGS + ["--mode", "paper"]) == 0
    text = capsys.readouterr().out
    assert "p1" in text and "converged; 400 increments" in text


@pytest.mark.parametrize("bad, named", [(["--t", "-0.001"], "t=-0.001"),
                                        (["--nu", "0.6"], "nu=0.6"),
                                        (["--E", "abc"], "'abc'"),
                                        (["--nx", "0"], "nx=0"),
                                        (["--nx", "1", "--ny", "1"],
                                         "nx must be an integer >= 2, got nx=1"),
                                        (["--nx", "3", "--ny", "1"],
                                         "ny must be an integer >= 2, got ny=1"),
                                        (["--nx", "100000", "--ny", "100000"], "GiB"),
                                        (["--plot", "w.txt"], "cannot write 'txt' files"),
                                        (["--probe", "c=0.5"], "write a probe as NAME=X,Y"),
                                        (["--plot", "no/such/dir/w.png"], "no directory"),
                                        (["--convergence", "2"], "at least 3 meshes"),
                                        (["--nx", "120", "--ny", "60", "--convergence", "4"],
                                         "the finest mesh (960 x 480) needs about"),
                                        (["--l", "1.5"], "p3=(1.6, 0.8) lies outside the "
                                         "membrane [0, 1.5] x [0, 1.0157]; move the probes "
                                         "with --probe NAME=X,Y, or use --relative")])
def test_fe_bad_input_exit_2_one_line(bad, named):
    args = ARGS.copy()
    if bad[0] in args:
        i = args.index(bad[0])
        args[i + 1] = bad[1]
    else:
        args += bad
    proc = subprocess.run([sys.executable, "-m", "uqkit.cli"] + args, capture_output=True,
                          text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "Traceback" not in proc.stderr


@pytest.mark.parametrize("argv, named", [
    (["study", "membrane", "--out", "{out}", "--train-sizes", "a,b"], "--train-sizes"),
    (["study", "regression", "--out", "{out}", "--seeds", "0"], "seeds=0"),
    (["study", "moons", "--out", "{out}", "--epochs", "-3"], "epochs=-3"),
    (["study", "regression", "--out", "{out}", "--max-iter", "0"], "max_iter=0"),
    (["study", "regression", "--out", "{out}", "--restarts", "0"], "restarts=0"),
    (["study", "moons", "--out", "{out}", "--restarts", "0"], "restarts=0"),
    (["study", "moons", "--out", "{out}", "--max-iter", "0"], "max_iter=0"),
    (["study", "wind", "--out", "{out}", "--tpu", "/no/such.mat"], "no such file"),
    (["study", "tsunami", "--out", "{out}"], "invalid choice: 'tsunami'"),
    (["study", "moons", "--out", "{file}"], "is an existing file, not a directory"),
    (["study", "membrane", "--out", "{file}/sub"], "cannot be written: Not a directory"),
])
def test_study_bad_settings_exit_2(argv, named, capsys, tmp_path):
    (tmp_path / "file").write_text("")
    argv = [a.format(out=tmp_path / "out", file=tmp_path / "file") for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and named in err[0]


def test_version_and_help_say_what_each_option_is(capsys):
    import argparse
    from importlib.metadata import version

    from uqkit.cli import build_parser

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.strip() == f"uqkit {version('uqkit')}"

    def parsers(parser):
        yield parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield from parsers(sub)

    checked = 0
    for parser in parsers(build_parser()):
        for action in parser._actions:
            if action.option_strings and action.dest not in ("help", "version"):
                assert action.help, f"{parser.prog} {action.option_strings[0]} has no help"
                checked += 1
        assert "`" not in parser.format_help(), parser.prog
    assert checked > 40


def test_fe_probes_anywhere_and_relative(capsys):
    small = ["fe", "--l", "1.5", "--b", "0.75", "--t", "0.0015", "--E", "210", "--nu", "0.3"]
    assert main(small + ["--probe", "c=0.75,0.375", "--probe", "q=0.1,0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(p["name"], p["x"], p["y"]) for p in out["probes"]] == [("c", 0.75, 0.375),
                                                                    ("q", 0.1, 0.1)]
    assert main(small + ["--relative", "--json"]) == 0
    rel = json.loads(capsys.readouterr().out)
    # the relative p1 is the centre, the physical probe c above
    assert rel["probes"][0]["relative"] == [0.5, 0.5] and rel["probes"][0]["x"] == 0.75
    assert rel["probes"][0]["w"] == out["probes"][0]["w"]


def test_fe_reports_convergence_strain_and_solve_time_apart_from_startup(capsys):
    assert main(ARGS + ["--nx", "10", "--ny", "5", "--relative", "--convergence", "3",
                        "--json"]) == 0  # three meshes: the order, but no judgement of it
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    conv = out["convergence"]
    assert conv["meshes"] == [[10, 5], [20, 10], [40, 20]]
    assert set(conv["extrapolated"]) == {"p1", "p2", "p3"}
    assert conv["asymptotic"] == {"p1": False, "p2": False, "p3": False}
    assert out["probes"][0]["w"] == conv["values"]["p1"][0]
    # the paper's inputs are far beyond small strains: said, not hidden
    assert out["max_strain"] > 1 and out["strain_limit"] == 0.05
    assert "largest Green-Lagrange strain" in captured.err
    assert 0 < out["seconds"] and "startup_seconds" in out


@pytest.mark.parametrize("extra", [["--p", "0"], ["--probe", "e=0,0.5"],
                                   ["--probe", "q0=0.05,0.05"]])
def test_fe_convergence_json_is_strict_and_a_zero_limit_no_crash(extra, capsys):
    """A limit of 0 (no load, a probe on a clamped edge) stopped in a ZeroDivisionError, and
    an order that did not settle was written as the bare token NaN, which JSON lacks."""
    assert main(ARGS + ["--nx", "10", "--ny", "5", "--convergence", "3", "--json", *extra]) == 0
    out = json.loads(capsys.readouterr().out,
                     parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    assert set(out["convergence"]["relative_error"]) == set(out["convergence"]["values"])


def test_python_dash_m_uqkit_is_the_command():
    done = subprocess.run([sys.executable, "-m", "uqkit", "--version"], capture_output=True,
                          text=True)
    assert done.returncode == 0 and "uqkit" in done.stdout
