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
    study = RegressionStudy(out=str(tmp_path), seeds=2, n_test=200,
                            max_iter=300, restarts=2, workers=1, progress=False)
    report = run_regression(study, log=lambda *_: None)
    data = json.load(open(tmp_path / "report.json"))
    noises = {str(nz) for nz in NOISES}
    assert set(data["r2"]) == set(METHODS) and set(data["rmse"]) == set(METHODS)
    assert {"GP", "BDL-hierarchical"} <= set(METHODS)
    assert set(data["r2"]["BDL-hierarchical"]) == noises
    # the keys, in the shape of "r2": {method: {noise: mean}}
    for key in ("r2_inside", "r2_train"):
        assert set(data[key]) == set(METHODS)
        assert all(set(row) == noises for row in data[key].values())
    assert {"GP", "BDL", "BDL-hierarchical"} <= set(data["coverage"])
    for row in data["coverage"].values():
        assert set(row) == noises and all(0 <= v <= 1 for v in row.values())
    # a cell is the mean over seeds of a fit anyone can redo: the PR row, recomputed
    from surrogates import PolynomialRegression
    for nz in (0.0, 0.5):
        r2, rmse, inside = [], [], []
        for seed in range(2):
            x, y, xt, yt, _ = make_data(seed, nz, study.n_train, study.n_test)
            pred = PolynomialRegression(degree=11).fit(x, y).predict(xt)
            r2.append(M.r2(yt, pred))
            rmse.append(M.rmse(yt, pred))
            keep = (xt[:, 0] >= x.min()) & (xt[:, 0] <= x.max())
            inside.append(M.r2(yt[keep], pred[keep]))
        assert data["r2"]["PR"][str(nz)] == pytest.approx(np.mean(r2), rel=1e-9)
        assert data["rmse"]["PR"][str(nz)] == pytest.approx(np.mean(rmse), rel=1e-9)
        assert data["r2_std"]["PR"][str(nz)] == pytest.approx(np.std(r2, ddof=1), rel=1e-6)
        assert data["r2_inside"]["PR"][str(nz)] == pytest.approx(np.mean(inside), rel=1e-9)
    assert data["r2"]["GP"]["0.0"] > 0.95  # a GP interpolates clean x sin x from 30 points
    # a clean GP fit scored inside the data's range is no worse than on the whole grid
    assert data["r2_inside"]["GP"]["0.0"] >= data["r2"]["GP"]["0.0"] - 1e-3
    # the Laplace BDL with the hierarchical prior fits clean data closely
    assert data["r2_train"]["BDL-hierarchical"]["0.0"] > 0.99
    # the goals, per Bayesian row and noise, read from the keys above
    goals = report["goals"]["BDL-hierarchical"]
    assert set(goals) == noises
    for nz, g in goals.items():
        assert g["r2_train"] == data["r2_train"]["BDL-hierarchical"][nz]
        assert g["r2_inside_met"] == (g["r2_inside"] >= data["r2_inside"]["GP"][nz] - 0.03)
        assert g["coverage_met"] == (0.85 <= data["coverage"]["BDL-hierarchical"][nz] <= 0.99)
    assert set(data["goals_met"]["BDL-hierarchical"]) == {"r2_train", "r2_inside", "coverage"}
    assert all(0 <= v <= 2 for row in data["draws_reaching_paper_train"].values()
               for v in row.values())
    assert os.path.getsize(tmp_path / "fig3_fits.png") > 10_000
    md = open(tmp_path / "report.md").read()
    assert "Goals" in md and "BDL-hierarchical" in md
    # the goal lines carry the measured numbers
    assert f"{data['r2_train']['BDL-hierarchical']['0.9']:.4f} vs 0.9516" in md
    assert data["rmse_train"]["GP"]["0.0"] < 0.05  # interpolates clean data
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
    kw = dict(seeds=2, epochs=25, batch_size=60, lr=0.03, max_iter=150, restarts=1,
              workers=2, progress=False)
    study = MoonsStudy(out=str(tmp_path), **kw)
    report = run_moons(study, log=lambda *_: None)
    data = json.load(open(tmp_path / "report.json"))
    logged = []
    run_moons(study, log=logged.append)  # a rerun loads every fit
    assert any("moons: 0 fits computed" in str(line) for line in logged)
    # other settings: computed beside the old results, never mixed with them
    other = MoonsStudy(out=str(tmp_path), **dict(kw, epochs=26))
    logged = []
    run_moons(other, log=logged.append)
    assert any("moons: 24 fits computed, 0 loaded" in str(line) for line in logged)
    logged = []
    assert run_moons(study, log=logged.append)["accuracy"] == report["accuracy"]
    assert any("moons: 0 fits computed" in str(line) for line in logged)
    for metric in ("accuracy", "nll", "ece", "accuracy_min"):
        assert set(data[metric]) == set(PRIORS)
        assert all(set(v) == {"0.1", "0.3"} for v in data[metric].values())
    # the minimum over seeds, beside the mean
    for p in PRIORS:
        for nz in ("0.1", "0.3"):
            assert data["accuracy_min"][p][nz] == min(data["accuracy_seeds"][p][nz])
            assert data["accuracy_min"][p][nz] <= data["accuracy"][p][nz]
            assert data["goals"][p][nz]["met"] == (data["accuracy_min"][p][nz]
                                                   >= {"0.1": 0.99, "0.3": 0.88}[nz])
    # the Laplace rows by default; the hierarchical Cauchy prior has no Laplace marginal,
    # and the report says its pair mixes the prior with the inference
    assert data["vi_priors"] == ["hier-cauchy"]
    markdown = open(tmp_path / "report.md").read()
    assert markdown.count("the difference mixes the prior with the inference") == 1
    assert "- cauchy: " in markdown.split("mixes the prior")[0].splitlines()[-1]
    assert data["accuracy"]["normal"]["0.1"] > 0.95
    # calibration error at low noise is small, and stronger noise lowers accuracy
    assert all(data["ece"][p]["0.1"] < 0.1 for p in PRIORS)
    assert all(data["accuracy"][p]["0.3"] < data["accuracy"][p]["0.1"] for p in PRIORS)
    assert set(report["hierarchical_effect"]) == {"laplace", "normal", "cauchy"}
    md = open(tmp_path / "report.md").read()
    assert "stronger noise" in md and "min acc (0.1)" in md
    assert f"{data['accuracy_min']['normal']['0.3']:.4f}" in md
    for name in ("fig5_noise0.1.png", "fig5_noise0.3.png", "fig6_posteriors.png"):
        assert os.path.getsize(tmp_path / name) > 10_000


