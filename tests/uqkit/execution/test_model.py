"""How :func:`uqkit.execution.model.evaluate` reads a model's answer: the context each call
gets, the square answer's one-row probe, the rows run one by one, True/False tables, and the
time it reports (mutation testing found these untested: docs/development/mutation_testing.md).
"""
import time

import numpy as np
import pandas as pd
import pytest

from uqkit.execution.model import RAISED, RunContext, call_model, evaluate, stack_values


class _Contexts:
    """A model that takes a run context, records every one it gets, and answers with
    ``answer(X)``."""

    takes_context = True

    def __init__(self, answer):
        self.answer, self.seen = answer, []

    def __call__(self, X, context=None):
        self.seen.append((len(X), context))
        return self.answer(X)


CHUNK = RunContext(np.array([4, 5, 6]), store="/data/store", invocation="run-7")


def test_a_context_model_called_without_one_gets_the_rows_0_to_n_minus_1():
    model = _Contexts(lambda X: X[:, 0])
    call_model(model, np.zeros((3, 1)))
    context = model.seen[0][1]
    assert context.rows.tolist() == [0, 1, 2] and context.store is None


def test_rows_run_one_by_one_get_their_own_index_and_the_chunks_store():
    """The batch raises, so each row is run alone with its index in the sample, the store and
    the propagation's token (a model keeping its runs by index would file them wrongly)."""
    def answer(X):
        if len(X) > 1:
            raise RuntimeError("one row at a time")
        return X[:, 0] * 2

    model = _Contexts(answer)
    out = evaluate(model, np.array([[1.0], [2.0], [3.0]]), CHUNK)
    assert out.ok.all() and out.values[:, 0].tolist() == [2.0, 4.0, 6.0]
    assert out.rows_rerun == 3 and out.batch_error == "RuntimeError: one row at a time"
    singles = [context for n, context in model.seen if n == 1]
    assert [c.rows.tolist() for c in singles] == [[4], [5], [6]]
    assert {(c.store, c.invocation) for c in singles} == {("/data/store", "run-7")}


