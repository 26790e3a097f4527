"""The post-hoc Laplace evidence: the prior-precision factor of each parameter tensor and the
noise precision of each output that maximise the Laplace approximation of the marginal
likelihood about fixed MAP weights w* (MacKay 1992, "Bayesian interpolation"; the post-hoc
"marglik" prior precision of the Laplace Redux library, ``laplace-torch``).

*Derivation.* Whiten the weights by the prior precision D of the MAP fit, v = D^1/2 (w - w*).
The generalised Gauss-Newton matrix is then ``R^T T R`` with R (N, P) one row per
(data point, output): for regression ``R = J D^-1/2`` and ``T = diag(tau_j(row))`` the noise
precisions; for classification ``R_n = (diag(sqrt p) - sqrt p p^T) J_n D^-1/2`` (a square root
of the softmax Hessian ``diag p - p p^T``) and T = I. With the prior precision ``C D``,
``C = diag(c_g)`` over the groups g (each layer's weight matrix and bias vector), the Laplace
evidence is, up to a constant,

    log Z(c, tau) = sum_j (n_j log tau_j - tau_j SSE_j) / 2          (regression only)
                  + sum_g (P_g log c_g - c_g q_g) / 2 - log det(C + R^T T R) / 2,

``q_g = sum_{i in g} D_i (w*_i - loc)^2``, ``SSE_j`` output j's residual sum of squares at w*.
Its gradient in the log parameters is

    d log Z / d log c_g   = (gamma_g - c_g q_g) / 2,   gamma_g = P_g - c_g tr_g(H^-1),
    d log Z / d log tau_j = (n_j - gamma_j - tau_j SSE_j) / 2,  gamma_j = tau_j tr(H^-1 R_j^T R_j),

H = C + R^T T R, the gammas counting the parameters the data determine: at the optimum each
group's precision is its determined count over its squared weights, and each noise variance
``SSE_j / (n_j - gamma_j)``, the residual variance with the fitted degrees of freedom taken
out, where the MAP's own noise ``SSE_j / n_j`` is biased low. With N <= P / 2 the traces and
the log-determinant are taken in data space by Woodbury: ``S = diag(sqrt tau)``,
``K = S R C^-1 R^T S``, ``log det H = sum_g P_g log c_g + log det(I + K)``,
``c_g tr_g(H^-1) = P_g - tr(W S R_g R_g^T S) / c_g`` and ``gamma_j = sum_{rows of j} (1 - W_rr)``
with ``W = (I + K)^-1``.

Example:
    >>> import torch
    >>> R = torch.eye(2, dtype=torch.float64)  # two weights, one data row each
    >>> c, tau = maximise(R, torch.tensor([0, 0]), [(0, 1), (1, 2)],
    ...                   q=torch.tensor([0.25, 4.0], dtype=torch.float64), gtol=1e-10)
    >>> # gamma = 1 / (1 + c) = c q in each group: c = (sqrt(1 + 4 / q) - 1) / 2
    >>> [round(v, 6) for v in c.tolist()]
    [1.561553, 0.207107]
"""
import math
import warnings

import numpy as np
import torch

__all__ = ["LaplaceEvidence", "maximise"]


def _group_index(groups, P):
    """(P,) index of the group (a slice ``(a, b)`` of ``groups``) each weight belongs to."""
    index = torch.full((P,), -1, dtype=torch.long)
    for g, (a, b) in enumerate(groups):
        index[a:b] = g
    if (index < 0).any():
        raise ValueError(f"the groups {groups!r} do not cover all {P} weights")
    return index


