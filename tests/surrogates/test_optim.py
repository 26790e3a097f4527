import torch

from surrogates.optim import LeanAdam


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
