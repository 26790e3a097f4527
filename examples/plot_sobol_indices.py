"""
Sobol' indices: which inputs drive the deflection?
===================================================

Which of the membrane's five random inputs (length l, width b, thickness t, modulus E,
Poisson's ratio nu) is worth measuring better?

First-order Sobol' indices give the share of the output's variance each input explains on
its own, total indices its share with all its interactions. They are computed three ways:

* from FE runs by the pick-freeze estimators (Saltelli; n (d + 2) runs for a base sample of
  n), with bootstrap intervals for their sampling error;
* from a polynomial chaos expansion fitted on n FE runs;
* from a BDL trained on far fewer FE runs, whose posterior gives an epistemic band: the
  indices of each plausible response function.

Run it yourself: ``python examples/plot_sobol_indices.py [--n 1024] [--n-train 256]``.
"""
import argparse

import matplotlib.pyplot as plt
import numpy as np

from surrogates import BDL
from uqkit import propagate, sample
from uqkit.adapters import MembraneModel
from uqkit.presets import table3
from uqkit.sensitivity import sobol_indices, sobol_indices_surrogate

parser = argparse.ArgumentParser(description="Sobol' indices of the membrane")
parser.add_argument("--n", type=int, default=1024, help="base sample, a power of 2")
parser.add_argument("--n-train", type=int, default=256, help="FE runs for the BDL")
args = parser.parse_args()

inputs = table3()
fe = MembraneModel(probe_frame="relative")

# %%
# From FE runs: pick-freeze and PCE
# ---------------------------------
saltelli = sobol_indices(fe, inputs, n=args.n, seed=0, bootstrap=100)
pce = sobol_indices(fe, inputs, n=args.n, seed=1, method="pce")
print(f"pick-freeze: {saltelli.model_runs} FE runs; PCE: {pce.model_runs} FE runs "
      f"(order {pce.info['order']})")

# %%
# From a BDL surrogate, with its epistemic band
# ---------------------------------------------
train = propagate(fe, sample(inputs, args.n_train, rule="latin_hypercube", seed=2),
                  progress=False)
bdl = BDL(inference="laplace", prior="hierarchical-normal", hidden=(30, 15, 10),
          num_threads=1, seed=0).fit(train.inputs.values[train.ok], train.good_outputs())
surrogate = sobol_indices_surrogate(bdl, inputs, n=2 ** 14, seed=0, function_draws=50,
                                    bootstrap=0)

for k, name in enumerate(inputs.names):
    lo, hi = saltelli.first_ci[:, k, 0]
    print(f"{name:>3}  w(p1) first: FE {saltelli.first[k, 0]:.4f} [{lo:.4f}, {hi:.4f}], "
          f"PCE {pce.first[k, 0]:.4f}, BDL {surrogate.first[k, 0]:.4f}; total: FE "
          f"{saltelli.total[k, 0]:.4f}, PCE {pce.total[k, 0]:.4f}, "
          f"BDL {surrogate.total[k, 0]:.4f}")

# %%
# The three side by side
# ----------------------
# Bars: first-order indices of w(p1); whiskers: the pick-freeze bootstrap interval and the
# BDL's epistemic band. The thickness t and the width b drive the deflection; E matters a
# little, l and nu hardly at all.
fig, ax = plt.subplots(figsize=(7, 3.6))
x = np.arange(inputs.dim)
width = 0.27
ax.bar(x - width, saltelli.first[:, 0], width,
       label=f"FE pick-freeze ({saltelli.model_runs} runs)",
       yerr=np.abs(saltelli.first_ci[:, :, 0] - saltelli.first[:, 0]), capsize=3)
ax.bar(x, pce.first[:, 0], width, label=f"PCE ({pce.model_runs} runs)")
ax.bar(x + width, surrogate.first[:, 0], width, label=f"BDL ({args.n_train} runs)",
       yerr=np.abs(surrogate.first_band[:, :, 0] - surrogate.first[:, 0]), capsize=3)
ax.set_xticks(x, inputs.names)
ax.set_ylabel("first-order index of w(p1)")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
