"""Helpers shared by the studies: cached parallel tasks, locking, figures and reports, and
the FE pool started early."""
import os
import sys

import numpy as np

from uqkit.execution.cache import ResultCache, cached_map, write_json

__all__ = ["RUNTIME", "SHARED_CODE", "cache_settings", "check_mode_settings", "locked",
           "StudyError",
           "StudyInputError", "code_modules", "code_version", "study_cache", "run_tasks",
           "pyplot", "save_figure", "figure_section", "write_reports", "best_by_evidence",
           "fit_restarts", "evidence_choice", "fe_model", "warm_fe_pool", "MARKER",
           "apply_paper_defaults",
           "study_of", "check_study_dir", "claim_study_dir"]


#: Study settings that say where and how runs execute, not what they compute.
RUNTIME = ("out", "workers", "dask", "progress", "retry_failed")


def cache_settings(study, version, ignore=()):
    """What a study's cached results depend on: its settings (a dataclass) without
    :data:`RUNTIME` and ``ignore`` (settings that only add or drop cells, such as the number of
    seeds), plus a ``cell_version`` to bump when a cell's content changes."""
    from dataclasses import asdict

    drop = set(RUNTIME) | set(ignore)
    return dict({k: v for k, v in asdict(study).items() if k not in drop}, cell_version=version)


def check_mode_settings(study, paper_only=(), default_only=()):
    """Refuse a setting that the study's mode ignores: one of ``paper_only`` (the paper's
    training alone uses it) set to other than its default without ``study.paper``, or one of
    ``default_only`` (the default training's) with it. Each was ignored without a word:
    ``RegressionStudy(paper=True, restarts=3)`` fitted each BDL once, and
    ``MembraneStudy(epochs=50)`` trained as before.

    Raises:
        ValueError: naming the settings and the mode that would ignore them.
    """
    from dataclasses import fields

    defaults = {f.name: f.default for f in fields(study)}
    ignored = [name for name in (default_only if study.paper else paper_only)
               if getattr(study, name) != defaults[name]]
    if ignored:
        given = ", ".join(f"{name}={getattr(study, name)!r}" for name in ignored)
        if study.paper:
            raise ValueError(f"{given}: the default (Laplace) BDL fits' setting, which paper=True "
                             "(--paper) replaces by the paper's training, would be ignored")
        raise ValueError(f"{given}: the paper's training's setting, which runs only with "
                         "paper=True (--paper), would be ignored")


def apply_paper_defaults(study, defaults):
    """Set each setting of ``defaults`` (name -> (ours, the paper's)) that ``study`` leaves
    None to ours, or to the paper's where ``study.paper``: a value given always wins."""
    for name, (ours, papers) in defaults.items():
        if getattr(study, name) is None:
            setattr(study, name, papers if study.paper else ours)


def locked(run):
    """Decorate a study's ``run(study, ...)``: it holds the lock of ``study.out`` while it
    runs, so that two runs never write one output directory (the second is refused with a
    message naming the first), and claims the directory for its study, the package it is
    defined in (:func:`claim_study_dir`: another study's output directory is refused)."""
    import functools

    from uqkit.execution.store import directory_lock

    name = run.__module__.split(".")[-2]

    @functools.wraps(run)
    def wrapper(study, *args, **kwargs):
        with directory_lock(study.out):
            claim_study_dir(study.out, name)
            return run(study, *args, **kwargs)

    return wrapper


#: The file of an output directory that names the study whose output it holds.
MARKER = ".uqkit-study"


#: The title (first line) of each study's report.md, which names the study of an output
#: directory that an older uqkit wrote without a :data:`MARKER`.
REPORT_TITLES = {"# Membrane UQ study": "membrane", "# Regression benchmark": "regression",
                 "# Two moons": "moons", "# Wind pressure": "wind",
                 "# Membrane reliability": "reliability", "# Calibration study": "calibration"}


def study_of(out):
    """The study whose output directory ``out`` is: the name in its :data:`MARKER`, else the
    study its ``report.md`` title names (an older uqkit's output), else None (no such
    directory, or none of a study's output recognised)."""
    try:
        with open(os.path.join(out, MARKER)) as fh:
            return fh.read().strip() or None
    except OSError:
        pass
    try:
        with open(os.path.join(out, "report.md")) as fh:
            title = fh.readline()
    except (OSError, UnicodeDecodeError):
        return None
    return next((n for t, n in REPORT_TITLES.items() if title.startswith(t)), None)


