"""The tangent stiffness is the exact derivative of the internal force, which is the gradient
of the strain energy (checked by central finite differences)."""
import numpy as np
import pytest

from fem import Membrane
from fem.assembly import assemble
from fem.element import element_force_stiffness, gauss_derivatives, stiffness_tables


def _dense(ab):
    n, m = ab.shape
    K = np.zeros((n, n))
    for k in range(m):
        idx = np.arange(n - k)
        K[idx, idx + k] = ab[: n - k, k]
        K[idx + k, idx] = ab[: n - k, k]
    return K


@pytest.fixture(scope="module")
def system():
    m = Membrane(l=2.0, b=1.0, t=0.0015, E=210.0, nu=0.3, nx=8, ny=4)
    s = m.system()
    rng = np.random.default_rng(7)
    U = np.zeros(3 * len(s["phi"]))
    U[2::3] = -1.5 * s["phi"]
    U[s["free_dofs"]] += 0.02 * rng.standard_normal(len(s["free_dofs"]))
    return s, U


def _eval(s, U, want_k):
    neq = len(s["free_dofs"])
    f = np.zeros(neq)
    ab = np.zeros((neq, s["bandwidth"] + 1))
    e = assemble(U, s["conn"], s["elem_eq"], s["dndx"], s["dndy"], s["weight"], s["ktab"],
                 s["c11"], s["c12"], s["c33"], f, ab, want_k)
    return e, f, ab


def test_tangent_equals_finite_difference_jacobian(system):
    s, U = system
    _, _, ab = _eval(s, U, True)
    K = _dense(ab)
    h = 1e-5
    K_fd = np.empty_like(K)
    for i, d in enumerate(s["free_dofs"]):
        Up, Um = U.copy(), U.copy()
        Up[d] += h
        Um[d] -= h
        K_fd[:, i] = (_eval(s, Up, False)[1] - _eval(s, Um, False)[1]) / (2 * h)
    rel = np.linalg.norm(K - K_fd) / np.linalg.norm(K)
    assert rel < 1e-6
    assert np.allclose(K, K.T)


def test_internal_force_is_energy_gradient(system):
    s, U = system
    _, f, _ = _eval(s, U, False)
    h = 1e-6
    g = np.empty_like(f)
    for i, d in enumerate(s["free_dofs"]):
        Up, Um = U.copy(), U.copy()
        Up[d] += h
        Um[d] -= h
        g[i] = (_eval(s, Up, False)[0] - _eval(s, Um, False)[0]) / (2 * h)
    assert np.linalg.norm(f - g) / np.linalg.norm(f) < 1e-6


def test_element_rigid_translation_is_stress_free():
    dndx, dndy, wgt = gauss_derivatives(0.3, 0.2)
    c11, c12, c33 = 1.0, 0.3, 0.35
    tab = stiffness_tables(dndx, dndy, wgt, c11, c12, c33)
    ue = np.tile([0.1, -0.2, 0.7], 4)
    fe, ke = np.empty(12), np.empty((12, 12))
    energy = element_force_stiffness(ue, dndx, dndy, wgt, tab, c11, c12, c33, fe, ke, True)
    # shape-function derivatives sum to zero up to round-off
    assert abs(energy) < 1e-30
    assert np.abs(fe).max() < 1e-15


def test_element_uniform_stretch_energy_matches_closed_form():
    # u = a x: eps_x = a + a^2 / 2, energy = c11 eps_x^2 / 2 * area
    hx, hy, a = 0.3, 0.2, 0.05
    dndx, dndy, wgt = gauss_derivatives(hx, hy)
    c11, c12, c33 = 2.0, 0.6, 0.7
    tab = stiffness_tables(dndx, dndy, wgt, c11, c12, c33)
    x = np.array([0.0, hx, hx, 0.0])
    ue = np.zeros(12)
    ue[0::3] = a * x
    fe, ke = np.empty(12), np.empty((12, 12))
    energy = element_force_stiffness(ue, dndx, dndy, wgt, tab, c11, c12, c33, fe, ke, False)
    eps = a + a * a / 2
    assert energy == pytest.approx(0.5 * c11 * eps ** 2 * hx * hy, rel=1e-12)


def test_a_small_strain_keeps_its_digits():
    """u = a x with a = 1e-10: eps_x = a + a^2 / 2 and eps_y = gamma = 0, so the nodal forces
    are ``(1 + a) c11 eps_x sum_g w dN/dx`` (x) and ``c12 eps_x sum_g w dN/dy`` (y), to
    rounding. Computed as (g . g - 1) / 2 the strain lost six of its digits, and SI inputs (a
    1 mm steel sheet under 100 Pa) never converged."""
    hx, hy, a = 0.3, 0.2, 1e-10
    dndx, dndy, wgt = gauss_derivatives(hx, hy)
    c11, c12, c33 = 2.0, 0.6, 0.7
    tab = stiffness_tables(dndx, dndy, wgt, c11, c12, c33)
    ue = np.zeros(12)
    ue[0::3] = a * np.array([0.0, hx, hx, 0.0])
    fe, ke = np.empty(12), np.empty((12, 12))
    element_force_stiffness(ue, dndx, dndy, wgt, tab, c11, c12, c33, fe, ke, False)
    eps = a + a * a / 2
    assert np.allclose(fe[0::3], (1 + a) * c11 * eps * (wgt @ dndx), rtol=1e-12, atol=0.0)
    assert np.allclose(fe[1::3], c12 * eps * (wgt @ dndy), rtol=1e-12, atol=0.0)
    assert not fe[2::3].any()
