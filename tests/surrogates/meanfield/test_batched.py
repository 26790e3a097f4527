"""The batched mean-field trainer: its hand-written gradient against autograd, batched fits
against single fits, members that do not leak into each other, persistence, bad input, the
fallback to the autograd trainer, and agreement in distribution with that trainer."""
import math

import numpy as np
import pytest
import torch

from surrogates import BDL, BDLClassifier, fit_many
from surrogates.meanfield import batched as mb
from surrogates.priors import DIRECT


def data(n, seed=0, d=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    Y = np.column_stack([np.sin(2 * X[:, 0]) + X[:, 1] ** 2, X[:, 0] * X[:, 1]])
    return X, Y + 0.05 * rng.normal(size=Y.shape)


FAST = dict(hidden=(8, 6), epochs=30, batch_size=8, lr=0.01, lr_step=10, progress=False)


@pytest.mark.parametrize("kind", ["normal", "laplace"])
def test_hand_written_gradient_matches_autograd(kind):
    torch.manual_seed(0)
    sizes, K, B = (3, 5, 4, 2), 2, 6
    layers, P = mb._layers(sizes)
    theta = torch.randn(K, 2, P) * 0.5
    theta[:, 1] -= 2.0
    log_tau = torch.randn(K, 2) * 0.3
    X, Y = torch.randn(K, B, 3), torch.randn(K, B, 2)
    eps = [torch.randn(K, B, o) for o in sizes[1:]]
    w = torch.full((K, B, 1), 1.0 / B)
    w[1, -2:] = 0.0  # a partial batch: two padded rows
    w[1, :-2] = 1.0 / (B - 2)
    klc = torch.tensor([[0.01], [0.02]])
    scale = torch.tensor([[1.0], [0.5]])
    loc = torch.tensor([[0.0], [0.3]])
    # reference: autograd through the same draws
    th, lt = theta.clone().requires_grad_(), log_tau.clone().requires_grad_()
    mu, s = th[:, 0], torch.nn.functional.softplus(th[:, 1])
    h = X
    for l, (a, o, i) in enumerate(layers):
        Wm, bm = mu[:, a:a + o * i].view(K, o, i), mu[:, a + o * i:a + o * i + o]
        Wv, bv = (s * s)[:, a:a + o * i].view(K, o, i), (s * s)[:, a + o * i:a + o * i + o]
        z = (h @ Wm.transpose(1, 2) + bm[:, None]
             + ((h * h) @ Wv.transpose(1, 2) + bv[:, None]).sqrt() * eps[l])
        h = torch.tanh(z) if l < len(layers) - 1 else z
    tau = lt.exp()
    nll = (w * (0.5 * tau[:, None] * (h - Y) ** 2 - 0.5 * (lt[:, None] - math.log(2 * math.pi)))
           ).sum((1, 2))
    c = mu - loc
    if kind == "normal":
        kl = 0.5 * ((s * s + c * c) / scale ** 2).sum(1) - torch.log(s).sum(1)
    else:
        z = c / s
        e_abs = s * math.sqrt(2 / math.pi) * torch.exp(-0.5 * z * z) + c * torch.erf(
            z / math.sqrt(2))
        kl = -torch.log(s).sum(1) + (e_abs / scale).sum(1)
    (nll + klc[:, 0] * kl).sum().backward()
    # the batched step, on the same draws
    grad, g_tau = torch.zeros_like(theta), torch.zeros_like(log_tau)
    x_in = torch.stack([X, X * X], 1).reshape(2 * K, B, 3)  # the minibatch's [x, x^2]
    closed = DIRECT[kind]  # the prior class owns the closed forms the step takes
    factor = closed.kl_gradient_factor(scale)
    step = mb._make_step(sizes, K, B, theta, log_tau.clone(), grad, g_tau, loc, True,
                         closed.add_kl_gradient_, True, False, None, None)
    step(x_in, Y, w, eps, klc * factor, klc, torch.empty(K, 2), torch.empty(K, 2))
    torch.testing.assert_close(grad, th.grad, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(g_tau, lt.grad, rtol=1e-4, atol=1e-6)


def test_batched_fit_equals_single_fits():
    sets = [data(40, 0), data(40, 1), data(40, 2)]
    settings = [dict(FAST, seed=3), dict(FAST, seed=4, lr=0.02, kl_weight=0.5),
                dict(FAST, seed=5, prior="normal(0, 0.5)", kl_anneal=5, lr_gamma=0.5)]
    batched = fit_many([BDL(**kw) for kw in settings], sets)
    x = data(30, 9)[0]
    for kw, (X, Y), m in zip(settings, sets, batched):
        single = BDL(**kw).fit(X, Y)
        assert single.trainer_ == m.trainer_ == "batched"
        g1, g2 = single.model_.guide, m.model_.guide
        torch.testing.assert_close(g1.mu, g2.mu, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(g1.sigma(), g2.sigma(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(single.predict(x), m.predict(x), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(single.history_["nll"], m.history_["nll"], rtol=1e-4)
    # different seeds give different fits
    assert not torch.allclose(batched[0].model_.guide.mu, batched[1].model_.guide.mu)


def test_members_with_different_data_sizes_do_not_leak(tmp_path):
    (X1, Y1), (X2, Y2) = data(50, 0), data(13, 1)
    kw = dict(FAST, seed=2)
    # member 0 alone, and beside a small member, a different one, and a NaN-free huge one
    alone = BDL(**kw).fit(X1, Y1)
    pair = fit_many([BDL(**kw), BDL(**dict(kw, epochs=7, seed=8))], [(X1, Y1), (X2, Y2)])
    other = fit_many([BDL(**dict(kw, seed=1)), BDL(**kw)], [(X2 * 10, Y2 * 3), (X1, Y1)])
    for m in (pair[0], other[1]):
        torch.testing.assert_close(m.model_.guide.mu, alone.model_.guide.mu, rtol=1e-5,
                                   atol=1e-5)
    small = BDL(**dict(kw, epochs=7, seed=8)).fit(X2, Y2)
    torch.testing.assert_close(pair[1].model_.guide.mu, small.model_.guide.mu, rtol=1e-5,
                               atol=1e-5)
    assert len(pair[1].history_["nll"]) == 7 and len(pair[0].history_["nll"]) == 30
    # a batched member saves and loads like a single fit
    path = tmp_path / "member.pt"
    pair[1].save(path)
    loaded = BDL.load(path)
    a = pair[1].predict_distribution(X2, seed=3)
    b = loaded.predict_distribution(X2, seed=3)
    assert np.array_equal(a.mean, b.mean) and np.array_equal(a.total_var, b.total_var)


def test_fit_many_bad_input():
    X, Y = data(20)
    with pytest.raises(ValueError, match="K = 0"):
        fit_many([], [])
    with pytest.raises(ValueError, match="features"):
        fit_many([BDL(**FAST), BDL(**FAST)], [(X, Y), (np.column_stack([X, X]), Y)])
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"member 1: X holds 1 NaN.*row 3"):
        fit_many([BDL(**FAST), BDL(**FAST)], [(X, Y), (bad, Y)])
    with pytest.raises(ValueError, match="member 0: y holds"):
        fit_many([BDL(**FAST)], [(X, np.where(Y > 0.5, np.inf, Y))])
    with pytest.raises(ValueError, match="2 data sets and 1 settings"):
        BDL.fit_many([(X, Y), (X, Y)], [dict(FAST)])


def test_fit_many_in_worker_processes_equals_one_process():
    """n_jobs splits each batched program (mean-field and Laplace) over worker processes; a
    member's fit does not depend on its batch-mates, so each equals its one-process fit."""
    X, Y = data(60)

    def members():
        return ([BDL(**dict(FAST, seed=s)) for s in range(3)]
                + [BDL(hidden=(6,), inference="laplace", max_iter=60, seed=s, progress=False)
                   for s in range(3)])

    sets = [(X[:40 + 5 * i], Y[:40 + 5 * i]) for i in range(3)] * 2
    one = fit_many(members(), sets)
    two = fit_many(members(), sets, n_jobs=2)
    for a, b in zip(one, two):
        assert getattr(a, "trainer_", None) == getattr(b, "trainer_", None)
        np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-6, atol=1e-7)
        sa, sb = a.predict(X, return_std=True)[1], b.predict(X, return_std=True)[1]
        np.testing.assert_allclose(sa, sb, rtol=1e-6, atol=1e-7)
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(ValueError, match=f"n_jobs={bad!r}"):
            fit_many(members()[:1], sets[:1], n_jobs=bad)


@pytest.mark.parametrize("kwargs", [dict(prior="cauchy(0, 1)"), dict(val_fraction=0.2),
                                    dict(map_epochs=3), dict(activation="relu"),
                                    dict(local_reparam=False), dict(trace_weights=2),
                                    dict(prior="hierarchical-normal")])
def test_unsupported_settings_fall_back_to_autograd(kwargs):
    X, Y = data(30)
    single = BDL(**dict(FAST, epochs=5), **kwargs).fit(X, Y)
    assert single.trainer_ == "autograd"
    many = fit_many([BDL(**dict(FAST, epochs=5), **kwargs), BDL(**dict(FAST, epochs=5))],
                    [(X, Y), (X, Y)])
    assert [m.trainer_ for m in many] == ["autograd", "batched"]
    # the fallback in a batch is the single fit
    np.testing.assert_array_equal(many[0].predict(X), single.predict(X))
    clf = BDLClassifier(hidden=(4,), epochs=3, progress=False).fit(X, Y[:, 0] > 0)
    assert clf.trainer_ == "autograd"


def test_point_mass_hierarchical_prior_batches_as_its_direct_prior():
    X, Y = data(30)
    a = BDL(**FAST, prior={"kind": "hierarchical", "base": "normal", "loc": 0.0, "alpha": 1.0,
                           "beta": 1.0, "point_mass": 0.25}).fit(X, Y)
    b = BDL(**FAST, prior="normal(0, 0.5)").fit(X, Y)
    assert a.trainer_ == "batched"
    torch.testing.assert_close(a.model_.guide.mu, b.model_.guide.mu)


def test_batched_and_autograd_trainers_agree_in_distribution():
    """Same objective, different random streams: over seeds, the fitted posterior's summary
    statistics (predictive mean at fixed inputs, mean log sigma, noise) agree within their
    seed-to-seed spread (Welch t-test)."""
    X, Y = data(48, 0)
    x = data(20, 5)[0]
    kw = dict(FAST, epochs=60)
    stats = {"batched": [], "autograd": []}
    for seed in range(8):
        m = BDL(**kw, seed=seed).fit(X, Y)
        a = BDL(**kw, seed=seed)
        Xv, Yv = a._prepare(X, Y)
        a._fit_autograd(Xv, Yv)
        assert m.trainer_ == "batched" and a.trainer_ == "autograd"
        for name, est in (("batched", m), ("autograd", a)):
            g = est.model_.guide
            stats[name].append([float(est.predict(x).mean()),
                                float(torch.log(g.sigma()).mean().detach()),
                                float(est.model_.likelihood.log_tau.mean()),
                                est.history_["nll"][-1]])
    s1, s2 = np.array(stats["batched"]), np.array(stats["autograd"])
    se = np.sqrt(s1.var(0, ddof=1) / len(s1) + s2.var(0, ddof=1) / len(s2))
    t = np.abs(s1.mean(0) - s2.mean(0)) / np.maximum(se, 1e-12)
    assert (t < 4.0).all(), (t, s1.mean(0), s2.mean(0))


@pytest.mark.parametrize("sizes,activation", [((5, 30, 15, 10, 3), "tanh"), ((2, 3), "tanh"),
                                              ((2, 6, 1), "relu")])
def test_prediction_draws_match_the_network_to_rounding(sizes, activation):
    from surrogates.meanfield.network import MeanFieldMLP

    guide = MeanFieldMLP(sizes, activation, init_std=0.3,
                         generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        w = guide.sample_weights(9, torch.Generator().manual_seed(1))
        x = torch.randn(33, sizes[0])
        torch.testing.assert_close(guide.forward_draws(x, guide.draw_weights(w)),
                                   guide.forward_weights(x, w), rtol=1e-5, atol=1e-5)
