"""The TMCMC sampler's own contract (:mod:`uqkit.calibration.tmcmc`), against independent
truth: the tempering exponent against a root finder and the weights' coefficient of
variation, each stage's diagnostics against identities they must satisfy, the evaluations
against a counting likelihood, and the proposal against the acceptance it is tuned to."""
import numpy as np
import pytest
from scipy import optimize

from uqkit.calibration.tmcmc import MAX_STEPS, TARGET_ACCEPTANCE, next_exponent, tmcmc


def weights_cov(ll, dq):
    """The coefficient of variation of the weights L^dq (zero weight where ll is -inf),
    computed on its own."""
    finite = np.isfinite(ll)
    w = np.zeros(len(ll))
    w[finite] = np.exp(dq * (ll[finite] - ll[finite].max()))
    return w.std() / w.mean()


def sample_ll(seed=0, n=1000, spread=10.0, failed=5):
    ll = np.random.default_rng(seed).normal(size=n) * spread
    ll[:failed] = -np.inf
    return ll


@pytest.mark.parametrize("q", [0.0, 0.3, 0.9])
@pytest.mark.parametrize("target", [0.5, 1.0, 2.0])
def test_next_exponent_gives_weights_of_the_target_cov(q, target):
    ll = sample_ll()
    q_next = next_exponent(ll, q, target)
    assert q < q_next <= 1.0
    if q_next < 1.0:
        assert weights_cov(ll, q_next - q) == pytest.approx(target, rel=1e-9)
    else:  # the posterior reached before the target
        assert weights_cov(ll, 1.0 - q) <= target


def test_next_exponent_defaults_to_a_cov_of_one():
    ll = sample_ll(seed=1)
    assert weights_cov(ll, next_exponent(ll, 0.0)) == pytest.approx(1.0, rel=1e-9)


def test_next_exponent_is_the_root_to_twelve_digits_even_when_small():
    """A sharp likelihood makes the first exponent about 1e-5: the bisection's tolerance is
    relative to it, so the exponent matches a root finder's to 1e-11."""
    for spread in (10.0, 1e3, 1e5):
        ll = sample_ll(seed=2, spread=spread, failed=0)
        root = optimize.brentq(lambda dq: weights_cov(ll, dq) - 1.0, 1e-300, 1.0, xtol=1e-300,
                               rtol=1e-15)
        assert next_exponent(ll, 0.0) == pytest.approx(root, rel=1e-11, abs=0), spread


def test_next_exponent_is_one_when_the_rest_of_the_way_meets_the_target_exactly():
    """The posterior is taken as soon as the weights of the whole remaining step have the
    target's CoV, the tie included."""
    ll, q = sample_ll(seed=3, spread=0.5), 0.3
    finite = np.isfinite(ll)
    shifted = np.where(finite, ll - ll[finite].max(), -np.inf)
    w = np.exp((1.0 - q) * shifted)
    assert next_exponent(ll, q, w.std() / w.mean()) == 1.0
    assert next_exponent(ll, q, 0.999 * w.std() / w.mean()) < 1.0


def test_next_exponent_does_not_depend_on_the_likelihoods_constant():
    """Log-likelihoods of real data are large negative numbers: a constant added to all of
    them (the noise's normalisation) cannot change the weights, nor overflow them."""
    ll = sample_ll(seed=4)
    for shift in (-1e6, -1e3, 1e3, 1e6):
        assert next_exponent(ll + shift, 0.2) == pytest.approx(next_exponent(ll, 0.2),
                                                              rel=1e-9)


