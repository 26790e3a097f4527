"""FORM and the GP's active learning of the reliability study, timed and profiled in the
study's own process at a given worker count (issue 28: no analysis slower with 16 workers
than with 2; "A study on 16 cores" in ``docs/guide/performance.md``, whose 16-core figures
came from this script's draft, the same set-up, seeds and calls).

It runs the reduced study's set-up as ``bench_workers.py --reduced`` does (a warm pool, the FE
pilot of 5,000 runs and the truth of 20,000 on it, in a temporary output directory), then
each method through ``studies.reliability.study.run_method`` under cProfile, and prints its
wall time, its profile's total calls and its costliest entries by cumulative time;
``--profiles DIR`` also writes each whole profile to DIR. Run it once per worker count, each
in a fresh interpreter, after a run that filled numba's cache.

``--idle`` is the control instead: a pool of W workers started and idle, a pure-Python loop
timed in this process three times, then the workers' CPU seconds over 5 s of idling.

    python benchmarks/bench_study_process.py --workers 2 [--profiles DIR] [--top 20] [--idle]
                                             [--json PATH]
"""
import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import sys
import tempfile
import time

import numpy as np

#: The methods timed: both run in the study's process (FORM's batches are too small for the
#: pool; the GP trains and predicts here, its batches of 4 FE runs too).
METHODS = ("form", "active-gp")


def idle_control(workers, loops=3_000_000):
    """Seconds of a pure-Python loop here, three times, beside a started idle pool of
    ``workers``, then the pool's CPU seconds over 5 s of idling."""
    import psutil  # comes with the test extra (distributed)

    from uqkit.execution.executors import warm_pool

    for future in warm_pool(workers):
        future.result()
    time.sleep(3)
    loop_seconds = []
    for _ in range(3):
        t0, total = time.perf_counter(), 0.0
        for i in range(loops):
            total += i * 0.5
        loop_seconds.append(round(time.perf_counter() - t0, 3))
        print(f"{workers} workers idle: the loop took {loop_seconds[-1]:.3f} s here")
    children = psutil.Process().children(recursive=True)
    before = sum(sum(c.cpu_times()[:2]) for c in children)
    time.sleep(5)
    cpu = sum(sum(c.cpu_times()[:2]) for c in children) - before
    print(f"{workers} workers idle: {len(children)} child processes used {cpu:.3f} s of CPU "
          "in 5 s")
    return [{"workers": workers, "loop_seconds": loop_seconds,
             "idle_cpu_seconds_in_5_s": round(cpu, 3), "child_processes": len(children)}]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--profiles", metavar="DIR", help="write each method's profile here")
    ap.add_argument("--top", type=int, default=20, help="profile entries printed per method")
    ap.add_argument("--idle", action="store_true", help="the idle pool's control instead")
    ap.add_argument("--json", metavar="PATH", help="write the rows to PATH")
    args = ap.parse_args(argv)
    if args.idle:
        rows = idle_control(args.workers)
    else:
        out = tempfile.mkdtemp()
        try:
            rows = profile_methods(args, out)
        finally:
            shutil.rmtree(out, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return rows


def profile_methods(args, out):
    """The study's set-up in ``out``, then each of :data:`METHODS` timed and profiled: a row
    per method."""
    from studies.common import warm_fe_pool
    from studies.reliability import study as rs
    from studies.reliability.settings import ReliabilityStudy

    st = ReliabilityStudy(out=out, workers=args.workers, n_truth=20_000, n_pilot=5000,
                          n_sobol=256, max_iter=500, progress=False)
    warm_fe_pool(st)
    model = rs.fe_model(st.nx, st.ny)
    d = len(model.input_names)
    # the study's standard normal points (its seeds 1000 s + 11 and + 12, s = 0)
    pilot_u = np.random.default_rng(1000 * st.seed + 11).standard_normal((st.n_pilot, d))
    pilot = rs.fe_runs(st, "pilot", pilot_u, model, print)
    threshold, _ = rs.threshold_from_pilot(pilot.outputs[pilot.ok, 0], st.quantile)
    U = np.random.default_rng(1000 * st.seed + 12).standard_normal((st.n_truth, d))
    rs.fe_runs(st, "truth", U, model, print)
    g = rs.DeflectionLimit(threshold, st.nx, st.ny)
    settings = {"g": g.describe(), "seed": st.seed, "max_runs": st.max_runs,
                "n_truth": st.n_truth}
    rows = []
    for name in METHODS:
        profile = cProfile.Profile()
        t0 = time.perf_counter()
        profile.enable()
        rs.run_method(st, name, g, U, settings, lambda line: None)
        profile.disable()
        seconds = time.perf_counter() - t0
        text = io.StringIO()
        stats = pstats.Stats(profile, stream=text).sort_stats("cumulative")
        print(f"{args.workers} workers, {name}: {seconds:.2f} s, {stats.total_calls:,} calls")
        stats.print_stats(args.top)
        print(text.getvalue().split("\n\n", 2)[-1].rstrip())
        if args.profiles:
            os.makedirs(args.profiles, exist_ok=True)
            stats.dump_stats(os.path.join(args.profiles, f"{name}-{args.workers}.prof"))
        rows.append({"workers": args.workers, "method": name, "seconds": round(seconds, 3),
                     "calls": stats.total_calls})
    torch = "torch" in sys.modules
    print(f"{args.workers} workers: torch imported in the study's process: {torch}")
    return [dict(row, torch_imported=torch) for row in rows]


if __name__ == "__main__":
    main()
