"""Each finished run's answer, kept on disk until the study store has saved its chunk.

A study store saves whole chunks of runs (:mod:`uqkit.execution.store`), so a study stopped
mid-chunk (Ctrl-C, SIGKILL, a lost node) would make that chunk's finished runs again. A model
whose runs are slow enough to matter (an FE program, :class:`uqkit.external.ExternalModel`;
a Python function of one run, :class:`uqkit.execution.per_run.PerRunModel`) keeps each
successful run's answer here instead, and takes it back rather than run it again; once the
store has saved the chunk, :func:`uqkit.propagate` calls the model's ``rows_saved``, which
drops the files (:func:`drop`).

On-disk format, one folder per store::

    STORE/runs/.finished/NNNNNN.json   {"inputs": [x_1, ..., x_d], "outputs": [y_1, ..., y_k],
                                        "invocation": TOKEN}

named by the run's row in the propagated sample (:func:`run_name`); ``TOKEN`` names the
propagation that made the run (:class:`uqkit.execution.model.RunContext`'s ``invocation``;
absent where the run had none, outside a propagation, and in earlier versions' files), so
that :func:`take` tells an interrupted run's answer from one this propagation kept itself (a
batch that raised and is run again row by row takes its own answers back: they were
computed now). A file is written whole to ``.NNNNNN.tmp`` and renamed into place, without
fsync: a lost answer is only a run made again, and a half-written ``.tmp`` left by a kill is
dropped with its row. JSON writes a float by its shortest repr, which reads back to the
same float, so a kept answer is bit for bit the run's. A run is taken from its file only
when the file holds the very same inputs and ``k`` finite outputs; failed runs are never
kept (a rerun makes them again, as the store's ``retry_failed`` asks). The store's
manifest has checked the model's identity before any of this is read.

Example:
    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> folder = kept_folder(tempfile.mkdtemp())
    >>> keep(folder, 7, np.array([0.1, 2.0]), np.array([1 / 3]))
    >>> recall(folder, 7, np.array([0.1, 2.0]), 1)
    array([0.33333333])
    >>> recall(folder, 7, np.array([0.1, 2.5]), 1) is None  # other inputs: run it
    True
    >>> drop(folder, [7]); folder.exists()
    False
"""
import json
import os
import warnings
from pathlib import Path

import numpy as np

__all__ = ["FINISHED", "RUN_DIGITS", "run_name", "kept_folder", "keep", "take", "recall",
           "take_or_run", "drop"]

#: The folder, inside a store's ``runs/``, of the answers that wait for their chunk.
FINISHED = ".finished"
#: Digits of a run's name (more when the row index needs them).
RUN_DIGITS = 6


def run_name(row):
    """The name of row ``row``'s run (its directory, its kept answer).

    >>> run_name(42), run_name(1234567)
    ('000042', '1234567')
    """
    return f"{int(row):0{RUN_DIGITS}d}"


def kept_folder(store):
    """The folder of ``store``'s kept answers: None without a store, or where the store is
    not on this machine's disks (a Dask worker without the shared file system: its answers
    could not reach the store, and nothing would remove them)."""
    if store is None or not Path(store).is_dir():
        return None
    return Path(store) / "runs" / FINISHED


#: The folders whose answers could not be written, warned about once each.
_unwritable = set()


def keep(folder, row, x, values, invocation=""):
    """Write the answer ``values`` (k,) of a successful run of row ``row`` with inputs ``x``
    (d,), made by the propagation ``invocation``, to ``folder`` (nothing where ``folder`` is
    None). An answer that cannot be written (a full disk, no permission) is only a run made
    again after a stop: a warning, once per folder, and the run counts."""
    if folder is None:
        return
    name = run_name(row)
    answer = {"inputs": np.asarray(x, float).tolist(),
              "outputs": np.asarray(values, float).tolist()}
    body = json.dumps(dict(answer, invocation=str(invocation)) if invocation else answer)
    try:
        for attempt in range(3):  # the parent removes the folder once no answer waits there
            try:  # (between mkdir's "exists" and its check that a folder is there, too)
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f".{name}.tmp").write_text(body)
                os.replace(folder / f".{name}.tmp", folder / f"{name}.json")
                return
            except (FileNotFoundError, FileExistsError):
                if attempt == 2:
                    raise
    except OSError as exc:
        if str(folder) not in _unwritable:
            _unwritable.add(str(folder))
            warnings.warn(f"uqkit: cannot keep finished runs' answers in {folder} ({exc}); "
                          "the runs count, but a study stopped before their chunk is saved "
                          "makes them again", RuntimeWarning, stacklevel=2)


