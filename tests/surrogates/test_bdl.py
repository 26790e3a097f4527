"""BDL: variational inference against an exact conjugate posterior, unbiased minibatch ELBO,
calibrated intervals, persistence and input validation."""
import math

import numpy as np
import pytest
import torch

from sklearn.exceptions import NotFittedError

from surrogates import (BDL, BayesianModel, BDLClassifier, GaussianLikelihood, MeanFieldMLP,
                        NormalPrior)


def orthogonal_design(n, d, seed):
    """Centred, mutually orthogonal columns of unit variance (so X_aug^T X_aug is diagonal)."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d))
    A -= A.mean(0)
    Q, _ = np.linalg.qr(A)
    return Q * np.sqrt(n)


def test_linear_model_matches_exact_conjugate_posterior():
    n, noise, s0 = 60, 0.5, 1.0
    X = orthogonal_design(n, 3, seed=0)
    beta = np.array([1.5, -2.0, 0.8])
    y = X @ beta + 0.5 + np.random.default_rng(1).normal(0, noise, n)
    # exact posterior of (w, b) under N(0, s0^2) priors and known noise
    Xa = np.column_stack([X, np.ones(n)])
    A = Xa.T @ Xa / noise ** 2 + np.eye(4) / s0 ** 2
    assert np.allclose(A - np.diag(np.diag(A)), 0, atol=1e-8)  # mean field holds exactly
    cov = np.linalg.inv(A)
    mean = cov @ Xa.T @ y / noise ** 2
    model = BDL(hidden=(), prior=f"normal(0, {s0})", noise_std=noise, learn_noise=False,
                standardize=False, epochs=4000, batch_size=n, n_samples=16, lr=0.01,
                lr_step=1000, lr_gamma=0.5, init_std=0.05, seed=0).fit(X, y)
    layer = model.posterior()[0]
    q_mean = np.append(layer["weight_mean"][0], layer["bias_mean"])
    q_std = np.append(layer["weight_std"][0], layer["bias_std"])
    np.testing.assert_allclose(q_mean, mean, rtol=0.02)
    np.testing.assert_allclose(q_std, np.sqrt(np.diag(cov)), rtol=0.10)


def test_minibatch_elbo_is_unbiased():
    torch.manual_seed(0)
    N, M = 64, 8
    x, y = torch.randn(N, 2), torch.randn(N, 1)
    guide = MeanFieldMLP((2, 8, 1), init_std=0.2, generator=torch.Generator().manual_seed(1))
    model = BayesianModel(guide, NormalPrior(0, 1), GaussianLikelihood(1, 0.5))
    gen = torch.Generator().manual_seed(2)
    with torch.no_grad():
        full = torch.stack([model.elbo(x, y, N, 1, generator=gen)[0] for _ in range(4000)])
        mini = torch.stack([model.elbo(x[idx], y[idx], N, 1, generator=gen)[0]
                            for idx in (torch.randperm(N, generator=gen)[:M]
                                        for _ in range(8000))])
    se = math.sqrt(full.var() / len(full) + mini.var() / len(mini))
    assert abs(float(full.mean() - mini.mean())) < 4 * se
    assert float(mini.var()) > float(full.var())  # minibatches only add variance


def test_fused_local_reparameterisation_matches_reference():
    """The hand-written backward is exact (gradcheck) and its forward equals the
    autograd reference for the same noise."""
    from surrogates.meanfield.network import _LocalReparamTanh

    g = MeanFieldMLP((3, 7, 5, 2), init_std=0.1, dtype=torch.float64,
                     generator=torch.Generator().manual_seed(0))
    h = torch.randn(6, 3, dtype=torch.float64)
    eps = torch.randn(6, 14, dtype=torch.float64)
    mu = g.mu.detach().clone().requires_grad_()
    sigma = g.sigma().detach().clone().requires_grad_()
    assert torch.autograd.gradcheck(
        lambda m, s: _LocalReparamTanh.apply(h, m, s, eps, g.sizes, g._chunks), (mu, sigma))
    # reference: plain autograd with explicit per-layer noise
    out = _LocalReparamTanh.apply(h, mu, sigma, eps, g.sizes, g._chunks)
    ref, start, a = h, 0, g.sizes
    for l, (w0, w1) in enumerate(zip(a[:-1], a[1:])):
        Wm, bm = g._split(mu, l)
        Wv, bv = g._split(sigma ** 2, l)
        z = ref @ Wm.T + bm + torch.sqrt((ref ** 2) @ Wv.T + bv) * eps[:, start:start + w1]
        start += w1
        ref = torch.tanh(z) if l < len(a) - 2 else z
    torch.testing.assert_close(out, ref)


def test_intervals_are_calibrated_on_noisy_function():
    rng = np.random.default_rng(3)
    f = lambda x: np.sin(3 * x) + 0.5 * x  # noqa: E731
    x = rng.uniform(-2, 2, (300, 1))
    y = f(x)[:, 0] + rng.normal(0, 0.3, 300)
    xt = rng.uniform(-2, 2, (2000, 1))
    yt = f(xt)[:, 0] + rng.normal(0, 0.3, 2000)
    model = BDL(hidden=(32,), prior="normal(0, 1)", epochs=600, batch_size=64, n_samples=4,
                lr=0.01, lr_step=200, lr_gamma=0.5, seed=0).fit(x, y)
    pred = model.predict_distribution(xt, levels=(0.9,))
    lo, hi = pred.intervals[0.9]
    cover = np.mean((yt >= lo) & (yt <= hi))
    assert 0.85 <= cover <= 0.95
    assert pred.mean.shape == (2000,)
    assert np.allclose(pred.total_var, pred.epistemic_var + pred.aleatoric_var)
    assert 0.25 < math.sqrt(pred.aleatoric_var[0]) < 0.45  # true 0.3; VI errs on the noisy side


def test_save_load_round_trip(tmp_path):
    x = np.random.default_rng(0).uniform(-1, 1, (50, 2))
    y = np.column_stack([x[:, 0] ** 2, x[:, 1]])
    model = BDL(hidden=(8,), prior="hierarchical-laplace", epochs=30, seed=4).fit(x, y)
    path = tmp_path / "bdl.pt"
    model.save(path)
    loaded = BDL.load(path)
    a = model.predict_distribution(x, seed=11)
    b = loaded.predict_distribution(x, seed=11)
    assert np.array_equal(a.mean, b.mean) and np.array_equal(a.total_var, b.total_var)
    assert np.array_equal(a.intervals[0.95][0], b.intervals[0.95][0])
    assert loaded.model_.prior.describe()["base"] == "laplace"
    torch.save({"something": 1}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a saved BDL model"):
        BDL.load(tmp_path / "other.pt")


@pytest.mark.parametrize("inference", ["meanfield", "laplace"])
def test_a_saved_model_is_the_fitted_one_whatever_set_params_changed(tmp_path, inference):
    """set_params(activation="relu") after a tanh fit: the file recorded relu and the loaded
    model predicted with it (0.55 off on a target of amplitude 1). A loaded model that was
    never calibrated could not be calibrated (AttributeError)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (60, 2))
    y = np.sin(2 * x[:, 0]) + rng.normal(0, 0.1, 60)
    model = BDL(hidden=(8,), epochs=30, max_iter=100, seed=0, inference=inference).fit(x, y)
    before = model.predict(x[:5])
    model.set_params(activation="relu", noise_std=0.5)
    model.save(tmp_path / "m.pt")
    loaded = BDL.load(tmp_path / "m.pt")
    assert np.array_equal(loaded.predict(x[:5]), before) and loaded.activation == "tanh"
    loaded.calibrate(x[:30], y[:30])
    assert loaded.variance_scale_.shape == (1,)
    # a loaded model saved again after set_params, and a refit that failed: still the fit's
    loaded.set_params(activation="relu")
    loaded.save(tmp_path / "again.pt")
    assert np.array_equal(BDL.load(tmp_path / "again.pt").predict(x[:5]), before)
    with pytest.raises(ValueError, match="at least 2 samples"):
        model.fit(x[:1], y[:1])
    model.save(tmp_path / "failed.pt")
    assert np.array_equal(BDL.load(tmp_path / "failed.pt").predict(x[:5]), before)


