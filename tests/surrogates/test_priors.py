"""Closed-form KLs against Monte Carlo; the point-mass hyperprior reproduces the direct prior."""
import math

import numpy as np
import pytest
from scipy import stats
import torch

from surrogates import BDL
from surrogates.priors import (CauchyPrior, HierarchicalPrior, LaplacePrior, NormalPrior, Prior,
                               make_prior)

LAYERS = [(0, 30), (30, 50)]


@pytest.fixture
def posterior():
    g = torch.Generator().manual_seed(0)
    mu = torch.randn(50, generator=g, dtype=torch.float64) * 0.7
    sigma = torch.rand(50, generator=g, dtype=torch.float64) * 0.3 + 0.05
    return mu, sigma


def _mc(prior, mu, sigma, reps=40, n=5000):
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        vals = torch.stack([prior.kl_monte_carlo(mu, sigma, LAYERS, n, g) for _ in range(reps)])
    return float(vals.mean()), float(vals.std() / math.sqrt(reps))


@pytest.mark.parametrize("prior", [NormalPrior(0, 1), NormalPrior(0.5, 0.1), LaplacePrior(0, 1),
                                   LaplacePrior(0.2, 0.5)])
def test_direct_closed_form_kl_matches_monte_carlo(prior, posterior):
    mu, sigma = posterior
    with torch.no_grad():
        exact = float(prior.kl(mu, sigma, LAYERS))
    est, se = _mc(prior, mu, sigma)
    assert abs(exact - est) < 4 * se + 1e-9


@pytest.mark.parametrize("base, alpha, beta", [("normal", 1.0, 1.0), ("normal", 3.0, 2.0),
                                               ("laplace", 1.0, 1.0), ("laplace", 4.0, 1.0)])
def test_hierarchical_closed_form_matches_monte_carlo(base, alpha, beta, posterior):
    mu, sigma = posterior
    prior = HierarchicalPrior(base, alpha=alpha, beta=beta)
    prior.setup(len(LAYERS), torch.float64)
    with torch.no_grad():
        prior.m += torch.tensor([0.3, -0.4], dtype=torch.float64)
        exact = float(prior.kl(mu, sigma, LAYERS))
    est, se = _mc(prior, mu, sigma, reps=60, n=20000)
    assert abs(exact - est) < 4 * se


def test_cauchy_monte_carlo_kl_is_consistent(posterior):
    mu, sigma = posterior
    prior = CauchyPrior(1, 1)
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        a = float(prior.kl(mu, sigma, LAYERS, g, n_samples=200_000))
    est, se = _mc(prior, mu, sigma)
    assert abs(a - est) < 4 * se + 0.05


def test_point_mass_hyperprior_reproduces_direct_prior(posterior):
    mu, sigma = posterior
    for base, direct in (("normal", NormalPrior(0, math.sqrt(0.3))), ("laplace", LaplacePrior(0, 0.3))):
        h = HierarchicalPrior(base, point_mass=0.3)
        assert float(h.kl(mu, sigma, LAYERS)) == float(direct.kl(mu, sigma, LAYERS))
        # and the concentrating limit of IG(alpha, beta) with beta / (alpha + 1) = 0.3
        conc = HierarchicalPrior(base, alpha=1e7, beta=0.3 * (1e7 + 1))
        conc.setup(2, torch.float64)
        with torch.no_grad():
            assert float(conc.kl(mu, sigma, LAYERS)) == pytest.approx(
                float(direct.kl(mu, sigma, LAYERS)), rel=1e-5)
    # trained models coincide
    x = np.linspace(-1, 1, 30)[:, None]
    a = BDL(hidden=(5,), prior=HierarchicalPrior("normal", point_mass=0.25), epochs=20,
            seed=1).fit(x, x[:, 0] ** 2).predict(x)
    b = BDL(hidden=(5,), prior="normal(0, 0.5)", epochs=20, seed=1).fit(x, x[:, 0] ** 2) \
        .predict(x)
    assert np.array_equal(a, b)


def test_hierarchical_scale_is_learned():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (200, 2))
    y = np.tanh(2 * x[:, 0]) - x[:, 1]
    model = BDL(hidden=(10,), prior="hierarchical-normal", epochs=150, batch_size=50,
                lr=0.01, seed=0).fit(x, y)
    scales = [layer["prior_scale"] for layer in model.posterior()]
    # Given the weights' posterior, the exact posterior of a layer's variance s under
    # w ~ N(0, s), s ~ IG(1, 1) is IG(1 + n/2, 1 + sum(mu^2 + sigma^2)/2): the learned
    # log-normal factor's median lands within 15% of that posterior's median
    g = model.model_.guide
    mu = g.mu.detach().double().numpy()
    sd = g.sigma().detach().double().numpy()
    for (a, b), s in zip(g.layers, scales):
        n, ss = b - a, float((mu[a:b] ** 2 + sd[a:b] ** 2).sum())
        exact = stats.invgamma(1 + n / 2, scale=1 + ss / 2).median()
        assert s == pytest.approx(exact, rel=0.15)
    assert abs(scales[0] - scales[1]) > 0.1  # two layers, two scales, both moved off 0.5


