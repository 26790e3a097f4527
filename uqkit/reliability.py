"""Failure probabilities: Monte Carlo, FORM, SORM, importance sampling, subset simulation
and active learning on a surrogate.

A limit state g(x) fails where g(x) <= 0; ``Pf = P[g(X) <= 0]`` and the reliability index
``beta = -Phi^-1(Pf)``. A g with k outputs is a system: series fails when any component fails
(``min_j g_j <= 0``), parallel when all do (``max_j g_j <= 0``). Every method works in the
standard normal space ``u`` of the Rosenblatt transform of the inputs' joint distribution,
``x = F^-1(Phi(u))`` (:mod:`uqkit.evaluation`), so copulas are respected; the importance
factors, curvatures and the design point ``u*`` refer to these Rosenblatt variables (for
dependent inputs they depend on the input order).

Monte Carlo (``"mc"``): ``Pf = m / n`` for m failures in n runs, CoV ``sqrt((1 - Pf) / (n Pf))``
and the exact binomial (Clopper-Pearson 1934) interval from beta quantiles::

    lower = B^-1(a/2; m, n - m + 1),   upper = B^-1(1 - a/2; m + 1, n - m)

FORM (Hasofer & Lind 1974, Rackwitz & Fiessler 1978): the design point u* is the point of the
surface g = 0 closest to the origin, found by the improved HL-RF iteration (Zhang & Der
Kiureghian 1995): with ``grad = dg/du`` at u_k, the HL-RF direction
``d_k = [(grad . u_k - g) / |grad|^2] grad - u_k`` and a step lambda halved until the merit
``m(u) = |u|^2 / 2 + c |g(u)|`` (``c = 2 |u| / |grad| + 10``) decreases enough (Armijo:
``m(u + lambda d) <= m(u) + lambda grad m . d / 2``). Gradients are finite
differences in u (central by default), all 2d (forward: d) points of one iteration in one
batched :func:`propagate` call. With ``alpha = -grad / |grad|`` at u*: ``beta = alpha . u*``,
``Pf = Phi(-beta)`` and the importance factors are ``alpha_i^2``. Converged when
``|g(u)| <= tol |g(u_0)|`` and ``|u - (alpha . u) alpha| <= tol``.

SORM: principal curvatures kappa_i at u* are the eigenvalues of ``H_tt / |grad|``, with
``H_tt`` the Hessian of g in the d - 1 directions orthogonal to alpha (central finite
differences, batched; kappa > 0 where the surface bends away from the origin). Then, with
``psi = phi(beta) / Phi(-beta)``::

    Breitung (1984):              Pf = Phi(-beta) prod (1 + beta kappa_i)^(-1/2)
    Hohenbichler-Rackwitz (1988): Pf = Phi(-beta) prod (1 + psi kappa_i)^(-1/2)
    Tvedt (1990): A1 + A2 + A3 with A1 = Breitung,
        A2 = [beta Phi(-beta) - phi(beta)] [prod (1 + beta k)^-1/2 - prod (1 + (beta + 1) k)^-1/2]
        A3 = (beta + 1) [beta Phi(-beta) - phi(beta)] [prod (1 + beta k)^-1/2
                                                        - Re prod (1 + (beta + i) k)^-1/2]

Importance sampling (``"is"``): n draws of the standard normal density shifted to u*,
``h(u) = phi(u - u*)``, with weights ``w = phi(u) / h(u) = exp(-u . u* + |u*|^2 / 2)``;
``Pf = mean(1[g <= 0] w)``, its standard error from the sample variance of the weighted
indicators, and a normal-approximation interval ``Pf +- z se`` (clipped at 0).

Subset simulation (``"subset"``, :mod:`uqkit.reliability_subset`) and active learning
(``"active"``, :mod:`uqkit.reliability_active`) are described in their modules.

FORM and SORM are approximations, not sampling estimates: their ``cov`` and ``ci`` are NaN.

References:
    Hasofer & Lind (1974), J. Eng. Mech. Div. 100: 111-121. Rackwitz & Fiessler (1978),
    Comput. Struct. 9: 489-494. Zhang & Der Kiureghian (1995), Proc. IFIP WG 7.5.
    Breitung (1984), J. Eng. Mech. 110: 357-366. Hohenbichler & Rackwitz (1988), J. Eng.
    Mech. 114: 2195-2199. Tvedt (1990), J. Eng. Mech. 116: 1183-1197. Clopper & Pearson
    (1934), Biometrika 26: 404-413.

Example:
    >>> from uqkit.inputs import RandomInputs
    >>> inputs = RandomInputs.from_spec({"R": "normal(5, 0.5)", "S": "normal(3, 0.4)"})
    >>> r = failure_probability(lambda X: X[:, 0] - X[:, 1], inputs, method="form",
    ...                         executor="serial")
    >>> round(r.beta, 4), round(2 / math.hypot(0.5, 0.4), 4), r.model_runs   # exact beta
    (3.1235, 3.1235, 10)
"""
import inspect
import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import special, stats

