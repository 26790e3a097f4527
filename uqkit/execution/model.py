"""The model protocol: a callable from an (n, d) array to (n, k) outputs.

A model may return
    * an (n, k) array (or (n,) for one output),
    * a tuple ``(outputs, status)`` with an (n,) integer status (0 = ok), or
    * a tuple ``(outputs, status, reasons)`` with n strings explaining non-zero statuses.

Rows with a non-zero status are kept and counted, never dropped. Optional attributes:
``input_names`` (column order the model expects; :func:`uqkit.propagate` reorders named
samples to it), ``output_names``, ``describe()`` (a JSON-friendly identity used by the
study store to refuse mixing results of different models), and for models that run programs:

* ``takes_context = True``: the model is called as ``model(X, context=RunContext(...))``,
  which tells it where its rows sit in the sample and which store the run writes (an
  external program's run directories are named by the row and kept beside the store);
* ``cores_per_run``: cores one row's evaluation occupies (a multi-threaded solver); a local
  pool then starts ``cores // cores_per_run`` workers by default;
* ``chunk_size``: rows per task of a new store (small for slow models, so that a killed run
  loses little);
* ``rows_saved(context)``: called in the propagating process once the rows of ``context``
  are saved in the store ``context.store``, for a model that keeps each run's answer until
  then (:class:`uqkit.external.ExternalModel` and
  :class:`uqkit.execution.per_run.PerRunModel`, so that a study stopped mid-chunk does not
  make its finished runs again: :mod:`uqkit.execution.kept_runs`).
"""
import time
from dataclasses import dataclass

import numpy as np

# a model's identity has a module of its own; its names stay importable from here
from .identity import describe_model, fingerprint, identity_key  # noqa: F401
from .sources import _versions, source_digest  # noqa: F401

__all__ = ["RAISED", "RunContext", "call_model", "ModelOutput", "stack_values", "by_name",
           "check_output_names", "normalise_output", "evaluate"]

#: Status of a row whose model call raised an exception or returned non-finite outputs.
RAISED = -2


@dataclass(frozen=True)
class RunContext:
    """Where the rows of one model call sit: ``rows`` (m,) are their indices in the sample
    being propagated, ``store`` the study store's directory (None without a store),
    ``invocation`` a token of the propagation they belong to (an answer a model kept in this
    one is not an interrupted run's: :func:`uqkit.execution.kept_runs.take`)."""

    rows: np.ndarray
    store: str | None = None
    invocation: str = ""

    def __getitem__(self, index):
        """The context of a subset of the rows."""
        return RunContext(np.atleast_1d(self.rows[index]), self.store, self.invocation)


def call_model(model, X, context=None):
    """``model(X)``, or ``model(X, context=context)`` for a model that ``takes_context``
    (a missing context is then the rows 0..n-1 without a store)."""
    if not getattr(model, "takes_context", False):
        return model(X)
    if context is None:
        context = RunContext(np.arange(len(X)))
    return model(X, context=context)


@dataclass
class ModelOutput:
    """Outputs of a model on n rows: values (n, k) ((n,) for one output), status (n,),
    reasons (n,).

    ``batch_error`` is the exception (``"Type: message"``) with which the call on the whole
    batch failed, if it did, ``rows_rerun`` the rows then run one by one and ``traceback``
    the traceback of the first row that raised; ``seconds`` the wall time of the evaluation;
    ``kept`` the rows whose answers the model took from those an interrupted run had kept
    (:mod:`uqkit.execution.kept_runs`) instead of running them; ``boolean`` whether the
    model answered True/False (a failure indicator where a limit state's margin is asked
    for). It unpacks and indexes as
    the ``(outputs, status, reasons)`` a model may return.

    >>> values, status, reasons = ModelOutput(np.ones((2, 1)), np.zeros(2), np.array(["ok"] * 2))
    >>> values.shape, status.tolist()
    ((2, 1), [0.0, 0.0])
    """

    values: np.ndarray
    status: np.ndarray
    reasons: np.ndarray
    batch_error: str = ""
    rows_rerun: int = 0
    seconds: float = 0.0
    traceback: str = ""
    kept: int = 0
    boolean: bool = False  # the model answered True/False, not numbers

    @property
    def ok(self):
        """(n,) True where the run succeeded (status 0)."""
        return self.status == 0

    def __iter__(self):
        return iter((self.values, self.status, self.reasons))

    def __getitem__(self, index):
        return (self.values, self.status, self.reasons)[index]

    def __len__(self):
        return 3


