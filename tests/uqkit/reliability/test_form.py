"""FORM and SORM against analytic limit states: hyperplanes (exact beta, design point and
importance factors), parabolas (exact curvatures, Breitung's closed form, the exact Pf by
quadrature) and the SORM formulas written out from the papers, one factor at a time.

Fast: a bare limit state in standard normal space (no model runner), a few milliseconds
each."""
import cmath
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, special, stats

from uqkit.inputs import RandomInputs
from uqkit.reliability import ConvergenceError, failure_probability
from uqkit.reliability.form import (ALGORITHMS, _with_gradient, form, sorm, sorm_formulas,
                                   tangent_basis)
from uqkit.reliability.problems import standard_normals


class Bare:
    """g of u without a model runner: counts the runs and records every batch's tag and size
    (the model runner's ``runs`` and its store's sub-directory names)."""

    def __init__(self, g, inputs):
        self.g, self.inputs, self.runs, self.calls = g, inputs, 0, []

    def __call__(self, U, tag=None):
        U = np.atleast_2d(U)
        self.runs += len(U)
        self.calls.append((tag, len(U)))
        return self.g(U)


class Recording(Bare):
    """A :class:`Bare` limit state that also keeps every batch's inputs and outputs."""

    def __init__(self, g, inputs):
        super().__init__(g, inputs)
        self.inputs_seen, self.outputs = [], []

    def __call__(self, U, tag=None):
        out = super().__call__(U, tag)
        self.inputs_seen.append(np.array(U))
        self.outputs.append(out)
        return out


def plane(a, beta, scale=1.0):
    """g = scale (beta - a . u / |a|): exact beta, alpha = a / |a|, u* = beta alpha."""
    a = np.asarray(a, dtype=float)
    return lambda U: scale * (beta - U @ a / np.linalg.norm(a))


def exact_parabola_pf(beta, kappa, nodes=60):
    """P[beta - u_n + sum_i kappa_i u_i^2 / 2 <= 0] = E[Phi(-beta - sum kappa_i u_i^2 / 2)]
    over the independent u_i: a tensor Gauss-Hermite rule (exact to ~1e-12 here)."""
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    grids = np.meshgrid(*[x] * len(kappa), indexing="ij")
    weights = np.prod(np.meshgrid(*[w] * len(kappa), indexing="ij"), axis=0)
    q = sum(k * g ** 2 / 2 for k, g in zip(kappa, grids))
    return float((weights * special.ndtr(-beta - q)).sum())


# -- FORM ----------------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["sqp", "hlrf"])
def test_form_on_a_tilted_hyperplane_is_exact_in_one_step(algorithm):
    """g = 2.5 (beta - a . u / |a|): one step of either algorithm from the origin lands on
    u* = beta a / |a|, with alpha = a / |a|, importance alpha_i^2, gradient norm 2.5 and
    Pf = Phi(-beta)."""
    a, beta, d = np.array([3.0, -1.0, 2.0]), 2.2, 3
    names = ("p", "q", "r")
    inputs = RandomInputs.from_spec({n: "normal(0, 1)" for n in names})
    ls = Bare(plane(a, beta, 2.5), inputs)
    r = form(ls, algorithm=algorithm)
    alpha = a / np.linalg.norm(a)
    assert r["beta"] == pytest.approx(beta, abs=1e-10)
    assert r["pf"] == pytest.approx(stats.norm.cdf(-beta), rel=1e-9)
    np.testing.assert_allclose(r["alpha"], alpha, atol=1e-10)
    np.testing.assert_allclose(r["design_point"]["u"], beta * alpha, atol=1e-10)
    np.testing.assert_allclose(r["design_point"]["x"], beta * alpha, atol=1e-10)
    assert list(r["importance"]) == list(names)
    np.testing.assert_allclose(list(r["importance"].values()), alpha ** 2, atol=1e-10)
    assert math.isnan(r["cov"]) and all(math.isnan(c) for c in r["ci"])
    info = r["info"]
    assert info["iterations"] == 1 and len(r["history"]) == 2
    assert info["gradient_norm"] == pytest.approx(2.5, rel=1e-8)
    assert abs(info["g"]) < 1e-9 and info["fd"] == "central" and info["fd_step"] == 1e-4
    assert info["algorithm"] == algorithm
    # the start: g(0) = 2.5 beta, on the alpha line (u = 0), relative |g| error 1
    h0, h1 = r["history"]
    assert h0["iteration"] == 0 and h0["g"] == pytest.approx(2.5 * beta)
    assert h0["beta"] == 0 and h0["u"] == [0.0] * d and h0["g_error"] == 1.0
    assert h0["u_error"] == 0 and h0["model_runs"] == 1 + 2 * d
    assert h1["iteration"] == 1 and h1["beta"] == pytest.approx(beta, abs=1e-10)
    np.testing.assert_allclose(h1["u"], beta * alpha, atol=1e-10)
    assert h1["g_error"] < 1e-9 and h1["u_error"] < 1e-9
    assert h1["model_runs"] == ls.runs == 2 * (1 + 2 * d)
    # one batch per gradient (g and its 2d points first), one run per line-search trial
    expected = {"hlrf": ["form-000", "form-001-step-00", "form-001"],
                "sqp": ["form-sqp-000", "form-sqp-001", "form-sqp-002"]}[algorithm]
    assert ls.calls == list(zip(expected, [1 + 2 * d, 1, 2 * d]))


def test_form_design_point_in_physical_space():
    """x = mu + sigma u for normal inputs: g = 10 - x1 - x2 with x1 ~ N(2, 1), x2 ~ N(3, 2)
    has beta = 5 / sqrt(5) and u* = beta (1, 2) / sqrt(5)."""
    inputs = RandomInputs.from_spec({"x1": "normal(2, 1)", "x2": "normal(3, 2)"})
    r = failure_probability(lambda X: 10 - X[:, 0] - X[:, 1], inputs, method="form",
                            executor="serial")
    beta = 5 / math.sqrt(5)
    u = beta * np.array([1.0, 2.0]) / math.sqrt(5)
    assert r.beta == pytest.approx(beta, rel=1e-8)
    np.testing.assert_allclose(r.design_point["u"], u, atol=1e-8)
    np.testing.assert_allclose(r.design_point["x"], [2 + u[0], 3 + 2 * u[1]], atol=1e-8)
    assert r.importance == pytest.approx({"x1": 0.2, "x2": 0.8}, abs=1e-8)


