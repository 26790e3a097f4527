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


# chaospy's logging ------------------------------------------------------------------------------
def _stderr(code, **env):
    import os
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, **env))
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stderr


INPUTS = "from uqkit.inputs import RandomInputs; RandomInputs.from_spec({'a': 'normal(0, 1)'})"


@pytest.mark.parametrize("first, second", [("import chaospy", INPUTS), (INPUTS, "import chaospy")])
def test_a_warning_logged_after_chaospy_loaded_reaches_stderr(first, second):
    """chaospy's import sends the root logger to /dev/null: uqkit's own warnings (a batch that
    raised, a Dask cluster without a worker) were never seen, in either import order."""
    err = _stderr(f"import logging; {first}; {second}; "
                  "logging.getLogger('uqkit').warning('uqkit: seen'); "
                  "logging.getLogger('uqkit').info('uqkit: not seen at the default level')")
    assert err.strip().splitlines() == ["uqkit: seen"], err


def test_a_batch_that_raised_is_told_on_stderr_in_a_study_of_random_inputs():
    """The property a user meets: propagate over RandomInputs' samples (chaospy loaded) says
    on stderr that a batch raised and its rows were run one by one."""
    err = _stderr(
        "import numpy as np; from uqkit import propagate, sample; "
        "from uqkit.inputs import RandomInputs\n"
        "def g(X):\n"
        "    if len(X) > 1: raise RuntimeError('a batch')\n"
        "    return X[:, :1]\n"
        "s = sample(RandomInputs.from_spec({'a': 'normal(0, 1)'}), 8, seed=1)\n"
        "propagate(g, s, executor='serial', progress=False)")
    assert "batch calls of the model raised (most often RuntimeError: a batch)" in err, err


def test_a_chaospy_log_file_the_user_asked_for_is_kept(tmp_path):
    log = tmp_path / "chaospy.log"
    _stderr(f"import logging; {INPUTS}; logging.getLogger('x').debug('kept at debug')",
            NUMPOLY_LOGPATH=str(log))  # numpoly's, imported by chaospy, is the call that counts
    assert "kept at debug" in log.read_text()


def test_a_root_level_the_user_set_before_chaospy_loaded_is_kept():
    err = _stderr(f"import logging; logging.getLogger().setLevel(logging.DEBUG); {INPUTS}; "
                  "import sys; print(logging.getLogger().level, file=sys.stderr)")
    assert err.strip().splitlines()[-1] == "10", err
