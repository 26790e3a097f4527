"""The study store's on-disk contract (:mod:`uqkit.execution.store`): what a reader gets back,
which files count as chunks, atomic writes that leave nothing behind, and refusals that
name what differs."""
import json
import os
from pathlib import Path

import numpy as np
import pytest

from uqkit.execution.store import (FORMAT, VERSION, StoreBusyError, StoreMismatchError,
                                   StudyStore, atomic_write, describe_differences,
                                   load_dataset)


def _save_rows(store, index, start, n, k=2, failed=()):
    """Save chunk ``index`` of rows start..start+n-1: inputs (row, row^2), outputs
    (10 row, -row) or NaN with status 1 for the rows in ``failed``."""
    rows = np.arange(start, start + n)
    inputs = np.column_stack([rows, rows ** 2]).astype(float)
    outputs = np.column_stack([10.0 * rows, -rows.astype(float)])[:, :k]
    status = np.isin(rows, failed).astype(int)
    outputs[status == 1] = np.nan
    reasons = np.where(status == 1, "diverged", "")
    store.save(index, start, inputs, outputs, status, reasons, seconds=0.5 * n)


def test_load_dataset_gives_the_rows_on_disk_in_row_order_with_their_global_indices(tmp_path):
    """Chunks saved out of order, and one missing (an interrupted run): the reader gets the
    saved rows sorted, each with its own global index."""
    meta = {"input_names": ["a", "b"], "output_names": ["u", "v"]}
    with StudyStore(tmp_path, {"n": 12}, metadata=meta) as store:
        _save_rows(store, 2, 8, 4, failed=(9,))
        _save_rows(store, 0, 0, 4)
        assert store.finished() == [0, 2]
    data = load_dataset(tmp_path)
    rows = np.array([0, 1, 2, 3, 8, 9, 10, 11])
    np.testing.assert_array_equal(data["rows"], rows)
    np.testing.assert_array_equal(data["inputs"], np.column_stack([rows, rows ** 2]))
    expected = np.column_stack([10.0 * rows, -rows.astype(float)])
    expected[5] = np.nan
    np.testing.assert_array_equal(data["outputs"], expected)
    assert data["status"].tolist() == [0, 0, 0, 0, 0, 1, 0, 0]
    assert data["reasons"].tolist() == [""] * 5 + ["diverged", "", ""]
    assert data["input_names"] == ("a", "b") and data["output_names"] == ("u", "v")


def test_load_dataset_of_an_empty_store_has_the_documented_empty_shapes(tmp_path):
    StudyStore(tmp_path, {"n": 3}).close()
    data = load_dataset(tmp_path)
    assert data["inputs"].shape == (0, 0) and data["outputs"].shape == (0, 0)
    assert data["status"].shape == data["rows"].shape == data["reasons"].shape == (0,)
    assert data["status"].dtype == data["rows"].dtype == np.int64
    assert data["reasons"].dtype.kind == "U"
    assert data["input_names"] == data["output_names"] == ()


def test_a_manifest_without_metadata_has_no_names(tmp_path):
    StudyStore(tmp_path, {"n": 3}).close()
    manifest = tmp_path / "manifest.json"
    body = json.loads(manifest.read_text())
    del body["metadata"]
    manifest.write_text(json.dumps(body))
    assert load_dataset(tmp_path)["input_names"] == ()


def test_only_chunk_files_count_as_chunks(tmp_path):
    """A temporary file of an interrupted write, a user's note or an archive are not
    chunks; six-digit indices and beyond are read whole."""
    with StudyStore(tmp_path, {"n": 3}) as store:
        _save_rows(store, 123456, 0, 2)
        chunks = tmp_path / "chunks"
        np.savez(chunks / "notes.npz", start=np.int64(5))
        (chunks / "chunk-000001.npz.tmp").write_bytes(b"partial")
        (chunks / ".tmp-abc").write_bytes(b"partial")
        (chunks / "chunk-000002.txt").write_text("a note")
        assert store.finished() == [123456]
        assert Path(store.chunk_path(123456)).name == "chunk-123456.npz"
    assert load_dataset(tmp_path)["rows"].tolist() == [0, 1]


def test_atomic_write_writes_beside_the_target_and_leaves_nothing_when_it_fails(
        tmp_path, monkeypatch):
    """The temporary file is hidden (never read as a chunk) and in the target's directory,
    so the rename is atomic; a failing writer leaves neither it nor the target."""
    replaced = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace",
                        lambda src, dst: (replaced.append((src, dst)), real_replace(src, dst)))
    atomic_write(tmp_path / "a.bin", lambda fh: fh.write(b"12345"))
    assert (tmp_path / "a.bin").read_bytes() == b"12345"
    (src, dst), = replaced
    assert os.path.dirname(src) == str(tmp_path) == os.path.dirname(os.path.abspath(dst))
    assert os.path.basename(src).startswith(".tmp-")

    def fails(fh):
        fh.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(tmp_path / "b.bin", fails)
    assert sorted(os.listdir(tmp_path)) == ["a.bin"]


