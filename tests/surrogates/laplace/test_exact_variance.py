"""BDL(laplace_variance="exact"): the linearised predictive's epistemic variance diag(J Sigma
J^T), against the dense GGN posterior built here from autograd, and against many draws."""
import numpy as np
import pytest
import torch
from scipy import special

from surrogates import BDL, BDLClassifier
from surrogates.laplace import engine as laplace_engine

RNG = np.random.default_rng(3)
X_ALL = RNG.uniform(-2.0, 2.0, (400, 2))
Y_ALL = np.c_[np.sin(2 * X_ALL[:, 0]) + 0.1 * RNG.normal(size=400), X_ALL[:, 1] ** 2 - X_ALL[:, 0]]
X_NEW = np.r_[RNG.uniform(-3.0, 3.0, (9, 2)), [[0.0, 0.0]]]


def _fit(n, **kw):
    settings = dict(hidden=(10, 8), inference="laplace", seed=0, max_iter=300)
    return BDL(**dict(settings, **kw)).fit(X_ALL[:n], Y_ALL[:n])


def _dense_variance(model, n):
    """diag(J Sigma J^T) in output units, Sigma = (sum_n J_n^T diag(tau) J_n + diag(D))^-1
    from autograd Jacobians of the MAP network: neither of the posterior's factored forms."""
    post, net = model.laplace_, model.engine_.net
    as_t = lambda a: torch.as_tensor(a, dtype=torch.float64)  # noqa: E731
    train = as_t(model.x_scaler_.transform(X_ALL[:n]))
    new = as_t(model.x_scaler_.transform(X_NEW))
    jac = lambda x: torch.autograd.functional.jacobian(  # noqa: E731
        lambda w: net.forward_one(w, x), post.w)  # (N, k, P)
    j_train = jac(train)
    tau = torch.exp(post.log_tau)
    precision = torch.einsum("nkp,k,nkq->pq", j_train, tau, j_train) + torch.diag(post.precision)
    sigma = torch.linalg.inv(precision)
    j_new = jac(new)
    var = torch.einsum("nkp,pq,nkq->nk", j_new, sigma, j_new).numpy()
    return var * model.y_scaler_.scale_ ** 2


@pytest.mark.parametrize("n, form", [(20, "basis"), (300, "factor")])
@pytest.mark.parametrize("scale", ["evidence", 1.0])
def test_the_exact_variance_is_the_dense_posteriors_quadratic_form(n, form, scale):
    model = _fit(n, laplace_prior_scale=scale, laplace_variance="exact")
    assert getattr(model.laplace_, form) is not None  # both of the posterior's forms
    pred = model.predict_distribution(X_NEW)
    np.testing.assert_allclose(pred.epistemic_var, _dense_variance(model, n), rtol=1e-8)


@pytest.mark.parametrize("n", [20, 300])
def test_draws_estimate_the_exact_variance_within_their_sampling_error(n):
    model = _fit(n)
    draws = 40000
    sampled = model.predict_distribution(X_NEW, n_samples=draws, levels=())
    exact = model.set_params(laplace_variance="exact").predict_distribution(X_NEW, levels=())
    # the mean square of S draws of N(0, v): standard error v sqrt(2 / S), here 0.7%
    ratio = sampled.epistemic_var / exact.epistemic_var
    assert np.abs(ratio - 1).max() < 5 * np.sqrt(2 / draws)
    np.testing.assert_array_equal(sampled.mean, exact.mean)  # the MAP network's output


