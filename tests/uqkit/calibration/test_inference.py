"""What :func:`uqkit.calibration.calibrate` hands back besides the posterior's shape (its
noise, names, diagnostics and stores), and its refusals, each message whole."""
import os
import re

import chaospy
import numpy as np
import pytest

from uqkit.calibration import calibrate
from uqkit.inputs import RandomInputs

PRIOR = RandomInputs.from_spec({"a": "normal(1, 2)", "b": "normal(-0.5, 1.5)"})
A = np.array([[1.0, 0.5], [0.2, -1.0], [0.7, 0.7]])
Y = np.array([1.9, 0.9, 1.1])


def linear(X):
    return X @ A.T


class Named:
    output_names = ("u", "v", "w")

    def __call__(self, X):
        return linear(X)


class WithVariance:
    """A surrogate whose predictive variance is ``var`` everywhere."""

    def __init__(self, var):
        self.var = var

    def __call__(self, X):  # its means, for a run that leaves the variance out
        return linear(X)

    def predict_with_variance(self, X):
        return linear(X), np.full((len(X), 3), self.var)


def run(model=linear, **kw):
    args = dict(n_samples=300, seed=2, executor="serial")
    args.update(kw)
    return calibrate(model, PRIOR, args.pop("observed", Y), args.pop("noise_std", 0.3), **args)


def test_known_noise_is_reported_and_kept_per_draw():
    post = run(noise_std=[0.3, 0.2, 0.4])
    assert post.names == ("a", "b")
    assert post.info["noise"] == {"sampled": False, "std": [0.3, 0.2, 0.4]}
    assert post.noise_std.shape == (300, 3)
    assert np.array_equal(post.noise_std, np.tile([0.3, 0.2, 0.4], (300, 1)))
    assert post.output_names == ("y0", "y1", "y2")
    assert post.method == "tmcmc" and post.log_evidence is not None
    assert post.model_runs == 300 * (1 + sum(s["steps"] for s in post.diagnostics["stages"]))
    assert run(Named()).output_names == ("u", "v", "w")


def test_sampled_noise_is_the_last_parameter_and_each_draws_own_noise():
    """The noise is a parameter of its own: not a function of an input's draw."""
    from scipy import stats

    post = run(noise_std="uniform(0.05, 1)")
    assert post.names == ("a", "b", "noise_std")
    assert post.info["noise"] == {"sampled": True, "prior": "uniform(0.05, 1)"}
    sigma = post.samples[:, -1]
    assert ((sigma >= 0.05) & (sigma <= 1)).all() and np.unique(sigma).size > 50
    assert np.array_equal(post.noise_std, np.tile(sigma[:, None], (1, 3)))
    for j in range(2):
        assert abs(stats.spearmanr(post.samples[:, j], sigma)[0]) < 0.5


def test_failed_runs_are_counted_over_every_batch_and_seconds_are_the_wall_time():
    failed = []

    def fails_when_a_is_negative(X):
        out = linear(X)
        out[X[:, 0] < 0] = np.nan
        failed.append(int((X[:, 0] < 0).sum()))
        return out

    import time

    t0 = time.perf_counter()
    post = run(fails_when_a_is_negative)
    wall = time.perf_counter() - t0
    assert post.failed_runs == sum(failed) and sum(failed) > len(failed) > 1
    assert 0 < post.seconds <= wall


def test_with_sampled_noise_the_variance_share_uses_each_draws_noise():
    post = run(WithVariance(0.04), noise_std="uniform(0.05, 1)")
    sigma = post.samples[:, -1]
    expected = np.mean(0.04 / (0.04 + sigma ** 2))
    assert post.info["model_variance_share"] == pytest.approx(expected, rel=1e-12)


def test_a_surrogates_variance_share_is_its_part_of_the_likelihoods_variance():
    """Predictive variance v against noise sigma_k^2: the share is the mean over outputs of
    v / (v + sigma_k^2), the same at every draw."""
    noise = np.array([0.3, 0.2, 0.4])
    post = run(WithVariance(0.04), noise_std=noise)
    expected = np.mean(0.04 / (0.04 + noise ** 2))
    assert post.info["model_variance_share"] == pytest.approx(expected, rel=1e-12)
    assert "model_variance_share" not in run(WithVariance(0.04), noise_std=noise,
                                            use_model_variance=False).info


