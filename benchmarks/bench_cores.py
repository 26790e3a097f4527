"""How throughput scales with the processes running at once: a control for the studies'
parallel speed-up (issue 28).

N processes (N = 1, 2, 4, ... up to ``--max``) each run one kernel over and over for
``--seconds`` s, all started together after a warm-up; the row gives the kernel's rate in
one process and in all. The processes share nothing, so where the per-process rate falls as
N grows, the machine sets the limit, not the study's scheduling: a study of N workers cannot
beat the ``total`` ratio. The kernels tell the machine's causes apart:

- ``fe``: the membrane solved at the paper's nominal inputs (l 2, b 1, t 0.0015, E 210,
  nu 0.3; 20 x 10 elements), in solves per second;
- ``chain``: one chain of dependent multiply-adds on registers (each waits for the last), in
  millions per second. It touches no memory and leaves the core's arithmetic units mostly
  idle, so its rate follows the clock alone: it falls when a busier chip runs a lower clock;
- ``ports``: independent multiply-adds on numbers in the first-level cache (vectorised),
  which keep the core's arithmetic units busy. Its rate falls further than ``chain``'s where
  two of the N processes share one physical core (hardware threads), even if the operating
  system reports one thread per core.

Where ``fe`` falls like ``chain``, the FE is slower on a busy machine because the clock is;
where it falls further than ``ports``, caches or memory are shared too.

``--imports`` measures instead what a fresh worker's first training task pays before it
computes: N processes import :mod:`surrogates`' BDL and baselines (torch, and a CUDA
build's libraries where torch has them) and scikit-learn at once; the row gives each one's
CPU seconds (user and system: mapping shared libraries is the kernel's work) and the slowest
one's wall time. A second row per N (``after_warm_up``) measures what a pool worker of
``uqkit study membrane`` pays at its first training task: the processes first do what the
study's FE warm-up does in each worker (one thread; the nominal membrane solved through
:class:`uqkit.adapters.MembraneModel`, so numpy, numba's cached code and the solver are
loaded), then import the study's tasks (``studies.membrane.tasks``: scipy.stats, chaospy),
the BDL and the baselines and scikit-learn's GP.

``--pool`` measures what the local pool's start method saves: for each start method (the
fork server, ``preload``, and loky's fresh interpreters, ``loky``) and N, a fresh interpreter
starts the pool of N workers as ``uqkit study membrane`` does (``studies.common.
warm_fe_pool``: the FE warm-up on each worker, the study's ``WORKER_MODULES`` for the server)
and then gives each worker the imports of a first training task. The row gives the wall time
from the pool's request until every worker has solved the FE (its warm-up), and until every
worker is through the imports, and the CPU seconds of the workers (from their start: an
interpreter's start-up and imports included) and of the fork server.

    python benchmarks/bench_cores.py [--kernels fe chain ports] [--max N] [--seconds S]
                                     [--imports] [--pool] [--json]
"""
import argparse
import json
import multiprocessing as mp
import os
import time

#: Multiply-adds per call of the ``chain`` and ``ports`` kernels.
STEPS = 4096 * 512


def _fe():
    """The membrane's solve, warmed up (and numba's cache filled); 1 solve per call."""
    from fem import Membrane

    model = Membrane(l=2.0, b=1.0, t=0.0015, E=210.0, nu=0.3, nx=20, ny=10)
    model.solve()
    return model.solve, 1.0


def _chain():
    """``STEPS`` dependent multiply-adds per call, in millions."""
    from numba import njit

    @njit(cache=False)
    def chain(n):
        x = 1.0
        for _ in range(n):
            x = x * 0.999999 + 1e-7
        return x

    chain(10)
    return lambda: chain(STEPS), STEPS / 1e6


