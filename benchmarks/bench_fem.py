"""FE solver speed: median time per solve in fast mode (from the scaled reference start, the
default, and from the Ritz bulge: :mod:`fem.start`) and paper mode on one core, the Newton
iterations per fast solve, and batch throughput on every core with each start.

    python benchmarks/bench_fem.py [--json] [--repeats N] [--batch N]
"""
import argparse
import json
import time

import numpy as np

from fem import Membrane, solve_batch
from fem.batch import default_workers


def paper_inputs(n, seed=0):
    """n rows (l, b, t, E, nu) from the paper's Table 3."""
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.normal(2, 0.05, n), rng.normal(1, 0.05, n),
                            rng.uniform(0.001, 0.002, n), rng.normal(210, 10, n),
                            np.exp(rng.normal(np.log(0.3), 0.01, n))])


def median_seconds(fn, repeats):
    fn()  # compile / load the numba cache
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--batch", type=int, default=4000)
    args = ap.parse_args(argv)
    rows = paper_inputs(max(args.repeats, args.batch))
    it = iter(np.tile(rows, (4, 1)))
    fast = median_seconds(lambda: Membrane(*next(it)).solve(), args.repeats)
    fast_ritz = median_seconds(lambda: Membrane(*next(it)).solve(start="ritz"), args.repeats)
    paper = median_seconds(lambda: Membrane(*next(it)).solve(mode="paper"),
                           max(5, args.repeats // 20))
    out = {"fast_ms": fast * 1e3, "fast_ritz_ms": fast_ritz * 1e3, "paper_ms": paper * 1e3}
    for start, key in (("reference", ""), ("ritz", "_ritz")):
        solve_batch(rows[:8], start=start)
        t0 = time.perf_counter()
        res = solve_batch(rows[: args.batch], start=start)
        out[f"batch{key}_solves_per_s"] = args.batch / (time.perf_counter() - t0)
        out[f"newton_iterations{key}"] = float(res.newton_iterations.mean())
        out[f"batch{key}_converged"] = int(res.converged.sum())
    if args.json:
        print(json.dumps(out))
    else:
        print(f"fast mode : {out['fast_ms']:.2f} ms per solve (median, 1 core), "
              f"{out['newton_iterations']:.2f} Newton iterations; from the Ritz bulge "
              f"{out['fast_ritz_ms']:.2f} ms, {out['newton_iterations_ritz']:.2f}")
        print(f"paper mode: {out['paper_ms']:.1f} ms per solve (median, 1 core)")
        for key, name in (("", "reference"), ("_ritz", "Ritz")):
            print(f"batch     : {out[f'batch{key}_solves_per_s']:.0f} solves/s on "
                  f"{default_workers()} cores from the {name} start "
                  f"({out[f'batch{key}_converged']}/{args.batch} converged)")
    return out


if __name__ == "__main__":
    main()
