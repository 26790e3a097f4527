import json
import os
import socket
import sys

import numpy as np
import pytest

from uqkit import propagate, sample
from uqkit.inputs import RandomInputs
from uqkit.execution.model import RAISED
from uqkit.execution.store import StoreMismatchError, load_dataset
from uqkit.execution.propagation import PropagationError


class Linear:
    """y = A x + c for Gaussian x: exact mean A mu + c, covariance A Sigma A^T."""

    input_names = ("x1", "x2", "x3")
    A = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, 1.0]])
    c = np.array([4.0, -1.0])

    def __call__(self, X):
        return X @ self.A.T + self.c


class Flaky:
    """Raises on rows with x1 > 1.5 and reports a failed status on rows with x1 < -1.5."""

    def __call__(self, X):
        if np.any(X[:, 0] > 1.5):
            raise RuntimeError(f"diverged at x1={X[X[:, 0] > 1.5, 0][0]:.3f}")
        status = np.where(X[:, 0] < -1.5, 7, 0)
        reasons = np.where(status == 0, "ok", "did not converge")
        return X[:, :1] * 2.0, status, reasons


def gaussians():
    return RandomInputs.from_spec({"x1": "normal(1, 2)", "x2": "normal(-1, 0.5)",
                                   "x3": "normal(0, 3)"})


def test_linear_model_exact_moments():
    s = sample(gaussians(), 40_000, seed=3)
    res = propagate(Linear(), s, executor="serial", progress=False)
    mu = np.array([1.0, -1.0, 0.0])
    cov = np.diag([4.0, 0.25, 9.0])
    mean = Linear.A @ mu + Linear.c
    sd = np.sqrt(np.diag(Linear.A @ cov @ Linear.A.T))
    se = sd / np.sqrt(len(s))
    assert np.all(np.abs(res.outputs.mean(0) - mean) < 4 * se)
    assert np.all(np.abs(res.outputs.std(0) / sd - 1) < 4 / np.sqrt(2 * len(s)))
    assert res.computed == 40_000 and res.loaded == 0 and res.n_failed == 0


def test_named_columns_are_reordered_for_the_model():
    s = sample(gaussians(), 10, seed=1)
    swapped = type(s)(s.values[:, ::-1], s.names[::-1])
    a = propagate(Linear(), s, executor="serial", progress=False).outputs
    b = propagate(Linear(), swapped, executor="serial", progress=False).outputs
    assert np.array_equal(a, b)


def test_failures_are_recorded_not_dropped():
    s = sample(gaussians(), 500, seed=4)
    res = propagate(Flaky(), s, executor="serial", chunk_size=50, progress=False)
    x1 = s["x1"]
    assert len(res.status) == 500
    assert np.all(res.status[x1 > 1.5] == RAISED)
    assert all(r.startswith("raised RuntimeError: diverged") for r in res.reasons[x1 > 1.5])
    assert np.all(res.status[x1 < -1.5] == 7)
    ok = (x1 >= -1.5) & (x1 <= 1.5)
    assert np.all(res.status[ok] == 0)
    assert np.array_equal(res.outputs[ok, 0], 2 * x1[ok])
    assert np.isnan(res.outputs[x1 > 1.5]).all()
    assert "did not converge" in res.summary() and res.n_failed == int((~ok).sum())


def test_store_resume_and_mismatch(tmp_path):
    s = sample(gaussians(), 300, seed=5)
    store = tmp_path / "study"
    first = propagate(Linear(), s, executor="serial", chunk_size=64, store=store,
                      settings={"seed": 5}, progress=False)
    assert (first.computed, first.loaded) == (300, 0)
    again = propagate(Linear(), s, executor="serial", chunk_size=64, store=store,
                      settings={"seed": 5}, progress=False)
    assert (again.computed, again.loaded) == (0, 300)
    assert np.array_equal(first.outputs, again.outputs)
    # a lost chunk is recomputed, the rest loaded
    os.remove(store / "chunks" / "chunk-000002.npz")
    third = propagate(Linear(), s, executor="serial", chunk_size=64, store=store,
                      settings={"seed": 5}, progress=False)
    assert (third.computed, third.loaded) == (64, 236)
    with pytest.raises(StoreMismatchError, match=r"other settings \(seed: stored 5, now 6\)"):
        propagate(Linear(), s, executor="serial", chunk_size=64, store=store,
                  settings={"seed": 6}, progress=False)
    with pytest.raises(StoreMismatchError, match="chunk_size"):
        propagate(Linear(), s, executor="serial", chunk_size=32, store=store,
                  settings={"seed": 5}, progress=False)
    # documented format: numpy alone reads it
    with np.load(store / "chunks" / "chunk-000000.npz") as d:
        assert set(d.files) == {"start", "inputs", "outputs", "status", "reasons",
                                  "seconds"}
    data = load_dataset(store)
    assert np.array_equal(data["outputs"], first.outputs)
    manifest = json.loads((store / "manifest.json").read_text())
    assert manifest["settings"]["chunk_size"] == 64 and "n" not in manifest["settings"]


