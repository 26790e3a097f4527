"""Mean-field variational inference for K Bayesian MLPs of one architecture at once.

The fast path of ``BDL(inference="meanfield")``: :func:`train` fits K regression networks
(K = 1 for a single :meth:`surrogates.BDL.fit`, K > 1 for :func:`surrogates.fit_many`) with
the same objective and settings as the autograd trainer of :class:`surrogates.BayesianModel`:
the minibatch ELBO with local reparameterisation, a Gaussian likelihood with a learned noise
precision per output (optionally a Gamma hyperprior), a normal or Laplace weight prior in
closed form, Adam with the step-decay learning rate and the linear KL annealing.

A training step at the paper's size (5-30-15-10-3 at batch 16) is ~0.15 MFLOP, so its cost
is the number of tensor operations (~4.5 us each on a small CPU), not arithmetic. The step
is therefore written by hand, forward and backward, on preallocated buffers:

* the K networks' means and variances are one (K, 2, P) tensor, read as 2K weight sets, so
  each layer's mean and variance pre-activations of all K members are one ``baddbmm`` of the
  stacked [h, h^2] inputs; each layer's weight gradients of all K members are one ``bmm`` of
  the stacked [dL/dm, dL/dv] and [h, h^2]; its input gradients one more ``bmm``;
* the KL and its gradients are the prior's closed forms for K members at once
  (``kl_members``, ``kl_gradient_factor`` and ``add_kl_gradient_`` of
  :class:`surrogates.priors.NormalPrior` and :class:`~surrogates.priors.LaplacePrior`: the
  prior owns its math, the trainer only the entropy's part); the optimiser is torch's fused
  Adam (``_fused_adam_``,
  one call per step for all members with the same learning rate at that step);
* minibatch indices, weights, learning rates and the reparameterisation noise of a block of
  steps are prepared at once.

That is ~60 tensor calls per step whatever K. ``torch.compile`` of this step was measured
and is not used: ~7 s of compilation (which counts in a fit's time) for no faster step
(0.90 against 0.99 ms per step, back to back on the loaded 2-core machine).

Random streams: member k draws its initial means, its batch orders and its noise from its
own ``torch.Generator().manual_seed(seed_k)``, in blocks whose size depends only on the
group's shared settings, so a member's fit does not depend on its batch-mates: a member of
a batched fit equals the single fit with the same seed and settings (to rounding, tested).
Each member keeps its own epochs and minibatches: a member with fewer rows has fewer steps
per epoch (its last batch of an epoch may be partial; padded rows carry zero weight); a
member that finishes early stops updating. The stream differs from the autograd trainer's
(which interleaves batch orders and noise on one generator), so a fit here differs from an
autograd fit by its random draws only; both optimise the same ELBO (tested statistically).

Devices: the same step runs on any torch device (``device="cuda"``). There the initial means
and batch orders still come from the member's CPU generator (a seed gives the same ones on
every device), but the noise comes from a generator on the device seeded alike, drawn where
it is used, and a block is longer (``BLOCK_NUMBERS_DEVICE``, at most ``BLOCK_STEPS_DEVICE``
steps), because the host waits for the device only once per block: to read the block's
record. A fit on cuda therefore differs from the CPU's by its noise draws only, as the
autograd trainer's does.

``history_`` per epoch: ``nll`` is the mean over the epoch's minibatches of the per-row
negative log-likelihood (as the autograd trainer); ``kl`` is the KL at the end of the epoch
(the autograd trainer averages it over the epoch's steps), and ``elbo`` combines the two.

Imports: numpy, torch, :mod:`surrogates.priors`, :mod:`surrogates.likelihoods` and
:mod:`.fused_step`.
"""
import math
from contextlib import nullcontext

import numpy as np
import torch

from ..likelihoods import LOG_2PI
from ..priors import DIRECT
from .fused_step import ADAM_SETTINGS, adam_groups
from .fused_step import capture as _capture

__all__ = ["BLOCK_NUMBERS", "BLOCK_NUMBERS_DEVICE", "BLOCK_STEPS_DEVICE",
           "direct_prior", "Member", "init_means", "train"]