@pytest.mark.parametrize("inference", ["meanfield", "laplace"])
def test_a_model_with_numpy_settings_saves_and_loads(tmp_path, inference):
    """Settings from numpy (an EvidenceSearch grid of np.logspace, seed=np.int64(0)) were
    saved as numpy scalars, which torch.load(weights_only=True) refused (UnpicklingError)."""
    x = np.linspace(-1, 1, 32)[:, None]
    y = np.sin(3 * x[:, 0])
    model = BDL(hidden=np.array([4]), inference=inference, epochs=np.int64(20), max_iter=20,
                seed=np.int64(0), laplace_prior_scale=np.logspace(-1, 1, 2)[1],
                noise_prior=(np.float64(2.0), np.float64(1.0)), progress=False).fit(x, y)
    model.set_params(predict_samples=np.int64(50))
    model.save(tmp_path / "m.pt")
    loaded = BDL.load(tmp_path / "m.pt")
    a = model.predict_distribution(x, seed=11)
    b = loaded.predict_distribution(x, seed=11)
    assert np.array_equal(a.mean, b.mean) and np.array_equal(a.total_var, b.total_var)
    assert (loaded.seed, loaded.predict_samples, loaded.laplace_prior_scale) == (0, 50, 10.0)


def test_reproducible_under_seed():
    x = np.linspace(-1, 1, 40)[:, None]
    a = BDL(hidden=(6,), epochs=20, seed=5).fit(x, x[:, 0] ** 3).predict(x)
    b = BDL(hidden=(6,), epochs=20, seed=5).fit(x, x[:, 0] ** 3).predict(x)
    c = BDL(hidden=(6,), epochs=20, seed=6).fit(x, x[:, 0] ** 3).predict(x)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_classification_two_blobs():
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(-1.5, 0.7, (150, 2)), rng.normal(1.5, 0.7, (150, 2))])
    y = np.repeat([0, 1], 150)
    labels = np.where(y == 0, "left", "right")
    model = BDLClassifier(hidden=(5, 5), prior="normal(0, 1)", epochs=150, batch_size=30,
                          lr=0.02, seed=0).fit(x, labels)
    pred = model.predict_distribution(x, n_samples=100)
    assert pred.mean.shape == (300, 2) and np.allclose(pred.mean.sum(1), 1.0)
    assert np.mean(model.predict(x) == labels) > 0.95
    assert model.score(x, labels) == np.mean(model.predict(x) == labels)
    assert pred.aleatoric_var is None and pred.epistemic_var.shape == (300, 2)
    assert list(model.classes_) == ["left", "right"]


