"""ModelRunner: the analyses' batches of model runs (:mod:`uqkit.execution.runner`)."""
import numpy as np
import pytest

from uqkit.execution.runner import ModelRunner
from uqkit.inputs import RandomInputs

INPUTS = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})


def diverges_where_a_is_positive(X):
    """Raises on a batch, or a row, with a > 0 (a message of its own each time); else the
    outputs (a - 1, b)."""
    if (X[:, 0] > 0).any():
        raise ValueError(f"solver diverged at a={X[0, 0]:.3f}")
    return np.column_stack([X[:, 0] - 1, X[:, 1]])


def margin(X):
    return diverges_where_a_is_positive(X)[:, 0]


margin.output_names = ("margin",)
FAILING = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])


def test_a_batch_whose_every_run_raised_has_the_model_s_outputs_of_failed_value():
    """Counted as failures (-inf), every run of a batch raising gave (n, 0): no margin to
    read, where the model names one."""
    with ModelRunner(margin, INPUTS, executor="serial", failed_value=-np.inf) as run:
        out = run(FAILING)
    assert out.shape == (3, 1) and (out == -np.inf).all() and run.failed == 3


def test_without_output_names_the_first_successful_batch_gives_the_width():
    with ModelRunner(diverges_where_a_is_positive, INPUTS, executor="serial",
                     failed_value=-np.inf) as run:
        ok = run(-FAILING)
        failed = run(FAILING)
    np.testing.assert_array_equal(ok, np.column_stack([-FAILING[:, 0] - 1, np.zeros(3)]))
    assert failed.shape == (3, 2) and (failed == -np.inf).all()
