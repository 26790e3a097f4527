"""--paper changes a setting's default only: a value given is kept, in the Python API and on
the command line, and each --help names both defaults."""
import importlib

import pytest

from uqkit.cli import main

#: study -> (settings class, field, our default, the paper's, a value given, its option). The
#: values given are our defaults where they can be: --paper replaced exactly those.
CASES = {
    "moons": ("MoonsStudy", "epochs", 300, 50_000, 300, "--epochs"),
    "membrane": ("MembraneStudy", "n_truth", 20_000, 500_000, 1000, "--n-truth"),
    "reliability": ("ReliabilityStudy", "n_truth", 100_000, 1_000_000, 100_000, "--n-truth"),
    "wind": ("WindStudy", "seeds", 2, 3, 1, "--seeds"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_value_given_is_kept_with_paper(tmp_path, name):
    """MoonsStudy(paper=True, epochs=300).epochs was 50000; membrane n_truth=1000 ran 5e5."""
    cls, field, ours, papers, given, _ = CASES[name]
    study = getattr(importlib.import_module(f"studies.{name}"), cls)
    out = str(tmp_path)
    assert getattr(study(out=out), field) == ours
    assert getattr(study(out=out, paper=True), field) == papers
    assert getattr(study(out=out, paper=True, **{field: given}), field) == given


def test_the_other_paper_settings_keep_a_value_given_too(tmp_path):
    from studies.moons import MoonsStudy
    from studies.reliability import ReliabilityStudy
    from studies.wind import WindStudy

    out = str(tmp_path)
    assert (MoonsStudy(out=out).lr, MoonsStudy(out=out, paper=True).lr) == (0.01, 1e-3)
    assert MoonsStudy(out=out, paper=True, lr=0.01).lr == 0.01
    assert (ReliabilityStudy(out=out).n_sobol, ReliabilityStudy(out=out, paper=True).n_sobol,
            ReliabilityStudy(out=out, paper=True, n_sobol=1024).n_sobol) == (1024, 4096, 1024)
    assert ReliabilityStudy(out=out, paper=True).max_runs == 10_000
    assert WindStudy(out=out).sizes == (100, 200, 400, 700)
    assert WindStudy(out=out, paper=True).sizes == (100, 200, 300, 400, 500, 600, 700)
    assert WindStudy(out=out, paper=True, sizes=(100, 200)).sizes == (100, 200)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_command_keeps_a_value_given_with_paper_and_says_so(tmp_path, monkeypatch, capsys,
                                                                name):
    """The study each command builds (its run replaced by a recorder); wind --paper --seeds 1
    ran 3 seeds and its --help did not say --paper changes --seeds."""
    import studies.common

    _, field, ours, papers, given, flag = CASES[name]
    seen = []
    monkeypatch.setattr(studies.common, "warm_fe_pool", lambda *a, **k: [])
    monkeypatch.setattr(importlib.import_module(f"studies.{name}"), "run", seen.append)
    out = ["study", name, "--out", str(tmp_path / "out"), "--workers", "1"]
    for extra in ([], ["--paper"], ["--paper", flag, str(given)]):
        assert main(out + extra) == 0
    assert [getattr(s, field) for s in seen] == [ours, papers, given]
    with pytest.raises(SystemExit):
        main(["study", name, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"{flag} {flag[2:].upper().replace('-', '_')} " in help_text
    assert f"(default {ours}; --paper: {papers} unless given)" in help_text


#: A setting one mode alone uses, given for the other: (study, arguments, the settings named).
IGNORED = [("membrane", ["--paper", "--max-iter", "5"], "max_iter=5"),
           ("membrane", ["--epochs", "50"], "epochs=50"),
           ("regression", ["--paper", "--restarts", "3"], "restarts=3"),
           ("regression", ["--paper", "--max-iter", "10"], "max_iter=10"),
           ("regression", ["--tempered-kl", "0.5"], "tempered_kl=0.5"),
           ("moons", ["--paper", "--restarts", "2", "--max-iter", "9"],
            "max_iter=9, restarts=2")]


@pytest.mark.parametrize("name, extra, named", IGNORED)
def test_a_setting_the_mode_run_ignores_is_refused(tmp_path, monkeypatch, capsys, name, extra,
                                                   named):
    """`--paper --restarts 3` fitted each BDL once, and `--epochs 50` without --paper (CI's
    tiny job passed it) changed nothing: each was ignored without a word. Now refused with
    exit code 2, naming the settings; the same options in their own mode are kept."""
    import studies.common

    seen = []
    monkeypatch.setattr(studies.common, "warm_fe_pool", lambda *a, **k: [])
    monkeypatch.setattr(importlib.import_module(f"studies.{name}"), "run", seen.append)
    out = ["study", name, "--out", str(tmp_path / "out"), "--workers", "1"]
    assert main(out + extra) == 2 and seen == []
    err = capsys.readouterr().err
    assert err.startswith(f"uqkit study {name}: {named}: ") and "ignored" in err, err
    other = [a for a in extra if a != "--paper"] + ([] if "--paper" in extra else ["--paper"])
    assert main(out + other) == 0 and len(seen) == 1
    for setting in named.split(", "):
        key, value = setting.split("=")
        assert str(getattr(seen[0], key)) == value


def test_the_settings_classes_refuse_what_their_mode_ignores(tmp_path):
    """The Python API as the command: RegressionStudy(paper=True, restarts=3) fitted once."""
    from studies.membrane import MembraneStudy
    from studies.moons import MoonsStudy
    from studies.regression import RegressionStudy

    out = str(tmp_path)
    for make, settings in [(RegressionStudy, dict(paper=True, restarts=3)),
                           (RegressionStudy, dict(noise="map", paper=True)),
                           (RegressionStudy, dict(bdl_epochs=10)),
                           (MoonsStudy, dict(paper=True, max_iter=10)),
                           (MembraneStudy, dict(epochs=50)),
                           (MembraneStudy, dict(paper=True, max_iter=10))]:
        with pytest.raises(ValueError, match="would be ignored"):
            make(out=out, **settings)
    # the defaults, and a setting in its own mode, are accepted
    assert RegressionStudy(out=out, paper=True, bdl_epochs=10).bdl_epochs == 10
    assert MembraneStudy(out=out, paper=True, epochs=50).epochs == 50
    assert MoonsStudy(out=out, paper=True).restarts == 5
