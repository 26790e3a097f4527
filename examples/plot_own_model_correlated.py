"""
Your own model with correlated inputs
=====================================

How likely does a cantilever deflect more than 18 mm when its load and modulus are random and
correlated?

The model is any Python function of a sample matrix: here the tip deflection
d = 4 P L^3 / (E w t^3) (m) of a cantilever of length L = 2 m, width w = 0.1 m and depth
t = 0.05 m, under an annual-maximum load P (Gumbel, N) with a Young's modulus E (lognormal, Pa).
The two are correlated through a Gaussian (Nataf) copula with correlation 0.5 between their
normal scores. uqkit samples them, runs the function on every core and reports the mean with
its Monte Carlo error, a quantile and the exceedance probability with its confidence interval.

Run it yourself: ``python examples/plot_own_model_correlated.py [--n 20000]``.
"""
import argparse

import matplotlib.pyplot as plt
import numpy as np

from uqkit import RandomInputs, propagate, sample
from uqkit.statistics import describe, exceedance_probability

parser = argparse.ArgumentParser(description="Your own model with correlated inputs")
parser.add_argument("--n", type=int, default=20_000, help="Monte Carlo samples")
args = parser.parse_args()

L, W, T = 2.0, 0.1, 0.05  # length, width, depth (m)
LIMIT = 0.018  # deflection limit (m)


def deflection(X):
    """Tip deflection (m) of rows (P in N, E in Pa)."""
    P, E = X[:, 0], X[:, 1]
    return 4 * P * L ** 3 / (E * W * T ** 3)


# %%
# The random inputs
# -----------------
# Distributions are written as engineers name their parameters: a Gumbel by its location
# and scale, a lognormal by the mean and standard deviation of the variable itself.
# ``with_copula("nataf", R)`` couples them; R is the correlation of their normal scores
# (the Nataf correlation), which the sample's own Pearson correlation approaches but need not
# equal.
inputs = RandomInputs.from_spec({
    "P": "gumbel(loc=1000, scale=150)",            # annual maximum load (N)
    "E": "lognormal(mean=2.1e11, std=1.05e10)",     # Young's modulus (Pa)
}).with_copula("nataf", [[1.0, 0.5], [0.5, 1.0]])
print(inputs.summary())

# %%
# Monte Carlo on every core
# -------------------------
# A scrambled Sobol' sample (``rule="sobol"``) with a fixed seed; :func:`uqkit.propagate`
# runs the function in chunks on a process pool and returns the outputs with a status per
# run.
X = sample(inputs, args.n, rule="sobol", seed=1)
result = propagate(deflection, X, progress=False)
d = result.outputs[:, 0]
stats = describe(d, quantiles=(0.5, 0.99), n_boot=50)
p, (lo, hi) = exceedance_probability(d, LIMIT)
print(f"mean deflection {stats['mean'] * 1e3:.3f} +- {stats['mean_se'] * 1e3:.3f} mm, "
      f"99% quantile {stats['quantiles']['0.99'] * 1e3:.3f} mm")
print(f"P[d > 18 mm] = {p:.4f} (95% CI {lo:.4f} - {hi:.4f}); "
      f"corr(P, E) in the sample {np.corrcoef(X['P'], X['E'])[0, 1]:.3f}")

# %%
# The sample and the deflection
# -----------------------------
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
ax1.scatter(X["P"], X["E"] / 1e9, s=2, alpha=0.3)
ax1.set_xlabel("P (N)")
ax1.set_ylabel("E (GPa)")
ax1.set_title("the correlated sample")
ax2.hist(d * 1e3, bins=80, density=True, alpha=0.8)
ax2.axvline(LIMIT * 1e3, color="k", ls="--", label=f"limit: P = {p:.4f}")
ax2.set_xlabel("tip deflection (mm)")
ax2.set_ylabel("density")
ax2.legend()
fig.tight_layout()
plt.show()
