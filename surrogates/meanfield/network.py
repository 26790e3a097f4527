"""The mean-field Gaussian variational family over the weights of an MLP.

All means and softplus-parameterised standard deviations live in two flat vectors, so the
KL and the optimiser touch two tensors instead of two per layer. Layer l's weight matrix
(out x in) and bias follow each other in the vectors; ``MeanFieldMLP.layers`` gives
each layer's (start, stop) slice.
"""
import math

import torch
from torch import nn

from ..stacked import ACTIVATIONS, StackedMLP

__all__ = ["softplus_inverse", "MeanFieldMLP"]


def softplus_inverse(y):
    """rho with softplus(rho) = y, for a float or a tensor of positive values."""
    if isinstance(y, torch.Tensor):
        return y + torch.log(-torch.expm1(-y))
    return y + math.log(-math.expm1(-y))


class MeanFieldMLP(nn.Module):
    """q(w) = prod_i N(mu_i, softplus(rho_i)^2) over the weights of an MLP.

    Args:
        sizes: layer widths, input first, output last (e.g. (5, 30, 15, 10, 3)).
        activation: hidden activation (``tanh`` by default); the output layer is linear.
        init_std: initial posterior standard deviation of every weight (small).
        generator: torch generator for the fan-in scaled initial means
            ``N(0, 1 / fan_in)`` (biases start at 0).
    """

    def __init__(self, sizes, activation="tanh", init_std=1e-3, dtype=torch.float32,
                 generator=None):
        super().__init__()
        if not init_std > 0:
            raise ValueError(f"init_std must be > 0, got init_std={init_std!r}")
        # the layout (and forward pass) of the weight vectors: one StackedMLP
        self.net = StackedMLP(sizes, activation)
        self.sizes, self.layers, self.n_params = self.net.sizes, self.net.layers, self.net.n_params
        self.activation = activation
        self._act = ACTIVATIONS[activation]
        means = []
        for fan_in, fan_out in zip(self.sizes[:-1], self.sizes[1:]):
            w = torch.randn(fan_out * fan_in, generator=generator, dtype=dtype) / math.sqrt(fan_in)
            means += [w, torch.zeros(fan_out, dtype=dtype)]
        # pieces of the flat vector, in order: W_0 (flattened), b_0, W_1, b_1, ...
        self._chunks = [len(m) for m in means]
        self.mu = nn.Parameter(torch.cat(means))
        self.rho = nn.Parameter(torch.full((self.n_params,), softplus_inverse(init_std),
                                           dtype=dtype))

    def sigma(self):
        """(P,) posterior standard deviations, softplus(rho)."""
        return nn.functional.softplus(self.rho)

    def _split(self, flat, l):
        """Weight (..., out, in) and bias (..., out) of layer l from a (..., P) vector."""
        return self.net.split(flat, l)

    def forward_local(self, x, n_samples=1, generator=None, sigma=None):
        """(S, B, out) outputs with the local reparameterisation trick: every pre-activation
        is drawn from its exact Gaussian under q, independently per data point.

        The S samples are stacked along the batch so each layer is two ``addmm`` calls;
        ``sigma`` may pass in an already computed ``self.sigma()``.
        """
        if sigma is None:
            sigma = self.sigma()
        mus = torch.split(self.mu, self._chunks)
        variances = torch.split(sigma * sigma, self._chunks)
        B = x.shape[0]
        h = x if n_samples == 1 else x.repeat(n_samples, 1)
        last = len(self.layers) - 1
        for l in range(len(self.layers)):
            shape = (self.sizes[l + 1], self.sizes[l])
            mean = torch.addmm(mus[2 * l + 1], h, mus[2 * l].view(shape).t())
            var = torch.addmm(variances[2 * l + 1], h * h, variances[2 * l].view(shape).t())
            eps = torch.randn(mean.shape, generator=generator, dtype=mean.dtype,
                              device=mean.device)
            h = torch.addcmul(mean, var.sqrt(), eps)
            if l < last:
                h = self._act(h)
        return h.view(n_samples, B, self.sizes[-1])

    def forward_local_fused(self, x, n_samples=1, generator=None, sigma=None):
        """Same distribution as :meth:`forward_local` (tanh networks), with a hand-written
        backward pass: one autograd node instead of ~30, about 2.5x faster per step."""
        if sigma is None:
            sigma = self.sigma()
        h = x if n_samples == 1 else x.repeat(n_samples, 1)
        eps = torch.randn((h.shape[0], sum(self.sizes[1:])), generator=generator,
                          dtype=h.dtype, device=h.device)
        out = _LocalReparamTanh.apply(h, self.mu, sigma, eps, self.sizes, self._chunks)
        return out.view(n_samples, x.shape[0], self.sizes[-1])

    def sample_weights(self, n_samples, generator=None):
        """(S, P) weight vectors drawn from q."""
        eps = torch.randn((n_samples, self.n_params), generator=generator, dtype=self.mu.dtype,
                          device=self.mu.device)
        return self.mu + self.sigma() * eps

    def forward_weights(self, x, weights):
        """(S, B, out) outputs of the network for each of the S weight vectors (function
        samples, the same draw for every input)."""
        return self.net.forward(weights, x.unsqueeze(0).expand(weights.shape[0], *x.shape))

    def draw_weights(self, weights):
        """Per layer, the (S, in, out) weights and (S, 1, out) biases of
        :meth:`forward_draws` for the S weight vectors ``weights`` (S, P)."""
        sig = self.activation == "tanh"
        out, last = [], len(self.layers) - 1
        for l in range(len(self.layers)):
            W, b = self.net.split(weights, l)
            if sig and l > 0:  # the input is u = (1 + tanh) / 2: tanh = 2u - 1
                b = b - W.sum(-1)
                W = 2.0 * W
            if sig and l < last:  # sigmoid(2z) = (1 + tanh z) / 2
                W, b = 2.0 * W, 2.0 * b
            out.append((W.transpose(1, 2).contiguous(), b.unsqueeze(1).contiguous()))
        return out

    def forward_draws(self, x, layers):
        """(S, B, out) outputs at x (B, d) of the S networks of :meth:`draw_weights`: the
        function samples of :meth:`forward_weights`, equal to rounding. For tanh the hidden
        units are carried as ``u = sigmoid(2 z) = (1 + tanh z) / 2`` with the factors
        folded into the weights: one ``baddbmm`` and one in-place ``sigmoid`` per layer,
        about twice as fast as ``tanh`` on a CPU."""
        last = len(layers) - 1
        h = x.unsqueeze(0).expand(layers[0][0].shape[0], *x.shape)
        for l, (Wt, b) in enumerate(layers):
            h = torch.baddbmm(b, h, Wt)
            if l < last:
                h = h.sigmoid_() if self.activation == "tanh" else self._act(h)
        return h

    def forward_mean(self, x):
        """Output of the network at the posterior mean weights."""
        return self.forward_weights(x, self.mu.unsqueeze(0))[0]


