"""Calibration study: the membrane of the main job, measured, and its inputs inferred.

Synthetic measurements: the FE model's deflections w at the paper's three probes (mesh
points, ``probe_frame="relative"``) at true inputs drawn once from Table 3 (``seed``), plus
Gaussian noise of ``noise`` (1%) of each deflection, repeated ``n_measurements`` times. The
posterior of all five inputs, with Table 3 as the prior, is sampled by TMCMC
(:func:`uqkit.calibration.calibrate`):

* with the FE model itself (the reference);
* with a BDL surrogate (``make_surrogate("bdl")``, the Laplace BDL) trained on ``n_train`` FE
  runs (a Latin hypercube of the prior), its predictive variance in the likelihood;
* with the same BDL ignoring its predictive variance;
* with the GP baseline, its predictive variance in the likelihood;
* and, as the control, with the FE model again under another seed: its distance from the
  first FE posterior is the samplers' own Monte Carlo error.

The report compares each surrogate posterior with the FE posterior per input: the difference
of the means and the ratio of the standard deviations in units of the FE posterior's, the
1-D Wasserstein distance in the same units, the 95% intervals and whether they hold the true
input; and the model runs and wall time of each. A membrane's deflection depends on E and t
mostly through their product (the load parameter ``|p| b / (E t)`` of membrane theory), so the
measurements inform E t far better than E and t apart: the report gives E t's posterior too.

Run it with ``uqkit study calibration --out DIR`` or :func:`run`. It writes ``report.md``,
``report.json``, ``posterior_corner.png`` and every posterior's draws
(``posterior_draws.npz``). Every FE run lives in a store, so a killed study resumes without
recomputing them.

The package::

    settings  the settings dataclass and the constants
    study     run(): the data, the tasks, the report's numbers
    report    report.md's text and the figures
"""
from .settings import CalibrationStudy, CONTROL, VARIANTS
from .study import compare, measurements, run

__all__ = ["CONTROL", "CalibrationStudy", "VARIANTS", "compare", "measurements", "run"]
