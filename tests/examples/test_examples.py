"""Every example runs, at tiny sizes, as a user would run it."""
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"
TINY = {
    "own_model_correlated.py": ["--n", "512"],
    "fe_convergence.py": ["--levels", "3", "--nx", "4", "--ny", "2"],
    "surrogate_save_reuse.py": ["--n-train", "32", "--n-mc", "500", "--epochs", "20"],
    "sensitivity_reliability.py": ["--n", "16", "--candidates", "2000"],
}
#: A line each example must print (its answer, not just anything).
EXPECT = {
    "own_model_correlated.py": "P[d > 18 mm] = ",
    "fe_convergence.py": "limit ",
    "surrogate_save_reuse.py": "epistemic 95% band of the mean",
    "sensitivity_reliability.py": "active learning (GP): pf ",
}


def test_every_example_has_a_tiny_run():
    assert {p.name for p in EXAMPLES.glob("*.py")} == set(TINY)


@pytest.mark.parametrize("name", sorted(TINY))
def test_example_runs(name, tmp_path):
    out = subprocess.run([sys.executable, str(EXAMPLES / name), *TINY[name]],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert EXPECT[name] in out.stdout
