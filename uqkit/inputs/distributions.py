"""Named distributions with the parameters engineers use, built as chaospy distributions.

A spec names a family and its parameters, by keyword or, where the order cannot be misread,
by position: ``"normal(210, 10)"``, ``"gumbel(loc=10, scale=2)"``,
``"lognormal(mean=0.3, std=0.003)"``, or the tuple ``("gamma", 2, {"scale": 3})``.

===========  ==============================  ==================================================
family       parameters (positional first)   meaning
===========  ==============================  ==================================================
normal       mean, std                       N(mean, std^2)
uniform      lower, upper                    U(lower, upper)
triangle     lower, mode, upper              triangular
gumbel       loc, scale                      largest-value (type I) extreme: mean = loc +
                                             0.5772 scale
studentt     df, loc=0, scale=1              Student's t
beta         alpha, beta, lower=0, upper=1   beta on (lower, upper)
gamma        shape; scale=1, loc=0           gamma: mean = loc + shape scale
weibull      shape; scale=1, loc=0           Weibull: P(X > x) = exp(-((x - loc) / scale)^shape)
exponential  —; scale= or rate=, loc=0       mean = loc + scale = loc + 1 / rate
lognormal    —; mean=, std= or mu=, sigma=   ln X ~ N(mu, sigma^2); mean and std are X's own
truncnormal  —; mu=, sigma=, lower=, upper=  N(mu, sigma^2) cut to (lower, upper): mu and
                                             sigma are the uncut normal's, not the
                                             variable's mean and std
===========  ==============================  ==================================================

Positional parameters follow scipy.stats where it names the same parameters (normal's loc and
scale, gumbel_r's loc and scale, t's df, loc and scale, beta's a and b); uniform and triangle
take their bounds as engineers write them (scipy's loc and scale differ: documented here).
Where scipy's order would read differently (gamma, weibull_min and expon put loc second or
first; lognorm takes the log-space sigma as its shape), only what is unambiguous may be
positional, and a spec that gives more is refused with a message showing the keyword form.

Example:
    >>> d = parse_distribution("gumbel(loc=10, scale=2)")
    >>> round(float(d.mom(1)), 3)  # loc + 0.5772 scale
    11.154
    >>> d = parse_distribution("lognormal(mean=0.3, std=0.003)")
    >>> round(float(d.mom(1)), 6), round(float(np.sqrt(d.mom(2) - d.mom(1) ** 2)), 6)
    (0.3, 0.003)
"""
import math
import re
from dataclasses import dataclass

import numpy as np

from ..dependencies import check_numpoly_numpy, import_chaospy

chaospy = import_chaospy()  # without its import's logging set-up (to /dev/null)

__all__ = ["EULER_GAMMA", "Family", "FAMILIES", "parse_distribution"]

check_numpoly_numpy()  # chaospy's numpoly must work with this NumPy: else say what to install

#: The Euler-Mascheroni constant: the mean of a standard Gumbel variable.
EULER_GAMMA = 0.5772156649015329


@dataclass(frozen=True)
class Family:
    """A named family: its parameters (the first ``positional`` may be given by position),
    defaults, and how to build the chaospy distribution from them."""

    params: tuple
    positional: int
    build: object
    defaults: tuple = ()
    form: str = ""

    def usage(self, name):
        """How to write the family in a spec, for a message: ``normal(mean, std)``."""
        return self.form or f"{name}({', '.join(self.params)})"


def _positive(name, **values):
    for key, v in values.items():
        if not v > 0:
            raise ValueError(f"{name}: {key} must be > 0, got {key}={v!r}")


def _normal(mean, std):
    _positive("normal", std=std)
    return chaospy.Normal(mean, std)


def _uniform(lower, upper):
    if not lower < upper:
        raise ValueError(f"uniform: lower must be < upper, got lower={lower!r}, upper={upper!r}")
    return chaospy.Uniform(lower, upper)


def _triangle(lower, mode, upper):
    if not lower <= mode <= upper or lower == upper:
        raise ValueError(f"triangle: need lower <= mode <= upper with lower < upper, got "
                         f"({lower!r}, {mode!r}, {upper!r})")
    return chaospy.Triangle(lower, mode, upper)


def _gumbel(loc, scale):
    _positive("gumbel", scale=scale)
    return chaospy.LogWeibull(scale=scale, shift=loc)  # chaospy's name for the type-I maximum


def _studentt(df, loc=0.0, scale=1.0):
    _positive("studentt", df=df, scale=scale)
    return chaospy.StudentT(df, loc, scale)


def _beta(alpha, beta, lower=0.0, upper=1.0):
    _positive("beta", alpha=alpha, beta=beta)
    if not lower < upper:
        raise ValueError(f"beta: lower must be < upper, got lower={lower!r}, upper={upper!r}")
    return chaospy.Beta(alpha, beta, lower, upper)