def test_laplace_classifier_fits_small_moons():
    """A Laplace BDLClassifier 2-5-5-2 on 300 two-moons points (noise 0.1) classifies the
    held-out 30% almost perfectly, for the direct and the hierarchical normal prior."""
    from studies.moons import make_data
    from surrogates import BDLClassifier, fit_many

    Xtr, ytr, Xv, yv = make_data(300, 0.1, 0)
    models = fit_many([BDLClassifier(hidden=(5, 5), prior=p, inference="laplace",
                                     max_iter=500, seed=0, progress=False)
                       for p in ("normal(0, 1)", "hierarchical-normal")], [(Xtr, ytr)] * 2)
    for m in models:
        assert M.accuracy(yv, m.predict_proba(Xv)) >= 0.97


def test_evidence_noise_exceeds_the_map_noise_on_few_points():
    """With the study's default (noise by the Laplace evidence) a Laplace BDL on 30 points
    predicts the noise variance RSS / (n - gamma), gamma in (1, n) the parameters the data
    determine, above the MAP's own (``noise="map"``), while the predictive mean is the same
    MAP network's."""
    from studies.regression import RegressionStudy, bdl_models
    from surrogates import fit_many

    draws = [make_data(seed, 0.5, 30, 200) for seed in range(2)]
    fits = {}
    for noise in ("evidence", "map"):
        study = RegressionStudy(out="unused", max_iter=400, noise=noise, workers=1)
        fits[noise] = fit_many([bdl_models(study, s)["BDL-hierarchical"] for s in range(2)],
                               [d[:2] for d in draws])
    for ev, mp, (x, y, xt, _, _) in zip(fits["evidence"], fits["map"], draws):
        assert np.array_equal(ev.predict(xt), mp.predict(xt))
        rss = np.sum((y - ev.predict(x)) ** 2)
        noise_ev = float(ev.predict_distribution(xt[:1]).aleatoric_var[0])
        noise_map = float(mp.predict_distribution(xt[:1]).aleatoric_var[0])
        assert noise_ev > noise_map
        assert 1 < 30 - rss / noise_ev < 30