def test_a_row_run_alone_with_too_few_outputs_fails_by_name():
    class TwoNamed:
        output_names = ("a", "b")

        def __call__(self, X):
            if len(X) > 1:
                raise RuntimeError("batch")
            return X[:, :1] if X[0, 0] > 1 else X  # the second row answers one output

    out = evaluate(TwoNamed(), np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert out.status.tolist() == [0, RAISED]
    assert out.reasons[1] == "the model returned 1 outputs for its 2 output_names"
    assert np.isnan(out.values[1]).all() and out.values[0].tolist() == [1.0, 2.0]


def test_a_square_answer_is_probed_with_the_first_rows_own_context():
    model = _Contexts(lambda X: np.vstack([X[:, 0], X[:, 0] + 1, X[:, 0] + 2]))
    out = evaluate(model, np.array([[1.0], [2.0], [3.0]]), CHUNK)
    assert "one row per output, as its one-row answer shows" in out.batch_error
    probe = model.seen[1]
    assert probe[0] == 1 and probe[1].rows.tolist() == [4]
    assert (probe[1].store, probe[1].invocation) == ("/data/store", "run-7")


def test_a_square_answer_with_a_status_is_probed_too():
    """(outputs, status) with the outputs one row per output: read transposed before."""
    out = evaluate(lambda X: (np.vstack([X[:, 0], -X[:, 0]]), np.zeros(len(X), int)),
                   np.array([[1.0], [2.0]]))
    assert "one row per output" in out.batch_error


def test_a_square_answer_stands_where_the_one_row_probe_raises():
    """A model that needs two rows or more (a fit across them, say): no evidence that its
    square answer is transposed, so it stands; the probe is not counted as a failure."""
    def model(X):
        if len(X) < 2:
            raise ValueError("needs two rows")
        return np.column_stack([X[:, 0], X[:, 0] * 10])

    out = evaluate(model, np.array([[1.0], [2.0]]))
    assert out.ok.all() and out.batch_error == ""
    assert out.values.tolist() == [[1.0, 10.0], [2.0, 20.0]]


@pytest.mark.parametrize("answer", [
    lambda X: {"fails": X[:, 0] > 1.0},
    lambda X: pd.DataFrame({"fails": X[:, 0] > 1.0}),
    lambda X: pd.DataFrame(X > 1.0)])  # unnamed columns, taken by position
def test_a_true_false_table_is_flagged_as_an_indicator(answer):
    """A dict or DataFrame of True/False went through float and read 1 - Pf (0.845 for
    0.159) in a failure analysis; an array of them was refused already."""
    class Named:
        output_names = ("fails",)

        def __call__(self, X):
            return answer(X)

    out = evaluate(Named(), np.array([[0.5], [1.5]]))
    assert out.boolean and out.values[:, 0].tolist() == [0.0, 1.0]


def test_a_table_of_numbers_and_flags_is_read_as_numbers():
    class Mixed:
        output_names = ("g", "collapsed")

        def __call__(self, X):
            return {"g": X[:, 0], "collapsed": X[:, 0] < 0}

    out = evaluate(Mixed(), np.array([[-1.0], [2.0]]))
    assert not out.boolean and out.values.tolist() == [[-1.0, 1.0], [2.0, 0.0]]


def test_a_true_false_indicator_refuses_the_failure_analysis():
    from uqkit.inputs import RandomInputs
    from uqkit.reliability import failure_probability

    class Table:
        output_names = ("fails",)

        def __call__(self, X):
            return pd.DataFrame({"fails": X[:, 0] > 1.0})

    with pytest.raises(ValueError, match="g returned True/False: a limit state is a margin"):
        failure_probability(Table(), RandomInputs.from_spec({"x": "normal(0, 1)"}),
                            method="mc", n=200, seed=0, executor="serial")


def test_seconds_is_the_evaluations_wall_time():
    def slow(X):
        time.sleep(0.05)
        return X

    for model in (slow, lambda X: slow(X) if len(X) == 1 else 1 / 0):  # batch, row by row
        t0 = time.perf_counter()
        out = evaluate(model, np.zeros((2, 1)))
        wall = time.perf_counter() - t0
        assert 0.05 <= out.seconds <= wall


def test_successful_rows_of_different_widths_are_named():
    with pytest.raises(ValueError, match=r"different numbers of outputs for successful rows: "
                                         r"\[1, 2\]; a model must return the same outputs for "
                                         "every row"):
        stack_values([np.zeros((1, 1)), np.zeros((1, 2))], [np.zeros(1), np.zeros(1)], "rows")
    padded = stack_values([np.zeros((1, 2)), np.zeros((1, 0))], [np.zeros(1), np.ones(1)])
    assert padded.shape == (2, 2) and np.isnan(padded[1]).all()


def test_a_failed_block_wider_than_the_successful_ones_is_padded_to_their_width():
    """The width is the successful rows' (a failed row's extra values are no outputs)."""
    values = stack_values([np.array([[1.5]]), np.array([[9.0, 9.0]])], [np.zeros(1), np.ones(1)])
    assert values.shape == (2, 1) and values[0, 0] == 1.5 and np.isnan(values[1, 0])
    with pytest.raises(ValueError, match="for successful chunks: "):  # the default's word
        stack_values([np.zeros((1, 1)), np.zeros((1, 2))], [np.zeros(1), np.zeros(1)])


def test_rows_run_alone_that_answer_different_widths_are_named_as_rows():
    def model(X):
        if len(X) > 1:
            raise RuntimeError("batch")
        return X if X[0, 0] > 1 else X[:, :1]

    with pytest.raises(ValueError, match="for successful rows: \\[1, 2\\]"):
        evaluate(model, np.array([[1.0, 2.0], [3.0, 4.0]]))


def test_a_true_false_answer_of_rows_run_alone_is_flagged():
    out = evaluate(lambda X: X[:, 0] > 1 if len(X) == 1 else 1 / 0, np.array([[0.5], [1.5]]))
    assert out.rows_rerun == 2 and out.boolean


def test_a_table_without_output_names_is_read_by_position():
    out = evaluate(lambda X: pd.DataFrame({"b": X[:, 0] * 2, "a": X[:, 0]}),
                   np.array([[1.0], [2.0]]))
    assert out.values.tolist() == [[2.0, 1.0], [4.0, 2.0]]


def test_a_model_output_of_the_wrong_width_fails_by_name():
    """An answer already a ModelOutput (a per-run model's) is checked against the output
    names like any other."""
    from uqkit.execution.model import ModelOutput

    class Named:
        output_names = ("a", "b")

        def __call__(self, X):
            return ModelOutput(X[:, :1], np.zeros(len(X), int), np.array(["ok"] * len(X)))

    out = evaluate(Named(), np.array([[1.0], [2.0]]))
    assert (out.status == RAISED).all()
    assert set(out.reasons) == {"the model returned 1 outputs for its 2 output_names"}


def test_a_width_mismatch_keeps_the_failed_rows_own_status_and_reason():
    class Named:
        output_names = ("a", "b")

        def __call__(self, X):
            return X[:, :1], np.array([0, 7]), np.array(["ok", "diverged"])

    out = evaluate(Named(), np.array([[1.0], [2.0]]))
    assert out.status.tolist() == [RAISED, 7]
    assert out.reasons.tolist() == ["the model returned 1 outputs for its 2 output_names",
                                    "diverged"]


def test_status_and_reasons_are_integers_and_text_whatever_the_model_gave():
    out = evaluate(lambda X: (X, np.array([0.0, 3.0]), [11, 12]), np.array([[1.0], [2.0]]))
    assert out.status.dtype == np.int64 and out.status.tolist() == [0, 3]
    assert out.reasons.dtype.kind == "U" and out.reasons.tolist() == ["11", "12"]
    plain = evaluate(lambda X: X, np.array([[1.0], [2.0]]))
    assert plain.status.dtype == np.int64 and plain.reasons.tolist() == ["ok", "ok"]


def test_a_square_answer_with_status_and_reasons_is_probed_too():
    out = evaluate(lambda X: (np.vstack([X[:, 0], -X[:, 0]]), np.zeros(len(X), int),
                              np.array(["ok"] * len(X))), np.array([[1.0], [2.0]]))
    assert "one row per output" in out.batch_error


@pytest.mark.parametrize("shape, hint", [((3, 2), True), ((3, 5), False)])
def test_the_one_row_per_output_hint_comes_only_where_the_columns_are_the_rows(shape, hint):
    from uqkit.execution.model import normalise_output

    with pytest.raises(ValueError, match=r"the model returned outputs of shape") as info:
        normalise_output(np.zeros(shape), 2)
    assert ("one row per output?" in str(info.value)) == hint


@pytest.mark.parametrize("answer, n, message", [
    ((np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2)), 2,
     "a model returns outputs, (outputs, status) or (outputs, status, reasons); got a tuple of "
     "4"),
    ((np.zeros(2), np.array([0.5, 1.0])), 2,
     "the model returned a tuple whose second item (of dtype float64, not whole numbers) is "
     "read as the runs' status, which is integer codes (0 = ok); for two outputs return "
     "np.column_stack([y1, y2])"),
    (np.zeros(2, complex), 2, "the model returned complex outputs (dtype complex128): return "
     "real numbers, the real part or the magnitude as you mean it"),
    (np.zeros((3, 2)), 2, "the model returned outputs of shape (3, 2) for 2 rows; expected "
     "(n, k) with n = 2; one row per output? return one row per run: "
     "np.column_stack([y1, y2, ...])"),
    (np.zeros((3, 5)), 2, "the model returned outputs of shape (3, 5) for 2 rows; expected "
     "(n, k) with n = 2"),
    ((np.zeros(2), np.zeros(3, int)), 2,
     "the model returned a status of shape (3,); expected (2,)"),
    ((np.zeros(2), np.zeros(2, int), np.array(["ok"] * 3)), 2,
     "the model returned reasons of shape (3,); expected (2,), one per row")])
