"""FORM and SORM: the design point and the curvatures of the limit-state surface.

FORM (Hasofer & Lind 1974, Rackwitz & Fiessler 1978): the design point u* is the point of the
surface g = 0 closest to the origin, ``min |u|^2 / 2`` subject to ``g(u) = 0``. Two searches:

* ``algorithm="sqp"`` (default): scipy's SLSQP (Kraft 1988), whose quasi-Newton Hessian of
  the Lagrangian learns the surface's curvature. A line-search point is one run; SLSQP asks
  for a gradient only at the iterates it accepts, and each gets it, with g where not yet run,
  in one batch (a failed run at a rejected trial point costs nothing more); no point is run
  twice. It stops at the first iterate that passes the tolerances below within tol of the
  iterate before it (a converged sequence, whose beta is then within about 1e-10 of the
  exact one on the benchmark's problems; stopping at the first passing iterate left 2e-4),
  or where SLSQP's own test (``ftol = tol^2 / 10``) stops it, whose point must pass them.
* ``algorithm="hlrf"``: the improved HL-RF iteration (Zhang & Der Kiureghian 1995): with
  ``grad = dg/du`` at u_k, the HL-RF direction ``d_k = [(grad . u_k - g) / |grad|^2] grad -
  u_k`` and a step lambda halved until the merit ``m(u) = |u|^2 / 2 + c |g(u)|``
  (``c = 2 |u| / |grad| + 10``) decreases enough (Armijo: ``m(u + lambda d) <= m(u) + lambda
  grad m . d / 2``). It stops at the first iterate that passes the tolerances.

Gradients are finite differences in u (central by default), all 2d (forward: d) points of one
iterate in one batched :func:`propagate` call. With ``alpha = -grad / |grad|`` at u*:
``beta = alpha . u*``, ``Pf = Phi(-beta)`` and the importance factors are ``alpha_i^2``.
Converged when ``|g(u)| <= tol |g(u_0)|`` and ``|u - (alpha . u) alpha| <= tol``.

HL-RF linearises g and ignores the surface's curvature, so where the curvature radius is small
against beta it zigzags about u* and converges slowly: on ``g = 3 - u2 + 2 (u1 - 0.5)^2``
(kappa beta ~ 12) it still misses tol = 1e-4 after 100 iterations and 955 runs, where SQP
needs 33. On the membrane's deflection limit state SQP takes 77 FE runs, HL-RF 251; on some
mildly curved surfaces HL-RF takes fewer (``python benchmarks/bench_form.py``).

Failed runs counted as failures (``failed_runs="failure"``: g = -inf). A line-search trial
point that failed is a step too far (halved, or rejected by SLSQP). A central difference with
one failed point takes the other side's second-order one-sided difference (one more run; a
forward difference's failed point is run backwards), so FORM converges where runs fail as
soon as g < 0: its design point lies on g = 0, where they work. It stops
(``ConvergenceError``, :data:`COUNTED_FAILED`, :data:`BOTH_SIDES_FAILED`) where an iterate
itself, or both sides of a difference, failed: at the design point of a surface that bends
towards the origin, whose tangential differences both fall where g < 0.

SORM: principal curvatures kappa_i at u* are the eigenvalues of ``H_tt / |grad|``, with
``H_tt`` the Hessian of g in the d - 1 directions orthogonal to alpha (central finite
differences, batched; kappa > 0 where the surface bends away from the origin). Its points lie
in the tangent plane; where one failed (counted), the stencil runs again centred h^2 inside
the safe side (:func:`_curvatures`), and SORM refuses by name only where one fails still.
Then, with
``psi = phi(beta) / Phi(-beta)``::

    Breitung (1984):              Pf = Phi(-beta) prod (1 + beta kappa_i)^(-1/2)
    Hohenbichler-Rackwitz (1988): Pf = Phi(-beta) prod (1 + psi kappa_i)^(-1/2)
    Tvedt (1990): A1 + A2 + A3 with A1 = Breitung,
        A2 = [beta Phi(-beta) - phi(beta)] [prod (1 + beta k)^-1/2 - prod (1 + (beta + 1) k)^-1/2]
        A3 = (beta + 1) [beta Phi(-beta) - phi(beta)] [prod (1 + beta k)^-1/2
                                                        - Re prod (1 + (beta + i) k)^-1/2]

FORM and SORM are approximations, not sampling estimates: their ``cov`` and ``ci`` are NaN.

References:
    Hasofer & Lind (1974), J. Eng. Mech. Div. 100: 111-121. Rackwitz & Fiessler (1978),
    Comput. Struct. 9: 489-494. Zhang & Der Kiureghian (1995), Proc. IFIP WG 7.5.
    Breitung (1984), J. Eng. Mech. 110: 357-366. Hohenbichler & Rackwitz (1988), J. Eng.
    Mech. 114: 2195-2199. Tvedt (1990), J. Eng. Mech. 116: 1183-1197. Kraft (1988), DFVLR-FB
    88-28.

Imports: numpy, scipy, :mod:`uqkit.inputs.transforms`, :mod:`uqkit.validation` and
:mod:`uqkit.reliability.result`.
"""
import math

