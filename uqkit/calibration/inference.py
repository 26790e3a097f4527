"""Bayesian calibration: the posterior of a model's inputs given measured outputs.

``calibrate(model, prior, observed, noise_std)`` samples ``p(x | y) ~ p(y | x) p(x)`` with
the Gaussian likelihood of :mod:`uqkit.calibration.likelihood`:

* ``model``: any uqkit model, run through :func:`uqkit.propagate` in batches (local cores,
  Dask, a store that makes a killed calibration resume), or a surrogate with a predictive
  variance (:class:`uqkit.adapters.SurrogateModel` of a BDL or a GP: a model with
  ``predict_with_variance``), whose variance joins the noise's in the likelihood. Without it,
  a cheap surrogate's posterior is as sharp as if the surrogate were the truth: its error
  would be read as information about the inputs.
* ``prior``: a :class:`uqkit.inputs.RandomInputs` (any marginals and copulas); the samplers
  work in its standard normal space.
* ``noise_std``: known (a number, or one per output), or unknown: a distribution of the
  noise's standard deviation (a spec such as ``"uniform(0.01, 1)"`` or a chaospy
  distribution), sampled beside the inputs as the parameter ``noise_std``.

Two samplers: ``"tmcmc"`` (default; :mod:`uqkit.calibration.tmcmc`), which gives the log
evidence, parallelises each stage's runs like any Monte Carlo, and finds separated modes in
proportion to their mass; and ``"emcee"``, the affine-invariant ensemble sampler of the emcee
package (Foreman-Mackey et al. 2013), good for correlated single-mode posteriors but
unsuitable for separated modes: its walkers cannot cross between them, so the modes' weights
come out as the walkers happened to start, not as their mass.

A failed model run is a sample of zero likelihood: counted (``failed_runs``), never a crash,
and announced by a :class:`FailedRunsWarning` (a posterior that leaves out where the model
fails is wrong if the measurements lie there).

May import the rest of :mod:`uqkit`.
"""
import logging
import os
import time
import warnings

import numpy as np
from scipy import special

from ..inputs.transforms import EPS
from .likelihood import log_likelihood
from .posterior import Posterior
from .tmcmc import tmcmc

__all__ = ["METHODS", "NOISE", "R_HAT_LIMIT", "U_EDGE", "EDGE_MARGIN", "PriorConflictWarning",
           "FailedRunsWarning", "ConvergenceWarning", "calibrate", "split_r_hat", "straggler"]

#: The samplers of :func:`calibrate`.
METHODS = ("tmcmc", "emcee")
#: The name of the noise's standard deviation when it is a sampled parameter.
NOISE = "noise_std"


