"""Your own model, a Python function, with correlated random inputs.

A cantilever's tip deflection d = 4 P L^3 / (E w t^3) under a random load P and modulus E
that are correlated (Nataf copula, rho = 0.5), by Monte Carlo on every core, with the mean's
Monte Carlo error, a 99% quantile and the probability of exceeding 18 mm.

    python examples/own_model_correlated.py [--n 20000]
"""
import argparse

import numpy as np

from uqkit import RandomInputs, propagate, sample
from uqkit.statistics import describe, exceedance_probability

L, W, T = 2.0, 0.1, 0.05  # length, width, thickness (m)


def deflection(X):
    """Tip deflection (m) of rows (P in N, E in Pa)."""
    P, E = X[:, 0], X[:, 1]
    return 4 * P * L ** 3 / (E * W * T ** 3)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20_000, help="Monte Carlo samples")
    args = ap.parse_args(argv)

    inputs = RandomInputs.from_spec({
        "P": "gumbel(loc=1000, scale=150)",            # annual maximum load (N)
        "E": "lognormal(mean=2.1e11, std=1.05e10)",     # Young's modulus (Pa)
    }).with_copula("nataf", [[1.0, 0.5], [0.5, 1.0]])
    print(inputs.summary())
    X = sample(inputs, args.n, rule="sobol", seed=1)
    res = propagate(deflection, X, workers=2, progress=False)
    d = res.outputs[:, 0]
    stats = describe(d, quantiles=(0.5, 0.99), n_boot=50)
    p, (lo, hi) = exceedance_probability(d, 0.018)
    print(f"mean deflection {stats['mean'] * 1e3:.3f} +- {stats['mean_se'] * 1e3:.3f} mm, "
          f"99% quantile {stats['quantiles']['0.99'] * 1e3:.3f} mm")
    print(f"P[d > 18 mm] = {p:.4f} (95% CI {lo:.4f} - {hi:.4f}); "
          f"corr(P, E) in the sample {np.corrcoef(X['P'], X['E'])[0, 1]:.3f}")
    return res


if __name__ == "__main__":
    main()
