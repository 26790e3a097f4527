"""ExternalModel with small shell scripts as the solver: values run by run, failures as
results, identity, the store, pools and Dask, and the analyses that take any model."""
import os
import shutil
import sys

import numpy as np
import pytest
from scipy import stats

from uqkit import propagate
from uqkit.execution.executors import cpu_count
from uqkit.external import (FAILED_EXIT, FAILED_OUTPUT, FAILED_TIMEOUT, ExternalModel, Output,
                            JSONValue, Regex, Table)
from uqkit.external.config import Margin
from uqkit.inputs import RandomInputs
from uqkit.execution.propagation import default_workers
from uqkit.inputs.sampling import Samples
from uqkit.execution.store import StoreMismatchError

# awk computes in doubles: 2 x + y^2 is the same float as numpy's
FORMULA = "awk 'BEGIN {{ printf \"%.17g\\n\", 2 * ({x}) + ({y}) * ({y}) }}'"
SOLVER = FORMULA.format(x="{{ x }}", y="{{ y }}") + "\necho 'run {{ run_index }}' >&2\n"
VALUE = Regex(r"^(\S+)$", match="first")


def formula(X):
    return 2 * X[:, 0] + X[:, 1] * X[:, 1]


@pytest.fixture
def deck(tmp_path):
    folder = tmp_path / "deck"
    folder.mkdir()
    (folder / "run.sh").write_text(SOLVER)
    return folder


def _model(deck, **kw):
    return ExternalModel(deck, ["sh", "run.sh"], outputs={"y": VALUE}, input_names=["x", "y"],
                         **kw)


def _samples(n, seed=0):
    rng = np.random.default_rng(seed)
    return Samples(rng.normal(size=(n, 2)) * [1.0, 3.0], ("x", "y"))


def test_outputs_equal_the_formula_run_by_run_in_directories_named_by_row(deck, tmp_path):
    s = _samples(10)
    res = propagate(_model(deck, keep="all"), s, executor="serial", store=tmp_path / "st",
                    progress=False)
    assert res.n_failed == 0 and res.output_names == ("y",)
    assert np.array_equal(res.outputs[:, 0], formula(s.values))
    runs = tmp_path / "st" / "runs"
    assert sorted(os.listdir(runs)) == [f"{i:06d}" for i in range(10)]
    assert (runs / "000007" / "stderr.txt").read_text() == "run 7\n"


FAILING = """\
x={{ x }}
if awk "BEGIN {exit !($x > 1)}"; then echo '*ERROR in deck: bad x' >&2; exit 3; fi
if awk "BEGIN {exit !($x < -1)}"; then sleep 30; fi
if awk "BEGIN {exit !($x == 0.5)}"; then echo nan; exit 0; fi
if awk "BEGIN {exit !($x == 0.25)}"; then echo 'garbage'; exit 0; fi
echo {{ x }}
"""


def test_failures_are_results_that_name_cause_and_run_dir(tmp_path):
    (tmp_path / "run.sh").write_text(FAILING)
    model = ExternalModel(tmp_path / "run.sh", ["sh", "run.sh"], outputs={"y": VALUE},
                          input_names=["x"], timeout=1, workdir=tmp_path / "work")
    X = np.array([[0.1], [2.0], [-2.0], [0.5], [0.25], [0.2]])
    res = propagate(model, X, executor="serial", progress=False)
    assert res.status.tolist() == [0, FAILED_EXIT, FAILED_TIMEOUT, FAILED_OUTPUT,
                                   FAILED_OUTPUT, 0]
    assert res.outputs[[0, 5], 0].tolist() == [0.1, 0.2]
    assert np.isnan(res.outputs[1:5]).all()
    work = tmp_path / "work"
    assert res.reasons[1] == f"exit code 3 (run dir {work / '000001'}): *ERROR in deck: bad x"
    assert res.reasons[2] == f"timeout after 1 s (run dir {work / '000002'})"
    assert res.reasons[3] == f"output 'y': not finite: nan (run dir {work / '000003'})"
    assert res.reasons[4].startswith("output 'y': 'garbage' is not a number (run dir")
    # failed runs are kept for a look, the good ones are not (keep="failed")
    assert sorted(os.listdir(work)) == ["000001", "000002", "000003", "000004"]