class Counted:
    """The linear model, counting its calls: a model whose state changes as it runs says
    what it is with describe(), so that a store knows it again."""

    def __init__(self):
        self.calls = []

    def __call__(self, X):
        self.calls.append(len(X))
        return linear(X)

    def describe(self):
        return {"model": "linear", "A": A.tolist()}


def test_each_batch_has_its_store_and_a_rerun_runs_nothing(tmp_path):
    counted = Counted()
    first = run(counted, store=tmp_path / "runs")
    batches = sorted(os.listdir(tmp_path / "runs"))
    assert batches == [f"batch-{i:05d}" for i in range(len(batches))]
    assert len(batches) == 1 + sum(s["steps"] for s in first.diagnostics["stages"])
    n_calls = len(counted.calls)
    again = run(counted, store=tmp_path / "runs")
    assert len(counted.calls) == n_calls and np.array_equal(again.samples, first.samples)
    # and it says so: its runs came from the store (the calibration study's report gave a
    # rerun's FE posterior its 104,000 "model runs" and seconds as if made again)
    assert "loaded_runs" not in first.info and again.info["loaded_runs"] == again.model_runs


def test_emcee_defaults_and_draws_from_every_walker():
    """32 walkers for 2 parameters (8 p, at least 32), the second half of the steps kept,
    and the draws taken at evenly spaced steps of every walker."""
    post = run(method="emcee", n_samples=320, steps=200)
    d = post.diagnostics
    assert (d["walkers"], d["steps"], d["burn"]) == (32, 200, 100)
    assert post.samples.shape == (320, 2) and post.log_evidence is None
    assert 0.2 < d["acceptance"] < 0.9 and len(d["autocorrelation_steps"]) == 2
    assert d["effective_draws"] == pytest.approx(32 * 100 / max(d["autocorrelation_steps"]))
    assert post.model_runs >= 32 * 200
    # 320 draws of 32 walkers: 10 steps of every walker, so no draw repeats a row
    assert len(np.unique(post.samples[:, 0])) > 250


def test_emcee_with_an_uninformative_measurement_samples_the_prior():
    """Noise 1000 times the outputs' spread: the posterior is the prior, N(1, 2) and
    N(-0.5, 1.5), which emcee samples through the standard normal density of u."""
    post = run(method="emcee", noise_std=1e3, n_samples=4000, steps=600, burn=100)
    np.testing.assert_allclose(post.mean(), [1.0, -0.5], atol=0.25)
    np.testing.assert_allclose(post.std(), [2.0, 1.5], rtol=0.12)


def test_emcee_is_reproducible_by_its_seed_and_takes_its_bounds():
    first = run(method="emcee", steps=60, seed=4)
    assert np.array_equal(first.samples, run(method="emcee", steps=60, seed=4).samples)
    assert not np.array_equal(first.samples, run(method="emcee", steps=60, seed=5).samples)
    edge = run(method="emcee", walkers=4, steps=60, burn=0, n_samples=40)  # 2 p walkers
    assert (edge.diagnostics["walkers"], edge.diagnostics["burn"]) == (4, 0)
    five = RandomInputs.from_spec({f"x{i}": "normal(0, 1)" for i in range(5)})
    post = calibrate(lambda X: X[:, :3], five, Y, 0.3, method="emcee", steps=40, n_samples=40,
                     executor="serial")
    assert post.diagnostics["walkers"] == 40  # 8 p


