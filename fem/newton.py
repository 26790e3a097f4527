"""Newton-Raphson load stepping for the membrane (numba, no Python in the loop).

Two modes share one Newton iteration:

* ``paper``: ``n`` fixed increments of the load factor (the paper's p/400); an increment has
  converged when the Euclidean norm of the unbalanced force over the free unknowns,
  ``||lambda f_ext - f_int||_2``, is below an absolute tolerance (the paper's 1e-4, in force
  units), with at most ``max_iter`` (100) iterations; plain Newton steps. A tolerance above
  :data:`PAPER_TOL_SHARE` of the full load's norm ``||f_ext||_2`` is refused
  (:data:`TOLERANCE_TOO_LOOSE`): a predictor could pass it unconverged (the paper's 1e-4
  against a load a million times smaller than its own, E and p scaled by 1e-6: "converged" in
  0 iterations, 8.4% off).
* ``fast``: adaptive increments (a first try at the full load, doubling after a success,
  halving after a failure), each converged to ``||r||_2 <= rtol ||lambda f_ext||_2``, with a
  backtracking line search on the total potential energy.

Start. The flat unstressed membrane has no out-of-plane stiffness, so Newton cannot start from
w = 0. The first increment starts from a one-term Rayleigh-Ritz bulge ``w = W phi`` with
``phi = 16 (x/l)(1 - x/l)(y/b)(1 - y/b)`` and u = v = 0; with no in-plane motion the strain
energy is exactly ``c W^4``, so the energy-minimising amplitude is
``W = (lambda f_ext . phi / f_int(phi) . phi)^(1/3)``. Or, given a ``start`` state for the full
load (a solved membrane of nearly the same shape, scaled: :mod:`fem.start`), from that state
scaled to the increment's load factor as the predictor below scales; if that path fails, the
solve starts again from the Ritz bulge. A start only seeds Newton: no prestress enters the
equations, and the converged state does not depend on it (tested).

Predictor. Between increments the converged state is scaled as an ideal membrane scales with
the load: ``w ~ lambda^(1/3)`` and ``u, v ~ lambda^(2/3)``.
"""
import numpy as np
from numba import njit

from .assembly import assemble
from .banded import cholesky_banded, solve_cholesky_banded
from .validation import check_int, check_positive

__all__ = ["OK", "MAX_ITERATIONS", "INCREMENT_TOO_SMALL", "NOT_FINITE", "NOT_POSITIVE_DEFINITE",
           "PATH_FULL", "TOLERANCE_TOO_LOOSE", "PAPER_TOL_SHARE", "STATUS_TEXT", "newton",
           "solve_path", "MODES", "solver_settings"]

#: Status codes returned by :func:`solve_path` (:data:`STATUS_TEXT` says each): converged.
OK = 0
MAX_ITERATIONS = 1  #: Status code of Newton's iteration limit reached unconverged.
INCREMENT_TOO_SMALL = 2  #: Status code of a load increment cut below its minimum.
NOT_FINITE = 3  #: Status code of a non-finite residual.
NOT_POSITIVE_DEFINITE = 4  #: Status code of a tangent stiffness not positive definite.
PATH_FULL = 5  #: Status code of a load path past its buffer (``max_path``).
TOLERANCE_TOO_LOOSE = 6  #: Status code of ``paper`` mode's tolerance too loose for the load.

#: ``paper`` mode's largest absolute tolerance, as a share of the full load's norm. The paper's
#: own inputs: 7.6e-6 on its 20 x 10 mesh, 1.1e-4 at 320 x 160 (the norm halves with each
#: refinement). Measured at 20 x 10, 40 x 20 and 80 x 40: at most 5.5e-9 off up to 2e-4,
#: 1.4e-5 off at 3e-4 (40 x 20) and 1.3e-5 at 7.6e-4.
PAPER_TOL_SHARE = 2e-4

#: Each status code's meaning, as a failed run's reason gives it.
STATUS_TEXT = {
    OK: "converged",
    MAX_ITERATIONS: "Newton iteration limit reached without convergence",
    INCREMENT_TOO_SMALL: "load increment cut back below the minimum without convergence",
    NOT_FINITE: "non-finite residual",
    NOT_POSITIVE_DEFINITE: "tangent stiffness not positive definite",
    PATH_FULL: "load path longer than its buffer (max_path increments)",
    TOLERANCE_TOO_LOOSE: (f"paper mode's absolute tolerance tol is above {PAPER_TOL_SHARE:g} "
                          "of the load's norm, so an unconverged increment could pass it: "
                          "use mode='fast' (a relative tolerance) or a smaller tol"),
}


