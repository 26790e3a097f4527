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


def test_numbers_in_fortran_notation_either_case(run_dir):
    from uqkit.external.outputs import to_number

    assert [to_number(t) for t in ("1.5D+03", "1.5d+03", "-2.5d-1", " 7 ")] == \
        [1500.0, 1500.0, -0.25, 7.0]
    with pytest.raises(OutputError, match=r"^'\*{40}' is not a number$"):
        to_number("*" * 60 + "  ")
    with pytest.raises(OutputError, match=r"^'NaNx' is not a number$"):
        to_number("NaNx")


def test_regex_group_zero_is_the_whole_match_and_last_is_the_last_of_many(tmp_path):
    (tmp_path / "log").write_text("u= 1.5\nu= 2.5\nu= 3.5\n")
    assert Regex(r"\d+\.\d+", file="log", group=0)(tmp_path).tolist() == [3.5]
    assert Regex(r"u= (\S+)", file="log")(tmp_path).tolist() == [3.5]
    assert Regex(r"u= (\S+)", file="log", match="first")(tmp_path).tolist() == [1.5]


def test_a_file_with_bytes_that_are_not_utf8_is_still_read(tmp_path):
    """Solvers write Latin-1 units and box characters into their logs: those bytes become
    replacement characters, and the numbers around them are read."""
    (tmp_path / "log").write_bytes(b"Temperatur \xb0C \xff\xfe\nresult 42.5\n")
    assert Regex(r"result (\S+)", file="log")(tmp_path).tolist() == [42.5]


def test_an_unreadable_output_names_the_file_or_stdout(tmp_path):
    (tmp_path / "dir.out").mkdir()
    with pytest.raises(OutputError, match=r"^cannot read dir.out: Is a directory$"):
        Regex("(a)", file="dir.out")(tmp_path)
    (tmp_path / "stdout.txt").mkdir()
    with pytest.raises(OutputError, match=r"^cannot read stdout.txt: Is a directory$"):
        Regex("(a)")(tmp_path)


def test_table_skips_blank_and_comment_lines_indented_or_not(tmp_path):
    (tmp_path / "t.txt").write_text("# results\n\n   x   y\n  # a note\n1 10\n\n2 20\n"
                                    "   # indented note\n3 30\n")
    assert Table("t.txt", column="y", row="all", size=3)(tmp_path).tolist() == [10, 20, 30]
    assert Table("t.txt", column=1, row=-3)(tmp_path).tolist() == [10.0]
    with pytest.raises(OutputError, match=r"^t.txt has 3 data rows; row 3 is not one of them$"):
        Table("t.txt", column=1, row=3)(tmp_path)
    with pytest.raises(OutputError, match=r"row -4 is not one of them"):
        Table("t.txt", column=1, row=-4)(tmp_path)
    (tmp_path / "p.txt").write_text("% matlab comment\n1 2\n")
    assert Table("p.txt", column=0, comments="%")(tmp_path).tolist() == [1.0]
    # without comments, that line is the header (a cell of it is not a number), whose 3
    # names over rows of 2 values tell no column by name
    with pytest.raises(OutputError, match=r"header has 3 names .* its rows have 2 values"):
        Table("p.txt", column="%", comments=None)(tmp_path)
    assert Table("p.txt", column=0, comments=None)(tmp_path).tolist() == [1.0]