def test_early_stopping_stops_and_restores_the_best_state():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (60, 1))
    y = np.sin(3 * x[:, 0]) + rng.normal(0, 0.3, 60)  # noisy: the fit overfits in time
    kw = dict(hidden=(32,), epochs=400, val_fraction=0.25, eval_every=5, lr=0.02,
              kl_weight=1e-3, seed=0, progress=False)
    model = BDL(patience=2, **kw).fit(x, y)
    h = model.history_
    # it stopped early, at an evaluation, after `patience` evaluations without improvement
    assert model.stopped_epoch_ < 400 and model.stopped_epoch_ == h["val_epoch"][-1]
    best = int(np.argmin(h["val_nll"]))
    assert best == len(h["val_nll"]) - 3
    assert min(h["val_nll"][-2:]) >= h["val_nll"][best]
    # the state it kept is the best one: its validation NLL is the best recorded
    val = model.validation_rows_
    assert len(val) == 15 and len(set(val)) == 15
    again = model._validate(x[val], y[val, None])["nll"]
    assert again == pytest.approx(h["val_nll"][best], rel=1e-6)
    assert again < h["val_nll"][-1]
    # without patience it trains every epoch, and its final state is not the best one
    full = BDL(patience=None, **kw).fit(x, y)
    assert full.stopped_epoch_ == 400 and len(full.history_["val_nll"]) == 80