import numpy as np
from scipy import optimize, special

from ..inputs.transforms import u_to_x
from ..validation import check_float, check_int
from .result import ConvergenceError, beta_of

__all__ = ["ALGORITHMS", "COUNTED_FAILED", "BOTH_SIDES_FAILED", "form", "sorm_formulas",
           "tangent_basis", "sorm"]

#: FORM's search algorithms.
ALGORITHMS = ("hlrf", "sqp")
#: |u| beyond which the map to the inputs may stop moving in an upper tail (chaospy's
#: support of a lognormal ends near u = 6.4): a vanishing gradient there says so.
SATURATED_U = 6.0
#: Bounds of SLSQP's search in each coordinate of u: past them Phi(u) is clipped (EPS of
#: :mod:`uqkit.inputs.transforms`) and g is constant, where a long first step would stall.
U_BOUND = 8.0


def _with_gradient(ls, u, g_u, fd, h, tag):
    """g (if ``g_u`` is None) and its finite-difference gradient at u, in one batch. Where a
    difference's point failed and is counted as a failure (g = -inf: ``failed_runs=
    "failure"``), that component is the one-sided difference on the other side (one more
    run for ``fd="forward"``): at a design point on g = 0 whose failure domain fails to run,
    half of the central points do."""
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
        lost = np.isneginf(vals)  # failed runs counted as failures
        if lost.any() and math.isfinite(g_u):  # the other side, where it may run
            grad[lost] = (g_u - ls(u - E[lost], tag=f"{tag}-back")) / h
        return g_u, grad
    plus, minus = vals[:d], vals[d:]
    with np.errstate(invalid="ignore"):  # both sides failed: NaN, which FORM's check names
        grad = (plus - minus) / (2 * h)
    if math.isfinite(g_u):  # one side failed (counted, g = -inf): the other side's difference
        forwards = np.isfinite(plus) & np.isneginf(minus)
        lost = forwards | (np.isneginf(plus) & np.isfinite(minus))
        if lost.any():
            side = np.where(forwards, 1.0, -1.0)[lost]
            near = np.where(forwards, plus, minus)[lost]
            grad[lost] = _one_sided(ls, u, g_u, near, side, np.flatnonzero(lost), h, tag)
    return g_u, grad


