"""Sampling of :class:`uqkit.inputs.RandomInputs`.

Every rule draws points u in the unit hypercube [0, 1)^d and maps them through the joint's
inverse Rosenblatt transform x = T^-1(u) (chaospy's ``joint.inv``): for independent inputs
that is each marginal's quantile function, and for a copula the conditional quantiles, so
that any joint is sampled exactly. The points come from a generator made for the call,
``numpy.random.default_rng(seed)`` or ``scipy.stats.qmc`` seeded from it; no global random
state is read or changed, so calls are thread-safe, a seed gives the same sample every time,
and calls without a seed differ.

Example:
    >>> from uqkit.presets import table3
    >>> s = sample(table3(), 4, rule="sobol", seed=1)
    >>> s.names, s.values.shape
    (('l', 'b', 't', 'E', 'nu'), (4, 5))
"""
from dataclasses import dataclass

import numpy as np

from ..validation import check_count, check_seed

__all__ = ["RULES", "ALIASES", "EDGE", "Samples", "unit_sample", "sample", "inverse_rosenblatt"]

#: Sampling rules: independent uniforms, Latin hypercube, scrambled Sobol', scrambled Halton.
RULES = ("random", "lhs", "sobol", "halton")
#: Aliases accepted for rule names.
ALIASES = {"latin_hypercube": "lhs"}
#: Points of u are kept this far inside (0, 1), so that unbounded marginals stay finite.
EDGE = 2.0 ** -53


@dataclass(frozen=True)
class Samples:
    """An (n, d) sample that keeps its input names and, when :func:`sample` drew it, the
    description of its distribution (:meth:`uqkit.inputs.RandomInputs.describe`) and how.

    ``np.asarray(samples)`` gives the values; ``samples["E"]`` one column.
    """

    values: np.ndarray
    names: tuple
    origin: dict = None

    def __post_init__(self):
        v = np.asarray(self.values, dtype=float)
        if v.ndim != 2 or v.shape[1] != len(self.names):
            raise ValueError(f"values must have shape (n, {len(self.names)}), got {v.shape}")
        repeated = sorted({n for n in self.names if list(self.names).count(n) > 1})
        if repeated:  # samples["x"] gave the first of two columns named x
            raise ValueError(f"input names must be distinct, got {repeated} more than once")
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "names", tuple(self.names))

    def __len__(self):
        return self.values.shape[0]

    def __array__(self, dtype=None, copy=None):
        # NumPy 2 asks for a copy (np.array(samples)) and trusts the answer: the values
        # themselves came back, and editing the "copy" edited the sample
        values = self.values if dtype is None else self.values.astype(dtype, copy=False)
        return values.copy() if copy and values is self.values else values

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self.names:
                raise KeyError(f"no input {key!r}; inputs are {self.names}")
            return self.values[:, self.names.index(key)]
        if isinstance(key, tuple):  # samples[:, 0] kept every name over one column's values
            raise IndexError(f"Samples take rows (samples[rows]) or one input by name "
                             f"(samples[{self.names[0]!r}]), not {key!r}")
        return Samples(np.atleast_2d(self.values[key]), self.names)

    def to_dict(self):
        """``{name: (n,) column}``, the columns as views of ``values``."""
        return {n: self.values[:, k] for k, n in enumerate(self.names)}


