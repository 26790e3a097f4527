"""MAP training to convergence and the linearised Laplace posterior, for K networks at once.

*MAP.* Each network k minimises its negative log joint per data point,

    L_k(w, log tau) = [ 1/2 sum_n sum_j tau_j (y_nj - f_j(x_n; w))^2 - n/2 sum_j log tau_j
                        - log p(w) - log p(tau) ] / n            (regression)

(the cross-entropy instead of the Gaussian terms for classification), full batch, by L-BFGS
(:func:`surrogates.lbfgs.minimize`) in float64, all K in one batched program
(:class:`surrogates.stacked.StackedMLP`; shorter data sets are padded and masked). The noise
precision tau (one per output) is held at ``1 / noise_std^2`` for the first half of the
iterations, so that every output is fitted, and then learned with the weights, so the prior's
pull weakens as the fit tightens. ``-log p(w)`` is the prior's negative log density up to a
constant; a hierarchical prior's layer scale is integrated out (IG(alpha, beta) on the
variance of a normal base gives ``(alpha + P_l / 2) log(beta + |w_l - loc|^2 / 2)`` per
layer, on the scale of a Laplace base ``(alpha + P_l) log(beta + |w_l - loc|_1)``).

*Laplace.* About the MAP weights w*, the posterior is approximated by ``N(w*, (G + D)^-1)``
with G the generalised Gauss-Newton matrix ``sum_n J_n^T Lambda_n J_n`` (``J_n`` the network's
Jacobian at x_n, ``Lambda_n = diag(tau)`` for regression, ``diag(p) - p p^T`` for
classification) and D the prior's precision: ``1 / s^2`` for N(loc, s^2), its Fisher
information ``1 / s^2`` for Laplace(loc, s) and ``1 / (2 s^2)`` for Cauchy(loc, s) (whose
curvature at w* is zero or negative), and for a hierarchical layer its conditional value given
w*: ``(alpha + P_l / 2) / (beta + |w_l|^2 / 2)`` (normal base) or ``1 / s_mode^2`` (Laplace
base). By default (``BDL(laplace_prior_scale="evidence")``) the prior precision of the posterior is
then multiplied by the factor that maximises the Laplace evidence
(:meth:`LaplacePosterior.evidence_scale`; the MAP weights stay). Predictions use the
linearised network ``f(x, w*) + J(x) (w - w*)``, the "GLM
predictive" of Immer et al. (2021), "Improving predictions of Bayesian neural nets via local
linearization", which the Laplace Redux library (``laplace-torch``) also recommends.

The whole GGN is kept (P = 838 for the paper's 5-30-15-10-3 net): with
``Gt = D^-1/2 G D^-1/2 = U diag(lam) U^T`` (from the n k x n k Gram matrix when that is
smaller than P), ``Sigma = D^-1/2 (I - U diag(lam / (1 + lam)) U^T) D^-1/2`` and a draw is
``D^-1/2 (e - U diag(1 - (1 + lam)^-1/2) U^T e)``, e ~ N(0, I) (its covariance is Sigma).
"""
import math
from dataclasses import dataclass

import torch

from .lbfgs import minimize
from .priors import CauchyPrior, HierarchicalPrior, LaplacePrior, NormalPrior


def check_prior(prior):
    """Raise a ValueError if the Laplace posterior cannot use ``prior``."""
    if isinstance(prior, HierarchicalPrior) and prior.point_mass is None \
            and prior.base == "cauchy":
        raise ValueError("inference='laplace' takes normal, laplace and cauchy priors and "
                         "hierarchical-normal / hierarchical-laplace; "
                         "hierarchical-cauchy has no closed-form marginal: use "
                         "inference='meanfield'")


def _direct(prior):
    if isinstance(prior, HierarchicalPrior) and prior.point_mass is not None:
        return prior._direct(prior.point_mass)
    return prior


def neg_log_prior(prior, w, layers):
    """(K,) negative log prior density of the rows of w (K, P), up to a constant."""
    prior = _direct(prior)
    if isinstance(prior, NormalPrior):
        return 0.5 * ((w - prior.loc) ** 2).sum(1) / prior.scale ** 2
    if isinstance(prior, LaplacePrior):
        return (w - prior.loc).abs().sum(1) / prior.scale
    if isinstance(prior, CauchyPrior):
        return torch.log1p(((w - prior.loc) / prior.scale) ** 2).sum(1)
    check_prior(prior)
    total = w.new_zeros(w.shape[0])
    for a, b in layers:
        c = w[:, a:b] - prior.loc
        if prior.base == "normal":
            total = total + (prior.alpha + 0.5 * (b - a)) * torch.log(
                prior.beta + 0.5 * (c * c).sum(1))
        else:
            total = total + (prior.alpha + (b - a)) * torch.log(prior.beta + c.abs().sum(1))
    return total


