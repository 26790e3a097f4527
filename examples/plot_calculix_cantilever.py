"""
An external CalculiX model
==========================

How do you put a third-party FE program under uqkit, and can you trust what comes back?

A CalculiX cantilever (40 beam elements) with an uncertain modulus E, load P and section
depth h: the tip deflection's distribution by Monte Carlo, its Sobol' indices, and the
deterministic answer at the mean inputs against beam theory. Units: N, mm, MPa.

The deck ``examples/calculix/cantilever.inp`` is a Jinja2 template: uqkit renders it into one
directory per run (loops write the nodes and elements), runs ``ccx -i cantilever`` there and
reads the tip displacement from ``cantilever.dat`` with a regular expression. A run that
fails, times out or writes no number is recorded as failed with its reason, and a rerun of
the same command computes only what is missing.

Needs CalculiX's solver ``ccx`` (Debian/Ubuntu: ``apt-get install calculix-ccx``).

Run it yourself: ``python examples/plot_calculix_cantilever.py [--n 1000] [--sobol-n 256]
[--workers 2] [--out DIR]``.
"""
import argparse
import pathlib
import shutil
import sys

import matplotlib.pyplot as plt
import numpy as np

from uqkit import propagate, sample
from uqkit.external import ExternalModel, Regex
from uqkit.inputs import RandomInputs
from uqkit.sensitivity import sobol_indices
from uqkit.statistics import describe

parser = argparse.ArgumentParser(description="An external CalculiX model")
parser.add_argument("--n", type=int, default=1000, help="Monte Carlo runs")
parser.add_argument("--sobol-n", type=int, default=256,
                    help="Sobol' base sample, a power of 2: 5 n runs")
parser.add_argument("--workers", type=int, default=None, help="processes (default: every core)")
parser.add_argument("--out", default="results/calculix", help="stores of the runs")
args = parser.parse_args()
if shutil.which("ccx") is None:
    sys.exit("this example needs CalculiX's ccx: apt-get install calculix-ccx")
out = pathlib.Path(args.out)

# %%
# The model: a deck template, a command and an output parser
# -----------------------------------------------------------
# The model is an :class:`uqkit.external.ExternalModel`: the deck, the command that runs
# it, and how to read each output from the run directory.

DECK = pathlib.Path(sys.argv[0]).resolve().parent / "calculix" / "cantilever.inp"  # next to this script
#: Fixed geometry and material (mm, -) and the number of beam elements.
CONSTANTS = {"L": 1000.0, "b": 20.0, "nu": 0.3, "n": 40}
#: The tip's displacement along y in CalculiX's NODE PRINT table: node, vx, vy, vz.
TIP_V = Regex(r"^\s*\d+\s+\S+\s+(\S+)\s+\S+\s*$", file="cantilever.dat")


def inputs():
    """E (MPa), P (N) and h (mm): lognormal modulus and load, normal depth."""
    return RandomInputs.from_spec({"E": "lognormal(mean=210000, std=10500)",
                                   "P": "lognormal(mean=1000, std=100)",
                                   "h": "normal(40, 1)"})


def cantilever(**settings):
    """The CalculiX cantilever as a uqkit model: its output is the tip deflection (mm,
    downward positive)."""
    return ExternalModel(DECK, ["ccx", "-i", "cantilever"], outputs={"v_tip": TIP_V},
                         input_names=["E", "P", "h"], constants=CONSTANTS, timeout=60,
                         **settings)


def beam_theory(E, P, h, L=CONSTANTS["L"], b=CONSTANTS["b"], nu=CONSTANTS["nu"]):
    """Tip deflection (mm) of a cantilever by Euler-Bernoulli, P L^3 / (3 E I), and with
    Timoshenko's shear term P L / (kappa G A), kappa = 5/6 (a rectangle)."""
    bending = P * L ** 3 / (3 * E * b * h ** 3 / 12)
    shear = P * L / (5 / 6 * E / (2 * (1 + nu)) * b * h)
    return bending, bending + shear


rv = inputs()

# %%
# One run at the mean inputs, against beam theory
# -----------------------------------------------
# Timoshenko's shear term matters for this depth-to-length ratio; the rest of the difference
# is the mesh's, as the refined meshes show.
mean = {"E": 210000.0, "P": 1000.0, "h": 40.0}
v, status, reason = cantilever()(np.array([[mean["E"], mean["P"], mean["h"]]]))
if status[0] != 0:
    sys.exit(f"CalculiX failed at the mean inputs: {reason[0]}")
fe = -float(v[0, 0])
euler, timoshenko = beam_theory(**mean)
print(f"tip deflection at the mean inputs: CalculiX {fe:.5f} mm; beam theory "
      f"{timoshenko:.5f} mm with shear ({100 * (fe / timoshenko - 1):+.2f}%), "
      f"{euler:.5f} mm without ({100 * (fe / euler - 1):+.2f}%)")
refined = {}
for n in (20, 80, 160):  # the mesh's part of the difference
    mesh = ExternalModel(DECK, ["ccx", "-i", "cantilever"], outputs={"v_tip": TIP_V},
                         input_names=["E", "P", "h"], constants={**CONSTANTS, "n": n})
    refined[n] = -float(mesh(np.array([[mean["E"], mean["P"], mean["h"]]]))[0][0, 0])
refined[CONSTANTS["n"]] = fe
print("the same on other meshes: " + ", ".join(
    f"{n} elements {w:.5f} mm" for n, w in sorted(refined.items())))

# %%
# Monte Carlo, resumable
# ----------------------
# Each run has its own directory; finished chunks are stored in ``--out``, so rerunning the
# command computes only what is missing.
model = cantilever()
res = propagate(model, sample(rv, args.n, seed=1), workers=args.workers,
                store=out / "mc", progress=False)
print(res.summary())
deflection = -res.good_outputs()[:, 0]
stats = describe(deflection)
print(f"tip deflection over {len(deflection)} runs: mean {stats['mean']:.4f} "
      f"+- {stats['mean_se']:.4f} mm, std {stats['std']:.4f} mm, 99% quantile "
      f"{stats['quantiles']['0.99']:.3f} mm")
_, theory = beam_theory(*res.inputs.values[res.ok].T)
ratio = deflection / theory
print(f"run by run, CalculiX / beam theory with shear: {ratio.min():.5f} to "
      f"{ratio.max():.5f}")

# %%
# Sobol' indices, and beam theory's formula as a check
# ----------------------------------------------------
s = sobol_indices(model, rv, n=args.sobol_n, seed=0, bootstrap=100, workers=args.workers,
                  store=out / "sobol")
ref = sobol_indices(lambda X: beam_theory(*X.T)[1], rv, n=2 ** 16, seed=0, bootstrap=0,
                    executor="serial")
for k, name in enumerate(s.names):
    lo, hi = s.first_ci[:, k]
    print(f"Sobol' {name}: first {s.first[k]:.3f} [{lo:.3f}, {hi:.3f}], total "
          f"{s.total[k]:.3f}; beam theory's formula: first {ref.first[k]:.3f}, total "
          f"{ref.total[k]:.3f}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.4))
ax1.hist(deflection, bins=40, density=True, color="tab:blue", alpha=0.8)
ax1.set_xlabel("tip deflection (mm)")
ax1.set_ylabel("density")
ax1.set_title(f"CalculiX, {len(deflection)} runs")
s.plot(axes=ax2)
fig.tight_layout()
plt.show()