def check_study_dir(out, name):
    """Refuse an output directory that holds another study's output (:func:`study_of`): the
    second study would overwrite the first one's report. The same study's directory is
    resumed; a directory of no recognised study is taken as it is.

    Raises:
        StudyInputError: naming both studies.
    """
    other = study_of(out)
    if other is not None and other != name:
        raise StudyInputError(f"{out!r} holds the output of the {other} study; give the "
                              f"{name} study another --out")


def claim_study_dir(out, name):
    """:func:`check_study_dir`, then mark ``out`` (created if needed) as the output of the
    study ``name`` (its :data:`MARKER`)."""
    check_study_dir(out, name)
    path = os.path.join(out, MARKER)
    if not os.path.isfile(path):
        os.makedirs(out, exist_ok=True)
        with open(path, "w") as fh:
            fh.write(name + "\n")


def fe_model(nx=20, ny=10):
    """The studies' membrane FE model on an ``nx`` x ``ny`` mesh (a study's ``nx`` and ``ny``
    settings): the Table-3 inputs, w at the paper's probes taken as mesh points
    (``probe_frame="relative"``)."""
    from uqkit.adapters import MembraneModel

    return MembraneModel(nx=nx, ny=ny, probe_frame="relative")


def warm_fe_pool(study, preload=()):
    """Start the local pool of a study whose first runs are the membrane FE's (its
    ``workers``, ``dask``, ``nx`` and ``ny`` settings), each worker loading the solver
    (:meth:`uqkit.adapters.MembraneModel.warm_up` of :func:`fe_model`), while this process
    imports the rest of
    the study: the command line's start-up (:func:`uqkit.execution.executors.warm_pool`).
    Nothing with Dask or one worker, nor when the output directory ``study.out`` holds
    anything: a rerun may need no FE run at all (every store complete), and a directory in
    use is refused by the study's lock. (A review measured a rerun whose results were all
    stored, 16 workers on 2 cores: 10-17 s with a warm-up, 3.3-3.5 s without.) ``preload``:
    the modules the study's workers will import, for the pool's fork server
    (:func:`uqkit.execution.executors.local_executor`)."""
    from uqkit.execution.executors import warm_pool

    if study.dask or (os.path.isdir(study.out) and os.listdir(study.out)):
        return []
    return warm_pool(study.workers, fe_model(study.nx, study.ny).warm_up,
                     preload=("uqkit.adapters", *preload))


class StudyError(RuntimeError):
    """A study cannot go on (its FE runs failed, say): the message says why."""


class StudyInputError(ValueError):
    """Data the user gave a study (a file, say) is unusable: the message names it."""


#: The code every study's cached results may depend on, beside the study's own package: the
#: surrogates, uqkit (statistics, metrics of propagation, the analyses) and these helpers
#: (``fit_restarts`` picks the restart a cached fit keeps). The FE solver's code keys its
#: runs' stores instead (:data:`uqkit.adapters.FEM_SOLVER_MODULES`).
SHARED_CODE = ("surrogates", "uqkit", "studies.common")


def code_modules(*modules):
    """The modules whose source keys a study's cache: the packages of :data:`SHARED_CODE` and
    each named module, a package with every module inside it at any depth (a subpackage's
    ``__init__`` alone would miss a changed trainer in ``surrogates/meanfield/``). Found on
    disk, not imported. A study names its whole package: naming one module of it missed the
    code that computes its tasks (an edit of ``studies/membrane/tasks.py`` halving R^2 was
    served the old tables)."""
    from uqkit.execution.sources import package_modules

    return [m for name in dict.fromkeys((*SHARED_CODE, *modules)) for m in package_modules(name)]


def code_version(*modules):
    """A hash of the source of the :data:`SHARED_CODE` packages and the named modules
    (:func:`code_modules`): the code a study's cached results depend on, so that a changed
    trainer or study retrains instead of reusing stale fits."""
    from uqkit.execution.sources import source_digest

    return source_digest(code_modules(*modules))


def study_cache(study):
    """The study's :class:`uqkit.execution.cache.ResultCache` (``DIR/cache``)."""
    return ResultCache(os.path.join(study.out, "cache"))


def run_tasks(study, fn, tasks, version, ignore=(), desc="tasks", extra=None, log=None):
    """Compute, or load from the study's cache, ``fn(payload)`` for every ``name -> payload``
    of ``tasks`` on ``study.workers`` processes. Each result is keyed by the study's
    :func:`cache_settings`, ``extra`` settings, the :func:`code_version` of the surrogates and
    of ``fn``'s study package (every module of it), and the task's name, so a run with other
    settings or code computes its own results beside the old ones. Without progress bars
    (``study.progress`` false) ``log``, if given, gets a line as each task is saved. Returns
    ``({name: result}, number computed)``."""
    module = sys.modules[fn.__module__]
    base = dict(cache_settings(study, version, ignore), **(extra or {}),
                code=code_version(module.__package__ or fn.__module__))
    return cached_map(fn, {name: (dict(base, task=name), payload)
                           for name, payload in tasks.items()},
                      study_cache(study), study.workers, study.progress, desc, log=log)


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, out, name, dpi, rect=None):
    """Lay out ``fig`` (within ``rect``, figure fractions, if given), write it to
    ``out/name`` at ``dpi`` and close it; returns the path."""
    fig.tight_layout(rect=rect)
    path = os.path.join(out, name)
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path


