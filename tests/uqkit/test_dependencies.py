"""The numpoly / NumPy check: a numpoly that passes ``newshape=`` to a NumPy without it must
give an ImportError naming both versions and both remedies, never the TypeError deep inside
chaospy; a working pair must pass silently."""
import sys
import types
import warnings

import pytest

from uqkit.dependencies import NO_COMPILER_INSTALL, check_numpoly_numpy


def _fake_numpoly(error):
    module = types.ModuleType("numpoly")
    module.variable = lambda n: object()

    def reshape(poly, shape):
        raise error

    module.reshape = reshape
    return module


def test_a_numpoly_that_numpy_24_breaks_is_named_with_both_remedies(monkeypatch):
    # numpoly 1.2.14 on NumPy 2.4 fails exactly so (measured)
    broken = TypeError("reshape() got an unexpected keyword argument 'newshape'")
    monkeypatch.setitem(sys.modules, "numpoly", _fake_numpoly(broken))
    with pytest.raises(ImportError) as info:
        check_numpoly_numpy()
    message = str(info.value)
    assert "NumPy 2.4" in message and 'pip install "numpoly>=1.3.9"' in message
    assert NO_COMPILER_INSTALL in message and info.value.__cause__ is broken


def test_another_type_error_is_not_mistaken_for_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "numpoly", _fake_numpoly(TypeError("something else")))
    with pytest.raises(TypeError, match="something else"):
        check_numpoly_numpy()


def test_the_installed_pair_passes_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_numpoly_numpy()
