"""Sampling estimators of Pf: crude Monte Carlo and importance sampling at the FORM design
point, with a fixed sample size or until a target coefficient of variation.

Monte Carlo (``"mc"``), fixed ``n``: ``Pf = m / n`` for m failures in n runs, CoV
``sqrt((1 - Pf) / (n Pf))`` and the exact binomial (Clopper-Pearson 1934) interval from beta
quantiles::

    lower = B^-1(a/2; m, n - m + 1),   upper = B^-1(1 - a/2; m + 1, n - m)

Monte Carlo to a target (``target_cov``, ``max_runs``): inverse binomial sampling (Haldane
1945). The draws are one stream; the runs stop at the r-th failure, r = ceil(2 + 1 /
target_cov^2), or at ``max_runs``. With N the index of the r-th failure::

    Pf = (r - 1) / (N - 1),      Var[Pf] <= Pf^2 (1 - Pf) / (r - 2)

is unbiased (the estimator of a closed sequential plan, Girshick, Mosteller & Savage 1946;
stopped at the budget with m < r failures in n = max_runs runs, ``Pf = m / n``, also
unbiased), and the bound on its variance (Mikulski & Smith 1976) is tight as Pf -> 0, where
N Pf ~ Gamma(r, 1): the reported ``cov = sqrt((1 - Pf) / (r - 2))`` is at most the target. A
plain ``m / n`` with a stopping rule on m would be biased upwards by about 1 / (r - 1) (8 % at
a target of 0.3). The interval is exact for the stopping rule: ``N <= n`` exactly when a
binomial(n, Pf) count reaches r, so::

    lower = B^-1(a/2; r, N - r + 1),   upper = B^-1(1 - a/2; r, N - r)

(at the budget, Clopper-Pearson's). The draws are run in batches (one model call each): the
first of ``n`` rows (default 1000); each next one aims at 60 % of the rows the missing
failures need at the rate seen so far, ``need = (r - m) n_spent / max(m, 1)``, with at least
``min(n, need)`` rows, at most ``batch`` and what the budget leaves. Rows of the last batch
after the r-th failure are run but unused (``info["unused_runs"]``): the price of batching an
inverse sampling plan. Aiming at the whole need left 19 % of the runs unused on the guide's
benchmark (``python benchmarks/bench_uq.py --only sampling-target``: Pf = 1.35e-3, target
0.1); aiming at 60 % leaves 0.7 %, in 6.3 batches on average (at most 13).

Importance sampling (``"is"``): draws of the standard normal density shifted to u*,
``h(u) = phi(u - u*)``, with weights ``w = phi(u) / h(u) = exp(-u . u* + |u*|^2 / 2)``;
``Pf = mean(1[g <= 0] w)``, its standard error from the sample variance of the weighted
indicators, and a normal-approximation interval ``Pf +- z se`` (clipped to [0, 1]). Where
FORM's beta < 0 (the origin fails, u* lies on the safe side's near edge and the safe domain
is the rare one) the draws estimate the complement, ``Pf = 1 - mean(1[g > 0] w)``, with the
standard error of the safe indicators, the interval one minus theirs (clipped to [0, 1]) and
``beta = Phi^-1(mean(1[g > 0] w))``; ``info["complement"]`` says so. Estimated directly, Pf
came out above 1 on such draws (1.26, beta NaN, interval (0.48, 2.03) for Pf = Phi(2.5));
now over 200 seeds (n = 2000): mean 0.99381 against 0.99379, CoV 2.5e-4 against a
reported 2.4e-4, coverage 0.945. To a target:
after the first n draws, batches of ``1.1 n_spent ((cov / target)^2 - 1)`` more draws (CoV
falls as 1 / sqrt(n)), pooled, until ``cov <= target_cov`` or the budget. ``max_runs`` counts
FORM's runs too, but FORM runs first and is not capped: where its runs leave less than the
first n draws, the call raises after them (pass ``form_result`` to reuse a FORM run, or a
``store``). Stopping on the estimated CoV leaves a bias of order 1 / n_spent, measured in
the guide's table of defaults.

Heavy weights. The standard error takes the weighted indicators' sample variance for their
variance: right where g is near linear about u*, optimistic where the failure domain reaches
far from u* towards the origin, whose few draws carry weights far above the rest. For
X0 + X1 > 12, X_i ~ Exp(1) (Pf = 8.0e-5; the failure domain's arms run along the axes), n =
1000: CoV 0.353 over 200 seeds against a mean reported 0.151, 95 % interval coverage 0.795
(to a target of 0.1, met on that estimate: 0.112 over the seeds, coverage 0.745); a
hyperplane at beta = 4.5 in 10-D, n = 2000: 0.053 against 0.051. The
check is Kish's effective sample size of the failing draws' weights, ``ESS = (sum w)^2 /
sum w^2`` (``info["ess"]``), as a share of the failing draws (``info["ess_ratio"]``). A
hyperplane at distance beta gives ``erfcx(beta / sqrt 2)^2 / erfcx(sqrt 2 beta)`` (its
failing draws lie at beta + s along alpha, s half-normal; 0.456 at beta = 3, 0.328 at 4.5,
about 1.6 / beta further out); under half of it at FORM's beta a warning says the CoV and
interval may be optimistic, and ``info["heavy_weights"]`` is True. Measured over 200 seeds:
hyperplanes (beta 3 and 4.5, 25 to 7000 failing draws) never warn (simulated ones with 10
failing draws in at most 1 %); the exponential sum (share 0.15, 0.12 and 0.08 against 0.36)
warns in 63 %, 80 % and 99 % of the seeds at n = 500, 1000 and 4000; a parabola bending
towards the origin, ``3 - u2 - 0.1 u1^2``, whose CoV is right (0.083 against 0.080), in
24 %. The seeds left unwarned on the exponential sum drew no heavy weight and their CoV is
the most optimistic (interval coverage 0.30 among them at n = 1000): the warning says that
the problem is one where the CoV cannot be trusted, not which seed's is wrong.

Both warn where the budget runs out before the target, naming the CoV reached, the target and
the runs spent (``info["target_met"]`` False).

References: Haldane (1945), Biometrika 33: 222-225. Girshick, Mosteller & Savage (1946), Ann.
Math. Stat. 17: 13-23. Mikulski & Smith (1976), Biometrika 63: 216-217.

Imports: numpy, scipy, :mod:`uqkit.validation` and the package's result and form modules.
"""
import math
import warnings

