"""
Failure probability with active learning
========================================

How likely does the membrane's centre sag below a limit, and how few FE runs does it take to
know?

The limit state is g(x) = w(p1)(x) - limit: failure where the centre deflects further down
than ``--limit``. FORM linearises g at the most likely failure point (a few dozen runs, but
blind to curvature); SORM adds the curvatures there. Active learning fits a Gaussian process
to g and runs the FE model only where the surrogate cannot yet tell failure from safety (the
U learning function), until every candidate of a Monte Carlo population is classified with
confidence. Because the candidates are passed in, the FE model run on all of them gives the
exact answer for that population to check against.

Run it yourself: ``python examples/plot_active_learning.py [--limit -3.0] [--candidates 100000]``.
"""
import argparse

import matplotlib.pyplot as plt
import numpy as np

from uqkit import propagate
from uqkit.adapters import MembraneModel
from uqkit.inputs import u_to_x
from uqkit.presets import table3
from uqkit.reliability import failure_probability, plot_history

parser = argparse.ArgumentParser(description="Failure probability with active learning")
parser.add_argument("--limit", type=float, default=-3.0, help="sag limit of w(p1)")
parser.add_argument("--candidates", type=int, default=100_000,
                    help="Monte Carlo population of active learning, also run on the FE "
                         "model as the reference")
args = parser.parse_args()


class SagMargin:
    """g(x) = w(p1) - limit: negative (failure) where the centre sags below the limit."""

    input_names = ("l", "b", "t", "E", "nu")

    def __init__(self, limit):
        self.limit = limit
        self.fe = MembraneModel(probe_frame="relative", probes={"p1": (0.5, 0.5)})

    def __call__(self, X):
        w, status, reasons = self.fe(X)
        return w[:, 0] - self.limit, status, reasons

    def describe(self):
        """The model's identity, for stores and caches."""
        return {"model": "sag-margin", "limit": self.limit, "fe": self.fe.describe()}


inputs = table3()
g = SagMargin(args.limit)

# %%
# FORM and SORM
# -------------
form = failure_probability(g, inputs, method="form")
sorm = failure_probability(g, inputs, method="sorm", form_result=form)
print(f"FORM: Pf {form.pf:.4g}, beta {form.beta:.3f}, {form.model_runs} FE runs")
print(f"SORM: Pf {sorm.pf:.4g}, {sorm.model_runs} FE runs")

# %%
# Active learning on a Gaussian process
# -------------------------------------
U = np.random.default_rng(7).standard_normal((args.candidates, inputs.dim))
active = failure_probability(g, inputs, method="active", surrogate="gp", candidates=U, seed=0)
print(f"active learning (GP): Pf {active.pf:.4g} [{active.ci[0]:.4g}, {active.ci[1]:.4g}], "
      f"{active.model_runs} FE runs")

# %%
# The reference: every candidate through the FE model
# ---------------------------------------------------
truth = propagate(g, u_to_x(inputs, U), progress=False)
failed = truth.good_outputs()[:, 0] <= 0
print(f"FE on all {truth.ok.sum()} candidates: Pf {failed.mean():.4g} "
      f"({failed.sum()} failures)")

ax = plot_history(active, reference=failed.mean())
ax.axhline(form.pf, color="tab:red", ls=":", lw=1, label="FORM")
ax.legend(fontsize=8)
ax.set_title("active learning: Pf against FE runs")
plt.tight_layout()
plt.show()
