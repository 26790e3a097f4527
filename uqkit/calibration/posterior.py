"""A posterior of the inputs: draws, their summaries, a corner plot and the posterior
predictive of the outputs against the measurements.

May import numpy, scipy and matplotlib (for the plot only).
"""
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Posterior"]


@dataclass
class Posterior:
    """Posterior draws of a calibration (:func:`uqkit.calibration.calibrate`).

    Attributes:
        names: the parameters: the prior's inputs, then ``noise_std`` when the noise was a
            sampled parameter.
        samples: (n, p) posterior draws, columns in ``names``' order.
        outputs: (n, k) the model's outputs at the draws (its predictive means for a
            surrogate).
        observed: (m, k) the measurements.
        output_names: the outputs' names.
        log_evidence: log marginal likelihood of the measurements (TMCMC), or None.
        model_runs: model evaluations used; ``failed_runs`` those that failed (likelihood 0).
        method: ``"tmcmc"`` or ``"emcee"``.
        seconds: wall time.
        diagnostics: the sampler's: stages (exponent, ESS, weights' CoV, acceptance) or
            acceptance fraction and autocorrelation times.
        info: the noise, and for a model with a predictive variance its share of the
            likelihood's variance at the draws (``model_variance_share``).
        noise_std: (n, k) the measurement noise's standard deviation at each draw.
        model_variance: (n, k) a surrogate's predictive variance at the draws, where the
            likelihood used it (:mod:`uqkit.calibration.likelihood`), else None.
    """

    names: tuple
    samples: np.ndarray
    outputs: np.ndarray
    observed: np.ndarray
    output_names: tuple
    log_evidence: float | None
    model_runs: int
    failed_runs: int
    method: str
    seconds: float = 0.0
    diagnostics: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    noise_std: np.ndarray = None
    model_variance: np.ndarray = None

    def mean(self):
        """(p,) posterior means."""
        return self.samples.mean(axis=0)

    def std(self):
        """(p,) posterior standard deviations."""
        return self.samples.std(axis=0, ddof=1)

    def interval(self, level=0.95):
        """(2, p) central credible intervals at ``level``."""
        tail = (1 - level) / 2
        return np.quantile(self.samples, [tail, 1 - tail], axis=0)

    def correlation(self):
        """(p, p) posterior correlation matrix."""
        return np.atleast_2d(np.corrcoef(self.samples, rowvar=False))

    def predictive(self, level=0.95, seed=0):
        """The posterior predictive of a new measurement: ``(mean (k,), interval (2, k))``
        of the outputs at the draws plus measurement noise, and, for a surrogate whose
        variance V the likelihood used, its error delta given the measurements: the
        likelihood's model ``y = f(x) + delta + eps`` shares one delta ~ N(0, V) between the
        m measurements and the new one, so that, per draw and output with the mean
        residual ``r_bar``, delta ~ N(m V r_bar / (s^2 + m V), V s^2 / (s^2 + m V))
        (without delta the interval of a surrogate of V = 1 at s = 0.1 was [-0.89, 2.55]
        for the exact [0.77, 1.23])."""
        rng = np.random.default_rng(seed)
        draws = self.outputs + rng.standard_normal(self.outputs.shape) * self.noise_std
        if self.model_variance is not None:
            var, noise_var, m = self.model_variance, self.noise_std ** 2, len(self.observed)
            r_bar = self.observed.mean(axis=0) - self.outputs
            draws = draws + (m * var * r_bar + rng.standard_normal(draws.shape) * np.sqrt(
                var * noise_var * (noise_var + m * var))) / (noise_var + m * var)
        tail = (1 - level) / 2
        return draws.mean(axis=0), np.quantile(draws, [tail, 1 - tail], axis=0)

    def summary(self, level=0.95):
        """A table: each parameter's mean, std and credible interval; the outputs'
        posterior predictive against the measurements' mean; runs and evidence."""
        lo, hi = self.interval(level)
        rows = [f"{'parameter':>12} {'mean':>12} {'std':>11} {'interval':>27}"]
        for j, name in enumerate(self.names):
            rows.append(f"{name:>12} {self.mean()[j]:12.6g} {self.std()[j]:11.4g} "
                        f"[{lo[j]:12.6g}, {hi[j]:12.6g}]")
        mean, (plo, phi) = self.predictive(level)
        rows.append(f"{'output':>12} {'measured':>12} {'predictive':>11} {'interval':>27}")
        for c, name in enumerate(self.output_names):
            rows.append(f"{name:>12} {self.observed[:, c].mean():12.6g} {mean[c]:11.6g} "
                        f"[{plo[c]:12.6g}, {phi[c]:12.6g}]")
        evidence = "" if self.log_evidence is None else \
            f", log evidence {self.log_evidence:.4g}"
        rows.append(f"{self.method}: {len(self.samples)} draws, {self.model_runs} model runs "
                    f"({self.failed_runs} failed){evidence}, {self.seconds:.1f} s")
        return "\n".join(rows)

    def to_dict(self):
        """A JSON-friendly summary (no draws)."""
        from ..execution.cache import jsonable

        lo, hi = self.interval()
        return jsonable({"names": list(self.names), "mean": self.mean(), "std": self.std(),
                         "interval_95": [lo, hi], "correlation": self.correlation(),
                         "log_evidence": self.log_evidence, "model_runs": self.model_runs,
                         "failed_runs": self.failed_runs, "method": self.method,
                         "seconds": self.seconds, "diagnostics": self.diagnostics,
                         "info": self.info}, finite=True)

    def plot_corner(self, truths=None, others=(), bins=30, fig=None):
        """Corner plot: each parameter's histogram on the diagonal, pairs below it.

        Args:
            truths: ``name -> value`` marked by lines (the true inputs of a synthetic test).
            others: further ``(label, Posterior)`` drawn over this one (a surrogate's
                posterior against the model's, say).
        """
        import matplotlib.pyplot as plt

        p = len(self.names)
        if fig is None:
            fig = plt.figure(figsize=(2.2 * p + 1, 2.2 * p + 1))
        axes = fig.subplots(p, p, squeeze=False)
        sets = [("posterior", self), *others]
        for i in range(p):
            for j in range(p):
                ax = axes[i, j]
                if j > i:
                    ax.axis("off")
                    continue
                for k, (label, post) in enumerate(sets):
                    x = post.samples[:, post.names.index(self.names[j])]
                    if i == j:
                        ax.hist(x, bins=bins, density=True, histtype="step", color=f"C{k}",
                                label=label)
                    else:
                        y = post.samples[:, post.names.index(self.names[i])]
                        ax.plot(x, y, ".", ms=1.5, alpha=0.3, color=f"C{k}")
                if truths:
                    if self.names[j] in truths:
                        ax.axvline(truths[self.names[j]], color="k", lw=0.8)
                    if i != j and self.names[i] in truths:
                        ax.axhline(truths[self.names[i]], color="k", lw=0.8)
                if i == p - 1:
                    ax.set_xlabel(self.names[j])
                if j == 0 and i > 0:
                    ax.set_ylabel(self.names[i])
        if len(sets) > 1:
            axes[0, 0].legend(fontsize=7)
        fig.tight_layout()
        return fig
