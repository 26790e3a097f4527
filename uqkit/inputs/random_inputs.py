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
import warnings

import numpy as np

from ..dependencies import import_chaospy
from .distributions import parse_distribution  # noqa: F401 - part of this module's API

chaospy = import_chaospy()  # loaded by .distributions already

__all__ = ["COPULAS", "REFUSED_COPULAS", "BOUND_TOLERANCE", "CANCELLATION", "RandomInputs",
           "check_inputs"]

#: Copula names accepted by :meth:`RandomInputs.with_copula`.
COPULAS = {"nataf": chaospy.Nataf, "clayton": chaospy.Clayton}
#: chaospy's copulas that uqkit refuses, and why.
REFUSED_COPULAS = {
    **{name: (f"the {name} copula is not available: chaospy's {name.capitalize()} copula "
              "draws wrong marginals (its inverse does not converge: with normal marginals and "
              "theta = 1, independence, the second input's mean came out 1.02 instead of 0); "
              "use clayton or nataf")
       for name in ("gumbel", "joe")},
    "t": ("the t copula is not available: chaospy's TCopula applies the correlation's "
          "Cholesky factor to independent t variables, which is no multivariate t, so every "
          "input after the first gets a wrong marginal (a normal input's std 1.019 for 1 at "
          "correlation 0.8, P(x > 3) a third or more low); use nataf (Gaussian) or clayton"),
}
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
        given = marginals is not None
        if marginals is None:
            marginals = _own_marginals(joint, self.dim, conditional=False)
        self._marginals = None if marginals is None else [
            m[0] if isinstance(m, chaospy.J) and len(m) == 1 else m for m in marginals]
        if given:
            self._check_marginals()
        for name, bound in self.bounds.items():
            self._check_bound(name, bound)

    def _check_marginals(self):
        """Refuse ``marginals`` that are not the joint's: too few (an IndexError later), or
        others than the joint's own where chaospy holds them (a J's members, a copula's J's,
        a one-input joint itself: summary() described the given ones, with_copula() sampled
        them: inputs a and b swapped without a word)."""
        if len(self._marginals) != self.dim or not all(
                isinstance(m, chaospy.Distribution) for m in self._marginals):
            kinds = [type(m).__name__ for m in self._marginals]
            raise ValueError(f"marginals must be {self.dim} chaospy distributions, one per "
                             f"input {self.names} in their order, got {kinds}")
        owns = _own_marginals(self.joint, self.dim)
        if owns is None:
            return
        q = np.array([0.1, 0.5, 0.9])
        for name, own, given in zip(self.names, owns, self._marginals):
            try:
                x = np.asarray(own.inv(q), dtype=float).ravel()
            except chaospy.StochasticallyDependentError:  # a conditional: no marginal of its own
                continue
            try:
                at = np.asarray(given.fwd(x), dtype=float).ravel()
            except Exception as exc:  # noqa: BLE001 - chaospy's own (a dependent one, 2-D)
                raise ValueError(f"marginals: the one given for input {name!r} ({given}) is "
                                 f"not a distribution of one input: {type(exc).__name__}: "
                                 f"{exc}") from None
            if at.shape != q.shape or not np.allclose(at, q, atol=1e-6):
                raise ValueError(f"marginals: the one given for input {name!r} ({given}) is "
                                 f"not the joint's ({own}): pass the marginals in the order "
                                 f"of the names {self.names}")

    @classmethod
    def independent(cls, marginals, bounds=None, descriptions=None):
        """Independent inputs from ``name -> distribution spec`` (see
        :func:`parse_distribution`)."""
        if not isinstance(marginals, dict):
            raise ValueError(f"marginals must be a dict of name -> distribution spec, e.g. "
                             f"{{'E': 'normal(210e3, 10e3)'}}, got {type(marginals).__name__} "
                             f"{marginals!r}")
        if not marginals:
            raise ValueError("at least one input is needed")
        dists = [parse_distribution(spec, name) for name, spec in marginals.items()]
        return cls(list(marginals), chaospy.J(*dists), bounds, descriptions)

    from_spec = independent

    def with_copula(self, kind, parameter):
        """The same marginals tied by a chaospy copula, in place of any copula these inputs
        had: ``nataf`` (Gaussian) takes a correlation matrix of the normal scores (unit
        diagonal, symmetric positive definite), ``clayton`` a scalar theta > 0 (Kendall's
        tau = theta / (theta + 2)). chaospy's Gumbel, Joe and t copulas are refused: they
        draw wrong marginals."""
        name = str(kind).lower()
        if name in REFUSED_COPULAS:
            raise ValueError(REFUSED_COPULAS[name])
        cls = COPULAS.get(name)
        if cls is None:
            raise ValueError(f"unknown copula {kind!r}; known: {', '.join(sorted(COPULAS))}")
        if self._marginals is None:
            raise ValueError("with_copula needs the inputs' marginals; pass marginals= to "
                             "RandomInputs")
        # on the marginals, not on self.joint: a copula on a copula ties them twice (nataf
        # on nataf at 0.5 drew a correlation of 0.78 and a std of 1.2 for 1)
        base = chaospy.J(*self._marginals)
        if cls is chaospy.Nataf:
            joint = cls(base, _correlation(parameter, kind, self.dim))
        else:
            try:
                theta = float(parameter)
            except (TypeError, ValueError):
                theta = float("nan")
            if not (np.isfinite(theta) and theta > 0):
                raise ValueError(f"the {kind} copula needs a number theta > 0 (0 is "
                                 f"independence, which needs no copula), got {parameter!r}")
            joint = cls(base, theta)
        return RandomInputs(self.names, joint, self.bounds, self.descriptions,
                            self._marginals)

    @property
    def dim(self):
        """The number of inputs."""
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
        if name not in self.names:
            raise ValueError(f"bounds name an unknown input {name!r}; inputs are {self.names}")
        if not (isinstance(bound, (tuple, list)) and len(bound) == 2):
            raise ValueError(f"input {name!r}: bounds must be a pair (lower, upper), None for "
                             f"an open end, got {bound!r}")
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
        """(d,) marginal means (NaN for a marginal that has none: a Student t of df <= 1).

        chaospy's first moment, or where its raw moments cannot be the marginal's (``_mean``:
        a mean outside the support, a negative variance) the quadrature of the quantile
        function: chaospy gave -10 for a normal(-10, 1e9) cut to [0, 1]."""
        return np.array([_mean(self.marginal(n)) for n in self.names])

    def std(self):
        """(d,) marginal standard deviations (inf for a marginal of infinite variance: a
        Student t of df <= 2).

        ``sqrt(m2 - m1^2)``, or where that cancels the variance of the marginal's
        recurrence (``_std``): ``m2 - m1^2`` alone gave 1.414 for normal(1e8, 1)'s std
        of 1; where neither holds, or chaospy's moments cannot be the marginal's, the
        quadrature of the quantile function (lognormal(mean=1e8, std=1) had a std of 0)."""
        return np.array([_std(self.marginal(n)) for n in self.names])

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


