"""Calibration against independent truth: the closed-form linear-Gaussian posterior and
evidence, a posterior on a fine grid, two separated modes, the conjugate unknown noise, and a
surrogate's shared predictive variance."""
import chaospy
import numpy as np
import pytest
from scipy import stats

from uqkit.calibration import calibrate
from uqkit.inputs import RandomInputs

A = np.array([[1.0, 0.5], [0.2, -1.0], [0.7, 0.7]])
MU0, SD0 = np.array([1.0, -0.5]), np.array([2.0, 1.5])
NOISE = np.array([0.3, 0.2, 0.4])
Y = np.array([[1.9, 0.9, 1.1], [2.2, 1.3, 0.8]])  # m = 2 measurements of k = 3 outputs


def linear(X):
    return X @ A.T


def _prior():
    return RandomInputs.from_spec({"a": f"normal({MU0[0]}, {SD0[0]})",
                                   "b": f"normal({MU0[1]}, {SD0[1]})"})


def exact_linear(Y, noise_cov_of):
    """The exact posterior (mean, cov) and log evidence of x ~ N(MU0, SD0^2), vec(Y) =
    (1 x A) x + e, e ~ N(0, noise covariance of the stacked measurements)."""
    m, k = Y.shape
    H = np.vstack([A] * m)
    R = noise_cov_of(m, k)
    P0 = np.diag(SD0 ** 2)
    S = H @ P0 @ H.T + R
    gain = P0 @ H.T @ np.linalg.inv(S)
    y = Y.ravel()
    mean = MU0 + gain @ (y - H @ MU0)
    cov = P0 - gain @ H @ P0
    log_evidence = stats.multivariate_normal(H @ MU0, S).logpdf(y)
    return mean, cov, log_evidence


def _independent(m, k):
    return np.diag(np.tile(NOISE ** 2, m))


def _check(post, mean, cov, mean_tol=0.1, std_tol=0.1):
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(post.mean()[:2] - mean) < mean_tol * sd), (post.mean(), mean, sd)
    assert np.all(np.abs(post.std()[:2] / sd - 1) < std_tol), (post.std(), sd)


def test_tmcmc_linear_gaussian_posterior_and_evidence_are_exact():
    mean, cov, log_evidence = exact_linear(Y, _independent)
    post = calibrate(linear, _prior(), Y, NOISE, n_samples=2000, seed=1, executor="serial")
    _check(post, mean, cov)
    assert abs(post.log_evidence - log_evidence) < 0.2
    assert post.model_runs == 2000 * (1 + sum(s["steps"] for s in post.diagnostics["stages"]))
    assert post.failed_runs == 0
    corr = cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1])
    assert abs(post.correlation()[0, 1] - corr) < 0.05


def test_emcee_linear_gaussian_posterior_is_exact():
    pytest.importorskip("emcee")
    mean, cov, _ = exact_linear(Y, _independent)
    post = calibrate(linear, _prior(), Y, NOISE, n_samples=2000, seed=2, method="emcee",
                     executor="serial")
    _check(post, mean, cov)
    assert post.log_evidence is None and 0.2 < post.diagnostics["acceptance"] < 0.9


def _banana(X):
    return np.column_stack([X[:, 0] + X[:, 1] ** 2, X[:, 0] * X[:, 1]])


def test_a_nonlinear_posterior_matches_quadrature_on_a_fine_grid():
    observed, noise = np.array([1.2, 0.3]), 0.3
    prior = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})
    grid = np.linspace(-5, 5, 801)
    a, b = np.meshgrid(grid, grid, indexing="ij")
    F = _banana(np.column_stack([a.ravel(), b.ravel()]))
    log_post = (stats.norm.logpdf(a.ravel()) + stats.norm.logpdf(b.ravel())
                + stats.norm(F, noise).logpdf(observed).sum(axis=1))
    w = np.exp(log_post - log_post.max())
    w /= w.sum()
    points = np.column_stack([a.ravel(), b.ravel()])
    mean = w @ points
    sd = np.sqrt(w @ (points - mean) ** 2)
    post = calibrate(_banana, prior, observed, noise, n_samples=4000, seed=3,
                     executor="serial")
    assert np.all(np.abs(post.mean() - mean) < 0.1 * sd), (post.mean(), mean, sd)
    assert np.all(np.abs(post.std() - sd) < 0.1 * sd), (post.std(), sd)


