"""Subset simulation (Au & Beck 2001) for small failure probabilities.

The failure event F = {g <= 0} is reached through nested events F_j = {g <= b_j} with
b_1 > b_2 > ... > b_m = 0, so that ``Pf = P(F_1) prod_j P(F_{j+1} | F_j)``. Level 0 is crude
Monte Carlo with N samples in standard normal space; b_1 is the p0-quantile of g (midway
between the N p0-th and the next smallest value), so that exactly N p0 samples lie in F_1
(where that quantile falls on a plateau of g, b_1 lies under it: below). Those seeds each
start a Markov chain of 1 / p0 states (seed included) that stays in F_j and has the
standard normal density conditioned on F_j as its stationary law. One step of all chains is
one batched :func:`propagate` call. The levels continue until the p0-quantile falls below 0;
the last conditional probability is the fraction of the last level's samples with g <= 0.
A run costs ``N + (m - 1) N (1 - p0)`` model runs for m levels (level 0 included),
m ~ 1 + ln(Pf) / ln(p0): with p0 = 0.1, N = 1800 stays under 10^4 runs down to Pf ~ 1e-6
(6 levels, 9,900 runs).

Plateaus. Where distinct samples share the value v > 0 of g at the quantile (a flat stretch
of g: a margin capped at v, a count), the midway b would be v itself and F_j = {g <= v}
would hold more than N p0 samples (every sample under a cap), while the N p0 lowest seeds
are no draw from it: Pf came out 2.6 times the exact one for a margin capped at 2 (aCS; 5
times with MMA) and 25 times for a count. b is then midway between v and the largest value
below it, the level's p_j the share of samples under v (less than p0; every formula below
takes the level's own p_j), and all k < N p0 samples under v seed the Nc chains, each of
them Nc // k or Nc // k + 1 chains (the remainder drawn without replacement; the lineage
estimate below counts the chains that share a seed). The level's history records ``plateau``
(v) and ``plateau_rows``; ``info["plateaus"]`` counts such levels. Copies of one state (a
chain that stayed put) at the quantile are no plateau: b is their value and the N p0 lowest
seed the chains, as on any continuous g (the same results bit for bit). Where no sample lies
under v, no level under it can be sampled and the run raises, naming v. A discrete g is
passed level by level through its values. Measured over 100 seeds (defaults): capped margin,
Pf = 2.3e-4, mean pf / exact 1.02 (aCS) and 1.01 (MMA), interval coverage 0.94 and 0.92;
count of 3 exceedances, Pf = 3.0e-4, 1.07 and 1.05, coverage 0.92 and 0.89.

Samplers (``sampler``):

* ``"acs"`` (default), adaptive conditional sampling (Papaioannou, Betz, Zwirglmaier & Straub
  2015, eqs. 23-26): the candidate is drawn from the conditional normal
  ``v_k ~ N(rho_k u_k, sigma_k^2)``, ``sigma_k = min(lambda sd_k, 1)``,
  ``rho_k = sqrt(1 - sigma_k^2)`` (sd_k the sample standard deviation of the level's seeds in
  direction k), which leaves the standard normal invariant, so the candidate is accepted
  exactly when g(v) <= b_j. The scaling adapts towards the target acceptance rate a* (0.44):
  after each step of the (lockstep) chains, ``ln lambda += (a_hat - a*) / sqrt(i)`` with
  a_hat that step's acceptance over all chains and i the step (lambda is not raised past the
  value where every sigma_k is 1); lambda starts at 0.6 and each level starts from the
  previous level's last lambda, as in the authors' reference code. (The paper runs chains
  in groups one after the other and adapts between groups; adapting between lockstep steps
  keeps one batched model call per step. Each update depends on all Nc chains, each chain's
  own influence on it is O(1 / Nc).)
* ``"mma"``, the component-wise modified Metropolis algorithm of Au & Beck (2001): proposes
  ``xi_i = u_i + s eps_i`` (eps ~ N(0, 1), s the ``spread``), keeps each component with
  probability ``min(1, phi(xi_i) / phi(u_i))``, and accepts the candidate only if
  g(candidate) <= b_j (else the chain repeats its state); rows whose candidate equals the
  current state are not rerun. In 10-D standard normal space its chains are markedly more
  correlated than aCS's (measured: empirical CoV 0.36 against 0.31 at Pf = 3.4e-6 with
  N = 1500, ``benchmarks/bench_uq.py``).

Coefficient of variation. Au & Beck (2001, eqs. 27-29): level 0 has
``delta_0^2 = (1 - p_0) / (N p_0)``; a level j >= 1 built from Nc chains of Ns states has
``delta_j^2 = (1 - p_j) / (N p_j) (1 + gamma_j)`` with the chain-correlation factor::

    gamma_j = 2 sum_{k=1}^{Ns-1} (1 - k / Ns) rho_j(k),    rho_j(k) = R_j(k) / R_j(0)
    R_j(k) = 1 / (N - k Nc) sum_chains sum_{l=1}^{Ns-k} I_l I_{l+k} - p_j^2

(I the indicator of the next level's event along a chain; per level in ``history``). Summing
``delta_j^2`` treats the chains of a level as independent and the levels as uncorrelated:
Au & Beck's lower bound, ``info["cov_au_beck"]`` (fully correlated levels give their upper
bound ``sum_j delta_j``, ``info["cov_upper"]``). Both assumptions fail: chains whose seeds
descend from one earlier chain are correlated, and so are consecutive levels, so the lower
bound underestimates the spread over seeds (measured 0.27 against 0.31 with aCS, 0.30
against 0.36 with MMA, above). The lineage estimate, ``info["cov_lineage"]``, counts both:
every sample has a level-0 ancestor (its chain's seed's ancestor; subset simulation is a
sequential Monte Carlo sampler, Cerou et al. 2012, and this is the ancestor-clustered
variance estimator of Chan & Lai 2013, Lee & Whiteley 2018). To first order
``ln Pf - ln Pf_true = sum_j sum_i (I_ji - p_j) / (N p_j)`` over the samples i of each level,
and the terms of different ancestors are uncorrelated, so with ``T_a`` the sum of the terms
of ancestor a over all levels::

    Var[ln Pf] ~ K / (K - 1) sum_a T_a^2,      cov_lineage = sqrt(exp(Var[ln Pf]) - 1)

(K the number of distinct ancestors of the last level, ``info["lineages"]``; K / (K - 1) the
usual small-sample factor of cluster variance estimators, conservative for the earlier
levels' more numerous clusters). ``cov`` is the larger of the lineage estimate and Au &
Beck's lower bound (which guards the lineage estimate when few ancestors survive). Measured
over 2000 seeds on the benchmark (aCS, N = 1800): mean ``cov`` 0.28, empirical CoV 0.29, 95 %
interval coverage 0.93. The estimate of Pf is biased by O(1 / N) (levels positively
correlated): +3 % on that benchmark. The interval is lognormal: ``Pf exp(+- z sigma)``,
``sigma^2 = ln(1 + cov^2)``, as Pf is a product of level probabilities and skewed to the
right.

Target CoV and budget (``target_cov``, ``max_runs``; the default unless ``n`` alone is
given). Every level's term ``(1 - p_j) / (N p_j) (1 + gamma_j)`` scales as 1 / N, so a run
with N samples per level has ``Var[pf_r] ~ kappa Pf^2 / N`` (kappa set by the problem, p0 and
the sampler) and costs ``N + (m - 1) N (1 - p0)`` runs. R independent runs (one generator
stream, consecutive draws) pooled with the inverse-variance weights N_r::

    pf = sum_r N_r pf_r / sum_r N_r,      cov^2 = sum_r (N_r cov_r)^2 / (sum_r N_r)^2

have the variance ``kappa Pf^2 / sum_r N_r`` of one run with ``sum_r N_r`` per level at the
same cost: the first run's runs are not lost, unlike a pilot that only sizes the next run.
The first run has n samples per level (default 1000, the very run ``n=1000`` alone gives);
while the pooled ``cov`` exceeds the target, the next run gets ``1.2 kappa_hat / target^2 -
sum_r N_r`` samples per level (``kappa_hat = cov^2 sum_r N_r``; whole chains; the 1.2 spares
most third runs), at least ``min(n, 50 chains)`` (a run of few chains misjudges its own CoV:
measured with first runs of 100-300, pooled estimates whose empirical CoV was 1.5-4.5
times the reported one) and at most what the budget left buys at the largest runs-per-sample of
the runs so far. The runs stop when ``cov <= target_cov``; or when the budget does not buy
that minimum, or a run would pass it before its next level (that run is discarded, its runs
counted in ``info["discarded_runs"]``): then a warning names the reached CoV, the target and
the runs spent, and ``info["target_met"]`` is False. ``max_runs`` is never exceeded; the first
run running out raises. The pooled estimate's O(1 / N) bias is R times one run's
(``sum_r N_r (b / N_r) / sum_r N_r``). ``info["cov_between"]``, from the runs' spread
``sum_r N_r (pf_r - pf)^2 / (R - 1) / sum_r N_r``, is a model-free check for R >= 2 (with 1 or
2 degrees of freedom, too noisy to steer by). p0 = 0.1 is kept: measured on the benchmark
below with about 10^4 runs per seed, p0 = 0.2, 0.25 and 0.5 gave empirical CoVs of 0.33,
0.32 and 0.37 against 0.29.

Measured on the 10-D hyperplane at Pf = Phi(-4.5) = 3.4e-6 with the defaults (target 0.3,
10^4 runs; ``python benchmarks/bench_uq.py --only subset-default --seeds 400``), 400 seeds:
9,486 runs on average (at most 9,982; two runs pooled in 399 seeds), mean reported CoV
0.301, empirical CoV 0.328 (relative standard error 3.5 %), mean pf / exact 1.048 (+- 0.017),
95 % interval coverage 0.94; the target is met in 59 % of the seeds, a warning in the others.
That goal sits at the edge of what 10^4 runs buy there: one run with N = 1800 (9,900 runs)
reaches a mean estimated CoV of 0.28 and an empirical 0.29, and pooling two runs costs about
10 % in CoV over one run of their summed N.

References: Au & Beck (2001), Probab. Eng. Mech. 16: 263-277. Papaioannou, Betz, Zwirglmaier
& Straub (2015), Probab. Eng. Mech. 41: 83-103. Cerou, Del Moral, Furon & Guyader (2012),
Stat. Comput. 22: 795-808. Chan & Lai (2013), Ann. Stat. 41: 2877-2904. Lee & Whiteley
(2018), Biometrika 105: 609-625.
"""
import math

