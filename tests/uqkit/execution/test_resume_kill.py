"""A real subprocess killed with SIGKILL mid-study, then resumed, loses nothing and recomputes
nothing."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np

from uqkit.execution.store import load_dataset

SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    from uqkit import propagate, sample
    from uqkit.inputs import RandomInputs

    store = sys.argv[1]

    def model(X):  # the log's path from the environment: a global set from sys.argv would
        time.sleep(0.05)  # be part of the model's identity, and each run another model
        with open(os.environ["LOG"], "a") as fh:
            fh.write("\\n".join(repr(float(x)) for x in X[:, 0]) + "\\n")
        return np.column_stack([X[:, 0] ** 2, np.sin(X[:, 1])])

    inputs = RandomInputs.from_spec({"a": "normal(0, 1)", "b": "uniform(0, 3)"})
    res = propagate(model, sample(inputs, 400, seed=42), executor="serial", chunk_size=10,
                    store=store, settings={"seed": 42}, progress=False)
    print(json.dumps({"computed": res.computed, "loaded": res.loaded}))
""")


def _run(script, store, log, **kw):
    return subprocess.Popen([sys.executable, str(script), str(store)],
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "LOG": str(log)}, **kw)


def test_sigkill_then_resume(tmp_path):
    script = tmp_path / "study.py"
    script.write_text(SCRIPT)
    store, log1, log2 = tmp_path / "store", tmp_path / "log1", tmp_path / "log2"
    proc = _run(script, store, log1)
    chunks = store / "chunks"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if chunks.exists() and len([f for f in os.listdir(chunks) if f.endswith(".npz")]) >= 8:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    finished = sorted(f for f in os.listdir(chunks) if f.endswith(".npz"))
    assert 8 <= len(finished) < 40
    before = load_dataset(store)

    out = _run(script, store, log2).communicate(timeout=300)[0]
    counts = json.loads(out.strip().splitlines()[-1])
    assert counts["loaded"] == 10 * len(finished)
    assert counts["computed"] == 400 - counts["loaded"]
    # rows of finished chunks were not evaluated again
    rerun_rows = set(open(log2).read().split())
    assert len(rerun_rows) == counts["computed"]
    assert not rerun_rows & {repr(float(x)) for x in before["inputs"][:, 0]}

    # exactly the dataset of an uninterrupted run with the same seed
    fresh = tmp_path / "fresh"
    assert _run(script, fresh, tmp_path / "log3").wait(timeout=300) == 0
    a, b = load_dataset(store), load_dataset(fresh)
    for key in ("inputs", "outputs", "status", "reasons", "rows"):
        assert np.array_equal(a[key], b[key])