def stack_values(blocks, statuses, what="chunks", width=None):
    """Stack (m_i, k_i) output blocks into one (sum m_i, k) array.

    Every row that succeeded must have the same width k; a block whose rows all failed may be
    narrower (a row that raised has no outputs at all) and is padded with NaN. Where no row
    succeeded, k is ``width`` (the model's number of output names) if given, else the widest
    block's.

    Raises:
        ValueError: successful rows disagree on the number of outputs.
    """
    widths = {b.shape[1] for b, s in zip(blocks, statuses) if (np.asarray(s) == 0).any()}
    if len(widths) > 1:
        raise ValueError(f"the model returned different numbers of outputs for successful "
                         f"{what}: {sorted(widths)}; a model must return the same outputs for "
                         "every row")
    k = widths.pop() if widths else width or max(b.shape[1] for b in blocks)
    return np.concatenate([b if b.shape[1] == k else np.full((len(b), k), np.nan)
                           for b in blocks])


def check_output_names(names):
    """``names`` as a tuple, or a ValueError naming those it holds twice: their columns would
    share a name, and a summary or an analysis would read one of them for both.

    >>> check_output_names(["u_0", "u_1", "u_0"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: output names ['u_0'] appear more than once in ('u_0', 'u_1', 'u_0'); ...
    """
    names = tuple(names)
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"output names {twice} appear more than once in {names}; an output of "
                         "size m is the columns name_0 .. name_{m-1}, so rename one")
    return names


def by_name(raw, output_names):
    """A table of outputs by name (a DataFrame, a dict of columns) as its columns in the
    order of ``output_names``: by position, a DataFrame of columns q, p gave p's values as
    q's. Anything else comes back as it is. A table whose every column is True/False comes
    back as a bool array, which :func:`normalise_output` flags (as floats, a failure
    indicator was read as 1 and 0 without a word); any other as floats.

    Raises:
        ValueError: the table lacks a name of ``output_names``, or has no names to go by.
    """
    if isinstance(raw, tuple) and raw:  # (outputs, status[, reasons])
        return (by_name(raw[0], output_names), *raw[1:])
    columns = list(raw.columns) if hasattr(raw, "columns") else list(raw) \
        if isinstance(raw, dict) else None
    if columns is None:
        return raw
    if hasattr(raw, "columns") and not all(isinstance(c, str) for c in columns):
        return _numbers(raw)  # unnamed columns (0, 1, ...): by position
    if not output_names:
        if isinstance(raw, dict):
            raise ValueError(f"the model returned a dict of outputs {columns} but has no "
                             "output_names to order them by: give the model output_names")
        return _numbers(raw)
    missing = [name for name in output_names if name not in columns]
    if missing:
        raise ValueError(f"the model returned outputs {columns} but its output_names are "
                         f"{tuple(output_names)}: {missing} missing")
    # True/False columns stay bool (for normalise_output to flag), the others are floats
    return np.column_stack([_numbers(raw[name]) for name in output_names])


def _numbers(table):
    """``table`` (a DataFrame, a column) as a bool array where all of it is True/False, else
    as floats (a pandas nullable column's NA as NaN)."""
    values = np.asarray(table)
    return values if values.dtype == bool else np.asarray(table, dtype=float)


def normalise_output(raw, n, k=None):
    """Turn whatever a model returned for n rows into a :class:`ModelOutput` (a model of
    uqkit's own, :class:`uqkit.execution.per_run.PerRunModel`, returns one already). With
    ``k`` (the model's number of output names), rows of another number of outputs fail with
    that reason: a one-column answer of a two-output model was written out as blanks."""
    if isinstance(raw, ModelOutput):  # checked as the tuple it holds; its traceback kept
        out = normalise_output((raw.values, raw.status, raw.reasons), n, k)
        out.traceback, out.kept = raw.traceback, raw.kept
        return out
    status = reasons = None
    if isinstance(raw, tuple):
        if len(raw) not in (2, 3):
            raise ValueError(f"a model returns outputs, (outputs, status) or (outputs, status, "
                             f"reasons); got a tuple of {len(raw)}")
        raw, status, *rest = raw
        reasons = rest[0] if rest else None
        codes = np.asarray(status)
        if codes.dtype.kind not in "iub" and not (
                codes.dtype.kind == "f" and np.isfinite(codes).all()
                and np.array_equal(codes, np.round(codes))):
            raise ValueError(f"the model returned a tuple whose second item (of dtype "
                             f"{codes.dtype}, not whole numbers) is read as the runs' status, "
                             "which is integer codes (0 = ok); for two outputs return "
                             "np.column_stack([y1, y2])")
    values = np.asarray(raw)
    if np.iscomplexobj(values):  # float() would drop the imaginary part without a word
        raise ValueError(f"the model returned complex outputs (dtype {values.dtype}): return "
                         "real numbers, the real part or the magnitude as you mean it")
    boolean = values.dtype == bool
    values = values.astype(float)
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2 or values.shape[0] != n:
        hint = ("; one row per output? return one row per run: np.column_stack([y1, y2, ...])"
                if values.ndim == 2 and values.shape[1] == n else "")
        raise ValueError(f"the model returned outputs of shape {values.shape} for {n} rows; "
                         f"expected (n, k) with n = {n}{hint}")
    status = np.zeros(n, dtype=np.int64) if status is None else np.asarray(status, np.int64)
    if status.shape != (n,):
        raise ValueError(f"the model returned a status of shape {status.shape}; expected ({n},)")
    if reasons is None:
        reasons = np.array(["ok" if s == 0 else f"model status {s}" for s in status.tolist()],
                           dtype=str)
    reasons = np.asarray(reasons, dtype=str)
    if reasons.shape != (n,):
        raise ValueError(f"the model returned reasons of shape {reasons.shape}; expected ({n},),"
                         " one per row")
    # a NaN output without a failure status is a failure all the same: flag it, never hide it
    nan_rows = (status == 0) & ~np.isfinite(values).all(axis=1)
    if nan_rows.any():
        status = status.copy()
        status[nan_rows] = RAISED
        reasons = reasons.astype(object)
        reasons[nan_rows] = "non-finite output"
        reasons = reasons.astype(str)
    if k is not None and values.shape[1] != k and (status == 0).any():
        reasons = np.where(status == 0, f"the model returned {values.shape[1]} outputs for "
                           f"its {k} output_names", reasons).astype(str)
        status = np.where(status == 0, RAISED, status)
        values = np.full((n, k), np.nan)
    failed = status != 0
    if failed.any():  # a failed row's outputs are not results: never pass them on as numbers
        values = values.copy()
        values[failed] = np.nan
    return ModelOutput(values, status, reasons, boolean=bool(boolean))


