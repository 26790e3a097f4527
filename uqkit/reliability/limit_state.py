"""A limit state g in the standard normal space u of the inputs' Rosenblatt transform.

A g with k outputs is a system: series fails when any component fails (``min_j g_j <= 0``),
parallel when all do (``max_j g_j <= 0``).

Imports: numpy and :mod:`uqkit.inputs.transforms`.
"""
import numpy as np

from ..inputs.transforms import u_to_x

__all__ = ["SYSTEMS", "LimitState"]

#: How a limit state of several outputs fails: ``"series"``, when any output is <= 0 (g is
#: their minimum); ``"parallel"``, when all are (g is their maximum).
SYSTEMS = ("series", "parallel")


class LimitState:
    """g in standard normal space: ``ls(U)`` maps (n, d) u to x, runs the model through the
    runner and reduces a system's outputs to (n,) values."""

    def __init__(self, runner, inputs, system=None):
        if system is not None and system not in SYSTEMS:
            raise ValueError(f"unknown system {system!r}; use one of {SYSTEMS} or None")
        self.runner, self.inputs, self.system = runner, inputs, system

    @property
    def runs(self):
        """Model runs so far (the runner's count)."""
        return self.runner.runs

    def __call__(self, U, tag=None):
        U = np.atleast_2d(np.asarray(U, dtype=float))
        Y = self.runner(u_to_x(self.inputs, U), tag)
        if Y.ndim != 2 or Y.shape[0] != len(U):
            raise ValueError(f"g returned outputs of shape {Y.shape} for {len(U)} rows")
        if Y.shape[1] == 1:
            return Y[:, 0]
        if self.system is None:
            raise ValueError(f"g returned {Y.shape[1]} outputs per row; pass "
                             "system='series' (fails if any g_j <= 0) or 'parallel' (if all do)")
        return Y.min(1) if self.system == "series" else Y.max(1)