#: Upper bound on the noise numbers a member draws per block (the block's length in steps is
#: this over the numbers per step: a function of the group's shared settings only).
BLOCK_NUMBERS = 1 << 17
#: The same bound on an accelerator, where a block ends in the one wait of the host for the
#: device.
BLOCK_NUMBERS_DEVICE = 1 << 24
#: The most steps a block on an accelerator takes (a block's buffers are allocated whole).
BLOCK_STEPS_DEVICE = 4096
#: On cuda, a step of all members at one learning rate (the whole step and its Adam update,
#: ~65 kernels of a few microseconds each) is captured once as a CUDA graph and replayed:
#: one launch instead of ~65 (:mod:`surrogates.meanfield.fused_step`).
CUDA_GRAPHS = True


def direct_prior(prior):
    """(kind, loc, scale) of a prior the batched trainer supports, else None: normal and
    Laplace priors, and hierarchical ones with a point-mass scale (which are those); the prior
    says so itself (:meth:`surrogates.priors.Prior.meanfield_spec`)."""
    return prior.meanfield_spec()


class Member:
    """One network's data and settings. X (n, d) and Y (n, k): float32 training rows (already
    standardised); ``prior``: from :func:`direct_prior`; ``noise_prior``: None or (a, b)."""

    def __init__(self, X, Y, seed, epochs, lr, lr_step, lr_gamma, kl_weight, kl_anneal, prior,
                 init_std, noise_std, noise_prior):
        self.X, self.Y = X, Y
        self.n = X.shape[0]
        self.seed, self.epochs = int(seed), int(epochs)
        self.lr, self.lr_step, self.lr_gamma = float(lr), int(lr_step), float(lr_gamma)
        self.kl_weight, self.kl_anneal = float(kl_weight), int(kl_anneal)
        self.prior = prior
        self.init_std, self.noise_std = float(init_std), float(noise_std)
        self.noise_prior = noise_prior

    def kl_weight_at(self, epoch):
        """As ``_BaseBDL._kl_weight_at`` (epoch 1-based)."""
        return self.kl_weight * (min(1.0, epoch / self.kl_anneal) if self.kl_anneal else 1.0)


def _layers(sizes):
    out, start = [], 0
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        out.append((start, fan_out, fan_in))
        start += fan_out * fan_in + fan_out
    return out, start


def init_means(sizes, gen):
    """Initial means: ``N(0, 1 / fan_in)`` weights, zero biases (as MeanFieldMLP)."""
    parts = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        parts += [torch.randn(fan_out * fan_in, generator=gen) / math.sqrt(fan_in),
                  torch.zeros(fan_out)]
    return torch.cat(parts)


