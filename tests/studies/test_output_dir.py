"""A study's output directory is its own: another study given it is refused, the same study
resumes there."""
import os

import pytest

from studies.common import MARKER, REPORT_TITLES, study_of
from uqkit.cli import main

#: A regression study of a few seconds.
REGRESSION = ["--seeds", "1", "--max-iter", "10", "--restarts", "1", "--workers", "1",
              "--no-progress"]


@pytest.mark.parametrize("how", ["marker", "older report"])
def test_a_directory_holding_another_study_is_refused(tmp_path, capsys, how):
    """regression --out a membrane study's directory overwrote its report, exit code 0."""
    if how == "marker":
        (tmp_path / MARKER).write_text("membrane\n")
    else:  # an older uqkit's output: no marker, the study named by its report's title
        (tmp_path / "report.md").write_text("# Membrane UQ study (paper example 3)\n\nR^2\n")
    before = sorted(os.listdir(tmp_path))
    assert main(["study", "regression", "--out", str(tmp_path), *REGRESSION]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("uqkit study regression: --out ")
    assert "the membrane study" in err[0] and "give the regression study another --out" in err[0]
    assert sorted(os.listdir(tmp_path)) == before


def test_a_study_marks_its_directory_resumes_there_and_the_api_refuses_another(tmp_path,
                                                                                capsys):
    from studies.moons import MoonsStudy
    from studies.moons import run as run_moons

    (tmp_path / "notes.txt").write_text("a directory of no study is taken as it is")
    assert main(["study", "regression", "--out", str(tmp_path), *REGRESSION]) == 0
    assert (tmp_path / MARKER).read_text() == "regression\n" and study_of(tmp_path) == "regression"
    capsys.readouterr()
    assert main(["study", "regression", "--out", str(tmp_path), *REGRESSION]) == 0
    assert "0 noise levels of BDL fits computed, 6 loaded" in capsys.readouterr().out
    with pytest.raises(ValueError, match="the regression study; give the moons study"):
        run_moons(MoonsStudy(out=str(tmp_path), seeds=1, workers=1, progress=False))


def test_the_older_reports_titles_are_the_studies_own():
    """study_of names an unmarked directory's study by its report.md title: each title is the
    one its study writes."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for title, name in REPORT_TITLES.items():
        with open(os.path.join(root, "studies", name, "report.py")) as fh:
            assert f'"{title}' in fh.read(), (name, title)
    assert study_of("/nonexistent/dir") is None
