"""Many BDL fits as few batched programs: grouping by what must agree, bin-packing the
programs over worker processes, and the two engines' group fits.

Imports numpy, torch, loky (for n_jobs > 1) and the engines' group trainers:
:mod:`surrogates.laplace.fit` and :mod:`surrogates.meanfield.batched`.
"""
import copy
import os
import time

import numpy as np
import torch

from ..laplace import fit as laplace_fit
from ..likelihoods import GaussianLikelihood
from ..meanfield import batched as meanfield_batched
from ..meanfield.model import BayesianModel
from ..meanfield.network import MeanFieldMLP
from ..priors import make_prior
from ..runtime import epoch_bar, torch_threads
from ..scaling import IdentityScaler, Standardizer
from ..stacked import StackedMLP
from ..validation import is_int

__all__ = ["fit_many", "start_full_batch_fit"]


def _fit_laplace_group(estimators, data):
    """Fit ``inference="laplace"`` estimators of one architecture and task as one batched
    program; ``data`` holds each one's validated (X, Y) (Y as (n, k), or class indices)."""
    t0 = time.perf_counter()
    first = estimators[0]
    xs, ys, priors, seeds = [], [], [], []
    for est, (X, Y) in zip(estimators, data):
        x, y = start_full_batch_fit(est, X, Y, torch.float64, drop=("model_",))
        xs.append(x)
        ys.append(y)
        priors.append(copy.deepcopy(make_prior(est.prior)))
        seeds.append(int(est.seed))
    k = data[0][1].shape[1] if first._task == "regression" else len(first.classes_)
    net = StackedMLP((data[0][0].shape[1], *first.hidden, k), first.activation)
    posts = laplace_fit.fit(net, xs, ys, first._task, priors, seeds, noise_std=first.noise_std,
                            learn_noise=first.learn_noise, noise_prior=first.noise_prior,
                            max_iter=int(first.max_iter),
                            prior_scales=[e.laplace_prior_scale for e in estimators],
                            device=first.device_)
    seconds = (time.perf_counter() - t0) / len(estimators)
    for est, post in zip(estimators, posts):
        est.net_, est.laplace_ = net, post
        est.history_ = {"iterations": post.iterations, "converged": post.converged,
                        "prior_scale": post.prior_scale, "objective": post.objective}
        est.stopped_epoch_ = None
        est.n_iter_ = post.iterations  # L-BFGS iterations (scikit-learn's name)
        est.fit_seconds_ = seconds  # the group's wall time, shared out


#: Settings that must agree for estimators to train as one batched program.
_BATCH_KEYS = ("activation", "noise_std", "learn_noise", "noise_prior", "max_iter",
               "num_threads")


