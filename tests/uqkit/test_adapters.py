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
