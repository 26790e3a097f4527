"""The joins to fem and surrogates (:mod:`uqkit.adapters`)."""
import numpy as np
import pytest

from fem import Membrane
from uqkit.adapters import MembraneModel


@pytest.mark.parametrize("settings", [
    {},
    {"nx": 8, "ny": 4, "probe_frame": "relative"},
    {"nx": 6, "ny": 4, "p": 60.0, "probes": {"a": (0.7, 0.3)}},
])
def test_warm_up_solves_the_nominal_membrane_with_the_models_settings(settings):
    """What a pool's workers solve while the program sets up: fem.Membrane's default
    membrane, on this model's mesh, load and probes (its own solver, Membrane.solve, is the
    independent path)."""
    w, status, reasons = MembraneModel(**settings).warm_up()
    direct = Membrane(**settings).solve()
    assert status.tolist() == [0] and direct.converged
    np.testing.assert_allclose(w[0], list(direct.probe_w.values()), rtol=1e-9)


def test_a_surrogate_fitted_on_a_dataframe_takes_its_inputs_by_the_fits_column_names():
    """Fitted on columns E, P and used on inputs P, E, it took them by position: a Monte Carlo
    mean of -326 for 5.0, and P's Sobol' index given to E (in a new user's walk-through)."""
    import pandas as pd
    from sklearn.linear_model import LinearRegression

    from uqkit import propagate, sample
    from uqkit.adapters import SurrogateModel
    from uqkit.inputs import RandomInputs
    from uqkit.sensitivity import sobol_indices_surrogate

    inputs = RandomInputs.from_spec({"P": "normal(10, 1)", "E": "uniform(1, 3)"})
    train = sample(inputs, 64, rule="lhs", seed=1)
    fit = LinearRegression().fit(pd.DataFrame({"E": train["E"], "P": train["P"]}),
                                 train["P"] + 10 * train["E"])  # y = P + 10 E, exactly
    runs = sample(inputs, 500, seed=2)
    res = propagate(SurrogateModel(fit), runs, executor="serial", progress=False)
    assert np.allclose(res.outputs[:, 0], runs["P"] + 10 * runs["E"])
    first = sobol_indices_surrogate(fit, inputs, n=4096, bootstrap=0).first
    exact_p = 1 / (1 + 100 * 4 / 12)  # var P = 1, var 10 E = 100 (2^2 / 12)
    assert np.allclose(first, [exact_p, 1 - exact_p], atol=0.02), first
