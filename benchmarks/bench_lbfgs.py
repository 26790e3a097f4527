"""The batched L-BFGS's own cost per iteration (:func:`surrogates.laplace.lbfgs.minimize`),
and a Laplace fit it drives: the measurement behind "The L-BFGS loop's bookkeeping" in
``docs/guide/performance.md``.

``overhead_ms``: the seconds per iteration that ``minimize`` spends outside the objective
(its two-loop recursion, line search and bookkeeping), on K chained Rosenbrock problems of
838 variables (the parameters of the paper's 5-30-15-10-3 network), 300 iterations, best of
``--repeats``. The objective's own time is measured and left out. ``uq_fit_s``: the membrane
study's UQ fit (hierarchical prior, 1000 rows of the Table-3 inputs, 2000 iterations, one
thread) on a smooth synthetic target, best of ``--repeats``.

To compare two versions of the code, run this file from each one's tree in turn (for
example ``PYTHONPATH=OLD_TREE python benchmarks/bench_lbfgs.py``), interleaved.

    python benchmarks/bench_lbfgs.py [--repeats N] [--json]
"""
import argparse
import json
import time

import numpy as np
import torch

from surrogates.stacked import StackedMLP

#: Variables per problem: the parameters of the paper's network (5-30-15-10-3).
P = StackedMLP((5, 30, 15, 10, 3)).n_params


def overhead(K, repeats, iterations=300):
    """Seconds per iteration of ``minimize`` outside the objective, K problems at once."""
    from surrogates.laplace.lbfgs import minimize

    spent = [0.0]

    def rosenbrock(x, idx):
        t0 = time.perf_counter()
        head, tail = x[:, :-1], x[:, 1:]
        f = (100 * (tail - head ** 2) ** 2 + (1 - head) ** 2).sum(1)
        g = torch.zeros_like(x)
        g[:, :-1] = -400 * head * (tail - head ** 2) - 2 * (1 - head)
        g[:, 1:] += 200 * (tail - head ** 2)
        spent[0] += time.perf_counter() - t0
        return f, g

    best = float("inf")
    for _ in range(repeats):
        x0 = torch.linspace(-2, 2, K * P, dtype=torch.float64).reshape(K, P)
        spent[0] = 0.0
        t0 = time.perf_counter()
        res = minimize(rosenbrock, x0, max_iter=iterations, gtol=0.0, ftol=0.0, subsets=True)
        total = time.perf_counter() - t0
        best = min(best, (total - spent[0]) / int(res.iterations.max()))
    return best


def uq_fit(repeats):
    """Seconds of the membrane study's UQ fit (its default settings and hierarchical prior:
    :func:`studies.membrane.study.bdl_settings`) on a smooth synthetic target."""
    from studies.membrane import MembraneStudy, bdl_settings
    from surrogates import BDL, fit_many
    from uqkit import sample
    from uqkit.presets import table3

    study = MembraneStudy(out="unused", workers=1)
    n = study.n_uq_train
    X = sample(table3(), n, seed=1).values
    rng = np.random.default_rng(0)
    Y = np.stack([np.sin(X @ rng.normal(size=5)), np.cos(X @ rng.normal(size=5)),
                  (X ** 2) @ rng.normal(size=5)], 1)
    best = float("inf")
    for _ in range(repeats):
        model = BDL(prior=study.priors["hierarchical"], **bdl_settings(n, study, 99))
        t0 = time.perf_counter()
        fit_many([model], [(X, Y)])
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    row = {f"overhead_ms_k{K}": round(overhead(K, args.repeats) * 1e3, 3) for K in (1, 2, 10)}
    row["uq_fit_s"] = round(uq_fit(args.repeats), 2)
    print(json.dumps(row) if args.json else "\n".join(f"{k}: {v}" for k, v in row.items()))
    return row


if __name__ == "__main__":
    main()
