"""Output parsers against files whose values are known."""
import numpy as np
import pytest

from uqkit.external.outputs import (JSONValue, Output, OutputError, Regex, Table, as_output,
                                    read_output)

DAT = """\
 displacements (vx,vy,vz) for set TIP and time  0.5000000E+00

        21  1.0E-14 -5.0E+00  0.0

 displacements (vx,vy,vz) for set TIP and time  0.1000000E+01

        21  2.0E-14 -1.1770120E+01  3.0D-02
"""


@pytest.fixture
def run_dir(tmp_path):
    (tmp_path / "beam.dat").write_text(DAT)
    (tmp_path / "stdout.txt").write_text("iteration 1 residual 1e-3\n"
                                         "iteration 2 residual 4.5e-9\n")
    (tmp_path / "hist.txt").write_text("# t  u  v\n0.0 0.0 0.0\n0.5 1.5 -2.5\n1.0 3.0 -5.0\n")
    (tmp_path / "res.csv").write_text("step,u,v\n1,0.5,2\n2,0.75,4\n")
    (tmp_path / "r.json").write_text('{"a": {"b": [1.5, {"c": -2}]}, "s": "x"}')
    return tmp_path


LINE = r"^\s*21\s+(\S+)\s+(\S+)\s+(\S+)\s*$"


def test_regex_first_last_and_all_matches(run_dir):
    assert Regex(LINE, file="beam.dat", group=2)(run_dir).tolist() == [-11.77012]
    assert Regex(LINE, file="beam.dat", group=2, match="first")(run_dir).tolist() == [-5.0]
    assert Regex(LINE, file="beam.dat", group=2, match="all", size=2)(run_dir).tolist() == \
        [-5.0, -11.77012]
    assert Regex(LINE, file="beam.dat", group=3)(run_dir).tolist() == [0.03]  # Fortran D


def test_regex_on_standard_output_by_default(run_dir):
    assert Regex(r"residual (\S+)")(run_dir).tolist() == [4.5e-9]


def test_regex_that_finds_nothing_or_no_file_is_an_output_error(run_dir):
    with pytest.raises(OutputError, match=r"no match of 'converged \(\\S\+\)' in stdout.txt"):
        Regex("converged (\\S+)")(run_dir)
    with pytest.raises(OutputError, match="no output file beam.frd"):
        Regex(LINE, file="beam.frd")(run_dir)


def test_bad_regex_settings_are_refused_at_once():
    with pytest.raises(ValueError, match=r"bad regular expression '\(\['"):
        Regex("([")
    with pytest.raises(ValueError, match="group=2 is not one of them"):
        Regex("(a)", group=2)
    with pytest.raises(ValueError, match="size=3 needs match='all'"):
        Regex("(a)", size=3)


def test_table_cells_by_index_name_and_row(run_dir):
    assert Table("hist.txt", column=2)(run_dir).tolist() == [-5.0]
    assert Table("hist.txt", column=1, row=1)(run_dir).tolist() == [1.5]
    assert Table("hist.txt", column=-1, row="all", size=3)(run_dir).tolist() == [0.0, -2.5, -5.0]
    assert Table("res.csv", column="u", row=0)(run_dir).tolist() == [0.5]
    assert Table("res.csv", column=2, row="all", size=2)(run_dir).tolist() == [2.0, 4.0]


def test_table_errors_name_what_is_missing(run_dir):
    with pytest.raises(OutputError, match=r"no column 'w' in its header \['step', 'u', 'v'\]"):
        Table("res.csv", column="w")(run_dir)
    with pytest.raises(OutputError, match="has 3 data rows; row 5"):
        Table("hist.txt", column=0, row=5)(run_dir)
    with pytest.raises(OutputError, match="fewer than 4 columns"):
        Table("hist.txt", column=3)(run_dir)


def test_json_values_by_key_path(run_dir):
    assert JSONValue("r.json", "a.b.0")(run_dir).tolist() == [1.5]
    assert JSONValue("r.json", "a.b.1.c")(run_dir).tolist() == [-2.0]
    with pytest.raises(OutputError, match=r"no 'a.x' \(stopped at 'x'\)"):
        JSONValue("r.json", "a.x")(run_dir)
    with pytest.raises(OutputError, match="not a number"):
        JSONValue("r.json", "a.b")(run_dir)


def test_read_output_checks_size_and_finiteness(run_dir):
    assert read_output(as_output(lambda d: 2.5, "y"), run_dir).tolist() == [2.5]
    assert read_output(Output(lambda d: [1, 2, 3], size=3), run_dir).tolist() == [1, 2, 3]
    with pytest.raises(OutputError, match="2 values, expected 3"):
        read_output(Output(lambda d: [1, 2], size=3), run_dir)
    with pytest.raises(OutputError, match="not finite: nan"):
        read_output(as_output(lambda d: np.nan, "y"), run_dir)
    with pytest.raises(OutputError, match="the parser raised ZeroDivisionError"):
        read_output(as_output(lambda d: 1 / 0, "y"), run_dir)
    with pytest.raises(ValueError, match="output 'y': give a function"):
        as_output("beam.dat", "y")
