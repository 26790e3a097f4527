"""``uqkit study ...`` subcommands.

Registered with the ``uqkit`` command through the ``uqkit.commands`` entry point (see
pyproject.toml), so that :mod:`uqkit` never imports the studies.
"""
import sys

from uqkit.cli import Parser, UsageError
from uqkit.execution.store import StoreBusyError, StoreCorruptError, StoreMismatchError

from .common import StudyError, StudyInputError

__all__ = ["add_study"]


def _common(p, paper="the paper's (long) training settings"):
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output directory: report, figures and the cache of every result; "
                   "another study's is refused")
    p.add_argument("--workers", type=int, help="local processes (default: every core)")
    p.add_argument("--paper", action="store_true", help=paper)
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def _option(parser, defaults, flag, text, type=int):
    """``--flag`` of the settings field it names (``--n-truth``: ``n_truth``), its default
    read from the study's settings dataclass and shown in the help. A field whose default
    differs with --paper (:class:`_ByMode`) defaults to None, which the study resolves, so
    that a value given is kept with --paper too."""
    key = flag[2:].replace("-", "_")
    default = defaults[key]
    if isinstance(default, _ByMode):
        parser.add_argument(flag, type=type, default=None,
                            help=f"{text} (default {default.ours}; --paper: {default.paper} "
                                 "unless given)")
    else:
        parser.add_argument(flag, type=type, default=default, help=f"{text} (default {default})")


def _mode_option(parser, defaults, flag, text, paper, type=int):
    """``--flag`` of a setting that one mode alone uses: ``paper`` true, the paper's training
    (``--paper``); false, the default one. None unless given (:func:`_given`): the study
    refuses it given for the other mode, which ignored it."""
    default = defaults[flag[2:].replace("-", "_")]
    where = "only with --paper" if paper else "not with --paper"
    parser.add_argument(flag, type=type, default=None, help=f"{text} (default {default}; "
                                                            f"{where})")


def _laplace_options(parser, defaults):
    """--max-iter and --restarts of a study's default (Laplace) BDL fits, which --paper
    replaces by the paper's training."""
    _mode_option(parser, defaults, "--max-iter", "L-BFGS iterations of every default "
                 "(Laplace) BDL fit", paper=False)
    _mode_option(parser, defaults, "--restarts", "initialisations per default BDL fit, the "
                 "highest Laplace evidence kept", paper=False)


def _given(args, *keys):
    """``{field: value}`` of the options among ``keys`` given on the command line (None
    otherwise: the study's own default, which it checks against its mode,
    :func:`studies.common.check_mode_settings`)."""
    return {key: getattr(args, key) for key in keys if getattr(args, key) is not None}


