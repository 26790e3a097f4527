"""The answers kept until a chunk is stored: read back bit for bit, and only for the very
same run."""
import warnings

import numpy as np
import pytest

from uqkit.execution import kept_runs


def test_a_kept_answer_reads_back_bit_for_bit(tmp_path):
    """JSON writes floats by their shortest repr: a kept answer must be the run's own bits,
    extremes and subnormals included, or a resumed study would differ from an unstopped one."""
    folder = kept_runs.kept_folder(tmp_path)
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.standard_normal(20) * 10.0 ** rng.integers(-300, 300, 20),
                             [5e-324, -0.0, 1.7976931348623157e308, 0.1 + 0.2]])
    x = rng.standard_normal(4) / 3
    kept_runs.keep(folder, 12, x, values)
    back = kept_runs.recall(folder, 12, x, len(values))
    assert back.tobytes() == values.tobytes()
    assert kept_runs.recall(folder, 12, x, None).tobytes() == values.tobytes()


def test_an_answer_is_taken_only_for_the_same_row_inputs_and_width(tmp_path):
    folder = kept_runs.kept_folder(tmp_path)
    x = np.array([1.0, 2.0])
    kept_runs.keep(folder, 3, x, np.array([4.0, 5.0]))
    assert kept_runs.recall(folder, 4, x, 2) is None  # another row
    assert kept_runs.recall(folder, 3, x + 1e-12, 2) is None  # other inputs
    assert kept_runs.recall(folder, 3, x, 3) is None  # another number of outputs
    assert kept_runs.recall(None, 3, x, 2) is None  # no store


def test_damaged_or_non_finite_files_are_runs_to_make_again(tmp_path):
    folder = kept_runs.kept_folder(tmp_path)
    x = np.array([1.0])
    folder.mkdir(parents=True)
    for row, body in enumerate(['{"inputs": [1.0], "outputs": [NaN]}', '{"inputs": [1.0', "[]",
                                '{"inputs": [1.0], "outputs": "a"}',
                                '{"inputs": [1.0], "outputs": [[1.0]]}',
                                '{"inputs": [1.0], "outputs": []}']):
        (folder / f"{kept_runs.run_name(row)}.json").write_text(body)
        assert kept_runs.recall(folder, row, x, None) is None, body


def test_drop_removes_the_saved_rows_and_their_cut_short_files_only(tmp_path):
    folder = kept_runs.kept_folder(tmp_path)
    for row in (1, 2, 1234567):
        kept_runs.keep(folder, row, np.array([row]), np.array([0.0]))
    (folder / ".000002.tmp").write_text('{"inp')  # a write cut short by a kill
    kept_runs.drop(folder, [2, 1234567])
    assert sorted(p.name for p in folder.iterdir()) == ["000001.json"]
    kept_runs.drop(folder, np.array([1]))
    assert not folder.exists()
    kept_runs.drop(folder, [1])  # nothing there: nothing to do


def test_an_answer_that_cannot_be_written_warns_once_and_the_run_counts(tmp_path):
    """A full disk or a read-only store raised out of the model: every row of its chunk was
    then run again one by one and failed (a review found it)."""
    from uqkit import PerRunModel
    from uqkit.execution.model import RunContext, evaluate

    store = tmp_path / "store"
    (store / "runs").mkdir(parents=True)
    (store / "runs" / kept_runs.FINISHED).write_text("a file, not a folder")
    calls = []
    model = PerRunModel(lambda x: calls.append(x[0]) or 2 * x[0])
    with pytest.warns(RuntimeWarning, match="cannot keep finished runs' answers") as seen:
        out = evaluate(model, np.arange(3.0)[:, None], RunContext(np.arange(3), str(store)))
    assert len(seen) == 1 and calls == [0, 1, 2]
    assert out.status.tolist() == [0, 0, 0] and out.values.ravel().tolist() == [0, 2, 4]


def test_answers_are_kept_only_where_the_store_is_on_this_machine(tmp_path):
    """A Dask worker without the shared file system made the store's path on its own disk,
    where nothing read or removed the answers."""
    assert kept_runs.kept_folder(tmp_path / "elsewhere") is None
    assert not (tmp_path / "elsewhere").exists()


def test_a_folder_removed_between_mkdirs_checks_is_made_again(tmp_path, monkeypatch):
    """The parent removes the answers' folder once no answer waits there. Where that fell
    between ``mkdir``'s "it exists" and its check that a folder is there, ``mkdir`` raised
    FileExistsError, and the answer was not kept: a warning, and the run made again after
    a stop (seen once, in the docs build's CalculiX example). It is now made again."""
    import pathlib

    folder = kept_runs.kept_folder(tmp_path)
    mkdir, raced = pathlib.Path.mkdir, []

    def removed_meanwhile(self, *args, **kwargs):
        if self == folder and not raced:
            raced.append(1)
            raise FileExistsError(17, "File exists", str(self))
        return mkdir(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "mkdir", removed_meanwhile)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept_runs.keep(folder, 3, np.ones(2), np.array([4.0]))
    assert raced and kept_runs.recall(folder, 3, np.ones(2), 1).tolist() == [4.0]


def test_an_answer_kept_for_inputs_holding_nan_is_taken_back(tmp_path):
    """A NaN input is the same input (NaN != NaN made its run be made again); any other
    value, or another number of inputs, is not."""
    folder = kept_runs.kept_folder(tmp_path)
    x = np.array([0.5, np.nan])
    kept_runs.keep(folder, 4, x, np.array([2.0]))
    assert kept_runs.recall(folder, 4, x.copy(), 1).tolist() == [2.0]
    assert kept_runs.recall(folder, 4, np.array([0.5, 1.0]), 1) is None
    assert kept_runs.recall(folder, 4, np.array([0.5, np.nan, 1.0]), 1) is None
    assert kept_runs.recall(folder, 4, np.array([0.5]), 1) is None