def test_each_refusal_of_an_answer_says_all_of_why(answer, n, message):
    from uqkit.execution.model import normalise_output

    with pytest.raises(ValueError) as info:
        normalise_output(answer, n)
    assert str(info.value) == message


def test_the_transposed_answers_and_the_unnamed_dicts_messages_are_whole():
    out = evaluate(lambda X: np.vstack([X[:, 0], -X[:, 0]]), np.array([[1.0], [2.0]]))
    assert out.batch_error == (
        "ValueError: the model returned its outputs as a (2, 2) array one row per output, as "
        "its one-row answer shows; return (n, k), one row per run: "
        "np.column_stack([y1, y2, ...])")
    from uqkit.execution.model import by_name

    with pytest.raises(ValueError) as info:
        by_name({"a": np.zeros(2)}, ())
    assert str(info.value) == ("the model returned a dict of outputs ['a'] but has no "
                               "output_names to order them by: give the model output_names")


def test_names_given_twice_are_refused_whole_and_an_answer_unpacks_as_three():
    from uqkit.execution.model import ModelOutput, check_output_names

    with pytest.raises(ValueError) as info:
        check_output_names(["u_0", "u_1", "u_0"])
    assert str(info.value) == ("output names ['u_0'] appear more than once in ('u_0', 'u_1', "
                               "'u_0'); an output of size m is the columns name_0 .. "
                               "name_{m-1}, so rename one")
    out = ModelOutput(np.ones((2, 1)), np.zeros(2, int), np.array(["ok", "ok"]))
    values, status, reasons = out
    assert len(out) == 3 and out[1] is status and reasons.tolist() == ["ok", "ok"]


def test_a_nullable_column_with_na_fails_its_row_not_the_batch():
    """Keeping every column's dtype made a pandas "boolean" column with NA an object array
    that float() refused: the whole batch ran again row by row (a review)."""
    class Nullable:
        output_names = ("g", "ok")

        def __call__(self, X):
            return pd.DataFrame({"g": X[:, 0],
                                 "ok": pd.array([True, None, False], dtype="boolean")})

    out = evaluate(Nullable(), np.array([[1.0], [2.0], [3.0]]))
    assert out.rows_rerun == 0 and out.status.tolist() == [0, RAISED, 0]
    assert out.reasons[1] == "non-finite output" and not out.boolean


def test_a_batch_whose_every_row_raised_has_the_columns_of_the_output_names():
    """A row that raised has no outputs; where the model names k outputs its rows are k
    NaN, so that a batch of such rows still stacks with others (it had 0 columns)."""
    def model(X):
        raise ValueError(f"solver diverged at a={X[0, 0]:.3f}")

    model.output_names = ("margin", "drift")
    out = evaluate(model, np.arange(6.0).reshape(3, 2))
    assert out.values.shape == (3, 2) and np.isnan(out.values).all()
    assert out.status.tolist() == [RAISED] * 3 and out.rows_rerun == 3
    assert out.reasons[2] == "raised ValueError: solver diverged at a=4.000"
    assert stack_values([np.zeros((1, 0))], [np.ones(1)], width=3).shape == (1, 3)
