"""The Laplace engine object: a fitted linearised Laplace posterior seen through the interface
every BDL engine offers (:class:`surrogates.meanfield.engine.MeanFieldEngine` is the other).

Prediction uses the linearised network ``f(x, w*) + J(x) delta`` with ``delta ~ N(0, Sigma)``
(:class:`surrogates.laplace.fit.LaplacePosterior`): Gaussian in the outputs, with mean
``f(x, w*)`` and epistemic variance ``diag(J(x) Sigma J(x)^T)``: by default the draws' mean
square of ``J(x) delta`` (one tangent pass per draw, about 2 P multiply-adds per draw, input
and output), or exactly (``BDL(laplace_variance="exact")``: the Jacobian's k rows through
Sigma, 2 k P r multiply-adds per input with the low-rank form of rank r, k P^2 / 2 with the
factor).

Imports numpy, scipy, torch, :mod:`surrogates.laplace.fit` and :mod:`surrogates.prediction`.
"""
import numpy as np
import torch
from scipy import special

from ..prediction import DRAW_SEED_OFFSET
from .fit import LaplacePosterior

__all__ = ["JACOBIAN_ENTRIES", "LaplaceEngine"]

#: The most entries of the Jacobian (inputs x outputs x weights, float64) that an exact
#: variance's prediction chunk holds: 2**19, 4 MiB (``benchmarks/bench_laplace_variance.py
#: --entries``: at P = 838 and 1e5 inputs on one thread, 2**18-2**21 took 5.8-9.1 s, a spread
#: as wide as between repeats of one size).
JACOBIAN_ENTRIES = 2 ** 19

class LaplaceEngine:
    """A fitted Laplace BDL: the stacked network ``net`` (one member) and its ``posterior``."""

    name = "laplace"

    def __init__(self, net, posterior):
        self.net, self.posterior = net, posterior

    @property
    def sizes(self):
        """The layer widths, inputs first."""
        return self.net.sizes

    def noise_variance(self):
        """(k,) noise variance per output, in standardised units."""
        return torch.exp(-self.posterior.log_tau).cpu().numpy()

    def draws(self, n, seed):
        """``n`` posterior draws of ``w - w*`` (n, P), seeded."""
        gen = torch.Generator().manual_seed(int(seed) + DRAW_SEED_OFFSET)
        return self.posterior.sample(n, gen)

    def chunk_rows(self, predict_batch, n_draws, exact=False):
        """Input rows per prediction chunk: the tangent pass is memory-bound, so chunks of
        ``n_draws x rows x width`` that stay in the cache (measured, 1e5 inputs x 200 draws:
        2.2 s at 128 rows, 4.0 s at 1024); on a GPU, of 4194304 rows of draws (a chunk
        costs its launches and one wait), ``predict_batch`` at most. ``exact``: also at most
        ``JACOBIAN_ENTRIES`` entries of the chunk's Jacobian (rows x k x P) on a CPU, 64 times
        as many on a GPU (256 MiB: fewer launches; measured on an H100, 1e5 inputs of the
        paper's network: 0.08-0.09 s, against 0.81-0.88 s at 1/64 of it, 0.11-0.14 s at 1/8
        and 0.06-0.09 s at 4 times it)."""
        cpu = self.posterior.w.device.type == "cpu"
        step = min(predict_batch, max(64, (32768 if cpu else 4194304) // max(n_draws, 1)))
        if exact:
            per_row = self.sizes[-1] * len(self.posterior.w)
            step = min(step, max(1, JACOBIAN_ENTRIES * (1 if cpu else 64) // per_row))
        return step

    def regression_chunk(self, z, draws, ys, ym, scale, return_samples, exact=False):
        """(mean, epistemic variance, draws or None) in output units at the standardised
        inputs z; a recalibration ``scale`` widens a draw's output ``J(x) delta`` about the
        mean (the linearised predictive's mean is the MAP network's output, exactly).
        ``exact``: the variance is ``diag(J Sigma J^T)`` (:meth:`LaplacePosterior.variance`)
        and ``draws`` (None without ``return_samples``) serve the samples alone."""
        spread = ys if scale is None else ys * np.sqrt(scale)
        w = self.posterior.w
        x = torch.as_tensor(z, dtype=torch.float64, device=w.device)
        if draws is None:  # no directions: the mean by the same arithmetic as with draws
            draws = torch.zeros((0, len(w)), dtype=w.dtype, device=w.device)
        f0, tangent = self.net.forward_tangent(w, x, draws)
        mean = f0.cpu().numpy() * ys + ym
        var = (self.posterior.variance(self.net.jacobian(w, x)) if exact
               else tangent.square().mean(0)).cpu().numpy() * spread ** 2
        return mean, var, (mean + tangent.cpu().numpy() * spread) if return_samples else None

    def logits(self, z, draws):
        """(S, n, k) logits of every draw at the standardised inputs z."""
        w = self.posterior.w
        f0, tangent = self.net.forward_tangent(
            w, torch.as_tensor(z, dtype=torch.float64, device=w.device), draws)
        return f0 + tangent

    @staticmethod
    def interval(mean, var, draws, noise_var, level):
        """Central predictive interval: Gaussian (a mixture quantile of the draws would only
        add sampling noise)."""
        half = special.ndtri(0.5 + level / 2) * np.sqrt(var + noise_var)
        return mean - half, mean + half

    def posterior_layers(self):
        """``(net, means, stds, extra)`` per the estimators' ``posterior()``: the prior
        precision of each layer's parameters."""
        post = self.posterior
        return self.net, post.w.cpu(), post.marginal_std().cpu(), lambda l, a, b: {
            "prior_precision": post.precision[a:b].cpu().numpy()}

    def state(self):
        """The posterior's tensors, for a saved file."""
        return self.posterior.state()

    @classmethod
    def from_state(cls, net, state):
        """The engine of a saved model: the network ``net`` and :meth:`LaplacePosterior.state`'s
        dict."""
        return cls(net, LaplacePosterior.from_state(state))
