"""Thin adapters joining the stand-alone packages to uqkit's model protocol."""
from contextlib import contextmanager

import numpy as np

__all__ = ["FEM_NOT_SOLVER", "FEM_SOLVER_MODULES", "MembraneModel", "SurrogateModel",
           "feature_names", "quiet_feature_names", "make_surrogate"]

#: fem's modules that do not compute a solve's result (the rest key its runs' stores).
FEM_NOT_SOLVER = ("fem.plot", "fem.convergence")


def _fem_modules():
    """Every module of the fem package but :data:`FEM_NOT_SOLVER`, found on disk (not
    imported). A hand-written list missed ``fem.system`` (the loads and probe weights): an edit
    scaling the load by 1.5 was served the old deflections from the store."""
    from .execution.sources import package_modules

    return tuple(n for n in package_modules("fem") if n not in FEM_NOT_SOLVER)


#: The modules of the FE solver whose source identifies its results.
FEM_SOLVER_MODULES = _fem_modules()


class MembraneModel:
    """The built-in FE membrane (:func:`fem.solve_batch`) as a uqkit model.

    Inputs are the columns (l, b, t, E, nu); outputs the probe deflections w(p1), w(p2),
    w(p3) (length units, downward < 0), or ``w_NAME`` of the given probes. A row that does not
    converge comes back flagged with the solver's reason.

    Args:
        p, nx, ny, mode: as in :class:`fem.Membrane` and :meth:`fem.Membrane.solve`.
        probes, probe_frame: as in :class:`fem.Membrane` (``probe_frame="relative"``: probes
            that follow the mesh as l and b vary).
        threads: threads of the batch solver inside one worker (1 under a process pool).

    Example:
        >>> model = MembraneModel()
        >>> w, status, reasons = model(np.array([[2.0, 1.0, 0.0015, 210.0, 0.3]]))
        >>> status.tolist(), round(float(w[0, 0]), 4)
        ([0], -2.4686)
    """

    input_names = ("l", "b", "t", "E", "nu")

    def __init__(self, p=100.0, nx=20, ny=10, mode="fast", threads=1, probes=None,
                 probe_frame="physical"):
        from fem import Membrane

        # validate now, not in a worker
        probes = Membrane(p=p, nx=nx, ny=ny, probes=probes, probe_frame=probe_frame).probes
        if mode not in ("fast", "paper"):
            raise ValueError(f"mode must be 'fast' or 'paper', got mode={mode!r}")
        self.p, self.nx, self.ny = float(p), int(nx), int(ny)
        self.mode, self.threads = mode, threads
        self.probes, self.probe_frame = probes, probe_frame
        self.output_names = tuple(f"w_{name}" for name in probes)

    def __call__(self, X):
        from fem import solve_batch

        res = solve_batch(np.asarray(X, dtype=float), p=self.p, nx=self.nx, ny=self.ny,
                          mode=self.mode, workers=self.threads, probes=self.probes,
                          probe_frame=self.probe_frame)
        return res.w, res.status, np.asarray(res.reasons)

    def warm_up(self):
        """Solve :class:`fem.Membrane`'s nominal membrane (its default l, b, t, E, nu) once with
        this model's settings, for what a first batch would otherwise pay: the solver's import
        and its compiled machine code loaded from numba's cache (0.5 s on 2 cores, warm
        cache). A pool's workers run it while the program sets up
        (:func:`uqkit.execution.executors.warm_pool`). Returns the model's output for that
        row: (w (1, outputs), status (1,), reasons (1,))."""
        from fem import Membrane

        nominal = Membrane()
        return self([[getattr(nominal, name) for name in self.input_names]])

    def describe(self):
        """The model's settings with the version and a hash of the source of the solver
        (every module of :mod:`fem` but its plotting), so that results of a changed solver
        are never mixed with older ones."""
        from .execution.sources import _versions, source_digest

        return {"model": "fem.membrane", "p": self.p, "mesh": [self.nx, self.ny],
                "mode": self.mode, "probes": {n: list(xy) for n, xy in self.probes.items()},
                "probe_frame": self.probe_frame, "versions": _versions("fem"),
                "fem_source": source_digest(FEM_SOLVER_MODULES)}


def feature_names(surrogate):
    """The column names a scikit-learn-style surrogate was fitted on (``feature_names_in_``,
    set when it was fitted on a pandas DataFrame), or None."""
    names = getattr(surrogate, "feature_names_in_", None)
    return None if names is None else tuple(str(n) for n in names)