@pytest.mark.parametrize("algorithm, tags", [("hlrf", ("form-000", "form-001")),
                                             ("sqp", ("form-sqp-000", "form-sqp-002"))])
def test_form_forward_differences_cost_d_runs_per_gradient(algorithm, tags):
    d, beta = 4, 3.0
    ls = Bare(plane(np.arange(1.0, d + 1), beta), standard_normals(d))
    r = form(ls, fd="forward", fd_step=1e-6, algorithm=algorithm)
    assert r["beta"] == pytest.approx(beta, abs=1e-6)
    assert r["info"]["fd"] == "forward" and r["info"]["fd_step"] == 1e-6
    assert ls.calls[0] == (tags[0], 1 + d) and ls.calls[2] == (tags[1], d)
    # after the start, one run per line-search point and d per gradient, one at least per
    # iteration (SLSQP may ask for a gradient at a point it then does not report)
    sizes = [n for _, n in ls.calls[1:]]
    assert sorted(set(sizes)) == [1, d] and sizes.count(d) >= r["info"]["iterations"]


def test_finite_difference_gradients_of_a_quadratic():
    """g = u1^2 + 3 u1 u2 at (1, 2): exact gradient (2 u1 + 3 u2, 3 u1) = (8, 3). Central
    differences are exact for a quadratic; forward ones are off by h d2g/du2 / 2 = h."""
    ls = Bare(lambda U: U[:, 0] ** 2 + 3 * U[:, 0] * U[:, 1], standard_normals(2))
    u = np.array([1.0, 2.0])
    g0, grad = _with_gradient(ls, u, None, "central", 0.01, "t")
    assert g0 == 7.0 and isinstance(g0, float)
    np.testing.assert_allclose(grad, [8.0, 3.0], rtol=1e-10)
    assert ls.calls == [("t", 5)]
    g1, fwd = _with_gradient(ls, u, 7.0, "forward", 0.01, "f")
    assert g1 == 7.0 and ls.calls[-1] == ("f", 2)
    np.testing.assert_allclose(fwd, [8.0 + 0.01, 3.0], rtol=1e-10)
    g2, fwd2 = _with_gradient(ls, u, None, "forward", 0.01, "f2")
    assert g2 == 7.0 and ls.calls[-1] == ("f2", 3)
    np.testing.assert_allclose(fwd2, fwd, rtol=1e-12)


def test_form_start_on_the_design_point_needs_no_iteration():
    """g = 3 - u1 is 0 at u0 = (3, 0): converged at iteration 0 (|g(u0)| = 0 is scaled by 1,
    not by itself)."""
    ls = Bare(lambda U: 3.0 - U[:, 0], standard_normals(2))
    r = form(ls, u0=[3, 0])  # integers: the history holds floats all the same
    assert all(type(x) is float for x in r["history"][0]["u"])
    assert r["info"]["iterations"] == 0 and r["beta"] == 3.0 and r["history"][0]["g"] == 0
    assert r["history"][0]["g_error"] == 0 and ls.runs == 1 + 4
    assert r["pf"] == pytest.approx(special.ndtr(-3.0), rel=1e-14)
    # the start on the surface but off the alpha line: |g| is then measured against 1, and a
    # distance from the alpha line equal to tol is converged (<= tol)
    def g(U):
        return 3 - U[:, 0] + 0.25 * U[:, 1] ** 2

    r = form(Bare(g, standard_normals(2)), u0=[3.25, 1.0])
    assert r["history"][0]["g"] == 0 and r["info"]["iterations"] > 0
    for h in r["history"]:
        assert h["g_error"] == abs(h["g"])
    r = form(Bare(lambda U: 3.0 - U[:, 0], standard_normals(2)), u0=[3, 0.5], tol=0.5)
    assert r["info"]["iterations"] == 0 and r["history"][0]["u_error"] == 0.5
    # integer start points give the same float history as float ones
    assert all(type(x) is float for x in r["history"][0]["u"])
    assert type(r["beta"]) is float and r["design_point"]["u"].dtype == float
    # the start point is copied, not modified in place
    u0 = np.array([1.0, 0.0])
    form(Bare(lambda U: 3.0 - U[:, 0], standard_normals(2)), u0=u0)
    assert u0.tolist() == [1.0, 0.0]


def test_form_tolerance_governs_the_stopping_point():
    """g = 3 - u2 + (u1 - 0.5)^2 / 2 needs several iterations: every history entry before the
    last misses tol on |g| / |g0| or on the distance from the alpha line, the last meets
    both; a looser tol stops no later."""
    def g(U):
        return 3 - U[:, 1] + 0.5 * (U[:, 0] - 0.5) ** 2

    for tol, algorithm in ((1e-3, "hlrf"), (1e-6, "hlrf"), (1e-3, "sqp"), (1e-6, "sqp")):
        r = form(Bare(g, standard_normals(2)), tol=tol, algorithm=algorithm)
        hist = r["history"]
        assert len(hist) > 2 and r["info"]["iterations"] == len(hist) - 1
        assert hist[-1]["g_error"] <= tol and hist[-1]["u_error"] <= tol
        if algorithm == "hlrf":  # SQP stops on SLSQP's own, tighter test (ftol = tol^2 / 10)
            assert all(h["g_error"] > tol or h["u_error"] > tol for h in hist[:-1])
        for h in hist:
            assert h["g_error"] == pytest.approx(abs(h["g"]) / hist[0]["g"], rel=1e-12)
            assert h["beta"] <= np.linalg.norm(h["u"]) + 1e-12
    for algorithm in ALGORITHMS:
        loose = form(Bare(g, standard_normals(2)), tol=0.05, algorithm=algorithm)
        tight = form(Bare(g, standard_normals(2)), tol=1e-6, algorithm=algorithm)
        assert loose["info"]["iterations"] < tight["info"]["iterations"]


