"""
An OpenSeesPy model, one run at a time
======================================

How do you put an FE model written in Python for one design point under uqkit, and can you
trust what comes back?

A slender steel strip bent far beyond linear theory by a tip load: OpenSees (through
OpenSeesPy) solves it with 20 corotational beam elements and Newton-Raphson load steps. The
uncertain inputs are the modulus E, the load P and the depth h. We check the model against
the exact elastica, then ask for the tip deflection's distribution and its Sobol' indices.
Units: N, m, Pa.

The function builds and solves the model for one set of inputs, as OpenSees scripts do;
:class:`uqkit.PerRunModel` runs it row by row on every core. In a study store each finished
run's answer is kept at once, so a study stopped mid-way (Ctrl-C, a killed job) makes only
the runs that had not finished when it is run again.

Needs OpenSeesPy (``pip install openseespy``).

Run it yourself: ``python examples/plot_opensees_cantilever.py [--n 1000] [--sobol-n 256]
[--workers 2] [--out DIR]``.
"""
import argparse
import importlib.util
import pathlib
import sys

import matplotlib.pyplot as plt
import numpy as np
from scipy.integrate import solve_bvp

from uqkit import PerRunModel, propagate, sample
from uqkit.inputs import RandomInputs
from uqkit.sensitivity import sobol_indices
from uqkit.statistics import describe

parser = argparse.ArgumentParser(description="An OpenSeesPy model, one run at a time")
parser.add_argument("--n", type=int, default=1000, help="Monte Carlo runs")
parser.add_argument("--sobol-n", type=int, default=256,
                    help="Sobol' base sample, a power of 2: 5 n runs")
parser.add_argument("--workers", type=int, default=None, help="processes (default: every core)")
parser.add_argument("--out", default="results/opensees", help="stores of the runs")
args = parser.parse_args()
if importlib.util.find_spec("openseespy") is None:
    sys.exit("this example needs OpenSeesPy: pip install openseespy")
out = pathlib.Path(args.out)

# %%
# The model: one run of OpenSees
# ------------------------------
# A cantilever of length L along x, clamped at node 1, with a downward load P at its tip,
# applied in 10 load steps. The corotational transformation takes the elements' large
# rotations into account. The function returns the tip's deflection (downwards) and its
# horizontal displacement (the strip's shortening).

L, B = 1.0, 0.02  # length and width of the strip (m)


def cantilever(E, P, h, elements=20, steps=10):
    """Tip deflection and horizontal displacement (m) of the strip under a tip load P (N), for
    a modulus E (Pa) and a depth h (m)."""
    import openseespy.opensees as ops  # in the worker that runs it

    ops.wipe()
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    for i in range(elements + 1):
        ops.node(i + 1, i * L / elements, 0.0)
    ops.fix(1, 1, 1, 1)
    ops.geomTransf("Corotational", 1)
    for i in range(elements):
        ops.element("elasticBeamColumn", i + 1, i + 1, i + 2, B * h, E, B * h ** 3 / 12, 1)
    ops.timeSeries("Linear", 1)
    ops.pattern("Plain", 1, 1)
    ops.load(elements + 1, 0.0, -P, 0.0)
    ops.system("BandGeneral")
    ops.numberer("RCM")
    ops.constraints("Plain")
    ops.test("NormDispIncr", 1e-12, 50)
    ops.algorithm("Newton")
    ops.integrator("LoadControl", 1.0 / steps)
    ops.analysis("Static")
    if ops.analyze(steps) != 0:
        raise RuntimeError(f"Newton-Raphson did not converge (E={E}, P={P}, h={h})")
    tip = elements + 1
    return -ops.nodeDisp(tip, 2), ops.nodeDisp(tip, 1)


# %%
# The truth it must converge to: the elastica
# -------------------------------------------
# An inextensible strip under a tip load bends along the elastica: with s the arc length and
# theta the slope, EI theta'' = -P cos(theta), theta(0) = 0 and theta'(L) = 0. Solved
# here with SciPy's boundary value solver, independently of OpenSees. Its answer depends only
# on k = P L^2 / (E I).


def elastica(k):
    """Tip deflection / L and horizontal displacement / L of the elastica, k = P L^2 / EI."""
    s = np.linspace(0.0, 1.0, 201)

    def slope(s, y):  # y: theta (the slope, downwards), theta', x / L, v / L (downwards)
        return np.vstack([y[1], -k * np.cos(y[0]), np.cos(y[0]), np.sin(y[0])])

    def ends(y0, y1):
        return np.array([y0[0], y1[1], y0[2], y0[3]])

    guess = np.zeros((4, s.size))
    guess[2] = s
    solution = solve_bvp(slope, ends, s, guess, tol=1e-10, max_nodes=100_000)
    assert solution.success, solution.message
    theta, _, x, v = solution.sol(1.0)
    return v, x - 1.0


