import numpy as np
import pytest

from fem import Membrane, solve_batch


def _rows(n, seed=3):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.normal(2, 0.05, n), rng.normal(1, 0.05, n),
                            rng.uniform(0.001, 0.002, n), rng.normal(210, 10, n),
                            np.exp(rng.normal(np.log(0.3), 0.01, n))])


def test_batch_equals_one_by_one_exactly():
    X = _rows(12)
    res = solve_batch(X, workers=2)
    single = np.array([list(Membrane(*row).solve().probe_w.values()) for row in X])
    assert res.converged.all()
    assert np.array_equal(res.w, single)
    assert np.array_equal(solve_batch(X, workers=1).w, res.w)
    assert res.probe_names == ("p1", "p2", "p3")


def test_batch_in_chunks_equals_one_by_one_exactly_around_bad_rows():
    """The batch builds every row's system at once and solves chunks of rows in numba: each
    row still gets exactly its one-by-one solve, whatever its neighbours (bad rows, other
    chunks, other threads) and in both probe frames."""
    X = _rows(150, seed=8)
    X[40, 0] = 0.0  # rejected: l must be > 0
    X[97, 3] = np.inf
    for frame in ("relative", "physical"):
        res = solve_batch(X, workers=2, probe_frame=frame)
        for i in (0, 39, 41, 63, 64, 65, 96, 98, 149):
            one = Membrane(*X[i], probe_frame=frame).solve()
            assert np.array_equal(res.w[i], list(one.probe_w.values()))
            assert res.newton_iterations[i] == one.newton_iterations
        assert res.converged.sum() == 148 and not res.converged[[40, 97]].any()
        assert res.reasons[40] == "invalid input: l must be > 0, got l=0.0"
        assert "E must be a finite number" in res.reasons[97]
        assert np.array_equal(solve_batch(X[60:70], workers=1, probe_frame=frame).w,
                              res.w[60:70])


def test_batch_builds_its_systems_in_blocks_of_bounded_memory(monkeypatch):
    """The stacked systems are built a block of rows at a time (memory does not grow with
    the batch); blocks of one or a few rows give the same solves."""
    import fem.batch

    X = _rows(9, seed=4)
    X[4, 1] = -1.0
    whole = solve_batch(X, workers=2)
    monkeypatch.setattr(fem.batch, "SYSTEM_BLOCK_BYTES", 1)  # one row per block
    assert np.array_equal(solve_batch(X, workers=2).w, whole.w, equal_nan=True)
    monkeypatch.setattr(fem.batch, "SYSTEM_BLOCK_BYTES", 3 * 8 * (4 * 21 * 11 + 300))
    part = solve_batch(X, workers=1)
    assert np.array_equal(part.w, whole.w, equal_nan=True) and part.reasons == whole.reasons


def test_batch_paper_mode_matches_single():
    X = _rows(2)
    res = solve_batch(X, mode="paper")
    single = np.array([list(Membrane(*row).solve(mode="paper").probe_w.values()) for row in X])
    assert np.array_equal(res.w, single)


def test_bad_rows_are_flagged_not_dropped():
    X = _rows(3)
    X[1, 2] = -0.001
    X[2, 4] = np.nan
    res = solve_batch(X)
    assert res.converged.tolist() == [True, False, False]
    assert res.reasons[1] == "invalid input: t must be > 0, got t=-0.001"
    assert "nu must be a finite number" in res.reasons[2]
    assert np.isnan(res.w[1:]).all() and np.isfinite(res.w[0]).all()


def test_bad_shape():
    with pytest.raises(ValueError, match=r"shape \(n, 5\).*got shape \(3, 4\)"):
        solve_batch(np.ones((3, 4)))


def test_batch_probes_are_checked_per_row():
    probes = {"q": (2.5, 1.2)}
    res = solve_batch([[3.0, 1.5, 0.0015, 210.0, 0.3], [2.0, 1.0, 0.0015, 210.0, 0.3]],
                      probes=probes)
    single = Membrane(3.0, 1.5, 0.0015, 210.0, 0.3, probes=probes).solve().probe_w["q"]
    assert res.converged.tolist() == [True, False] and res.w[0, 0] == single
    assert "lies outside" in res.reasons[1]


def test_batch_relative_probes_are_checked_as_a_membrane_checks_them():
    """A relative probe outside [0, 1]^2 was extrapolated by the shape functions: w = +5.89
    for a membrane that bulges down by at most 2.47."""
    with pytest.raises(ValueError, match=r"relative probe out=\(1.5, 0.5\) must lie in"):
        solve_batch([[2.0, 1.0, 0.0015, 210.0, 0.3]], probes={"out": (1.5, 0.5)},
                    probe_frame="relative")


def test_batch_paper_mode_refuses_a_loose_tolerance_per_row():
    res = solve_batch([[2.0, 1.0, 0.0015, 210e-6, 0.3]], p=1e-4, mode="paper", workers=1)
    assert not res.converged[0] and "absolute tolerance" in res.reasons[0]