from .evaluation import ModelRunner, check_float, check_int, check_seed, u_to_x

SYSTEMS = ("series", "parallel")


class ConvergenceError(RuntimeError):
    """An iterative method did not converge; ``history`` holds its iterations."""

    def __init__(self, message, history=None):
        super().__init__(message)
        self.history = history or []


@dataclass
class ReliabilityResult:
    """A failure probability estimate.

    Attributes:
        pf: failure probability P[g <= 0].
        cov: coefficient of variation of the estimate (NaN for FORM / SORM).
        ci: (lower, upper) interval at ``level`` (NaN for FORM / SORM).
        beta: reliability index (FORM: alpha . u*; else -Phi^-1(pf)).
        model_runs: true model evaluations, finite-difference runs included.
        method: the method's name.
        seconds: wall time.
        level: confidence level of ``ci``.
        design_point: ``{"u": u*, "x": x*}`` (FORM, SORM, IS), else None.
        alpha: unit vector from the origin to u* (-grad g / |grad g|), else None.
        importance: importance factors alpha_i^2 by input name, else None.
        history: iterations / levels, a list of JSON-friendly dicts.
        info: method-specific details (SORM curvatures and formulas, ...).
    """

    pf: float
    cov: float
    ci: tuple
    beta: float
    model_runs: int
    method: str
    seconds: float = 0.0
    level: float = 0.95
    design_point: dict = None
    alpha: np.ndarray = None
    importance: dict = None
    history: list = field(default_factory=list)
    info: dict = field(default_factory=dict)

    def to_dict(self):
        """A JSON-friendly dict: arrays as lists, NaN and infinities as None."""
        from .cache import jsonable

        return jsonable(dict(self.__dict__), finite=True)


def beta_of(pf):
    """Reliability index -Phi^-1(pf) (inf for pf = 0)."""
    return float(-special.ndtri(pf))


def clopper_pearson(failures, n, level=0.95):
    """Exact binomial (Clopper-Pearson) interval of a proportion: (lower, upper)."""
    a = 1.0 - level
    lo = stats.beta.ppf(a / 2, failures, n - failures + 1) if failures > 0 else 0.0
    hi = stats.beta.ppf(1 - a / 2, failures + 1, n - failures) if failures < n else 1.0
    return float(lo), float(hi)


class LimitState:
    """g in standard normal space: ``ls(U)`` maps (n, d) u to x, runs the model through the
    runner and reduces a system's outputs to (n,) values."""

    def __init__(self, runner, inputs, system=None):
        if system is not None and system not in SYSTEMS:
            raise ValueError(f"unknown system {system!r}; use one of {SYSTEMS} or None")
        self.runner, self.inputs, self.system = runner, inputs, system

    @property
    def runs(self):
        return self.runner.runs

    def __call__(self, U, tag=None):
        U = np.atleast_2d(np.asarray(U, dtype=float))
        Y = self.runner(u_to_x(self.inputs, U), tag)
        if Y.ndim != 2 or Y.shape[0] != len(U):
            raise ValueError(f"g returned outputs of shape {Y.shape} for {len(U)} rows")
        if Y.shape[1] == 1:
            return Y[:, 0]
        if self.system is None:
            raise ValueError(f"g returned {Y.shape[1]} outputs per row; pass "
                             "system='series' (fails if any g_j <= 0) or 'parallel' (if all do)")
        return Y.min(1) if self.system == "series" else Y.max(1)