def test_settings_that_json_cannot_hold_are_compared_as_text(tmp_path):
    """A path or a NumPy number in the settings is recorded by its text: the same settings
    reopen the store, others are refused naming every key that differs, added or removed
    ones included."""
    settings = {"mesh": Path("/data/mesh.inp"), "p": np.float64(100.0), "n": 5}
    StudyStore(tmp_path, settings).close()
    assert StudyStore.stored_settings(tmp_path) == {"mesh": "/data/mesh.inp", "p": 100.0,
                                                    "n": 5}
    StudyStore(tmp_path, dict(settings)).close()
    with pytest.raises(StoreMismatchError, match=(
            r"holds results made with other settings \(extra: stored None, now 1; "
            r"n: stored 5, now None; p: stored 100.0, now 90.0\); use a new directory")):
        StudyStore(tmp_path, {"mesh": Path("/data/mesh.inp"), "p": 90.0, "extra": 1})


@pytest.mark.parametrize("before, after", [
    (np.array([1.0, 2.0]), np.array([1.0, 2.000000001])),  # the ninth digit
    (np.arange(2000.0), np.r_[np.arange(1000.0), -1.0, np.arange(1001.0, 2000.0)]),  # middle
])
def test_an_array_in_the_settings_that_changed_is_refused(tmp_path, before, after):
    """Recorded by its text, an array kept 8 digits, and a long one was cut short with
    "...": a model whose constant changed reopened the store, and its stored results were
    taken for the new model's (a review)."""
    from uqkit.execution.identity import identity_key

    StudyStore(tmp_path, {"model": {"c": before}}).close()
    StudyStore(tmp_path, {"model": {"c": before.copy()}}).close()  # the same values reopen
    with pytest.raises(StoreMismatchError, match=r"model\.c(\.sha256)?: stored"):
        StudyStore(tmp_path, {"model": {"c": after}})

    class Model:
        def __init__(self, c):
            self.c = c

        def describe(self):
            return {"c": self.c}

    assert identity_key(Model(before)) != identity_key(Model(after))
    assert identity_key(Model(before)) == identity_key(Model(before.copy()))


def test_describe_differences_lists_every_differing_key_in_order():
    assert describe_differences({"a": 1, "b": 2, "c": 3}, {"b": 2, "c": 4, "d": 5}) == \
        "a: stored 1, now None; c: stored 3, now 4; d: stored None, now 5"
    assert describe_differences({"a": 1}, {"a": 1}) == ""


def test_describe_differences_names_the_nested_entry_that_differs_and_cuts_long_values():
    """An external model's settings nest its templates' digest among a dozen entries: the
    refusal names that one entry, not the two whole dicts."""
    model = {"command": "ccx deck", "templates": "a" * 64, "outputs": ["w"] * 40}
    old = {"model": model, "seed": 1}
    new = {"model": dict(model, templates="b" * 64), "seed": 1}
    assert describe_differences(old, new) == \
        f"model.templates: stored {'a' * 64!r}, now {'b' * 64!r}"
    long = describe_differences({"x": list(range(100))}, {"x": list(range(101))}, width=30)
    assert long == "x: stored [0, 1, 2, 3, 4, 5, 6, 7, 8,..., now [0, 1, 2, 3, 4, 5, 6, 7, 8,..."
    # a dict against a non-dict is shown whole
    assert describe_differences({"m": {"a": 1}}, {"m": 2}) == "m: stored {'a': 1}, now 2"


def test_a_changed_model_fingerprint_says_what_it_covers(tmp_path):
    StudyStore(tmp_path, {"model": {"model": "__main__.f", "fingerprint": "1" * 8}}).close()
    with pytest.raises(StoreMismatchError, match=(
            r"model.fingerprint: stored '11111111', now '22222222'\); use a new directory .*"
            r"a model defined in a script changes with any edit of that script")):
        StudyStore(tmp_path, {"model": {"model": "__main__.f", "fingerprint": "2" * 8}})


def test_a_foreign_or_older_manifest_is_refused_and_has_no_settings(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "other", "version": VERSION,
                                                        "settings": {}}))
    assert StudyStore.stored_settings(tmp_path) is None
    with pytest.raises(StoreMismatchError, match=r"manifest.json is not a uqkit store$"):
        StudyStore(tmp_path, {})
    (tmp_path / "manifest.json").write_text(json.dumps({"format": FORMAT, "version": 1,
                                                        "settings": {}}))
    assert StudyStore.stored_settings(tmp_path) is None
    with pytest.raises(StoreMismatchError, match=(
            rf"holds a store of format 1 from an older uqkit \(this one writes format "
            rf"{VERSION}\); use a new directory")):
        StudyStore(tmp_path, {})
    (tmp_path / "manifest.json").write_text(json.dumps(["not", "a", "dict"]))
    assert StudyStore.stored_settings(tmp_path) is None
    assert StudyStore.stored_settings(tmp_path / "nothing") is None


def test_closing_releases_the_lock_once(tmp_path):
    store = StudyStore(tmp_path, {"n": 1})
    store.close()
    store.close()  # a second close is a no-op
    again = StudyStore(tmp_path, {"n": 1})  # the directory is free again
    again.close()