def _gamma(shape, scale=1.0, loc=0.0):
    _positive("gamma", shape=shape, scale=scale)
    return chaospy.Gamma(shape, scale, loc)


def _weibull(shape, scale=1.0, loc=0.0):
    _positive("weibull", shape=shape, scale=scale)
    return chaospy.Weibull(shape, scale, loc)


def _exponential(scale=None, rate=None, loc=0.0):
    if (scale is None) == (rate is None):
        raise ValueError("exponential: give scale= or rate= (one of them), e.g. "
                         "exponential(scale=2) or exponential(rate=0.5)")
    if rate is not None:
        _positive("exponential", rate=rate)
    scale = 1.0 / rate if scale is None else scale
    if not math.isfinite(scale):  # rate=1e-320: a scale of inf, every quantile inf
        raise ValueError(f"exponential: rate={rate!r} gives an infinite scale 1 / rate")
    _positive("exponential", scale=scale)
    return chaospy.Exponential(scale, loc)


def _lognormal(mean=None, std=None, mu=None, sigma=None):
    if (mean is None) != (std is None) or (mu is None) != (sigma is None) or \
            (mean is None) == (mu is None):
        raise ValueError("lognormal: give mean= and std= (of the variable) or mu= and sigma= "
                         "(of its logarithm), e.g. lognormal(mean=0.3, std=0.003)")
    if mean is not None:
        _positive("lognormal", mean=mean, std=std)
        sigma = math.sqrt(math.log1p((std / mean) ** 2))
        mu = math.log(mean) - 0.5 * sigma ** 2
    _positive("lognormal", sigma=sigma)
    # its mean exp(mu + sigma^2 / 2) and its upper quantiles must be doubles
    if not mu + 0.5 * sigma ** 2 + 10 * sigma < math.log(np.finfo(float).max):
        raise ValueError(f"lognormal: mu={mu!r}, sigma={sigma!r} put the variable beyond the "
                         "largest double (exp(mu + 10 sigma) overflows): mu and sigma are of "
                         "its logarithm; for the variable's own mean and std give mean= and "
                         "std=")
    return chaospy.LogNormal(mu, sigma)


#: Largest error of a truncated normal's quantiles, in standard deviations, that
#: :func:`_truncnormal` accepts from chaospy (against scipy's log-space truncnorm).
TRUNCNORMAL_TOLERANCE = 1e-6


def _truncnormal(mu, sigma, lower=-math.inf, upper=math.inf):
    _positive("truncnormal", sigma=sigma)
    if not lower < upper:
        raise ValueError(f"truncnormal: lower must be < upper, got ({lower!r}, {upper!r})")
    dist = chaospy.TruncNormal(lower, upper, mu, sigma)
    # chaospy inverts the normal CDF between Phi(a) and Phi(b) in double precision: a window
    # far in a tail (7 sigma: quantiles off by 0.006 sigma; 9 sigma: every draw 8.22 sigma,
    # outside the window) cannot be sampled so; scipy's truncnorm works in log space
    from scipy import stats

    q = np.array([1e-3, 0.5, 1 - 1e-3])
    exact = stats.truncnorm((lower - mu) / sigma, (upper - mu) / sigma, mu, sigma).ppf(q)
    error = float(np.max(np.abs(np.asarray(dist.inv(q), dtype=float) - exact))) / sigma
    if not error <= TRUNCNORMAL_TOLERANCE:
        far = min(abs(lower - mu), abs(upper - mu)) / sigma
        raise ValueError(f"truncnormal(mu={mu!r}, sigma={sigma!r}, lower={lower!r}, "
                         f"upper={upper!r}): the window lies {far:.3g} sigma from mu, too far "
                         "in the tail for chaospy's sampler (its quantiles there are off by "
                         f"{error:.2g} sigma); move mu toward the window or describe the "
                         "input another way (a uniform on the window, say)")
    return dist