# -- Monte Carlo ---------------------------------------------------------------------------

def monte_carlo(ls, rng, n=100_000, level=0.95, batch=1_000_000):
    """Crude Monte Carlo with a Clopper-Pearson interval (see the module notes)."""
    n = check_int(n, "n", 1)
    batch = check_int(batch, "batch", 1)
    level = check_float(level, "level", 0.0, 1.0)
    d = ls.inputs.dim
    failures = 0
    for b, start in enumerate(range(0, n, batch)):
        U = rng.standard_normal((min(batch, n - start), d))
        failures += int(np.count_nonzero(ls(U, tag=f"mc-{b:04d}") <= 0))
    pf = failures / n
    ci = clopper_pearson(failures, n, level)
    if failures == 0:
        warnings.warn(f"no failure in n={n} Monte Carlo runs: pf = 0, with a {100 * level:g}% "
                      f"upper bound of {ci[1]:.3g}; use more runs or subset simulation",
                      UserWarning, stacklevel=3)
    cov = math.sqrt((1 - pf) / (n * pf)) if pf > 0 else math.inf
    return dict(pf=pf, cov=cov, ci=ci, beta=beta_of(pf), level=level,
                info={"n": n, "failures": failures})


# -- FORM ----------------------------------------------------------------------------------

def _with_gradient(ls, u, g_u, fd, h, tag):
    """g (if ``g_u`` is None) and its finite-difference gradient at u, in one batch."""
    d = len(u)
    E = h * np.eye(d)
    pts = [u + E] if fd == "forward" else [u + E, u - E]
    if g_u is None:
        pts.insert(0, u[None])
    vals = ls(np.concatenate(pts), tag=tag)
    if g_u is None:
        g_u, vals = float(vals[0]), vals[1:]
    if fd == "forward":
        grad = (vals - g_u) / h
    else:
        grad = (vals[:d] - vals[d:]) / (2 * h)
    return g_u, grad