def test_two_separated_modes_of_equal_mass_are_both_found():
    prior = RandomInputs.from_spec({"a": "normal(0, 2)", "b": "normal(0, 1)"})

    def square(X):
        return np.column_stack([X[:, 0] ** 2, X[:, 1]])

    post = calibrate(square, prior, [4.0, 0.0], 0.2, n_samples=2000, seed=4,
                     executor="serial")
    right = np.mean(post.samples[:, 0] > 0)
    assert 0.35 <= right <= 0.65
    for side in (post.samples[:, 0] > 0, post.samples[:, 0] < 0):  # each mode at +-2
        assert abs(np.abs(post.samples[side, 0]).mean() - 2.0) < 0.05


def test_unknown_noise_matches_the_conjugate_inverse_gamma_posterior():
    rng = np.random.default_rng(5)
    y = rng.normal(0.0, 0.5, size=(20, 1))  # 20 repeated measurements of x = 0
    prior = RandomInputs.from_spec({"x": "normal(0, 0.001)"})  # x known to within 1e-3
    shape, scale = 3.0, 1.0  # noise variance ~ InvGamma(3, 1)
    noise_prior = chaospy.InverseGamma(shape, scale=scale) ** 0.5
    post = calibrate(lambda X: X, prior, y, noise_prior, n_samples=3000, seed=6,
                     executor="serial")
    assert post.names == ("x", "noise_std")
    var = post.samples[:, 1] ** 2
    exact = stats.invgamma(shape + len(y) / 2, scale=scale + (y ** 2).sum() / 2)
    assert abs(var.mean() - exact.mean()) < 0.1 * exact.std()
    assert abs(var.std() / exact.std() - 1) < 0.1
    assert post.info["noise"]["sampled"]


class _ConstantVarianceSurrogate:
    """A 'surrogate' of the linear model whose predictive variance is V everywhere."""

    def __init__(self, V):
        self.V = V

    def predict_with_variance(self, X):
        mean = linear(X)
        return mean, np.full_like(mean, self.V)

    def __call__(self, X):  # the predictive mean alone
        return linear(X)


def test_a_surrogate_variance_is_one_error_shared_by_repeated_measurements():
    V = 0.09
    k = len(NOISE)

    def shared(m, _):  # per output: noise^2 I_m + V 1 1^T, outputs independent
        cov = np.zeros((m * k, m * k))
        for i in range(m):
            for j in range(m):
                cov[i * k:(i + 1) * k, j * k:(j + 1) * k] = np.diag(
                    NOISE ** 2 * (i == j) + V)
        return cov

    mean, cov, log_evidence = exact_linear(Y, shared)
    post = calibrate(_ConstantVarianceSurrogate(V), _prior(), Y, NOISE, n_samples=2000,
                     seed=7)
    _check(post, mean, cov)
    assert abs(post.log_evidence - log_evidence) < 0.2
    share = np.mean(V / (V + NOISE ** 2))
    assert post.info["model_variance_share"] == pytest.approx(share, rel=1e-12)
    # ignoring the variance gives the sharper, wrong posterior of the plain model
    plain = calibrate(_ConstantVarianceSurrogate(V), _prior(), Y, NOISE, n_samples=2000,
                      seed=7, use_model_variance=False, executor="serial")
    assert np.all(plain.std() < 0.8 * post.std())


class _ReorderedSurrogate(_ConstantVarianceSurrogate):
    """The same surrogate trained on the columns (c, b, a): c unused, b and a swapped."""

    input_names = ("c", "b", "a")

    def predict_with_variance(self, X):
        return super().predict_with_variance(X[:, [2, 1]])


