"""Propagation edge cases: each chunk saved as it finishes, a differently configured model
refused by a store, array predictions of a surrogate, failed rows and their reasons."""
import functools
import os
from concurrent.futures import Executor

import numpy as np
import pytest

from uqkit import propagate
from uqkit.adapters import SurrogateModel
from uqkit.execution.model import normalise_output
from uqkit.execution.store import StoreMismatchError


def test_serial_run_saves_each_chunk_and_an_interrupt_keeps_them(tmp_path):
    seen = []

    def model(X):
        seen.append(len(os.listdir(tmp_path / "s" / "chunks")))
        if len(seen) == 4:
            raise KeyboardInterrupt
        return X

    with pytest.raises(KeyboardInterrupt):
        propagate(model, np.arange(50.0).reshape(-1, 1), executor="serial", chunk_size=5,
                  store=tmp_path / "s", progress=False)
    assert seen == [0, 1, 2, 3]  # chunk k starts with k finished chunks on disk
    assert len(os.listdir(tmp_path / "s" / "chunks")) == 3


def _scaled(X, a):
    return a * X


def test_store_refuses_a_differently_configured_model(tmp_path):
    X = np.arange(8.0).reshape(-1, 2)
    propagate(functools.partial(_scaled, a=1.0), X, executor="serial", store=tmp_path / "s",
              progress=False)
    with pytest.raises(StoreMismatchError, match="model"):
        propagate(functools.partial(_scaled, a=100.0), X, executor="serial",
                  store=tmp_path / "s", progress=False)


def test_surrogate_adapter_takes_array_predictions(tmp_path):
    from sklearn.linear_model import LinearRegression

    X = np.random.default_rng(0).normal(size=(30, 2))
    lr = LinearRegression().fit(X, X @ [1.0, 2.0])
    res = propagate(SurrogateModel(lr), X[:4], executor="serial", progress=False)
    assert res.n_failed == 0 and np.allclose(res.outputs[:, 0], X[:4] @ [1.0, 2.0])
    other = LinearRegression().fit(X, X @ [3.0, 2.0])
    assert SurrogateModel(lr).describe() != SurrogateModel(other).describe()


def test_failed_rows_are_nan_and_reasons_must_align():
    out = normalise_output((np.ones((3, 2)), np.array([0, 1, 0])), 3)
    assert np.isnan(out.values[1]).all() and np.isfinite(out.values[[0, 2]]).all()
    assert out.reasons.tolist() == ["ok", "model status 1", "ok"]
    with pytest.raises(ValueError, match=r"reasons of shape \(1,\); expected \(3,\)"):
        normalise_output((np.ones((3, 2)), np.array([0, 1, 0]), ["bad"]), 3)


def complex_model(X):
    return X[:, 0] + 1j


def test_complex_outputs_fail_their_rows_instead_of_losing_the_imaginary_part():
    """np.asarray(..., dtype=float) kept the real part with only a ComplexWarning: every row
    then passed as a result."""
    with pytest.raises(ValueError, match=r"complex outputs \(dtype complex128\)"):
        normalise_output(np.ones(3) + 1j, 3)
    from uqkit.execution.propagation import PropagationError

    with pytest.raises(PropagationError, match="the same error.*complex outputs"):
        propagate(complex_model, np.arange(6.0)[:, None], executor="serial", progress=False)
    assert normalise_output(np.ones(3, dtype=np.float32), 3).values.dtype == np.float64


@pytest.mark.parametrize("workers", [0, 1.5, -2, True])
def test_workers_must_be_a_positive_integer(workers):
    """workers=0 and workers=1.5 ran (the command line refused 0)."""
    with pytest.raises(ValueError,
                       match=rf"workers must be an integer >= 1, got workers={workers!r}"):
        propagate(complex_model, np.arange(4.0)[:, None], workers=workers, progress=False)


def test_a_vectorised_model_that_writes_into_its_inputs_leaves_the_sample_be(tmp_path):
    """In this process (executor="serial", an analysis's small batch) the model got a view
    of the sample: converting units in place changed the inputs saved with the runs."""
    def in_millimetres(X):
        X[:, 0] *= 1000
        return X[:, 0]

    from uqkit.execution.store import load_dataset

    X = np.arange(6.0).reshape(3, 2)
    res = propagate(in_millimetres, X.copy(), executor="serial", store=tmp_path / "s",
                    progress=False)
    np.testing.assert_array_equal(res.inputs.values, X)
    np.testing.assert_array_equal(load_dataset(tmp_path / "s")["inputs"], X)
    np.testing.assert_array_equal(res.outputs[:, 0], 1000 * X[:, 0])


class _Named:
    input_names = ("a", "b", "c")
    output_names = ("a_out", "c_out")

    def __call__(self, X):
        return X[:, [0, 2]]


