"""Active-learning reliability: a surrogate of g enriched where it may misclassify
(AK-MCS, Echard, Gayton & Lemaire 2011), in batches.

Everything lives in the standard normal space u of the inputs' Rosenblatt transform: the
surrogate learns ``g(x(u))`` from u. Steps:

1. An initial Latin hypercube design of ``n_init`` points with standard normal marginals
   (``u = Phi^-1(LHS)``), run in one batch.
2. A fixed candidate population of ``n_candidates`` standard normal draws (the Monte Carlo
   population on which Pf is estimated).
3. Each iteration fits the surrogate on all true runs, and predicts the mean mu and the
   epistemic standard deviation sigma at the candidates. Then::

       Pf = mean(mu <= 0),  Pf_lower = mean(mu + c sigma <= 0),  Pf_upper = mean(mu - c sigma <= 0)

   with ``c = u_min`` (2 by default): the candidates between the bounds are exactly those whose
   sign the surrogate is not sure of at that level.
4. Learning function: ``U = |mu| / sigma`` (Echard et al. 2011; smallest is best) or the
   expected feasibility ``EFF`` (Bichon et al. 2008, with eps = 2 sigma; largest is best).
   ``batch`` points are chosen per iteration: the best ``pool`` candidates are split into
   ``batch`` clusters by k-means (in u) and the best candidate of each cluster is taken, so
   that a batch does not crowd one spot; a candidate already run is not picked again (its
   sigma need not vanish: a GP's fitted noise kept points on the limit state first). The
   batch is run in one :func:`propagate` call.
5. Stop when, for ``patience`` consecutive iterations, the estimate is stable
   (``|Pf - Pf_previous| <= tol Pf``) and settled: ``min U >= u_min`` or
   ``Pf_upper - Pf_lower <= tol Pf``; or when ``max_runs`` true runs are spent (a warning then).

The result's ``cov`` is the Monte Carlo CoV of the population estimate,
``sqrt((1 - Pf) / (n Pf))``; ``ci`` joins both errors: the Clopper-Pearson lower bound of the
count behind Pf_lower and the upper bound of the count behind Pf_upper. The population must be
large enough for the target (about 100 / Pf candidates for a 10 % CoV).

Surrogate protocol: ``fit(X, y)``; mean and epistemic std from ``predict_distribution(X)``
(an object with ``mean`` and ``epistemic_var``: the surrogates of :mod:`surrogates`) if it
exists, else ``predict(X, return_std=True) -> (mean, std)`` (any scikit-learn regressor with
an uncertainty, such as GaussianProcessRegressor, whose std then includes the fitted noise).
``"gp"`` and ``"bdl"`` build one by :func:`uqkit.adapters.make_surrogate`.

With ``store=DIR`` every batch of true runs goes to ``DIR/iter-0000`` (the initial design),
``DIR/iter-0001``, ...: the sequence is deterministic for a given seed, so a killed analysis
rerun with the same arguments reloads the finished batches instead of recomputing them.

References:
    Echard, Gayton & Lemaire (2011), Struct. Saf. 33: 145-154. Bichon et al. (2008), AIAA J.
    46: 2459-2468.
"""
import itertools
import math
import warnings

import numpy as np
from scipy import special
from scipy.stats import qmc

from ..inputs.transforms import u_to_x
from ..validation import check_float, check_int
from .result import beta_of, clopper_pearson

__all__ = ["LEARNING", "surrogate_mean_std", "expected_feasibility", "select_batch",
           "active_learning", "plot_history"]

#: The learning functions of :func:`active_learning`: ``"U"``, ``|mu| / sigma`` of the surrogate
#: (Echard et al. 2011; its sign is least sure where U is smallest), and ``"EFF"``, the
#: expected feasibility (Bichon et al. 2008).
LEARNING = ("U", "EFF")


def surrogate_mean_std(surrogate, U):
    """(mean, epistemic std), each (n,), of a fitted surrogate at U (see the protocol)."""
    if hasattr(surrogate, "predict_distribution"):
        import inspect

        # no predictive intervals: only the mean and the epistemic variance are used
        takes_levels = "levels" in inspect.signature(surrogate.predict_distribution).parameters
        pred = surrogate.predict_distribution(U, **({"levels": ()} if takes_levels else {}))
        mean, std = pred.mean, np.sqrt(np.maximum(np.asarray(pred.epistemic_var, float), 0.0))
    else:
        try:
            mean, std = surrogate.predict(U, return_std=True)
        except TypeError:
            raise ValueError(f"{type(surrogate).__name__} gives no epistemic std: it needs "
                             "predict_distribution(X) or predict(X, return_std=True)") from None
    mean, std = np.asarray(mean, dtype=float), np.asarray(std, dtype=float)
    if mean.size != len(U) or std.size != len(U):
        raise ValueError(f"the surrogate predicted shapes {mean.shape} and {std.shape} for "
                         f"{len(U)} points; active learning needs one output")
    mean, std = mean.reshape(-1), std.reshape(-1)
    # a NaN mean counted as safe and a NaN std fell out of both bounds: Pf low, or outside
    # its own interval, without a word
    for what, values, bad in (("mean", mean, ~np.isfinite(mean)),
                              ("std", std, ~np.isfinite(std) | (std < 0))):
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"the surrogate predicted {int(bad.sum())} unusable {what}s at "
                             f"{len(U)} points, the first {float(values[i])!r} at u = "
                             f"{U[i].tolist()}: a {type(surrogate).__name__} whose prediction "
                             "fails there cannot tell failure from safety")
    return mean, std