def test_a_surrogate_gets_its_inputs_by_name_in_its_own_order():
    """A surrogate whose input_names order differs from the prior's (and which takes an
    input the measurements do not inform): its predictive variance's path gave it the
    prior's columns by position, a posterior mean of 1.62 for 0.31 without a word."""
    V = 0.09
    prior = RandomInputs.from_spec({"a": f"normal({MU0[0]}, {SD0[0]})",
                                    "c": "uniform(0, 1)",
                                    "b": f"normal({MU0[1]}, {SD0[1]})"})

    def shared(m, _):
        return np.kron(np.ones((m, m)), np.diag(np.full(len(NOISE), V))) + np.diag(
            np.tile(NOISE ** 2, m))

    mean, cov, _ = exact_linear(Y, shared)
    post = calibrate(_ReorderedSurrogate(V), prior, Y, NOISE, n_samples=2000, seed=7)
    assert post.names == ("a", "c", "b")
    sd = np.sqrt(np.diag(cov))
    got = post.mean()[[0, 2]]
    assert np.all(np.abs(got - mean) < 0.1 * sd), (got, mean)
    assert np.all(np.abs(post.std()[[0, 2]] / sd - 1) < 0.1)
    assert abs(post.mean()[1] - 0.5) < 0.03  # the prior's, uninformed


def test_failed_runs_are_zero_likelihood_samples_counted_not_crashes():
    def model(X):
        out = linear(X)
        out[X[:, 0] > 1.6] = np.nan  # the model fails there
        return out

    from uqkit.calibration import FailedRunsWarning

    with pytest.warns(FailedRunsWarning, match=r"^\d+ of \d+ model runs failed and were given "
                                              "zero likelihood: the posterior leaves out"):
        post = calibrate(model, _prior(), Y, NOISE, n_samples=1000, seed=8, executor="serial")
    assert post.failed_runs > 0 and (post.samples[:, 0] <= 1.6).all()
    assert "failed" in post.summary()


def test_two_workers_and_a_store_resume_without_running_again(tmp_path):
    log = tmp_path / "calls"

    class Logged:
        def __call__(self, X):
            with open(log, "a") as fh:
                fh.write(f"{len(X)}\n")
            return linear(X)

    kw = dict(n_samples=400, seed=9, workers=2, store=tmp_path / "store")
    first = calibrate(Logged(), _prior(), Y, NOISE, **kw)
    calls = log.read_text()
    again = calibrate(Logged(), _prior(), Y, NOISE, **kw)
    assert log.read_text() == calls  # every batch loaded from the store
    assert np.array_equal(first.samples, again.samples)
    serial = calibrate(Logged(), _prior(), Y, NOISE, n_samples=400, seed=9, executor="serial")
    assert np.array_equal(first.samples, serial.samples)


@pytest.mark.parametrize("kw, message", [
    ({"observed": [1.0, 2.0], "noise_std": 0.1},
     "the model gives 3 outputs but observed has 2 columns"),
    ({"noise_std": -0.1}, r"noise_std must be > 0 and finite, got array\(-0.1\)"),
    ({"noise_std": [0.1, 0.2]}, r"noise_std must be a number, 3 numbers"),
    ({"noise_std": "normal(0.1, 1)"}, "puts mass below 0"),
    ({"prior": {"a": "normal(0, 1)"}}, "prior must be a uqkit.inputs.RandomInputs, got dict"),
    ({"method": "mh"}, "method must be one of"),
    ({"observed": [[np.nan, 1.0, 2.0]]}, "observed holds non-finite values"),
    ({"n_stages": 3}, r"unknown option\(s\) \['n_stages'\] for method 'tmcmc'"),
])
def test_bad_input_is_refused_naming_the_value(kw, message):
    args = {"model": linear, "prior": _prior(), "observed": Y, "noise_std": NOISE}
    args.update({k: v for k, v in kw.items() if k in args})
    options = {k: v for k, v in kw.items() if k not in args}
    with pytest.raises(ValueError, match=message):
        calibrate(**args, n_samples=100, executor="serial", **options)


def test_a_surrogate_without_a_predictive_variance_is_calibrated_on_its_means():
    from sklearn.linear_model import LinearRegression

    from uqkit.adapters import SurrogateModel

    X = np.random.default_rng(10).normal(size=(50, 2))
    model = SurrogateModel(LinearRegression().fit(X, linear(X)))  # exact: the model is linear
    with pytest.warns(UserWarning, match="gives no predictive variance"):
        post = calibrate(model, _prior(), Y, NOISE, n_samples=1000, seed=11)
    exact = calibrate(linear, _prior(), Y, NOISE, n_samples=1000, seed=11, executor="serial")
    assert "model_variance_share" not in post.info
    assert np.allclose(post.samples, exact.samples, atol=1e-6)


