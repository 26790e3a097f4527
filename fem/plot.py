"""Plot helpers for membrane results (matplotlib, imported on use)."""
import numpy as np

__all__ = ["plot_deflection", "plot_load_paths"]


def _axes(ax, **kw):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(**kw)
    return ax


def plot_deflection(result, ax=None, levels=20, cmap="viridis"):
    """Filled contour of w over the reference plane, with the probe points marked.

    Example:
        >>> import matplotlib; matplotlib.use("Agg")
        >>> from fem import Membrane
        >>> res = Membrane(nx=8, ny=4).solve()
        >>> ax = plot_deflection(res)
        >>> [t.get_text() for t in ax.texts] == [f"{n}: {res.probe_w[n]:.4f}" for n in res.probes]
        True
        >>> len(ax.collections) > 0, ax.figure.axes[-1].get_ylabel()   # contours, colour bar
        (True, 'w (length units, downward < 0)')
    """
    if not result.converged:
        raise ValueError(f"no deflection to plot: the solve did not converge ({result.reason})")
    ax = _axes(ax, figsize=(7, 3.8))
    m = result.membrane
    x = np.linspace(0.0, m.l, m.nx + 1)
    y = np.linspace(0.0, m.b, m.ny + 1)
    cs = ax.contourf(x, y, result.grid(2).T, levels=levels, cmap=cmap)
    ax.figure.colorbar(cs, ax=ax, label="w (length units, downward < 0)")
    for name, (px, py) in result.probes.items():
        ax.plot(px, py, "k+")
        ax.annotate(f"{name}: {result.probe_w[name]:.4f}", (px, py), textcoords="offset points",
                    xytext=(4, 4), fontsize=8)
    ax.set_xlabel("x (length units)")
    ax.set_ylabel("y (length units)")
    ax.set_aspect("equal")
    ax.set_title(f"Deflection w, p = {m.p:g}")
    return ax


def plot_load_paths(results, probe="p1", ax=None, **line_kw):
    """Load factor against the probe's w for one result or a sequence of them (paper Fig. 7a).

    Paths are drawn with every converged increment; use ``mode="paper"`` or
    ``increments=k`` in :meth:`fem.Membrane.solve` for a finely resolved path.
    """
    ax = _axes(ax, figsize=(6, 4))
    if not isinstance(results, (list, tuple)):
        results = [results]
    line_kw = {"lw": 0.8, **line_kw}
    for res in results:
        k = list(res.probes).index(probe)
        ax.plot(-res.path_w[:, k], res.path_load * res.membrane.p, **line_kw)
    ax.set_xlabel(f"downward deflection -w({probe}) (length units)")
    ax.set_ylabel("pressure p (force / length^2)")
    ax.set_title("Load-displacement paths")
    ax.grid(alpha=0.3)
    return ax
