"""Monte Carlo and importance sampling to a target CoV or a budget, against the definitions
replayed from the generator's stream (the index of the r-th failure, the pooled weighted
indicators), the exact beta quantiles of the inverse binomial interval, and the exact Pf of
a plane over many seeds (the unbiasedness that a plain m / n under the same stopping rule
lacks).

Fast: a bare limit state in standard normal space (no model runner)."""
import math

import numpy as np
import pytest
from scipy import stats

from uqkit.reliability import failure_probability
from uqkit.reliability.form import form
from uqkit.reliability.problems import standard_normals
from uqkit.reliability.simulation import (IS_MAX_RUNS, MC_MAX_RUNS, failures_for_cov,
                                          importance_sampling, monte_carlo)


class Bare:
    """g of u without a model runner, recording each batch's tag and rows."""

    def __init__(self, g, dim):
        self.g, self.inputs, self.runs, self.calls, self.rows = g, standard_normals(dim), 0, [], []

    def __call__(self, U, tag=None):
        self.runs += len(U)
        self.calls.append((tag, len(U)))
        self.rows.append(U)
        return self.g(U)


TRAMPOLINED = hasattr(monte_carlo, "__wrapped__")  # mutmut: one frame more (see test_simulation)


def plane(beta):
    return lambda U: beta - U.sum(1) / math.sqrt(U.shape[1])


@pytest.mark.parametrize("target", [0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.577, 0.9])
def test_failures_for_cov_is_the_least_r_whose_cov_bound_meets_the_target(target):
    r = failures_for_cov(target)
    assert 1 / math.sqrt(r - 2) <= target
    assert r == 3 or 1 / math.sqrt(r - 3) > target


def test_failures_for_cov_at_round_targets_and_large_ones():
    assert [failures_for_cov(t) for t in (0.1, 0.3, 1.0, 5.0)] == [102, 14, 3, 3]


def test_monte_carlo_to_a_target_stops_at_the_rth_failure_of_the_stream():
    """The batches continue one stream; pf = (r - 1) / (N - 1) with N the index of the r-th
    failure in it; the interval's ends are the beta quantiles B(r, N - r + 1) and B(r, N - r);
    rows after N are counted as unused."""
    g = plane(2.0)
    ls = Bare(g, 3)
    res = monte_carlo(ls, np.random.default_rng(11), n=200, target_cov=0.3, level=0.9)
    U = np.concatenate(ls.rows)
    np.testing.assert_array_equal(U, np.random.default_rng(11).standard_normal(U.shape))
    r = failures_for_cov(0.3)
    N = int(np.flatnonzero(g(U) <= 0)[r - 1]) + 1
    assert res["pf"] == (r - 1) / (N - 1)
    assert res["ci"] == (pytest.approx(stats.beta.ppf(0.05, r, N - r + 1), rel=1e-12),
                         pytest.approx(stats.beta.ppf(0.95, r, N - r), rel=1e-12))
    assert res["cov"] == pytest.approx(math.sqrt((1 - res["pf"]) / (r - 2)), rel=1e-12)
    assert res["cov"] <= 0.3
    info = res["info"]
    assert (info["n"], info["failures"], info["unused_runs"]) == (N, r, len(U) - N)
    assert info["target_met"] and info["ci_kind"] == "exact (inverse binomial)"
    assert [t for t, _ in ls.calls] == [f"mc-target-{b:04d}" for b in range(len(ls.calls))]
    assert ls.calls[0][1] == 200 and len(ls.calls) == info["batches"] >= 2
    # each next batch: 60 % of the rows the missing failures need at the rate seen so far,
    # at least min(n, need)
    seen = np.cumsum([0] + [n for _, n in ls.calls])
    fails = np.cumsum([0] + [int(np.sum(g(u) <= 0)) for u in ls.rows])
    for b in range(1, len(ls.calls)):
        need = (r - fails[b]) * seen[b] / max(fails[b], 1)
        assert ls.calls[b][1] == max(math.ceil(0.6 * need), min(200, math.ceil(need)))


