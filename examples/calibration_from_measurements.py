"""What do measured deflections say about a membrane's thickness and stiffness? Bayesian
calibration of the FE membrane's five inputs from three measured deflections, with the
measurement noise unknown.

    python examples/calibration_from_measurements.py [--n-samples 2000] [--out DIR]

The "measurements" are the FE model's deflections at known inputs plus noise of 1% of the
largest deflection, so the posterior can be checked against the truth.
"""
import argparse
import pathlib

import numpy as np

from uqkit.adapters import MembraneModel
from uqkit.calibration import calibrate
from uqkit.presets import table3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-samples", type=int, default=2000, help="TMCMC samples per stage")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="calibration_results")
    args = ap.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    fe = MembraneModel(probe_frame="relative")  # w at p1, p2, p3 (length units, w < 0 down)
    truth = {"l": 2.0, "b": 1.0, "t": 0.0016, "E": 205.0, "nu": 0.3}
    w = fe(np.array([list(truth.values())]))[0][0]
    rng = np.random.default_rng(0)
    sigma = 0.01 * abs(w[0])  # the gauges' noise: 1% of the largest deflection
    observed = w + rng.standard_normal((2, 3)) * sigma  # two measurement campaigns
    print(f"measured w at p1, p2, p3: {observed.round(4).tolist()}")

    # the noise's standard deviation is unknown: a prior from 0.1% to 10% of |w(p1)|
    noise = f"uniform({0.001 * abs(w[0]):.6g}, {0.1 * abs(w[0]):.6g})"
    post = calibrate(fe, table3(), observed, noise, n_samples=args.n_samples, seed=0,
                     workers=args.workers, store=out / "runs")
    print(post.summary())
    Et = post.samples[:, 2] * post.samples[:, 3]
    lo, hi = np.quantile(Et, [0.025, 0.975])
    print(f"E t: posterior mean {Et.mean():.5g}, 95% interval [{lo:.5g}, {hi:.5g}] "
          f"(true {truth['E'] * truth['t']:.5g})")
    import matplotlib

    matplotlib.use("Agg")
    fig = post.plot_corner(truths={**truth, "noise_std": sigma})
    fig.savefig(out / "calibration_corner.png", dpi=80)
    print(f"figure: {out / 'calibration_corner.png'}")
    return post


if __name__ == "__main__":
    main()
