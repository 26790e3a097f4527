"""Variance-based (Sobol') sensitivity indices with confidence intervals.

For a model ``Y = f(X)`` with independent inputs, the first-order index of input i and its
total index are (Sobol' 1993; Homma & Saltelli 1996)::

    S_i  = V[E(Y | X_i)] / V(Y)          (share of the variance due to X_i alone)
    ST_i = E[V(Y | X_~i)] / V(Y)          (share due to X_i with all its interactions)

Pick-freeze estimators (``method="saltelli"``). Two independent (n, d) samples A and B of the
unit hypercube are the two halves of one scrambled Sobol' design of dimension 2d
(``scipy.stats.qmc.Sobol``; n a power of two keeps it balanced). ``AB_i`` is A with its
column i taken from B. With ``f_A = f(A)`` etc. and ``V`` the variance of ``f_A`` and ``f_B``
pooled, the estimators of Saltelli et al. (2010, Table 2, (b) and (f)) are::

    S_i  = mean(f_B * (f_AB_i - f_A)) / V             (Saltelli 2010)
    ST_i = mean((f_A - f_AB_i) ** 2) / (2 V)           (Jansen 1999)

at a cost of n (d + 2) model runs. Outputs are centred by the pooled mean first (this only
lowers the variance of the first-order estimator).

Confidence intervals, two kinds (``benchmarks/bench_sobol_coverage.py`` measures both):

* bootstrap (the default): percentile intervals of the n base rows resampled as if
  independent, which a scrambled Sobol' design's are not. 95% intervals held the
  least-covered index in 0.84-0.92 of 100 seeds at n = 128-512, 0.95-1.00 at 1024; a warning
  below it.
* replicates (``replicates=R``): R independent scramblings of n / R base rows each, the same
  n (d + 2) runs; the indices are the mean of the R estimates and the intervals Student-t
  with R - 1 degrees of freedom, which is exact for the replicates' independent, identically
  distributed estimates but for their normality (Owen 1997, randomized QMC). With R = 8, the
  least-covered index's 95% interval held it in 0.90-0.95 of 100 seeds at n = 128-1024 on
  both test functions (R = 16: 0.88-0.93); the price is accuracy: the indices' root-mean-square
  error was 0.5-4.5 times the single design's at n = 128-512, up to 7.7 at 1024. So: honest
  intervals where n must stay small; the bootstrap where n >= 1024 (its intervals then cover).


Polynomial chaos (``method="pce"``): an orthonormal polynomial expansion of total degree p,
``f ~ sum_a c_a Psi_a``, fitted by least squares on n runs of a scrambled Sobol' design,
gives the indices exactly from its coefficients (Sudret 2008)::

    V = sum_{a != 0} c_a^2,   S_i = sum_{a in A_i} c_a^2 / V,   ST_i = sum_{a: a_i > 0} c_a^2 / V

with A_i the multi-indices that involve input i only. The polynomials are each input's own
(Hermite for a normal, Legendre for a uniform, those of its distribution for any other with a
bounded support) or its normal Rosenblatt variable's: :mod:`uqkit.inputs.polynomials`.
Bootstrap intervals refit the coefficients on resampled rows.

Surrogates (:func:`sobol_indices_surrogate`): the indices of the surrogate's predictive mean,
with bootstrap intervals (sampling error), plus an epistemic band: quantiles of the indices
of the surrogate's posterior function draws (each draw is one function shared by all inputs).

Dependent inputs: designs are drawn in the unit hypercube and mapped through the inverse
Rosenblatt transform of ``inputs.joint`` (copulas included). The indices are then those of the
independent Rosenblatt variables U_1, ..., U_d, which depend on the input order: U_1 carries
X_1 with everything it shares with the others ("full" index of X_1), the last one only the
part of X_d independent of the others (Mara, Tarantola & Annoni 2015).

Modules, each importing only those above it::

    result       SobolResult; NaN for constant outputs; the small-sample warnings
    pick_freeze  the designs, the Saltelli / Jansen estimates, both kinds of interval
    pce          pce_indices: the indices of a least-squares PCE
    api          sobol_indices: checks, design, runs, estimator
    surrogate    sobol_indices_surrogate: a fitted surrogate's, with an epistemic band

References:
    Owen (1997), SIAM J. Numer. Anal. 34: 1884-1910. Sobol' (1993), Math. Model. Comput.
    Exp. 1: 407-414. Jansen (1999), Comput. Phys. Commun. 117: 35-43. Saltelli et al.
    (2010), Comput. Phys. Commun. 181: 259-270. Sudret (2008), Reliab. Eng. Syst. Saf. 93:
    964-979. Mara, Tarantola & Annoni (2015), Environ. Model. Softw. 72: 173-183.
"""
from .api import BOOTSTRAP_DEFAULT, METHODS, sobol_indices
from .pce import PCE_LOO_WARNING, pce_indices
from .pick_freeze import (BOOTSTRAP_MIN_N, REPLICATE_MIN_N, pick_freeze_design,
                          replicate_designs, saltelli_estimates)
from .result import CONSTANT_ULPS, SobolResult, plot_sobol  # noqa: F401 - as before
from .surrogate import sobol_indices_surrogate

__all__ = ["METHODS", "BOOTSTRAP_DEFAULT", "BOOTSTRAP_MIN_N", "CONSTANT_ULPS",
           "PCE_LOO_WARNING", "REPLICATE_MIN_N", "SobolResult", "pick_freeze_design",
           "replicate_designs", "saltelli_estimates", "sobol_indices", "pce_indices",
           "sobol_indices_surrogate"]
