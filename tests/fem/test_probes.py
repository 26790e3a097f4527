"""Probes in relative coordinates: fractions of the sides that follow the mesh."""
import numpy as np
import pytest

from fem import Membrane, solve_batch
from fem.presets import PAPER_PROBES, PAPER_PROBES_RELATIVE
from uqkit import sample
from uqkit.presets import table3

NOMINAL = dict(l=2.0, b=1.0, t=0.0015, E=210.0, nu=0.3)


def test_at_the_nominal_geometry_relative_probes_equal_the_physical_ones():
    phys = Membrane(**NOMINAL).solve()
    rel = Membrane(**NOMINAL, probe_frame="relative").solve()
    assert rel.probes == PAPER_PROBES
    for name in PAPER_PROBES:
        assert rel.probe_w[name] == pytest.approx(phys.probe_w[name], rel=1e-12)


def test_for_every_input_a_relative_probe_is_the_value_at_its_node():
    X = sample(table3(), 6, seed=3).values
    for row in X:
        m = Membrane(*row, probe_frame="relative")
        res = m.solve()
        grid = res.grid()  # w at nodes (i, j)
        for name, (xr, yr) in PAPER_PROBES_RELATIVE.items():
            i, j = round(xr * m.nx), round(yr * m.ny)
            assert res.probe_w[name] == grid[i, j]
            assert res.probes[name] == pytest.approx((xr * m.l, yr * m.b))


def test_physical_probes_sweep_past_nodes_and_relative_ones_do_not():
    """A physical probe sits on a node only at the nominal size; with b < 0.8 the paper's p3
    is not even on the membrane, while its relative twin always is."""
    narrow = dict(NOMINAL, b=0.78)
    batch = solve_batch([list(narrow.values())])
    assert not batch.converged[0] and "p3=(1.6, 0.8) lies outside" in batch.reasons[0]
    rel = solve_batch([list(narrow.values())], probe_frame="relative")
    assert rel.converged[0] and np.isfinite(rel.w).all()


def test_bad_relative_probes_are_refused():
    with pytest.raises(ValueError, match=r"relative probe q=\(1.5, 0.5\) must lie in \[0, 1\]"):
        Membrane(**NOMINAL, probes={"q": (1.5, 0.5)}, probe_frame="relative")
    with pytest.raises(ValueError, match="probe_frame must be one of"):
        Membrane(**NOMINAL, probe_frame="nodal")


def test_richardson_recovers_a_known_limit_and_order():
    from fem.convergence import richardson

    h = np.array([0.5, 0.25, 0.125])
    p, f = richardson(*(3.0 + 0.7 * h ** 1.5))
    assert p == pytest.approx(1.5, rel=1e-12) and f == pytest.approx(3.0, rel=1e-12)


def test_mesh_convergence_flags_what_it_can_extrapolate():
    from fem import convergence
    from fem.convergence import richardson

    c = convergence(Membrane(**NOMINAL, probe_frame="relative"), levels=4)
    assert c.meshes == [(20, 10), (40, 20), (80, 40), (160, 80)]
    for name, v in c.values.items():
        assert c.orders[name] == pytest.approx([richardson(*v[:3])[0], richardson(*v[1:])[0]])
        assert c.relative_error(name) == pytest.approx(
            abs(v[0] - c.extrapolated[name]) / abs(c.extrapolated[name]))
    # p1 sits where w changes fastest: its orders (1.64, 2.12) have not settled
    assert c.asymptotic == {"p1": False, "p2": True, "p3": True}
    # the settled probes converge at the bilinear element's order 2 in h (the interpolation
    # error of Q4 displacements; 1.84-1.97 measured)
    for name in ("p2", "p3"):
        assert c.order[name] == pytest.approx(2.0, abs=0.2), (name, c.orders[name])
    # an independent check of the flag: extrapolated from the three coarsest meshes, the
    # settled probes predict the finest solve better than the mesh before it does; p1 does not
    for name in ("p2", "p3", "p1"):
        w80, w160 = c.values[name][2], c.values[name][3]
        predicted = richardson(*c.values[name][:3])[1]
        better = abs(predicted - w160) < 0.6 * abs(w80 - w160)
        assert better == (name != "p1"), name
    with pytest.raises(ValueError, match="levels must be an integer >= 3"):
        convergence(Membrane(**NOMINAL), levels=2)
    assert "orders of the last two mesh triples differ" in c.summary()  # p1's


def test_three_meshes_do_not_claim_two_orders_differ():
    """Three meshes give one order: the summary must say that one order cannot show whether
    it has settled, not that two orders disagree (it used to)."""
    from fem import convergence

    c = convergence(Membrane(**NOMINAL, probe_frame="relative", nx=4, ny=2), levels=3)
    assert all(len(orders) == 1 for orders in c.orders.values())
    text = c.summary()
    assert "3 meshes give one order" in text
    assert "last two mesh triples" not in text


def test_largest_strain_of_a_known_deformation():
    res = Membrane(**NOMINAL).solve()
    xy = res.coordinates
    res.displacement[:] = 0.0
    res.displacement[:, 0] = 0.1 * xy[:, 0]  # u = 0.1 x, w = 0.2 x: E_xx = (1.1^2 + 0.2^2 - 1) / 2
    res.displacement[:, 2] = 0.2 * xy[:, 0]
    assert res.max_strain() == pytest.approx(0.125, rel=1e-12)


@pytest.mark.parametrize("values", [(-0.30, -0.40, -0.50), (-0.30, -0.40, -0.52),
                                    (-0.3617, -0.3652, -0.3690), (1.0, 0.5, 0.14)])
def test_differences_that_do_not_shrink_extrapolate_nothing(values):
    """Orders <= 0 (and below MIN_ORDER) extrapolated anyway: 9.6e-16 for a sequence heading
    below -0.5, and -0.3284 for one heading to -0.370 (the order -0.143 put the limit on the
    wrong side of the data)."""
    from fem.convergence import MIN_ORDER, richardson

    d1, d2 = values[0] - values[1], values[1] - values[2]
    assert np.log2(abs(d1 / d2)) < MIN_ORDER
    p, f = richardson(*values)
    assert np.isnan(p) and f == values[-1]


def test_a_zero_limit_has_no_relative_error_to_divide_by():
    """A probe on a clamped edge (or no load): 0 / 0 raised a ZeroDivisionError."""
    from fem.convergence import ConvergenceResult

    c = ConvergenceResult([(2, 2), (4, 4), (8, 8)], {"e": [0.0] * 3, "q": [1.0, 0.5, 0.25]},
                          {"e": np.nan, "q": 1.0}, {}, {"e": 0.0, "q": 0.0},
                          {"e": [0.0] * 3, "q": [1.0, 0.5, 0.25]}, {}, [0.0] * 3)
    assert np.isnan(c.relative_error("e")) and c.relative_error("q") == np.inf
    assert "nan" in c.summary()