def conjugate(y=(3.0, 1.5), noise=0.05, design=np.eye(2)):
    """Prior N(0, I) in 2-D, measurements y = design u + e, e ~ N(0, noise^2) (noise a
    scalar or one std per measurement). Returns the log-likelihood, the rows it saw, and the
    exact posterior's mean and covariance."""
    y, design = np.asarray(y, dtype=float), np.asarray(design, dtype=float)
    noise = np.broadcast_to(np.asarray(noise, dtype=float), y.shape)
    precision = np.eye(2) + design.T @ np.diag(noise ** -2.0) @ design
    cov = np.linalg.inv(precision)
    mean = cov @ design.T @ (y / noise ** 2)
    seen = []

    def log_likelihood(U):
        seen.append(len(U))
        return -0.5 * (((y - U @ design.T) / noise) ** 2).sum(1), 2.0 * U + 1.0

    log_likelihood.exact = (mean, cov)
    return log_likelihood, seen


def test_tmcmc_counts_its_evaluations_and_keeps_each_samples_extra_and_likelihood():
    log_likelihood, seen = conjugate()
    res = tmcmc(log_likelihood, 2, n=500, rng=np.random.default_rng(0))
    assert res.evaluations == sum(seen) == 500 * (1 + sum(s["steps"] for s in res.stages))
    assert set(seen) == {500}
    # what the sampler keeps per sample is the function's value at that very sample
    ll, extra = log_likelihood(res.u)
    np.testing.assert_array_equal(res.log_likelihood, ll)
    np.testing.assert_array_equal(res.extra, extra)
    assert res.u.shape == (500, 2) and len(np.unique(res.u[:, 0])) > 100


def test_tmcmc_default_size_is_two_thousand_samples():
    log_likelihood, seen = conjugate(noise=0.5)
    assert tmcmc(log_likelihood, 2, rng=np.random.default_rng(0)).u.shape == (2000, 2)


def test_each_stage_reports_its_weights_and_proposal_consistently():
    """Stage diagnostics: the exponent rises to 1; every stage but the last has weights of
    the target CoV, the last at most that; the ESS is n / (1 + CoV^2) (an identity of
    normalised weights); the scale starts at 2.38 / sqrt(d) and follows the acceptance
    (Betz et al. 2016); the callback sees the same dicts."""
    for target in (None, 0.5):  # None: the default, 1
        log_likelihood, _ = conjugate()
        called = []
        res = tmcmc(log_likelihood, 2, n=800, rng=np.random.default_rng(1), callback=called.append,
                    **({} if target is None else {"target_cov": target}))
        target = target or 1.0
        stages = res.stages
        assert called == stages and len(stages) >= 3
        q = [s["q"] for s in stages]
        assert q == sorted(q) and q[-1] == 1.0 and q[0] > 0
        for s in stages[:-1]:
            assert s["weights_cov"] == pytest.approx(target, rel=1e-6)
        assert stages[-1]["weights_cov"] <= target * (1 + 1e-9)
        for s in stages:
            assert s["ess"] == pytest.approx(800 / (1 + s["weights_cov"] ** 2), rel=1e-9)
            assert (s["acceptance"] * 800 * s["steps"]) == pytest.approx(
                round(s["acceptance"] * 800 * s["steps"]), abs=1e-9)
            assert 0.0 <= s["acceptance"] <= 1.0
        assert stages[0]["scale"] == pytest.approx(2.38 / np.sqrt(2), rel=1e-12)
        for prev, nxt in zip(stages, stages[1:]):
            assert nxt["scale"] == pytest.approx(
                prev["scale"] * np.exp(prev["acceptance"] - TARGET_ACCEPTANCE), rel=1e-12)


@pytest.mark.parametrize("y, noise, design", [
    ((3.0, 1.5), 0.05, np.eye(2)), ((-2.0, -1.0), 0.02, np.eye(2)), ((1.0, 0.5), 0.5, np.eye(2)),
    ((0.5, -0.5), 1e-4, np.eye(2)), ((1.0, 0.3), (0.02, 0.5), [[1.0, 1.0], [1.0, -1.0]])])
