"""The batched trainer: L-BFGS for K problems, the stacked network's derivatives, the Laplace
posterior against an exact conjugate case, and BDL(inference="laplace") / fit_many."""
import math

import numpy as np
import pytest
import torch
from scipy import optimize

from surrogates import BDL, BDLClassifier, fit_many
from surrogates.laplace import evidence
from surrogates.laplace.fit import LaplacePosterior, fit
from surrogates.laplace.lbfgs import minimize
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


def test_lbfgs_evaluates_only_the_problems_that_need_it_and_keeps_their_paths():
    x0 = torch.tensor([[-1.2, 1.0, 0.5, 0.3], [0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 2.0, -1.0],
                       [1.0, 1.0, 1.0, 1.0]], dtype=torch.float64)  # the last: at the minimum
    seen = []

    def rows_fun(x, idx):
        seen.append(idx.tolist())
        return _rosen(x)

    full = minimize(_rosen, x0, max_iter=3000)
    sub = minimize(rows_fun, x0, max_iter=3000, subsets=True)
    assert torch.equal(sub.x, full.x) and torch.equal(sub.iterations, full.iterations)
    assert sub.converged.all() and int(sub.iterations[3]) == 0
    assert seen[0] == [0, 1, 2, 3] and all(3 not in idx for idx in seen[1:])
    # line-search retrials and problems that have stopped are not evaluated
    assert sum(map(len, seen)) < 0.6 * 4 * len(seen)
    assert all(idx == sorted(set(idx)) for idx in seen)


def test_lbfgs_initial_scale_is_s_y_over_y_y_of_each_problems_newest_pair():
    """H0's scale against its definition, in both ways it is read: every problem's newest
    pair in the newest slot (the usual case), and problems whose newest slot is empty (their
    own newest pair lies further back, or they have none: 1 / max(1, |g|))."""
    from surrogates.laplace.lbfgs import _initial_scale

    gen = torch.Generator().manual_seed(0)
    m, K, P = 4, 3, 5
    S = torch.randn(m, K, P, dtype=torch.float64, generator=gen)
    Y = S + 0.3 * torch.randn(m, K, P, dtype=torch.float64, generator=gen)
    g = 3 * torch.randn(K, P, dtype=torch.float64, generator=gen)
    rho = 1 / (S * Y).sum(2)
    order = [2, 1, 0, 3]  # newest first
    every = torch.arange(K)

    def definition(newest):
        return torch.tensor([(S[j, k] @ Y[j, k]) / (Y[j, k] @ Y[j, k]) if j is not None
                             else 1 / max(1.0, float(g[k].norm()))
                             for k, j in enumerate(newest)], dtype=torch.float64)

    assert torch.allclose(_initial_scale(g, Y, rho, order, every), definition([2, 2, 2]),
                          rtol=1e-12)
    rho[2, 1] = 0.0  # problem 1 stored no pair in the newest slot: its newest is slot 1
    rho[:, 2] = 0.0  # problem 2 has none
    assert torch.allclose(_initial_scale(g, Y, rho, order, every), definition([2, 1, None]),
                          rtol=1e-12)


@pytest.mark.parametrize("setting, match", [
    ({"max_iter": 0}, r"max_iter must be an integer >= 1, got 0"),
    ({"max_iter": True}, r"max_iter must be an integer >= 1, got True"),
    # a history of 0 divided by zero, -1 halvings failed on None, 2.5 pairs ran as 2
    ({"history": 0}, r"history must be an integer >= 1, got 0"),
    ({"history": 2.5}, r"history must be an integer >= 1, got 2.5"),
    ({"max_halvings": -1}, r"max_halvings must be an integer >= 0, got -1"),
    ({"c1": 1.0}, r"c1 \(Armijo's constant\) must lie in \(0, 1\), got 1.0"),
    ({"c1": 0.0}, r"c1 \(Armijo's constant\) must lie in \(0, 1\), got 0.0"),
    ({"c1": "0.1"}, r"c1 \(Armijo's constant\) must lie in \(0, 1\), got '0.1'"),
])
def test_lbfgs_refuses_bad_settings_by_name(setting, match):
    with pytest.raises(ValueError, match=match):
        minimize(_rosen, torch.zeros(1, 2, dtype=torch.float64), **setting)


def test_lbfgs_takes_numpy_integers_for_its_counts():
    res = minimize(_rosen, torch.zeros(1, 2, dtype=torch.float64), max_iter=np.int64(3000),
                   history=np.int64(5), max_halvings=np.int32(30))
    assert res.converged.all()


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