def expected_feasibility(mu, sigma):
    """EFF of Bichon et al. (2008) for the threshold 0 with eps = 2 sigma."""
    s = np.maximum(sigma, 1e-300)
    eps = 2 * s
    t0, tm, tp = -mu / s, (-eps - mu) / s, (eps - mu) / s
    Phi, phi = special.ndtr, lambda z: np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    return (mu * (2 * Phi(t0) - Phi(tm) - Phi(tp)) - s * (2 * phi(t0) - phi(tm) - phi(tp))
            + eps * (Phi(tp) - Phi(tm)))


def select_batch(candidates, score, k, pool, seed):
    """Indices of k candidates: the best ``pool`` by ``score`` (smaller is better; an infinite
    score is never picked) split into k k-means clusters, the best of each; where fewer
    distinct points than k leave clusters empty, the next best points not in the batch fill
    it (fewer than k where the candidates hold fewer distinct points)."""
    order = np.argsort(score, kind="stable")
    order = order[np.isfinite(score[order])]  # an infinite score: not to be picked (run)
    if len(order) < k:
        raise ValueError(f"{k} candidates asked for, {len(order)} can be picked")
    if k == 1:
        return order[:1]
    best = order[:max(pool, k)]
    from sklearn.cluster import KMeans

    with warnings.catch_warnings():  # fewer distinct points than clusters: handled below
        warnings.filterwarnings("ignore", message="Number of distinct clusters")
        labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(candidates[best])
    # best is sorted by score, so the first member of each cluster is its best
    chosen = [best[np.flatnonzero(labels == c)[0]] for c in range(k) if (labels == c).any()]
    points = {tuple(candidates[i]) for i in chosen}
    for i in order:  # clusters left empty: the next best points not in the batch yet
        if len(chosen) == k:
            break
        if tuple(candidates[i]) not in points:
            chosen.append(i)
            points.add(tuple(candidates[i]))
    return np.array(chosen)


def _make(surrogate):
    if isinstance(surrogate, str):
        from ..adapters import make_surrogate

        return make_surrogate(surrogate)
    if not hasattr(surrogate, "fit"):
        raise ValueError(f"surrogate must be 'gp', 'bdl' or an object with fit/predict, got "
                         f"{surrogate!r}")
    return surrogate


