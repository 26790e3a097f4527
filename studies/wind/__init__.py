"""Wind-pressure field surrogate on a tall building (paper example 4).

Per face, the taps' Cp_mean and Cp_rms are interpolated by thin-plate (biharmonic) splines
(``scipy.interpolate.RBFInterpolator``) to a 250 x 750 grid (across x up), the reference
field. BDL surrogates (2-15-10-1 for Cp_mean, 2-30-15-1 for Cp_rms; N(0,1) and N(0, IG(1,1))
priors) train on n random grid points and predict the whole field with a confidence band;
the RMSE over the field is tabulated by face and n in the layout of the paper's Table 5.
Run with ``uqkit study wind [--tpu FILE.mat] --out DIR``; without ``--tpu`` it uses the shipped
synthetic dataset (``studies/data/make_synthetic_tpu.py``).

The package::

    settings  the settings dataclass and the constants
    study     run(): the data, the tasks, the report's numbers
    report    report.md's text and the figures
"""
from .settings import NETS, PAPER_RMS, PRIORS, SYNTHETIC, WindStudy
from .study import reference_fields, run

__all__ = ["NETS", "PAPER_RMS", "PRIORS", "SYNTHETIC", "WindStudy", "reference_fields", "run"]