def test_bad_inputs():
    with pytest.raises(ValueError, match="takes 3 inputs"):
        propagate(Linear(), np.zeros((4, 2)), executor="serial", progress=False)
    with pytest.raises(ValueError, match=r"\(n, d\) array"):
        propagate(Linear(), np.zeros(4), executor="serial", progress=False)
    with pytest.raises(ValueError, match="unknown executor kind 'gpu'"):
        propagate(Linear(), np.zeros((4, 3)), executor="gpu", progress=False)
    with pytest.raises(ValueError, match="chunk_size must be an integer >= 1"):
        propagate(Linear(), np.zeros((4, 3)), executor="serial", chunk_size=0, progress=False)


def test_process_pool_and_dask_give_identical_results():
    distributed = pytest.importorskip("distributed")
    from uqkit.adapters import MembraneModel
    from uqkit.presets import table3

    s = sample(table3(), 24, seed=9)
    model = MembraneModel()
    pool = propagate(model, s, workers=2, chunk_size=6, progress=False)
    serial = propagate(model, s, executor="serial", chunk_size=6, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        dask = propagate(model, s, dask=cluster.scheduler_address, chunk_size=6,
                         progress=False)
    assert pool.n_failed == 0
    assert np.array_equal(pool.outputs, serial.outputs)
    assert np.array_equal(pool.outputs, dask.outputs)


class _RecordsContext:
    """A model that takes a run context and answers with its rows' indices; rows 4 and 9
    raise while the file ``flaky`` exists."""

    takes_context = True

    def __init__(self, flaky=None):
        self.flaky = flaky

    def __call__(self, X, context=None):
        assert context.store is None or os.path.isabs(context.store)
        failing = {4, 9} if self.flaky and os.path.exists(self.flaky) else set()
        status = np.array([RAISED if r in failing else 0 for r in context.rows])
        return context.rows.astype(float), status


def test_a_context_model_gets_its_rows_indices_and_the_store(tmp_path):
    s = np.zeros((11, 1))
    res = propagate(_RecordsContext(), s, executor="serial", chunk_size=3, progress=False)
    assert res.outputs[:, 0].tolist() == list(range(11))
    # a retried row of a stored chunk is told its own index, not its place in the retry batch
    store, flaky = tmp_path / "st", tmp_path / "flaky"
    flaky.touch()
    first = propagate(_RecordsContext(flaky), s, executor="serial", chunk_size=3, store=store,
                      progress=False)
    assert np.flatnonzero(first.status).tolist() == [4, 9]
    flaky.unlink()
    again = propagate(_RecordsContext(flaky), s, executor="serial", chunk_size=3, store=store,
                      progress=False)
    assert again.computed == 2 and again.outputs[:, 0].tolist() == list(range(11))


def test_the_summary_lists_ten_reasons_and_counts_the_rest():
    def model(X):
        return X[:, 0], np.ones(len(X), int), np.array([f"reason {int(x)}" for x in X[:, 0]])

    res = propagate(model, np.arange(13.0)[:, None], executor="serial", progress=False)
    lines = res.summary().splitlines()
    assert len(lines) == 12 and lines[-1] == ("  ... and 3 more failed runs with 3 other "
                                              "reasons (see reasons, or to_csv)")


def test_dask_without_distributed_says_how_to_install_it(monkeypatch):
    """Dask is an optional dependency (``uqkit[dask]``): asking for it without the package
    must name the package and the install command, before anything runs."""
    from uqkit.execution.dask_cluster import DASK_INSTALL, MissingDependencyError

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    calls = []

    def model(X):
        calls.append(len(X))
        return X[:, :1]

    with pytest.raises(MissingDependencyError, match="'distributed' package") as info:
        propagate(model, np.zeros((4, 2)), dask="tcp://127.0.0.1:8786", progress=False)
    assert DASK_INSTALL in str(info.value) and calls == []


def test_the_cli_turns_a_missing_distributed_into_one_line_and_exit_code_2(
        monkeypatch, tmp_path, capsys):
    from uqkit.cli import main

    monkeypatch.setitem(sys.modules, "distributed", None)
    code = main(["study", "membrane", "--out", str(tmp_path / "out"), "--dask",
                 "tcp://127.0.0.1:8786", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and 'pip install "uqkit[dask]"' in err[0], err
    assert not (tmp_path / "out").exists()


def test_a_study_refuses_an_unreachable_scheduler_in_one_line_before_making_out(
        monkeypatch, tmp_path, capsys):
    """It was a traceback after the 30 s wait, and --out was left with an empty store."""
    pytest.importorskip("distributed")
    from uqkit.cli import main
    from uqkit.execution import dask_cluster

    monkeypatch.setattr(dask_cluster, "DASK_CONNECT_SECONDS", 2)  # not the default 30 s wait
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    code = main(["study", "membrane", "--out", str(tmp_path / "out"), "--dask", address,
                 "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("uqkit study membrane: cannot reach the Dask scheduler at ")
    assert address in err[0] and not (tmp_path / "out").exists()


def test_a_progress_label_names_the_bar(capsys):
    """``progress="..."`` labels the bar (a study's phase); ``True`` keeps "propagate"."""
    import numpy as np

    from uqkit import propagate

    X = np.arange(6.0).reshape(3, 2)
    for progress, label in (("FE truth (3 runs)", "FE truth (3 runs)"), (True, "propagate")):
        propagate(lambda x: x.sum(1), X, executor="serial", progress=progress)
        err = capsys.readouterr().err
        assert label in err and "3/3" in err


# -- the audit's silent wrong numbers in what models return ---------------------------------------

class _Named:
    """A two-output model of known answers; ``answer`` makes its return value."""

    output_names = ("p", "q")

    def __init__(self, answer):
        self.answer = answer

    def __call__(self, X):
        return self.answer(X)


def test_a_dataframe_or_dict_of_outputs_is_read_by_name():
    """A DataFrame of columns q, p was read by position: p got q's values."""
    pd = pytest.importorskip("pandas")
    X = np.arange(6.0).reshape(3, 2)
    for answer in (lambda X: pd.DataFrame({"q": X[:, 1], "p": X[:, 0]}),
                   lambda X: {"q": X[:, 1], "p": X[:, 0]}):
        res = propagate(_Named(answer), X, executor="serial", progress=False)
        np.testing.assert_array_equal(res.outputs, X)
    # with a status; and a DataFrame of unnamed columns (0, 1) by position
    res = propagate(_Named(lambda X: (pd.DataFrame({"q": X[:, 1], "p": X[:, 0]}),
                                      np.zeros(len(X), int))), X, executor="serial",
                    progress=False)
    np.testing.assert_array_equal(res.outputs, X)
    res = propagate(_Named(lambda X: pd.DataFrame(X)), X, executor="serial", progress=False)
    np.testing.assert_array_equal(res.outputs, X)
    with pytest.raises(PropagationError, match=r"outputs \['p'\] but its output_names are "
                                               r"\('p', 'q'\): \['q'\] missing"):
        propagate(_Named(lambda X: {"p": X[:, 0]}), X, executor="serial", progress=False)


def test_a_tuple_of_two_outputs_is_not_taken_for_outputs_and_status():
    """return y1, y2 read y2 as the status, cut to integers: rows failed or passed by its
    value, and the second output was lost."""
    # a status of whole numbers as floats is a status
    res = propagate(lambda X: (X[:, 0], np.where(X[:, 1] > 1, 1.0, 0.0)),
                    np.array([[1.0, 0.0], [1.0, 2.0]]), executor="serial", progress=False)
    assert res.ok.tolist() == [True, False]
    with pytest.raises(PropagationError, match=r"second item \(of dtype float64, not whole "
                                               r"numbers\) is read as the runs' status.*"
                                               r"np.column_stack"):
        propagate(lambda X: (10 * X[:, 0], X[:, 1] / 4), np.ones((3, 2)), executor="serial",
                  progress=False)


def test_outputs_of_another_width_than_the_output_names_fail_by_name():
    """One column for two output_names: every row ok, and the CSV wrote blanks."""
    with pytest.raises(PropagationError, match="the model returned 1 outputs for its 2 "
                                               "output_names"):
        propagate(_Named(lambda X: X[:, 0]), np.ones((4, 2)), executor="serial",
                  progress=False)
    # a row-dependent width fails those rows alone
    res = propagate(_Named(lambda X: X if X[0, 0] < 2 else X[:, :1]),
                    np.column_stack([np.arange(4.0), np.ones(4)]), executor="serial",
                    chunk_size=1, progress=False)
    assert res.ok.tolist() == [True, True, False, False] and res.outputs.shape == (4, 2)


def _width_by_row(X):
    return X[:, :1] if X[0, 0] < 2 else X


def test_chunks_of_another_width_fail_rather_than_the_whole_study_at_its_end(tmp_path):
    """Every chunk was computed and saved, then stacking them raised, and so did every rerun
    of the store."""
    X = np.column_stack([np.arange(4.0), np.ones(4)])
    res = propagate(_width_by_row, X, executor="serial", chunk_size=1, progress=False,
                    store=tmp_path / "s")
    assert res.ok.tolist() == [True, True, False, False] and res.outputs.shape == (4, 1)
    assert "returned 2 outputs where its first runs returned 1" in \
        res.failures().most_common(1)[0][0]
    again = propagate(_width_by_row, X, executor="serial", chunk_size=1, progress=False,
                      store=tmp_path / "s", retry_failed="none")
    np.testing.assert_array_equal(again.outputs, res.outputs)


def test_a_store_names_its_input_columns_in_the_models_order(tmp_path):
    """The store holds the columns the model took (b, a) but named them as the samples (a, b)."""
    from uqkit.execution.store import load_dataset
    from uqkit.inputs.sampling import Samples

    class Reversed:
        input_names = ("b", "a")

        def __call__(self, X):
            return X[:, :1]

    propagate(Reversed(), Samples(np.array([[1.0, 2.0]]), ("a", "b")), executor="serial",
              progress=False, store=tmp_path / "s")
    data = load_dataset(tmp_path / "s")
    row = dict(zip(data["input_names"], data["inputs"][0]))
    assert row == {"a": 1.0, "b": 2.0}


def test_exports_refuse_output_names_that_clash_with_the_input_columns(tmp_path):
    """An output named like an input overwrote the input's column in to_dataframe."""
    from uqkit.inputs.sampling import Samples

    class Clash:
        output_names = ("a",)

        def __call__(self, X):
            return 10 * X[:, :1]

    res = propagate(Clash(), Samples(np.array([[1.0, 2.0]]), ("a", "b")), executor="serial",
                    progress=False)
    with pytest.raises(ValueError, match=r"the names \['a'\] would be two columns"):
        res.to_csv(tmp_path / "runs.csv")


def test_a_store_of_other_samples_names_what_differs(tmp_path):
    """Another distribution of an input was refused only as "another seed or rule"."""
    inputs = RandomInputs.from_spec({"a": "normal(0, 1)"})
    other = RandomInputs.from_spec({"a": "normal(0, 2)"})
    propagate(_identity, sample(inputs, 8, seed=1), executor="serial", progress=False,
              store=tmp_path / "s")
    with pytest.raises(ValueError, match=r"other samples \(inputs.*Normal\(mu=0.0, sigma=1.0\)"
                                         r".*Normal\(mu=0.0, sigma=2.0\)"):
        propagate(_identity, sample(other, 8, seed=1), executor="serial", progress=False,
                  store=tmp_path / "s")


def _identity(X):
    return X
