"""Checks that the installed third-party packages can do what uqkit asks of them, with a
message that says what to install where they cannot.

*numpoly and NumPy 2.4.* chaospy builds its polynomials on numpoly. numpoly releases before
1.3.9 (among them 1.2.14, its last wheel, and 1.3.0-1.3.8) pass ``newshape=`` to
``numpy.reshape``, which NumPy 2.4 removed; chaospy then fails at its first expectation with
"reshape() got an unexpected keyword argument 'newshape'". numpoly 1.3.9 fixes it but is
published only as source, which pip compiles with a C compiler; on a machine without one, pip
stops at "Failed building wheel for numpoly", and with ``--prefer-binary`` or
``--only-binary`` it installs numpoly 1.2.14 beside NumPy 2.4, the broken pair. The remedies,
measured in clean venvs (docs/install.md): numpoly >= 1.3.9 where a compiler is present, or
the ``no-compiler`` extra (``numpy<2.4`` and ``numpoly<1.3``) where none is.

*chaospy's logging.* Importing chaospy imports numpoly, and each runs
``logging.basicConfig(level=DEBUG, filename=os.devnull)`` (numpoly first, so its call wins;
``NUMPOLY_LOGPATH`` names a file instead): the root logger gets a handler that writes to
nowhere, so Python no longer prints a warning that no handler takes (its "last resort"), and
every warning logged by uqkit, or by Dask, emcee and any other library that leaves its output
to the application, went to /dev/null; the root's DEBUG level also made every library format
its debug messages for nothing. :func:`undo_chaospy_logging` takes that handler away and puts
back the root's level, right after uqkit's first import of chaospy (:func:`import_chaospy`),
whichever imported chaospy first.

Imports: the standard library; numpoly when the check runs.
"""
import logging
import os
import warnings
from importlib import metadata

__all__ = ["NO_COMPILER_INSTALL", "check_numpoly_numpy", "undo_chaospy_logging",
           "import_chaospy"]

#: The install of uqkit for a machine without a C compiler.
NO_COMPILER_INSTALL = 'pip install -c constraints.txt -e ".[no-compiler]"'


def _version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


def check_numpoly_numpy():
    """Raise ImportError, saying what to install, where numpoly cannot work with the installed
    NumPy (see the module docstring). The check makes the call that fails (about a
    millisecond), so any numpoly that works passes, whatever its version number.

    >>> check_numpoly_numpy()  # this environment's numpoly and NumPy work together
    """
    import numpoly

    try:
        with warnings.catch_warnings():  # NumPy 2.1-2.3 only warn about 'newshape'
            warnings.simplefilter("ignore", DeprecationWarning)
            numpoly.reshape(numpoly.variable(1), (1,))
    except TypeError as error:
        if "newshape" not in str(error):
            raise
        raise ImportError(
            f"numpoly {_version('numpoly')}, the polynomial library under chaospy, does not "
            f"work with NumPy {_version('numpy')}: numpoly releases before 1.3.9 pass "
            "numpy.reshape a 'newshape' argument that NumPy 2.4 removed, so chaospy would fail "
            "at its first expectation. numpoly 1.3.9, which fixes this, is published only as "
            "source (pip compiles it), so pip takes the old wheel when told to prefer or use "
            "only wheels. Install one of: with a C compiler (gcc or clang; on Windows, the "
            "Microsoft C++ Build Tools): pip install \"numpoly>=1.3.9\"; without one: "
            f"{NO_COMPILER_INSTALL} (numpy<2.4 and numpoly<1.3)") from error


def undo_chaospy_logging(level=None):
    """Remove the root logger's handler that chaospy's import added (through numpoly's),
    which writes to ``os.devnull``, and put back the root's ``level`` (the one it had before
    that import; None: WARNING, Python's default, where the import left DEBUG). See the
    module docstring. A log file the user asked for (``NUMPOLY_LOGPATH``,
    ``CHAOSPY_LOGPATH``), or any other handler, is left alone. Returns whether it removed
    one.

    >>> import chaospy  # noqa: F401 - its import configured the root logger
    >>> _ = undo_chaospy_logging()
    >>> [h for h in logging.getLogger().handlers if getattr(h, "baseFilename", None) == os.devnull]
    []
    """
    root = logging.getLogger()
    devnull = os.path.abspath(os.devnull)
    ours = [h for h in root.handlers if isinstance(h, logging.FileHandler)
            and h.baseFilename == devnull]
    for handler in ours:
        root.removeHandler(handler)
        handler.close()
    if ours:
        root.setLevel(level if level is not None else
                      logging.WARNING if root.level == logging.DEBUG else root.level)
    return bool(ours)


def import_chaospy():
    """chaospy, imported without the logging set-up of its import
    (:func:`undo_chaospy_logging`): the root logger keeps the level it had before, a DEBUG of
    the user's included, where this is chaospy's first import."""
    import sys

    level = None if "chaospy" in sys.modules else logging.getLogger().level
    import chaospy

    undo_chaospy_logging(level)
    return chaospy