import numpy as np
from scipy import special

from ..validation import check_float, check_int
from .result import check_target, warn_target_missed

__all__ = ["chain_correlation", "FIRST_N", "MAX_RUNS", "SAMPLERS", "TARGET_COV",
           "subset_simulation"]

_ACS_SCALE0 = 0.6  # aCS's initial scaling lambda (Papaioannou et al. 2015)


def chain_correlation(indicators, p):
    """gamma of Au & Beck (2001) eq. 29 from (Nc, Ns) chain indicators with mean p."""
    I = np.asarray(indicators, dtype=float)
    Nc, Ns = I.shape
    N = Nc * Ns
    R0 = p * (1 - p)
    if R0 <= 0:
        return 0.0
    gamma = 0.0
    for k in range(1, Ns):
        Rk = (I[:, :Ns - k] * I[:, k:]).sum() / (N - k * Nc) - p * p
        gamma += 2 * (1 - k / Ns) * Rk / R0
    return float(gamma)


def _advance_mma(ls, rng, seeds, g_seeds, b, Ns, spread, tag):
    """Ns-state modified Metropolis chains from each seed; returns (Nc, Ns, d) states, their
    (Nc, Ns) g values and the acceptance rate of the candidates."""
    Nc, d = seeds.shape
    U = np.empty((Nc, Ns, d))
    G = np.empty((Nc, Ns))
    U[:, 0], G[:, 0] = seeds, g_seeds
    accepted = proposed = 0
    for step in range(1, Ns):
        cur, gcur = U[:, step - 1], G[:, step - 1]
        cand = cur + spread * rng.standard_normal(cur.shape)
        keep = rng.random(cur.shape) < np.exp(-0.5 * (cand ** 2 - cur ** 2))
        xi = np.where(keep, cand, cur)
        moved = keep.any(axis=1)
        nxt, gnxt = cur.copy(), gcur.copy()
        if moved.any():
            gx = ls(xi[moved], tag=f"{tag}-step-{step:03d}")
            ok = gx <= b
            rows = np.flatnonzero(moved)[ok]
            nxt[rows], gnxt[rows] = xi[rows], gx[ok]
            accepted += int(ok.sum())
            proposed += int(moved.sum())
        U[:, step], G[:, step] = nxt, gnxt
    return U, G, accepted / max(proposed, 1), {}