def _transposed(model, X, context, raw):
    """Whether the square (n, n) array a model returned for n > 1 rows holds one row per output
    (``np.vstack([y1, y2])``, ``[y1, y2]``), which no shape check can tell from one row per
    run: its answer for the first row alone is then (n, 1), one row per output. Costs one
    further call of the model, on one row, only for a square plain array."""
    def plain(answer):  # the outputs of an answer, or None where they are not a plain array
        values = answer[0] if isinstance(answer, tuple) and len(answer) in (2, 3) else answer
        return values if isinstance(values, (np.ndarray, list)) else None

    n = len(X)
    if n < 2 or np.shape(plain(raw)) != (n, n):
        return False
    try:
        one = call_model(model, X[:1], None if context is None else context[0])
    except (Exception, SystemExit):  # noqa: BLE001 - no evidence either way; the rows stand
        return False
    return np.shape(plain(one)) == (n, 1)


def evaluate(model, X, context=None):
    """Run ``model`` on the rows X (with ``context``, a :class:`RunContext`, for a model that
    takes one).

    If the call on the whole batch raises (or calls ``sys.exit()``), the rows are run one by
    one, so that one bad row is recorded with its reason and the others still count. That
    fallback is never silent: the result carries the exception (``batch_error``) and the
    number of rows re-run, which :func:`uqkit.propagate` logs and counts in its summary.
    """
    X = np.array(X, dtype=float)  # a copy: a model that writes into X leaves the sample be
    names = tuple(getattr(model, "output_names", None) or ())
    k = len(names) or None
    t0 = time.perf_counter()
    try:
        raw = call_model(model, X, context)
        out = normalise_output(by_name(raw, names), len(X), k)
        if _transposed(model, X, context, raw):
            raise ValueError(f"the model returned its outputs as a ({len(X)}, {len(X)}) array "
                             "one row per output, as its one-row answer shows; return (n, k), "
                             "one row per run: np.column_stack([y1, y2, ...])")
        out.seconds = time.perf_counter() - t0
        return out
    # sys.exit() in a model (a solver's wrapper giving up) is a failure of its rows, as in
    # PerRunModel, not the end of the study; a Ctrl-C (KeyboardInterrupt) still stops it
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - isolated below, row by row
        batch_error = f"{type(exc).__name__}: {exc}"
    import traceback

    rows, first_traceback = [], ""
    for i, x in enumerate(X):
        try:
            row_context = None if context is None else context[i]
            rows.append(normalise_output(by_name(call_model(model, x[None, :], row_context),
                                                 names), 1, k))
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - recorded as the row's reason
            first_traceback = first_traceback or traceback.format_exc()
            # no outputs, as many as the model names (a batch of such rows has its columns)
            rows.append(ModelOutput(np.full((1, k or 0), np.nan), np.array([RAISED]),
                                    np.array([f"raised {type(exc).__name__}: {exc}"])))
    values = stack_values([r.values for r in rows], [r.status for r in rows], "rows", k)
    return ModelOutput(values, np.concatenate([r.status for r in rows]),
                       np.concatenate([r.reasons for r in rows]), batch_error=batch_error,
                       rows_rerun=len(X), seconds=time.perf_counter() - t0,
                       traceback=first_traceback, kept=sum(r.kept for r in rows),
                       boolean=any(r.boolean for r in rows))
