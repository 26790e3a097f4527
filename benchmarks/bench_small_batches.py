"""Small batches on the local pool: FORM and an active-learning-like sequence of batches.

For each worker count (default 1, 2 and 16), in a fresh interpreter (so the pool's start is
included, as in a study where the limit state's pool replaces the FE's):

* ``form_s``: ``failure_probability(g, table3(), method="form", workers=W)`` on the reliability
  study's membrane limit state ``w_p1 - threshold`` (threshold -3.26, about the 1e-3 quantile);
* ``form_warm_s``: the same again in the same interpreter (the pool, if any, is warm);
* ``sequence_s``: one :class:`uqkit.execution.runner.ModelRunner` running the batch sizes
  ``SEQUENCE`` (a FORM gradient, line-search points, active-learning batches of 4);
* ``workers_started``: worker processes the interpreter started in all; ``tasks``: tasks
  submitted to the pool; ``pools``: pools (loky executors) created;
* ``switch_s``: after the FE model ran on the pool (``SWITCH_ROWS`` runs of
  ``MembraneModel``, as a study's FE truth), ``propagate`` of ``SWITCH_ROWS`` runs of the
  limit state, another model, on the same number of workers (as importance sampling's or the
  FE Sobol' runs after it); ``switch_pools``: pools created for it (0: the warm pool ran it);
  ``switch_warm_s``: the same call again.

Worker counts above the machine's cores oversubscribe it: on 2 cores, 16 workers start 16
interpreters on 2 cores, so their start-up costs about 8 times the wall time it would on 16
cores. The figures show the overheads, not a 16-core machine's timings.

    python benchmarks/bench_small_batches.py [--json] [--workers 1 2 16]
"""
import argparse
import json
import os
import subprocess
import sys
import time

#: Batch sizes of the sequence: a central-difference gradient of 5 inputs with g (11), line
#: search points (1), gradients (10) and active-learning batches (4).
SEQUENCE = (11, 1, 1, 10, 1, 10, 1, 10, 4, 4, 4, 4, 4, 4)
#: Runs of each model in the model-switch measurement.
SWITCH_ROWS = 2000
#: The limit state's threshold on w(p1) (about its 1e-3 quantile under Table 3's inputs).
THRESHOLD = -3.26


def _count_pool_activity():
    """Patch loky to count the pools created, the workers started and the tasks submitted."""
    from loky import process_executor, reusable_executor

    counts = {"pools": 0, "workers_started": 0, "tasks": 0}
    cls = process_executor.ProcessPoolExecutor
    adjust, submit = cls._adjust_process_count, cls.submit
    init = reusable_executor._ReusablePoolExecutor.__init__

    def counted_adjust(self):
        before = len(self._processes)
        adjust(self)
        counts["workers_started"] += len(self._processes) - before

    def counted_submit(self, *args, **kwargs):
        counts["tasks"] += 1
        return submit(self, *args, **kwargs)

    def counted_init(self, *args, **kwargs):
        counts["pools"] += 1
        init(self, *args, **kwargs)

    cls._adjust_process_count, cls.submit = counted_adjust, counted_submit
    reusable_executor._ReusablePoolExecutor.__init__ = counted_init
    return counts


def measure(workers):
    """The figures of one worker count, in this interpreter."""
    import numpy as np

    from studies.reliability.study import DeflectionLimit
    from uqkit.execution.runner import ModelRunner
    from uqkit.presets import table3
    from uqkit.reliability import failure_probability

    counts = _count_pool_activity()
    g, inputs = DeflectionLimit(THRESHOLD), table3()
    out = {"workers": workers}
    for name in ("form_s", "form_warm_s"):
        t0 = time.perf_counter()
        r = failure_probability(g, inputs, method="form", workers=workers)
        out[name] = time.perf_counter() - t0
    out["form_beta"], out["form_runs"] = r.beta, r.model_runs
    U = np.random.default_rng(0).standard_normal((sum(SEQUENCE), inputs.dim)) * 0.5
    X = __import__("uqkit.inputs.transforms", fromlist=["u_to_x"]).u_to_x(inputs, U)
    t0 = time.perf_counter()
    with ModelRunner(g, inputs, workers=workers) as run:
        first = 0
        for size in SEQUENCE:
            run(X[first:first + size])
            first += size
    out["sequence_s"] = time.perf_counter() - t0
    out["sequence_rows"] = int(sum(SEQUENCE))
    out.update(counts)
    if workers > 1:
        out.update(task_costs(g, X[:11], workers))
        out.update(model_switch(g, workers, counts))
    return out


