import torch

from surrogates.meanfield.optim import LeanAdam


def test_lean_adam_matches_torch_adam():
    torch.manual_seed(0)
    a = torch.randn(20, dtype=torch.float64, requires_grad=True)
    b = a.detach().clone().requires_grad_()
    target = torch.randn(20, dtype=torch.float64)
    ours, ref = LeanAdam([a], lr=0.05), torch.optim.Adam([b], lr=0.05)
    for step in range(200):
        for p, opt in ((a, ours), (b, ref)):
            opt.zero_grad()
            ((p - target) ** 4).sum().backward()
            opt.step()
        if step == 100:
            ours.set_lr(0.01)
            ref.param_groups[0]["lr"] = 0.01
    torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_a_parameter_frozen_for_a_while_starts_with_fresh_bias_correction():
    a = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    opt = LeanAdam([a, b], lr=0.1)
    for _ in range(50):  # b frozen (no gradient) while a trains
        opt.zero_grad()
        a.grad = torch.ones(3, dtype=torch.float64)
        opt.step()
    opt.zero_grad()
    b.grad = torch.ones(3, dtype=torch.float64)
    opt.step()
    # Adam's first step has size lr whatever happened to other parameters
    torch.testing.assert_close(b.detach(), torch.full((3,), -0.1, dtype=torch.float64))
