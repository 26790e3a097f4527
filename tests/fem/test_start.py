"""Scaled reference starts: the same converged state as from the Ritz bulge, in fewer Newton
iterations, row by row the same in a batch, and a start that fails falls back to the bulge."""
import numpy as np
import pytest

from fem import Membrane, solve_batch
from fem import newton as N
from fem.newton import solver_settings
from fem.start import STARTS, check_start, reference_starts

PAPER_MEAN = dict(l=2.0, b=1.0, t=0.0015, E=210.0, nu=0.3)


def _rows(n, seed):
    """Inputs around the paper's Table 3 and well beyond it (aspect 1-3, q over 30x, nu
    0.1-0.45)."""
    rng = np.random.default_rng(seed)
    b = rng.uniform(0.6, 1.4, n)
    return np.column_stack([b * rng.uniform(1.0, 3.0, n), b, rng.uniform(5e-4, 3e-3, n),
                            rng.uniform(50.0, 400.0, n), rng.uniform(0.1, 0.45, n)])


@pytest.mark.parametrize("frame", ["relative", "physical"])
def test_reference_start_reaches_the_ritz_state_in_fewer_iterations(frame):
    X = _rows(200, 1)
    if frame == "physical":  # the paper's probes must lie on every membrane
        X[:, 0] = np.maximum(X[:, 0], 1.7)
        X[:, 1] = np.maximum(X[:, 1], 0.85)
    ritz = solve_batch(X, probe_frame=frame, workers=1, start="ritz")
    ref = solve_batch(X, probe_frame=frame, workers=1)
    assert ritz.converged.all() and ref.converged.all()
    np.testing.assert_allclose(ref.w, ritz.w, rtol=1e-9, atol=0)
    # measured: 7 from the bulge, 3 (a few rows 4) from the references
    assert ritz.newton_iterations.mean() >= 6.5
    assert ref.newton_iterations.mean() <= 3.5
    assert ref.newton_iterations.max() <= 5


def test_reference_start_with_free_edges_and_a_coarser_mesh():
    kw = dict(nx=12, ny=8, edges={"top": "w"}, probes={"c": (0.5, 0.5)},
              probe_frame="relative")
    for row in _rows(20, 2):
        a = Membrane(*row, **kw).solve(start="ritz")
        b = Membrane(*row, **kw).solve()
        assert a.converged and b.converged
        np.testing.assert_allclose(b.displacement, a.displacement, rtol=0,
                                   atol=1e-9 * np.abs(a.displacement).max())
        assert b.newton_iterations < a.newton_iterations


def test_upward_pressure_starts_from_an_upward_reference():
    a = Membrane(**PAPER_MEAN, p=-100.0).solve(start="ritz")
    b = Membrane(**PAPER_MEAN, p=-100.0).solve()
    assert b.probe_w["p1"] > 0 and b.newton_iterations <= 4
    assert b.probe_w["p1"] == pytest.approx(a.probe_w["p1"], rel=1e-9)


def test_batch_rows_equal_single_solves_bit_for_bit():
    X = _rows(40, 3)
    batch = solve_batch(X, probe_frame="relative", workers=2)
    single = np.array([list(Membrane(*r, probe_frame="relative").solve().probe_w.values())
                       for r in X])
    assert np.array_equal(batch.w, single)


def test_a_start_that_fails_falls_back_to_the_bulge():
    m = Membrane(**PAPER_MEAN)
    system = m.system()
    bad = system["start"].copy()
    bad[len(bad) // 2] = np.nan  # a non-finite state: every step from it fails
    status, U, plam, pw, nincr, nit = N.solve_path(**dict(system, start=bad),
                                                   **solver_settings())
    ritz = m.solve(start="ritz")
    assert status == N.OK and nincr == 1
    np.testing.assert_array_equal(U.reshape(-1, 3), ritz.displacement)
    assert nit == ritz.newton_iterations  # the failed tries took no iteration


def test_no_reference_without_load_and_bad_start_names():
    starts = reference_starts([[2.0, 1.0, 0.0015, 210.0, 0.3]], 0.0, 20, 10, "clamped")
    assert starts.shape == (1, 3 * 21 * 11) and np.isnan(starts).all()
    assert STARTS == ("reference", "ritz")
    with pytest.raises(ValueError, match="start must be one of .* got start='bulge'"):
        check_start("bulge")
    with pytest.raises(ValueError, match="got start='bulge'"):
        Membrane(**PAPER_MEAN).solve(start="bulge")
    with pytest.raises(ValueError, match="got start=None"):
        solve_batch([list(PAPER_MEAN.values())], start=None)


def test_paper_mode_ignores_the_start():
    a = Membrane(**PAPER_MEAN).solve(mode="paper", increments=20, start="ritz")
    b = Membrane(**PAPER_MEAN).solve(mode="paper", increments=20)
    assert np.array_equal(a.displacement, b.displacement)
    assert a.newton_iterations == b.newton_iterations
