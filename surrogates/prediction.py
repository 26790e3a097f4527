"""Predictive distributions: mean, epistemic / aleatoric / total variance, intervals."""
from dataclasses import dataclass, field

import numpy as np
from scipy import special

__all__ = ["DRAW_SEED_OFFSET", "Prediction", "check_levels", "mixture_quantile",
           "mixture_interval"]

#: Offset of a fitted model's seed that seeds its prediction draws (both BDL engines).
DRAW_SEED_OFFSET = 7919


@dataclass
class Prediction:
    """A predictive distribution at n inputs with k outputs (eq 3.28-3.30 of the paper).

    Attributes:
        mean: (n, k) predictive mean (average of the sampled network outputs).
        epistemic_var: (n, k) variance of the sampled outputs (weight uncertainty).
        aleatoric_var: (n, k) noise variance 1 / tau.
        samples: optional (S, n, k) sampled network outputs (without noise).
        intervals: level -> (lower, upper) central predictive intervals, each (n, k).
    For classification ``mean`` holds class probabilities and ``epistemic_var`` their
    variance over the posterior samples (aleatoric and total are then None).
    ``np.asarray(prediction)`` gives the mean.
    """

    mean: np.ndarray
    epistemic_var: np.ndarray
    aleatoric_var: np.ndarray = None
    samples: np.ndarray = None
    intervals: dict = field(default_factory=dict)

    @property
    def total_var(self):
        """Predictive variance: epistemic plus aleatoric (the epistemic alone where there is
        no noise term)."""
        if self.aleatoric_var is None:
            return self.epistemic_var
        return self.epistemic_var + self.aleatoric_var

    @property
    def std(self):
        """Predictive standard deviation, sqrt(total_var)."""
        return np.sqrt(self.total_var)

    def __array__(self, dtype=None, copy=None):
        return self.mean if dtype is None else self.mean.astype(dtype)

    def rescaled(self, scale):
        """This prediction with its spread about the mean scaled by ``scale`` in variance (one
        factor per output, e.g. a BDL's ``variance_scale_``), as a prediction made after
        :meth:`surrogates.BDL.calibrate` is: the mean unchanged, the variances times
        ``scale``, the samples and interval ends moved to ``mean + sqrt(scale) (x - mean)``.
        Exact for Gaussian and Gaussian-mixture intervals alike (their quantiles move with
        that map), so recalibrated scores need no second prediction (regression only).

        Example:
            >>> p = Prediction(np.zeros((1, 1)), np.ones((1, 1)), np.ones((1, 1)),
            ...                intervals={0.95: (np.full((1, 1), -2.0), np.full((1, 1), 2.0))})
            >>> r = p.rescaled([4.0])
            >>> float(r.total_var[0, 0]), float(r.intervals[0.95][1][0, 0])
            (8.0, 4.0)
        """
        if self.aleatoric_var is None:
            raise ValueError("rescaled() is for regression predictions (with a noise variance)")
        c = np.asarray(scale, dtype=float)
        if not (np.all(np.isfinite(c)) and np.all(c > 0)):
            raise ValueError(f"scale must be finite and > 0, got scale={scale!r}")
        r = np.sqrt(c)

        def move(x):
            return self.mean + r * (x - self.mean)

        return Prediction(
            mean=self.mean, epistemic_var=self.epistemic_var * c,
            aleatoric_var=self.aleatoric_var * c,
            samples=None if self.samples is None else move(self.samples),
            intervals={lv: (move(lo), move(hi)) for lv, (lo, hi) in self.intervals.items()})


def check_levels(levels):
    """``levels`` as a tuple of central-interval probabilities, each in (0, 1); a
    ValueError names a level given as a percentage (95) or out of range (1.0: an infinite
    interval, NaN bounds for some engines).

    >>> check_levels([0.9, 0.95])
    (0.9, 0.95)
    """
    try:
        flat = np.asarray(levels, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"levels must be probabilities in (0, 1), got {levels!r}") from None
    out = tuple(float(lv) for lv in np.atleast_1d(flat)) if flat.ndim <= 1 else ()
    bad = [lv for lv in out if not 0 < lv < 1]
    if bad or flat.ndim > 1:
        raise ValueError(f"levels must be central-interval probabilities in (0, 1), e.g. "
                         f"(0.9, 0.95), got {bad[0] if bad else levels!r}")
    return out


def mixture_quantile(samples, noise_std, p, iterations=40, rtol=1e-10):
    """p-quantile of the mixture (1/S) sum_s N(samples_s, noise_std^2) at every (n, k).

    samples: (S, n, k); noise_std: (k,) > 0. Newton steps on the mixture CDF, safeguarded by
    a bracket (a step that leaves it bisects instead); a position stops when its step is below
    ``rtol`` times its bracket's initial width, and later steps evaluate the mixture at the
    positions still iterating only (most stop after 3-5 steps).
    """
    S, shape = samples.shape[0], samples.shape[1:]
    sam = samples.reshape(S, -1)
    sig = np.broadcast_to(np.asarray(noise_std, dtype=float), shape).reshape(-1)
    lo = sam.min(0) - 9.0 * sig
    hi = sam.max(0) + 9.0 * sig
    tol = rtol * (hi - lo)
    sd = np.sqrt(sam.var(0) + sig ** 2)
    x = np.clip(sam.mean(0) + special.ndtri(p) * sd, lo, hi)
    act = np.arange(x.size)  # the positions still iterating, their samples and noise
    s_a, g_a = sam, sig
    for _ in range(iterations):
        xa = x[act]
        z = (xa - s_a) / g_a
        F = special.ndtr(z).sum(0) / S - p
        dens = np.exp(-0.5 * z * z).sum(0) / (S * g_a * np.sqrt(2.0 * np.pi))
        la = np.where(F < 0, xa, lo[act])
        ha = np.where(F >= 0, xa, hi[act])
        lo[act], hi[act] = la, ha
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            step = np.where(dens > 0, F / dens, np.inf)  # inf: outside, bisect
        new = xa - step
        outside = ~((new >= la) & (new <= ha))  # a converged step may land on the bracket
        new = np.where(outside, 0.5 * (la + ha), new)
        done = np.abs(new - xa) <= tol[act]
        x[act] = new
        if done.all():
            break
        act, s_a, g_a = act[~done], s_a[:, ~done], g_a[~done]
    return x.reshape(shape)


def mixture_interval(samples, noise_std, level):
    """Central ``level`` interval of the Gaussian mixture; returns (lower, upper)."""
    return (mixture_quantile(samples, noise_std, (1 - level) / 2),
            mixture_quantile(samples, noise_std, (1 + level) / 2))
