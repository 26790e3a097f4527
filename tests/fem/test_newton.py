"""The Newton load stepping's branches and the banded Cholesky, against independent truth."""
import numpy as np
import pytest
import scipy.linalg

from fem import Membrane
from fem import newton as N
from fem.assembly import assemble
from fem.banded import cholesky_banded, solve_cholesky_banded
from fem.newton import solver_settings

PAPER_MEAN = dict(l=2.0, b=1.0, t=0.0015, E=210.0, nu=0.3)


def residual_norm(result):
    """||f_ext - f_int(U)||_2 over the free unknowns, recomputed from the solution."""
    m = result.membrane
    sysm = m.system()
    neq = len(sysm["free_dofs"])
    f = np.zeros(neq)
    ab = np.zeros((neq, sysm["bandwidth"] + 1))
    assemble(result.displacement.ravel().copy(), sysm["conn"], sysm["elem_eq"], sysm["dndx"],
             sysm["dndy"], sysm["weight"], sysm["ktab"], sysm["c11"], sysm["c12"], sysm["c33"],
             f, ab, False)
    return np.linalg.norm(sysm["fext"] - f), np.linalg.norm(sysm["fext"])


def test_converged_residual_is_tight():
    res = Membrane(**PAPER_MEAN).solve(rtol=1e-10)
    r, fext = residual_norm(res)
    assert res.converged and r <= 1e-10 * fext
    # and it is a real check: a slightly perturbed state is far out of balance
    res.displacement[:, 2] *= 1.001
    assert residual_norm(res)[0] > 1e-4 * fext


def test_cut_back_after_a_failed_full_step():
    ref = Membrane(**PAPER_MEAN).solve()
    # from the Ritz bulge, too few iterations for the full load
    res = Membrane(**PAPER_MEAN).solve(max_iter=6, start="ritz")
    assert ref.increments == 1 and res.converged
    # the full step failed; after cuts to 1/16 the steps double back: 1/16, 1/8, 1/4, 1/2
    np.testing.assert_allclose(res.path_load, [0, 0.0625, 0.1875, 0.4375, 0.9375, 1.0])
    assert res.probe_w["p1"] == pytest.approx(ref.probe_w["p1"], rel=1e-9)


@pytest.mark.parametrize("start", ["reference", "ritz"])
def test_too_many_cuts_fail_with_their_reason(start):
    res = Membrane(**PAPER_MEAN).solve(max_iter=2, start=start)
    assert not res.converged and res.status == N.INCREMENT_TOO_SMALL
    assert res.reason == "load increment cut back below the minimum without convergence"


@pytest.mark.parametrize("mode", ["fast", "paper"])
def test_a_full_path_buffer_stops_with_its_own_status(mode):
    m = Membrane(**PAPER_MEAN)
    settings = dict(solver_settings(mode, increments=8), max_path=3)
    status, U, plam, pw, nincr, nit = N.solve_path(**m.system(), **settings)
    assert status == N.PATH_FULL and nincr == 2
    np.testing.assert_allclose(plam, [0, 1 / 8, 2 / 8])
    assert N.STATUS_TEXT[status].startswith("load path longer than its buffer")


def test_a_flat_membrane_has_no_positive_definite_tangent():
    """At w = 0 the membrane has no out-of-plane stiffness: Newton must say so, not divide by
    zero."""
    s = Membrane(**PAPER_MEAN).system()
    neq = len(s["free_dofs"])
    ab, ab_t = np.zeros((2, neq, s["bandwidth"] + 1))
    f, f_t, r = np.zeros((3, neq))
    U, U_t = np.zeros((2, 3 * len(s["phi"])))
    status, it = N.newton(1.0, U, s["conn"], s["elem_eq"], s["free_dofs"], s["dndx"], s["dndy"],
                          s["weight"], s["ktab"], s["c11"], s["c12"], s["c33"], s["fext"], 1e-8,
                          True, 30, ab, ab_t, f, f_t, r, U_t)
    assert (status, it) == (N.NOT_POSITIVE_DEFINITE, 0)


def _random_banded(n, bw, rng):
    A = np.zeros((n, n))
    for k in range(bw + 1):
        d = rng.normal(size=n - k)
        A += np.diag(d, k) + (np.diag(d, -k) if k else 0)
    return A + np.eye(n) * (2 * bw + 4)  # diagonally dominant: positive definite


@pytest.mark.parametrize("n, bw", [(1, 0), (7, 1), (40, 6), (60, 59)])
def test_cholesky_banded_matches_scipy(n, bw):
    rng = np.random.default_rng(n + bw)
    A = _random_banded(n, bw, rng)
    ab = np.array([[A[i, i + k] if i + k < n else 0.0 for k in range(bw + 1)]
                   for i in range(n)])
    # scipy's upper form: a_band[bw + i - j, j] = A[i, j] for i <= j
    upper = np.zeros((bw + 1, n))
    for i in range(n):
        for j in range(i, min(n, i + bw + 1)):
            upper[bw + i - j, j] = A[i, j]
    ref = scipy.linalg.cholesky_banded(upper, lower=False)
    assert cholesky_banded(ab)
    for i in range(n):
        for k in range(bw + 1):
            if i + k < n:
                assert ab[i, k] == pytest.approx(ref[bw - k, i + k], rel=1e-12, abs=1e-12)
    b = rng.normal(size=n)
    np.testing.assert_allclose(solve_cholesky_banded(ab, b.copy()), np.linalg.solve(A, b),
                               rtol=1e-10, atol=1e-12)


def test_cholesky_banded_refuses_indefinite_matrices():
    A = _random_banded(10, 2, np.random.default_rng(0))
    A[4, 4] = -1.0
    ab = np.array([[A[i, i + k] if i + k < 10 else 0.0 for k in range(3)] for i in range(10)])
    assert not cholesky_banded(ab)
    with pytest.raises(np.linalg.LinAlgError):
        scipy.linalg.cholesky(A)


def test_a_cold_compile_builds_each_kernel_once_and_no_error_messages(tmp_path):
    """A slice assignment from an array in a kernel makes numba compile its shape-mismatch
    message (f-strings, str and repr of tuples): about 4 of a cold cache's 13 s per worker;
    the kernels copy element by element (``fem.newton._copy``). A literal True or False passed
    to a kernel compiles it once per value: the line search's switch is a runtime value and
    every assembly passes the same ``want_k``, so newton, assemble and the element kernel
    compile once each (2 s less)."""
    import os
    import subprocess
    import sys

    code = ("import collections\n"
            "from numba.core import event\n"
            "names = collections.Counter()\n"
            "class L(event.Listener):\n"
            "    def on_start(self, ev): names[ev.data['dispatcher'].py_func.__qualname__] += 1\n"
            "    def on_end(self, ev): pass\n"
            "event.register('numba:compile', L())\n"
            "from fem import Membrane, solve_batch\n"
            "r = solve_batch([[2.0, 1.0, 0.0015, 210.0, 0.3]], workers=1)\n"
            "assert r.converged.all()\n"
            "assert Membrane(nx=4, ny=2)"
            ".solve(mode='paper', increments=5).converged\n"
            "print([names[k] for k in ('solve_path', 'newton', 'assemble', "
            "'element_force_stiffness')], sorted({n.split('.')[0] for n in names "
            "if 'raise' in n or 'str' in n or 'repr' in n}))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout.strip()
    assert out == "[1, 1, 1, 1] []", out
