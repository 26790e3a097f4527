"""K multilayer perceptrons of one architecture, their weights the rows of one (K, P) tensor.

Layer l's weight matrix (out x in, row-major) and bias follow each other in a row, the layout
of :class:`surrogates.meanfield.network.MeanFieldMLP`'s flat vectors. Evaluating all K networks
is one batched matmul per layer (``torch.baddbmm``), which is what makes fitting many small
networks at once cheap: the cost per step is the per-operation overhead of one network, not K
of them.

:meth:`StackedMLP.forward_tangent` pushes S weight directions through one network in forward
mode: ``f(x, w + dw) ~ f(x, w) + J(x) dw`` for all S directions at once (the linearised
network), layer by layer ``t' = act'(z) * (t W^T + h dW^T + db)``.

Example:
    >>> import torch
    >>> net = StackedMLP((2, 4, 1))
    >>> w = net.init([0, 1])
    >>> w.shape, net.forward(w, torch.zeros(2, 3, 2, dtype=torch.float64)).shape
    (torch.Size([2, 17]), torch.Size([2, 3, 1]))
"""
import math

import torch
from torch import nn

__all__ = ["tanh", "ACTIVATIONS", "StackedMLP"]


class _Tanh(torch.autograd.Function):
    """``tanh z = 2 sigmoid(2 z) - 1``, with ``tanh_backward`` as its derivative.

    torch's CPU ``tanh`` costs ~6 ns per float64 number, ~4x its ``sigmoid`` with the two
    extra multiplies (measured on this project's 2-core machine; in the Laplace MAP fits
    tanh was ~20% of the objective's time). The absolute error is that of the sigmoid and
    the subtraction, a few units of float64's 1e-16 (tested): below |z| ~ 1e-8 the relative
    accuracy of ``torch.tanh`` is lost, which a network's hidden unit does not need.
    """

    generate_vmap_rule = True  # torch.func transforms (jacrev, vmap) work through it

    @staticmethod
    def forward(z):
        return torch.sigmoid(z * 2.0).mul_(2.0).sub_(1.0)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad):
        (h,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, h)


def tanh(z):
    """``torch.tanh(z)`` to a few 1e-16 (absolute), about 3x faster on a CPU (see
    ``_Tanh``); differentiable. Where nothing records a graph (a plain tensor without
    ``requires_grad``, or grad mode off, outside torch.func transforms), the same numbers
    without the ``autograd.Function`` machinery (~30 us a call: 9% of a 64-point MAP
    objective's evaluation, whose backward pass is hand-written)."""
    if (not (z.requires_grad and torch.is_grad_enabled())
            and torch._C._functorch.maybe_get_level(z) == -1):
        return _Tanh.forward(z)
    return _Tanh.apply(z)


#: Hidden activations, and their derivatives given the pre-activation z and output h.
ACTIVATIONS = {"tanh": tanh, "relu": torch.relu, "sigmoid": torch.sigmoid,
               "softplus": nn.functional.softplus, "identity": lambda x: x}
_DERIVATIVES = {"tanh": lambda z, h: 1.0 - h * h,
                "relu": lambda z, h: (z > 0).to(z.dtype),
                "sigmoid": lambda z, h: h * (1.0 - h),
                "softplus": lambda z, h: torch.sigmoid(z),
                "identity": lambda z, h: torch.ones_like(z)}


