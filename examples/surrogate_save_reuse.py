"""Train a BDL surrogate on FE runs, save it, load it in a later session and run a surrogate
Monte Carlo with its epistemic band.

    python examples/surrogate_save_reuse.py [--n-train 256] [--epochs 1000] [--out bdl.pt]
"""
import argparse

import numpy as np

from surrogates import BDL
from uqkit import propagate, sample
from uqkit.adapters import MembraneModel, SurrogateModel
from uqkit.presets import table3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-train", type=int, default=256)
    ap.add_argument("--n-mc", type=int, default=100_000)
    ap.add_argument("--epochs", type=int, default=1000)
    ap.add_argument("--out", default="bdl.pt", help="where the model is saved")
    args = ap.parse_args(argv)

    inputs = table3()
    fe = MembraneModel(probe_frame="relative")
    train = propagate(fe, sample(inputs, args.n_train, seed=1), workers=2, progress=False)
    bdl = BDL(hidden=(30, 15, 10), prior="hierarchical-normal", epochs=args.epochs,
              batch_size=max(16, args.n_train // 4), n_samples=4, init_std=1e-5, seed=0)
    bdl.fit(train.inputs.values[train.ok], train.good_outputs())
    bdl.save(args.out)

    # ... later, in another session
    reused = BDL.load(args.out)
    X = sample(inputs, args.n_mc, seed=2)
    mc = propagate(SurrogateModel(reused, input_names=inputs.names), X, executor="serial",
                   progress=False)
    band = reused.predict_distribution(X.values[:2000], n_samples=50, return_samples=True,
                                       levels=())
    means = band.samples.mean(axis=1)  # the mean of w over inputs, per posterior draw
    lo, hi = np.quantile(means, [0.025, 0.975], axis=0)
    for j, name in enumerate(fe.output_names):
        print(f"{name}: surrogate MC mean {mc.outputs[:, j].mean():.4f}, std "
              f"{mc.outputs[:, j].std():.4f}; epistemic 95% band of the mean "
              f"[{lo[j]:.4f}, {hi[j]:.4f}]")
    return mc


if __name__ == "__main__":
    main()
