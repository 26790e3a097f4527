"""Subset simulation against its definitions and exact answers: Au & Beck's chain correlation
written out lag by lag; the Markov chains' invariance of the standard normal law (every
candidate accepted: the marginals stay N(0, 1), aCS's lag-one correlation is
sqrt(1 - sigma^2)); aCS's scaling update in closed form; the level thresholds from the sorted
g of the generator's own draws; the CoV and interval formulas of the module notes; the exact
Pf = Phi(-beta) of a hyperplane.

Fast: a bare limit state in standard normal space (no model runner), small samples."""
import math

import numpy as np
import pytest
from scipy import special, stats

from uqkit.reliability.problems import standard_normals
from uqkit.reliability.subset import (_advance_acs, _advance_mma, chain_correlation,
                                      subset_simulation)


class Bare:
    """g of u without a model runner, recording each batch's tag and size (``calls``) and its
    g values (``outputs``)."""

    def __init__(self, g, dim):
        self.g, self.inputs, self.runs, self.calls = g, standard_normals(dim), 0, []
        self.outputs = []

    def __call__(self, U, tag=None):
        self.runs += len(U)
        self.calls.append((tag, len(U)))
        self.outputs.append(self.g(U))
        return self.outputs[-1]


SEED_10_FAILURES = 7  # np.random.default_rng(7): exactly 10 of 100 normals above 1


def plane(beta):
    return lambda U: beta - U.sum(1) / math.sqrt(U.shape[1])


# -- chain correlation -------------------------------------------------------------------------

def gamma_by_loops(I, p):
    """Au & Beck (2001) eq. 29, one chain, one lag and one pair at a time."""
    Nc, Ns = I.shape
    N = Nc * Ns
    gamma = 0.0
    for k in range(1, Ns):
        total = sum(I[c, l] * I[c, l + k] for c in range(Nc) for l in range(Ns - k))
        R = total / (N - k * Nc) - p * p
        gamma += 2 * (1 - k / Ns) * R / (p * (1 - p))
    return gamma


def test_chain_correlation_against_the_formula_lag_by_lag():
    rng = np.random.default_rng(5)
    I = rng.random((3, 5)) < 0.4
    I[0] = [True, True, True, False, False]  # some runs along a chain
    p = I.mean()
    assert chain_correlation(I, p) == pytest.approx(gamma_by_loops(I.astype(float), p),
                                                    rel=1e-12)
    assert chain_correlation(I.tolist(), 0.3) == pytest.approx(
        gamma_by_loops(I.astype(float), 0.3), rel=1e-12)  # p is the caller's, not I's mean
    assert isinstance(chain_correlation(I, p), float)


def test_chain_correlation_zero_without_variance_or_lags():
    assert chain_correlation(np.ones((4, 3)), 1.0) == 0.0  # R0 = p (1 - p) = 0
    assert chain_correlation(np.zeros((4, 3)), 0.0) == 0.0
    assert chain_correlation(np.array([[1.0], [0.0]]), 0.5) == 0.0  # Ns = 1: no lag


# -- the two samplers --------------------------------------------------------------------------

def test_mma_keeps_the_standard_normal_and_its_chains_in_the_level():
    """With every candidate accepted (b = inf) the modified Metropolis chains leave N(0, 1)
    invariant: after 9 steps the 4000 chains' states are still standard normal (KS test).
    With a finite b every state has g <= b, its g is g of its state, and rows whose
    candidate kept no component are not run."""
    rng = np.random.default_rng(11)
    d, Nc, Ns = 2, 4000, 10
    seeds = rng.standard_normal((Nc, d))
    ls = Bare(lambda U: U.sum(1), d)
    U, G, acc, extra = _advance_mma(ls, rng, seeds, ls.g(seeds), np.inf, Ns, 1.0, "lv")
    assert U.shape == (Nc, Ns, d) and G.shape == (Nc, Ns) and extra == {}
    np.testing.assert_array_equal(U[:, 0], seeds)
    assert acc == 1.0
    for k in range(d):
        assert stats.kstest(U[:, -1, k], "norm").pvalue > 0.01
    assert [t for t, _ in ls.calls] == [f"lv-step-{s:03d}" for s in range(1, Ns)]
    assert all(n < Nc for _, n in ls.calls)  # some rows kept no component: not rerun
    np.testing.assert_allclose(G, U.sum(2), atol=1e-12)
    # a finite level: the chains stay inside it
    b = -1.0
    inside = seeds[seeds.sum(1) <= b][:200]
    ls2 = Bare(lambda U: U.sum(1), d)
    U, G, acc, _ = _advance_mma(ls2, rng, inside, inside.sum(1), b, Ns, 0.5, "lv")
    assert (G <= b).all() and 0 < acc < 1
    np.testing.assert_allclose(G, U.sum(2), atol=1e-12)
    proposed = sum(n for _, n in ls2.calls)
    accepted = sum(int((g <= b).sum()) for g in ls2.outputs)
    assert acc == accepted / proposed  # a rate of the candidates run, not of all rows
    assert (np.diff(U, axis=1) != 0).any()