def test_form_line_search_halves_the_step_and_lowers_the_merit():
    """On the curved g of the test above, the full HL-RF step is rejected at least once; every
    accepted point lowers the merit |u|^2 / 2 + c |g| with the c of the step's start
    (c = 2 |u| / |grad| + 10), and every iteration tries at most max_halvings + 1 steps."""
    def g(U):
        return 3 - U[:, 1] + 0.5 * (U[:, 0] - 0.5) ** 2

    ls = Bare(g, standard_normals(2))
    r = form(ls, max_halvings=3, algorithm="hlrf")
    steps = [t for t, _ in ls.calls if "-step-" in t]
    assert any(t.endswith("step-01") for t in steps)
    assert not any(t.endswith("step-04") for t in steps)
    hist = r["history"]
    for a, b in zip(hist[:-1], hist[1:]):
        u, v = np.array(a["u"]), np.array(b["u"])
        grad = np.array([u[0] - 0.5, -1.0])
        c = 2 * np.linalg.norm(u) / np.linalg.norm(grad) + 10
        assert 0.5 * v @ v + c * abs(b["g"]) < 0.5 * u @ u + c * abs(a["g"])


def test_form_iteration_limit_and_its_error():
    """g = 1.5 + |u1 - 0.3| - 0 u2 is never <= 0: FORM stops at max_iter with max_iter + 1
    history entries (iterations 0 ... max_iter), default 100."""
    def g(U):
        return 1.5 + np.abs(U[:, 0] - 0.3) + 0 * U[:, 1]

    with pytest.raises(ConvergenceError, match=r"did not converge in max_iter=3 iterations "
                                               r"\(\|g\|/\|g0\| = [0-9.]+, distance from the "
                                               r"alpha line = [0-9.e-]+, tol=0\.0001\); raise "
                                               r"max_iter, loosen tol, start elsewhere "
                                               r"\(u0=\), or try algorithm='sqp'$") as err:
        form(Bare(g, standard_normals(2)), max_iter=3, algorithm="hlrf")
    assert [h["iteration"] for h in err.value.history] == [0, 1, 2, 3]
    with pytest.raises(ConvergenceError, match="max_iter=100 ") as err:
        form(Bare(g, standard_normals(2)), algorithm="hlrf")
    assert len(err.value.history) == 101


def test_form_line_search_stops_after_max_halvings():
    """g = 3 - u1 below u1 = 1 and 100 above: the HL-RF step always aims at u1 = 3, across
    the jump, so near u1 = 1 every trial is rejected until the halvings run out: at most
    max_halvings + 1 trials (k = 0 ... max_halvings; default 12), and the last is taken."""
    def g(U):
        return np.where(U[:, 0] < 1, 3 - U[:, 0], 100.0) + 0 * U[:, 1]

    for kwargs, most in (({}, 12), ({"max_halvings": 3}, 3)):
        ls = Bare(g, standard_normals(2))
        with pytest.raises(ConvergenceError):
            form(ls, max_iter=40, algorithm="hlrf", **kwargs)
        ks = [int(t.rsplit("-", 1)[1]) for t, _ in ls.calls if "-step-" in t]
        assert max(ks) == most


def replay_line_search(g, ls, hist, h=1e-4):
    """Replays FORM's Armijo line search from its recorded model runs (central-difference
    gradients from the recorded batches): for each iteration, every trial is
    u + 2^-k d with the HL-RF direction d = [(grad . u - g) / |grad|^2] grad - u, the trials
    before the accepted one fail m(trial) <= m(u) + 2^-k min(slope, 0) / 2 and the accepted
    one meets it (or is the last allowed), with m = |u|^2 / 2 + c |g|, c = 2 |u| / |grad|
    + 10 and slope = (u + c sign(g) grad) . d (the merit's directional derivative)."""
    d = len(hist[0]["u"])
    batches = {t: i for i, (t, _) in enumerate(ls.calls)}
    decisions = []
    for it, entry in enumerate(hist[:-1]):
        u, gu = np.array(entry["u"]), entry["g"]
        vals = ls.outputs[batches[f"form-{it:03d}"]][-2 * d:]
        grad = (vals[:d] - vals[d:]) / (2 * h)
        norm = np.linalg.norm(grad)
        direction = ((grad @ u - gu) / norm ** 2) * grad - u
        c = 2 * np.linalg.norm(u) / norm + 10
        merit = 0.5 * u @ u + c * abs(gu)
        slope = (u + c * np.sign(gu) * grad) @ direction
        k = 0
        while f"form-{it + 1:03d}-step-{k:02d}" in batches:
            i = batches[f"form-{it + 1:03d}-step-{k:02d}"]
            trial = u + 0.5 ** k * direction
            np.testing.assert_allclose(ls.inputs_seen[i][0], trial, rtol=1e-12, atol=1e-12)
            ok = 0.5 * trial @ trial + c * abs(ls.outputs[i][0]) <= (
                merit + 0.5 * 0.5 ** k * min(slope, 0.0))
            decisions.append(ok)
            k += 1
            if ok:
                break
        np.testing.assert_allclose(hist[it + 1]["u"], trial, rtol=1e-12, atol=1e-12)
    return decisions


@pytest.mark.parametrize("curvature, scale, u0", [(1.0, 1.0, None), (2.0, 1.0, None),
                                                 (0.5, 0.3, None), (0.5, 1.0, [1.5, 3.25])])
def test_form_line_search_follows_the_armijo_rule(curvature, scale, u0):
    """g = scale [3 - u2 + curvature (u1 - 0.5)^2 / 2] (the last one started on the surface,
    where g = 0 and sign(g) = 0; on the third, c's terms decide trials that a c one larger,
    or with |u| |grad| for |u| / |grad|, would decide otherwise): the line search, replayed
    from the model runs, takes the first trial that decreases the merit enough, and halves
    at least once."""
    def g(U):
        return scale * (3 - U[:, 1] + 0.5 * curvature * (U[:, 0] - 0.5) ** 2)

    ls = Recording(g, standard_normals(2))
    r = form(ls, u0=u0, algorithm="hlrf")
    if u0 is not None:
        assert r["history"][0]["g"] == 0
    decisions = replay_line_search(g, ls, r["history"])
    assert True in decisions and False in decisions


