"""The FE membrane on its own: one solve, its plausibility, and how far its mesh is from the
mesh-converged answer.

    python examples/fe_convergence.py [--levels 4]
"""
import argparse

from fem import Membrane, convergence
from fem import STRAIN_LIMIT


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--levels", type=int, default=4, help="meshes, each refined by 2")
    ap.add_argument("--nx", type=int, default=20)
    ap.add_argument("--ny", type=int, default=10)
    args = ap.parse_args(argv)

    # probes as fractions of the sides: the same mesh nodes on every mesh of the sequence
    membrane = Membrane(l=2.0, b=1.0, t=0.0015, E=210.0, nu=0.3, nx=args.nx, ny=args.ny,
                        probe_frame="relative")
    res = membrane.solve()
    print(res.summary())
    strain = res.max_strain()
    print(f"largest Green-Lagrange strain {strain:.3g}"
          + (f": beyond the {STRAIN_LIMIT:g} where St. Venant-Kirchhoff holds"
             if strain > STRAIN_LIMIT else ""))
    conv = convergence(membrane, levels=args.levels)
    print(conv.summary())
    return conv


if __name__ == "__main__":
    main()
