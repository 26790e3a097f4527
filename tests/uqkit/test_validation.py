"""The validators of :mod:`uqkit.validation` at the ends of their ranges: the value on a
closed end is taken, on an open end refused, and every message quotes the bound and the
value (mutation testing found the ends untested: docs/development/mutation_testing.md)."""
import numpy as np
import pytest

from uqkit.validation import check_count, check_float, check_int, check_seed


def test_check_int_takes_both_ends_of_its_range():
    assert check_int(1, "n", 1) == 1 and check_int(5, "k", 1, 5) == 5
    assert type(check_int(np.int64(3), "k", 1, 5)) is int
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 5\], got k=6"):
        check_int(6, "k", 1, 5)
    with pytest.raises(ValueError, match=r"n must be an integer >= 1, got n=0"):
        check_int(0, "n", 1)
    for bad in (True, 2.0, "3"):
        with pytest.raises(ValueError, match="must be an integer"):
            check_int(bad, "n", 1)


@pytest.mark.parametrize("open_low, open_high, low_ok, high_ok, brackets", [
    (True, True, False, False, "(0, 1)"), (False, True, True, False, "[0, 1)"),
    (True, False, False, True, "(0, 1]"), (False, False, True, True, "[0, 1]")])
def test_check_float_takes_a_closed_end_and_refuses_an_open_one(open_low, open_high, low_ok,
                                                                high_ok, brackets):
    for value, ok in ((0, low_ok), (1, high_ok), (0.5, True), (-1e-300, False),
                      (1.0000000000000002, False)):
        if ok:
            assert check_float(value, "p", 0, 1, open_low, open_high) == value
        else:
            with pytest.raises(ValueError, match=rf"p must be a finite number in "
                                                 rf"\{brackets[0]}0, 1\{brackets[-1]}, got p="):
                check_float(value, "p", 0, 1, open_low, open_high)


def test_check_float_is_open_at_both_ends_by_default_and_refuses_what_is_no_number():
    for end in (0.0, 1.0):
        with pytest.raises(ValueError, match=r"in \(0, 1\), got p="):
            check_float(end, "p", 0, 1)
    assert check_float("0.25", "p", 0, 1) == 0.25
    with pytest.raises(ValueError, match=r"p must be a finite number in \(-inf, inf\), "
                                         r"got p=nan"):
        check_float(float("nan"), "p", -np.inf, np.inf)
    with pytest.raises(ValueError, match=r"p must be a number, got p='a quarter'"):
        check_float("a quarter", "p", 0, 1)


def test_check_count_takes_one_and_refuses_zero_and_non_integers():
    assert check_count(1) == 1 and check_count(np.int32(7), "m") == 7
    for bad in (0, -3, True, 2.5):
        with pytest.raises(ValueError, match=rf"n must be a positive integer, got n={bad!r}"):
            check_count(bad)


def test_check_seed_takes_none_and_zero_and_refuses_a_negative_seed():
    assert check_seed(None) is None and check_seed(0) == 0
    with pytest.raises(ValueError, match="seed must be an integer >= 0, got seed=-1"):
        check_seed(-1)
