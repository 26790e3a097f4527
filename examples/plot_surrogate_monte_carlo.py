"""
Surrogate Monte Carlo against the FE truth
==========================================

Can a surrogate trained on a few hundred FE runs replace a Monte Carlo of many thousands, and
how would you know?

A BDL learns the membrane's deflections from ``--n-train`` FE runs; a Monte Carlo of
``--n-mc`` samples then runs on the surrogate's predictive mean. Its distribution is compared
with an FE Monte Carlo of ``--n-truth`` runs: means and standard deviations with the truth's
own Monte Carlo error, and the two-sample Kolmogorov-Smirnov statistic against its 5% critical
value, the largest distance sampling noise alone would explain. The BDL's posterior also gives
an epistemic band for the mean: how much the answer could move with more training runs.

Run it yourself (the paper's sizes: 1000 training runs, 1e5 surrogate samples):
``python examples/plot_surrogate_monte_carlo.py [--n-train 1000] [--n-mc 100000]
[--n-truth 20000]``.
"""
import argparse
import time

import matplotlib.pyplot as plt
import numpy as np

from surrogates import BDL
from uqkit import propagate, sample
from uqkit.adapters import MembraneModel, SurrogateModel
from uqkit.plots import kde_overlay
from uqkit.presets import table3
from uqkit.statistics import compare

parser = argparse.ArgumentParser(description="Surrogate Monte Carlo against the FE truth")
parser.add_argument("--n-train", type=int, default=1000, help="FE runs to train on")
parser.add_argument("--n-mc", type=int, default=100_000, help="surrogate samples")
parser.add_argument("--n-truth", type=int, default=20_000, help="FE runs of the truth")
args = parser.parse_args()

inputs = table3()
fe = MembraneModel(probe_frame="relative")

# %%
# Train on FE runs
# ----------------
t0 = time.perf_counter()
train = propagate(fe, sample(inputs, args.n_train, rule="latin_hypercube", seed=1),
                  progress=False)
bdl = BDL(inference="laplace", prior="hierarchical-normal", hidden=(30, 15, 10),
          num_threads=1, seed=0).fit(train.inputs.values[train.ok], train.good_outputs())
train_seconds = time.perf_counter() - t0

# %%
# Monte Carlo on the surrogate and on the FE model
# ------------------------------------------------
# The surrogate runs in this process (``executor="serial"``): a prediction of many rows is
# cheaper than starting workers.
t0 = time.perf_counter()
surrogate_mc = propagate(SurrogateModel(bdl, input_names=inputs.names),
                         sample(inputs, args.n_mc, seed=2), executor="serial", progress=False)
mc_seconds = time.perf_counter() - t0
t0 = time.perf_counter()
truth = propagate(fe, sample(inputs, args.n_truth, seed=3), progress=False)
truth_seconds = time.perf_counter() - t0
W_truth = truth.good_outputs()
print(f"FE: {args.n_train} training runs and the fit {train_seconds:.1f} s; surrogate MC of "
      f"{args.n_mc} samples {mc_seconds:.1f} s; FE truth of {len(W_truth)} runs "
      f"{truth_seconds:.1f} s")

n, m = args.n_mc, len(W_truth)
critical = 1.358 * np.sqrt((n + m) / (n * m))  # two-sample KS, 5% level
for j, name in enumerate(fe.output_names):
    c = compare(surrogate_mc.outputs[:, j], W_truth[:, j])
    print(f"{name}: truth mean {W_truth[:, j].mean():.4f} +- {c['truth_mean_se']:.4f}, "
          f"surrogate {surrogate_mc.outputs[:, j].mean():.4f}; truth std "
          f"{W_truth[:, j].std(ddof=1):.4f} +- {c['truth_std_se']:.4f}, surrogate "
          f"{surrogate_mc.outputs[:, j].std(ddof=1):.4f}; KS {c['ks']:.4f} "
          f"(5% critical value {critical:.4f})")

# %%
# The epistemic band of the mean
# ------------------------------
# Each posterior draw of the network is one plausible response function; the mean of w over
# the inputs, computed per draw, spreads by what the training runs left uncertain. The spread
# is measured on 2000 inputs and added to the surrogate Monte Carlo mean, so that the band
# holds no sampling error of its own.
X_band = sample(inputs, 2000, seed=4).values
draws = bdl.predict_distribution(X_band, n_samples=100, return_samples=True, levels=())
shift = draws.samples.mean(axis=1) - draws.mean.mean(axis=0)  # (draws, outputs)
lo, hi = surrogate_mc.outputs.mean(axis=0) + np.quantile(shift, [0.025, 0.975], axis=0)
for j, name in enumerate(fe.output_names):
    print(f"{name}: epistemic 95% band of the mean [{lo[j]:.4f}, {hi[j]:.4f}]")

# %%
# The densities
# -------------
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
for j, (ax, name) in enumerate(zip(axes, fe.output_names)):
    kde_overlay({f"BDL, {args.n_mc} samples": surrogate_mc.outputs[:, j]}, W_truth[:, j],
                ax=ax, xlabel=name, truth_label=f"FE, {len(W_truth)} runs")
fig.tight_layout()
plt.show()