def _advance_acs(ls, rng, seeds, g_seeds, b, Ns, lam, target, tag):
    """Ns-state adaptive conditional sampling chains from each seed, all chains in lockstep;
    returns (Nc, Ns, d) states, (Nc, Ns) g values, the acceptance rate and
    ``{"scale": lambda at the start, "scale_end": lambda after the last update}``."""
    Nc, d = seeds.shape
    sd = seeds.std(axis=0, ddof=1) if Nc > 1 else np.ones(d)
    sd = np.where(sd > 0, sd, 1.0)
    U = np.empty((Nc, Ns, d))
    G = np.empty((Nc, Ns))
    U[:, 0], G[:, 0] = seeds, g_seeds
    accepted, log_lam, lam_start = 0, math.log(lam), lam
    log_lam_max = -math.log(sd.min())  # lambda sd >= 1 in every direction: sigma = 1 already
    for step in range(1, Ns):
        cur, gcur = U[:, step - 1], G[:, step - 1]
        sigma = np.minimum(math.exp(log_lam) * sd, 1.0)
        cand = np.sqrt(1 - sigma ** 2) * cur + sigma * rng.standard_normal(cur.shape)
        gx = ls(cand, tag=f"{tag}-step-{step:03d}")
        ok = gx <= b
        U[:, step] = np.where(ok[:, None], cand, cur)
        G[:, step] = np.where(ok, gx, gcur)
        accepted += int(ok.sum())
        log_lam = min(log_lam + (ok.mean() - target) / math.sqrt(step), log_lam_max)
    return U, G, accepted / (Nc * (Ns - 1)), {"scale": lam_start,
                                              "scale_end": math.exp(log_lam)}