def test_keep_none_removes_every_run_and_says_so(deck, tmp_path):
    (deck / "run.sh").write_text("exit 4\n{{ x }}{{ y }}")
    model = _model(deck, keep="none", workdir=tmp_path / "work")
    _, status, reasons = model(np.ones((2, 2)))
    assert status.tolist() == [FAILED_EXIT] * 2
    assert reasons[1] == f"exit code 4 (run dir {tmp_path / 'work' / '000001'}, removed)"
    assert os.listdir(tmp_path / "work") == []


def test_without_store_or_workdir_runs_go_to_a_temporary_directory_removed_when_empty(deck):
    import tempfile

    before = set(os.listdir(tempfile.gettempdir()))
    y, status, _ = _model(deck)(np.array([[1.0, 2.0]]))
    assert y.tolist() == [[6.0]] and status.tolist() == [0]
    assert set(os.listdir(tempfile.gettempdir())) == before


def test_a_missing_program_is_refused_before_any_run(deck):
    with pytest.raises(ValueError, match="'no-such-solver-xyz' is not found on PATH; install "
                                         "it or give its full path$"):
        ExternalModel(deck, ["no-such-solver-xyz", "-i", "beam"], outputs={"y": VALUE},
                      input_names=["x", "y"])
    with pytest.raises(ValueError, match=r"install it \(CalculiX: apt-get install calculix-ccx\)"):
        ExternalModel(deck, ["ccx_no_such_version", "-i", "beam"], outputs={"y": VALUE},
                      input_names=["x", "y"])
    (deck / "solve.sh").write_text("echo 1\n")  # a script of the template is found
    ExternalModel(deck, ["./solve.sh"], outputs={"y": VALUE}, input_names=["x", "y"])


def test_bad_settings_are_refused_naming_the_value(deck):
    for kw, message in (({"timeout": 0}, "timeout=0"), ({"keep": "some"}, "keep='some'"),
                        # inf made every run raise OverflowError in select; True was 1 s
                        ({"timeout": float("inf")}, "timeout=inf"),
                        ({"timeout": True}, "timeout=True"),
                        ({"cores_per_run": 0}, "cores_per_run=0"),
                        ({"constants": {"x": 1}}, r"constants \['x'\]")):
        with pytest.raises(ValueError, match=message):
            _model(deck, **kw)
    with pytest.raises(ValueError, match="identifiers"):
        ExternalModel(deck, ["sh", "run.sh"], outputs={"y": VALUE}, input_names=["x", "y z"])


def _edited_solver_is_refused(tmp_path, write, command, match, **kw):
    """Run a model of ``y = factor a`` on a store, edit its solver (``write(factor)``, 2 a to
    3 a) and rerun on the store: the rerun must be refused, naming ``match``. Returns the
    model of the first run."""
    (tmp_path / "deck.txt").write_text("{{ a }}\n")
    store, X = tmp_path / "st", np.array([[1.0], [2.0]])
    for factor in (2, 3):
        write(factor)
        model = ExternalModel(tmp_path / "deck.txt", command, outputs={"y": VALUE},
                              input_names=["a"], **kw)
        if factor == 2:
            res = propagate(model, X, executor="serial", store=store, progress=False)
            assert res.outputs[:, 0].tolist() == [2.0, 4.0]
            assert propagate(model, X, executor="serial", store=store,
                             progress=False).loaded == 2  # the same model reopens it
            first = model
        else:
            with pytest.raises(StoreMismatchError, match=match):
                propagate(model, X, executor="serial", store=store, progress=False)
    return first


