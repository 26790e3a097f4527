"""
The FE membrane on its own, and its mesh convergence
=====================================================

How far is the built-in solver's answer from the mesh-converged one, and is the membrane
still in the range where its material law holds?

The paper's membrane (example 3): a 2 x 1 rectangle of thickness 0.0015 and Young's modulus
210 (consistent units), clamped on its four edges, under a pressure of 100. The solver is a
geometrically nonlinear Q4 membrane (total Lagrangian, full Green-Lagrange strain, St.
Venant-Kirchhoff), solved by Newton-Raphson load stepping.

Run it yourself: ``python examples/plot_fe_convergence.py [--levels 4] [--nx 20 --ny 10]``.
"""
import argparse

import matplotlib.pyplot as plt
import numpy as np

from fem import STRAIN_LIMIT, Membrane, convergence, plot_deflection

parser = argparse.ArgumentParser(description="The FE membrane and its mesh convergence")
parser.add_argument("--levels", type=int, default=4, help="meshes, each refined by 2")
parser.add_argument("--nx", type=int, default=20, help="elements along l")
parser.add_argument("--ny", type=int, default=10, help="elements along b")
args = parser.parse_args()

# %%
# One solve
# ---------
# Probes given as fractions of the sides (``probe_frame="relative"``) name the same mesh
# nodes on every mesh of a refinement sequence. The default probes are the paper's three.
membrane = Membrane(l=2.0, b=1.0, t=0.0015, E=210.0, nu=0.3, nx=args.nx, ny=args.ny,
                    probe_frame="relative")
result = membrane.solve()
print(result.summary())
ax = plot_deflection(result)
ax.set_title("deflection w of the paper's membrane")

# %%
# Is the material law still valid?
# ---------------------------------
# St. Venant-Kirchhoff is a small-strain law. uqkit warns when the largest Green-Lagrange
# strain exceeds :data:`fem.membrane.STRAIN_LIMIT`; the paper's example is far beyond it,
# so it is a numerical benchmark, not a real membrane.
strain = result.max_strain()
print(f"largest Green-Lagrange strain {strain:.3g} (validity limit {STRAIN_LIMIT:g})")

# %%
# Mesh convergence
# ----------------
# :func:`fem.convergence` solves on meshes refined by 2, estimates the observed order of
# convergence from the three finest and extrapolates to zero element size (Richardson).
# Where the last two orders disagree the summary says the estimate is rough.
conv = convergence(membrane, levels=args.levels)
print(conv.summary())

fig, ax = plt.subplots(figsize=(5.5, 3.6))
h = np.array([1.0 / nx for nx, _ in conv.meshes])
for name, values in conv.values.items():
    line, = ax.plot(h, values, "o-", label=name)
    ax.axhline(conv.extrapolated[name], color=line.get_color(), ls=":", lw=1)
ax.set_xscale("log")
ax.set_xlabel("element size / l")
ax.set_ylabel("w at the probe")
ax.set_title("w against element size; dotted: Richardson limit")
ax.legend()
fig.tight_layout()
for name in conv.values:
    print(f"{name}: mesh {args.nx} x {args.ny} is {100 * conv.relative_error(name):.2f}% "
          f"from the limit {conv.extrapolated[name]:.4f}")
plt.show()
