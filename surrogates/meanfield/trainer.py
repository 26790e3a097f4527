"""The mean-field BDL's autograd trainer: Adam on the ELBO of :class:`BayesianModel`, with
minibatches, KL annealing, a MAP warm start, validation and early stopping. It trains what the
batched trainer (:mod:`.batched`) does not take: classification, other activations and priors,
sampled weights, validation, a warm start or a weight trace.

Imports torch and the package's model, network, optimiser and warm start, and the surrogates'
likelihoods, priors, scaling and runtime.
"""
import copy
import math
import time

import torch

from ..likelihoods import CategoricalLikelihood, GaussianLikelihood
from ..priors import make_prior
from ..runtime import epoch_bar
from ..scaling import IdentityScaler, Standardizer
from .model import BayesianModel
from .network import MeanFieldMLP, softplus_inverse
from .optim import LeanAdam
from .warm_start import laplace_sigma

__all__ = ["fit_autograd"]


def fit_autograd(est, X, Y):
    """The autograd trainer: :meth:`BayesianModel.elbo` and :class:`LeanAdam`."""
    t0 = time.perf_counter()
    est.trainer_ = "autograd"
    est.variance_scale_ = None
    for name in ("laplace_", "net_"):
        est.__dict__.pop(name, None)
    dev = est.device_
    # initial weights and batch order come from a CPU generator, so a seed gives the same
    # ones on every device; the reparameterisation draws come from one on the device
    # (on a CPU, the same generator serves both, as it always did)
    cpu_gen = torch.Generator().manual_seed(int(est.seed))
    gen = cpu_gen if dev.type == "cpu" else torch.Generator(device=dev).manual_seed(
        int(est.seed))
    scaler = Standardizer if est.standardize else IdentityScaler
    n = X.shape[0]
    perm = torch.randperm(n, generator=cpu_gen).numpy()
    n_val = int(round(est.val_fraction * n))
    if est.val_fraction > 0 and (n_val < 1 or n - n_val < 1):
        raise ValueError(f"val_fraction={est.val_fraction} leaves no training or no "
                         f"validation rows out of {n}")
    val_idx, tr_idx = perm[:n_val], perm[n_val:]
    est.validation_rows_ = val_idx
    est.x_scaler_ = scaler().fit(X[tr_idx])
    if est._task == "regression":
        est.y_scaler_ = scaler().fit(Y[tr_idx])
        k = Y.shape[1]
        likelihood = GaussianLikelihood(k, est.noise_std, est.learn_noise, est.noise_prior)
        Yt = torch.as_tensor(est.y_scaler_.transform(Y), dtype=torch.float32, device=dev)
    else:
        est.y_scaler_ = None
        k = len(est.classes_)
        likelihood = CategoricalLikelihood(k)
        Yt = torch.as_tensor(Y, device=dev)
    guide = MeanFieldMLP((X.shape[1], *est.hidden, k), est.activation, est.init_std,
                         generator=cpu_gen)
    est.model_ = BayesianModel(guide, copy.deepcopy(make_prior(est.prior)),
                                likelihood).to(dev)
    Xt = torch.as_tensor(est.x_scaler_.transform(X), dtype=torch.float32, device=dev)
    x_tr, y_tr = Xt[tr_idx], Yt[tr_idx]
    n_tr = len(tr_idx)
    opt = LeanAdam(est.model_.parameters(), lr=est.lr)
    hist = {"epoch": [], "elbo": [], "nll": [], "kl": [], "lr": [], "val_epoch": [],
            "val_nll": [], "val_rmse": [], "val_accuracy": [], "trace_mu": [],
            "trace_sigma": []}
    n_trace = min(int(est.trace_weights), guide.n_params)
    best, best_state, bad_evals = math.inf, None, 0
    bs = min(int(est.batch_size), n_tr)
    bar = epoch_bar(est.progress, est.epochs, "BDL fit")
    est.stopped_epoch_ = est.epochs
    for epoch in range(1, est.epochs + 1):
        kl_weight = est._kl_weight_at(epoch)
        order = torch.randperm(n_tr, generator=cpu_gen).to(dev)
        parts = []
        n_batches = 0
        for start in range(0, n_tr, bs):
            idx = order[start:start + bs]
            elbo, data, kl = est.model_.elbo(x_tr[idx], y_tr[idx], n_tr, est.n_samples,
                                              kl_weight, est.local_reparam, gen,
                                              est.kl_samples)
            loss = -elbo / n_tr
            opt.zero_grad()
            loss.backward()
            if epoch <= est.map_epochs:
                est.model_.guide.rho.grad = None  # MAP warm start: sigma stays put
                if hasattr(est.model_.likelihood, "log_tau"):
                    est.model_.likelihood.log_tau.grad = None  # and so does the noise
            opt.step()
            with torch.no_grad():
                parts.append(torch.stack((elbo, data, kl)))
            n_batches += 1
        if epoch == est.map_epochs < est.epochs and est.warm_sigma == "laplace":
            sd = laplace_sigma(est.model_, x_tr, y_tr, n_tr, est._kl_weight_at(epoch + 1),
                               gen)
            with torch.no_grad():
                guide.rho.copy_(softplus_inverse(sd))
        # step decay: lr * gamma^(epochs done // lr_step)
        opt.set_lr(est.lr * est.lr_gamma ** (epoch // est.lr_step))
        with torch.no_grad():
            sum_elbo, sum_data, sum_kl = torch.stack(parts).sum(0).tolist()
        hist["epoch"].append(epoch)
        hist["elbo"].append(sum_elbo / n_batches)
        hist["nll"].append(-sum_data / n_batches / n_tr)
        hist["kl"].append(sum_kl / n_batches)
        hist["lr"].append(opt.lr)
        if n_trace:
            with torch.no_grad():
                hist["trace_mu"].append(guide.mu[:n_trace].tolist())
                hist["trace_sigma"].append(guide.sigma()[:n_trace].tolist())
        if not math.isfinite(hist["elbo"][-1]):
            raise FloatingPointError(f"the ELBO became non-finite at epoch {epoch}; lower "
                                     f"lr (now {est.lr}) or init_std")
        validating = epoch > est.map_epochs or est.map_epochs >= est.epochs
        if n_val and validating and (epoch % est.eval_every == 0 or epoch == est.epochs):
            metrics = est._validate(X[val_idx], Y[val_idx])
            hist["val_epoch"].append(epoch)
            for key, v in metrics.items():
                hist[f"val_{key}"].append(v)
            if metrics["nll"] < best:
                best, bad_evals = metrics["nll"], 0
                best_state = copy.deepcopy(est.model_.state_dict())
            else:
                bad_evals += 1
                if est.patience is not None and bad_evals >= est.patience:
                    est.stopped_epoch_ = epoch
                    break
        if bar is not None:
            bar.update(1)
            bar.set_postfix(elbo=f"{hist['elbo'][-1]:.4g}", refresh=False)
    if bar is not None:
        bar.close()
    if best_state is not None:
        est.model_.load_state_dict(best_state)
    est.history_ = hist
    est.n_iter_ = est.stopped_epoch_  # epochs run (scikit-learn's name)
    est.fit_seconds_ = time.perf_counter() - t0
    return est
