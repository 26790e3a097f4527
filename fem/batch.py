"""Solve many membranes at once on every core.

Each row runs exactly the solve of :meth:`fem.Membrane.solve` (the numba solver releases the
GIL, so a thread pool keeps every core busy), hence batch results equal one-by-one results
bit for bit.
"""
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import newton as _newton
from .membrane import DEFAULT_PROBES, Membrane, solver_settings
from .presets import PAPER_PROBES_RELATIVE

#: Column order of a batch input row.
COLUMNS = ("l", "b", "t", "E", "nu")
#: Status of a row whose inputs were rejected before solving.
INVALID_INPUT = -1


@dataclass
class BatchResult:
    """Outputs of :func:`solve_batch` for n rows.

    Attributes:
        w: (n, nprobe) probe deflections (length units; NaN where a row did not converge).
        converged: (n,) bool.
        status: (n,) int, 0 when converged (see :data:`fem.newton.STATUS_TEXT`),
            -1 for rejected inputs.
        reasons: n strings, "converged" or why the row failed.
        increments, newton_iterations: (n,) int cost counters.
        probe_names: names of the columns of ``w``.
    """

    w: np.ndarray
    converged: np.ndarray
    status: np.ndarray
    reasons: list
    increments: np.ndarray
    newton_iterations: np.ndarray
    probe_names: tuple


def default_workers():
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def solve_row(row, p=100.0, nx=20, ny=10, edges="clamped", probes=None, settings=None,
              probe_frame="physical"):
    """Solve one (l, b, t, E, nu) row; returns (w, status, reason, increments, iterations).

    Invalid inputs give status -1 and the validation message instead of raising.
    """
    probes = _default_probes(probe_frame) if probes is None else probes
    settings = solver_settings() if settings is None else settings
    nan = np.full(len(probes), np.nan)
    try:
        membrane = Membrane(*map(float, row), p=p, nx=nx, ny=ny, edges=edges, probes=probes,
                            probe_frame=probe_frame)
    except ValueError as exc:
        return nan, INVALID_INPUT, f"invalid input: {exc}", 0, 0
    status, _, _, pw, nincr, nit = _newton.solve_path(**membrane.system(), **settings)
    w = pw[-1].copy() if status == _newton.OK else nan
    return w, int(status), _newton.STATUS_TEXT[int(status)], int(nincr), int(nit)


def _default_probes(probe_frame):
    return PAPER_PROBES_RELATIVE if probe_frame == "relative" else DEFAULT_PROBES


def solve_batch(params, p=100.0, nx=20, ny=10, mode="fast", edges="clamped", probes=None,
                probe_frame="physical",
                workers=None, **solve_options):
    """Solve an (n, 5) array of (l, b, t, E, nu) rows.

    Args:
        params: (n, 5) array-like, columns :data:`COLUMNS`.
        p, nx, ny, edges, probes, probe_frame: as in :class:`fem.Membrane`, shared by all
            rows.
        mode, solve_options: as in :meth:`fem.Membrane.solve`.
        workers: threads to use (default: every core of this process).

    Returns:
        :class:`BatchResult`. A row that fails is flagged, never dropped or raised.

    Example:
        >>> res = solve_batch([[2.0, 1.0, 0.0015, 210.0, 0.3], [2.0, 1.0, -1.0, 210.0, 0.3]])
        >>> res.converged.tolist(), res.reasons[1]
        ([True, False], 'invalid input: t must be > 0, got t=-1.0')
    """
    arr = np.asarray(params, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != len(COLUMNS):
        raise ValueError(f"params must have shape (n, {len(COLUMNS)}) with columns {COLUMNS}, "
                         f"got shape {arr.shape}")
    settings = solver_settings(mode, **solve_options)
    probes = _default_probes(probe_frame) if probes is None else dict(probes)
    # validate the shared settings now; each row's own size is checked against the probes in
    # solve_row, which flags a row whose probe falls outside it
    Membrane(p=p, nx=nx, ny=ny, edges=edges, probes={}, probe_frame=probe_frame)
    for name, xy in probes.items():
        if len(xy) != 2 or not all(np.isfinite(float(v)) for v in xy):
            raise ValueError(f"probe {name} must be a finite (x, y) pair, got {xy!r}")
    workers = default_workers() if workers is None else int(workers)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got workers={workers}")

    def one(row):
        return solve_row(row, p, nx, ny, edges, probes, settings, probe_frame)

    if workers == 1 or len(arr) <= 1:
        rows = [one(r) for r in arr]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            rows = list(pool.map(one, arr))
    n = len(arr)
    w = np.array([r[0] for r in rows]).reshape(n, len(probes))
    status = np.array([r[1] for r in rows], dtype=np.int64)
    return BatchResult(w=w, converged=status == _newton.OK, status=status,
                       reasons=[r[2] for r in rows],
                       increments=np.array([r[3] for r in rows], dtype=np.int64),
                       newton_iterations=np.array([r[4] for r in rows], dtype=np.int64),
                       probe_names=tuple(probes))