class LaplaceEvidence:
    """``log Z(c, tau)`` and its gradient (see the module docstring) for one network.

    Args:
        R: (N, P) float64 whitened GGN rows; row_output: (N,) output index of each row.
        groups: slices ``(a, b)`` covering the P weights.
        q: (G,) ``sum_g D (w* - loc)^2`` per group.
        sse: (k,) residual sums of squares per output, or None (classification: no noise).
    """

    def __init__(self, R, row_output, groups, q, sse=None):
        N, P = R.shape
        self.P, self.q, self.sse = P, q, sse
        self.index = _group_index(groups, P)
        self.sizes = torch.tensor([b - a for a, b in groups], dtype=torch.float64)
        self.row_output = row_output
        k = int(row_output.max()) + 1 if N else 1
        self.n_out = torch.bincount(row_output, minlength=k).to(torch.float64)
        self.dual = 2 * N <= P  # data space pays where it is much smaller
        if self.dual:  # Gram blocks per group
            self.blocks = torch.stack([R[:, a:b] @ R[:, a:b].T for a, b in groups])
        else:  # GGN blocks per output
            self.blocks = torch.stack([R[row_output == j].T @ R[row_output == j]
                                       for j in range(k)])

    def __call__(self, log_c, log_tau):
        """(log Z, d/d log c (G,), d/d log tau (k,)) at the given log parameters."""
        c, tau = torch.exp(log_c), torch.exp(log_tau)
        if self.dual:
            s = torch.sqrt(tau[self.row_output])
            ss = s[:, None] * s[None, :]
            N = len(s)
            flat = self.blocks.reshape(len(c), -1)  # sums over the groups: one gemv each
            K = (torch.reciprocal(c) @ flat).reshape(N, N) * ss
            K.diagonal().add_(1.0)
            L = torch.linalg.cholesky(K)
            logdet = (self.sizes * log_c).sum() + 2.0 * torch.log(torch.diagonal(L)).sum()
            W = torch.cholesky_inverse(L)
            gamma_g = (flat @ (W * ss).reshape(-1)) / c
            gamma_j = torch.zeros_like(tau).index_add_(0, self.row_output,
                                                      1.0 - torch.diagonal(W))
        else:
            logdet, Hi, trace_g, gamma_j = self._primal(c, tau)
            gamma_g = self.sizes - c * trace_g
        value = 0.5 * ((self.sizes * log_c).sum() - (c * self.q).sum() - logdet)
        grad_c = 0.5 * (gamma_g - c * self.q)
        grad_tau = torch.zeros_like(tau)
        if self.sse is not None:
            value = value + 0.5 * (self.n_out * log_tau - tau * self.sse).sum()
            grad_tau = 0.5 * (self.n_out - gamma_j - tau * self.sse)
        return value, grad_c, grad_tau

    def _primal(self, c, tau):
        """log det H, H^-1, tr_g(H^-1) per group and gamma_j per output (P-space form)."""
        k, P = len(self.blocks), self.P
        H = (tau @ self.blocks.reshape(k, -1)).reshape(P, P)
        H.diagonal().add_(c[self.index])
        L = torch.linalg.cholesky(H)
        Hi = torch.cholesky_inverse(L)
        trace_g = torch.zeros_like(c).index_add_(0, self.index, torch.diagonal(Hi))
        gamma_j = tau * (self.blocks.reshape(k, -1) @ Hi.reshape(-1))
        return 2.0 * torch.log(torch.diagonal(L)).sum(), Hi, trace_g, gamma_j

    def log_c_hessian(self, c, Hi, trace_g, E):
        """(G, G) second derivatives of log Z in log c at fixed noise precisions, in P space:
        ``(c c^T * S - diag(c tr_g(H^-1)) - diag(c q)) / 2``, ``S_gh`` the sum of
        ``(H^-1)_ab^2`` over a in g, b in h (``dH / d log c_h`` is ``c_h`` on group h's
        diagonal, so ``d tr_g(H^-1) / d log c_h = -c_h S_gh``). ``Hi`` is H^-1, ``trace_g``
        its trace per group, ``E`` the (G, P) indicator of the groups."""
        S = E @ (Hi * Hi) @ E.T
        return 0.5 * (c[:, None] * c[None, :] * S - torch.diag(c * trace_g + c * self.q))

    def newton(self, c, tau, free_tau, bounds, gtol, max_iter=200):
        """P-space maximisation: each step sets the noise precisions by MacKay's update
        ``tau_j = (n_j - gamma_j) / SSE_j`` and takes a Newton step in log c with the exact
        Hessian (:meth:`log_c_hessian`; a fixed-point step ``c = gamma / q`` where it is not
        negative definite), until the gradient is below ``gtol``. A factor at
        a bound that its gradient pushes against stays there and out of the step."""
        lo, hi = math.log(bounds[0]), math.log(bounds[1])
        E = torch.zeros(len(c), self.P, dtype=torch.float64)
        E[self.index, torch.arange(self.P)] = 1.0
        log_c = torch.log(c)
        for it in range(max_iter + 1):
            c = torch.exp(log_c)
            _, Hi, trace_g, gamma_j = self._primal(c, tau)
            gamma_g = self.sizes - c * trace_g
            grad_c = 0.5 * (gamma_g - c * self.q)
            at_bound = ((log_c <= lo) & (grad_c < 0)) | ((log_c >= hi) & (grad_c > 0))
            grad_c = torch.where(at_bound, 0.0, grad_c)
            grad_tau = 0.5 * (self.n_out - gamma_j - tau * self.sse) if free_tau else 0 * tau
            worst = float(max(grad_c.abs().max(), grad_tau.abs().max()))
            if worst <= gtol:
                break
            if it == max_iter:
                _not_converged(f"{max_iter} Newton steps", worst, gtol)
                break
            if free_tau:
                tau = (self.n_out - gamma_j) / self.sse
            # a projected Newton step: a factor held at its bound by the gradient takes no
            # step, and the others' step is Newton's for them alone (with the bound one in
            # the system, its coupling moved it off the bound and back, without end)
            free = ~at_bound
            hess = self.log_c_hessian(c, Hi, trace_g, E)[free][:, free]
            step = torch.zeros_like(log_c)
            newton = None
            if free.any() and torch.linalg.eigvalsh(hess).max() < 0:
                newton = torch.linalg.solve(hess, -grad_c[free])
            if newton is None or not torch.isfinite(newton).all():
                newton = torch.log(gamma_g.clamp_min(1e-300)
                                   / (c * self.q).clamp_min(1e-300))[free]
            step[free] = newton
            log_c = (log_c + step.clamp(-2.0, 2.0)).clamp(lo, hi)
        return torch.exp(log_c), tau


