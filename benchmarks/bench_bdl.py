"""BDL speed on CPU: training the 5-30-15-10-3 net on 512 samples for 1000 epochs at batch 16,
prediction for 1e5 inputs x 200 posterior samples, a deterministic torch MLP of the same shape
trained the same way (with the ratio), and a surrogate Monte Carlo of 1e5 samples through
``propagate``: with ``SurrogateModel`` as it is (means only) and as it was (the mean of a full
predictive distribution with its 95% mixture intervals, which it then threw away).

``train_s`` is one mean-field fit (the batched trainer of :mod:`surrogates.meanfield.batched`
with K = 1, the path ``BDL.fit`` takes for these settings); ``batched_k24_s`` the wall time of
24 such fits (seeds 0-23) as one batched program (:func:`surrogates.fit_many`), and
``batched_speedup = 24 * train_s / batched_k24_s``; ``batched_k24_jobs_s`` the same 24 fits
split over ``--jobs`` worker processes (``fit_many(..., n_jobs=jobs)``: two batched programs
of 12 on a 2-core machine, the workers' start included) and ``batched_jobs_speedup`` its
ratio. ``train_autograd_s`` is the same single fit by the autograd trainer
(``_BaseBDL._fit_autograd``, which settings the batched trainer does not support take), for
comparison.

The Laplace trainer (``BDL(inference="laplace")``: MAP by full-batch L-BFGS, then the
linearised Laplace posterior) on the same data: one fit (``laplace_train_s``), 24 fits as
one batched program (``laplace_batched_k24_s``), their ratio
``laplace_batched_speedup = 24 * laplace_train_s / laplace_batched_k24_s``, and its
prediction of 1e5 inputs x 200 posterior draws (``laplace_predict_s``).

    python benchmarks/bench_bdl.py [--json] [--epochs N] [--max-iter N] [--jobs N] [--no-laplace]
"""
import argparse
import json
import time

