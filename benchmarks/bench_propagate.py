"""Propagation overhead and FE throughput through ``uqkit.propagate``.

* overhead: wall time per sample of a trivial model over the local process pool (everything
  but the model: chunking, pickling, pool start-up, result assembly, the progress bar off);
* FE throughput: membrane solves per second through ``propagate`` on 2 workers, against the
  raw ``fem.solve_batch`` on 2 threads measured in the same run.

    python benchmarks/bench_propagate.py [--json] [--n-trivial N] [--n-fe N]
"""
import argparse
import json
import time

import numpy as np


class Trivial:
    def __call__(self, X):
        return X.sum(axis=1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--n-trivial", type=int, default=500_000)
    ap.add_argument("--n-fe", type=int, default=3000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)

    from fem import solve_batch
    from uqkit import propagate, sample
    from uqkit.adapters import MembraneModel
    from uqkit.presets import table3

    s = sample(table3(), args.n_trivial, seed=0)
    t0 = time.perf_counter()
    res = propagate(Trivial(), s, workers=args.workers, progress=False)
    overhead_us = (time.perf_counter() - t0) / args.n_trivial * 1e6
    assert res.n_failed == 0

    X = sample(table3(), args.n_fe, seed=1).values
    solve_batch(X[:8], workers=args.workers)  # load the numba cache
    t0 = time.perf_counter()
    raw = solve_batch(X, workers=args.workers)
    raw_rate = args.n_fe / (time.perf_counter() - t0)
    rates = []
    for _ in range(2):  # cold: a pool for this model starts and imports the solver; warm: reused
        t0 = time.perf_counter()
        prop = propagate(MembraneModel(), X, workers=args.workers, progress=False)
        rates.append(args.n_fe / (time.perf_counter() - t0))
        assert np.array_equal(prop.outputs, raw.w)
    prop_rate, warm_rate = rates
    out = {"overhead_us_per_sample": overhead_us, "fe_raw_solves_per_s": raw_rate,
           "fe_propagate_solves_per_s": prop_rate, "fe_efficiency": prop_rate / raw_rate,
           "fe_propagate_warm_solves_per_s": warm_rate, "fe_efficiency_warm": warm_rate / raw_rate}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"overhead, trivial model : {overhead_us:.2f} us per sample "
              f"({args.n_trivial} samples, {args.workers} workers, pool start-up included)")
        print(f"FE raw batch            : {raw_rate:.0f} solves/s ({args.workers} threads)")
        print(f"FE through propagate    : {prop_rate:.0f} solves/s ({args.workers} workers), "
              f"{100 * prop_rate / raw_rate:.0f}% of raw, fresh workers included; "
              f"{warm_rate:.0f} solves/s ({100 * warm_rate / raw_rate:.0f}%) with the pool warm")
    return out


if __name__ == "__main__":
    main()