def model_switch(g, workers, counts):
    """``switch_s``, ``switch_pools`` and ``switch_warm_s`` (module notes)."""
    from uqkit import propagate, sample
    from uqkit.adapters import MembraneModel
    from uqkit.presets import table3

    X = sample(table3(), SWITCH_ROWS, seed=1).values
    propagate(MembraneModel(probe_frame="relative"), X, workers=workers, progress=False)
    pools = counts["pools"]
    out = {}
    for name in ("switch_s", "switch_warm_s"):
        t0 = time.perf_counter()
        propagate(g, X, workers=workers, progress=False)
        out[name] = time.perf_counter() - t0
        if name == "switch_s":
            out["switch_pools"] = counts["pools"] - pools
    return out


def task_costs(model, X, workers):
    """A fresh pool's first task of ``model`` on X (a cold worker: unpickling, imports, the
    JIT cache) and the median dispatch overhead of a warm task (its wall time less the
    model's), in seconds."""
    import numpy as np

    from uqkit.execution.executors import local_executor
    from uqkit.execution.propagation import _run_chunk

    ex = local_executor(workers, code_key=f"bench-task-costs-{workers}")
    t0 = time.perf_counter()
    ex.submit(_run_chunk, model, X, None).result()
    cold = time.perf_counter() - t0
    list(ex.map(_run_chunk, [model] * 4 * workers, [X] * 4 * workers, [None] * 4 * workers))
    overheads = []
    for _ in range(20):
        t0 = time.perf_counter()
        res = ex.submit(_run_chunk, model, X, None).result()
        overheads.append(time.perf_counter() - t0 - res.seconds)
    return {"cold_task_s": cold, "warm_dispatch_ms": 1e3 * float(np.median(overheads))}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 16])
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child interpreter's run
    args = ap.parse_args(argv)
    if args.one is not None:
        print(json.dumps(measure(args.one)))
        return None
    rows = []
    for workers in args.workers:
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--one",
                                str(workers)], capture_output=True, text=True, check=True)
        rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
    if args.json:
        print(json.dumps(rows))
        return rows
    print(f"{os.cpu_count()} cores; FORM on the membrane limit state, then {len(SEQUENCE)} "
          f"batches ({sum(SEQUENCE)} rows) through one ModelRunner")
    print("workers  FORM s  FORM warm s  sequence s  pools  workers started  tasks  "
          "cold task s  warm dispatch ms  switch s  switch pools  switch warm s")
    nan = float("nan")
    for r in rows:
        print(f"{r['workers']:7d}  {r['form_s']:6.2f}  {r['form_warm_s']:11.2f}  "
              f"{r['sequence_s']:10.2f}  {r['pools']:5d}  {r['workers_started']:15d}  "
              f"{r['tasks']:5d}  {r.get('cold_task_s', nan):11.2f}  "
              f"{r.get('warm_dispatch_ms', nan):16.2f}  {r.get('switch_s', nan):8.2f}  "
              f"{r.get('switch_pools', -1):12d}  {r.get('switch_warm_s', nan):13.2f}")
    print("(pools, workers started and tasks count the FORM runs and the sequence only; the "
          "task costs and the model switch are measured after them)")
    return rows


if __name__ == "__main__":
    main()