def form(ls, rng=None, u0=None, tol=1e-4, max_iter=100, fd="central", fd_step=1e-4,
         max_halvings=12):
    """FORM by the improved HL-RF iteration (see the module notes).

    Args:
        u0: start point in u-space (default the origin, i.e. the median input).
        tol: convergence tolerance on |g| / |g(u0)| and on the distance of u from the line
            through alpha.
        max_iter: iteration limit; :class:`ConvergenceError` beyond it.
        fd: ``"central"`` (2d runs per gradient) or ``"forward"`` (d runs).
        fd_step: finite-difference step in u (standard deviations).
        max_halvings: line-search step halvings per iteration.
    """
    d = ls.inputs.dim
    tol = check_float(tol, "tol", 0.0, 1.0)
    max_iter = check_int(max_iter, "max_iter", 1)
    fd_step = check_float(fd_step, "fd_step", 0.0, 1.0)
    max_halvings = check_int(max_halvings, "max_halvings", 0)
    if fd not in ("central", "forward"):
        raise ValueError(f"unknown fd {fd!r}; use 'central' or 'forward'")
    u = np.zeros(d) if u0 is None else np.asarray(u0, dtype=float).copy()
    if u.shape != (d,) or not np.isfinite(u).all():
        raise ValueError(f"u0 must be {d} finite numbers, got {u0!r}")
    g, grad = _with_gradient(ls, u, None, fd, fd_step, "form-000")
    g_scale = abs(g) if g != 0 else 1.0
    history = []
    for it in range(max_iter + 1):
        norm = float(np.linalg.norm(grad))
        if not np.isfinite(norm) or norm == 0:
            raise ConvergenceError(f"FORM: the gradient of g vanishes at u={u.tolist()} "
                                   f"(iteration {it}); start elsewhere (u0=)", history)
        alpha = -grad / norm
        e1, e2 = abs(g) / g_scale, float(np.linalg.norm(u - (alpha @ u) * alpha))
        history.append({"iteration": it, "g": g, "beta": float(alpha @ u),
                        "u": u.tolist(), "g_error": e1, "u_error": e2,
                        "model_runs": ls.runs})
        if e1 <= tol and e2 <= tol:
            break
        if it == max_iter:
            raise ConvergenceError(
                f"FORM did not converge in max_iter={max_iter} iterations (|g|/|g0| = {e1:.3g}, "
                f"distance from the alpha line = {e2:.3g}, tol={tol}); raise max_iter, loosen "
                "tol, or start elsewhere (u0=)", history)
        direction = ((grad @ u - g) / norm ** 2) * grad - u
        c = 2 * np.linalg.norm(u) / norm + 10.0
        merit = 0.5 * u @ u + c * abs(g)
        # Armijo: a sufficient decrease along the direction, not any decrease (accepting
        # any decrease lets the iterates flip between two points on a curved surface)
        slope = float((u + c * np.sign(g) * grad) @ direction)
        step = 1.0
        for k in range(max_halvings + 1):
            trial = u + step * direction
            g_trial = float(ls(trial[None], tag=f"form-{it + 1:03d}-step-{k:02d}")[0])
            if 0.5 * trial @ trial + c * abs(g_trial) <= merit + 0.5 * step * min(slope, 0.0):
                break
            step *= 0.5
        u, g = trial, g_trial
        g, grad = _with_gradient(ls, u, g, fd, fd_step, f"form-{it + 1:03d}")
    beta = float(alpha @ u)
    return dict(pf=float(special.ndtr(-beta)), cov=math.nan, ci=(math.nan, math.nan),
                beta=beta, design_point=_design_point(ls, u), alpha=alpha,
                importance=dict(zip(ls.inputs.names, (alpha ** 2).tolist())), history=history,
                info={"iterations": len(history) - 1, "gradient_norm": norm, "g": g,
                      "fd": fd, "fd_step": fd_step})


def _design_point(ls, u):
    return {"u": np.asarray(u, dtype=float), "x": u_to_x(ls.inputs, u[None])[0]}


# -- SORM ----------------------------------------------------------------------------------

def _form_point(ls, form_result, form_options):
    """(the FORM design point's fields, model runs spent on it before this call): from
    ``form_result`` if given, else from a FORM run here."""
    if form_result is None:
        return form(ls, **form_options), 0
    fields = ("beta", "design_point", "alpha", "importance", "history", "info")
    return {k: getattr(form_result, k) for k in fields}, form_result.model_runs


def sorm_formulas(beta, kappa):
    """Breitung, Hohenbichler-Rackwitz and Tvedt failure probabilities from the reliability
    index and the principal curvatures (positive: surface bending away from the origin)."""
    kappa = np.asarray(kappa, dtype=float)
    Phi, phi = special.ndtr(-beta), math.exp(-0.5 * beta * beta) / math.sqrt(2 * math.pi)
    out = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        b = 1 + beta * kappa
        out["breitung"] = float(Phi * np.prod(b ** -0.5)) if np.all(b > 0) else math.nan
        hr = 1 + phi / Phi * kappa
        out["hohenbichler"] = float(Phi * np.prod(hr ** -0.5)) if np.all(hr > 0) else math.nan
        if np.all(b > 0) and np.all(1 + (beta + 1) * kappa > 0):
            t = beta * Phi - phi
            p1 = np.prod(b ** -0.5)
            a2 = t * (p1 - np.prod((1 + (beta + 1) * kappa) ** -0.5))
            a3 = (beta + 1) * t * (p1 - np.real(np.prod((1 + (beta + 1j) * kappa) ** -0.5)))
            out["tvedt"] = float(Phi * p1 + a2 + a3)
        else:
            out["tvedt"] = math.nan
    return out


def tangent_basis(alpha):
    """(d, d - 1) orthonormal columns spanning the plane orthogonal to the unit vector alpha."""
    d = len(alpha)
    Q, _ = np.linalg.qr(np.column_stack([alpha, np.eye(d)]))
    return Q[:, 1:d]