def _one_sided(ls, u, g_u, near, side, axes, h, tag):
    """The derivatives of g along the ``axes`` at u from the side that ran (``side``: +1 or
    -1 each; ``near``: g one step h along it), to second order like the central difference
    they stand in for: ``side (-3 g(u) + 4 g(u + side h) - g(u + 2 side h)) / (2 h)``, one
    more run each. A first-order difference's error, ``h g'' / 2``, tilted alpha on a curved
    surface by more than FORM's tolerance (it stopped on 15 of 60 rotated paraboloids). Where
    the far point failed too, the first-order difference."""
    far_points = np.repeat(u[None], len(axes), axis=0)
    far_points[np.arange(len(axes)), axes] += 2 * h * side
    far = ls(far_points, tag=f"{tag}-far")
    second = side * (-3 * g_u + 4 * near - far) / (2 * h)
    return np.where(np.isfinite(far), second, side * (near - g_u) / h)


def form(ls, rng=None, u0=None, tol=1e-4, max_iter=100, fd="central", fd_step=1e-4,
         max_halvings=12, algorithm="sqp"):
    """FORM by the improved HL-RF iteration or by SQP (see the module notes).

    Args:
        u0: start point in u-space (default the origin, i.e. the median input).
        tol: convergence tolerance on ``|g| / |g(u0)|`` and on the distance of u from the line
            through alpha.
        max_iter: iteration limit; :class:`ConvergenceError` beyond it.
        fd: ``"central"`` (2d runs per gradient) or ``"forward"`` (d runs).
        fd_step: finite-difference step in u (standard deviations).
        max_halvings: line-search step halvings per iteration (HL-RF).
        algorithm: ``"hlrf"`` (improved HL-RF) or ``"sqp"`` (scipy's SLSQP, for strongly
            curved surfaces where HL-RF zigzags).
    """
    d = ls.inputs.dim
    tol = check_float(tol, "tol", 0.0, 1.0)
    max_iter = check_int(max_iter, "max_iter", 1)
    fd_step = check_float(fd_step, "fd_step", 0.0, 1.0)
    max_halvings = check_int(max_halvings, "max_halvings", 0)
    if fd not in ("central", "forward"):
        raise ValueError(f"unknown fd {fd!r}; use 'central' or 'forward'")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; use one of {ALGORITHMS}")
    u = np.zeros(d) if u0 is None else np.asarray(u0, dtype=float).copy()
    if u.shape != (d,) or not np.isfinite(u).all():
        raise ValueError(f"u0 must be {d} finite numbers, got {u0!r}")
    if algorithm == "sqp":
        u, g, grad, history = _sqp(ls, u, tol, max_iter, fd, fd_step)
    else:
        u, g, grad, history = _hlrf(ls, u, tol, max_iter, fd, fd_step, max_halvings)
    norm = float(np.linalg.norm(grad))
    alpha = -grad / norm
    beta = float(alpha @ u)
    return dict(pf=float(special.ndtr(-beta)), cov=math.nan, ci=(math.nan, math.nan),
                beta=beta, design_point=_design_point(ls, u), alpha=alpha,
                importance=dict(zip(ls.inputs.names, (alpha ** 2).tolist())), history=history,
                info={"iterations": len(history) - 1, "gradient_norm": norm, "g": g,
                      "fd": fd, "fd_step": fd_step, "algorithm": algorithm})


#: What FORM's message adds where failed runs are counted as failures (g = -inf).
COUNTED_FAILED = ("; a model run failed there, and failed_runs='failure' reads it as g = -inf, "
                  "which FORM cannot step on: start FORM where g > 0 (u0=), or, from Python, "
                  "give importance sampling or SORM form_result= of a FORM run whose points "
                  "all ran")


#: FORM's message where both points of a central difference failed (counted as g = -inf).
BOTH_SIDES_FAILED = (
    "FORM: both points of a finite difference at u={u} failed (iteration {it}; g = {g}), and "
    "failed_runs='failure' reads them as g = -inf, so the gradient has no value there: g "
    "falls below 0 on both sides along a direction, as it does at a design point where the "
    "surface bends towards the origin and runs fail as soon as g < 0. No finite-difference "
    "step mends that; use method='subset' or 'mc', which take only g <= 0 from a run")


