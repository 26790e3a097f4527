"""pytest's set-up for the whole repository (see pyproject.toml's ``[tool.pytest.ini_options]``).

One module object per module. In ``--import-mode=importlib``, collecting a module's doctests
(``surrogates/laplace/fit.py``, say) before anything has imported it makes pytest import the
module's package, whose ``__init__`` imports the module, and then the module a second time
from its file, under the same name: the code holds one object, the tests another, and a test
that patches a function of the module (``monkeypatch.setattr(laplace_fit, "map_objective",
...)``) patches not the one the code runs. That happened with ``pytest surrogates tests``.
So each of the packages' files is imported the usual way as it is collected, and pytest then
finds it in ``sys.modules``.
"""
import importlib
import pathlib

#: The repository's packages, whose modules the doctests collect.
PACKAGES = ("fem", "surrogates", "uqkit", "studies")
ROOT = pathlib.Path(__file__).resolve().parent


def module_name(path, root=ROOT):
    """The dotted name of a package file, or None for a file outside :data:`PACKAGES`.

    >>> module_name(ROOT / "surrogates" / "laplace" / "fit.py")
    'surrogates.laplace.fit'
    >>> module_name(ROOT / "fem" / "__init__.py"), module_name(ROOT / "benchmarks" / "x.py")
    ('fem', None)
    """
    try:
        parts = pathlib.Path(path).resolve().relative_to(root).with_suffix("").parts
    except ValueError:
        return None
    if not parts or parts[0] not in PACKAGES:
        return None
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def pytest_collect_file(file_path, parent):
    """Import a package module the usual way before the doctest plugin imports it (not a
    ``__main__.py``, which runs its program when imported and which the plugin skips)."""
    if file_path.suffix != ".py" or file_path.name == "__main__.py":  # doctests skip these
        return
    name = module_name(file_path)
    if name is not None:
        try:
            importlib.import_module(name)
        except (Exception, SystemExit):  # noqa: BLE001 - pytest's own import reports it
            pass
