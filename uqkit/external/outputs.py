"""Reading an external program's results from its run directory.

An output of :class:`uqkit.external.ExternalModel` is a callable ``parse(run_dir) -> values``
(``run_dir`` a ``pathlib.Path``). The common cases need no code:

* :class:`Regex`: numbers matched by a regular expression in a file or in the standard output;
* :class:`Table`: a cell, or a whole column, of a text table (whitespace or CSV);
* :class:`JSONValue`: a value found by its key path in a JSON file.

A plain function is one value per run; wrap it in :class:`Output` to declare that it gives
``size`` values. A parser that finds nothing raises :class:`OutputError` with a message that
says what is missing; the run is then a failed run, not a crashed study.

Numbers are read as Python floats, and Fortran's ``1.5D+03`` and ``4.761905-110`` (an E
format whose exponent has three digits drops the E: CalculiX writes 4.761905E-110 so) too.

May import only numpy and the standard library.

Example:
    >>> import pathlib, tempfile
    >>> run_dir = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (run_dir / "beam.dat").write_text("displacements\\n  21  4.0E-14 -1.1770E+01  0.0\\n")
    >>> Regex(r"^\\s*21\\s+\\S+\\s+(\\S+)", file="beam.dat")(run_dir)
    array([-11.77])
    >>> _ = (run_dir / "out.csv").write_text("step,u,v\\n1,0.5,2\\n2,0.75,4\\n")
    >>> Table("out.csv", column="v")(run_dir)           # the last row by default
    array([4.])
    >>> Table("out.csv", column=1, row="all", size=2)(run_dir)
    array([0.5 , 0.75])
"""
import json
import re

import numpy as np

from .process import STDOUT

__all__ = ["MATCHES", "OutputError", "to_number", "check_file", "check_size", "read_text",
           "Regex", "Table", "JSONValue", "Output", "as_output", "read_output"]

#: The ``match`` settings of :class:`Regex`.
MATCHES = ("first", "last", "all")


class OutputError(Exception):
    """An output could not be read from a run directory (the run failed)."""


#: Fortran's E format without its E: a mantissa with a point, then a signed exponent of three
#: digits (the E format drops the E only for those; ``1.5-3`` is not a number).
_FORTRAN_NO_E = re.compile(r"\s*([+-]?(?:\d+\.\d*|\.\d+))([+-]\d{3})\s*")


def to_number(text):
    """``float(text)``, accepting Fortran's D exponent (``1.5D+03``) and its E format
    without the E (``4.761905-110``: an exponent of three digits leaves no room for it).

    >>> to_number("1.5D+03"), to_number(" -2e-3 "), to_number("4.761905-110")
    (1500.0, -0.002, 4.761905e-110)
    """
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return float(str(text).replace("D", "E").replace("d", "e"))
    except ValueError:
        pass
    fortran = _FORTRAN_NO_E.fullmatch(str(text))
    if fortran:
        return float(f"{fortran.group(1)}e{fortran.group(2)}")
    raise OutputError(f"{str(text).strip()[:40]!r} is not a number")


def _is_number(text):
    try:
        to_number(text)
        return True
    except OutputError:
        return False


def check_file(file, where, optional=False):
    """``file`` (a path relative to the run directory: a string or path-like; None where
    ``optional``), or a ValueError naming ``where``. A path outside the run directory
    (absolute, or up through ``..``) is refused: every run would read the one file there,
    and a run whose program wrote nothing read the answer the run before it left."""
    import os
    from pathlib import PurePath

    if file is None and optional:
        return file
    if not (isinstance(file, (str, os.PathLike)) and str(file)):
        raise ValueError(f"{where}: file must be a file name{' or None' if optional else ''}"
                         f", got file={file!r}")
    path = PurePath(os.path.normpath(file))
    if path.anchor or path.parts[:1] == ("..",):  # C:out.txt and \\out.txt too, on Windows
        raise ValueError(f"{where}: file={str(file)!r} is outside the run directory; outputs "
                         "are read from each run's own directory: give the path relative to "
                         "it (have the program write there)")
    return file