def _ports():
    """``STEPS`` multiply-adds per call on 512 numbers that stay in the core's first-level
    cache, each independent of the others (so vectorised), in millions."""
    import numpy as np
    from numba import njit

    @njit(cache=False)
    def ports(y, passes):
        for _ in range(passes):
            for i in range(y.size):
                y[i] = y[i] * 0.999999 + 1e-7
        return y[0]

    raw = np.ones(512 + 8)
    first = (-raw.ctypes.data % 64) // 8  # aligned to the cache line: no split loads
    y = raw[first:first + 512]
    ports(y, 1)
    return lambda: ports(y, STEPS // y.size), STEPS / 1e6


#: kernel name: (set-up returning (call, units per call), unit)
KERNELS = {"fe": (_fe, "solves/s"), "chain": (_chain, "M multiply-adds/s"),
           "ports": (_ports, "M multiply-adds/s")}


def _worker(barrier, kernel, seconds, out):
    call, units = KERNELS[kernel][0]()
    barrier.wait()
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        call()
        n += 1
    out.put(n * units / (time.perf_counter() - t0))


def _importer(barrier, after_warm_up, out):
    if after_warm_up:
        from uqkit.adapters import MembraneModel
        from uqkit.execution.executors import pin_threads

        pin_threads(1)
        MembraneModel(nx=20, ny=10, probe_frame="relative").warm_up()
    barrier.wait()
    t0, c0 = time.perf_counter(), time.process_time()
    if after_warm_up:
        import studies.membrane.tasks  # noqa: F401
    import sklearn.gaussian_process  # noqa: F401  (the GP baseline's)
    import surrogates.baselines  # noqa: F401
    import surrogates.bdl  # noqa: F401  (torch: the package's names load on first use)
    out.put((time.process_time() - c0, time.perf_counter() - t0))


def together(target, n_procs, *args):
    """Start ``n_procs`` fresh processes of ``target(barrier, *args, queue)``, which wait at
    the barrier and put one result each on the queue; returns the results."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(n_procs), ctx.Queue()
    procs = [ctx.Process(target=target, args=(barrier, *args, out)) for _ in range(n_procs)]
    for p in procs:
        p.start()
    found = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return found


def import_seconds(n_procs, after_warm_up=False):
    """(CPU, wall) seconds of each of ``n_procs`` fresh processes importing the training
    code at once; ``after_warm_up``: after the study's FE warm-up, with the study's tasks."""
    return together(_importer, n_procs, after_warm_up)


def rate(kernel, n_procs, seconds):
    """The kernel's rate in each of ``n_procs`` processes running it at once."""
    return together(_worker, n_procs, kernel, seconds)


def _first_training_imports(gate, n):
    """A worker's first training task's imports (as ``_importer``'s after the warm-up), then
    its CPU seconds since it started; waits at a file barrier in ``gate`` until ``n``
    workers are through, so that each of the ``n`` takes one task."""
    import studies.membrane.tasks  # noqa: F401
    import sklearn.gaussian_process  # noqa: F401
    import surrogates.baselines  # noqa: F401
    import surrogates.bdl  # noqa: F401
    import torch  # noqa: F401

    times = os.times()
    open(os.path.join(gate, str(os.getpid())), "w").close()
    deadline = time.monotonic() + 300
    while len(os.listdir(gate)) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    return times.user + times.system


def _process_cpu(pid):
    """CPU seconds (user and system) of process ``pid`` so far, from ``/proc``."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pool_start(method, n):
    """One ``--pool`` row, in this (fresh) interpreter: see the module docstring."""
    import tempfile
    from types import SimpleNamespace

    os.environ["UQKIT_START_METHOD"] = method
    from studies.common import warm_fe_pool
    from studies.membrane import WORKER_MODULES
    from uqkit.execution import fork_server
    from uqkit.execution.executors import local_executor

    with tempfile.TemporaryDirectory() as tmp:
        study = SimpleNamespace(dask=None, workers=n, nx=20, ny=10, out=os.path.join(tmp, "o"))
        gate = os.path.join(tmp, "gate")
        os.mkdir(gate)
        t0 = time.perf_counter()
        for future in warm_fe_pool(study, WORKER_MODULES):
            future.result()
        fe_ready = time.perf_counter() - t0
        pool = local_executor(n)
        cpu = [f.result() for f in [pool.submit(_first_training_imports, gate, n)
                                    for _ in range(n)]]
        wall = time.perf_counter() - t0
        server = fork_server.server_pid()
        return {"kind": "pool", "start_method": method, "workers": n,
                "fe_ready_s": round(fe_ready, 2), "wall_s": round(wall, 2),
                "workers_cpu_s": round(sum(cpu), 2),
                "server_cpu_s": round(_process_cpu(server), 2) if server else 0.0}


def counts(most):
    """1, 2, 4, ... and ``most`` itself.

    >>> counts(16), counts(6), counts(1)
    ([1, 2, 4, 8, 16], [1, 2, 4, 6], [1])
    """
    out, n = [], 1
    while n < most:
        out.append(n)
        n *= 2
    return out + [most]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=list(KERNELS))
    ap.add_argument("--max", type=int, default=os.cpu_count())
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--imports", action="store_true",
                    help="the training code's import in N fresh processes at once")
    ap.add_argument("--pool", action="store_true",
                    help="the pool's start, fork server against fresh interpreters")
    ap.add_argument("--pool-row", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.pool_row:
        print(json.dumps(pool_start(args.pool_row[0], int(args.pool_row[1]))))
        return None
    if args.pool:
        import subprocess
        import sys

        rows = []
        for n in counts(args.max)[1:]:
            for method in ("loky", "preload"):
                out = subprocess.run([sys.executable, __file__, "--pool-row", method, str(n)],
                                     capture_output=True, text=True, check=True)
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
                row = rows[-1]
                print(json.dumps(row) if args.json else
                      f"pool {method:8s} {n:3d} workers: FE ready {row['fe_ready_s']:5.2f} s, "
                      f"through the imports {row['wall_s']:6.2f} s, workers "
                      f"{row['workers_cpu_s']:6.2f} CPU s, server {row['server_cpu_s']:5.2f}",
                      flush=True)
        return rows
    if args.imports:
        rows = []
        for n in counts(args.max):
            for after_warm_up in (False, True):
                found = import_seconds(n, after_warm_up)
                rows.append({"kernel": "imports", "processes": n, "after_warm_up": after_warm_up,
                             "cpu_s_per_process": round(sum(c for c, _ in found) / n, 2),
                             "wall_s_slowest": round(max(w for _, w in found), 2)})
                print(json.dumps(rows[-1]) if args.json else
                      f"imports {n:3d} processes{' after the FE warm-up' * after_warm_up}: "
                      f"{rows[-1]['cpu_s_per_process']:5.2f} CPU s each, the slowest "
                      f"{rows[-1]['wall_s_slowest']:5.2f} s", flush=True)
        return rows
    if "fe" in args.kernels:
        _fe()  # compile once, before the processes load it from the cache
    rows = []
    for kernel in args.kernels:
        first = None
        for n in counts(args.max):
            rates = rate(kernel, n, args.seconds)
            row = {"kernel": kernel, "unit": KERNELS[kernel][1], "processes": n,
                   "per_process": round(sum(rates) / n, 1), "total": round(sum(rates), 1)}
            first = first or row
            row["total_vs_1"] = round(row["total"] / first["total"], 2)
            row["per_process_vs_1"] = round(row["per_process"] / first["per_process"], 3)
            rows.append(row)
            print(json.dumps(row) if args.json else
                  f"{kernel:6s} {n:3d} processes: {row['per_process']:9.1f} {row['unit']} "
                  f"each ({row['per_process_vs_1']} of one alone), {row['total']:9.1f} in all "
                  f"({row['total_vs_1']}x one)", flush=True)
    return rows


if __name__ == "__main__":
    main()
