"""``uqkit run CONFIG.toml``: a study of an external program (or a Python function of one
run) from one file.

Registered with the ``uqkit`` command through the ``uqkit.commands`` entry point. It samples
the inputs, runs the model over them with a resumable store (rerun the same command after an
interruption: only the missing runs are computed), and writes to ``--out``:

* ``store/``: the runs (``store/runs/``: the kept run directories);
* ``runs.csv``: inputs, outputs, status and reason, one row per run;
* ``summary.json``: each output's mean, standard deviation, skewness, quantiles with their
  Monte Carlo errors, and the failures;
* ``sobol.json`` and ``failure.json`` when the file asks for them (their runs in
  ``sobol-store/`` and ``failure-store/``, a folder per analysis's settings).

Once the store is open and its runs made (or the run stopped partway), the result files of
an earlier run are removed, so that none is left stale beside the new ones; a store refused
for other settings, or in use, leaves them. A bad file or option exits
with code 2 and one line naming the bad value; a study whose every run failed, or whose
failure analysis did not converge, with code 1.

May import the rest of :mod:`uqkit`.
"""
import hashlib
import json
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..execution.cache import write_json
from ..cli import UsageError, check_output_dir

__all__ = ["RESULT_FILES", "RETRY_CHOICES", "add_run", "run"]

#: The files of ``--out`` made from the stores, removed at a run's start.
RESULT_FILES = ("runs.csv", "summary.json", "sobol.json", "failure.json")
#: ``--retry-failed``'s choices (:func:`uqkit.propagate`'s ``retry_failed``).
RETRY_CHOICES = ("errors", "all", "none")


def add_run(sub):
    """Register ``uqkit run``."""
    p = sub.add_parser("run", help="run an external program over samples from a TOML file",
                       description="Sample the inputs of CONFIG.toml, run its model (an "
                       "external program on templated input files, or a Python function of "
                       "one run) over them, and write the "
                       "runs, their statistics and the asked analyses to --out. See "
                       "uqkit.external.config for the file's format.")
    p.add_argument("config", metavar="CONFIG.toml", help="the study file")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--n", type=int,
                   help="Monte Carlo runs (default: the file's [sampling] n, else 100)")
    p.add_argument("--seed", type=int, help="sampling seed (default: the file's, else 0)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int,
                       help="local processes (default: cores // the model's cores_per_run)")
    where.add_argument("--dask", metavar="ADDRESS", help="a Dask scheduler's address instead")
    p.add_argument("--retry-failed", choices=RETRY_CHOICES, default="errors",
                   help="which failed runs in --out a rerun makes again: errors (a run that "
                   "raised, default), all (also a timeout or a program's exit code) or none")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args):
    """The ``uqkit run`` command; returns the exit code."""
    from ..reliability.result import ConvergenceError

    try:
        return _run(args)
    except ValueError as exc:  # a store of other samples or settings, or in use, ...
        raise UsageError(f"uqkit run: {exc}") from None
    except ConvergenceError as exc:  # its message says what to change
        print(f"uqkit run: [failure] {exc}", file=sys.stderr)
        return 1


def _run(args):
    from .config import ConfigError, load_config

    if not args.out.strip():
        raise UsageError("uqkit run: --out must name a directory, got an empty string")
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise UsageError(f"uqkit run: {exc}") from None
    sampling = dict(config.sampling)
    for key in ("n", "seed"):
        if getattr(args, key) is not None:
            sampling[key] = getattr(args, key)
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"uqkit run: --workers must be >= 1, got {args.workers}")
    out = Path(args.out)
    template = getattr(config.model, "template", None)
    folder = getattr(template, "path", None)
    if folder is not None and folder.is_dir() and out.resolve().is_relative_to(folder):
        raise UsageError(f"uqkit run: --out {args.out!r} is inside the template folder "
                         f"{str(folder)!r}: each run would copy the earlier runs' files, and a "
                         "rerun would find another template; write --out outside it")
    from .. import sample

    given = [f"--{key}" for key in ("n", "seed") if getattr(args, key) is not None]
    try:
        samples = sample(config.inputs, sampling["n"], sampling["rule"], sampling["seed"])
    except ValueError as exc:
        where = f"{config.path}: [sampling]" + (f" (with {' and '.join(given)} from the "
                                                "command line)" if given else "")
        raise UsageError(f"uqkit run: {where} {exc}") from None
    from ..execution.result import export_clashes

    clash = export_clashes(config.inputs.names, config.model.output_names)
    if clash:  # runs.csv could not hold them: refused before any run
        raise UsageError(f"uqkit run: {config.path}: the names {clash} would be two columns of "
                         "runs.csv (an output named like an input, or an input or output "
                         "named 'status' or 'reason', runs.csv's own): rename them")
    with _cluster(args.dask) as client:  # an unreachable scheduler: refused before --out
        check_output_dir(out, "uqkit run: --out")  # made once nothing is refused before runs
        if client is not None:  # the study's own modules go to the cluster's workers by value
            from .config import send_by_value

            send_by_value(config.path.parent.resolve())
        execution = {"workers": args.workers, "dask": client, "progress": not args.no_progress}
        return _propagate_and_report(args, config, samples, sampling, out, execution)


