"""The Gaussian likelihood of measurements given model outputs, with the model's own
predictive variance where it has one.

Measurements ``Y`` (m, k) are m repeated measurements of the model's k outputs:
``Y_j = f(x) + delta + eps_j`` with measurement noise ``eps_j ~ N(0, sigma^2)`` independent
between repetitions, and, for a surrogate, its error ``delta ~ N(0, V(x))`` (its predictive
variance): one error of the function, shared by every repetition. For each output the m
residuals ``r_j = Y_j - f(x)`` are then N(0, C) with ``C = sigma^2 I + V 1 1^T``, whose
inverse and determinant have closed forms (``r_bar`` the mean residual)::

    r^T C^-1 r = sum_j (r_j - r_bar)^2 / sigma^2 + m r_bar^2 / (sigma^2 + m V)
    log det C  = (m - 1) log sigma^2 + log(sigma^2 + m V)

With V = 0 this is the product of independent normal densities. Treating the surrogate's
error as independent between repetitions instead would shrink it by m: a cheap surrogate
would then make the posterior falsely sharp.

May import numpy only.

Example:
    >>> import numpy as np
    >>> Y = np.array([[1.0, 2.0], [1.2, 1.8]])            # m = 2 measurements of k = 2 outputs
    >>> F = np.array([[1.1, 1.9]])                        # one model run
    >>> ll = gaussian_log_likelihood(Y, F, noise_var=np.array([0.01]))
    >>> from scipy import stats                           # independent normals when V = 0
    >>> bool(np.isclose(ll[0], stats.norm(F[0], 0.1).logpdf(Y).sum()))
    True
"""
import numpy as np

__all__ = ["LOG_2PI", "gaussian_log_likelihood", "log_likelihood"]

#: log(2 pi), the Gaussian density's constant.
LOG_2PI = float(np.log(2 * np.pi))


def gaussian_log_likelihood(Y, F, noise_var, model_var=None):
    """Log-likelihood of the measurements for each of n model runs.

    Args:
        Y: (m, k) measurements ((k,): one measurement; (m,) for k = 1 outputs: m
            measurements), finite.
        F: (n, k) model outputs ((k,): one run) (NaN rows: failed runs, log-likelihood -inf).
        noise_var: measurement noise variances (> 0), broadcastable to (n, k): (k,), or
            (n, 1) when the noise is a sampled parameter.
        model_var: (n, k) predictive variances of the model (a surrogate's, >= 0; NaN: a
            failed prediction), or None.

    Returns:
        (n,) log-likelihoods.

    Raises:
        ValueError: a measurement is not finite, a noise variance not positive and finite,
            or a model variance negative (each gave every run -inf, or a wrong finite value,
            without a word); the message names it.
    """
    values = np.asarray(Y, dtype=float)
    if not np.isfinite(values).all():
        raise ValueError(f"Y holds {int((~np.isfinite(values)).sum())} non-finite "
                         f"measurement(s), the first {float(values[~np.isfinite(values)][0])!r}")
    noise = np.asarray(noise_var, dtype=float)
    if not (np.isfinite(noise) & (noise > 0)).all():
        raise ValueError(f"noise_var must be > 0 and finite, got "
                         f"{float(noise[~(np.isfinite(noise) & (noise > 0))].ravel()[0])!r}")
    if model_var is not None and (np.asarray(model_var, dtype=float) < 0).any():
        raise ValueError(f"model_var must be >= 0 (a variance), got "
                         f"{float(np.nanmin(model_var))!r}")
    return log_likelihood(Y, F, noise_var, model_var)


def log_likelihood(Y, F, noise_var, model_var=None):
    """:func:`gaussian_log_likelihood` without its checks of the values, for a caller that
    has made them (:func:`uqkit.calibration.calibrate`, once, not at every batch)."""
    Y = np.asarray(Y, dtype=float)
    F = np.atleast_2d(np.asarray(F, dtype=float))
    if Y.ndim == 1:  # one measurement of k outputs, or (k = 1) m measurements of one
        Y = Y[:, None] if F.shape[1] == 1 else Y[None, :]
    if Y.ndim != 2 or F.ndim != 2 or Y.shape[1] != F.shape[1]:
        raise ValueError(f"Y must be (m, k) measurements and F (n, k) outputs of the same k; "
                         f"got Y {Y.shape} and F {F.shape} (one measurement of k outputs: "
                         "Y of shape (1, k))")
    m = len(Y)
    noise_var = np.broadcast_to(np.asarray(noise_var, dtype=float), F.shape)
    shared = noise_var + m * (0.0 if model_var is None else np.asarray(model_var, dtype=float))
    r_bar = Y.mean(axis=0) - F                              # (n, k)
    spread = ((Y - Y.mean(axis=0)) ** 2).sum(axis=0)        # (k,), the same for every run
    quad = spread / noise_var + m * r_bar ** 2 / shared
    logdet = (m - 1) * np.log(noise_var) + np.log(shared)
    ll = -0.5 * (quad + logdet + m * LOG_2PI).sum(axis=1)
    return np.where(np.isfinite(ll), ll, -np.inf)
