"""Diagonal Laplace curvature at the posterior mean: the widths a MAP warm start hands to
mean-field variational inference.

Near a mode the negative log joint is about quadratic with Hessian ``H``; for that quadratic,
the mean-field Gaussian that maximises ``E_q[log p(y | w)] - kl_weight * KL(q || p)`` has
``sigma_i^2 = kl_weight / (H_data_ii + kl_weight * H_prior_ii)``, where ``H_data`` is the
(generalised Gauss-Newton) curvature of the negative log-likelihood and ``H_prior`` that of
``KL(q || p)`` in the means. Starting variational inference there instead of at a tiny
``init_std`` skips the slow growth of sigma through the softplus tail (its gradient is
``sigmoid(rho) ~ init_std``), which otherwise leaves a "variational" fit at the MAP point.
"""
import torch

__all__ = ["data_curvature", "prior_curvature", "laplace_sigma"]


def data_curvature(guide, likelihood, x, y, chunk=256):
    """Diagonal of the Gauss-Newton matrix of the negative log-likelihood of (x, y) at the
    guide's means: ``sum_n J_n^T Lambda_n J_n`` with ``J_n = d f(x_n) / d mu`` and
    ``Lambda_n`` the likelihood's curvature in the outputs (noise precision for a Gaussian,
    ``diag(p) - p p^T`` for a categorical). Returns a (P,) tensor.
    """
    mu = guide.mu.detach()
    diag = torch.zeros_like(mu)

    def net(m, xb):
        return guide.forward_weights(xb, m.unsqueeze(0))[0]

    for start in range(0, x.shape[0], chunk):
        xb = x[start:start + chunk]
        J = torch.func.jacrev(net)(mu, xb)  # (B, k, P)
        if likelihood.kind == "gaussian":
            tau = torch.exp(likelihood.log_tau.detach())  # (k,)
            diag += torch.einsum("bkp,k->p", J * J, tau)
        else:
            p = torch.softmax(net(mu, xb), -1)  # (B, k)
            Jp = torch.einsum("bkp,bk->bp", J, p)  # sum_k p_k J_k
            diag += torch.einsum("bkp,bk->p", J * J, p) - (Jp * Jp).sum(0)
    return diag.clamp_min(0.0)


def prior_curvature(model, generator=None):
    """Diagonal of the Hessian of ``KL(q || p)`` in the means (exact for priors whose KL is
    separable in the means, as all of :mod:`surrogates.priors` are for fixed hyper-posteriors;
    Monte Carlo for the Cauchy prior; negative curvature, from heavy tails, is clipped to 0)."""
    mu = model.guide.mu.detach().clone().requires_grad_(True)
    sigma = model.guide.sigma().detach()
    kl = model.prior.kl(mu, sigma, model.guide.layers, generator, 64)
    (g,) = torch.autograd.grad(kl, mu, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), mu)
    return h.detach().clamp_min(0.0)


def laplace_sigma(model, x, y, n_data, kl_weight=1.0, generator=None, floor=1e-6, cap=1.0):
    """Mean-field widths at the current means (see the module docstring); ``x, y`` may be a
    subset of the ``n_data`` training points (the curvature is scaled up).

    Widths are clipped to ``[floor, cap]``: where neither the data nor the prior curves the
    objective (a dead unit, or a Laplace / Cauchy prior whose curvature at a narrow posterior
    sits in a spike at its centre) the quadratic model gives no width, and ``cap`` (in the
    standardised units the network works in) stands in.
    """
    h_data = data_curvature(model.guide, model.likelihood, x, y) * (n_data / x.shape[0])
    h_prior = prior_curvature(model, generator)
    return torch.sqrt(kl_weight / (h_data + kl_weight * h_prior).clamp_min(1e-30)).clamp(
        floor, cap)
