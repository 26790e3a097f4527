"""The checks of a BDL estimator's settings: each bad value named, with what it must be.

Imports numpy, torch (to check the device) and the package's priors and validation.
"""
import math
import warnings

import numpy as np
import torch

from ..priors import make_prior
from ..validation import is_int, is_real

__all__ = ["ACTIVATIONS", "INFERENCES", "SlowDeviceWarning", "GPU_MEASURED", "check_settings"]

ACTIVATIONS = ("tanh", "relu")
INFERENCES = ("meanfield", "laplace")

#: What a GPU gave mean-field training, measured on an H100 beside 16 CPU cores (issue 28).
GPU_MEASURED = ("the paper's network on 512 rows: 129 s on cuda against 8.7 s on the CPU; a "
                "64-64 network on 20,000 rows: 30.7 s against 14.0 s")


class SlowDeviceWarning(UserWarning):
    """The device asked for was measured slower than the CPU on problems of this kind."""


def check_settings(est):
    """Raise a ValueError naming the first bad setting of the estimator ``est``."""
    try:
        hidden = tuple(est.hidden)
    except TypeError:
        raise ValueError(f"hidden must be a sequence of layer widths, got {est.hidden!r}") \
            from None
    if any(not is_int(h, 1) for h in hidden):
        raise ValueError(f"hidden widths must be integers >= 1, got hidden={est.hidden!r}")
    if est.activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got "
                         f"activation={est.activation!r}")
    for name in ("epochs", "batch_size", "n_samples", "kl_samples", "lr_step", "eval_every",
                 "predict_samples", "predict_batch"):
        v = getattr(est, name)
        if not is_int(v, 1):
            raise ValueError(f"{name} must be an integer >= 1, got {name}={v!r}")
    for name in ("map_epochs", "kl_anneal", "trace_weights", "seed"):
        v = getattr(est, name)
        if not is_int(v, 0):
            raise ValueError(f"{name} must be an integer >= 0, got {name}={v!r}")
    for name in ("lr", "lr_gamma", "noise_std", "init_std", "kl_weight"):
        v = getattr(est, name)
        if not (is_real(v) and v > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {name}={v!r}")
    for name in ("patience", "num_threads"):
        v = getattr(est, name)
        if v is not None and not is_int(v, 1):
            raise ValueError(f"{name} must be None or an integer >= 1, got {name}={v!r}")
    if not (is_real(est.val_fraction) and 0.0 <= est.val_fraction < 1.0):
        raise ValueError(f"val_fraction must be a number in [0, 1), got "
                         f"val_fraction={est.val_fraction!r}")
    for name in ("learn_noise", "local_reparam", "standardize"):
        if not isinstance(getattr(est, name), (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {getattr(est, name)!r}")
    if est.progress is not None and not isinstance(est.progress, (bool, np.bool_)):
        raise ValueError(f"progress must be None, True or False, got {est.progress!r}")
    if est.noise_prior is not None and not (
            len(est.noise_prior) == 2 and all(is_real(v) and v > 0
                                               for v in est.noise_prior)):
        raise ValueError(f"noise_prior must be None or (shape, rate) > 0, got "
                         f"{est.noise_prior!r}")
    if not isinstance(est.warm_sigma, str) or est.warm_sigma not in ("laplace", "keep"):
        raise ValueError(f"warm_sigma must be 'laplace' or 'keep', got {est.warm_sigma!r}")
    try:
        torch.device(est.device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must name a torch device, got {est.device!r}") from None
    prior = make_prior(est.prior)  # raises on an unknown prior
    if not isinstance(est.inference, str) or est.inference not in INFERENCES:
        raise ValueError(f"inference must be one of {INFERENCES}, got "
                         f"inference={est.inference!r}")
    if not is_int(est.max_iter, 1):
        raise ValueError(f"max_iter must be an integer >= 1, got max_iter={est.max_iter!r}")
    scale = est.laplace_prior_scale
    if not (isinstance(scale, str) and scale == "evidence") and not (
            is_real(scale) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"laplace_prior_scale must be 'evidence' or a number > 0, got "
                         f"laplace_prior_scale={scale!r}")
    if est.inference == "meanfield" and torch.device(est.device).type == "cuda":
        warnings.warn(f"device={est.device!r}: these networks are small for a GPU, and mean-field "
                      f"training was slower on cuda than on the CPU at every size measured "
                      f"({GPU_MEASURED}); use device='cpu' unless you have measured your problem "
                      f"(benchmarks/bench_bdl.py)", SlowDeviceWarning, stacklevel=4)
    if est.inference == "laplace":
        prior.check_laplace()
        if torch.device(est.device).type != "cpu":
            raise ValueError(f"inference='laplace' trains on the CPU (in float64), got "
                             f"device={est.device!r}")
        if est.val_fraction:
            raise ValueError("val_fraction and early stopping apply to "
                             "inference='meanfield'; inference='laplace' trains to "
                             f"convergence (got val_fraction={est.val_fraction!r})")