@contextmanager
def quiet_feature_names():
    """A block in which scikit-learn does not warn that an array has no feature names: its
    columns are in the order of the fit's names (:func:`feature_names`)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        yield


class SurrogateModel:
    """A fitted surrogate with a scikit-learn ``predict`` (an array of predictive means) as a
    uqkit model. Its inputs are ``input_names``, or, by default, the columns of the
    DataFrame it was fitted on (:func:`feature_names`; it took them by position before, and
    a surrogate fitted on E, P used on inputs P, E gave a mean of -326 for 5.0), or, for a
    surrogate fitted on an array, the inputs' order. ``input_names`` that give one of the
    fit's own column names at another place are refused: the surrogate takes its columns in
    the fit's order (``input_names`` maps a fit's columns named otherwise to the inputs)."""

    def __init__(self, surrogate, input_names=None, output_names=None, **predict_kwargs):
        self.surrogate = surrogate
        fitted_on = feature_names(surrogate)
        moved = [] if input_names is None or fitted_on is None else [
            name for i, name in enumerate(map(str, input_names))
            if name in fitted_on and fitted_on.index(name) != i]
        if moved:  # a fit's own column given at another place: one input fed as another
            raise ValueError(f"input_names {tuple(input_names)} put {moved} elsewhere than "
                             f"the columns the surrogate was fitted on, {fitted_on}: its "
                             "predict takes them in the fit's order; leave input_names out, "
                             "or give each of the fit's names at its place")
        input_names = fitted_on if input_names is None else input_names
        if input_names is not None:
            self.input_names = tuple(input_names)
        self.output_names = tuple(output_names or ())
        self.predict_kwargs = predict_kwargs

    def __call__(self, X):
        with quiet_feature_names():
            return np.asarray(self.surrogate.predict(np.asarray(X, dtype=float),
                                                     **self.predict_kwargs), dtype=float)

    def predict_with_variance(self, X):
        """``(mean, variance)`` of the surrogate's predictive distribution at X, each (n, k)
        (the BDL's and the GP's: ``predict(X, return_std=True)``, also through a ``predict(X,
        **kwargs)`` that passes it on: a scikit-learn Pipeline's, ``EvidenceSearch``'s, whose
        variance was dropped without a word); the variance is None for a surrogate without
        one. :func:`uqkit.calibration.calibrate` adds it to the measurement noise's.

        Raises:
            ValueError: the surrogate's standard deviations are negative or infinite, or
                not one per row and output (a NaN one is a failed prediction).
        """
        import inspect

        X = np.asarray(X, dtype=float)
        params = inspect.signature(self.surrogate.predict).parameters
        passes_on = any(p.kind is p.VAR_KEYWORD for p in params.values())
        if "return_std" not in params and not passes_on:
            return self(X).reshape(len(X), -1), None
        kwargs = {k: v for k, v in self.predict_kwargs.items() if k != "return_std"}
        try:
            with quiet_feature_names():
                answer = self.surrogate.predict(X, return_std=True, **kwargs)
        except TypeError:
            if "return_std" in params:
                raise
            return self(X).reshape(len(X), -1), None  # its **kwargs do not take return_std
        if not (isinstance(answer, tuple) and len(answer) == 2):  # return_std ignored
            return np.asarray(answer, dtype=float).reshape(len(X), -1), None
        mean = np.asarray(answer[0], dtype=float).reshape(len(X), -1)
        std = np.asarray(answer[1], dtype=float)
        name = type(self.surrogate).__name__
        if std.size != mean.size:
            raise ValueError(f"{name}'s predictive standard deviations have shape {std.shape} "
                             f"for means of shape {mean.shape}: one per row and output")
        std = std.reshape(mean.shape)
        bad = (std < 0) | np.isinf(std)
        if bad.any():
            raise ValueError(f"{name}'s predictive standard deviation is "
                             f"{float(std[bad][0])!r} in {int(bad.any(axis=1).sum())} of "
                             f"{len(X)} rows: a standard deviation is finite and >= 0")
        return mean, std ** 2

    def describe(self):
        """The surrogate's identity for the study store: its class, a fingerprint of its
        fitted state and the prediction settings."""
        from .execution.identity import fingerprint

        return {"model": f"surrogate.{type(self.surrogate).__name__}",
                "fingerprint": fingerprint(self.surrogate)["sha256"],
                "predict": {k: repr(v) for k, v in sorted(self.predict_kwargs.items())}}


def make_surrogate(name, **kwargs):
    """A fresh surrogate of the ``surrogates`` package with small-data defaults, for the
    active-learning reliability analysis (:mod:`uqkit.reliability.active`).

    Args:
        name: ``"gp"`` (:class:`surrogates.GaussianProcess`: constant x anisotropic RBF plus
            white noise, 2 optimiser restarts) or ``"bdl"`` (:class:`surrogates.BDL`: two
            hidden layers of 32, the MAP network by full-batch L-BFGS (2000 iterations,
            noise std 0.01 in standardised units for the first half) and its linearised
            Laplace posterior, 50 posterior draws per prediction).
        **kwargs: overrides of the constructor arguments.

    Example:
        >>> make_surrogate("gp", n_restarts=0).n_restarts
        0
    """
    import surrogates

    if name == "gp":
        return surrogates.GaussianProcess(**{"n_restarts": 2, "seed": 0, **kwargs})
    if name == "bdl":
        defaults = {"hidden": (32, 32), "inference": "laplace", "max_iter": 2000,
                    "noise_std": 0.01, "predict_samples": 50, "num_threads": 1, "seed": 0,
                    "progress": False}
        return surrogates.BDL(**{**defaults, **kwargs})
    raise ValueError(f"unknown surrogate {name!r}; use 'gp' or 'bdl'")
