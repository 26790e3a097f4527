"""The checks of a BDL estimator's settings: each bad value named, with what it must be.

The device: ``device="auto"`` takes the GPU where one is present and the problem is big
enough to train faster there (:func:`choose_device`); a GPU asked for by name on a problem
below that size trains there, with a :class:`SlowDeviceWarning`.

Imports numpy, torch (to check the device) and the package's priors and validation.
"""
import math
import warnings

import numpy as np
import torch

from ..priors import make_prior
from ..validation import is_int, is_real

__all__ = ["ACTIVATIONS", "INFERENCES", "LAPLACE_VARIANCES", "SlowDeviceWarning",
           "GPU_MEASURED", "AUTO_GPU_WORK", "check_laplace_variance",
           "check_prediction_settings", "step_work", "choose_device", "check_settings",
           "fit_device"]

#: The hidden layers' activations a BDL takes.
ACTIVATIONS = ("tanh", "relu")
#: The inferences a BDL takes: mean-field variational inference and the linearised Laplace
#: approximation.
INFERENCES = ("meanfield", "laplace")

#: How a Laplace regression's predictions get their epistemic variance: from posterior draws
#: or exactly (``BDL(laplace_variance=...)``).
LAPLACE_VARIANCES = ("draws", "exact")

#: What a GPU gave below and above ``AUTO_GPU_WORK``, measured on an H200 and on an H100,
#: each beside 16 CPU cores (``python benchmarks/bench_gpu.py``, docs/guide/performance.md).
GPU_MEASURED = ("on an H200 beside 16 CPU cores, cuda took 0.8-1.4x the CPU's time below it "
                "(mean field at 1e4-3e5, Laplace at 4e5-2e6) and trained 3.7-13x faster "
                "above it (mean field at 1.2e6-3.5e7, Laplace at 4.7e6-2.4e7); on an H100, "
                "0.5-0.95x (mean field) and 2.0-2.7x (Laplace) the CPU's time below it, "
                "5.1-13x faster above it")

#: Per engine, the work of one training step (:func:`step_work`) from which ``device="auto"``
#: takes a GPU: between the largest work at which cuda was measured no faster than the CPU
#: (the H200) or at most 2x faster (the H100) and the smallest at which it was several times
#: faster on both (``benchmarks/bench_gpu.py``).
AUTO_GPU_WORK = {"meanfield": 1e6, "laplace": 3e6}