def calibrate(model, prior, observed, noise_std, n_samples=2000, seed=0, method="tmcmc",
              use_model_variance=True, executor="local", workers=None, dask=None, store=None,
              progress=False, **options):
    """Posterior draws of the inputs of ``model`` given the measurements ``observed``.

    Args:
        model: a uqkit model (n, d) -> (n, k); or a model with ``predict_with_variance(X) ->
            (mean, var)``, evaluated in this process.
        prior: :class:`uqkit.inputs.RandomInputs` over the model's inputs.
        observed: (k,) measured outputs, or (m, k) for m repeated measurements.
        noise_std: the measurement noise's standard deviation: a number or (k,) numbers
            (> 0), or a distribution of it (a spec string or a chaospy distribution on
            positive values) when it is unknown.
        n_samples: posterior draws (TMCMC: samples per stage).
        seed: seed of every random draw.
        method: ``"tmcmc"`` or ``"emcee"``.
        use_model_variance: add a surrogate's predictive variance to the noise's.
        executor, workers, dask, store, progress: as in :func:`uqkit.propagate`; ``store``
            is a directory of one store per batch of runs.
        **options: the sampler's: TMCMC ``n_steps`` (None: as many as the chains need,
            :mod:`uqkit.calibration.tmcmc`), ``target_cov`` (1.0); emcee ``walkers`` (max(8
            p, 32)), ``steps`` (2000), ``burn`` (steps // 2).

    Returns:
        :class:`uqkit.calibration.posterior.Posterior`.

    Example:
        A linear model: the exact posterior mean of x is 2.2.

        >>> from uqkit.inputs import RandomInputs
        >>> prior = RandomInputs.from_spec({"x": "normal(0, 10)"})
        >>> post = calibrate(lambda X: 2 * X, prior, [4.4], noise_std=0.1, n_samples=1000,
        ...                  executor="serial")
        >>> round(float(post.mean()[0]), 2), post.names
        (2.2, ('x',))
    """
    t0 = time.perf_counter()
    from ..inputs.random_inputs import check_inputs

    check_inputs(prior, "prior")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got method={method!r}")
    from ..validation import check_int

    # emcee took 0 to a reshape error and 10.5 to a bare TypeError
    n_samples = check_int(n_samples, "n_samples", 2)
    output_names = getattr(model, "output_names", None)
    Y = _observed(_by_name(observed, output_names, "observed"))
    noise = _noise(_by_name(noise_std, output_names, "noise_std"), Y.shape[1])
    names = prior.names + ((NOISE,) if noise.sampled else ())
    rng = np.random.default_rng(seed)
    with _Evaluator(model, prior, Y, noise, use_model_variance, executor, workers, dask,
                    store, progress) as evaluate:
        if method == "tmcmc":
            allowed = {"n_steps", "target_cov"}
            _check_options(options, allowed, method)
            res = tmcmc(evaluate, len(names), n_samples, rng, **options)
            u, extra, log_evidence = res.u, res.extra, res.log_evidence
            diagnostics = {"stages": res.stages}
        else:
            u, extra, diagnostics = _emcee(evaluate, names, n_samples, rng, options)
            log_evidence = None
        if evaluate.failed:
            warnings.warn(
                f"{evaluate.failed} of {evaluate.runs} model runs failed and were given zero "
                "likelihood: the posterior leaves out the inputs where the model fails, and "
                "is wrong if the measurements lie there (see the posterior's failed_runs)",
                FailedRunsWarning, stacklevel=2)
        info = {"noise": noise.describe()}
        if evaluate.off:
            warnings.warn(
                f"{evaluate.off} proposals lay where the inverse transform of the prior's copula "
                "is off (far in its tails: chaospy caps some marginals' quantiles) and were "
                "rejected without a run; the posterior is wrong if it reaches there "
                "(info['rejected_proposals'])", UserWarning, stacklevel=2)
            info["rejected_proposals"] = evaluate.off
        edge = _warn_if_cut_off(u, names)
        if edge is not None:
            info["prior_conflict"] = dict(edge, rejected_proposals=evaluate.past)
        x = evaluate.to_inputs(u)
        sigma = extra[:, -1:] if noise.sampled else noise.std[None, :]
        if evaluate.loaded:  # a rerun's runs taken from its store (or from the answers an
            # interrupted run had kept): not this call's seconds
            info["loaded_runs"] = evaluate.loaded
        var = extra[:, Y.shape[1]:2 * Y.shape[1]] if evaluate.variance_used else None
        if var is not None:
            info["model_variance_share"] = float(np.mean(var / (var + sigma ** 2)))
        samples = np.column_stack([x, sigma[:, 0]]) if noise.sampled else x
        return Posterior(names, samples, extra[:, :Y.shape[1]], Y, evaluate.output_names,
                         log_evidence, evaluate.runs, evaluate.failed, method,
                         time.perf_counter() - t0, diagnostics, info,
                         noise_std=np.broadcast_to(sigma, (len(u), Y.shape[1])),
                         model_variance=var)


#: The ``|u|`` past which the prior's transform cannot tell inputs apart: ``Phi(u)`` is clipped to
#: ``[EPS, 1 - EPS]`` (:data:`uqkit.inputs.transforms.EPS`), so every u beyond about 8.2 maps to
#: one input (the upper tail from 8.21, coarse from about 7.5, where ``Phi`` rounds).
#: Proposals past it are rejected, and a posterior that comes within ``EDGE_MARGIN`` of it is
#: said to be cut off there.
U_EDGE = float(-special.ndtri(EPS))
#: How near ``U_EDGE`` (in prior standard deviations) a posterior draw may come before the
#: result is said to be cut off: a prior holds 1e-14 of its mass past 7.7.
EDGE_MARGIN = 0.5


