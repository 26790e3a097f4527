"""A posterior's summaries (:class:`uqkit.calibration.Posterior`) against samples whose
answers are known in closed form."""
import numpy as np
import pytest
from scipy import stats

from uqkit.calibration.posterior import Posterior


def posterior(samples, outputs=None, noise_std=0.1, log_evidence=-3.14159, names=None):
    samples = np.asarray(samples, dtype=float).reshape(len(samples), -1)
    outputs = np.zeros((len(samples), 2)) if outputs is None else outputs
    return Posterior(names=names or tuple(f"x{j}" for j in range(samples.shape[1])),
                     samples=samples, outputs=outputs,
                     observed=np.array([[1.0, 2.0], [3.0, 6.0]]), output_names=("w1", "w2"),
                     log_evidence=log_evidence, model_runs=70, failed_runs=3, method="tmcmc",
                     seconds=1.25, noise_std=np.broadcast_to(noise_std, outputs.shape[1:]))


def test_std_is_the_sample_standard_deviation():
    """ddof = 1: of 1, 2, 3, 4 it is sqrt(5 / 3), not sqrt(5 / 4)."""
    post = posterior([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0]])
    np.testing.assert_allclose(post.std(), [np.sqrt(5 / 3), 10 * np.sqrt(5 / 3)], rtol=1e-15)
    np.testing.assert_allclose(post.mean(), [2.5, 25.0], rtol=1e-15)


def test_interval_is_central_with_the_default_level_of_95_percent():
    """On an even grid of [0, 1] the central interval at level L is [(1 - L) / 2, (1 + L) / 2]
    exactly; a second column, reversed and scaled, gets its own."""
    u = np.linspace(0.0, 1.0, 100_001)
    post = posterior(np.column_stack([u, 10.0 - 4.0 * u]))
    np.testing.assert_allclose(post.interval(), [[0.025, 6.1], [0.975, 9.9]], atol=1e-12)
    np.testing.assert_allclose(post.interval(0.5), [[0.25, 7.0], [0.75, 9.0]], atol=1e-12)


def test_correlation_of_exactly_related_columns():
    x = np.random.default_rng(0).normal(size=500)
    corr = posterior(np.column_stack([x, 3 * x + 1, -x])).correlation()
    np.testing.assert_allclose(corr, [[1, 1, -1], [1, 1, -1], [-1, -1, 1]], atol=1e-12)
    assert posterior(x[:, None]).correlation().shape == (1, 1)


def test_predictive_adds_the_measurement_noise_to_the_outputs():
    """Outputs fixed at (2, -1) with noise std (0.1, 0.3): a new measurement is N(2, 0.01) and
    N(-1, 0.09); its 95% interval mean -+ 1.96 std (200,000 draws: quantile error about
    0.006 std). The default level is 95%, and the default draws are reproducible."""
    n = 200_000
    post = posterior(np.zeros((n, 1)), outputs=np.tile([2.0, -1.0], (n, 1)),
                     noise_std=np.array([0.1, 0.3]))
    mean, (lo, hi) = post.predictive()
    sd = np.array([0.1, 0.3])
    z = stats.norm.ppf(0.975)
    centre = np.array([2.0, -1.0])
    assert np.all(np.abs(mean - centre) < 0.01 * sd), mean
    assert np.all(np.abs(lo - (centre - z * sd)) < 0.02 * sd), lo
    assert np.all(np.abs(hi - (centre + z * sd)) < 0.02 * sd), hi
    _, (lo68, hi68) = post.predictive(level=0.6827)
    np.testing.assert_allclose(hi68 - lo68, 2 * sd, rtol=0.02)
    again = post.predictive()
    np.testing.assert_array_equal(again[1], np.array([lo, hi]))
    assert not np.array_equal(post.predictive(seed=5)[1], again[1])


def test_summary_lists_parameters_outputs_runs_and_evidence():
    post = posterior(np.column_stack([np.linspace(0, 1, 101), np.linspace(5, 7, 101)]),
                     names=("E", "t"))
    lines = post.summary().split("\n")
    assert lines[0].split() == ["parameter", "mean", "std", "interval"]
    assert lines[1].split()[0] == "E" and float(lines[1].split()[1]) == pytest.approx(0.5)
    assert lines[3].split() == ["output", "measured", "predictive", "interval"]
    assert lines[4].split()[:2] == ["w1", "2"] and lines[5].split()[:2] == ["w2", "4"]
    assert lines[6] == ("tmcmc: 101 draws, 70 model runs (3 failed), log evidence -3.142, "
                        "1.2 s")
    post.log_evidence = None
    assert post.summary().split("\n")[6] == "tmcmc: 101 draws, 70 model runs (3 failed), 1.2 s"


