"""BDL training and prediction on a GPU against the CPU of the same machine (issue 28).

Each row times one job on the CPU and on cuda, on the same machine, after a warm-up fit on
each device (CUDA's start and torch's first kernels are not a fit's cost). The CPU trains
with one torch thread (``BDL``'s default: fastest at the paper's size) or with ``--threads``
(every core by default): the paper's network and ``fit_many`` with one, the ``wide`` fit with
whichever took less per step in the ``step`` sweep at its size, the Laplace fit (whose
float64 posterior of 4,739 weights takes ~30 s on one thread) with ``--threads``:

* ``paper``: the paper's 5-30-15-10-3 network, 512 rows, batch 16, 1000 epochs (mean field);
* ``wide``: a 64-64 network on 20,000 rows of 5 inputs and 3 outputs, batch 512, 200 epochs;
* ``fit_many``: 24 paper networks (seeds 0-23) as one batched program, 100 epochs;
* ``laplace``: ``inference="laplace"``, the 64-64 network on 5,000 rows, 300 L-BFGS
  iterations (float64 on both devices);
* ``mc``: the surrogate Monte Carlo of the membrane study, ``predict_distribution(X,
  n_samples=50, return_samples=True, levels=())``, of the paper network at ``--mc`` inputs on
  cuda; on the CPU at a tenth of them (``cpu_s`` is then that time x 10, said in the row);
* ``laplace_sweep``: Laplace fits (200 L-BFGS iterations) over n x P, on the CPU with one
  thread and with ``--threads``, and on cuda: where ``AUTO_GPU_WORK["laplace"]`` is read;
* ``step``: the time per training step of the batched mean-field trainer on either device
  over a range of per-step work (:func:`surrogates.bdl.settings.step_work`), from which
  ``AUTO_GPU_WORK`` (the work from which ``device="auto"`` takes the GPU) is read.

    python benchmarks/bench_gpu.py [--json PATH] [--threads N] [--mc N] [--only a,b]
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

from surrogates.stacked import StackedMLP

PAPER = dict(hidden=(30, 15, 10), batch_size=16, lr=0.005, lr_step=100, lr_gamma=0.75)


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    Y = np.column_stack([np.tanh(X[:, 0] + X[:, 1]), X[:, 2] * X[:, 3], np.sin(X[:, 4])])
    return X, Y + 0.01 * rng.normal(size=Y.shape)


def _timed(fn):
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - t0, out


def _fit(device, X, Y, threads, **settings):
    from surrogates import BDL

    return BDL(device=device, num_threads=threads if device == "cpu" else None,
               progress=False, **settings).fit(X, Y)


def bench_fits(name, X, Y, cpu_threads, Xt=None, Yt=None, **settings):
    """One fit per device: on the CPU with each of ``cpu_threads``, then on cuda."""
    row = {"job": name}
    for device, n_threads in [("cpu", t) for t in cpu_threads] + [("cuda", None)]:
        key = device if n_threads is None else f"cpu_{n_threads}t"
        if key in row:
            continue
        _fit(device, X[:64], Y[:64], n_threads, **dict(settings, epochs=2, max_iter=2))
        seconds, model = _timed(lambda: _fit(device, X, Y, n_threads, **settings))
        row[f"{key}_s"] = round(seconds, 3)
        if Xt is not None:
            row[f"{key}_r2"] = round(float(model.score(Xt, Yt)), 4)
    row["cpu_s"] = min(v for k, v in row.items() if k.startswith("cpu_") and k.endswith("t_s"))
    row["speedup"] = round(row["cpu_s"] / row["cuda_s"], 2)
    return row


def bench_fit_many(threads):
    from surrogates import BDL

    X, Y = _data(512)
    row = {"job": "fit_many: 24 paper networks, 100 epochs"}
    for device in ("cpu", "cuda"):  # one thread: BDL's default, fastest at this size
        settings = [dict(PAPER, epochs=100, seed=s, device=device, progress=False)
                    for s in range(24)]
        BDL.fit_many([(X[:64], Y[:64])] * 2, [dict(s, epochs=2) for s in settings[:2]])
        seconds, _ = _timed(lambda: BDL.fit_many([(X, Y)] * 24, settings))
        row[f"{device}_s"] = round(seconds, 3)
    row["speedup"] = round(row["cpu_s"] / row["cuda_s"], 2)
    return row


def bench_mc(n, threads):
    from surrogates import BDL

    X, Y = _data(512)
    Xmc = np.random.default_rng(1).normal(size=(n, 5))
    row = {"job": f"surrogate MC: {n:,} inputs x 50 draws (paper network)"}
    for device, rows in (("cpu", n // 10), ("cuda", n)):
        model = BDL(**PAPER, epochs=20, device=device, progress=False).fit(X, Y)
        model.predict_distribution(Xmc[:1000], n_samples=50, return_samples=True, levels=())
        torch.set_num_threads(threads)
        seconds, pred = _timed(lambda: model.predict_distribution(
            Xmc[:rows], n_samples=50, return_samples=True, levels=()))
        row[f"{device}_s"] = round(seconds * (n // rows), 3)
        del pred
    row["cpu_note"] = f"{n // 10:,} inputs timed, x 10"
    row["speedup"] = round(row["cpu_s"] / row["cuda_s"], 2)
    return row


def bench_steps(threads):
    """Per-step time of the batched trainer on either device, over the work per step."""
    from surrogates.bdl.settings import step_work
    from surrogates.meanfield import batched

    rows = []
    for hidden, batch in (((30, 15, 10), 16), ((30, 15, 10), 128), ((64, 64), 64),
                          ((64, 64), 256), ((64, 64), 512), ((64, 64), 2048),
                          ((256, 256), 512)):
        sizes = (5, *hidden, 3)
        n_params = StackedMLP(sizes).n_params
        X, Y = (torch.as_tensor(a, dtype=torch.float32) for a in _data(batch * 20))
        member, warm = (batched.Member(X, Y, 0, epochs, 0.005, 100, 0.75, 1.0, 0,
                                       ("normal", 0.0, 1.0), 0.01, 0.1, None)
                        for epochs in (15, 1))
        row = {"hidden": list(hidden), "batch": batch,
               "work": step_work("meanfield", len(X), n_params, batch)}
        for device, n_threads in (("cpu", 1), ("cpu", threads), ("cuda", threads)):
            torch.set_num_threads(n_threads)
            batched.train(sizes, [warm], 1, batch, device=device)
            seconds, _ = _timed(lambda: batched.train(sizes, [member], 1, batch,
                                                      device=device))
            key = "cuda" if device == "cuda" else f"cpu_{n_threads}t"
            row[f"{key}_ms_per_step"] = round(1e3 * seconds / 300, 4)
        row["gpu_faster"] = row["cuda_ms_per_step"] < min(
            v for k, v in row.items() if k.startswith("cpu_"))
        rows.append(row)
    return rows


def bench_laplace_sweep(threads):
    """Laplace fit time over the work n x P on either device (200 iterations)."""
    from surrogates.bdl.settings import step_work

    rows = []
    # one thread only where it is quick: the 64-64 posterior (P = 4,739) takes ~30 s on one
    for hidden, n, cpu_threads in (((30, 15, 10), 500, (1, threads)),
                                   ((30, 15, 10), 2000, (1, threads)),
                                   ((64, 64), 1000, (threads,))):
        sizes = (5, *hidden, 3)
        n_params = StackedMLP(sizes).n_params
        X, Y = _data(n)
        row = {"hidden": list(hidden), "rows": n,
               "work": step_work("laplace", n, n_params)}
        for device, n_threads in [("cpu", t) for t in cpu_threads] + [("cuda", None)]:
            settings = dict(hidden=hidden, inference="laplace", max_iter=200)
            _fit(device, X[:64], Y[:64], n_threads, **dict(settings, max_iter=2))
            seconds, _ = _timed(lambda: _fit(device, X, Y, n_threads, **settings))
            row["cuda_s" if device == "cuda" else f"cpu_{n_threads}t_s"] = round(seconds, 3)
        row["gpu_faster"] = row["cuda_s"] < min(v for k, v in row.items()
                                               if k.startswith("cpu_"))
        rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="torch threads on the CPU (default: every core)")
    ap.add_argument("--mc", type=int, default=10_000_000, help="surrogate MC inputs")
    ap.add_argument("--only", default="step,laplace_sweep,paper,wide,fit_many,laplace,mc")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        sys.exit("bench_gpu.py needs a CUDA device")
    only = args.only.split(",")
    out = {"device": torch.cuda.get_device_name(0), "cpu_cores": os.cpu_count(),
           "threads": args.threads, "torch": torch.__version__, "rows": []}

    def report(row):
        out["rows"].append(row)
        print(json.dumps(row), flush=True)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=1)

    wide_threads = (1, args.threads)
    if "step" in only:
        for row in bench_steps(args.threads):
            report(row)
            if row["hidden"] == [64, 64] and row["batch"] == 512:  # the wide fit's CPU: the
                wide_threads = (min((1, args.threads),  # faster thread count per step
                                    key=lambda t: row[f"cpu_{t}t_ms_per_step"]),)
    if "laplace_sweep" in only:
        for row in bench_laplace_sweep(args.threads):
            report(row)
    X, Y = _data(512)
    if "paper" in only:
        report(bench_fits("paper network, 512 rows, batch 16, 1000 epochs", X, Y,
                          (1,), **PAPER, epochs=1000))
    Xw, Yw = _data(20_000)
    Xt, Yt = _data(5_000, seed=7)
    if "wide" in only:
        report(bench_fits("64-64 network, 20,000 rows, batch 512, 200 epochs", Xw, Yw,
                          wide_threads, Xt, Yt, hidden=(64, 64), batch_size=512,
                          epochs=200, lr=0.005))
    if "fit_many" in only:
        report(bench_fit_many(args.threads))
    if "laplace" in only:
        report(bench_fits("Laplace, 64-64 network, 5,000 rows, 300 iterations", Xw[:5000],
                          Yw[:5000], (args.threads,), Xt, Yt, hidden=(64, 64),
                          inference="laplace", max_iter=300))
    if "mc" in only:
        report(bench_mc(args.mc, args.threads))
    return out


if __name__ == "__main__":
    main()