def add_study(sub):
    """Register ``uqkit study membrane|regression|moons|wind|reliability|calibration``."""
    study = sub.add_parser("study", help="run one of the paper's studies")
    studies = study.add_subparsers(dest="study", required=True, parser_class=Parser)
    d = _defaults("studies.membrane", "MembraneStudy")
    m = studies.add_parser("membrane", help="membrane UQ end to end (paper example 3)",
                           description="Table-3 inputs -> FE data -> BDL surrogates -> "
                           "surrogate Monte Carlo vs FE truth.")
    m.add_argument("--out", required=True, metavar="DIR",
                   help="output directory: report, figures and the cache of every result; "
                   "another study's is refused")
    _option(m, d, "--seed", "master seed of every data set and fit")
    where = m.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, help="local processes (default: every core)")
    where.add_argument("--dask", metavar="ADDRESS", help="Dask scheduler for the FE runs")
    m.add_argument("--paper", action="store_true",
                   help="the paper's settings: mean-field VI, batch 16, 200 ELBO samples, "
                   "5e5 FE truth runs (unless --n-truth is given)")
    sizes = ",".join(map(str, d["train_sizes"]))
    m.add_argument("--train-sizes", default=sizes,
                   help=f"comma-separated training sizes (default {sizes})")
    for flag, text in (("--n-seeds", "training seeds per prior and size; Table 4 gives medians"),
                       ("--n-validation", "held-out FE runs that score the fits"),
                       ("--n-calibration", "further held-out FE runs for the variance "
                                           "recalibration"),
                       ("--n-uq-train", "FE runs the UQ surrogates train on"),
                       ("--n-surrogate-mc", "surrogate Monte Carlo samples")):
        _option(m, d, flag, text)
    _option(m, d, "--n-truth", "FE Monte Carlo truth samples")
    _mode_option(m, d, "--epochs", "Adam epochs of every --paper BDL fit", paper=True)
    _mode_option(m, d, "--max-iter", "L-BFGS iterations of every default BDL fit", paper=False)
    for flag, text in (("--nx", "FE elements along l"), ("--ny", "FE elements along b")):
        _option(m, d, flag, text)
    m.add_argument("--no-progress", action="store_true", help="no progress bars")
    m.add_argument("--retry-failed", action="store_true",
                   help="also rerun FE runs the store holds as not converged (runs that raised "
                        "an error are always rerun)")
    m.set_defaults(func=_run_membrane)

    r = studies.add_parser("regression", help="x sin x regression benchmark (paper example 1)")
    _common(r, paper="the paper's training: NN by SGD, BDL rows by mean-field VI, plus "
            "BDL-warm and BDL-tempered")
    d = _defaults("studies.regression", "RegressionStudy")
    _option(r, d, "--seeds", "data draws per cell")
    _mode_option(r, d, "--tempered-kl", "KL weight of the --paper BDL-tempered row, in (0, 1]",
                 paper=True, type=float)
    _laplace_options(r, d)
    r.set_defaults(func=_run_regression)

    c = studies.add_parser("moons", help="two-moons classification with six priors (example 2)")
    _common(c, paper="every row by the paper's mean-field VI: 50000 epochs (unless --epochs is "
            "given), Adam lr 1e-3")
    d = _defaults("studies.moons", "MoonsStudy")
    _option(c, d, "--seeds", "data draws per cell")
    _option(c, d, "--epochs", "Adam epochs of the mean-field VI fits: the hierarchical Cauchy "
            "row, every row with --paper")
    _laplace_options(c, d)
    c.set_defaults(func=_run_moons)

    w = studies.add_parser("wind", help="wind-pressure fields on a tall building (example 4)")
    _common(w, paper="the paper's sizes 100, 200, ..., 700 and 3 seeds (unless --seeds is "
            "given)")
    w.add_argument("--tpu", metavar="FILE.mat",
                   help="a TPU high-rise database file (default: the shipped synthetic one)")
    d = _defaults("studies.wind", "WindStudy")
    _option(w, d, "--seeds", "training draws per cell")
    _option(w, d, "--epochs", "training epochs")
    w.set_defaults(func=_run_wind)

    rel = studies.add_parser(
        "reliability", help="membrane failure probability and Sobol' indices",
        description="P[w(p1) <= threshold] by FE Monte Carlo, FORM, SORM, importance sampling, "
        "subset simulation and active learning (GP and BDL); Sobol' indices of w(p1), w(p2), "
        "w(p3) from FE runs and from a BDL surrogate.")
    _common(rel, paper="1e6 FE truth runs and 4096 FE Sobol' base samples (unless --n-truth "
            "or --n-sobol is given)")
    d = _defaults("studies.reliability", "ReliabilityStudy")
    _option(rel, d, "--seed", "master seed")
    _option(rel, d, "--n-truth", "FE Monte Carlo truth runs")
    _option(rel, d, "--n-pilot", "FE runs of the pilot that sets the threshold")
    _option(rel, d, "--quantile", "the threshold's quantile of w(p1) in the pilot", type=float)
    rel.add_argument("--max-runs", type=int,
                     help="true-run budget of active learning (default n_truth / 100)")
    _option(rel, d, "--n-sobol", "base samples of the FE Sobol' indices, a power of two")
    _option(rel, d, "--n-sobol-train", "FE runs the BDL of the surrogate Sobol' indices "
            "trains on")
    _option(rel, d, "--max-iter", "L-BFGS iterations of every BDL fit")
    rel.set_defaults(func=_run_reliability)
    _add_calibration(studies)


def _add_calibration(studies):
    cal = studies.add_parser(
        "calibration", help="infer the membrane's inputs from measured deflections",
        description="Synthetic measurements of w at p1, p2, p3 (FE at true inputs drawn from "
        "Table 3, plus noise); the posterior of the inputs by TMCMC with the FE model, with a "
        "BDL surrogate (with and without its predictive variance) and with a GP.")
    _common(cal)
    d = _defaults("studies.calibration", "CalibrationStudy")
    _option(cal, d, "--seed", "seed of the truth, noise, design and samplers")
    _option(cal, d, "--noise", "measurement noise std as a fraction of each deflection",
            type=float)
    _option(cal, d, "--n-measurements", "repeated measurements")
    _option(cal, d, "--n-samples", "TMCMC samples per stage")
    _option(cal, d, "--n-train", "FE runs the surrogates train on")
    _option(cal, d, "--max-iter", "L-BFGS iterations of the BDL fit")
    cal.set_defaults(func=_run_calibration)