@pytest.mark.parametrize("kwargs, X, y, message", [
    ({}, [[1.0], [np.nan]], [1.0, 2.0], r"X holds 1 NaN or inf values \(first at row 1"),
    ({}, [[1.0], [2.0]], [1.0, np.inf], "y holds 1 NaN or inf values"),
    ({}, [[1.0], [2.0]], [1.0, 2.0, 3.0], "inconsistent numbers of samples: \\[2, 3\\]"),
    ({}, [[1.0]], [1.0], "needs at least 2 samples, got 1"),
    ({"prior": "gaussian(0, 1)"}, [[1.0], [2.0]], [1.0, 2.0], "unknown prior 'gaussian"),
    ({"epochs": 0}, [[1.0], [2.0]], [1.0, 2.0], "epochs must be an integer >= 1"),
    ({"kl_anneal": -5}, [[1.0], [2.0]], [1.0, 2.0], "kl_anneal must be an integer >= 0"),
    ({"trace_weights": -1}, [[1.0], [2.0]], [1.0, 2.0], "trace_weights must be an integer >= 0"),
    ({"val_fraction": -0.1}, [[1.0], [2.0]], [1.0, 2.0], r"val_fraction must be a number in"),
    ({"val_fraction": 1.0}, [[1.0], [2.0]], [1.0, 2.0], r"val_fraction must be a number in"),
    ({"patience": 0}, [[1.0], [2.0]], [1.0, 2.0], "patience must be None or an integer >= 1"),
    ({"patience": 2.5}, [[1.0], [2.0]], [1.0, 2.0], "patience must be None or an integer"),
    ({"num_threads": 0}, [[1.0], [2.0]], [1.0, 2.0], "num_threads must be None or an int"),
    ({"num_threads": -2}, [[1.0], [2.0]], [1.0, 2.0], "num_threads must be None or an int"),
    ({"activation": "sigmoid"}, [[1.0], [2.0]], [1.0, 2.0], "activation must be one of"),
    ({"hidden": (4, 0)}, [[1.0], [2.0]], [1.0, 2.0], "hidden widths must be integers >= 1"),
    ({"progress": "yes"}, [[1.0], [2.0]], [1.0, 2.0], "progress must be None, True or False"),
])
def test_bad_input(kwargs, X, y, message):
    kwargs = {"hidden": (4,), **kwargs}
    with pytest.raises(ValueError, match=message):
        BDL(**kwargs).fit(np.array(X), np.array(y))


def test_classifier_bad_input():
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        BDLClassifier(hidden=(4,)).fit(np.array([[1.0], [2.0]]), np.array([0.5, 1.0]))


def test_predict_validates():
    model = BDL(hidden=(4,), epochs=2).fit(np.zeros((10, 2)) + np.arange(10)[:, None],
                                            np.arange(10.0))
    with pytest.raises(ValueError, match="X has 3 features, but BDL is expecting 2"):
        model.predict(np.zeros((2, 3)))
    with pytest.raises(NotFittedError, match="not fitted"):
        BDL().predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="n_samples must be an integer >= 1"):
        model.predict_distribution(np.zeros((2, 2)), n_samples=0)


def test_map_warm_start_keeps_sigma_and_noise_fixed():
    x = np.linspace(-1, 1, 40)[:, None]
    model = BDL(hidden=(6,), epochs=30, map_epochs=30, init_std=1e-3, noise_std=0.2,
                seed=0).fit(x, np.sin(3 * x[:, 0]))
    sd = model.model_.guide.sigma().detach().numpy()
    assert np.allclose(sd, 1e-3, rtol=1e-5)
    assert math.isclose(float(model.model_.likelihood.noise_variance().detach()[0]), 0.04,
                        rel_tol=1e-5)
    with pytest.raises(ValueError, match="map_epochs must be an integer >= 0"):
        BDL(map_epochs=-1).fit(x, x[:, 0])