def maximise(R, row_output, groups, q, sse=None, tau=None, learn_noise=True,
             bounds=(1e-6, 1e6), gtol=1e-3):
    """The prior-precision factors c (G,) and noise precisions tau (k,) that maximise the
    Laplace evidence (module docstring), from c = 1 and the given tau: by L-BFGS-B on their
    logarithms in data space (N <= P / 2), by :meth:`LaplaceEvidence.newton` otherwise.
    Without ``sse`` (classification) or with ``learn_noise=False``, tau stays as given (ones if
    None). Each c_g is kept within ``bounds``; ``gtol`` bounds the
    gradient at the optimum (half the gap ``gamma - c q``, in numbers of parameters).

    Returns:
        (c, tau) float64 tensors.
    """
    from scipy.optimize import minimize

    G = len(groups)
    k = int(row_output.max()) + 1 if len(row_output) else 1
    tau = torch.ones(k, dtype=torch.float64) if tau is None else tau.to(torch.float64)
    ev = LaplaceEvidence(R, row_output, groups, q, sse)
    free_tau = sse is not None and learn_noise
    if not ev.dual:
        return ev.newton(torch.ones(G, dtype=torch.float64), tau, free_tau, bounds, gtol)

    def split(x):
        x = torch.as_tensor(x, dtype=torch.float64, device=tau.device)
        return x[:G], (x[G:] if free_tau else torch.log(tau))

    def neg(x):
        value, gc, gt = ev(*split(x))
        grad = torch.cat([gc, gt]) if free_tau else gc
        return -float(value), -grad.cpu().numpy()

    x0 = np.concatenate([np.zeros(G), torch.log(tau).cpu().numpy() if free_tau else []])
    lo, hi = math.log(bounds[0]), math.log(bounds[1])
    box = [(lo, hi)] * G + [(None, None)] * (k if free_tau else 0)
    res = minimize(neg, x0, jac=True, method="L-BFGS-B", bounds=box,
                   options={"maxiter": 1000, "ftol": 1e-13, "gtol": gtol})
    if not res.success:
        _not_converged(f"L-BFGS-B ({res.message})", float(np.abs(res.jac).max()), gtol)
    log_c, log_tau = split(res.x)
    return torch.exp(log_c), torch.exp(log_tau)


def _not_converged(how, gradient, gtol):
    warnings.warn(f"the Laplace evidence was not maximised: {how} left a gradient of "
                  f"{gradient:.3g} > gtol {gtol}; the posterior uses the last iterate's "
                  "prior and noise precisions", RuntimeWarning, stacklevel=3)