@pytest.mark.parametrize("kw, message", [
    (dict(observed=np.zeros((2, 2, 3))), "observed must be a (k,) vector or an (m, k) array "
                                         "of measurements, got shape (2, 2, 3)"),
    (dict(observed=[]), "observed must be a (k,) vector or an (m, k) array of measurements, "
                        "got shape (0,)"),
    (dict(observed=[1.0, np.inf, np.nan]), "observed holds non-finite values: [inf nan]"),
    (dict(observed=[[np.nan, np.inf, -np.inf], [np.nan, 1.0, 2.0]]),
     "observed holds non-finite values: [ nan  inf -inf]"),
    (dict(noise_std=0.0), "noise_std must be > 0 and finite, got array(0.)"),
    (dict(noise_std=[0.1, np.nan, 0.2]), "noise_std must be > 0 and finite, got "
                                         "array([0.1, nan, 0.2])"),
    (dict(noise_std=np.ones((3, 1))), "noise_std must be a number, 3 numbers (one per output) "
                                      "or a distribution; got shape (3, 1)"),
    (dict(noise_std="uniform(-0.1, 1)"), "noise_std's distribution 'uniform(-0.1, 1)' puts "
                                         "mass below 0 (lower bound -0.1); a standard "
                                         "deviation is positive"),
    (dict(noise_std=chaospy.J(chaospy.Uniform(0.01, 1), chaospy.Uniform(0.01, 2))),
     "noise_std's distribution J(Uniform(lower=0.01, upper=1), Uniform(lower=0.01, upper=2)) "
     "has 2 dimensions; give one distribution, of the one standard deviation of every "
     "output's noise"),
    (dict(method="emcee", walkers=33), "emcee needs an even walkers >= 2 p = 4 and 0 <= burn "
                                       "< steps; got walkers=33, steps=2000, burn=1000"),
    (dict(method="emcee", walkers=2), "emcee needs an even walkers >= 2 p = 4 and 0 <= burn "
                                      "< steps; got walkers=2, steps=2000, burn=1000"),
    (dict(method="emcee", steps=10, burn=10), "emcee needs an even walkers >= 2 p = 4 and "
                                              "0 <= burn < steps; got walkers=32, steps=10, "
                                              "burn=10"),
    (dict(method="emcee", n_steps=3), "unknown option(s) ['n_steps'] for method 'emcee'; "
                                      "options: ['burn', 'steps', 'walkers']"),
    (dict(target=1.0), "unknown option(s) ['target'] for method 'tmcmc'; options: "
                       "['n_steps', 'target_cov']"),
    (dict(noise_std=["uniform(0.1, 1)"] * 3),
     "noise_std ['uniform(0.1, 1)', 'uniform(0.1, 1)', 'uniform(0.1, 1)']: an unknown noise is "
     "one distribution, of the one standard deviation of every output's noise (a spec string "
     "or a chaospy distribution); one per output is not supported: give numbers per output, "
     "or one distribution"),
    # emcee took 0 to a reshape error and 10.5 to a bare TypeError (a bug hunt)
    (dict(method="emcee", n_samples=0), "n_samples must be an integer >= 2, got n_samples=0"),
    (dict(method="emcee", n_samples=10.5), "n_samples must be an integer >= 2, got "
                                           "n_samples=10.5"),
])
def test_bad_input_is_refused_with_the_whole_message(kw, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        run(**kw)


def test_the_samplers_options_reach_it():
    """TMCMC's n_steps and target_cov: each stage runs n_steps batches, and a lower target
    CoV takes more stages."""
    five = run(n_steps=5)
    assert five.model_runs == 300 * (1 + 5 * len(five.diagnostics["stages"]))
    fine = run(target_cov=0.3)
    assert len(fine.diagnostics["stages"]) > len(run().diagnostics["stages"])
    assert all(s["weights_cov"] == pytest.approx(0.3, rel=1e-6)
               for s in fine.diagnostics["stages"][:-1])


class BadVariance(WithVariance):
    """A surrogate whose predictive variance has the wrong shape, or a negative entry."""

    def predict_with_variance(self, X):
        return linear(X), self.var(len(X))


@pytest.mark.parametrize("var, message", [
    (lambda n: np.full((n, 1), 0.04), r"variance has shape \(\d+, 1\) for means of shape "
                                      r"\(\d+, 3\): one variance per row and output"),
    (lambda n: np.full((n, 3), -0.01), r"variance is negative in \d+ of \d+ rows \(the least "
                                       r"-0.01\)"),
])
def test_a_surrogate_variance_that_does_not_fit_its_means_is_refused(var, message):
    """A (n, 1) variance for 3 outputs was broadcast into every output's likelihood."""
    with pytest.raises(ValueError, match=message):
        run(BadVariance(var))


@pytest.mark.parametrize("options, message", [
    ({"n_samples": 1}, "n_samples must be an integer >= 2, got n_samples=1"),
    ({"n_steps": 0}, "n_steps must be an integer >= 1, got n_steps=0"),
    ({"target_cov": -1.0},
     r"target_cov must be a finite number in \(0, inf\), got target_cov=-1.0"),
])
def test_tmcmc_settings_are_checked_before_any_run(options, message):
    """n_samples = 1 ended in a LinAlgError, n_steps = 0 in a ZeroDivisionError, and a
    negative target_cov ran 200 stages before failing."""
    calls = []

    def counted(X):
        calls.append(len(X))
        return linear(X)

    with pytest.raises(ValueError, match=message):
        run(counted, **options)
    assert calls == []


# -- the audit's silent wrong numbers ------------------------------------------------------------

def _fails_above(X, limit=0.5):
    """y = 2 x, failing (NaN) where x > limit (module level: picklable)."""
    y = 2 * X.copy()
    y[X[:, 0] > limit] = np.nan
    return y


def test_emcee_walkers_start_where_the_model_works():
    """x ~ N(0, 1), y = 2 x measured 1.6 with noise 0.2, the model failing for x > 0.5: the
    posterior is a normal truncated at 0.5, mean 0.4708 (closed form). A walker started where
    the model fails stayed there, and its failed draws entered the posterior: mean 0.542,
    250 of 2000 draws beyond 0.5."""
    from scipy import stats

    prior = RandomInputs.from_spec({"x": "normal(0, 1)"})
    precision = 1 + 4 / 0.04
    mu, sd = 2 * 1.6 / 0.04 / precision, precision ** -0.5
    exact = stats.truncnorm(-np.inf, (0.5 - mu) / sd, mu, sd).mean()
    with pytest.warns(UserWarning, match="model runs failed"):
        post = calibrate(_fails_above, prior, [1.6], 0.2, n_samples=2000, seed=0,
                         executor="serial", method="emcee", steps=500)
    assert post.samples.max() <= 0.5 and np.isfinite(post.outputs).all()
    assert abs(post.mean()[0] - exact) < 0.01


def test_emcee_refuses_when_no_walker_start_works():
    from uqkit.calibration.inference import START_POOL, START_TRIES, _emcee_start

    calls = []

    def log_prob(u):
        calls.append(len(u))
        return [(-np.inf if row[0] > -3 else 0.0, 1.0) for row in u]

    with pytest.raises(RuntimeError, match=r"emcee: \d of 1280 prior draws have a finite "
                                           "posterior density .* fewer than the 8 walkers"):
        _emcee_start(log_prob, 8, 1, np.random.default_rng(0))
    assert calls == [8 * START_POOL] * START_TRIES


def test_a_surrogates_nan_variance_is_a_failed_run_said_so():
    """A NaN predictive variance gave its rows zero likelihood without a word."""
    class HalfBroken:
        def __call__(self, X):
            return 2 * X

        def predict_with_variance(self, X):
            var = np.full((len(X), 1), 0.01)
            var[X[:, 0] > 0.5] = np.nan
            return 2 * X, var

    prior = RandomInputs.from_spec({"x": "normal(0, 1)"})
    with pytest.warns(UserWarning, match="model runs failed"):
        post = calibrate(HalfBroken(), prior, [1.6], 0.2, n_samples=500, executor="serial")
    assert post.failed_runs > 0


def test_a_model_failing_on_most_of_the_prior_is_calibrated_not_stopped():
    """The model fails for x < 2 (97.7% of the prior): every run of a batch may fail, which
    stopped the run as a broken model (PropagationError). The posterior is a normal
    truncated at 2."""
    from scipy import stats

    prior = RandomInputs.from_spec({"x": "normal(0, 1)"})
    with pytest.warns(UserWarning, match="model runs failed"):
        post = calibrate(_fails_below_2, prior, [2.5], 0.3, n_samples=1000, seed=0,
                         executor="serial")
    precision = 1 + 1 / 0.09
    mu, sd = 2.5 / 0.09 / precision, precision ** -0.5
    exact = stats.truncnorm((2 - mu) / sd, np.inf, mu, sd).mean()
    assert post.samples.min() >= 2 and abs(post.mean()[0] - exact) < 0.02


def _fails_below_2(X):
    y = X.copy()
    y[X[:, 0] < 2] = np.nan
    return y


def test_a_tuple_of_noise_stds_is_one_per_output_not_a_spec():
    prior = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})
    post = calibrate(lambda X: X, prior, [0.5, -0.5], (0.1, 0.2), n_samples=200,
                     executor="serial")
    assert post.info["noise"] == {"sampled": False, "std": [0.1, 0.2]}