def test_stacked_tanh_is_torch_tanh_to_rounding_with_its_derivative():
    from surrogates.stacked import tanh

    z = torch.linspace(-40.0, 40.0, 200_001, dtype=torch.float64)
    assert float((tanh(z) - torch.tanh(z)).abs().max()) <= 4e-16
    assert torch.equal(tanh(torch.tensor([-1e3, 1e3], dtype=torch.float64)),
                       torch.tensor([-1.0, 1.0], dtype=torch.float64))
    zs = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(tanh, (zs,))
    (g,) = torch.autograd.grad(tanh(zs).sum(), zs)
    assert torch.allclose(g, 1.0 - torch.tanh(zs) ** 2, rtol=0, atol=1e-15)


@pytest.mark.parametrize("n, d, form", [(30, 2, "factor"), (5, 20, "basis")])
def test_laplace_is_exact_for_a_linear_model(n, d, form):
    """A network without hidden layers is Bayesian linear regression: with the noise known,
    the Laplace posterior is the exact conjugate posterior, in the Cholesky form (many rows)
    and in the Gram eigen form (rows <= P / 2) alike."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.3 + 0.2 * rng.normal(size=n)
    net = StackedMLP((d, 1))
    sigma, s0 = 0.2, 1.5
    post, = fit(net, [torch.as_tensor(X)], [torch.as_tensor(y[:, None])], "regression",
                [make_prior(f"normal(0, {s0})")], [0], noise_std=sigma, learn_noise=False)
    assert getattr(post, form) is not None
    assert (post.factor is None) == (form == "basis")
    A = np.column_stack([X, np.ones(n)])  # layout: W (1 x d) then b
    cov = np.linalg.inv(A.T @ A / sigma ** 2 + np.eye(d + 1) / s0 ** 2)
    mean = cov @ A.T @ y / sigma ** 2
    assert np.allclose(post.w.numpy(), mean, atol=1e-8)
    assert np.allclose(post.marginal_std().numpy(), np.sqrt(np.diag(cov)), rtol=1e-8)
    draws = post.sample(200_000, torch.Generator().manual_seed(1)).numpy()
    assert np.allclose(np.cov(draws.T), cov, atol=3e-2 * np.abs(cov).max())
    # the Laplace evidence is the exact marginal likelihood N(y; 0, s0^2 A A^T + sigma^2 I)
    from scipy import stats

    exact = stats.multivariate_normal(np.zeros(n), s0 ** 2 * A @ A.T
                                      + sigma ** 2 * np.eye(n)).logpdf(y)
    assert post.log_evidence == pytest.approx(exact, rel=1e-10, abs=1e-9)
    back = LaplacePosterior.from_state(post.state())
    assert back.log_evidence == post.log_evidence
    assert torch.equal(back.sample(5, torch.Generator().manual_seed(2)),
                       post.sample(5, torch.Generator().manual_seed(2)))


def test_evidence_reaches_the_exact_type_2_maximum_likelihood():
    """Bayesian linear regression y = A w + noise: alternating the exact MAP with the evidence
    maximisation until both settle (MacKay's iteration) gives the prior variance s^2 and noise
    variance sigma^2 that maximise the exact marginal likelihood N(y; 0, s^2 A A^T + sigma^2 I),
    found here by a generic optimiser."""
    from scipy import stats

    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = X @ np.array([0.8, -0.5, 0.3]) + 0.1 + 0.4 * rng.normal(size=40)
    A = np.column_stack([X, np.ones(40)])
    s2, tau = 1.0, 1.0
    for _ in range(500):
        w = np.linalg.solve(tau * A.T @ A + np.eye(4) / s2, tau * A.T @ y)  # the exact MAP
        R = torch.as_tensor(A * math.sqrt(s2))  # whitened by the prior precision 1 / s2
        c, tau_new = evidence.maximise(R, torch.zeros(40, dtype=torch.long), [(0, 4)],
                                       torch.tensor([w @ w / s2]),
                                       torch.tensor([np.sum((y - A @ w) ** 2)]),
                                       torch.tensor([tau]), gtol=1e-12)
        s2, done = s2 / float(c[0]), abs(float(c[0]) - 1) < 1e-12
        done = done and abs(float(tau_new[0]) / tau - 1) < 1e-12
        tau = float(tau_new[0])
        if done:
            break

    def neg_evidence(logs):
        cov = math.exp(logs[0]) * A @ A.T + math.exp(logs[1]) * np.eye(40)
        return -stats.multivariate_normal(np.zeros(40), cov).logpdf(y)

    best = optimize.minimize(neg_evidence, [0.0, 0.0], method="Nelder-Mead",
                             options={"xatol": 1e-11, "fatol": 1e-14, "maxiter": 10_000})
    assert done
    assert s2 == pytest.approx(math.exp(best.x[0]), rel=1e-6)
    assert 1 / tau == pytest.approx(math.exp(best.x[1]), rel=1e-6)


@pytest.mark.parametrize("n, learn_noise, dual", [(6, False, True), (200, True, False)])
def test_evidence_per_tensor_and_output_maximises_the_laplace_evidence(n, learn_noise, dual,
                                                                       monkeypatch):
    """The fitted factors (and noise precisions) maximise log Z(c, tau), written out densely
    here (prior N(0, (C D)^-1), GGN sum_j tau_j J_j^T J_j) and maximised by a generic
    optimiser; the posterior covariance is the inverse of that Hessian. Both forms of the
    evidence: in data space by Woodbury (6 rows x 2 outputs: 12 GGN rows, at most half the
    32 weights) and in weight space. (This test had 12 rows for the first, which is 24 GGN
    rows: the weight-space form twice, an independent audit found.) The 6 rows take the
    noise as given: 32 weights interpolate them, and a learned noise precision grows without
    bound (1.8e9 at the 300th iteration: no optimum to test)."""
    forms = []
    init = evidence.LaplaceEvidence.__init__

    def record(self, *args, **kwargs):
        init(self, *args, **kwargs)
        forms.append(self.dual)

    monkeypatch.setattr(evidence.LaplaceEvidence, "__init__", record)
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(n, 2))
    Y = np.column_stack([np.sin(2 * X[:, 0]) * X[:, 1], X[:, 0] ** 2])
    Y = Y + 0.05 * rng.normal(size=Y.shape)
    net = StackedMLP((2, 6, 2))
    prior = make_prior("normal(0, 1)")
    post, = fit(net, [torch.as_tensor(X)], [torch.as_tensor(Y)], "regression", [prior], [0],
                noise_std=0.05, learn_noise=learn_noise, max_iter=300,
                prior_scales=["evidence"])
    assert forms and set(forms) == {dual}
    groups = net.tensors()
    w = post.w
    D = prior.laplace_precision(w, net.layers).numpy()
    J = net.jacobian(w, torch.as_tensor(X)).numpy()
    G = [J[:, j].T @ J[:, j] for j in range(2)]
    sse = ((Y - net.forward_one(w, torch.as_tensor(X)).numpy()) ** 2).sum(0)
    w = w.numpy()
    fixed_tau = np.exp(post.log_tau.numpy())
    assert learn_noise or np.allclose(fixed_tau, 1 / 0.05 ** 2)

    def neg_log_z(theta):
        cv = np.concatenate([np.full(b - a, math.exp(t)) for (a, b), t in zip(groups, theta)])
        tau = np.exp(theta[len(groups):]) if learn_noise else fixed_tau
        H = np.diag(cv * D) + tau[0] * G[0] + tau[1] * G[1]
        return -(0.5 * np.sum(np.log(cv * D)) - 0.5 * np.sum(cv * D * w ** 2)
                 - 0.5 * np.linalg.slogdet(H)[1] + 0.5 * np.sum(n * np.log(tau) - tau * sse))

    theta0 = np.zeros(len(groups) + (2 if learn_noise else 0))
    best = optimize.minimize(neg_log_z, theta0, method="Nelder-Mead",
                             options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 40_000,
                                      "maxfev": 40_000})
    theta = np.log(post.prior_scale)
    if learn_noise:
        theta = np.concatenate([theta, post.log_tau.numpy()])
    assert neg_log_z(theta) <= best.fun + 1e-6
    # stationary to evidence.maximise's gtol, 1e-3 (log Z can be flat in a group the data
    # determine, so theta itself is not compared)
    h = 1e-5
    grad = [(neg_log_z(theta + h * e) - neg_log_z(theta - h * e)) / (2 * h)
            for e in np.eye(len(theta))]
    assert np.abs(grad).max() < 1.1e-3
    cv = np.concatenate([np.full(b - a, c) for (a, b), c in zip(groups, post.prior_scale)])
    dense = np.linalg.inv(np.diag(cv * D) + fixed_tau[0] * G[0] + fixed_tau[1] * G[1])
    assert np.allclose(post.marginal_std().numpy(), np.sqrt(np.diag(dense)), rtol=1e-8)
    # the stored evidence is this log Z with the constants: the likelihood's 2 pi per row
    # (the prior's cancels against the Laplace volume's)
    assert post.log_evidence == pytest.approx(-neg_log_z(theta) - n * math.log(2 * math.pi),
                                              rel=1e-10)


def test_classification_evidence_and_posterior_against_the_dense_softmax_ggn():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=30) > 0).astype(np.int64) + (X[:, 1] > 1)
    net = StackedMLP((2, 4, 3))
    prior = make_prior("normal(0, 1)")
    post, = fit(net, [torch.as_tensor(X)], [torch.as_tensor(y)], "classification", [prior],
                [0], max_iter=300, prior_scales=["evidence"])
    groups = net.tensors()
    J = net.jacobian(post.w, torch.as_tensor(X)).numpy()
    p = torch.softmax(net.forward_one(post.w, torch.as_tensor(X)), -1).numpy()
    G = sum(J[i].T @ (np.diag(p[i]) - np.outer(p[i], p[i])) @ J[i] for i in range(30))
    D = prior.laplace_precision(post.w, net.layers).numpy()
    w = post.w.numpy()

    def neg_log_z(theta):
        cv = np.concatenate([np.full(b - a, math.exp(t)) for (a, b), t in zip(groups, theta)])
        return -(0.5 * np.sum(np.log(cv * D)) - 0.5 * np.sum(cv * D * w ** 2)
                 - 0.5 * np.linalg.slogdet(np.diag(cv * D) + G)[1])

    best = optimize.minimize(neg_log_z, np.zeros(len(groups)), method="Nelder-Mead",
                             options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20_000})
    theta = np.log(post.prior_scale)
    assert neg_log_z(theta) <= best.fun + 1e-6
    grad = [(neg_log_z(theta + 1e-5 * e) - neg_log_z(theta - 1e-5 * e)) / 2e-5
            for e in np.eye(len(theta))]
    assert np.abs(grad).max() < 1.1e-3
    cv = np.concatenate([np.full(b - a, c) for (a, b), c in zip(groups, post.prior_scale)])
    dense = np.linalg.inv(np.diag(cv * D) + G)
    assert np.allclose(post.marginal_std().numpy(), np.sqrt(np.diag(dense)), rtol=1e-8)
    log_lik = np.log(p[np.arange(30), y]).sum()
    assert post.log_evidence == pytest.approx(log_lik - neg_log_z(theta), rel=1e-10)


def test_the_evidence_changes_the_posterior_not_the_map():
    X, Y, Xt, _ = _smooth_problem()
    kw = dict(hidden=(8,), inference="laplace", max_iter=300, seed=0, progress=False)
    raw = BDL(**kw, laplace_prior_scale=1.0).fit(X, Y)
    ev = BDL(**kw).fit(X, Y)
    assert raw.history_["prior_scale"] == [1.0] * 4
    assert len(ev.history_["prior_scale"]) == 4
    assert not np.allclose(ev.history_["prior_scale"], 1.0)
    # the MAP network and so the predictive mean are unchanged; the spread and noise are not
    assert np.array_equal(raw.predict(Xt), ev.predict(Xt))
    assert torch.equal(raw.laplace_.w, ev.laplace_.w)
    assert not torch.allclose(raw.laplace_.log_tau, ev.laplace_.log_tau)
    # a saved and loaded model keeps its factors and predictions
    # a numeric factor is the prior's own precision, for the MAP as for the posterior: four
    # times normal(0, 1)'s is normal(0, 0.5)
    half = BDL(**kw, laplace_prior_scale=4.0).fit(X, Y)
    same = BDL(**{**kw, "prior": "normal(0, 0.5)"}, laplace_prior_scale=1.0).fit(X, Y)
    assert half.history_["prior_scale"] == [4.0] * 4
    assert np.allclose(half.predict(Xt), same.predict(Xt), rtol=1e-6, atol=1e-9)
    assert np.allclose(half.laplace_.marginal_std(), same.laplace_.marginal_std(), rtol=1e-6)
    assert half.log_evidence_ == pytest.approx(same.log_evidence_, rel=1e-9)


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

    closed = [float(prior.neg_log_density(torch.tensor(w)[None], net.layers)[0]) for w in ws]
    numeric = [-log_marginal(w) for w in ws]
    assert closed[1] - closed[0] == pytest.approx(numeric[1] - numeric[0], rel=1e-6)
    d = prior.laplace_precision(torch.tensor(ws[0]), net.layers)
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


def test_laplace_intervals_are_the_gaussian_predictive_quantiles():
    """The linearised network's predictive is Gaussian, N(mean, epistemic + aleatoric): its
    intervals are that Gaussian's quantiles (they were a mixture quantile of the draws, which
    only adds sampling noise), close to the mixture's when the draws are many."""
    from scipy.stats import norm

    from surrogates.prediction import mixture_interval

    X, Y, Xt, _ = _smooth_problem()
    lap = BDL(hidden=(8,), inference="laplace", max_iter=300, seed=0).fit(X, Y)
    lap.variance_scale_ = np.array([1.0, 2.5])  # recalibrated spread: scaled together
    pred = lap.predict_distribution(Xt[:200], n_samples=4000, levels=(0.9, 0.95),
                                    return_samples=True)
    for lv in (0.9, 0.95):
        half = norm.ppf(0.5 + lv / 2) * pred.std
        lo, hi = pred.intervals[lv]
        assert np.allclose(lo, pred.mean - half, rtol=1e-12, atol=1e-12)
        assert np.allclose(hi, pred.mean + half, rtol=1e-12, atol=1e-12)
        mlo, mhi = mixture_interval(pred.samples, np.sqrt(pred.aleatoric_var[0]), lv)
        for a, b in ((mlo, lo), (mhi, hi)):  # the mixture's sampling error: ~0.04 std
            gap = np.abs(a - b) / pred.std
            assert gap.max() < 0.2 and gap.mean() < 0.05, (gap.max(), gap.mean())


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


