"""The batched L-BFGS (:mod:`surrogates.laplace.lbfgs`) step by step against a plain one of
the textbook (Nocedal & Wright, Algorithm 7.4, one problem, NumPy), written here from the
module's notes: the same iterates after every iteration, not only the same minimum. The
minimum, the batch's independence and the subsets are in ``test_fit.py``."""
import numpy as np
import pytest
import torch

from surrogates.laplace import lbfgs
from surrogates.laplace.lbfgs import minimize


def _rosen_np(x):
    f = float((100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum())
    g = np.zeros_like(x)
    g[:-1] += -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return f, g


def _batched(one):
    """The batched objective, ``x`` (K, P) -> (f (K,), g (K, P)), of ``one`` row's NumPy
    ``(f, g)``: the same numbers as the reference takes."""
    def fun(x):
        out = [one(row) for row in x.numpy()]
        return (torch.tensor([f for f, _ in out], dtype=torch.float64),
                torch.tensor(np.array([g for _, g in out]), dtype=torch.float64))
    return fun


_rosen = _batched(_rosen_np)


RESTARTS = []  # the iterations where reference_lbfgs restarted
SKIPPED = []  # the iterations where it stored no pair (no positive curvature)


def reference_lbfgs(fun, x, iterations, history=20, c1=1e-4, max_halvings=30, scale=None):
    """Plain L-BFGS: the two-loop recursion over the pairs of the last ``history``
    iterations, newest first, ``H0 = (s.y / y.y) I`` of the newest (``1 / max(1, |g|)``
    with none, or ``scale(iteration, gamma)``), a pair kept where ``s.y > 1e-10 |s| |y|``,
    steepest descent with a cleared history where ``-H g`` does not descend, and halvings of
    a unit step until Armijo holds. Returns the iterate after each iteration."""
    f, g = fun(x)
    pairs, path = [], []  # (iteration, s, y), oldest first
    for it in range(iterations):
        pairs = [p for p in pairs if p[0] > it - 1 - history]
        q, alphas = g.copy(), []
        for _, s, y in reversed(pairs):
            a = (s @ q) / (s @ y)
            alphas.append(a)
            q = q - a * y
        gamma = ((pairs[-1][1] @ pairs[-1][2]) / (pairs[-1][2] @ pairs[-1][2]) if pairs
                 else 1.0 / max(1.0, np.linalg.norm(g)))
        r = q * (gamma if scale is None else scale(it, gamma))
        for (_, s, y), a in zip(pairs, reversed(alphas)):
            r = r + s * (a - (y @ r) / (s @ y))
        d = -r
        if g @ d >= 0:
            pairs, d = [], -g / max(1.0, np.linalg.norm(g))
            RESTARTS.append(it)
        t = 1.0
        for _ in range(max_halvings + 1):
            f_t, g_t = fun(x + t * d)
            if np.isfinite(f_t) and f_t <= f + c1 * t * (g @ d):
                break
            t *= 0.5
        else:
            raise AssertionError("the reference's line search failed")
        s, y = t * d, g_t - g
        if s @ y > 1e-10 * np.linalg.norm(s) * np.linalg.norm(y):
            pairs.append((it, s, y))
        else:
            SKIPPED.append(it)
        x, f, g = x + t * d, f_t, g_t
        path.append(x)
    return path


@pytest.mark.parametrize("history", [20, 3])
def test_every_iterate_is_the_textbook_lbfgs_one(history):
    """Rosenbrock in 4-D from three starts, batched: after each of the first 20 iterations
    (the first to converge does at 25), every problem is where the plain algorithm is. A
    two-loop over the pairs in the wrong order, another pair for H0's scale, a first step
    other than 1 or a history that keeps other iterations' pairs leave it."""
    starts = np.array([[-1.2, 1.0, 0.5, 0.3], [0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 2.0, -1.0]])
    paths = [reference_lbfgs(_rosen_np, x0, 20, history=history) for x0 in starts]
    for k in (1, 2, 5, 12, 20):
        res = minimize(_rosen, torch.tensor(starts), max_iter=k, history=history)
        assert res.iterations.dtype == torch.int64 and res.iterations.tolist() == [k] * 3
        assert not res.converged.any()
        for j in range(3):
            np.testing.assert_allclose(res.x[j].numpy(), paths[j][k - 1], rtol=1e-10,
                                       atol=1e-12)


def test_a_direction_that_does_not_descend_restarts_that_problem_alone(monkeypatch):
    """In exact arithmetic ``-H g`` always descends (every stored pair has s.y > 0). A
    direction that does not (rounding; here H0's scale made -1e8 times its own for problems
    1 and 2 at iteration 4, which makes H negative definite) clears that problem's pairs and
    takes the steepest descent, scaled to a step of at most 1. No test had reached it: every
    line of the restart could be broken. Problems 1 and 2 must follow the textbook path with
    the same restart, and problem 0 its own."""
    flip = {"it": 0}
    initial_scale = lbfgs._initial_scale

    def negative_at_4(g, Y, rho, order, every):
        scale = initial_scale(g, Y, rho, order, every)
        if flip["it"] == 4:
            scale = scale.clone()
            scale[1:] = -1e8 * scale[1:]
        flip["it"] += 1
        return scale

    monkeypatch.setattr(lbfgs, "_initial_scale", negative_at_4)
    starts = np.array([[-1.2, 1.0, 0.5, 0.3], [2.0, 2.0, 2.0, -1.0], [0.0, 0.0, 0.0, 0.0]])
    RESTARTS.clear()
    res = minimize(_rosen, torch.tensor(starts), max_iter=12)
    own = reference_lbfgs(_rosen_np, starts[0], 12)[-1]
    restarted = [reference_lbfgs(_rosen_np, x0, 12, scale=lambda it, gamma: -1e8 * gamma
                                 if it == 4 else gamma)[-1] for x0 in starts[1:]]
    assert RESTARTS == [4, 4]
    plain = reference_lbfgs(_rosen_np, starts[1], 12)[-1]
    np.testing.assert_allclose(res.x[0].numpy(), own, rtol=1e-10, atol=1e-12)
    for j in (1, 2):  # each scaled by its own gradient's norm
        np.testing.assert_allclose(res.x[j].numpy(), restarted[j - 1], rtol=1e-10,
                                   atol=1e-12)
    assert np.abs(restarted[0] - plain).max() > 1e-3  # the restart moved problem 1's path
    # and the restarted problem still converges, to the minimum at ones
    flip["it"] = 0
    done = minimize(_rosen, torch.tensor(starts[:2]), max_iter=3000)
    assert done.converged.all()
    np.testing.assert_allclose(done.x[1].numpy(), np.ones(4), atol=1e-6)


def test_one_iteration_is_a_valid_limit():
    res = minimize(_rosen, torch.tensor([[-1.2, 1.0]], dtype=torch.float64), max_iter=1)
    assert res.iterations.tolist() == [1] and not res.converged.any()


def _double_well_np(x):
    """sum (x_i^2 - 1)^2 + 0.3 sum x_i x_i+1: negative curvature about the origin."""
    f = float(((x ** 2 - 1) ** 2).sum() + 0.3 * (x[:-1] * x[1:]).sum())
    g = 4 * x * (x ** 2 - 1)
    g[:-1] += 0.3 * x[1:]
    g[1:] += 0.3 * x[:-1]
    return f, g


_double_well = _batched(_double_well_np)


def test_a_step_without_positive_curvature_stores_no_pair():
    """From near the double well's hump a step meets s.y <= 0: that pair is not stored (its
    slot is left empty, rho = 0), and the path goes on as the textbook's."""
    starts = np.array([[0.05, -0.1, 0.08], [0.3, 0.2, -0.25]])
    SKIPPED.clear()
    paths = [reference_lbfgs(_double_well_np, x0, 8) for x0 in starts]
    assert SKIPPED  # the reference met a step without positive curvature
    for k in (1, 2, 4, 8):
        res = minimize(_double_well, torch.tensor(starts), max_iter=k)
        assert not res.converged.any()
        for j in range(2):
            np.testing.assert_allclose(res.x[j].numpy(), paths[j][k - 1], rtol=1e-10,
                                       atol=1e-12)


def test_the_callback_sees_each_iteration_and_the_objective_test_stops_a_problem():
    """With ``gtol=0`` no gradient passes, so the objective's test stops each problem: its
    last accepted step changed f by at most ``ftol * max(1, |f|)`` (relative to f = 1e6
    here), every earlier one by more. The callback gets the iteration, every problem's f
    and which still run."""
    seen = []

    def offset(x):
        f, g = _rosen(x)
        return f + 1e6, g

    starts = torch.tensor([[-1.2, 1.0], [2.0, 2.0]], dtype=torch.float64)
    res = minimize(offset, starts, gtol=0.0, ftol=1e-12,
                   callback=lambda it, f, active: seen.append((it, f.clone(), active.clone())))
    assert res.converged.all() and [it for it, _, _ in seen] == list(range(len(seen)))
    for j in range(2):
        n = int(res.iterations[j])
        f = [float(starts_f) for starts_f in offset(starts)[0][j:j + 1]]
        f += [float(fs[j]) for _, fs, _ in seen[:n]]
        changes = np.abs(np.diff(f))
        limits = 1e-12 * np.maximum(1.0, np.abs(f[:-1]))
        assert changes[-1] <= limits[-1] and (changes[:-1] > limits[:-1]).all()
        assert bool(seen[n - 1][2][j]) is False and bool(seen[n - 2][2][j]) is True
        assert float(res.f[j]) == f[-1]


def test_a_line_search_that_fails_stops_that_problem_alone():
    """Problem 0's objective is finite only at its start: every trial step fails, and after
    ``max_halvings`` halvings (4 trials) it stops, unconverged, where it started; problem 1
    runs on to its minimum."""
    start = torch.tensor([[0.5, 0.5], [-1.2, 1.0]], dtype=torch.float64)
    trials = []

    def fun(x, idx):
        f, g = _rosen(x)
        at_start = (x == start[0]).all(1)
        wall = (idx == 0) & ~at_start
        trials.extend([1] * int(((idx == 0) & ~at_start).sum()))
        return torch.where(wall, torch.inf, f), g

    res = minimize(fun, start, max_iter=3000, max_halvings=3, subsets=True)
    assert res.converged.tolist() == [False, True] and len(trials) == 4
    assert torch.equal(res.x[0], start[0]) and int(res.iterations[0]) == 1
    np.testing.assert_allclose(res.x[1].numpy(), [1.0, 1.0], atol=1e-6)


def test_a_problem_stops_on_its_own_gradient_whatever_the_others():
    """|x|^2 from (1, 1): the first pair gives H0 = 1/2 I, its exact inverse Hessian, so the
    second step lands on 0 exactly and its gradient test stops it there, at iteration 2,
    while Rosenbrock beside it still has a large gradient."""
    def fun(x):
        f, g = _rosen(x)
        f[0], g[0] = (x[0] ** 2).sum(), 2 * x[0]
        return f, g

    res = minimize(fun, torch.tensor([[1.0, 1.0], [-1.2, 1.0]], dtype=torch.float64),
                   max_iter=3000)
    assert res.converged.all() and int(res.iterations[0]) == 2
    assert res.x[0].tolist() == [0.0, 0.0]
