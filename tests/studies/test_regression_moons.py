"""Fast versions of the regression and two-moons studies: structure and sane values."""
import json
import os

import numpy as np
import pytest

from studies.moons import PRIORS, MoonsStudy
from studies.moons import run as run_moons
from studies.regression import (METHODS, NOISES, PAPER, RegressionStudy, make_data,
                                polynomial_ceiling, truth)
from surrogates import metrics as M
from studies.regression import run as run_regression


def test_regression_study_fast(tmp_path):
    study = RegressionStudy(out=str(tmp_path), seeds=2, n_test=200, bdl_epochs=200,
                            nn_epochs=300, workers=1, progress=False)
    report = run_regression(study, log=lambda *_: None)
    data = json.load(open(tmp_path / "report.json"))
    assert set(data["r2"]) == set(METHODS) and set(data["rmse"]) == set(METHODS)
    assert set(data["r2"]["BDL"]) == {str(nz) for nz in NOISES}
    # a cell is the mean over seeds of a fit anyone can redo: the PR row, recomputed
    from surrogates import PolynomialRegression
    for nz in (0.0, 0.5):
        r2, rmse = [], []
        for seed in range(2):
            x, y, xt, yt, _ = make_data(seed, nz, study.n_train, study.n_test)
            pred = PolynomialRegression(degree=11).fit(x, y).predict(xt)
            r2.append(M.r2(yt, pred))
            rmse.append(M.rmse(yt, pred))
        assert data["r2"]["PR"][str(nz)] == pytest.approx(np.mean(r2), rel=1e-9)
        assert data["rmse"]["PR"][str(nz)] == pytest.approx(np.mean(rmse), rel=1e-9)
        assert data["r2_std"]["PR"][str(nz)] == pytest.approx(np.std(r2, ddof=1), rel=1e-6)
    assert data["r2"]["GP"]["0.0"] > 0.95  # a GP interpolates clean x sin x from 30 points
    # a down-weighted KL narrows the posterior: the tempered row's intervals cover less
    assert all(data["BDL-tempered_coverage95"][nz] <= data["BDL-warm_coverage95"][nz]
               for nz in map(str, NOISES))
    assert set(report["goals"]) == {str(nz) for nz in NOISES}
    assert set(data["r2_hull"]) == set(METHODS)
    # a clean GP fit scored inside the data's range is no worse than on the whole grid
    assert data["r2_hull"]["GP"]["0.0"] >= data["r2"]["GP"]["0.0"] - 1e-3
    for name in ("BDL", "BDL-warm", "BDL-tempered"):
        assert set(data["paired_vs_best"][name]) == {str(nz) for nz in NOISES}
    # a posterior that fits 30 points has moved far from the prior (tens of nats); the
    # tempered one, whose KL is down-weighted, moves further still
    for nz in map(str, NOISES):
        assert 10 < data["BDL-warm_kl"][nz] < data["BDL-tempered_kl"][nz]
    assert all(0 <= v <= 2 for row in data["draws_reaching_paper"].values()
               for v in row.values())
    assert os.path.getsize(tmp_path / "fig3_fits.png") > 10_000
    assert "Goals" in open(tmp_path / "report.md").read()
    # the paper's metric: training points against their noisy targets
    for key in ("r2_train", "rmse_train"):
        assert set(data[key]) == set(METHODS)
    assert data["rmse_train"]["GP"]["0.0"] < 0.05  # interpolates clean data
    assert set(data["goals_train"]) == {"BDL", "BDL-warm", "BDL-tempered"}
    assert set(data["paired_vs_best_train"]["BDL-tempered"]) == {str(nz) for nz in NOISES}
    assert abs(data["pr_grid_ceiling"] - polynomial_ceiling(11, 200)) < 1e-12


def test_polynomial_ceiling_is_the_best_degree_11_fit():
    """No degree-11 polynomial beats the least-squares fit to the grid itself, and that is below
    the paper's PR row (0.995 at sigma = 0)."""
    import numpy as np

    xt = np.linspace(-10, 10, 1000)
    yt = truth(xt)
    ceiling = polynomial_ceiling(11, 1000)
    coef = np.polynomial.Polynomial.fit(xt, yt, 11).convert().coef
    rng = np.random.default_rng(0)
    for _ in range(20):  # perturbed polynomials only lose
        p = np.polynomial.Polynomial(coef * (1 + 1e-3 * rng.standard_normal(coef.size)))
        assert M.r2(yt, p(xt)) <= ceiling
    assert ceiling < PAPER["r2"]["PR"][0]


def test_paper_pr_row_is_a_training_set_metric():
    """Scored on its 30 training points against their noisy targets, a degree-11 polynomial
    lands on the paper's PR row (median of 200 draws within 0.01 of every value); on the clean
    test grid it does not come close (extrapolation)."""
    import numpy as np

    from surrogates import PolynomialRegression

    for i, noise in enumerate(NOISES):
        train, grid = [], []
        for seed in range(200):
            x, y, xt, yt, _ = make_data(seed, noise, 30, 200)
            model = PolynomialRegression(degree=11).fit(x, y)
            train.append(M.r2(y, model.predict(x).ravel()))
            grid.append(M.r2(yt, model.predict(xt).ravel()))
        assert abs(np.median(train) - PAPER["r2"]["PR"][i]) < 0.01, (noise, np.median(train))
        assert np.median(grid) < 0.9


def test_moons_study_fast(tmp_path):
    study = MoonsStudy(out=str(tmp_path), seeds=2, epochs=25, batch_size=60, lr=0.03,
                       workers=2, progress=False)
    report = run_moons(study, log=lambda *_: None)
    data = json.load(open(tmp_path / "report.json"))
    logged = []
    run_moons(study, log=logged.append)  # a rerun loads every fit
    assert any("moons: 0 fits computed" in str(line) for line in logged)
    # other settings: computed beside the old results, never mixed with them
    other = MoonsStudy(out=str(tmp_path), seeds=2, epochs=26, batch_size=60, lr=0.03,
                       workers=2, progress=False)
    logged = []
    run_moons(other, log=logged.append)
    assert any("moons: 24 fits computed, 0 loaded" in str(line) for line in logged)
    logged = []
    assert run_moons(study, log=logged.append)["accuracy"] == report["accuracy"]
    assert any("moons: 0 fits computed" in str(line) for line in logged)
    for metric in ("accuracy", "nll", "ece"):
        assert set(data[metric]) == set(PRIORS)
        assert all(set(v) == {"0.1", "0.3"} for v in data[metric].values())
    assert data["accuracy"]["normal"]["0.1"] > 0.85
    # calibration error at low noise is small, and stronger noise lowers accuracy
    assert all(data["ece"][p]["0.1"] < 0.1 for p in PRIORS)
    assert all(data["accuracy"][p]["0.3"] < data["accuracy"][p]["0.1"] for p in PRIORS)
    assert set(report["hierarchical_effect"]) == {"laplace", "normal", "cauchy"}
    md = open(tmp_path / "report.md").read()
    assert "stronger noise" in md
    for name in ("fig5_noise0.1.png", "fig5_noise0.3.png", "fig6_posteriors.png"):
        assert os.path.getsize(tmp_path / name) > 10_000
