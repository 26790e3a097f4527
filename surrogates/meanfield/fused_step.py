"""The batched mean-field trainer's Adam update, one call of torch's fused kernel
(``torch._fused_adam_``) per learning rate among the members, and, on cuda, the whole
training step and that update captured once as a CUDA graph and replayed.

A step of the batched trainer (:mod:`surrogates.meanfield.batched`) is ~65 kernels of a few
microseconds each on a GPU, each launched from Python, so launches rather than arithmetic
would set its time. A graph replays them in one launch (a step then took 0.19-0.37 ms for
networks of 800 to 68,000 weights at batches of 16 to 2048 on an H200, ``python
benchmarks/bench_gpu.py --only step``; eager stepping was not timed there). The step
reads its inputs from static buffers, so each replay copies the block's slice of them in
(:meth:`StepGraph.step`). The graph holds one Adam group: a step where every member steps at
one learning rate; any other step (members that stopped early, rates that differ) runs
eagerly on the same buffers. Capture follows torch's recipe (a warm-up step on a side
stream, then ``torch.cuda.graph``); if it fails, the fit warns and steps eagerly.

Imports numpy and torch.
"""
import warnings

import numpy as np
import torch

__all__ = ["ADAM_SETTINGS", "adam_groups", "StepGraph", "capture"]

#: The Adam settings of every ``_fused_adam_`` call of the trainer (torch.optim.Adam's
#: defaults), eager or captured.
ADAM_SETTINGS = dict(beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False,
                     maximize=False)


class StepGraph:
    """One training step of every member and its Adam update, captured as a CUDA graph: the
    step reads its inputs from static buffers, which :meth:`step` fills from the block's
    buffers before each replay (a copy each), and writes its record to two more, copied out
    after it; the learning rate is a tensor, set when it changes."""

    def __init__(self, fit, inputs, gr, tau):
        x, y, w, eps, kla, klc = inputs
        self.inputs = (torch.empty_like(x), torch.empty_like(y), torch.empty_like(w),
                       [torch.empty_like(e) for e in eps], torch.empty_like(kla),
                       torch.empty_like(klc))
        self.gr, self.tau = torch.empty_like(gr), torch.empty_like(tau)
        self.lr = torch.zeros((), dtype=torch.float32, device=x.device)
        self.lr_value = None
        (_, args), = adam_groups(fit.theta, fit.log_tau, fit.grad, fit.g_tau, fit.exp_avg,
                                  fit.exp_avg_sq, fit.step_t,
                                  np.ones(fit.n_members, dtype=bool), np.zeros(fit.n_members))
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            fit.step(*self.inputs, self.gr, self.tau)
            fit.step_t.add_(1.0)
            torch._fused_adam_(*args, lr=self.lr, **ADAM_SETTINGS)

    def step(self, inputs, gr, tau, lr):
        """Take one step on ``inputs`` (the block's views of it) at rate ``lr``; its record
        to ``gr`` and ``tau``."""
        for dst, src in zip(self.inputs, inputs):
            if isinstance(dst, list):
                for d, e in zip(dst, src):
                    d.copy_(e)
            else:
                dst.copy_(src)
        if lr != self.lr_value:
            self.lr.fill_(float(lr))
            self.lr_value = lr
        self.graph.replay()
        gr.copy_(self.gr)
        tau.copy_(self.tau)


def capture(fit, inputs, gr, tau):
    """The :class:`StepGraph` of ``fit``, or None (with a warning) if capture fails: the fit
    then steps eagerly, as on a CPU."""
    try:
        return StepGraph(fit, inputs, gr, tau)
    except RuntimeError as exc:  # an unsupported op or driver: the same steps, eagerly
        warnings.warn(f"CUDA graph capture of the mean-field step failed ({exc}); stepping "
                      "without it", RuntimeWarning, stacklevel=2)
        return None


def adam_groups(theta, log_tau, grad, g_tau, exp_avg, exp_avg_sq, step_t, active, lr):
    """Arguments of one ``_fused_adam_`` call per learning rate among the active members."""
    groups = {}
    K = theta.shape[0]
    for i in range(K):
        if active[i]:
            groups.setdefault(float(lr[i]), []).append(i)
    if len(groups) == 1 and active.all():  # whole tensors: fewer, longer loops
        return [(float(lr[0]), ([theta, log_tau], [grad, g_tau], list(exp_avg), list(exp_avg_sq),
                                [], [step_t] * 2))]
    out = []
    for lr_c, rows in groups.items():
        params = [theta[i] for i in rows] + [log_tau[i] for i in rows]
        grads = [grad[i] for i in rows] + [g_tau[i] for i in rows]
        m = [exp_avg[0][i] for i in rows] + [exp_avg[1][i] for i in rows]
        v = [exp_avg_sq[0][i] for i in rows] + [exp_avg_sq[1][i] for i in rows]
        st = [step_t] * (2 * len(rows))
        out.append((lr_c, (params, grads, m, v, [], st)))
    return out
