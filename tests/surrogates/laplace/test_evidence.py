"""The Laplace evidence's maximisation (:mod:`surrogates.laplace.evidence`) where it leaves
its main road: groups that do not cover the weights, a Hessian that is singular (the
fixed-point fallback), the noise held fixed in data space, and both forms' warning when they
stop short. Its value, gradient, Hessian, bounds and step counts are in ``test_fit.py``."""
import warnings

import pytest
import scipy.optimize
import torch

from surrogates.laplace import evidence

F64 = torch.float64


def _rows(N, P, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(N, P, generator=g, dtype=F64), torch.arange(N) % 2


def test_groups_that_leave_a_weight_out_are_refused_by_name():
    R, rows = _rows(10, 6)
    with pytest.raises(ValueError, match=r"do not cover all 6 weights"):
        evidence.LaplaceEvidence(R, rows, [(0, 2), (3, 6)], torch.ones(2, dtype=F64))


def test_a_group_the_data_do_not_determine_takes_the_fixed_point_steps_to_the_same_optimum():
    """A group whose Jacobian columns are zero and whose weights sit at the prior's mean
    (q = 0) has a zero gradient at every c: the Hessian in log c is singular (an eigenvalue
    exactly 0), so Newton's system has no solution and the steps are the fixed point
    ``c = gamma / q``'s. The other groups and the noise must reach the optimum of the
    problem without that group, and its factor stay where it started."""
    R, rows = _rows(40, 9)
    R[:, 6:] = 0.0
    groups = [(0, 3), (3, 6), (6, 9)]
    q = torch.tensor([2.0, 0.7, 0.0], dtype=F64)
    sse = torch.tensor([6.0, 9.0], dtype=F64)
    ev = evidence.LaplaceEvidence(R, rows, groups, q, sse)
    assert not ev.dual
    ones = torch.ones(3, dtype=F64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "not maximised" fails the test
        c, tau = ev.newton(ones, torch.ones(2, dtype=F64), True, (1e-6, 1e6), 1e-10)
    alone = evidence.LaplaceEvidence(R[:, :6], rows, groups[:2], q[:2], sse)
    c_alone, tau_alone = alone.newton(ones[:2], torch.ones(2, dtype=F64), True, (1e-6, 1e6),
                                      1e-10)
    torch.testing.assert_close(c[:2], c_alone, rtol=1e-9, atol=0)
    torch.testing.assert_close(tau, tau_alone, rtol=1e-9, atol=0)
    assert float(c[2]) == 1.0


def test_an_unconverged_newton_says_how_far_and_returns_its_last_iterate():
    R, rows = _rows(40, 9, seed=5)
    groups = [(0, 3), (3, 6), (6, 9)]
    q = torch.tensor([3.0, 0.5, 1.5], dtype=F64)
    ev = evidence.LaplaceEvidence(R, rows, groups, q, torch.tensor([4.0, 9.0], dtype=F64))
    start = (torch.ones(3, dtype=F64), torch.ones(2, dtype=F64), True, (1e-6, 1e6))
    with pytest.warns(RuntimeWarning, match=r"not maximised: 2 Newton steps left a gradient "
                                            r"of \S+ > gtol 1e-12; the posterior uses the "
                                            r"last iterate's prior and noise precisions"):
        c, tau = ev.newton(*start, 1e-12, max_iter=2)
    assert torch.isfinite(c).all() and torch.isfinite(tau).all() and not (c == 1).all()
    # no gradient is exactly zero: the default limit is 200 steps
    with pytest.warns(RuntimeWarning, match=r"200 Newton steps"):
        ev.newton(*start, 0.0)


def _data_space(seed=3):
    R, rows = _rows(8, 20, seed)
    groups = [(0, 5), (5, 12), (12, 20)]
    q = torch.tensor([0.8, 2.5, 4.0], dtype=F64)
    sse = torch.tensor([6.0, 9.0], dtype=F64)
    return R, rows, groups, q, sse


def test_data_space_with_the_noise_held_keeps_it_and_maximises_in_c_alone():
    R, rows, groups, q, sse = _data_space()
    tau = torch.tensor([2.0, 0.5], dtype=F64)
    c, kept = evidence.maximise(R, rows, groups, q, sse, tau=tau, learn_noise=False,
                                gtol=1e-9)
    ev = evidence.LaplaceEvidence(R, rows, groups, q, sse)
    assert ev.dual
    torch.testing.assert_close(kept, tau, rtol=0, atol=0)
    _, grad_c, _ = ev(torch.log(c), torch.log(kept))
    assert grad_c.abs().max() <= 1e-6


def test_an_unconverged_data_space_maximisation_says_so_with_scipys_reason(monkeypatch):
    """L-BFGS-B stopped at its iteration limit (one iteration here): the warning gives its
    message and the gradient it left, which is the evidence's at the returned point."""
    R, rows, groups, q, sse = _data_space()
    minimize = scipy.optimize.minimize

    def one_iteration(*args, options=None, **kwargs):
        return minimize(*args, options=dict(options, maxiter=1), **kwargs)

    monkeypatch.setattr(scipy.optimize, "minimize", one_iteration)
    with pytest.warns(RuntimeWarning, match=r"not maximised: L-BFGS-B \(.*ITERATIONS.*\) "
                                            r"left a gradient of (\S+) > gtol 1e-09") as seen:
        c, tau = evidence.maximise(R, rows, groups, q, sse, gtol=1e-9)
    _, grad_c, grad_tau = evidence.LaplaceEvidence(R, rows, groups, q, sse)(torch.log(c),
                                                                            torch.log(tau))
    left = float(torch.cat([grad_c, grad_tau]).abs().max())
    reported = float(str(seen[0].message).split("gradient of ")[1].split(" ")[0])
    assert reported == pytest.approx(left, rel=1e-2) and left > 1e-9


@pytest.mark.parametrize("N, P", [(8, 20), (40, 9)])  # data space, P space
def test_without_noise_the_evidence_is_the_prior_and_determinant_terms_alone(N, P):
    """Classification (no residual sums of squares, T = I: tau held at ones): log Z is
    ``(sum_g P_g log c_g - c_g q_g - log det(C + R^T R)) / 2``, computed here densely, and
    the noise gradient is zeros of the noise's shape."""
    R, rows = _rows(N, P)
    groups = [(0, P // 2), (P // 2, P)]
    q = torch.tensor([1.0, 2.0], dtype=F64)
    ev = evidence.LaplaceEvidence(R, rows, groups, q)
    log_c = torch.tensor([0.2, -0.3], dtype=F64)
    value, _, grad_tau = ev(log_c, torch.zeros(2, dtype=F64))
    c = torch.exp(log_c)
    sizes = torch.tensor([P // 2, P - P // 2], dtype=F64)
    diag = torch.cat([c[0].repeat(P // 2), c[1].repeat(P - P // 2)])
    dense = 0.5 * ((sizes * log_c).sum() - (c * q).sum()
                   - torch.logdet(torch.diag(diag) + R.T @ R))
    assert float(value) == pytest.approx(float(dense), rel=1e-12)
    torch.testing.assert_close(grad_tau, torch.zeros(2, dtype=F64), rtol=0, atol=0)