def test_regression_paper_rows_train_by_mean_field_vi():
    """--paper: the Bayesian rows are the paper's mean-field VI (a KL is recorded), plus
    BDL-warm and BDL-tempered; the default rows are Laplace fits."""
    from studies.regression import BAYESIAN_PAPER, bdl_models
    from studies.regression.study import BayesianCells, _bdl_task

    study = RegressionStudy(out="unused", seeds=1, n_test=50, bdl_epochs=30, paper=True,
                            workers=1, progress=False)
    assert {m.inference for m in bdl_models(study, 0).values()} == {"meanfield"}
    cells = _bdl_task(BayesianCells(study, 0.5))["seed0"]
    assert set(cells) == set(BAYESIAN_PAPER)
    assert all("kl" in c and 0 <= c["coverage"] <= 1 for c in cells.values())
    default = RegressionStudy(out="unused", workers=1, progress=False)
    assert {m.inference for m in bdl_models(default, 0).values()} == {"laplace"}
    assert bdl_models(default, 0)["BDL-hierarchical"].prior == "hierarchical-normal"


def test_the_recorded_objective_is_the_one_the_map_minimised():
    """The objective a Laplace fit records (beside the evidence restarts are ranked by) is the
    negative log joint per point at its MAP weights and the MAP's own noise, recomputed here;
    the evidence's noise (which replaces the MAP's in the posterior) must not enter it."""
    import torch

    from studies.regression import RegressionStudy, bdl_models
    from surrogates import fit_many
    from surrogates.priors import make_prior

    def neg_log_joint(model, X, y):
        post, net = model.laplace_, model.net_
        x = torch.as_tensor(model.x_scaler_.transform(X), dtype=torch.float64)
        Y = torch.as_tensor(model.y_scaler_.transform(y.reshape(len(x), -1)),
                            dtype=torch.float64)
        f = net.forward_one(post.w, x)
        lt = post.map_log_tau
        loss = float((0.5 * ((Y - f) ** 2).sum(0) * torch.exp(lt)).sum()
                     - 0.5 * len(x) * lt.sum())
        pen = float(make_prior(model.prior).neg_log_density(post.w[None], net.layers)[0])
        return (loss + pen) / len(x)

    x, y = make_data(0, 0.5, 30, 200)[:2]
    fits = [fit_many([bdl_models(RegressionStudy(out="unused", max_iter=300, noise=noise,
                                                 workers=1), 0)["BDL-hierarchical"]],
                     [(x, y)])[0] for noise in ("evidence", "map")]
    assert not np.allclose(fits[0].laplace_.log_tau, fits[1].laplace_.log_tau)
    for fit in fits:
        assert fit.laplace_.objective == pytest.approx(neg_log_joint(fit, x, y), rel=1e-10)
        assert fit.history_["objective"] == fit.laplace_.objective
    assert fits[0].laplace_.objective == fits[1].laplace_.objective


def test_the_polynomial_ceiling_is_the_best_least_squares_polynomial():
    """0.9658 (degree 11 on the 1000-point grid) by another route: a least-squares solve on
    a Legendre basis of x / 10, and no polynomial of the degree does better (a perturbed
    coefficient vector scores lower)."""
    x = np.linspace(-10, 10, 1000)
    y = truth(x)
    basis = np.polynomial.legendre.legvander(x / 10, 11)
    coef, *_ = np.linalg.lstsq(basis, y, rcond=None)

    def r2(c):
        return 1 - np.sum((y - basis @ c) ** 2) / np.sum((y - y.mean()) ** 2)

    assert polynomial_ceiling(11, 1000) == pytest.approx(r2(coef), abs=1e-10)
    assert round(r2(coef), 4) == 0.9658
    rng = np.random.default_rng(0)
    assert all(r2(coef + 1e-3 * rng.normal(size=coef.shape)) < r2(coef) for _ in range(5))