def test_a_dataframe_of_samples_is_read_by_its_column_names():
    """Columns c, a, b for a model of inputs a, b, c: by position the model got a = 3."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"c": [3.0, 30.0], "a": [1.0, 10.0], "b": [2.0, 20.0]})
    res = propagate(_Named(), frame, executor="serial", progress=False)
    assert res.outputs.tolist() == [[1.0, 3.0], [10.0, 30.0]]
    with pytest.raises(ValueError, match=r"missing \['c'\]"):
        propagate(_Named(), frame[["a", "b"]], executor="serial", progress=False)
    # a DataFrame of numbered columns (pd.DataFrame(X)) is an array: by position, as before
    res = propagate(_Named(), pd.DataFrame(frame.to_numpy()), executor="serial",
                    progress=False)
    assert res.outputs.tolist() == [[3.0, 2.0], [30.0, 20.0]]


def test_a_model_naming_one_output_twice_is_refused_before_any_run():
    model = _Named()
    model.output_names = ("y", "y")
    with pytest.raises(ValueError, match=r"output names \['y'\] appear more than once"):
        propagate(model, np.ones((2, 3)), executor="serial", progress=False)


def test_a_sample_holding_nan_resumes_from_its_store(tmp_path):
    """NaN != NaN: a stored chunk with a NaN input was "other inputs" on every rerun, and the
    store could never be resumed. A different value is still refused."""
    X = np.arange(40.0).reshape(20, 2)
    X[3, 1] = np.nan

    def model(X):
        return np.nan_to_num(X).sum(1)

    first = propagate(model, X, executor="serial", store=tmp_path / "s", chunk_size=10,
                      progress=False)
    again = propagate(model, X, executor="serial", store=tmp_path / "s", chunk_size=10,
                      progress=False)
    assert (first.computed, again.loaded, again.computed) == (20, 20, 0)
    np.testing.assert_array_equal(again.outputs, first.outputs)
    other = X.copy()
    other[3, 1] = 7.0
    with pytest.raises(ValueError, match="chunk 0 .* holds other inputs"):
        propagate(model, other, executor="serial", store=tmp_path / "s", chunk_size=10,
                  progress=False)


def gives_up_at_six(X):
    """A solver's wrapper that calls sys.exit() for one input (a = 6)."""
    import sys

    if (X[:, 0] == 6).any():
        sys.exit("solver wrapper gave up")
    return X.sum(1)


@pytest.mark.parametrize("executor", ["serial", "local"])
def test_sys_exit_in_a_vectorised_model_fails_its_row_not_the_study(tmp_path, executor):
    """SystemExit is no Exception: it ended the whole study (a pool's too), where a
    PerRunModel's run that calls it fails alone."""
    X = np.arange(40.0).reshape(20, 2)
    res = propagate(gives_up_at_six, X, executor=executor, workers=2, chunk_size=10,
                    store=tmp_path / "s", progress=False)
    assert np.flatnonzero(res.status).tolist() == [3] and res.rows_rerun == 10
    assert res.reasons[3] == "raised SystemExit: solver wrapper gave up"
    np.testing.assert_array_equal(np.delete(res.outputs[:, 0], 3), np.delete(X.sum(1), 3))


def _sum(X):
    return X.sum(1)


def test_an_interrupt_counts_the_rows_in_the_store_not_a_stored_chunk_s_new_rows(
        tmp_path, monkeypatch):
    """A longer sample extends the stored last chunk (rows 90-94 of 90-99): its new rows,
    never run, were counted as saved ("saved 100 of 200", the store holding 95)."""
    from uqkit import load_dataset
    from uqkit.execution import propagation

    X = np.arange(400.0).reshape(200, 2)
    propagate(_sum, X[:95], executor="serial", store=tmp_path / "s", chunk_size=10,
              progress=False)

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(propagation, "_run_chunk", interrupted)
    with pytest.raises(propagation.PropagationInterrupted) as stop:
        propagate(_sum, X, executor="serial", store=tmp_path / "s", chunk_size=10,
                  progress=False)
    assert len(load_dataset(tmp_path / "s")["rows"]) == 95
    assert (stop.value.saved, stop.value.total) == (95, 200)
    assert stop.value.message().startswith("saved 95 of 200 runs")


class _LosesATask(Executor):
    """Runs the tasks submitted before the ``lost``-th at once; that one fails as a lost
    worker does, 0.3 s later (once those are seen finished); the tasks after it never end."""

    def __init__(self, lost):
        self.lost, self.submitted = lost, 0

    def submit(self, fn, *args, **kwargs):
        import threading
        from concurrent.futures import Future

        self.submitted += 1
        fut = Future()
        if self.submitted < self.lost:
            fut.set_result(fn(*args, **kwargs))
        elif self.submitted == self.lost:
            threading.Timer(0.3, fut.set_exception, [OSError("the node was lost")]).start()
        return fut


def broken(X):
    raise ValueError("no licence")


@pytest.mark.parametrize("model, before, lost", [(_sum, 95, 1), (broken, 0, 3)])
def test_an_infrastructure_failure_counts_the_rows_in_the_store(tmp_path, model, before,
                                                                lost):
    """Counted as saved were a stored chunk's new rows (rows 95-99 of the stored 90-94,
    whose task was lost: 100) and the chunks held back while every run so far failed one
    way (a broken model's, never stored: 20)."""
    from uqkit import load_dataset
    from uqkit.execution.propagation import PropagationError

    X = np.arange(400.0).reshape(200, 2)
    if before:
        propagate(model, X[:before], executor="serial", store=tmp_path / "s", chunk_size=10,
                  progress=False)
    with pytest.raises(PropagationError, match=f"; {before} finished runs are saved in"):
        propagate(model, X[:120], executor=_LosesATask(lost), store=tmp_path / "s",
                  chunk_size=10, progress=False)
    assert len(load_dataset(tmp_path / "s")["rows"]) == before
