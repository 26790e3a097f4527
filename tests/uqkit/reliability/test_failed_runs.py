"""``failure_probability(..., failed_runs="failure")``: a run that fails counts as a failure
(a solver that stops as the structure collapses). Where runs fail only inside the failure
domain, that is exact: Monte Carlo's estimate must equal, bit for bit, the one of the same
model without failing runs, and so must importance sampling's (its draws; its FORM search
needs every value); subset simulation's, whose seeds are ordered by g (a failed
run's -inf first), takes another path of the same law, so it must agree with the exact Pf
within its own CoV."""
import warnings

import numpy as np
import pytest
from scipy import stats

from uqkit.execution.runner import FailedRunsError
from uqkit.reliability import failure_probability
from uqkit.reliability.problems import standard_normals


def _g(X):
    """A hyperplane at beta = 3.5 in 2-D: Pf = Phi(-3.5) = 2.33e-4."""
    return 3.5 - X.sum(axis=1) / np.sqrt(2.0)


def _failing_below(level):
    """The same g, whose runs fail (NaN) wherever g < ``level``."""
    def g_failing(X):
        g = _g(X)
        return np.where(g < level, np.nan, g)
    return g_failing


#: Runs that fail deep in the failure domain only.
_g_failing = _failing_below(-0.3)


def test_monte_carlo_counting_failed_runs_inside_the_failure_domain_is_exact():
    inputs = standard_normals(2)
    whole = failure_probability(_g, inputs, method="mc", n=200_000, seed=3,
                                executor="serial")
    with pytest.warns(UserWarning, match=r"runs failed and were counted as failures"):
        counted = failure_probability(_g_failing, inputs, method="mc", n=200_000, seed=3,
                                      executor="serial", failed_runs="failure")
    assert counted.pf == whole.pf and counted.model_runs == whole.model_runs
    # of the failures, those with g < -0.3 (12 of 37 with this seed)
    assert 0 < counted.info["failed_runs"] < round(whole.pf * 200_000)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_subset_simulation_counting_failed_runs_agrees_with_the_exact_pf(seed):
    exact = stats.norm.cdf(-3.5)
    with pytest.warns(UserWarning, match=r"runs failed and were counted as failures"):
        r = failure_probability(_g_failing, standard_normals(2), method="subset", n=1000,
                                seed=seed, executor="serial", failed_runs="failure")
    assert r.info["failed_runs"] > 0
    assert abs(np.log(r.pf / exact)) < 2.5 * r.cov, (r.pf, exact, r.cov)


def test_by_default_a_failed_run_stops_the_analysis_naming_it():
    with pytest.raises(FailedRunsError, match="failed on"):
        failure_probability(_g_failing, standard_normals(2), method="mc", n=200_000, seed=3,
                            executor="serial")


def test_importance_sampling_counting_failed_runs_inside_the_failure_domain_is_exact():
    """Its draws around the design point (u* = (2.47, 2.47)) fail where g < -0.3, about a
    third of them; FORM's points (the origin, u* and their finite-difference neighbours) all
    run. A failed draw is a failure of the same weight, so the estimate is the non-failing
    model's, bit for bit."""
    inputs = standard_normals(2)
    whole = failure_probability(_g, inputs, method="is", n=4000, seed=3, executor="serial")
    with pytest.warns(UserWarning, match=r"runs failed and were counted as failures"):
        counted = failure_probability(_g_failing, inputs, method="is", n=4000, seed=3,
                                      executor="serial", failed_runs="failure")
    assert counted.pf == whole.pf and counted.model_runs == whole.model_runs
    assert 0.2 * 4000 < counted.info["failed_runs"] < 0.5 * 4000
    assert abs(counted.pf / stats.norm.cdf(-3.5) - 1) < 3 * counted.cov
    # and to a target CoV, in batches
    whole = failure_probability(_g, inputs, method="is", target_cov=0.02, seed=3,
                                executor="serial")
    with pytest.warns(UserWarning, match=r"counted as failures"):
        target = failure_probability(_g_failing, inputs, method="is", target_cov=0.02,
                                     seed=3, executor="serial", failed_runs="failure")
    assert target.pf == whole.pf and target.model_runs == whole.model_runs
    assert target.cov <= 0.02 and target.info["failed_runs"] > 0