class PriorConflictWarning(UserWarning):
    """The posterior reaches the prior's far tail (``|u|`` near ``U_EDGE``), where its transform
    ends: the measurements conflict with the prior, and the posterior is cut off there."""


def _warn_if_cut_off(u, names):
    """A :class:`PriorConflictWarning` (and the reach, for ``info``) where a posterior draw
    comes within ``EDGE_MARGIN`` of ``U_EDGE``."""
    reach = np.abs(u).max(axis=0)
    j = int(np.argmax(reach))
    if reach[j] < U_EDGE - EDGE_MARGIN:
        return None
    warnings.warn(
        f"the posterior of {names[j]!r} reaches {reach[j]:.2f} prior standard deviations from "
        f"the prior's centre, where its transform ends ({U_EDGE:.2f}): the measurements "
        "conflict with the prior, and the posterior is cut off there, its mean and spread "
        "wrong. Widen the prior (or check the measurements, their units and the noise)",
        PriorConflictWarning, stacklevel=3)
    return {"input": names[j], "prior_stds": float(reach[j])}


class FailedRunsWarning(UserWarning):
    """Some model runs of a calibration failed: their samples were given zero likelihood."""


class ConvergenceWarning(UserWarning):
    """A sampler's draws show that it has not converged (emcee's walkers have not mixed)."""


def _check_options(options, allowed, method):
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for method {method!r}; options: "
                         f"{sorted(allowed)}")


def _by_name(values, output_names, what):
    """``values`` in the model's output order where they carry output names (a pandas
    DataFrame's columns, a Series' index); as they are otherwise. A DataFrame whose columns
    were (w2, w1) was read by position, and the posterior fitted w1 to w2's measurements
    without a word (a bug hunt)."""
    if not output_names or not type(values).__module__.startswith("pandas"):
        return values  # a model without output names reads them by position, as before
    labels = values.columns if hasattr(values, "columns") else values.index
    if not all(isinstance(name, str) for name in labels):
        return values
    labels = [str(name) for name in labels]
    missing = [n for n in output_names if n not in labels]
    extra = [n for n in labels if n not in output_names]
    if missing or extra:
        raise ValueError(f"{what} names {labels}; the model's outputs are "
                         f"{list(output_names)} (missing: {missing}, unknown: {extra})")
    picked = values[list(output_names)] if hasattr(values, "columns") else \
        values.loc[list(output_names)]
    return picked.to_numpy(dtype=float)


def _observed(observed):
    if isinstance(observed, dict):  # numpy's float() error came from deep inside
        raise ValueError(f"observed is a dict ({list(observed)[:3]}): give the measurements "
                         "as an array, one column per model output in the model's order, a "
                         "(k,) vector or (m, k) for m repeated measurements")
    Y = np.asarray(observed, dtype=float)
    Y = Y[None, :] if Y.ndim == 1 else Y
    if Y.ndim != 2 or Y.size == 0:
        raise ValueError(f"observed must be a (k,) vector or an (m, k) array of measurements, "
                         f"got shape {np.shape(observed)}")
    if not np.isfinite(Y).all():
        raise ValueError(f"observed holds non-finite values: {Y[~np.isfinite(Y)][:3]}")
    return Y


class _Noise:
    """The measurement noise: known standard deviations (k,), or a distribution of one."""

    def __init__(self, std=None, dist=None, spec=None):
        self.std, self.dist, self.spec = std, dist, spec
        self.sampled = dist is not None

    def describe(self):
        return {"sampled": self.sampled, "prior": str(self.spec)} if self.sampled else \
            {"sampled": False, "std": self.std.tolist()}


