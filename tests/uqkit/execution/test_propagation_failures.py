"""Propagation that fails loudly: rows of different widths, model identity, a second run on a
store, failures logged and counted, retries, dead workers, interrupts, exports."""
import importlib
import os
import logging
import sys

import numpy as np
import pytest

from uqkit import load_dataset, propagate, sample
from uqkit.adapters import MembraneModel
from uqkit.inputs import RandomInputs
from uqkit.execution.model import RAISED, describe_model, evaluate
from uqkit.execution.propagation import PropagationError
from uqkit.execution.store import StoreBusyError, StoreMismatchError, StudyStore


# 2. output widths: successful rows must agree; only failed rows are padded -------------------
def ragged(X):
    if X.shape[0] > 1:
        raise RuntimeError("batch not supported")
    return np.ones((1, 2 if X[0, 0] < 5 else 3))


def one_bad_row(X):
    if X.shape[0] > 1 or X[0, 0] == 3:
        raise RuntimeError("row 3")
    return np.ones((1, 2))


def test_successful_rows_that_disagree_on_width_raise():
    with pytest.raises(ValueError, match=r"different numbers of outputs .* \[2, 3\]"):
        evaluate(ragged, np.arange(10.0)[:, None])
    out = evaluate(one_bad_row, np.arange(6.0)[:, None])  # a failed row is padded
    assert out.values.shape == (6, 2) and np.isnan(out.values[3]).all()
    assert out.status.tolist() == [0, 0, 0, RAISED, 0, 0]


def widths_by_chunk(X):
    return np.ones((len(X), 2 if X[0, 0] < 5 else 3))


def test_chunks_that_disagree_on_width_fail_those_runs_and_an_old_store_raises(tmp_path):
    """Chunks of another width than the first successful one fail with that reason (they
    used to end the whole run, after every chunk, and every rerun of its store); a store
    written so before still cannot be stacked, and says so."""
    res = propagate(widths_by_chunk, np.arange(10.0)[:, None], executor="serial",
                    chunk_size=5, progress=False)
    assert res.ok.tolist() == [True] * 5 + [False] * 5 and res.outputs.shape == (10, 2)
    store = tmp_path / "s"
    with StudyStore(store, {"x": 1}) as st:
        st.save(0, 0, [[0.0]], [[1.0, 2.0]], [0], ["ok"])
        st.save(1, 1, [[1.0]], [[1.0, 2.0, 3.0]], [0], ["ok"])
    with pytest.raises(ValueError, match="different numbers of outputs"):
        load_dataset(store)


# 3. a strong model identity ------------------------------------------------------------------
def _module(tmp_path, monkeypatch, body):
    path = tmp_path / "mymodel.py"
    path.write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("mymodel", None)
    importlib.invalidate_caches()
    return importlib.import_module("mymodel")


def test_a_changed_function_body_or_class_attribute_is_a_different_model(tmp_path, monkeypatch):
    m1 = _module(tmp_path, monkeypatch, "def f(X):\n    return 2 * X\n"
                 "class M:\n    scale = 2\n    def __call__(self, X):\n"
                 "        return self.scale * X\n")
    f1, c1 = describe_model(m1.f), describe_model(m1.M())
    m2 = _module(tmp_path, monkeypatch, "def f(X):\n    return 3 * X\n"
                 "class M:\n    scale = 3\n    def __call__(self, X):\n"
                 "        return self.scale * X\n")
    assert describe_model(m2.f) != f1 and describe_model(m2.M()) != c1
    assert describe_model(m2.f) == describe_model(m2.f)
    # so a store made with the old function refuses the new one instead of mixing results
    X = np.arange(4.0)[:, None]
    propagate(m1.f, X, executor="serial", store=str(tmp_path / "s"), progress=False)
    with pytest.raises(StoreMismatchError, match="model"):
        propagate(m2.f, X, executor="serial", store=str(tmp_path / "s"), progress=False)


