"""Regression tests for defects found in review."""
import functools
import os

import numpy as np
import pytest

from fem import Membrane, solve_batch
from uqkit import propagate
from uqkit.adapters import SurrogateModel
from uqkit.model import normalise_output
from uqkit.statistics import quantile_interval
from uqkit.store import StoreMismatchError


def test_serial_run_saves_each_chunk_and_an_interrupt_keeps_them(tmp_path):
    seen = []

    def model(X):
        seen.append(len(os.listdir(tmp_path / "s" / "chunks")))
        if len(seen) == 4:
            raise KeyboardInterrupt
        return X

    with pytest.raises(KeyboardInterrupt):
        propagate(model, np.arange(50.0).reshape(-1, 1), executor="serial", chunk_size=5,
                  store=tmp_path / "s", progress=False)
    assert seen == [0, 1, 2, 3]  # chunk k starts with k finished chunks on disk
    assert len(os.listdir(tmp_path / "s" / "chunks")) == 3


def _scaled(X, a):
    return a * X


def test_store_refuses_a_differently_configured_model(tmp_path):
    X = np.arange(8.0).reshape(-1, 2)
    propagate(functools.partial(_scaled, a=1.0), X, executor="serial", store=tmp_path / "s",
              progress=False)
    with pytest.raises(StoreMismatchError, match="model"):
        propagate(functools.partial(_scaled, a=100.0), X, executor="serial",
                  store=tmp_path / "s", progress=False)


def test_surrogate_adapter_takes_array_predictions(tmp_path):
    from sklearn.linear_model import LinearRegression

    X = np.random.default_rng(0).normal(size=(30, 2))
    lr = LinearRegression().fit(X, X @ [1.0, 2.0])
    res = propagate(SurrogateModel(lr), X[:4], executor="serial", progress=False)
    assert res.n_failed == 0 and np.allclose(res.outputs[:, 0], X[:4] @ [1.0, 2.0])
    other = LinearRegression().fit(X, X @ [3.0, 2.0])
    assert SurrogateModel(lr).describe() != SurrogateModel(other).describe()


def test_failed_rows_are_nan_and_reasons_must_align():
    out = normalise_output((np.ones((3, 2)), np.array([0, 1, 0])), 3)
    assert np.isnan(out.values[1]).all() and np.isfinite(out.values[[0, 2]]).all()
    assert out.reasons.tolist() == ["ok", "model status 1", "ok"]
    with pytest.raises(ValueError, match=r"reasons of shape \(1,\); expected \(3,\)"):
        normalise_output((np.ones((3, 2)), np.array([0, 1, 0]), ["bad"]), 3)


def test_batch_probes_are_checked_per_row():
    probes = {"q": (2.5, 1.2)}
    res = solve_batch([[3.0, 1.5, 0.0015, 210.0, 0.3], [2.0, 1.0, 0.0015, 210.0, 0.3]],
                      probes=probes)
    single = Membrane(3.0, 1.5, 0.0015, 210.0, 0.3, probes=probes).solve().probe_w["q"]
    assert res.converged.tolist() == [True, False] and res.w[0, 0] == single
    assert "lies outside" in res.reasons[1]


def test_quantile_interval_is_nan_beyond_the_sample():
    y = np.sort(np.random.default_rng(0).uniform(size=200))
    lo, hi = quantile_interval(y, 0.99)
    assert np.isnan(hi) and lo < 0.99
    lo, hi = quantile_interval(y, 0.5)
    assert lo < np.median(y) < hi


def test_bdl_validation_with_a_one_dimensional_target():
    from surrogates import BDL

    x = np.random.default_rng(0).uniform(-1, 1, (80, 1))
    y = 2 * x[:, 0]
    m = BDL(hidden=(8,), epochs=200, val_fraction=0.25, eval_every=50, lr=0.02, seed=0).fit(x, y)
    # per-point validation error of a fitted line (comparing every point with every
    # prediction, as a (n, n) broadcast would, gives ~0.9 here)
    assert max(m.history_["val_rmse"]) < 0.3