def test_make_prior_specs():
    assert isinstance(make_prior("laplace(0, 1)"), LaplacePrior)
    h = make_prior("hierarchical-normal(0, alpha=2, beta=3)")
    assert (h.alpha, h.beta, h.base) == (2.0, 3.0, "normal")
    assert make_prior(h.describe()).describe() == h.describe()
    for bad in ("student(1)", "normal(a)", 3):
        with pytest.raises(ValueError):
            make_prior(bad)


@pytest.mark.parametrize("prior_class, scipy_dist", [(NormalPrior, stats.norm),
                                                     (LaplacePrior, stats.laplace),
                                                     (CauchyPrior, stats.cauchy)])
@pytest.mark.parametrize("loc, scale", [(0.0, 1.0), (0.7, 0.3), (-2.0, 4.0)])
def test_direct_prior_densities_are_scipys(prior_class, scipy_dist, loc, scale):
    w = torch.linspace(-6, 6, 49, dtype=torch.float64)
    prior = prior_class(loc, scale)
    expected = scipy_dist.logpdf(w.numpy(), loc=loc, scale=scale)
    assert np.allclose(prior.log_prob(w).numpy(), expected, rtol=1e-12, atol=1e-12)
    # the scale argument (the hierarchical prior's per-layer scale) overrides the prior's own
    other = prior_class(loc, 1.0).log_prob(w, scale=torch.tensor(scale, dtype=torch.float64))
    assert np.allclose(other.numpy(), expected, rtol=1e-12, atol=1e-12)


# -- what each inference engine reads of a prior, against independent truth ------------------

DIRECT_PRIORS = [NormalPrior(0.3, 0.7), LaplacePrior(-0.2, 0.5), CauchyPrior(0.1, 1.5)]
HIERARCHICAL = [HierarchicalPrior("normal", 0.2, alpha=2.0, beta=0.5),
                HierarchicalPrior("laplace", -0.1, alpha=1.5, beta=2.0)]
SMALL_LAYERS = [(0, 2), (2, 5)]


def _weights(seed=0, k=3, p=5):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(k, p, generator=g, dtype=torch.float64) * 0.8


@pytest.mark.parametrize("prior", DIRECT_PRIORS, ids=repr)
def test_direct_negative_log_density_is_minus_the_density_up_to_a_constant(prior):
    w = _weights()
    nld = prior.neg_log_density(w, SMALL_LAYERS)
    minus_log_p = -prior.log_prob(w).sum(1)  # scipy-checked above
    diff = nld - minus_log_p
    assert torch.allclose(diff, diff[0].expand_as(diff), rtol=0, atol=1e-12)


@pytest.mark.parametrize("prior", HIERARCHICAL, ids=repr)
def test_hierarchical_negative_log_density_is_the_marginal_over_the_layer_scale(prior):
    """-log of p(w_l) = integral of p(w_l | s) IG(s; alpha, beta) ds over each layer's scale
    s (the variance for the normal base, the scale for the Laplace base), by quadrature."""
    from scipy import integrate

    def marginal(w_layer):
        def integrand(log_s):
            s = math.exp(log_s)
            scale = math.sqrt(s) if prior.base == "normal" else s
            base = stats.norm if prior.base == "normal" else stats.laplace
            return math.exp(base.logpdf(w_layer, prior.loc, scale).sum()
                            + stats.invgamma.logpdf(s, prior.alpha, scale=prior.beta) + log_s)
        return integrate.quad(integrand, -30, 30, limit=400, epsabs=0, epsrel=1e-11)[0]

    w = _weights(1)
    nld = prior.neg_log_density(w, SMALL_LAYERS).numpy()
    exact = [-sum(math.log(marginal(row[a:b].numpy())) for a, b in SMALL_LAYERS) for row in w]
    diff = nld - np.array(exact)
    assert np.allclose(diff, diff[0], rtol=0, atol=1e-8)