def test_members_of_one_size_equal_their_single_fits_bit_for_bit():
    """Three single-output members of 50 rows (50 x 8 numbers in the hidden layer, a whole
    multiple of 16) in one batched program. torch's batched matmul sums a one-output layer
    in another order for one network than for several, so a member differed from its single
    fit by 2e-15 per evaluation, 6e-3 in the predictions after 300 iterations."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (50, 2))
    Y = np.sin(3 * X[:, 0]) * X[:, 1]
    Xt = rng.uniform(-1, 1, (6, 2))
    kw = dict(hidden=(8,), inference="laplace", max_iter=300)
    specs = [dict(seed=0), dict(seed=2, prior="hierarchical-normal"), dict(seed=3)]
    data = [(X, Y), (X, 3 * Y), (X, Y + 5)]
    members = fit_many([BDL(**kw, **s) for s in specs], data)
    for member, spec, d in zip(members, specs, data):
        single = BDL(**kw, **spec).fit(*d)
        assert np.array_equal(member.predict(Xt), single.predict(Xt))
        assert member.history_ == single.history_
        assert member.log_evidence_ == single.log_evidence_


def test_members_with_alike_priors_share_one_prior_term(monkeypatch):
    """Each member has its own prior object; alike ones are evaluated together (one call per
    kind of prior and objective evaluation), with every member's fit as before."""
    from surrogates.laplace import fit as laplace_fit

    X, Y, Xt, _ = _smooth_problem()
    kw = dict(hidden=(8,), inference="laplace", max_iter=40)
    spec = ["normal(0, 1)", "hierarchical-normal", "normal(0, 1)", "hierarchical-normal",
            "normal(0, 2)"]
    from surrogates.priors import HierarchicalPrior, NormalPrior

    calls, evaluations = [], []
    real_objective = laplace_fit.map_objective

    def counted(cls):
        real = cls.neg_log_density_grad

        def grad(prior, w, layers):
            calls.append(repr(prior))
            return real(prior, w, layers)
        return grad

    def objective(*args, **kwargs):
        evaluations.append(len(calls))
        return real_objective(*args, **kwargs)

    for cls in (NormalPrior, HierarchicalPrior):
        monkeypatch.setattr(cls, "neg_log_density_grad", counted(cls))
    monkeypatch.setattr(laplace_fit, "map_objective", objective)
    members = fit_many([BDL(seed=s, prior=p, **kw) for s, p in enumerate(spec)],
                       [(X, Y)] * len(spec))
    assert evaluations[0] == 0 and calls[:3] == ["NormalPrior(loc=0.0, scale=1.0)",
                                                  "HierarchicalPrior(normal, loc=0.0, IG(1, 1))",
                                                  "NormalPrior(loc=0.0, scale=2.0)"]
    per_evaluation = np.diff(evaluations + [len(calls)])
    assert per_evaluation.max() == 3  # three kinds of prior, not five members
    monkeypatch.undo()
    for s, (p, m) in enumerate(zip(spec, members)):
        single = BDL(seed=s, prior=p, **kw).fit(X, Y)
        assert np.allclose(m.predict(Xt), single.predict(Xt), rtol=1e-9, atol=1e-9)
    assert laplace_fit.prior_key(make_prior("normal(0, 1)")) == laplace_fit.prior_key(
        make_prior("normal(0, 1)")) != laplace_fit.prior_key(make_prior("normal(0, 2)"))


