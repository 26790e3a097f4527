"""A tiny calibration study end to end: the measurements are the FE model's at the truth plus
the seeded noise, the comparisons are the distances between the saved draws, and bad
settings are refused."""
import json
import os

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from studies.calibration import CONTROL, VARIANTS, CalibrationStudy, run
from uqkit import sample
from uqkit.adapters import MembraneModel
from uqkit.presets import table3


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("calibration")
    study = CalibrationStudy(out=str(out), n_samples=200, n_train=32, max_iter=100,
                             workers=2, progress=False)
    return study, run(study, log=lambda *_: None)


def test_the_measurements_are_the_fe_deflections_at_the_truth_plus_the_seeded_noise(tiny):
    study, report = tiny
    truth = sample(table3(), 1, seed=0).values
    assert list(report["truth"].values()) == truth[0].tolist()
    w = MembraneModel(probe_frame="relative")(truth)[0][0]
    noise = 0.01 * np.abs(w)
    assert np.allclose(report["noise_std"], noise, rtol=1e-12)
    expected = w + np.random.default_rng([0, 1]).standard_normal((1, 3)) * noise
    assert np.allclose(report["observed"], expected, rtol=1e-12)


def test_the_comparisons_are_the_distances_between_the_saved_draws(tiny):
    study, report = tiny
    draws = np.load(os.path.join(study.out, "posterior_draws.npz"))
    names = list(draws["names"])
    fe = draws["fe"]
    for variant in (CONTROL, *VARIANTS):
        for j, name in enumerate(names):
            got = report["against_fe"][variant][name]
            sd = fe[:, j].std(ddof=1)
            assert got["mean_shift_in_std"] == pytest.approx(
                (draws[variant][:, j].mean() - fe[:, j].mean()) / sd, rel=1e-9)
            assert got["wasserstein_in_std"] == pytest.approx(
                wasserstein_distance(draws[variant][:, j], fe[:, j]) / sd, rel=1e-9)
            lo, hi = np.quantile(draws[variant][:, j], [0.025, 0.975])
            assert got["holds_truth"] == bool(lo <= report["truth"][name] <= hi)
    posts = report["posteriors"]
    assert posts["fe"]["model_runs"] == 200 * (
        1 + sum(stage["steps"] for stage in posts["fe"]["diagnostics"]["stages"]))
    assert report["goal"]["fe_run_fraction"] == pytest.approx(32 / posts["fe"]["model_runs"])
    assert 0 <= posts["bdl"]["model_variance_share"] <= 1
    assert posts["bdl-no-variance"]["model_variance_share"] is None
    for name in ("report.md", "posterior_corner.png"):
        assert os.path.getsize(os.path.join(study.out, name)) > 1000
    assert json.load(open(os.path.join(study.out, "report.json")))["goal"] == report["goal"]


@pytest.mark.parametrize("kw, message", [({"noise": 0}, "noise"), ({"n_samples": 10}, "n_samples"),
                                         ({"n_train": 2}, "n_train")])
def test_bad_settings_are_refused(tmp_path, kw, message):
    with pytest.raises(ValueError, match=message):
        CalibrationStudy(out=str(tmp_path), **kw)


def test_another_noise_on_the_same_out_runs_beside_the_first(tiny):
    """Its FE stores sat at fixed paths: another noise (seed, sample count...) on the same
    --out stopped in a traceback, "holds other inputs than this run". The report is strict
    JSON (NaN as null), and the first settings' runs are loaded again afterwards."""
    from dataclasses import replace

    study, report = tiny
    other = run(replace(study, noise=0.02), log=lambda *_: None)
    assert other["noise_std"] == pytest.approx(2 * np.asarray(report["noise_std"]), rel=1e-12)
    json.loads(open(os.path.join(study.out, "report.json")).read(),
               parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    again = run(study, log=lambda *_: None)
    assert again["fe_train_loaded"] == again["fe_train_runs"] == 32
    assert again["posteriors"]["fe"]["mean"] == report["posteriors"]["fe"]["mean"]
