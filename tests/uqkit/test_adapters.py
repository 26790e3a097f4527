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


def test_input_names_that_reorder_the_fits_own_columns_are_refused():
    """Fitted on (E, P), ``SurrogateModel(fit, input_names=("P", "E"))`` fed P as E: a Monte
    Carlo error of 111 without a word (an independent audit), and ("P", "load") did the same
    (a review). Names that map columns named otherwise are what input_names is for, and stay
    allowed."""
    import pandas as pd
    from sklearn.linear_model import LinearRegression

    from uqkit.adapters import SurrogateModel

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"E": rng.uniform(1, 3, 20), "P": rng.normal(10, 1, 20)})
    fit = LinearRegression().fit(frame, frame["P"] + 10 * frame["E"])
    for names, moved in ((("P", "E"), "['P', 'E']"), (("P", "load"), "['P']")):
        with pytest.raises(ValueError, match=rf"input_names \({names[0]!r}, {names[1]!r}\) "
                                             rf"put \{moved[:-1]}\] elsewhere than the "
                                             r"columns the surrogate was fitted on, \('E', "
                                             r"'P'\)"):
            SurrogateModel(fit, input_names=names)
    assert SurrogateModel(fit, input_names=("E", "P")).input_names == ("E", "P")
    renamed = SurrogateModel(fit, input_names=("modulus", "load"))
    assert renamed(np.array([[2.0, 10.0]]))[0] == pytest.approx(30.0)


def test_the_search_keeps_the_columns_of_a_dataframe_for_uqkits_adapters():
    """Fitted on a DataFrame of columns E, P and used on inputs P, E, a search was read by
    position (a BDL is read by name): a Monte Carlo error of 44 for y = P + 10 E, and E's
    Sobol' index given to P (an independent audit)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    P, E = rng.normal(10, 1, 64), rng.uniform(1, 3, 64)
    frame = pd.DataFrame({"E": E, "P": P})
    from surrogates import BDL, EvidenceSearch

    search = EvidenceSearch(BDL(hidden=(8,), inference="laplace", max_iter=300, seed=0),
                            {"prior": ["normal(0, 1)", "hierarchical-normal"]},
                            restarts=1).fit(frame, P + 10 * E)
    assert list(search.feature_names_in_) == ["E", "P"]
    from uqkit import propagate
    from uqkit.adapters import SurrogateModel
    from uqkit.inputs import Samples

    runs = Samples(np.column_stack([rng.normal(10, 1, 50), rng.uniform(1, 3, 50)]), ("P", "E"))
    res = propagate(SurrogateModel(search), runs, executor="serial", progress=False)
    assert np.abs(res.outputs[:, 0] - (runs["P"] + 10 * runs["E"])).max() < 0.5
    unfitted = EvidenceSearch(BDL(inference="laplace"))
    assert not hasattr(unfitted, "feature_names_in_")
    on_array = EvidenceSearch(BDL(hidden=(), inference="laplace", max_iter=50),
                              restarts=1).fit(rng.normal(size=(10, 2)), rng.normal(size=10))
    assert not hasattr(on_array, "feature_names_in_")
