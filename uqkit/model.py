"""The model protocol: a callable from an (n, d) array to (n, k) outputs.

A model may return
    * an (n, k) array (or (n,) for one output),
    * a tuple ``(outputs, status)`` with an (n,) integer status (0 = ok), or
    * a tuple ``(outputs, status, reasons)`` with n strings explaining non-zero statuses.

Rows with a non-zero status are kept and counted, never dropped. Optional attributes:
``input_names`` (column order the model expects; :func:`uqkit.propagate` reorders named
samples to it), ``output_names`` and ``describe()`` (a JSON-friendly identity used by the
study store to refuse mixing results of different models).
"""
import hashlib
import inspect
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np

#: Status of a row whose model call raised an exception.
RAISED = -2
#: Status of a row that never reached the model: the infrastructure failed (a worker died, the
#: task could not be sent). Such rows are not results: they are never stored, and a rerun
#: computes them.
INFRASTRUCTURE = -3


@dataclass
class ModelOutput:
    """Outputs of a model on n rows: values (n, k), status (n,), reasons (n,).

    ``batch_error`` is the exception (``"Type: message"``) with which the call on the whole
    batch failed, if it did, and ``rows_rerun`` the rows then run one by one; ``seconds`` the
    wall time of the evaluation.
    """

    values: np.ndarray
    status: np.ndarray
    reasons: np.ndarray
    batch_error: str = ""
    rows_rerun: int = 0
    seconds: float = 0.0

    @property
    def ok(self):
        return self.status == 0


def stack_values(blocks, statuses, what="chunks"):
    """Stack (m_i, k_i) output blocks into one (sum m_i, k) array.

    Every row that succeeded must have the same width k; a block whose rows all failed may be
    narrower (a row that raised has no outputs at all) and is padded with NaN.

    Raises:
        ValueError: successful rows disagree on the number of outputs.
    """
    widths = {b.shape[1] for b, s in zip(blocks, statuses) if (np.asarray(s) == 0).any()}
    if len(widths) > 1:
        raise ValueError(f"the model returned different numbers of outputs for successful "
                         f"{what}: {sorted(widths)}; a model must return the same outputs for "
                         "every row")
    k = widths.pop() if widths else max(b.shape[1] for b in blocks)
    return np.concatenate([b if b.shape[1] == k else np.full((len(b), k), np.nan)
                           for b in blocks])