def check_size(size, where):
    """``size`` as an int >= 1, or a ValueError naming ``where``."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"{where}: size must be an integer >= 1, got size={size!r}")
    return int(size)


def read_text(run_dir, file):
    """The text of ``file`` in ``run_dir`` (None: the program's standard output)."""
    path = run_dir / (file or STDOUT)
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        raise OutputError(f"no output file {file or STDOUT}") from None
    except OSError as exc:
        raise OutputError(f"cannot read {file or STDOUT}: {exc.strerror}") from None


class Regex:
    """Numbers matched by a regular expression in a file of the run directory, or in the
    program's standard output.

    Args:
        pattern: a regular expression (Python's ``re``, compiled with ``re.MULTILINE``, so
            ``^`` and ``$`` anchor lines); ``group`` of each match is the number.
        file: the file, relative to the run directory (None: standard output).
        group: the group holding the number (0: the whole match).
        match: which match(es): ``"first"``, ``"last"`` (default: the end of an
            incremental analysis) or ``"all"`` (a vector of ``size`` values).
        size: values the output has (``match="all"``: the number of matches expected).
    """

    def __init__(self, pattern, file=None, group=1, match="last", size=1):
        try:
            self.regex = re.compile(pattern, re.MULTILINE)
        except (re.error, TypeError) as exc:
            raise ValueError(f"bad regular expression {pattern!r}: {exc}") from None
        if match not in MATCHES:
            raise ValueError(f"match must be one of {MATCHES}, got match={match!r}")
        if not isinstance(group, int) or not 0 <= group <= self.regex.groups:
            raise ValueError(f"the regular expression {pattern!r} has {self.regex.groups} "
                             f"groups; group={group!r} is not one of them")
        check_file(file, f"Regex({pattern!r})", optional=True)
        self.pattern, self.file, self.group, self.match = pattern, file, group, match
        self.size = check_size(size, f"Regex({pattern!r})")
        if match != "all" and self.size != 1:
            raise ValueError(f"Regex({pattern!r}): size={size} needs match='all'")

    def __call__(self, run_dir):
        found = [m.group(self.group) for m in self.regex.finditer(read_text(run_dir, self.file))]
        if not found:
            raise OutputError(f"no match of '{self.pattern}' in {self.file or STDOUT}")
        if self.match != "all":
            found = found[:1] if self.match == "first" else found[-1:]
        return np.array([to_number(v) for v in found])

    def describe(self):
        """The parser's settings, part of the model's identity in a study store."""
        return {"regex": self.pattern, "file": self.file, "group": self.group,
                "match": self.match, "size": self.size}


class Table:
    """A cell, or a column, of a text table in the run directory.

    Args:
        file: the table file, relative to the run directory.
        column: the column, by index (from 0; negative from the end) or by its name in the
            header.
        row: the data row (from 0, after the header; negative from the end: -1, the
            default, is the last row) or ``"all"`` (the whole column, a vector of ``size``
            values).
        delimiter: the column separator (None: any whitespace); default ``","`` for a
            ``.csv`` file, else None.
        comments: lines that start with this are skipped.
        skip_rows: lines skipped at the top, before the header (an integer >= 0).
        size: values the output has (``row="all"``: the rows expected).
        header: whether the first line that is not a comment is a header: True, False, or
            ``"auto"`` (default): it is when ``column`` is a name, or when a cell of it is not
            a number where the next row's is (``u, v`` over numbers is; so is ``time, 1, 2``;
            ``tip 1.5`` over ``mid 0.7``, labels and values, is a data row); a file of one
            row has a header when none of its cells is a number. Say True for a header of
            numbers (node ids), False for a first row of labels that is data.

    A delimiter that ends every data row (``1.5,2.5,``) adds no empty cell; one missing
    value at a row's end is an empty cell (which fails the run where it is read).
    """

    def __init__(self, file, column, row=-1, delimiter="auto", comments="#", skip_rows=0,
                 size=1, header="auto"):
        check_file(file, f"Table({file!r})")
        if delimiter == "auto":
            delimiter = "," if str(file).lower().endswith(".csv") else None
        if not isinstance(column, (int, str)) or isinstance(column, bool):
            raise ValueError(f"Table({file!r}): column must be an index or a header name, got "
                             f"column={column!r}")
        if row != "all" and (not isinstance(row, int) or isinstance(row, bool)):
            raise ValueError(f"Table({file!r}): row must be an index or 'all', got row={row!r}")
        if header not in (True, False, "auto"):
            raise ValueError(f"Table({file!r}): header must be True, False or 'auto', got "
                             f"header={header!r}")
        if isinstance(skip_rows, bool) or not isinstance(skip_rows, int) or skip_rows < 0:
            raise ValueError(f"Table({file!r}): skip_rows must be an integer >= 0, got "
                             f"skip_rows={skip_rows!r}")
        if delimiter is not None and (not isinstance(delimiter, str) or not delimiter):
            raise ValueError(f"Table({file!r}): delimiter must be a non-empty string or None, "
                             f"got delimiter={delimiter!r}")
        if comments is not None and not isinstance(comments, str):
            raise ValueError(f"Table({file!r}): comments must be a string or None, got "
                             f"comments={comments!r}")
        self.file, self.column, self.row, self.header = file, column, row, header
        self.delimiter, self.comments, self.skip_rows = delimiter, comments, skip_rows
        self.size = check_size(size, f"Table({file!r})")
        if row != "all" and self.size != 1:
            raise ValueError(f"Table({file!r}): size={size} needs row='all'")

    def _rows(self, run_dir):
        lines = read_text(run_dir, self.file).splitlines()[self.skip_rows:]
        comment = self.comments or None
        rows = [[c.strip() for c in line.split(self.delimiter)] for line in lines
                if line.strip() and not (comment and line.lstrip().startswith(comment))]
        data = rows[1:] or rows
        if data and all(len(r) > 1 and not r[-1] for r in data):  # every row ends with ","
            rows = [r[:-1] if len(r) > 1 and not r[-1] else r for r in rows]
        return rows

    def _has_header(self, rows):
        if self.header != "auto":
            return self.header
        if isinstance(self.column, str):
            return True

        def numeric(cell):  # a field of stars is a Fortran number too wide for its field
            return _is_number(cell) or (cell and set(cell) == {"*"})

        if len(rows) == 1:
            return not any(map(numeric, rows[0]))
        return any(not numeric(a) and numeric(b) for a, b in zip(rows[0], rows[1]))

    def __call__(self, run_dir):
        rows = self._rows(run_dir)
        header = rows[0] if rows and self._has_header(rows) else None
        rows = rows[1:] if header is not None else rows
        column = self.column
        if isinstance(column, str):
            if header is None or column not in header:
                raise OutputError(f"{self.file} has no column {column!r} in its header "
                                  f"{header or []}")
            column = header.index(column)
        if not rows:
            raise OutputError(f"{self.file} has no data rows")
        if self.row == "all":
            picked = rows
        else:
            if not -len(rows) <= self.row < len(rows):
                raise OutputError(f"{self.file} has {len(rows)} data rows; row {self.row} is "
                                  "not one of them")
            picked = [rows[self.row]]
        if isinstance(self.column, str):  # a header cell per value, else names point astray
            names = len(header) - next((i for i, cell in enumerate(reversed(header)) if cell),
                                       len(header))  # without a trailing delimiter's cells
            if all(len(r) != names for r in rows):
                widths = sorted({len(r) for r in rows})
                raise OutputError(
                    f"{self.file}: its header has {names} names {header[:names]} but its rows "
                    f"have {', '.join(map(str, widths))} values, so the column "
                    f"{self.column!r} cannot be told by its name (a name of several words?); "
                    "choose it by number (column=N)")
        try:
            return np.array([to_number(r[column]) for r in picked])
        except IndexError:
            raise OutputError(f"{self.file}: a row has fewer than {abs(column) + (column >= 0)}"
                              f" columns (column {self.column!r})") from None

    def describe(self):
        """The parser's settings, part of the model's identity in a study store."""
        return {"table": self.file, "column": self.column, "row": self.row,
                "delimiter": self.delimiter, "comments": self.comments,
                "skip_rows": self.skip_rows, "size": self.size,
                **({} if self.header == "auto" else {"header": self.header})}


class JSONValue:
    """A number, or a list of numbers, in a JSON file of the run directory.

    Args:
        file: the JSON file, relative to the run directory.
        key: the path to the value, its parts joined by dots (``"results.tip.0"``: key
            ``results``, key ``tip``, list item 0).
        size: values the output has (a list of that length).

    Example:
        >>> import pathlib, tempfile
        >>> run_dir = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (run_dir / "r.json").write_text('{"results": {"tip": [1.5, 2.5]}}')
        >>> JSONValue("r.json", "results.tip.1")(run_dir)
        array([2.5])
    """

    def __init__(self, file, key, size=1):
        check_file(file, f"JSONValue({file!r})")
        if not isinstance(key, str) or not key:
            raise ValueError(f"JSONValue({file!r}): key must be a non-empty string, got {key!r}")
        self.file, self.key = file, key
        self.size = check_size(size, f"JSONValue({file!r}, {key!r})")

    def __call__(self, run_dir):
        try:
            value = json.loads(read_text(run_dir, self.file))
        except json.JSONDecodeError as exc:
            raise OutputError(f"{self.file} is not valid JSON: {exc}") from None
        for part in self.key.split("."):
            try:
                value = value[int(part)] if isinstance(value, list) else value[part]
            except (KeyError, IndexError, ValueError, TypeError):
                raise OutputError(f"{self.file} has no {self.key!r} (stopped at {part!r})") \
                    from None
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, (dict, list, bool)) or v is None for v in values):
            raise OutputError(f"{self.file}: {self.key!r} is not a number or a list of numbers")
        return np.array([to_number(v) for v in values])

    def describe(self):
        """The parser's settings, part of the model's identity in a study store."""
        return {"json": self.file, "key": self.key, "size": self.size}


