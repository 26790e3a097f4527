"""Subset simulation where g is flat (ties at a level's quantile): a margin capped at a value
and a count of exceedances, against their exact Pf from scipy; the level under a plateau
from the generator's own draws; a plateau with nothing under it refused by name.

Fast: a bare limit state in standard normal space (no model runner)."""
import math

import numpy as np
import pytest
from scipy import stats

from uqkit.reliability.subset import _balanced, subset_simulation

from .test_subset import Bare


def capped(U):
    """A margin reported capped at 2: g <= 0 exactly where the hyperplane at beta = 3.5 fails,
    Pf = Phi(-3.5) = 2.3e-4; g = 2 on 93 % of the standard normal space."""
    return np.minimum(3.5 - U.sum(1) / math.sqrt(U.shape[1]), 2.0)


def count(U):
    """2.5 minus the number of inputs above 1.5: fails where all 3 are, Pf = Phi(-1.5)^3."""
    return 2.5 - (U > 1.5).sum(1)


@pytest.mark.parametrize("g, d, exact", [(capped, 2, stats.norm.sf(3.5)),
                                         (count, 3, stats.norm.sf(1.5) ** 3)])
@pytest.mark.parametrize("sampler", ["acs", "mma"])
def test_pf_over_seeds_is_the_exact_one_on_a_flat_g(g, d, exact, sampler):
    """200 seeds, N = 2000: the mean estimate within 3 standard errors and 15 % of the exact
    Pf (it was 2.6 and 5 times the exact one for the capped margin, 25 times for the count:
    the N p0 lowest samples seeded the chains of a level that held every sample)."""
    pf = np.array([subset_simulation(Bare(g, d), np.random.default_rng(s), n=2000,
                                     sampler=sampler)["pf"] for s in range(200)])
    se = pf.std(ddof=1) / math.sqrt(len(pf))
    assert abs(pf.mean() - exact) < 3 * se and abs(pf.mean() / exact - 1) < 0.15


def test_the_level_under_a_plateau_from_the_generators_draws():
    """Level 0 of the capped margin: b lies between 2 and the largest g below it, its p is the
    share of the level-0 draws under 2 (not p0), the history names the plateau, and every
    level-1 state lies under b (the seeds were all taken from under it)."""
    n, seed = 1000, 3
    ls = Bare(capped, 2)
    r = subset_simulation(ls, np.random.default_rng(seed), n=n)
    G0 = capped(np.random.default_rng(seed).standard_normal((n, 2)))
    under = G0[G0 < 2.0]
    h = r["history"][0]
    assert 0 < len(under) < n * 0.1
    assert h["threshold"] == 0.5 * (under.max() + 2.0) and h["p"] == len(under) / n
    assert h["plateau"] == 2.0 and h["plateau_rows"] == int((G0 == 2.0).sum())
    assert r["info"]["plateaus"] == 1 and all("plateau" not in x for x in r["history"][1:])
    level1 = np.concatenate(ls.outputs[1:10])  # the candidates of level 1's 9 steps
    assert (level1[level1 <= h["threshold"]] < 2.0).all()
    assert r["history"][1]["threshold"] < h["threshold"]


def test_balanced_seeds_use_each_row_nearly_equally():
    """k rows seed Nc chains: each Nc // k or Nc // k + 1 times, every row at least once."""
    rows = np.array([7, 3, 11])
    seeds = _balanced(rows, 10, np.random.default_rng(0))
    counts = {int(r): int((seeds == r).sum()) for r in rows}
    assert len(seeds) == 10 and sorted(counts.values()) == [3, 3, 4]
    np.testing.assert_array_equal(_balanced(rows, 6, np.random.default_rng(0)),
                                  [7, 7, 3, 3, 11, 11])


def test_a_plateau_with_nothing_under_it_is_refused_by_name():
    """g = max(1 - u, 2) is 2 on 84 % of level 0 and never below 2 (Pf = 0): no level under 2
    can be sampled. g = max(2.5 - u, 1) reaches its floor 1 on 6.7 %: level 1's chains pile
    up on it."""
    with pytest.raises(RuntimeError, match=r"g = 2 on \d+ of the 1000 samples of level 0 \(a "
                                           r"plateau\) and below it on none.*method='mc'"):
        subset_simulation(Bare(lambda U: np.maximum(1 - U[:, 0], 2.0), 1),
                          np.random.default_rng(0), n=1000)
    with pytest.raises(RuntimeError, match=r"g = 1 on \d+ of the 1000 samples of level 1"):
        subset_simulation(Bare(lambda U: np.maximum(2.5 - U[:, 0], 1.0), 1),
                          np.random.default_rng(0), n=1000)