import numpy as np
from scipy import special, stats

from ..validation import check_float, check_int
from .form import _form_point
from .result import beta_of, check_target, clopper_pearson, warn_target_missed

__all__ = ["MC_MAX_RUNS", "IS_MAX_RUNS", "failures_for_cov", "hyperplane_ess_ratio",
           "monte_carlo", "importance_sampling"]

#: Monte Carlo's budget where only ``target_cov`` is given.
MC_MAX_RUNS = 1_000_000
#: Importance sampling's budget (FORM's runs included) where only ``target_cov`` is given.
IS_MAX_RUNS = 100_000
_MC_FIRST = 1000  # Monte Carlo's first batch to a target
_MC_AIM = 0.6  # the share of the rows still needed that its next batch runs
_IS_MARGIN = 1.1  # importance sampling's next batch: 10 % above the 1 / sqrt(n) prediction
_ESS_SHARE = 0.5  # heavy weights: an ESS share under half a hyperplane's (module notes)


def failures_for_cov(target_cov):
    """The failures r that inverse binomial sampling waits for: the least r >= 3 with
    ``1 / sqrt(r - 2) <= target_cov``.

    >>> failures_for_cov(0.3), failures_for_cov(0.1)
    (14, 102)
    """
    r = max(3, math.ceil(2 + 1 / target_cov ** 2))
    while r > 3 and 1 / math.sqrt(r - 3) <= target_cov:  # 1 / 0.1^2 rounds above 100
        r -= 1
    return r


