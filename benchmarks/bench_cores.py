"""How FE throughput scales with the processes running at once: a control for the studies'
parallel speed-up (issue 28).

N processes (N = 1, 2, 4, ... up to ``--max``) each solve the membrane at the paper's nominal
inputs (l 2, b 1, t 0.0015, E 210, nu 0.3) over and over for ``--seconds`` s, all started together after a warm-up solve; the
row gives the solves per second of one process and of all. The processes share nothing, so
where the per-process rate falls as N grows, the machine (cores that are hardware threads of
one core, a clock that drops when every core is busy, shared caches and memory) sets the
limit, not the study's scheduling: a study of N workers cannot beat the ``total`` ratio.

    python benchmarks/bench_cores.py [--max N] [--seconds S] [--json]
"""
import argparse
import json
import multiprocessing as mp
import os
import time


def _solver():
    from fem import Membrane

    model = Membrane(l=2.0, b=1.0, t=0.0015, E=210.0, nu=0.3, nx=20, ny=10)
    model.solve()  # warm-up (and the numba cache)
    return model


def _worker(barrier, seconds, out):
    model = _solver()
    barrier.wait()
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        model.solve()
        n += 1
    out.put(n / (time.perf_counter() - t0))


def rate(n_procs, seconds):
    """Solves per second of each of ``n_procs`` processes solving at once."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(n_procs), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(barrier, seconds, out)) for _ in range(n_procs)]
    for p in procs:
        p.start()
    rates = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return rates


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=os.cpu_count())
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    _solver()  # compile once, before the processes load it from the cache
    rows, n = [], 1
    while n <= args.max:
        rates = rate(n, args.seconds)
        rows.append({"processes": n, "per_process": round(sum(rates) / n, 1),
                     "total": round(sum(rates), 1)})
        n = n * 2 if n * 2 <= args.max or n == args.max else args.max
    for row in rows:
        row["total_vs_1"] = round(row["total"] / rows[0]["total"], 2)
        print(json.dumps(row) if args.json else
              f"{row['processes']:3d} processes: {row['per_process']:8.1f} solves/s each, "
              f"{row['total']:8.1f} in all ({row['total_vs_1']}x one)")
    return rows


if __name__ == "__main__":
    main()
