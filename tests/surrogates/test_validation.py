"""The surrogates' own checks (surrogates/validation.py): which values are integers and finite
reals, the first bad value named, and the regressors' training data made float64."""
import warnings

import numpy as np
import pytest

from surrogates import PolynomialRegression
from surrogates.validation import check_finite, is_int, is_real


@pytest.mark.parametrize("value, expected", [
    (2.5, True), (np.float32(-1.0), True), (3, True), (np.int64(0), True),
    (float("inf"), False), (-float("inf"), False), (float("nan"), False), (True, False),
    (np.bool_(True), False), ("1.0", False), (None, False), (1 + 0j, False)])
def test_is_real_takes_finite_real_numbers_only(value, expected):
    assert is_real(value) == expected


@pytest.mark.parametrize("value, minimum, expected", [
    (3, 1, True), (np.int32(1), 1, True), (0, 1, False), (-1, 0, False), (2.0, 1, False),
    (True, 0, False), ("3", 1, False), (None, 1, False)])
def test_is_int_takes_integers_from_the_minimum_but_not_bools(value, minimum, expected):
    assert is_int(value, minimum) == expected


def test_check_finite_names_the_count_and_the_first_bad_value():
    arr = np.array([[1.0, 2.0], [np.nan, 4.0], [5.0, np.inf]])
    with pytest.raises(ValueError, match=r"^Z holds 2 NaN or inf values \(first at row 1, "
                                         r"column 0: nan\)$"):
        check_finite(arr, "Z")
    assert check_finite(arr[:1], "Z") is not None


def test_a_regressor_names_the_first_nan_of_its_inputs():
    X = np.arange(12.0).reshape(6, 2)
    X[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"^X holds 1 NaN or inf values \(first at row 4, "
                                         r"column 1: nan\)$"):
        PolynomialRegression(degree=2).fit(X, np.arange(6.0))


def test_a_complex_target_is_refused_without_a_warning_that_it_was_cast():
    """Cast to float first, a complex target lost its imaginary part with numpy's
    ComplexWarning before scikit-learn refused it."""
    X = np.arange(12.0).reshape(6, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="[Cc]omplex"):
            PolynomialRegression(degree=2).fit(X, np.arange(6.0) + 1j)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_inputs_of_another_dtype_fit_as_their_float64_values(dtype):
    rng = np.random.default_rng(0)
    X = (rng.uniform(-3, 3, (40, 2)) * 1000).astype(dtype)
    y = np.sin(X[:, 0].astype(float) / 1000) + (X[:, 1].astype(float) / 1000) ** 2
    same = PolynomialRegression(degree=4).fit(X.astype(np.float64), y)
    other = PolynomialRegression(degree=4).fit(X, y)
    np.testing.assert_array_equal(other.predict(X), same.predict(X.astype(np.float64)))


def test_a_missing_value_of_a_pandas_nullable_target_is_named():
    """pandas' Int64 with a missing value, as a data frame's column gives it: the row is
    named, not just "Input y contains NaN"."""
    pd = pytest.importorskip("pandas")
    y = pd.array([1, 2, None, 4, 5, 6], dtype="Int64")
    with pytest.raises(ValueError, match=r"^y holds 1 NaN or inf values \(first at row 2, "
                                         r"column 0: nan\)$"):
        PolynomialRegression(degree=2).fit(np.arange(12.0).reshape(6, 2), y)