def test_an_edited_script_the_command_names_is_never_served_old_results(tmp_path):
    """``python3 /abs/solver.py``: only the interpreter was in the model's identity, so an
    edit of the script (2 a to 3 a) was served the stored 2 a."""
    solver = tmp_path / "solver.py"
    _edited_solver_is_refused(
        tmp_path, lambda f: solver.write_text(f"print({f} * float(open('deck.txt').read()))\n"),
        [sys.executable, str(solver)], "argument_files")


def test_the_program_a_shell_line_starts_is_part_of_the_models_identity(tmp_path,
                                                                      monkeypatch):
    """``shell=True``: the identity held ``sh`` alone, so a script the line starts, edited
    (2 a to 3 a, the same size), was served the stored 2 a (a bug hunt); a line that starts
    with a builtin records the shell alone, and a rerun of the same line reopens its store."""
    solver = tmp_path / "solver.sh"

    def write(factor):
        solver.write_text(f"#!/bin/sh\npython3 -c \"print({factor} * $(cat deck.txt))\"\n")
        solver.chmod(0o755)

    model = _edited_solver_is_refused(tmp_path, write, f"{solver} > out.txt; cat out.txt",
                                      r"model\.(program|argument_files)", shell=True)
    assert model.describe()["program"]["runs"]["path"] == str(solver.resolve())
    builtin = ExternalModel(tmp_path / "deck.txt", "cd . && cat deck.txt",
                            outputs={"y": VALUE}, input_names=["a"], shell=True)
    assert "runs" not in builtin.describe()["program"]
    # a placeholder first ("{{ prog }}" split by shlex into braces crashed the build), and a
    # script of the template by a relative path: the template's, wherever the process runs
    # (it was looked for in the working directory; a review)
    placeholder = ExternalModel(tmp_path / "deck.txt", "{{ prog }} deck.txt",
                                outputs={"y": VALUE}, input_names=["a"],
                                constants={"prog": "cat"}, shell=True)
    assert "runs" not in placeholder.describe()["program"]
    folder = tmp_path / "tpl"
    folder.mkdir()
    (folder / "deck.txt").write_text("{{ a }}\n")
    (folder / "run.sh").write_text("cat deck.txt\n")
    for cwd in (tmp_path, folder):
        monkeypatch.chdir(cwd)
        model = ExternalModel(folder, "sh ./run.sh", outputs={"y": VALUE}, input_names=["a"],
                              shell=True)
        assert model.describe()["program"]["runs"]["path"] == os.path.realpath(
            shutil.which("sh"))
        model = ExternalModel(folder, "./run.sh > log; cat log", outputs={"y": VALUE},
                              input_names=["a"], shell=True)
        assert model.describe()["program"]["runs"] == {"path": "run.sh", "from": "template"}


def test_a_log_the_command_names_by_absolute_path_does_not_block_a_rerun(tmp_path):
    """``python3 /abs/solver.py /abs/solver.log``, the solver appending to its log: hashing
    every file the command named changed the model with each run, so the store refused
    every rerun."""
    (tmp_path / "deck.txt").write_text("{{ a }}\n")
    solver, log = tmp_path / "solver.py", tmp_path / "solver.log"
    solver.write_text("import sys\nv = 2 * float(open('deck.txt').read())\n"
                      "open(sys.argv[1], 'a').write(f'{v}\\n')\nprint(v)\n")
    X = np.array([[1.0], [2.0]])
    for computed in (2, 0):
        model = ExternalModel(tmp_path / "deck.txt", [sys.executable, str(solver), str(log)],
                              outputs={"y": VALUE}, input_names=["a"])
        res = propagate(model, X, executor="serial", store=tmp_path / "st", progress=False)
        assert res.computed == computed and res.outputs[:, 0].tolist() == [2.0, 4.0]
    assert list(model.describe()["argument_files"]) == [str(solver)]


