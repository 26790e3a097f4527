"""Which inputs drive the membrane's deflection (Sobol' indices), and how likely it is to sag
below a limit (FORM, then active learning on a GP surrogate).

    python examples/sensitivity_reliability.py [--n 1024] [--limit -3.0]
"""
import argparse

from uqkit.adapters import MembraneModel
from uqkit.presets import table3
from uqkit.reliability import failure_probability
from uqkit.sensitivity import sobol_indices


class SagMargin:
    """g(x) = w(p1) - limit: failure where the centre sags below the limit (length units)."""

    input_names = ("l", "b", "t", "E", "nu")

    def __init__(self, limit):
        self.limit = limit
        self.fe = MembraneModel(probe_frame="relative", probes={"p1": (0.5, 0.5)})

    def __call__(self, X):
        w, status, reasons = self.fe(X)
        return w[:, 0] - self.limit, status, reasons

    def describe(self):
        return {"model": "sag-margin", "limit": self.limit, "fe": self.fe.describe()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1024, help="Sobol' base samples (a power of 2)")
    ap.add_argument("--limit", type=float, default=-3.0, help="sag limit of w(p1)")
    ap.add_argument("--candidates", type=int, default=100_000)
    args = ap.parse_args(argv)

    inputs = table3()
    fe = MembraneModel(probe_frame="relative")
    s = sobol_indices(fe, inputs, n=args.n, seed=0, workers=2, bootstrap=100)
    for k, name in enumerate(s.names):
        print(f"{name:>3}: first {s.first[k, 0]:.3f}, total {s.total[k, 0]:.3f} (w(p1))")
    g = SagMargin(args.limit)
    form = failure_probability(g, inputs, method="form", workers=2)
    print(f"FORM: pf {form.pf:.3g}, beta {form.beta:.2f}, {form.model_runs} FE runs")
    active = failure_probability(g, inputs, method="active", surrogate="gp",
                                 n_candidates=args.candidates, workers=2, seed=0)
    print(f"active learning (GP): pf {active.pf:.3g} [{active.ci[0]:.3g}, {active.ci[1]:.3g}], "
          f"{active.model_runs} FE runs")
    return s, form, active


if __name__ == "__main__":
    main()
