"""Named random inputs over chaospy distributions.

A :class:`RandomInputs` holds an ordered set of input names and one chaospy joint
distribution over them: independent marginals, any chaospy joint, or marginals tied by one
of chaospy's copulas. Physical bounds, where given, are checked against the distribution's
support (probability mass outside them is refused) and against every sample drawn.

Example:
    >>> from uqkit.inputs import RandomInputs
    >>> inputs = RandomInputs.from_spec({"x": "normal(0, 1)", "y": ("uniform", 0, 2)})
    >>> inputs.names, inputs.dim
    (('x', 'y'), 2)
"""
import re

import chaospy
import numpy as np

from .distributions import parse_distribution  # noqa: F401 - part of this module's API

__all__ = ["COPULAS", "REFUSED_COPULAS", "BOUND_TOLERANCE", "RandomInputs", "check_inputs"]

#: Copula names accepted by :meth:`RandomInputs.with_copula`.
COPULAS = {"nataf": chaospy.Nataf, "clayton": chaospy.Clayton, "t": chaospy.TCopula}
#: chaospy's copulas that uqkit refuses, and why.
REFUSED_COPULAS = {
    name: (f"the {name} copula is not available: chaospy's {name.capitalize()} copula draws "
           "wrong marginals (its inverse does not converge: with normal marginals and theta = "
           "1, independence, the second input's mean came out 1.02 instead of 0); use "
           "clayton, nataf or t")
    for name in ("gumbel", "joe")}
#: Probability mass allowed outside user bounds.
BOUND_TOLERANCE = 1e-9


class RandomInputs:
    """An ordered set of named random inputs with a joint chaospy distribution.

    Args:
        names: input names, in column order.
        joint: a chaospy distribution of dimension ``len(names)``.
        bounds: optional ``name -> (lower, upper)`` physical bounds (None for open).
        descriptions: optional ``name -> text`` (units, meaning) shown in :meth:`summary`.
    """

    def __init__(self, names, joint, bounds=None, descriptions=None, marginals=None):
        names = tuple(names)
        if len(set(names)) != len(names):
            raise ValueError(f"input names must be unique, got {names}")
        if not isinstance(joint, chaospy.Distribution):
            raise ValueError(f"joint must be a chaospy distribution, got {type(joint).__name__}")
        if len(joint) != len(names):
            raise ValueError(f"the joint distribution has dimension {len(joint)} but "
                             f"{len(names)} names were given: {names}")
        self.names = names
        self.joint = joint
        self.bounds = dict(bounds or {})
        self.descriptions = dict(descriptions or {})
        if marginals is None:
            if self.dim == 1:
                marginals = [joint]
            elif isinstance(joint, chaospy.J):
                marginals = list(joint)
        self._marginals = None if marginals is None else list(marginals)
        for name, bound in self.bounds.items():
            self._check_bound(name, bound)

    @classmethod
    def independent(cls, marginals, bounds=None, descriptions=None):
        """Independent inputs from ``name -> distribution spec`` (see
        :func:`parse_distribution`)."""
        if not marginals:
            raise ValueError("at least one input is needed")
        dists = [parse_distribution(spec, name) for name, spec in marginals.items()]
        return cls(list(marginals), chaospy.J(*dists), bounds, descriptions)

    from_spec = independent

    def with_copula(self, kind, parameter):
        """The same marginals tied by a chaospy copula: ``nataf`` (Gaussian) and ``t`` (5
        degrees of freedom) take a correlation matrix (unit diagonal, symmetric positive
        definite), ``clayton`` a scalar theta > 0 (Kendall's tau = theta / (theta + 2)).
        chaospy's Gumbel and Joe copulas are refused: they draw wrong marginals."""
        name = str(kind).lower()
        if name in REFUSED_COPULAS:
            raise ValueError(REFUSED_COPULAS[name])
        cls = COPULAS.get(name)
        if cls is None:
            raise ValueError(f"unknown copula {kind!r}; known: {', '.join(sorted(COPULAS))}")
        if cls in (chaospy.Nataf, chaospy.TCopula):
            R = _correlation(parameter, kind, self.dim)
            joint = cls(self.joint, R) if cls is chaospy.Nataf else cls(self.joint, 5, R)
        else:
            theta = float(parameter)
            if not (np.isfinite(theta) and theta > 0):
                raise ValueError(f"the {kind} copula needs theta > 0 (0 is independence, "
                                 f"which needs no copula), got {parameter!r}")
            joint = cls(self.joint, theta)
        return RandomInputs(self.names, joint, self.bounds, self.descriptions,
                            self._marginals)

    @property
    def dim(self):
        return len(self.names)

    def marginal(self, name):
        """The chaospy marginal distribution of one input."""
        if name not in self.names:
            raise ValueError(f"unknown input {name!r}; inputs are {self.names}")
        if self._marginals is None:
            raise ValueError("the marginals of this joint distribution are unknown; pass "
                             "marginals= to RandomInputs")
        return self._marginals[self.names.index(name)]

    def _check_bound(self, name, bound):
        lo, hi = bound
        for end in (lo, hi):
            if end is not None and not (isinstance(end, (int, float, np.integer, np.floating))
                                        and not np.isnan(end)):
                raise ValueError(f"input {name!r}: bounds must be numbers or None, got "
                                 f"{tuple(bound)}")
        if lo is not None and hi is not None and not lo < hi:
            raise ValueError(f"input {name!r}: its bounds {tuple(bound)} must be (lower, upper) "
                             "with lower < upper")
        dist = self.marginal(name)
        outside = 0.0
        if lo is not None:
            outside += float(dist.cdf(lo))
        if hi is not None:
            outside += 1.0 - float(dist.cdf(hi))
        if outside > BOUND_TOLERANCE:
            raise ValueError(f"input {name!r}: its distribution puts probability {outside:.3g} "
                             f"outside the physical bounds {tuple(bound)}")

    def check_samples(self, values):
        """Raise if any sample lies outside a user bound; name the input and the value."""
        for name, (lo, hi) in self.bounds.items():
            col = values[:, self.names.index(name)]
            for bad in (col < lo if lo is not None else None,
                        col > hi if hi is not None else None):
                if bad is not None and bad.any():
                    raise ValueError(f"input {name!r}: sample value {float(col[bad][0])!r} lies "
                                     f"outside its bounds {(lo, hi)}")

    def mean(self):
        """(d,) marginal means."""
        return np.array([float(self.marginal(n).mom(1)) for n in self.names])

    def std(self):
        """(d,) marginal standard deviations."""
        m2 = np.array([float(self.marginal(n).mom(2)) for n in self.names])
        return np.sqrt(np.maximum(m2 - self.mean() ** 2, 0.0))

    def summary(self):
        """A readable table: name, distribution, mean, std, 1% and 99% quantiles, bounds."""
        rows = [("input", "distribution", "mean", "std", "q01", "q99", "bounds / notes")]
        mean, std = self.mean(), self.std()
        for k, name in enumerate(self.names):
            dist = self.marginal(name)
            q01, q99 = (float(dist.inv(q)) for q in (0.01, 0.99))
            note = self.descriptions.get(name, "")
            if name in self.bounds:
                note = f"{self.bounds[name]} {note}".strip()
            rows.append((name, _short(dist), f"{mean[k]:.6g}", f"{std[k]:.4g}", f"{q01:.6g}",
                         f"{q99:.6g}", note))
        widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        if not isinstance(self.joint, chaospy.J):
            lines.append(f"dependence: {type(self.joint).__name__}")
        return "\n".join(lines)

    def describe(self):
        """A JSON-friendly description, used to tell whether two studies used the same inputs."""
        return {"names": list(self.names), "joint": str(self.joint),
                "bounds": {k: list(v) for k, v in self.bounds.items()}}

    def __repr__(self):
        return f"RandomInputs(names={self.names}, joint={self.joint})"