def test_wrapped_and_inherited_code_is_part_of_the_identity(tmp_path, monkeypatch):
    import functools

    body = ("def f(X, a=1):\n    return X * a{}\n"
            "class Base:\n    def __call__(self, X):\n        return X * 2{}\n")
    m1 = _module(tmp_path, monkeypatch, body.format("", ""))
    (tmp_path / "child.py").write_text("import mymodel\nclass Child(mymodel.Base):\n    pass\n")
    sys.modules.pop("child", None)
    child = importlib.import_module("child")
    before = describe_model(functools.partial(m1.f, a=2)), describe_model(child.Child())
    m2 = _module(tmp_path, monkeypatch, body.format(" + 1", " + 1"))
    sys.modules.pop("child", None)
    child = importlib.import_module("child")
    after = describe_model(functools.partial(m2.f, a=2)), describe_model(child.Child())
    assert before[0] != after[0] and before[1] != after[1]


def _scaled(E):
    def model(X, *, offset=E / 10):
        return X * E + offset
    return model


def test_a_closure_made_with_another_constant_is_another_model(tmp_path):
    """A model made by a factory holds its settings in closure cells and keyword-only
    defaults, which neither its bytecode nor its module's source shows: they are part of its
    identity, so a store made with E = 210 refuses the model made with E = 200."""
    assert describe_model(_scaled(210.0)) == describe_model(_scaled(210.0))
    assert describe_model(_scaled(210.0)) != describe_model(_scaled(200.0))
    same_cell = _scaled(210.0)
    same_cell.__kwdefaults__ = {"offset": 0.0}  # only the keyword-only default differs
    assert describe_model(same_cell) != describe_model(_scaled(210.0))
    X = np.arange(4.0)[:, None]
    propagate(_scaled(210.0), X, executor="serial", store=str(tmp_path / "s"), progress=False)
    with pytest.raises(StoreMismatchError, match="fingerprint"):
        propagate(_scaled(200.0), X, executor="serial", store=str(tmp_path / "s"),
                  progress=False)


class _Sim:
    def __init__(self, k):
        self.k = k

    def run(self, X):
        return X * self.k


class _Slots:
    __slots__ = ("k", "f")

    def __init__(self, k):
        self.k, self.f = k, lambda X: X  # the lambda makes it unpicklable

    def __call__(self, X):
        return self.f(X) * self.k


def test_whatever_a_model_holds_is_its_identity():
    """A dict, a list, an object, a partial's or a bound method's arguments: a model made
    with other ones is another model (a store made with params {"k": 1} served its runs to
    {"k": 1000} before). Found by a review."""
    import functools

    def holding(value):
        def model(X):
            return X * len(str(value))
        return model

    for a, b in (({"k": 1}, {"k": 1000}), ([1, 2], [1, 3]), (_Sim(2), _Sim(3)),
                 (functools.partial(_scaled, 2.0), functools.partial(_scaled, 3.0)),
                 (_Sim(2).run, _Sim(3).run), (_Slots(2), _Slots(3))):
        assert describe_model(holding(a)) != describe_model(holding(b)), (a, b)
        assert describe_model(holding(a)) == describe_model(holding(a))
    assert describe_model(_Slots(2)) != describe_model(_Slots(3))
    assert describe_model(functools.partial(_scaled(1.0), offset=2.0)) != \
        describe_model(functools.partial(_scaled(1.0), offset=3.0))
    assert describe_model(_Sim(2).run) != describe_model(_Sim(3).run)
    # so a model whose state changes as it runs (a call counter) is another model after a
    # run: it must say what it is with describe()
    calls = []

    def counted(X):
        calls.append(len(X))
        return X
    before = describe_model(counted)
    counted(np.ones((2, 1)))
    assert describe_model(counted) != before