def sorm(ls, rng=None, form_result=None, formula="tvedt", hessian_step=5e-3,
         **form_options):
    """SORM from the curvatures at the FORM design point (see the module notes).

    Args:
        form_result: a FORM :class:`ReliabilityResult` to start from (else FORM runs here
            with ``form_options``); its model runs are included in ``model_runs``.
        formula: ``"tvedt"`` (default: usually the most accurate of the three, and within
            1 % of the exact Pf on the parabolic test case where Hohenbichler-Rackwitz is 4 %
            and Breitung 11 % off), ``"hohenbichler"`` or ``"breitung"`` for ``pf``; all three
            are in ``info["pf"]``.
        hessian_step: finite-difference step of the Hessian (standard deviations).
    """
    if formula not in ("hohenbichler", "breitung", "tvedt"):
        raise ValueError(f"unknown formula {formula!r}; use 'hohenbichler', 'breitung' or "
                         "'tvedt'")
    h = check_float(hessian_step, "hessian_step", 0.0, 1.0)
    f, runs_before = _form_point(ls, form_result, form_options)
    u, alpha, beta = f["design_point"]["u"], f["alpha"], f["beta"]
    g0, gnorm = f["info"]["g"], f["info"]["gradient_norm"]
    T = tangent_basis(alpha) * h
    m = T.shape[1]
    pts, pairs = [u + T.T, u - T.T], [(i, j) for i in range(m) for j in range(i + 1, m)]
    for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        pts.append(np.array([u + si * T[:, i] + sj * T[:, j] for i, j in pairs])
                   .reshape(-1, len(u)))
    vals = ls(np.concatenate(pts), tag="sorm-hessian")
    H = np.diag((vals[:m] - 2 * g0 + vals[m:2 * m]) / h ** 2)
    q = len(pairs)
    pp, pm, mp, mm = (vals[2 * m + s * q:2 * m + (s + 1) * q] for s in range(4))
    for (i, j), v in zip(pairs, (pp - pm - mp + mm) / (4 * h * h)):
        H[i, j] = H[j, i] = v
    kappa = np.linalg.eigvalsh(H / gnorm)
    pfs = sorm_formulas(beta, kappa)
    pf = pfs[formula]
    if not np.isfinite(pf):
        raise ValueError(f"SORM {formula}: undefined for beta={beta:.4g} and curvatures "
                         f"{np.round(kappa, 4).tolist()} (1 + beta kappa <= 0); use "
                         "sampling (method='is' or 'subset')")
    info = dict(f["info"], curvatures=kappa, pf=pfs, pf_form=float(special.ndtr(-beta)),
                formula=formula, hessian_step=h, form_runs=runs_before or None)
    return dict(pf=pf, cov=math.nan, ci=(math.nan, math.nan), beta=beta_of(pf),
                design_point=f["design_point"], alpha=alpha, importance=f["importance"],
                history=f["history"], info=info, extra_runs=runs_before)


# -- importance sampling -------------------------------------------------------------------

def importance_sampling(ls, rng, n=2000, level=0.95, form_result=None, **form_options):
    """Importance sampling around the FORM design point (see the module notes).

    Args:
        n: importance samples.
        form_result: a FORM result to reuse (its runs are included in ``model_runs``);
            else FORM runs here with ``form_options``.
    """
    n = check_int(n, "n", 2)
    level = check_float(level, "level", 0.0, 1.0)
    f, runs_before = _form_point(ls, form_result, form_options)
    ustar = f["design_point"]["u"]
    U = ustar + rng.standard_normal((n, len(ustar)))
    fails = ls(U, tag="is") <= 0
    w = np.exp(-U @ ustar + 0.5 * ustar @ ustar)
    v = np.where(fails, w, 0.0)
    pf = float(v.mean())
    se = float(v.std(ddof=1) / math.sqrt(n))
    z = special.ndtri(0.5 + level / 2)
    if not fails.any():
        warnings.warn(f"no failure among n={n} importance samples: pf = 0; check the design "
                      "point or raise n", UserWarning, stacklevel=3)
    return dict(pf=pf, cov=se / pf if pf > 0 else math.inf,
                ci=(max(pf - z * se, 0.0), pf + z * se), beta=beta_of(pf), level=level,
                design_point=f["design_point"], alpha=f["alpha"], importance=f["importance"],
                history=f["history"],
                info={"n": n, "failures": int(fails.sum()), "form_beta": f["beta"],
                      "ci_kind": "normal approximation"}, extra_runs=runs_before)