def test_mma_acceptance_counts_only_the_proposals_run():
    """The rate is accepted / run candidates: with g <= b nowhere but the seeds' own points,
    nothing moves (rate 0) and every row keeps its seed."""
    rng = np.random.default_rng(0)
    seeds = np.array([[0.0, 0.0], [1.0, -1.0]])
    ls = Bare(lambda U: np.abs(U).sum(1), 2)
    U, G, acc, _ = _advance_mma(ls, rng, seeds, ls.g(seeds), 0.0, 4, 1.0, "t")
    np.testing.assert_array_equal(U[0], np.zeros((4, 2)))
    assert acc == 0.0 and (G[0] == 0).all()


def test_acs_keeps_the_standard_normal_with_lag_one_correlation():
    """aCS with every candidate accepted: v = sqrt(1 - sigma^2) u + sigma z, sigma_k =
    min(lambda sd_k, 1) with sd_k the seeds' sample standard deviation: each step keeps
    N(0, 1) and correlates consecutive states by sqrt(1 - sigma_k^2)."""
    rng = np.random.default_rng(2)
    Nc, Ns, lam = 20000, 2, 0.5
    seeds = rng.standard_normal((Nc, 2)) * [1.0, 1.6]  # sd (1, 1.6): sigma (0.5, 0.8)
    ls = Bare(lambda U: U.sum(1), 2)
    U, G, acc, extra = _advance_acs(ls, rng, seeds, ls.g(seeds), np.inf, Ns, lam, 0.44, "a")
    sd = seeds.std(axis=0, ddof=1)
    sigma = np.minimum(lam * sd, 1.0)
    step = U[:, 1] - np.sqrt(1 - sigma ** 2) * U[:, 0]
    # the innovation is sigma z: its sample sd is sigma to 1 %
    np.testing.assert_allclose(step.std(axis=0), sigma, rtol=0.02)
    assert acc == 1.0 and extra["scale"] == lam and ls.calls == [("a-step-001", Nc)]
    np.testing.assert_allclose(G, U.sum(2), atol=1e-12)


def test_acs_scaling_update_in_closed_form():
    """ln lambda += (a_hat - a*) / sqrt(i) after step i, capped where lambda sd >= 1 in every
    direction. All accepted (b = inf): a_hat = 1; none (b = -inf): a_hat = 0 and the states
    stay at the seeds."""
    rng = np.random.default_rng(1)
    Nc, Ns, lam, target = 50, 6, 0.5, 0.44
    seeds = 0.5 * rng.standard_normal((Nc, 3))  # sd ~ 0.5: cap lambda <= 1 / min(sd) ~ 2
    sd = seeds.std(axis=0, ddof=1)
    steps = np.arange(1, Ns)
    ls = Bare(lambda U: U.sum(1), 3)
    _, _, acc, extra = _advance_acs(ls, rng, seeds, ls.g(seeds), np.inf, Ns, lam, target, "a")
    up = lam * math.exp(np.sum((1 - target) / np.sqrt(steps)))
    assert up > 1 / sd.min()  # the cap binds
    assert extra == {"scale": lam, "scale_end": pytest.approx(1 / sd.min(), rel=1e-12)}
    _, _, acc, extra = _advance_acs(ls, rng, seeds, ls.g(seeds), np.inf, 3, lam, target, "a")
    assert extra["scale_end"] == pytest.approx(
        lam * math.exp((1 - target) * (1 + 1 / math.sqrt(2))), rel=1e-12)
    U, G, acc, extra = _advance_acs(ls, rng, seeds, ls.g(seeds), -np.inf, Ns, lam, target, "a")
    assert acc == 0.0
    assert extra["scale_end"] == pytest.approx(lam * math.exp(-target * np.sum(
        1 / np.sqrt(steps))), rel=1e-12)
    np.testing.assert_array_equal(U, np.repeat(seeds[:, None], Ns, axis=1))
    np.testing.assert_array_equal(G, np.repeat(ls.g(seeds)[:, None], Ns, axis=1))