def _target_settings(n, target_cov, max_runs, first, default_budget):
    """(target mode?, first batch, target, budget) from a sampler's arguments: ``n`` alone or
    nothing is a fixed sample; a target or a budget runs to it (a budget alone is spent)."""
    if target_cov is None and max_runs is None:
        return False, n, None, None
    target_cov, max_runs = check_target(target_cov, max_runs, default_budget)
    if target_cov is not None and target_cov < 1e-6:
        raise ValueError(f"target_cov={target_cov!r} would need over 1e12 runs; ask for 1e-6 "
                         "or more")
    return True, first if n is None else n, target_cov, max_runs


def monte_carlo(ls, rng, n=None, level=0.95, batch=1_000_000, target_cov=None, max_runs=None):
    """Crude Monte Carlo with an exact interval (see the module notes).

    Args:
        n: runs (default 100,000); with ``target_cov`` or ``max_runs``, the first batch's
            rows (default 1000).
        level: confidence level of the interval.
        batch: most rows in one model call.
        target_cov: run until the estimate's CoV is at most this (inverse binomial sampling;
            default none: a fixed n).
        max_runs: budget of model runs, never exceeded (default 1,000,000 where
            ``target_cov`` is given; alone, it is spent).
    """
    batch = check_int(batch, "batch", 1)
    level = check_float(level, "level", 0.0, 1.0)
    to_target, n, target, max_runs = _target_settings(n, target_cov, max_runs, _MC_FIRST,
                                                      MC_MAX_RUNS)
    n = check_int(100_000 if n is None else n, "n", 1)
    if to_target:
        return _monte_carlo_to_target(ls, rng, n, target, max_runs, level, batch)
    d = ls.inputs.dim
    failures = 0
    for b, start in enumerate(range(0, n, batch)):
        U = rng.standard_normal((min(batch, n - start), d))
        failures += int(np.count_nonzero(ls(U, tag=f"mc-{b:04d}") <= 0))
    return _fixed_mc_result(failures, n, level, stacklevel=4)


def _fixed_mc_result(failures, n, level, stacklevel):
    pf = failures / n
    ci = clopper_pearson(failures, n, level)
    if failures == 0:
        warnings.warn(f"no failure in n={n} Monte Carlo runs: pf = 0, with a {100 * level:g}% "
                      f"upper bound of {ci[1]:.3g}; use more runs or subset simulation",
                      UserWarning, stacklevel=stacklevel)
    cov = math.sqrt((1 - pf) / (n * pf)) if pf > 0 else math.inf
    return dict(pf=pf, cov=cov, ci=ci, beta=beta_of(pf), level=level,
                info={"n": n, "failures": failures})


def _monte_carlo_to_target(ls, rng, first, target, max_runs, level, batch):
    """Inverse binomial sampling in batches (module notes)."""
    r = None if target is None else failures_for_cov(target)
    d, spent, failures, size, b = ls.inputs.dim, 0, 0, min(first, max_runs, batch), 0
    stop_at = None  # the index (1-based) of the r-th failure
    while size > 0:
        fails = ls(rng.standard_normal((size, d)), tag=f"mc-target-{b:04d}") <= 0
        b += 1
        found = int(np.count_nonzero(fails))
        if r is not None and failures + found >= r:
            stop_at = spent + int(np.flatnonzero(fails)[r - failures - 1]) + 1
        spent += size
        failures += found
        if stop_at is not None:
            break
        if r is None:
            size = max_runs - spent
        else:
            need = (r - failures) * spent / max(failures, 1)
            size = max(math.ceil(_MC_AIM * need), min(first, math.ceil(need)))
        size = min(size, batch, max_runs - spent)
    info = {"target_cov": target, "max_runs": max_runs, "batches": b}
    if stop_at is None:  # the budget, spent: a fixed sample of max_runs rows
        out = _fixed_mc_result(failures, spent, level, stacklevel=5)
        out["info"].update(info, target_met=target is None, unused_runs=0)
        if target is not None:
            warn_target_missed("Monte Carlo", out["cov"], target, spent, max_runs,
                               stacklevel=4)
        return out
    pf = (r - 1) / (stop_at - 1)
    alpha = 1 - level
    ci = (float(stats.beta.ppf(alpha / 2, r, stop_at - r + 1)),
          float(stats.beta.ppf(1 - alpha / 2, r, stop_at - r)) if stop_at > r else 1.0)
    info.update(n=stop_at, failures=r, target_met=True, unused_runs=spent - stop_at,
                ci_kind="exact (inverse binomial)")
    return dict(pf=pf, cov=math.sqrt((1 - pf) / (r - 2)), ci=ci, beta=beta_of(pf),
                level=level, info=info)