import numpy as np
import torch


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--epochs", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=1, help="torch threads while training")
    ap.add_argument("--max-iter", type=int, default=2000, help="L-BFGS iterations (Laplace)")
    ap.add_argument("--jobs", type=int, default=2,
                    help="worker processes for the batched_k24_jobs_s run (fit_many's n_jobs)")
    ap.add_argument("--no-laplace", action="store_true", help="skip the Laplace figures")
    ap.add_argument("--no-autograd", action="store_true",
                    help="skip the autograd trainer's single fit")
    args = ap.parse_args(argv)

    from surrogates import BDL, NeuralNetwork

    rng = np.random.default_rng(0)
    X = rng.normal(size=(512, 5))
    Y = np.column_stack([np.tanh(X[:, 0] + X[:, 1]), X[:, 2] * X[:, 3], np.sin(X[:, 4])])
    Y += 0.01 * rng.normal(size=Y.shape)
    settings = dict(hidden=(30, 15, 10), epochs=args.epochs, batch_size=16, lr=0.005,
                    lr_step=100, lr_gamma=0.75, seed=0)
    bdl = BDL(**settings, n_samples=1, num_threads=args.threads, progress=False)
    t0 = time.perf_counter()
    bdl.fit(X, Y)
    train_s = time.perf_counter() - t0

    from surrogates import fit_many
    from surrogates.runtime import torch_threads as _torch_threads

    t0 = time.perf_counter()
    fit_many([BDL(**dict(settings, seed=k), n_samples=1, num_threads=args.threads,
                  progress=False) for k in range(24)], [(X, Y)] * 24)
    batched_k24_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    fit_many([BDL(**dict(settings, seed=k), n_samples=1, num_threads=args.threads,
                  progress=False) for k in range(24)], [(X, Y)] * 24, n_jobs=args.jobs)
    batched_k24_jobs_s = time.perf_counter() - t0
    train_autograd_s = None
    if not args.no_autograd:
        auto = BDL(**settings, n_samples=1, num_threads=args.threads, progress=False)
        Xv, Yv = auto._prepare(X, Y)
        t0 = time.perf_counter()
        with _torch_threads(args.threads):
            auto._fit_autograd(Xv, Yv)
        train_autograd_s = time.perf_counter() - t0

    Xp = rng.normal(size=(100_000, 5))
    bdl.num_threads = None  # predict on every core (training used one thread)
    t0 = time.perf_counter()
    pred = bdl.predict_distribution(Xp, n_samples=200, levels=())
    predict_s = time.perf_counter() - t0
    assert pred.mean.shape == (100_000, 3)

    from uqkit import propagate
    from uqkit.adapters import SurrogateModel

    class OldSurrogateModel(SurrogateModel):
        def __call__(self, X):
            return self.surrogate.predict_distribution(X, levels=(0.95,)).mean

    surrogate_mc = {}
    for name, adapter in (("surrogate_mc_s", SurrogateModel),
                          ("surrogate_mc_with_intervals_s", OldSurrogateModel)):
        t0 = time.perf_counter()
        propagate(adapter(bdl), Xp, executor="serial", progress=False)
        surrogate_mc[name] = time.perf_counter() - t0

    torch.set_num_threads(args.threads)
    nn_model = NeuralNetwork(**settings)
    t0 = time.perf_counter()
    nn_model.fit(X, Y)
    mlp_s = time.perf_counter() - t0
    lap = dict(hidden=(30, 15, 10), inference="laplace", max_iter=args.max_iter,
               num_threads=args.threads)
    out = {"train_s": train_s, "trainer": bdl.trainer_, "predict_s": predict_s,
           "batched_k24_s": batched_k24_s, "batched_speedup": 24 * train_s / batched_k24_s,
           "jobs": args.jobs, "batched_k24_jobs_s": batched_k24_jobs_s,
           "batched_jobs_speedup": 24 * train_s / batched_k24_jobs_s,
           "train_autograd_s": train_autograd_s, "mlp_train_s": mlp_s,
           "ratio_vs_mlp": train_s / mlp_s, **surrogate_mc}
    if not args.no_laplace:
        t0 = time.perf_counter()
        one = BDL(**lap, seed=0).fit(X, Y)
        laplace_train_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        fit_many([BDL(**lap, seed=k) for k in range(24)], [(X, Y)] * 24)
        laplace_batched_k24_s = time.perf_counter() - t0
        one.num_threads = None
        t0 = time.perf_counter()
        one.predict_distribution(Xp, n_samples=200, levels=())
        laplace_predict_s = time.perf_counter() - t0
        out.update({"laplace_train_s": laplace_train_s,
                    "laplace_iterations": one.history_["iterations"],
                    "laplace_batched_k24_s": laplace_batched_k24_s,
                    "laplace_batched_speedup": 24 * laplace_train_s / laplace_batched_k24_s,
                    "laplace_predict_s": laplace_predict_s})
    if args.json:
        print(json.dumps(out))
    else:
        steps = args.epochs * 32
        print(f"BDL training : {train_s:.1f} s ({args.epochs} epochs x 32 steps, "
              f"{1e3 * train_s / steps:.2f} ms per step, {args.threads} thread)")
        print(f"BDL batched  : {batched_k24_s:.1f} s for 24 fits at once "
              f"({out['batched_speedup']:.1f}x faster than 24 single fits)")
        print(f"BDL batched  : {batched_k24_jobs_s:.1f} s for 24 fits at once in {args.jobs} "
              f"processes ({out['batched_jobs_speedup']:.1f}x faster than 24 single fits)")
        if train_autograd_s is not None:
            print(f"BDL autograd : {train_autograd_s:.1f} s (the autograd trainer, one fit)")
        print(f"BDL predict  : {predict_s:.2f} s (1e5 inputs x 200 posterior samples)")
        print(f"torch MLP    : {mlp_s:.1f} s (same shape and schedule); BDL / MLP = "
              f"{train_s / mlp_s:.2f}")
        print(f"surrogate MC : {surrogate_mc['surrogate_mc_s']:.2f} s for 1e5 samples "
              f"(SurrogateModel, means only); "
              f"{surrogate_mc['surrogate_mc_with_intervals_s']:.2f} s with 95% intervals")
        if not args.no_laplace:
            print(f"Laplace fit  : {out['laplace_train_s']:.1f} s ({out['laplace_iterations']} "
                  f"L-BFGS iterations); 24 fits batched: {out['laplace_batched_k24_s']:.1f} s "
                  f"({out['laplace_batched_speedup']:.1f}x faster than 24 single fits)")
            print(f"Laplace pred.: {out['laplace_predict_s']:.2f} s (1e5 inputs x 200 "
                  "posterior draws)")
    return out


if __name__ == "__main__":
    main()
