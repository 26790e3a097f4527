"""How smooth the membrane's outputs are in its inputs, seen by a GP: R^2 of a scikit-learn GP
(anisotropic RBF plus white noise, standardised data) on 1000 held-out FE runs, for w at the
paper's physical probe points and at the same points as mesh nodes (relative probes).

    python benchmarks/bench_probe_smoothness.py [--json]
"""
import argparse
import json
import warnings

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from sklearn.exceptions import ConvergenceWarning

    from surrogates import GaussianProcess
    from surrogates import metrics as M
    from uqkit import propagate, sample
    from uqkit.adapters import MembraneModel
    from uqkit.presets import table3

    sizes = (64, 128, 256)
    X = sample(table3(), max(sizes), seed=11).values
    Xv = sample(table3(), 1000, seed=12).values
    out = {}
    for frame in ("physical", "relative"):
        model = MembraneModel(probe_frame=frame)
        tr = propagate(model, X, progress=False)
        va = propagate(model, Xv, progress=False)
        ok, okv = tr.ok, va.ok
        out[frame] = {"failed_runs": int((~ok).sum() + (~okv).sum())}
        for n in sizes:
            keep = np.flatnonzero(ok)[:n]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                gp = GaussianProcess(n_restarts=2).fit(X[keep], tr.outputs[keep])
            r2 = M.r2(va.outputs[okv], gp.predict(Xv[okv]))
            out[frame][str(n)] = [round(float(v), 6) for v in r2]
    if args.json:
        print(json.dumps(out))
    else:
        for frame, rows in out.items():
            print(frame, rows)
    return out


if __name__ == "__main__":
    main()