def test_monte_carlo_to_a_target_is_unbiased_and_its_cov_and_interval_hold_over_seeds():
    """Over 3000 seeds at Pf = Phi(-1.5): the mean estimate is within 3 standard errors of the
    exact Pf, while r / N (a plain m / n at the same stop) is biased upwards beyond 8 of them;
    the CoV over seeds meets the target; the 90 % interval covers Pf in 88-92 % of seeds."""
    exact = stats.norm.cdf(-1.5)
    pf, naive, cover = [], [], []
    for seed in range(3000):
        res = monte_carlo(Bare(plane(1.5), 1), np.random.default_rng(seed), n=100,
                          target_cov=0.3, level=0.9)
        pf.append(res["pf"])
        naive.append(res["info"]["failures"] / res["info"]["n"])
        cover.append(res["ci"][0] <= exact <= res["ci"][1])
    pf, naive = np.array(pf), np.array(naive)
    se = pf.std(ddof=1) / math.sqrt(len(pf))
    assert abs(pf.mean() - exact) < 3 * se
    assert naive.mean() - exact > 8 * se
    assert 0.25 < pf.std(ddof=1) / exact <= 0.3
    assert 0.88 <= np.mean(cover) <= 0.92


def test_monte_carlo_budget_spent_without_the_target_warns_and_is_a_fixed_sample():
    """max_runs is never exceeded; where it runs out first, the estimate is m / n with
    Clopper-Pearson's interval and a warning names the CoV, the target and the runs."""
    ls = Bare(plane(2.5), 2)
    with pytest.warns(UserWarning, match=r"Monte Carlo reached CoV 0\.[0-9]+, above "
                                         r"target_cov=0\.05, with 3000 of max_runs=3000 model "
                                         "runs; raise max_runs or target_cov") as rec:
        r = failure_probability(ls.g, standard_normals(2), method="mc", target_cov=0.05,
                                max_runs=3000, seed=3, executor="serial")
    assert TRAMPOLINED or rec[0].filename == __file__
    U = np.random.default_rng(3).standard_normal((3000, 2))
    m = int(np.sum(ls.g(U) <= 0))
    assert r.model_runs == 3000 and r.pf == m / 3000 and not r.info["target_met"]
    assert r.cov == pytest.approx(math.sqrt((1 - r.pf) / m), rel=1e-12) and r.cov > 0.05
    lo, hi = stats.beta.ppf(0.025, m, 3001 - m), stats.beta.ppf(0.975, m + 1, 3000 - m)
    assert r.ci == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))


def test_monte_carlo_budget_alone_is_spent_and_defaults():
    ls = Bare(plane(2.0), 2)
    r = monte_carlo(ls, np.random.default_rng(0), max_runs=2500, batch=1000)
    assert [n for _, n in ls.calls] == [1000, 1000, 500]  # the first batch: 1000 rows
    assert r["info"]["n"] == 2500 and r["info"]["target_met"] and r["info"]["target_cov"] is None
    r = monte_carlo(Bare(plane(-9.0), 1), np.random.default_rng(0), target_cov=0.5)
    assert r["info"]["max_runs"] == MC_MAX_RUNS and r["info"]["n"] == failures_for_cov(0.5)
    assert r["pf"] == 1.0 and r["ci"][1] == 1.0


def test_monte_carlo_to_a_target_with_a_boundary_and_no_failure():
    """g == 0 fails; with no failure in the budget pf is 0 and both warnings come."""
    r = monte_carlo(Bare(lambda U: 0 * U[:, 0], 2), np.random.default_rng(0), target_cov=0.3)
    assert r["pf"] == 1.0 and r["info"]["n"] == 14
    with pytest.warns(UserWarning) as rec:
        r = monte_carlo(Bare(plane(9.0), 2), np.random.default_rng(0), target_cov=0.3,
                        max_runs=5000)
    assert r["pf"] == 0 and r["cov"] == math.inf and len(rec) == 2
    assert "no failure in n=5000" in str(rec[0].message)


def test_monte_carlo_target_and_budget_refuse_bad_values():
    ls, rng = Bare(plane(2.0), 2), np.random.default_rng(0)
    for kwargs, match in (({"target_cov": 0.0}, r"target_cov must be a finite number in "
                                                r"\(0\.0, inf\), got target_cov=0\.0"),
                          ({"target_cov": float("inf")}, "target_cov=inf"),
                          ({"target_cov": 1e-7}, r"target_cov=1e-07 would need over 1e12 "
                                                 r"runs; ask for 1e-6 or more"),
                          ({"max_runs": 0}, "max_runs must be an integer >= 1, got max_runs=0"),
                          ({"target_cov": 0.3, "n": 0}, "n must be an integer >= 1, got n=0")):
        with pytest.raises(ValueError, match=match):
            monte_carlo(ls, rng, **kwargs)