def _short(dist):
    text = re.sub(r"\s+", "", str(dist))
    return re.sub(r"-?\d+\.\d{5,}", lambda m: f"{float(m.group()):.5g}", text)


def _correlation(matrix, kind, dim):
    """``matrix`` checked as a ``dim`` x ``dim`` correlation matrix for the ``kind`` copula:
    finite, unit diagonal, symmetric positive definite (its entries then lie in (-1, 1))."""
    R = np.asarray(matrix, dtype=float)
    if R.shape != (dim, dim):
        raise ValueError(f"the {kind} copula needs a {dim} x {dim} correlation matrix, got "
                         f"shape {R.shape}")
    if not np.isfinite(R).all():
        raise ValueError(f"the {kind} correlation matrix holds non-finite entries: {R.tolist()}")
    off = np.flatnonzero(np.abs(np.diag(R) - 1.0) > 1e-12)
    if off.size:
        i = int(off[0])
        raise ValueError(f"the {kind} correlation matrix has {float(R[i, i])!r} at [{i}][{i}]: a "
                         "correlation matrix has 1 on its diagonal (was a covariance matrix "
                         "given?)")
    if not np.allclose(R, R.T) or np.any(np.linalg.eigvalsh(R) <= 0):
        raise ValueError(f"the {kind} correlation matrix must be symmetric positive definite")
    return R


def check_inputs(inputs, name="inputs"):
    """``inputs`` if it is a :class:`RandomInputs`; else a ValueError naming what it is (a
    dict of specs: :meth:`RandomInputs.from_spec` makes one of it)."""
    if not isinstance(inputs, RandomInputs):
        hint = (" (RandomInputs.from_spec(...) makes one of a dict of distribution specs)"
                if isinstance(inputs, dict) else "")
        raise ValueError(f"{name} must be a uqkit.inputs.RandomInputs, got "
                         f"{type(inputs).__name__}{hint}")
    return inputs
