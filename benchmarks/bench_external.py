"""What uqkit adds to each run of an external program, and CalculiX's throughput.

* overhead: ``ExternalModel`` + ``propagate`` with a store, in one process, over a command
  that does nothing (``true``): the run directory, rendering, spawn, parsing and the store
  are all there is. Per run: the median of the runs' own times (directory to parsed output)
  plus the store's and propagate's time shared among the runs;
* throughput of the same on 2 workers (pool start included);
* CalculiX: the example's cantilever (``examples/calculix``) on 2 workers with a store: the
  wall time, and the share of the workers' time that is not ccx's own (each run's program
  time from spawn to exit is recorded beside its output); once with fresh workers (their
  start included), once more with the same pool warm.

    python benchmarks/bench_external.py [--json] [--n-true 2000] [--n-ccx 1000] [--workers 2]
"""
import argparse
import json
import pathlib
import shutil
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).parents[1]


def timed(model_class):
    """A subclass of ExternalModel whose outputs get two more columns: the run's seconds in
    uqkit (directory to parsed outputs) and the program's (spawn to exit)."""

    class Timed(model_class):
        def _run_one(self, x, row, base, env):
            from uqkit.external import model as module

            spent = []

            def run_program(*args, **kw):
                finished = original(*args, **kw)
                spent.append(finished.seconds)
                return finished

            original, module.run_program = module.run_program, run_program
            t0 = time.perf_counter()
            try:
                values, status, reason = super()._run_one(x, row, base, env)
            finally:
                module.run_program = original
            return np.append(values, [time.perf_counter() - t0, spent[0]]), status, reason

        @property
        def output_names(self):
            return (*self._names, "run_s", "program_s")

        @output_names.setter
        def output_names(self, names):
            self._names = names

    return Timed


def overhead(n, workers):
    from uqkit import propagate
    from uqkit.external import ExternalModel, Regex
    from uqkit.inputs.sampling import Samples

    folder = pathlib.Path(tempfile.mkdtemp())
    (folder / "deck.inp").write_text("*HEADING\nx = {{ x }}\n")
    model = timed(ExternalModel)(folder / "deck.inp", ["true"], input_names=["x"],
                                 outputs={"x": Regex(r"^x = (\S+)$", file="deck.inp")})
    X = Samples(np.random.default_rng(0).normal(size=(n, 1)), ("x",))
    t0 = time.perf_counter()
    res = propagate(model, X, executor="serial", store=folder / "serial", progress=False)
    wall = time.perf_counter() - t0
    assert res.n_failed == 0 and np.array_equal(res.outputs[:, 0], X.values[:, 0])
    run_s, program_s = res.outputs[:, 1], res.outputs[:, 2]
    shared = (wall - run_s.sum()) / n  # the store's chunks, propagate's bookkeeping
    t0 = time.perf_counter()
    res2 = propagate(model, X, workers=workers, store=folder / "pool", progress=False)
    pool_wall = time.perf_counter() - t0
    assert res2.n_failed == 0
    shutil.rmtree(folder)
    return {"true_runs": n, "median_run_ms": 1e3 * float(np.median(run_s)),
            "median_spawn_to_exit_ms": 1e3 * float(np.median(program_s)),
            "shared_store_ms_per_run": 1e3 * shared,
            "overhead_median_ms_per_run": 1e3 * (float(np.median(run_s)) + shared),
            "overhead_mean_ms_per_run": 1e3 * wall / n,
            "true_runs_per_s_pool": n / pool_wall, "workers": workers}


def calculix(n, workers):
    """The CalculiX cantilever of ``examples/calculix/cantilever.toml``, its runs timed."""
    from uqkit import propagate, sample
    from uqkit.external import ExternalModel
    from uqkit.external.config import load_config

    study = load_config(ROOT / "examples" / "calculix" / "cantilever.toml")
    model = study.model
    model.__class__ = timed(ExternalModel)  # the same model; its runs report their times
    model.output_names = model.__dict__.pop("output_names")  # now through Timed's property
    out = {"ccx_runs": n}
    for key, seed in (("", 1), ("_warm", 2)):  # fresh workers; then the same pool again
        folder = pathlib.Path(tempfile.mkdtemp())
        t0 = time.perf_counter()
        res = propagate(model, sample(study.inputs, n, seed=seed), workers=workers,
                        store=folder / "store", progress=False)
        wall = time.perf_counter() - t0
        shutil.rmtree(folder)
        assert res.n_failed == 0
        program = float(res.outputs[:, 2].sum())
        out.update({f"ccx_wall{key}_s": wall, f"ccx_runs_per_s{key}": n / wall,
                    f"ccx_median_program{key}_ms": 1e3 * float(np.median(res.outputs[:, 2])),
                    f"ccx_overhead_share{key}": 1 - program / (wall * workers)})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--n-true", type=int, default=2000)
    ap.add_argument("--n-ccx", type=int, default=1000, help="0: skip CalculiX")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    out = overhead(args.n_true, args.workers)
    if args.n_ccx and shutil.which("ccx"):
        out.update(calculix(args.n_ccx, args.workers))
    if args.json:
        print(json.dumps(out))
        return out
    print(f"overhead per run over `true` ({out['true_runs']} runs, one process, store): "
          f"{out['overhead_median_ms_per_run']:.2f} ms at the median (the run "
          f"{out['median_run_ms']:.2f} ms, of which spawn to exit "
          f"{out['median_spawn_to_exit_ms']:.2f} ms; store and bookkeeping "
          f"{out['shared_store_ms_per_run']:.2f} ms), {out['overhead_mean_ms_per_run']:.2f} ms "
          "mean")
    print(f"throughput over `true` on {args.workers} workers: "
          f"{out['true_runs_per_s_pool']:.0f} runs/s")
    if "ccx_runs" in out:
        print(f"CalculiX cantilever, {out['ccx_runs']} runs on {args.workers} workers: "
              f"{out['ccx_wall_s']:.1f} s ({out['ccx_runs_per_s']:.0f} runs/s; ccx "
              f"{out['ccx_median_program_ms']:.1f} ms a run at the median); uqkit's share of "
              f"the workers' time {100 * out['ccx_overhead_share']:.1f}% (the workers' start "
              f"included); again with the pool warm: {out['ccx_wall_warm_s']:.1f} s, "
              f"{100 * out['ccx_overhead_share_warm']:.1f}%")
    elif args.n_ccx:
        print("CalculiX skipped: ccx not found (apt-get install calculix-ccx)")
    return out


if __name__ == "__main__":
    main()
