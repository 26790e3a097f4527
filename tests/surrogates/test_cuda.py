"""Both BDL engines, ``fit_many`` and prediction on a GPU, against the same fits on the CPU.

These need CUDA and skip without it (CI has none); they ran on an H100/H200 machine
(docs/guide/performance.md, "The GPU").
"""
import numpy as np
import pytest
import torch

from surrogates import BDL

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA device here (CI has none)")


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    Y = np.column_stack([np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2], X[:, 0] - X[:, 2] ** 2])
    return X, Y + 0.05 * rng.normal(size=Y.shape)


def test_batched_meanfield_on_cuda_fits_as_well_as_on_the_cpu():
    """The batched trainer on cuda differs from the CPU's by its noise draws only: same
    initial means, batch orders and objective, so the fit's error and noise agree."""
    X, Y = _data()
    Xt, Yt = _data(500, seed=1)
    settings = dict(hidden=(16, 16), epochs=300, batch_size=32, lr=0.01, seed=3)
    cpu = BDL(device="cpu", **settings).fit(X, Y)
    gpu = BDL(device="cuda", **settings).fit(X, Y)
    assert gpu.trainer_ == "batched" and gpu.device_.type == "cuda"
    assert gpu.model_.guide.mu.device.type == "cuda"
    r2_cpu, r2_gpu = cpu.score(Xt, Yt), gpu.score(Xt, Yt)
    assert r2_cpu > 0.9 and abs(r2_gpu - r2_cpu) < 0.03, (r2_cpu, r2_gpu)
    noise_cpu = cpu.predict_distribution(Xt[:5]).aleatoric_var[0]
    noise_gpu = gpu.predict_distribution(Xt[:5]).aleatoric_var[0]
    np.testing.assert_allclose(noise_gpu, noise_cpu, rtol=0.3)
    # the first epoch's data term: same initial means, same first batches
    assert abs(gpu.history_["nll"][0] - cpu.history_["nll"][0]) < 0.2 * abs(
        cpu.history_["nll"][0])


def test_a_cuda_member_of_fit_many_equals_its_single_cuda_fit():
    X, Y = _data()
    settings = [dict(hidden=(8,), epochs=40, batch_size=16, seed=s, device="cuda")
                for s in (0, 1)]
    many = BDL.fit_many([(X, Y), (X[:150], Y[:150])], settings, n_jobs=2)
    one = BDL(**settings[1]).fit(X[:150], Y[:150])
    torch.testing.assert_close(many[1].model_.guide.mu, one.model_.guide.mu, rtol=1e-4,
                               atol=1e-5)