def test_an_edited_deck_or_parser_is_never_served_old_results(deck, tmp_path):
    store = tmp_path / "st"
    s = _samples(4)
    propagate(_model(deck), s, executor="serial", store=store, progress=False)
    (deck / "run.sh").write_text(SOLVER.replace("2 *", "3 *"))
    with pytest.raises(StoreMismatchError):
        propagate(_model(deck), s, executor="serial", store=store, progress=False)
    first = _model(deck, keep="all").describe()
    other = ExternalModel(deck, ["sh", "run.sh"], input_names=["x", "y"],
                          outputs={"y": Output(lambda d: float((d / "stdout.txt").read_text()))})
    assert other.describe() != first
    assert _model(deck, keep="none", timeout=None).describe() == first  # keep is no identity


def test_two_workers_and_a_rerun_that_computes_nothing(deck, tmp_path):
    s = _samples(40)
    model = _model(deck)
    res = propagate(model, s, workers=2, store=tmp_path / "st", progress=False)
    assert res.computed == 40 and np.array_equal(res.outputs[:, 0], formula(s.values))
    again = propagate(model, s, workers=2, store=tmp_path / "st", progress=False)
    assert again.computed == 0 and again.loaded == 40
    assert np.array_equal(again.outputs, res.outputs)
    assert not (tmp_path / "st" / "runs").exists() or \
        os.listdir(tmp_path / "st" / "runs") == []


def test_dask_gives_the_same_outputs(deck):
    distributed = pytest.importorskip("distributed")
    s = _samples(12)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        res = propagate(_model(deck), s, dask=cluster.scheduler_address, progress=False)
    assert np.array_equal(res.outputs[:, 0], formula(s.values))