def test_the_proposal_fits_the_posterior(y, noise, design):
    """The proposal follows the weighted samples' covariance and its scale the acceptance,
    so each stage accepts about the target 0.234 of its moves (0.23-0.37 measured), also
    for a posterior far from the prior's centre and 40 or 10,000 times narrower (the
    proposal's regularisation scales with it), and for one 25 times
    narrower along u1 + u2 than across it (an isotropic proposal accepts 5% there); and the
    posterior is the exact one."""
    log_likelihood, _ = conjugate(y, noise, design)
    res = tmcmc(log_likelihood, 2, n=2000, rng=np.random.default_rng(3))
    assert all(0.15 <= s["acceptance"] <= 0.5 for s in res.stages), res.stages
    mean, cov = log_likelihood.exact
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(res.u.mean(0) - mean) < 0.1 * sd), (res.u.mean(0), mean)
    np.testing.assert_allclose(res.u.std(0), sd, rtol=0.1)
    np.testing.assert_allclose(np.corrcoef(res.u.T)[0, 1], cov[0, 1] / sd.prod(), atol=0.05)


def test_moves_into_failed_runs_are_all_rejected():
    """A failed run (log-likelihood -inf) is never accepted: with every proposal failing,
    no sample moves and the acceptance is exactly 0."""
    first = []

    def log_likelihood(U):
        if first:
            return np.full(len(U), -np.inf), None
        first.append(U.copy())
        return -0.5 * ((1.0 - U[:, 0]) / 0.3) ** 2, None

    res = tmcmc(log_likelihood, 1, n=300, rng=np.random.default_rng(2))
    assert [s["acceptance"] for s in res.stages] == [0.0] * len(res.stages)
    assert np.isin(res.u[:, 0], first[0][:, 0]).all()


def test_max_stages_is_a_bound_that_names_itself():
    log_likelihood, _ = conjugate()
    needed = len(tmcmc(log_likelihood, 2, n=400, rng=np.random.default_rng(5)).stages)
    log_likelihood, _ = conjugate()
    res = tmcmc(log_likelihood, 2, n=400, rng=np.random.default_rng(5), max_stages=needed)
    assert len(res.stages) == needed
    log_likelihood, _ = conjugate()
    with pytest.raises(RuntimeError, match=f"did not reach the posterior in {needed - 1} "
                                           r"stages \(exponent 0\.\d+"):
        tmcmc(log_likelihood, 2, n=400, rng=np.random.default_rng(5), max_stages=needed - 1)


def test_every_prior_draw_failing_is_an_error_that_says_so():
    with pytest.raises(RuntimeError, match=r"every sample has zero likelihood \(every model "
                                           r"run failed, or the measurements are impossible "
                                           r"under the model and the noise\)"):
        tmcmc(lambda U: (np.full(len(U), -np.inf), None), 2, n=50,
              rng=np.random.default_rng(0))


def test_the_chains_step_until_they_have_moved_and_the_evidence_holds_in_six_dimensions():
    """A 6-D linear Gaussian model, 8 outputs of noise 0.02 (about 17 stages), against the
    exact log evidence over eight seeds: three fixed steps per stage, the default before,
    were a median 1.4 nats off (the resampled duplicates stayed together); the adaptive
    chains 0.29. One seed is about 5 nats high either way: a prior draw of unusually high
    likelihood dominates the first stage, which the chains cannot mend."""
    from scipy import stats

    d, k, s = 6, 8, 0.02
    rng = np.random.default_rng(d)
    A = rng.standard_normal((k, d))
    y = A @ rng.standard_normal(d) + s * rng.standard_normal(k)
    exact = stats.multivariate_normal(np.zeros(k), A @ A.T + s ** 2 * np.eye(k)).logpdf(y)

    def log_likelihood(U):
        return stats.norm(U @ A.T, s).logpdf(y).sum(axis=1), None

    errors = []
    for seed in range(8):
        res = tmcmc(log_likelihood, d, n=1000, rng=np.random.default_rng(seed))
        errors.append(abs(res.log_evidence - exact))
        assert all(2 <= stage["steps"] <= MAX_STEPS for stage in res.stages)
    assert np.median(errors) < 0.5, errors