def normalise_output(raw, n):
    """Turn whatever a model returned for n rows into a :class:`ModelOutput`."""
    status = reasons = None
    if isinstance(raw, tuple):
        if len(raw) not in (2, 3):
            raise ValueError(f"a model returns outputs, (outputs, status) or (outputs, status, "
                             f"reasons); got a tuple of {len(raw)}")
        raw, status, *rest = raw
        reasons = rest[0] if rest else None
    values = np.asarray(raw, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2 or values.shape[0] != n:
        raise ValueError(f"the model returned outputs of shape {values.shape} for {n} rows; "
                         f"expected (n, k) with n = {n}")
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
    failed = status != 0
    if failed.any():  # a failed row's outputs are not results: never pass them on as numbers
        values = values.copy()
        values[failed] = np.nan
    return ModelOutput(values, status, reasons)


def evaluate(model, X):
    """Run ``model`` on the rows X.

    If the call on the whole batch raises, the rows are run one by one, so that one bad row is
    recorded with its reason and the others still count. That fallback is never silent: the
    result carries the exception (``batch_error``) and the number of rows re-run, which
    :func:`uqkit.propagate` logs and counts in its summary.
    """
    X = np.asarray(X, dtype=float)
    t0 = time.perf_counter()
    try:
        out = normalise_output(model(X), len(X))
        out.seconds = time.perf_counter() - t0
        return out
    except Exception as exc:  # noqa: BLE001 - isolated below, row by row
        batch_error = f"{type(exc).__name__}: {exc}"
    rows = []
    for x in X:
        try:
            rows.append(normalise_output(model(x[None, :]), 1))
        except Exception as exc:  # noqa: BLE001 - recorded as the row's reason
            rows.append(ModelOutput(np.full((1, 0), np.nan), np.array([RAISED]),
                                    np.array([f"raised {type(exc).__name__}: {exc}"])))
    values = stack_values([r.values for r in rows], [r.status for r in rows], "rows")
    return ModelOutput(values, np.concatenate([r.status for r in rows]),
                       np.concatenate([r.reasons for r in rows]), batch_error=batch_error,
                       rows_rerun=len(X), seconds=time.perf_counter() - t0)


def _versions(module_name):
    """``{distribution: version}`` of the installed distributions providing the top-level
    package of ``module_name`` (empty for a script or a notebook)."""
    from importlib import metadata

    top = module_name.split(".")[0]
    out = {}
    for dist in metadata.packages_distributions().get(top, []):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:  # pragma: no cover - broken install
            pass
    return out


def source_digest(module_names):
    """SHA-256 of the source code of the named modules (in the given order); None if any has
    no readable source."""
    h = hashlib.sha256()
    for name in module_names:
        module = sys.modules.get(name)
        if module is None:
            import importlib

            module = importlib.import_module(name)
        try:
            h.update(inspect.getsource(module).encode())
        except (OSError, TypeError):
            return None
    return h.hexdigest()


def _code_digest(target):
    """SHA-256 of the bytecode of a function (its closure and defaults included) or of every
    function of a class; None for anything without Python bytecode."""
    import marshal
    import pickle

    funcs = [target] if inspect.isfunction(target) else (
        [v for _, v in sorted(vars(target).items()) if inspect.isfunction(v)]
        if inspect.isclass(target) else [])
    if not funcs:
        return None
    h = hashlib.sha256()
    for f in funcs:
        h.update(marshal.dumps(f.__code__))
        for value in [*(f.__defaults__ or ()), *(c.cell_contents for c in f.__closure__ or ())]:
            try:
                h.update(pickle.dumps(value, protocol=4))
            except Exception:  # noqa: BLE001 - a lambda in a closure: its code
                h.update((_code_digest(value) or repr(type(value))).encode())
    return h.hexdigest()


def fingerprint(obj):
    """A strong identity of a model object, as a dict.

    It hashes, so that a store never mixes results of two different models:

    * the object's state, pickled (its parameters, weights, bound arguments);
    * the bytecode of the function, or of the methods of the object's class (a function in a
      notebook, a lambda or a closure has no other identity: a plain pickle holds functions
      and classes by name only);
    * the source of the module that defines it (a changed function body or class attribute
      changes it);
    * the versions of the installed packages that provide that module.

    ``strong`` is False when neither bytecode nor the module's source could be had (a
    callable written in C, say); :func:`describe_model` then warns.
    """
    import pickle

    target = obj if (inspect.isfunction(obj) or inspect.isclass(obj)) else type(obj)
    module = getattr(target, "__module__", None) or "?"
    try:
        state = pickle.dumps(obj, protocol=4)
    except Exception:  # noqa: BLE001 - lambdas, closures: identified by their code below
        state = b""
    code = _code_digest(target)
    source = source_digest([module]) if module in sys.modules else None
    h = hashlib.sha256()
    for part in (state, code or "", source or "", repr(sorted(_versions(module).items()))):
        h.update(hashlib.sha256(part if isinstance(part, bytes) else part.encode()).digest())
    return {"sha256": h.hexdigest(), "module": module,
            "strong": code is not None or source is not None}


def describe_model(model):
    """A JSON-friendly identity of a model for the study store: its ``describe()`` if it has
    one, else its qualified name with a :func:`fingerprint`.

    Warns when no strong identity can be had (no source code to hash, nothing to pickle):
    then a changed model would reuse old results, and the warning says how to name it.
    """
    if hasattr(model, "describe"):
        return model.describe()
    target = model if (inspect.isfunction(model) or inspect.isclass(model)) else type(model)
    name = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}"
    fp = fingerprint(model)
    if not fp["strong"]:
        warnings.warn(f"uqkit cannot identify the model {name} strongly (no source code or "
                      "pickle): a store would not notice if it changed. Give it a describe() "
                      "method that returns a dict naming its version and settings",
                      stacklevel=3)
    return {"model": name, "fingerprint": fp["sha256"]}
