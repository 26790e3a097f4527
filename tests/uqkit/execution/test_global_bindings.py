"""What identifies a global a model reads: a review's cases, each a store that served old
runs without a word, or refused its own model after a run."""
import importlib
import sys
import textwrap

import numpy as np
import pytest

from uqkit.execution.global_bindings import VALUE
from uqkit.execution.global_bindings import global_origin as origin
from uqkit.execution.identity import _is_user_code, describe_model


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


def test_a_table_read_at_import_is_its_value(project, tmp_path):
    write, load = project
    identities = []
    for first in (1.0, 2.0):
        (tmp_path / "table.txt").write_text(f"{first}\n4.0\n")
        write(beam_e=f"""
            import numpy as np
            TABLE = np.loadtxt({str(tmp_path / "table.txt")!r})
            def model(X):
                return TABLE[0] * X
        """)
        identities.append(describe_model(load("beam_e").model))
    assert identities[0] != identities[1]


def test_how_each_binding_is_identified(project):
    write, load = project
    write(settings_f="SCALE = 3.0\n", beam_f="""
        import os
        from settings_f import SCALE
        LITERAL = {"a": [1, 2]}
        COMPUTED = len(os.sep)
        TWICE = 1
        TWICE = 2
        MIXED = 1
        MIXED = COMPUTED
        for LOOP in range(2):
            pass
        def bump():
            global LITERAL
    """)
    beam = load("beam_f")
    settings = sys.modules["settings_f"]
    assert origin("beam_f", "SCALE", _is_user_code) is settings
    assert origin("beam_f", "COMPUTED", _is_user_code) == VALUE
    assert origin("beam_f", "TWICE", _is_user_code) is beam  # two literals: the source holds both
    assert origin("beam_f", "MIXED", _is_user_code) == VALUE
    assert origin("beam_f", "LOOP", _is_user_code) == VALUE
    assert origin("beam_f", "LITERAL", _is_user_code) == VALUE  # a function rebinds it
    assert origin("beam_f", "NOT_IN_SOURCE", _is_user_code) == VALUE
    assert beam.SCALE == 3.0
