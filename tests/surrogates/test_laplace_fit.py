"""The batched trainer: L-BFGS for K problems, the stacked network's derivatives, the Laplace
posterior against an exact conjugate case, and BDL(inference="laplace") / fit_many."""
import math

import numpy as np
import pytest
import torch
from scipy import optimize

from surrogates import BDL, BDLClassifier, fit_many
from surrogates.laplace_fit import LaplacePosterior, fit, neg_log_prior, prior_precision
from surrogates.lbfgs import minimize
from surrogates.priors import make_prior
from surrogates.stacked import StackedMLP


def _rosen(x):
    x = x.detach().requires_grad_(True)
    f = (100 * (x[:, 1:] - x[:, :-1] ** 2) ** 2 + (1 - x[:, :-1]) ** 2).sum(1)
    (g,) = torch.autograd.grad(f.sum(), x)
    return f.detach(), g


def test_lbfgs_matches_scipy_and_is_independent_of_the_batch():
    x0 = torch.tensor([[-1.2, 1.0, 0.5, 0.3], [0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 2.0, -1.0]],
                      dtype=torch.float64)
    res = minimize(_rosen, x0, max_iter=3000)
    assert res.converged.all()
    for k in range(3):
        ref = optimize.minimize(optimize.rosen, x0[k].numpy(), jac=optimize.rosen_der,
                                method="L-BFGS-B", options={"gtol": 1e-10})
        assert abs(float(res.f[k]) - ref.fun) < 1e-8
        alone = minimize(_rosen, x0[k:k + 1], max_iter=3000)
        assert torch.equal(alone.x[0], res.x[k])  # the same path, alone or batched
        assert int(alone.iterations[0]) == int(res.iterations[k])


def test_lbfgs_rejects_bad_max_iter():
    with pytest.raises(ValueError, match="max_iter"):
        minimize(_rosen, torch.zeros(1, 2, dtype=torch.float64), max_iter=0)