def test_emcee_says_when_it_keeps_fewer_draws_than_asked():
    prior = RandomInputs.from_spec({"x": "normal(0, 1)"})
    with pytest.warns(UserWarning, match=r"emcee kept 1600 draws .* for n_samples=4000"):
        post = calibrate(lambda X: X, prior, [0.0], 1.0, n_samples=4000, executor="serial",
                         method="emcee", steps=100)
    assert len(post.samples) == 1600


def _raises_above(X):
    if (X[:, 0] > 0.5).any():
        raise ValueError("no solution above 0.5")
    return 2 * X


@pytest.mark.parametrize("method, options", [("tmcmc", {}), ("emcee", {"steps": 300})])
def test_a_model_that_raises_where_it_fails_is_calibrated(method, options):
    """A batch whose runs all raised has no outputs at all: the calibration crashed ("the
    model gives 0 outputs") once all-failing batches went on."""
    prior = RandomInputs.from_spec({"x": "normal(0, 1)"})
    with pytest.warns(UserWarning, match="model runs failed"):
        post = calibrate(_raises_above, prior, [1.6], 0.2, n_samples=1000, seed=0,
                         executor="serial", method=method, **options)
    assert post.samples.max() <= 0.5 and abs(post.mean()[0] - 0.4708) < 0.02