class _Iterations:
    """The history of a FORM search and its stopping test: ``check`` records an iterate
    (u, g, grad) and says whether it meets both tolerances."""

    def __init__(self, ls, g0, tol):
        self.ls, self.tol, self.history = ls, tol, []
        self.met = False
        self.g_scale = abs(g0) if g0 != 0 else 1.0

    def check(self, u, g, grad):
        norm = float(np.linalg.norm(grad))
        it = len(self.history)
        if not np.isfinite(norm) or not math.isfinite(g):
            runner = getattr(self.ls, "runner", None)
            counted = getattr(runner, "failed_value", None) is not None
            if counted and math.isfinite(g):
                raise ConvergenceError(BOTH_SIDES_FAILED.format(u=u.tolist(), it=it, g=g),
                                       self.history)
            raise ConvergenceError(f"FORM: g or its gradient is not finite at u={u.tolist()} "
                                   f"(iteration {it}; g = {g}); start elsewhere (u0=) or "
                                   "check the model there" + (COUNTED_FAILED if counted else ""),
                                   self.history)
        if norm == 0:
            far = float(np.max(np.abs(u))) > SATURATED_U
            raise ConvergenceError(
                f"FORM: the gradient of g vanishes at u={u.tolist()} (iteration {it}); start "
                "elsewhere (u0=)" + (
                    "; beyond |u| = 6 the map to the inputs may no longer move: chaospy cuts "
                    "some marginals' upper tails off there (a lognormal's near u = 6.4) and "
                    "Phi(u) rounds to 1 beyond about 8. Pf there is below 1e-9: start nearer "
                    "the design point (u0=), or use algorithm='hlrf', whose steps are "
                    "shorter" if far else ""),
                self.history)
        alpha = -grad / norm
        e1, e2 = abs(g) / self.g_scale, float(np.linalg.norm(u - (alpha @ u) * alpha))
        self.history.append({"iteration": it, "g": g, "beta": float(alpha @ u),
                             "u": u.tolist(), "g_error": e1, "u_error": e2,
                             "model_runs": self.ls.runs})
        self.met = e1 <= self.tol and e2 <= self.tol
        return self.met

    def fail(self, reason, hint):
        last = self.history[-1]
        raise ConvergenceError(
            f"FORM did not converge {reason} (|g|/|g0| = {last['g_error']:.3g}, distance from "
            f"the alpha line = {last['u_error']:.3g}, tol={self.tol}); {hint}", self.history)


def _hlrf(ls, u, tol, max_iter, fd, h, max_halvings):
    """Improved HL-RF from u (module notes): (u*, g, grad, history)."""
    g, grad = _with_gradient(ls, u, None, fd, h, "form-000")
    its = _Iterations(ls, g, tol)
    for it in range(max_iter + 1):
        if its.check(u, g, grad):
            break
        if it == max_iter:
            its.fail(f"in max_iter={max_iter} iterations", "raise max_iter, loosen tol, start "
                     "elsewhere (u0=), or try algorithm='sqp'")
        norm = float(np.linalg.norm(grad))
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
        g, grad = _with_gradient(ls, u, g, fd, h, f"form-{it + 1:03d}")
    return u, g, grad, its.history


class _Converged(Exception):
    """Raised inside SLSQP at the iterate where FORM's search stops."""


