"""L-BFGS for K independent problems at once.

``torch.optim.LBFGS`` (and ``pytorch-minimize``) minimise one scalar objective: given the sum of
K independent losses they would share one line search and one set of curvature pairs, so each
problem's path would depend on the others. :func:`minimize` keeps everything per problem (its
own history of (s, y) pairs, two-loop recursion, step length and convergence test), evaluated
in one batched call, so problem k follows the same path whether it is solved alone or with
others (tested). With ``subsets=True`` the objective is evaluated only for the problems that
need it: those still running and, within a line search, those whose step is not yet accepted
(in a batch of independent fits, a second trial step is typically needed by a few problems
only).

Each iteration: the two-loop recursion gives ``d = -H g`` (Nocedal & Wright, Algorithm 7.4,
with ``H0 = (s.y / y.y) I`` from the newest pair); a backtracking line search from step 1
halves the step of every problem whose Armijo condition ``f(x + t d) <= f(x) + c1 t g.d``
fails; a pair with ``s.y <= 1e-10 |s| |y|`` (no positive curvature) is not stored, and a
direction that is not a descent direction restarts that problem's history with ``-g``.

The package's other two L-BFGS are libraries', each where this one would not serve: the
evidence step (:mod:`surrogates.laplace.evidence`) maximises over a few bounded log-scales of
one network, which scipy's L-BFGS-B does with its box constraints (this one has none), and
the NN baseline (:class:`surrogates.NeuralNetwork`, ``optimizer="lbfgs"``) trains one network
with torch's strong-Wolfe L-BFGS, as a scikit-learn-like baseline would.

Imports: torch and :mod:`surrogates.validation`'s checks.

Example:
    >>> import torch
    >>> a = torch.tensor([[1.0], [3.0]], dtype=torch.float64)
    >>> def fun(x):
    ...     f = ((x - a) ** 2).sum(1) + (x ** 4).sum(1)
    ...     return f, 2 * (x - a) + 4 * x ** 3
    >>> res = minimize(fun, torch.zeros(2, 1, dtype=torch.float64))
    >>> [round(v, 6) for v in res.x[:, 0].tolist()], res.converged.tolist()
    ([0.589755, 1.0], [True, True])
"""
from dataclasses import dataclass

import torch

from ..validation import is_int, is_real

__all__ = ["BatchedResult", "minimize"]

vecdot = torch.linalg.vecdot  # row-wise dot products of (K, P) tensors


def _rows(values, idx, whole):
    """``values[idx]``, or ``values`` itself where idx is every row (``whole``)."""
    return values if whole else values[idx]


def _initial_scale(g, Y, rho, order, every):
    """Per problem, the scale gamma of the two-loop's ``H0 = gamma I``: ``s.y / y.y`` of its
    newest stored pair (``1 / (rho y.y)``), or ``1 / max(1, |g|)`` where it stores none.
    ``order``: the slots, newest first. Where every problem stored a pair in the newest slot
    (the usual case), that slot is read as it is, without gathering each problem's newest."""
    def without_pairs():  # 1 / max(1, |g|)
        return 1.0 / g.norm(dim=1).clamp_min(1.0)

    if not order:
        return without_pairs()
    newest, have = order[0], None  # have: None where every problem stored in the newest slot
    if bool((rho[newest] > 0).all()):
        y_new, rho_new = Y[newest], rho[newest]
    else:
        stored = rho[order] > 0  # (len(order), K), newest first
        slots = torch.tensor(order)[stored.to(torch.uint8).argmax(0)]  # (K,) slots
        have = stored.any(0)
        y_new, rho_new = Y[slots, every], rho[slots, every]
    scale = 1.0 / (rho_new.clamp_min(1e-300) * vecdot(y_new, y_new).clamp_min(1e-300))
    return scale if have is None else torch.where(have, scale, without_pairs())


@dataclass
class BatchedResult:
    """x: (K, P) minimisers; f: (K,) objective values; iterations: (K,) iterations each
    problem ran; converged: (K,) whether its gradient or objective test was met (False: the
    iteration limit or a failed line search stopped it)."""

    x: torch.Tensor
    f: torch.Tensor
    iterations: torch.Tensor
    converged: torch.Tensor


