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
