"""How often the pick-freeze (Saltelli / Jansen) bootstrap intervals of ``sobol_indices``
cover the exact indices: the share of ``--seeds`` seeds whose 95% interval holds the exact
index, per index, for two test functions with known indices on U(0, 1) inputs:

* Ishigami (a = 7, b = 0.1, on U(-pi, pi)^3), smooth;
* Sobol's g-function, a = (0, 1, 4.5, 9, 99) on U(0, 1)^5, with a kink at 1/2 in every input
  and two small indices (total 0.0105 and 0.0001 for the last two inputs).

For each base-sample size n (``--n``, powers of two) and each kind of interval (``--replicates``:
0 for the bootstrap, R for R replicate designs) it prints the lowest coverage over the indices
(first and total), which index has it, and the indices' root-mean-square error over the seeds
relative to the bootstrap's (replicate designs of n / R rows estimate less accurately).

    python benchmarks/bench_sobol_coverage.py [--json] [--seeds 100] [--n 128,256,512,1024]
        [--replicates 0,8]
"""
import argparse
import json
import warnings

import numpy as np


def ishigami():
    """(model, input specs, exact first, exact total) of Ishigami's function."""
    a, b = 7.0, 0.1
    v = a ** 2 / 8 + b * np.pi ** 4 / 5 + b ** 2 * np.pi ** 8 / 18 + 0.5
    v1 = 0.5 * (1 + b * np.pi ** 4 / 5) ** 2
    v2 = a ** 2 / 8
    v13 = b ** 2 * np.pi ** 8 * (1 / 18 - 1 / 50)
    first = np.array([v1, v2, 0.0]) / v
    total = np.array([v1 + v13, v2, v13]) / v

    def model(X):
        return (np.sin(X[:, 0]) + a * np.sin(X[:, 1]) ** 2
                + b * X[:, 2] ** 4 * np.sin(X[:, 0]))
    specs = {f"x{i + 1}": f"uniform({-np.pi}, {np.pi})" for i in range(3)}
    return model, specs, first, total


def g_function(a=(0.0, 1.0, 4.5, 9.0, 99.0)):
    """(model, input specs, exact first, exact total) of Sobol's g-function."""
    a = np.asarray(a)
    vi = 1 / (3 * (1 + a) ** 2)
    v = np.prod(1 + vi) - 1
    first = vi / v
    total = np.array([vi[i] * np.prod(np.delete(1 + vi, i)) for i in range(len(a))]) / v

    def model(X):
        return np.prod((np.abs(4 * X - 2) + a) / (1 + a), axis=1)
    specs = {f"g{i}": "uniform(0, 1)" for i in range(len(a))}
    return model, specs, first, total


def coverage(problem, n, seeds, replicates=0):
    """(first, total) coverage per index over ``seeds`` seeds at base size n, and the
    root-mean-square errors (first, total) per index; ``replicates``: 0 for bootstrap
    intervals (200 resamples), else R replicate designs."""
    from uqkit.inputs import RandomInputs
    from uqkit.sensitivity import sobol_indices

    model, specs, first, total = problem()
    inputs = RandomInputs.from_spec(specs)
    hits_f, hits_t = np.zeros(len(first)), np.zeros(len(total))
    sq_f, sq_t = np.zeros(len(first)), np.zeros(len(total))
    kind = {"replicates": replicates} if replicates else {"bootstrap": 200}
    for seed in range(seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = sobol_indices(model, inputs, n=n, seed=seed, executor="serial", **kind)
        hits_f += (r.first_ci[0] <= first) & (first <= r.first_ci[1])
        hits_t += (r.total_ci[0] <= total) & (total <= r.total_ci[1])
        sq_f += (r.first - first) ** 2
        sq_t += (r.total - total) ** 2
    return hits_f / seeds, hits_t / seeds, np.sqrt(sq_f / seeds), np.sqrt(sq_t / seeds)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--n", default="128,256,512,1024")
    ap.add_argument("--replicates", default="0,8",
                    help="kinds of interval: 0 for the bootstrap, R for R replicate designs")
    args = ap.parse_args(argv)
    rows = []
    for name, problem in (("ishigami", ishigami), ("g-function", g_function)):
        for n in map(int, args.n.split(",")):
            rmse0 = None
            for replicates in map(int, args.replicates.split(",")):
                cov_f, cov_t, err_f, err_t = coverage(problem, n, args.seeds, replicates)
                both, err = np.concatenate([cov_f, cov_t]), np.concatenate([err_f, err_t])
                rmse0 = err if rmse0 is None else rmse0
                worst = int(np.argmin(both))
                kind, index = ("first", worst) if worst < len(cov_f) else (
                    "total", worst - len(cov_f))
                rows.append({"function": name, "n": n, "seeds": args.seeds,
                             "replicates": replicates, "lowest": float(both.min()),
                             "lowest_index": f"{kind} {index}", "first": cov_f.tolist(),
                             "total": cov_t.tolist(), "rmse": err.tolist(),
                             "rmse_ratio": (err / rmse0).tolist()})
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    for r in rows:
        kind = f"R={r['replicates']:2d}" if r["replicates"] else "boot"
        ratio = np.asarray(r["rmse_ratio"])
        print(f"{r['function']:10s} n={r['n']:5d} {kind}: lowest coverage {r['lowest']:.2f} "
              f"({r['lowest_index']}); first {np.round(r['first'], 2).tolist()}, "
              f"total {np.round(r['total'], 2).tolist()}; rmse / bootstrap's "
              f"{ratio.min():.2f}-{ratio.max():.2f}")


if __name__ == "__main__":
    main()
