"""A Laplace BDL's prediction with the epistemic variance from draws against the exact one
(``BDL(laplace_variance="draws" | "exact")``): the time to predict ``--inputs`` inputs, and
how far the draws' variance lies from the exact one (the largest and the median relative
difference over inputs and outputs).

Three networks, fitted by ``inference="laplace"`` (``--max-iter`` L-BFGS iterations):
the paper's membrane surrogate, 5-30-15-10-3 (P = 838 weights), on 64 rows (the posterior's
low-rank form, rank 192) and on 512 rows (its Cholesky factor); and the regression example's
1-20-1 (P = 61) on 30 points (the low-rank form: 2 x 30 rows <= 61). ``--draws`` posterior
draws (default 200, the ``predict_samples`` default); ``--threads`` torch threads while
predicting. Each time is the faster of two predictions, after a small one. ``--entries``
also times the exact variance with each listed ``JACOBIAN_ENTRIES`` (the chunk's Jacobian
size; on a GPU the engine takes 64 times it). ``--device cuda`` fits and predicts on a GPU.

``--active`` instead runs the reliability study's active learning with its BDL
(``make_surrogate("bdl")``, 50 draws) and again with ``laplace_variance="exact"``, on the
study's problem and candidates (the threshold from its pilot of 20,000 FE runs): Pf, runs,
iterations and seconds of each.

    python benchmarks/bench_laplace_variance.py [--json] [--inputs N] [--draws S]
        [--threads T] [--entries 262144,2097152] [--device cuda]
    python benchmarks/bench_laplace_variance.py --active [--json]
"""
import argparse
import json
import tempfile
import time

import numpy as np


def _problems(max_iter):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(512, 5))
    Y = np.column_stack([np.tanh(X[:, 0] + X[:, 1]), X[:, 2] * X[:, 3], np.sin(X[:, 4])])
    Y += 0.01 * rng.normal(size=Y.shape)
    x1 = rng.uniform(-10, 10, (30, 1))
    y1 = x1[:, 0] * np.sin(x1[:, 0]) + 0.3 * rng.normal(size=30)
    paper = dict(hidden=(30, 15, 10), inference="laplace", seed=0, max_iter=max_iter)
    return [("5-30-15-10-3, 64 rows", paper, X[:64], Y[:64], 5),
            ("5-30-15-10-3, 512 rows", paper, X, Y, 5),
            ("1-20-1, 30 rows", dict(paper, hidden=(20,)), x1, y1, 1)]


def _timed(model, X, n_draws):
    """The faster of two predictions' wall times, after a small one (the first call's
    allocations), and the prediction."""
    model.predict_distribution(X[:1000], n_samples=n_draws, levels=(0.95,))
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        pred = model.predict_distribution(X, n_samples=n_draws, levels=(0.95,))
        times.append(time.perf_counter() - t0)
    return min(times), pred


def active_learning_both_ways():
    """The reliability study's active learning (seed 0) with the BDL's variance from its 50
    draws and exact: one dict per way."""
    import warnings

    from studies.reliability import study as reliability
    from studies.reliability.settings import ReliabilityStudy
    from uqkit.adapters import make_surrogate
    from uqkit.reliability import failure_probability

    with tempfile.TemporaryDirectory() as out:  # the pilot's runs, as the study stores them
        st = ReliabilityStudy(out=out, progress=False)
        d = len(reliability.table3().names)
        pilot = reliability.fe_runs(st, "pilot", reliability._normal_points(st.n_pilot, d, 11),
                                    reliability.fe_model(st.nx, st.ny), lambda message: None)
    threshold, _ = reliability.threshold_from_pilot(pilot.outputs[pilot.ok, 0], st.quantile)
    g = reliability.DeflectionLimit(threshold, st.nx, st.ny)
    candidates = reliability._normal_points(st.n_truth, d, 12)
    out = []
    for variance in ("draws", "exact"):
        surrogate = make_surrogate("bdl", seed=st.seed, max_iter=st.max_iter,
                                   laplace_variance=variance)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = failure_probability(g, reliability.table3(), seed=st.seed + 17,
                                    method="active", surrogate=surrogate,
                                    candidates=candidates, batch=4, max_runs=st.max_runs)
        out.append({"laplace_variance": variance, "pf": r.pf, "model_runs": r.model_runs,
                    "iterations": r.info["iterations"], "converged": r.info["converged"],
                    "seconds": round(time.perf_counter() - t0, 1)})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-iter", type=int, default=2000)
    ap.add_argument("--entries", default="", help="comma-separated JACOBIAN_ENTRIES to time")
    ap.add_argument("--device", default="cpu", help="where to fit and predict (cpu, cuda)")
    ap.add_argument("--active", action="store_true",
                    help="the reliability study's active learning, draws against exact")
    args = ap.parse_args(argv)
    if args.active:
        rows = active_learning_both_ways()
        print(json.dumps(rows, indent=1) if args.json else "\n".join(map(str, rows)))
        return

    from surrogates import BDL
    from surrogates.laplace import engine

    rows = []
    for name, settings, X, Y, d in _problems(args.max_iter):
        model = BDL(**settings, device=args.device,
                    num_threads=args.threads if args.device == "cpu" else None).fit(X, Y)
        X_new = np.random.default_rng(1).normal(size=(args.inputs, d)) * X.std(0) + X.mean(0)
        draws_s, drawn = _timed(model, X_new, args.draws)
        model.set_params(laplace_variance="exact")
        exact_s, exact = _timed(model, X_new, args.draws)
        rel = np.abs(drawn.epistemic_var / exact.epistemic_var - 1)
        row = {"problem": name, "P": model.engine_.net.n_params,
               "form": "factor" if model.laplace_.factor is not None else
               f"low rank {model.laplace_.basis.shape[1]}",
               "draws_s": round(draws_s, 3), "exact_s": round(exact_s, 3),
               "draws_error_max": float(rel.max()), "draws_error_median": float(np.median(rel))}
        for entries in filter(None, args.entries.split(",")):
            default, engine.JACOBIAN_ENTRIES = engine.JACOBIAN_ENTRIES, int(entries)
            try:
                row[f"exact_s_at_{entries}"] = round(_timed(model, X_new, args.draws)[0], 3)
            finally:
                engine.JACOBIAN_ENTRIES = default
        rows.append(row)
    out = {"inputs": args.inputs, "draws": args.draws, "threads": args.threads,
           "device": args.device, "rows": rows}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{args.inputs} inputs, {args.draws} draws, {args.threads} thread(s), {args.device}")
    for r in rows:
        extra = " ".join(f"{k[8:]}={v}s" for k, v in r.items() if k.startswith("exact_s_at"))
        print(f"{r['problem']:24s} P={r['P']:4d} {r['form']:13s} draws {r['draws_s']:7.3f} s"
              f"  exact {r['exact_s']:7.3f} s  draws' error max {r['draws_error_max']:.3f}"
              f" median {r['draws_error_median']:.3f} {extra}")


if __name__ == "__main__":
    main()