def test_form_refuses_bad_arguments_by_name():
    ls = Bare(lambda U: 3.0 - U[:, 0], standard_normals(2))
    cases = [({"u0": [1.0]}, r"u0 must be 2 finite numbers, got \[1\.0\]"),
             ({"u0": [0.0, np.inf]}, "u0 must be 2 finite numbers"),
             ({"fd": "backward"}, "unknown fd 'backward'; use 'central' or 'forward'"),
             ({"tol": 0.0}, "tol=0.0"), ({"tol": 1.0}, "tol=1.0"),
             ({"max_iter": 0}, "max_iter=0"), ({"fd_step": 1.0}, "fd_step=1.0"),
             ({"max_halvings": -1}, "max_halvings=-1")]
    for kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            form(ls, **kwargs)
    form(ls, max_halvings=0, max_iter=1)  # both limits' smallest values are allowed


def test_form_vanishing_gradient_names_the_point():
    ls = Bare(lambda U: 1.0 + 0 * U[:, 0], standard_normals(2))
    with pytest.raises(ConvergenceError, match=r"gradient of g vanishes at u=\[0\.0, 0\.0\] "
                                               r"\(iteration 0\)") as err:
        form(ls)
    assert err.value.history == []
    # g = 3 - u1 up to u1 = 2, flat (1) beyond: the first step lands on the flat part (the
    # Armijo rule accepts it: merit 4.5 + 10 <= 30 - 15), where the gradient vanishes
    flat = Bare(lambda U: np.where(U[:, 0] < 2, 3 - U[:, 0], 1.0), standard_normals(2))
    with pytest.raises(ConvergenceError, match=r"vanishes at u=\[(2\.99999|3\.0).*, 0\.0\] "
                                               r"\(iteration 1\); start elsewhere \(u0=\)") as err:
        form(flat, algorithm="hlrf")
    assert len(err.value.history) == 1 and err.value.history[0]["g"] == 3.0
    nan = Bare(lambda U: np.where(U[:, 0] > 0, np.nan, 1.0 - U[:, 0]), standard_normals(2))
    for algorithm in ALGORITHMS:
        with pytest.raises(ConvergenceError, match=r"g or its gradient is not finite at "
                                                   r"u=\[0\.0, 0\.0\] \(iteration 0; g = 1\.0\)"):
            form(nan, algorithm=algorithm)


# -- SORM ----------------------------------------------------------------------------------

def breitung(beta, kappa):
    return special.ndtr(-beta) * np.prod([(1 + beta * k) ** -0.5 for k in kappa])


def hohenbichler(beta, kappa):
    psi = stats.norm.pdf(beta) / stats.norm.cdf(-beta)
    return special.ndtr(-beta) * np.prod([(1 + psi * k) ** -0.5 for k in kappa])


def tvedt(beta, kappa):
    """Tvedt (1990) A1 + A2 + A3, each product written factor by factor (complex for A3)."""
    Phi, phi = stats.norm.cdf(-beta), stats.norm.pdf(beta)
    p1 = np.prod([(1 + beta * k) ** -0.5 for k in kappa])
    p2 = np.prod([(1 + (beta + 1) * k) ** -0.5 for k in kappa])
    p3 = 1.0
    for k in kappa:
        p3 *= 1 / cmath.sqrt(1 + (beta + 1j) * k)
    t = beta * Phi - phi
    return Phi * p1 + t * (p1 - p2) + (beta + 1) * t * (p1 - p3.real)


@pytest.mark.parametrize("beta, kappa", [(2.0, [0.1, -0.05]), (3.5, [0.3, 0.02, 0.15]),
                                         (1.2, [-0.2]), (4.0, [0.5, 0.5, 0.5, 0.5])])
def test_sorm_formulas_against_the_papers(beta, kappa):
    pf = sorm_formulas(beta, kappa)
    assert set(pf) == {"breitung", "hohenbichler", "tvedt"}
    assert pf["breitung"] == pytest.approx(breitung(beta, kappa), rel=1e-12)
    assert pf["hohenbichler"] == pytest.approx(hohenbichler(beta, kappa), rel=1e-12)
    assert pf["tvedt"] == pytest.approx(tvedt(beta, kappa), rel=1e-12)
    assert all(isinstance(v, float) for v in pf.values())


def test_sorm_formulas_against_the_exact_parabola():
    """Tvedt's formula is exact to O(1 / beta) and the closest of the three on a parabola
    with two curvatures of opposite signs; all three tend to the exact Pf as beta grows."""
    beta, kappa = 2.5, [0.25, -0.1]
    exact = exact_parabola_pf(beta, kappa)
    pf = sorm_formulas(beta, kappa)
    errors = {k: abs(v / exact - 1) for k, v in pf.items()}
    assert errors["tvedt"] < 0.01 and errors["tvedt"] < errors["hohenbichler"]
    assert errors["tvedt"] < errors["breitung"] < 0.1


