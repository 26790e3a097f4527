"""``uqkit fe``: solve one membrane with the built-in FE model and print or plot the result.

Registered with the ``uqkit`` command through the ``uqkit.commands`` entry point, like
``run`` and ``study``. Imports :mod:`fem` (the joining layer of the command line) and
:mod:`uqkit.cli.app`.
"""
import argparse
import json
import sys
import time

from .app import UsageError

__all__ = ["LONG_SOLVE_BYTES", "add_fe"]

#: Solves planned to hold more stiffness matrix than this (bytes) are announced first.
LONG_SOLVE_BYTES = 2e8


def add_fe(sub):
    """Add the ``fe`` subcommand (solve one membrane) to the subparsers ``sub``."""
    p = sub.add_parser("fe", help="solve one membrane with the built-in FE model",
                       description="Solve the clamped membrane under uniform pressure. Units "
                       "are any consistent set: lengths in one unit L, E and p in force per "
                       "L^2 (the paper: l ~ 2, b ~ 1, t ~ 0.0015, E ~ 210, p = 100). Probes are "
                       "the paper's points p1 (1, 0.5), p2 (0.6, 0.2), p3 (1.6, 0.8) of the "
                       "reference configuration.")
    for name, help_ in (("l", "length along x (length units L)"),
                        ("b", "width along y (L)"), ("t", "thickness (L)"),
                        ("E", "Young's modulus (force / L^2)"),
                        ("nu", "Poisson's ratio, in (-1, 0.5)")):
        p.add_argument(f"--{name}", type=float, required=True, help=help_)
    p.add_argument("--p", type=float, default=100.0,
                   help="pressure, downward (force / L^2; default 100)")
    p.add_argument("--nx", type=int, default=20, help="elements along x, >= 2 (default 20)")
    p.add_argument("--ny", type=int, default=10, help="elements along y, >= 2 (default 10)")
    p.add_argument("--mode", default="fast", choices=("fast", "paper"),
                   help="fast: adaptive load steps to a relative residual of 1e-10; paper: "
                        "the paper's 400 load steps to an absolute residual of 1e-4 "
                        "(default fast)")
    p.add_argument("--probe", action="append", metavar="NAME=X,Y", type=_probe,
                   help="a point (x, y) of the reference configuration, in length units (or "
                        "fractions of l and b with --relative), where w is reported; repeat "
                        "for more (default: the paper's p1, p2, p3)")
    p.add_argument("--relative", action="store_true",
                   help="probes are fractions (x / l, y / b) of the sides: mesh points that "
                        "follow the membrane's size (default probes: the paper's points on the "
                        "nominal 2 x 1 membrane, (0.5, 0.5), (0.3, 0.2), (0.8, 0.8))")
    p.add_argument("--convergence", nargs="?", type=int, const=4, metavar="LEVELS",
                   help="also solve on meshes refined by 2 (LEVELS meshes in all, default 4), "
                        "and report the observed order, the Richardson-extrapolated w and the "
                        "discretisation error of the requested mesh")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE.png",
                   help="save the deflection contour plot (png, pdf, svg, ...)")
    p.set_defaults(func=_run_fe)


def _probe(text):
    """NAME=X,Y -> (NAME, (X, Y))."""
    name, eq, xy = text.partition("=")
    try:
        x, y = (float(v) for v in xy.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"write a probe as NAME=X,Y, got {text!r}") from None
    if not eq or not name.strip():
        raise argparse.ArgumentTypeError(f"write a probe as NAME=X,Y, got {text!r}")
    return name.strip(), (x, y)