def test_a_fit_on_the_default_device_runs_under_no_torch_function_mode(monkeypatch):
    """torch's device context intercepts every operation in Python (a third of a CPU fit's
    time): a fit on the device tensors are made on anyway runs without it, and a fit whose
    tensors must go elsewhere (the "meta" device here, standing in for a GPU) still gets
    it, so that the tensors it makes without a device land there."""
    from surrogates.laplace import fit as laplace_fit

    X, Y, _, _ = _smooth_problem()
    modes = []
    real_objective = laplace_fit.map_objective

    def objective(*args, **kwargs):
        modes.append(torch._C._len_torch_function_stack())
        return real_objective(*args, **kwargs)

    monkeypatch.setattr(laplace_fit, "map_objective", objective)
    BDL(hidden=(4,), inference="laplace", max_iter=5).fit(X, Y)
    assert modes and max(modes) == 0
    assert isinstance(laplace_fit._made_on(torch.device("meta")), torch.device)
    with laplace_fit._made_on(torch.device("meta")):
        assert torch.zeros(1).device.type == "meta"


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
        # the posterior function draws too, bit for bit (the membrane study's Monte Carlo
        # loads the UQ fit from its file)
        a, b = (m_.predict_distribution(Xt[:50], n_samples=20, return_samples=True, levels=())
                for m_ in (model, back))
        assert a.samples.shape[0] == 20 and np.array_equal(a.samples, b.samples)
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
    (dict(inference="laplace", device="meta"), "device must be 'auto', 'cpu' or 'cuda'"),
    (dict(device="cuda:x"), "device must be 'auto' or name a torch device"),
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


