"""Accuracy and cost of the sensitivity and reliability methods on problems with known answers:
Ishigami Sobol' indices (exact closed forms), FORM on a hyperplane (exact), subset simulation
at Pf = Phi(-4.5) ~ 3.4e-6 in 10-D over seeds, and active learning with the GP on the
four-branch series system (Echard et al. 2011 reference Pf).

    python benchmarks/bench_uq.py [--json] [--seeds 20]
"""
import argparse
import json
import math
import time
import warnings

import numpy as np
from scipy import special

from uqkit.inputs import RandomInputs
from uqkit.reliability import failure_probability
from uqkit.sensitivity import sobol_indices

#: Echard, Gayton & Lemaire (2011), Monte Carlo with 1e6 runs.
FOUR_BRANCH_PF = {6.0: 4.416e-3, 7.0: 2.233e-3}


def ishigami(X, a=7.0, b=0.1):
    return np.sin(X[:, 0]) + a * np.sin(X[:, 1]) ** 2 + b * X[:, 2] ** 4 * np.sin(X[:, 0])


def ishigami_exact(a=7.0, b=0.1):
    pi = math.pi
    V = a ** 2 / 8 + b * pi ** 4 / 5 + b ** 2 * pi ** 8 / 18 + 0.5
    V1, V2, V13 = 0.5 * (1 + b * pi ** 4 / 5) ** 2, a ** 2 / 8, b ** 2 * pi ** 8 * (1 / 18 - 1 / 50)
    return np.array([V1, V2, 0.0]) / V, np.array([V1 + V13, V2, V13]) / V


def hyperplane(X, beta=4.5):
    return beta - X.sum(1) / math.sqrt(X.shape[1])


def four_branch(X, k=6.0):
    x1, x2 = X[:, 0], X[:, 1]
    return np.min([3 + 0.1 * (x1 - x2) ** 2 - (x1 + x2) / math.sqrt(2),
                   3 + 0.1 * (x1 - x2) ** 2 + (x1 + x2) / math.sqrt(2),
                   (x1 - x2) + k / math.sqrt(2), (x2 - x1) + k / math.sqrt(2)], axis=0)


def normals(d):
    return RandomInputs.from_spec({f"u{i}": "normal(0, 1)" for i in range(d)})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--seeds", type=int, default=20, help="seeds of the subset simulation")
    args = ap.parse_args(argv)
    out = {}

    inputs = RandomInputs.from_spec({f"x{i}": ("uniform", -math.pi, math.pi) for i in range(3)})
    first, total = ishigami_exact()
    t0 = time.perf_counter()
    res = sobol_indices(ishigami, inputs, n=2 ** 13, seed=0, executor="serial")
    out["ishigami"] = {"max_error_first": float(np.abs(res.first - first).max()),
                       "max_error_total": float(np.abs(res.total - total).max()),
                       "ci_cover": bool(np.all((res.first_ci[0] <= first)
                                               & (first <= res.first_ci[1]))
                                        and np.all((res.total_ci[0] <= total)
                                                   & (total <= res.total_ci[1]))),
                       "model_runs": res.model_runs, "seconds": time.perf_counter() - t0}

    exact = float(special.ndtr(-4.5))
    r = failure_probability(hyperplane, normals(10), method="form", executor="serial")
    out["form_hyperplane"] = {"pf_over_exact": r.pf / exact, "model_runs": r.model_runs}

    runs = [failure_probability(hyperplane, normals(10), method="subset", n=1500, seed=s,
                                executor="serial") for s in range(args.seeds)]
    pf = np.array([x.pf for x in runs])
    out["subset_beta_4_5_10d"] = {
        "seeds": args.seeds, "exact": exact, "mean_pf_over_exact": float(pf.mean() / exact),
        "estimated_cov_mean": float(np.mean([x.cov for x in runs])),
        "empirical_cov": float(pf.std(ddof=1) / pf.mean()),
        "ci_cover_share": float(np.mean([x.ci[0] <= exact <= x.ci[1] for x in runs])),
        "model_runs_mean": float(np.mean([x.model_runs for x in runs]))}

    for k in (6.0, 7.0):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = failure_probability(lambda X, k=k: four_branch(X, k), normals(2), method="active",
                                    surrogate="gp", n_candidates=1_000_000, executor="serial",
                                    seed=0)
        out[f"active_gp_four_branch_k{k:g}"] = {
            "pf": r.pf, "reference": FOUR_BRANCH_PF[k],
            "relative_error": r.pf / FOUR_BRANCH_PF[k] - 1, "model_runs": r.model_runs,
            "converged": bool(r.info["converged"]), "seconds": time.perf_counter() - t0}
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(key, json.dumps(value))
    return out


if __name__ == "__main__":
    main()