def test_a_surrogates_predictive_holds_its_error_given_the_measurements():
    """y = 2x + delta + eps with one surrogate error delta ~ N(0, V) shared by the three
    measurements and a new one: the exact predictive of the jointly Gaussian (x, delta).
    Without delta the 95% interval was [-0.89, 2.55] for [0.77, 1.23]."""
    V, s = 1.0, 0.1

    class Surrogate:
        def predict_with_variance(self, X):
            return 2 * X, np.full_like(X, V)

        def __call__(self, X):
            return 2 * X

    Yx = np.array([[1.0], [1.05], [0.95]])
    m = len(Yx)
    post = calibrate(Surrogate(), RandomInputs.from_spec({"x": "normal(0, 1)"}), Yx, s,
                     n_samples=4000, seed=0)
    H, P0 = np.array([[2.0, 1.0]] * m), np.diag([1.0, V])
    gain = P0 @ H.T @ np.linalg.inv(H @ P0 @ H.T + s ** 2 * np.eye(m))
    z_mean, z_cov = gain @ Yx[:, 0], P0 - gain @ H @ P0
    h = np.array([2.0, 1.0])
    sd = np.sqrt(h @ z_cov @ h + s ** 2)
    mean, (lo, hi) = post.predictive()
    assert abs(mean[0] - h @ z_mean) < 0.05 * sd
    assert np.allclose([lo[0], hi[0]], h @ z_mean + np.array([-1.96, 1.96]) * sd, atol=0.1 * sd)


def test_emcee_with_an_unknown_lognormal_noise_matches_quadrature_on_every_seed():
    """Five measurements of (x, 2x), x ~ N(0, 2), the noise's standard deviation lognormal:
    walkers started from plain prior draws stayed far out (a large noise explains any x) in
    seeds 0, 2 and 3 of a review's eight, the posterior's std 4 to 30 times the exact one,
    with healthy-looking diagnostics. The walkers now start at the best of a pool of prior
    draws, and a run whose walkers have not mixed says so (ConvergenceWarning)."""
    import warnings

    from uqkit.calibration import ConvergenceWarning

    rng = np.random.default_rng(3)
    Yn = np.column_stack([1.0 + 0.3 * rng.standard_normal(5), 2.0 + 0.3 * rng.standard_normal(5)])
    noise = stats.lognorm(0.5, scale=0.3)
    xs, ss = np.linspace(-1, 3, 801), np.linspace(0.01, 2, 801)
    X, S = np.meshgrid(xs, ss, indexing="ij")
    lp = stats.norm(0, 2).logpdf(X) + noise.logpdf(S) + sum(
        stats.norm(X, S).logpdf(Yn[j, 0]) + stats.norm(2 * X, S).logpdf(Yn[j, 1])
        for j in range(len(Yn)))
    p = np.exp(lp - lp.max())
    p /= p.sum()
    exact_mean = (X * p).sum()
    exact_sd = np.sqrt(((X - exact_mean) ** 2 * p).sum())
    prior = RandomInputs.from_spec({"x": "normal(0, 2)"})
    for seed in (0, 2, 3):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            post = calibrate(lambda A: np.column_stack([A[:, 0], 2 * A[:, 0]]), prior, Yn,
                             chaospy.LogNormal(np.log(0.3), 0.5), n_samples=4000, seed=seed,
                             executor="serial", method="emcee")
        assert abs(post.mean()[0] - exact_mean) < 0.1 * exact_sd
        assert abs(post.std()[0] / exact_sd - 1) < 0.1, (seed, post.std()[0], exact_sd)
        assert max(post.diagnostics["r_hat"]) < 1.1


