"""Small batches on the local pool: where they run, how they are chunked, and one pool for a
whole analysis (the properties; the speed is measured by benchmarks/bench_small_batches.py)."""
import os

import numpy as np
import pytest

from uqkit import sample
from uqkit.execution import executors, placement
from uqkit.execution.propagation import propagate, propagate_batch
from uqkit.execution.runner import ModelRunner
from uqkit.inputs import RandomInputs

INPUTS = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})


class WhereRun:
    """Outputs x_a + 2 x_b and the PID of the process that ran the row."""

    def __call__(self, X):
        return np.column_stack([X[:, 0] + 2 * X[:, 1], np.full(len(X), float(os.getpid()))])

    def describe(self):
        return {"model": "where-run", "version": 1}


class SlowWhereRun(WhereRun):
    chunk_size = 2  # says its runs are slow: unmeasured, it goes to the pool

    def describe(self):
        return {"model": "slow-where-run", "version": 1}


@pytest.fixture(autouse=True)
def fresh_costs():
    placement.forget_costs()
    yield
    placement.forget_costs()


@pytest.mark.parametrize("n", [1, 2, 5, 11, 16, 17, 100, 1000, 20_000, 100_000])
@pytest.mark.parametrize("workers", [1, 2, 3, 16])
def test_chunks_cover_every_row_once_in_order_and_feed_every_worker(n, workers):
    size = placement.chunk_rows(n, workers)
    chunks = [np.arange(n)[s:s + size] for s in range(0, n, size)]
    assert np.array_equal(np.concatenate(chunks), np.arange(n))
    assert len(chunks) >= min(n, workers)
    assert size <= max(1, min(1024, n // workers))


def test_the_rule_measured_costs_and_unmeasured_models():
    fast, slow = WhereRun(), SlowWhereRun()
    assert placement.runs_in_process(fast, "k", placement.PROBE_ROWS)
    assert not placement.runs_in_process(fast, "k", placement.PROBE_ROWS + 1)
    assert not placement.runs_in_process(slow, "s", 1)
    placement.record_cost("k", 10, 0.5)  # a first call with its imports: 50 ms a row
    placement.record_cost("k", 10, 0.01)  # then 1 ms a row: the smallest counts
    placement.record_cost("k", 0, 0.0)  # a chunk without good rows says nothing
    assert placement.row_seconds("k") == pytest.approx(1e-3)
    # ski rental: batches stay here until the seconds spent here would pass the pool's warming
    budget_rows = int(placement.COLD_POOL_SECONDS / 1e-3)
    assert not placement.runs_in_process(fast, "k", budget_rows + 1)  # one batch worth it
    placement.forget_costs()
    placement.record_cost("k", 10, 0.01)
    batch = budget_rows // 3 - 1
    for _ in range(3):
        assert placement.runs_in_process(slow, "k", batch)
        placement.record_in_process("k", batch * 1e-3)
    assert not placement.runs_in_process(fast, "k", batch)  # the fourth would pass it
    assert not placement.runs_in_process(fast, "k", 10)  # the pool is warm: 10 ms go there
    tiny = int(placement.IN_PROCESS_SECONDS / 1e-3) - 1
    assert placement.runs_in_process(fast, "k", tiny)  # below a warm pool's dispatch


def test_an_oversubscribed_pool_costs_workers_per_core_times_more_to_warm():
    """A pool of 8 workers per core warms them in turn: a batch of 4x the warming price runs
    here, where a pool of one worker per core (or fewer) would take it."""
    fast = WhereRun()
    placement.record_cost("o", 10, 0.01)  # 1 ms a row
    rows = int(4 * placement.COLD_POOL_SECONDS / 1e-3)
    assert not placement.runs_in_process(fast, "o", rows, workers_per_core=1.0)
    placement.forget_costs()
    placement.record_cost("o", 10, 0.01)
    assert not placement.runs_in_process(fast, "o", rows, workers_per_core=0.5)
    placement.forget_costs()
    placement.record_cost("o", 10, 0.01)
    assert placement.runs_in_process(fast, "o", rows, workers_per_core=8.0)
    placement.record_in_process("o", rows * 1e-3)
    assert not placement.runs_in_process(fast, "o", rows, workers_per_core=8.0)  # 12 s passed


def test_a_tiny_batch_runs_here_with_the_pool_s_rows():
    X = sample(INPUTS, 11, seed=3).values
    executors.release_workers()  # the pool is kept across models: start from none
    with ModelRunner(WhereRun(), INPUTS, workers=2) as run:
        here = run(X)
        assert len(run.pool._processes) == 0  # no worker was started for it
    with ModelRunner(SlowWhereRun(), INPUTS, workers=2) as run:
        there = run(X)
    assert (here[:, 1] == os.getpid()).all()
    assert os.getpid() not in there[:, 1]
    assert np.array_equal(here[:, 0], there[:, 0])


def test_a_sequence_of_small_batches_reuses_one_pool(monkeypatch):
    """Batches of any size on a runner's pool: the same pool object and the same workers."""
    monkeypatch.setattr(placement, "PROBE_ROWS", 0)  # everything to the pool
    monkeypatch.setattr(placement, "IN_PROCESS_SECONDS", 0.0)
    monkeypatch.setattr(placement, "COLD_POOL_SECONDS", 0.0)
    X = sample(INPUTS, 60, seed=4).values
    pids, pools = set(), set()
    with ModelRunner(WhereRun(), INPUTS, workers=2) as run:
        first = 0
        for size in (11, 1, 4, 1, 30, 2, 11):
            out = run(X[first:first + size])
            first += size
            pids |= set(out[:, 1].astype(int).tolist())
            pools.add(id(run.pool))
            workers = set(run.pool._processes)
        assert len(pools) == 1 and pids <= workers and len(workers) == 2
        assert executors.local_executor(2) is run.pool


def test_the_rows_run_here_are_the_fe_rows_of_the_pool():
    """The membrane FE through the rule, here and on the pool, row for row, bit for bit."""
    from uqkit.adapters import MembraneModel
    from uqkit.presets import table3

    X = sample(table3(), 11, seed=5).values
    model = MembraneModel(probe_frame="relative")
    here = propagate_batch(model, X, executors.SerialExecutor()).outputs
    with ModelRunner(model, table3(), workers=2) as run:
        placed = run(X)
        pooled = propagate(model, X, executor=run.pool, progress=False).outputs
    assert np.array_equal(here, placed) and np.array_equal(here, pooled)


def _g(X):
    return 3.0 - X[:, 0] - X[:, 1]


def test_form_with_many_workers_starts_none_and_matches_one_process():
    from uqkit.reliability import failure_probability

    serial = failure_probability(_g, INPUTS, method="form", workers=1)
    many = failure_probability(_g, INPUTS, method="form", workers=16)
    assert many.beta == serial.beta and many.model_runs == serial.model_runs
    assert len(executors._pool._processes) == 0


class SlowFirstCall:
    """Sleeps 0.2 s on its first call in a process (imports, a JIT cache), then is instant."""

    started = False

    def __call__(self, X):
        if not SlowFirstCall.started:
            SlowFirstCall.started = True
            import time

            time.sleep(0.2)
        return X[:, 0]


def test_the_cost_per_run_is_not_skewed_by_a_first_call():
    SlowFirstCall.started = False  # a fresh process's first call, whichever tests ran before
    res = propagate(SlowFirstCall(), np.ones((40, 1)), executor="serial", chunk_size=4,
                    progress=False)
    assert res.compute_seconds / 40 > 0.2 / 40
    assert res.seconds_per_run < 0.01


@pytest.mark.parametrize("n, workers, rows", [
    (20_000, 16, 313), (11, 16, 1), (11, 2, 5), (100, 1, 16), (20, 1, 16), (64 * 17, 1, 17),
    (1_000_000, 1, 1024), (1_000_000, 2000, 500), (65 * 100, 1, 102)])
def test_chunk_rows_are_about_a_64th_of_the_rows_between_16_and_1024(n, workers, rows):
    """ceil(n / 64) rows, at least 16 and at most 1024, but at most n // workers (so that
    every worker gets a chunk), and at least one."""
    assert placement.chunk_rows(n, workers) == rows
    assert placement.chunk_rows(n) == placement.chunk_rows(n, 1)


def test_costs_come_from_the_last_chunks_one_row_and_free_ones_included():
    placement.record_cost("m", 1, 0.004)  # a one-row chunk counts
    assert placement.row_seconds("m") == pytest.approx(0.004)
    placement.record_cost("m", 5, 0.0)  # so does one too fast for the clock
    assert placement.row_seconds("m") == 0.0
    placement.forget_costs()
    placement.record_cost("m", 10, 0.001)  # 0.1 ms a row, then COST_HISTORY slower chunks
    for _ in range(placement.COST_HISTORY):
        placement.record_cost("m", 10, 0.02)
    assert placement.row_seconds("m") == pytest.approx(0.002)  # the fast one has aged out


def test_a_model_that_went_to_the_pool_stays_there_and_one_not_yet_run_starts_here():
    fast = WhereRun()
    placement.record_cost("p", 10, 0.01)  # 1 ms a row
    one_second = 1000
    assert placement.runs_in_process(fast, "p", one_second)  # nothing spent here yet
    big = int(2 * placement.COLD_POOL_SECONDS / 1e-3)
    assert not placement.runs_in_process(fast, "p", big)  # worth warming the pool for
    assert not placement.runs_in_process(fast, "p", one_second)  # the pool is warm for it now
    assert placement.runs_in_process(fast, "p", 4)  # below a warm pool's dispatch cost


def test_answers_taken_from_kept_ones_do_not_lower_the_models_cost():
    # a chunk of kept answers takes ~0 s: counted as runs, it made the model look free (the
    # rule keeps the smallest recent cost), and its next big batch ran in this process
    from uqkit.execution.model import ModelOutput
    from uqkit.execution.propagation import _Run

    def chunk(seconds, kept):
        return ModelOutput(np.ones((8, 1)), np.zeros(8, int), np.array(["ok"] * 8),
                           seconds=seconds, kept=kept)

    run = _Run(WhereRun(), np.ones((24, 2)), 8, None, False)
    run.cost_key = "kept-answers"
    run._finish(0, chunk(0.0004, kept=8))
    assert placement.row_seconds("kept-answers") is None
    run._finish(1, chunk(0.4, kept=0))
    run._finish(2, chunk(0.2004, kept=4))
    assert placement.row_seconds("kept-answers") == pytest.approx(0.05)