def _plateau(U, G, v):
    """Whether distinct rows of U share g = v (a flat stretch of g), not copies of one state
    (a chain that stayed put)."""
    rows = U[G == v]
    return bool((rows != rows[0]).any())


def _under_plateau(Gs, Nc, level):
    """The rows of sorted g strictly below the plateau value ``Gs[Nc]``; raises where none
    is."""
    v = Gs[Nc]
    below = int(np.searchsorted(Gs, v, side="left"))
    if below == 0:
        tied = int(np.searchsorted(Gs, v, side="right"))
        raise RuntimeError(
            f"subset simulation: g = {v:.6g} on {tied} of the {len(Gs)} samples of level "
            f"{level} (a plateau) and below it on none, so no conditional level under "
            f"{v:.6g} can be sampled; use method='mc', or a g that keeps falling there (a "
            "margin not capped at a value)")
    return below


def _balanced(rows, Nc, rng):
    """Nc seeds from the given rows, each used Nc // k or Nc // k + 1 times (the extra ones
    drawn without replacement): a uniform resample of the k rows."""
    k = len(rows)
    reps = np.full(k, Nc // k)
    reps[rng.choice(k, Nc % k, replace=False)] += 1
    return np.repeat(rows, reps)


#: The conditional samplers of :func:`subset_simulation`: ``"acs"`` (adaptive conditional
#: sampling, Papaioannou et al. 2015) and ``"mma"`` (modified Metropolis, Au & Beck 2001).
SAMPLERS = ("acs", "mma")

#: The defaults of the stated goal (module notes, "Target CoV and budget"): the combined
#: estimate's coefficient of variation, the budget of model runs, the first run's N.
TARGET_COV, MAX_RUNS, FIRST_N = 0.3, 10_000, 1000
_MARGIN = 1.2  # the next run is planned for 1.2 times the pooled samples the target asks for


class _OutOfBudget(Exception):
    """A run's next level would pass its budget of model runs."""

    def __init__(self, level, threshold):
        super().__init__(level, threshold)
        self.level, self.threshold = level, threshold


def _one_run(ls, rng, n, p0, sampler, acceptance, spread, max_levels, budget=None,
             prefix=""):
    """One subset simulation with n samples per level (the module notes). ``budget``: the
    model runs it may spend (it raises :class:`_OutOfBudget` before a level that would pass
    them); ``prefix`` heads its batches' tags. Returns pf, the levels' history, the CoV
    estimates, the last population's lineages and the runs spent."""
    Nc = round(n * p0)
    Ns, d, runs_before = n // Nc, ls.inputs.dim, ls.runs
    U = rng.standard_normal((n, d))
    G = ls(U, tag=f"{prefix}level-00")
    chains = None  # (Nc, Ns) chain layout of the current population (None at level 0)
    root = np.arange(n)  # the level-0 ancestor of every sample of the current population
    terms = np.zeros(n)  # per level-0 ancestor: the sum of its descendants' terms of ln Pf
    history, delta2, delta_sum, pf, lam = [], 0.0, 0.0, 1.0, _ACS_SCALE0
    for j in range(max_levels + 1):
        order = np.argsort(G, kind="stable")
        Gs = G[order]
        b, below = 0.5 * (Gs[Nc - 1] + Gs[Nc]), None
        if b > 0 and Gs[Nc - 1] == Gs[Nc] and _plateau(U, G, Gs[Nc]):
            below = _under_plateau(Gs, Nc, j)
            b = 0.5 * (Gs[below - 1] + Gs[Nc])
            b = b if b < Gs[Nc] else Gs[below - 1]  # adjacent floats: the midpoint rounds up
        final = b <= 0
        if final:
            b = 0.0
        inside = G <= b
        p = float(inside.mean())
        gamma = 0.0 if chains is None else chain_correlation(inside.reshape(chains), p)
        # p >= 1 / N > 0: a row lies below b. 1 + gamma >= 0 (a variance factor), but
        # one chain's estimate centred on its own mean is -1 up to rounding: clip at 0
        d2 = (1 - p) / (n * p) * max(1 + gamma, 0.0)
        delta2 += d2
        delta_sum += math.sqrt(d2)
        pf *= p
        terms += np.bincount(root, weights=(inside - p) / (n * p), minlength=n)
        history.append({"level": j, "threshold": float(b), "p": p, "gamma": gamma,
                        "cov": math.sqrt(d2), "model_runs": ls.runs})
        if below is not None:
            history[-1].update(plateau=float(Gs[Nc]), plateau_rows=int((G == Gs[Nc]).sum()))
        if final:
            break
        if j == max_levels:
            raise RuntimeError(f"subset simulation: {max_levels} levels did not reach g <= 0 "
                               f"(last threshold b = {b:.4g}); raise max_levels or check g")
        if budget is not None and ls.runs - runs_before + n - Nc > budget:
            raise _OutOfBudget(j + 1, float(b))
        # the rows in F_{j+1}: the Nc lowest, or all of the fewer under a plateau, resampled
        seeds = order[:Nc] if below is None else _balanced(order[:below], Nc, rng)
        tag = f"{prefix}level-{j + 1:02d}"
        if sampler == "acs":
            Uc, Gc, acc, extra = _advance_acs(ls, rng, U[seeds], G[seeds], b, Ns, lam,
                                              acceptance, tag)
            lam = extra["scale_end"]
        else:
            Uc, Gc, acc, extra = _advance_mma(ls, rng, U[seeds], G[seeds], b, Ns, spread, tag)
        history[-1].update(acceptance=acc, **extra)
        U, G, chains = Uc.reshape(n, d), Gc.reshape(n), (Nc, Ns)
        root = np.repeat(root[seeds], Ns)
    K = int(np.unique(root).size)  # distinct level-0 ancestors of the last population
    var_log = float(terms @ terms) * (K / (K - 1) if K > 1 else 1.0)  # lineage estimate
    cov_au_beck, cov_lineage = math.sqrt(delta2), math.sqrt(math.expm1(var_log))
    return {"n": n, "pf": pf, "cov": max(cov_au_beck, cov_lineage), "cov_au_beck": cov_au_beck,
            "cov_lineage": cov_lineage, "cov_upper": delta_sum, "lineages": K,
            "levels": len(history), "model_runs": ls.runs - runs_before, "history": history,
            "plateaus": sum("plateau" in h for h in history)}


def _lognormal_result(pf, cov, level, history, info):
    """The result's fields: the lognormal interval ``pf exp(+- z sigma)``,
    ``sigma^2 = ln(1 + cov^2)``, and beta."""
    z = special.ndtri(0.5 + level / 2)
    s = math.sqrt(math.log1p(cov * cov))
    ci = (pf * math.exp(-z * s), pf * math.exp(z * s))
    beta = float(-special.ndtri(pf))
    return dict(pf=pf, cov=cov, ci=ci, beta=beta, level=level, history=history, info=info)


def _pooled(done):
    """(pf, cov, cov_between) of runs pooled with weights N_r (module notes)."""
    N = np.array([r["n"] for r in done], dtype=float)
    pfs = np.array([r["pf"] for r in done])
    covs = np.array([r["cov"] for r in done])
    n_tot = N.sum()
    pf = float(N @ pfs / n_tot)
    cov = float(math.sqrt(np.sum((N * covs) ** 2)) / n_tot)
    between = None
    if len(done) > 1:
        between = math.sqrt(float(N @ (pfs - pf) ** 2) / (len(done) - 1) / n_tot) / pf
    return pf, cov, between


def _next_n(done, target, runs_left, Ns, n_min):
    """Samples per level of the next run, or None where the runs so far meet the target or
    the budget left does not buy ``n_min`` (module notes)."""
    n_tot = sum(r["n"] for r in done)
    _, cov, _ = _pooled(done)
    if target is not None and cov <= target:
        return None
    per_sample = max(r["model_runs"] / r["n"] for r in done)  # runs per sample per level
    n_next = Ns * math.floor(runs_left / per_sample / Ns)  # what the budget buys
    if target is not None:
        want = _MARGIN * cov * cov * n_tot / (target * target) - n_tot
        n_next = min(n_next, max(Ns * math.ceil(want / Ns), n_min))
    return n_next if n_next >= n_min else None


def _runs_to_target(ls, rng, n, target, max_runs, level, options):
    """Independent runs, the first with n samples per level, pooled until the target CoV
    is met or the budget is spent (module notes); warns where the target is not met."""
    Ns = n // round(n * options["p0"])
    n_min = min(n, 50 * Ns)  # a run of fewer chains misjudges its own CoV too often
    runs_before, done, discarded, n_next = ls.runs, [], 0, n
    while n_next is not None:
        left = max_runs - (ls.runs - runs_before)
        prefix = f"run-{len(done):02d}-" if done else ""
        try:
            done.append(_one_run(ls, rng, n_next, budget=left, prefix=prefix, **options))
        except _OutOfBudget as out:
            if not done:
                raise RuntimeError(
                    f"subset simulation: max_runs={max_runs} ran out before level "
                    f"{out.level} of the first run (threshold b = {out.threshold:.4g}, "
                    f"n={n} samples per level); raise max_runs or lower n") from None
            discarded = ls.runs - runs_before - sum(r["model_runs"] for r in done)
            break
        n_next = _next_n(done, target, max_runs - (ls.runs - runs_before), Ns, n_min)
    pf, cov, between = _pooled(done)
    spent = ls.runs - runs_before
    met = target is None or cov <= target
    if not met:
        warn_target_missed("subset simulation", cov, target, spent, max_runs, stacklevel=4,
                           detail=f" ({len(done)} runs pooled)")
    history = [dict(h, run=i) for i, r in enumerate(done) for h in r["history"]]
    info = {"n": sum(r["n"] for r in done), "p0": options["p0"],
            "sampler": options["sampler"], "target_cov": target, "max_runs": max_runs,
            "target_met": met, "cov_between": between, "discarded_runs": discarded,
            "runs": [{k: r[k] for k in ("n", "pf", "cov", "levels", "model_runs")}
                     for r in done], "levels": max(r["levels"] for r in done),
            "lineages": sum(r["lineages"] for r in done), "ci_kind": "lognormal",
            "plateaus": sum(r["plateaus"] for r in done)}
    return _lognormal_result(pf, cov, level, history, info)


def subset_simulation(ls, rng, n=None, p0=0.1, sampler="acs", acceptance=0.44, spread=None,
                      max_levels=20, level=0.95, target_cov=None, max_runs=None):
    """Subset simulation (see the module notes).

    By default independent runs are pooled until the estimate's CoV is at most
    ``target_cov = 0.3`` within ``max_runs = 10,000`` model runs ("Target CoV and budget" in
    the module notes); ``n`` alone asks for one run of n samples per level instead.

    Args:
        n: samples per level N (N p0 chains of 1 / p0 states; both must be integers). Alone:
            one run. With ``target_cov`` or ``max_runs``, or left out: the first run's N
            (default 1000).
        p0: conditional probability of each intermediate level, in (0, 0.5].
        sampler: ``"acs"`` (adaptive conditional sampling, Papaioannou et al. 2015) or
            ``"mma"`` (component-wise modified Metropolis, Au & Beck 2001).
        acceptance: aCS's target acceptance rate, in (0, 1).
        spread: MMA's standard deviation of the component-wise Gaussian proposal (default 1;
            only with ``sampler="mma"``).
        max_levels: intermediate levels allowed before giving up.
        level: confidence level of the lognormal interval.
        target_cov: the pooled estimate's coefficient of variation to reach (default 0.3;
            none where only ``max_runs`` is given: the budget is spent).
        max_runs: budget of model runs, never exceeded (default 10,000); a warning where
            the target is not met within it.

    Example:
        >>> from uqkit.reliability import failure_probability
        >>> from uqkit.reliability.problems import hyperplane, standard_normals
        >>> r = failure_probability(lambda X: hyperplane(X, 3.0), standard_normals(10),
        ...                         method="subset", executor="serial")  # Pf = Phi(-3)
        >>> r.cov <= 0.3, r.model_runs, [run["n"] for run in r.info["runs"]]
        (True, 2800, [1000])
        >>> r = failure_probability(lambda X: hyperplane(X, 3.0), standard_normals(10),
        ...                         method="subset", target_cov=0.1, max_runs=50_000,
        ...                         executor="serial")
        >>> r.cov <= 0.1, r.model_runs <= 50_000, len(r.info["runs"]) > 1
        (True, True, True)
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler {sampler!r}; use 'acs' (adaptive conditional "
                         "sampling) or 'mma' (modified Metropolis)")
    fixed = n is not None and target_cov is None and max_runs is None
    n = check_int(FIRST_N if n is None else n, "n", 10)
    p0 = check_float(p0, "p0", 0.0, 0.5, open_high=False)
    acceptance = check_float(acceptance, "acceptance", 0.0, 1.0)
    if spread is not None and sampler != "mma":
        raise ValueError(f"spread={spread!r} is the modified Metropolis proposal's; it needs "
                         "sampler='mma' (aCS adapts its own scaling)")
    spread = check_float(1.0 if spread is None else spread, "spread", 0.0, 10.0)
    max_levels = check_int(max_levels, "max_levels", 1)
    level = check_float(level, "level", 0.0, 1.0)
    Nc = round(n * p0)
    if Nc < 1 or abs(n * p0 - Nc) > 1e-9 or n % Nc:
        raise ValueError(f"n * p0 must be a whole number of chains dividing n; got n={n}, "
                         f"p0={p0} (n * p0 = {n * p0:g})")
    options = dict(p0=p0, sampler=sampler, acceptance=acceptance, spread=spread,
                   max_levels=max_levels)
    if not fixed:
        if target_cov is None and max_runs is None:
            target_cov = TARGET_COV
        target_cov, max_runs = check_target(target_cov, max_runs, MAX_RUNS)
        if max_runs < n:
            raise ValueError(f"max_runs={max_runs} is less than one level's runs (n={n} "
                             "samples per level); raise max_runs or lower n")
        return _runs_to_target(ls, rng, n, target_cov, max_runs, level, options)
    run = _one_run(ls, rng, n, **options)
    info = {"n": n, "p0": p0, "sampler": sampler, "levels": run["levels"],
            "cov_au_beck": run["cov_au_beck"], "cov_lineage": run["cov_lineage"],
            "cov_upper": run["cov_upper"], "lineages": run["lineages"], "ci_kind": "lognormal",
            "plateaus": run["plateaus"]}
    info.update({"spread": spread} if sampler == "mma" else {"acceptance_target": acceptance})
    return _lognormal_result(run["pf"], run["cov"], level, run["history"], info)