def test_acs_with_one_chain_uses_unit_spread():
    """One seed has no sample standard deviation: sd = 1, so sigma = min(lambda, 1)."""
    rng = np.random.default_rng(7)
    ls = Bare(lambda U: U.sum(1), 2)
    seed = np.array([[0.3, -0.4]])
    U, _, _, extra = _advance_acs(ls, np.random.default_rng(7), seed, ls.g(seed), np.inf, 2,
                                  0.6, 0.44, "a")
    z = rng.standard_normal((1, 2))
    np.testing.assert_allclose(U[0, 1], 0.8 * seed[0] + 0.6 * z[0], rtol=1e-12)
    assert extra["scale_end"] == pytest.approx(1.0)  # capped at 1 / min(sd) = 1


# -- subset simulation ----------------------------------------------------------------------------

def test_one_level_is_crude_monte_carlo_of_the_same_draws():
    """Pf = Phi(-0.5) > p0: the first level is the last; pf is the failure fraction of the
    generator's first n rows, with Au & Beck's binomial CoV."""
    n, d = 200, 2
    g = plane(0.5)
    ls = Bare(g, d)
    r = subset_simulation(ls, np.random.default_rng(8), n=n)
    U = np.random.default_rng(8).standard_normal((n, d))
    p = float(np.mean(g(U) <= 0))
    assert r["pf"] == p and len(r["history"]) == 1 and ls.calls == [("level-00", n)]
    h = r["history"][0]
    assert h == {"level": 0, "threshold": 0.0, "p": p, "gamma": 0.0,
                 "cov": pytest.approx(math.sqrt((1 - p) / (n * p))), "model_runs": n}
    assert r["info"]["cov_au_beck"] == pytest.approx(math.sqrt((1 - p) / (n * p)), rel=1e-12)
    assert r["info"]["lineages"] == n and r["info"]["levels"] == 1


def test_thresholds_are_midway_between_order_statistics():
    """b_1 is midway between the N p0-th and the next smallest g of level 0; exactly N p0
    samples lie below it (later levels repeat rejected states: ties can put more below)."""
    n, d, p0 = 100, 3, 0.2
    g = plane(2.5)
    r = subset_simulation(Bare(g, d), np.random.default_rng(4), n=n, p0=p0)
    Gs = np.sort(g(np.random.default_rng(4).standard_normal((n, d))))
    assert r["history"][0]["threshold"] == pytest.approx(0.5 * (Gs[19] + Gs[20]), rel=1e-14)
    levels = r["history"]
    assert levels[0]["p"] == p0 and all(h["p"] >= p0 for h in levels[:-1])
    assert levels[-1]["threshold"] == 0.0 and len(levels) >= 3
    assert all(a["threshold"] > b["threshold"] for a, b in zip(levels, levels[1:]))
    assert [h["level"] for h in levels] == list(range(len(levels)))
    assert r["pf"] == pytest.approx(np.prod([h["p"] for h in levels]), rel=1e-14)


@pytest.mark.parametrize("sampler", ["acs", "mma"])
def test_cov_and_interval_follow_the_module_notes(sampler):
    """Per level delta_j^2 = (1 - p_j) / (N p_j) (1 + gamma_j); cov_au_beck = sqrt(sum),
    cov_upper = sum delta_j; cov = max(cov_au_beck, cov_lineage); the interval is
    pf exp(+- z sigma) with sigma^2 = ln(1 + cov^2) and z the normal quantile of the level."""
    n, level = 400, 0.9
    ls = Bare(plane(3.0), 4)
    r = subset_simulation(ls, np.random.default_rng(6), n=n, sampler=sampler, level=level)
    hist, info = r["history"], r["info"]
    assert len(hist) >= 3 and all(h["gamma"] != 0 for h in hist[1:])
    d2 = [(1 - h["p"]) / (n * h["p"]) * (1 + h["gamma"]) for h in hist]
    for h, v in zip(hist, d2):
        assert h["cov"] == pytest.approx(math.sqrt(v), rel=1e-12)
    assert info["cov_au_beck"] == pytest.approx(math.sqrt(sum(d2)), rel=1e-12)
    assert info["cov_upper"] == pytest.approx(sum(math.sqrt(v) for v in d2), rel=1e-12)
    assert r["cov"] == max(info["cov_au_beck"], info["cov_lineage"])
    s = math.sqrt(math.log(1 + r["cov"] ** 2))
    z = stats.norm.ppf(0.95)
    assert r["ci"] == (pytest.approx(r["pf"] * math.exp(-z * s), rel=1e-12),
                       pytest.approx(r["pf"] * math.exp(z * s), rel=1e-12))
    assert r["beta"] == pytest.approx(-stats.norm.ppf(r["pf"]), rel=1e-12)
    assert r["level"] == level and info["levels"] == len(hist) and info["n"] == n
    assert info["sampler"] == sampler and info["ci_kind"] == "lognormal"
    assert 1 < info["lineages"] <= 40  # the last population descends from few level-0 rows
    assert [h["model_runs"] for h in hist][0] == n
    assert all(0 < h["acceptance"] < 1 for h in hist[:-1]) and "acceptance" not in hist[-1]
    if sampler == "acs":
        assert info["acceptance_target"] == 0.44 and "spread" not in info
        assert hist[0]["scale"] == 0.6  # aCS's initial lambda, Papaioannou et al.
        for a, b in zip(hist[:-2], hist[1:-1]):  # each level starts from the last lambda
            assert b["scale"] == a["scale_end"]
        assert ls.runs == n + (len(hist) - 1) * (n - 40)  # N + (m - 1) N (1 - p0)
        tags = [t for t, _ in ls.calls]
        assert tags[:3] == ["level-00", "level-01-step-001", "level-01-step-002"]
    else:
        assert info["spread"] == 1.0 and "acceptance_target" not in info
        assert ls.runs < n + (len(hist) - 1) * (n - 40)