def _sqp(ls, u0, tol, max_iter, fd, h):
    """min |u|^2 / 2 subject to g(u) = 0 by scipy's SLSQP (Kraft 1988) from u0: (u*, g, grad,
    history). A line-search point is one run. SLSQP asks for the gradient only at the
    iterates it accepts: each gets it, with g where not yet run, in one batch, and is
    recorded and checked. The search stops at the first iterate that meets the tolerances
    within tol of the iterate before it, or where SLSQP's own test stops it. Every point's g
    and gradient are kept, so no point is run twice."""
    seen = {}  # u's bytes -> [g or None, grad or None]
    batches = iter(range(10 ** 9))

    def g_at(u):
        entry = seen.setdefault(u.tobytes(), [None, None])
        if entry[0] is None:
            entry[0] = float(ls(u[None], tag=f"form-sqp-{next(batches):03d}")[0])
        return entry[0]

    def grad_at(u):
        entry = seen.setdefault(u.tobytes(), [None, None])
        if entry[1] is None:
            entry[:] = _with_gradient(ls, u, entry[0], fd, h, f"form-sqp-{next(batches):03d}")
        return entry[1]

    def point(u):  # (g, gradient) at u, in one batch where neither has run
        grad = grad_at(u)
        return g_at(u), grad

    def constraint_jac(v):  # an accepted iterate: record it, stop where it has converged
        v = np.array(v, dtype=float)
        last = np.array(its.history[-1]["u"])
        if not np.array_equal(last, v) and its.check(v, *point(v)):
            passed.append(v)
            if np.linalg.norm(v - last) <= tol:
                raise _Converged(v)
        return grad_at(v)[None] / its.g_scale

    u = np.array(u0, dtype=float)
    its, passed = _Iterations(ls, point(u)[0], tol), []
    if its.check(u, *point(u)):
        return (u, *point(u), its.history)
    try:
        res = optimize.minimize(lambda v: 0.5 * v @ v, u, jac=lambda v: v, method="SLSQP",
                                bounds=[(-U_BOUND, U_BOUND)] * len(u),
                                constraints=[{"type": "eq",
                                              "fun": lambda v: g_at(v) / its.g_scale,
                                              "jac": constraint_jac}],
                                options={"maxiter": max_iter, "ftol": (tol * tol) / 10})
    except _Converged as stop:
        u = stop.args[0]
        return (u, *point(u), its.history)
    u = np.array(res.x)
    if its.history[-1]["u"] != u.tolist():  # SLSQP stopped at a point it did not report
        its.check(u, *point(u))
    if not its.met and passed:  # SLSQP's own end (a line search lost in the FD noise, say)
        u = passed[-1]          # came after an iterate that met the tolerances
    elif not its.met:
        its.fail(f"(SLSQP: {res.message}; max_iter={max_iter})", "raise max_iter, loosen "
                 "tol, start elsewhere (u0=), or try algorithm='hlrf'")
    return (u, *point(u), its.history)


def _design_point(ls, u):
    return {"u": np.asarray(u, dtype=float), "x": u_to_x(ls.inputs, u[None])[0]}


# -- SORM ----------------------------------------------------------------------------------

def _form_point(ls, form_result, form_options):
    """(the FORM design point's fields, model runs spent on it before this call): from
    ``form_result`` if given, else from a FORM run here."""
    if form_result is None:
        return form(ls, **form_options), 0
    d = ls.inputs.dim
    method = getattr(form_result, "method", "form")
    point = getattr(form_result, "design_point", None)
    if method not in ("form", "sorm") or not isinstance(point, dict) or "u" not in point:
        raise ValueError(f"form_result must be the result of method='form' (or 'sorm') on "
                         f"this limit state, got {type(form_result).__name__}"
                         + (f" of method {method!r}" if hasattr(form_result, "method") else ""))
    if np.shape(point["u"]) != (d,):
        raise ValueError(f"form_result's design point has {np.size(point['u'])} coordinates; "
                         f"this limit state has {d} inputs")
    if form_options:
        raise ValueError(f"form_result is given, so FORM does not run: its options "
                         f"{sorted(form_options)} would be ignored")
    fields = {k: getattr(form_result, k) for k in ("design_point", "alpha", "importance",
                                                   "history", "info")}
    # arrays again where a result was rebuilt from its JSON; and FORM's beta, which a SORM
    # result's beta (from its own Pf) is not
    u, alpha = (np.asarray(v, dtype=float) for v in (point["u"], fields["alpha"]))
    fields.update(design_point=dict(point, u=u), alpha=alpha, beta=float(alpha @ u))
    return fields, form_result.model_runs


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