def recall(folder, row, x, k):
    """The ``k`` outputs (any number where ``k`` is None) of a successful run of row ``row``
    with inputs ``x`` kept in ``folder``, or None (no such run, other inputs, an unreadable
    file)."""
    return take(folder, row, x, k)[0]


def take(folder, row, x, k, invocation=""):
    """``(outputs, earlier)``: :func:`recall`'s outputs, and whether a propagation other than
    ``invocation`` kept them (an interrupted one; True where either token is unknown), which
    the caller counts as taken rather than run (``ModelOutput.kept``).

    >>> import tempfile
    >>> folder = kept_folder(tempfile.mkdtemp())
    >>> keep(folder, 3, np.array([1.0]), np.array([2.0]), invocation="a")
    >>> take(folder, 3, np.array([1.0]), 1, "a"), take(folder, 3, np.array([1.0]), 1, "b")
    ((array([2.]), False), (array([2.]), True))
    """
    if folder is None:
        return None, False
    try:
        with open(folder / f"{run_name(row)}.json") as fh:
            kept = json.load(fh)
    except (OSError, ValueError):
        return None, False
    if not isinstance(kept, dict):
        return None, False
    try:
        inputs = np.asarray(kept.get("inputs"), dtype=float)
        outputs = np.asarray(kept.get("outputs"), dtype=float)
    except (TypeError, ValueError):
        return None, False
    x = np.asarray(x, float)
    # bit for bit (JSON keeps a float's repr), a NaN input the same input (NaN != NaN)
    if inputs.shape != x.shape or not np.array_equal(inputs, x, equal_nan=True):
        return None, False
    shape_ok = outputs.ndim == 1 and len(outputs) > 0 and (k is None or len(outputs) == k)
    if not (shape_ok and np.isfinite(outputs).all()):
        return None, False
    return outputs, not invocation or kept.get("invocation") != str(invocation)


def take_or_run(folder, X, rows, k, invocation, run):
    """Each row's answer, one row at a time: its kept one where ``folder`` holds it
    (:func:`take`), else ``run(x, row, k)``'s ``(values or None, status, reason)``, whose
    successful, finite answer is kept at once (the next run may never end). ``k``: the
    number of outputs, or None until the first answer gives it.

    Returns:
        ``(answers, earlier)``: each row's ``(values or None, status, reason)``, and the
        number of answers an earlier (interrupted) propagation had kept.

    >>> import tempfile
    >>> folder = kept_folder(tempfile.mkdtemp())
    >>> keep(folder, 0, np.array([1.0]), np.array([2.0]), invocation="stopped")
    >>> twice = lambda x, row, k: (2 * x, 0, "ok")
    >>> take_or_run(folder, np.array([[1.0], [3.0]]), [0, 1], 1, "now", twice)
    ([(array([2.]), 0, 'ok'), (array([6.]), 0, 'ok')], 1)
    >>> take(folder, 1, np.array([3.0]), 1, "now")  # kept at once, by this propagation
    (array([6.]), False)
    """
    answers, earlier_count = [], 0
    for x, row in zip(X, rows):
        values, earlier = take(folder, int(row), x, k, invocation)
        if values is not None:
            answers.append((values, 0, "ok"))
            k, earlier_count = len(values), earlier_count + earlier
            continue
        values, status, reason = run(x, int(row), k)
        if status == 0 and values is not None:
            k = len(values)
            if np.isfinite(values).all():
                keep(folder, int(row), x, values, invocation)
        answers.append((values, status, reason))
    return answers, earlier_count


def drop(folder, rows, parent=False):
    """Remove the kept answers of ``rows`` (saved by the store now), and the folder once it
    is empty (and its parent ``runs/`` too, when ``parent`` and empty: a model that makes no
    run directories there). Looks through the few files kept, not through the rows (a whole
    sample's, once the store is complete)."""
    if folder is None or not folder.is_dir():
        return
    rows = set(np.asarray(rows, dtype=np.int64).ravel().tolist())
    for entry in os.scandir(folder):  # NAME.json, or .NAME.tmp where a kill cut one short
        name = entry.name.removeprefix(".").split(".")[0]
        if name.isdigit() and int(name) in rows:
            Path(entry.path).unlink(missing_ok=True)
    try:
        folder.rmdir()  # once no worker keeps a run there
        if parent:
            folder.parent.rmdir()
    except OSError:
        pass