def _noise(noise_std, k):
    import chaospy

    spec = isinstance(noise_std, tuple) and bool(noise_std) and isinstance(noise_std[0], str)
    if isinstance(noise_std, (str, chaospy.Distribution)) or spec:
        from ..inputs.distributions import parse_distribution

        dist = noise_std if isinstance(noise_std, chaospy.Distribution) else \
            parse_distribution(noise_std, NOISE)
        if len(dist) != 1:  # the batch's halves went through the marginals in turn
            raise ValueError(f"noise_std's distribution {noise_std!r} has {len(dist)} "
                             "dimensions; give one distribution, of the one standard deviation "
                             "of every output's noise")
        lower = float(np.ravel(dist.lower)[0])
        if lower < 0:
            raise ValueError(f"noise_std's distribution {noise_std!r} puts mass below 0 "
                             f"(lower bound {lower:g}); a standard deviation is positive")
        return _Noise(dist=dist, spec=noise_std)
    if isinstance(noise_std, list) and any(
            isinstance(v, (str, chaospy.Distribution)) for v in noise_std):
        # numpy's "could not convert string to float" said nothing of what to give
        raise ValueError(f"noise_std {noise_std!r}: an unknown noise is one distribution, of "
                         "the one standard deviation of every output's noise (a spec string "
                         "or a chaospy distribution); one per output is not supported: give "
                         "numbers per output, or one distribution")
    std = np.broadcast_to(np.asarray(noise_std, dtype=float), (k,)) \
        if np.ndim(noise_std) == 0 or np.shape(noise_std) == (k,) else None
    if std is None:
        raise ValueError(f"noise_std must be a number, {k} numbers (one per output) or a "
                         f"distribution; got shape {np.shape(noise_std)}")
    if not (np.isfinite(std).all() and (std > 0).all()):
        raise ValueError(f"noise_std must be > 0 and finite, got {np.asarray(noise_std)!r}")
    return _Noise(std=np.array(std))