def _always_raises(X):
    raise NameError("name 'stiffness' is not defined")


def test_a_broken_model_stops_at_its_first_batch_with_its_own_error():
    from uqkit.execution.propagation import PropagationError

    prior = RandomInputs.from_spec({"x": "normal(0, 1)"})
    with pytest.raises(PropagationError, match="first batch failed with the same error: "
                                               "raised NameError: .*stiffness"):
        calibrate(_always_raises, prior, [1.6], 0.2, n_samples=200, executor="serial")


def test_a_proposal_where_a_copulas_inverse_is_off_is_rejected_without_a_run():
    """A Clayton copula of a normal and a lognormal: chaospy caps the lognormal's quantile
    at u = 6.37, its inverse is off beyond, and the first proposal that far out stopped the
    whole calibration with a ValueError (3 of 4 seeds of a review's). It is now rejected,
    not run, counted and said."""
    from uqkit.calibration.inference import _Evaluator, _noise

    prior = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "lognormal(mean=1, std=0.3)"}
                                   ).with_copula("clayton", 2.0)
    seen = []

    def model(X):
        seen.append(len(X))
        return np.column_stack([X[:, 0] + X[:, 1], X[:, 0] * X[:, 1]])

    Y2 = np.array([[2.2, 1.0]])
    with _Evaluator(model, prior, Y2, _noise(0.2, 2), True, "serial", None, None, None,
                    False) as evaluate:
        ll, extra = evaluate(np.array([[0.3, 0.2], [0.1, 7.5], [-0.2, 0.4]]))
    # (a square answer, 2 outputs of 2 rows, has its orientation checked on its first row)
    assert seen[0] == 2 and evaluate.runs == 2 and evaluate.off == 1 and evaluate.failed == 0
    assert ll[1] == -np.inf and np.isfinite(ll[[0, 2]]).all()
    assert np.isnan(extra[1]).all()
    with pytest.warns(UserWarning, match="proposals lay where the inverse transform"):
        post = calibrate(model, prior, Y2, 0.2, n_samples=2000, seed=0, executor="serial")
    assert post.info["rejected_proposals"] > 0


def test_a_batch_all_off_keeps_the_surrogates_variance_columns():
    """Where every proposal of a batch lay where the copula's inverse is off, a surrogate's
    batch came back with k extra columns instead of 2k, which the samplers then stacked
    with the others'."""
    from uqkit.calibration.inference import _Evaluator, _noise

    prior = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "lognormal(mean=1, std=0.3)"}
                                   ).with_copula("clayton", 2.0)

    class Surrogate:
        def predict_with_variance(self, X):
            return X.sum(axis=1, keepdims=True), np.full((len(X), 1), 0.01)

    with _Evaluator(Surrogate(), prior, np.array([[2.0]]), _noise(0.2, 1), True, "serial",
                    None, None, None, False) as evaluate:
        _, some = evaluate(np.array([[0.3, 0.2], [0.1, 7.5]]))
        _, none = evaluate(np.array([[0.1, 7.5], [0.2, 7.6]]))
    assert some.shape == none.shape == (2, 2) and np.isnan(none).all()


