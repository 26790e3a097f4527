"""Presets from Luo & Kareem's paper: the random inputs of its membrane example (Table 3).

They belong to the paper's studies, not to uqkit's core; they live here, clearly named, so that
scripts and tests can build the paper's inputs without importing :mod:`studies`.
"""
import math

__all__ = ["table3"]


def table3():
    """The paper's Table 3 inputs of the membrane (example 3).

    l ~ N(2, 0.05), b ~ N(1, 0.05), t ~ U(0.001, 0.002), E ~ N(210, 10) and
    nu ~ LogNormal whose underlying normal has mean log(0.3) and standard deviation 0.01.

    >>> round(float(table3().mean()[4]), 5)
    0.30002
    """
    # chaospy (0.85 s to import, with the inputs layer) only here: a pool's worker that
    # unpickles a model of a module importing this one (the reliability study's limit
    # state) need not load it
    import chaospy

    from .inputs.random_inputs import RandomInputs

    return RandomInputs.independent(
        {"l": chaospy.Normal(2.0, 0.05), "b": chaospy.Normal(1.0, 0.05),
         "t": chaospy.Uniform(0.001, 0.002), "E": chaospy.Normal(210.0, 10.0),
         "nu": chaospy.LogNormal(math.log(0.3), 0.01)},
        bounds={"l": (0.0, None), "b": (0.0, None), "t": (0.0, None), "E": (0.0, None),
                "nu": (-1.0, 0.5)},
        descriptions={"l": "length (x)", "b": "width (y)", "t": "thickness",
                      "E": "Young's modulus", "nu": "Poisson's ratio"})