def _own_marginals(joint, dim, conditional=True):
    """The marginals chaospy holds for ``joint``: a J's members, those of a copula's J, or the
    joint itself for one input (one-member Js unwrapped); None for any other joint, and with
    ``conditional=False`` for a J of conditionals (``J(a, Normal(a, 1))``: its second member
    is b given a, no marginal; with_copula tied a and b twice, a correlation of 0.71 under
    R = I, and mean() failed with chaospy's bare AssertionError)."""
    if isinstance(joint, chaospy.CopulaDistribution):
        joint = joint._parameters["dist"]  # chaospy's copulas keep their J here
    if isinstance(joint, chaospy.J):
        if joint.stochastic_dependent and not conditional:
            return None
        return [m[0] if isinstance(m, chaospy.J) and len(m) == 1 else m for m in joint]
    return [joint] if dim == 1 else None


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


def _moment(dist, order):
    """The raw moment ``order`` of ``dist``; NaN where it does not exist (chaospy raises,
    but for a Student t of df = order it returns a number: 0 for the mean at df = 1)."""
    df = _studentt_df(dist)
    if df is not None and order >= df:
        return float("nan")
    try:
        value = float(dist.mom(order))
    except (ValueError, ZeroDivisionError, FloatingPointError):
        return float("nan")
    return value if np.isfinite(value) else float("nan")


def _studentt_df(dist):
    """The degrees of freedom of a chaospy Student t (None for any other distribution)."""
    if not isinstance(dist, chaospy.StudentT):
        return None
    try:
        return float(np.ravel(dist._dist._parameters["a"])[0])  # chaospy: df of the inner t
    except (AttributeError, IndexError, KeyError, TypeError):
        return None


