"""The mean-field engine object: a fitted :class:`~surrogates.meanfield.model.BayesianModel`
seen through the interface every BDL engine offers
(:class:`surrogates.laplace.engine.LaplaceEngine` is the other).

Prediction draws whole weight vectors from the factorised Gaussian posterior and runs the
network once per draw: the predictive is the mixture of the draws' Gaussians (regression) or
of their softmax outputs (classification).

Imports numpy, torch, the package's model and the surrogates' priors and prediction.
"""
import numpy as np
import torch

from ..prediction import DRAW_SEED_OFFSET, mixture_interval
from ..priors import make_prior
from .model import BayesianModel

__all__ = ["MeanFieldEngine"]

class MeanFieldEngine:
    """A fitted mean-field BDL: ``model`` holds the variational family (``guide``), the prior
    and the likelihood."""

    name = "meanfield"

    def __init__(self, model):
        self.model = model

    @property
    def sizes(self):
        """The layer widths, inputs first."""
        return self.model.guide.sizes

    def noise_variance(self):
        """(k,) noise variance per output, in standardised units."""
        return self.model.likelihood.noise_variance().detach().cpu().numpy()

    def draws(self, n, seed):
        """``n`` weight vectors drawn from the posterior, seeded, on the model's device."""
        guide = self.model.guide
        gen = torch.Generator(device=guide.mu.device).manual_seed(int(seed) + DRAW_SEED_OFFSET)
        return guide.draw_weights(guide.sample_weights(n, gen))

    def chunk_rows(self, predict_batch, n_draws, exact=False):
        """Input rows per prediction chunk: ``n_draws x rows x width`` of about 131072 rows
        of draws on a CPU (655 inputs at 200 draws: 1.5x faster than 4096, measured), of
        4194304 on a GPU (where a chunk costs its launches and one wait), ``predict_batch``
        at most. ``exact`` must be False: a mean-field predictive's variance has no closed
        form."""
        if exact:
            raise ValueError("mean field's epistemic variance is estimated from draws only")
        rows = 131072 if self.model.guide.mu.device.type == "cpu" else 4194304
        return min(predict_batch, max(64, rows // n_draws))

    def _forward(self, z, draws):
        x = torch.as_tensor(z, dtype=torch.float32, device=self.model.guide.mu.device)
        return self.model.guide.forward_draws(x, draws)

    def regression_chunk(self, z, draws, ys, ym, scale, return_samples, exact=False):
        """(mean, epistemic variance, the draws' outputs) in output units at the standardised
        inputs z; a recalibration ``scale`` widens the draws about their mean. The draws are
        returned always: the mixture intervals need them. ``exact``: as in
        :meth:`chunk_rows`."""
        if exact:
            raise ValueError("mean field's epistemic variance is estimated from draws only")
        f = self._forward(z, draws).double()
        if f.device.type != "cpu":  # the arithmetic where the draws are; one copy back
            ys_t, ym_t = (torch.as_tensor(a, dtype=torch.float64, device=f.device)
                          for a in (ys, ym))
            f = f * ys_t + ym_t
            m0 = f.mean(0)
            if scale is not None:
                f = m0 + torch.as_tensor(np.sqrt(scale), device=f.device) * (f - m0)
            var = f.var(0, correction=0)
            return m0.cpu().numpy(), var.cpu().numpy(), f.cpu().numpy()
        f = f.numpy() * ys + ym
        m0 = f.mean(0)
        if scale is not None:  # recalibrated spread about the mean
            f = m0 + np.sqrt(scale) * (f - m0)
        return m0, f.var(0), f

    def logits(self, z, draws):
        """(S, n, k) logits of every draw at the standardised inputs z."""
        return self._forward(z, draws)

    @staticmethod
    def interval(mean, var, draws, noise_var, level):
        """Central predictive interval: exact quantiles of the Gaussian mixture of the draws."""
        return mixture_interval(draws, np.sqrt(np.maximum(noise_var, 1e-300)), level)

    def posterior_layers(self):
        """``(net, means, stds, extra)`` per the estimators' ``posterior()``: a hierarchical
        prior's inferred scale of each layer."""
        guide, prior = self.model.guide, self.model.prior

        def extra(l, a, b):
            scales = prior.layer_scales()
            return {} if scales is None else {
                "prior_scale": float(scales[min(l, len(scales) - 1)])}
        return guide.net, guide.mu.detach().cpu(), guide.sigma().detach().cpu(), extra

    def state(self):
        """The model's tensors (state dict), for a saved file."""
        return {k: v.detach().cpu() for k, v in self.model.state_dict().items()}

    @classmethod
    def from_state(cls, guide, prior_spec, likelihood, state, device):
        """The engine of a saved model: its guide network, prior (by its description),
        likelihood and parameters (a ``state_dict``), on ``device``."""
        model = BayesianModel(guide, make_prior(prior_spec), likelihood)
        model.load_state_dict(state)
        model.to(torch.device(device))
        return cls(model)
