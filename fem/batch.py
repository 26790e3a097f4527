"""Solve many membranes at once on every core.

Each row runs exactly the solve of :meth:`fem.Membrane.solve`, hence batch results equal
one-by-one results bit for bit. The rows' systems (element derivatives, stiffness tables,
loads, Ritz shape, starting states, probes) are built a block at a time by
:func:`fem.system.stacked_systems`, which :meth:`fem.Membrane.system` calls with one row,
and a numba loop solves chunks of rows (the solver releases the GIL, so a thread pool keeps
every core busy). Built and dispatched row by row from Python, a 20 x 10 solve spent ~0.4 of
its ~2 ms outside the solver.
"""
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numba import njit

from . import newton as _newton
from .membrane import DEFAULT_PROBES, Membrane
from .newton import solver_settings
from .presets import PAPER_PROBES_RELATIVE
from .start import reference_starts, start_for
from .system import stacked_systems

__all__ = ["COLUMNS", "INVALID_INPUT", "SYSTEM_BLOCK_BYTES", "BatchResult", "default_workers",
           "solve_row", "solve_batch"]

#: Column order of a batch input row.
COLUMNS = ("l", "b", "t", "E", "nu")
#: Status of a row whose inputs were rejected before solving.
INVALID_INPUT = -1
#: Memory (bytes) for the stacked systems of one block of rows (:func:`solve_batch`).
SYSTEM_BLOCK_BYTES = 64 << 20


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
              probe_frame="physical", start="reference"):
    """Solve one (l, b, t, E, nu) row; returns (w, status, reason, increments, iterations).

    Invalid inputs give status -1 and the validation message instead of raising. ``start`` is
    the start the solve uses (:func:`fem.start.start_for` of the settings' mode).
    """
    probes = _default_probes(probe_frame) if probes is None else probes
    settings = solver_settings() if settings is None else settings
    nan = np.full(len(probes), np.nan)
    try:
        membrane = Membrane(*map(float, row), p=p, nx=nx, ny=ny, edges=edges, probes=probes,
                            probe_frame=probe_frame)
    except ValueError as exc:
        return nan, INVALID_INPUT, f"invalid input: {exc}", 0, 0
    status, _, _, pw, nincr, nit = _newton.solve_path(**membrane.system(start), **settings)
    w = pw[-1].copy() if status == _newton.OK else nan
    return w, int(status), _newton.STATUS_TEXT[int(status)], int(nincr), int(nit)


def _default_probes(probe_frame):
    return PAPER_PROBES_RELATIVE if probe_frame == "relative" else DEFAULT_PROBES