def _run_fe(args):
    from fem import Membrane

    if args.plot:
        _check_plot_path(args.plot)
    probes = None
    if args.probe:
        probes = dict(args.probe)
        if len(probes) < len(args.probe):
            raise UsageError("uqkit fe: --probe names must differ")
    try:
        membrane = Membrane(l=args.l, b=args.b, t=args.t, E=args.E, nu=args.nu, p=args.p,
                            nx=args.nx, ny=args.ny, probes=probes,
                            probe_frame="relative" if args.relative else "physical")
    except ValueError as exc:
        hint = ("; move the probes with --probe NAME=X,Y, or use --relative"
                if "probe" in str(exc) and not args.probe else "")
        raise UsageError(f"uqkit fe: {exc}{hint}") from None
    from fem import STRAIN_LIMIT, solver_memory_bytes

    # load the compiled solver first, so that the solve time is the solve's alone
    t0 = time.perf_counter()
    Membrane(probes={}).solve(start="ritz")
    startup = time.perf_counter() - t0
    from fem import MEMORY_SHARE, physical_memory_bytes

    levels = args.convergence or 1
    if args.convergence is not None and args.convergence < 3:
        raise UsageError(f"uqkit fe: --convergence needs at least 3 meshes, got "
                         f"{args.convergence}")
    finest = 2 ** (levels - 1)
    need = sum(solver_memory_bytes(args.nx * 2 ** k, args.ny * 2 ** k) for k in range(levels))
    peak, have = solver_memory_bytes(args.nx * finest, args.ny * finest), physical_memory_bytes()
    if have and peak > MEMORY_SHARE * have:
        raise UsageError(f"uqkit fe: --convergence {levels}: the finest mesh "
                         f"({args.nx * finest} x {args.ny * finest}) needs about "
                         f"{peak / 2 ** 30:.3g} GiB, more than {MEMORY_SHARE:.0%} of this "
                         f"machine's {have / 2 ** 30:.3g} GiB; use fewer levels or a coarser mesh")
    if need > LONG_SOLVE_BYTES:
        print(f"uqkit fe: solving a {args.nx} x {args.ny} mesh"
              + (f" and {args.convergence - 1} refinements" if args.convergence else "")
              + f" (about {need / 1e9:.2g} GB of stiffness matrices); this can take minutes",
              file=sys.stderr)
    # one solve: from the Ritz bulge (a reference start, fem.start, pays off over many)
    res = membrane.solve(mode=args.mode, start="ritz")
    conv = None
    if args.convergence is not None:
        from fem import convergence

        try:
            conv = convergence(membrane, levels=args.convergence, mode=args.mode)
        except ValueError as exc:
            raise UsageError(f"uqkit fe: --convergence: {exc}") from None
    strain = res.max_strain() if res.converged else float("nan")
    if strain > STRAIN_LIMIT:
        print(f"uqkit fe: warning: the largest Green-Lagrange strain is {strain:.3g}, above the "
              f"{STRAIN_LIMIT:g} to which the St. Venant-Kirchhoff law holds: this is the "
              "model's answer, not a real membrane's", file=sys.stderr)
    if args.plot and not res.converged:
        print(f"uqkit fe: no plot written to {args.plot!r}: the solve did not converge",
              file=sys.stderr)
    elif args.plot:
        _save_plot(res, args.plot)
    if args.json:
        from ..execution.cache import jsonable

        out = {
            "inputs": {"l": args.l, "b": args.b, "t": args.t, "E": args.E, "nu": args.nu,
                       "p": args.p},
            "mesh": [args.nx, args.ny],
            "mode": args.mode,
            "probes": [dict({"name": n, "x": x, "y": y, "w": _json_float(res.probe_w[n])},
                            **({"relative": list(membrane.probes[n])} if args.relative else {}))
                       for n, (x, y) in res.probes.items()],
            "converged": res.converged,
            "increments": res.increments,
            "newton_iterations": res.newton_iterations,
            "seconds": res.seconds,
            "startup_seconds": startup,
            "max_strain": _json_float(strain),
            "strain_limit": STRAIN_LIMIT,
        }
        if conv is not None:
            out["convergence"] = {
                "meshes": conv.meshes, "values": conv.values, "order": conv.order,
                "extrapolated": conv.extrapolated,
                "relative_error": {n: conv.relative_error(n) for n in conv.values},
                "asymptotic": conv.asymptotic}
        if not res.converged:
            out["reason"] = res.reason
        # strict JSON: every NaN or infinity (an order that did not settle, say) as null
        print(json.dumps(jsonable(out, finite=True), allow_nan=False))
    else:
        print(res.summary() + f" (+ {startup * 1e3:.0f} ms to load the compiled solver)")
        print(f"largest Green-Lagrange strain {strain:.4g} (St. Venant-Kirchhoff holds to "
              f"about {STRAIN_LIMIT:g})")
        if conv is not None:
            print(conv.summary())
    return 0 if res.converged else 1


def _json_float(x):
    return None if x != x else x


def _check_plot_path(path):
    """Refuse, before solving, a plot file whose format matplotlib cannot write."""
    import os

    from matplotlib.backend_bases import FigureCanvasBase

    formats = set(FigureCanvasBase.get_supported_filetypes()) - {"pgf"}  # pgf needs LaTeX
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    if ext not in formats:
        what = f"'{ext}' files" if ext else "a file without an extension"
        raise UsageError(f"uqkit fe: --plot {path!r}: cannot write {what}; use one of "
                         f"{', '.join(sorted(formats))}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"uqkit fe: --plot {path!r}: no directory {folder!r}")


def _save_plot(res, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fem import plot_deflection

    ax = plot_deflection(res)
    ax.figure.tight_layout()
    try:
        ax.figure.savefig(path, dpi=120)
    except Exception as exc:  # noqa: BLE001 - a file the user named could not be written
        reason = exc.strerror if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
        raise UsageError(f"uqkit fe: cannot write --plot {path!r}: {reason}") from None
    plt.close(ax.figure)