def prior_location(prior):
    """The location the prior centres the weights on (0 for the package's priors)."""
    return float(getattr(_direct(prior), "loc", 0.0))


def prior_precision(prior, w, layers):
    """(P,) prior precision at the MAP weights w (P,) (see the module docstring)."""
    prior = _direct(prior)
    if isinstance(prior, (NormalPrior, LaplacePrior)):
        return torch.full_like(w, 1.0 / prior.scale ** 2)
    if isinstance(prior, CauchyPrior):
        return torch.full_like(w, 0.5 / prior.scale ** 2)
    out = torch.empty_like(w)
    for a, b in layers:
        c = w[a:b] - prior.loc
        if prior.base == "normal":
            out[a:b] = (prior.alpha + 0.5 * (b - a)) / (prior.beta + 0.5 * (c * c).sum())
        else:
            s_mode = (prior.beta + c.abs().sum()) / (prior.alpha + (b - a) + 1.0)
            out[a:b] = 1.0 / s_mode ** 2
    return out


@dataclass
class LaplacePosterior:
    """N(w, Sigma) over one network's weights (see the module docstring for Sigma).

    Attributes:
        w: (P,) MAP weights; log_tau: (k,) log noise precisions (regression) or None;
        precision: (P,) prior precision D; basis: (P, r) eigenvectors U; eig: (r,) their
        eigenvalues lam > 0; iterations, converged: the MAP optimiser's record.
    """

    w: torch.Tensor
    log_tau: torch.Tensor
    precision: torch.Tensor
    basis: torch.Tensor
    eig: torch.Tensor
    iterations: int = 0
    converged: bool = True
    prior_scale: float = 1.0

    def sample(self, n, generator=None):
        """(n, P) draws of w - w* from N(0, Sigma)."""
        e = torch.randn((n, len(self.w)), generator=generator, dtype=self.w.dtype)
        shrink = 1.0 - torch.rsqrt(1.0 + self.eig)
        e = e - ((e @ self.basis) * shrink) @ self.basis.T
        return e * torch.rsqrt(self.precision)

    def marginal_std(self):
        """(P,) posterior standard deviation of each weight."""
        inv_d = 1.0 / self.precision
        frac = self.eig / (1.0 + self.eig)
        return torch.sqrt(inv_d * (1.0 - (self.basis ** 2 * frac).sum(1)))

    def evidence_scale(self, loc=0.0, bounds=(1e-6, 1e6)):
        """The factor c of the prior precision that maximises the Laplace evidence at w*.

        With the prior N(loc, (c D)^-1) and the GGN fixed at w*,
        ``log Z(c) = -c q / 2 - sum_i log(1 + lam_i / c) / 2 + const``, ``q = (w* - loc)^T D
        (w* - loc)`` (the whitened GGN's eigenvalues become lam / c); its unique stationary
        point solves ``c q = gamma(c)``, ``gamma(c) = sum_i lam_i / (lam_i + c)`` the effective
        number of parameters the data determine (MacKay 1992, "Bayesian interpolation"). The
        MAP weights are not refitted (laplace-torch's post-hoc "marglik" prior precision).
        Returns c clipped to ``bounds``.
        """
        from scipy.optimize import brentq

        d = self.w - loc
        q = float((d * d * self.precision).sum())
        lam = self.eig.double().numpy()
        lo, hi = bounds

        def h(log_c):
            c = math.exp(log_c)
            return c * q - float((lam / (lam + c)).sum())

        if h(math.log(lo)) >= 0:
            return lo
        if h(math.log(hi)) <= 0:
            return hi
        return math.exp(brentq(h, math.log(lo), math.log(hi), xtol=1e-12))

    def rescaled(self, c):
        """This posterior with the prior precision multiplied by c (> 0)."""
        return LaplacePosterior(w=self.w, log_tau=self.log_tau, precision=self.precision * c,
                                basis=self.basis, eig=self.eig / c,
                                iterations=self.iterations, converged=self.converged,
                                prior_scale=self.prior_scale * c)

    def state(self):
        return {"w": self.w, "log_tau": self.log_tau, "precision": self.precision,
                "basis": self.basis, "eig": self.eig, "iterations": int(self.iterations),
                "converged": bool(self.converged), "prior_scale": float(self.prior_scale)}

    @classmethod
    def from_state(cls, state):
        return cls(**state)


def _pad(arrays, dtype):
    n_max = max(len(a) for a in arrays)
    K = len(arrays)
    shape = (K, n_max) + tuple(arrays[0].shape[1:])
    out = torch.zeros(shape, dtype=dtype)
    mask = torch.zeros(K, n_max, dtype=torch.float64)
    for k, a in enumerate(arrays):
        out[k, :len(a)] = a
        mask[k, :len(a)] = 1.0
    return out, mask


