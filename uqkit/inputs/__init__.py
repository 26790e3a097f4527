"""Random inputs: named distributions, joints and copulas, sampling, and the maps between
physical inputs and the analyses' standard normal and unit spaces.

Layer: the first of uqkit; imports numpy, scipy, chaospy and :mod:`uqkit.validation` only.
Names load on first use (a pool worker that only unpickles :class:`Samples` does not import
chaospy).
"""
from .._lazy import lazy_exports

_EXPORTS = {"RandomInputs": "random_inputs", "COPULAS": "random_inputs",
            "parse_distribution": "distributions", "FAMILIES": "distributions",
            "Samples": "sampling", "sample": "sampling", "unit_sample": "sampling",
            "RULES": "sampling", "u_to_x": "transforms", "x_to_u": "transforms",
            "unit_to_x": "transforms"}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