def figure_section(figures):
    """Markdown lines linking a report's figures (name -> path)."""
    return ["", "## Figures", ""] + [f"![{k}]({os.path.basename(v)})" for k, v in figures.items()]


def write_reports(out, report, markdown, log=print):
    """Write ``out/report.json`` (atomically; figure paths relative to it) and
    ``out/report.md``; log where they are."""
    if "figures" in report:
        report["figures"] = {k: os.path.relpath(v, out) for k, v in report["figures"].items()}
    write_json(os.path.join(out, "report.json"), report, finite=True)  # strict: NaN as null
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write(markdown)
    log(f"report: {os.path.join(out, 'report.md')}")


def best_by_evidence(evidence):
    """The index of the highest finite evidence (``np.argmax`` took a NaN for the highest,
    and ``max`` kept a NaN that came first); 0 where none is finite.

    >>> best_by_evidence([-10.0, float("nan"), 5.0]), best_by_evidence([float("nan")] * 2)
    (2, 0)
    """
    values = np.asarray(evidence, dtype=float)
    finite = np.isfinite(values)
    return int(np.argmax(np.where(finite, values, -np.inf))) if finite.any() else 0


def fit_restarts(make, datasets, restarts):
    """Fit ``restarts`` Laplace BDLs per data set, ``make(i, r)`` building the r-th estimator
    of data set i (its seed differing per restart), all as one :func:`surrogates.fit_many`
    program; keep, per data set, the restart with the highest Laplace evidence
    (``log_evidence_``, the log marginal likelihood of the training data; never held-out
    data). The training objective is not comparable between restarts: a hierarchical prior's
    integrated penalty falls without bound as the weights shrink, so a fit collapsed to a
    constant can have the lowest objective (measured: regression at sigma = 0.9, objective
    0.50 collapsed against 2.3-3.4 fitted), while the evidence charges the collapse its misfit.
    Other estimators, such as mean-field ones, are fitted once (``restarts=1``).

    Returns:
        ``(models, records)``: the chosen models and, per data set, a dict of per-restart
        lists ``log_evidence`` and ``objective`` (NaN for a mean-field fit) and the index
        ``chosen``.
    """
    from surrogates import fit_many

    ests = [make(i, r) for i in range(len(datasets)) for r in range(restarts)]
    fit_many(ests, [datasets[i] for i in range(len(datasets)) for _ in range(restarts)])
    chosen, records = [], []
    for i in range(len(datasets)):
        group = ests[i * restarts:(i + 1) * restarts]
        laplace = hasattr(group[0], "laplace_")
        evidence = [m.log_evidence_ if laplace else float("nan") for m in group]
        objective = [m.laplace_.objective if laplace else float("nan") for m in group]
        best = best_by_evidence(evidence) if laplace else 0
        chosen.append(group[best])
        records.append({"log_evidence": evidence, "objective": objective, "chosen": best})
    return chosen, records


def evidence_choice(cells, metrics):
    """Let the evidence choose among candidate models fitted to the same data draws.

    Args:
        cells: ``{candidate: [cell per draw]}``, each cell a dict with ``log_evidence`` and
            the ``metrics``.
        metrics: names of the held-out scores to report for the chosen candidates.

    Returns:
        ``{"chosen": [candidate per draw], "log_evidence": {candidate: [per draw]}, metric:
        [the chosen candidate's score per draw] ..., metric + "_best": [the best score
        any candidate reached per draw] ...}``: the control that shows whether the evidence
        ranked the candidates as held-out data would.
    """
    names = list(cells)
    draws = len(cells[names[0]])
    evidence = {n: [float(cells[n][i]["log_evidence"]) for i in range(draws)] for n in names}
    chosen = [names[best_by_evidence([evidence[n][i] for n in names])] for i in range(draws)]
    out = {"chosen": chosen, "log_evidence": evidence}
    for m in metrics:
        out[m] = [float(cells[c][i][m]) for i, c in enumerate(chosen)]
        out[m + "_best"] = [max(float(cells[n][i][m]) for n in names) for i in range(draws)]
    return out
