"""FORM's two searches, SQP (the default) and the improved HL-RF, on limit states of known
design point: model runs to convergence and the reliability index each finds.

Problems (u standard normal; beta exact where a closed form or a root gives it):

* ``plane_10d``: 3 - sum(u) / sqrt(10), beta 3;
* ``parabola_mild`` / ``parabola_steep``: 3 - u2 + c (u1 - 0.5)^2 with c = 0.5 / 2 (curvature
  about 1 and 4 at beta about 3), beta from the stationarity cubic;
* ``cubic_x``: x1^3 + x2^3 - 18, x = 10 + 5 u (Rackwitz's example), beta = sqrt(2) (10 -
  9^(1/3)) / 5;
* ``cubic_u``: 2 - u2 - 0.1 u1^2 + 0.06 u1^3 (Der Kiureghian's), beta 2;
* ``exponential``: exp(0.2 u1 + 1.4) - u2;
* ``saddle_5d``: 4 - u1 + 0.2 (u2^2 - u3^2) + 0.1 u4 u5, beta 4;
* ``valley``: 10 - (1 - u1)^2 - 5 (u2 - u1^2)^2, a curved valley;
* ``membrane``: the reliability study's limit state w(p1) + 3.26 on the FE model (Table 3's
  inputs), where HL-RF took 251 runs.

Both searches use FORM's defaults (tol 1e-4, central differences, step 1e-4); a search that
does not converge in max_iter = 100 is reported as such with its runs.

    python benchmarks/bench_form.py [--json] [--no-membrane]
"""
import argparse
import json
import math

import numpy as np

from uqkit.reliability import ConvergenceError
from uqkit.reliability.form import ALGORITHMS, form
from uqkit.reliability.problems import standard_normals


def _parabola_beta(c):
    """|u*| on u2 = 3 + c a^2 (a = u1 - 0.5): d|u|^2/da = 0 gives
    2 c^2 a^3 + (1 + 6 c) a + 0.5 = 0."""
    roots = np.roots([2 * c * c, 0, 1 + 6 * c, 0.5])
    a = float(roots[np.abs(roots.imag) < 1e-12].real[0])
    return math.hypot(a + 0.5, 3 + c * a * a)


PROBLEMS = {
    "plane_10d": (10, lambda U: 3 - U.sum(1) / math.sqrt(10), 3.0),
    "parabola_mild": (2, lambda U: 3 - U[:, 1] + 0.5 * (U[:, 0] - 0.5) ** 2, _parabola_beta(0.5)),
    "parabola_steep": (2, lambda U: 3 - U[:, 1] + 2 * (U[:, 0] - 0.5) ** 2, _parabola_beta(2.0)),
    "cubic_x": (2, lambda U: (10 + 5 * U[:, 0]) ** 3 + (10 + 5 * U[:, 1]) ** 3 - 18,
                math.sqrt(2) * (10 - 9 ** (1 / 3)) / 5),
    "cubic_u": (2, lambda U: 2 - U[:, 1] - 0.1 * U[:, 0] ** 2 + 0.06 * U[:, 0] ** 3, 2.0),
    "exponential": (2, lambda U: np.exp(0.2 * U[:, 0] + 1.4) - U[:, 1], None),
    "saddle_5d": (5, lambda U: 4 - U[:, 0] + 0.2 * (U[:, 1] ** 2 - U[:, 2] ** 2)
                  + 0.1 * U[:, 3] * U[:, 4], 4.0),
    "valley": (2, lambda U: 10 - (1 - U[:, 0]) ** 2 - 5 * (U[:, 1] - U[:, 0] ** 2) ** 2, None),
}


class _Counted:
    """g of u with a run counter, as FORM's limit state."""

    def __init__(self, g, inputs):
        self.g, self.inputs, self.runs = g, inputs, 0

    def __call__(self, U, tag=None):
        self.runs += len(U)
        return self.g(np.atleast_2d(U))


def _membrane():
    from studies.reliability.study import DeflectionLimit
    from uqkit.inputs.transforms import u_to_x
    from uqkit.presets import table3

    inputs, model = table3(), DeflectionLimit(-3.26)
    return len(inputs.names), lambda U: model(u_to_x(inputs, U))[0], None  # (g, status, ...)


def measure(dim, g, exact):
    out = {}
    for algorithm in ALGORITHMS:
        ls = _Counted(g, standard_normals(dim))
        try:
            r = form(ls, algorithm=algorithm)
            out[algorithm] = {"runs": ls.runs, "beta": r["beta"],
                              "iterations": r["info"]["iterations"]}
            if exact is not None:
                out[algorithm]["beta_error"] = r["beta"] - exact
        except ConvergenceError:
            out[algorithm] = {"runs": ls.runs, "beta": None, "converged": False}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-membrane", action="store_true")
    args = ap.parse_args(argv)
    problems = dict(PROBLEMS)
    if not args.no_membrane:
        problems["membrane"] = _membrane()
    out = {name: measure(*spec) for name, spec in problems.items()}
    if args.json:
        print(json.dumps(out))
        return out
    print(f"{'problem':>15}  {'SQP runs':>8}  {'HL-RF runs':>10}  {'SQP beta':>12}  "
          f"{'HL-RF beta':>12}")
    for name, res in out.items():
        def beta(r):
            return "no conv." if r["beta"] is None else f"{r['beta']:.6f}"

        print(f"{name:>15}  {res['sqp']['runs']:>8}  {res['hlrf']['runs']:>10}  "
              f"{beta(res['sqp']):>12}  {beta(res['hlrf']):>12}")
    return out


if __name__ == "__main__":
    main()