@pytest.mark.parametrize("fd", ["central", "forward"])
@pytest.mark.parametrize("algorithm", ["sqp", "hlrf"])
def test_importance_sampling_where_every_run_with_g_below_0_fails(algorithm, fd):
    """Runs fail as soon as g < 0 (a solver that stops where the structure fails): FORM's
    central differences at the design point straddle g = 0, so one point of each failed,
    and FORM stopped on it (a review). A difference with a failed side is now the other
    side's one-sided difference (a forward one's failed point is run backwards): FORM
    converges, and the estimate is the non-failing model's to FORM's tolerance (its design
    point moves by a one-sided difference)."""
    fails_below_0 = _failing_below(0.0)
    inputs = standard_normals(2)
    whole = failure_probability(_g, inputs, method="is", n=4000, seed=3, executor="serial",
                                algorithm=algorithm, fd=fd)
    with pytest.warns(UserWarning, match=r"counted as failures"):
        r = failure_probability(fails_below_0, inputs, method="is", n=4000, seed=3,
                                executor="serial", failed_runs="failure",
                                algorithm=algorithm, fd=fd)
    assert r.pf == pytest.approx(whole.pf, rel=1e-8)
    assert 0.4 * 4000 < r.info["failed_runs"] < 0.6 * 4000  # about half the draws


def test_importance_samplings_form_search_stops_at_a_failed_run_and_says_why():
    """FORM cannot step on g = -inf: where its points fail (here every point with g < 3,
    the design point's too), it stops naming the failed run and form_result=."""
    from uqkit.reliability.result import ConvergenceError

    failing_early = _failing_below(3.0)
    with pytest.raises(ConvergenceError, match=r"a model run failed there.*form_result="):
        failure_probability(failing_early, standard_normals(2), method="is", n=100, seed=3,
                            executor="serial", failed_runs="failure")


def test_active_learning_which_needs_every_value_of_g_refuses_to_count_failed_runs():
    with pytest.raises(ValueError, match=r"failed_runs='failure' is for the methods .*not "
                                         r"'active'"):
        failure_probability(_g, standard_normals(2), method="active", executor="serial",
                            failed_runs="failure")


@pytest.mark.parametrize("algorithm", ["sqp", "hlrf"])
def test_form_where_every_run_with_g_below_0_fails_finds_the_same_design_point(algorithm):
    """FORM alone, counting failed runs: its design point lies on g = 0, where runs work, so
    its beta is the non-failing model's (to its one-sided differences, as in importance
    sampling's search); where runs fail deep inside only, FORM runs none of them and its
    result is the same bit for bit."""
    inputs = standard_normals(2)
    whole = failure_probability(_g, inputs, method="form", executor="serial",
                                algorithm=algorithm)
    with pytest.warns(UserWarning, match=r"counted as failures"):
        r = failure_probability(_failing_below(0.0), inputs, method="form", executor="serial",
                                failed_runs="failure", algorithm=algorithm)
    assert r.beta == pytest.approx(whole.beta, rel=1e-8) and r.info["failed_runs"] > 0
    assert r.beta == pytest.approx(3.5, rel=1e-6)
    deep = failure_probability(_g_failing, inputs, method="form", executor="serial",
                               failed_runs="failure", algorithm=algorithm)
    assert (deep.beta, deep.model_runs, deep.info["failed_runs"]) == (
        whole.beta, whole.model_runs, 0)


def _paraboloid(kappa, axis=(1.0, 0.0, 0.0), beta=3.0):
    """g = beta - a.u + kappa / 2 |u - (a.u) a|^2 in 3-D, a the unit ``axis``: the design
    point beta a, every principal curvature kappa (> 0: bending away from the origin)."""
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)

    def g(X):
        along = X @ a
        return beta - along + kappa / 2 * ((X - along[:, None] * a) ** 2).sum(axis=1)
    return g


def _fails_below_0(g):
    return lambda X: np.where(g(X) < 0, np.nan, g(X))


@pytest.mark.parametrize("algorithm", ["sqp", "hlrf"])
@pytest.mark.parametrize("axis, beta, kappa", [
    ((0.219, 0.789, 0.573), 3.087, 0.848), ((-0.968, -0.2, -0.153), 3.443, 0.52),
    ((-0.403, 0.902, -0.154), 3.727, 0.885)])
def test_form_converges_on_a_tilted_curved_surface_whose_failure_domain_fails(
        algorithm, axis, beta, kappa):
    """Where one side of a central difference failed, a first-order one-sided difference
    (error h g'' / 2) tilted alpha on a curved surface by more than FORM's tolerance: FORM
    stopped with ConvergenceError on these three (and on 15 of 60 random such surfaces; a
    review). The second-order one-sided difference converges, to the non-failing beta."""
    g, inputs = _paraboloid(kappa, axis, beta), standard_normals(3)
    whole = failure_probability(g, inputs, method="form", executor="serial",
                                algorithm=algorithm)
    with pytest.warns(UserWarning, match=r"counted as failures"):
        r = failure_probability(_fails_below_0(g), inputs, method="form", executor="serial",
                                failed_runs="failure", algorithm=algorithm)
    assert r.beta == pytest.approx(whole.beta, rel=1e-8)
    assert r.beta == pytest.approx(beta, rel=1e-6)