# -- dispatcher ----------------------------------------------------------------------------

def _methods():
    from .reliability_active import active_learning
    from .reliability_subset import subset_simulation

    return {"mc": monte_carlo, "form": form, "sorm": sorm, "is": importance_sampling,
            "subset": subset_simulation, "active": active_learning}


def method_options(method):
    """The names of the options that :func:`failure_probability` takes for ``method``.

    >>> method_options("mc")
    ['n', 'level', 'batch']
    """
    func = _methods()[method]
    allowed = [p.name for p in inspect.signature(func).parameters.values()
               if p.kind is p.POSITIONAL_OR_KEYWORD and p.name not in ("ls", "rng")]
    if func in (sorm, importance_sampling):  # they pass FORM's options on
        allowed += [p for p in inspect.signature(form).parameters if p not in ("ls", "rng")]
    return allowed


def failure_probability(g, inputs, method="mc", seed=0, system=None, executor="local",
                        workers=None, dask=None, chunk_size=None, store=None, progress=False,
                        **options):
    """Failure probability P[g(X) <= 0] of a limit state over random inputs.

    Args:
        g: a uqkit model, (n, d) -> (n,) or (n, k) (k > 1 needs ``system``).
        inputs: :class:`uqkit.inputs.RandomInputs` (any joint, copulas included).
        method: ``"mc"``, ``"form"``, ``"sorm"``, ``"is"``, ``"subset"`` or ``"active"``.
        seed: seed of every random draw (the same seed gives the same Pf for any executor).
        system: ``"series"`` or ``"parallel"`` for a g with several outputs.
        executor, workers, dask, chunk_size, progress: as in :func:`uqkit.propagate`.
        store: a directory; each batch of model runs is stored in a sub-directory, so a
            killed analysis resumes without recomputing.
        **options: the method's options: ``mc``: n, level, batch; ``form``: u0, tol,
            max_iter, fd, fd_step; ``sorm``: form_result, formula, hessian_step and FORM's;
            ``is``: n, level, form_result and FORM's; ``subset``: see
            :func:`uqkit.reliability_subset.subset_simulation`; ``active``: see
            :func:`uqkit.reliability_active.active_learning`.

    Returns:
        :class:`ReliabilityResult`.

    Example:
        >>> from uqkit.inputs import RandomInputs
        >>> inputs = RandomInputs.from_spec({"u1": "normal(0, 1)", "u2": "normal(0, 1)"})
        >>> r = failure_probability(lambda X: 3 - X.sum(1) / 2 ** 0.5, inputs, method="mc",
        ...                         n=200_000, seed=1, executor="serial")
        >>> r.ci[0] < 1.3499e-3 < r.ci[1], r.model_runs       # exact Phi(-3) = 1.3499e-3
        (True, 200000)
    """
    t0 = time.perf_counter()
    methods = _methods()
    if method not in methods:
        raise ValueError(f"unknown method {method!r}; use one of {tuple(methods)}")
    check_seed(seed)
    func = methods[method]
    allowed = method_options(method)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for method {method!r}; options: "
                         f"{allowed}")
    runner = ModelRunner(g, inputs, executor, workers, dask, chunk_size, store,
                         settings={"analysis": "reliability", "method": method, "seed": seed},
                         progress=progress)
    with runner:
        ls = LimitState(runner, inputs, system)
        fields = func(ls, np.random.default_rng(seed), **options)
    extra = fields.pop("extra_runs", 0)
    fields.setdefault("info", {})["computed_runs"] = runner.computed
    return ReliabilityResult(model_runs=runner.runs + extra, method=method,
                             seconds=time.perf_counter() - t0, **fields)