def test_an_unconverged_evidence_maximisation_says_so():
    rng = np.random.default_rng(5)
    R = torch.as_tensor(rng.normal(size=(40, 6)))
    rows = torch.arange(2).repeat(20)
    q = torch.tensor([3.0, 0.5], dtype=torch.float64)
    sse = torch.tensor([4.0, 9.0], dtype=torch.float64)
    ev = evidence.LaplaceEvidence(R, rows, [(0, 3), (3, 6)], q, sse)
    with pytest.warns(RuntimeWarning, match="not maximised: 1 Newton steps"):
        ev.newton(torch.ones(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64), True,
                  (1e-6, 1e6), 1e-12, max_iter=1)
    c, tau = ev.newton(torch.ones(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64),
                       True, (1e-6, 1e6), 1e-9)  # converges: no warning (pytest -W error)
    _, grad_c, grad_tau = ev(torch.log(c), torch.log(tau))
    assert max(grad_c.abs().max(), grad_tau.abs().max()) <= 1e-9


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_map_objective_gradient_matches_autograd(task, activation):
    """The hand-written MAP objective and backward pass against autograd of the objective
    written out (network forward, masked likelihood, each prior's log density), with padded
    rows, several priors in one batch and a Gamma noise prior."""
    from surrogates.laplace.fit import map_objective

    gen = torch.Generator().manual_seed(1)
    net = StackedMLP((3, 6, 4, 2), activation)
    K, N, P = 5, 9, net.n_params
    regression = task == "regression"
    k = 2 if regression else 0
    theta = torch.cat([net.init(range(K)) + 0.1 * torch.randn(K, P, dtype=torch.float64,
                                                               generator=gen),
                       torch.randn(K, k, dtype=torch.float64, generator=gen)], 1)
    X = torch.randn(K, N, 3, dtype=torch.float64, generator=gen)
    Y = (torch.randn(K, N, 2, dtype=torch.float64, generator=gen) if regression
         else torch.randint(0, 2, (K, N), generator=gen))
    mask = torch.ones(K, N, dtype=torch.float64)
    mask[1, 6:] = 0.0  # padding
    mask[3, 4:] = 0.0
    names = ["normal(0.1, 0.7)", "laplace(0, 0.5)", "cauchy(0, 1.5)", "hierarchical-normal",
             "hierarchical-laplace"]
    priors = [(make_prior(s), torch.tensor([i])) for i, s in enumerate(names)]
    noise_prior = (2.0, 0.5) if regression else None

    t = theta.clone().requires_grad_(True)
    f = net.forward(t[:, :P], X)
    if regression:
        lt = t[:, P:]
        nll = (0.5 * ((Y - f) ** 2 * mask[..., None]).sum(1) * torch.exp(lt)).sum(1) \
            - 0.5 * mask.sum(1) * lt.sum(1) - ((2.0 - 1.0) * lt - 0.5 * torch.exp(lt)).sum(1)
    else:
        nll = -(torch.log_softmax(f, -1).gather(2, Y[..., None])[..., 0] * mask).sum(1)
    pen = torch.stack([p.neg_log_density(t[rows, :P], net.layers)[0] for p, rows in priors])
    ref = (nll + pen) / mask.sum(1)
    (g_ref,) = torch.autograd.grad(ref.sum(), t)
    value, grad = map_objective(net, theta, X, Y, mask, priors, regression, noise_prior)
    torch.testing.assert_close(value, ref.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad, g_ref, rtol=1e-10, atol=1e-12)
    for p, rows in priors:  # each prior's gradient in closed form
        w = theta[rows, :P].clone().requires_grad_(True)
        (g,) = torch.autograd.grad(p.neg_log_density(w, net.layers).sum(), w)
        torch.testing.assert_close(p.neg_log_density_grad(theta[rows, :P], net.layers)[1], g)
    if regression:  # the noise held: no gradient in log tau, the same in the weights
        _, held = map_objective(net, theta, X, Y, mask, priors, regression, noise_prior,
                                learn=False)
        assert torch.equal(held[:, P:], torch.zeros(K, k, dtype=torch.float64))
        torch.testing.assert_close(held[:, :P], grad[:, :P])