def test_a_walker_stuck_far_out_is_said_not_mixed(monkeypatch):
    """One walker started far out (x = 12.5 with a noise of 7, where a large noise explains
    any input) and no burn-in: its first steps, kept, make the posterior's std several times
    the exact one, and the run says so (ConvergenceWarning), where nothing did."""
    from uqkit.calibration import ConvergenceWarning, inference

    start = inference._emcee_start

    def one_walker_in_the_trap(log_prob, walkers, dim, rng):
        state = start(log_prob, walkers, dim, rng)
        state.coords[0] = [6.25, (np.log(7.0) - np.log(0.3)) / 0.5]
        (row,) = log_prob(state.coords[:1])
        state.log_prob[0], state.blobs[0] = row[0], row[1:]
        return state

    monkeypatch.setattr(inference, "_emcee_start", one_walker_in_the_trap)
    rng = np.random.default_rng(3)
    Yn = np.column_stack([1.0 + 0.3 * rng.standard_normal(5), 2.0 + 0.3 * rng.standard_normal(5)])
    with pytest.warns(ConvergenceWarning, match="walkers have not mixed"):
        post = calibrate(lambda A: np.column_stack([A[:, 0], 2 * A[:, 0]]),
                         RandomInputs.from_spec({"x": "normal(0, 2)"}), Yn,
                         chaospy.LogNormal(np.log(0.3), 0.5), n_samples=4000, seed=0,
                         executor="serial", method="emcee", burn=0)
    assert post.std()[0] > 0.3  # the exact 0.10
    assert post.diagnostics["walker_behind"] > 5.0


def test_a_surrogate_behind_a_pipeline_keeps_its_variance():
    """A GP in a scikit-learn Pipeline (``predict(X, **params)`` passes return_std on): the
    adapter read its signature, found no return_std, and the posterior took the GP's means
    for the truth, ten times too narrow here, without a word."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from uqkit.adapters import SurrogateModel

    class Wrapped:  # mean x, std 1 everywhere, behind a predict(X, **kwargs)
        def predict(self, X, **kwargs):
            if kwargs.get("return_std"):
                return X[:, 0], np.ones(len(X))
            return X[:, 0]

    post = calibrate(SurrogateModel(Wrapped()), RandomInputs.from_spec({"x": "normal(0, 10)"}),
                     [0.0], 0.1, n_samples=2000, seed=0)
    exact = 1 / np.sqrt(1 / 100 + 1 / (0.1 ** 2 + 1.0))  # x ~ N(0, 10^2), y ~ N(x, 0.1^2 + 1)
    assert abs(post.std()[0] / exact - 1) < 0.1 and "model_variance_share" in post.info
    X = np.linspace(0, 1, 12)[:, None]
    pipe = make_pipeline(StandardScaler(), GaussianProcessRegressor()).fit(X, np.sin(6 * X[:, 0]))
    mean, var = SurrogateModel(pipe).predict_with_variance(np.array([[0.25], [0.9]]))
    std = pipe.predict(np.array([[0.25], [0.9]]), return_std=True)[1]
    assert np.allclose(var[:, 0], std ** 2)


@pytest.mark.parametrize("std, message", [
    (-np.ones(3), "predictive standard deviation is -1.0 in 3 of 3 rows"),
    (np.ones(2), "predictive standard deviations have shape (2,) for means of shape (3, 1)"),
])
def test_a_surrogates_bad_standard_deviations_are_refused_by_name(std, message):
    """A negative std came back squared, a positive variance; one of the wrong length as
    numpy's reshape error."""
    import re

    from uqkit.adapters import SurrogateModel

    class Bad:
        def predict(self, X, return_std=False):
            return (X[:, 0], std) if return_std else X[:, 0]

    with pytest.raises(ValueError, match=re.escape(message)):
        SurrogateModel(Bad()).predict_with_variance(np.zeros((3, 1)))


def test_measurements_given_as_a_dict_are_refused_by_name():
    """A dict of measurements by output name ended in numpy's "float() argument must be ...
    not 'dict'"."""
    with pytest.raises(ValueError, match=r"observed is a dict \(\['y'\]\): give the measurements "
                                         "as an array"):
        calibrate(lambda X: 2 * X, RandomInputs.from_spec({"a": "normal(2, 1)"}), {"y": 4.4},
                  0.5, executor="serial")
