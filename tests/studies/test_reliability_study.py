"""A tiny reliability study end to end: the report's schema, the truth against the FE runs
themselves, resume, and bad settings."""
import json
import os
import warnings

import numpy as np
import pytest

from studies.reliability import ReliabilityStudy, run, threshold_from_pilot


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("reliability")
    study = ReliabilityStudy(out=str(out), quantile=0.02, n_pilot=500, n_truth=1000,
                             n_is=200, n_subset=200, max_runs=24, n_sobol=16, n_sobol_train=32,
                             n_sobol_surrogate=256, max_iter=200, workers=2, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = run(study, log=lambda *_: None)
    return study, report


def test_report_schema(tiny):
    study, _ = tiny
    data = json.load(open(os.path.join(study.out, "report.json")))
    assert isinstance(data["threshold"], float)
    assert set(data["truth"]) >= {"pf", "ci", "model_runs"}
    assert data["truth"]["model_runs"] == 1000
    lo, hi = data["truth"]["ci"]
    assert lo <= data["truth"]["pf"] <= hi
    assert set(data["methods"]) >= {"form", "sorm", "subset", "active-bdl", "active-gp"}
    for name, m in data["methods"].items():
        assert set(m) >= {"pf", "ci", "model_runs", "seconds"}, name
        assert 0 <= m["pf"] <= 1 and m["model_runs"] > 0 and m["seconds"] >= 0
        assert m["ci"] is None or m["ci"][0] <= m["ci"][1]
    assert data["methods"]["form"]["ci"] is None and data["methods"]["subset"]["ci"] is not None
    for name in ("active-bdl", "active-gp"):
        assert data["methods"][name]["model_runs"] <= 24
        assert data["methods"][name]["history"]
    for source in ("fe", "bdl"):
        for kind in ("first", "total"):
            assert np.shape(data["sobol"][source][kind]) == (5, 3)
    assert data["sobol"]["inputs"] == ["l", "b", "t", "E", "nu"]
    for name in ("active_learning.png", "sobol.png", "report.md"):
        assert os.path.getsize(os.path.join(study.out, name)) > 1000
    md = open(os.path.join(study.out, "report.md")).read()
    assert "| active-bdl" in md and "Sobol'" in md
    # the Sobol' section's warnings (n = 16: intervals that may undercover; a PCE of 32 runs)
    # are in the report, as the methods' are: they went to stderr alone
    lo, hi = data["threshold_choice"]["ci95"]  # to the threshold's own digits, not 3
    assert f"95% interval of that quantile: [{lo:.6g}, {hi:.6g}]" in md
    sobol_warnings = data["sobol"]["warnings"]
    assert any("may cover less than their level" in w for w in sobol_warnings)
    assert all(f"- {w}" in md.split("## Sobol'")[1] for w in sobol_warnings)


def test_truth_and_threshold_follow_the_fe_runs(tiny):
    """The threshold is the pilot's quantile and the truth counts the FE runs below it:
    checked against the FE model run directly on the same points."""
    from studies.reliability.study import _normal_points
    from uqkit.adapters import MembraneModel
    from uqkit.inputs.transforms import u_to_x
    from uqkit.presets import table3

    study, report = tiny
    model = MembraneModel(probe_frame="relative")
    pilot = model(u_to_x(table3(), _normal_points(500, 5, 11)))[0][:, 0]
    assert report["threshold"] == pytest.approx(np.quantile(pilot, 0.02), abs=1e-12)
    truth = model(u_to_x(table3(), _normal_points(1000, 5, 12)))[0][:, 0]
    fails = int(np.sum(truth <= report["threshold"]))
    assert report["truth"]["failures"] == fails
    assert report["truth"]["pf"] == fails / 1000


def test_every_estimate_agrees_with_the_fe_truth_it_is_compared_with(tiny):
    """Each method's Pf against the truth the study computes (1000 FE runs, 14 failures at
    the tiny settings): the sampling estimates' intervals overlap the truth's; SORM, which
    adds the curvature, lies inside the truth's interval and closer to it than FORM (the
    limit state bends away from the origin), and FORM within a factor of 3."""
    _, report = tiny
    truth, (t_lo, t_hi) = report["truth"]["pf"], report["truth"]["ci"]
    methods = report["methods"]
    for name in ("is", "subset", "active-gp", "active-bdl"):
        lo, hi = methods[name]["ci"]
        assert lo <= t_hi and t_lo <= hi, (name, methods[name]["ci"], report["truth"]["ci"])
    sorm, form = methods["sorm"]["pf"], methods["form"]["pf"]
    assert t_lo <= sorm <= t_hi
    assert abs(sorm - truth) < abs(form - truth)
    assert truth / 3 < form < 3 * truth


def test_threshold_interval_brackets_the_quantile():
    w = np.random.default_rng(0).normal(size=10_000)
    q, (lo, hi) = threshold_from_pilot(w, 1e-2)
    assert lo < q < hi
    # the exact quantile of N(0, 1) lies inside the 95% order-statistic interval
    assert lo < -2.3263 < hi


def test_rerun_recomputes_nothing(tiny):
    study, first = tiny
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = run(study, log=lambda *_: None)
    assert all(m["loaded"] for m in again["methods"].values())
    assert again["fe_runs"]["computed_in_truth"] == 0
    for name, m in first["methods"].items():
        assert again["methods"][name]["pf"] == m["pf"]
    assert again["truth"] == first["truth"]


@pytest.mark.parametrize("kwargs, message", [
    ({"quantile": 0.7}, "quantile must be a number in (0, 0.5), got quantile=0.7"),
    ({"quantile": float("nan")}, "quantile must be a number"),
    ({"n_pilot": 100}, "n_pilot=100 puts fewer than 5 pilot runs"),
    ({"n_truth": 1000}, "n_truth=1000 expects fewer than 10 failures"),
    ({"n_sobol": 1000}, "n_sobol must be a power of two, got n_sobol=1000"),
    ({"max_runs": 0}, "max_runs"),
    ({"workers": 0}, "workers must be an integer >= 1"),
])
def test_bad_settings_are_named(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ReliabilityStudy(out=str(tmp_path), **kwargs)


def test_cli_rejects_bad_settings(tmp_path, capsys):
    from uqkit.cli import main

    assert main(["study", "reliability", "--out", str(tmp_path), "--quantile", "2"]) == 2
    err = capsys.readouterr().err
    assert "quantile must be a number in (0, 0.5), got quantile=2.0" in err
    assert "Traceback" not in err


def test_the_command_starts_the_fe_pool_with_the_studys_settings(tmp_path, warm_up_seen):
    """`uqkit study reliability` has its FE pool started (studies.common.warm_fe_pool) with
    its own workers and mesh before it runs."""
    argv = ["reliability", "--workers", "3", "--no-progress", "--out", str(tmp_path / "out"),
            "--n-truth", "20000", "--n-pilot", "5000", "--n-sobol", "16", "--max-iter", "5"]
    seen = warm_up_seen(argv, "workers=study.workers, mesh=(study.nx, study.ny), out=study.out")
    defaults = ReliabilityStudy(out=str(tmp_path / "x"))
    assert seen == str({"workers": 3, "mesh": (defaults.nx, defaults.ny),
                        "out": str(tmp_path / "out")})
