"""Where a batch runs: in this process or on the local pool, and how it is cut into chunks.

An analysis calls its model on many small batches (a FORM gradient of 2d + 1 rows, a
line-search point, an active-learning batch of 4). On the local process pool such a batch
pays for more than it gains: it becomes one or a few tasks, and each task lands on whichever
worker is idle, so a pool of 16 workers hands the first 16 batches to 16 workers that have
never run the model and must first unpickle it and import its modules (uqkit, the solver,
numba's cached machine code). Measured on a shared 2-core machine
(``python benchmarks/bench_small_batches.py``): a fresh pool's first task of the membrane limit
state on 11 rows takes 1.35 s with 2 workers (2.9 s with 16, oversubscribed), a warm worker's
task 0.8-1.0 ms more than the model itself, and FORM, 61 batches of 1 to 11 FE runs of about
1 ms, took 0.74 s in one process, 3.3 s on 2 workers and 19.8 s on 16 (33.9 s in a quieter
run): the first batches each waited for a worker that had not run the model yet.

The rule (:func:`runs_in_process`) is the ski-rental one (rent until the rent paid equals
the price of buying; never more than twice the best choice in hindsight, Karlin et al.
1988): a batch's estimated cost is rows x the model's cost per row measured in this process
(:func:`record_cost`; any executor's chunks count, the smallest of the last
:data:`COST_HISTORY` is taken, since a first call's imports and a busy machine only inflate
it). While the model has not gone to the pool, its batches run here as long as the seconds
spent here on it, this batch included, stay below :data:`COLD_POOL_SECONDS`, about what
warming a pool costs; after that, or for a batch that costs as much on its own, the pool is
warmed and used for every batch above :data:`IN_PROCESS_SECONDS` (which a warm pool's
dispatch, about 1 ms a task, would eat). So FORM on a fast model (0.7 s in all) never starts
a worker, and a long run of 66 ms batches (subset simulation's chain steps) pays at most
1.5 s before it moves to the pool. A model not measured yet runs a batch of at most
:data:`PROBE_ROWS` rows here (its cost is then known), unless it says its runs are slow
(``cores_per_run``, ``chunk_size`` or ``takes_context``, as
:class:`uqkit.external.ExternalModel` does): those go to the pool. The decision depends on
the model and the batches, not on the number of workers, so more workers never cost a
small batch more than fewer (but for the pool's start, paid once and in parallel), with one
exception: a pool of more workers than cores warms them in turn, not in parallel, so its
price is ``COLD_POOL_SECONDS`` times workers / cores (measured, 16 workers on 2 cores:
importance sampling's 2,000 FE runs took 11.6 s on a fresh pool against 2.2 s with 2
workers; they now run here). Only an analysis's batches are placed so
(:func:`uqkit.execution.propagation.propagate_batch`); :func:`uqkit.propagate` runs on the
pool it is given, where a model that crashes its process takes a worker with it, not the run.

A batch that does go to the pool is cut into chunks of :func:`chunk_rows` rows: about 64
chunks (at least 16 rows each), but never fewer chunks than workers while rows last, so that
a batch of 11 expensive rows keeps 11 workers busy rather than one (the FE gives the same
results row for row whatever the chunks: ``fem.solve_batch``).

Imports: nothing of uqkit; threadpoolctl when a batch runs here.
"""
import math
import sys
from collections import deque
from contextlib import contextmanager

__all__ = ["IN_PROCESS_SECONDS", "COLD_POOL_SECONDS", "PROBE_ROWS", "COST_HISTORY",
           "SLOW_MODEL_ATTRIBUTES", "chunk_rows", "record_cost", "record_in_process",
           "row_seconds", "forget_costs", "runs_in_process", "single_threaded"]

#: Estimated seconds of a batch below which it runs in this process even with a warm pool.
IN_PROCESS_SECONDS = 0.005
#: Seconds a model may spend in this process before its batches move to the pool: about the
#: cost of warming a pool (its first task: 1.2-1.35 s measured with 2 workers on 2 cores).
COLD_POOL_SECONDS = 1.5
#: Rows of a batch that runs in this process while its model's cost is not measured yet.
PROBE_ROWS = 32
#: Chunks whose cost per row is remembered per model.
COST_HISTORY = 16
#: Attributes by which a model says its runs are slow (see :mod:`uqkit.execution.model`).
SLOW_MODEL_ATTRIBUTES = ("cores_per_run", "chunk_size", "takes_context")

#: Seconds per good row of the last chunks of each model, by its identity key.
_costs = {}
#: Seconds each model's batches have spent in this process, by its identity key.
_spent_here = {}
#: The models whose batches have gone to the pool (it is warm for them).
_on_pool = set()


def chunk_rows(n, workers=1):
    """Rows per chunk of n rows on ``workers`` processes: about 64 chunks of 16 to 1024 rows,
    but at most ``n // workers``, so that there are at least as many chunks as workers (or
    one row per chunk).

    >>> chunk_rows(20_000, 16), chunk_rows(11, 16), chunk_rows(11, 2), chunk_rows(100)
    (313, 1, 5, 16)
    """
    rows = min(1024, max(16, math.ceil(n / 64)))
    return int(max(1, min(rows, n // max(1, int(workers)))))


def record_cost(key, rows, seconds):
    """Remember that a chunk of ``rows`` good rows of the model ``key`` took ``seconds``."""
    if rows > 0 and seconds >= 0:
        _costs.setdefault(key, deque(maxlen=COST_HISTORY)).append(seconds / rows)


def row_seconds(key):
    """The model's estimated seconds per row (the smallest recent one), or None."""
    costs = _costs.get(key)
    return min(costs) if costs else None


def record_in_process(key, seconds):
    """Count ``seconds`` of the model ``key`` spent in this process instead of on the pool."""
    _spent_here[key] = _spent_here.get(key, 0.0) + max(0.0, seconds)


def forget_costs():
    """Forget every measured cost and placement (tests, benchmarks)."""
    _costs.clear()
    _spent_here.clear()
    _on_pool.clear()


def runs_in_process(model, key, rows, workers_per_core=1.0):
    """Whether a batch of ``rows`` rows of ``model`` (identity ``key``) runs in this process
    rather than on the local pool (the rule of the module notes); ``workers_per_core``, the
    pool's workers over the machine's cores, raises the price of warming it above 1."""
    cost = row_seconds(key)
    if cost is None:
        slow = any(getattr(model, name, None) for name in SLOW_MODEL_ATTRIBUTES)
        return rows <= PROBE_ROWS and not slow
    estimate = rows * cost
    if estimate < IN_PROCESS_SECONDS:
        return True
    warming = COLD_POOL_SECONDS * max(1.0, workers_per_core)
    if key not in _on_pool and _spent_here.get(key, 0.0) + estimate < warming:
        return True
    _on_pool.add(key)
    return False


#: A threadpoolctl controller, with the number of modules loaded when it was made.
_controller = [None, -1]


@contextmanager
def single_threaded():
    """Cap the BLAS and OpenMP thread pools of this process to one thread, as in a pool's
    worker, for a batch run here instead (the same arithmetic, the same results). The
    controller is made again only when modules were loaded since (a few ms; 0.1 ms to use)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        yield
        return
    if _controller[1] != len(sys.modules):
        _controller[:] = [ThreadpoolController(), len(sys.modules)]
    with _controller[0].limit(limits=1):
        yield