def importance_sampling(ls, rng, n=None, level=0.95, form_result=None, target_cov=None,
                        max_runs=None, batch=1_000_000, **form_options):
    """Importance sampling around the FORM design point (see the module notes).

    Args:
        n: importance samples (default 2000; with ``target_cov`` or ``max_runs``, the
            first batch's).
        form_result: a FORM result to reuse (its runs are included in ``model_runs``);
            else FORM runs here with ``form_options``.
        target_cov: draw until the estimate's CoV is at most this (default none: a fixed n).
        max_runs: budget of model runs, FORM's included (default 100,000 where
            ``target_cov`` is given; alone, it is spent); the draws never exceed what FORM
            leaves of it, and FORM's own runs are not capped.
        batch: most draws in one model call to a target.
    """
    batch = check_int(batch, "batch", 1)
    level = check_float(level, "level", 0.0, 1.0)
    to_target, n, target, max_runs = _target_settings(n, target_cov, max_runs, 2000,
                                                      IS_MAX_RUNS)
    n = check_int(2000 if n is None else n, "n", 2)
    runs_at_start = ls.runs
    f, runs_before = _form_point(ls, form_result, form_options)
    ustar = f["design_point"]["u"]
    form_runs = runs_before + ls.runs - runs_at_start
    complement = bool(f["beta"] < 0)  # the origin fails: the safe domain is the rare one
    info = {"form_beta": f["beta"], "ci_kind": "normal approximation", "complement": complement}
    if to_target:
        if form_runs + n > max_runs:
            raise ValueError(f"max_runs={max_runs} does not cover FORM's {form_runs} runs and "
                             f"the first n={n} importance samples; raise max_runs or lower n "
                             "(form_result= reuses this FORM run)")
        batches = _weighted_to_target(ls, rng, ustar, n, target, max_runs - form_runs, batch,
                                      complement)
        info.update(target_cov=target, max_runs=max_runs)
    else:
        batches = [_weighted_indicators(ls, rng, ustar, n, "is", complement)]
    v = np.concatenate([w for w, _ in batches])
    failures = sum(m for _, m in batches)
    q, se, pf, cov = _estimate(v, complement)
    z = special.ndtri(0.5 + level / 2)
    lo, hi = max(q - z * se, 0.0), min(q + z * se, 1.0)
    if complement:  # Pf = 1 - q; beta = -Phi^-1(1 - q) = Phi^-1(q), without the rounding
        ci, beta = (1.0 - hi, 1.0 - lo), float(special.ndtri(q))
    else:
        ci, beta = (lo, hi), beta_of(pf)
    if q == 0:
        warnings.warn(f"no {'safe draw' if complement else 'failure'} among n={len(v)} "
                      f"importance samples: pf = {pf:g}; check the design point or raise n",
                      UserWarning, stacklevel=3)
    if to_target:
        info.update(target_met=target is None or cov <= target, batches=len(batches))
        if not info["target_met"]:
            warn_target_missed("importance sampling", cov, target, form_runs + len(v),
                               max_runs, stacklevel=3)
    info.update(n=len(v), failures=failures, **_weight_check(v, f["beta"], cov, complement))
    return dict(pf=pf, cov=cov, ci=(float(ci[0]), float(ci[1])), beta=beta, level=level,
                design_point=f["design_point"], alpha=f["alpha"], importance=f["importance"],
                history=f["history"], info=info, extra_runs=runs_before)


