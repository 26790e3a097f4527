"""Sampling estimators of Pf: crude Monte Carlo and importance sampling at the FORM design
point.

Monte Carlo (``"mc"``): ``Pf = m / n`` for m failures in n runs, CoV ``sqrt((1 - Pf) / (n Pf))``
and the exact binomial (Clopper-Pearson 1934) interval from beta quantiles::

    lower = B^-1(a/2; m, n - m + 1),   upper = B^-1(1 - a/2; m + 1, n - m)

Importance sampling (``"is"``): n draws of the standard normal density shifted to u*,
``h(u) = phi(u - u*)``, with weights ``w = phi(u) / h(u) = exp(-u . u* + |u*|^2 / 2)``;
``Pf = mean(1[g <= 0] w)``, its standard error from the sample variance of the weighted
indicators, and a normal-approximation interval ``Pf +- z se`` (clipped at 0).

Imports: numpy, scipy, :mod:`uqkit.validation` and the package's result and form modules.
"""
import math
import warnings

import numpy as np
from scipy import special

from ..validation import check_float, check_int
from .form import _form_point
from .result import beta_of, clopper_pearson

__all__ = ["monte_carlo", "importance_sampling"]


def monte_carlo(ls, rng, n=100_000, level=0.95, batch=1_000_000):
    """Crude Monte Carlo with a Clopper-Pearson interval (see the module notes)."""
    n = check_int(n, "n", 1)
    batch = check_int(batch, "batch", 1)
    level = check_float(level, "level", 0.0, 1.0)
    d = ls.inputs.dim
    failures = 0
    for b, start in enumerate(range(0, n, batch)):
        U = rng.standard_normal((min(batch, n - start), d))
        failures += int(np.count_nonzero(ls(U, tag=f"mc-{b:04d}") <= 0))
    pf = failures / n
    ci = clopper_pearson(failures, n, level)
    if failures == 0:
        warnings.warn(f"no failure in n={n} Monte Carlo runs: pf = 0, with a {100 * level:g}% "
                      f"upper bound of {ci[1]:.3g}; use more runs or subset simulation",
                      UserWarning, stacklevel=3)
    cov = math.sqrt((1 - pf) / (n * pf)) if pf > 0 else math.inf
    return dict(pf=pf, cov=cov, ci=ci, beta=beta_of(pf), level=level,
                info={"n": n, "failures": failures})


def importance_sampling(ls, rng, n=2000, level=0.95, form_result=None, **form_options):
    """Importance sampling around the FORM design point (see the module notes).

    Args:
        n: importance samples.
        form_result: a FORM result to reuse (its runs are included in ``model_runs``);
            else FORM runs here with ``form_options``.
    """
    n = check_int(n, "n", 2)
    level = check_float(level, "level", 0.0, 1.0)
    f, runs_before = _form_point(ls, form_result, form_options)
    ustar = f["design_point"]["u"]
    U = ustar + rng.standard_normal((n, len(ustar)))
    fails = ls(U, tag="is") <= 0
    w = np.exp(-U @ ustar + 0.5 * ustar @ ustar)
    v = np.where(fails, w, 0.0)
    pf = float(v.mean())
    se = float(v.std(ddof=1) / math.sqrt(n))
    z = special.ndtri(0.5 + level / 2)
    if not fails.any():
        warnings.warn(f"no failure among n={n} importance samples: pf = 0; check the design "
                      "point or raise n", UserWarning, stacklevel=3)
    return dict(pf=pf, cov=se / pf if pf > 0 else math.inf,
                ci=(max(pf - z * se, 0.0), pf + z * se), beta=beta_of(pf), level=level,
                design_point=f["design_point"], alpha=f["alpha"], importance=f["importance"],
                history=f["history"],
                info={"n": n, "failures": int(fails.sum()), "form_beta": f["beta"],
                      "ci_kind": "normal approximation"}, extra_runs=runs_before)