def test_cores_per_run_sets_the_program_threads_and_the_default_workers(tmp_path):
    (tmp_path / "run.sh").write_text("echo $OMP_NUM_THREADS {{ x }}\n")
    model = ExternalModel(tmp_path / "run.sh", ["sh", "run.sh"], input_names=["x"],
                          outputs={"threads": Regex(r"^(\S+)")}, cores_per_run=2)
    assert model(np.array([[0.0]]))[0].tolist() == [[2.0]]
    assert default_workers(model) == max(1, cpu_count() // 2)
    assert model.chunk_size == 4


def test_vector_outputs_get_one_column_each(tmp_path):
    (tmp_path / "run.sh").write_text("echo 'u v'; echo '{{ x }} 1'; echo '{{ 2 * x }} 2'\n")
    model = ExternalModel(tmp_path / "run.sh", ["sh", "run.sh"], input_names=["x"], outputs={
        "u": Table("stdout.txt", column="u", row="all", size=2),
        "v": Table("stdout.txt", column="v")})
    y, status, _ = model(np.array([[1.5]]))
    assert model.output_names == ("u_0", "u_1", "v")
    assert y.tolist() == [[1.5, 3.0, 2.0]] and status.tolist() == [0]


def test_an_output_named_like_a_vector_outputs_column_is_refused(tmp_path):
    """``u`` of size 2 is the columns u_0 and u_1: a scalar ``u_0`` beside it gave runs.csv two
    u_0 columns, a summary of one and a [failure] analysis of the other."""
    (tmp_path / "run.sh").write_text("echo 'u v'; echo '{{ x }} 1'; echo '{{ 2 * x }} 2'\n")
    with pytest.raises(ValueError, match=r"output names \['u_0'\] appear more than once"):
        ExternalModel(tmp_path / "run.sh", ["sh", "run.sh"], input_names=["x"], outputs={
            "u": Table("stdout.txt", column="u", row="all", size=2),
            "u_0": Table("stdout.txt", column="v")})


def test_a_work_directory_keeps_each_stores_runs_apart(deck, tmp_path):
    """Two studies (uqkit run's main study and its Sobol' analysis, or two batches of one
    analysis) in one work directory: both numbered their runs from 000000 there, so a run
    directory that runs.csv cites held the other study's deck."""
    model = _model(deck, keep="all", workdir=tmp_path / "work")
    first, second = _samples(3, seed=1), _samples(3, seed=2)
    for s, store in ((first, "a"), (second, "b")):
        propagate(model, s, executor="serial", store=tmp_path / store, progress=False)
    folders = sorted(os.listdir(tmp_path / "work"))
    assert len(folders) == 2 and [f[:2] for f in folders] == ["a-", "b-"]
    for folder, s in zip(folders, (first, second)):
        runs = tmp_path / "work" / folder
        assert sorted(os.listdir(runs)) == ["000000", "000001", "000002"]
        rendered = (runs / "000002" / "run.sh").read_text()
        assert repr(float(s.values[2, 0])) in rendered


def test_an_output_file_the_program_leaves_as_the_template_wrote_it_fails_the_run(tmp_path):
    """A bar.dat left in the template folder (from trying the deck by hand) is copied into
    every run: a program that exits 0 without writing it gave the copy's value, status ok.
    A program that updates its deck file in place (the answer written into it) is fine."""
    deck = tmp_path / "deck"
    deck.mkdir()
    (deck / "run.sh").write_text("echo '{{ x }}' > /dev/null\n")  # writes nothing
    (deck / "bar.dat").write_text("0.04761905\n")
    model = ExternalModel(deck, ["sh", "run.sh"], input_names=["x"],
                          outputs={"y": Regex(r"^(\S+)$", file="bar.dat")})
    y, status, reasons = model(np.array([[1.0], [2.0]]))
    assert status.tolist() == [FAILED_OUTPUT] * 2 and np.isnan(y).all()
    assert reasons[0].startswith("'bar.dat' is as the template wrote it: the program did not "
                                 "write it (run dir ")
    (deck / "bar.dat").write_text('{"x": {{ x }}, "y": null}\n')  # a deck updated in place
    (deck / "run.sh").write_text(
        "sed 's/\"y\": null/\"y\": 7.5/' bar.dat > t && mv t bar.dat\n")
    model = ExternalModel(deck, ["sh", "run.sh"], input_names=["x"],
                          outputs={"y": JSONValue("bar.dat", "y")})
    y, status, _ = model(np.array([[1.0], [2.0]]))
    assert status.tolist() == [0, 0] and y[:, 0].tolist() == [7.5, 7.5]


def test_sobol_indices_of_an_external_linear_model_match_the_exact_ones(tmp_path):
    from uqkit.sensitivity import sobol_indices

    (tmp_path / "run.sh").write_text("awk 'BEGIN { print {{ a }} + 2 * ({{ b }}) }'\n")
    model = ExternalModel(tmp_path / "run.sh", ["sh", "run.sh"], input_names=["a", "b"],
                          outputs={"y": Regex(r"(\S+)")})
    inputs = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})
    res = sobol_indices(model, inputs, n=128, bootstrap=0, executor="serial")
    assert res.model_runs == 512
    assert np.allclose(res.first, [0.2, 0.8], atol=0.05)  # exact: 1/5 and 4/5
    assert np.allclose(res.total, [0.2, 0.8], atol=0.05)


def test_form_on_an_external_limit_state_finds_the_exact_beta(tmp_path):
    from uqkit.reliability import failure_probability

    (tmp_path / "run.sh").write_text("awk 'BEGIN { printf \"%.17g\\n\", {{ a }} + {{ b }} }'\n")
    model = ExternalModel(tmp_path / "run.sh", ["sh", "run.sh"], input_names=["a", "b"],
                          outputs={"s": Regex(r"(\S+)")})
    inputs = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "normal(0, 1)"})
    g = Margin(model, column=0, above=3.0)  # failure where a + b > 3: beta = 3 / sqrt(2)
    r = failure_probability(g, inputs, method="form", executor="serial")
    assert r.beta == pytest.approx(3 / np.sqrt(2), rel=1e-4)
    assert r.pf == pytest.approx(stats.norm.sf(3 / np.sqrt(2)), rel=1e-3)