def _sorm_probabilities(beta, kappa):
    """:func:`sorm_formulas` for either side of the origin. The formulas hold for beta >= 0;
    where the mean point fails (beta < 0) they give the safe side's probability, from -beta
    and the curvatures seen from it (-kappa), and Pf is its complement (Tvedt's formula at
    beta = -1.96 gave 0.975 where Pf is 0.981, or 1.012 on another surface)."""
    if beta >= 0:
        return sorm_formulas(beta, kappa)
    return {name: 1.0 - p for name, p in sorm_formulas(-beta, -np.asarray(kappa)).items()}


def _stencil(u, T):
    """The points of a central-difference Hessian along the columns of T (d, m) about u:
    u +- t_i, then u +- t_i +- t_j for i < j in the four sign orders."""
    m = T.shape[1]
    pts, pairs = [u + T.T, u - T.T], [(i, j) for i in range(m) for j in range(i + 1, m)]
    for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        pts.append(np.array([u + si * T[:, i] + sj * T[:, j] for i, j in pairs])
                   .reshape(-1, len(u)))
    return pts, pairs


def _curvatures(ls, u, T, g0, gnorm, h, alpha, reuse=False):
    """The principal curvatures at the design point u from a finite-difference Hessian of g
    along the tangent directions T (d, m), scaled by the step h. ``reuse``: u, g0 and gnorm
    come from a FORM result the caller gave, which must be this limit state's
    (:func:`_check_design_point`, three more runs along ``alpha``).

    Where a point of the stencil failed (counted, g = -inf: the tangent plane of a surface
    that bends towards the origin, or of a flat one whose alpha is off by rounding, lies in
    the failure domain), the stencil runs again centred ``h^2`` inside the safe side, at
    ``u - h^2 alpha``, where g is ``g0 + h^2 |grad|``: its points then stay where g >= 0 for
    curvatures down to -1 (a design point needs beta kappa > -1 anyway). Where one fails
    still, SORM refuses by name."""
    m = T.shape[1]
    pts, pairs = _stencil(u, T)
    g_centre = g0  # g where the stencil is centred
    if reuse:
        pts.append(np.array([u, u + h * alpha, u - h * alpha]))
    vals = ls(np.concatenate(pts), tag="sorm-hessian")
    if reuse:
        (g_here, g_ahead, g_behind), vals = vals[-3:], vals[:-3]
    if np.isneginf(vals).any():  # failed runs counted as failures (failed_runs="failure")
        centre = u - h * h * alpha
        inside = ls(np.concatenate([centre[None]] + _stencil(centre, T)[0]),
                    tag="sorm-hessian-inside")
        g_centre, vals = float(inside[0]), inside[1:]
        lost = int(np.count_nonzero(np.isneginf(inside)))
        if lost:
            raise ValueError(
                f"SORM: {lost} of the {len(inside)} runs about the design point that give "
                "the curvatures failed, even centred inside the safe side, and "
                "failed_runs='failure' reads them as g = -inf, which has no curvature; use "
                "method='subset' or 'mc', or, from Python, importance sampling about this "
                "design point (form_result=)")
    if reuse:
        if not math.isfinite(g_here):
            raise ValueError(f"form_result does not fit this limit state: the run at its "
                             f"design point failed here (failed_runs='failure' reads it as "
                             f"g = -inf), where the result has g = {g0:.6g}")
        # the step ahead, into the failure domain, fails where runs fail as soon as g < 0
        # (counted): the slope from the step behind then
        slope = ((g_behind - g_ahead) / (2 * h) if np.isfinite(g_ahead)
                 else (g_behind - g_here) / h)
        _check_design_point(g_here, slope, (vals[:m] - vals[m:2 * m]) / (2 * h), g0, gnorm)
    H = np.diag((vals[:m] - 2 * g_centre + vals[m:2 * m]) / h ** 2)
    q = len(pairs)
    pp, pm, mp, mm = (vals[2 * m + s * q:2 * m + (s + 1) * q] for s in range(4))
    for (i, j), v in zip(pairs, (pp - pm - mp + mm) / (4 * h * h)):
        H[i, j] = H[j, i] = v
    return np.linalg.eigvalsh(H / gnorm)