@pytest.mark.parametrize("prior", DIRECT_PRIORS + HIERARCHICAL, ids=repr)
def test_negative_log_density_gradient_is_autograds(prior):
    w = _weights(2).requires_grad_(True)
    value, grad = prior.neg_log_density_grad(w.detach(), SMALL_LAYERS)
    auto, = torch.autograd.grad(prior.neg_log_density(w, SMALL_LAYERS).sum(), w)
    assert torch.allclose(value, prior.neg_log_density(w.detach(), SMALL_LAYERS), atol=1e-12)
    assert torch.allclose(grad, auto, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("prior, precision", [
    (NormalPrior(0.3, 0.7), 1 / 0.7 ** 2),   # the curvature of -log N
    (LaplacePrior(-0.2, 0.3), 1 / 0.3 ** 2),  # Fisher information of the Laplace location
    (CauchyPrior(0.1, 1.5), 0.5 / 1.5 ** 2)], ids=repr)  # Fisher information of the Cauchy
def test_direct_laplace_precision_is_the_fisher_information(prior, precision):
    from scipy import integrate

    dist = {"normal": stats.norm, "laplace": stats.laplace, "cauchy": stats.cauchy}[prior.kind]

    def score_squared(x):  # E[(d/dw log p)^2], the Fisher information, by quadrature
        c = (x - prior.loc) / prior.scale
        score = {"normal": c / prior.scale, "laplace": np.sign(c) / prior.scale,
                 "cauchy": 2 * c / (prior.scale * (1 + c * c))}[prior.kind]
        return score ** 2 * dist.pdf(x, prior.loc, prior.scale)

    fisher = integrate.quad(score_squared, -np.inf, np.inf, limit=200)[0]
    assert fisher == pytest.approx(precision, rel=1e-7)
    w = _weights(3)[0]
    assert torch.allclose(prior.laplace_precision(w, SMALL_LAYERS),
                          torch.full_like(w, precision), rtol=1e-14)


def test_hierarchical_normal_precision_is_the_expected_inverse_variance_given_the_weights():
    """Given w_l, the layer variance is IG(alpha + P_l / 2, beta + |w_l - loc|^2 / 2): the
    precision is its E[1 / s], here by quadrature of the conditional density."""
    from scipy import integrate

    prior = HIERARCHICAL[0]
    w = _weights(4)[0]
    precision = prior.laplace_precision(w, SMALL_LAYERS).numpy()
    for a, b in SMALL_LAYERS:
        layer = w[a:b].numpy()

        def density(s, power):
            return s ** power * np.exp(stats.norm.logpdf(layer, prior.loc, np.sqrt(s)).sum()
                                       + stats.invgamma.logpdf(s, prior.alpha, scale=prior.beta))

        num = integrate.quad(density, 0, np.inf, args=(-1,), limit=400)[0]
        den = integrate.quad(density, 0, np.inf, args=(0,), limit=400)[0]
        assert np.allclose(precision[a:b], num / den, rtol=1e-7)


def test_hierarchical_laplace_precision_is_the_inverse_square_of_the_scales_mode():
    prior = HIERARCHICAL[1]
    w = _weights(5)[0]
    precision = prior.laplace_precision(w, SMALL_LAYERS)
    for a, b in SMALL_LAYERS:
        # the conditional of the scale: IG(alpha + P_l, beta + |w_l - loc|_1), mode rate/(shape+1)
        mode = (prior.beta + float((w[a:b] - prior.loc).abs().sum())) / (prior.alpha + (b - a) + 1)
        assert torch.allclose(precision[a:b], torch.full((b - a,), 1 / mode ** 2,
                                                         dtype=torch.float64), rtol=1e-14)


def test_what_the_engines_read_of_each_prior():
    normal, laplace, cauchy = NormalPrior(0.3, 0.7), LaplacePrior(-0.2, 0.5), CauchyPrior(0, 1)
    assert normal.meanfield_spec() == ("normal", 0.3, 0.7)
    assert laplace.meanfield_spec() == ("laplace", -0.2, 0.5)
    assert cauchy.meanfield_spec() is None  # no closed-form KL: the autograd trainer
    # a point-mass hierarchical prior is the direct prior it equals (the variance for normal)
    point = HierarchicalPrior("normal", 0.3, point_mass=0.49)
    assert repr(point.resolved()) == repr(NormalPrior(0.3, 0.7))
    assert point.meanfield_spec() == ("normal", 0.3, 0.7)
    point_l = HierarchicalPrior("laplace", 0.1, point_mass=2.0)
    assert repr(point_l.resolved()) == repr(LaplacePrior(0.1, 2.0))
    w = _weights(6)
    assert torch.equal(point.neg_log_density_grad(w, SMALL_LAYERS)[1],
                       NormalPrior(0.3, 0.7).neg_log_density_grad(w, SMALL_LAYERS)[1])
    assert torch.equal(point.laplace_precision(w[0], SMALL_LAYERS),
                       NormalPrior(0.3, 0.7).laplace_precision(w[0], SMALL_LAYERS))
    assert HIERARCHICAL[0].meanfield_spec() is None and HIERARCHICAL[0].resolved() is \
        HIERARCHICAL[0]
    assert normal.location == 0.3 and HIERARCHICAL[1].location == -0.1
    assert normal.layer_scales() is None
    assert torch.equal(HIERARCHICAL[0].layer_scales(), HIERARCHICAL[0].scales())
    for prior in DIRECT_PRIORS + HIERARCHICAL + [point]:
        prior.check_laplace()  # no error
    with pytest.raises(ValueError, match="hierarchical-cauchy has no closed-form marginal"):
        HierarchicalPrior("cauchy").check_laplace()
    with pytest.raises(ValueError, match="hierarchical-cauchy has no closed-form marginal"):
        HierarchicalPrior("cauchy").neg_log_density_grad(w, SMALL_LAYERS)


def test_a_point_mass_prior_gives_the_direct_priors_density_and_scales():
    point = HierarchicalPrior("normal", 0.3, point_mass=0.49)
    w = _weights(7)
    assert torch.equal(point.neg_log_density(w, SMALL_LAYERS),
                       NormalPrior(0.3, 0.7).neg_log_density(w, SMALL_LAYERS))
    assert point.scales().tolist() == pytest.approx([0.49])
    point.setup(3)
    assert point.scales().tolist() == pytest.approx([0.49] * 3)


def test_the_hierarchical_gradient_keeps_float64_for_any_hyperprior():
    # alpha = 0.3 is not a float32 number: a shape computed in float32 would be 1e-8 off
    prior = HierarchicalPrior("normal", 0.0, alpha=0.3, beta=0.7)
    w = _weights(8).requires_grad_(True)
    auto, = torch.autograd.grad(prior.neg_log_density(w, SMALL_LAYERS).sum(), w)
    assert torch.allclose(prior.neg_log_density_grad(w.detach(), SMALL_LAYERS)[1], auto,
                          rtol=1e-13, atol=0)


def test_a_subclass_of_a_direct_prior_is_not_the_batched_trainers():
    class Wider(NormalPrior):
        pass

    class Heavier(LaplacePrior):
        pass

    assert Wider(0, 1).meanfield_spec() is None and Heavier(0, 1).meanfield_spec() is None


def test_the_laplace_engines_refusal_names_what_it_takes():
    with pytest.raises(ValueError) as info:
        HierarchicalPrior("cauchy").check_laplace()
    assert str(info.value) == ("inference='laplace' takes normal, laplace and cauchy priors and "
                               "hierarchical-normal / hierarchical-laplace; hierarchical-cauchy "
                               "has no closed-form marginal: use inference='meanfield'")


def test_make_prior_reads_positions_keywords_and_dicts():
    assert repr(make_prior("normal(0, scale=2)")) == repr(NormalPrior(0, 2))
    assert repr(make_prior("normal(0.5, 2,)")) == repr(NormalPrior(0.5, 2))  # a trailing comma
    assert repr(make_prior("normal(0.5, , 2)")) == repr(NormalPrior(0.5, 2))  # an empty one
    assert make_prior("hierarchical-normal(0.5, beta=2)").loc == 0.5
    assert make_prior("hierarchical-normal(0.5, beta=2)").beta == 2.0
    assert repr(make_prior({"kind": "laplace", "loc": 1.0, "scale": 3.0})) == repr(
        LaplacePrior(1.0, 3.0))
    for bad, message in [({"loc": 1.0}, "unknown prior {'loc': 1.0}"),
                         ({"kind": "student"}, "unknown prior {'kind': 'student'}"),
                         (42, "a prior is a Prior, a string like 'normal(0, 1)' or a dict, "
                              "got 42"),
                         ("studentt(3)", "unknown prior 'studentt(3)'; use normal, laplace or "
                                         "cauchy, optionally as hierarchical-<name>, e.g. "
                                         "'normal(0, 1)' or 'hierarchical-normal'"),
                         ("normal(0, scale=x)", "prior 'normal(0, scale=x)': cannot read "
                                                "parameter 'scale=x'"),
                         ("normal(loc=1=2)", "prior 'normal(loc=1=2)': cannot read parameter "
                                             "'loc=1=2'"),
                         ("normal(0, 1, 2)", "prior 'normal(0, 1, 2)': ")]:
        with pytest.raises(ValueError) as info:
            make_prior(bad)
        assert str(info.value).startswith(message), str(info.value)


@pytest.mark.parametrize("prior", [NormalPrior(0.3, 0.7), LaplacePrior(-0.2, 0.5)],
                         ids=["normal", "laplace"])
def test_the_batched_closed_forms_are_the_priors_kl_and_its_gradient(prior):
    """The batched mean-field trainer reads the KL and its gradient from the prior
    (``kl_members``, ``kl_gradient_factor``, ``add_kl_gradient_``): for K members at once they
    must equal :meth:`kl` row by row, and the gradient autograd's of that KL, less the
    entropy's -1 / sigma that the trainer adds itself."""
    torch.manual_seed(0)
    K, P = 3, 17
    mu = torch.randn(K, P, dtype=torch.float64)
    sigma = torch.rand(K, P, dtype=torch.float64) * 0.8 + 0.05
    scale = torch.full((K, 1), prior.scale, dtype=torch.float64)
    closed = type(prior)
    kl = closed.kl_members(mu - prior.loc, sigma, scale)
    rows = [prior.kl(mu[i], sigma[i]) for i in range(K)]
    assert torch.allclose(kl, torch.stack(rows), rtol=1e-12)

    m, s = mu.clone().requires_grad_(), sigma.clone().requires_grad_()
    sum(prior.kl(m[i], s[i]) for i in range(K)).backward()
    weight = torch.full((K, 1), closed.kl_gradient_factor(prior.scale), dtype=torch.float64)
    g_mu, g_sigma = torch.zeros(K, P, dtype=torch.float64), torch.zeros(K, P, dtype=torch.float64)
    closed.add_kl_gradient_(g_mu, g_sigma, mu - prior.loc, sigma, weight)
    assert torch.allclose(g_mu, m.grad, rtol=1e-10, atol=1e-12)
    assert torch.allclose(g_sigma - 1.0 / sigma, s.grad, rtol=1e-10, atol=1e-12)


# -- KL divergences against quadrature: five weights, fast (the mutation runs' KL selection) -----

KL_LAYERS = [(0, 2), (2, 5)]
GH_X, GH_W = np.polynomial.hermite_e.hermegauss(80)
GH_W = GH_W / GH_W.sum()


def _small_posterior():
    mu = torch.tensor([0.4, -0.9, 0.1, 1.3, -0.2], dtype=torch.float64)
    sigma = torch.tensor([0.3, 0.15, 0.5, 0.25, 0.4], dtype=torch.float64)
    return mu, sigma


def _expect(mu, sd, f, points=()):
    """E f(w) for w ~ N(mu, sd^2), by adaptive quadrature (scipy)."""
    from scipy import integrate

    lo, hi = mu - 12 * sd, mu + 12 * sd
    return integrate.quad(lambda w: stats.norm.pdf(w, mu, sd) * f(w), lo, hi,
                          points=[p for p in points if lo < p < hi] or None, limit=200,
                          epsabs=1e-12, epsrel=1e-12)[0]


def _kl_direct_reference(logpdf, mu, sigma, loc):
    """sum_i KL(N(mu_i, sigma_i^2) || p) = sum_i [-H(q_i) - E_q_i log p], E by quadrature."""
    total = 0.0
    for m, s in zip(mu.tolist(), sigma.tolist()):
        total += -0.5 * math.log(2 * math.pi * math.e * s * s) - _expect(m, s, logpdf, [loc])
    return total


def _base_logpdf(base, loc, s):
    """log p(w | s): the normal base has variance s, the Laplace and Cauchy bases scale s."""
    if base == "normal":
        return lambda w: stats.norm.logpdf(w, loc, math.sqrt(s))
    if base == "laplace":
        return lambda w: stats.laplace.logpdf(w, loc, s)
    return lambda w: stats.cauchy.logpdf(w, loc, s)


def _kl_hierarchical_reference(prior, mu, sigma, layers):
    """sum_l E_q(s_l)[KL(q(w_l) || p(w_l | s_l))] + KL(q(s_l) || IG(alpha, beta)), with q(s_l)
    log-normal (log s_l ~ N(m_l, v_l)): the expectations over log s by Gauss-Hermite (40
    nodes); over w, E|w - loc| and E(w - loc)^2 by quadrature for the Laplace and normal
    bases (whose log densities are linear in them), Gauss-Hermite (80 nodes) of scipy's log
    density for the Cauchy base; the hyperprior's KL from scipy's log densities."""
    x, wx = np.polynomial.hermite_e.hermegauss(40)
    wx = wx / wx.sum()
    m_all = prior.m.detach().double().numpy()
    v_all = np.exp(prior.log_v.detach().double().numpy())
    loc, total = prior.loc, 0.0
    for l, (a, b) in enumerate(layers):
        mus, sds = mu[a:b].tolist(), sigma[a:b].tolist()
        s = np.exp(m_all[l] + math.sqrt(v_all[l]) * x)  # (40,) nodes of the scale
        neg_h = sum(-0.5 * math.log(2 * math.pi * math.e * sd * sd) for sd in sds)
        if prior.base == "normal":
            e2 = sum(_expect(m_, sd, lambda w: (w - loc) ** 2) for m_, sd in zip(mus, sds))
            inner = neg_h + e2 / (2 * s) + 0.5 * len(mus) * np.log(2 * math.pi * s)
        elif prior.base == "laplace":
            e1 = sum(_expect(m_, sd, lambda w: abs(w - loc), [loc]) for m_, sd in zip(mus, sds))
            inner = neg_h + e1 / s + len(mus) * np.log(2 * s)
        else:
            w = np.array(mus)[:, None] + np.array(sds)[:, None] * GH_X[None]  # (k, 80)
            e_log_p = (stats.cauchy.logpdf(w[None], loc, s[:, None, None]) @ GH_W).sum(1)
            inner = neg_h - e_log_p
        total += float(wx @ inner)
        log_q = stats.lognorm.logpdf(s, math.sqrt(v_all[l]), scale=math.exp(m_all[l]))
        log_p = stats.invgamma.logpdf(s, prior.alpha, scale=prior.beta)
        total += float(wx @ (log_q - log_p))
    return total


def _hierarchical(base, loc=0.2, alpha=2.0, beta=0.5):
    prior = HierarchicalPrior(base, loc, alpha=alpha, beta=beta)
    prior.setup(len(KL_LAYERS), torch.float64)
    with torch.no_grad():
        prior.m += torch.tensor([0.3, -0.4], dtype=torch.float64)
        prior.log_v += torch.tensor([-0.5, 0.2], dtype=torch.float64)
    return prior


@pytest.mark.parametrize("prior, scipy_dist", [(NormalPrior(0.3, 0.7), stats.norm),
                                               (NormalPrior(0.0, 1.0), stats.norm),
                                               (LaplacePrior(-0.2, 0.5), stats.laplace),
                                               (LaplacePrior(0.0, 1.0), stats.laplace)], ids=repr)
def test_direct_closed_form_kl_is_the_quadrature(prior, scipy_dist):
    mu, sigma = _small_posterior()
    ref = _kl_direct_reference(lambda w: scipy_dist.logpdf(w, prior.loc, prior.scale), mu,
                               sigma, prior.loc)
    with torch.no_grad():
        assert float(prior.kl(mu, sigma, KL_LAYERS)) == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("prior, scipy_dist", [(NormalPrior(0.3, 0.7), stats.norm),
                                               (LaplacePrior(-0.2, 0.5), stats.laplace),
                                               (CauchyPrior(0.1, 1.5), stats.cauchy)], ids=repr)
def test_direct_monte_carlo_kls_converge_to_the_quadrature(prior, scipy_dist):
    """The Monte Carlo estimates (kl_monte_carlo; the Cauchy prior's kl) with 40,000 draws of
    one generator: within 0.03 of the quadrature (their standard error here is < 0.005), the
    same draws for the same seed, and n_samples draws (one draw is far off for some seed)."""
    mu, sigma = _small_posterior()
    ref = _kl_direct_reference(lambda w: scipy_dist.logpdf(w, prior.loc, prior.scale), mu,
                               sigma, prior.loc)
    methods = [lambda n, g: prior.kl_monte_carlo(mu, sigma, KL_LAYERS, n, g)]
    if isinstance(prior, CauchyPrior):
        methods.append(lambda n, g: prior.kl(mu, sigma, KL_LAYERS, g, n_samples=n))
    with torch.no_grad():
        for estimate in methods:
            a = float(estimate(40_000, torch.Generator().manual_seed(5)))
            b = float(estimate(40_000, torch.Generator().manual_seed(5)))
            assert a == b and a == pytest.approx(ref, abs=0.03)
            singles = [float(estimate(1, torch.Generator().manual_seed(s))) for s in range(20)]
            assert max(abs(x - ref) for x in singles) > 0.1
    if isinstance(prior, CauchyPrior):
        with torch.no_grad():
            assert float(prior.kl(mu, sigma, KL_LAYERS)) != pytest.approx(ref, abs=1e-9)


@pytest.mark.parametrize("base", ["normal", "laplace"])
def test_hierarchical_closed_form_kl_is_the_quadrature(base):
    mu, sigma = _small_posterior()
    prior = _hierarchical(base)
    ref = _kl_hierarchical_reference(prior, mu, sigma, KL_LAYERS)
    with torch.no_grad():
        assert float(prior.kl(mu, sigma, KL_LAYERS)) == pytest.approx(ref, rel=1e-7)


@pytest.mark.parametrize("base", ["normal", "laplace", "cauchy"])
def test_hierarchical_monte_carlo_kls_converge_to_the_quadrature(base):
    """kl_monte_carlo (weights and scales sampled) and the Cauchy base's kl (the same
    bound by Monte Carlo over q(w) and q(s)): reproducible for a seed, and the mean of nine
    20,000-draw estimates within 4 standard errors of the quadrature."""
    mu, sigma = _small_posterior()
    prior = _hierarchical(base, loc=1.0 if base == "cauchy" else 0.2)
    ref = _kl_hierarchical_reference(prior, mu, sigma, KL_LAYERS)
    methods = [lambda n, g: prior.kl_monte_carlo(mu, sigma, KL_LAYERS, n, g)]
    if base == "cauchy":
        methods.append(lambda n, g: prior.kl(mu, sigma, KL_LAYERS, g, n_samples=n))
    with torch.no_grad():
        for estimate in methods:
            a = float(estimate(20_000, torch.Generator().manual_seed(2)))
            assert a == float(estimate(20_000, torch.Generator().manual_seed(2)))
            reps = [float(estimate(20_000, torch.Generator().manual_seed(10 + r)))
                    for r in range(8)]
            se = np.std(reps + [a], ddof=1) / 3
            assert se < 0.1 and abs(np.mean(reps + [a]) - ref) < 4 * se


def test_hierarchical_kl_needs_its_setup():
    mu, sigma = _small_posterior()
    prior = HierarchicalPrior("normal")
    prior.setup(3, torch.float64)
    with pytest.raises(ValueError, match=r"^HierarchicalPrior\.setup\(\) was not called for "
                                         r"this network$"):
        prior.kl(mu, sigma, KL_LAYERS)
    point = HierarchicalPrior("laplace", point_mass=0.4)
    with torch.no_grad():
        assert float(point.kl_monte_carlo(mu, sigma, KL_LAYERS, 1000,
                                          torch.Generator().manual_seed(0))) == float(
            LaplacePrior(0, 0.4).kl_monte_carlo(mu, sigma, KL_LAYERS, 1000,
                                                torch.Generator().manual_seed(0)))


def _direct_mc_by_hand(prior_logpdf, mu, sigma, n, seed):
    """The Monte Carlo KL over the generator's own float64 normals eps (w = mu + sigma eps):
    the mean of sum_i [log N(w_i; mu_i, sigma_i) - log p(w_i)], densities from scipy."""
    eps = torch.randn((n,) + mu.shape, generator=torch.Generator().manual_seed(seed),
                      dtype=torch.float64).numpy()
    m, s = mu.numpy(), sigma.numpy()
    w = m + s * eps
    return float((stats.norm.logpdf(w, m, s) - prior_logpdf(w)).sum(-1).mean())


@pytest.mark.parametrize("prior, scipy_dist", [(NormalPrior(0.3, 0.7), stats.norm),
                                               (LaplacePrior(-0.2, 0.5), stats.laplace),
                                               (CauchyPrior(0.1, 1.5), stats.cauchy)], ids=repr)
def test_direct_monte_carlo_kls_are_means_over_the_generators_draws(prior, scipy_dist):
    """Exactly the estimator over the generator's float64 draws, with the default sample
    sizes (1000 for kl_monte_carlo, 1 for the Cauchy prior's kl)."""
    mu, sigma = _small_posterior()
    ref = _direct_mc_by_hand(lambda w: scipy_dist.logpdf(w, prior.loc, prior.scale), mu,
                             sigma, 1000, 3)
    with torch.no_grad():
        got = float(prior.kl_monte_carlo(mu, sigma, KL_LAYERS,
                                         generator=torch.Generator().manual_seed(3)))
        assert got == pytest.approx(ref, rel=1e-10)
        if isinstance(prior, CauchyPrior):  # kl = -H(q) - E log p, one draw by default
            neg_entropy = float(-(0.5 * math.log(2 * math.pi * math.e) + torch.log(sigma)).sum())
            eps = torch.randn((1, 5), generator=torch.Generator().manual_seed(4),
                              dtype=torch.float64).numpy()
            w = mu.numpy() + sigma.numpy() * eps
            e_log_p = float(scipy_dist.logpdf(w, prior.loc, prior.scale).sum())
            assert float(prior.kl(mu, sigma, KL_LAYERS, torch.Generator().manual_seed(4))
                         ) == pytest.approx(neg_entropy - e_log_p, rel=1e-10)
            # a point-mass hierarchical Cauchy prior is the direct one, draws and all
            point = HierarchicalPrior("cauchy", 0.1, point_mass=1.5)
            assert float(point.kl(mu, sigma, KL_LAYERS, torch.Generator().manual_seed(6), 50)
                         ) == float(prior.kl(mu, sigma, KL_LAYERS,
                                             torch.Generator().manual_seed(6), n_samples=50))


def _hierarchical_mc_by_hand(prior, mu, sigma, n, seed, bound_only=False):
    """Hierarchical kl_monte_carlo over the generator's draws, per layer in order: float64
    eps (P_l weights) then z; w = mu + sigma eps, s = exp(m + sqrt(v) z); the mean of
    log q(w) - log p(w | s) + log q(s) - log p(s), densities from scipy (the normal base has
    variance s, the others scale s; q(s) log-normal, p(s) Inverse-Gamma(alpha, beta)).
    ``bound_only``: the Cauchy base's kl, -H(q(w)) - E log p(w | s) + KL(q(s) || p(s)) with
    the last term in closed form."""
    g = torch.Generator().manual_seed(seed)
    m_all = prior.m.detach().double().numpy()
    v_all = np.exp(prior.log_v.detach().double().numpy())
    total = 0.0
    for l, (a, b) in enumerate(KL_LAYERS):
        mu_l, sd_l = mu[a:b].numpy(), sigma[a:b].numpy()
        eps = torch.randn((n, b - a), generator=g, dtype=torch.float64).numpy()
        z = torch.randn((n, 1), generator=g, dtype=torch.float64).numpy()
        w = mu_l + sd_l * eps
        s = np.exp(m_all[l] + math.sqrt(v_all[l]) * z)
        log_p_w = _base_logpdf_array(prior.base, prior.loc, w, s).sum(-1)
        if bound_only:
            total += float(-(0.5 * np.log(2 * math.pi * math.e * sd_l ** 2)).sum()
                           - log_p_w.mean())
            continue
        log_q_w = stats.norm.logpdf(w, mu_l, sd_l).sum(-1)
        log_q_s = stats.lognorm.logpdf(s[:, 0], math.sqrt(v_all[l]), scale=math.exp(m_all[l]))
        log_p_s = stats.invgamma.logpdf(s[:, 0], prior.alpha, scale=prior.beta)
        total += float((log_q_w - log_p_w + log_q_s - log_p_s).mean())
    return total


def _base_logpdf_array(base, loc, w, s):
    if base == "normal":
        return stats.norm.logpdf(w, loc, np.sqrt(s))
    if base == "laplace":
        return stats.laplace.logpdf(w, loc, s)
    return stats.cauchy.logpdf(w, loc, s)


@pytest.mark.parametrize("base", ["normal", "laplace", "cauchy"])
def test_hierarchical_monte_carlo_kls_are_means_over_the_generators_draws(base):
    mu, sigma = _small_posterior()
    # alpha = 2.5: log Gamma(alpha) != 0, so its sign in log p(s) counts
    prior = _hierarchical(base, loc=1.0 if base == "cauchy" else 0.2, alpha=2.5)
    ref = _hierarchical_mc_by_hand(prior, mu, sigma, 1000, 8)
    with torch.no_grad():
        got = float(prior.kl_monte_carlo(mu, sigma, KL_LAYERS,
                                         generator=torch.Generator().manual_seed(8)))
        assert got == pytest.approx(ref, rel=1e-9)
        if base == "cauchy":  # kl: default one draw per layer; the hyperprior's KL exact
            hyper = float(prior._kl_hyper())
            bound = _hierarchical_mc_by_hand(prior, mu, sigma, 1, 9, bound_only=True)
            assert float(prior.kl(mu, sigma, KL_LAYERS, torch.Generator().manual_seed(9))
                         ) == pytest.approx(hyper + bound, rel=1e-9)


def test_prior_construction_defaults_and_refusals():
    assert NormalPrior().describe() == {"kind": "normal", "loc": 0.0, "scale": 1.0}
    assert repr(LaplacePrior(0.3, 0.7)) == "LaplacePrior(loc=0.3, scale=0.7)"
    for cls in (NormalPrior, LaplacePrior, CauchyPrior):
        for loc, scale in ((0.0, 0.0), (0.0, -1.0), (float("inf"), 1.0), (0.0, float("nan"))):
            with pytest.raises(ValueError, match=f"^{cls.__name__}: scale must be a finite "
                                                 f"number > 0 and loc finite, got "
                                                 f"loc={loc!r}, scale={scale!r}$"):
                cls(loc, scale)
    # specs without parentheses take the defaults
    assert make_prior("laplace").describe() == {"kind": "laplace", "loc": 0.0, "scale": 1.0}
    assert repr(make_prior("hierarchical-cauchy")) == (
        "HierarchicalPrior(cauchy, loc=0.0, IG(1, 1))")
    h = HierarchicalPrior()
    assert h.describe() == {"kind": "hierarchical", "base": "normal", "loc": 0.0, "alpha": 1.0,
                            "beta": 1.0, "point_mass": None}
    assert repr(h) == "HierarchicalPrior(normal, loc=0.0, IG(1, 1))"
    assert repr(HierarchicalPrior("laplace", -0.1, alpha=1.5, beta=2.0)) == (
        "HierarchicalPrior(laplace, loc=-0.1, IG(1.5, 2))")
    assert repr(HierarchicalPrior(point_mass=0.3)) == (
        "HierarchicalPrior(normal, loc=0.0, point_mass=0.3)")
    assert h.analytic and HierarchicalPrior("laplace").analytic
    assert not HierarchicalPrior("cauchy").analytic
    # before setup: no layer factors, and the KL of no layers is 0
    assert h.m.numel() == h.log_v.numel() == 0
    mu, sigma = _small_posterior()
    with torch.no_grad():
        assert float(h.kl(mu, sigma, [])) == 0.0
    cases = [({"base": "student"}, r"^unknown base prior 'student'; use one of \['cauchy', "
                                   r"'laplace', 'normal'\]$"),
             ({"alpha": 0.0}, r"^alpha must be a finite number > 0, got alpha=0\.0$"),
             ({"alpha": float("inf")}, "alpha=inf"),
             ({"beta": -1.0}, r"^beta must be a finite number > 0, got beta=-1\.0$"),
             ({"point_mass": 0.0}, r"^point_mass must be > 0, got point_mass=0\.0$"),
             ({"point_mass": float("nan")}, "point_mass=nan")]
    for kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            HierarchicalPrior(**kwargs)


def test_hierarchical_setup_starts_at_the_hyperpriors_mode_and_log_variance():
    """q(s_l) starts with median exp(m) at the Inverse-Gamma mode beta / (alpha + 1) and
    v = Var[log s] under the Inverse-Gamma, the trigamma function of alpha (scipy), in the
    dtype asked for."""
    from scipy import special

    h = HierarchicalPrior("laplace", alpha=0.7, beta=0.6)
    h.setup(3, torch.float64)
    assert h.m.dtype == h.log_v.dtype == torch.float64 and h.m.shape == (3,)
    np.testing.assert_allclose(np.exp(h.m.detach().numpy()), 0.6 / 1.7, rtol=1e-14)
    # torch's trigamma in float64 is within 1e-9 of scipy's; in float32 1.4e-7 off here
    np.testing.assert_allclose(np.exp(h.log_v.detach().numpy()), special.polygamma(1, 0.7),
                               rtol=1e-8)
    h.setup(2)
    assert h.m.dtype == h.log_v.dtype == torch.float32


def test_a_prior_without_closed_forms_says_so_by_name():
    class Custom(Prior):  # the base class alone: no closed forms
        pass

    w = torch.zeros((1, 3))
    with pytest.raises(NotImplementedError, match="^Custom has no closed-form log density$"):
        Custom().neg_log_density(w, [(0, 3)])
    with pytest.raises(NotImplementedError, match="^Custom has no Laplace precision$"):
        Custom().laplace_precision(w[0], [(0, 3)])