def _plausible(dist, m1, m2):
    """Whether the raw moments m1, m2 can be ``dist``'s: the mean inside chaospy's support
    ``[lower, upper]`` and ``m2 - m1^2`` not negative beyond rounding (chaospy's truncated
    normal of sigma 1e6 on [0, 1] had m2 = -153)."""
    lower, upper = (float(np.ravel(bound)[0]) for bound in (dist.lower, dist.upper))
    return lower <= m1 <= upper and m2 - m1 ** 2 >= -16 * np.finfo(float).eps * abs(m2)


def _quadrature_moments(dist):
    """(mean, variance) of ``dist`` by the quadrature of its quantile function over (0, 1)
    (:func:`uqkit.inputs.quadrature.probability_rule`, graded towards both ends); the
    variance centred on that mean, so without the cancellation of ``m2 - m1^2``."""
    from .quadrature import probability_rule

    u, weights = probability_rule()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = np.asarray(dist.inv(u), dtype=float).ravel()
    mean = float(weights @ x)
    return mean, float(weights @ (x - mean) ** 2)


def _mean(dist):
    """``dist``'s mean: chaospy's first moment, or the quadrature's where chaospy's moments
    are not :func:`_plausible`; NaN where it does not exist."""
    m1, m2 = _moment(dist, 1), _moment(dist, 2)
    if np.isfinite(m1) and np.isfinite(m2) and not _plausible(dist, m1, m2):
        return _quadrature_moments(dist)[0]
    return m1


def _std(dist):
    """``dist``'s standard deviation: ``sqrt(m2 - m1^2)``, or where that cancels (a variance
    below :data:`CANCELLATION` of ``m2``) the square root of the first coefficient of
    chaospy's three-term recurrence (its variance, analytic where chaospy knows it), taken
    only if it agrees with the moments to their rounding: chaospy's recurrence can be wrong
    (``Uniform(0, 1) ** 2``: a mean of 0.020 for 1/3; a truncated normal: the untruncated
    sigma), else the quadrature's (:func:`_quadrature_moments`); inf where the second
    moment does not exist."""
    m1, m2 = _moment(dist, 1), _moment(dist, 2)
    if not np.isfinite(m2):
        return float("inf")
    if not _plausible(dist, m1, m2):
        return float(np.sqrt(_quadrature_moments(dist)[1]))
    variance = max(m2 - m1 ** 2, 0.0)
    if variance >= CANCELLATION * abs(m2):
        return float(np.sqrt(variance))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            coefficients = np.asarray(chaospy.stieltjes(1, dist)[0], dtype=float)
        mean, recurred = float(np.ravel(coefficients[0])[0]), float(np.ravel(coefficients[1])[1])
    except Exception:  # noqa: BLE001 - no recurrence (chaospy raises its own): the moments
        return float(np.sqrt(variance))
    # taken only where it agrees with the moments to their own rounding: chaospy's recurrence
    # of a truncated normal gives the untruncated sigma (1 for 0.54 on [999, 1001])
    consistent = abs(mean - m1) <= 1e-12 * abs(m1) and \
        abs(m1 ** 2 + recurred - m2) <= 16 * np.finfo(float).eps * abs(m2)
    # and with the quadrature's variance: within m2's rounding, lognormal(mean=1e8, std=1)'s
    # recurrence gave 0, consistent with moments whose difference was 2 for 1
    quadrature = _quadrature_moments(dist)[1]
    if np.isfinite(recurred) and recurred > 0 and consistent and \
            abs(recurred - quadrature) <= 1e-6 * recurred:
        return float(np.sqrt(recurred))
    return float(np.sqrt(quadrature))


#: Relative size of ``m2 - m1^2`` to ``m2`` below which :meth:`RandomInputs.std` takes the
#: variance from the marginal's recurrence instead (the difference has lost 6 or more digits).
CANCELLATION = 1e-6

def check_inputs(inputs, name="inputs"):
    """``inputs`` if it is a :class:`RandomInputs`; else a ValueError naming what it is (a
    dict of specs: :meth:`RandomInputs.from_spec` makes one of it)."""
    if not isinstance(inputs, RandomInputs):
        hint = (" (RandomInputs.from_spec(...) makes one of a dict of distribution specs)"
                if isinstance(inputs, dict) else "")
        raise ValueError(f"{name} must be a uqkit.inputs.RandomInputs, got "
                         f"{type(inputs).__name__}{hint}")
    return inputs