def hyperplane_ess_ratio(beta):
    """The share ESS / failing draws that importance sampling at the design point expects of a
    hyperplane at distance ``abs(beta)`` (module notes): ``erfcx(b / sqrt 2)^2 / erfcx(sqrt 2 b)``.

    >>> round(hyperplane_ess_ratio(3.0), 3), round(hyperplane_ess_ratio(4.5), 3)
    (0.456, 0.328)
    """
    b = abs(float(beta))
    return float(special.erfcx(b / math.sqrt(2)) ** 2 / special.erfcx(math.sqrt(2) * b))


def _estimate(v, complement):
    """(q, its standard error, pf, pf's CoV) of the weighted indicators v: q their mean, pf
    q, or 1 - q where they are the safe domain's."""
    q = float(v.mean())
    se = float(v.std(ddof=1) / math.sqrt(len(v)))
    pf = 1.0 - q if complement else q
    return q, se, pf, se / pf if pf > 0 else math.inf


def _weight_check(v, beta, cov, complement=False):
    """``info``'s ``ess``, ``ess_ratio`` and ``heavy_weights`` of the weighted indicators v
    (of the failing draws, or of the safe ones for the complement; module notes); warns
    where the weights are heavy."""
    m, what = int(np.count_nonzero(v)), "safe" if complement else "failing"
    if m == 0:
        return {"ess": 0.0, "ess_ratio": math.nan, "heavy_weights": False}
    ess = float(v.sum() ** 2 / (v @ v))
    linear = hyperplane_ess_ratio(beta)
    heavy = ess / m < _ESS_SHARE * linear
    if heavy:
        warnings.warn(
            f"importance sampling: the weights of the {m} {what} draws are uneven (effective "
            f"sample size {ess:.0f}, {ess / m:.2f} of them, against {linear:.2f} on a "
            f"hyperplane at FORM's beta = {float(beta):.3g}): g is far from linear around the "
            f"design point, and the CoV {cov:.3g} and the interval may be optimistic (2.3 "
            "times on a measured case); use method='subset', or a larger n", UserWarning,
            stacklevel=4)
    return {"ess": ess, "ess_ratio": ess / m, "heavy_weights": bool(heavy)}


def _weighted_indicators(ls, rng, ustar, n, tag, complement=False):
    """(1[g <= 0] w, failures) of n draws around u*, or (1[g > 0] w, failures) for the
    complement (module notes)."""
    U = ustar + rng.standard_normal((n, len(ustar)))
    fails = ls(U, tag=tag) <= 0
    return (np.where(~fails if complement else fails,
                     np.exp(-U @ ustar + 0.5 * ustar @ ustar), 0.0),
            int(np.count_nonzero(fails)))


def _weighted_to_target(ls, rng, ustar, first, target, budget, batch, complement=False):
    """Batches of (weighted indicators, failures) until their pooled CoV meets the target or
    the budget (FORM's runs taken off) is spent; with no failure yet, the next batch doubles
    the draws."""
    batches, size, spent = [], min(first, batch), 0
    while size > 0:
        batches.append(_weighted_indicators(ls, rng, ustar, size,
                                            f"is-target-{len(batches):04d}", complement))
        spent += size
        cov = _estimate(np.concatenate([w for w, _ in batches]), complement)[3]
        if target is not None and cov <= target:
            break
        if target is None:
            want = budget - spent
        elif math.isfinite(cov):
            want = math.ceil(_IS_MARGIN * spent * ((cov / target) ** 2 - 1))
        else:  # no failure yet: double the draws
            want = spent
        size = min(want, batch, budget - spent)
    return batches