@contextmanager
def _cluster(address):
    """None without ``--dask``, else a client connected to the scheduler at ``address``, for
    the runs and both analyses, closed at the end (ValueError naming an address that does
    not answer, :class:`~uqkit.execution.dask_cluster.MissingDependencyError` without
    ``distributed``)."""
    if not address:
        yield None
        return
    from ..execution.dask_cluster import dask_client

    client = dask_client(address)
    try:
        yield client
    finally:
        client.close()


def _propagate_and_report(args, config, samples, sampling, out, execution):
    """Run the samples into ``out``'s store, write and print the runs' files and statistics,
    then the asked analyses; the exit code."""
    from .. import propagate
    from ..execution.propagation import PropagationError, PropagationInterrupted

    try:
        res = propagate(config.model, samples, store=out / "store",
                        settings={"seed": sampling["seed"], "rule": sampling["rule"]},
                        retry_failed=args.retry_failed, **execution)
    except (PropagationInterrupted, PropagationError):
        # the store holds runs the earlier result files do not: they would be stale (a
        # refused store, ValueError, leaves them, which still describe it)
        _remove_results(out)
        raise
    _remove_results(out)  # an earlier run's: remade below, or of an analysis not asked for
    res.to_csv(out / "runs.csv")
    summary = _summary(res)
    write_json(out / "summary.json", summary, finite=True)
    print(res.summary())
    _print_statistics(summary)
    from ..inputs.sampling import ALIASES

    rule = ALIASES.get(str(sampling["rule"]).lower(), str(sampling["rule"]).lower())
    if rule != "random" and summary["ok"] > 1:
        print(f"(+-: the standard error of {summary['ok']} independent draws, std/sqrt(n); "
              f"that of this {rule} sample is usually smaller)")
    if not res.ok.any():  # no statistics and no analysis: a failed study, not a result
        reason, count = res.failures().most_common(1)[0]
        print(f"uqkit run: error: every one of the {len(res.status)} runs failed ({count} x "
              f"{reason}; reasons in {out / 'runs.csv'})", file=sys.stderr)
        return 1
    if res.n_failed:  # before the analyses, which may stop on the failures themselves
        print(f"uqkit run: warning: {res.n_failed} of {len(res.status)} runs failed (reasons "
              f"in {out / 'runs.csv'}); the statistics are over the runs that succeeded, "
              "which is biased if failures depend on the inputs", file=sys.stderr)
    # an analysis that cannot be made for failed runs says so; the other is still made
    done = [config.sobol is None or _analysis(_sobol, "sobol", config, out, execution),
            config.failure is None or _analysis(_failure, "failure", config, out, execution)]
    return 0 if all(done) else 1


#: What to do where an analysis stopped on failed runs, per analysis.
FAILED_RUNS_REMEDY = {
    "sobol": "Sobol' indices need every run of their sample: make the program succeed there "
             "(or narrow the inputs to where it does) and rerun, which keeps the finished runs",
    "failure": "a failure probability needs every run's output: make the program succeed "
               "there, or, where a run fails as the structure collapses, count failed runs "
               "as failures (failed_runs = \"failure\" in [failure], every method but "
               "active), and rerun, which keeps the finished runs",
}


def _analysis(make, name, config, out, execution):
    """Make one analysis (``make``: :func:`_sobol` or :func:`_failure`); False, with a message
    on stderr, where it stopped on failed runs (the runs and other files stay written)."""
    from ..execution.runner import FailedRunsError

    try:
        make(config, out, execution)
    except FailedRunsError as exc:
        print(f"uqkit run: [{name}] not made: {exc}. {FAILED_RUNS_REMEDY[name]}",
              file=sys.stderr)
        return False
    return True