class _Evaluator:
    """The log-likelihood of standard normal points: inputs and noise from u, the model's
    outputs (one propagate per batch, or a surrogate's mean and variance in this process),
    the Gaussian likelihood. Counts runs and failures."""

    def __init__(self, model, prior, Y, noise, use_variance, executor, workers, dask, store,
                 progress):
        self.model, self.prior, self.Y, self.noise = model, prior, Y, noise
        # a surrogate with a predictive variance runs in this process; variance_used turns
        # False if it has none after all (a surrogate without return_std)
        self.in_process = bool(use_variance) and hasattr(model, "predict_with_variance")
        self.variance_used = self.in_process
        self.execution = {"executor": executor, "workers": workers, "dask": dask}
        self.store, self.progress = store, progress
        self.runs = self.failed = self.batches = self.loaded = self.off = self.past = 0
        self.output_names = tuple(getattr(model, "output_names", ()) or
                                  (f"y{c}" for c in range(Y.shape[1])))
        self._runner = None

    def __enter__(self):
        if not self.in_process:
            from ..execution.runner import ModelRunner

            self._runner = ModelRunner(self.model, self.prior, **self.execution).__enter__()
        return self

    def __exit__(self, *exc):
        if self._runner is not None:
            self._runner.__exit__(*exc)
        return False

    def to_inputs(self, u, off="raise"):
        from ..inputs.transforms import u_to_x

        return u_to_x(self.prior, u[:, :self.prior.dim], off)

    def _sigma(self, u):
        if not self.noise.sampled:
            return self.noise.std[None, :]
        p = special.ndtr(u[:, -1])
        return np.asarray(self.noise.dist.inv(p), dtype=float).reshape(-1, 1)

    def _outputs(self, X):
        """(n, k) outputs (NaN rows failed) and (n, k) variances or None."""
        k = self.Y.shape[1]
        if self.in_process:
            from ..execution.arguments import align_inputs
            from ..inputs.sampling import Samples

            # in the model's input order, by name, as propagate gives a model its inputs (the
            # prior's order gave a surrogate trained on (E, t) the columns (t, E))
            _, X = align_inputs(self.model, Samples(X, self.prior.names))
            mean, var = self.model.predict_with_variance(X)
            mean = np.asarray(mean, dtype=float).reshape(len(X), -1)
            if var is None:  # a surrogate without a predictive variance
                if self.variance_used:
                    warnings.warn(
                        f"{type(self.model).__name__} gives no predictive variance: the "
                        "posterior takes its means for the model itself, as sharp as if it "
                        "were exact (use_model_variance=False says so without this warning)",
                        UserWarning, stacklevel=4)
                self.variance_used = False
            else:
                var = np.asarray(var, dtype=float).reshape(len(X), -1)
                if var.shape != mean.shape:
                    raise ValueError(f"the surrogate's predictive variance has shape "
                                     f"{var.shape} for means of shape {mean.shape}: one "
                                     "variance per row and output")
                if (var < 0).any():
                    raise ValueError(f"the surrogate's predictive variance is negative in "
                                     f"{int((var < 0).any(axis=1).sum())} of {len(X)} rows "
                                     f"(the least {float(var.min())!r})")
                # a NaN variance is a failed prediction: counted and warned about as one
                # (it gave the row zero likelihood without a word)
                mean = np.where(np.isfinite(var).all(axis=1, keepdims=True), mean, np.nan)
        else:
            from ..execution.propagation import propagate_batch
            from ..inputs.sampling import Samples

            store = None if self.store is None else \
                os.path.join(os.fspath(self.store), f"batch-{self.batches:05d}")
            # a batch whose runs all fail is likelihood zero there, not a broken model (a
            # model failing on most of the prior), unless it is the first and they all fail
            # with one and the same error
            res = propagate_batch(self.model, Samples(X, self.prior.names), self._runner.pool,
                                  store=store, progress=self.progress,
                                  model_key=self._runner.model_key, stop_systematic=False)
            mean, var = res.outputs, None
            self.loaded += res.loaded + res.kept  # not run by this call
            if not res.ok.any():  # runs that raised have no outputs at all
                reasons = res.failures().most_common()
                if self.batches == 0 and len(reasons) == 1:
                    from ..execution.propagation import PropagationError

                    raise PropagationError(
                        f"every one of the {len(X)} runs of the calibration's first batch "
                        f"failed with the same error: {reasons[0][0]}")
                mean = np.full((len(X), k), np.nan)
        self.batches += 1
        if mean.shape[1] != k:
            raise ValueError(f"the model gives {mean.shape[1]} outputs but observed has {k} "
                             "columns (one per output)")
        return mean, var

    def __call__(self, u):
        # a proposal far in the prior's tail where a copula's inverse is off (a lognormal's
        # quantile capped at u = 6.37) is rejected, not run: it stopped the whole sampler;
        # and so is one past U_EDGE, where every u maps to the same input (the likelihood
        # flat there while the prior falls: the draws piled up at the edge)
        X = self.to_inputs(u, off="nan")
        past = (np.abs(u) > U_EDGE).any(axis=1)
        on = np.isfinite(X).all(axis=1)
        inside = on & ~past
        self.off += int((~on).sum())
        self.past += int((on & past).sum())
        F = np.full((len(u), self.Y.shape[1]), np.nan)
        # a surrogate's variance block even where no row is inside: the samplers keep each
        # sample's extra columns, k or 2k of them, the same in every batch
        V = np.full_like(F, np.nan) if self.variance_used else None
        if inside.any():
            F[inside], V_inside = self._outputs(X[inside])
            if V_inside is not None:
                V[inside] = V_inside
            elif not self.variance_used:  # a surrogate without a variance, found out now
                V = None
        sigma = self._sigma(u)
        ll = log_likelihood(self.Y, F, sigma ** 2, V)
        self.runs += int(inside.sum())
        self.failed += int((~np.isfinite(F[inside]).all(axis=1)).sum())
        parts = [F] + ([V] if V is not None else []) + ([sigma] if self.noise.sampled else [])
        return ll, np.column_stack(parts)