class _LocalReparamTanh(torch.autograd.Function):
    """Local reparameterisation through a tanh MLP with a manual backward.

    Forward, layer l: ``m = h W_mu^T + b_mu``, ``v = h^2 (W_sigma^2)^T + b_sigma^2``,
    ``z = m + sqrt(v) eps``, ``h' = tanh(z)`` (no tanh on the last layer). Backward, with
    ``g = dL/dz``: ``dL/dm = g``, ``dL/dv = g eps / (2 sqrt(v))``, then the usual linear-layer
    gradients for (W_mu, b_mu) from ``dL/dm`` and for (W_sigma^2, b_sigma^2) from ``dL/dv``, and
    ``dL/dh = dL/dm W_mu + 2 h (dL/dv W_sigma^2)``.
    """

    @staticmethod
    def forward(ctx, h, mu, sigma, eps, sizes, chunks):
        variance = sigma * sigma
        mus = torch.split(mu, chunks)
        variances = torch.split(variance, chunks)
        eps_l = torch.split(eps, list(sizes[1:]), dim=1)
        n_layers = len(sizes) - 1
        saved = []
        for l in range(n_layers):
            shape = (sizes[l + 1], sizes[l])
            Wm, Wv = mus[2 * l].view(shape), variances[2 * l].view(shape)
            h2 = h * h
            mean = torch.addmm(mus[2 * l + 1], h, Wm.t())
            sd = torch.addmm(variances[2 * l + 1], h2, Wv.t()).sqrt_()
            z = torch.addcmul(mean, sd, eps_l[l])
            out = torch.tanh(z) if l < n_layers - 1 else z
            saved += [h, h2, eps_l[l].div(sd).mul_(0.5), out]  # dz/dv = eps / (2 sd)
            h = out
        ctx.save_for_backward(mu, sigma, variance, *saved)
        ctx.sizes, ctx.chunks = sizes, chunks
        return h

    @staticmethod
    def backward(ctx, g):
        mu, sigma, variance, *saved = ctx.saved_tensors
        sizes, chunks = ctx.sizes, ctx.chunks
        n_layers = len(sizes) - 1
        mus = torch.split(mu, chunks)
        variances = torch.split(variance, chunks)
        g_mu = [None] * (2 * n_layers)
        g_var = [None] * (2 * n_layers)
        for l in range(n_layers - 1, -1, -1):
            h, h2, dz_dv, out = saved[4 * l:4 * l + 4]
            if l < n_layers - 1:
                g = torch.ops.aten.tanh_backward(g, out)
            gv = g * dz_dv
            g_mu[2 * l] = torch.mm(g.t(), h).view(-1)
            g_mu[2 * l + 1] = g.sum(0)
            g_var[2 * l] = torch.mm(gv.t(), h2).view(-1)
            g_var[2 * l + 1] = gv.sum(0)
            if l > 0:
                shape = (sizes[l + 1], sizes[l])
                gh = torch.mm(g, mus[2 * l].view(shape))
                g = torch.addcmul(gh, h, torch.mm(gv, variances[2 * l].view(shape)), value=2.0)
        grad_mu = torch.cat(g_mu)
        grad_sigma = torch.cat(g_var).mul_(sigma).mul_(2.0)
        return None, grad_mu, grad_sigma, None, None, None