def test_a_store_open_elsewhere_is_busy_and_names_its_owner(tmp_path):
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import sys, time
        from uqkit.execution.store import StudyStore
        store = StudyStore({str(tmp_path)!r}, {{"n": 1}})
        print("open", flush=True)
        sys.stdin.readline()
    """)
    holder = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(StoreBusyError, match=rf"is in use by process {holder.pid} on "):
            StudyStore(tmp_path, {"n": 1})
    finally:
        holder.communicate("\n", timeout=30)


def test_a_chunk_holds_the_documented_types_whatever_it_was_given(tmp_path):
    """inputs and outputs float, status int64, reasons text, seconds 0 unless given: what the
    module notes promise a reader with numpy alone."""
    with StudyStore(tmp_path, {"n": 2}) as store:
        store.save(0, 0, [[1, 2], [3, 4]], [[5], [6]], [False, True], [0, "diverged"])
        chunk = store.load(0)
    assert chunk["inputs"].dtype == chunk["outputs"].dtype == np.float64
    assert chunk["status"].dtype == np.int64 and chunk["status"].tolist() == [0, 1]
    assert chunk["reasons"].dtype.kind == "U" and chunk["reasons"].tolist() == ["0", "diverged"]
    assert chunk["seconds"] == 0.0 and chunk["start"] == 0
    with np.load(tmp_path / "chunks" / "chunk-000000.npz", allow_pickle=False) as raw:
        assert sorted(raw.files) == ["inputs", "outputs", "reasons", "seconds", "start",
                                     "status"]


def test_a_damaged_chunk_or_manifest_is_named_with_what_to_do(tmp_path):
    """A truncated chunk ended in zipfile.BadZipFile (an empty one in EOFError), a broken
    manifest in a JSON error that named no file."""
    from uqkit.execution.store import StoreCorruptError

    with StudyStore(tmp_path / "s", {"a": 1}) as st:
        st.save(0, 0, [[0.0]], [[1.0]], [0], ["ok"])
        st.save(1, 1, [[1.0]], [[2.0]], [0], ["ok"])
        path = st.chunk_path(1)
    body = open(path, "rb").read()
    for damaged in (body[: len(body) // 2], b""):
        with open(path, "wb") as fh:
            fh.write(damaged)
        with pytest.raises(StoreCorruptError, match=r"chunk-000001.npz is unreadable \(.*\): "
                                                    "delete it, and a rerun computes its runs"):
            load_dataset(tmp_path / "s")
        with StudyStore(tmp_path / "s", {"a": 1}) as st, pytest.raises(StoreCorruptError):
            st.load(1)
    os.remove(path)
    assert load_dataset(tmp_path / "s")["outputs"].tolist() == [[1.0]]
    (tmp_path / "s" / "manifest.json").write_text("{bad")
    with pytest.raises(StoreCorruptError, match=r"manifest.json is not readable JSON .*: the "
                                                "store's manifest is damaged"):
        StudyStore(tmp_path / "s", {"a": 1})


def test_a_store_path_that_is_a_file_or_empty_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(StoreMismatchError, match=r"the store '.*f' is a file, not a directory"):
        StudyStore(tmp_path / "f", {"a": 1})
    with pytest.raises(StoreMismatchError, match="needs a directory; got an empty path"):
        StudyStore("", {"a": 1})


def test_load_dataset_gives_failed_chunks_the_columns_of_the_output_names(tmp_path):
    """A chunk whose every row raised has no outputs (0 columns, as earlier versions saved
    it); the dataset has a column per output name all the same."""
    with StudyStore(tmp_path, {"n": 2}, metadata={"output_names": ["u", "v"]}) as store:
        store.save(0, 0, np.zeros((2, 1)), np.zeros((2, 0)), [-2, -2], ["raised", "raised"])
    outputs = load_dataset(tmp_path)["outputs"]
    assert outputs.shape == (2, 2) and np.isnan(outputs).all()


def _row_sums(X):
    return X.sum(1)


@pytest.mark.parametrize("stray", ["chunk-000000 (copy).npz", "chunk-0.npz",
                                   "chunk-000000.sync-conflict.npz"])
def test_a_copy_of_a_chunk_is_no_chunk(tmp_path, stray):
    """A file named like a chunk but not one (a sync tool's conflict copy) duplicated the
    rows of load_dataset, and stopped a resume with "invalid literal for int()"."""
    from uqkit import propagate

    X = np.arange(20.0).reshape(10, 2)
    propagate(_row_sums, X, executor="serial", store=tmp_path, chunk_size=5, progress=False)
    chunks = tmp_path / "chunks"
    (chunks / stray).write_bytes((chunks / "chunk-000000.npz").read_bytes())
    with pytest.warns(RuntimeWarning, match=r"chunk-0.* is not a chunk of the store"):
        data = load_dataset(tmp_path)
    assert data["rows"].tolist() == list(range(10))
    with pytest.warns(RuntimeWarning, match="is ignored"):
        res = propagate(_row_sums, X, executor="serial", store=tmp_path, chunk_size=5,
                        progress=False)
    assert (res.loaded, res.computed) == (10, 0)