#: Relative tolerances of :func:`_check_design_point` on g and on its slopes: FORM's own
#: finite differences (forward, fd_step 0.02, curvature 1: 0.75%) and a model's rounding
#: must pass; a limit state tilted or scaled by more must not (a 5% tilt moves SORM's Pf
#: by about 1e-3 of itself).
REUSE_G_TOLERANCE, REUSE_SLOPE_TOLERANCE = 1e-4, 0.05


def _check_design_point(g_here, slope, tangential, g0, gnorm):
    """Refuse a FORM result of another limit state: at its design point g must be the
    result's g, fall along alpha at the result's rate (a central difference) and not slope
    along the surface (a limit state through the same point, tilted or scaled, passed a
    check of g alone)."""
    where = ("form_result does not fit this limit state (another limit state's, or FORM's "
             "finite differences too coarse for it: run SORM without form_result): ")
    if not abs(g_here - g0) <= REUSE_G_TOLERANCE * max(abs(g0), gnorm):
        raise ValueError(f"{where}g at its design point is {g_here:.6g} here, {g0:.6g} in the "
                         "result")
    if not abs(slope / gnorm - 1) <= REUSE_SLOPE_TOLERANCE:
        raise ValueError(f"{where}g falls along alpha at {slope:.6g} per standard deviation "
                         f"here, {gnorm:.6g} in the result")
    if len(tangential) and not np.max(np.abs(tangential)) <= REUSE_SLOPE_TOLERANCE * gnorm:
        raise ValueError(f"{where}g slopes along the surface at its design point "
                         f"({np.round(tangential, 6).tolist()} per standard deviation, against "
                         f"{gnorm:.6g} across it): this limit state's design point is elsewhere")


def tangent_basis(alpha):
    """(d, d - 1) orthonormal columns spanning the plane orthogonal to the unit vector alpha."""
    d = len(alpha)
    Q, _ = np.linalg.qr(np.column_stack([alpha, np.eye(d)]))
    return Q[:, 1:d]


def sorm(ls, rng=None, form_result=None, formula="tvedt", hessian_step=5e-3,
         **form_options):
    """SORM from the curvatures at the FORM design point (see the module notes).

    Args:
        form_result: a FORM :class:`ReliabilityResult` of this limit state to start from
            (else FORM runs here with ``form_options``); its model runs are included in
            ``model_runs``; g is run at its design point and a step either side along alpha
            with the Hessian (three runs), and a result of another limit state is refused.
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
    kappa = np.zeros(0)
    if m:  # in one dimension there is no tangent direction: FORM is exact
        kappa = _curvatures(ls, u, T, g0, gnorm, h, alpha, reuse=form_result is not None)
    pfs = _sorm_probabilities(beta, kappa)
    pf = pfs[formula]
    if not (0.0 <= pf <= 1.0):
        raise ValueError(f"SORM {formula}: undefined for beta={beta:.4g} and curvatures "
                         f"{np.round(kappa, 4).tolist()} (1 + beta kappa <= 0); use "
                         "sampling (method='is' or 'subset')")
    info = dict(f["info"], curvatures=kappa, pf=pfs, pf_form=float(special.ndtr(-beta)),
                formula=formula, hessian_step=h, form_runs=runs_before or None)
    return dict(pf=pf, cov=math.nan, ci=(math.nan, math.nan), beta=beta_of(pf),
                design_point=f["design_point"], alpha=alpha, importance=f["importance"],
                history=f["history"], info=info, extra_runs=runs_before)


