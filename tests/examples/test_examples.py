"""Every example runs, at tiny sizes, as a user would run it."""
import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"
TINY = {
    "plot_own_model_correlated.py": ["--n", "512"],
    "plot_fe_convergence.py": ["--levels", "3", "--nx", "4", "--ny", "2"],
    "plot_surrogate_comparison.py": ["--n-train", "64", "--n-test", "100"],
    "plot_surrogate_monte_carlo.py": ["--n-train", "64", "--n-mc", "2000", "--n-truth", "500"],
    "plot_sobol_indices.py": ["--n", "64", "--n-train", "64"],
    "plot_active_learning.py": ["--candidates", "2000"],
    "plot_calculix_cantilever.py": ["--n", "40", "--sobol-n", "16"],
    "plot_opensees_cantilever.py": ["--n", "40", "--sobol-n", "16", "--workers", "2"],
    "plot_calibration.py": ["--n-samples", "200"],
    "plot_surrogate_save_reuse.py": ["--n-train", "32", "--n-mc", "500"],
}
#: A line each example must print (its answer, not just anything).
EXPECT = {
    "plot_own_model_correlated.py": "P[d > 18 mm] = ",
    "plot_fe_convergence.py": "from the limit ",
    "plot_surrogate_comparison.py": "95% coverage ",
    "plot_surrogate_monte_carlo.py": "(5% critical value ",
    "plot_sobol_indices.py": "w(p1) first: FE ",
    "plot_active_learning.py": "active learning (GP): Pf ",
    "plot_calculix_cantilever.py": "run by run, CalculiX / beam theory with shear: 0.997",
    "plot_opensees_cantilever.py": "the same study again: 0 runs computed, 40 loaded",
    "plot_calibration.py": "E t: posterior mean ",
    "plot_surrogate_save_reuse.py": "the loaded model predicts as the saved one: True",
}
#: Examples that need a program or a package: name -> (whether it is there, how to install it).
NEEDS = {"plot_calculix_cantilever.py": (lambda: shutil.which("ccx"),
                                         "CalculiX's ccx: apt-get install calculix-ccx"),
         "plot_opensees_cantilever.py": (lambda: importlib.util.find_spec("openseespy"),
                                         "OpenSeesPy: pip install openseespy")}


def test_every_example_has_a_tiny_run():
    assert {p.name for p in EXAMPLES.glob("*.py")} == set(TINY)


def test_the_gallery_runs_every_example():
    """The docs build runs the scripts named ``plot_*.py`` (sphinx-gallery's pattern): an
    example named otherwise would be shown without its output and figures."""
    assert all(name.startswith("plot_") for name in TINY)


@pytest.mark.parametrize("name", sorted(TINY))
def test_example_runs(name, tmp_path):
    there, install = NEEDS.get(name, (lambda: True, None))
    if not there():
        pytest.skip(f"{name} needs {install}")
    out = subprocess.run([sys.executable, str(EXAMPLES / name), *TINY[name]],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert EXPECT[name] in out.stdout
    CHECKS.get(name, lambda stdout: None)(out.stdout)



def _active_learning_agrees_with_the_fe(stdout):
    """The example runs the FE model on every candidate of active learning's population: that
    is the exact Pf of the population, and it must lie in active learning's interval."""
    lo, hi = map(float, re.search(r"active learning \(GP\): Pf \S+ \[(\S+), (\S+)\]",
                                  stdout).groups())
    exact = float(re.search(r"FE on all \d+ candidates: Pf (\S+)", stdout).group(1))
    assert lo <= exact <= hi, stdout


def _opensees_converges_to_the_elastica(stdout):
    """Corotational beam elements converge to the elastica at second order, and every run
    checked agrees with it to within the 20-element mesh's error."""
    ratios = re.search(r"error ratio per halving of the elements: (\S+), (\S+), (\S+)",
                       stdout).groups()
    assert all(3.5 < float(r) < 4.5 for r in ratios), stdout
    worst = float(re.search(r"OpenSees / elastica - 1: at most (\S+) over", stdout).group(1))
    assert worst < 3e-4, stdout


#: Properties of an example's answer, checked on what it printed.
CHECKS = {"plot_active_learning.py": _active_learning_agrees_with_the_fe,
          "plot_opensees_cantilever.py": _opensees_converges_to_the_elastica}
