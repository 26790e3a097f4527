""":class:`uqkit.execution.result.PropagationResult`'s summary and exports, built by hand so
that every count is known (a first mutation run found the summary's counts, the kept runs'
note, the default output names and the DataFrame export untested)."""
from collections import Counter

import numpy as np
import pytest

from uqkit.execution.model import RAISED
from uqkit.execution.result import SUMMARY_REASONS, PropagationResult
from uqkit.inputs import Samples


def _result(status, reasons, outputs=None, **kw):
    n = len(status)
    outputs = np.arange(2.0 * n).reshape(n, 2) if outputs is None else outputs
    return PropagationResult(Samples(np.arange(1.0, n + 1)[:, None], ("x",)), outputs,
                             np.asarray(status), np.asarray(reasons), computed=n, loaded=0,
                             seconds=1.25, **kw)


def test_the_summary_counts_the_runs_that_failed_and_those_kept():
    res = _result([0, RAISED, 0, 7], ["ok", "raised ValueError: x", "ok", "model status 7"],
                  kept=2)
    first, *rest = res.summary().splitlines()
    assert first == ("4 runs: 2 ok, 2 failed; 4 computed now, 0 loaded from the store, 2 "
                     "kept by an interrupted run; 1.2 s")
    assert sorted(rest) == ["  1 x model status 7", "  1 x raised ValueError: x"]
    assert "kept" not in _result([0], ["ok"]).summary()


def test_the_summary_lists_as_many_reasons_as_it_may_and_counts_the_rest():
    n = SUMMARY_REASONS + 2
    res = _result([RAISED] * n, [f"reason {i}" for i in range(n)])
    lines = res.summary().splitlines()
    assert len(lines) == 1 + SUMMARY_REASONS + 1
    assert lines[-1] == "  ... and 2 more failed runs with 2 other reasons (see reasons, or to_csv)"
    exactly = _result([RAISED] * SUMMARY_REASONS, [f"r{i}" for i in range(SUMMARY_REASONS)])
    assert "... and" not in exactly.summary()


def test_the_summary_names_the_commonest_batch_error():
    res = _result([0, 0], ["ok", "ok"], rows_rerun=2,
                  batch_errors=Counter({"ValueError: a": 1, "KeyError: b": 3}))
    assert res.summary().splitlines()[-1] == (
        "  2 rows re-run one by one after 4 batch calls raised (most often: KeyError: b)")


def test_exports_name_unnamed_outputs_y0_y1_and_leave_failed_outputs_empty(tmp_path):
    res = _result([0, RAISED], ["ok", "raised"], np.array([[1.5, 2.5], [np.nan, np.nan]]))
    assert res.columns() == ("x", "y0", "y1", "status", "reason")
    res.to_csv(tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text().splitlines() == [
        "x,y0,y1,status,reason", "1.0,1.5,2.5,0,ok", f"2.0,,,{RAISED},raised"]
    pd = pytest.importorskip("pandas")
    frame = res.to_dataframe()
    assert list(frame.columns) == ["x", "y0", "y1", "status", "reason"]
    assert frame["x"].tolist() == [1.0, 2.0] and frame["y1"].tolist()[0] == 2.5
    assert np.isnan(frame["y0"].tolist()[1]) and frame["reason"].tolist() == ["ok", "raised"]
    assert pd.api.types.is_integer_dtype(frame["status"])


def test_outputs_of_another_width_than_their_names_are_refused_unless_every_run_failed():
    res = _result([0, 0], ["ok", "ok"], output_names=("a", "b", "c"))
    with pytest.raises(ValueError) as info:
        res.columns()
    assert str(info.value) == ("2 outputs but 3 output names ('a', 'b', 'c'): the columns "
                               "would be mislabelled")
    failed = _result([RAISED, RAISED], ["r", "r"], np.full((2, 0), np.nan),
                     output_names=("a", "b"))
    assert failed.columns() == ("x", "a", "b", "status", "reason")
    with pytest.raises(ValueError) as info:
        _result([0], ["ok"], output_names=("status", "b")).columns()
    assert str(info.value) == (
        "the names ['status'] would be two columns of the export (an output named like an "
        "input, or an input or output named 'status' or 'reason', its own): rename them to "
        "export the runs")


def test_failures_count_reasons_without_the_runs_own_directory():
    res = _result([RAISED, RAISED, 0], ["exit code 3 (run dir /s/runs/r1)",
                                        "exit code 3 (run dir /s/runs/r2)", "ok"])
    assert res.failures() == Counter({"exit code 3": 2})
    assert res.summary().splitlines()[0].endswith("from the store; 1.2 s")  # nothing kept
    assert res.summary().splitlines()[1] == "  2 x exit code 3"


def test_an_output_named_reason_is_refused_and_pandas_is_named_where_missing(monkeypatch):
    with pytest.raises(ValueError, match=r"the names \['reason'\] would be two columns"):
        _result([0], ["ok"], output_names=("a", "reason")).columns()
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError) as info:
        _result([0], ["ok"]).to_dataframe()
    assert str(info.value) == "to_dataframe needs pandas (pip install pandas); to_csv does not"
