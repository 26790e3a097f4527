"""The default membrane study against its acceptance targets (slow: ~3.5 minutes on 2 cores;
run with ``python -m pytest -m slow``)."""
import pytest

from studies.membrane import MembraneStudy, run


@pytest.mark.slow
def test_default_study_meets_distribution_targets(tmp_path):
    report = run(MembraneStudy(out=str(tmp_path), progress=False), log=lambda *_: None)
    # surrogate Monte Carlo vs FE truth
    assert all(v <= 0.02 for v in report["ks"].values())
    for prior in ("direct", "hierarchical"):
        assert all(v <= 0.02 for v in report["ks_by_prior"][prior].values())
        # accuracy grows with data and reaches the paper's level at the largest size
        r2 = report["r2"][prior]
        assert min(r2["512"]) > 0.999 and min(r2["64"]) > 0.98
        assert sum(r2["512"]) > sum(r2["256"]) > sum(r2["64"])
    assert report["fe_runs_failed"] == 0