def test_sorm_formulas_undefined_where_a_factor_is_not_positive():
    """1 + beta kappa = 0 (beta = 2, kappa = -0.5): Breitung's and Tvedt's products are
    undefined (NaN, not inf); Hohenbichler-Rackwitz's (psi = 2.37) too. 1 + (beta + 1)
    kappa = 0 (beta = 3, kappa = -0.25) leaves only Tvedt undefined."""
    pf = sorm_formulas(2.0, [-0.5])
    assert all(math.isnan(v) for v in pf.values())
    pf = sorm_formulas(3.0, [-0.25])
    assert math.isnan(pf["tvedt"])
    assert pf["breitung"] == pytest.approx(breitung(3.0, [-0.25]), rel=1e-12)
    assert pf["hohenbichler"] == pytest.approx(hohenbichler(3.0, [-0.25]), rel=1e-12)
    psi = stats.norm.pdf(2.0) / stats.norm.cdf(-2.0)
    pf = sorm_formulas(2.0, [-1 / psi * 1.001])  # 1 + psi kappa < 0 < 1 + beta kappa
    assert math.isnan(pf["hohenbichler"]) and not math.isnan(pf["breitung"])
    pf = sorm_formulas(2.0, [0.1, -0.45])  # one bad factor of two
    assert math.isnan(pf["tvedt"]) and not math.isnan(pf["breitung"])
    # 1 + (beta + 1) kappa = 0.1 > 0: Tvedt is defined
    assert sorm_formulas(2.0, [-0.3])["tvedt"] == pytest.approx(tvedt(2.0, [-0.3]), rel=1e-12)
    # 1 + psi kappa = 0 exactly (beta = 2, kappa = -1 / psi): undefined, not infinite
    psi = math.exp(-2.0) / math.sqrt(2 * math.pi) / special.ndtr(-2.0)
    assert 1 + psi * (-1 / psi) == 0
    assert math.isnan(sorm_formulas(2.0, [-1 / psi])["hohenbichler"])