def test_the_evidence_never_chooses_a_nan():
    """np.argmax took a NaN evidence for the highest (restart 1 of [-10, nan, 5]), and
    max() kept a NaN candidate that came first."""
    from studies.common import best_by_evidence, evidence_choice

    nan = float("nan")
    assert best_by_evidence([-10.0, nan, 5.0]) == 2
    cells = {"A": [{"log_evidence": nan, "r2": 0.1}, {"log_evidence": 1.0, "r2": 0.5}],
             "B": [{"log_evidence": 3.0, "r2": 0.9}, {"log_evidence": nan, "r2": 0.2}]}
    out = evidence_choice(cells, ["r2"])
    assert out["chosen"] == ["B", "A"] and out["r2"] == [0.9, 0.5]


@pytest.mark.parametrize("nll, accuracy, verdict", [
    (-0.1, -0.05, "mixed: a lower NLL but a lower accuracy"),  # was "no clear difference"
    (0.1, 0.05, "mixed: a higher NLL but a higher accuracy"),  # was "no, it did worse"
    (-0.1, 0.0, "yes"), (0.1, -0.01, "no, it did worse"), (0.0, -0.05, "no clear difference")])
def test_the_moons_verdict_names_a_mixed_outcome(nll, accuracy, verdict):
    from studies.moons.report import hierarchical_verdict

    assert hierarchical_verdict(nll, accuracy, 0.01) == verdict


def test_the_moons_nll_difference_is_judged_by_its_paired_standard_error():
    """Both priors fit each seed's data, so a seed's difficulty moves both NLLs: the
    difference's standard error is that of the seeds' differences (against a t-based check
    by scipy), where the unpaired one (the two spreads combined) read 0.15 for differences
    that never vary by more than 0.002 here, and a consistent gain read 'no clear
    difference'."""
    from scipy import stats

    from studies.moons.report import _effect, hierarchical_verdict

    direct = [0.20, 0.45, 0.80, 0.30, 0.60]  # the seeds differ a lot
    hier = [d - 0.05 + 0.001 * (-1) ** s for s, d in enumerate(direct)]  # always ~0.05 lower
    r = {m: {p: {nz: 0.0 for nz in ("0.1", "0.3")} for b in ("laplace", "normal", "cauchy")
             for p in (b, f"hier-{b}")} for m in ("accuracy", "nll", "ece")}
    r["nll_seeds"] = {p: {nz: (hier if p.startswith("hier") else direct)
                          for nz in ("0.1", "0.3")} for p in r["nll"]}
    for p, row in r["nll_seeds"].items():
        r["nll"][p] = {nz: float(np.mean(v)) for nz, v in row.items()}
    e = _effect(r)["normal"]["0.3"]
    assert e["nll_se"] == pytest.approx(stats.ttest_rel(hier, direct).statistic ** -1
                                        * e["nll"], rel=1e-9)
    assert e["nll_se"] < 0.001 < 0.05
    assert hierarchical_verdict(e["nll"], 0.0, e["nll_se"]) == "yes"


def test_one_moons_seed_gives_no_verdict_and_the_cauchy_pair_says_what_it_mixes():
    """With --seeds 1 the paired standard error was 0, and any difference read as 'yes' or
    'no, it did worse'; the cauchy pair compares a Laplace fit with a mean-field one."""
    from studies.moons.report import _effect, hierarchical_verdict, paired_standard_error

    assert np.isnan(paired_standard_error([0.18], [0.20]))
    assert hierarchical_verdict(-0.1, 0.0, float("nan")) == \
        "n/a: one seed gives no standard error"
    r = {m: {p: {nz: 0.0 for nz in ("0.1", "0.3")} for b in ("laplace", "normal", "cauchy")
             for p in (b, f"hier-{b}")} for m in ("accuracy", "nll", "ece")}
    r["nll_seeds"] = {p: {nz: [0.2] for nz in ("0.1", "0.3")} for p in r["nll"]}
    assert all(np.isnan(e["0.3"]["nll_se"]) for e in _effect(r).values())
