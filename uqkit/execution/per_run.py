"""A Python function of one run's inputs as a uqkit model, whose finished runs survive a
stopped study.

A slow model is most often written for one design point: it writes a solver's input, runs
it, reads the answer. :class:`PerRunModel` turns such a function into a model of the
protocol (:mod:`uqkit.execution.model`) that calls it row by row, so that

* a run that raises fails alone, with its reason and the first traceback, while the others
  count (a vectorised model's whole call would be run again row by row);
* in a study store, each successful run's answer is kept until the store has saved its chunk
  (:mod:`uqkit.execution.kept_runs`), so a study stopped mid-chunk (Ctrl-C, SIGKILL, a lost
  node) makes only the runs that had not finished. A plain Python model's chunk is one call,
  made again whole.

A fast vectorised function (NumPy over the whole array) gains nothing from it: pass the
function itself to :func:`uqkit.propagate`.

Example:
    >>> import numpy as np
    >>> from uqkit import propagate
    >>> def cantilever(P, E):
    ...     '''Tip deflection (m) of a 2 m cantilever, 0.1 x 0.05 m section: P (N), E (Pa).'''
    ...     return 4 * P * 2.0 ** 3 / (E * 0.1 * 0.05 ** 3)
    >>> model = PerRunModel(cantilever, input_names=["P", "E"], output_names=["v"],
    ...                     keywords=True)
    >>> res = propagate(model, np.array([[1000.0, 2.1e11], [1100.0, 2.0e11]]),
    ...                 executor="serial", progress=False)
    >>> res.outputs.ravel().round(6).tolist(), res.output_names
    ([0.01219, 0.01408], ('v',))
"""
import traceback

import numpy as np

from . import kept_runs
from .model import RAISED, ModelOutput, RunContext, normalise_output

__all__ = ["SOURCE_MODULES", "PerRunModel"]

#: The modules whose source decides what a :class:`PerRunModel` gives for a function.
SOURCE_MODULES = ("uqkit.execution.per_run", "uqkit.execution.kept_runs")


