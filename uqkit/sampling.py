"""Seeded sampling of :class:`uqkit.inputs.RandomInputs` with chaospy's rules.

Example:
    >>> from uqkit.inputs import table3
    >>> s = sample(table3(), 4, rule="sobol", seed=1)
    >>> s.names, s.values.shape
    (('l', 'b', 't', 'E', 'nu'), (4, 5))
"""
from dataclasses import dataclass

import numpy as np

#: User-facing rule names mapped to chaospy's.
RULES = {"random": "random", "lhs": "latin_hypercube", "latin_hypercube": "latin_hypercube",
         "sobol": "sobol", "halton": "halton"}


@dataclass(frozen=True)
class Samples:
    """An (n, d) sample that keeps its input names.

    ``np.asarray(samples)`` gives the values; ``samples["E"]`` one column.
    """

    values: np.ndarray
    names: tuple

    def __post_init__(self):
        v = np.asarray(self.values, dtype=float)
        if v.ndim != 2 or v.shape[1] != len(self.names):
            raise ValueError(f"values must have shape (n, {len(self.names)}), got {v.shape}")
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "names", tuple(self.names))

    def __len__(self):
        return self.values.shape[0]

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self.names:
                raise KeyError(f"no input {key!r}; inputs are {self.names}")
            return self.values[:, self.names.index(key)]
        return Samples(np.atleast_2d(self.values[key]), self.names)

    def to_dict(self):
        return {n: self.values[:, k] for k, n in enumerate(self.names)}


def check_count(n, name="n"):
    """Validate a sample count: an integer >= 1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {name}={n!r}")
    return int(n)


def sample(inputs, n, rule="random", seed=None):
    """Draw ``n`` samples of ``inputs``.

    Args:
        inputs: a :class:`uqkit.inputs.RandomInputs`.
        n: number of samples (>= 1).
        rule: ``random``, ``lhs`` (Latin hypercube), ``sobol`` or ``halton``. Sobol and
            Halton are deterministic low-discrepancy sequences (the seed does not change them).
        seed: integer seed; the same seed gives the same samples.

    Returns:
        :class:`Samples` of shape (n, d).
    """
    n = check_count(n)
    chaospy_rule = RULES.get(str(rule).lower())
    if chaospy_rule is None:
        raise ValueError(f"unknown sampling rule {rule!r}; use one of {sorted(set(RULES))}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                             or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, got seed={seed!r}")
    state = np.random.get_state()
    try:
        values = inputs.joint.sample(n, rule=chaospy_rule, seed=seed, include_axis_dim=True)
    finally:
        np.random.set_state(state)
    values = np.asarray(values, dtype=float).reshape(inputs.dim, n).T.copy()
    inputs.check_samples(values)
    return Samples(values, inputs.names)
