"""CalculiX (a real third-party FE program) through ExternalModel: run by run the same tip
deflections as ccx run by hand on the same rendered decks, a timed-out run among good ones,
and ``uqkit run`` killed and resumed. Skipped where ccx is not installed."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from uqkit import propagate
from uqkit.external import FAILED_TIMEOUT, ExternalModel, Output
from uqkit.inputs.sampling import Samples

pytestmark = pytest.mark.skipif(shutil.which("ccx") is None,
                                reason="needs CalculiX's ccx: apt-get install calculix-ccx")

EXAMPLE = Path(__file__).parents[3] / "examples" / "calculix" / "cantilever.toml"

# A deck written here, not in the repository: a cantilever of B32 (full integration) beams
# loaded along z, bending about y; a wrapper script that may wait before it runs ccx.
DECK = """\
*HEADING
test plate strip {{ run_index }}
*NODE, NSET=NALL
{% for i in range(2 * n + 1) %}
{{ i + 1 }}, {{ "%.12e" | format(i * L / (2 * n)) }}, 0, 0
{% endfor %}
*ELEMENT, TYPE=B32, ELSET=EALL
{% for e in range(n) %}
{{ e + 1 }}, {{ 2 * e + 1 }}, {{ 2 * e + 2 }}, {{ 2 * e + 3 }}
{% endfor %}
*NSET, NSET=TIP
{{ 2 * n + 1 }}
*MATERIAL, NAME=M
*ELASTIC
{{ "%.12e" | format(E) }}, 0.25
*BEAM SECTION, ELSET=EALL, MATERIAL=M, SECTION=RECT
{{ "%.12e" | format(t) }}, 30.0
0, 0, 1
*BOUNDARY
1, 1, 6
*STEP
*STATIC
*CLOAD
TIP, 3, {{ "%.12e" | format(P) }}
*NODE PRINT, NSET=TIP
U
*END STEP
"""
WRAPPER = "sleep {{ delay }}\nexec ccx -i strip\n"


def tip_w(run_dir):
    """The tip's z displacement from strip.dat, read with plain Python (not uqkit's
    parsers)."""
    text = (Path(run_dir) / "strip.dat").read_text()
    return float(text.strip().splitlines()[-1].split()[3])


def test_propagate_matches_ccx_by_hand_and_a_timeout_fails_alone(tmp_path):
    deck = tmp_path / "deck"
    deck.mkdir()
    (deck / "strip.inp").write_text(DECK)
    (deck / "run.sh").write_text(WRAPPER)
    model = ExternalModel(deck, ["sh", "run.sh"], outputs={"w": Output(tip_w)},
                          input_names=["E", "P", "t", "delay"], constants={"L": 500.0, "n": 8},
                          timeout=4, keep="all")
    rng = np.random.default_rng(3)
    n = 12
    X = np.column_stack([rng.normal(70000, 3000, n), rng.normal(50, 5, n),
                         rng.normal(10, 0.3, n), np.zeros(n)])
    X[5, 3] = 30  # this run waits past the timeout
    store = tmp_path / "store"
    res = propagate(model, Samples(X, model.input_names), workers=2, store=store,
                    progress=False)
    assert res.status[5] == FAILED_TIMEOUT
    assert res.reasons[5].startswith("timeout after 4 s (run dir ")
    good = np.flatnonzero(np.arange(n) != 5)
    assert (res.status[good] == 0).all()
    for i in good:  # ccx by hand on the deck uqkit rendered
        by_hand = tmp_path / f"hand{i}"
        by_hand.mkdir()
        shutil.copy(store / "runs" / f"{i:06d}" / "strip.inp", by_hand)
        subprocess.run(["ccx", "-i", "strip"], cwd=by_hand, check=True,
                       stdout=subprocess.DEVNULL)
        assert res.outputs[i, 0] == tip_w(by_hand)
    # and the deflections are a beam's, P L^3 / (3 E I) with I = 30 t^3 / 12, less the 8
    # coarse elements' discretisation error (1.5-2%)
    E, P, t = X[good, :3].T
    ratio = res.outputs[good, 0] / (P * 500 ** 3 / (3 * E * 30 * t ** 3 / 12))
    assert np.all((ratio > 0.97) & (ratio < 0.995))


def _uqkit(*args, **kw):
    return subprocess.Popen([sys.executable, "-c", "from uqkit.cli import command; command()",
                             *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def test_uqkit_run_killed_then_rerun_computes_only_the_missing_runs(tmp_path):
    out = tmp_path / "out"
    args = ("run", EXAMPLE, "--out", out, "--n", 400, "--workers", 2, "--no-progress")
    proc = _uqkit(*args)
    chunks = out / "store" / "chunks"

    def saved():  # whole chunks (a chunk being written is a temporary file)
        return len([f for f in os.listdir(chunks) if f.endswith(".npz")]) \
            if chunks.exists() else 0

    end = time.monotonic() + 120
    while time.monotonic() < end and proc.poll() is None and saved() < 6:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    saved = saved()
    assert 6 <= saved < 100
    stdout, stderr = _uqkit(*args).communicate(timeout=600)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["loaded"] == 4 * saved, stderr
    assert summary["computed"] + summary["kept"] == 400 - 4 * saved, stderr
    assert summary["failed"] == 0
    assert re.search(r"P\[v_tip < -20.0\] = \S+ by form", stdout)
    # every run is Timoshenko beam theory's deflection at its own inputs, less the 40
    # elements' discretisation error (0.26% at the mean inputs)
    runs = np.genfromtxt(out / "runs.csv", delimiter=",", names=True, dtype=None,
                         encoding=None)
    E, P, h = runs["E"], runs["P"], runs["h"]
    theory = P * 1000.0 ** 3 / (3 * E * 20 * h ** 3 / 12) + P * 1000.0 / (5 / 6 * E / 2.6 * 20 * h)
    assert np.all(np.abs(-runs["v_tip"] / theory - 0.9974) < 5e-4)
