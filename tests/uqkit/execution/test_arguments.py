"""propagate's and ModelRunner's arguments refused by name, before a model runs or a store is
touched (:mod:`uqkit.execution.arguments`)."""
import json

import numpy as np
import pytest

from uqkit import propagate
from uqkit.execution.runner import ModelRunner
from uqkit.inputs import RandomInputs

X = np.arange(20.0).reshape(10, 2)


def row_sums(X):
    return X.sum(1)


@pytest.mark.parametrize("executor, message", [
    (None, "unknown executor kind None; use 'local', 'serial' or 'dask', or an open"),
    ("gpu", "unknown executor kind 'gpu'"),
    ("dask", "executor='dask' needs the scheduler's address")])
def test_a_bad_executor_is_refused_before_the_store_is_made(tmp_path, executor, message):
    """None reached the pool ("'NoneType' object has no attribute 'submit'"), and a store
    was made (its manifest naming a chunk size) before an unknown kind was refused: the
    corrected run inherited the chunk size of the failed one."""
    with pytest.raises(ValueError, match=message):
        propagate(row_sums, X, executor=executor, store=tmp_path / "s", progress=False)
    assert not (tmp_path / "s").exists()
    res = propagate(row_sums, X, executor="serial", store=tmp_path / "s", chunk_size=5,
                    progress=False)
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["settings"]["chunk_size"] == 5 and res.computed == 10


@pytest.mark.parametrize("settings, message", [
    (["seed"], r"settings must be a dict of names to values, got settings=\['seed'\]"),
    ({1: 2}, r"settings' keys must be strings \(names\), got \[1\] in settings=\{1: 2\}")])
def test_settings_must_be_a_dict_of_names(tmp_path, settings, message):
    """A list or a non-string key was a TypeError from deep inside the store."""
    with pytest.raises(ValueError, match=message):
        propagate(row_sums, X, executor="serial", store=tmp_path / "s", settings=settings,
                  progress=False)
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("chunk_size", [float("nan"), 2.7, 0, "5", True])
def test_chunk_size_must_be_a_whole_number_and_is_named(chunk_size):
    """NaN's message named no argument ("cannot convert float NaN to integer"), and 2.7 ran
    chunks of 2 without a word."""
    with pytest.raises(ValueError, match=rf"chunk_size must be an integer >= 1, got "
                                         rf"chunk_size={chunk_size!r}"):
        propagate(row_sums, X, executor="serial", chunk_size=chunk_size, progress=False)


def test_a_model_s_chunk_size_is_named_as_the_model_s():
    def model(X):
        return X.sum(1)

    model.chunk_size = 2.5
    with pytest.raises(ValueError, match=r"model.chunk_size must be an integer >= 1, got "
                                         r"model.chunk_size=2.5"):
        propagate(model, X, executor="serial", progress=False)


@pytest.mark.parametrize("workers", [0, 2.5, -1, True])
def test_model_runner_refuses_workers_as_propagate_does(workers):
    """ModelRunner took workers=0 for every core and 2.5 for 2, where propagate refuses
    both; None is still every core."""
    inputs = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})
    with pytest.raises(ValueError, match=rf"workers must be an integer >= 1, got "
                                         rf"workers={workers!r}"):
        ModelRunner(row_sums, inputs, workers=workers)
    with pytest.raises(ValueError, match=rf"workers={workers!r}"):
        propagate(row_sums, X, workers=workers, progress=False)
    with pytest.raises(ValueError, match="settings must be a dict"):
        ModelRunner(row_sums, inputs, settings=["seed"])
    with ModelRunner(row_sums, inputs, executor="serial", workers=None) as run:
        np.testing.assert_array_equal(run(X), X.sum(1)[:, None])
        assert run.workers >= 1