def test_sorm_formulas_far_in_the_tail_without_warnings():
    """At beta = 38 Phi(-beta) underflows to 0 while phi(beta) does not (psi = x / 0), at
    beta = 39 both do (0 / 0): every formula gives Pf = 0 or NaN quietly."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pf = sorm_formulas(38.0, [0.1, 0.2])
        assert pf["breitung"] == pf["hohenbichler"] == 0.0  # psi = inf: factors 0
        pf = sorm_formulas(39.0, [0.1, 0.2])
        assert pf["breitung"] == 0.0 and math.isnan(pf["hohenbichler"])


@pytest.mark.parametrize("alpha", [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.6, 0.0, -0.8],
                                   [0.5, 0.5, 0.5, 0.5], [1.0, 0.0]])
def test_tangent_basis_is_orthonormal_and_orthogonal_to_alpha(alpha):
    alpha = np.asarray(alpha)
    T = tangent_basis(alpha)
    d = len(alpha)
    assert T.shape == (d, d - 1)
    np.testing.assert_allclose(T.T @ T, np.eye(d - 1), atol=1e-12)
    np.testing.assert_allclose(T.T @ alpha, 0, atol=1e-12)


def rotated_parabola(beta, kappa, seed=3):
    """g(u) = beta - v_n + sum_i kappa_i v_i^2 / 2 with v = R u for a random rotation R: the
    principal axes are not the coordinate axes (nor the tangent basis's columns), so the
    Hessian has off-diagonal terms; u* = beta R^T e_n and the curvatures are kappa."""
    d = len(kappa) + 1
    R = stats.special_ortho_group.rvs(d, random_state=seed)
    k = np.asarray(kappa)

    def g(U):
        V = U @ R.T
        return beta - V[:, -1] + 0.5 * (V[:, :-1] ** 2) @ k

    return g, R


def test_sorm_curvatures_and_pf_on_a_rotated_parabola():
    beta, kappa = 2.5, [0.25, -0.1, 0.05]
    g, R = rotated_parabola(beta, kappa)
    d = len(kappa) + 1
    ls = Bare(g, standard_normals(d))
    r = sorm(ls)
    info = r["info"]
    np.testing.assert_allclose(info["curvatures"], sorted(kappa), atol=1e-5)
    np.testing.assert_allclose(r["design_point"]["u"], beta * R[-1], atol=1e-6)
    exact = exact_parabola_pf(beta, kappa, nodes=40)
    assert r["pf"] == pytest.approx(exact, rel=0.01)
    assert info["pf"]["tvedt"] == r["pf"] and info["formula"] == "tvedt"
    assert info["pf"]["breitung"] == pytest.approx(breitung(beta, kappa), rel=1e-4)
    assert info["pf_form"] == pytest.approx(special.ndtr(-beta), rel=1e-8)
    assert r["beta"] == pytest.approx(-special.ndtri(r["pf"]), rel=1e-12)
    assert info["hessian_step"] == 5e-3 and info["form_runs"] is None
    assert r["extra_runs"] == 0 and math.isnan(r["cov"]) and math.isnan(r["ci"][1])
    assert set(r["importance"]) == {f"u{i}" for i in range(d)}
    np.testing.assert_allclose(r["alpha"], R[-1], atol=1e-6)
    # the Hessian: 2 (d - 1) axial and 4 (d - 1)(d - 2) / 2 diagonal points, one batch
    m = d - 1
    assert ls.calls[-1] == ("sorm-hessian", 2 * m + 2 * m * (m - 1))
    assert r["history"][-1]["u_error"] <= 1e-4


def test_sorm_curvatures_of_an_asymmetric_scaled_surface():
    """g = 2.5 [beta - v_3 + sum_i kappa_i v_i^2 / 2 + v_1^3 / 2 - v_2^3 / 3] (v = R u): the
    cubic terms make g(u* + t) != g(u* - t) but leave the curvatures at u* = beta R^T e_3
    kappa; the factor 2.5 scales g's gradient and Hessian alike. FORM's options (here
    forward differences) reach the FORM run inside SORM."""
    beta, kappa = 2.0, [0.3, -0.15]
    R = stats.special_ortho_group.rvs(3, random_state=8)

    def g(U):
        V = U @ R.T
        return 2.5 * (beta - V[:, 2] + 0.5 * (V[:, :2] ** 2) @ kappa + V[:, 0] ** 3 / 2
                      - V[:, 1] ** 3 / 3)

    ls = Bare(g, standard_normals(3))
    r = sorm(ls, fd="forward", fd_step=1e-7)
    assert r["info"]["fd"] == "forward" and ls.calls[0] == ("form-sqp-000", 4)
    assert r["info"]["gradient_norm"] == pytest.approx(2.5, rel=1e-5)
    np.testing.assert_allclose(r["info"]["curvatures"], sorted(kappa), atol=1e-5)


def test_sorm_curvatures_off_the_surface():
    """The curvatures are the eigenvalues of H_tt / |grad| at the given point: from a FORM
    result whose point is off the surface (g = 0.1), g = 3 - u2 + 0.2 u1^2 + 0.1 u1 u3 has
    the constant Hessian H = [[0.4, 0, 0.1], [0, 0, 0], [0.1, 0, 0]], projected here on the
    plane orthogonal to alpha = -grad / |grad| by an independent orthonormal basis."""
    def g(U):
        return 3 - U[:, 1] + 0.2 * U[:, 0] ** 2 + 0.1 * U[:, 0] * U[:, 2]

    u = np.array([0.5, 3.0, 0.0])
    g_u = float(g(u[None])[0])
    grad = np.array([0.4 * u[0] + 0.1 * u[2], -1.0, 0.1 * u[0]])
    alpha = -grad / np.linalg.norm(grad)
    fields = {"beta": float(alpha @ u), "design_point": {"u": u, "x": u}, "alpha": alpha,
              "importance": {}, "history": [],
              "info": {"g": g_u, "gradient_norm": float(np.linalg.norm(grad))}}
    point = type("FormResult", (), dict(fields, model_runs=0))()
    r = sorm(Bare(g, standard_normals(3)), form_result=point)
    H = np.array([[0.4, 0, 0.1], [0, 0, 0], [0.1, 0, 0]])
    P = stats.ortho_group.rvs(3, random_state=0)[:, :2]
    P -= np.outer(alpha, alpha @ P)  # two vectors orthogonal to alpha, orthonormalised
    P, _ = np.linalg.qr(P)
    expected = np.linalg.eigvalsh(P.T @ H @ P / np.linalg.norm(grad))
    assert abs(g_u) == pytest.approx(0.05)
    np.testing.assert_allclose(r["info"]["curvatures"], expected, atol=1e-6)


def test_sorm_formula_choice_and_hessian_step():
    beta, kappa = 3.0, [0.2, 0.1]
    g, _ = rotated_parabola(beta, kappa, seed=5)
    for formula, ref in (("breitung", breitung), ("hohenbichler", hohenbichler)):
        r = sorm(Bare(g, standard_normals(3)), formula=formula, hessian_step=0.02)
        assert r["pf"] == pytest.approx(ref(beta, kappa), rel=1e-4)
        assert r["info"]["formula"] == formula and r["info"]["hessian_step"] == 0.02
        np.testing.assert_allclose(r["info"]["curvatures"], sorted(kappa), atol=1e-6)
    for kwargs, match in (({"formula": "exact"}, "unknown formula 'exact'; use 'hohenbichler', "
                                                 "'breitung' or 'tvedt'"),
                          ({"hessian_step": 1.0}, "hessian_step=1.0"),
                          ({"hessian_step": 0.0}, "hessian_step=0.0")):
        with pytest.raises(ValueError, match=match):
            sorm(Bare(g, standard_normals(3)), **kwargs)


def test_sorm_refuses_an_undefined_formula():
    """g = 3 - u2 - 0.28514 u1^2 / 2 (kappa = -0.28514, beta = 3): 1 + (beta + 1) kappa < 0,
    so Tvedt's formula is undefined there while Breitung's is not (the message rounds the
    curvatures to 4 decimals)."""
    def g(U):
        return 3 - U[:, 1] - 0.28514 / 2 * U[:, 0] ** 2

    with pytest.raises(ValueError, match=r"SORM tvedt: undefined for beta=3 and curvatures "
                                         r"\[-0\.2851\] \(1 \+ beta kappa <= 0\); use "
                                         r"sampling \(method='is' or 'subset'\)$"):
        sorm(Bare(g, standard_normals(2)))
    r = sorm(Bare(g, standard_normals(2)), formula="breitung")
    assert r["pf"] == pytest.approx(breitung(3.0, [-0.28514]), rel=1e-4)


def test_sorm_reuses_a_form_result():
    """With a FORM result, SORM spends only the Hessian's runs and three more (g at the design
    point and a step either side along alpha: the check that the result is this limit
    state's), and counts FORM's in."""
    beta, kappa = 2.0, [0.3, -0.2]
    g, _ = rotated_parabola(beta, kappa, seed=1)
    inputs = standard_normals(3)
    f = failure_probability(g, inputs, method="form", executor="serial")
    r = failure_probability(g, inputs, method="sorm", form_result=f, executor="serial")
    m = 2
    assert r.model_runs == f.model_runs + 2 * m + 2 * m * (m - 1) + 3
    assert r.info["form_runs"] == f.model_runs and r.info["computed_runs"] == 2 * m * m + 3
    assert r.info["iterations"] == f.info["iterations"] and r.history == f.history
    np.testing.assert_allclose(r.info["curvatures"], sorted(kappa), atol=1e-5)
    assert r.importance == f.importance and r.design_point["u"] is not None
    np.testing.assert_allclose(r.alpha, f.alpha)


# -- SQP ------------------------------------------------------------------------------------

def steep_parabola(U):
    """g = 3 - u2 + 2 (u1 - 0.5)^2: curvature about 4 at beta about 3 (kappa beta ~ 12)."""
    return 3 - U[:, 1] + 2 * (U[:, 0] - 0.5) ** 2


def steep_parabola_design_point():
    """u* from d|u|^2/du1 = 0 on u2 = 3 + 2 a^2, a = u1 - 0.5: 8 a^3 + 13 a + 0.5 = 0."""
    roots = np.roots([8, 0, 13, 0.5])
    a = float(roots[np.abs(roots.imag) < 1e-12].real[0])
    return np.array([a + 0.5, 3 + 2 * a * a])


def test_sqp_finds_the_design_point_where_hlrf_zigzags():
    """On a strongly curved parabola the improved HL-RF still misses tol after 100 iterations
    (over 500 runs); SQP reaches the exact design point (from the stationarity cubic) in a
    few dozen runs, with beta = |u*| and alpha the unit normal there."""
    with pytest.raises(ConvergenceError, match="or try algorithm='sqp'"):
        form(Bare(steep_parabola, standard_normals(2)), algorithm="hlrf")
    ls = Recording(steep_parabola, standard_normals(2))
    r = form(ls)  # SQP is the default
    ustar = steep_parabola_design_point()
    np.testing.assert_allclose(r["design_point"]["u"], ustar, atol=1e-6)
    assert r["beta"] == pytest.approx(np.linalg.norm(ustar), abs=1e-6)
    normal = np.array([-4 * (ustar[0] - 0.5), 1.0])
    np.testing.assert_allclose(r["alpha"], normal / np.linalg.norm(normal), atol=1e-5)
    assert ls.runs < 60 and r["info"]["algorithm"] == "sqp"
    last = r["history"][-1]
    assert last["g_error"] <= 1e-4 and last["u_error"] <= 1e-4
    assert [h["iteration"] for h in r["history"]] == list(range(len(r["history"])))
    runs = [h["model_runs"] for h in r["history"]]
    assert runs == sorted(runs) and runs[-1] <= ls.runs
    # every batch has a tag of its own (a store resumes), and no point is run twice
    tags = [t for t, _ in ls.calls]
    assert len(set(tags)) == len(tags) and all(t.startswith("form-sqp-") for t in tags)
    points = np.concatenate(ls.inputs_seen)
    assert len(np.unique(points, axis=0)) == len(points)


def test_sqp_agrees_with_hlrf_on_a_hyperplane_and_a_mild_parabola():
    """Where both converge they find the same point: a scaled hyperplane (exact beta and
    alpha) and the mild parabola of the tolerance test."""
    a = [1.0, -2.0, 0.5]
    g = plane(a, 2.5, scale=40.0)
    r = form(Bare(g, standard_normals(3)), algorithm="sqp")
    assert r["beta"] == pytest.approx(2.5, abs=1e-7)
    np.testing.assert_allclose(r["alpha"], np.array(a) / np.linalg.norm(a), atol=1e-7)

    def mild(U):
        return 3 - U[:, 1] + 0.5 * (U[:, 0] - 0.5) ** 2

    hl = form(Bare(mild, standard_normals(2)), tol=1e-7)
    sq = form(Bare(mild, standard_normals(2)), tol=1e-7, algorithm="sqp")
    np.testing.assert_allclose(sq["design_point"]["u"], hl["design_point"]["u"], atol=1e-6)


def test_sqp_without_a_design_point_raises_and_bad_algorithm_is_refused():
    def never(U):  # never <= 0
        return 1.5 + np.abs(U[:, 0] - 0.3) + 0 * U[:, 1]

    with pytest.raises(ConvergenceError, match=r"FORM did not converge \(SLSQP: Iteration "
                                               r"limit reached; max_iter=20\) \(\|g\|/\|g0\| = "
                                               r"0\.8[0-9]+, .*or try algorithm='hlrf'$") as err:
        form(Bare(never, standard_normals(2)), algorithm="sqp", max_iter=20)
    assert err.value.history
    with pytest.raises(ValueError, match=r"unknown algorithm 'newton'; use one of "
                                         r"\('hlrf', 'sqp'\)"):
        form(Bare(never, standard_normals(2)), algorithm="newton")


def test_sqp_through_failure_probability_sorm_and_importance_sampling():
    """algorithm= passes through SORM and importance sampling like FORM's other options;
    importance sampling at SQP's design point meets the exact Pf = E[Phi(-3 - 2 (u1 -
    0.5)^2)] (quadrature over u1) within its interval."""
    inputs = standard_normals(2)
    ustar = steep_parabola_design_point()
    r = failure_probability(steep_parabola, inputs, method="sorm", algorithm="sqp",
                            executor="serial")
    np.testing.assert_allclose(r.design_point["u"], ustar, atol=1e-6)
    exact = integrate.quad(lambda x: stats.norm.pdf(x) * special.ndtr(-3 - 2 * (x - 0.5) ** 2),
                           -np.inf, np.inf, epsabs=1e-14)[0]
    r = failure_probability(steep_parabola, inputs, method="is", algorithm="sqp", n=4000,
                            executor="serial", seed=1, level=0.99)
    np.testing.assert_allclose(r.design_point["u"], ustar, atol=1e-6)
    assert r.ci[0] < exact < r.ci[1] and r.cov < 0.1


def test_sqp_runs_gradients_only_at_accepted_iterates():
    """SLSQP's first trial step from the origin lands at u1 = 1.4, where this model fails
    (NaN); the line search backtracks, no gradient is run there, and the search reaches the
    exact design point. Every gradient batch (2d rows) is centred on a point SLSQP accepted,
    one that the history records."""
    def g(U):
        return np.where(U[:, 0] > 1, np.nan, steep_parabola(U))

    ls = Recording(g, standard_normals(2))
    r = form(ls)
    np.testing.assert_allclose(r["design_point"]["u"], steep_parabola_design_point(), atol=1e-6)
    recorded = {tuple(h["u"]) for h in r["history"]}
    centres = [tuple(x.mean(0)) for x in ls.inputs_seen if len(x) == 4]  # u +- h e_i
    assert centres and all(any(np.allclose(c, u, atol=1e-9) for u in recorded)
                           for c in centres)
    assert any(np.isnan(out).any() for out in ls.outputs)  # the trial point did fail


def test_sorm_where_the_mean_point_fails_is_the_complement_of_the_safe_sides():
    """beta < 0: the formulas hold for beta >= 0 only. Pf = 1 - P(u2 > 2 + 0.1 u1^2), whose
    exact value is an integral along u1; Tvedt gave 0.975 (FORM 0.977), Breitung 0.826."""
    from scipy import integrate, stats

    inputs = standard_normals(2)

    def g(X):  # fails below the parabola u2 = 2 + 0.1 u1^2: the origin fails
        return X[:, 1] - 2 - 0.1 * X[:, 0] ** 2

    exact = 1 - integrate.quad(lambda t: stats.norm.pdf(t) * stats.norm.sf(2 + 0.1 * t * t),
                               -12, 12, epsabs=1e-14)[0]
    r = failure_probability(g, inputs, method="sorm", executor="serial")
    assert r.beta < 0
    assert abs(r.pf / exact - 1) < 1e-3, (r.pf, exact)
    for name in ("breitung", "hohenbichler", "tvedt"):
        assert abs(r.info["pf"][name] / exact - 1) < 3e-3, (name, r.info["pf"], exact)


def test_sorm_in_one_dimension_is_forms_exact_answer():
    """There is no tangent direction: it ended in 'samples must hold at least one row'."""
    from scipy import stats

    inputs = RandomInputs.from_spec({"R": "lognormal(mu=1.0, sigma=0.2)"})
    r = failure_probability(lambda X: X[:, 0] - np.exp(0.4), inputs, method="sorm",
                            executor="serial")
    assert r.pf == pytest.approx(stats.norm.cdf(-3.0), rel=1e-6)
    assert len(r.info["curvatures"]) == 0


def test_a_form_result_of_another_limit_state_or_method_is_refused():
    """SORM took the design point of a beta = 2 limit state for a beta = 3 one: Pf 4.8e-5
    where it is 1.35e-3, without a word."""
    inputs = standard_normals(2)
    f2 = failure_probability(lambda X: 2 - X[:, 1] + 0.1 * X[:, 0] ** 2, inputs, method="form",
                             executor="serial")
    g3 = lambda X: 3 - X[:, 1] + 0.1 * X[:, 0] ** 2  # noqa: E731
    with pytest.raises(ValueError, match="form_result does not fit this limit state"):
        failure_probability(g3, inputs, method="sorm", form_result=f2, executor="serial")
    # through the same design point (0, 2), tilted: SORM gave Pf 1.0e-3 where it is 1.0e-2
    tilted = lambda X: 2 - X[:, 1] + 0.1 * X[:, 0] ** 2 + X[:, 0]  # noqa: E731
    with pytest.raises(ValueError, match="slopes along the surface at its design point"):
        failure_probability(tilted, inputs, method="sorm", form_result=f2, executor="serial")
    scaled = lambda X: 1000 * (2 - X[:, 1] + 0.1 * X[:, 0] ** 2)  # noqa: E731
    with pytest.raises(ValueError, match="g falls along alpha at 1000"):
        failure_probability(scaled, inputs, method="sorm", form_result=f2, executor="serial")
    mc = failure_probability(g3, inputs, method="mc", n=100, executor="serial")
    with pytest.raises(ValueError, match="got ReliabilityResult of method 'mc'"):
        failure_probability(g3, inputs, method="is", form_result=mc, executor="serial")
    with pytest.raises(ValueError, match="got int"):
        failure_probability(g3, inputs, method="sorm", form_result=5, executor="serial")
    with pytest.raises(ValueError, match="has 2 coordinates; this limit state has 3"):
        failure_probability(lambda X: 3 - X[:, 2], standard_normals(3), method="sorm",
                            form_result=f2, executor="serial")
    with pytest.raises(ValueError, match=r"its options \['tol'\] would be ignored"):
        failure_probability(g3, inputs, method="sorm", form_result=f2, tol=1e-3,
                            executor="serial")


def test_form_in_a_marginals_far_upper_tail_says_why_it_stalls():
    """R >= exp(1 + 0.2 * 6) of a lognormal R, Pf = Phi(-6): SLSQP's first step goes to
    u = 8 (its bound), beyond chaospy's support of the lognormal (it ends near u = 6.4),
    where g is constant. The error says so; HL-RF's shorter steps find the exact answer."""
    from scipy import stats

    inputs = RandomInputs.from_spec({"R": "lognormal(mu=1.0, sigma=0.2)"})

    def g(X):
        return np.exp(1 + 0.2 * 6) - X[:, 0]

    with pytest.raises(ConvergenceError, match="chaospy cuts some marginals' upper tails"):
        failure_probability(g, inputs, method="form", executor="serial")
    r = failure_probability(g, inputs, method="form", algorithm="hlrf", executor="serial")
    assert r.pf == pytest.approx(stats.norm.cdf(-6.0), rel=1e-4)