def test_the_model_runs_under_the_interpreter_that_runs_the_tests(tmp_path):
    (tmp_path / "solve.py").write_text("print(({{ x }}) ** 2)\n")
    model = ExternalModel(tmp_path / "solve.py", [sys.executable, "solve.py"],
                          input_names=["x"], outputs={"y": Regex(r"(\S+)")})
    assert model(np.array([[-1.5]]))[0].tolist() == [[2.25]]


def test_a_stopped_calls_finished_runs_are_taken_from_their_files_not_run_again(deck, tmp_path):
    """The store saves whole chunks: a chunk stopped after some of its runs finished made
    those runs again on the rerun (4 of 12 finished runs after a Ctrl-C, in an audit). Each
    successful run now leaves its answer in runs/.finished until its chunk is saved."""
    from uqkit.execution.model import RunContext
    from uqkit.execution.kept_runs import FINISHED, run_name

    log = tmp_path / "ran.log"
    (deck / "run.sh").write_text(SOLVER + f"echo {{{{ run_index }}}} >> {log}\n")
    model = _model(deck)
    store = tmp_path / "store"
    X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    context = RunContext(np.array([7, 8, 9]), str(store))
    finished = store / "runs" / FINISHED
    finished.mkdir(parents=True)
    # what a stopped call left: row 7 finished (another answer than the formula's, to see it
    # used), row 8 with other inputs, row 9 nothing
    (finished / f"{run_name(7)}.json").write_text('{"inputs": [1.0, 2.0], "outputs": [-1.0]}')
    (finished / f"{run_name(8)}.json").write_text('{"inputs": [3.0, 4.5], "outputs": [-1.0]}')
    y, status, reasons = model(X, context=context)
    assert y[:, 0].tolist() == [-1.0, 22.0, 46.0] and status.tolist() == [0, 0, 0]
    assert log.read_text().split() == ["8", "9"]
    # kept until the store has saved them: the rows' answers are dropped then
    assert sorted(p.name for p in finished.iterdir()) == [f"{run_name(r)}.json" for r in (7, 8, 9)]
    model.rows_saved(RunContext(np.array([8, 9]), str(store)))
    assert [p.name for p in finished.iterdir()] == [f"{run_name(7)}.json"]
    model.rows_saved(context)
    assert not finished.exists()
    # without a store (or with a work directory of the user's) nothing is kept or read
    finished.mkdir()
    (finished / f"{run_name(7)}.json").write_text('{"inputs": [1.0, 2.0], "outputs": [-1.0]}')
    y, _, _ = model(X, context=RunContext(np.array([7, 8, 9])))
    assert y[0, 0] == 6.0
    y, _, _ = _model(deck, workdir=str(store / "runs"))(X, context=context)
    assert y[0, 0] == 6.0 and (finished / f"{run_name(7)}.json").exists()