def _emcee(evaluate, names, n_samples, rng, options):
    """The emcee ensemble sampler in standard normal space; its draws' u, extra and
    diagnostics, with a :class:`ConvergenceWarning` where its walkers have not mixed."""
    try:
        import emcee
    except ImportError:
        raise ImportError("method='emcee' needs the emcee package (pip install emcee)") \
            from None
    _check_options(options, {"walkers", "steps", "burn"}, "emcee")
    dim = len(names)
    walkers = int(options.get("walkers", max(8 * dim, 32)))
    steps = int(options.get("steps", 2000))
    burn = int(options.get("burn", steps // 2))
    if walkers < 2 * dim or walkers % 2 or not 0 <= burn < steps:
        raise ValueError(f"emcee needs an even walkers >= 2 p = {2 * dim} and 0 <= burn < "
                         f"steps; got walkers={walkers}, steps={steps}, burn={burn}")

    def log_prob(u):  # emcee reads each walker's (log density, *blobs)
        ll, extra = evaluate(u)
        return [(lp, *row) for lp, row in zip(-0.5 * (u ** 2).sum(axis=1) + ll, extra)]

    sampler = emcee.EnsembleSampler(walkers, dim, log_prob, vectorize=True)
    sampler.random_state = np.random.RandomState(int(rng.integers(2 ** 31))).get_state()
    sampler.run_mcmc(_emcee_start(log_prob, walkers, dim, rng), steps, progress=False)
    chain = sampler.get_chain(discard=burn)  # (steps, walkers, p)
    blobs = np.asarray(sampler.get_blobs(discard=burn), dtype=float)
    if walkers * len(chain) < n_samples:
        warnings.warn(f"emcee kept {walkers * len(chain)} draws (walkers {walkers} x "
                      f"{len(chain)} steps after burn-in) for n_samples={n_samples}: raise "
                      "steps for more", UserWarning, stacklevel=3)
    # every walker at evenly spaced steps (thinning the flat chain would keep a few walkers)
    rows = np.unique(np.linspace(0, len(chain) - 1, -(-n_samples // walkers)).round()
                     .astype(int))
    u = chain[rows].reshape(-1, dim)[:n_samples]
    extra = blobs[rows].reshape(len(rows) * walkers, -1)[:n_samples]
    # emcee logs (quiet=True) that a chain under 50 autocorrelation times gives a rough tau,
    # at the defaults every time; uqkit judges the run by its own checks below, and reports
    # tau and the effective draws
    autocorr_log = logging.getLogger("emcee.autocorr")
    level = autocorr_log.level
    autocorr_log.setLevel(logging.ERROR)
    try:
        tau = sampler.get_autocorr_time(discard=burn, quiet=True)
    finally:
        autocorr_log.setLevel(level)
    # on the chains thinned by the autocorrelation time: over correlated steps the split
    # R-hat of walkers that mixed grows as sqrt(1 + 2 tau / steps) (1.10-1.11 on an 8-D
    # Gaussian at the defaults, in a review)
    thin = int(np.ceil(np.max(tau))) if np.isfinite(tau).all() else 1
    r_hat = split_r_hat(chain[::max(1, thin)])
    behind, limit = straggler(sampler.get_log_prob(discard=burn))
    if (r_hat > R_HAT_LIMIT).any() or behind > limit:
        j = int(np.argmax(np.nan_to_num(r_hat, nan=0.0)))
        warnings.warn(
            f"emcee's walkers have not mixed: split R-hat {r_hat[j]:.3g} for {names[j]!r} "
            f"(limit {R_HAT_LIMIT}), a walker's mean log density {behind:.3g} below the "
            f"others' median (limit {limit:.3g}); the posterior is unreliable (a walker stuck "
            "far from the others made one four to thirty times too wide): raise steps and "
            "burn, or use method='tmcmc' (diagnostics['r_hat'], ['walker_behind'])",
            ConvergenceWarning, stacklevel=3)
    return u, extra, {
        "acceptance": float(sampler.acceptance_fraction.mean()),
        "autocorrelation_steps": tau.tolist(), "walkers": walkers, "steps": steps,
        "burn": burn, "effective_draws": float(walkers * (steps - burn) / np.max(tau)),
        "r_hat": r_hat.tolist(), "walker_behind": behind}


#: The split R-hat over emcee's walkers above which :func:`calibrate` warns that they have
#: not mixed (Gelman et al. 2013's 1.1; a review's run with one walker stuck 23 nats below
#: the others read 1.45, its good runs 1.03).
R_HAT_LIMIT = 1.1


def straggler(log_prob):
    """``(behind, limit)``: how far, in nats, the walker whose mean log density over the kept
    steps (``log_prob``: (steps, walkers)) is lowest lies below the walkers' median, and the
    distance beyond which it is stuck, not unlucky: six robust standard deviations of the
    walkers' means (1.4826 times their median absolute deviation), and at least 1 nat.
    A review's runs: 0.2-0.3 nats behind where the walkers mixed; 5.4, 22.6 and 154.5 where
    one was stuck for part or all of the kept steps (posterior standard deviations 4, 9 and
    30 times the exact one).

    >>> rng = np.random.default_rng(0)
    >>> log_prob = -rng.gamma(1.0, size=(1000, 32))  # a 2-D Gaussian posterior's log density
    >>> behind, limit = straggler(log_prob); bool(behind < limit)
    True
    >>> log_prob[:100, 7] -= 40.0  # one walker stuck far out for 100 of the kept steps
    >>> behind, limit = straggler(log_prob); bool(behind > limit)
    True
    """
    means = np.asarray(log_prob, dtype=float).mean(axis=0)
    median = np.median(means)
    spread = 1.4826 * np.median(np.abs(means - median))
    return float(median - means.min()), float(max(1.0, 6.0 * spread))


def split_r_hat(chain):
    """Gelman and Rubin's potential scale reduction per parameter, split (Gelman et al.
    2013, Bayesian Data Analysis, 3rd ed., 11.4): each walker's chain (steps, walkers, p) cut
    into halves, the between-halves variance of their means against the within-halves
    variance. Near 1 where the walkers sample one distribution; far above where one is stuck
    away from the others, as emcee's ensemble moves cannot tell.

    >>> rng = np.random.default_rng(0)
    >>> mixed = rng.standard_normal((1000, 32, 1))
    >>> round(float(split_r_hat(mixed)[0]), 2)
    1.0
    >>> stuck = mixed.copy(); stuck[:, 0] += 5.0  # one walker five standard deviations off
    >>> bool(split_r_hat(stuck)[0] > 1.1)
    True
    """
    half = len(chain) // 2
    if half < 2:  # fewer than four steps: no variance within a half
        return np.full(chain.shape[2], np.nan)
    halves = np.concatenate([chain[:half], chain[half:2 * half]], axis=1)  # (half, 2W, p)
    within = halves.var(axis=0, ddof=1).mean(axis=0)
    between = half * halves.mean(axis=0).var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(((half - 1) / half * within + between / half) / within)


#: Prior draws per walker among which :func:`_emcee_start` takes the walkers' starts.
START_POOL = 8
#: Pools of prior draws tried for enough starts where the model works (:func:`_emcee_start`).
START_TRIES = 20


def _emcee_start(log_prob, walkers, dim, rng):
    """emcee's starting state: the ``walkers`` draws of highest posterior density among
    :data:`START_POOL` standard normal draws per walker (one batch of runs, a few percent of
    the sampler's), with more pools where too few have a finite density. Walkers started
    from plain prior draws stayed far out in 5 of 12 runs of a model with an unknown
    lognormal noise (a large noise explains any input there, and emcee's straight moves
    towards the others cross low density in the standard normal space), and their draws
    made the posterior 4 to 30 times too wide. A walker started where the model fails never
    leaves in 1-D (no stretch move reaches the working side), and its failed draws entered
    the posterior: mean 0.542 for a truncated normal's 0.471.

    Raises:
        RuntimeError: fewer than ``walkers`` starts where the model works in
            :data:`START_TRIES` pools.
    """
    import emcee

    coords, rows = np.empty((0, dim)), []
    for _ in range(START_TRIES):
        pool = rng.standard_normal((START_POOL * walkers, dim))
        found = log_prob(pool)
        keep = [i for i, row in enumerate(found) if np.isfinite(row[0])]
        coords = np.vstack([coords, pool[keep]])
        rows += [found[i] for i in keep]
        if len(rows) >= walkers:
            break
    if len(rows) < walkers:
        raise RuntimeError(f"emcee: {len(rows)} of {START_TRIES * START_POOL * walkers} prior "
                           f"draws have a finite posterior density (the model works and the "
                           f"likelihood is positive there), fewer than the {walkers} walkers; "
                           "use method='tmcmc', which starts from many more")
    best = np.argsort([-row[0] for row in rows], kind="stable")[:walkers]
    coords, rows = coords[best], [rows[i] for i in best]
    blobs = np.array([row[1:] for row in rows], dtype=float)
    single = tuple(axis for axis in range(1, blobs.ndim) if blobs.shape[axis] == 1)
    # emcee squeezes a blob of one value per walker to (walkers,): the same here
    return emcee.State(coords, log_prob=np.array([row[0] for row in rows]),
                       blobs=np.squeeze(blobs, single) if single else blobs)