def test_values_that_repeat_or_hide_in_containers_are_told_apart():
    """A second review: a setting equal to an earlier one was hashed as '(seen)' (a frozen
    dataclass with scale == lo served scale 0's runs to scale 1); a namedtuple, and a dict
    or list that holds a lambda, hashed to a constant."""
    from collections import namedtuple
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Params:
        lo: float
        hi: float
        scale: float

    def holding(value):
        def model(X):
            return X * len(str(value))
        return model

    P = namedtuple("P", "k")
    pairs = [(Params(0, 1, 0), Params(0, 1, 1)), (Params("a", "b", "a"), Params("a", "b", "b")),
             (P(1), P(1000)), ((P(1),), (P(1000),)), ({"a": P(1)}, {"a": P(2)}),
             ({"f": len, "k": 1}, {"f": len, "k": 1000})]
    ns = {"__name__": "notebook_cell"}
    exec("cfg = {'scale': lambda x: x, 'k': 2}\nfs = [lambda x: 2 * x]\n"
         "def model(X):\n    return cfg['k'] * fs[0](X)\n", ns)
    before = describe_model(ns["model"])["fingerprint"]
    ns["cfg"]["k"] = 3
    second = describe_model(ns["model"])["fingerprint"]
    exec("fs[0] = lambda x: 3 * x\n", ns)
    assert len({before, second, describe_model(ns["model"])["fingerprint"]}) == 3
    for a, b in pairs:
        assert describe_model(holding(a)) != describe_model(holding(b)), (a, b)
        assert describe_model(holding(a)) == describe_model(holding(a))


class _Cfg:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class _Doubled(np.ndarray):
    pass


def test_a_third_reviews_collisions_are_told_apart():
    """Dict order, a nested object's attributes shifted one level, the data of a subclass of
    ndarray, and a lambda that np.vectorize wraps: each pair gave different numbers and the
    same identity in a version that hashed values by their parts."""
    from collections import OrderedDict

    def holding(value):
        def model(X):
            return X * len(repr(value))
        return model

    pairs = [({"clay": (2, 18), "sand": (5, 20)}, {"sand": (5, 20), "clay": (2, 18)}),
             (OrderedDict(a=1, b=2), OrderedDict(b=2, a=1)),
             (_Cfg(c=_Cfg(a=1), z=5), _Cfg(c=_Cfg(a=1, z=5))),
             (np.ones(3).view(_Doubled), (2 * np.ones(3)).view(_Doubled))]
    for a, b in pairs:
        assert describe_model(holding(a)) != describe_model(holding(b)), (a, b)
    k2, k3 = (np.vectorize(lambda x, k=k: k * x) for k in (2, 3))
    assert describe_model(k2) != describe_model(k3)


def test_the_same_module_in_another_directory_is_the_same_model(tmp_path, monkeypatch):
    """Code objects carry their file's path: a project moved or copied elsewhere was
    another model, and its resume was refused."""
    ids = []
    for where in ("a", "b"):
        folder = tmp_path / where
        folder.mkdir()
        (folder / "moved_mod.py").write_text("E = 2.0\ndef model(X):\n    return E * X\n")
        monkeypatch.syspath_prepend(str(folder))
        sys.modules.pop("moved_mod", None)
        importlib.invalidate_caches()
        ids.append(describe_model(importlib.import_module("moved_mod").model))
    assert ids[0] == ids[1]


class _Config:
    """A dict-backed configuration whose attribute lookup raises KeyError, not
    AttributeError."""

    def __init__(self, **values):
        self._d = values

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self.__dict__["_d"][name]

    def __call__(self, X):
        return X * self.k


class _Node:
    def __init__(self, nxt):
        self.nxt = nxt

    def __call__(self, X):
        return X


def test_odd_objects_are_identified_or_refused_clearly():
    """A strict __getattr__ raised KeyError('py_func') from the numba check; a chain of 400
    linked objects of the user's class hit Python's recursion limit (500 now pass, 5,000
    are refused with a clear message)."""
    assert describe_model(_Config(k=1)) != describe_model(_Config(k=2))
    node = None
    for _ in range(500):
        node = _Node(node)
    assert describe_model(node) == describe_model(node)
    for _ in range(5000):
        node = _Node(node)
    with pytest.raises(ValueError, match="nests too deep .* describe"):
        describe_model(node)


