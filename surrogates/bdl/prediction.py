"""A fitted BDL's predictive distribution and weight posterior, the same loop for either
inference engine: the engine (:attr:`BDL.engine_`) draws, evaluates a chunk of inputs and
gives intervals; this module standardises, chunks, rescales and assembles.

Imports numpy, torch and :mod:`surrogates.prediction`.
"""
import numpy as np
import torch

from ..prediction import Prediction

__all__ = ["predict", "posterior"]


def predict(est, X, S, return_samples, levels, seed):
    """The :class:`~surrogates.prediction.Prediction` of the fitted ``est`` at the
    validated inputs X from S posterior draws seeded by ``seed``."""
    engine = est.engine_
    regression = est._task == "regression"
    draws = engine.draws(S, seed)
    Z = est.x_scaler_.transform(X)
    scale = getattr(est, "variance_scale_", None)
    if regression:
        ys, ym = est.y_scaler_.scale_, est.y_scaler_.mean_
        noise_var = engine.noise_variance() * ys ** 2
        if scale is not None:
            noise_var = noise_var * scale
    means, variances, samples = [], [], []
    bounds = {lv: ([], []) for lv in levels} if regression else {}
    step = engine.chunk_rows(est.predict_batch, S)
    for start in range(0, len(Z), step):
        z = Z[start:start + step]
        if regression:
            mean, var, f = engine.regression_chunk(z, draws, ys, ym, scale, return_samples)
        else:
            f = torch.softmax(engine.logits(z, draws), -1).double().cpu().numpy()
            mean, var = f.mean(0), f.var(0)
        means.append(mean)
        variances.append(var)
        if return_samples:
            samples.append(f)
        for lv in levels if regression else ():
            lo, hi = engine.interval(mean, var, f, noise_var, lv)
            bounds[lv][0].append(lo)
            bounds[lv][1].append(hi)
    squeeze = (lambda a: a[..., 0]) if getattr(est, "single_output_", False) else (
        lambda a: a)
    return Prediction(
        mean=squeeze(np.concatenate(means)),
        epistemic_var=squeeze(np.concatenate(variances)),
        aleatoric_var=squeeze(np.broadcast_to(noise_var, (len(Z), len(noise_var))).copy())
        if regression else None,
        samples=squeeze(np.concatenate(samples, axis=1)) if return_samples else None,
        intervals={lv: (squeeze(np.concatenate(lo)), squeeze(np.concatenate(hi)))
                   for lv, (lo, hi) in bounds.items()})


def posterior(est):
    """Per layer: posterior means and standard deviations of the weights and biases, and
    what the engine adds (the Laplace prior precision; a hierarchical prior's inferred
    scale under mean field)."""
    net, mu, sd, extra = est.engine_.posterior_layers()
    out = []
    for l, (a, b) in enumerate(net.layers):
        Wm, bm = net.split(mu, l)
        Ws, bs = net.split(sd, l)
        layer = {"weight_mean": Wm.numpy(), "weight_std": Ws.numpy(), "bias_mean": bm.numpy(),
                 "bias_std": bs.numpy()}
        layer.update(extra(l, a, b))
        out.append(layer)
    return out
