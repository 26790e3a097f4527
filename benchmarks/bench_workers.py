"""A study's wall time and phases at several worker counts: the measurement behind the
"A study on 16 cores" tables of ``docs/guide/performance.md`` (issue 28).

For each study and worker count, one after the other, in a fresh interpreter and a fresh
output directory, after one small run that fills numba's cache: ``uqkit study NAME --out DIR
--workers W --no-progress``. Each row gives the wall time, the seconds of every phase the
study logs (a line ``phase: ... X s``; the last figure of the line), the membrane report's
parallelism, the CPU seconds of each pool task it saved (``tasks_cpu_s``) and, across
worker counts, whether the reports agree number for number (every entry but timings, paths
and worker counts).

``--reduced`` runs the reliability study at 20,000 truth runs, 5,000 pilot runs, 256 FE
Sobol' base samples and 500 L-BFGS iterations (about 65 s on 2 cores instead of about two
minutes). On a machine with fewer cores than workers the pool is oversubscribed: the figures
then show overheads, not that many cores.

    python benchmarks/bench_workers.py [--studies membrane reliability] [--workers 2 16]
                                       [--reduced] [--json PATH]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

#: A logged phase: ``name: ... 12.3 s`` (the name has no colon; the last figure counts).
PHASE = re.compile(r"^(?P<name>[^:]+): .*?(?P<seconds>\d+(?:\.\d+)?) s$")
#: Report entries that differ between worker counts by design: these names, and every name
#: that ends in one of VOLATILE_ENDINGS.
VOLATILE = ("workers", "out", "code", "parallelism", "timings", "figures", "progress")
VOLATILE_ENDINGS = ("seconds", "_s", "seconds_per_run")
#: The reliability study's reduced size (--reduced).
REDUCED = ["--n-truth", "20000", "--n-pilot", "5000", "--n-sobol", "256", "--max-iter", "500"]
#: A run that fills numba's cache (and loads every module once) before the timed runs.
WARM_UP = ["study", "reliability", "--n-truth", "10000", "--n-pilot", "5000", "--n-sobol",
           "16", "--n-sobol-train", "16", "--max-iter", "10", "--max-runs", "20"]


def phases(lines):
    """{phase: seconds} of a study's log lines (the first line of each name)."""
    out = {}
    for line in lines:
        m = PHASE.match(line.strip())
        if m and m["name"] not in out:
            out[m["name"]] = float(m["seconds"])
    return out


def stable(report):
    """The report without the entries that differ between worker counts by design.

    >>> stable({"pf": 0.1, "total": [0.5], "seconds": 3.0, "is": {"pf": 0.2, "fit_seconds": 1}})
    {'pf': 0.1, 'total': [0.5], 'is': {'pf': 0.2}}
    """
    if isinstance(report, dict):
        return {k: stable(v) for k, v in report.items()
                if k not in VOLATILE and not k.endswith(VOLATILE_ENDINGS)}
    if isinstance(report, list):
        return [stable(v) for v in report]
    return report


def task_seconds(out):
    """{task: CPU seconds} of the pool tasks a study run saved in its cache (``DIR/cache``;
    the membrane study's Table-4, baseline and UQ tasks), largest first.

    >>> task_seconds("/nonexistent")
    {}
    """
    found = {}
    for entry in sorted(glob.glob(os.path.join(out, "cache", "*.json"))):
        with open(entry) as fh:
            stored = json.load(fh)
        result = stored.get("result") if isinstance(stored, dict) else None
        if isinstance(result, dict) and "cpu_seconds" in result:
            found[os.path.basename(entry).rsplit("-", 1)[0]] = round(result["cpu_seconds"], 2)
    return dict(sorted(found.items(), key=lambda kv: -kv[1]))


def run_study(name, workers, out, extra=()):
    """One study run in a fresh interpreter: wall seconds, phases, report."""
    cmd = [sys.executable, "-m", "uqkit.cli", "study", name, "--out", out, "--workers",
           str(workers), "--no-progress", *extra]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n"
                           f"{done.stderr[-3000:]}")
    with open(os.path.join(out, "report.json")) as fh:
        report = json.load(fh)
    return wall, phases(done.stdout.splitlines()), report


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--studies", nargs="+", default=["membrane", "reliability"],
                    choices=["membrane", "reliability"])
    ap.add_argument("--workers", type=int, nargs="+", default=[2, 16])
    ap.add_argument("--reduced", action="store_true", help="the reliability study's reduced size")
    ap.add_argument("--json", metavar="PATH", help="write the rows to PATH")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "uqkit.cli", *WARM_UP, "--out",
                        os.path.join(tmp, "warm-up"), "--workers", "2", "--no-progress"],
                       capture_output=True, check=True)
        for name in args.studies:
            extra = REDUCED if (args.reduced and name == "reliability") else []
            first = None
            for workers in args.workers:
                wall, steps, report = run_study(name, workers,
                                                os.path.join(tmp, f"{name}-{workers}"), extra)
                row = {"study": name, "workers": workers, "cores": os.cpu_count(),
                       "wall_s": wall, "phases_s": steps,
                       "parallelism": report.get("parallelism"),
                       "tasks_cpu_s": task_seconds(os.path.join(tmp, f"{name}-{workers}")),
                       "size": "reduced" if extra else "default"}
                first = stable(report) if first is None else first
                row["report_equal_to_first"] = stable(report) == first
                rows.append(row)
                if args.json:  # after every row: an interrupted run keeps what it measured
                    with open(args.json, "w") as fh:
                        json.dump(rows, fh, indent=1)
                print(f"{name:11s} {workers:3d} workers: {wall:7.1f} s  "
                      + "  ".join(f"{k} {v:.1f}" for k, v in steps.items()), flush=True)
    return rows


if __name__ == "__main__":
    main()