def test_recalibration_restores_nominal_coverage(tmp_path):
    rng = np.random.default_rng(5)
    f = lambda x: np.sin(2 * x[:, 0])  # noqa: E731
    x = rng.uniform(-2, 2, (200, 1))
    model = BDL(hidden=(16,), epochs=150, batch_size=50, lr=0.02, seed=0,
                noise_std=0.05, learn_noise=False)  # noise fixed far too small: over-confident
    model.fit(x, f(x) + rng.normal(0, 0.3, 200))
    xc, xt = rng.uniform(-2, 2, (500, 1)), rng.uniform(-2, 2, (3000, 1))
    yc = f(xc) + rng.normal(0, 0.3, 500)
    yt = f(xt) + rng.normal(0, 0.3, 3000)
    lo, hi = model.predict_distribution(xt, levels=(0.9,)).intervals[0.9]
    before = np.mean((yt >= lo) & (yt <= hi))
    mean_before = model.predict(xt)
    model.calibrate(xc, yc)
    pred = model.predict_distribution(xt, levels=(0.9,))
    lo, hi = pred.intervals[0.9]
    after = np.mean((yt >= lo) & (yt <= hi))
    assert before < 0.6 and 0.86 <= after <= 0.94
    assert model.variance_scale_[0] > 4
    np.testing.assert_allclose(pred.mean, mean_before, rtol=1e-12)
    model.save(tmp_path / "m.pt")
    np.testing.assert_array_equal(
        BDL.load(tmp_path / "m.pt").predict_distribution(xt).total_var, pred.total_var)


def test_models_saved_by_the_previous_version_still_load(tmp_path):
    """Format 1 had one class with a task setting and a class count instead of labels."""
    x = np.random.default_rng(0).uniform(-1, 1, (40, 2))
    for model, task in ((BDL(hidden=(4,), epochs=5).fit(x, x[:, 0]), "regression"),
                        (BDLClassifier(hidden=(4,), epochs=5).fit(x, (x[:, 0] > 0).astype(int)),
                         "classification")):
        model.save(tmp_path / "new.pt")
        blob = torch.load(tmp_path / "new.pt", weights_only=True)
        classes = blob.pop("classes")
        del blob["estimator"]
        blob["version"] = 1
        blob["config"] = dict(blob["config"], task=task, progress=False)
        blob["n_classes"] = None if classes is None else len(classes)
        torch.save(blob, tmp_path / "old.pt")
        old = BDL.load(tmp_path / "old.pt")
        assert type(old) is type(model)
        np.testing.assert_array_equal(old.predict(x), model.predict(x))


def test_bdl_validation_with_a_one_dimensional_target():
    x = np.random.default_rng(0).uniform(-1, 1, (80, 1))
    y = 2 * x[:, 0]
    m = BDL(hidden=(8,), epochs=200, val_fraction=0.25, eval_every=50, lr=0.02, seed=0).fit(x, y)
    # per-point validation error of a fitted line (comparing every point with every
    # prediction, as a (n, n) broadcast would, gives ~0.9 here)
    assert max(m.history_["val_rmse"]) < 0.3


def test_the_device_is_chosen_by_the_work_of_a_step():
    """device="auto" takes the GPU only from the measured work per step on; a GPU named for a
    smaller problem says it was measured slower (a user who asks for the GPU must not get a
    slower fit without a word, issue 28); a GPU named where there is none is refused."""
    from surrogates.bdl.settings import AUTO_GPU_WORK, SlowDeviceWarning, choose_device

    at = AUTO_GPU_WORK["meanfield"]
    assert choose_device("auto", "meanfield", at - 1, True) == (torch.device("cpu"), None)
    assert choose_device("auto", "meanfield", at, True) == (torch.device("cuda"), None)
    assert choose_device("auto", "meanfield", 10 * at, False) == (torch.device("cpu"), None)
    assert choose_device("cpu", "laplace", 10 * at, True) == (torch.device("cpu"), None)
    assert choose_device("cuda", "meanfield", at, True) == (torch.device("cuda"), None)
    device, warning = choose_device("cuda:0", "meanfield", 13_408, True)
    assert device == torch.device("cuda:0") and "13,408 multiply-adds" in warning
    assert f"{at:,.0f}" in warning and "device='auto' would train it on the CPU" in warning
    with pytest.raises(ValueError, match="device='cuda' asks for a GPU, but torch sees none"):
        choose_device("cuda", "laplace", at, False)
    assert issubclass(SlowDeviceWarning, UserWarning)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