def fit(net, xs, ys, task, priors, seeds, noise_std=0.1, learn_noise=True, noise_prior=None,
        max_iter=2000, gtol=1e-9):
    """MAP-train K networks and build their Laplace posteriors.

    Args:
        net: a :class:`surrogates.stacked.StackedMLP`.
        xs: K float64 tensors (n_k, d) of (standardised) inputs.
        ys: K tensors: (n_k, k) float64 targets (regression) or (n_k,) int64 class labels.
        task: ``"regression"`` or ``"classification"``.
        priors: K :class:`surrogates.priors.Prior` objects; seeds: K initialisation seeds.
        noise_std: initial (or, with ``learn_noise=False``, fixed) noise standard deviation.
        noise_prior: optional (shape, rate) Gamma prior on each noise precision.
        max_iter, gtol: L-BFGS iteration limit and gradient tolerance per network.

    Returns:
        K :class:`LaplacePosterior` objects, in order.
    """
    K = len(xs)
    for p in priors:
        check_prior(p)
    X, mask = _pad(xs, torch.float64)
    n = mask.sum(1)
    P = net.n_params
    regression = task == "regression"
    if regression:
        Y, _ = _pad(ys, torch.float64)
        k_tau = Y.shape[2]
    else:
        Y, _ = _pad(ys, torch.int64)
        k_tau = 0
    groups = {}
    for i, p in enumerate(priors):
        groups.setdefault(id(p), (p, []))[1].append(i)
    groups = [(p, torch.tensor(rows)) for p, rows in groups.values()]
    log_tau0 = -2.0 * math.log(noise_std)

    def fun(theta, learn=learn_noise):
        theta = theta.detach().requires_grad_(True)
        w = theta[:, :P]
        f = net.forward(w, X)
        if regression:
            log_tau = theta[:, P:]
            r2 = ((Y - f) ** 2 * mask[:, :, None]).sum(1)  # (K, k)
            loss = 0.5 * (r2 * torch.exp(log_tau)).sum(1) - 0.5 * n * log_tau.sum(1)
            if noise_prior is not None:
                a, b = noise_prior
                loss = loss - ((a - 1.0) * log_tau - b * torch.exp(log_tau)).sum(1)
        else:
            logp = torch.log_softmax(f, -1).gather(2, Y.unsqueeze(2))[..., 0]
            loss = -(logp * mask).sum(1)
        pen = torch.zeros_like(loss)
        for p, rows in groups:
            pen = pen.index_add(0, rows, neg_log_prior(p, w[rows], net.layers))
        loss = (loss + pen) / n
        (g,) = torch.autograd.grad(loss.sum(), theta)
        if regression and not learn:
            g[:, P:] = 0.0
        return loss.detach(), g

    w0 = net.init(seeds)
    theta0 = torch.cat([w0, torch.full((K, k_tau), log_tau0, dtype=torch.float64)], 1)
    if regression and learn_noise and max_iter >= 2:
        # first half: the noise held at noise_std, so every output must be fitted; learned
        # from the start, a hard output can be "explained" as noise (a saddle the fit then
        # stays at: R^2 ~ 0 on x0 * x2 in the tests)
        fixed = dict(learn=False)
        first = minimize(lambda t: fun(t, **fixed), theta0, max_iter=max_iter // 2, gtol=gtol)
        res = minimize(fun, first.x, max_iter=max_iter - max_iter // 2, gtol=gtol)
        res.iterations = res.iterations + first.iterations
    else:
        res = minimize(fun, theta0, max_iter=max_iter, gtol=gtol)
    out = []
    for i in range(K):
        w = res.x[i, :P]
        log_tau = res.x[i, P:].clone() if regression else None
        x = xs[i]
        J = net.jacobian(w, x)  # (n, k, P)
        D = prior_precision(priors[i], w, net.layers)
        Jd = J * torch.rsqrt(D)
        if regression:
            Jd = Jd * torch.exp(0.5 * log_tau)[None, :, None]
            A = Jd.reshape(-1, P)
            if A.shape[0] < P:  # Gram trick: eigenpairs of A A^T give those of A^T A
                lam, V = torch.linalg.eigh(A @ A.T)
                U = (A.T @ V) * torch.rsqrt(lam.clamp_min(1e-300))  # null columns: dropped below
            else:
                lam, U = torch.linalg.eigh(A.T @ A)
        else:
            p = torch.softmax(net.forward_one(w, x), -1)  # (n, k)
            Jp = torch.einsum("nkp,nk->np", Jd, p)
            G = torch.einsum("nkp,nk,nkq->pq", Jd, p, Jd) - Jp.T @ Jp
            lam, U = torch.linalg.eigh(0.5 * (G + G.T))
        keep = lam > 1e-12 * lam.max().clamp_min(1e-300)  # the null space keeps D alone
        out.append(LaplacePosterior(w=w.clone(), log_tau=log_tau, precision=D,
                                    basis=U[:, keep].contiguous(), eig=lam[keep].clone(),
                                    iterations=int(res.iterations[i]),
                                    converged=bool(res.converged[i])))
    return out