def test_a_sorm_or_json_result_reused_gives_the_same_answer_as_its_form_result():
    """A SORM result's beta is its own Pf's, not FORM's: reused, it gave Pf 13% off. A result
    rebuilt from its JSON ended in a TypeError."""
    import json

    from uqkit.reliability.result import ReliabilityResult

    inputs = standard_normals(3)
    g, _ = rotated_parabola(2.0, [0.3, -0.2], seed=1)
    f = failure_probability(g, inputs, method="form", executor="serial")
    s = failure_probability(g, inputs, method="sorm", form_result=f, executor="serial")
    again = failure_probability(g, inputs, method="sorm", form_result=s, executor="serial")
    assert again.pf == pytest.approx(s.pf, rel=1e-9)
    assert again.info["pf_form"] == pytest.approx(f.pf, rel=1e-12)
    rebuilt = ReliabilityResult(**json.loads(json.dumps(f.to_dict())))
    assert failure_probability(g, inputs, method="sorm", form_result=rebuilt,
                               executor="serial").pf == pytest.approx(s.pf, rel=1e-9)


def test_the_reuse_check_passes_coarse_finite_differences_and_refuses_a_tilt():
    """A review measured FORM's forward differences (fd_step 0.02, curvature 1.5) 1.1% off
    the check's central difference: a 1% tolerance refused this limit state's own result.
    The tolerance is 5% on the slopes, 1e-4 on g (a model's rounding)."""
    from uqkit.reliability.form import _check_design_point

    _check_design_point(2e-5, 1.03, np.array([0.02, -0.03]), 0.0, 1.0)  # passes
    with pytest.raises(ValueError, match="falls along alpha at 1.08"):
        _check_design_point(0.0, 1.08, np.array([0.0]), 0.0, 1.0)
    with pytest.raises(ValueError, match="slopes along the surface"):
        _check_design_point(0.0, 1.0, np.array([0.0, 0.08]), 0.0, 1.0)
    with pytest.raises(ValueError, match="g at its design point is 0.001"):
        _check_design_point(1e-3, 1.0, np.array([0.0]), 0.0, 1.0)