def fit_many(estimators, datasets, n_jobs=None):
    """Fit K estimators on K data sets; returns the fitted estimators (the same objects).

    ``inference="laplace"`` estimators of one task and architecture (``hidden`` and the
    settings in ``_BATCH_KEYS`` equal) train as one batched program per number of outputs
    and training-set size: each network's rows go through the operations they go through
    alone, while the per-step overhead is paid once for all of them. Members may differ in
    data (sizes included), seed and prior. A member equals its single fit bit for bit where
    its training rows times each hidden layer's width are whole multiples of 16 (tested):
    torch's element-wise kernels compute the last numbers of a tensor that is not (its
    activations) by other code, a difference of 1e-16 that L-BFGS amplifies in a fit that
    stops at ``max_iter`` (50 rows of a noise-free function, the default network:
    predictions 7% apart, 0.5 of their predictive std at most;
    :mod:`surrogates.laplace.fit`).
    ``inference="meanfield"`` regression estimators that the batched trainer takes
    (``_batched_meanfield_reason``) train as one program per architecture, batch size,
    ``n_samples``, ``learn_noise``, prior family and thread/progress setting
    (:mod:`surrogates.meanfield.batched`): members may differ in data (sizes included), seed,
    prior parameters, ``kl_weight``, ``kl_anneal``, ``lr``, ``lr_step``, ``lr_gamma``,
    ``epochs``, ``init_std``, ``noise_std``, ``noise_prior`` and ``standardize``; each keeps
    its own epochs and minibatches and random stream, so it equals its single fit to rounding
    (tested). Other estimators are fitted one by one. Every member is an ordinary fitted
    estimator (``predict``, ``save``, ``load``).

    With ``n_jobs`` > 1 the batched programs are split into parts of about equal work, as
    many parts per program as processes, and the parts run in ``n_jobs`` worker processes
    (loky's: fresh interpreters; torch with the members' ``num_threads`` there): a member's
    fit does not depend on its batch-mates, so it is the same however its program is split
    (with the caveat above; tested). Worth it when the fits take longer than a worker's start
    (~3 s: importing torch).

    Args:
        estimators: K unfitted (or refittable) :class:`BDL` / :class:`BDLClassifier` objects.
        datasets: K (X, y) pairs.
        n_jobs: worker processes for the batched programs: None or 1 (this process), an
            integer >= 1, or -1 (one per CPU core).

    Raises:
        ValueError: K = 0, the lengths differ, the data sets disagree on the number of
            features, ``n_jobs`` is not None, -1 or an integer >= 1, or any data or setting
            is invalid (the message names the member).

    Example:
        >>> import numpy as np
        >>> from surrogates import BDL
        >>> x = np.linspace(-1, 1, 40)[:, None]
        >>> models = fit_many([BDL(hidden=(8,), inference="laplace", seed=s) for s in (0, 1)],
        ...                   [(x, np.sin(3 * x)), (x[:20], np.cos(3 * x[:20]))])
        >>> [round(float(m.score(x, np.sin(3 * x))), 3) for m in models][0]
        1.0
    """
    estimators, datasets = list(estimators), list(datasets)
    if n_jobs is None or (not isinstance(n_jobs, bool) and n_jobs == -1):
        n_jobs = 1 if n_jobs is None else (os.cpu_count() or 1)
    elif not is_int(n_jobs, 1):
        raise ValueError(f"n_jobs must be None, -1 or an integer >= 1, got n_jobs={n_jobs!r}")
    if not estimators:
        raise ValueError("fit_many needs at least one estimator and data set, got K = 0")
    if len(estimators) != len(datasets):
        raise ValueError(f"fit_many got {len(estimators)} estimators and {len(datasets)} data "
                         "sets; give one data set per estimator")
    data = []
    for i, (est, pair) in enumerate(zip(estimators, datasets)):
        try:
            X, y = pair
        except (TypeError, ValueError):
            raise ValueError(f"data set {i} must be an (X, y) pair") from None
        try:
            data.append(est._prepare(X, y))
        except ValueError as exc:
            raise ValueError(f"member {i}: {exc}") from None
    d0 = data[0][0].shape[1]
    for i, (X, Y) in enumerate(data):
        if X.shape[1] != d0:
            raise ValueError(f"data set {i} has {X.shape[1]} features and data set 0 has {d0}; "
                             "fit_many trains models of one input size")
    groups, meanfield = {}, {}
    for i, est in enumerate(estimators):
        if est.inference != "laplace":
            if _batched_meanfield_reason(est) is None:
                meanfield.setdefault(_meanfield_key(est, data[i][1]), []).append(i)
                continue
            with torch_threads(est.num_threads or 1):
                est._fit(*data[i])
            continue
        key = (type(est).__name__, tuple(est.hidden), str(est.device_),
               *(repr(getattr(est, k)) for k in _BATCH_KEYS))
        if est._task == "classification":
            key += (tuple(est.classes_.tolist()),)
        else:
            key += (data[i][1].shape[1],)  # outputs
        # one program per training-set size: padding would change the rounding of the
        # data sums, and L-BFGS on a non-convex loss amplifies rounding into another path
        key += (data[i][0].shape[0],)
        groups.setdefault(key, []).append(i)
    programs = ([("laplace", rows) for rows in groups.values()]
                + [("meanfield", rows) for rows in meanfield.values()])
    # a program on an accelerator runs here: it has the device to itself, and the worker
    # processes share out the programs on the CPU
    here = [p for p in programs if n_jobs == 1 or estimators[p[1][0]].device_.type != "cpu"]
    for kind, rows in here:
        _fit_program(kind, [estimators[i] for i in rows], [data[i] for i in rows])
    programs = [p for p in programs if p not in here]
    if not programs:
        return estimators
    parts = []
    for kind, rows in programs:  # split each program into n_jobs parts of about equal work
        work = {i: len(data[i][0]) * (estimators[i].max_iter if kind == "laplace"
                                      else estimators[i].epochs) for i in rows}
        bins = [[] for _ in range(min(n_jobs, len(rows)))]
        load = [0] * len(bins)
        for i in sorted(rows, key=lambda i: -work[i]):  # largest first, to the lightest part
            b = load.index(min(load))
            bins[b].append(i)
            load[b] += work[i]
        parts += [(load[b], kind, sorted(rows_b)) for b, rows_b in enumerate(bins)]
    parts.sort(key=lambda p: -p[0])
    from loky import ProcessPoolExecutor  # fresh interpreters (fork + exec), any __main__

    with ProcessPoolExecutor(min(n_jobs, len(parts))) as pool:
        futures = [(rows, pool.submit(_fit_program, kind, [estimators[i] for i in rows],
                                      [data[i] for i in rows]))
                   for _, kind, rows in parts]
        for rows, future in futures:
            for i, fitted in zip(rows, future.result()):
                estimators[i].__dict__.update(fitted.__dict__)
    return estimators


