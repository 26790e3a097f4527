"""A fitted BDL's predictive distribution and weight posterior, for either inference engine:
the linearised Laplace network ``f(x, w*) + J(x) delta`` (Gaussian in the outputs) or the
mean-field network's weight draws (a Gaussian mixture).

Imports numpy, scipy, torch and the package's prediction and priors modules.
"""
import numpy as np
import torch
from scipy import special

from ..prediction import Prediction, mixture_interval
from ..priors import HierarchicalPrior


def predict(est, X, S, return_samples, levels, seed):
    """The :class:`~surrogates.prediction.Prediction` of the fitted ``est`` at the
    validated inputs X from S posterior draws seeded by ``seed``."""
    laplace = hasattr(est, "laplace_")
    if laplace:
        gen = torch.Generator().manual_seed(int(seed) + 7919)
        deltas = est.laplace_.sample(S, gen)
        noise = torch.exp(-est.laplace_.log_tau).numpy() \
            if est._task == "regression" else None
    else:
        guide = est.model_.guide
        dev = guide.mu.device
        gen = torch.Generator(device=dev).manual_seed(int(seed) + 7919)
        weights = guide.draw_weights(guide.sample_weights(S, gen))
        if est._task == "regression":
            noise = est.model_.likelihood.noise_variance().detach().cpu().numpy()
    Z = est.x_scaler_.transform(X)
    regression = est._task == "regression"
    scale = getattr(est, "variance_scale_", None)
    if regression:
        ys, ym = est.y_scaler_.scale_, est.y_scaler_.mean_
        noise_var = noise * ys ** 2
        if scale is not None:
            noise_var = noise_var * scale
    means, variances, samples = [], [], []
    bounds = {lv: ([], []) for lv in levels} if regression else {}
    # the tangent pass is memory-bound: chunks of S x step x width that stay in the cache
    # (measured, 1e5 inputs x 200 draws: 2.2 s at step 128, 4.0 s at 1024)
    step = min(est.predict_batch, max(64, 32768 // S)) if laplace else est.predict_batch
    if not laplace:  # mean field: chunks of S x 655 x width at S = 200 (1.5x faster
        step = min(est.predict_batch, max(64, 131072 // S))  # than 4096, measured)
    # a Laplace draw's output about the mean: J(x) delta, in output units (recalibrated)
    spread = None if not (laplace and regression) else (
        ys if scale is None else ys * np.sqrt(scale))
    for start in range(0, len(Z), step):
        if laplace:  # the linearised network: f(x, w*) + J(x) delta for every draw
            x = torch.as_tensor(Z[start:start + step], dtype=torch.float64)
            f0, tangent = est.net_.forward_tangent(est.laplace_.w, x, deltas)
            if not regression:
                f = f0 + tangent
        else:
            x = torch.as_tensor(Z[start:start + step], dtype=torch.float32, device=dev)
            f = guide.forward_draws(x, weights)
        if regression and laplace:
            # the linearised predictive's mean is the MAP network's output, exactly, and
            # its epistemic variance the draws' mean square of J(x) delta
            mean = f0.numpy() * ys + ym
            var = tangent.square().mean(0).numpy() * spread ** 2
            if return_samples:
                f = mean + tangent.numpy() * spread
        elif regression:
            f = f.double().cpu().numpy() * ys + ym
            m0 = f.mean(0)
            if scale is not None:  # recalibrated spread about the mean
                f = m0 + np.sqrt(scale) * (f - m0)
            mean, var = m0, f.var(0)
        else:
            f = torch.softmax(f, -1).double().cpu().numpy()
            mean, var = f.mean(0), f.var(0)
        means.append(mean)
        variances.append(var)
        if return_samples:
            samples.append(f)
        for lv in levels if regression else ():
            if laplace:  # Gaussian: a mixture quantile would only add sampling noise
                half = special.ndtri(0.5 + lv / 2) * np.sqrt(var + noise_var)
                lo, hi = mean - half, mean + half
            else:
                lo, hi = mixture_interval(f, np.sqrt(np.maximum(noise_var, 1e-300)), lv)
            bounds[lv][0].append(lo)
            bounds[lv][1].append(hi)
    squeeze = (lambda a: a[..., 0]) if getattr(est, "single_output_", False) else (
        lambda a: a)
    pred = Prediction(
        mean=squeeze(np.concatenate(means)),
        epistemic_var=squeeze(np.concatenate(variances)),
        aleatoric_var=squeeze(np.broadcast_to(noise_var, (len(Z), len(noise_var))).copy())
        if regression else None,
        samples=squeeze(np.concatenate(samples, axis=1)) if return_samples else None,
        intervals={lv: (squeeze(np.concatenate(lo)), squeeze(np.concatenate(hi)))
                   for lv, (lo, hi) in bounds.items()})
    return pred


def posterior(est):
    """Per layer: posterior means and standard deviations of the weights and biases,
    and the inferred prior scale for hierarchical priors."""
    laplace = hasattr(est, "laplace_")
    if laplace:
        net, mu, sd = est.net_, est.laplace_.w, est.laplace_.marginal_std()
    else:
        g = est.model_.guide
        net, mu, sd = g.net, g.mu.detach().cpu(), g.sigma().detach().cpu()
    prior = None if laplace else est.model_.prior
    out = []
    for l, (a, b) in enumerate(net.layers):
        Wm, bm = net.split(mu, l)
        Ws, bs = net.split(sd, l)
        layer = {"weight_mean": Wm.numpy(), "weight_std": Ws.numpy(), "bias_mean": bm.numpy(),
                 "bias_std": bs.numpy()}
        if laplace:
            layer["prior_precision"] = est.laplace_.precision[a:b].numpy()
        elif isinstance(prior, HierarchicalPrior):
            layer["prior_scale"] = float(prior.scales()[min(l, len(prior.scales()) - 1)])
        out.append(layer)
    return out