@njit(cache=True)
def _copy(dst, src):
    """``dst[:] = src`` for 1-d arrays, element by element: numba compiles a slice assignment
    from an array with its shape-mismatch error message (string formatting), about 4 s of a
    cold numba cache."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True)
def _norm_free(r):
    s = 0.0
    for i in range(r.shape[0]):
        s += r[i] * r[i]
    return np.sqrt(s)


@njit(cache=True)
def _residual(lam, fext, f, r):
    for i in range(r.shape[0]):
        r[i] = lam * fext[i] - f[i]
    return _norm_free(r)


@njit(cache=True)
def _load_work(lam, fext, U, free_dofs):
    s = 0.0
    for i in range(free_dofs.shape[0]):
        s += fext[i] * U[free_dofs[i]]
    return lam * s


@njit(cache=True)
def newton(lam, U, conn, elem_eq, free_dofs, dndx, dndy, weight, ktab, c11, c12, c33, fext,
           tol, line_search, max_iter, ab, ab_t, f, f_t, r, U_t):
    """Newton iterations at load factor ``lam`` from ``U`` (updated in place).

    Converged when ``||lam f_ext - f_int||_2 <= tol``. Returns (status, iterations).
    """
    energy = assemble(U, conn, elem_eq, dndx, dndy, weight, ktab, c11, c12, c33, f, ab, True)
    rn = _residual(lam, fext, f, r)
    it = 0
    while True:
        if not np.isfinite(rn):
            return NOT_FINITE, it
        if rn <= tol:
            return OK, it
        if it >= max_iter:
            return MAX_ITERATIONS, it
        if not cholesky_banded(ab):
            return NOT_POSITIVE_DEFINITE, it
        du = solve_cholesky_banded(ab, r.copy())
        it += 1
        pot0 = energy - _load_work(lam, fext, U, free_dofs)
        slope = 0.0
        for i in range(du.shape[0]):
            slope -= r[i] * du[i]
        s = 1.0
        accepted = False
        energy_t = energy
        rn_t = rn
        for _ in range(12 if line_search else 1):
            _copy(U_t, U)
            for i in range(du.shape[0]):
                U_t[free_dofs[i]] += s * du[i]
            energy_t = assemble(U_t, conn, elem_eq, dndx, dndy, weight, ktab, c11, c12, c33,
                                f_t, ab_t, True)
            rn_t = _residual(lam, fext, f_t, r)
            if not line_search:
                accepted = True
                break
            pot_t = energy_t - _load_work(lam, fext, U_t, free_dofs)
            if np.isfinite(rn_t) and (rn_t < rn or pot_t <= pot0 + 1e-4 * s * slope):
                accepted = True
                break
            s *= 0.5
        if not accepted:
            return NOT_FINITE if not np.isfinite(rn_t) else MAX_ITERATIONS, it
        _copy(U, U_t)
        energy = energy_t
        rn = rn_t
        ab, ab_t = ab_t, ab
        f, f_t = f_t, f


@njit(cache=True)
def _predict(U, U_c, lam, lam_c, W1, phi, start_scale, start):
    """Start of an increment: from the flat state the given ``start`` (if any, for load
    factor 1) or else the Ritz bulge, scaled to ``lam``; else the scaled last state."""
    if lam_c == 0.0 and start.shape[0] > 0:
        sw = start_scale * lam ** (1.0 / 3.0)
        suv = sw * sw
        for k in range(U.shape[0] // 3):
            U[3 * k] = suv * start[3 * k]
            U[3 * k + 1] = suv * start[3 * k + 1]
            U[3 * k + 2] = sw * start[3 * k + 2]
    elif lam_c == 0.0:
        amp = start_scale * W1 * lam ** (1.0 / 3.0)
        for k in range(U.shape[0] // 3):
            U[3 * k] = 0.0
            U[3 * k + 1] = 0.0
            U[3 * k + 2] = amp * phi[k]
    else:
        sw = (lam / lam_c) ** (1.0 / 3.0)
        suv = sw * sw
        for k in range(U.shape[0] // 3):
            U[3 * k] = suv * U_c[3 * k]
            U[3 * k + 1] = suv * U_c[3 * k + 1]
            U[3 * k + 2] = sw * U_c[3 * k + 2]


@njit(cache=True)
def _probe_w(U, probe_nodes, probe_shape, out):
    for p in range(probe_nodes.shape[0]):
        s = 0.0
        for a in range(4):
            s += probe_shape[p, a] * U[3 * probe_nodes[p, a] + 2]
        out[p] = s


@njit(cache=True)
def _record(U, U_c, lam, probe_nodes, probe_shape, wtmp, path_lam, path_w, n_path):
    """Keep a converged increment: its state, load factor and probe deflections."""
    _copy(U_c, U)
    _probe_w(U, probe_nodes, probe_shape, wtmp)
    path_lam[n_path] = lam
    _copy(path_w[n_path], wtmp)
    return n_path + 1


@njit(cache=True)
def _ritz_amplitude(conn, elem_eq, free_dofs, dndx, dndy, weight, ktab, c11, c12, c33, fext, phi,
                    f, ab, U_t):
    """The Ritz bulge's amplitude at load factor 1, ``W^3 = f_ext.phi / (f_int(phi).phi)``
    (module docstring); ``f``, ``ab`` and ``U_t`` are scratch. The tangent is assembled too
    (into ``ab``, unused), so that every call of :func:`fem.assembly.assemble` passes the
    same literal ``want_k`` and numba compiles it once (see :func:`solve_path`)."""
    U_t[:] = 0.0
    for k in range(phi.shape[0]):
        U_t[3 * k + 2] = phi[k]
    assemble(U_t, conn, elem_eq, dndx, dndy, weight, ktab, c11, c12, c33, f, ab, True)
    num = 0.0
    den = 0.0
    for i in range(free_dofs.shape[0]):
        d = free_dofs[i]
        if d % 3 == 2:
            num += fext[i] * phi[d // 3]
            den += f[i] * phi[d // 3]
    ratio = num / den
    return -((-ratio) ** (1.0 / 3.0)) if ratio < 0 else ratio ** (1.0 / 3.0)


@njit(cache=True)
def _fast_path(U, U_c, W1, phi, start, conn, elem_eq, free_dofs, dndx, dndy, weight, ktab, c11,
               c12, c33, fext, probe_nodes, probe_shape, n_increments, rtol, max_iter,
               start_scale, max_cuts, max_path, ab, ab_t, f, f_t, r, U_t, wtmp, path_lam,
               path_w, line_search):
    """Adaptive increments from the flat state (``fast`` mode); returns (status, recorded
    path length, Newton iterations). ``line_search`` is True (see :func:`solve_path`)."""
    fext_norm = _norm_free(fext)
    dlam_max = 1.0 / n_increments
    dlam = dlam_max
    lam_c = 0.0
    n_path = 1
    total_it = 0
    cuts = 0
    status = OK
    while lam_c < 1.0:
        lam = lam_c + dlam
        if lam > 1.0 - 1e-12:
            lam = 1.0
        _predict(U, U_c, lam, lam_c, W1, phi, start_scale, start)
        status, it = newton(lam, U, conn, elem_eq, free_dofs, dndx, dndy, weight, ktab, c11,
                            c12, c33, fext, rtol * lam * fext_norm, line_search, max_iter, ab,
                            ab_t, f, f_t, r, U_t)
        total_it += it
        if status == OK:
            lam_c = lam
            n_path = _record(U, U_c, lam, probe_nodes, probe_shape, wtmp, path_lam, path_w,
                             n_path)
            dlam = min(2.0 * dlam, dlam_max)
            if n_path >= max_path and lam_c < 1.0:
                status = PATH_FULL
                break
        else:
            cuts += 1
            dlam *= 0.5
            if cuts > max_cuts:
                # a tangent not positive definite, or a residual not finite, at the last try
                # says why; "cut back below the minimum" hid it (nu = -0.3: 0 iterations)
                if status != NOT_POSITIVE_DEFINITE and status != NOT_FINITE:
                    status = INCREMENT_TOO_SMALL
                break
            status = OK
    return status, n_path, total_it


@njit(cache=True, nogil=True)
def solve_path(conn, elem_eq, free_dofs, bandwidth, dndx, dndy, weight, ktab, c11, c12, c33, fext,
               phi, start, probe_nodes, probe_shape, paper, n_increments, abs_tol, rtol,
               max_iter, start_scale, max_cuts, max_path):
    """Load-step from the flat state to the full load (load factor 1).

    ``start`` is a state (3 nnode,) for the full load to start ``fast`` mode from (module
    docstring), or empty or NaN: the Ritz bulge (``paper`` mode always starts from the
    bulge).

    Returns ``(status, U, path_lambda, path_w, increments, iterations)`` where ``path_*`` hold
    the converged increments (row 0 is the unloaded state) and ``increments`` counts them;
    ``iterations`` counts every Newton iteration, those of a failed path from ``start`` too.
    ``max_path`` bounds the recorded path (the unloaded state included); a path that would
    grow longer stops with :data:`PATH_FULL` (see :func:`solver_settings` for a
    capacity that is always enough).

    Numba compiles a function once for every literal value a call passes it (``True`` and
    ``False`` are two types), so the Newton line search's switch is the runtime ``not paper``
    and the Ritz amplitude assembles with the tangent: one compiled :func:`newton`,
    :func:`fem.assembly.assemble` and element kernel, about 2 s less of a cold numba cache.
    """
    ndof = 3 * phi.shape[0]
    neq = free_dofs.shape[0]
    ab = np.zeros((neq, bandwidth + 1))
    ab_t = np.zeros((neq, bandwidth + 1))
    f = np.zeros(neq)
    f_t = np.zeros(neq)
    r = np.zeros(neq)
    U = np.zeros(ndof)
    U_c = np.zeros(ndof)
    U_t = np.zeros(ndof)
    nprobe = probe_nodes.shape[0]
    path_lam = np.zeros(max_path)
    path_w = np.zeros((max_path, nprobe))
    wtmp = np.zeros(nprobe)

    if start.shape[0] > 0 and not np.isfinite(start[0]):  # NaN: no start given
        start = start[:0]
    # the Ritz amplitude, needed only without a start (or when the path from it fails)
    W1 = 0.0 if start.shape[0] > 0 and not paper else _ritz_amplitude(
        conn, elem_eq, free_dofs, dndx, dndy, weight, ktab, c11, c12, c33, fext, phi, f, ab,
        U_t)
    lam_c = 0.0
    n_path = 1
    total_it = 0
    status = OK
    fext_norm = _norm_free(fext)
    if paper and fext_norm > 0.0 and abs_tol > PAPER_TOL_SHARE * fext_norm:
        status = TOLERANCE_TOO_LOOSE
    elif paper:
        for k in range(1, n_increments + 1):
            lam = k / n_increments
            if n_path >= max_path:
                status = PATH_FULL
                break
            _predict(U, U_c, lam, lam_c, W1, phi, start_scale, start[:0])
            status, it = newton(lam, U, conn, elem_eq, free_dofs, dndx, dndy, weight, ktab, c11,
                                c12, c33, fext, abs_tol, not paper, max_iter, ab, ab_t, f, f_t,
                                r, U_t)
            total_it += it
            if status != OK:
                break
            lam_c = lam
            n_path = _record(U, U_c, lam, probe_nodes, probe_shape, wtmp, path_lam, path_w,
                             n_path)
    else:
        status, n_path, total_it = _fast_path(
            U, U_c, W1, phi, start, conn, elem_eq, free_dofs, dndx, dndy, weight, ktab, c11, c12,
            c33, fext, probe_nodes, probe_shape, n_increments, rtol, max_iter, start_scale,
            max_cuts, max_path, ab, ab_t, f, f_t, r, U_t, wtmp, path_lam, path_w, not paper)
        if status != OK and start.shape[0] > 0:  # again from the Ritz bulge
            U_c[:] = 0.0
            W1 = _ritz_amplitude(conn, elem_eq, free_dofs, dndx, dndy, weight, ktab, c11, c12,
                                 c33, fext, phi, f, ab, U_t)
            status, n_path, it = _fast_path(
                U, U_c, W1, phi, start[:0], conn, elem_eq, free_dofs, dndx, dndy, weight, ktab,
                c11, c12, c33, fext, probe_nodes, probe_shape, n_increments, rtol, max_iter,
                start_scale, max_cuts, max_path, ab, ab_t, f, f_t, r, U_t, wtmp, path_lam,
                path_w, not paper)
            total_it += it
        if status == OK:
            _copy(U, U_c)
    if status != OK:
        _copy(U, U_c)
    return status, U, path_lam[:n_path].copy(), path_w[:n_path].copy(), n_path - 1, total_it


#: Solve modes: adaptive increments from a start, or the paper's fixed increments.
MODES = ("fast", "paper")


def solver_settings(mode="fast", increments=None, rtol=1e-10, tol=1e-4, max_iter=None,
                    start_scale=1.0):
    """Validated keyword arguments of :func:`fem.newton.solve_path` for a solve mode (see
    :meth:`fem.Membrane.solve`)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got mode={mode!r}")
    paper = mode == "paper"
    if increments is None:
        increments = 400 if paper else 1
    check_int(increments, "increments")
    if max_iter is None:
        max_iter = 100 if paper else 30
    check_int(max_iter, "max_iter")
    check_positive(rtol, "rtol")
    check_positive(tol, "tol")
    check_positive(start_scale, "start_scale")
    max_cuts = 40
    # room for the unloaded state, every step and, in fast mode, the extra steps that follow
    # cut-backs (the halved steps double back after a success; 4 per cut is generous)
    max_path = increments + 1 if paper else increments + 4 * max_cuts + 2
    return dict(paper=paper, n_increments=int(increments), abs_tol=float(tol), rtol=float(rtol),
                max_iter=int(max_iter), start_scale=float(start_scale), max_cuts=max_cuts,
                max_path=int(max_path))
