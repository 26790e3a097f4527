"""One module object per module, in whatever order pytest collects the tests and the
doctests (the repository's ``conftest.py``): otherwise a test that patches a module patches a
copy the code does not run."""
import pathlib
import subprocess
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("uqkit", "fem", "surrogates", "studies")


def test_every_loaded_package_module_is_the_one_its_importers_hold():
    """Each module of the packages that another one holds as an attribute (``from ..laplace
    import fit as laplace_fit``) is the object ``sys.modules`` gives for its name."""
    copies = []
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in PACKAGES or module is None:
            continue
        for attr, value in vars(module).items():
            if (isinstance(value, types.ModuleType) and value.__name__.split(".")[0] in PACKAGES
                    and sys.modules.get(value.__name__, value) is not value):
                copies.append(f"{name}.{attr} -> {value.__name__}")
    assert not copies, copies


def test_doctests_collected_before_the_tests_leave_one_module_object():
    """``pytest surrogates/laplace/fit.py tests/...`` collected the module's doctests first and
    loaded a second ``surrogates.laplace.fit`` beside the one ``surrogates.bdl.fit_many``
    runs: the check above, run after it, names the copy."""
    here = pathlib.Path(__file__).relative_to(ROOT)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "surrogates/laplace/fit.py",
         f"{here}::test_every_loaded_package_module_is_the_one_its_importers_hold"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