def active_learning(ls, rng, surrogate="gp", n_init=None, batch=4, n_candidates=100_000,
                    candidates=None, learning="U", max_runs=200, tol=0.05, patience=2,
                    u_min=2.0, pool=None, level=0.95, predict_chunk=20_000):
    """Active-learning Pf on a surrogate (see the module notes).

    Args:
        surrogate: ``"gp"``, ``"bdl"`` or a surrogate object (refitted every iteration).
        n_init: initial design size (default ``max(12, 2 d + 2)``).
        batch: points added per iteration.
        n_candidates: size of the candidate (Monte Carlo) population.
        candidates: optional (n, d) population in u-space to use instead of drawing one.
        learning: ``"U"`` or ``"EFF"``.
        max_runs: budget of true model runs.
        tol: relative tolerance of the stopping rule.
        patience: consecutive iterations the stopping rule must hold.
        u_min: U threshold and width (in sigmas) of the Pf bounds.
        pool: best candidates clustered for a batch (default ``50 * batch``).
        level: confidence level of the Clopper-Pearson parts of ``ci``.
        predict_chunk: candidates predicted at once (bounds memory).
    """
    d = ls.inputs.dim
    n_init = check_int(max(12, 2 * d + 2) if n_init is None else n_init, "n_init", 2)
    batch = check_int(batch, "batch", 1)
    n_candidates = check_int(n_candidates, "n_candidates", 100)
    max_runs = check_int(max_runs, "max_runs", n_init)
    tol = check_float(tol, "tol", 0.0, 1.0)
    patience = check_int(patience, "patience", 1)
    u_min = check_float(u_min, "u_min", 0.0, 10.0)
    pool = check_int(50 * batch if pool is None else pool, "pool", batch)
    level = check_float(level, "level", 0.0, 1.0)
    predict_chunk = check_int(predict_chunk, "predict_chunk", 1)
    if learning not in LEARNING:
        raise ValueError(f"unknown learning function {learning!r}; use one of {LEARNING}")
    model = _make(surrogate)
    if candidates is not None:  # refused before the initial design's true runs
        candidates = np.asarray(candidates, dtype=float)
        if candidates.ndim != 2 or candidates.shape[1] != d or len(candidates) < 100 or (
                not np.isfinite(candidates).all()):
            raise ValueError(f"candidates must be a finite (n >= 100, {d}) array in u-space, "
                             f"got shape {candidates.shape}")
        n_candidates = len(candidates)

    U_train = special.ndtri(qmc.LatinHypercube(d=d, seed=rng).random(n_init))
    g_train = ls(U_train, tag="iter-0000")
    if candidates is None:  # drawn after the design, as always: a seed's runs stay the same
        candidates = rng.standard_normal((n_candidates, d))
    run = np.zeros(n_candidates, dtype=bool)  # candidates already run: never picked again
    history, streak, converged, pf_prev = [], 0, False, None
    for it in itertools.count(1):
        model.fit(U_train, g_train)
        parts = [surrogate_mean_std(model, candidates[s:s + predict_chunk])
                 for s in range(0, n_candidates, predict_chunk)]
        mu = np.concatenate([p[0] for p in parts])
        sd = np.maximum(np.concatenate([p[1] for p in parts]), 1e-300)
        n_fail = int(np.count_nonzero(mu <= 0))
        n_low = int(np.count_nonzero(mu + u_min * sd <= 0))
        n_up = int(np.count_nonzero(mu - u_min * sd <= 0))
        pf, U_score = n_fail / n_candidates, np.abs(mu) / sd
        history.append({"iteration": it - 1, "model_runs": ls.runs, "pf": pf,
                        "pf_lower": n_low / n_candidates, "pf_upper": n_up / n_candidates,
                        "min_U": float(U_score.min())})
        settled = U_score.min() >= u_min or (pf > 0 and (n_up - n_low) <= tol * n_fail)
        stable = pf_prev is not None and pf > 0 and abs(pf - pf_prev) <= tol * pf
        streak = streak + 1 if settled and stable else 0
        pf_prev = pf
        if streak >= patience:
            converged = True
            break
        k = min(batch, max_runs - ls.runs)
        left = n_candidates - int(run.sum())
        if k >= 1 and left == 0:  # a small population whose every candidate has run
            warnings.warn(f"active learning stopped: every one of its {n_candidates} "
                          "candidates has run before its stopping rule held; use a larger "
                          "population (n_candidates)", UserWarning, stacklevel=3)
            break
        if k < 1:
            warnings.warn(f"active learning stopped at max_runs={max_runs} true runs before "
                          f"its stopping rule held (Pf bounds [{n_low / n_candidates:.3g}, "
                          f"{n_up / n_candidates:.3g}]); raise max_runs", UserWarning,
                          stacklevel=3)
            break
        score = U_score if learning == "U" else -expected_feasibility(mu, sd)
        # a run candidate's sigma need not vanish (a GP's fitted noise): it was picked again
        score = np.where(run, np.inf, score)
        pick = select_batch(candidates, score, min(k, left), pool, int(rng.integers(2 ** 31)))
        run[pick] = True
        U_new = candidates[pick]
        g_new = ls(U_new, tag=f"iter-{it:04d}")
        U_train, g_train = np.concatenate([U_train, U_new]), np.concatenate([g_train, g_new])
    lo = clopper_pearson(n_low, n_candidates, level)[0]
    hi = clopper_pearson(n_up, n_candidates, level)[1]
    if n_fail == 0:
        warnings.warn(f"no candidate of {n_candidates} fails on the surrogate: pf = 0; use a "
                      "larger population (n_candidates)", UserWarning, stacklevel=3)
    cov = math.sqrt((1 - pf) / (n_candidates * pf)) if pf > 0 else math.inf
    return dict(pf=pf, cov=cov, ci=(lo, hi), beta=beta_of(pf), level=level, history=history,
                info={"converged": converged, "iterations": len(history),
                      "n_init": n_init, "batch": batch, "n_candidates": n_candidates,
                      "learning": learning, "surrogate": type(model).__name__,
                      "training_u": U_train, "training_g": g_train,
                      "training_x": u_to_x(ls.inputs, U_train)})


def plot_history(result, ax=None, reference=None):
    """Pf and its bounds against true model runs for an active-learning result; an optional
    ``reference`` Pf is drawn as a dashed line. Returns the axes."""
    h, method = result.history, getattr(result, "method", None)
    if method != "active" or any("pf_lower" not in r for r in h):
        raise ValueError(f"plot_history draws an active-learning result's history (method "
                         f"'active'); this result's method is {method!r}, whose history "
                         "has no Pf bounds per batch")
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    runs = [r["model_runs"] for r in h]
    ax.fill_between(runs, [r["pf_lower"] for r in h], [r["pf_upper"] for r in h], alpha=0.3,
                    step="post", label="Pf bounds (mu -+ c sigma)")
    ax.step(runs, [r["pf"] for r in h], where="post", label="Pf (surrogate mean)")
    if reference is not None:
        ax.axhline(reference, color="k", ls="--", lw=1, label="reference")
    ax.set_xlabel("true model runs")
    ax.set_ylabel("failure probability")
    ax.legend(fontsize=8)
    return ax
