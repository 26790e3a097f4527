"""The package's names load on first use: a model worker does not pay for chaospy."""
import subprocess
import sys

import uqkit


def test_a_worker_running_a_model_does_not_import_chaospy():
    code = ("import sys, uqkit.adapters, uqkit.execution.propagation, fem.batch; "
            "print('chaospy' in sys.modules, 'scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_every_exported_name_loads_and_unknown_names_raise():
    for name in uqkit.__all__:
        assert getattr(uqkit, name).__module__.startswith("uqkit.")
        assert name in dir(uqkit)
    from uqkit import RandomInputs, propagate  # noqa: F401
    try:
        uqkit.not_a_name
    except AttributeError as exc:
        assert "not_a_name" in str(exc)
    else:
        raise AssertionError("uqkit.not_a_name did not raise")


def test_source_digest_reads_a_module_without_importing_it():
    # the study's process keys its cache by the surrogates' code: it must not load torch for
    # that, and the key must be the one the imported modules give (old caches stay valid)
    code = ("import sys; from studies.common import code_version; "
            "from uqkit.execution.model import source_digest; "
            "a = code_version('studies.membrane'); b = source_digest(['surrogates.bdl']); "
            "t = 'torch' in sys.modules or 'surrogates' in sys.modules; "
            "import surrogates.bdl, studies.membrane; "
            "print(t, a == code_version('studies.membrane'), "
            "b == source_digest(['surrogates.bdl']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "True"]


def test_the_cache_key_covers_every_module_of_the_packages_it_names():
    # a changed file deep in surrogates (an engine's trainer) must retrain a study's fits
    import pathlib

    import surrogates
    import uqkit
    from studies.common import code_modules

    names = set(code_modules("uqkit.reliability"))
    for package in (surrogates, uqkit):
        root = pathlib.Path(package.__file__).parent
        prefix = "reliability" if package is uqkit else ""
        for path in (root / prefix).rglob("*.py"):
            parts = path.relative_to(root.parent).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            assert name in names, name


def test_source_digest_of_an_unknown_module_raises_import_error():
    from uqkit.execution.model import source_digest

    try:
        source_digest(["uqkit.no_such_module"])
    except ImportError as exc:
        assert "no_such_module" in str(exc)
    else:
        raise AssertionError("no ImportError")


def test_the_version_has_one_source():
    """pyproject.toml's version is the only one: the installed metadata, ``uqkit.__version__``
    and ``uqkit --version`` all read it (a second, hand-kept copy would drift)."""
    import pathlib
    import subprocess
    import sys

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    import uqkit

    root = pathlib.Path(__file__).resolve().parents[2]
    declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    assert uqkit.__version__ == declared
    out = subprocess.run([sys.executable, "-m", "uqkit.cli", "--version"], capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.strip() == f"uqkit {declared}"
    assert tuple(int(v) for v in declared.split(".")[:2]) >= (0, 2)


def test_the_fe_stores_are_keyed_by_every_module_of_the_solver():
    """fem.system (the loads and probe weights) was missing from the hand-written list: an
    edit scaling the load by 1.5 was served the old deflections from the store."""
    import pathlib

    import fem
    from uqkit.adapters import FEM_NOT_SOLVER, FEM_SOLVER_MODULES

    on_disk = {f"fem.{p.stem}" for p in pathlib.Path(fem.__file__).parent.glob("*.py")
               if p.stem != "__init__"} | {"fem"}
    assert set(FEM_SOLVER_MODULES) == on_disk - set(FEM_NOT_SOLVER)
    assert "fem.system" in FEM_SOLVER_MODULES


def test_a_studys_cache_is_keyed_by_its_whole_package_and_the_shared_code():
    """The membrane fits were keyed by studies.membrane.study alone: an edit of tasks.py that
    halved R^2 was served the old tables; regression's by its package without
    studies.common, whose fit_restarts picks the restart a cached fit keeps."""
    from studies.common import code_modules
    from studies.membrane import study

    names = set(code_modules(study.__package__))
    assert {"studies.membrane.tasks", "studies.membrane.report", "studies.common",
            "uqkit.statistics", "surrogates.metrics"} <= names
    from studies.common import code_version
    from studies.membrane import MembraneStudy, fit_settings
    from uqkit.adapters import MembraneModel

    settings = fit_settings(MembraneStudy(out="unused", workers=1), MembraneModel())
    assert settings["code"] == code_version("studies.membrane")