class Output:
    """A parsing function that gives ``size`` values: ``Output(parse, size=3)``."""

    def __init__(self, parse, size=1):
        if not callable(parse):
            raise ValueError(f"an output's parser must be callable, got {parse!r}")
        self.parse, self.size = parse, check_size(size, f"Output({parse!r})")

    def __call__(self, run_dir):
        return self.parse(run_dir)

    def describe(self):
        """The parser's identity in a study store: a fingerprint of its function (its code
        and what it holds) and its size."""
        from ..execution.identity import fingerprint

        return {"function": fingerprint(self.parse)["sha256"], "size": self.size}


def as_output(spec, name):
    """An output spec as a parser with ``size`` and ``describe()``: a :class:`Regex`,
    :class:`Table`, :class:`JSONValue` or :class:`Output` as it is, a function as
    ``Output(function)``."""
    if isinstance(spec, (Regex, Table, JSONValue, Output)):
        return spec
    if callable(spec):
        return Output(spec)
    raise ValueError(f"output {name!r}: give a function of the run directory, or a Regex, "
                     f"Table or JSONValue; got {spec!r}")


def read_output(parser, run_dir):
    """The (size,) values of one parser on a run directory.

    Raises:
        OutputError: the parser failed, gave another number of values than its size, or a
            value that is not finite.
    """
    try:
        values = parser(run_dir)
    except OutputError:
        raise
    except Exception as exc:  # noqa: BLE001 - a user's parser: its failure fails the run
        raise OutputError(f"the parser raised {type(exc).__name__}: {exc}") from None
    try:
        values = np.atleast_1d(np.asarray(values, dtype=float)).ravel()
    except (TypeError, ValueError):
        raise OutputError(f"the parser returned {type(values).__name__}, not numbers") from None
    if len(values) != parser.size:
        raise OutputError(f"{len(values)} values, expected {parser.size}")
    if not np.isfinite(values).all():
        raise OutputError(f"not finite: {values[~np.isfinite(values)][0]}")
    return values
