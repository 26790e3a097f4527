"""A function of one run as a model: the same answers as the vectorised formula, each run's
failure alone, and a stopped study that makes only its unfinished runs again."""
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from uqkit import PerRunModel, propagate
from uqkit.execution import kept_runs
from uqkit.execution.identity import identity_key
from uqkit.execution.model import RAISED, RunContext
from uqkit.execution.store import load_dataset
from uqkit.inputs.sampling import Samples


def cantilever(P, E):
    """Tip deflection (m) of a 2 m cantilever, 0.1 x 0.05 m: P (N), E (Pa)."""
    return 4 * P * 2.0 ** 3 / (E * 0.1 * 0.05 ** 3)


def _samples(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return Samples(np.column_stack([rng.normal(1000, 100, n), rng.normal(2.1e11, 1e10, n)]),
                   ("P", "E"))


def test_runs_on_a_pool_give_the_vectorised_formulas_answers_in_the_models_input_order():
    samples = _samples()
    truth = cantilever(samples["P"], samples["E"])
    # the model names its inputs the other way round: named samples are reordered to it
    by_array = PerRunModel(lambda x: [cantilever(x[1], x[0]), x[1]], input_names=["E", "P"])
    res = propagate(by_array, samples, workers=2, progress=False)
    assert res.outputs.shape == (40, 2) and res.n_failed == 0
    np.testing.assert_array_equal(res.outputs[:, 0], truth)
    np.testing.assert_array_equal(res.outputs[:, 1], samples["P"])
    by_name = PerRunModel(cantilever, input_names=["E", "P"], keywords=True,
                          output_names=["v"])
    res = propagate(by_name, samples, executor="serial", progress=False)
    np.testing.assert_array_equal(res.outputs[:, 0], truth)
    assert res.output_names == ("v",)


def test_a_run_that_raises_fails_alone_with_its_reason_and_traceback():
    def model(x):
        if x[0] == 2:
            raise ArithmeticError("no convergence at x=2")
        return x[0] ** 2

    calls = []
    out = PerRunModel(lambda x: calls.append(x[0]) or model(x))(np.arange(5.0)[:, None])
    assert calls == [0, 1, 2, 3, 4]  # each run once: no second pass row by row
    assert out.status.tolist() == [0, 0, RAISED, 0, 0]
    assert out.reasons[2] == "raised ArithmeticError: no convergence at x=2"
    assert "no convergence" in out.traceback and "model(x)" in out.traceback
    np.testing.assert_array_equal(out.values[[0, 1, 3, 4], 0], [0, 1, 9, 16])
    assert np.isnan(out.values[2, 0])
    res = propagate(PerRunModel(model), np.arange(5.0)[:, None], executor="serial",
                    progress=False)
    assert res.n_failed == 1 and res.rows_rerun == 0 and not res.batch_errors


@pytest.mark.parametrize("answer, names, reason", [
    (float("nan"), None, "non-finite output"),
    ({"a": 1.0}, ("a", "b"), "raised ValueError: the function returned ['a'], not the "
                             "output_names ['a', 'b']"),
    ({"a": 1.0}, None, "give output_names"),
    ([1.0, 2.0, 3.0], ("a", "b"), "returned 3 outputs, not the 2 of output_names ['a', 'b']"),
    (np.ones((2, 2)), None, "an array of shape (2, 2); a run returns a number, a flat"),
    (None, None, "returned None (does it return its outputs?)"),
    ([], None, "returned no outputs"),
    ("3.5", None, "returned a str ('3.5')"),
    (True, None, "returned a bool (True)"),
    ([1.0, [2.0, 3.0]], None, "returned a list"),
    (1 + 2j, None, "complex outputs"),
    # a bool among the outputs was read as 1.0 (a bare bool was refused)
    ([2.0, True], ("a", "b"), "returned a bool among its outputs"),
    ({"a": 2.0, "b": True}, ("a", "b"), "returned a bool among its outputs"),
])
def test_a_run_with_a_bad_answer_fails_with_a_reason_that_names_it(answer, names, reason):
    model = PerRunModel(lambda x: answer if x[0] == 1 else
                        (dict(zip(names, (5.0, 6.0))) if isinstance(answer, dict) and names
                         else [5.0] * len(names or [0])), output_names=names)
    out = model(np.array([[0.0], [1.0]]))
    assert out.status.tolist() == [0, RAISED]
    assert reason in out.reasons[1]


def test_a_dict_answer_is_ordered_by_output_names():
    model = PerRunModel(lambda x: {"s": 2 * x[0], "v": x[0] + 1}, output_names=["v", "s"])
    np.testing.assert_array_equal(model(np.array([[1.0], [3.0]])).values, [[2, 2], [4, 6]])


def test_a_labelled_series_answer_is_read_by_name():
    """pandas.Series({"s": ..., "v": ...}) for output_names ["v", "s"] was read by position:
    s's values under v, status ok."""
    pd = pytest.importorskip("pandas")
    model = PerRunModel(lambda x: pd.Series({"s": 2 * x[0], "v": x[0] + 1}),
                        output_names=["v", "s"])
    np.testing.assert_array_equal(model(np.array([[1.0], [3.0]])).values, [[2, 2], [4, 6]])


def test_a_copy_of_a_model_is_the_same_model_and_a_series_without_names_is_read_in_order():
    """A copy (copy.copy, copy.deepcopy) rebuilt its function from cloudpickle's bytes, whose
    code marshals otherwise: a store refused it. A labelled Series with no output_names is
    read in its own order, as before names were read."""
    import copy

    from uqkit.execution.identity import identity_key

    model = PerRunModel(lambda x: [2 * x[0], x[0] + 1], output_names=["a", "b"])
    for other in (copy.copy(model), copy.deepcopy(model)):
        assert other.function is model.function and identity_key(other) == identity_key(model)
    pd = pytest.importorskip("pandas")
    plain = PerRunModel(lambda x: pd.Series({"s": 2 * x[0], "v": x[0] + 1}))
    np.testing.assert_array_equal(plain(np.array([[1.0]])).values, [[2, 2]])


def test_a_run_that_calls_sys_exit_fails_alone(tmp_path):
    """sys.exit() in a run (a solver wrapper giving up) ended the whole study."""
    def model(x):
        if x[0] == 3:
            sys.exit("solver gave up")
        return 2 * x[0]

    res = propagate(PerRunModel(model), np.arange(6.0)[:, None], executor="serial",
                    chunk_size=2, progress=False)
    assert res.status.tolist() == [0, 0, 0, RAISED, 0, 0]
    assert res.reasons[3] == "raised SystemExit: solver gave up"


def test_a_run_that_changes_the_working_directory_leaves_the_store_where_it_was(
        tmp_path, monkeypatch):
    """os.chdir in a run, a relative store: every later chunk was written under the new
    directory, which failed (FileNotFoundError) on every rerun."""
    (tmp_path / "scratch").mkdir()
    monkeypatch.chdir(tmp_path)

    def model(x):
        os.chdir(tmp_path / "scratch")
        return 2 * x[0]

    res = propagate(PerRunModel(model), np.arange(6.0)[:, None], executor="serial",
                    chunk_size=2, store="store", progress=False)
    assert res.n_failed == 0 and res.outputs[:, 0].tolist() == [0, 2, 4, 6, 8, 10]
    assert len(os.listdir(tmp_path / "store" / "chunks")) == 3
    assert not (tmp_path / "scratch" / "store").exists()


def test_a_run_with_another_number_of_outputs_than_the_first_fails():
    out = PerRunModel(lambda x: [x[0]] * int(x[0]))(np.array([[2.0], [3.0], [2.0]]))
    assert out.status.tolist() == [0, RAISED, 0]
    assert out.reasons[1] == "raised ValueError: returned 3 outputs where an earlier run returned 2"


@pytest.mark.parametrize("kwargs, message", [
    ({"function": 3}, "function must be callable, got 3"),
    ({"keywords": True}, "give input_names"),
    ({"input_names": "PE"}, "got the string 'PE'"),
    ({"output_names": ["v", "v"]}, "distinct names"),
    ({"chunk_size": 0}, "chunk_size"),
    ({"cores_per_run": 1.5}, "cores_per_run"),
])
def test_bad_settings_are_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        PerRunModel(**{"function": np.sum, **kwargs})


def test_inputs_of_the_wrong_width_are_refused_before_any_run():
    with pytest.raises(ValueError, match=r"X must be an \(n, 2\) array with columns"):
        PerRunModel(cantilever, input_names=["P", "E"], keywords=True)(np.ones((3, 3)))


def test_in_a_store_finished_runs_are_kept_and_taken_back_not_run_again(tmp_path):
    calls = []

    def model(x):
        calls.append(float(x[0]))
        return [x[0] ** 2, -x[0]]

    X = np.arange(6.0)[:, None]
    context = RunContext(np.arange(10, 16), str(tmp_path))
    first = PerRunModel(model)(X[:4], context[:4])
    assert calls == [0, 1, 2, 3]
    # a rerun of the whole chunk: the four kept answers are taken, row 2 with other inputs is
    # run again, and the results are those of the runs themselves
    X[2] = 7.0
    again = PerRunModel(model)(X, context)
    assert calls == [0, 1, 2, 3, 7, 4, 5]
    np.testing.assert_array_equal(again.values[[0, 1, 3]], first.values[[0, 1, 3]])
    np.testing.assert_array_equal(again.values[2], [49, -7])
    PerRunModel(model).rows_saved(context)
    assert not kept_runs.kept_folder(tmp_path).exists()


def test_failed_runs_are_not_kept_and_nothing_is_kept_without_a_store(tmp_path):
    model = PerRunModel(lambda x: x[0] if x[0] > 0 else float("nan"))
    model(np.array([[0.0], [1.0]]), RunContext(np.array([0, 1]), str(tmp_path)))
    assert sorted(p.name for p in kept_runs.kept_folder(tmp_path).iterdir()) == ["000001.json"]
    cwd = os.getcwd()
    os.chdir(tmp_path / "runs")
    try:
        model(np.array([[1.0]]))
        assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [".finished"]
    finally:
        os.chdir(cwd)


def test_models_of_other_functions_have_other_identities():
    """A store must refuse the runs of another function: the wrapper's identity is the
    function's, not only the class's."""
    def f(x):
        return x[0]
    key = identity_key(PerRunModel(f))

    def f(x):  # noqa: F811 - the same name, other code
        return 2 * x[0]
    assert identity_key(PerRunModel(f)) != key
    assert identity_key(PerRunModel(f)) == identity_key(PerRunModel(f))
    assert identity_key(PerRunModel(f, output_names=["y"])) != identity_key(PerRunModel(f))


SCRIPT = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    from uqkit import PerRunModel, propagate
    from uqkit.inputs.sampling import Samples

    store, log = sys.argv[1], sys.argv[2]
    # the model reads it from the environment: a global set from sys.argv would be part of
    # the model's identity, and the rerun another model

    def run(x):
        with open(os.environ["LOG"], "a") as fh:
            done = fh.tell() // 8  # a fixed-width line per finished run
            if done == int(os.environ["STOP_AFTER"]):
                os._exit(9)  # the machine dies mid-chunk
            y = np.sin(x[0]) * x[1]
            fh.write(f"{int(x[2]):7d}\\n")
        return y

    X = np.column_stack([np.linspace(0, 3, 60), np.linspace(1, 2, 60), np.arange(60)])
    res = propagate(PerRunModel(run), Samples(X, ("a", "b", "i")), executor="serial",
                    chunk_size=25, store=store, progress=False)
    print(json.dumps({"computed": res.computed, "loaded": res.loaded, "kept": res.kept,
                      "summary": res.summary()}))
""")


def test_a_study_killed_mid_chunk_makes_only_its_unfinished_runs_again(tmp_path):
    """Chunks of 25: killed after 37 runs, the store had saved one chunk and the 12 runs
    finished in the second were lost, made again by the rerun; now their answers are kept
    and the rerun makes each of the 60 runs once, and says so."""
    script = tmp_path / "study.py"
    script.write_text(SCRIPT)
    store, log = tmp_path / "store", tmp_path / "runs.log"

    def study(stop_after, store=store):
        return subprocess.run([sys.executable, str(script), str(store), str(log)],
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "LOG": str(log),
                                   "STOP_AFTER": str(stop_after)})

    killed = study(37)
    assert killed.returncode == 9, killed.stderr
    assert len(load_dataset(store)["rows"]) == 25  # one chunk saved, 12 runs of the next kept
    assert len(os.listdir(kept_runs.kept_folder(store))) == 12
    resumed = study(-1)
    counts = json.loads(resumed.stdout)
    # 23 runs made now, 25 from the saved chunk, 12 kept answers taken (counted as computed
    # before: a user read 35 runs made again where 23 were)
    assert counts["computed"] == 23 and counts["loaded"] == 25 and counts["kept"] == 12, \
        resumed.stderr
    assert "23 computed now, 25 loaded from the store, 12 kept by an interrupted run" in \
        counts["summary"]
    runs = [int(i) for i in log.read_text().split()]
    assert runs == list(range(60))  # every run made once
    assert not kept_runs.kept_folder(store).exists()
    X = np.column_stack([np.linspace(0, 3, 60), np.linspace(1, 2, 60)])
    np.testing.assert_array_equal(load_dataset(store)["outputs"][:, 0],
                                  [np.sin(a) * b for a, b in X])


def test_a_model_output_returned_by_a_model_is_checked_as_any_answer():
    """A ModelOutput went through unchecked: NaN outputs counted as good runs."""
    from uqkit.execution.model import ModelOutput, evaluate

    def model(X):
        return ModelOutput(np.sqrt(X[:, :1] - 1), np.zeros(len(X), np.int64),
                           np.array(["ok"] * len(X)))

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # sqrt of a negative
        out = evaluate(model, np.array([[0.0], [2.0]]))
    assert out.status.tolist() == [RAISED, 0] and out.reasons[0] == "non-finite output"
    with pytest.raises(ValueError, match=r"reasons of shape \(1,\); expected \(2,\)"):
        from uqkit.execution.model import normalise_output
        normalise_output(ModelOutput(np.zeros((2, 1)), np.zeros(2, np.int64),
                                     np.array(["ok"])), 2)


def test_how_runs_are_made_is_not_what_they_give():
    """chunk_size and cores_per_run made another model, and a store refused its runs."""
    def f(x):
        return x[0]
    assert identity_key(PerRunModel(f)) == identity_key(PerRunModel(f, chunk_size=3,
                                                                     cores_per_run=2))
    assert identity_key(PerRunModel(f, input_names=["a"])) != identity_key(PerRunModel(f))
    assert identity_key(PerRunModel(f, input_names=["a"], keywords=True)) != \
        identity_key(PerRunModel(f, input_names=["a"]))


def test_a_function_that_writes_into_its_inputs_leaves_the_sample_and_store_be(tmp_path):
    """x was a view of the sample: a function that scaled it in place changed the inputs
    that the store saved and the next analysis read."""
    def scaling(x):
        x *= 2
        return x[0]

    X = np.arange(6.0).reshape(3, 2)
    res = propagate(PerRunModel(scaling), X.copy(), executor="serial", store=tmp_path / "s",
                    progress=False)
    np.testing.assert_array_equal(res.inputs.values, X)
    np.testing.assert_array_equal(load_dataset(tmp_path / "s")["inputs"], X)
    np.testing.assert_array_equal(res.outputs[:, 0], 2 * X[:, 0])



def _slow_double(x):
    time.sleep(0.05)
    return 2 * x[0]


def _run_with_kept(tmp_path, kept_rows):
    """16 rows of :func:`_slow_double` in chunks of 8 into a store that holds the kept
    answers of ``kept_rows`` (what a killed run had kept of its first chunk); the store and
    the result."""
    X = np.arange(16.0)[:, None]
    store = tmp_path / "store"
    store.mkdir()
    for row in kept_rows:
        kept_runs.keep(kept_runs.kept_folder(store), row, X[row], np.array([2 * X[row, 0]]))
    return store, propagate(PerRunModel(_slow_double), X, executor="serial", chunk_size=8,
                            store=store, progress=False)


def test_answers_taken_from_kept_ones_are_counted_apart_and_not_timed(tmp_path):
    """A rerun that takes half its runs from kept answers: 8 kept, 8 run; the cost of a
    run is that of the runs made (the kept chunk, ~0 s, halved the median before)."""
    _, res = _run_with_kept(tmp_path, range(8))
    assert (res.computed, res.loaded, res.kept) == (8, 0, 8)
    assert res.outputs[:, 0].tolist() == (2 * np.arange(16.0)).tolist()
    assert 0.05 <= res.seconds_per_run < 0.5


def test_a_chunk_saved_with_kept_answers_keeps_the_cost_of_a_run_for_a_later_rerun(tmp_path):
    """A resume that takes 4 of its first chunk's 8 runs from kept answers saves that chunk's
    time: a later rerun, which loads every chunk, read the time of 4 runs as that of 8, and
    half the cost of a run for that chunk."""
    store, first = _run_with_kept(tmp_path, range(4))
    again = propagate(PerRunModel(_slow_double), np.arange(16.0)[:, None], executor="serial",
                      chunk_size=8, store=store, progress=False)
    assert (first.computed, first.kept, again.loaded) == (12, 4, 16)
    assert 0.05 <= first.seconds_per_run < 0.5
    assert 0.05 <= again.seconds_per_run < 0.5
