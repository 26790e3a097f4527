"""Plots of results: response distributions compared, Sobol' indices (matplotlib, imported
on use)."""
import numpy as np

from .statistics import ecdf, kde

__all__ = ["kde_overlay", "ecdf_plot", "plot_sobol"]


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


def plot_sobol(result, axes=None):
    """Bars of first-order and total indices with their intervals as error bars (and the
    epistemic band of a surrogate as a thin black bar), one panel per output.

    Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    first = np.atleast_2d(result.first.T).T
    k = first.shape[1]
    if axes is None:
        fig, axes = plt.subplots(1, k, figsize=(0.9 * len(result.names) * k + 2.5, 3.2),
                                 squeeze=False)
        axes = axes[0]
    axes = np.atleast_1d(axes)
    if len(axes) != k:
        raise ValueError(f"{k} outputs need {k} axes, got {len(axes)}")
    pos = np.arange(len(result.names))
    w = 0.38
    for j, ax in enumerate(axes):
        for off, label, val, ci, bnd in (
                (-w / 2, "first order", result.first, result.first_ci, result.first_band),
                (w / 2, "total", result.total, result.total_ci, result.total_band)):
            v = np.atleast_2d(val.T).T[:, j]
            c = ci.reshape(2, len(pos), k)[:, :, j]
            err = np.clip(np.stack([v - c[0], c[1] - v]), 0, None)
            ax.bar(pos + off, v, w, label=label,
                   yerr=None if np.isnan(err).all() else err, capsize=3)
            if bnd is not None:
                b = bnd.reshape(2, len(pos), k)[:, :, j]
                ax.vlines(pos + off + w / 4, b[0], b[1], color="k", lw=1.2,
                          label="epistemic band" if off < 0 else None)
        ax.set_xticks(pos, result.names)
        ax.set_ylim(min(0.0, ax.get_ylim()[0]), max(1.0, ax.get_ylim()[1]))
        ax.axhline(0, color="0.5", lw=0.6)
        title = (result.output_names[j] if j < len(result.output_names) else
                 (f"output {j}" if k > 1 else ""))
        ax.set_title(title)
        ax.set_ylabel("Sobol' index")
    axes[0].legend(fontsize=8)
    fig = axes[0].figure
    fig.tight_layout()
    return fig