class SlowDeviceWarning(UserWarning):
    """The device asked for was measured slower than the CPU on problems of this kind (an
    H200), or at most 2x faster (an H100): not several times faster."""


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
    _check_prediction_values(est)
    for name in ("epochs", "batch_size", "n_samples", "kl_samples", "lr_step", "eval_every"):
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
    if est.patience is not None and not is_int(est.patience, 1):
        raise ValueError(f"patience must be None or an integer >= 1, got "
                         f"patience={est.patience!r}")
    if not (is_real(est.val_fraction) and 0.0 <= est.val_fraction < 1.0):
        raise ValueError(f"val_fraction must be a number in [0, 1), got "
                         f"val_fraction={est.val_fraction!r}")
    for name in ("learn_noise", "local_reparam", "standardize"):
        if not isinstance(getattr(est, name), (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {getattr(est, name)!r}")
    if est.progress is not None and not isinstance(est.progress, (bool, np.bool_)):
        raise ValueError(f"progress must be None, True or False, got {est.progress!r}")
    if est.noise_prior is not None and not (
            isinstance(est.noise_prior, (tuple, list)) and len(est.noise_prior) == 2
            and all(is_real(v) and v > 0 for v in est.noise_prior)):
        raise ValueError(f"noise_prior must be None or (shape, rate) > 0, got "
                         f"{est.noise_prior!r}")
    if not isinstance(est.warm_sigma, str) or est.warm_sigma not in ("laplace", "keep"):
        raise ValueError(f"warm_sigma must be 'laplace' or 'keep', got {est.warm_sigma!r}")
    if not (isinstance(est.device, str) and est.device == "auto"):
        try:
            device = torch.device(est.device)
        except (RuntimeError, TypeError):
            raise ValueError(f"device must be 'auto' or name a torch device, got "
                             f"device={est.device!r}") from None
        if device.type not in ("cpu", "cuda"):  # the devices the engines are tested on
            raise ValueError(f"device must be 'auto', 'cpu' or 'cuda' (or 'cuda:N'), got "
                             f"device={est.device!r}")
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
    check_laplace_variance(est)
    if est.inference == "laplace":
        prior.check_laplace()
        if est.val_fraction:
            raise ValueError("val_fraction and early stopping apply to "
                             "inference='meanfield'; inference='laplace' trains to "
                             f"convergence (got val_fraction={est.val_fraction!r})")


def check_laplace_variance(est, inference=None):
    """Raise a ValueError unless ``est.laplace_variance`` is one of ``LAPLACE_VARIANCES`` and,
    if ``"exact"``, ``est`` a Laplace regression (checked at fit and, since ``set_params`` may
    change it on a fitted model, at prediction, where ``inference`` is the fitted one's)."""
    variance = est.laplace_variance
    inference = est.inference if inference is None else inference
    if not isinstance(variance, str) or variance not in LAPLACE_VARIANCES:
        raise ValueError(f"laplace_variance must be one of {LAPLACE_VARIANCES}, got "
                         f"laplace_variance={variance!r}")
    if variance == "exact" and (inference != "laplace" or est._task != "regression"):
        raise ValueError(f"laplace_variance='exact' is the linearised Laplace regression's "
                         f"variance; this {type(est).__name__} with inference="
                         f"{inference!r} estimates its variance from draws "
                         f"(laplace_variance='draws')")


def _check_prediction_values(est):
    """The checks of the settings a prediction reads, at the fit and at every prediction."""
    for name in ("predict_samples", "predict_batch"):
        v = getattr(est, name)
        if not is_int(v, 1):
            raise ValueError(f"{name} must be an integer >= 1, got {name}={v!r}")
    if est.num_threads is not None and not is_int(est.num_threads, 1):
        raise ValueError(f"num_threads must be None or an integer >= 1, got "
                         f"num_threads={est.num_threads!r}")


def check_prediction_settings(est):
    """Raise a ValueError naming the first bad prediction setting of the fitted ``est``:
    ``set_params`` may change them after the fit, which checked them (a ``predict_batch`` of
    -1 left the outputs as allocated, uninitialised memory, without a word)."""
    _check_prediction_values(est)
    fitted = (getattr(est, "fit_config_", None) or {}).get("inference", est.inference)
    check_laplace_variance(est, fitted)


def step_work(inference, n_rows, n_params, batch_size=None, n_samples=1):
    """The work of one training step, in multiply-adds of one layer pass: rows times
    parameters, the rows being a minibatch's draws (``min(batch_size, n_rows) *
    n_samples``, mean field) or the whole training set (Laplace's full-batch L-BFGS).

    >>> step_work("meanfield", 512, 838, batch_size=16)   # the paper's network
    13408
    >>> step_work("laplace", 20_000, 4_739)   # a 64-64 network, 5 inputs, 3 outputs
    94780000
    """
    if inference == "laplace":
        return int(n_rows) * int(n_params)
    return min(int(batch_size), int(n_rows)) * int(n_samples) * int(n_params)


def choose_device(requested, inference, work, cuda_available):
    """The torch device a fit of ``work`` (:func:`step_work`) runs on, and a warning or None.

    ``"auto"``: cuda where ``cuda_available`` and ``work`` reaches the measured
    ``AUTO_GPU_WORK[inference]``, else the CPU. A named device is used as named; cuda below
    that work gets a :class:`SlowDeviceWarning`'s text; cuda without a GPU is a ValueError.

    >>> choose_device("auto", "meanfield", 13_408, cuda_available=True)
    (device(type='cpu'), None)
    >>> choose_device("auto", "meanfield", 2_000_000, cuda_available=True)
    (device(type='cuda'), None)
    >>> choose_device("auto", "meanfield", 2_000_000, cuda_available=False)
    (device(type='cpu'), None)
    """
    threshold = AUTO_GPU_WORK[inference]
    if isinstance(requested, str) and requested == "auto":
        big = cuda_available and work >= threshold
        return torch.device("cuda" if big else "cpu"), None
    device = torch.device(requested)
    if device.type != "cuda":
        return device, None
    if not cuda_available:
        raise ValueError(f"device={requested!r} asks for a GPU, but torch sees none "
                         f"(torch.cuda.is_available() is False); use device='cpu' or 'auto'")
    if work < threshold:
        return device, (
            f"device={requested!r}: one training step of this problem is {work:,} "
            f"multiply-adds, below the {threshold:,.0f} from which a GPU was measured several "
            f"times faster than the CPU ({GPU_MEASURED}); device='auto' would train it on the CPU")
    return device, None


def fit_device(est, n_rows, n_params):
    """Resolve ``est.device`` for a fit on ``n_rows`` rows of a network of ``n_params``
    weights (:func:`choose_device`), warn if it is a GPU too small a problem, and keep it
    as ``est.device_``."""
    work = step_work(est.inference, n_rows, n_params, est.batch_size, est.n_samples)
    device, warning = choose_device(est.device, est.inference, work,
                                    torch.cuda.is_available())
    if warning:
        warnings.warn(warning, SlowDeviceWarning, stacklevel=4)
    est.device_ = device
    return device