def minimize(fun, x0, max_iter=1000, history=20, gtol=1e-8, ftol=1e-12, c1=1e-4,
             max_halvings=30, callback=None, subsets=False):
    """Minimise K independent objectives from x0 (K, P).

    Args:
        fun: ``fun(x) -> (f, g)`` with f (K,) the K objectives at the rows of x and g (K, P)
            their gradients (problem k's objective may depend on row k only).
        max_iter: iterations per problem (an integer >= 1).
        history: stored (s, y) pairs per problem (an integer >= 1).
        gtol: a problem converges when ``max |g| <= gtol``;
        ftol: or when an accepted step changes f by at most ``ftol * max(1, |f|)``.
        c1: Armijo constant, in (0, 1).
        max_halvings: halvings of the step (an integer >= 0) before a problem's line search
            fails (that problem stops, unconverged).
        callback: optional ``callback(iteration, f, active)`` after every iteration.
        subsets: if True, ``fun(x, idx) -> (f, g)`` evaluates the problems ``idx`` (a sorted
            int64 tensor of row numbers) at x (len(idx), P) only, and is called for the
            problems that need an evaluation only.

    Returns:
        :class:`BatchedResult`.
    """
    for name, value, least in (("max_iter", max_iter, 1), ("history", history, 1),
                               ("max_halvings", max_halvings, 0)):
        if not is_int(value, least):
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    if not (is_real(c1) and 0.0 < c1 < 1.0):
        raise ValueError(f"c1 (Armijo's constant) must lie in (0, 1), got {c1!r}")
    x = x0.detach().clone()
    K, P = x.shape
    m = int(history)
    # pair slots are shared: iteration i writes slot i % m of every problem, and a problem
    # that stores no pair there marks the slot empty (rho = 0), so each problem's history
    # is its own while the two-loop indexes plain slices
    S = x.new_zeros(m, K, P)
    Y = x.new_zeros(m, K, P)
    rho = x.new_zeros(m, K)
    S_, Y_, rho_ = S.unbind(0), Y.unbind(0), rho.unbind(0)  # per slot: (K, P), (K,) views
    every = torch.arange(K)

    def evaluate(points, need):
        """(idx, f, g) at the rows idx of points: the rows ``need`` (subsets) or all."""
        if not subsets:
            return (every,) + tuple(fun(points))
        idx = every if bool(need.all()) else need.nonzero()[:, 0]
        return (idx,) + tuple(fun(points if len(idx) == K else points[idx], idx))

    _, f, g = evaluate(x, torch.ones(K, dtype=torch.bool))
    converged = g.abs().amax(1) <= gtol
    active = ~converged
    iterations = torch.zeros(K, dtype=torch.long)
    for it in range(max_iter):
        if not active.any():
            break
        # two-loop recursion, newest pair first (per pair: a row-wise dot product, its
        # scaling, a fused update; the slots' views are made once)
        q = g.clone()
        order = [(it - 1 - j) % m for j in range(min(it, m))]
        alpha = {}
        for idx in order:
            a = vecdot(S_[idx], q).mul_(rho_[idx])
            alpha[idx] = a
            q.addcmul_(Y_[idx], a.unsqueeze(1), value=-1.0)
        q *= _initial_scale(g, Y, rho, order, every)[:, None]
        for idx in reversed(order):
            b = vecdot(Y_[idx], q).mul_(rho_[idx])
            q.addcmul_(S_[idx], (alpha[idx] - b).unsqueeze(1))
        d = -q
        gd = (g * d).sum(1)
        restart = active & (gd >= 0)
        if restart.any():  # not a descent direction: forget the pairs, steepest descent
            rho[:, restart] = 0.0
            d[restart] = -g[restart] / g[restart].norm(dim=1, keepdim=True).clamp_min(1.0)
            gd = (g * d).sum(1)
        # backtracking line search, all problems evaluated together
        t = torch.where(active, 1.0, 0.0).to(x.dtype)
        pending = active.clone()
        x_new = None
        failed = torch.zeros(K, dtype=torch.bool)
        for _ in range(max_halvings + 1):
            trial = x + t[:, None] * d
            idx, ft, gt = evaluate(trial, pending)
            whole = len(idx) == K  # then idx is every row, and rows need no gathering
            ok = (_rows(pending, idx, whole) & torch.isfinite(ft)
                  & (ft <= _rows(f, idx, whole) + c1 * _rows(t, idx, whole)
                     * _rows(gd, idx, whole)))
            if x_new is None:
                if whole and bool(ok.all()):
                    # every problem takes its first trial step (the usual case): the
                    # trial is the new point, with no row copied
                    x_new, f_new, g_new = trial, ft.clone(), gt.clone()
                    break
                x_new, f_new, g_new = x.clone(), f.clone(), g.clone()
            acc = idx[ok]
            x_new[acc], f_new[acc], g_new[acc] = trial[acc], ft[ok], gt[ok]
            pending[acc] = False
            if not pending.any():
                break
            t = torch.where(pending, t * 0.5, t)
        else:
            failed = pending.clone()
        step = active & ~failed
        s_k = x_new - x
        y_k = g_new - g
        sy = (s_k * y_k).sum(1)
        store = step & (sy > 1e-10 * s_k.norm(dim=1) * y_k.norm(dim=1))
        slot = it % m
        S[slot] = torch.where(store[:, None], s_k, 0.0)
        Y[slot] = torch.where(store[:, None], y_k, 0.0)
        rho[slot] = torch.where(store, 1.0 / torch.where(store, sy, 1.0), 0.0)
        df = (f - f_new).abs()
        x, f_old, f, g = x_new, f, f_new, g_new
        iterations += active.long()
        now_conv = step & ((g.abs().amax(1) <= gtol) | (df <= ftol * f_old.abs().clamp_min(1.0)))
        converged |= now_conv
        active &= ~(now_conv | failed)
        if callback is not None:
            callback(it, f, active)
    return BatchedResult(x=x, f=f, iterations=iterations, converged=converged)