class StackedMLP:
    """K MLPs with layer widths ``sizes`` (input first) and a linear output layer.

    Args:
        sizes: layer widths, e.g. (5, 30, 15, 10, 3).
        activation: the hidden layers' activation, a key of :data:`ACTIVATIONS`.
    """

    def __init__(self, sizes, activation="tanh"):
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; use one of "
                             f"{sorted(ACTIVATIONS)}")
        self.sizes = tuple(int(s) for s in sizes)
        if len(self.sizes) < 2 or min(self.sizes) < 1:
            raise ValueError(f"sizes must list >= 2 positive widths, got {sizes!r}")
        self.activation = activation
        self.layers = []
        start = 0
        for fan_in, fan_out in zip(self.sizes[:-1], self.sizes[1:]):
            stop = start + fan_out * fan_in + fan_out
            self.layers.append((start, stop))
            start = stop
        self.n_params = start

    def tensors(self):
        """The slices ``(a, b)`` of the weight vector that hold each layer's weight matrix and
        each layer's bias vector, in order (laplace-torch's parameter tensors)."""
        out = []
        for (a, b), fan_in, fan_out in zip(self.layers, self.sizes[:-1], self.sizes[1:]):
            out += [(a, a + fan_out * fan_in), (a + fan_out * fan_in, b)]
        return out

    def init(self, seeds, dtype=torch.float64):
        """(K, P) initial weights, one row per seed: weights ``N(0, 1 / fan_in)`` from
        ``torch.Generator().manual_seed(seed)``, biases 0 (a row depends on its seed only)."""
        rows = []
        for seed in seeds:
            gen = torch.Generator().manual_seed(int(seed))
            parts = []
            for fan_in, fan_out in zip(self.sizes[:-1], self.sizes[1:]):
                parts += [torch.randn(fan_out * fan_in, generator=gen, dtype=dtype)
                          / math.sqrt(fan_in), torch.zeros(fan_out, dtype=dtype)]
            rows.append(torch.cat(parts))
        return torch.stack(rows)

    def split(self, w, l):
        """Weight (..., out, in) and bias (..., out) of layer l from (..., P) weights."""
        a, _ = self.layers[l]
        fan_in, fan_out = self.sizes[l], self.sizes[l + 1]
        W = w[..., a:a + fan_out * fan_in].unflatten(-1, (fan_out, fan_in))
        b = w[..., a + fan_out * fan_in:a + fan_out * fan_in + fan_out]
        return W, b

    def _act(self, z):
        return ACTIVATIONS[self.activation](z)

    def _act_grad(self, z, h):
        return _DERIVATIVES[self.activation](z, h)

    @staticmethod
    def _affine(b, h, W):
        """``h W^T + b`` per network: (K, N, out) from b (K, out), h (K, N, in), W (K, out, in).

        A layer of one output is a row-wise dot product: torch's batched matmul takes another
        summation order for one network (K = 1) than for several there, so a member of a
        batched fit differed from its single fit by 2e-15 per evaluation, and L-BFGS made that
        6e-3 in the predictions of an unconverged fit."""
        if W.shape[1] == 1:
            return torch.linalg.vecdot(h, W).unsqueeze(2).add_(b.unsqueeze(1))
        return torch.baddbmm(b.unsqueeze(1), h, W.transpose(1, 2))

    def forward(self, w, x):
        """(K, N, k) outputs of the K networks w (K, P) at their inputs x (K, N, d)."""
        h = x
        last = len(self.layers) - 1
        for l in range(len(self.layers)):
            W, b = self.split(w, l)
            h = self._affine(b, h, W)
            if l < last:
                h = self._act(h)
        return h

    def forward_cached(self, w, x):
        """(K, N, k) outputs of the K networks w (K, P) at x (K, N, d), and what
        :meth:`backward` needs (each layer's input and pre-activation)."""
        h, ins, zs = x, [], []
        last = len(self.layers) - 1
        for l in range(len(self.layers)):
            W, b = self.split(w, l)
            ins.append(h)
            z = self._affine(b, h, W)
            zs.append(z)
            h = self._act(z) if l < last else z
        return h, (ins, zs)

    def backward(self, w, cache, g):
        """(K, P) gradient of ``sum(g * f)`` in the weights, f the outputs of
        :meth:`forward_cached` (its ``cache``) and g (K, N, k): backpropagation by hand,
        per layer ``dW = g^T h``, ``db = sum_n g``, ``g <- (g W) * act'``."""
        ins, zs = cache
        parts = []
        for l in range(len(self.layers) - 1, -1, -1):
            W, _ = self.split(w, l)
            parts.append(g.sum(1))
            parts.append(torch.bmm(g.transpose(1, 2), ins[l]).flatten(1))
            if l:
                gh = torch.bmm(g, W)
                h = ins[l]
                g = (torch.ops.aten.tanh_backward(gh, h) if self.activation == "tanh"
                     else gh * self._act_grad(zs[l - 1], h))
        return torch.cat(parts[::-1], 1)

    def forward_one(self, w, x):
        """(N, k) outputs of one network w (P,) at x (N, d)."""
        return self.forward(w.unsqueeze(0), x.unsqueeze(0))[0]

    def forward_tangent(self, w, x, dw):
        """Outputs (N, k) of network w (P,) at x (N, d), and the (S, N, k) directional
        derivatives ``J(x) dw_s`` along the S rows of dw (S, P) (a view of an (N, S, k)
        tensor).

        Per layer, ``t_l = (h_{l-1} dW_l^T + db_l + t_{l-1} W_l^T) * act'(z_l)``, with the
        tangents held as (N, S, width): two plain matmuls per layer, of the inputs (N, in)
        with every direction's weights (in, S out) and of the stacked tangents (N S, in) with
        W^T, in place. A batched matmul over the S directions instead (S small products)
        took 1.5x as long (1e5 inputs x 50 or 200 draws, 1 thread). Memory-bound: callers
        keep S x N x width within the cache, N about 32768 / S.
        """
        h = x
        t = None
        last = len(self.layers) - 1
        S, N = dw.shape[0], x.shape[0]
        for l in range(len(self.layers)):
            W, b = self.split(w, l)
            dW, db = self.split(dw, l)
            fan_out, fan_in = W.shape
            z = torch.addmm(b, h, W.t())
            tz = torch.addmm(db.reshape(-1), h, dW.reshape(S * fan_out, fan_in).t())
            if t is not None:  # (N S, out) += (N S, in) @ (in, out)
                tz.view(N * S, fan_out).addmm_(t.view(N * S, fan_in), W.t())
            tz = tz.view(N, S, fan_out)
            if l < last:
                h = self._act(z)
                t = tz.mul_(self._act_grad(z, h).unsqueeze(1))
            else:
                h, t = z, tz
        return h, t.transpose(0, 1)

    def jacobian(self, w, x):
        """(N, k, P) Jacobian of network w (P,)'s outputs at x (N, d) in its weights.

        Per-sample backpropagation of the k output directions at once: with ``delta`` (N, k,
        out) the derivative of the outputs in layer l's pre-activation, layer l's weight block
        is ``delta (x) h_{l-1}`` and its bias block ``delta``; then
        ``delta <- (delta W_l) * act'(z_{l-1})``.
        """
        hs, outs = [x], []
        h = x
        last = len(self.layers) - 1
        for l in range(len(self.layers)):
            W, b = self.split(w, l)
            z = torch.addmm(b, h, W.t())
            h = self._act(z) if l < last else z
            outs.append((z, h))
            hs.append(h)
        N, k = x.shape[0], self.sizes[-1]
        blocks = [None] * (2 * len(self.layers))
        delta = torch.eye(k, dtype=x.dtype, device=x.device).expand(N, k, k)
        for l in range(last, -1, -1):
            h_in = hs[l]
            blocks[2 * l] = (delta.unsqueeze(-1) * h_in[:, None, None, :]).flatten(2)
            blocks[2 * l + 1] = delta
            if l > 0:
                W, _ = self.split(w, l)
                z, h = outs[l - 1]
                delta = torch.matmul(delta, W) * self._act_grad(z, h).unsqueeze(1)
        return torch.cat(blocks, dim=2)