def _remove_results(out):
    """Remove the result files (:data:`RESULT_FILES`) of an earlier run from ``out``."""
    for name in RESULT_FILES:
        (out / name).unlink(missing_ok=True)


def _summary(res):
    from ..statistics import describe

    good = res.good_outputs()
    stats = {}
    for j, name in enumerate(res.output_names):
        stats[name] = describe(good[:, j]) if len(good) > 1 else None
    return {"runs": len(res.status), "ok": int(res.ok.sum()), "failed": res.n_failed,
            "computed": res.computed, "loaded": res.loaded, "kept": res.kept,
            "failures": dict(res.failures().most_common()), "outputs": stats}


def _print_statistics(summary):
    print(f"{'output':>12} {'mean':>12} {'+-':>10} {'std':>12} {'q05':>12} {'q95':>12}")
    for name, s in summary["outputs"].items():
        if s is None:
            print(f"{name:>12}  (fewer than two successful runs)")
            continue
        q = s["quantiles"]
        print(f"{name:>12} {s['mean']:12.6g} {s['mean_se']:10.3g} {s['std']:12.6g} "
              f"{q['0.05']:12.6g} {q['0.95']:12.6g}")


def _sobol(config, out, execution):
    from ..execution.runner import FailedRunsError
    from ..sensitivity import sobol_indices

    settings = config.sobol
    # a store per settings: another n, seed or replicates is another sample, refused in one
    # store
    replicates = settings["replicates"]
    store = out / "sobol-store" / (f"n{settings['n']}-seed{settings['seed']}"
                                   + (f"-r{replicates}" if replicates else ""))
    try:
        s = sobol_indices(config.model, config.inputs, n=settings["n"],
                          bootstrap=settings["bootstrap"], replicates=replicates,
                          seed=settings["seed"], store=store, **execution)
    except FailedRunsError:  # a ValueError, said as one by _analysis
        raise
    except ValueError as exc:
        raise ValueError(f"[sobol] {exc}") from None
    write_json(out / "sobol.json", s.to_dict(), finite=True)
    names = config.model.output_names
    for j, output in enumerate(names):
        first = s.first if s.first.ndim == 1 else s.first[:, j]
        total = s.total if s.total.ndim == 1 else s.total[:, j]
        print(f"Sobol' indices of {output} ({s.model_runs} runs): " + ", ".join(
            f"{name} {f:.3f}/{t:.3f}" for name, f, t in zip(s.names, first, total))
            + " (first/total)")


def _failure(config, out, execution):
    from ..execution.runner import FailedRunsError
    from ..reliability import failure_probability
    from .config import FAILURE_KEYS, Margin

    settings = config.failure
    column = config.model.output_names.index(settings["output"])
    g = Margin(config.model, column, below=settings.get("below"), above=settings.get("above"))
    options = {k: v for k, v in settings.items() if k not in FAILURE_KEYS}
    # a store per settings: another limit or method is another analysis, refused in one store
    # (failed_runs reads the same runs another way: the rerun that adds it keeps them)
    runs = {k: v for k, v in settings.items() if k != "failed_runs"}
    key = hashlib.sha256(json.dumps(runs, sort_keys=True, default=str).encode())
    store = out / "failure-store" / f"{settings['method']}-{key.hexdigest()[:12]}"
    try:
        r = failure_probability(g, config.inputs, method=settings["method"],
                                seed=settings["seed"], store=store, **execution, **options)
    except FailedRunsError:  # a ValueError, said as one by _analysis
        raise
    except ValueError as exc:
        raise ValueError(f"[failure] {exc}") from None
    write_json(out / "failure.json", {**r.to_dict(), "settings": settings}, finite=True)
    side = f"< {settings['below']}" if "below" in settings else f"> {settings['above']}"
    ci = f" [{r.ci[0]:.3g}, {r.ci[1]:.3g}]" if np.isfinite(r.ci).all() else ""
    counted = r.info.get("failed_runs")
    counted = f"; {counted} failed runs counted as failures" if counted else ""
    print(f"P[{settings['output']} {side}] = {r.pf:.4g}{ci} by {r.method} "
          f"({r.model_runs} runs{counted})")
