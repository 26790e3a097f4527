"""What a model holds is hashed by value (:mod:`uqkit.execution.value_bytes`): a fitted
surrogate saved and loaded again is the same model to a store, whichever objects its copy
shares, and a changed value is another model."""
import pickle
import warnings

import joblib
import numpy as np
import pytest

from surrogates import (BDL, GaussianProcess, NeuralNetwork, PolynomialChaos,
                        PolynomialRegression, SupportVectorRegression)
from uqkit import propagate
from uqkit.adapters import SurrogateModel
from uqkit.execution.identity import fingerprint

X = np.random.default_rng(0).uniform(-1, 1, (20, 2))
Y = X.sum(1) + 0.1 * X[:, 0] ** 2


def fitted(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make().fit(X, Y)


SURROGATES = [lambda: GaussianProcess(n_restarts=0), lambda: PolynomialRegression(2),
              lambda: PolynomialChaos(2), SupportVectorRegression,
              lambda: NeuralNetwork(epochs=5),
              lambda: BDL(hidden=(4,), inference="laplace", max_iter=10, progress=False)]


@pytest.mark.parametrize("make", SURROGATES)
def test_a_surrogate_saved_and_loaded_keeps_its_fingerprint(make, tmp_path):
    """A GP, PR, SVR (an array held by two attributes, two after joblib) and PCE came back
    from a pickle or joblib as another model: their pickle shared dtypes, strings and
    arrays where the copy does not."""
    model = fitted(make)
    joblib.dump(model, tmp_path / "m.joblib")
    copies = (pickle.loads(pickle.dumps(model)), joblib.load(tmp_path / "m.joblib"))
    assert {fingerprint(m)["sha256"] for m in (model, *copies)} == {fingerprint(model)["sha256"]}


class Holder:
    def __init__(self, first, second):
        self.first, self.second = first, second

    def __call__(self, X):
        return X @ self.first + self.second.sum()


def test_shared_or_equal_arrays_are_one_model_and_a_changed_value_another():
    a = np.array([1.0, 2.0])
    shared, equal = Holder(a, a), Holder(a, a.copy())
    assert fingerprint(shared)["sha256"] == fingerprint(equal)["sha256"]
    changed = Holder(a, np.array([1.0, 2.0 + 1e-15]))
    assert fingerprint(changed)["sha256"] != fingerprint(equal)["sha256"]
    assert fingerprint(Holder(a, a.astype(np.float32)))["sha256"] != \
        fingerprint(equal)["sha256"]  # the same numbers in another dtype: another model


def test_a_study_of_a_loaded_surrogate_resumes_from_the_store(tmp_path):
    gp = fitted(lambda: GaussianProcess(n_restarts=0))
    inputs = np.random.default_rng(1).uniform(-1, 1, (40, 2))
    store = tmp_path / "store"
    first = propagate(SurrogateModel(gp), inputs, executor="serial", store=store,
                      progress=False)
    joblib.dump(gp, tmp_path / "gp.joblib")
    again = propagate(SurrogateModel(joblib.load(tmp_path / "gp.joblib")), inputs,
                      executor="serial", store=store, progress=False)
    assert (again.computed, again.loaded) == (0, 40)
    np.testing.assert_array_equal(again.outputs, first.outputs)