@pytest.mark.parametrize("n, p0, beta, seed", [(100, 0.1, 1.8, 3), (10, 0.2, 1.0, 0),
                                              (10, 0.1, 1.0, 1)])
def test_two_levels_rebuilt_from_the_model_runs(n, p0, beta, seed):
    """aCS runs all Nc chains in lockstep, one batch per step: from the recorded g values the
    level-1 chains are rebuilt (a candidate replaces the state when its g <= b_1), and with
    them the last level's p, its chain correlation gamma (eq. 29, by loops) and the lineage
    estimate: T_a the sum over levels of (1[next event] - p_j) / (N p_j) over ancestor a's
    descendants, Var = K / (K - 1) sum_a T_a^2 (K = 1: Var = sum_a T_a^2),
    cov_lineage = sqrt(exp(Var) - 1). Here K = Nc = 10, 2 and 1."""
    d = 2
    Nc = round(n * p0)
    Ns = n // Nc
    g = plane(beta)
    ls = Bare(g, d)
    r = subset_simulation(ls, np.random.default_rng(seed), n=n, p0=p0)
    hist = r["history"]
    assert len(hist) == 2 and len(ls.outputs) == Ns
    G0 = ls.outputs[0]
    order = np.argsort(G0, kind="stable")
    seeds = order[:Nc]
    b1, p1 = hist[0]["threshold"], hist[0]["p"]
    assert b1 == 0.5 * (G0[order[Nc - 1]] + G0[order[Nc]]) and p1 == p0
    G = np.empty((Nc, Ns))
    G[:, 0] = G0[seeds]
    for s in range(1, Ns):
        assert ls.calls[s] == (f"level-01-step-{s:03d}", Nc)
        G[:, s] = np.where(ls.outputs[s] <= b1, ls.outputs[s], G[:, s - 1])
    inside = G <= 0
    p2 = inside.mean()
    assert hist[1]["p"] == p2 and r["pf"] == pytest.approx(p1 * p2, rel=1e-14)
    assert hist[1]["gamma"] == pytest.approx(gamma_by_loops(inside.astype(float), p2),
                                             rel=1e-9, abs=1e-12)
    assert hist[0]["acceptance"] == pytest.approx(
        sum(int((o <= b1).sum()) for o in ls.outputs[1:]) / (Nc * (Ns - 1)), rel=1e-14)
    T = ((G0 <= b1) - p1) / (n * p1)
    for c in range(Nc):
        T[seeds[c]] += ((inside[c] - p2) / (n * p2)).sum()
    K = r["info"]["lineages"]
    assert K == Nc
    factor = K / (K - 1) if K > 1 else 1.0
    assert r["info"]["cov_lineage"] == pytest.approx(math.sqrt(math.expm1(factor * (T @ T))),
                                                     rel=1e-10)