def test_the_identity_follows_the_users_code_into_other_modules(tmp_path, monkeypatch):
    """A model in one module of a project that calls a function of another: editing that
    other module makes another model (a review found it unnoticed)."""
    (tmp_path / "physics_mod.py").write_text("def f(X):\n    return 2 * X\n")
    (tmp_path / "run_mod.py").write_text("import physics_mod\nfrom physics_mod import f\n"
                                         "def model(X):\n    return f(X)\n"
                                         "def model2(X):\n    return physics_mod.f(X)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("physics_mod", "run_mod"):
        sys.modules.pop(name, None)
    first = importlib.import_module("run_mod")
    before = describe_model(first.model), describe_model(first.model2)
    (tmp_path / "physics_mod.py").write_text("def f(X):\n    return 3 * X\n")
    for name in ("physics_mod", "run_mod"):
        sys.modules.pop(name, None)
    importlib.invalidate_caches()
    second = importlib.import_module("run_mod")
    assert describe_model(second.model) != before[0]
    assert describe_model(second.model2) != before[1]


def test_a_constant_imported_from_another_module_is_part_of_the_identity(tmp_path,
                                                                         monkeypatch):
    """``from settings import SCALE``: the model's own source did not change when SCALE did,
    and a store served the old runs (a review found it with ``uqkit run``'s Python models).
    A cache the module's own source makes, filled as the model runs, is not part of it."""
    (tmp_path / "beam_mod.py").write_text(
        "from settings_mod import SCALE, OFFSET as C\n_cache = {}\n"
        "def model(X):\n    _cache[len(_cache)] = 1\n    return SCALE * X + C[0]\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def identity(scale, c):
        (tmp_path / "settings_mod.py").write_text(f"SCALE = {scale}\nOFFSET = ({c}, 'm')\n")
        for name in ("settings_mod", "beam_mod"):
            sys.modules.pop(name, None)
        importlib.invalidate_caches()
        model = importlib.import_module("beam_mod").model
        return describe_model(model), model

    first, model = identity(3.0, 1.0)
    model(np.zeros(2))  # fills the module's cache
    assert describe_model(model) == first
    assert identity(3.0, 1.0)[0] == first
    assert identity(100.0, 1.0)[0] != first
    assert identity(3.0, 2.0)[0] != first


def test_a_global_random_generator_is_part_of_the_identity_by_its_type_only():
    """Its state moves with every draw: the model would be another one after each run."""
    ns = {"__name__": "notebook_cell"}
    exec("import numpy as np, random\nrng = np.random.default_rng(0)\n"
         "legacy = np.random.RandomState(1)\npy = random.Random(2)\n"
         "def model(X):\n    return X + rng.normal() + legacy.rand() + py.random()\n", ns)
    first = describe_model(ns["model"])
    ns["model"](np.zeros(3))
    assert describe_model(ns["model"]) == first


def test_the_identity_is_the_same_in_every_process(tmp_path):
    """Sets of strings iterate in an order that follows the process's hash seed, a numba
    dispatcher pickles with a fresh UUID, and a torch tensor's pickle holds its memory
    address: none may change a model's identity between the run and its resume. (A dict
    built by iterating over a set keeps that order, which is part of its identity.)"""
    import subprocess

    code = ("import numba, numpy as np, torch\n"
            "from uqkit.execution.model import describe_model\n"
            "names = ('alpha', frozenset({'E', 'nu', 'rho', 'thickness', 'length'}))\n"
            "class Holder:\n    def __init__(self):\n"
            "        self.tags = {'E', 'nu', 'rho'}\n"
            "holder = Holder()\n"
            "torch.manual_seed(0)\nnet = torch.nn.Linear(3, 2)\n"
            "@numba.njit\n"
            "def kernel(x):\n    return 2 * x\n"
            "def make(net):\n    def model(X):\n        return net(X) + kernel(X) * len(names)"
            " * len(holder.tags)\n    return model\n"
            "print(describe_model(make(net))['fingerprint'], "
            "describe_model(kernel)['fingerprint'], describe_model(holder)['fingerprint'])\n")
    (tmp_path / "m.py").write_text(code)
    seen = {subprocess.run([sys.executable, str(tmp_path / "m.py")], capture_output=True,
                           text=True, check=True, env={**os.environ, "PYTHONHASHSEED": seed}
                           ).stdout for seed in ("1", "2", "3")}
    assert len(seen) == 1, seen


def test_a_model_without_a_source_file_is_identified_by_the_globals_it_reads():
    """A notebook's (or ``python -c``'s) model has no source file to hash: the module globals
    its code names, helpers and classes included, are part of its identity instead; a
    global it does not read is not."""
    ns = {"__name__": "notebook_cell"}
    exec("E = 210.0\nunused = 1\n"
         "def helper(X):\n    return X * E\n"
         "class Scale:\n    factor = 2.0\n"
         "def model(X):\n    return helper(X) * Scale.factor\n", ns)
    first = describe_model(ns["model"])
    ns["unused"] = 2
    assert describe_model(ns["model"]) == first
    ns["E"] = 200.0  # read by the helper the model calls
    second = describe_model(ns["model"])
    assert second != first
    ns["Scale"].factor = 3.0  # a class attribute it reads
    assert describe_model(ns["model"]) not in (first, second)


def test_lambdas_are_told_apart_by_their_code():
    assert describe_model(lambda X: X + 1) != describe_model(lambda X: X + 2)


def test_a_model_without_code_warns_and_says_how_to_name_it():
    import math

    with pytest.warns(UserWarning, match="cannot identify the model .* describe"):
        describe_model(math.fabs)  # written in C: no bytecode, no source


def test_the_fe_model_identity_holds_the_solver_source_and_version():
    d = MembraneModel().describe()
    assert len(d["fem_source"]) == 64 and d["versions"].get("uqkit")
    assert MembraneModel(nx=10, ny=5).describe() != d


# 4. one run per store at a time --------------------------------------------------------------
def test_a_second_run_on_a_store_is_refused_naming_the_first(tmp_path):
    import os
    import subprocess

    with StudyStore(tmp_path / "s", {"a": 1}):
        with pytest.raises(StoreBusyError, match=f"process {os.getpid()}"):
            StudyStore(tmp_path / "s", {"a": 1})
        other = subprocess.run(
            [sys.executable, "-c", "import sys; from uqkit.execution.store import StudyStore\n"
             "try:\n    StudyStore(sys.argv[1], {'a': 1})\nexcept ValueError as e:\n"
             "    print(e)\n", str(tmp_path / "s")], capture_output=True, text=True)
        assert f"is in use by process {os.getpid()}" in other.stdout, other.stderr
    StudyStore(tmp_path / "s", {"a": 1}).close()  # free again once the first has finished


# 6. a batch that raises is re-run row by row, never silently ---------------------------------
def test_batch_failures_are_logged_and_counted(caplog):
    with caplog.at_level(logging.WARNING, logger="uqkit"):
        res = propagate(one_bad_row, np.arange(12.0)[:, None], executor="serial",
                        chunk_size=6, progress=False)
    assert res.rows_rerun == 12 and sum(res.batch_errors.values()) == 2
    assert "RuntimeError: row 3" in caplog.text and "run one by one" in caplog.text
    assert "12 rows re-run one by one after 2 batch calls raised" in res.summary()


# infrastructure errors are not results -------------------------------------------------------
def always_fails(X):
    raise RuntimeError("Cannot set NUMBA_NUM_THREADS")


def test_a_run_whose_every_row_fails_the_same_way_stops_and_stores_nothing(tmp_path):
    store = tmp_path / "s"
    with pytest.raises(PropagationError, match="(?s)every one of the first .* runs at the "
                       "start, middle and end of the sample failed with the same error.*"
                       "NUMBA_NUM_THREADS.*traceback.*in always_fails"):
        propagate(always_fails, np.zeros((500, 1)), executor="serial", chunk_size=8,
                  store=str(store), progress=False)
    assert not list((store / "chunks").iterdir())


def sqrt_of_nonnegative(X):
    if (X[:, 0] < 0).any():
        raise ValueError("x must be >= 0")
    return np.sqrt(X)


def test_an_ordered_sweep_that_starts_where_the_model_raises_is_not_stopped():
    res = propagate(sqrt_of_nonnegative, np.linspace(-1, 1, 200)[:, None], executor="serial",
                    progress=False)
    x = np.linspace(-1, 1, 200)
    assert (res.ok == (x >= 0)).all() and np.allclose(res.outputs[x >= 0, 0], np.sqrt(x[x >= 0]))


class Flaky:
    def __init__(self, marker):
        self.marker = marker

    def __call__(self, X):
        import os

        if X.shape[0] > 1:
            raise RuntimeError("batch")
        if X[0, 0] == 2 and not os.path.exists(self.marker):
            raise OSError("scratch disk full")
        return np.ones((1, 1)), np.array([3 if X[0, 0] == 5 else 0])

    def describe(self):
        return {"model": "flaky"}


def test_errors_are_retried_on_a_rerun_and_model_failures_stay(tmp_path):
    store, marker = str(tmp_path / "s"), tmp_path / "fixed"
    X = np.arange(8.0)[:, None]
    first = propagate(Flaky(str(marker)), X, executor="serial", chunk_size=4, store=store,
                      progress=False)
    assert first.status.tolist() == [0, 0, RAISED, 0, 0, 3, 0, 0]
    marker.touch()  # the environment is fixed
    again = propagate(Flaky(str(marker)), X, executor="serial", chunk_size=4, store=store,
                      progress=False)
    assert again.computed == 1 and again.status.tolist() == [0, 0, 0, 0, 0, 3, 0, 0]
    assert load_dataset(store)["status"].tolist() == again.status.tolist()
    # a model's own failure (non-convergence) is a result, computed again only when asked
    assert propagate(Flaky(str(marker)), X, executor="serial", chunk_size=4, store=store,
                     progress=False).computed == 0
    assert propagate(Flaky(str(marker)), X, executor="serial", chunk_size=4, store=store,
                     progress=False, retry_failed="all").computed == 1
    with pytest.raises(ValueError, match="retry_failed must be one of"):
        propagate(Flaky(str(marker)), X, executor="serial", retry_failed="yes")


def dies(X):
    import os

    if X[0, 0] >= 8:
        os._exit(3)  # a worker that dies (out of memory, a segfault...)
    return X


def test_a_dead_worker_is_an_error_not_a_result(tmp_path):
    store = str(tmp_path / "s")
    with pytest.raises(PropagationError, match="infrastructure failed"):
        propagate(dies, np.arange(16.0)[:, None], workers=2, chunk_size=4, store=store,
                  progress=False)
    data = load_dataset(store)
    assert (data["status"] == 0).all() and set(data["rows"].tolist()) <= set(range(8))


# 7. a bug in a study keeps its traceback; bad input is a usage error -------------------------
def test_a_bug_inside_a_study_is_not_a_usage_error(tmp_path, monkeypatch):
    import studies.moons
    from uqkit.cli import main

    def buggy(study, log=print):
        raise ValueError("an internal bug")

    monkeypatch.setattr(studies.moons, "run", buggy)
    with pytest.raises(ValueError, match="an internal bug"):
        main(["study", "moons", "--out", str(tmp_path), "--no-progress"])
    assert main(["study", "moons", "--out", str(tmp_path), "--seeds", "0"]) == 2


def test_an_interrupted_run_exits_130_with_one_line(tmp_path, monkeypatch, capsys):
    import studies.moons
    from uqkit.cli import main
    from uqkit.execution.propagation import PropagationInterrupted

    def interrupted(study, log=print):
        raise PropagationInterrupted(300, 1000, "DIR/store")

    monkeypatch.setattr(studies.moons, "run", interrupted)
    assert main(["study", "moons", "--out", str(tmp_path), "--no-progress"]) == 130
    assert capsys.readouterr().err == ("saved 300 of 1000 runs to DIR/store; rerun the same "
                                       "command to resume\n")


# layering --------------------------------------------------------------------------------------
def test_uqkit_does_not_import_the_studies():
    import subprocess

    code = "import sys, uqkit, uqkit.cli; assert 'studies' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# results that export ----------------------------------------------------------------------------
class Named:
    output_names = ("double", "square")

    def __call__(self, X):
        status = (X[:, 0] > 1.8).astype(int)  # a model's own failure
        return np.column_stack([2 * X[:, 0], X[:, 0] ** 2]), status

    def describe(self):
        return {"model": "named"}


def test_results_export_with_names_status_and_reasons(tmp_path):
    import csv

    inputs = RandomInputs.from_spec({"a": "uniform(0, 2)", "b": "normal(0, 1)"})
    s = sample(inputs, 20, seed=1)
    res = propagate(Named(), s, executor="serial", store=str(tmp_path / "s"), progress=False)
    res.to_csv(tmp_path / "runs.csv")
    rows = list(csv.reader(open(tmp_path / "runs.csv")))
    assert rows[0] == ["a", "b", "double", "square", "status", "reason"]
    assert len(rows) == 21
    for row, x, y, ok in zip(rows[1:], s.values, res.outputs, res.ok):
        assert float(row[0]) == x[0] and float(row[1]) == x[1]  # repr: exact round trip
        assert (row[2] == "") == (not ok) and (not ok or float(row[3]) == y[1])
        assert row[5] == ("ok" if ok else "model status 1")
    data = load_dataset(tmp_path / "s")
    assert data["input_names"] == ("a", "b") and data["output_names"] == ("double", "square")
    import json
    manifest = json.load(open(tmp_path / "s" / "manifest.json"))
    assert manifest["metadata"]["samples"]["inputs"] == inputs.describe()
    assert manifest["metadata"]["samples"]["rule"] == "random"
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            res.to_dataframe()
    else:
        frame = res.to_dataframe()
        assert list(frame.columns) == rows[0] and len(frame) == 20


def square_rows(X):
    return X ** 2


def test_a_larger_sample_in_the_same_store_computes_only_the_new_rows(tmp_path):
    inputs = RandomInputs.from_spec({"x": "normal(0, 1)"})
    store = str(tmp_path / "s")
    first = propagate(square_rows, sample(inputs, 1200, seed=4), executor="serial",
                      store=store, progress=False)
    more = propagate(square_rows, sample(inputs, 1300, seed=4), executor="serial",
                     store=store, progress=False)
    assert (first.computed, more.computed, more.loaded) == (1200, 100, 1200)
    np.testing.assert_array_equal(more.outputs[:1200], first.outputs)
    np.testing.assert_array_equal(more.outputs, sample(inputs, 1300, seed=4).values ** 2)
    fewer = propagate(square_rows, sample(inputs, 1000, seed=4), executor="serial",
                      store=store, progress=False)
    assert fewer.computed == 0 and np.array_equal(fewer.outputs, first.outputs[:1000])
    assert len(load_dataset(store)["rows"]) == 1300
    # other draws are refused, and the message says why
    with pytest.raises(ValueError,
                       match="holds other inputs than this run.*seed: stored 4, now 5"):
        propagate(square_rows, sample(inputs, 1300, seed=5), executor="serial", store=store,
                  progress=False)
    propagate(square_rows, sample(inputs, 1300, rule="lhs", seed=4), executor="serial",
              store=str(tmp_path / "lhs"), progress=False)
    with pytest.raises(ValueError, match="another n with lhs"):
        propagate(square_rows, sample(inputs, 1400, rule="lhs", seed=4), executor="serial",
                  store=str(tmp_path / "lhs"), progress=False)


def fails_mid(X):
    x = X[:, 0]
    return X, np.where((x > 0.45) & (x < 0.55), RAISED, 0)  # rows 18-21 of 40 "raise"


def test_a_shorter_rerun_keeps_the_rows_of_a_longer_store(tmp_path):
    """Retrying in a shorter sample must not save the stored chunk cut down to it."""
    X = np.linspace(0, 1, 40)[:, None]
    store = str(tmp_path / "s")
    first = propagate(fails_mid, X, executor="serial", chunk_size=16, store=store,
                      progress=False)
    assert np.flatnonzero(first.status == RAISED).tolist() == [18, 19, 20, 21]
    propagate(fails_mid, X[:20], executor="serial", store=store, progress=False)
    assert len(load_dataset(store)["rows"]) == 40  # rows 20-31 of chunk 1 are still there
    assert propagate(fails_mid, X, executor="serial", store=store, progress=False,
                     retry_failed="none").computed == 0


def test_settings_may_not_override_what_propagate_records(tmp_path):
    with pytest.raises(ValueError, match=r"settings may not set \['chunk_size'\]"):
        propagate(square_rows, np.ones((4, 1)), executor="serial", store=str(tmp_path / "s"),
                  settings={"chunk_size": 7})


class NoOutputs:
    output_names = ("a", "b")

    def __call__(self, X):
        if len(X) > 1:
            raise ValueError("batch")
        raise ValueError(f"bad row {X[0, 0]}")  # every row fails, each its own way


def test_export_when_no_run_has_outputs(tmp_path):
    import csv

    res = propagate(NoOutputs(), np.arange(5.0)[:, None], executor="serial", progress=False)
    assert res.outputs.shape == (5, 2) and np.isnan(res.outputs).all()  # one per name
    res.to_csv(tmp_path / "r.csv")
    rows = list(csv.reader(open(tmp_path / "r.csv")))
    assert rows[0] == ["x0", "a", "b", "status", "reason"]
    assert rows[1][1:3] == ["", ""] and rows[1][4].startswith("raised ValueError: bad row")


# outputs one row per output -------------------------------------------------------------------
@pytest.mark.parametrize("stack", [np.vstack, list], ids=["vstack", "list"])
def test_outputs_given_one_row_per_output_are_refused_also_when_square(stack):
    """A model returning (k, n) was refused only where n != k: a chunk of exactly k rows was
    read transposed and its runs counted as ok (a new user's walk-through)."""
    def model(X):
        return stack([X[:, 0] + X[:, 1], X[:, 0] - X[:, 1]])

    X = np.array([[10.0, 5.0], [11.0, 4.0]])
    with pytest.raises(PropagationError, match=r"one row per output\? .*np.column_stack"):
        propagate(model, X, executor="serial", progress=False)


def test_square_outputs_one_row_per_run_stand():
    X = np.array([[10.0, 5.0], [11.0, 4.0]])
    res = propagate(lambda X: np.column_stack([X[:, 0] + X[:, 1], X[:, 0] - X[:, 1]]), X,
                    executor="serial", progress=False)
    assert res.ok.all() and np.array_equal(res.outputs, [[15.0, 5.0], [15.0, 7.0]])


def test_the_random_inputs_or_swapped_arguments_are_named_not_a_float_error():
    """``propagate(model, inputs)``, as sobol_indices(model, inputs) takes them, and
    ``propagate(samples, model)`` ended in numpy's "float() argument must be ...\""""
    inputs = RandomInputs.from_spec({"a": "normal(0, 1)"})
    with pytest.raises(TypeError, match=r"not over the random inputs: propagate\(model, "
                                        r"sample\(inputs"):
        propagate(lambda X: X, inputs, executor="serial", progress=False)
    with pytest.raises(TypeError, match="the model comes first"):
        propagate(sample(inputs, 4, seed=0), lambda X: X, executor="serial", progress=False)