#: The families a spec may name.
FAMILIES = {
    "normal": Family(("mean", "std"), 2, _normal),
    "uniform": Family(("lower", "upper"), 2, _uniform),
    "triangle": Family(("lower", "mode", "upper"), 3, _triangle),
    "gumbel": Family(("loc", "scale"), 2, _gumbel),
    "studentt": Family(("df", "loc", "scale"), 3, _studentt, (0.0, 1.0)),
    "beta": Family(("alpha", "beta", "lower", "upper"), 2, _beta, (0.0, 1.0),
                   "beta(alpha, beta, lower=0, upper=1)"),
    "gamma": Family(("shape", "scale", "loc"), 1, _gamma, (1.0, 0.0),
                    "gamma(shape, scale=1, loc=0)"),
    "weibull": Family(("shape", "scale", "loc"), 1, _weibull, (1.0, 0.0),
                      "weibull(shape, scale=1, loc=0)"),
    "exponential": Family(("scale", "rate", "loc"), 0, _exponential, (None, None, 0.0),
                          "exponential(scale=..., loc=0) or exponential(rate=..., loc=0)"),
    "lognormal": Family(("mean", "std", "mu", "sigma"), 0, _lognormal, (None,) * 4,
                        "lognormal(mean=..., std=...) or lognormal(mu=..., sigma=...) (mu and "
                        "sigma of the logarithm)"),
    "truncnormal": Family(("mu", "sigma", "lower", "upper"), 0, _truncnormal,
                          (-math.inf, math.inf),
                          "truncnormal(mu=..., sigma=..., lower=..., upper=...) (mu and sigma "
                          "of the normal before the cut)"),
}


def _number(text, spec, name):
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name}: distribution {spec!r} has a non-numeric parameter "
                         f"{text.strip()!r}") from None
    return value


def _read(spec, name):
    """(family name, positional values, keyword values) of a string or tuple spec."""
    if isinstance(spec, str):
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*\((.*)\)\s*", spec)
        if not m:
            raise ValueError(f"{name}: cannot read distribution {spec!r}; write it as "
                             "'normal(2, 0.05)' or 'gumbel(loc=10, scale=2)'")
        args, kwargs = [], {}
        tokens = m.group(2).split(",") if m.group(2).strip() else []
        if any(not t.strip() for t in tokens):
            raise ValueError(f"{name}: distribution {spec!r} has an empty parameter")
        for token in tokens:
            key, eq, value = token.partition("=")
            if eq:
                if key.strip() in kwargs:
                    raise ValueError(f"{name}: in {spec!r} the parameter {key.strip()!r} is "
                                     "given twice")
                kwargs[key.strip()] = _number(value, spec, name)
            elif kwargs:
                raise ValueError(f"{name}: in {spec!r} a positional parameter follows a "
                                 "keyword one")
            else:
                args.append(_number(token, spec, name))
        return m.group(1), args, kwargs
    if isinstance(spec, (tuple, list)) and spec and isinstance(spec[0], str):
        rest = list(spec[1:])
        kwargs = dict(rest.pop()) if rest and isinstance(rest[-1], dict) else {}
        return spec[0], rest, kwargs
    raise ValueError(f"{name}: expected a chaospy distribution, a string like 'normal(0, 1)' or "
                     f"a tuple like ('normal', 0, 1), got {spec!r}")


def parse_distribution(spec, name="input"):
    """A chaospy distribution from ``spec`` (see the module docstring): a chaospy
    distribution (used as it is), a string or a tuple.

    Raises:
        ValueError: an unknown family, a parameter that is not a finite number, an unknown or
            repeated parameter name, a positional form the family refuses, or parameters out
            of range; the message names the input and shows the accepted form.

    >>> parse_distribution("uniform(0.001, 0.002)").upper
    array([0.002])
    """
    if isinstance(spec, chaospy.Distribution):
        return spec
    kind, args, kwargs = _read(spec, name)
    family = FAMILIES.get(kind.lower())
    if family is None:
        raise ValueError(f"{name}: unknown distribution {kind!r}; known: "
                         f"{', '.join(sorted(FAMILIES))}")
    usage = family.usage(kind.lower())
    if len(args) > len(family.params) or (family.positional == len(family.params) and
                                          len(args) > family.positional):
        raise ValueError(f"{name}: {kind} takes at most {len(family.params)} parameters, got "
                         f"{len(args)}; use {usage}")
    if len(args) > family.positional:
        given = ", ".join(f"{a:g}" for a in args)
        why = ("its parameters must be named" if family.positional == 0 else
               f"only the first {family.positional} may be given by position")
        raise ValueError(f"{name}: {kind}({given}) is ambiguous: {why}, as in {usage} "
                         "(scipy.stats orders them differently)")
    values = dict(zip(family.params, args))
    for key, v in kwargs.items():
        if key not in family.params:
            raise ValueError(f"{name}: {kind} has no parameter {key!r}; use {usage}")
        if key in values:
            raise ValueError(f"{name}: {kind} parameter {key!r} is given twice")
        values[key] = v
    for key, v in values.items():
        if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool) or \
                not math.isfinite(v):
            raise ValueError(f"{name}: parameter {key}={v!r} of {kind} is not a finite number")
    required = family.params[:len(family.params) - len(family.defaults)]
    missing = [p for p in required if p not in values]
    if missing:
        raise ValueError(f"{name}: {kind} needs {', '.join(missing)}; use {usage}")
    try:
        return family.build(**{k: float(v) for k, v in values.items()})
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None
