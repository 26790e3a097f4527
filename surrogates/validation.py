"""Checks of the surrogates' data and settings, and the scikit-learn mixin of regressors with
(n,) or (n, k) targets.

Imports numpy and scikit-learn only (not torch), so that a baseline such as
:class:`surrogates.PolynomialRegression` loads without torch. :mod:`surrogates` stands alone
(it imports nothing of uqkit), so it keeps these few checks rather than import
:mod:`uqkit.validation`; they follow its wording.

    >>> check_finite(np.array([[1.0, np.inf]]), "X")
    Traceback (most recent call last):
    ...
    ValueError: X holds 1 NaN or inf values (first at row 0, column 1: inf)
"""
import math
import numbers

import numpy as np
from sklearn.base import RegressorMixin

__all__ = ["check_finite", "check_target", "MultiOutputRegressorMixin", "is_int", "is_real"]


def check_finite(arr, name):
    """Raise a ValueError naming the first NaN or inf of ``arr`` (1-D or 2-D)."""
    arr2 = arr.reshape(len(arr), -1)
    bad = ~np.isfinite(arr2)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"{name} holds {int(bad.sum())} NaN or inf values (first at row {r}, "
                         f"column {c}: {arr2[r, c]})")
    return arr


def check_target(y):
    """Name the first NaN or inf of a numeric regression target (scikit-learn's own check
    would only say that there is one)."""
    try:
        arr = np.asarray(y)
        if arr.dtype.kind == "c":
            return  # complex: scikit-learn's validation refuses it
        arr = arr.astype(float)
    except (TypeError, ValueError):
        return  # not numeric: scikit-learn's validation says so
    if arr.ndim and len(arr):
        check_finite(arr, "y")


class MultiOutputRegressorMixin(RegressorMixin):
    """A scikit-learn regressor of (n,) or (n, k) targets: the tag, and the validation of its
    training data (finite numbers; the first NaN or inf named)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _validate_regression(self, X, y):
        from sklearn.utils.validation import validate_data

        check_target(y)
        X, y = validate_data(self, X, y, reset=True, dtype=np.float64, multi_output=True,
                             y_numeric=True, ensure_all_finite=False)
        check_finite(X, "X")
        check_finite(y, "y")
        return X, y


def is_int(v, minimum):
    """True for an integer (not a bool) >= ``minimum``."""
    return not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= minimum


def is_real(v):
    """True for a finite real number (not a bool)."""
    return not isinstance(v, bool) and isinstance(v, numbers.Real) and math.isfinite(v)