def test_a_column_by_name_needs_a_header_name_per_value(tmp_path):
    """A name of two words ('tip disp') made the header a cell longer than the rows, and
    column='disp' read the next column's values (a bug hunt); a header shorter than its
    rows read the column before."""
    (tmp_path / "h.txt").write_text("time  tip disp  reaction\n0.5  -1.0  10.0\n"
                                    "1.0  -2.0  20.0\n")
    with pytest.raises(OutputError, match=r"h.txt: its header has 4 names .* its rows have 3 "
                                          r"values, so the column 'disp' cannot be told by its "
                                          r"name"):
        Table("h.txt", column="disp")(tmp_path)
    (tmp_path / "g.txt").write_text("step u v\n1 0.1 0.2 0.3\n")
    with pytest.raises(OutputError, match=r"3 names .* 4 values"):
        Table("g.txt", column="v")(tmp_path)
    assert Table("g.txt", column=3)(tmp_path).tolist() == [0.3]  # by number, as it says
    # a ragged table whose rows mostly match its header reads as before (a review)
    (tmp_path / "f.txt").write_text("x y z\n1 2 3\n4 5\n")
    assert Table("f.txt", column="y", row="all", size=2)(tmp_path).tolist() == [2.0, 5.0]
    # and a header's trailing delimiter adds no name
    (tmp_path / "c.csv").write_text("step,disp,\n1,2\n")
    assert Table("c.csv", column="disp")(tmp_path).tolist() == [2.0]


def test_an_output_file_outside_the_run_directory_is_refused(tmp_path):
    """Every run read the one absolute file, and a run whose program wrote nothing took the
    value the run before it left, with status ok (a bug hunt)."""
    assert Regex(r"y (\S+)", file="sub/../out.txt").file == "sub/../out.txt"  # inside
    for file in (str(tmp_path / "out.txt"), "../out.txt", "sub/../../out.txt"):
        with pytest.raises(ValueError, match=r"outside the run directory"):
            Regex(r"y (\S+)", file=file)
        with pytest.raises(ValueError, match=r"outside the run directory"):
            Table(file, column=0)
    assert Regex(r"y (\S+)", file="results/out.txt").file == "results/out.txt"


def test_table_column_count_in_the_message_for_either_sign(tmp_path):
    (tmp_path / "t.txt").write_text("1 2\n")
    with pytest.raises(OutputError, match=r"^t.txt: a row has fewer than 3 columns "
                                          r"\(column 2\)$"):
        Table("t.txt", column=2)(tmp_path)
    with pytest.raises(OutputError, match=r"fewer than 3 columns \(column -3\)$"):
        Table("t.txt", column=-3)(tmp_path)
    (tmp_path / "h.txt").write_text("a b\n# only a header\n")
    with pytest.raises(OutputError, match=r"^h.txt has no data rows$"):
        Table("h.txt", column=0)(tmp_path)