def test_to_dict_is_the_summaries_in_strict_json():
    import json

    rng = np.random.default_rng(0)
    post = posterior(rng.normal(size=(400, 2)) * [1.0, 3.0] + [5.0, -1.0])
    post.diagnostics = {"stages": [{"q": 1.0, "ess": float("nan")}]}
    post.info = {"noise_std": np.array([0.1, 0.2])}
    data = json.loads(json.dumps(post.to_dict(), allow_nan=False))
    lo, hi = post.interval()
    assert data == {"names": ["x0", "x1"], "mean": post.mean().tolist(),
                    "std": post.std().tolist(), "interval_95": [lo.tolist(), hi.tolist()],
                    "correlation": post.correlation().tolist(), "log_evidence": -3.14159,
                    "model_runs": 70, "failed_runs": 3, "method": "tmcmc", "seconds": 1.25,
                    "diagnostics": {"stages": [{"q": 1.0, "ess": None}]},
                    "info": {"noise_std": [0.1, 0.2]}}


def test_corner_plot_draws_each_parameter_by_name_with_the_truths():
    """Histograms on the diagonal, pairs below it, nothing above; another posterior's
    columns are matched by name, not by position; truths are lines at their values."""
    from matplotlib.figure import Figure

    rng = np.random.default_rng(1)
    post = posterior(rng.normal(size=(300, 3)), names=("E", "t", "nu"))
    other = posterior(rng.normal(size=(200, 3)) + 10.0, names=("nu", "E", "t"))
    fig = post.plot_corner(truths={"E": 0.5, "nu": -0.25}, others=[("GP", other)],
                           fig=Figure())
    axes = np.array(fig.axes).reshape(3, 3)
    for i in range(3):
        for j in range(3):
            assert axes[i, j].axison == (j <= i)
    lines = axes[2, 1].get_lines()  # nu (row) against t (column)
    np.testing.assert_array_equal(lines[0].get_xdata(), post.samples[:, 1])
    np.testing.assert_array_equal(lines[0].get_ydata(), post.samples[:, 2])
    np.testing.assert_array_equal(lines[1].get_xdata(), other.samples[:, 2])  # other's t
    np.testing.assert_array_equal(lines[1].get_ydata(), other.samples[:, 0])  # other's nu
    assert [tuple(line.get_ydata()) for line in lines[2:]] == [(-0.25, -0.25)]  # nu's truth
    assert [tuple(line.get_xdata()) for line in axes[1, 0].get_lines()[2:]] == [(0.5, 0.5)]
    assert [tuple(line.get_xdata()) for line in axes[2, 2].get_lines()] == [(-0.25, -0.25)]
    assert axes[1, 1].get_lines() == []  # t has no truth
    assert [ax.get_xlabel() for ax in axes[2]] == ["E", "t", "nu"]
    assert [axes[i, 0].get_ylabel() for i in range(3)] == ["", "t", "nu"]
    assert [t.get_text() for t in axes[0, 0].get_legend().get_texts()] == ["posterior", "GP"]
    # each histogram is a density: the area under its outline is 1 (shoelace formula)
    outlines = [patch.get_path().vertices for patch in axes[0, 0].patches]
    areas = [0.5 * abs(v[:, 0] @ np.roll(v[:, 1], -1) - v[:, 1] @ np.roll(v[:, 0], -1))
             for v in outlines]
    assert areas == pytest.approx([1.0, 1.0], rel=1e-9)
    assert post.plot_corner(fig=Figure()).axes[0].get_legend() is None


def test_corner_plot_figure_bins_and_markers():
    """The figure given is the one drawn on (a new one otherwise); one parameter is a single
    histogram; ``bins`` bins (30 by default); the pairs are dots, not a line through them."""
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    rng = np.random.default_rng(2)
    two = posterior(rng.normal(size=(100, 2)))
    given = Figure()
    assert two.plot_corner(fig=given) is given
    made = two.plot_corner()
    assert isinstance(made, Figure) and len(made.axes) == 4
    one = posterior(rng.normal(size=(100, 1))).plot_corner(bins=12, fig=Figure())
    assert len(one.axes) == 1 and len(one.axes[0].patches) == 1
    assert len(one.axes[0].patches[0].get_path().vertices) == 2 * 12 + 2
    default = np.array(two.plot_corner(fig=Figure()).axes).reshape(2, 2)
    assert len(default[0, 0].patches[0].get_path().vertices) == 2 * 30 + 2
    dots = default[1, 0].get_lines()[0]
    assert dots.get_marker() == "." and dots.get_linestyle() == "None"
    plt.close(made)