def test_sorm_where_every_run_with_g_below_0_fails_on_a_surface_bending_away():
    """Its curvature points, in the tangent plane, lie on the safe side of a surface bending
    away from the origin: they run, and SORM's Pf is the non-failing model's, from FORM's
    design point and from a given form_result alike (whose check's step into the failure
    domain fails: the slope from the step behind)."""
    g = _paraboloid(0.2)
    inputs = standard_normals(3)
    whole = failure_probability(g, inputs, method="sorm", executor="serial")
    with pytest.warns(UserWarning, match=r"counted as failures"):
        r = failure_probability(_fails_below_0(g), inputs, method="sorm", executor="serial",
                                failed_runs="failure")
    assert r.pf == pytest.approx(whole.pf, rel=1e-6)
    np.testing.assert_allclose(r.info["curvatures"], [0.2, 0.2], rtol=1e-3)
    with pytest.warns(UserWarning, match=r"counted as failures"):
        first = failure_probability(_fails_below_0(g), inputs, method="form",
                                    executor="serial", failed_runs="failure")
        again = failure_probability(_fails_below_0(g), inputs, method="sorm",
                                    executor="serial", failed_runs="failure",
                                    form_result=first)
    assert again.pf == pytest.approx(whole.pf, rel=1e-6)


@pytest.mark.parametrize("seed", range(20))
def test_sorm_on_a_tilted_plane_whose_failure_domain_fails(seed):
    """FORM's alpha is off by rounding, so on a plane the curvature points in the tangent
    plane fell where g < 0 and failed where g at the design point was near 1e-12, and SORM
    refused, blaming a curvature the plane has not (1 of 20 such planes; a review). The
    stencil runs again just inside the safe side: the Pf is FORM's, the curvatures 0."""
    rng = np.random.default_rng(seed)
    g = _paraboloid(0.0, rng.normal(size=3), rng.uniform(2.0, 4.0))
    inputs = standard_normals(3)
    whole = failure_probability(g, inputs, method="sorm", executor="serial")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the counted failures' warning
        r = failure_probability(_fails_below_0(g), inputs, method="sorm", executor="serial",
                                failed_runs="failure")
    assert r.pf == pytest.approx(whole.pf, rel=1e-6)
    assert np.abs(r.info["curvatures"]).max() < 1e-3


def test_a_surface_bending_towards_the_origin_where_runs_fail_below_0():
    """Its tangent plane lies in the failure domain, so where every run with g < 0 fails,
    both points of FORM's tangential differences fail at the design point (its g is 6e-12
    there, the points' -1e-9): FORM stops, saying so. SORM from a FORM result of the model
    that does not fail finds every curvature point failed, and runs them again centred h^2
    inside the safe side, where they work: its Pf is the non-failing model's."""
    from uqkit.reliability.result import ConvergenceError

    g, inputs = _paraboloid(-0.2), standard_normals(3)
    with pytest.raises(ConvergenceError, match=r"both points of a finite difference .* failed"
                                               r".*bends towards the origin.*'subset'"):
        failure_probability(_fails_below_0(g), inputs, method="form", executor="serial",
                            failed_runs="failure")
    first = failure_probability(g, inputs, method="form", executor="serial")
    whole = failure_probability(g, inputs, method="sorm", executor="serial", form_result=first)
    with pytest.warns(UserWarning, match=r"counted as failures"):
        r = failure_probability(_fails_below_0(g), inputs, method="sorm", executor="serial",
                                failed_runs="failure", form_result=first)
    assert r.pf == pytest.approx(whole.pf, rel=1e-6)
    np.testing.assert_allclose(r.info["curvatures"], [-0.2, -0.2], rtol=1e-3)


def test_sorm_refuses_by_name_where_its_curvature_points_fail_inside_too():
    """A model that fails off a ridge near the design point (|u2| > 1e-3 there): FORM's
    differences (1e-4) run, SORM's curvature points (5e-3) fail on either centre."""
    g = _paraboloid(0.2)

    def off_the_ridge_fails(X):
        return np.where((np.abs(X[:, 1]) > 1e-3) & (X[:, 0] > 2.9), np.nan, g(X))

    with pytest.raises(ValueError, match=r"SORM: 6 of the 9 runs .* failed, even centred "
                                         r"inside.*'subset'"):
        failure_probability(off_the_ridge_fails, standard_normals(3), method="sorm",
                            executor="serial", failed_runs="failure")