def _fit_program(kind, estimators, data):
    """Train ``estimators`` on their prepared ``data`` as one batched program of ``kind``
    (``"laplace"`` or ``"meanfield"``) with their torch thread setting; returns them."""
    with torch_threads(estimators[0].num_threads or 1):
        if kind == "laplace":
            _fit_laplace_group(estimators, data)
        else:
            _fit_meanfield_group(estimators, data)
    return estimators


def _batched_meanfield_reason(est):
    """None if ``est`` (``inference="meanfield"``) trains with the batched trainer
    (:mod:`surrogates.meanfield.batched`), else why it takes the autograd trainer."""
    if est._task != "regression":
        return "classification"
    checks = (("activation", est.activation == "tanh"), ("local_reparam", est.local_reparam),
              ("prior", meanfield_batched.direct_prior(make_prior(est.prior)) is not None),
              ("val_fraction", not est.val_fraction), ("map_epochs", not est.map_epochs),
              ("trace_weights", not est.trace_weights))
    for name, ok in checks:
        if not ok:
            return f"{name}={getattr(est, name)!r}"
    return None


def _meanfield_key(est, Y):
    """Estimators with equal keys train as one batched mean-field program."""
    prior = meanfield_batched.direct_prior(make_prior(est.prior))
    return (type(est).__name__, tuple(est.hidden), Y.shape[1], int(est.batch_size),
            int(est.n_samples), bool(est.learn_noise), prior[0], est.num_threads,
            est.progress, str(est.device_))


def _fit_meanfield_group(estimators, data):
    """Fit batchable ``inference="meanfield"`` regression estimators of one architecture
    (equal ``_meanfield_key``) with :func:`surrogates.meanfield.batched.train`; ``data``
    holds each one's validated (X, Y (n, k))."""
    t0 = time.perf_counter()
    first = estimators[0]
    members, priors = [], []
    for est, (X, Y) in zip(estimators, data):
        x, y = start_full_batch_fit(est, X, Y, torch.float32, drop=("laplace_", "net_"))
        prior = copy.deepcopy(make_prior(est.prior))
        priors.append(prior)
        members.append(meanfield_batched.Member(
            x, y, seed=est.seed, epochs=est.epochs, lr=est.lr, lr_step=est.lr_step,
            lr_gamma=est.lr_gamma, kl_weight=est.kl_weight, kl_anneal=est.kl_anneal,
            prior=meanfield_batched.direct_prior(prior), init_std=est.init_std,
            noise_std=est.noise_std, noise_prior=est.noise_prior))
    sizes = (data[0][0].shape[1], *first.hidden, data[0][1].shape[1])
    epochs = max(est.epochs for est in estimators)
    bar = epoch_bar(first.progress, epochs, "BDL fit" if len(estimators) == 1 else
                     f"BDL fit x{len(estimators)}")
    try:
        results = meanfield_batched.train(
            sizes, members, first.n_samples, first.batch_size, bool(first.learn_noise),
            None if bar is None else lambda frac: bar.update(int(round(frac * epochs)) - bar.n),
            device=first.device_)
    finally:
        if bar is not None:
            bar.close()
    seconds = (time.perf_counter() - t0) / len(estimators)
    k = sizes[-1]
    for est, res, prior in zip(estimators, results, priors):
        guide = MeanFieldMLP(sizes, est.activation, est.init_std)
        likelihood = GaussianLikelihood(k, est.noise_std, est.learn_noise, est.noise_prior)
        with torch.no_grad():
            guide.mu.copy_(res["mu"])
            guide.rho.copy_(res["rho"])
            likelihood.log_tau.copy_(res["log_tau"])
        est.model_ = BayesianModel(guide, prior, likelihood).to(first.device_)
        hist = {key: [] for key in ("val_epoch", "val_nll", "val_rmse", "val_accuracy",
                                    "trace_mu", "trace_sigma")}
        est.history_ = {**res["history"], **hist}
        est.stopped_epoch_ = est.n_iter_ = est.epochs
        est.trainer_ = "batched"
        est.fit_seconds_ = seconds  # the group's wall time, shared out


def start_full_batch_fit(est, X, Y, dtype, drop):
    """Begin a fit of ``est`` on every row of (X, Y) (no validation rows): forget the
    recalibration and the attributes ``drop`` (another trainer's fitted state), fit the input
    and (regression) output scalers; returns the scaled X and Y as ``dtype`` tensors (class
    indices as int64 for classification)."""
    est.variance_scale_ = None
    for name in drop:
        est.__dict__.pop(name, None)
    scaler = Standardizer if est.standardize else IdentityScaler
    est.validation_rows_ = np.empty(0, dtype=np.int64)
    est.x_scaler_ = scaler().fit(X)
    x = torch.as_tensor(est.x_scaler_.transform(X), dtype=dtype)
    if est._task == "regression":
        est.y_scaler_ = scaler().fit(Y)
        return x, torch.as_tensor(est.y_scaler_.transform(Y), dtype=dtype)
    est.y_scaler_ = None
    return x, torch.as_tensor(Y, dtype=torch.int64)