def test_the_exact_variance_draws_nothing_and_is_the_same_for_every_seed(monkeypatch):
    model = _fit(60, laplace_variance="exact")
    with_samples = model.predict_distribution(X_NEW, n_samples=7, return_samples=True, seed=4)
    monkeypatch.setattr(type(model.engine_), "draws", lambda *a: pytest.fail("drew weights"))
    alone = model.predict_distribution(X_NEW, levels=(0.9,), seed=0)
    other = model.predict_distribution(X_NEW, levels=(0.9,), seed=1)
    np.testing.assert_array_equal(alone.epistemic_var, other.epistemic_var)
    np.testing.assert_allclose(with_samples.epistemic_var, alone.epistemic_var, rtol=1e-12)
    assert with_samples.samples.shape == (7, len(X_NEW), 2)  # the samples still come
    # the Gaussian interval of the exact variance and the noise
    half = special.ndtri(0.95) * np.sqrt(alone.epistemic_var + alone.aleatoric_var)
    lo, hi = alone.intervals[0.9]
    np.testing.assert_allclose(lo, alone.mean - half, rtol=1e-12)
    np.testing.assert_allclose(hi, alone.mean + half, rtol=1e-12)


def test_a_recalibration_scales_the_exact_variance_by_its_factor():
    model = _fit(60, laplace_variance="exact")
    before = model.predict_distribution(X_NEW).epistemic_var
    model.calibrate(X_ALL[300:], Y_ALL[300:])
    after = model.predict_distribution(X_NEW).epistemic_var
    np.testing.assert_allclose(after, before * model.variance_scale_, rtol=1e-12)


def test_chunks_of_the_jacobian_give_the_variance_of_one_chunk(monkeypatch):
    model = _fit(300, laplace_variance="exact")
    whole = model.predict_distribution(X_NEW).epistemic_var
    per_row = 2 * model.engine_.net.n_params
    monkeypatch.setattr(laplace_engine, "JACOBIAN_ENTRIES", 3 * per_row)  # chunks of 3 rows
    assert model.engine_.chunk_rows(model.predict_batch, 0, exact=True) == 3
    np.testing.assert_allclose(model.predict_distribution(X_NEW).epistemic_var, whole,
                               rtol=1e-12)


@pytest.mark.parametrize("make, match", [
    (lambda: BDL(laplace_variance="Exact", inference="laplace"),
     "laplace_variance must be one of .*'Exact'"),
    (lambda: BDL(laplace_variance="exact"), "inference='meanfield' estimates"),
    (lambda: BDLClassifier(laplace_variance="exact", inference="laplace"),
     "this BDLClassifier"),
])
def test_an_exact_variance_where_there_is_none_is_refused_by_name(make, match):
    with pytest.raises(ValueError, match=match):
        make().fit(X_ALL[:20], (Y_ALL[:20, 0] > 0).astype(int))


def test_a_setting_changed_after_the_fit_is_checked_at_prediction():
    model = _fit(20, max_iter=50)
    with pytest.raises(ValueError, match="laplace_variance must be one of .*None"):
        model.set_params(laplace_variance=None).predict(X_NEW)
    meanfield = BDL(hidden=(4,), epochs=2, seed=0).fit(X_ALL[:20], Y_ALL[:20])
    with pytest.raises(ValueError, match="estimates its variance from draws"):
        meanfield.set_params(laplace_variance="exact").predict(X_NEW)


@pytest.mark.parametrize("when", ["fit", "set_params"])
def test_a_saved_model_keeps_its_exact_variance(tmp_path, when):
    """Set at the fit or afterwards: a save recorded the settings of the fit alone, so a
    model switched to the exact variance loaded with the draws (18% off; a review)."""
    model = _fit(60, **({"laplace_variance": "exact"} if when == "fit" else {}))
    if when == "set_params":
        model.set_params(laplace_variance="exact", predict_samples=17)
    model.save(tmp_path / "m.pt")
    loaded = BDL.load(tmp_path / "m.pt")
    assert loaded.laplace_variance == "exact"
    assert loaded.predict_samples == (17 if when == "set_params" else 200)
    np.testing.assert_array_equal(loaded.predict_distribution(X_NEW).epistemic_var,
                                  model.predict_distribution(X_NEW).epistemic_var)