def test_a_noise_prior_is_kept_by_the_evidence_step():
    """A Gamma prior pinning the noise std at 0.5 (standardised units; the data's is ~0.05):
    the MAP honours it, and the default evidence step kept it (it set the noise to 0.167,
    its type-II maximum-likelihood value, without a word)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (60, 1))
    y = np.sin(3 * X[:, 0]) + 0.05 * rng.normal(size=60)
    shape = 1e4  # Gamma(shape, rate) on the precision: mean shape / rate = 4, std 0.5
    model = BDL(hidden=(8,), inference="laplace", max_iter=400,
                noise_prior=(shape, shape / 4), progress=False).fit(X, y)
    noise_std = np.exp(-0.5 * model.laplace_.log_tau.numpy())
    assert noise_std == pytest.approx(0.5, rel=0.01)
    assert torch.equal(model.laplace_.log_tau, model.laplace_.map_log_tau)
    assert len(model.history_["prior_scale"]) == 4 and model.history_["prior_scale"] != [1.0] * 4


def _primal_evidence(seed, N=40, P=9):
    g = torch.Generator().manual_seed(seed)
    R = torch.randn(N, P, generator=g, dtype=torch.float64)
    q = torch.rand(3, generator=g, dtype=torch.float64) * 5 + 0.1
    sse = torch.rand(2, generator=g, dtype=torch.float64) * 20 + 5
    return evidence.LaplaceEvidence(R, torch.arange(N) % 2, [(0, 3), (3, 6), (6, 9)], q, sse)


def test_newtons_hessian_is_the_derivative_of_the_evidences_gradient():
    """The Hessian of log Z in log c that the P-space Newton steps by, against central
    differences of the gradient (the module docstring's formula, autograd-free)."""
    ev = _primal_evidence(0)
    assert not ev.dual
    log_c = torch.tensor([0.3, -0.7, 1.1], dtype=torch.float64)
    log_tau = torch.tensor([0.2, -0.4], dtype=torch.float64)
    c, tau = torch.exp(log_c), torch.exp(log_tau)
    _, Hi, trace_g, _ = ev._primal(c, tau)
    E = torch.zeros(3, ev.P, dtype=torch.float64)
    E[ev.index, torch.arange(ev.P)] = 1.0
    hess = ev.log_c_hessian(c, Hi, trace_g, E)
    h = 1e-5
    for g in range(3):
        step = torch.zeros(3, dtype=torch.float64)
        step[g] = h
        fd = (ev(log_c + step, log_tau)[1] - ev(log_c - step, log_tau)[1]) / (2 * h)
        np.testing.assert_allclose(hess[:, g].numpy(), fd.numpy(), rtol=1e-7, atol=1e-9)
    assert torch.linalg.eigvalsh(hess).max() < 0  # a maximum's neighbourhood here


@pytest.mark.parametrize("seed", range(4))
def test_newton_with_the_noise_fixed_converges_in_a_few_steps(seed, monkeypatch):
    """With the noise precisions fixed, the steps are Newton's on log c with the exact
    Hessian: 6-7 evaluations to a gradient of 1e-10 (measured over 8 seeds); a wrong
    Hessian or the fixed-point fallback alone converges linearly, in 15 or more. With the
    noise free, MacKay's update of tau converges linearly: 15-17 (the same seeds)."""
    for free, most in ((False, 8), (True, 20)):
        ev = _primal_evidence(seed)
        calls = []
        primal = ev._primal
        monkeypatch.setattr(ev, "_primal", lambda c, tau: calls.append(1) or primal(c, tau))
        c, tau = ev.newton(torch.ones(3, dtype=torch.float64),
                           torch.ones(2, dtype=torch.float64), free, (1e-6, 1e6), 1e-10)
        _, grad_c, grad_tau = ev(torch.log(c), torch.log(tau))
        assert grad_c.abs().max() <= 1e-10
        assert not free or grad_tau.abs().max() <= 1e-9
        assert len(calls) <= most, (free, len(calls))


def test_the_evidences_value_is_the_same_in_both_forms_and_its_gradient_its_derivative():
    """log Z(c, tau) in data space (Woodbury, N <= P / 2) equals the P-space form at the
    same point (the determinant lemma), and the gradient both return is the central
    difference of that value: what L-BFGS-B climbs in data space, and what the fits are
    ranked by."""
    g = torch.Generator().manual_seed(3)
    N, P = 8, 20
    R = torch.randn(N, P, generator=g, dtype=torch.float64)
    rows = torch.arange(N) % 2
    groups = [(0, 5), (5, 12), (12, 20)]
    q = torch.rand(3, generator=g, dtype=torch.float64) * 5 + 0.1
    sse = torch.rand(2, generator=g, dtype=torch.float64) * 20 + 5
    dual = evidence.LaplaceEvidence(R, rows, groups, q, sse)
    assert dual.dual
    primal = evidence.LaplaceEvidence(R, rows, groups, q, sse)
    primal.dual = False
    primal.blocks = torch.stack([R[rows == j].T @ R[rows == j] for j in range(2)])
    log_c = torch.tensor([0.3, -0.7, 1.1], dtype=torch.float64)
    log_tau = torch.tensor([0.2, -0.4], dtype=torch.float64)
    for ev in (dual, primal):
        value, grad_c, grad_tau = ev(log_c, log_tau)
        assert float(value) == pytest.approx(float(dual(log_c, log_tau)[0]), rel=1e-12)
        h = 1e-6
        for params, grad, which in ((log_c, grad_c, 0), (log_tau, grad_tau, 1)):
            for i in range(len(params)):
                step = torch.zeros_like(params)
                step[i] = h
                args = [log_c, log_tau]
                up, down = list(args), list(args)
                up[which], down[which] = params + step, params - step
                fd = (float(ev(*up)[0]) - float(ev(*down)[0])) / (2 * h)
                assert float(grad[i]) == pytest.approx(fd, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("N, P", [(8, 20), (40, 9)])  # data space, P space (Newton)
def test_a_prior_precision_beyond_its_bounds_stays_at_them_and_the_others_converge(N, P):
    """A group whose weights sit at the prior's mean (q about 0) has its optimum at c -> inf,
    one whose weights are far out (q huge) at c -> 0: each stops at its bound (1e6, 1e-6),
    its gradient pushing outwards, and the others reach their optimum. The P-space Newton
    stepped the bound factor off its bound and back through the Hessian's coupling, for 200
    steps, and warned that it had not converged."""
    import warnings

    g = torch.Generator().manual_seed(3)
    R = torch.randn(N, P, generator=g, dtype=torch.float64)
    rows = torch.arange(N) % 2
    groups = [(0, P // 3), (P // 3, 2 * P // 3), (2 * P // 3, P)]
    q = torch.tensor([1e-14, 1.0, 1e9], dtype=torch.float64)
    sse = torch.tensor([6.0, 9.0], dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "not maximised" fails the test
        c, tau = evidence.maximise(R, rows, groups, q, sse, gtol=1e-8)
    _, grad_c, grad_tau = evidence.LaplaceEvidence(R, rows, groups, q, sse)(torch.log(c),
                                                                            torch.log(tau))
    assert float(c[0]) == pytest.approx(1e6, rel=1e-12) and grad_c[0] > 0
    assert float(c[2]) == pytest.approx(1e-6, rel=1e-12) and grad_c[2] < 0
    assert abs(float(grad_c[1])) <= 1e-6 and grad_tau.abs().max() <= 1e-6