def test_emcee_with_one_kept_step_does_not_crash():
    """steps=2, burn=1 passed the option check, then the split R-hat divided by zero."""
    post = run(method="emcee", steps=2, burn=1, n_samples=32)
    assert np.isnan(post.diagnostics["r_hat"]).all() and len(post.samples) == 32


@pytest.mark.parametrize("method", ["tmcmc", "emcee"])
def test_a_posterior_cut_off_by_the_priors_tail_says_so(method):
    """A measurement 12.5 prior standard deviations away (E ~ N(200, 2), E = 225 measured
    with noise 1): the exact posterior is N(220, 0.89), but the prior's transform maps every
    u past 8.22 to one E, so the draws piled up near 216.3 with a std of 0.17, and nothing
    said so (a bug hunt). Proposals past the edge are rejected, and the result warns (the
    posterior stays cut off: the warning is what changes)."""
    from uqkit.calibration.inference import U_EDGE, PriorConflictWarning

    prior = RandomInputs.from_spec({"E": "normal(200, 2)"})
    with pytest.warns(PriorConflictWarning, match=r"'E' reaches 8\.\d\d prior standard "
                                                  r"deviations .* cut off there"):
        post = calibrate(lambda X: X, prior, [225.0], noise_std=1.0, n_samples=500, seed=0,
                         method=method, executor="serial")
    conflict = post.info["prior_conflict"]
    assert conflict["input"] == "E" and U_EDGE - 0.5 <= conflict["prior_stds"] <= U_EDGE
    assert conflict["rejected_proposals"] > 0


def test_a_posterior_well_inside_the_prior_has_no_conflict_warning():
    """4 prior standard deviations out (E = 210 measured): the exact N(208, 0.894), no
    warning."""
    import warnings

    prior = RandomInputs.from_spec({"E": "normal(200, 2)"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        post = calibrate(lambda X: X, prior, [210.0], noise_std=1.0, n_samples=1000, seed=0,
                         executor="serial")
    assert "prior_conflict" not in post.info
    assert abs(post.mean()[0] - 208.0) < 4 * 0.894 / np.sqrt(1000) * 3  # a few MC errors
    assert abs(post.std()[0] / 0.894 - 1) < 0.1


class _TwoOutputs:
    """w1 = x, w2 = 3 x."""
    output_names = ("w1", "w2")

    def __call__(self, X):
        return np.column_stack([X[:, 0], 3 * X[:, 0]])


def test_measurements_named_by_output_are_taken_by_name():
    """A DataFrame with columns (w2, w1) was read by position: the posterior mean of x came
    out 0.599 where it is 0.999 (a bug hunt). Named columns, a Series' index and a named
    noise_std are now put in the model's output order, and names that do not match are
    refused."""
    pd = pytest.importorskip("pandas")
    prior = RandomInputs.from_spec({"x": "normal(0, 1)"})
    kw = dict(n_samples=500, seed=0, executor="serial")
    reference = calibrate(_TwoOutputs(), prior, [1.0, 3.0], noise_std=[0.1, 0.2], **kw)
    for observed in (pd.DataFrame({"w2": [3.0], "w1": [1.0]}),
                     pd.Series({"w2": 3.0, "w1": 1.0})):
        post = calibrate(_TwoOutputs(), prior, observed,
                         noise_std=pd.Series({"w2": 0.2, "w1": 0.1}), **kw)
        np.testing.assert_array_equal(post.samples, reference.samples)
    with pytest.raises(ValueError, match=r"observed names \['w2', 'w3'\]; the model's outputs "
                                         r"are \['w1', 'w2'\] \(missing: \['w1'\], unknown: "
                                         r"\['w3'\]\)"):
        calibrate(_TwoOutputs(), prior, pd.DataFrame({"w2": [3.0], "w3": [1.0]}), 0.1, **kw)
    # a model without output names reads them by position, as before (a review)
    unnamed = calibrate(lambda X: np.column_stack([X[:, 0], 3 * X[:, 0]]), prior,
                        pd.DataFrame({"a": [1.0], "b": [3.0]}), [0.1, 0.2], **kw)
    np.testing.assert_array_equal(unnamed.samples, reference.samples)
