"""
Calibration from measurements
=============================

What do measured deflections say about a membrane's thickness and stiffness?

Bayesian calibration of the FE membrane's five inputs (prior: the paper's Table 3) from three
measured deflections, in two measurement campaigns, with the gauges' noise unknown: TMCMC
samples the posterior of the inputs and of the noise's standard deviation, and reports the
model evidence. The "measurements" are the FE model's deflections at chosen inputs plus noise
of 1% of the largest deflection, so the posterior can be checked against the truth.

Deflection measures only the membrane's stiffness E t well (the load parameter of membrane
theory); E and t alone stay uncertain along a ridge, which the corner plot shows.

Run it yourself: ``python examples/plot_calibration.py [--n-samples 2000] [--out DIR]``.
"""
import argparse
import pathlib

import matplotlib.pyplot as plt
import numpy as np

from uqkit.adapters import MembraneModel
from uqkit.calibration import calibrate
from uqkit.presets import table3

parser = argparse.ArgumentParser(description="Calibration from measurements")
parser.add_argument("--n-samples", type=int, default=2000, help="TMCMC samples per stage")
parser.add_argument("--workers", type=int, default=None, help="processes (default: every core)")
parser.add_argument("--out", default="results/calibration", help="store of the FE runs")
args = parser.parse_args()
out = pathlib.Path(args.out)

# %%
# Synthetic measurements
# ----------------------
fe = MembraneModel(probe_frame="relative")  # w at p1, p2, p3 (length units, w < 0 down)
truth = {"l": 2.0, "b": 1.0, "t": 0.0016, "E": 205.0, "nu": 0.3}
w = fe(np.array([list(truth.values())]))[0][0]
rng = np.random.default_rng(0)
sigma = 0.01 * abs(w[0])  # the gauges' noise: 1% of the largest deflection
observed = w + rng.standard_normal((2, 3)) * sigma  # two measurement campaigns
print(f"measured w at p1, p2, p3: {observed.round(4).tolist()}")

# %%
# The posterior by TMCMC
# ----------------------
# The noise's standard deviation is unknown: a uniform prior from 0.1% to 10% of ``|w(p1)|``.
# Every FE run is stored in ``--out``: an interrupted calibration resumes.
noise = f"uniform({0.001 * abs(w[0]):.6g}, {0.1 * abs(w[0]):.6g})"
post = calibrate(fe, table3(), observed, noise, n_samples=args.n_samples, seed=0,
                 workers=args.workers, store=out / "runs")
print(post.summary())
Et = post.samples[:, 2] * post.samples[:, 3]
lo, hi = np.quantile(Et, [0.025, 0.975])
print(f"E t: posterior mean {Et.mean():.5g}, 95% interval [{lo:.5g}, {hi:.5g}] "
      f"(true {truth['E'] * truth['t']:.5g})")

# %%
# The corner plot
# ---------------
# Marginals on the diagonal, pairs below; the true inputs in black.
fig = post.plot_corner(truths={**truth, "noise_std": sigma})
plt.show()
