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
from dataclasses import dataclass

import numpy as np

#: Status of a row whose model call raised an exception.
RAISED = -2


@dataclass
class ModelOutput:
    """Outputs of a model on n rows: values (n, k), status (n,), reasons (n,)."""

    values: np.ndarray
    status: np.ndarray
    reasons: np.ndarray

    @property
    def ok(self):
        return self.status == 0


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
    """Run ``model`` on the rows X; if the call raises, run row by row so that one bad row is
    recorded with its reason and the others still count."""
    X = np.asarray(X, dtype=float)
    try:
        return normalise_output(model(X), len(X))
    except Exception:  # noqa: BLE001 - isolated below, row by row
        pass
    rows = []
    for x in X:
        try:
            rows.append(normalise_output(model(x[None, :]), 1))
        except Exception as exc:  # noqa: BLE001 - recorded as the row's reason
            rows.append(ModelOutput(np.full((1, 0), np.nan), np.array([RAISED]),
                                    np.array([f"raised {type(exc).__name__}: {exc}"])))
    k = max(r.values.shape[1] for r in rows)
    values = np.full((len(X), k), np.nan)
    for i, r in enumerate(rows):
        if r.values.shape[1] == k:
            values[i] = r.values[0]
    return ModelOutput(values, np.concatenate([r.status for r in rows]),
                       np.concatenate([r.reasons for r in rows]))


def fingerprint(obj):
    """SHA-256 of an object's pickle (its parameters, weights, bound arguments), or of its
    source code when it cannot be pickled; None when neither is available."""
    import hashlib
    import inspect
    import pickle

    try:
        return hashlib.sha256(pickle.dumps(obj)).hexdigest()
    except Exception:  # noqa: BLE001 - lambdas, closures, open handles
        pass
    try:
        return hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()
    except (OSError, TypeError):
        return None


def describe_model(model):
    """A JSON-friendly identity of a model for the study store: its ``describe()`` if it has
    one, else its name with a :func:`fingerprint`, so that a store never mixes the results of
    two differently configured models."""
    if hasattr(model, "describe"):
        return model.describe()
    name = getattr(model, "__qualname__", type(model).__qualname__)
    return {"model": f"{getattr(model, '__module__', '?')}.{name}",
            "fingerprint": fingerprint(model)}
