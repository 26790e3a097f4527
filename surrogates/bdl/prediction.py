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
    # the exact variance (check_settings allows it for Laplace regression alone) needs no
    # draws, but for the samples
    exact = regression and getattr(est, "laplace_variance", "draws") == "exact"
    draws = engine.draws(S, seed) if return_samples or not exact else None
    Z = est.x_scaler_.transform(X)
    scale = getattr(est, "variance_scale_", None)
    if regression:
        ys, ym = est.y_scaler_.scale_, est.y_scaler_.mean_
        noise_var = engine.noise_variance() * ys ** 2
        if scale is not None:
            noise_var = noise_var * scale
    n, k = len(Z), engine.sizes[-1]
    # the outputs, filled chunk by chunk (no copy of them all at the end)
    means, variances = np.empty((n, k)), np.empty((n, k))
    samples = np.empty((S, n, k)) if return_samples else None
    bounds = {lv: (np.empty((n, k)), np.empty((n, k))) for lv in levels} if regression else {}
    step = engine.chunk_rows(est.predict_batch, S if draws is not None else 0, exact)
    for start in range(0, n, step):
        z = Z[start:start + step]
        rows = slice(start, start + len(z))
        if regression:
            mean, var, f = engine.regression_chunk(z, draws, ys, ym, scale, return_samples,
                                                   exact)
        else:
            f = torch.softmax(engine.logits(z, draws), -1).double().cpu().numpy()
            mean, var = f.mean(0), f.var(0)
        means[rows], variances[rows] = mean, var
        if return_samples:
            samples[:, rows] = f
        for lv in levels if regression else ():
            bounds[lv][0][rows], bounds[lv][1][rows] = engine.interval(mean, var, f,
                                                                       noise_var, lv)
    squeeze = (lambda a: a[..., 0]) if getattr(est, "single_output_", False) else (
        lambda a: a)
    return Prediction(
        mean=squeeze(means), epistemic_var=squeeze(variances),
        aleatoric_var=squeeze(np.broadcast_to(noise_var, (n, len(noise_var))).copy())
        if regression else None,
        samples=squeeze(samples) if return_samples else None,
        intervals={lv: (squeeze(lo), squeeze(hi)) for lv, (lo, hi) in bounds.items()})


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
