"""Subset simulation (Au & Beck 2001) for small failure probabilities.

The failure event F = {g <= 0} is reached through nested events F_j = {g <= b_j} with
b_1 > b_2 > ... > b_m = 0, so that ``Pf = P(F_1) prod_j P(F_{j+1} | F_j)``. Level 0 is crude
Monte Carlo with N samples in standard normal space; b_1 is the p0-quantile of g (midway
between the N p0-th and the next smallest value), so that exactly N p0 samples lie in F_1.
Those seeds each start a Markov chain of 1 / p0 states (seed included) that stays in F_j and
has the standard normal density conditioned on F_j as its stationary law: the modified
Metropolis algorithm (component-wise) proposes ``xi_i = u_i + s eps_i`` (eps ~ N(0, 1), s the
``spread``), keeps each component with probability ``min(1, phi(xi_i) / phi(u_i))``, and
accepts the candidate only if g(candidate) <= b_j (else the chain repeats its state). One
step of all chains is one batched :func:`propagate` call (rows whose candidate equals the
current state are not rerun). The levels continue until the p0-quantile falls below 0; the
last conditional probability is the fraction of the last level's samples with g <= 0.

Coefficient of variation (Au & Beck 2001, eqs. 27-29): level 0 has
``delta_0^2 = (1 - p_0) / (N p_0)``; a level j >= 1 built from Nc chains of Ns states has
``delta_j^2 = (1 - p_j) / (N p_j) (1 + gamma_j)`` with the chain-correlation factor::

    gamma_j = 2 sum_{k=1}^{Ns-1} (1 - k / Ns) rho_j(k),    rho_j(k) = R_j(k) / R_j(0)
    R_j(k) = 1 / (N - k Nc) sum_chains sum_{l=1}^{Ns-k} I_l I_{l+k} - p_j^2

(I the indicator of the next level's event along a chain). The levels are treated as
uncorrelated, ``delta^2 = sum_j delta_j^2`` (Au & Beck's lower bound, reported as ``cov``;
fully correlated levels give the upper bound ``sum_j delta_j``, in ``info["cov_upper"]``; the
estimate is also biased by O(1/N)). The interval is lognormal: ``Pf exp(+- z sigma)``, ``sigma^2 =
ln(1 + delta^2)``, as Pf is a product of level probabilities and skewed to the right.

Reference: Au & Beck (2001), Probab. Eng. Mech. 16: 263-277.
"""
import math

import numpy as np
from scipy import special

from .evaluation import check_float, check_int


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


def _advance_chains(ls, rng, seeds, g_seeds, b, Ns, spread, tag):
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
    return U, G, accepted / max(proposed, 1)


def subset_simulation(ls, rng, n=1000, p0=0.1, spread=1.0, max_levels=20, level=0.95):
    """Subset simulation (see the module notes).

    Args:
        n: samples per level N (N p0 chains of 1 / p0 states; both must be integers).
        p0: conditional probability of each intermediate level, in (0, 0.5].
        spread: standard deviation of the component-wise Gaussian proposal.
        max_levels: intermediate levels allowed before giving up.
        level: confidence level of the lognormal interval.
    """
    n = check_int(n, "n", 10)
    p0 = check_float(p0, "p0", 0.0, 0.5, open_high=False)
    spread = check_float(spread, "spread", 0.0, 10.0)
    max_levels = check_int(max_levels, "max_levels", 1)
    level = check_float(level, "level", 0.0, 1.0)
    Nc = round(n * p0)
    if Nc < 1 or abs(n * p0 - Nc) > 1e-9 or n % Nc:
        raise ValueError(f"n * p0 must be a whole number of chains dividing n; got n={n}, "
                         f"p0={p0} (n * p0 = {n * p0:g})")
    Ns = n // Nc
    d = ls.inputs.dim
    U = rng.standard_normal((n, d))
    G = ls(U, tag="level-00")
    chains = None  # (Nc, Ns) chain layout of the current population (None at level 0)
    history, delta2, delta_sum, pf = [], 0.0, 0.0, 1.0
    for j in range(max_levels + 1):
        order = np.argsort(G, kind="stable")
        Gs = G[order]
        b = 0.5 * (Gs[Nc - 1] + Gs[Nc])
        final = b <= 0
        if final:
            b = 0.0
        inside = G <= b
        p = float(inside.mean())
        gamma = 0.0 if chains is None else chain_correlation(inside.reshape(chains), p)
        d2 = (1 - p) / (n * p) * (1 + gamma)  # p >= p0 > 0: at least N p0 rows lie below b
        delta2 += d2
        delta_sum += math.sqrt(d2)
        pf *= p
        history.append({"level": j, "threshold": float(b), "p": p, "gamma": gamma,
                        "cov": math.sqrt(d2), "model_runs": ls.runs})
        if final:
            break
        if j == max_levels:
            raise RuntimeError(f"subset simulation: {max_levels} levels did not reach g <= 0 "
                               f"(last threshold b = {b:.4g}); raise max_levels or check g")
        seeds = order[:Nc]
        Uc, Gc, acc = _advance_chains(ls, rng, U[seeds], G[seeds], b, Ns, spread,
                                      f"level-{j + 1:02d}")
        history[-1]["acceptance"] = acc
        U, G, chains = Uc.reshape(n, d), Gc.reshape(n), (Nc, Ns)
    cov = math.sqrt(delta2)
    z = special.ndtri(0.5 + level / 2)
    s = math.sqrt(math.log1p(delta2))
    ci = (pf * math.exp(-z * s), pf * math.exp(z * s))
    beta = float(-special.ndtri(pf))
    return dict(pf=pf, cov=cov, ci=ci, beta=beta, level=level, history=history,
                info={"n": n, "p0": p0, "levels": len(history), "spread": spread,
                      "cov_upper": delta_sum, "ci_kind": "lognormal"})
