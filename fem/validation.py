"""The argument checks of :mod:`fem`, in uqkit's order ``(value, name, ...)`` and wording.

fem stands alone (it imports nothing of uqkit or surrogates), so it keeps these few checks
rather than import :mod:`uqkit.validation`. Imports: numpy only.

    >>> check_positive(0.0015, "t")
    0.0015
    >>> check_int(1, "nx", 2)
    Traceback (most recent call last):
    ...
    ValueError: nx must be an integer >= 2, got nx=1
"""
import math

import numpy as np

__all__ = ["check_finite", "check_positive", "check_int"]


def check_finite(value, name):
    """``value`` as a finite float; a ValueError naming it otherwise (a string or a bool
    too: t='1' went on to a TypeError in a comparison)."""
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise ValueError(f"{name} must be a finite number, got {name}={value!r}")
    try:
        ok = math.isfinite(float(value))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {name}={value!r}") from None
    if not ok:
        raise ValueError(f"{name} must be a finite number, got {name}={value!r}")
    return float(value)


def check_positive(value, name):
    """``value`` as a finite float > 0."""
    if check_finite(value, name) <= 0:
        raise ValueError(f"{name} must be > 0, got {name}={value!r}")
    return float(value)


def check_int(value, name, low=1):
    """``value`` as an int >= ``low``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {name}={value!r}")
    return int(value)
