"""The result of :func:`uqkit.propagate`: every run's inputs, outputs, status and reason,
with the run's counts and costs, its summary and its exports (CSV, DataFrame).

Imports: numpy and :mod:`uqkit.inputs.sampling`.
"""
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..inputs.sampling import Samples

__all__ = ["SUMMARY_REASONS", "RUN_DIR", "RUN_DIR_NOTE", "reason_kind", "export_clashes",
           "PropagationResult"]

#: Distinct failure reasons that :meth:`PropagationResult.summary` lists one by one.
SUMMARY_REASONS = 10


#: What a failure reason names its run's directory by (an external program's run:
#: :class:`uqkit.external.ExternalModel`), and where it stands in the reason.
RUN_DIR = "<run dir>"
#: The run directory's note in a failure reason, `` (run dir ...)``, which
#: :func:`reason_kind` removes so that reasons of many runs count as one.
RUN_DIR_NOTE = re.compile(r" \(run dir [^()]*\)")


def reason_kind(reason):
    """A failure reason without its run's own directory, by which like failures count
    together (:meth:`PropagationResult.failures`).

    >>> reason_kind("exit code 1 (run dir /s/runs/000007, removed): <run dir>/deck.inp: bad")
    'exit code 1: <run dir>/deck.inp: bad'
    """
    return RUN_DIR_NOTE.sub("", reason)


def export_clashes(input_names, output_names):
    """The names that an export of the runs (:meth:`PropagationResult.to_csv`,
    ``to_dataframe``) cannot hold: inputs named ``status`` or ``reason`` (its own columns),
    and outputs named like an input or those.

    >>> export_clashes(("a", "status"), ("a", "y", "reason"))
    ['status', 'a', 'reason']
    """
    own = {"status", "reason"}
    taken = {*input_names, *own}
    return [name for name in input_names if name in own] + \
        [name for name in output_names if name in taken]


@dataclass
class PropagationResult:
    """Outputs of :func:`propagate` for n rows.

    Attributes:
        inputs: the :class:`uqkit.inputs.sampling.Samples` that were run.
        outputs: (n, k) model outputs (NaN where a row failed).
        status: (n,) int, 0 for a good row.
        reasons: (n,) str, why a row failed ("ok" otherwise).
        computed: model runs computed in this invocation (retried rows included).
        loaded: model runs loaded from the study store.
        kept: model runs whose answers an interrupted invocation had kept
            (:mod:`uqkit.execution.kept_runs`), taken instead of run again; ``computed +
            loaded + kept`` is every run.
        seconds: wall time of this invocation.
        output_names: names of the output columns, if the model gave them.
        compute_seconds: summed wall time of the model evaluations of every row, loaded ones
            included (one worker's time; divide by the workers for a parallel run's share).
        rows_rerun: rows run one by one after the model raised on their whole batch.
        batch_errors: Counter of the exceptions with which whole batches failed.
        seconds_per_run: the median over the chunks of their evaluation's wall time per row
            (NaN where no chunk has a time): the cost of one run on one worker, which a
            worker's first chunk (its imports, a JIT cache loaded: a second or more), counted
            in ``compute_seconds``, does not skew.
        boolean_outputs: whether the model answered True/False in a chunk computed now.
    """

    inputs: Samples
    outputs: np.ndarray
    status: np.ndarray
    reasons: np.ndarray
    computed: int
    loaded: int
    seconds: float
    output_names: tuple = field(default=())
    compute_seconds: float = 0.0
    rows_rerun: int = 0
    batch_errors: Counter = field(default_factory=Counter)
    seconds_per_run: float = float("nan")
    boolean_outputs: bool = False
    kept: int = 0

    @property
    def ok(self):
        """(n,) True where the run succeeded (status 0)."""
        return self.status == 0

    @property
    def n_failed(self):
        """The number of runs that failed."""
        return int((self.status != 0).sum())

    def good_outputs(self):
        """(n_ok, k) outputs of the rows that succeeded."""
        return self.outputs[self.ok]

    def failures(self):
        """Counter of failure reasons, each without the run's own directory (an external
        program's ``(run dir ...)``, :func:`reason_kind`): every run's reason differed by
        it, and 40 runs that failed alike were counted as 40 reasons."""
        return Counter(reason_kind(r) for r in self.reasons[~self.ok].tolist())

    def _export_outputs(self):
        """(names, (n, k) values) of the outputs to export: the model's output names, the
        values padded with NaN where every run failed and so none has outputs."""
        names = self.output_names or tuple(f"y{j}" for j in range(self.outputs.shape[1]))
        values = self.outputs
        if values.shape[1] < len(names) and not self.ok.any():
            values = np.full((len(values), len(names)), np.nan)
        if values.shape[1] != len(names):
            raise ValueError(f"{values.shape[1]} outputs but {len(names)} output names "
                             f"{tuple(names)}: the columns would be mislabelled")
        clash = export_clashes(self.inputs.names, names)
        if clash:  # a DataFrame column of that name would be overwritten
            raise ValueError(f"the names {clash} would be two columns of the export (an "
                             "output named like an input, or an input or output named "
                             "'status' or 'reason', its own): rename them to export the runs")
        return names, values

    def columns(self):
        """The column names of :meth:`to_csv`: inputs, outputs, ``status``, ``reason``."""
        return (*self.inputs.names, *self._export_outputs()[0], "status", "reason")

    def to_csv(self, path):
        """Write one row per run: inputs, outputs (empty where a run failed), status and
        reason, under a header of their names."""
        import csv

        columns, values = self.columns(), self._export_outputs()[1]  # refused before writing
        with open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(columns)
            for x, y, s, r in zip(self.inputs.values, values, self.status, self.reasons):
                writer.writerow([*map(repr, x.tolist()),
                                 *("" if v != v else repr(v) for v in y.tolist()), int(s), r])

    def to_dataframe(self):
        """The runs as a pandas DataFrame, columns as :meth:`to_csv` (pandas is optional)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_dataframe needs pandas (pip install pandas); to_csv does "
                              "not") from None
        out_names, values = self._export_outputs()
        frame = pd.DataFrame(self.inputs.values, columns=list(self.inputs.names))
        for j, name in enumerate(out_names):
            frame[name] = values[:, j]
        frame["status"], frame["reason"] = self.status, self.reasons
        return frame

    def summary(self):
        """A few lines for a person: runs ok and failed, computed and loaded, and the
        commonest failure reasons (at most :data:`SUMMARY_REASONS`)."""
        n = len(self.status)
        lines = [f"{n} runs: {n - self.n_failed} ok, {self.n_failed} failed; "
                 f"{self.computed} computed now, {self.loaded} loaded from the store"
                 + (f", {self.kept} kept by an interrupted run" if self.kept else "")
                 + f"; {self.seconds:.1f} s"]
        failures = self.failures().most_common()
        for reason, count in failures[:SUMMARY_REASONS]:
            lines.append(f"  {count} x {reason}")
        if len(failures) > SUMMARY_REASONS:
            rest = sum(count for _, count in failures[SUMMARY_REASONS:])
            others = len(failures) - SUMMARY_REASONS
            lines.append(f"  ... and {rest} more failed runs with {others} other reasons (see "
                         "reasons, or to_csv)")
        if self.rows_rerun:
            first = self.batch_errors.most_common(1)[0][0]
            lines.append(f"  {self.rows_rerun} rows re-run one by one after "
                         f"{sum(self.batch_errors.values())} batch calls raised (most often: "
                         f"{first})")
        return "\n".join(lines)