class _ByMode(tuple):
    """A setting's default without and with --paper: ``(ours, paper)``."""

    ours = property(lambda self: self[0])
    paper = property(lambda self: self[1])


def _defaults(module, cls):
    """The defaults of a study's settings dataclass, read from it (not repeated here); a field
    of the settings module's ``PAPER_DEFAULTS`` (None in the dataclass: ours, or the paper's
    with --paper) as a :class:`_ByMode`."""
    import dataclasses
    import importlib

    fields = dataclasses.fields(getattr(importlib.import_module(module), cls))
    modes = getattr(importlib.import_module(module + ".settings"), "PAPER_DEFAULTS", {})
    return {f.name: _ByMode(modes[f.name]) if f.name in modes else f.default
            for f in fields if f.default is not dataclasses.MISSING}


def _run_calibration(args):
    return _run_study("calibration", "studies.calibration", "CalibrationStudy", args,
                      seed=args.seed, noise=args.noise, n_measurements=args.n_measurements,
                      n_samples=args.n_samples, n_train=args.n_train, max_iter=args.max_iter)


def _run_reliability(args):
    return _run_study("reliability", "studies.reliability", "ReliabilityStudy", args,
                      fe_first=True, seed=args.seed, n_truth=args.n_truth, n_pilot=args.n_pilot,
                      quantile=args.quantile, max_runs=args.max_runs, n_sobol=args.n_sobol,
                      n_sobol_train=args.n_sobol_train, max_iter=args.max_iter)


def _run_study(name, module, cls, args, fe_first=False, **settings):
    """Build a study's settings and run it. Bad settings, and an output directory that holds
    another study or is in use, are the user's input: a one-line usage error. Anything else
    raised while the study runs is not, and keeps its traceback. A study whose first runs are
    the membrane FE's (``fe_first``) has its pool started before its code is imported
    (:func:`studies.common.warm_fe_pool`), its fork server importing the modules the study
    package names in ``WORKER_MODULES``."""
    import importlib

    from uqkit.cli import check_output_dir

    from .common import check_study_dir, warm_fe_pool

    mod = importlib.import_module(module)
    try:
        study = getattr(mod, cls)(out=args.out, paper=args.paper, workers=args.workers,
                                  progress=not args.no_progress, **settings)
    except ValueError as exc:
        raise UsageError(f"uqkit study {name}: {exc}") from None
    if getattr(study, "dask", None):  # an unreachable scheduler: refused before --out is made
        from uqkit.execution.dask_cluster import dask_client

        try:
            dask_client(study.dask).close()
        except ValueError as exc:
            raise UsageError(f"uqkit study {name}: {exc}") from None
    check_output_dir(args.out, f"uqkit study {name}: --out")
    try:
        check_study_dir(args.out, name)
    except StudyInputError as exc:
        raise UsageError(f"uqkit study {name}: --out {exc}") from None
    if fe_first:
        warm_fe_pool(study, getattr(mod, "WORKER_MODULES", ()))
    try:
        mod.run(study)
    except (StoreMismatchError, StoreBusyError, StoreCorruptError, StudyInputError) as exc:
        raise UsageError(f"uqkit study {name}: {exc}") from None
    except StudyError as exc:
        print(f"uqkit study {name}: {exc}", file=sys.stderr)
        return 1
    return 0


def _run_membrane(args):
    try:
        sizes = tuple(int(s) for s in args.train_sizes.split(","))
    except ValueError:
        raise UsageError(f"uqkit study membrane: --train-sizes must be comma-separated "
                         f"integers, got {args.train_sizes!r}") from None
    return _run_study("membrane", "studies.membrane", "MembraneStudy", args, fe_first=True,
                      seed=args.seed, train_sizes=sizes, n_validation=args.n_validation,
                      n_calibration=args.n_calibration,
                      n_seeds=args.n_seeds, n_uq_train=args.n_uq_train,
                      n_surrogate_mc=args.n_surrogate_mc, n_truth=args.n_truth,
                      dask=args.dask, **_given(args, "epochs", "max_iter"),
                      retry_failed=args.retry_failed, nx=args.nx, ny=args.ny)


def _run_regression(args):
    return _run_study("regression", "studies.regression", "RegressionStudy", args,
                      seeds=args.seeds, **_given(args, "tempered_kl", "max_iter", "restarts"))


def _run_moons(args):
    return _run_study("moons", "studies.moons", "MoonsStudy", args, seeds=args.seeds,
                      epochs=args.epochs, **_given(args, "max_iter", "restarts"))


def _run_wind(args):
    return _run_study("wind", "studies.wind", "WindStudy", args, tpu=args.tpu, seeds=args.seeds,
                      epochs=args.epochs)
