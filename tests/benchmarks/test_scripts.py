"""The benchmark scripts are not run by the tests (they time things), but they must stay
runnable: each compiles and answers --help."""
import pathlib
import subprocess
import sys

import pytest

SCRIPTS = sorted((pathlib.Path(__file__).parents[2] / "benchmarks").glob("bench_*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_benchmark_script_runs_its_help(script):
    out = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "--json" in out.stdout


def test_every_benchmark_is_found():
    assert {p.name for p in SCRIPTS} >= {"bench_fem.py", "bench_propagate.py", "bench_bdl.py",
                                        "bench_uq.py", "bench_probe_smoothness.py"}
