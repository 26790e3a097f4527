"""The globals a model reads, in its identity: three reviews' cases, each a store that served
old runs without a word, or refused its own model after a run or in a new process."""
import importlib
import sys
import textwrap

import numpy as np
import pytest

from uqkit.execution.identity import describe_model


@pytest.fixture
def project(tmp_path, monkeypatch):
    """Write modules into a folder on sys.path; ``load(name)`` imports one afresh."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written = set()

    def write(**files):
        for name, text in files.items():
            path = tmp_path.joinpath(*name.split("__")).with_suffix(".py")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))
            written.add(name.replace("__", "."))

    def load(name):
        for module in list(sys.modules):
            if module.split(".")[0] in {w.split(".")[0] for w in written}:
                del sys.modules[module]
        importlib.invalidate_caches()
        return importlib.import_module(name)

    return write, load


def test_a_cache_imported_from_another_module_and_filled_is_the_same_model(project):
    """``from cachemod import CACHE`` (``CACHE = {}`` there): a FORM run with a store could
    not be resumed, the cache filled by the runs made it another model."""
    write, load = project
    write(cachemod_a="CACHE = {}\n", beam_a="""
        from cachemod_a import CACHE
        def model(X):
            CACHE[len(CACHE)] = X
            return 2 * X
    """)
    model = load("beam_a").model
    before = describe_model(model)
    model(np.ones(2))
    assert describe_model(model) == before


def test_a_copy_of_an_imported_value_is_followed(project):
    """``LOCAL = settings.SCALE`` at import: the value, which the source does not hold."""
    write, load = project
    identities = []
    for scale in (3.0, 5.0):
        write(settings_b=f"SCALE = {scale}\n", beam_b="""
            import settings_b
            LOCAL = settings_b.SCALE
            def model(X):
                return LOCAL * X
        """)
        identities.append(describe_model(load("beam_b").model))
    assert identities[0] != identities[1]


def test_a_decorators_imports_are_read_in_its_own_module(project):
    """functools.wraps gives the wrapper the model's __module__; its globals are the
    decorator's module's, whose ``from settings import SCALE`` was missed."""
    write, load = project
    identities = []
    for scale in (3.0, 5.0):
        write(settings_c=f"SCALE = {scale}\n", deco_c="""
            import functools
            from settings_c import SCALE
            def scaled(f):
                @functools.wraps(f)
                def wrapper(X):
                    return SCALE * f(X)
                return wrapper
        """, beam_c="""
            from deco_c import scaled
            @scaled
            def model(X):
                return X
        """)
        identities.append(describe_model(load("beam_c").model))
    assert identities[0] != identities[1]


@pytest.mark.parametrize("importer", [
    "from .settings import SCALE",
    "from pkg_d.settings import *",
    "from . import settings\nSCALE = settings.SCALE",
])
def test_relative_and_star_imports_are_followed(project, importer):
    write, load = project
    identities = []
    for scale in (3.0, 5.0):
        write(pkg_d____init__="", pkg_d__settings=f"SCALE = {scale}\n",
              pkg_d__beam=importer + "\ndef model(X):\n    return SCALE * X\n")
        identities.append(describe_model(load("pkg_d.beam").model))
    assert identities[0] != identities[1]


def test_a_number_read_at_import_is_its_value(project, tmp_path):
    """``SCALE = float(open(...).read())``: the source does not hold the value."""
    write, load = project
    identities = []
    for first in (1.0, 2.0):
        (tmp_path / "scale.txt").write_text(f"{first}\n")
        write(beam_e=f"""
            SCALE = float(open({str(tmp_path / "scale.txt")!r}).read())
            def model(X):
                return SCALE * X
        """)
        identities.append(describe_model(load("beam_e").model))
    assert identities[0] != identities[1]


def test_what_the_model_fills_or_assigns_itself_as_it_runs_is_the_same_model(project):
    """A cache, log or counter dict filled in place, a counter the model assigns: a resumed
    analysis that loads its first batches (which then do not run the model) was refused
    (review: FORM with a store on a model holding CACHE = dict())."""
    write, load = project
    write(cachemod_g="from collections import defaultdict\nCACHE = defaultdict(list)\n",
          beam_g="""
        from cachemod_g import CACHE
        LOG = [0.0]
        COUNTS = {"rows": 0}
        CALLS = 0
        def model(X):
            global CALLS
            CALLS += 1
            CACHE[len(CACHE)].append(CALLS)
            LOG.append(float(X[0]))
            COUNTS["rows"] += len(X)
            return 2 * X
    """)
    model = load("beam_g").model
    before = describe_model(model)
    model(np.ones(3))
    model(np.ones(3))
    assert describe_model(model) == before


def test_a_name_bound_to_another_value_is_another_model(project):
    """SCALE = 5 set from outside after a run (a notebook, an application)."""
    write, load = project
    write(beam_h="SCALE = 3.0\ndef model(X):\n    return SCALE * X\n")
    beam = load("beam_h")
    before = describe_model(beam.model)
    beam.SCALE = 5.0
    assert describe_model(beam.model) != before


def test_a_setting_made_at_import_or_read_through_a_module_is_followed(project, tmp_path,
                                                                        monkeypatch):
    """settings.SCALE set by the application before the model's module is imported, and
    read as settings.SCALE or from settings import SCALE."""
    write, load = project
    write(settings_i="SCALE = 1.0\n", beam_i="""
        import settings_i
        from settings_i import SCALE
        def model(X):
            return SCALE * X
        def model2(X):
            return settings_i.SCALE * X
    """)
    identities = []
    for scale in (1.0, 3.0):
        settings = load("settings_i")
        settings.SCALE = scale
        sys.modules.pop("beam_i", None)
        beam = importlib.import_module("beam_i")
        identities.append((describe_model(beam.model), describe_model(beam.model2)))
    assert identities[0][0] != identities[1][0]
    assert identities[0][1] != identities[1][1]


def test_the_environment_counts_by_its_type_only(project, monkeypatch):
    """os.environ holds the shell's own variables: a resume from another terminal was
    refused (PWD, SHLVL). A model that reads the environment names it in describe()."""
    write, load = project
    write(beam_j="from os import environ\ndef model(X):\n    return X * len(environ)\n")
    model = load("beam_j").model
    before = describe_model(model)
    monkeypatch.setenv("UQKIT_SOME_SHELL_VARIABLE", "1")
    assert describe_model(model) == before


def test_an_imported_container_or_object_counts_by_the_source_that_makes_it(project):
    """A fourth review: ``from settings import PARAMS`` (a dict) and ``steel =
    Material(200.0)`` of a class in another module: editing settings.py or the class's
    method served the old runs."""
    write, load = project
    identities = []
    for scale, factor in ((1.0, "1"), (2.0, "1"), (2.0, "2")):
        write(settings_k=f"PARAMS = {{'scale': {scale}}}\n", materials_k=f"""
            class Material:
                def __init__(self, E):
                    self.E = E
                def stress(self, strain):
                    return {factor} * self.E * strain
        """, beam_k="""
            from materials_k import Material
            from settings_k import PARAMS
            steel = Material(200.0)
            def model(X):
                return steel.stress(X) * PARAMS["scale"]
        """)
        identities.append(describe_model(load("beam_k").model))
    assert len(set(map(str, identities))) == 3


def test_state_a_helper_keeps_is_not_the_models_identity(project):
    """A table loaded on first use by a helper (``global _table``), a counter kept on another
    module (``state.calls += 1``): the model was another one after its first call, and a
    store refused to grow in the same process."""
    write, load = project
    write(state_l="calls = 0\n", beam_l="""
        import numpy as np
        import state_l
        _table = None
        def _load():
            global _table
            _table = np.linspace(0, 1, 11)
        def model(X):
            state_l.calls += 1
            if _table is None:
                _load()
            return np.interp(X, _table, _table ** 2)
    """)
    model = load("beam_l").model
    before = describe_model(model)
    model(np.array([0.5]))
    assert describe_model(model) == before


def test_a_huge_tuple_is_hashed_by_the_source_that_makes_it_not_slowly(project):
    import time

    write, load = project
    write(beam_m="""
        POINTS = tuple((i * 1e-3, (i * 1e-3) ** 2) for i in range(200_000))
        def model(X):
            return X * len(POINTS)
    """)
    model = load("beam_m").model
    t0 = time.perf_counter()
    describe_model(model)
    assert time.perf_counter() - t0 < 1.0


def test_the_models_own_module_under_another_name_is_not_a_holder(project):
    """A process pool registers ``__main__`` again as ``__mp_main__``: a script whose model
    reads an attribute named like one of its globals (``ops.model(...)`` beside ``model =
    PerRunModel(...)``) was another model after its first pool, and a store refused the
    second study of the same script (the OpenSees example)."""
    write, load = project
    write(beam_n="""
        import types
        ops = types.SimpleNamespace(model=lambda: 2.0)
        model = {"a dict": "named like the attribute"}
        def run(X):
            return ops.model() * X
    """)
    beam = load("beam_n")
    before = describe_model(beam.run)
    sys.modules["beam_n_alias"] = beam
    try:
        assert describe_model(beam.run) == before
    finally:
        del sys.modules["beam_n_alias"]


def test_a_submodule_reached_through_its_package_is_followed(project):
    """``import pkg.sub`` then ``pkg.sub.scale(x)``: only ``pkg/__init__.py`` was hashed, so an
    edit of ``scale`` (2 x to 3 x) was served the stored 2 x."""
    write, load = project
    identities = []
    for factor in (2.0, 3.0):
        write(pkg_s____init__="", pkg_s__sub=f"def scale(x):\n    return {factor} * x\n",
              pkg_s__deep____init__="",
              pkg_s__deep__leaf=f"def shift(x):\n    return x + {factor}\n",
              model_s="import pkg_s.sub\nimport pkg_s.deep.leaf\n\n"
                      "def model(X):\n    return pkg_s.deep.leaf.shift(pkg_s.sub.scale(X))\n")
        identities.append(describe_model(load("model_s").model)["fingerprint"])
    assert identities[0] != identities[1]
    write(pkg_s__sub="def scale(x):\n    return 3.0 * x\n",
          pkg_s__deep__leaf="def shift(x):\n    return x + 2.0\n")  # only the deeper one back
    assert describe_model(load("model_s").model)["fingerprint"] not in identities


@pytest.mark.parametrize("reader", ["LOADS", "data_n.LOADS", "TABLE"])
def test_an_array_or_table_read_from_a_data_file_is_its_values(project, tmp_path, reader):
    """``LOADS = np.loadtxt("loads.csv")`` at import, in the model's module or another one:
    an array counted by the source that makes it, so an edited data file served the old
    runs without a word. A pandas table likewise."""
    write, load = project
    pandas = pytest.importorskip("pandas") if reader == "TABLE" else None
    csv = tmp_path / "loads.csv"
    identities = []
    for last in ("3.0", "4.0", "3.0"):
        csv.write_text(f"1.0\n2.0\n{last}\n")
        write(data_n=f"""
            import numpy as np
            LOADS = np.loadtxt({str(csv)!r})
        """, beam_n=f"""
            import numpy as np
            import data_n
            from data_n import LOADS
            {"import pandas; TABLE = pandas.read_csv(" + repr(str(csv)) + ", header=None)"
             if pandas else ""}
            def model(X):
                return X * np.asarray({reader}).sum()
        """)
        identities.append(describe_model(load("beam_n").model))
    assert identities[0] != identities[1]
    assert identities[0] == identities[2]  # the same data: the same model, in a new process


def test_a_table_the_model_only_reads_stays_the_same_model(project):
    """A pandas Index pickles its lookup cache: a model that only called NAMES.get_loc was
    another model after its first run, and a store refused its rerun."""
    pandas = pytest.importorskip("pandas")
    del pandas
    write, load = project
    write(beam_p="""
        import numpy as np
        import pandas
        NAMES = pandas.Index(["steel", "timber", "glass"])
        TABLE = pandas.DataFrame({"E": [210.0, 11.0, 70.0]}, index=NAMES)
        def model(X):
            return X * TABLE["E"].iloc[NAMES.get_loc("timber")]
    """)
    model = load("beam_p").model
    before = describe_model(model)
    model(np.ones(2))
    assert describe_model(model) == before