@pytest.mark.parametrize("inference", ["meanfield", "laplace"])
def test_a_fit_without_a_gpu_runs_on_the_cpu_or_names_the_missing_gpu(inference):
    X = np.random.default_rng(0).uniform(-1, 1, (30, 2))
    y = X.sum(1)
    model = BDL(hidden=(4,), epochs=3, max_iter=5, inference=inference).fit(X, y)
    assert model.device == "auto" and model.device_ == torch.device("cpu")
    with pytest.raises(ValueError, match="asks for a GPU, but torch sees none"):
        BDL(hidden=(4,), epochs=3, inference=inference, device="cuda").fit(X, y)


@pytest.mark.parametrize("levels, bad", [((95,), "95"), ((0.9, 1.0), "1.0"), ((0.0,), "0.0")])
def test_interval_levels_out_of_range_are_refused_by_both_engines_and_the_gp(levels, bad):
    """levels=(95,) (a percentage) gave NaN intervals from the Laplace engine, and the search
    bracket's edges from mean field, so coverage read 0 without a word."""
    from surrogates import GaussianProcess

    x = np.linspace(-1, 1, 20)[:, None]
    y = np.sin(3 * x[:, 0])
    for model in (BDL(inference="laplace", hidden=(5,), max_iter=20, seed=0).fit(x, y),
                  BDL(inference="meanfield", hidden=(5,), epochs=2, seed=0).fit(x, y),
                  GaussianProcess(n_restarts=0).fit(x, y)):
        with pytest.raises(ValueError, match=f"in \\(0, 1\\).*got {bad}"):
            model.predict_distribution(x, levels=levels)
    assert BDL(inference="laplace", hidden=(5,), max_iter=20, seed=0).fit(x, y) \
        .predict_distribution(x, levels=[0.5, 0.9]).intervals.keys() == {0.5, 0.9}


def test_a_constant_input_column_keeps_scale_one_despite_rounding():
    """A training column of 0.3s has a std of rounding noise: scaled by it, a later 0.3 in
    float32 was z = 1e8, and every prediction the same saturated value."""
    from surrogates.scaling import Standardizer

    x = np.column_stack([np.linspace(-1, 1, 60), np.full(60, 0.3)])
    assert x.std(0)[1] > 0  # rounding: 3.9e-16
    assert Standardizer().fit(x).scale_[1] == 1.0
    y = x[:, 0]
    model = BDL(inference="laplace", hidden=(8,), max_iter=300, seed=0).fit(x, y)
    probe = np.array([[-1.0, 0.3], [0.0, 0.3], [1.0, 0.3]])
    shifted = probe.copy()
    shifted[:, 1] = np.float32(0.3)
    np.testing.assert_allclose(model.predict(shifted), model.predict(probe), atol=1e-6)


def test_a_constant_output_is_refused_by_the_laplace_fit():
    """Its noise precision has no maximum: the other output's fit stopped short (RMSE 7.5 for
    0.5) without a word."""
    x = np.linspace(-1, 1, 30)[:, None]
    y = np.column_stack([np.sin(3 * x[:, 0]), np.full(30, 7.0)])
    with pytest.raises(ValueError, match="output 1 is constant .every value 7.0."):
        BDL(inference="laplace", hidden=(4,), max_iter=10).fit(x, y)


