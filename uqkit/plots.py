"""Plots comparing response distributions (matplotlib, imported on use)."""
import numpy as np

from .statistics import ecdf, kde

__all__ = ["kde_overlay", "ecdf_plot"]


def _axes(ax, **kw):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(**kw)
    return ax


def kde_overlay(samples, truth=None, ax=None, xlabel="response", truth_label="FE truth"):
    """KDEs of one or more samples over the truth's (the paper's Figure 8).

    Args:
        samples: dict label -> 1-D sample.
        truth: optional reference sample, drawn in black.
    """
    ax = _axes(ax, figsize=(5, 3.5))
    pooled = np.concatenate([np.asarray(v, float) for v in samples.values()] +
                            ([np.asarray(truth, float)] if truth is not None else []))
    pooled = pooled[np.isfinite(pooled)]
    pad = 0.05 * (pooled.max() - pooled.min())
    grid = np.linspace(pooled.min() - pad, pooled.max() + pad, 300)
    if truth is not None:
        ax.plot(*kde(truth, grid), "k-", lw=2, label=truth_label)
    for label, y in samples.items():
        ax.plot(*kde(y, grid), "--", lw=1.5, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("density")
    ax.legend(fontsize=8)
    return ax


def ecdf_plot(samples, ax=None, xlabel="response"):
    """Empirical CDFs of one or more samples (dict label -> 1-D sample)."""
    ax = _axes(ax, figsize=(5, 3.5))
    for label, y in samples.items():
        x, F = ecdf(y)
        ax.step(x, F, where="post", label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("P(Y <= y)")
    ax.legend(fontsize=8)
    return ax
