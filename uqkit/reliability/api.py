"""``failure_probability``: one entry point over every method, its options checked by name.

Imports: numpy, :mod:`uqkit.execution.runner`, :mod:`uqkit.validation` and every estimator
module of the package.
"""
import inspect
import time
import warnings

import numpy as np

from ..execution.runner import ModelRunner
from ..validation import check_seed
from .active import active_learning
from .form import form, sorm
from .limit_state import LimitState
from .result import ReliabilityResult
from .simulation import importance_sampling, monte_carlo
from .subset import subset_simulation

__all__ = ["METHODS", "FAILED_RUNS", "COUNTING_METHODS", "method_options",
           "failure_probability"]

#: The methods by name.
METHODS = {"mc": monte_carlo, "form": form, "sorm": sorm, "is": importance_sampling,
           "subset": subset_simulation, "active": active_learning}


def method_options(method):
    """The names of the options that :func:`failure_probability` takes for ``method``.

    >>> method_options("mc")
    ['n', 'level', 'batch', 'target_cov', 'max_runs']
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {tuple(METHODS)}")
    func = METHODS[method]
    allowed = [p.name for p in inspect.signature(func).parameters.values()
               if p.kind is p.POSITIONAL_OR_KEYWORD and p.name not in ("ls", "rng")]
    if func in (sorm, importance_sampling):  # they pass FORM's options on
        allowed += [p for p in inspect.signature(form).parameters if p not in ("ls", "rng")]
    return allowed


#: Why a limit state that answers True/False is refused: read as 1 and 0, its True (failed)
#: is a safe margin, and Pf came out as 1 - Pf (0.921 for 0.079).
BOOLEAN_G = ("g returned True/False: a limit state is a margin, <= 0 where the structure "
             "fails (capacity - demand, say); a failure indicator read as 1 and 0 counts "
             "the safe runs as failures. Return a margin, or 1.0 - fails as floats if an "
             "indicator is all there is")
#: ``failed_runs`` choices of :func:`failure_probability`.
FAILED_RUNS = ("raise", "failure")
#: The methods that may count a failed run as a failure (g = -inf). Monte Carlo's, subset
#: simulation's and importance sampling's draws take only g <= 0 from a run. FORM takes a
#: failed line-search trial for a step too far and a failed finite-difference point for a
#: reason to difference on the other side, and stops
#: (:class:`~uqkit.reliability.result.ConvergenceError`) only where an iterate's gradient has
#: no side left; SORM runs its curvature points again just inside the safe side where one
#: failed, and refuses by name where one fails still. The active learner's surrogate needs
#: every run's value.
COUNTING_METHODS = ("mc", "form", "sorm", "is", "subset")


def failure_probability(g, inputs, method="mc", seed=0, system=None, executor="local",
                        workers=None, dask=None, chunk_size=None, store=None, progress=False,
                        failed_runs="raise", **options):
    """Failure probability P[g(X) <= 0] of a limit state over random inputs.

    Args:
        g: a uqkit model, (n, d) -> (n,) or (n, k) (k > 1 needs ``system``).
        inputs: :class:`uqkit.inputs.RandomInputs` (any joint, copulas included).
        method: ``"mc"``, ``"form"``, ``"sorm"``, ``"is"``, ``"subset"`` or ``"active"``.
        seed: seed of every random draw (the same seed gives the same Pf for any executor).
        system: ``"series"`` or ``"parallel"`` for a g with several outputs.
        executor, workers, dask, chunk_size, progress: as in :func:`uqkit.propagate`.
        store: a directory; each batch of model runs is stored in a sub-directory, so a
            killed analysis resumes without recomputing.
        failed_runs: ``"raise"`` (a run that fails stops the analysis with
            :class:`~uqkit.execution.runner.FailedRunsError`, naming it), or ``"failure"``
            (every method but ``active``: a run that fails counts as a failure, g = -inf;
            the conservative reading of a solver that stops as the structure collapses). The
            count is ``info["failed_runs"]`` (with the FORM search's, where there is one),
            and a warning says it. The FORM search (of ``form``, ``sorm`` and ``is``) steps
            back from a failed trial point and differences on the other side of a failed
            finite-difference point; it stops with ``ConvergenceError`` only where it has
            no side left (start it elsewhere, ``u0=``, or pass ``form_result=``). SORM
            runs its curvature points again just inside the safe side where one failed,
            and refuses by name where one fails still.
        **options: the method's options: ``mc``: n, level, batch, target_cov, max_runs;
            ``form``: u0, tol, max_iter, fd, fd_step, max_halvings, algorithm; ``sorm``:
            form_result, formula, hessian_step and FORM's; ``is``: n, level, form_result,
            target_cov, max_runs, batch and FORM's (both:
            :mod:`uqkit.reliability.simulation`); ``subset``: target_cov, max_runs, n, p0, ...:
            see :func:`uqkit.reliability.subset.subset_simulation`; ``active``: see
            :func:`uqkit.reliability.active.active_learning`.

    Returns:
        :class:`ReliabilityResult`.

    Example:
        >>> from uqkit.inputs import RandomInputs
        >>> inputs = RandomInputs.from_spec({"u1": "normal(0, 1)", "u2": "normal(0, 1)"})
        >>> r = failure_probability(lambda X: 3 - X.sum(1) / 2 ** 0.5, inputs, method="mc",
        ...                         n=200_000, seed=1, executor="serial")
        >>> r.ci[0] < 1.3499e-3 < r.ci[1], r.model_runs       # exact Phi(-3) = 1.3499e-3
        (True, 200000)
    """
    from ..inputs.random_inputs import check_inputs

    t0 = time.perf_counter()
    check_inputs(inputs)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {tuple(METHODS)}")
    check_seed(seed)
    func = METHODS[method]
    allowed = method_options(method)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for method {method!r}; options: "
                         f"{allowed}")
    if failed_runs not in FAILED_RUNS:
        raise ValueError(f"failed_runs must be one of {FAILED_RUNS}, got {failed_runs!r}")
    if failed_runs == "failure" and method not in COUNTING_METHODS:
        raise ValueError(f"failed_runs='failure' is for the methods {COUNTING_METHODS}, not "
                         f"{method!r}, which needs every run's value of g")
    runner = ModelRunner(g, inputs, executor, workers, dask, chunk_size, store,
                         settings={"analysis": "reliability", "method": method, "seed": seed},
                         progress=progress,
                         failed_value=-np.inf if failed_runs == "failure" else None,
                         refuse_boolean=BOOLEAN_G)
    with runner:
        ls = LimitState(runner, inputs, system)
        fields = func(ls, np.random.default_rng(seed), **options)
    extra = fields.pop("extra_runs", 0)
    fields.setdefault("info", {})["computed_runs"] = runner.computed
    if failed_runs == "failure":
        fields["info"]["failed_runs"] = runner.failed
        if runner.failed:
            warnings.warn(f"{runner.failed} of {runner.runs} runs failed and were counted as "
                          "failures (failed_runs='failure'): Pf is an upper estimate where "
                          "runs fail for other reasons than the structure's", UserWarning,
                          stacklevel=2)
    return ReliabilityResult(model_runs=runner.runs + extra, method=method,
                             seconds=time.perf_counter() - t0, **fields)