class PerRunModel:
    """A function of one run's inputs, run row by row, as a uqkit model (see the module
    docstring).

    Args:
        function: ``function(x)`` with ``x`` the run's inputs, a (d,) float array in the
            order of ``input_names``; or ``function(name=value, ...)`` with
            ``keywords=True``. It returns a number, a sequence of k numbers, or a dict
            ``output name -> number``. A run that raises, or returns NaN or inf, fails with
            its reason and the study goes on. The function is sent to worker processes by
            cloudpickle, like any model.
        input_names: the inputs' names in the order ``x`` holds them (named samples are
            reordered to it); needed with ``keywords=True``.
        output_names: the outputs' names; needed where ``function`` returns a dict. Given,
            every run must return that many outputs.
        keywords: call ``function`` with the inputs as keyword arguments.
        chunk_size: runs per task of a new store (default: :func:`uqkit.propagate`'s). A
            stopped study loses no finished run whatever the chunk size.
        cores_per_run: cores one run takes (a multi-threaded solver): a local pool then
            starts ``cores // cores_per_run`` workers by default.

    Raises:
        ValueError: a bad setting, named with its value.
    """

    takes_context = True

    def __init__(self, function, input_names=None, output_names=None, keywords=False,
                 chunk_size=None, cores_per_run=1):
        from ..validation import check_int

        if not callable(function):
            raise ValueError(f"function must be callable, got {function!r}")
        self.function = function
        self.input_names = None if input_names is None else _names(input_names, "input_names")
        self.output_names = () if output_names is None else _names(output_names,
                                                                   "output_names")
        if keywords and self.input_names is None:
            raise ValueError("keywords=True calls function(name=value, ...): give input_names")
        self.keywords = bool(keywords)
        if chunk_size is not None:
            check_int(chunk_size, "chunk_size", 1)
        check_int(cores_per_run, "cores_per_run", 1)
        self.chunk_size, self.cores_per_run = chunk_size, cores_per_run

    def __getstate__(self):
        """The function as cloudpickle's bytes: by value where cloudpickle sends it so (a
        study file's module), whatever pickles the model. Dask pickles plainly first, by
        reference, and its workers, which cannot import such a module, failed every task
        while the study waited for them. (An unpickled copy's function is rebuilt, and
        marshal's bytes of equal code may differ: its identity may too, and a store refuse
        it. A copy by :mod:`copy` keeps the function itself.)"""
        import cloudpickle

        return {**vars(self), "function": cloudpickle.dumps(self.function)}

    def __copy__(self):
        new = object.__new__(type(self))
        new.__dict__.update(vars(self))
        return new

    def __deepcopy__(self, memo):
        import copy

        new = object.__new__(type(self))
        memo[id(self)] = new
        new.__dict__.update({k: v if k == "function" else copy.deepcopy(v, memo)
                             for k, v in vars(self).items()})
        return new

    def __setstate__(self, state):
        import pickle

        self.__dict__.update(state, function=pickle.loads(state["function"]))

    def __call__(self, X, context=None):
        """Run ``function`` on each row of X (n, d); a :class:`ModelOutput` with each run's
        outputs, status and reason. ``context`` (a :class:`RunContext`) places the rows in a
        study store, whose kept answers are taken instead of running them again."""
        X = np.asarray(X, dtype=float)
        d = None if self.input_names is None else len(self.input_names)
        if X.ndim != 2 or (d is not None and X.shape[1] != d):
            raise ValueError(f"X must be an (n, {d or 'd'}) array"
                             + (f" with columns {self.input_names}" if d else "")
                             + f", got shape {X.shape}")
        if context is None:
            context = RunContext(np.arange(len(X)))
        tracebacks = []

        def run(x, row, k):
            try:
                return self._answer(self._call(x), k), 0, "ok"
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - the run's failure
                # (sys.exit() in a solver's wrapper ended the whole study)
                if not tracebacks:  # the first failure's
                    tracebacks.append(traceback.format_exc())
                return None, RAISED, f"raised {type(exc).__name__}: {exc}"

        answers, kept = kept_runs.take_or_run(
            kept_runs.kept_folder(context.store), X, context.rows, len(self.output_names) or None,
            context.invocation, run)
        out = _output([(values, reason) for values, _, reason in answers],
                      len(self.output_names))
        out.traceback, out.kept = (tracebacks or [""])[0], kept
        return out

    def _call(self, x):
        if self.keywords:
            return self.function(**dict(zip(self.input_names, x.tolist())))
        return self.function(x.copy())  # a function that writes into x leaves the sample be

    def _answer(self, result, k):
        """A run's outputs as a (k,) float array (k: the earlier runs' number, or None)."""
        if result is None:
            raise ValueError("the function returned None (does it return its outputs?)")
        if isinstance(result, dict):
            if not self.output_names:
                raise ValueError(f"the function returned a dict of {sorted(result)}: give "
                                 "output_names, the order of the outputs")
            if set(result) != set(self.output_names):
                raise ValueError(f"the function returned {sorted(result)}, not the "
                                 f"output_names {list(self.output_names)}")
            result = [result[name] for name in self.output_names]
        elif self.output_names and hasattr(result, "keys") and not isinstance(
                result, np.ndarray) and all(isinstance(key, str) for key in result.keys()):
            # a labelled pandas Series: by name (by position swapped its outputs)
            return self._answer(dict(result.items()), k)
        if isinstance(result, (list, tuple)) and any(isinstance(v, (bool, np.bool_))
                                                     for v in result):
            raise ValueError(f"the function returned a bool among its outputs ({result!r:.60}); "
                             "return numbers")
        try:
            values = np.asarray(result)
        except ValueError:  # a ragged sequence
            values = np.asarray(None)
        if np.iscomplexobj(values):
            raise ValueError(f"the function returned complex outputs ({result!r}): return "
                             "real numbers")
        if values.dtype.kind not in "iuf" or values.ndim > 1 or values.size == 0:
            what = (f"an array of shape {values.shape}" if values.ndim > 1 else "no outputs"
                    if values.size == 0 else f"a {type(result).__name__} ({result!r:.60})")
            raise ValueError(f"the function returned {what}; a run returns a number, a flat "
                             "sequence of numbers or a dict of output_names")
        values = values.astype(float).ravel()
        if k is not None and len(values) != k:
            raise ValueError(
                f"returned {len(values)} outputs, not the {k} of output_names "
                f"{list(self.output_names)}" if self.output_names else
                f"returned {len(values)} outputs where an earlier run returned {k}")
        return values

    def rows_saved(self, context):
        """Drop the kept answers of ``context.rows``: the store ``context.store`` has saved
        them (called by :func:`uqkit.propagate`)."""
        kept_runs.drop(kept_runs.kept_folder(context.store), context.rows, parent=True)

    def describe(self):
        """The identity a study store keys the runs by: the function's (its code, what it
        holds and reads, :func:`uqkit.execution.identity.describe_model`) and what decides
        the outputs' meaning: the inputs' and outputs' names and the calling convention.
        ``chunk_size`` and ``cores_per_run`` change how the runs are made, not what they
        give."""
        from .identity import describe_model
        from .sources import source_digest

        return {"per_run": describe_model(self.function),
                "input_names": None if self.input_names is None else list(self.input_names),
                "output_names": list(self.output_names), "keywords": self.keywords,
                "source": source_digest(SOURCE_MODULES)}


def _output(rows, k):
    """The :class:`ModelOutput` of ``rows``' (values or None, reason), of the runs' number of
    outputs (``k`` where none has values): a run without values raised; a non-finite one is
    flagged by :func:`normalise_output`."""
    k = next((len(v) for v, _ in rows if v is not None), k)
    values = np.full((len(rows), k), np.nan)
    for i, (row_values, _) in enumerate(rows):
        if row_values is not None:
            values[i] = row_values
    status = np.array([0 if v is not None else RAISED for v, _ in rows], dtype=np.int64)
    reasons = np.array([r for _, r in rows], dtype=str)
    return normalise_output((values, status, reasons), len(rows))


def _names(names, what):
    if isinstance(names, str):
        raise ValueError(f"{what} must be a sequence of names, got the string {names!r}")
    names = tuple(str(n) for n in names)
    if not names or len(set(names)) != len(names):
        raise ValueError(f"{what} must be distinct names, at least one, got {list(names)}")
    return names
