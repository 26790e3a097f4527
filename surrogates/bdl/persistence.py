"""A BDL estimator on disk: one ``torch.save`` file of plain data (``weights_only`` loads).

Format (``FORMAT``, version ``FORMAT_VERSION``): a dict with ``format``, ``version``,
``estimator`` (the class name), ``config`` (the constructor arguments it was fitted with,
but for ``PREDICTION_SETTINGS``, which are saved as they stand),
``sizes`` (the layer widths), ``state`` (the engine's tensors: the Laplace posterior's, or the
mean-field model's state dict), ``x_scaler``, ``y_scaler``, ``single_output``,
``variance_scale`` and ``classes``. Version 1 files (one class with a ``task`` setting) are
read too.

Imports numpy, torch, the two engines and the surrogates' networks, likelihoods and scaling.
"""
import numpy as np
import torch

from ..laplace import LaplaceEngine
from ..likelihoods import CategoricalLikelihood, GaussianLikelihood
from ..meanfield import MeanFieldEngine
from ..meanfield.network import MeanFieldMLP
from ..scaling import Standardizer
from ..stacked import StackedMLP

__all__ = ["FORMAT", "FORMAT_VERSION", "PREDICTION_SETTINGS", "plain", "save", "load"]

#: A saved model's ``format``: what the file holds.
FORMAT = "uqkit-bdl"
#: A saved model's format version; :func:`load` refuses a file of a newer one.
FORMAT_VERSION = 3


#: The constructor arguments that act at prediction alone: a file saves them as they stand
#: (``set_params`` on the fitted model included), the others as they were at the fit.
PREDICTION_SETTINGS = ("predict_samples", "predict_batch", "laplace_variance")


def plain(value):
    """``value`` as plain Python data: numpy scalars and arrays, within tuples, lists and
    dicts too, as Python numbers and lists (a ``weights_only`` load refuses numpy objects).

    >>> plain({"seed": np.int64(3), "prior": (np.float64(2.0),), "s": np.array([0.5])})
    {'seed': 3, 'prior': (2.0,), 's': [0.5]}
    """
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    return value


def save(est, path):
    """Write the fitted estimator ``est`` to ``path`` (the module docstring's format)."""
    engine = est.engine_
    state, sizes = engine.state(), engine.sizes
    config = dict(getattr(est, "fit_config_", None) or est._config())
    config.update({name: getattr(est, name) for name in PREDICTION_SETTINGS})
    config = plain(config)  # a setting from np.logspace or np.int64 loads as a number
    blob = {"format": FORMAT, "version": FORMAT_VERSION, "estimator": type(est).__name__,
            "config": config,
            "sizes": list(sizes), "state": state,
            "x_scaler": est.x_scaler_.state(),
            "y_scaler": None if est.y_scaler_ is None else est.y_scaler_.state(),
            "single_output": bool(getattr(est, "single_output_", False)),
            "variance_scale": (None if getattr(est, "variance_scale_", None) is None
                               else est.variance_scale_.tolist()),
            "classes": None if est._task == "regression" else est.classes_.tolist()}
    torch.save(blob, path)


def load(estimators, path, device=None):
    """The estimator written by :func:`save` to ``path``, built from ``estimators`` (class
    name -> class: :class:`BDL` or :class:`BDLClassifier`, whichever was saved)."""
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise ValueError(f"{path} is not a saved BDL model")
    if blob["version"] > FORMAT_VERSION:
        raise ValueError(f"{path} has format version {blob['version']}; this uqkit reads "
                         f"up to {FORMAT_VERSION}")
    config = dict(blob["config"])
    if blob["version"] == 1:  # one class with a task setting
        task = config.pop("task")
        name = "BDL" if task == "regression" else "BDLClassifier"
        classes = None if blob["n_classes"] is None else list(range(blob["n_classes"]))
        config["progress"] = None
    else:
        name, classes = blob["estimator"], blob["classes"]
    if device is not None:
        config["device"] = device
    est = estimators[name](**config)
    est.hidden = tuple(est.hidden)
    # what a later save records, whatever set_params does (but PREDICTION_SETTINGS)
    est.fit_config_ = est._config()
    sizes = blob["sizes"]
    k = sizes[-1]
    # "auto" loads onto the CPU: the problem's size, by which it chose, is not in the file
    est.device_ = torch.device("cpu" if est.device == "auto" else est.device)
    if config.get("inference", "meanfield") == "laplace":
        engine = LaplaceEngine.from_state(StackedMLP(sizes, est.activation), blob["state"])
        est.net_, est.laplace_ = engine.net, engine.posterior.to(est.device_)
    else:
        likelihood = (GaussianLikelihood(k, est.noise_std, est.learn_noise,
                                         est.noise_prior)
                      if est._task == "regression" else CategoricalLikelihood(k))
        guide = MeanFieldMLP(sizes, est.activation, est.init_std)
        est.model_ = MeanFieldEngine.from_state(guide, est.prior, likelihood, blob["state"],
                                                est.device_).model
    est.x_scaler_ = Standardizer.from_state(blob["x_scaler"])
    est.y_scaler_ = None if blob["y_scaler"] is None else Standardizer.from_state(
        blob["y_scaler"])
    est.single_output_ = blob["single_output"]
    est.n_features_in_ = sizes[0]
    if blob.get("variance_scale") is not None:
        est.variance_scale_ = np.asarray(blob["variance_scale"])
    if classes is not None:
        est.classes_ = np.asarray(classes)
    return est
