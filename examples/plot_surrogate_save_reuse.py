"""
A surrogate saved and reused
============================

How do you train a surrogate once and use it in a later session, or hand it to a colleague?

A BDL trained on FE runs of the membrane is saved to one file; a later session loads it
without the training data and runs a surrogate Monte Carlo, with the epistemic band of the
mean from the posterior's function draws. The file records the settings, the fitted
posterior and the format version; a file from a newer, unknown format is refused with a
message rather than misread.

Run it yourself: ``python examples/plot_surrogate_save_reuse.py [--n-train 256]
[--n-mc 100000] [--out results/bdl.pt]``.
"""
import argparse
import pathlib

import matplotlib.pyplot as plt
import numpy as np

from surrogates import BDL
from uqkit import propagate, sample
from uqkit.adapters import MembraneModel, SurrogateModel
from uqkit.presets import table3

parser = argparse.ArgumentParser(description="A surrogate saved and reused")
parser.add_argument("--n-train", type=int, default=256, help="FE runs to train on")
parser.add_argument("--n-mc", type=int, default=100_000, help="surrogate samples")
parser.add_argument("--out", default="results/bdl.pt", help="where the model is saved")
args = parser.parse_args()
path = pathlib.Path(args.out)
path.parent.mkdir(parents=True, exist_ok=True)

# %%
# Train and save
# --------------
inputs = table3()
fe = MembraneModel(probe_frame="relative")
train = propagate(fe, sample(inputs, args.n_train, rule="latin_hypercube", seed=1),
                  progress=False)
bdl = BDL(inference="laplace", prior="hierarchical-normal", hidden=(30, 15, 10),
          num_threads=1, seed=0)
bdl.fit(train.inputs.values[train.ok], train.good_outputs())
bdl.save(path)
print(f"saved {path} ({path.stat().st_size / 1024:.0f} KiB)")

# %%
# ... later, in another session: load and run
# -------------------------------------------
reused = BDL.load(path)
X = sample(inputs, args.n_mc, seed=2)
mc = propagate(SurrogateModel(reused, input_names=inputs.names), X, executor="serial",
               progress=False)
# The epistemic band: each posterior draw is one plausible response function; how far the
# mean of w over inputs moves from draw to draw (on 2000 of the inputs) is added to the
# Monte Carlo mean, so that the band holds no sampling error of its own.
band = reused.predict_distribution(X.values[:2000], n_samples=50, return_samples=True,
                                   levels=())
shift = band.samples.mean(axis=1) - band.mean.mean(axis=0)  # (draws, outputs)
lo, hi = mc.outputs.mean(axis=0) + np.quantile(shift, [0.025, 0.975], axis=0)
for j, name in enumerate(fe.output_names):
    print(f"{name}: surrogate MC mean {mc.outputs[:, j].mean():.4f}, std "
          f"{mc.outputs[:, j].std():.4f}; epistemic 95% band of the mean "
          f"[{lo[j]:.4f}, {hi[j]:.4f}]")
same = np.array_equal(reused.predict(X.values[:100]), bdl.predict(X.values[:100]))
print(f"the loaded model predicts as the saved one: {same}")

# %%
# The surrogate's distribution of w
# ---------------------------------
fig, ax = plt.subplots(figsize=(6, 3.4))
for j, name in enumerate(fe.output_names):
    ax.hist(mc.outputs[:, j], bins=100, density=True, histtype="step", label=name)
ax.set_xlabel("deflection w")
ax.set_ylabel("density")
ax.legend()
fig.tight_layout()
plt.show()