@pytest.mark.parametrize("make, message", [
    (lambda: Table("t.csv", column=1.5), r"^Table\('t.csv'\): column must be an index or a "
                                         r"header name, got column=1.5$"),
    (lambda: Table("t.csv", column=True), r"column=True$"),
    (lambda: Table("t.csv", column=0, row="last"), r"^Table\('t.csv'\): row must be an index "
                                                   r"or 'all', got row='last'$"),
    (lambda: Table("t.csv", column=0, row=False), r"got row=False$"),
    (lambda: Table("t.csv", column=0, size=0), r"^Table\('t.csv'\): size must be an integer "
                                               r">= 1, got size=0$"),
    (lambda: Table("t.csv", column=0, size=2), r"^Table\('t.csv'\): size=2 needs row='all'$"),
    (lambda: Regex("(a)", match="middle"), r"^match must be one of \('first', 'last', 'all'\), "
                                           r"got match='middle'$"),
    (lambda: Regex("(a)", match="all", size=2.0), r"^Regex\('\(a\)'\): size must be an "
                                                  r"integer >= 1, got size=2.0$"),
    (lambda: Regex("(a)", match="all", size=True), r"got size=True$"),
    (lambda: JSONValue("r.json", ""), r"^JSONValue\('r.json'\): key must be a non-empty "
                                      r"string, got ''$"),
    (lambda: JSONValue("r.json", 3), r"got 3$"),
    (lambda: JSONValue("r.json", "a", size=-1), r"^JSONValue\('r.json', 'a'\): size must be"),
    (lambda: Output(3.0), r"^an output's parser must be callable, got 3.0$"),
    (lambda: Output(len, size=0), r"^Output\(<built-in function len>\): size must be"),
])
def test_bad_parser_settings_name_the_parser_and_the_value(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_json_lists_scalars_and_bad_json(tmp_path):
    (tmp_path / "r.json").write_text('{"tip": [1.5, 2.5], "u": 4, "bad": [1, [2]]}')
    parser = JSONValue("r.json", "tip", size=2)
    assert read_output(parser, tmp_path).tolist() == [1.5, 2.5]
    scalar = JSONValue("r.json", "u")
    assert scalar.size == 1 and read_output(scalar, tmp_path).tolist() == [4.0]
    with pytest.raises(OutputError, match=r"^2 values, expected 1$"):
        read_output(JSONValue("r.json", "tip"), tmp_path)
    with pytest.raises(OutputError, match=r"^r.json: 'bad' is not a number or a list of"):
        JSONValue("r.json", "bad", size=2)(tmp_path)
    (tmp_path / "broken.json").write_text('{"u": 4,')
    with pytest.raises(OutputError, match=r"^broken.json is not valid JSON: Expecting"):
        JSONValue("broken.json", "u")(tmp_path)


def test_read_output_hands_the_run_directory_to_the_parser(tmp_path):
    (tmp_path / "v.txt").write_text("6.25")
    parser = Output(lambda d: float((d / "v.txt").read_text()))
    assert read_output(parser, tmp_path).tolist() == [6.25]
    with pytest.raises(OutputError, match=r"^the parser returned dict, not numbers$"):
        read_output(Output(lambda d: {"a": 1}), tmp_path)


def _first(run_dir):
    return 1.0


def _second(run_dir):
    return 2.0


def test_descriptions_are_the_cache_keys_format_and_tell_every_setting_apart():
    """An external model's stored results are keyed by its outputs' descriptions: each
    setting is in them (another group, row or key is another output, never a stale result),
    and their format is what stores on disk hold."""
    assert Regex("u=(\\S+)", file="log", group=1, match="all", size=2).describe() == {
        "regex": "u=(\\S+)", "file": "log", "group": 1, "match": "all", "size": 2}
    assert Table("t.csv", column="u", row="all", skip_rows=2, size=3).describe() == {
        "table": "t.csv", "column": "u", "row": "all", "delimiter": ",", "comments": "#",
        "skip_rows": 2, "size": 3}
    assert JSONValue("r.json", "a.b", size=2).describe() == {"json": "r.json", "key": "a.b",
                                                             "size": 2}
    variants = [Regex("(a)(b)"), Regex("(a)(c)"), Regex("(a)(b)", file="x"),
                Regex("(a)(b)", group=2), Regex("(a)(b)", match="first"),
                Regex("(a)(b)", match="all"), Regex("(a)(b)", match="all", size=2),
                Table("t", 0), Table("t", 1), Table("u", 0), Table("t", 0, row=0),
                Table("t", 0, delimiter=";"), Table("t", 0, comments="%"),
                Table("t", 0, skip_rows=1), Table("t", 0, row="all", size=2),
                JSONValue("r", "a"), JSONValue("s", "a"), JSONValue("r", "b"),
                JSONValue("r", "a", size=2), Output(_first), Output(_second),
                Output(_first, size=2)]
    keys = [repr(sorted(v.describe().items())) for v in variants]
    assert len(set(keys)) == len(keys)
    assert Output(_first).describe() == Output(_first).describe()
    assert set(Output(_first).describe()) == {"function", "size"}
    assert Output(_first, size=3).describe()["size"] == 3


@pytest.mark.parametrize("text, kwargs, expected", [
    # a label and a value on each row: no header (the first row was dropped as one: 0.7)
    ("tip 1.5\nmid 0.7\nroot 0.1\n", dict(column=1, row=0), [1.5]),
    ("tip 1.5\nmid 0.7\nroot 0.1\n", dict(column=1, row="all", size=3), [1.5, 0.7, 0.1]),
    # a trailing comma ends a row (it made every row a header candidate: 4.5 for 2.5)
    ("1.5,2.5,\n3.5,4.5,\n", dict(column=-1, row=0), [2.5]),
    # a header of numbers, said so; and one that a column name implies
    ("101,102,103\n0.25,0.5,0.75\n", dict(column=1, row=0, header=True), [0.5]),
    ("101,102,103\n0.25,0.5,0.75\n", dict(column="102", row=0), [0.5]),
    # a first row of labels alone that is data
    ("a,b\n1,2\n", dict(column=1, row=0, header=False, size=1), None),
    # a header of a label and node ids is a header (its "time" sits over numbers)
    ("time,1,2\n0.0,0.5,0.6\n1.0,0.8,0.9\n", dict(column=1, row="all", size=2), [0.5, 0.8]),
    # a value missing at a row's end is not made up from the column before it
    ("a,b,c\n1,2,3\n4,5,\n", dict(column=-1, row=-1), None),
])
def test_table_header_is_what_the_file_has(tmp_path, text, kwargs, expected):
    (tmp_path / "t.csv").write_text(text.replace(" ", ","))
    table = Table("t.csv", **kwargs)
    if expected is None:
        with pytest.raises(OutputError, match="'b' is not a number|'' is not a number"):
            table(tmp_path)
    else:
        assert table(tmp_path).tolist() == expected


def test_a_fortran_overflow_field_fails_the_run_rather_than_skip_a_row(tmp_path):
    """``********`` is a number too wide for its Fortran field: the first data row was taken
    for a header and skipped, and row 0 read the next row's 3.0."""
    (tmp_path / "t.txt").write_text("********\n3.0\n")
    with pytest.raises(OutputError, match=r"'\*\*\*\*\*\*\*\*' is not a number"):
        Table("t.txt", column=0, row=0)(tmp_path)


def test_fortran_e_format_without_its_e():
    """CalculiX writes 4.761905E-110 as ``4.761905-110``; it failed the run as not a
    number."""
    from uqkit.external.outputs import to_number

    assert to_number("4.761905-110") == 4.761905e-110
    assert to_number("-2.885306-129") == -2.885306e-129
    assert to_number("1.5+003") == 1500.0
    for bad in ("1-3", "1.5-", "12-31-2020", "1.5+0003", "1.2.3-4", "1.5-3", "3.2-1",
                "2020.12-01"):
        with pytest.raises(OutputError, match="is not a number"):
            to_number(bad)


@pytest.mark.parametrize("kwargs, message", [
    (dict(skip_rows=-2), r"skip_rows must be an integer >= 0, got skip_rows=-2$"),
    (dict(skip_rows=1.5), r"skip_rows must be an integer >= 0, got skip_rows=1.5$"),
    (dict(header="yes"), r"header must be True, False or 'auto', got header='yes'$"),
    (dict(delimiter=""), r"delimiter must be a non-empty string or None, got delimiter=''$"),
    (dict(delimiter=5), r"delimiter must be a non-empty string or None, got delimiter=5$"),
    (dict(comments=5), r"comments must be a string or None, got comments=5$"),
])
def test_bad_table_settings_are_refused_before_any_run(kwargs, message):
    with pytest.raises(ValueError, match=r"^Table\('t.csv'\): " + message):
        Table("t.csv", column=0, **kwargs)


@pytest.mark.parametrize("make, message", [
    (lambda: Table(5, column=0), r"^Table\(5\): file must be a file name, got file=5$"),
    (lambda: JSONValue("", "a"), r"^JSONValue\(''\): file must be a file name, got file=''$"),
    (lambda: Regex("(a)", file=5), r"^Regex\('\(a\)'\): file must be a file name or None, "
                                   r"got file=5$"),
])
def test_an_output_file_that_is_not_a_name_is_refused_before_any_run(make, message):
    """``file = 5`` in a study file passed the check, then failed every run."""
    with pytest.raises(ValueError, match=message):
        make()
