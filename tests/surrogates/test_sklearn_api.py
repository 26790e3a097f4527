"""Every surrogate is a scikit-learn estimator, and the uncertainty API is one across them."""
import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from surrogates import (BDL, BDLClassifier, GaussianProcess, NeuralNetwork, PolynomialChaos,
                        PolynomialRegression, SupportVectorRegression)

#: Small settings, so that the ~50 checks of each estimator run in seconds.
ESTIMATORS = [BDL(hidden=(8,), epochs=30), BDLClassifier(hidden=(8,), epochs=30),
              PolynomialRegression(), SupportVectorRegression(), NeuralNetwork(epochs=20),
              PolynomialChaos(order=2), GaussianProcess(n_restarts=0)]
#: Checks skipped, with the reason: neither applies to a core scikit-learn install.
NOT_APPLICABLE = {"check_array_api_input": "needs SCIPY_ARRAY_API and an array-API library",
                  "check_regressor_data_not_an_array": "needs pandas",
                  "check_classifier_data_not_an_array": "needs pandas"}


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_check_estimator(estimator):
    results = check_estimator(estimator, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    skipped = {r["check_name"] for r in results if r["status"] == "skipped"}
    assert not failed
    assert skipped <= set(NOT_APPLICABLE), skipped - set(NOT_APPLICABLE)


def _data(n=80):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, 2))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] ** 2


def test_clone_cross_validation_grid_search_and_pipeline():
    X, y = _data()
    bdl = BDL(hidden=(16,), epochs=150, batch_size=20, lr=0.02, progress=False)
    assert clone(bdl).get_params() == bdl.get_params()
    scores = cross_val_score(bdl, X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.8
    grid = GridSearchCV(PolynomialRegression(), {"degree": [1, 3]}, cv=3).fit(X, y)
    assert grid.best_params_ == {"degree": 3}
    pipe = make_pipeline(StandardScaler(), clone(bdl)).fit(X, y)
    assert pipe.predict(X).shape == (80,) and pipe.score(X, y) > 0.9


def test_set_params_and_unchanged_constructor_arguments():
    hidden = [8, 4]
    bdl = BDL(hidden=hidden, prior="normal(0, 1)")
    assert bdl.get_params()["hidden"] is hidden
    bdl.set_params(epochs=7, prior="hierarchical-normal")
    assert bdl.epochs == 7 and bdl.prior == "hierarchical-normal"


@pytest.mark.parametrize("make", [lambda: BDL(hidden=(16,), epochs=200, batch_size=20, lr=0.02,
                                              progress=False),
                                  lambda: GaussianProcess(n_restarts=0)],
                         ids=["BDL", "GP"])
def test_one_uncertainty_api(make):
    X, y = _data()
    model = make().fit(X, y)
    mean = model.predict(X[:10])
    m2, std = model.predict(X[:10], return_std=True)
    pred = model.predict_distribution(X[:10], levels=(0.9,))
    assert isinstance(mean, np.ndarray) and mean.shape == (10,)
    np.testing.assert_array_equal(mean, m2)
    np.testing.assert_array_equal(pred.mean, mean)
    np.testing.assert_allclose(std ** 2, pred.epistemic_var + pred.aleatoric_var, rtol=1e-12)
    assert (pred.epistemic_var >= 0).all() and (pred.aleatoric_var > 0).all()
    lo, hi = pred.intervals[0.9]
    assert (lo < mean).all() and (mean < hi).all()


def test_gp_splits_its_variance_into_function_and_noise():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (200, 1))
    y = np.sin(3 * X[:, 0]) + rng.normal(0, 0.1, 200)
    pred = GaussianProcess(n_restarts=1).fit(X, y).predict_distribution(np.array([[0.0], [5.0]]))
    assert np.sqrt(pred.aleatoric_var) == pytest.approx([0.1, 0.1], rel=0.3)
    # inside the data the function is known well; far outside, not at all
    assert pred.epistemic_var[0] < 0.1 * pred.aleatoric_var[0] < pred.epistemic_var[1]


def test_x_scaler_is_fit_on_the_training_rows_only():
    X, y = _data(40)
    X[:5] += 100.0  # outliers: where they land decides the scaler
    model = BDL(hidden=(4,), epochs=2, val_fraction=0.25, progress=False).fit(X, y)
    train = np.setdiff1d(np.arange(40), model.validation_rows_)
    np.testing.assert_allclose(model.x_scaler_.mean_, X[train].mean(0))
    np.testing.assert_allclose(model.y_scaler_.mean_, y[train].mean(0))


class ThreadRecorder(BDL):
    def _fit(self, X, Y):
        self.threads_seen_ = torch.get_num_threads()
        return super()._fit(X, Y)


def test_training_threads_default_to_one_and_are_restored():
    X, y = _data(20)
    before = torch.get_num_threads()
    assert ThreadRecorder(hidden=(4,), epochs=2).fit(X, y).threads_seen_ == 1
    assert ThreadRecorder(hidden=(4,), epochs=2, num_threads=2).fit(X, y).threads_seen_ == 2
    assert torch.get_num_threads() == before


def test_progress_bar_on_request_and_only_after_a_delay_by_default(capsys):
    X, y = _data(20)
    BDL(hidden=(4,), epochs=3, progress=True).fit(X, y)
    assert "BDL fit" in capsys.readouterr().err
    BDL(hidden=(4,), epochs=3).fit(X, y)  # a fit this short shows nothing
    assert capsys.readouterr().err == ""


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here (CI has none)")
@pytest.mark.parametrize("prior", ["normal(0, 1)", "cauchy(0, 1)", "hierarchical-cauchy"])
def test_trains_and_predicts_on_cuda(prior):
    X, y = _data()
    model = BDL(hidden=(8,), epochs=20, prior=prior, device="cuda", kl_samples=2).fit(X, y)
    assert model.model_.guide.mu.device.type == "cuda"
    cpu = BDL(hidden=(8,), epochs=20, prior=prior, kl_samples=2).fit(X, y)
    # same initial weights and batches; only the reparameterisation draws differ, so the two
    # fits agree as two seeds of one fit do: the same quality, closely correlated predictions
    on_gpu, on_cpu = model.predict(X), cpu.predict(X)
    assert on_gpu.shape == on_cpu.shape == (80,)
    assert model.score(X, y) > 0.5 and abs(model.score(X, y) - cpu.score(X, y)) < 0.15
    assert np.corrcoef(on_gpu, on_cpu)[0, 1] > 0.95


@pytest.mark.parametrize("estimator", [e for e in ESTIMATORS if not isinstance(e, BDLClassifier)],
                         ids=lambda e: type(e).__name__)
def test_predictions_are_shaped_like_the_training_target(estimator):
    """A (n, 1) target predicts (n, 1), a (n,) one (n,). The GP predicted (n,) for (n, 1), so
    ``y - predict(X)`` broadcast to (n, n): an RMSE by hand of 1.006 for 0.046."""
    X, y = _data(40)
    for target in (y, y[:, None]):
        model = clone(estimator).fit(X, target)
        assert model.predict(X[:7]).shape == (7,) + target.shape[1:]
        if hasattr(model, "predict_distribution"):
            pred = model.predict_distribution(X[:7])
            assert pred.mean.shape == pred.epistemic_var.shape == (7,) + target.shape[1:]
            assert pred.intervals[0.95][0].shape == (7,) + target.shape[1:]
