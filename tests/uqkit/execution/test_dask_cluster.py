"""A Dask cluster that cannot run the waiting chunks is named while they wait: no worker, or a
scheduler that does not answer. Once workers come, the runs go on and end as they would have.
"""
import logging
import threading
import time

import numpy as np
import pytest

from uqkit import propagate
from uqkit.execution import dask_cluster
from uqkit.execution.dask_cluster import DaskExecutor


class _Client:
    """A client whose scheduler reports the given worker counts in turn (an exception is
    raised instead of answering)."""

    def __init__(self, answers):
        self.answers, self.asked = list(answers), 0

    def get_executor(self):
        return None

    def scheduler_info(self):
        self.asked += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return {"workers": {f"w{i}": {} for i in range(answer)}}


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_no_worker_is_warned_after_the_silence_then_at_each_doubling(caplog):
    client = _Client([0] * 6 + [2])
    ex = DaskExecutor(client, "tcp://h:1", silence=30)
    with caplog.at_level(logging.WARNING, logger="uqkit"):
        for now in (0, 10, 28, 30, 58, 61):  # warned at 30 s; the next one is due at 60 s
            ex.waiting(5, now=now)
        assert len(_warnings(caplog)) == 2
        first, second = _warnings(caplog)
        assert "tcp://h:1 has no worker, for 30 s now; 5 chunks" in first
        assert "dask worker tcp://h:1" in first and "Ctrl-C" in first
        assert "for 61 s now" in second
        ex.waiting(5, now=64)  # a worker is back
    assert "runs the chunks again" in _warnings(caplog)[-1]
    assert client.asked == 7


def test_a_finished_chunk_ends_a_warned_wait_and_the_next_counts_from_its_own_start(caplog):
    """The line that the runs go on came only from an idle poll that found workers, often
    never (the chunks had finished before it), and a later batch's wait counted from the
    earlier one's start."""
    ex = DaskExecutor(_Client([0] * 4), "tcp://h:1", silence=30)
    with caplog.at_level(logging.WARNING, logger="uqkit"):
        ex.waiting(3, now=0)
        ex.waiting(3, now=31)  # warned
        ex.waiting(2, now=32, progressed=True)  # a chunk finished
        assert "runs the chunks again" in _warnings(caplog)[-1]
        ex.waiting(2, now=40)  # no worker again: a new wait, from 40 s
        ex.waiting(2, now=60)
    assert len(_warnings(caplog)) == 2


def test_a_client_that_lost_its_scheduler_is_named_without_asking_it(caplog):
    """The real client answers scheduler_info() from its cache once its scheduler is gone
    (after a block of about 30 s): its status says it instead."""
    client = _Client([])
    client.status = "connecting"
    ex = DaskExecutor(client, "tcp://h:1", silence=5)
    with caplog.at_level(logging.WARNING, logger="uqkit"):
        ex.waiting(1, now=0)
        ex.waiting(1, now=6)
    assert "does not answer (the client's connection is 'connecting')" in _warnings(caplog)[0]
    assert client.asked == 0


def test_the_scheduler_is_asked_at_most_every_check_interval():
    client = _Client([0] * 3)
    ex = DaskExecutor(client, "tcp://h:1", silence=30)
    for now in np.arange(0, 2 * dask_cluster.WORKER_CHECK_SECONDS + 0.1, 0.25):
        ex.waiting(1, now=now)
    assert client.asked == 3


def test_a_cluster_with_workers_is_never_warned_about(caplog):
    ex = DaskExecutor(_Client([1] * 50), "tcp://h:1", silence=1)
    with caplog.at_level(logging.WARNING, logger="uqkit"):
        for now in range(50):
            ex.waiting(3, now=now)
    assert _warnings(caplog) == []


def test_a_scheduler_that_does_not_answer_is_named(caplog):
    ex = DaskExecutor(_Client([OSError("connection refused")] * 2), "tcp://h:1", silence=5)
    with caplog.at_level(logging.WARNING, logger="uqkit"):
        ex.waiting(1, now=0)
        ex.waiting(1, now=6)
    assert "does not answer (OSError: connection refused), for 6 s now; 1 chunk of runs " \
        "waits" in _warnings(caplog)[0]


def test_a_short_gap_between_workers_is_not_warned_about(caplog):
    """The wait counts from the moment the cluster lost its workers, not from the first one
    it lost: a worker back before the silence ends resets it."""
    ex = DaskExecutor(_Client([0, 1, 0, 0]), "tcp://h:1", silence=10)
    with caplog.at_level(logging.WARNING, logger="uqkit"):
        for now in (0, 5, 8, 17):
            ex.waiting(1, now=now)
    assert _warnings(caplog) == []  # no worker from 8 s on: 9 s is under the silence


def _double(X):
    return 2.0 * X[:, :1]


def test_a_study_on_a_cluster_without_workers_says_so_and_ends_when_one_comes(
        caplog, monkeypatch):
    """On a real cluster with no worker, propagate warns while its chunks wait, then runs
    them on the worker started after the warning, with the same numbers as in-process."""
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(dask_cluster, "NO_WORKER_SECONDS", 1.0)
    monkeypatch.setattr(dask_cluster, "WORKER_CHECK_SECONDS", 0.2)
    X = np.random.default_rng(0).normal(size=(24, 2))
    with distributed.LocalCluster(n_workers=0, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        warned_first = []

        def start_a_worker_once_warned():  # or after 20 s: a silent wait fails, not hangs
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if any("has no worker" in m for m in _warnings(caplog)):
                    warned_first.append(True)
                    break
                time.sleep(0.05)
            cluster.scale(1)

        helper = threading.Thread(target=start_a_worker_once_warned, daemon=True)
        with caplog.at_level(logging.WARNING, logger="uqkit"):
            helper.start()
            res = propagate(_double, X, dask=cluster.scheduler_address, chunk_size=6,
                            progress=False)
        helper.join(5)
    warned = [m for m in _warnings(caplog) if "Dask cluster" in m]
    assert warned_first and cluster.scheduler_address in warned[0], warned
    assert "4 chunks of runs wait" in warned[0]
    assert np.array_equal(res.outputs, _double(X)) and res.computed == 24