def test_calibrate_checks_the_shape_of_y_and_keeps_its_factor_on_error():
    """A y of the wrong shape reset the factor before failing; one flattened column by column
    was read as garbage; zero residuals gave a factor of 0 (intervals of zero width)."""
    x = np.linspace(-1, 1, 40)[:, None]
    y = np.column_stack([np.sin(3 * x[:, 0]), np.cos(2 * x[:, 0])])
    model = BDL(inference="laplace", hidden=(8,), max_iter=200, seed=0).fit(x, y)
    model.calibrate(x, y + 0.05 * np.random.default_rng(0).standard_normal(y.shape))
    kept = model.variance_scale_.copy()
    with pytest.raises(ValueError, match=r"y must be \(40, 2\) .* got shape \(80,\)"):
        model.calibrate(x, y.T.ravel())
    np.testing.assert_array_equal(model.variance_scale_, kept)
    with pytest.raises(ValueError, match="must be finite and > 0"):
        model.calibrate(x, model.predict(x))
    np.testing.assert_array_equal(model.variance_scale_, kept)


def _small_fit(**settings):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (30, 2))
    y = np.sin(3 * x[:, 0]) + 0.05 * rng.normal(size=30)
    return x, y, BDL(hidden=(4,), inference="laplace", max_iter=50, seed=0, **settings)


@pytest.mark.parametrize("setting, message", [
    ({"predict_batch": -1}, r"predict_batch must be an integer >= 1, got predict_batch=-1"),
    ({"predict_batch": 0}, r"predict_batch must be an integer >= 1, got predict_batch=0"),
    ({"predict_batch": 2.5}, r"predict_batch must be an integer >= 1, got predict_batch=2.5"),
    ({"predict_samples": 0}, r"predict_samples must be an integer >= 1, got "
                             r"predict_samples=0"),
    ({"num_threads": -3}, r"num_threads must be None or an integer >= 1, got num_threads=-3"),
])
def test_prediction_settings_changed_after_the_fit_are_checked_at_prediction(setting,
                                                                              message):
    """predict_batch=-1 set on a fitted model left the outputs as np.empty allocated them:
    variances of 0.018 for 0.010, without a word."""
    x, y, model = _small_fit()
    model.fit(x, y)
    model.set_params(**setting)
    with pytest.raises(ValueError, match=message):
        model.predict_distribution(x[:3])


def test_the_fitted_engine_decides_the_exact_variance_not_a_later_inference_setting():
    x, y, model = _small_fit(laplace_variance="exact")
    before = model.fit(x, y).predict_distribution(x[:3])
    model.set_params(inference="meanfield")  # a setting of the next fit
    after = model.predict_distribution(x[:3])
    assert np.array_equal(after.epistemic_var, before.epistemic_var)


@pytest.mark.parametrize("scale", [1e160, 1e-165])
def test_targets_beyond_the_square_root_of_the_float_range_are_standardised(scale):
    """Their std overflowed to inf (predictions inf) or underflowed to 0 (read as a constant
    target: predictions of order 1 for data of order 1e-165)."""
    x, y, model = _small_fit()
    reference = model.fit(x, y).predict(x[:5])
    scaled = model.fit(x, scale * y).predict(x[:5]) / scale
    np.testing.assert_allclose(scaled, reference, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("setting, message", [
    ({"noise_prior": 5}, r"noise_prior must be None or \(shape, rate\) > 0, got 5"),
    ({"prior": {"kind": "normal", "scale": 1.0, "sd": 2}},
     r"prior \{'kind': 'normal', 'scale': 1.0, 'sd': 2\}: .*unexpected keyword argument 'sd'"),
])
def test_bad_prior_settings_are_a_value_error_naming_them(setting, message):
    x, y, model = _small_fit(**setting)
    with pytest.raises(ValueError, match=message):
        model.fit(x, y)


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_the_standardizer_is_scale_invariant_far_from_one(scale):
    from surrogates.scaling import Standardizer

    X = np.random.default_rng(1).normal(size=(50, 2))
    np.testing.assert_allclose(Standardizer().fit(scale * X).transform(scale * X),
                               Standardizer().fit(X).transform(X), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"column 0 is too large to standardise"):
        Standardizer().fit(np.array([[1.7e308, 0.0], [1.7e308, 1.0], [1.0, 2.0]]))