def test_importance_sampling_to_a_target_pools_its_batches():
    """The batches continue one stream around u*; pf and its CoV are those of all the
    weighted indicators pooled; each next batch is 1.1 n ((cov / target)^2 - 1) draws; the
    budget counts FORM's runs."""
    d, beta, target = 4, 3.0, 0.03
    g = plane(beta)
    ls = Bare(g, d)
    r = importance_sampling(ls, np.random.default_rng(5), n=300, target_cov=target)
    is_rows = [u for (t, _), u in zip(ls.calls, ls.rows) if t.startswith("is-target")]
    form_runs = ls.runs - sum(map(len, is_rows))
    assert form_runs > 0 and ls.calls[-len(is_rows) - 1][0].startswith("form")
    U = np.concatenate(is_rows)
    ustar = r["design_point"]["u"]
    np.testing.assert_allclose(U - ustar, np.random.default_rng(5).standard_normal(U.shape),
                               atol=1e-12)
    v = np.where(g(U) <= 0, np.exp(-U @ ustar + ustar @ ustar / 2), 0.0)
    assert r["pf"] == pytest.approx(v.mean(), rel=1e-12)
    assert r["cov"] == pytest.approx(v.std(ddof=1) / math.sqrt(len(v)) / v.mean(), rel=1e-10)
    assert r["cov"] <= target and r["info"]["target_met"] and r["info"]["n"] == len(U)
    assert len(is_rows) == r["info"]["batches"] >= 2 and len(is_rows[0]) == 300
    assert ls.runs <= IS_MAX_RUNS and r["extra_runs"] == 0
    # the second batch from the first's CoV
    v0 = v[:300]
    cov0 = v0.std(ddof=1) / math.sqrt(300) / v0.mean()
    assert len(is_rows[1]) == math.ceil(1.1 * 300 * ((cov0 / target) ** 2 - 1))
    assert r["pf"] == pytest.approx(stats.norm.cdf(-beta), rel=4 * target)


def test_importance_sampling_budget_counts_form_and_warns():
    d = 3
    with pytest.warns(UserWarning, match=r"importance sampling reached CoV 0\.[0-9]+, above "
                                         r"target_cov=0\.001, with 1000 of max_runs=1000 model "
                                         "runs") as rec:
        r = failure_probability(plane(3.0), standard_normals(d), method="is", n=100,
                                target_cov=0.001, max_runs=1000, seed=0, executor="serial")
    assert TRAMPOLINED or rec[0].filename == __file__
    assert r.model_runs == 1000 and not r.info["target_met"]
    with pytest.raises(ValueError, match=r"max_runs=20 does not cover FORM's 14 runs and the "
                                         r"first n=10 importance samples"):
        importance_sampling(Bare(plane(3.0), d), np.random.default_rng(0), n=10, max_runs=20)
    fr = form(Bare(plane(3.0), d))
    ls = Bare(plane(3.0), d)
    r = importance_sampling(ls, np.random.default_rng(0), n=100, max_runs=600,
                            form_result=_Form(fr, 100))
    assert ls.runs == 500 and r["extra_runs"] == 100 and r["info"]["target_met"]


class _Form:
    def __init__(self, fields, runs):
        self.__dict__.update(fields)
        self.model_runs = runs


@pytest.mark.parametrize("method, options", [("mc", {"target_cov": 0.3, "n": 500}),
                                             ("is", {"target_cov": 0.05, "n": 200}),
                                             ("form", {})])
def test_a_rerun_with_its_store_recomputes_nothing(method, options, tmp_path):
    """Each batch has a tag of its own and the batch sizes follow from the seed, so a rerun
    (a killed analysis resumed) loads every run from the store and gives the same result."""
    kw = dict(method=method, seed=4, executor="serial", store=tmp_path, **options)
    first = failure_probability(plane(2.5), standard_normals(3), **kw)
    assert first.info["computed_runs"] == first.model_runs > 0
    again = failure_probability(plane(2.5), standard_normals(3), **kw)
    assert again.info["computed_runs"] == 0 and again.model_runs == first.model_runs
    assert again.pf == first.pf and again.beta == first.beta