def test_a_single_chain_level_has_a_zero_au_beck_term():
    """One chain (n = 10, p0 = 0.1): its correlation estimate, centred on the chain's own
    mean, is gamma = -1 up to rounding (the chain mean has no spread about itself), so the
    level's (1 - p) / (N p) (1 + gamma) is 0, not a negative number whose square root fails
    (it raised 'math domain error' before)."""
    for seed in (10, 20):
        r = subset_simulation(Bare(plane(1.0), 2), np.random.default_rng(seed), n=10, p0=0.1)
        last = r["history"][-1]
        assert len(r["history"]) >= 2 and last["gamma"] == pytest.approx(-1.0, abs=1e-12)
        assert last["cov"] == 0.0
        assert r["info"]["cov_au_beck"] == pytest.approx(r["history"][0]["cov"], rel=1e-12)


def test_mma_step_replayed_from_the_generator():
    """One modified Metropolis step, replayed with the same generator: candidates
    u + s z (z standard normal), each component kept when a uniform is below
    phi(candidate) / phi(u), the row run only if a component was kept and accepted when
    g <= b. g takes the values 0 and 1 and b = 0: every accepted row sits on g = b."""
    Nc, d, spread = 40, 1, 0.7
    seeds = np.random.default_rng(1).standard_normal((Nc, d))
    seeds[:, 0] = -np.abs(seeds[:, 0])

    def g(U):
        return (U[:, 0] > 0).astype(float)

    ls = Bare(g, d)
    U, G, acc, _ = _advance_mma(ls, np.random.default_rng(5), seeds, g(seeds), 0.0, 2, spread,
                                "t")
    rng = np.random.default_rng(5)
    cand = seeds + spread * rng.standard_normal((Nc, d))
    keep = rng.random((Nc, d)) < stats.norm.pdf(cand) / stats.norm.pdf(seeds)
    xi = np.where(keep, cand, seeds)
    moved = keep.any(axis=1)
    ok = np.zeros(Nc, bool)
    ok[moved] = g(xi[moved]) <= 0
    np.testing.assert_allclose(U[:, 1], np.where(ok[:, None], xi, seeds), rtol=1e-12)
    assert ok.sum() > 0 and (moved & ~ok).sum() > 0 and (~moved).sum() > 0
    assert acc == ok.sum() / moved.sum() and ls.calls == [("t-step-001", moved.sum())]
    # one chain, one candidate run: the rate is accepted / 1
    one = np.array([[-0.1]])
    for s in range(20):
        rng = np.random.default_rng(s)
        rng.standard_normal((1, d))
        if (rng.random((1, d)) < 0.5).any():  # kept for sure: phi ratio > 0.5 for s = 0.1
            break
    ls = Bare(g, d)
    _, _, acc, _ = _advance_mma(ls, np.random.default_rng(s), one, g(one), np.inf, 2, 0.1, "t")
    assert ls.calls == [("t-step-001", 1)] and acc == 1.0


def test_acs_step_replayed_from_the_generator():
    """One aCS step, replayed: sd_k the seeds' sample standard deviation (1 where it is 0),
    sigma_k = min(lambda sd_k, 1), candidate sqrt(1 - sigma^2) u + sigma z, accepted when
    g <= b (g in {0, 1}, b = 0: every acceptance is at g = b); then ln lambda moves by
    (a_hat - 0.44) / sqrt(1) below the cap -ln(min sd)."""
    seeds = np.array([[-0.05, 0.3, 1.0], [-2.0, 0.3, 0.2], [-0.1, 0.3, -0.4],
                      [-0.3, 0.3, 0.5], [-0.02, 0.3, 0.1], [-1.0, 0.3, 0.0]])
    Nc, d, lam = 6, 3, 0.4

    def g(U):
        return (U[:, 0] > 0).astype(float)

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        U, G, acc, extra = _advance_acs(Bare(g, d), np.random.default_rng(2), seeds, g(seeds),
                                        0.0, 2, lam, 0.44, "t")
    sd = np.array([np.sqrt(np.sum((c - c.mean()) ** 2) / (Nc - 1)) for c in seeds.T])
    sd[1] = 1.0  # the second direction has no spread
    sigma = np.minimum(lam * sd, 1.0)
    cand = np.sqrt(1 - sigma ** 2) * seeds + sigma * np.random.default_rng(2).standard_normal(
        (Nc, d))
    ok = g(cand) <= 0
    assert 0 < ok.sum() < Nc
    np.testing.assert_allclose(U[:, 1], np.where(ok[:, None], cand, seeds), rtol=1e-12)
    assert acc == ok.mean()
    assert extra["scale_end"] == pytest.approx(
        min(lam * math.exp(ok.mean() - 0.44), 1 / sd.min()), rel=1e-12)