def test_a_batch_run_again_row_by_row_counts_its_own_answers_as_computed(deck, tmp_path,
                                                                         monkeypatch):
    """The batch raises after two runs (a program that cannot start, a full disk), and
    evaluate runs its rows one by one: they take the two answers the batch kept. Those were
    computed now, not kept by an interrupted run (the summary read "2 kept by an interrupted
    run" where nothing was interrupted); an answer an earlier propagation kept still
    counts as kept."""
    run_one, calls = ExternalModel._run_one, []

    def raise_once_at_row_2(self, x, row, base, env):
        calls.append(row)
        if row == 2 and calls.count(2) == 1:
            raise RuntimeError("cannot start the program")
        return run_one(self, x, row, base, env)

    monkeypatch.setattr(ExternalModel, "_run_one", raise_once_at_row_2)
    s = _samples(4)
    res = propagate(_model(deck), s, executor="serial", store=tmp_path / "st", chunk_size=4,
                    progress=False)
    assert res.n_failed == 0 and np.array_equal(res.outputs[:, 0], formula(s.values))
    assert res.rows_rerun == 4 and calls == [0, 1, 2, 2, 3]
    assert (res.computed, res.loaded, res.kept) == (4, 0, 0)
    # an answer without a token (an earlier version's, or one kept outside a propagation)
    # is an earlier run's: taken, and counted as kept
    from uqkit.execution import kept_runs

    s = _samples(4, seed=1)
    (tmp_path / "st2").mkdir()
    folder = kept_runs.kept_folder(tmp_path / "st2")
    kept_runs.keep(folder, 1, s.values[1], formula(s.values[1:2]))
    assert "invocation" not in (folder / "000001.json").read_text()
    calls.clear()
    res = propagate(_model(deck), s, executor="serial", store=tmp_path / "st2", chunk_size=4,
                    progress=False)
    assert calls == [0, 2, 2, 3] and (res.computed, res.kept) == (3, 1)


def test_a_run_is_kept_while_its_call_runs_and_a_failed_one_is_not(deck, tmp_path):
    from uqkit.execution.model import RunContext
    from uqkit.execution.kept_runs import FINISHED, run_name

    finished = tmp_path / "store" / "runs" / FINISHED
    seen = tmp_path / "seen"
    # row 1's run lists what row 0 left; a negative x fails its run
    (deck / "run.sh").write_text(
        f"ls {finished} > {seen}-{{{{ run_index }}}} 2>/dev/null\n"
        "if awk 'BEGIN { exit !({{ x }} < 0) }'; then exit 3; fi\n" + SOLVER)
    X = np.array([[-1.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    (tmp_path / "store").mkdir()  # as propagate makes it (answers are kept in a store only)
    _, status, _ = _model(deck)(X, context=RunContext(np.arange(3), str(tmp_path / "store")))
    assert status.tolist() == [FAILED_EXIT, 0, 0]
    assert (tmp_path / "seen-1").read_text().split() == []  # row 0 failed: nothing kept
    assert (tmp_path / "seen-2").read_text().split() == [f"{run_name(1)}.json"]


def test_nothing_is_left_in_finished_after_a_study_wrapped_in_a_margin(deck, tmp_path):
    """The reliability command wraps the model in a Margin, which did not pass rows_saved
    on: every run's answer stayed in runs/.finished (a review found it). What a stopped run
    left for rows it had saved, and half-written answers, go when the store is complete."""
    from uqkit.execution.kept_runs import FINISHED, run_name

    s = _samples(8)
    store = tmp_path / "st"
    finished = store / "runs" / FINISHED
    finished.mkdir(parents=True)
    (finished / f"{run_name(3)}.json").write_text("{}")  # a row that will be stored
    (finished / f".{run_name(5)}.tmp").write_text("{\"inp")  # a write a kill cut short
    res = propagate(Margin(_model(deck), column=0, below=0.0), s, executor="serial",
                    store=store, progress=False)
    assert res.n_failed == 0 and not finished.exists()


def test_a_workdir_inside_the_template_folder_is_refused(tmp_path):
    """Its run directories joined the template: the first run worked, and every rerun was
    refused with an unexplained "model.templates: stored ..., now ..." (a bug hunt)."""
    folder = tmp_path / "deck"
    folder.mkdir()
    (folder / "deck.txt").write_text("{{ a }}\n")
    with pytest.raises(ValueError, match=r"workdir .* is inside the template folder"):
        ExternalModel(folder, ["cat", "deck.txt"], outputs={"y": VALUE}, input_names=["a"],
                      workdir=folder / "runs")
    ExternalModel(folder, ["cat", "deck.txt"], outputs={"y": VALUE}, input_names=["a"],
                  workdir=tmp_path / "runs")
