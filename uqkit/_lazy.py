"""Lazy package exports: a package's public names, imported from their modules on first use.

A process that needs only part of uqkit (a pool worker running a model, say) then does not
import chaospy and scipy.stats through a package ``__init__`` (1.22 of the 1.24 s that
importing :mod:`uqkit.adapters` once took). Imports: the standard library only.

    >>> getattr_, dir_ = lazy_exports("uqkit.inputs", {"RandomInputs": "random_inputs"}, {})
    >>> getattr_("RandomInputs").__name__
    'RandomInputs'
"""
import importlib


def lazy_exports(package, exports, namespace):
    """``(__getattr__, __dir__)`` for ``package``, whose ``exports`` map each public name to
    the submodule (relative to the package) that defines it; ``namespace`` is the package's
    ``globals()``, where a name is cached after its first import."""

    def __getattr__(name):
        if name in exports:
            value = getattr(importlib.import_module(f".{exports[name]}", package), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
