"""The validators of uqkit's arguments: one set, one argument order ``(value, name, ...)``.

Each returns the checked value as a plain Python number and raises a ValueError that names the
argument and quotes the bad value (``n must be an integer >= 1, got n=0``), never a silent NaN.
:mod:`fem` and :mod:`surrogates` stand alone (they import nothing of uqkit), so each keeps its
own few checks; they follow the same order and wording.

Imports: numpy only.

    >>> check_int(5, "n", 1), check_float("0.5", "p0", 0, 1)
    (5, 0.5)
    >>> check_int(0, "n", 1)
    Traceback (most recent call last):
    ...
    ValueError: n must be an integer >= 1, got n=0
"""
import numpy as np

__all__ = ["check_int", "check_float", "check_seed", "check_count"]


def check_int(value, name, low, high=None):
    """``value`` as an int in [low, high]; a ValueError naming it otherwise."""
    ok = (not isinstance(value, bool) and isinstance(value, (int, np.integer))
          and value >= low and (high is None or value <= high))
    if not ok:
        span = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be an integer {span}, got {name}={value!r}")
    return int(value)


def check_float(value, name, low, high, open_low=True, open_high=True):
    """``value`` as a finite float inside (low, high) (closed ends where asked)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {name}={value!r}") from None
    ok = np.isfinite(v) and (v > low if open_low else v >= low) and (
        v < high if open_high else v <= high)
    if not ok:
        lo, hi = ("(" if open_low else "["), (")" if open_high else "]")
        raise ValueError(f"{name} must be a finite number in {lo}{low}, {high}{hi}, "
                         f"got {name}={value!r}")
    return v


def check_seed(seed):
    """``seed`` if it is None or an integer >= 0, else a ValueError naming it.

    >>> check_seed(3), check_seed(None)
    (3, None)
    """
    if seed is not None:
        check_int(seed, "seed", 0)
    return seed


def check_count(n, name="n"):
    """Validate a sample count: an integer >= 1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {name}={n!r}")
    return int(n)
