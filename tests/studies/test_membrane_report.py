"""The membrane report's drafts: figures made in the background as the pool's results arrive."""
import os
from types import SimpleNamespace

import numpy as np
import pytest

from studies.membrane.report import ReportDrafts, truth_statistics
from studies.membrane.settings import PROBES


def _inputs(out, rng):
    """A study's settings, FE data and pool results, small and synthetic, in arrival order."""
    study = SimpleNamespace(out=str(out), priors={"direct": "d", "hierarchical": "h"},
                            train_sizes=(16, 32), n_uq_train=64, n_paths=2, n_surrogate_mc=500,
                            nx=4, ny=2)
    fe = SimpleNamespace(Wt=rng.normal(size=(400, 3)), Wv=rng.normal(size=(20, 3)))
    results = {
        "table-16-part0": {"table-direct-16-seed0": {"fig7c_w_p1": rng.normal(size=200).tolist()}},
        "table-32-part0": {"table-direct-32-seed0": {"fig7c_w_p1": rng.normal(size=200).tolist()}},
        "load-paths": [{"probes": list(PROBES), "w": rng.normal(size=(5, 3)).tolist(),
                        "pressure": np.linspace(0, 1, 5).tolist()} for _ in range(2)],
    }
    for k, prior in enumerate(study.priors):
        curves = {p: {"mean": (rng.random(300) + k).tolist(),
                      "band": [rng.random(300).tolist(), (rng.random(300) + 1).tolist()]}
                  for p in PROBES}
        results[f"uq-64-{prior}-fit"] = {"fit_seconds": 1.0}
        results[f"uq-64-{prior}"] = {"kde": curves}
    return study, fe, results


def _draw(out, arrival):
    out.mkdir()
    study, fe, results = _inputs(out, np.random.default_rng(0))
    with ReportDrafts(study, fe, 3, list(results)) as drafts:
        for name in arrival(list(results)):
            drafts.take(name, results[name])
        figures, truth, strain = drafts.finish()
    return figures, truth, strain, fe


def test_the_figures_do_not_depend_on_the_order_results_arrive_in(tmp_path):
    """Fig. 8 keeps the study's order of priors (colours, legend), whichever UQ task ends
    first; every figure is drawn once all its tasks are in."""
    forward = _draw(tmp_path / "a", lambda names: names)
    backward = _draw(tmp_path / "b", lambda names: names[::-1])
    assert list(forward[0]) == ["fig7a", "fig7c", "fig8"]
    for fig in forward[0]:
        assert open(forward[0][fig], "rb").read() == open(backward[0][fig], "rb").read(), fig
    # the drafts' other parts: the truth's statistics, as computed directly, and the strain
    fe = forward[3]
    assert forward[1] == truth_statistics(fe.Wt)
    assert forward[1]["p2"]["mean"] == pytest.approx(fe.Wt[:, 1].mean())
    assert forward[2] == backward[2] > 0


def test_fig8_waits_for_the_monte_carlo_tasks_not_the_fits(tmp_path):
    """Fig. 8 is drawn from the UQ Monte Carlo tasks' results: it starts once both are in,
    whether or not the fits' results have come (a fit stored from an earlier run, say)."""
    study, fe, results = _inputs(tmp_path, np.random.default_rng(0))
    with ReportDrafts(study, fe, 3, list(results)) as drafts:
        for name in results:
            if not name.endswith("-fit"):
                drafts.take(name, results[name])
        figures, _, _ = drafts.finish()
    assert os.path.basename(figures["fig8"]) == "fig8_kde.png" and os.path.isfile(figures["fig8"])


def test_a_figure_whose_tasks_did_not_all_arrive_is_an_error_that_names_them(tmp_path):
    study, fe, results = _inputs(tmp_path, np.random.default_rng(0))
    with ReportDrafts(study, fe, 3, list(results)) as drafts:
        for name in results:
            if name != "table-32-part0":
                drafts.take(name, results[name])
        with pytest.raises(RuntimeError, match="fig7c.*table-32-part0"):
            drafts.finish()