class _Schedule:
    """A member's batch order, drawn epoch by epoch from its generator."""

    def __init__(self, member, B, gen):
        self.m, self.B, self.gen = member, B, gen
        self.spe = -(-member.n // B)  # steps per epoch
        self.total = member.epochs * self.spe
        self.epoch, self.perm = -1, None

    def batches(self, steps):
        """(len(steps), B) row indices (padding: row 0) and their counts, for global steps
        ``steps`` (consecutive, all < total)."""
        n, B, spe = self.m.n, self.B, self.spe
        epochs, pos = np.divmod(steps, spe)
        table = np.zeros((epochs[-1] - epochs[0] + 1, spe * B), dtype=np.int64)
        for j, e in enumerate(range(epochs[0], epochs[-1] + 1)):
            if e != self.epoch:
                self.epoch = e
                self.perm = torch.randperm(n, generator=self.gen).numpy()
            table[j, :n] = self.perm
        cols = pos[:, None] * B + np.arange(B)
        rows = table[epochs[:, None] - epochs[0], cols]
        counts = np.minimum(B, n - pos * B)
        return rows, counts


def train(sizes, members, n_samples=1, batch_size=16, learn_noise=True, progress=None,
          device="cpu", cuda_graph=None):
    """Fit the K ``members`` (a list of :class:`Member`, one architecture ``sizes``, tanh
    hidden layers, linear output) on the torch ``device``; returns per member a dict with
    ``mu``, ``rho`` (P,), ``log_tau`` (k,) float32 tensors (on the device) and ``history``
    (per-epoch lists).

    ``progress``: None, or a callable given the fraction of steps done after each block.
    ``cuda_graph``: on cuda, replay each step as a CUDA graph (None: ``CUDA_GRAPHS``)."""
    fit = _BatchedFit(sizes, members, int(n_samples), int(batch_size), learn_noise,
                      torch.device(device), cuda_graph)
    for first in range(0, fit.total_steps, fit.block):
        fit.run_block(first)
        if progress is not None:
            progress(min(1.0, (first + fit.block) / fit.total_steps))
    return fit.results()


class _BatchedFit:
    """The state of one batched fit: every member's parameters, Adam moments, data and random
    streams, and the buffers of a block of steps (``block`` steps prepared at once: their
    minibatches, weights, KL weights and noise, then stepped one by one)."""

    def __init__(self, sizes, members, n_samples, batch_size, learn_noise, device,
                 cuda_graph=None):
        f32 = torch.float32
        self.device = dev = device
        on_cpu = dev.type == "cpu"
        self.sizes, self.members = sizes, members
        self.n_members = n_members = len(members)
        self.layers, self.n_params = _layers(sizes)
        n_in, n_out = sizes[0], sizes[-1]
        self.n_samples, self.batch = n_samples, batch_size
        rows = n_samples * batch_size  # the rows of one step: every draw of every batch row
        units = sum(sizes[1:])  # the noise numbers one row of one step draws
        kinds = {m.prior[0] for m in members}
        if len(kinds) != 1:
            raise ValueError("one batched fit takes one prior family (normal or laplace)")
        self.kind = kinds.pop()
        self.closed_form = DIRECT[self.kind]  # the prior class that owns the KL's closed forms

        self.gens = [torch.Generator().manual_seed(m.seed) for m in members]
        # the noise's: the same generators on a CPU, else one on the device per member
        self.noise_gens = self.gens if on_cpu else [
            torch.Generator(device=dev).manual_seed(m.seed) for m in members]
        # [:, 0] means, [:, 1] rho (sigma = softplus)
        theta = torch.empty(n_members, 2, self.n_params, dtype=f32)
        log_tau = torch.empty(n_members, n_out, dtype=f32)
        for i, (m, g) in enumerate(zip(members, self.gens)):
            theta[i, 0] = init_means(sizes, g)
            theta[i, 1] = m.init_std + math.log(-math.expm1(-m.init_std))
            log_tau[i] = -2.0 * math.log(m.noise_std)
        self.theta = theta = theta.to(dev)
        self.log_tau = log_tau = log_tau.to(dev)
        self.grad = torch.zeros_like(theta)
        self.g_tau = torch.zeros_like(log_tau)
        self.exp_avg = [torch.zeros_like(theta), torch.zeros_like(log_tau)]
        self.exp_avg_sq = [torch.zeros_like(theta), torch.zeros_like(log_tau)]
        # Adam's step count (all members step together)
        self.step_t = torch.zeros((), dtype=f32, device=dev)

        # data: a (K * 2 * N, d) table of [x, x^2] per member, (K * N, k) targets
        self.max_rows = max_rows = max(m.n for m in members)
        xtab = torch.zeros(n_members, 2, max_rows, n_in, dtype=f32)
        ytab = torch.zeros(n_members, max_rows, n_out, dtype=f32)
        for i, m in enumerate(members):
            xtab[i, 0, :m.n] = m.X
            xtab[i, 1, :m.n] = m.X * m.X
            ytab[i, :m.n] = m.Y
        self.xtab, self.ytab = xtab.view(-1, n_in).to(dev), ytab.view(-1, n_out).to(dev)

        # prior constants per member
        loc = torch.tensor([m.prior[1] for m in members], dtype=f32).view(n_members, 1)
        self.any_loc = bool(loc.abs().max() > 0)
        self.loc = loc.to(dev)
        self.scale = np.array([m.prior[2] for m in members])
        self.scale_t = torch.as_tensor(self.scale, dtype=f32).view(n_members, 1).to(dev)
        noise_a = np.array([0.0 if m.noise_prior is None else m.noise_prior[0] - 1.0
                            for m in members])
        noise_b = np.array([0.0 if m.noise_prior is None else m.noise_prior[1]
                            for m in members])
        hyper = learn_noise and any(m.noise_prior is not None for m in members)
        self.n_rows = np.array([m.n for m in members], dtype=float)
        hyper_a = torch.tensor(noise_a / self.n_rows, dtype=f32).view(n_members, 1).to(dev)
        hyper_b = torch.tensor(noise_b / self.n_rows, dtype=f32).view(n_members, 1).to(dev)
        self.mu, self.rho = theta[:, 0], theta[:, 1]
        self.step = _make_step(sizes, n_members, rows, theta, log_tau, self.grad, self.g_tau,
                               self.loc, self.any_loc, self.closed_form.add_kl_gradient_,
                               learn_noise, hyper, hyper_a, hyper_b)

        # blocks of steps
        self.block = block = (max(1, BLOCK_NUMBERS // (rows * units)) if on_cpu else
                              min(BLOCK_STEPS_DEVICE,
                                  max(1, BLOCK_NUMBERS_DEVICE // (rows * units))))
        self.schedules = [_Schedule(m, batch_size, g) for m, g in zip(members, self.gens)]
        self.total_steps = max(s.total for s in self.schedules)
        self.offsets = [0] + list(np.cumsum(sizes[1:]))

        def empty(*shape, dtype=f32):
            return torch.empty(*shape, dtype=dtype, device=dev)
        self.eps_blk = [empty(block, n_members, rows, o) for o in sizes[1:]]
        self.xidx_blk = empty(block, 2 * n_members * rows, dtype=torch.int64)
        self.yidx_blk = empty(block, n_members * rows, dtype=torch.int64)
        # the block's minibatches, gathered at once: (C, 2K, SB, d) [x, x^2] and (C, K, SB, k)
        self.x_blk = empty(block, 2 * n_members, rows, n_in)
        self.y_blk = empty(block, n_members, rows, n_out)
        self.w_blk = empty(block, n_members, rows, 1)
        self.kla_blk = empty(block, n_members, 1)  # KL weight / (n * factor)
        self.klc_blk = empty(block, n_members, 1)  # KL weight / n
        self.gr_hist = empty(block, n_members, n_out)
        self.tau_hist = empty(block, n_members, n_out)
        # at each epoch end: the KL and the log noise precisions, read with the block's record
        self.kl_end = empty(block, n_members)
        self.tau_end = empty(block, n_members, n_out)
        # per member, per step: nll; per member, per epoch end: kl and hyperprior
        self.nll_steps = [[] for _ in range(n_members)]
        self.epoch_kl = [[] for _ in range(n_members)]
        self.epoch_hyp = [[] for _ in range(n_members)]
        # position of each of the S * B rows in its batch
        self.pad_w = np.tile(np.arange(batch_size), n_samples)
        self.factor = self.closed_form.kl_gradient_factor(self.scale)
        self.adam_key = self.adam_args = None
        # on cuda the step is captured as a CUDA graph after its first whole step
        self.use_graph = dev.type == "cuda" and (CUDA_GRAPHS if cuda_graph is None
                                                 else bool(cuda_graph))
        self.graph = None

    def kl_values(self, c):
        """Keep for the record, at step ``c`` of the block (an epoch end), every member's
        KL(q || p) at the current parameters, the closed forms of
        :meth:`surrogates.priors.NormalPrior.kl` and :meth:`LaplacePrior.kl` for all at once,
        and its log noise precisions (for the log hyperprior, :meth:`_hyperprior`)."""
        with torch.no_grad():
            sigma = torch.nn.functional.softplus(self.rho)
            centred = self.mu - self.loc if self.any_loc else self.mu
            self.kl_end[c].copy_(self.closed_form.kl_members(centred, sigma, self.scale_t))
            self.tau_end[c].copy_(self.log_tau)

    def _hyperprior(self, i, log_tau):
        """Member i's log Gamma hyperprior density of its noise precisions at ``log_tau``
        ((k,) CPU tensor); 0 without one."""
        m = self.members[i]
        if m.noise_prior is None:
            return 0.0
        a, b = map(float, m.noise_prior)
        return float((a * math.log(b) - math.lgamma(a) + (a - 1) * log_tau
                      - b * torch.exp(log_tau)).sum())

    def _prepare_block(self, first, count):
        """The block's batches, weights, schedules and noise: per step and member, whether it
        steps (``active``), ends an epoch, its learning rate and KL weight; the noise and the
        gathered minibatches go to the block's buffers."""
        n_members, rows, max_rows = self.n_members, self.n_samples * self.batch, self.max_rows
        steps = np.arange(first, first + count)
        lr = np.zeros((count, n_members))
        active = np.zeros((count, n_members), dtype=bool)
        ends = np.zeros((count, n_members), dtype=bool)
        klw = np.zeros((count, n_members))
        xi = np.zeros((count, n_members, 2, rows), dtype=np.int64)
        yi = np.zeros((count, n_members, rows), dtype=np.int64)
        w = np.zeros((count, n_members, rows), dtype=np.float32)
        units = sum(self.sizes[1:])
        for i, (m, sch) in enumerate(zip(self.members, self.schedules)):
            noise = torch.randn((self.block, rows, units), generator=self.noise_gens[i],
                                device=self.device)
            for l, o in enumerate(self.sizes[1:]):
                self.eps_blk[l][:, i] = noise[:, :, self.offsets[l]:self.offsets[l] + o]
            mine = steps[steps < sch.total]
            if not len(mine):
                continue
            batch_rows, counts = sch.batches(mine)
            q = len(mine)
            epoch = mine // sch.spe + 1  # 1-based
            active[:q, i] = True
            ends[:q, i] = (mine + 1) % sch.spe == 0
            lr[:q, i] = m.lr * m.lr_gamma ** ((epoch - 1) // m.lr_step)
            klw[:q, i] = m.kl_weight * (np.minimum(1.0, epoch / m.kl_anneal) if m.kl_anneal
                                        else 1.0)
            rows_s = np.tile(batch_rows, (1, self.n_samples))  # (q, SB)
            xi[:q, i, 0] = rows_s + (2 * i) * max_rows
            xi[:q, i, 1] = rows_s + (2 * i + 1) * max_rows
            yi[:q, i] = rows_s + i * max_rows
            w[:q, i] = (self.pad_w[None, :] < counts[:, None]) / (counts[:, None]
                                                                  * self.n_samples)
        self.xidx_blk[:count] = torch.from_numpy(xi.reshape(count, -1))
        self.yidx_blk[:count] = torch.from_numpy(yi.reshape(count, -1))
        self.w_blk[:count] = torch.from_numpy(w[..., None])
        klc = klw / self.n_rows
        self.klc_blk[:count] = torch.from_numpy(klc[..., None].astype(np.float32))
        self.kla_blk[:count] = torch.from_numpy((klc * self.factor)[..., None]
                                                .astype(np.float32))
        n_in, n_out = self.sizes[0], self.sizes[-1]
        torch.index_select(self.xtab, 0, self.xidx_blk[:count].view(-1),
                           out=self.x_blk[:count].view(-1, n_in))
        torch.index_select(self.ytab, 0, self.yidx_blk[:count].view(-1),
                           out=self.y_blk[:count].view(-1, n_out))
        return lr, active, ends

    def run_block(self, first):
        """Prepare and take the block of steps that starts at step ``first``, then record the
        steps' negative log-likelihoods (and stop on a non-finite one)."""
        count = min(self.block, self.total_steps - first)
        lr, active, ends = self._prepare_block(first, count)
        # Adam's parameter groups change only when the active members or their rates do
        changed = np.ones(count, dtype=bool)
        changed[1:] = (active[1:] != active[:-1]).any(1) | (lr[1:] != lr[:-1]).any(1)
        if self.adam_key is not None:
            changed[0] = not (np.array_equal(self.adam_key[0], active[0])
                              and np.array_equal(self.adam_key[1], lr[0]))
        self.adam_key = (active[-1].copy(), lr[-1].copy())
        xb, yb = self.x_blk.unbind(0), self.y_blk.unbind(0)
        w_c, kla_c, klc_c = self.w_blk.unbind(0), self.kla_blk.unbind(0), self.klc_blk.unbind(0)
        gr_c, tau_c = self.gr_hist.unbind(0), self.tau_hist.unbind(0)
        eps_c = [e.unbind(0) for e in self.eps_blk]
        # a step of every member at one rate: by the CUDA graph, where there is one
        whole = active.all(1) & (lr == lr[:, :1]).all(1)
        for c in range(count):
            inputs = (xb[c], yb[c], w_c[c], [e[c] for e in eps_c], kla_c[c], klc_c[c])
            if whole[c] and self.graph is not None:
                self.graph.step(inputs, gr_c[c], tau_c[c], lr[c, 0])
            else:
                if changed[c] or self.graph is not None:
                    self.adam_args = adam_groups(self.theta, self.log_tau, self.grad,
                                                  self.g_tau, self.exp_avg, self.exp_avg_sq,
                                                  self.step_t, active[c], lr[c])
                side = whole[c] and self.graph is None and self.use_graph
                stream = None
                if side:  # the warm-up before a capture runs on a side stream (torch's rule)
                    stream = torch.cuda.Stream()
                    stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(stream) if side else nullcontext():
                    self.step(*inputs, gr_c[c], tau_c[c])
                    self.step_t.add_(1.0)
                    for lr_c, args in self.adam_args:
                        torch._fused_adam_(*args, lr=lr_c, **ADAM_SETTINGS)
                if side:  # that step warmed up on a side stream: capture the next
                    torch.cuda.synchronize()
                    self.graph = _capture(self, inputs, gr_c[c], tau_c[c])
                    self.use_graph = self.graph is not None
            if ends[c].any():
                self.kl_values(c)
        self._record(count, active, ends)

    def _record(self, count, active, ends):
        """The block's per-step negative log-likelihood of every active member, and its KL and
        log hyperprior at each of its epoch ends (the host's one wait for the device)."""
        grh = self.gr_hist[:count].double().cpu().numpy()
        lth = self.tau_hist[:count].double().cpu().numpy()
        kl_end, tau_end = self.kl_end[:count].double().cpu().numpy(), self.tau_end[:count].cpu()
        for c, i in zip(*np.nonzero(ends)):
            self.epoch_kl[i].append(kl_end[c, i])
            self.epoch_hyp[i].append(self._hyperprior(i, tau_end[c, i]))
        nll = 0.5 * grh.sum(2) - 0.5 * (lth - LOG_2PI).sum(2)  # (steps, K)
        for i in range(self.n_members):
            self.nll_steps[i].extend(nll[active[:, i], i].tolist())
        bad = ~np.isfinite(nll[active])
        if bad.any():
            i = int(np.nonzero(~np.isfinite(np.where(active, nll, 0.0)))[1][0])
            raise FloatingPointError(
                f"the ELBO of member {i} became non-finite at epoch "
                f"{len(self.epoch_kl[i]) + 1}; lower lr (now {self.members[i].lr}) or init_std")

    def results(self):
        """Per member: its means, rho, log noise precisions and per-epoch history."""
        results = []
        for i, (m, sch) in enumerate(zip(self.members, self.schedules)):
            per_epoch = np.asarray(self.nll_steps[i]).reshape(m.epochs, sch.spe).mean(1)
            kl = np.asarray(self.epoch_kl[i])
            klw = np.array([m.kl_weight_at(e) for e in range(1, m.epochs + 1)])
            elbo = -m.n * per_epoch - klw * kl + np.asarray(self.epoch_hyp[i])
            lrs = [m.lr * m.lr_gamma ** (e // m.lr_step) for e in range(1, m.epochs + 1)]
            results.append({"mu": self.mu[i].clone(), "rho": self.rho[i].clone(),
                            "log_tau": self.log_tau[i].clone(),
                            "history": {"epoch": list(range(1, m.epochs + 1)),
                                        "elbo": elbo.tolist(), "nll": per_epoch.tolist(),
                                        "kl": kl.tolist(), "lr": lrs}})
        return results


def _make_step(sizes, n_members, rows, theta, log_tau, grad, g_tau, loc, any_loc,
               add_kl_gradient_, learn_noise, hyper, hyper_a, hyper_b):
    """The gradient of -ELBO / n of all members at one step, into ``grad`` ((n_members, 2,
    n_params): means, rho) and ``g_tau``: a closure over preallocated buffers and their views
    (a view costs as much as a small tensor operation), about 60 tensor calls per step.
    ``rows`` is the rows of one step (draws x batch rows); ``add_kl_gradient_`` the prior's
    closed-form KL gradient (:meth:`surrogates.priors.NormalPrior.add_kl_gradient_`)."""
    layers, n_params = _layers(sizes)
    n_layers, n_out = len(layers), sizes[-1]
    f32 = torch.float32

    def empty(*shape, dtype):
        return torch.empty(*shape, dtype=dtype, device=theta.device)
    mv = empty(n_members, 2, n_params, dtype=f32)  # [:, 0] means, [:, 1] variances
    sig = empty(n_members, n_params, dtype=f32)
    mu, rho = theta[:, 0], theta[:, 1]
    gmu, gsig = grad[:, 0], grad[:, 1]
    mv_mu, mv_var = mv[:, 0], mv[:, 1]
    mv2, grad2 = mv.view(2 * n_members, n_params), grad.view(2 * n_members, n_params)
    weights, weights_t, bias, gW, gb = [], [], [], [], []
    for a, o, i in layers:
        weights.append(mv2[:, a:a + o * i].unflatten(1, (o, i)))
        weights_t.append(weights[-1].transpose(1, 2))
        bias.append(mv2[:, a + o * i:a + o * i + o].unsqueeze(1))
        gW.append(grad2[:, a:a + o * i].unflatten(1, (o, i)))
        gb.append(grad2[:, a + o * i:a + o * i + o])
    # per layer: out (n_members, 2, rows, o) [mean, variance]; h (n_members, 2, rows, o)
    # [tanh, tanh^2] (hidden); grads (n_members, 2, rows, o) [dL/dm, 2 dL/dv]; input_grads
    # (2 n_members, rows, in) [G_0 W_mu, G_1 W_var]
    outs = [empty(n_members, 2, rows, o, dtype=f32) for _, o, _ in layers]
    hs = [empty(n_members, 2, rows, o, dtype=f32) for _, o, _ in layers[:-1]]
    Gs = [empty(n_members, 2, rows, o, dtype=f32) for _, o, _ in layers]
    Ds = [empty(2 * n_members, rows, i, dtype=f32) for _, _, i in layers]
    ezs = [empty(n_members, rows, o, dtype=f32) for _, o, _ in layers]
    tmp = [empty(n_members, rows, i, dtype=f32) for _, _, i in layers]
    # bmm into a strided view takes a slow per-matrix path (3-4x slower): a contiguous
    # buffer and a copy
    gWc = [empty(2 * n_members, o, i, dtype=f32) for _, o, i in layers]
    # the first layer's: as (in, out) = x^T grads, 1.4x (1 member) to 3x (24) faster than
    # grads^T x
    # for its thin input, then copied transposed
    gW0t = empty(2 * n_members, sizes[0], sizes[1], dtype=f32)
    gW0t_T = gW0t.transpose(1, 2)
    fwd = []
    for l in range(n_layers):
        out = outs[l]
        h_next = hs[l] if l < n_layers - 1 else None
        fwd.append((bias[l], weights_t[l], out.view(2 * n_members, rows, -1), out[:, 1],
                    out[:, 0], ezs[l],
                    None if h_next is None else h_next[:, 0],
                    None if h_next is None else h_next[:, 1],
                    None if h_next is None else h_next.view(2 * n_members, rows, -1)))
    bwd = []
    for l in range(n_layers - 1, -1, -1):
        grads = Gs[l]
        input_grads = Ds[l].view(n_members, 2, rows, -1)
        bwd.append((l, grads[:, 0], grads[:, 1], ezs[l], grads.view(2 * n_members, rows, -1),
                    grads.view(2 * n_members, rows, -1).transpose(1, 2), gW[l], gWc[l], gb[l],
                    weights[l], Ds[l],
                    input_grads[:, 0], input_grads[:, 1], tmp[l],
                    None if l == 0 else hs[l - 1][:, 0], None if l == 0 else hs[l - 1][:, 1],
                    None if l == 0 else hs[l - 1].view(2 * n_members, rows, -1),
                    None if l == 0 else Gs[l - 1][:, 0]))
    residual = empty(n_members, rows, n_out, dtype=f32)
    weighted_sq = empty(n_members, rows, n_out, dtype=f32)
    g_last = Gs[n_layers - 1][:, 0]
    sub, mul, div, bmm, baddbmm, addcmul = (torch.sub, torch.mul, torch.div, torch.bmm,
                                            torch.baddbmm, torch.addcmul)
    softplus, tsum, tanh, exp = torch._C._nn.softplus, torch.sum, torch.tanh, torch.exp
    sigmoid = torch.sigmoid

    def step(x_in, y, w, eps, kla, klc, gr_rec, tau_rec):
        softplus(rho, 1, 20, out=sig)
        mv_mu.copy_(mu)
        mul(sig, sig, out=mv_var)
        # forward: [h, h^2] (2K, rows, in) -> [mean, variance] -> z -> [tanh z, tanh^2 z]
        h = x_in
        for (b, wt, out2, var, z, ez, hn0, hn1, hn), e in zip(fwd, eps):
            baddbmm(b, h, wt, out=out2)
            sd = var.sqrt_()
            z.addcmul_(sd, e)
            div(e, sd, out=ez)
            if hn is not None:
                tanh(z, out=hn0)
                mul(hn0, hn0, out=hn1)
                h = hn
        # the likelihood: dL/df = w tau (f - y); dL/dlog tau = (sum w tau residual^2 - 1) / 2
        sub(z, y, out=residual)
        tau = exp(log_tau)
        mul(residual, w * tau.unsqueeze(1), out=g_last)
        mul(g_last, residual, out=weighted_sq)
        tsum(weighted_sq, 1, out=gr_rec)
        tau_rec.copy_(log_tau)
        if learn_noise:
            sub(gr_rec, 1.0, out=g_tau)
            g_tau.mul_(0.5)
            if hyper:
                g_tau.addcmul_(tau, hyper_b)
                g_tau.sub_(hyper_a)
        # backward
        for (l, g0, g1, ez, G2, G2T, gw, gwc, gbias, w_l, D2, d0, d1, t, hp0, hp1, hp2,
             gprev) in bwd:
            mul(g0, ez, out=g1)
            if l:
                bmm(G2T, hp2, out=gwc)
                gw.copy_(gwc)
            else:
                bmm(x_in.transpose(1, 2), G2, out=gW0t)
                gw.copy_(gW0t_T)
            tsum(G2, 1, out=gbias)
            if l:
                bmm(G2, w_l, out=D2)
                addcmul(d0, hp0, d1, out=t)  # dL/dh = G_0 W_mu + h (G_1 W_var)
                addcmul(t, t, hp1, value=-1.0, out=gprev)  # tanh' = 1 - h^2
        # sigma: dL/dsigma = (2 dL/dv) sigma + KL'; then the chain rule to rho
        gsig.mul_(sig)
        c = sub(mu, loc) if any_loc else mu
        add_kl_gradient_(gmu, gsig, c, sig, kla)  # the prior's part; the entropy's below
        gsig.sub_(div(klc, sig))
        gsig.mul_(sigmoid(rho))

    return step