def test_acs_with_one_seed_and_no_warning():
    """One seed has no sample standard deviation: sd = 1 in every direction, quietly."""
    import warnings
    seed = np.array([[0.3, -0.4]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        U, _, _, _ = _advance_acs(Bare(lambda U: U.sum(1), 2), np.random.default_rng(7), seed,
                                  seed.sum(1), np.inf, 2, 0.6, 0.44, "a")
    z = np.random.default_rng(7).standard_normal((1, 2))
    np.testing.assert_allclose(U[0, 1], 0.8 * seed[0] + 0.6 * z[0], rtol=1e-12)


def test_a_threshold_of_exactly_zero_is_the_last_level():
    """g in {-1, 1} with exactly N p0 = 10 failures among the 100 level-0 rows: b = 0 midway
    between -1 and 1 is the final threshold (b <= 0), so one level and n runs."""
    def g(U):
        return np.where(U[:, 0] > 1.0, -1.0, 1.0)

    U = np.random.default_rng(SEED_10_FAILURES).standard_normal((100, 1))
    assert (g(U) <= 0).sum() == 10
    ls = Bare(g, 1)
    r = subset_simulation(ls, np.random.default_rng(SEED_10_FAILURES), n=100)
    assert len(r["history"]) == 1 and ls.runs == 100 and r["pf"] == 0.1


def test_default_sample_size_and_level_limit():
    ls = Bare(plane(0.5), 2)
    r = subset_simulation(ls, np.random.default_rng(0))
    assert r["info"]["n"] == 1000 and ls.runs == 1000 and r["info"]["p0"] == 0.1
    # Pf = Phi(-6) ~ 1e-9 needs ~30 halvings with p0 = 0.5: the default limit is 20 levels
    with pytest.raises(RuntimeError, match="subset simulation: 20 levels did not reach"):
        subset_simulation(Bare(plane(6.0), 2), np.random.default_rng(0), n=20, p0=0.5)


def test_exact_pf_over_seeds_within_the_estimated_spread():
    """beta = 2.5 in 3-D (exact Phi(-2.5) = 6.2e-3), N = 300, 30 seeds: the mean estimate is
    within 3 standard errors of the exact Pf for either sampler."""
    exact = special.ndtr(-2.5)
    for sampler in ("acs", "mma"):
        pf = np.array([subset_simulation(Bare(plane(2.5), 3), np.random.default_rng(s), n=300,
                                         sampler=sampler)["pf"] for s in range(30)])
        assert abs(pf.mean() - exact) < 3 * pf.std(ddof=1) / math.sqrt(len(pf))
        assert pf.std(ddof=1) / pf.mean() < 0.5


def test_max_levels_and_bad_arguments():
    with pytest.raises(RuntimeError, match=r"subset simulation: 2 levels did not reach g <= 0 "
                                           r"\(last threshold b = [0-9.]+\); raise max_levels"):
        subset_simulation(Bare(plane(6.0), 2), np.random.default_rng(0), n=100, max_levels=2)
    r = subset_simulation(Bare(plane(2.0), 2), np.random.default_rng(0), n=100, max_levels=1)
    assert len(r["history"]) == 2  # levels 0 and 1: max_levels=1 is enough for Pf ~ 2e-2
    ls, rng = Bare(plane(2.0), 2), np.random.default_rng(0)
    cases = [({"sampler": "gibbs"}, "unknown sampler 'gibbs'; use 'acs' \\(adaptive "
                                    "conditional sampling\\) or 'mma' \\(modified Metropolis\\)"),
             ({"n": 9}, "n must be an integer >= 10, got n=9"),
             ({"p0": 0.0}, "p0=0.0"), ({"p0": 0.51}, "p0=0.51"),
             ({"n": 100, "p0": 0.6}, r"p0 must be a finite number in \(0\.0, 0\.5\], got "
                                     r"p0=0\.6"),
             ({"n": 12, "p0": 0.26}, r"n=12, p0=0\.26 \(n \* p0 = 3\.12\)"),
             ({"n": 10, "p0": 0.1}, None),
             ({"acceptance": 0.0}, "acceptance=0.0"), ({"acceptance": 1.0}, "acceptance=1.0"),
             ({"spread": 0.5}, "spread=0.5 is the modified Metropolis proposal's; it needs "
                               "sampler='mma' \\(aCS adapts its own scaling\\)"),
             ({"spread": 0.0, "sampler": "mma"}, "spread=0.0"),
             ({"spread": 10.0, "sampler": "mma"}, "spread=10.0"),
             ({"max_levels": 0}, "max_levels=0"), ({"level": 1.0}, "level=1.0"),
             ({"n": 15, "p0": 0.1}, r"n \* p0 must be a whole number of chains dividing n; got "
                                    r"n=15, p0=0.1 \(n \* p0 = 1.5\)"),
             ({"n": 14, "p0": 0.5}, None), ({"n": 30, "p0": 0.2}, None),
             ({"n": 10, "p0": 0.04}, "n=10, p0=0.04")]
    for kwargs, match in cases:
        if match is None:  # accepted: n p0 chains of n / (n p0) states
            subset_simulation(ls, rng, **kwargs)
            continue
        with pytest.raises(ValueError, match=match):
            subset_simulation(ls, rng, **kwargs)
    ls = Bare(plane(2.0), 2)
    r = subset_simulation(ls, rng, n=20, p0=0.5, sampler="mma", spread=2.0)
    assert r["info"]["spread"] == 2.0 and r["info"]["p0"] == 0.5
    assert [t for t, _ in ls.calls][:2] == ["level-00", "level-01-step-001"]


# -- target CoV and budget ------------------------------------------------------------------------

def pooled_by_hand(runs):
    """pf = sum N_r pf_r / sum N_r and cov = sqrt(sum (N_r cov_r)^2) / sum N_r (module notes)."""
    N = np.array([r["n"] for r in runs], dtype=float)
    pf = N @ [r["pf"] for r in runs] / N.sum()
    return pf, math.sqrt(np.sum((N * [r["cov"] for r in runs]) ** 2)) / N.sum()


def test_target_cov_is_met_near_the_exact_pf():
    """beta = 3 in 4-D (exact Phi(-3) = 1.35e-3), target_cov = 0.1: several runs pooled by
    their N, the pooled CoV at most 0.1, within the budget, and the estimate within 4 CoVs
    of the exact Pf."""
    exact = special.ndtr(-3.0)
    ls = Bare(plane(3.0), 4)
    r = subset_simulation(ls, np.random.default_rng(1), n=500, target_cov=0.1,
                          max_runs=50_000)
    info = r["info"]
    assert len(info["runs"]) >= 2 and info["target_met"] and r["cov"] <= 0.1
    assert ls.runs == sum(x["model_runs"] for x in info["runs"]) <= 50_000
    pf, cov = pooled_by_hand(info["runs"])
    assert r["pf"] == pytest.approx(pf, rel=1e-12) and r["cov"] == pytest.approx(cov, rel=1e-12)
    assert abs(math.log(r["pf"] / exact)) < 4 * math.sqrt(math.log1p(r["cov"] ** 2))
    assert info["n"] == sum(x["n"] for x in info["runs"]) and info["cov_between"] > 0
    assert [h["run"] for h in r["history"]][0] == 0 and r["history"][-1]["run"] == len(
        info["runs"]) - 1
    assert all(x["n"] % 10 == 0 for x in info["runs"])  # whole chains of 1 / p0 states


def test_the_first_run_is_the_fixed_n_run_and_later_runs_have_their_own_tags():
    """With a target the first run draws exactly what ``n`` alone draws (same tags, same pf);
    the next runs continue the generator's stream under tags ``run-01-...``."""
    fixed = subset_simulation(Bare(plane(3.0), 4), np.random.default_rng(3), n=200)
    ls = Bare(plane(3.0), 4)
    r = subset_simulation(ls, np.random.default_rng(3), n=200, target_cov=0.2,
                          max_runs=20_000)
    assert r["info"]["runs"][0]["pf"] == fixed["pf"] and r["info"]["runs"][0]["cov"] == \
        fixed["cov"]
    tags = [t for t, _ in ls.calls]
    assert tags[0] == "level-00" and "run-01-level-00" in tags and len(set(tags)) == len(tags)
    big = subset_simulation(Bare(plane(3.0), 4), np.random.default_rng(3), n=200,
                            target_cov=5.0)  # met by the first run alone
    assert big["pf"] == fixed["pf"] and big["cov"] == fixed["cov"]
    assert big["info"]["runs"] == [{k: fixed["pf"] if k == "pf" else v for k, v in
                                    big["info"]["runs"][0].items()}]
    assert big["info"]["cov_between"] is None and big["info"]["target_met"]


def test_max_runs_is_never_exceeded_and_a_missed_target_warns():
    """Pf = Phi(-4.5) in 10-D with budgets far too small for CoV 0.3: the runs stop inside the
    budget and a warning names the reached CoV, the target and the runs spent."""
    for max_runs in (1200, 2500, 4000):
        ls = Bare(plane(4.5), 10)
        with pytest.warns(UserWarning, match=rf"subset simulation reached CoV [0-9.]+, above "
                                             rf"target_cov=0\.3, with \d+ of "
                                             rf"max_runs={max_runs} model runs"):
            r = subset_simulation(ls, np.random.default_rng(0), n=200, max_runs=max_runs,
                                  target_cov=0.3)
        assert ls.runs <= max_runs and not r["info"]["target_met"] and r["cov"] > 0.3
        assert r["info"]["max_runs"] == max_runs
        assert ls.runs == sum(x["model_runs"] for x in r["info"]["runs"]) + r["info"][
            "discarded_runs"]


def test_a_budget_alone_is_spent_without_a_target():
    """max_runs alone: no target, the budget is spent on runs of at least min(n, 50 chains),
    quietly."""
    import warnings
    ls = Bare(plane(3.0), 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = subset_simulation(ls, np.random.default_rng(2), n=200, max_runs=6000)
    cost = max(x["model_runs"] / x["n"] for x in r["info"]["runs"])
    assert 6000 - 200 * cost < ls.runs <= 6000  # not another 200-sample run's worth left
    assert r["info"]["target_cov"] is None and r["info"]["target_met"]


def test_first_run_out_of_budget_raises():
    with pytest.raises(RuntimeError, match=r"subset simulation: max_runs=150 ran out before "
                                           r"level 1 of the first run \(threshold b = "
                                           r"[0-9.]+, n=100 samples per level\)"):
        subset_simulation(Bare(plane(3.0), 2), np.random.default_rng(0), n=100, max_runs=150)


def test_target_and_budget_refuse_bad_values():
    ls, rng = Bare(plane(2.0), 2), np.random.default_rng(0)
    for kwargs, match in (({"target_cov": 0.0}, r"target_cov must be a finite number in "
                                                r"\(0\.0, inf\), got target_cov=0\.0"),
                          ({"target_cov": -0.1}, "target_cov=-0.1"),
                          ({"target_cov": float("nan")}, "target_cov=nan"),
                          ({"target_cov": "x"}, "target_cov must be a number"),
                          ({"max_runs": 0}, "max_runs must be an integer >= 1, got max_runs=0"),
                          ({"max_runs": 2.5}, "max_runs=2.5"),
                          ({"max_runs": 999}, r"max_runs=999 is less than one level's runs "
                                              r"\(n=1000 samples per level\)"),
                          ({"n": 100, "max_runs": 99}, "max_runs=99 is less than one level's "
                                                       r"runs \(n=100")):
        with pytest.raises(ValueError, match=match):
            subset_simulation(ls, rng, **kwargs)


def test_default_meets_the_target_and_seeds_reproduce():
    """Defaults: target_cov 0.3 within 10,000 runs, first run n = 1000; the same seed gives the
    same result, another seed another."""
    ls = Bare(plane(3.0), 10)
    a = subset_simulation(ls, np.random.default_rng(5))
    info = a["info"]
    assert (info["target_cov"], info["max_runs"], info["runs"][0]["n"]) == (0.3, 10_000, 1000)
    assert info["target_met"] and a["cov"] <= 0.3 and ls.runs <= 10_000
    b = subset_simulation(Bare(plane(3.0), 10), np.random.default_rng(5))
    c = subset_simulation(Bare(plane(3.0), 10), np.random.default_rng(6))
    assert a["pf"] == b["pf"] and a["cov"] == b["cov"] and a["history"] == b["history"]
    assert c["pf"] != a["pf"]


def test_pooled_cov_is_honest_over_seeds():
    """beta = 3 in 10-D, target_cov = 0.2, 120 seeds: the mean estimate within 3 standard
    errors of the exact Pf, and the spread over seeds near the mean reported CoV (the
    empirical CoV over 120 seeds has a relative standard error of about 6.5 %)."""
    exact = special.ndtr(-3.0)
    out = [subset_simulation(Bare(plane(3.0), 10), np.random.default_rng(s), n=500,
                             target_cov=0.2, max_runs=30_000) for s in range(120)]
    pf = np.array([r["pf"] for r in out])
    spread = pf.std(ddof=1) / pf.mean()
    assert abs(pf.mean() / exact - 1) < 3 * spread / math.sqrt(len(pf))
    assert 0.8 < np.mean([r["cov"] for r in out]) / spread < 1.25
    assert all(r["info"]["target_met"] for r in out)