E0, P0, H0 = 2.1e11, 80.0, 0.005
k0 = P0 * L ** 2 / (E0 * B * H0 ** 3 / 12)
exact = np.array(elastica(k0)) * L
print(f"at the mean inputs, k = P L^2 / EI = {k0:.3f}: elastica deflection {exact[0]:.6f} m, "
      f"shortening {-exact[1]:.6f} m; linear theory's deflection {k0 / 3 * L:.6f} m")
print("elements  deflection  its error  shortening  its error")
errors = []
for elements in (5, 10, 20, 40):
    v, u = cantilever(E0, P0, H0, elements=elements)
    errors.append(abs(v / exact[0] - 1))
    print(f"{elements:8d}  {v:10.6f}  {v / exact[0] - 1:9.2e}  {-u:10.6f}  "
          f"{u / exact[1] - 1:9.2e}")
print(f"error ratio per halving of the elements: "
      + ", ".join(f"{a / b:.2f}" for a, b in zip(errors, errors[1:]))
      + " (4 for second order)")

# %%
# Monte Carlo on every core, resumably
# ------------------------------------
# ``keywords=True`` calls ``cantilever(E=..., P=..., h=...)``; ``input_names`` says which
# column is which. The store keeps the runs: the same command again loads them.

inputs = RandomInputs.from_spec({"E": "lognormal(mean=2.1e11, std=1.05e10)",
                                 "P": "lognormal(mean=80, std=8)",
                                 "h": "normal(0.005, 0.0001)"})
model = PerRunModel(cantilever, input_names=["E", "P", "h"], output_names=["v_tip", "u_tip"],
                    keywords=True)
samples = sample(inputs, args.n, seed=1)
result = propagate(model, samples, workers=args.workers, store=out / "mc", progress=False)
print(result.summary())
again = propagate(model, samples, workers=args.workers, store=out / "mc", progress=False)
print(f"the same study again: {again.computed} runs computed, {again.loaded} loaded")

v_tip = result.good_outputs()[:, 0]
stats = describe(v_tip)
print(f"tip deflection: mean {stats['mean']:.4f} m +- {stats['mean_se']:.1e}, "
      f"std {stats['std']:.4f} m")
X = samples.values
k = X[:, 1] * L ** 2 / (X[:, 0] * B * X[:, 2] ** 3 / 12)
linear = k * L / 3
print(f"linear theory would say mean {linear.mean():.4f} m, std {linear.std(ddof=1):.4f} m")

# %%
# Run by run against the elastica: 20 runs spread over the sample, each with its own k.

check = np.linspace(0, len(X) - 1, 20).astype(int)
check = check[result.ok[check]]
truth = np.array([elastica(k[i])[0] * L for i in check])
worst = np.max(np.abs(result.outputs[check, 0] / truth - 1))
print(f"run by run, OpenSees / elastica - 1: at most {worst:.1e} over {len(check)} runs")

# %%
# Which input drives the deflection?
# ----------------------------------
# Saltelli's scheme: ``5 n`` more runs of the same model, in a store of their own.

indices = sobol_indices(model, inputs, n=args.sobol_n, bootstrap=100, seed=2,
                        workers=args.workers, store=out / "sobol", progress=False)
first, total = indices.first[:, 0], indices.total[:, 0]

# %%
# A check: the deflection depends on the inputs only through k, that is through
# log k = log P - log E - 3 log h + const, a sum of independent terms. Were it linear in
# log k, each input's first and total index would be its term's share of var(log k); it is
# nearly so over the inputs' range.

log_variance = {"E": np.log(1 + 0.05 ** 2), "P": np.log(1 + 0.1 ** 2),
                "h": 9 * (0.0001 / 0.005) ** 2}
share = {name: v / sum(log_variance.values()) for name, v in log_variance.items()}
for name, f, t in zip(indices.names, first, total):
    print(f"Sobol' index of {name}: first {f:.3f}, total {t:.3f}; its share of var(log k) "
          f"{share[name]:.3f}")

# %%
# The figure
# ----------

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.hist(v_tip, bins=40, density=True, alpha=0.7, label="OpenSees, corotational")
left.hist(linear, bins=40, density=True, alpha=0.5, label="linear beam theory")
left.set_xlabel("tip deflection (m)")
left.set_ylabel("density")
left.legend()
left.set_title(f"{len(v_tip)} runs")
where = np.arange(len(indices.names))
right.bar(where - 0.2, first, 0.4, label="first order")
right.bar(where + 0.2, total, 0.4, label="total")
right.set_xticks(where, indices.names)
right.set_ylabel("Sobol' index of the tip deflection")
right.legend()
fig.tight_layout()
plt.show()