def solve_batch(params, p=100.0, nx=20, ny=10, mode="fast", edges="clamped", probes=None,
                probe_frame="physical", workers=None, start="reference", **solve_options):
    """Solve an (n, 5) array of (l, b, t, E, nu) rows.

    Args:
        params: (n, 5) array-like, columns :data:`COLUMNS`.
        p, nx, ny, edges, probes, probe_frame: as in :class:`fem.Membrane`, shared by all
            rows.
        mode, start, solve_options: as in :meth:`fem.Membrane.solve`.
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
    start = start_for(start, settings["paper"])
    probes = _default_probes(probe_frame) if probes is None else dict(probes)
    # validate the shared settings now, relative probes with them (they hold for every row);
    # each row's own size is checked against physical probes in solve_row, which flags a row
    # whose probe falls outside it
    Membrane(p=p, nx=nx, ny=ny, edges=edges,
             probes=probes if probe_frame == "relative" else {}, probe_frame=probe_frame)
    for name, xy in probes.items():
        if len(xy) != 2 or not all(np.isfinite(float(v)) for v in xy):
            raise ValueError(f"probe {name} must be a finite (x, y) pair, got {xy!r}")
    workers = default_workers() if workers is None else int(workers)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got workers={workers}")

    n, nprobe = len(arr), len(probes)
    w = np.full((n, nprobe), np.nan)
    status = np.full(n, INVALID_INPUT, dtype=np.int64)
    increments = np.zeros(n, dtype=np.int64)
    iterations = np.zeros(n, dtype=np.int64)
    reasons = [None] * n
    valid = _plausible(arr, probes, probe_frame)
    for i in np.flatnonzero(~valid):  # the one-row validation names what is wrong
        w[i], status[i], reasons[i], increments[i], iterations[i] = solve_row(
            arr[i], p, nx, ny, edges, probes, settings, probe_frame, start)
    rows = np.flatnonzero(valid)
    solver_args = [settings[k] for k in ("paper", "n_increments", "abs_tol", "rtol", "max_iter",
                                         "start_scale", "max_cuts", "max_path")]
    # the rows' systems take ~8 (7 nnode + 300) bytes each (4 nnode with the Ritz start
    # alone): built in blocks of at most SYSTEM_BLOCK_BYTES, so that memory does not grow
    # with the batch
    per_row = 8 * ((7 if start == "reference" else 4) * (nx + 1) * (ny + 1) + 300)
    block = int(min(4096, max(1, SYSTEM_BLOCK_BYTES // per_row)))
    pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 and len(rows) > 1 else None
    try:
        for first in range(0, len(rows), block):
            part = rows[first:first + block]
            starts = (reference_starts(arr[part], p, nx, ny, edges) if start == "reference"
                      else None)
            system = tuple(stacked_systems(arr[part], p, nx, ny, edges, probes,
                                           probe_frame, starts).values())
            out = (np.full((len(part), nprobe), np.nan), np.empty(len(part), dtype=np.int64),
                   np.empty(len(part), dtype=np.int64), np.empty(len(part), dtype=np.int64))

            def chunk(lo_hi, system=system, out=out):
                _solve_rows(lo_hi[0], lo_hi[1], *system, *solver_args, *out)

            # chunks small enough to balance the threads, large enough to cost nothing
            size = max(1, min(64, -(-len(part) // (4 * workers))))
            bounds = [(a, min(a + size, len(part))) for a in range(0, len(part), size)]
            if pool is None or len(bounds) == 1:
                for b in bounds:
                    chunk(b)
            else:
                list(pool.map(chunk, bounds))
            w[part], status[part], increments[part], iterations[part] = out
    finally:
        if pool is not None:
            pool.shutdown()
    for i in rows:
        reasons[i] = _newton.STATUS_TEXT[int(status[i])]
    return BatchResult(w=w, converged=status == _newton.OK, status=status, reasons=reasons,
                       increments=increments, newton_iterations=iterations,
                       probe_names=tuple(probes))


def _plausible(arr, probes, probe_frame):
    """(n,) rows that pass :class:`fem.Membrane`'s input checks (the others are run through
    them one by one for their message)."""
    l, b, t, E, nu = arr.T
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(arr).all(1) & (l > 0) & (b > 0) & (t > 0) & (E > 0)
        ok &= (nu > -1.0) & (nu < 0.5)
        if probe_frame == "physical":
            for x, y in probes.values():
                ok &= (0.0 <= x) & (x <= l) & (0.0 <= y) & (y <= b)
    return ok


@njit(cache=True, nogil=True)
def _solve_rows(lo, hi, conn, elem_eq, free_dofs, bandwidth, dndx, dndy, weight, ktab, c11, c12,
                c33, fext, phi, start, probe_nodes, probe_shape, paper, n_increments, abs_tol,
                rtol, max_iter, start_scale, max_cuts, max_path, w, status, increments,
                iterations):
    """Solve rows lo..hi-1 of stacked systems (:func:`fem.system.stacked_systems`) with
    :func:`fem.newton.solve_path`; writes each row's final probe deflections (if it
    converged), status and cost counters."""
    for i in range(lo, hi):
        st, _, _, pw, nincr, nit = _newton.solve_path(
            conn, elem_eq, free_dofs, bandwidth, dndx[i], dndy[i], weight[i], ktab[i], c11[i],
            c12[i], c33[i], fext[i], phi[i], start[i], probe_nodes[i], probe_shape[i], paper,
            n_increments, abs_tol, rtol, max_iter, start_scale, max_cuts, max_path)
        status[i] = st
        increments[i] = nincr
        iterations[i] = nit
        if st == _newton.OK:
            _newton._copy(w[i], pw[pw.shape[0] - 1])