@pytest.mark.parametrize("activation", ["tanh", "relu", "sigmoid", "softplus", "identity"])
def test_stacked_jacobian_and_tangents_against_autograd_and_finite_differences(activation):
    net = StackedMLP((3, 7, 5, 2), activation)
    w = net.init([4])[0]
    x = torch.randn(9, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    J = net.jacobian(w, x)
    ref = torch.func.jacrev(lambda v: net.forward_one(v, x))(w)
    assert torch.allclose(J, ref, atol=1e-12)
    dw = torch.randn(4, net.n_params, dtype=torch.float64)
    f, t = net.forward_tangent(w, x, dw)
    assert torch.allclose(f, net.forward_one(w, x))
    assert torch.allclose(t, torch.einsum("nkp,sp->snk", J, dw), atol=1e-12)
    h = 1e-6  # central differences along one direction
    fd = (net.forward_one(w + h * dw[0], x) - net.forward_one(w - h * dw[0], x)) / (2 * h)
    assert torch.allclose(t[0], fd, atol=1e-6)


def test_laplace_is_exact_for_a_linear_model():
    """A network without hidden layers is Bayesian linear regression: with the noise known,
    the Laplace posterior is the exact conjugate posterior."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = X @ np.array([0.7, -1.2]) + 0.3 + 0.2 * rng.normal(size=30)
    net = StackedMLP((2, 1))
    sigma, s0 = 0.2, 1.5
    post, = fit(net, [torch.as_tensor(X)], [torch.as_tensor(y[:, None])], "regression",
                [make_prior(f"normal(0, {s0})")], [0], noise_std=sigma, learn_noise=False)
    A = np.column_stack([X, np.ones(30)])  # layout: W (1 x 2) then b
    cov = np.linalg.inv(A.T @ A / sigma ** 2 + np.eye(3) / s0 ** 2)
    mean = cov @ A.T @ y / sigma ** 2
    assert np.allclose(post.w.numpy(), mean, atol=1e-8)
    assert np.allclose(post.marginal_std().numpy(), np.sqrt(np.diag(cov)), rtol=1e-8)
    draws = post.sample(200_000, torch.Generator().manual_seed(1)).numpy()
    assert np.allclose(np.cov(draws.T), cov, atol=3e-2 * np.abs(cov).max())


def test_evidence_scale_reaches_the_exact_type_2_maximum_likelihood():
    """Bayesian linear regression with known noise: refitting the MAP at the evidence scale
    until it settles (MacKay's iteration) gives the prior variance that maximises the exact
    marginal likelihood N(y; 0, s^2 A A^T + sigma^2 I), found here by a scalar optimiser."""
    from scipy import stats

    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = X @ np.array([0.8, -0.5, 0.3]) + 0.1 + 0.4 * rng.normal(size=40)
    A = np.column_stack([X, np.ones(40)])
    sigma = 0.4
    net = StackedMLP((3, 1))
    s = 1.0
    for _ in range(100):
        post, = fit(net, [torch.as_tensor(X)], [torch.as_tensor(y[:, None])], "regression",
                    [make_prior(f"normal(0, {s!r})")], [0], noise_std=sigma, learn_noise=False)
        c = post.evidence_scale()
        s = s / math.sqrt(c)
        if abs(c - 1) < 1e-10:
            break

    def neg_evidence(log_s2):
        cov = math.exp(log_s2) * A @ A.T + sigma ** 2 * np.eye(40)
        return -stats.multivariate_normal(np.zeros(40), cov).logpdf(y)

    best = optimize.minimize_scalar(neg_evidence, bounds=(-8, 4), method="bounded",
                                    options={"xatol": 1e-10})
    assert s ** 2 == pytest.approx(math.exp(best.x), rel=1e-6)


def test_the_evidence_scale_rescales_the_posterior_only():
    X, Y, Xt, _ = _smooth_problem()
    kw = dict(hidden=(8,), inference="laplace", max_iter=300, seed=0, progress=False)
    raw = BDL(**kw, laplace_prior_scale=1.0).fit(X, Y)
    ev = BDL(**kw).fit(X, Y)
    c = raw.laplace_.evidence_scale()
    assert raw.history_["prior_scale"] == 1.0
    assert ev.history_["prior_scale"] == pytest.approx(c, rel=1e-12) and c != 1.0
    # the MAP network and so the predictive mean are unchanged; the spread is rescaled
    assert np.array_equal(raw.predict(Xt), ev.predict(Xt))
    assert torch.allclose(ev.laplace_.marginal_std(),
                          raw.laplace_.rescaled(c).marginal_std(), rtol=1e-12)
    half = BDL(**kw, laplace_prior_scale=4.0).fit(X, Y)
    # G + D <= G + 4 D <= 4 (G + D): four times the prior precision shrinks each weight's
    # std by a factor in [1/2, 1]
    ratio = (half.laplace_.marginal_std() / raw.laplace_.marginal_std()).numpy()
    assert 0.5 - 1e-12 <= ratio.min() and ratio.max() <= 1.0 + 1e-12 and ratio.min() < 0.9


def test_hierarchical_penalty_is_the_integrated_prior():
    """-log p(w) of N(0, s) with s ~ IG(a, b), integrated numerically, against the closed form
    (up to a constant)."""
    from scipy import integrate

    prior = make_prior("hierarchical-normal(0, alpha=2, beta=0.5)")
    net = StackedMLP((2, 1))  # one layer of 3 weights
    ws = [np.array([0.1, -0.2, 0.3]), np.array([1.0, 0.5, -2.0])]

    def log_marginal(w):
        q = 0.5 * (w ** 2).sum()

        def integrand(s):
            return s ** (-1.5) * math.exp(-q / s) * s ** (-3.0) * math.exp(-0.5 / s)
        return math.log(integrate.quad(integrand, 0, np.inf)[0])

    closed = [float(neg_log_prior(prior, torch.tensor(w)[None], net.layers)[0]) for w in ws]
    numeric = [-log_marginal(w) for w in ws]
    assert closed[1] - closed[0] == pytest.approx(numeric[1] - numeric[0], rel=1e-6)
    d = prior_precision(prior, torch.tensor(ws[0]), net.layers)
    assert torch.allclose(d, torch.full((3,), (2 + 1.5) / (0.5 + 0.5 * (ws[0] ** 2).sum()),
                                        dtype=torch.float64))


def _smooth_problem():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(64, 3))
    Y = np.column_stack([np.sin(2 * X[:, 0]) + X[:, 1] ** 2, X[:, 0] * X[:, 2]])
    Xt = rng.uniform(-1, 1, size=(500, 3))
    Yt = np.column_stack([np.sin(2 * Xt[:, 0]) + Xt[:, 1] ** 2, Xt[:, 0] * Xt[:, 2]])
    return X, Y, Xt, Yt


def test_laplace_fits_a_smooth_problem_where_meanfield_does_not():
    from surrogates import metrics as M

    X, Y, Xt, Yt = _smooth_problem()
    lap = BDL(hidden=(20, 10), inference="laplace", prior="hierarchical-normal",
              max_iter=1500, seed=0).fit(X, Y)
    vi = BDL(hidden=(20, 10), epochs=300, batch_size=16, seed=0, progress=False).fit(X, Y)
    r2_lap = M.r2(Yt, lap.predict(Xt)).min()
    r2_vi = M.r2(Yt, vi.predict(Xt)).min()
    assert r2_lap >= 0.998, r2_lap  # 0.9989 / 0.9990 per output
    assert r2_vi < 0.999, r2_vi
    pred = lap.predict_distribution(Xt)
    lo, hi = pred.intervals[0.95]
    assert (M.coverage(Yt, lo, hi) > 0.8).all()


def test_fit_many_members_equal_single_fits_and_do_not_leak():
    X, Y, Xt, _ = _smooth_problem()
    kw = dict(hidden=(8,), inference="laplace", max_iter=300)
    datasets = [(X, Y), (X[:20], Y[:20]), (X[:40], Y[:40] * 3)]
    members = fit_many([BDL(seed=s, prior=p, **kw) for s, p in
                        ((0, "normal(0, 1)"), (1, "hierarchical-normal"), (2, "normal(0, 1)"))],
                       datasets)
    singles = [BDL(seed=s, prior=p, **kw).fit(*d) for (s, p), d in
               zip(((0, "normal(0, 1)"), (1, "hierarchical-normal"), (2, "normal(0, 1)")),
                   datasets)]
    for a, b in zip(members, singles):
        assert np.allclose(a.predict(Xt), b.predict(Xt), rtol=1e-9, atol=1e-9)
        assert a.history_ == b.history_
    # a member padded to 64 rows sees only its own 20: refit it with other batch-mates
    other = fit_many([BDL(seed=1, prior="hierarchical-normal", **kw), BDL(seed=5, **kw)],
                     [(X[:20], Y[:20]), (X * 2, -Y)])
    assert np.allclose(other[0].predict(Xt), members[1].predict(Xt), rtol=1e-9, atol=1e-9)
    # BDL.fit_many: one settings dict for all
    via_class = BDL.fit_many(datasets[:2], dict(kw, seed=0))
    assert np.allclose(via_class[0].predict(Xt), members[0].predict(Xt), rtol=1e-9, atol=1e-9)


def test_save_and_load_a_member(tmp_path):
    X, Y, Xt, _ = _smooth_problem()
    m = fit_many([BDL(hidden=(8,), inference="laplace", max_iter=200, seed=s) for s in (0, 1)],
                 [(X, Y), (X, Y[:, 0])])
    for i, model in enumerate(m):
        model.save(tmp_path / f"m{i}.pt")
        back = BDL.load(tmp_path / f"m{i}.pt")
        a, b = model.predict_distribution(Xt[:50]), back.predict_distribution(Xt[:50])
        assert np.array_equal(a.mean, b.mean) and np.array_equal(a.intervals[0.95][0],
                                                                  b.intervals[0.95][0])
        assert back.predict(Xt[:3]).shape == ((3, 2) if i == 0 else (3,))
        assert isinstance(back.posterior()[0]["weight_std"], np.ndarray)


def test_fit_many_bad_input():
    X, Y, _, _ = _smooth_problem()
    with pytest.raises(ValueError, match="K = 0"):
        fit_many([], [])
    with pytest.raises(ValueError, match="data set 1 has 2 features and data set 0 has 3"):
        fit_many([BDL(inference="laplace"), BDL(inference="laplace")],
                 [(X, Y), (X[:, :2], Y)])
    bad = Y.copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"member 1: y holds 1 NaN"):
        fit_many([BDL(inference="laplace"), BDL(inference="laplace")], [(X, Y), (X, bad)])
    with pytest.raises(ValueError, match="2 estimators and 1 data sets"):
        fit_many([BDL(), BDL()], [(X, Y)])


@pytest.mark.parametrize("settings, match", [
    (dict(inference="full"), "inference must be one of"),
    (dict(inference="laplace", max_iter=0), "max_iter must be an integer >= 1"),
    (dict(inference="laplace", prior="hierarchical-cauchy"), "hierarchical-cauchy"),
    (dict(inference="laplace", val_fraction=0.2), "val_fraction"),
    (dict(inference="laplace", device="meta"), "trains on the CPU"),
    (dict(inference="laplace", laplace_prior_scale=0), "laplace_prior_scale must be"),
    (dict(inference="laplace", laplace_prior_scale="marglik"), "got laplace_prior_scale='marg"),
    (dict(inference="laplace", laplace_prior_scale=float("nan")), "laplace_prior_scale must"),
])
def test_laplace_settings_are_validated(settings, match):
    X, Y, _, _ = _smooth_problem()
    with pytest.raises(ValueError, match=match):
        BDL(**settings).fit(X, Y)


def test_laplace_classifier_separates_two_blobs():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-1.5, 0.5, size=(40, 2)), rng.normal(1.5, 0.5, size=(40, 2))])
    y = np.repeat(["a", "b"], 40)
    clf = BDLClassifier(hidden=(8,), inference="laplace", max_iter=300).fit(X, y)
    assert (clf.predict(X) == y).mean() > 0.97
    p = clf.predict_proba(np.array([[0.0, 0.0], [-3.0, -3.0]]))
    assert np.allclose(p.sum(1), 1.0) and p[1, 0] > 0.9


def test_posterior_state_round_trip():
    post = LaplacePosterior(w=torch.zeros(3, dtype=torch.float64), log_tau=None,
                            precision=torch.ones(3, dtype=torch.float64),
                            basis=torch.eye(3, dtype=torch.float64)[:, :1],
                            eig=torch.tensor([3.0], dtype=torch.float64))
    back = LaplacePosterior.from_state(post.state())
    assert torch.equal(back.marginal_std(), torch.tensor([0.5, 1.0, 1.0], dtype=torch.float64))


def test_fit_many_fits_meanfield_members_one_by_one():
    X, Y, Xt, _ = _smooth_problem()
    kw = dict(hidden=(4,), epochs=20, batch_size=32, progress=False, seed=3)
    mixed = fit_many([BDL(**kw), BDL(inference="laplace", hidden=(4,), max_iter=50)],
                     [(X, Y), (X, Y)])
    single = BDL(**kw).fit(X, Y)
    assert np.array_equal(mixed[0].predict(Xt), single.predict(Xt))
    assert mixed[0].n_iter_ == 20 and mixed[1].n_iter_ <= 50
