"""Every example runs, at tiny sizes, as a user would run it."""
import pathlib
import shutil
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"
TINY = {
    "own_model_correlated.py": ["--n", "512"],
    "fe_convergence.py": ["--levels", "3", "--nx", "4", "--ny", "2"],
    "surrogate_save_reuse.py": ["--n-train", "32", "--n-mc", "500", "--epochs", "20"],
    "sensitivity_reliability.py": ["--n", "16", "--candidates", "2000"],
    "calculix_cantilever.py": ["--n", "40", "--sobol-n", "16", "--out", "results"],
    "calibration_from_measurements.py": ["--n-samples", "200", "--out", "results"],
}
#: A line each example must print (its answer, not just anything).
EXPECT = {
    "own_model_correlated.py": "P[d > 18 mm] = ",
    "fe_convergence.py": "limit ",
    "surrogate_save_reuse.py": "epistemic 95% band of the mean",
    "sensitivity_reliability.py": "active learning (GP): pf ",
    "calculix_cantilever.py": "run by run, CalculiX / beam theory with shear: 0.997",
    "calibration_from_measurements.py": "E t: posterior mean ",
}
#: Examples that need a program: name -> (program, how to install it).
NEEDS = {"calculix_cantilever.py": ("ccx", "apt-get install calculix-ccx")}


def test_every_example_has_a_tiny_run():
    assert {p.name for p in EXAMPLES.glob("*.py")} == set(TINY)


@pytest.mark.parametrize("name", sorted(TINY))
def test_example_runs(name, tmp_path):
    program, install = NEEDS.get(name, (None, None))
    if program and shutil.which(program) is None:
        pytest.skip(f"{name} needs {program}: {install}")
    out = subprocess.run([sys.executable, str(EXAMPLES / name), *TINY[name]],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert EXPECT[name] in out.stdout
