"""Standardisation of inputs and outputs, fitted on the training data."""
import numpy as np

__all__ = ["CONSTANT", "Standardizer", "IdentityScaler"]

#: Relative std (to the column's mean) at or below which a column counts as constant: 64
#: units of rounding (a column of one value has a std of a few; timestamps of 1.7e9 s that
#: vary by milliseconds, 5.7e-13, are data).
CONSTANT = 64 * np.finfo(float).eps


class Standardizer:
    """z = (x - mean) / scale per column; constant columns keep scale 1: those whose values
    are all equal, or whose std is rounding noise (at most :data:`CONSTANT` of their mean: 60
    rows of 0.3 beside another column have a std of 3.9e-16, and a later 0.3 in float32
    became z = 1e8, saturating every unit of a network).

    >>> s = Standardizer().fit(np.array([[1.0, 10.0], [3.0, 10.0]]))
    >>> s.transform(np.array([[2.0, 10.0]])).tolist()
    [[0.0, 0.0]]
    >>> X = np.column_stack([np.linspace(-1, 1, 60), np.full(60, 0.3)])
    >>> float(X.std(axis=0)[1]) > 0, Standardizer().fit(X).scale_[1].item()
    (True, 1.0)
    """

    def fit(self, X):
        """Learn each column's mean and scale from X (n, d); returns self."""
        X = np.asarray(X, dtype=float)
        self.mean_ = X.mean(axis=0)
        scale = X.std(axis=0)
        # the std squares the deviations: above ~1e154 they overflow (a scale of inf, every
        # prediction inf) and below ~1e-154 underflow (a scale of 0, read as constant: data
        # of 1e-165 predicted at order 1); there, the deviations over their largest first
        spread = np.ptp(X, axis=0)
        extreme = (spread > 0) & ~((scale > 1e-150) & (scale < 1e150))
        if extreme.any():
            deviation = X[:, extreme] - self.mean_[extreme]
            size = np.abs(deviation).max(axis=0)
            scale[extreme] = size * (deviation / size).std(axis=0)
        if not (np.isfinite(self.mean_).all() and np.isfinite(scale).all()):
            bad = int(np.flatnonzero(~(np.isfinite(self.mean_) & np.isfinite(scale)))[0])
            raise ValueError(f"column {bad} is too large to standardise (its values reach "
                             f"{float(np.abs(X[:, bad]).max())!r}): rescale it")
        constant = (spread == 0) | (scale <= CONSTANT * np.abs(self.mean_))
        self.scale_ = np.where(constant, 1.0, scale)
        return self

    def transform(self, X):
        """(X - mean) / scale."""
        return (np.asarray(X, dtype=float) - self.mean_) / self.scale_

    def inverse_transform(self, Z):
        """Z scale + mean: back to the original units."""
        return np.asarray(Z, dtype=float) * self.scale_ + self.mean_

    def state(self):
        """The mean and scale as lists, for a saved model."""
        return {"mean": self.mean_.tolist(), "scale": self.scale_.tolist()}

    @classmethod
    def from_state(cls, state):
        """The scaler of a :meth:`state` dict."""
        s = cls()
        s.mean_ = np.asarray(state["mean"], dtype=float)
        s.scale_ = np.asarray(state["scale"], dtype=float)
        return s


class IdentityScaler(Standardizer):
    """No scaling (for exact conjugate checks)."""

    def fit(self, X):
        """Mean 0 and scale 1 for each column of X (n, d); returns self."""
        d = np.asarray(X).shape[1]
        self.mean_, self.scale_ = np.zeros(d), np.ones(d)
        return self