def test_laplace_on_cuda_equals_the_cpu_fit_in_float64():
    """A linear model (a convex MAP objective, so one optimum): the same float64 fit on
    either device, its evidence and predictive to rounding. A network's L-BFGS path may
    part from the CPU's by rounding (as a batched fit's may, :func:`fit_many`), so its fit
    is held to the CPU's quality instead."""
    X, Y = _data(120)
    linear = dict(hidden=(), inference="laplace", max_iter=300, seed=2)
    cpu = BDL(device="cpu", **linear).fit(X, Y)
    gpu = BDL(device="cuda", **linear).fit(X, Y)
    assert gpu.laplace_.w.device.type == "cuda" and gpu.laplace_.w.dtype == torch.float64
    assert gpu.laplace_.converged and cpu.laplace_.converged
    assert abs(gpu.log_evidence_ - cpu.log_evidence_) < 1e-8 * abs(cpu.log_evidence_), (
        gpu.log_evidence_, cpu.log_evidence_)
    p_cpu, p_gpu = cpu.predict_distribution(X[:50]), gpu.predict_distribution(X[:50])
    np.testing.assert_allclose(p_gpu.mean, p_cpu.mean, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(p_gpu.epistemic_var, p_cpu.epistemic_var, rtol=1e-6)
    net = dict(hidden=(10,), inference="laplace", max_iter=500, seed=2)
    Xt, Yt = _data(500, seed=1)
    cpu, gpu = (BDL(device=d, **net).fit(X, Y) for d in ("cpu", "cuda"))
    assert abs(gpu.score(Xt, Yt) - cpu.score(Xt, Yt)) < 0.02, (gpu.score(Xt, Yt),
                                                                cpu.score(Xt, Yt))
    assert abs(gpu.log_evidence_ - cpu.log_evidence_) < 0.02 * abs(cpu.log_evidence_), (
        gpu.log_evidence_, cpu.log_evidence_)


@pytest.mark.parametrize("n", [20, 200])  # the posterior's low-rank form, and its factor
def test_the_exact_laplace_variance_on_cuda_equals_the_cpus(n, tmp_path):
    """One fitted posterior, loaded onto either device: its exact variance (a Jacobian
    through Sigma, float64) is the same to rounding on both."""
    X, Y = _data(n)
    model = BDL(hidden=(10,), inference="laplace", max_iter=300, seed=2, device="cpu",
                laplace_variance="exact").fit(X, Y)
    model.save(tmp_path / "m.pt")
    gpu_model = BDL.load(tmp_path / "m.pt", device="cuda")
    assert gpu_model.laplace_.w.device.type == "cuda"
    Xt = _data(300, seed=1)[0]
    cpu, gpu = model.predict_distribution(Xt), gpu_model.predict_distribution(Xt)
    np.testing.assert_allclose(gpu.mean, cpu.mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gpu.epistemic_var, cpu.epistemic_var, rtol=1e-9)


def test_a_cuda_model_saves_and_loads_onto_either_device(tmp_path):
    X, Y = _data()
    gpu = BDL(hidden=(8,), epochs=20, device="cuda", seed=0).fit(X, Y)
    path = tmp_path / "m.pt"
    gpu.save(path)
    on_cpu = BDL.load(path, device="cpu")
    on_gpu = BDL.load(path, device="cuda")
    assert on_cpu.model_.guide.mu.device.type == "cpu"
    np.testing.assert_allclose(on_cpu.model_.guide.mu.detach().numpy(),
                               on_gpu.model_.guide.mu.detach().cpu().numpy())
    lap = BDL(hidden=(8,), inference="laplace", max_iter=100, device="cuda").fit(X, Y)
    lap.save(tmp_path / "l.pt")
    back = BDL.load(tmp_path / "l.pt", device="cpu")
    np.testing.assert_allclose(back.predict(X[:10]), lap.predict(X[:10]), rtol=1e-9)


def test_auto_takes_the_gpu_for_a_big_problem_only():
    X, Y = _data(4000)
    small = BDL(hidden=(8,), epochs=2, batch_size=16).fit(X[:100], Y[:100])
    big = BDL(hidden=(256, 256), epochs=1, batch_size=1024).fit(X, Y)
    assert small.device_.type == "cpu" and big.device_.type == "cuda"


def test_prediction_on_cuda_agrees_with_its_own_draws():
    """The moments computed on the device are those of the draws it returns."""
    X, Y = _data()
    gpu = BDL(hidden=(8,), epochs=30, device="cuda", seed=0).fit(X, Y)
    pred = gpu.predict_distribution(X[:300], n_samples=40, return_samples=True)
    np.testing.assert_allclose(pred.mean, pred.samples.mean(0), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(pred.epistemic_var, pred.samples.var(0), rtol=1e-8,
                               atol=1e-12)


@pytest.mark.parametrize("epochs", [(30,), (30, 20)])
def test_the_cuda_graph_takes_the_steps_eager_stepping_takes(monkeypatch, epochs):
    """Replaying the captured step (learning-rate changes included, and members that stop
    early, whose steps go back to eager stepping) gives the eager steps' result."""
    from surrogates.meanfield import batched

    X, Y = _data()
    x, y = (torch.as_tensor(a, dtype=torch.float32) for a in (X, Y))
    members = [batched.Member(x, y, seed, e, 0.01, 10, 0.5, 1.0, 5, ("normal", 0.0, 1.0),
                              0.01, 0.1, None) for seed, e in enumerate(epochs)]
    captured = []
    capture = batched._capture
    monkeypatch.setattr(batched, "_capture",
                        lambda *a: captured.append(capture(*a)) or captured[-1])
    sizes = (3, 16, 8, 2)
    graph = batched.train(sizes, members, 1, 16, device="cuda", cuda_graph=True)
    eager = batched.train(sizes, members, 1, 16, device="cuda", cuda_graph=False)
    assert len(captured) == 1 and captured[0] is not None  # one graph, captured
    for g, e in zip(graph, eager):
        torch.testing.assert_close(g["mu"], e["mu"], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(g["rho"], e["rho"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g["history"]["nll"], e["history"]["nll"], rtol=1e-5)
        np.testing.assert_allclose(g["history"]["kl"], e["history"]["kl"], rtol=1e-5)
