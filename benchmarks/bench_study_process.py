"""FORM and the GP's active learning of the reliability study, timed and profiled in the
study's own process at a given worker count: the measurement behind "A study on 16 cores"
in ``docs/guide/performance.md`` (issue 28: no analysis slower with 16 workers than with 2).

It runs the reduced study's set-up as ``bench_workers.py --reduced`` does (a warm pool, the FE
pilot of 5,000 runs and the truth of 20,000 on it, in a fresh output directory), then each
method through ``studies.reliability.study.run_method`` under cProfile, and prints its wall
time, its profile's total calls and its costliest entries by cumulative time; ``--profiles
DIR`` also writes each whole profile to DIR. Run it once per worker count, each in a fresh
interpreter, after a run that filled numba's cache.

    python benchmarks/bench_study_process.py --workers 2 [--profiles DIR] [--top 20]
"""
import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time

#: The methods timed: both run in the study's process (FORM's batches are too small for the
#: pool; the GP trains and predicts here, its batches of 4 FE runs too).
METHODS = ("form", "active-gp")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--profiles", metavar="DIR", help="write each method's profile here")
    ap.add_argument("--top", type=int, default=20, help="profile entries printed per method")
    args = ap.parse_args(argv)
    from studies.common import warm_fe_pool
    from studies.reliability import study as rs
    from studies.reliability.settings import ReliabilityStudy

    st = ReliabilityStudy(out=tempfile.mkdtemp(), workers=args.workers, n_truth=20_000,
                          n_pilot=5000, n_sobol=256, max_iter=500, progress=False)
    warm_fe_pool(st)
    model = rs.fe_model(st.nx, st.ny)
    d = len(model.input_names)
    pilot = rs.fe_runs(st, "pilot", rs._normal_points(st.n_pilot, d, 11), model, print)
    threshold, _ = rs.threshold_from_pilot(pilot.outputs[pilot.ok, 0], st.quantile)
    U = rs._normal_points(st.n_truth, d, 12)
    rs.fe_runs(st, "truth", U, model, print)
    g = rs.DeflectionLimit(threshold, st.nx, st.ny)
    settings = {"g": g.describe(), "seed": st.seed, "max_runs": st.max_runs,
                "n_truth": st.n_truth}
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
    print(f"{args.workers} workers: torch imported in the study's process: "
          f"{'torch' in sys.modules}")


if __name__ == "__main__":
    main()