def unit_sample(d, n, rule="random", seed=None):
    """An (n, d) sample of the unit hypercube, strictly inside (0, 1).

    Args:
        d: dimension.
        n: number of points.
        rule: ``random``, ``lhs`` (Latin hypercube), ``sobol`` (scrambled Sobol'; n a power
            of two keeps its balance) or ``halton`` (scrambled Halton).
        seed: integer seed, a ``numpy.random.Generator``, or None for fresh entropy.

    >>> u = unit_sample(2, 8, rule="lhs", seed=0)
    >>> sorted((u[:, 0] * 8).astype(int).tolist())  # one point per stratum
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    from scipy.stats import qmc

    name = ALIASES.get(str(rule).lower(), str(rule).lower())
    if name not in RULES:
        raise ValueError(f"unknown sampling rule {rule!r}; use one of {RULES}")
    # (0, 3) and (5, 0) samples came back without a word, 2.5 points a TypeError
    d, n = check_count(d, "d"), check_count(n, "n")
    rng = np.random.default_rng(_seed(seed))
    if name == "random":
        u = rng.random((n, d))
    elif name == "lhs":
        u = qmc.LatinHypercube(d, rng=rng).random(n)
    elif name == "sobol":  # scipy warns that n is not a power of two
        u = qmc.Sobol(d, scramble=True, rng=rng).random(n)
    else:
        u = qmc.Halton(d, scramble=True, rng=rng).random(n)
    return np.clip(u, EDGE, 1.0 - EDGE)


def sample(inputs, n, rule="random", seed=None):
    """Draw ``n`` samples of ``inputs``.

    Args:
        inputs: a :class:`uqkit.inputs.RandomInputs`.
        n: number of samples (>= 1).
        rule: ``random``, ``lhs`` (Latin hypercube), ``sobol`` or ``halton`` (scrambled
            low-discrepancy sequences; the seed picks the scrambling).
        seed: integer seed (the same seed gives the same samples) or a
            ``numpy.random.Generator``; None draws fresh entropy, so two calls differ.

    Returns:
        :class:`Samples` of shape (n, d).
    """
    from .random_inputs import check_inputs

    check_inputs(inputs)
    n = check_count(n)
    values = inverse_rosenblatt(inputs, unit_sample(inputs.dim, n, rule, _seed(seed)))
    inputs.check_samples(values)
    origin = {"inputs": inputs.describe(), "rule": rule,
              "seed": seed if seed is None or isinstance(seed, (int, np.integer)) else "rng"}
    return Samples(values, inputs.names, origin)


def inverse_rosenblatt(inputs, u, off="raise"):
    """(n, d) points u of the unit hypercube -> (n, d) inputs x = T^-1(u), with T the joint's
    Rosenblatt transform (the marginal quantiles for independent inputs). ``off``: what a
    point does where chaospy's inverse of a copula is off (``_check_inverse``):
    ``"raise"`` a ValueError, or ``"nan"`` come back as a row of NaN (a sampler that rejects
    it).

    Raises:
        ValueError: a point maps to a non-finite input (u on the edge of an unbounded
            marginal, or a broken distribution); the message names it.

    Inputs with physical bounds are clipped to them (they hold all but
    :data:`uqkit.inputs.random_inputs.BOUND_TOLERANCE` of the probability).
    """
    n, d = u.shape
    try:
        values = np.asarray(inputs.joint.inv(u.T), dtype=float).reshape(d, n).T.copy()
    except AssertionError as exc:  # chaospy's own checks, without a message (a Clayton
        # copula of theta = 40 in 3-D)
        raise ValueError(f"chaospy could not invert the joint distribution of {inputs.names} "
                         f"at these points ({type(exc).__name__} {exc}); for a copula, a "
                         "smaller parameter") from None
    bad = ~np.isfinite(values)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"input {inputs.names[c]!r}: the inverse transform of u = "
                         f"{float(u[r, c])!r} gave {float(values[r, c])!r}; check the "
                         "distribution's parameters")
    if _inverse_is_iterative(inputs.joint):
        bad = _check_inverse(inputs, u, values, off == "raise")
        values[bad.any(axis=1)] = np.nan
    # within the physical bounds, which hold all but BOUND_TOLERANCE of the probability: a
    # reliability search at u = -8 mapped normal(6.4, 1) bounded below by 0 to -1.6
    for name, (lo, hi) in getattr(inputs, "bounds", {}).items():
        c = inputs.names.index(name)
        values[:, c] = np.clip(values[:, c], -np.inf if lo is None else lo,
                               np.inf if hi is None else hi)
    return values


#: Largest distance, in the standard normal space, between a point and the forward
#: transform of its inverse, where chaospy's iterative inverse of a copula is taken as
#: converged: its error reached 1.5e-4 at |u| of 6-7 where it converged, in a review, and
#: 3.5 and 12 where it did not.
INVERSE_TOLERANCE = 1e-2


def _inverse_is_iterative(joint):
    """Whether chaospy inverts ``joint`` by iterations that may stop short: a copula other
    than Nataf, whose inverse is closed form (its check refused exact points in the tails,
    where the forward transform rounds, and broke importance sampling on correlated
    lognormals)."""
    import chaospy

    return isinstance(joint, chaospy.CopulaDistribution) and not isinstance(joint,
                                                                             chaospy.Nataf)


def _check_inverse(inputs, u, values, refuse=True):
    """The (n, d) mask of the points where the inverse of a copula did not converge, which
    it raises for where ``refuse``: chaospy's Clayton inverse at
    theta = 35 drew rows of three standard normals such as (-4.04, -4.05, 8.22), where the
    exact conditional inverse gives -4.04, with only a debug log line, and at theta = 2 it
    mapped u = (1, -7.5) to (1, -7.5), the independent answer, for -4.04. The check compares
    Phi^-1 of the forward transform with Phi^-1(u); differences below the resolution of
    doubles near 1 (4 ulp) pass."""
    from scipy import special

    back = np.asarray(inputs.joint.fwd(values.T), dtype=float).reshape(u.shape[::-1]).T
    off = np.abs(special.ndtri(np.clip(back, EDGE, 1 - EDGE))
                 - special.ndtri(np.clip(u, EDGE, 1 - EDGE)))
    bad = (off > INVERSE_TOLERANCE) & (np.abs(back - u) > 4 * np.finfo(float).eps)
    if bad.any() and refuse:
        r, c = np.argwhere(bad)[0]
        raise ValueError(
            f"input {inputs.names[c]!r}: chaospy's inverse of the joint distribution is off at "
            f"the point u = {u[r].tolist()} of the unit cube (it gave {values[r].tolist()}, "
            f"whose transform is {back[r].tolist()}); {int(bad.any(1).sum())} of {len(u)} "
            "points are off. The copula's inverse did not converge there (a smaller "
            "parameter helps), or a marginal's quantile is capped that far in its tail "
            "(docs: the guide's random inputs)")
    return bad


def _seed(seed):
    """A seed for :func:`numpy.random.default_rng`: None, an integer >= 0 or a Generator."""
    return seed if isinstance(seed, np.random.Generator) else check_seed(seed)
