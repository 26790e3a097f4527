"""Active learning's bookkeeping (:mod:`uqkit.reliability.active`): no candidate run twice, a
surrogate's unusable prediction refused, a bad population refused before any true run, a
population of few distinct points, and warnings at the caller's line (an independent audit
found each of them wrong)."""
import math
import warnings

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor

from uqkit.reliability import failure_probability
from uqkit.reliability.active import plot_history, select_batch
from uqkit.reliability.problems import four_branch, hyperplane, standard_normals

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


class _Rows:
    """A limit state that records every row it is run on."""

    def __init__(self, g):
        self.g, self.rows = g, []

    def __call__(self, X):
        self.rows.extend(map(tuple, X))
        return self.g(X)


def test_no_candidate_is_run_twice():
    """The project's GP fits a noise term, so a run point on the limit state kept a small U:
    14 of 92 runs were repeats at seed 2 (the same Pf, runs wasted)."""
    g = _Rows(four_branch)
    r = failure_probability(g, standard_normals(2, "x"), method="active", surrogate="gp",
                            n_candidates=20_000, executor="serial", seed=2)
    assert r.model_runs == len(g.rows) == len(set(g.rows))
    assert r.info["converged"]


def _hyperplane(X):
    return 3.0 - (X[:, 0] + X[:, 1]) / math.sqrt(2)


class _Failing:
    """A GP whose mean (or std) is NaN where u_1 > 2.2."""

    def __init__(self, part):
        self.part = part

    def fit(self, X, y):
        self.gp = GaussianProcessRegressor(normalize_y=True).fit(X, y)
        return self

    def predict(self, X, return_std=False):
        mu, sd = self.gp.predict(X, return_std=True)
        nan = X[:, 0] > 2.2
        mu, sd = (np.where(nan, np.nan, mu), sd) if self.part == "mean" else \
            (mu, np.where(nan, np.nan, sd))
        return (mu, sd) if return_std else mu


@pytest.mark.parametrize("part", ["mean", "std"])
def test_a_surrogate_predicting_nan_is_refused(part):
    """A NaN mean counted as safe (here Pf 7.5e-4 for the true g's 1.9e-3 on the same
    candidates) and a NaN std fell out of both bounds (Pf outside its own interval), each
    with converged=True."""
    with pytest.raises(ValueError, match=rf"the surrogate predicted \d+ unusable {part}s at "
                                         r"\d+ points, the first nan at u = "):
        failure_probability(_hyperplane, standard_normals(2, "x"), method="active",
                            surrogate=_Failing(part), n_candidates=20_000, executor="serial",
                            seed=1, max_runs=40)


@pytest.mark.parametrize("candidates", [np.zeros((50, 2)), np.zeros((200, 3)),
                                        np.full((200, 2), np.nan)])
def test_a_bad_population_is_refused_before_any_true_run(candidates):
    g = _Rows(_hyperplane)
    with pytest.raises(ValueError, match=r"candidates must be a finite \(n >= 100, 2\) array"):
        failure_probability(g, standard_normals(2, "x"), method="active", surrogate="gp",
                            candidates=candidates, executor="serial")
    assert g.rows == []  # the initial design's 12 runs were made before


def test_a_batch_from_fewer_distinct_points_than_clusters_is_filled_by_the_next_best():
    """Two distinct points among the best 100 for a batch of 4: an IndexError before. The
    batch is filled by the next best distinct point, and holds no point twice."""
    points = np.repeat(np.array([[0.0, 0.0], [3.0, 3.0], [5.0, -5.0]]), [60, 60, 80], axis=0)
    score = np.concatenate([np.linspace(0, 1, 120), np.full(80, 9.0)])
    pick = select_batch(points, score, 4, pool=100, seed=0)
    assert sorted(map(tuple, points[pick])) == [(0.0, 0.0), (3.0, 3.0), (5.0, -5.0)]


def test_the_max_runs_warning_names_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        failure_probability(_hyperplane, standard_normals(2, "x"), method="active",
                            surrogate="gp", n_candidates=20_000, executor="serial", seed=1,
                            max_runs=13)
    stopped = [w for w in caught if "stopped at max_runs=13" in str(w.message)]
    assert len(stopped) == 1
    from uqkit.reliability import active

    if not hasattr(active.active_learning, "__wrapped__"):  # mutmut adds a frame
        assert stopped[0].filename == __file__


def test_a_run_candidate_is_not_picked_even_inside_the_pool():
    """Run candidates (an infinite score) inside the k-means pool gave up a cluster's "best"
    member: one was picked in 60 of 200 seeds (a review)."""
    rng = np.random.default_rng(0)
    points = rng.normal(size=(100, 2))
    score = rng.uniform(size=100)
    score[np.argsort(points[:, 0])[:40]] = np.inf  # a cluster of run candidates
    for seed in range(40):
        pick = select_batch(points, score, 4, pool=200, seed=seed)
        assert np.isfinite(score[pick]).all() and len(set(pick.tolist())) == 4
    with pytest.raises(ValueError, match="5 candidates asked for, 2 can be picked"):
        select_batch(points, np.where(np.arange(100) < 2, 0.0, np.inf), 5, 50, 0)


def test_a_small_population_stops_with_a_warning_when_every_candidate_has_run():
    g = _Rows(four_branch)
    with pytest.warns(UserWarning, match=r"active learning stopped: every one of its 100 "
                                         r"candidates has run before its stopping rule held"):
        r = failure_probability(g, standard_normals(2, "x"), method="active", surrogate="gp",
                                n_candidates=100, batch=8, max_runs=200, executor="serial",
                                seed=1, u_min=9.9)  # a rule that does not hold on 100 points
    # the 12 of the initial design and the 100 candidates, each once (the last batch of 4)
    assert len(g.rows) == len(set(g.rows)) == r.model_runs == 112


@pytest.mark.parametrize("method, options", [("subset", {"n": 500}), ("mc", {"n": 1000})])
def test_plot_history_refuses_another_methods_result_by_name(method, options):
    """A subset simulation's levels have no Pf bounds (it raised KeyError 'pf_lower'), and
    Monte Carlo's history is empty (it drew empty axes): both are refused, naming the
    method."""
    r = failure_probability(lambda X: hyperplane(X, 2.0), standard_normals(2), method=method,
                            executor="serial", **options)
    with pytest.raises(ValueError, match=rf"active-learning result's history \(method "
                                         rf"'active'\); this result's method is '{method}'"):
        plot_history(r)
