"""Presets from Luo & Kareem's paper: the probe points of its membrane example.

:class:`fem.Membrane` uses them as its default probes (physical points in the reference
configuration, length units).
"""

__all__ = ["PAPER_PROBES", "PAPER_PROBES_RELATIVE"]
#: The paper's probes p1, p2, p3 (x, y) on the nominal 2 x 1 membrane.
PAPER_PROBES = {"p1": (1.0, 0.5), "p2": (0.6, 0.2), "p3": (1.6, 0.8)}
#: The same points as fractions of the sides (x / l, y / b): on the default 20 x 10 mesh they
#: are nodes, and in relative coordinates they stay those nodes whatever l and b are.
PAPER_PROBES_RELATIVE = {"p1": (0.5, 0.5), "p2": (0.3, 0.2), "p3": (0.8, 0.8)}
